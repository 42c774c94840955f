//! The behaviour graph (`analysis::behaviour`, `vantage graph`): a hand-checked group of three
//! rollouts with one loop and one fork, its states, transitions and credit worked out here; the
//! samples' graphs as `vantage graph --json` prints them; and the inputs that must still draw.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use vantage::analysis::behaviour::{GraphMerge, MAX_NODES, build};
use vantage::credit::{self, Params};
use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;

fn load(relative: &str) -> Run {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    load_bytes(relative, &std::fs::read(&path).unwrap(), &mut LoadReport::new(relative)).unwrap()
}

fn step_credit(run: &Run, id: &str, sets: &[(&str, &str)]) -> Vec<f32> {
    let scheme = credit::scheme(id).unwrap();
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let params = Params::resolve(scheme, None, &sets).unwrap();
    scheme.compute(run, &params).unwrap().step.clone()
}

fn close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < 1e-5, "{what}: {got} vs {want} worked out by hand");
}

/// r0 (reward 1): A B D; r1 (reward 1): A B A B D, a loop back to A; r2 (reward 0): A C. States by
/// state key: start, A, B, D, C (in order of arrival); A is a fork (next B or C, outcomes 1, 1, 0);
/// B → A closes the one cycle. GRPO gives r0 and r1 a = (1/3)/(√(1/3) + 1e-6) and r2
/// c = (−2/3)/(√(1/3) + 1e-6); TRIAGE (not whitened) adds w·c(role) = 0.5·(1, 0.5, −0.5) for
/// progress, exploration and regression to each step.
#[test]
fn a_loop_and_a_fork_worked_out_by_hand() {
    let run = load("tests/fixtures/graph/loop_and_fork.jsonl");
    let g = run.group_by_key("g").unwrap();
    let grpo = step_credit(&run, "grpo", &[]);
    let triage = step_credit(&run, "triage", &[("whiten", "false")]);
    let graph = build(&run, g, [&grpo, &triage], GraphMerge::Auto, MAX_NODES);
    assert_eq!(graph.merge, GraphMerge::State, "every step has a state key");
    let keys: Vec<&str> = graph.nodes.iter().map(|n| n.key.as_str()).collect();
    assert_eq!(keys, ["start", "state:A", "state:B", "state:D", "state:C"]);
    let visits: Vec<u32> = graph.nodes.iter().map(|n| n.visits).collect();
    assert_eq!(visits, [3, 4, 3, 2, 1]);
    let rollouts: Vec<usize> = graph.nodes.iter().map(|n| n.rollouts.len()).collect();
    assert_eq!(rollouts, [3, 3, 2, 2, 1]);
    let edges: Vec<(u32, u32, u32, bool)> = graph.edges.iter().map(|e| (e.from, e.to, e.count, e.back)).collect();
    assert_eq!(edges, [(0, 1, 3, false), (1, 2, 3, false), (2, 3, 2, false), (2, 1, 1, true), (1, 4, 1, false)]);
    let forks: Vec<&str> = graph.nodes.iter().filter(|n| n.fork).map(|n| n.key.as_str()).collect();
    assert_eq!(forks, ["state:A"], "A parts the passes from the fail; B's rollouts all pass");
    close(graph.nodes[1].spread, (2.0f64 / 9.0).sqrt(), "A's outcome spread (1, 1, 0)");
    close(graph.nodes[2].spread, 0.0, "B's outcome spread");
    let std = (1.0f64 / 3.0).sqrt() + 1e-6;
    let (a, c) = ((1.0 / 3.0) / std, (-2.0 / 3.0) / std);
    // GRPO: one value per rollout, so a state's mean weighs rollouts by their visits.
    close(graph.nodes[1].credit[0], (3.0 * a + c) / 4.0, "A under GRPO");
    close(graph.nodes[2].credit[0], a, "B under GRPO");
    close(graph.nodes[3].credit[0], a, "D under GRPO");
    close(graph.nodes[4].credit[0], c, "C under GRPO");
    assert!(graph.nodes[0].credit[0].is_nan(), "start has no step");
    // TRIAGE: A is r0's progress, r1's exploration twice, r2's exploration.
    close(graph.nodes[1].credit[1], ((a + 0.5) + 2.0 * (a + 0.25) + (c + 0.25)) / 4.0, "A under TRIAGE");
    close(graph.nodes[2].credit[1], ((a + 0.5) + (a - 0.25) + (a + 0.5)) / 3.0, "B under TRIAGE");
    close(graph.nodes[3].credit[1], a + 0.5, "D under TRIAGE");
    close(graph.nodes[4].credit[1], c - 0.25, "C under TRIAGE");
    // Transitions: start → A averages all three first steps; B → A is r1's third step.
    close(graph.edges[0].credit[0], (2.0 * a + c) / 3.0, "start → A under GRPO");
    close(graph.edges[3].credit[1], a + 0.25, "B → A under TRIAGE");
    close(graph.edges[4].credit[1], c - 0.25, "A → C under TRIAGE");
    // Each rollout's walk through the states.
    let walks: Vec<Vec<u32>> = graph.paths.iter().map(|(_, p)| p.clone()).collect();
    assert_eq!(walks, [vec![0, 1, 2, 3], vec![0, 1, 2, 1, 2, 3], vec![0, 1, 4]]);
    // The layout: a state's column is the step of its first arrival, its row its order there.
    let places: Vec<(u32, u32)> = graph.nodes.iter().map(|n| (n.column, n.row)).collect();
    assert_eq!(places, [(0, 0), (1, 0), (2, 0), (3, 0), (2, 1)]);
}

/// By action, numbers and paths fold: `open /tmp/a1.txt` and `open /var/b22.txt` are one state,
/// `wait 3` and `wait 10` another.
#[test]
fn actions_fold_numbers_and_paths() {
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "x", "group": "g", "outcome": {"reward": 1}, "steps": [{"action": "open /tmp/a1.txt"}, {"action": "wait 3"}]}
{"type": "trajectory", "id": "y", "group": "g", "outcome": {"reward": 0}, "steps": [{"action": "Open /var/b22.txt"}, {"action": "wait 10"}, {"action": "wait 7"}]}
"#;
    let run = load_bytes("fold.jsonl", log.as_bytes(), &mut LoadReport::new("fold")).unwrap();
    let graph = build(&run, run.group_by_key("g").unwrap(), [&[], &[]], GraphMerge::Auto, MAX_NODES);
    assert_eq!(graph.merge, GraphMerge::Action);
    let keys: Vec<&str> = graph.nodes.iter().map(|n| n.key.as_str()).collect();
    assert_eq!(keys, ["start", "action:open <path>", "action:wait #"]);
    assert!(graph.edges.iter().any(|e| e.from == 2 && e.to == 2 && e.back), "wait → wait is a self-loop");
    assert!(graph.nodes.iter().all(|n| n.credit[0].is_nan()), "no scheme: no credit");
}

/// A group of one rollout, a rollout without steps (an outcome alone), and a graph over the limit
/// (its rarest states folded into `other`, and said so) all build.
#[test]
fn small_empty_and_too_large_groups_still_draw() {
    let mut log = String::from("{\"vantage\": 1}\n");
    log.push_str(r#"{"type": "trajectory", "id": "one", "group": "alone", "outcome": {"reward": 1}, "steps": [{"action": "only"}]}"#);
    log.push('\n');
    log.push_str(r#"{"type": "trajectory", "id": "none", "group": "empty", "outcome": {"reward": 0}, "steps": []}"#);
    log.push('\n');
    for r in 0..20 {
        let steps: Vec<String> =
            (0..10).map(|k| format!(r#"{{"action": "step {k} of {r}", "state": "s{r}-{k}"}}"#)).collect();
        log.push_str(&format!(
            r#"{{"type": "trajectory", "id": "wide{r}", "group": "wide", "outcome": {{"reward": {}}}, "steps": [{}]}}"#,
            r % 2,
            steps.join(", ")
        ));
        log.push('\n');
    }
    let run = load_bytes("edge.jsonl", log.as_bytes(), &mut LoadReport::new("edge")).unwrap();
    let alone = build(&run, run.group_by_key("alone").unwrap(), [&[], &[]], GraphMerge::Auto, MAX_NODES);
    assert_eq!((alone.nodes.len(), alone.edges.len()), (2, 1));
    assert!(!alone.nodes.iter().any(|n| n.fork));
    let empty = build(&run, run.group_by_key("empty").unwrap(), [&[], &[]], GraphMerge::Auto, MAX_NODES);
    assert_eq!((empty.nodes.len(), empty.edges.len(), empty.paths.len()), (1, 0, 1));
    let wide = build(&run, run.group_by_key("wide").unwrap(), [&[], &[]], GraphMerge::Auto, 50);
    assert_eq!(wide.nodes.len(), 50, "start, 48 states kept, other");
    assert_eq!(wide.folded, 200 - 48);
    assert_eq!(wide.nodes.last().unwrap().key, "other");
    let visits: u32 = wide.nodes.iter().skip(1).map(|n| n.visits).sum();
    assert_eq!(visits, 200, "every step is somewhere");
}

/// `vantage graph --json` on the `ALFWorld` and terminal samples lists the states and transitions
/// `analysis::behaviour::build` gives, with their counts.
#[test]
fn the_command_prints_the_graph_the_app_draws() {
    for (sample, group) in
        [("sample_runs/alfworld_roles.jsonl", "s0-task1"), ("sample_runs/terminal_turn_scores.jsonl", "s0-slugify")]
    {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
            .args(["graph", sample, "--group", group, "--json", "--limit", "1000"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let run = load(sample);
        let grpo = step_credit(&run, "grpo", &[]);
        let graph = build(&run, run.group_by_key(group).unwrap(), [&grpo, &[]], GraphMerge::Auto, MAX_NODES);
        let nodes = json["nodes"].as_array().unwrap();
        assert_eq!(nodes.len(), graph.nodes.len(), "{sample}");
        for (n, want) in nodes.iter().zip(&graph.nodes) {
            assert_eq!(n["key"], want.key.as_str());
            assert_eq!(n["visits"], want.visits);
            assert_eq!(n["rollouts"], want.rollouts.len());
            assert_eq!(n["fork"], want.fork);
        }
        let edges = json["edges"].as_array().unwrap();
        assert_eq!(edges.len(), graph.edges.len());
        for (e, want) in edges.iter().zip(&graph.edges) {
            assert_eq!(
                (e["from"].as_u64(), e["to"].as_u64(), e["count"].as_u64()),
                (Some(u64::from(want.from)), Some(u64::from(want.to)), Some(u64::from(want.count)))
            );
        }
        assert!(
            json["forks"].as_u64().unwrap() > 0 && json["cycles"].as_u64().unwrap() > 0,
            "{sample}: forks and cycles"
        );
    }
}

/// The group's rollouts aligned on the same columns (`align_group`, the diff's `aligned`): with two
/// rollouts the columns are the pairwise alignment's rows; with eight, every rollout's steps appear
/// once each and in order, and each rollout's columns against the first, gaps of both dropped, are
/// its pairwise alignment with the first.
#[test]
fn a_group_aligned_at_once_is_each_pairwise_alignment() {
    use vantage::analysis::diff::{AlignBy, align, align_group};
    let run = load("sample_runs/math_grpo_prm.jsonl");
    let g = run.group_by_key(run.group_key(run.groups.ids().next().unwrap())).unwrap();
    let members: Vec<_> = run.groups.members(g).to_vec();
    assert_eq!(members.len(), 8);
    for by in AlignBy::ALL {
        for &other in &members[1..] {
            let pair = align_group(&run, &[members[0], other], by);
            let rows: Vec<Vec<Option<usize>>> =
                align(&run, members[0], other, by).iter().map(|r| vec![r.left, r.right]).collect();
            assert_eq!(pair.columns, rows, "{by:?}: two rollouts");
        }
        let all = align_group(&run, &members, by);
        for (r, &t) in members.iter().enumerate() {
            let steps: Vec<usize> = all.columns.iter().filter_map(|c| c[r]).collect();
            assert_eq!(steps, (0..run.trajectories.num_steps(t)).collect::<Vec<_>>(), "{by:?}: rollout {r}");
            if r == 0 {
                continue;
            }
            let projected: Vec<Vec<Option<usize>>> =
                all.columns.iter().map(|c| vec![c[0], c[r]]).filter(|c| c.iter().any(Option::is_some)).collect();
            let rows: Vec<Vec<Option<usize>>> =
                align(&run, members[0], t, by).iter().map(|row| vec![row.left, row.right]).collect();
            assert_eq!(projected, rows, "{by:?}: rollout {r} against the first");
        }
    }
    // The command: several --right give the aligned columns beside the pairwise rows.
    let keys: Vec<&str> = members.iter().map(|&t| run.trajectory_key(t)).collect();
    let mut args = vec!["diff", "sample_runs/math_grpo_prm.jsonl", "--left", keys[0], "--a", "grpo", "--json"];
    for key in &keys[1..] {
        args.extend(["--right", key]);
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let aligned = &json["aligned"];
    assert_eq!(aligned["rollouts"].as_array().unwrap().len(), 8);
    let all = align_group(&run, &members, AlignBy::Text);
    assert_eq!(aligned["columns"].as_array().unwrap().len(), all.columns.len());
    assert_eq!(aligned["forks"].as_array().unwrap().len(), all.forks().len());
    assert_eq!(json["right"]["trajectory"], keys[1], "the pairwise rows are with the first --right");
}

/// The layout does not move as a run grows: the graph of a group's first rollouts and of all of
/// them put every state the first drew at the same column and row.
#[test]
fn the_layout_stays_as_rollouts_arrive() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs/alfworld_roles.jsonl"),
    )
    .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The header, the groups, and the first group's rollouts: three of them, then all six.
    let group_lines: Vec<&str> = lines.iter().copied().filter(|l| l.contains("\"type\":\"group\"")).collect();
    let rollouts: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains("\"group\":\"s0-task0\"") && l.contains("\"type\":\"trajectory\""))
        .collect();
    assert_eq!(rollouts.len(), 6);
    let place = |n: usize| {
        let log = [&[lines[0]][..], &group_lines, &rollouts[..n]].concat().join("\n");
        let run = load_bytes("grow.jsonl", log.as_bytes(), &mut LoadReport::new("grow")).unwrap();
        let graph = build(&run, run.group_by_key("s0-task0").unwrap(), [&[], &[]], GraphMerge::Auto, MAX_NODES);
        graph.nodes.iter().map(|n| (n.key.clone(), (n.column, n.row))).collect::<std::collections::BTreeMap<_, _>>()
    };
    let (before, after) = (place(3), place(6));
    assert!(after.len() > before.len(), "the later rollouts reach new states");
    for (key, at) in &before {
        assert_eq!(after.get(key), Some(at), "{key} moved");
    }
}

/// A task across training steps: `ALFWorld`'s tasks come back at each step, so the graph of a
/// group's task holds both steps' rollouts (`--across-steps`; `groups` says how many groups).
#[test]
fn a_task_across_training_steps_is_one_graph() {
    let run = load("sample_runs/alfworld_roles.jsonl");
    let g = run.group_by_key("s0-task0").unwrap();
    let groups = vantage::analysis::behaviour::task_groups(&run, g);
    assert_eq!(groups.iter().map(|&g| run.group_key(g)).collect::<Vec<_>>(), ["s0-task0", "s1-task0"]);
    let task = vantage::analysis::behaviour::build_task(&run, g, [&[], &[]], GraphMerge::Auto, MAX_NODES);
    let one = build(&run, g, [&[], &[]], GraphMerge::Auto, MAX_NODES);
    assert_eq!(task.paths.len(), 12);
    assert!(task.nodes.len() >= one.nodes.len());
    // The first group's states keep their places: it comes first.
    for (a, b) in one.nodes.iter().zip(&task.nodes) {
        assert_eq!((&a.key, a.column, a.row), (&b.key, b.column, b.row));
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["graph", "sample_runs/alfworld_roles.jsonl", "--group", "s0-task0", "--across-steps", "--json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((json["groups"].as_u64(), json["rollouts"].as_u64()), (Some(2), Some(12)));
    assert_eq!(json["nodes_total"].as_u64(), Some(task.nodes.len() as u64));
}
