//! The importers against the real third-party files in `../shared/data` (not copied into the
//! repository): exact record counts from each folder's SOURCE.md. Skipped, saying so, when the
//! folder is absent (a clean clone without the shared data beside it).
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::PathBuf;

use vantage::analysis::RunSummary;
use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;

use crate::common;
use common::inspect_sample;

fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("VANTAGE_DATA_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"), PathBuf::from);
    if dir.is_dir() {
        Some(dir)
    } else {
        crate::common::skipped(&format!("no shared data at {} (set VANTAGE_DATA_DIR)", dir.display()));
        None
    }
}

fn load(path: &str) -> Option<(Run, LoadReport)> {
    let file = data_dir()?.join(path);
    let bytes = std::fs::read(&file).unwrap();
    let name = file.display().to_string();
    let mut report = LoadReport::new(&name);
    let run = load_bytes(&name, &bytes, &mut report).unwrap();
    Some((run, report))
}

fn successes(run: &Run) -> usize {
    run.trajectories.success.iter().filter(|s| **s == Some(true)).count()
}

/// Trajectories with a step flagged as the first error.
fn with_first_error(run: &Run) -> usize {
    run.trajectories
        .ids()
        .filter(|&t| run.trajectories.path(t).iter().any(|&n| run.nodes.first_error(n) == Some(true)))
        .count()
}

#[test]
fn processbench_files_load_with_their_published_counts() {
    for (file, records, no_error, correct) in [
        ("gsm8k.json", 400, 193, 200),
        ("math.json", 1000, 406, 500),
        ("olympiadbench.json", 1000, 339, 500),
        ("omnimath.json", 1000, 241, 500),
    ] {
        let Some((run, report)) = load(&format!("processbench/{file}")) else { return };
        assert_eq!(run.meta.format, "ProcessBench");
        assert!(report.warnings.is_empty(), "{file}: {:?}", report.warnings.first());
        assert_eq!((run.groups.len(), run.trajectories.len()), (records, records), "{file}");
        assert_eq!(with_first_error(&run), records - no_error, "{file}");
        assert_eq!(successes(&run), correct, "{file}");
    }
}

#[test]
fn tau_bench_chat_trajectories_group_four_trials_per_task() {
    let Some((run, report)) = load("tau-bench-airline-gpt4o/gpt-4o-airline.json") else { return };
    assert_eq!(run.meta.format, "OpenAI chat trajectories");
    assert!(report.warnings.is_empty());
    let summary = RunSummary::of(&run);
    assert_eq!((run.groups.len(), run.trajectories.len()), (50, 200));
    // One step per assistant message (2,454 in the file); 84 successes; 14 all-fail + 10 all-success groups.
    assert_eq!(run.num_path_steps(), 2454);
    assert_eq!(successes(&run), 84);
    assert_eq!(summary.num_zero_variance_groups, 24);
    let tool_calls = run.nodes.kind.iter().filter(|&&k| run.label(k) == "tool_call").count();
    assert_eq!(tool_calls, 1164, "one tool result per tool call");
}

#[test]
fn tau2_bench_simulations_group_trials_per_task_and_keep_the_user_simulators_tool_calls() {
    let dir = "tau2-bench-grok";
    // (file, groups, trajectories, successes, user tool-call steps)
    for (file, groups, trajectories, solved, user_steps) in [
        ("2025-10-13T11-43-45.549419_airline_llm_agent_grok-4_user_simulator_grok-4.json", 4, 16, 7, 0),
        ("2025-10-08T08-45-32.650348_airline_llm_agent_grok-3_user_simulator_grok-3.json", 1, 20, 4, 0),
        ("2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json", 5, 5, 4, 25),
    ] {
        let Some((run, report)) = load(&format!("{dir}/{file}")) else { return };
        assert_eq!(run.meta.format, "tau2-bench simulations");
        assert!(report.warnings.is_empty(), "{file}: {:?}", report.warnings.first());
        assert_eq!(
            (run.groups.len(), run.trajectories.len(), successes(&run)),
            (groups, trajectories, solved),
            "{file}"
        );
        let user = run.nodes.role.iter().filter(|&&r| run.label(r) == "user").count();
        assert_eq!(user, user_steps, "{file}");
        assert!(run.trajectories.finish.iter().all(|&f| run.label(f) == "user_stop"), "{file}");
        let has_breakdown = run.trajectories.components.keys().any(|k| k == "DB" || k == "ENV_ASSERTION");
        assert!(has_breakdown, "{file}: {:?}", run.trajectories.components.keys().collect::<Vec<_>>());
    }
    // grok-4: task 32 failed all four trials.
    let Some((run, _)) =
        load(&format!("{dir}/2025-10-13T11-43-45.549419_airline_llm_agent_grok-4_user_simulator_grok-4.json"))
    else {
        return;
    };
    assert_eq!(RunSummary::of(&run).num_zero_variance_groups, 1);
    // The aborted gpt-4.1 run: an empty run, with a warning that says so (check exits 1, not 2).
    let Some((empty, report)) =
        load(&format!("{dir}/2025-10-05T07-40-31.711552_airline_llm_agent_gpt-4.1_user_simulator_gpt-4.1.json"))
    else {
        return;
    };
    assert_eq!(empty.trajectories.len(), 0);
    assert_eq!(report.warnings.len(), 1);
    assert!(report.warnings[0].reason.contains("5 task(s)"), "{:?}", report.warnings[0]);
}

#[test]
fn a_mangled_tau2_simulation_is_a_located_warning_and_the_rest_loads() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats/tau2.json"),
    )
    .unwrap();
    let mangled = text.replacen(r#""task_id": "t1", "trial": 1"#, r#""task_id": "t1", "trial": "one""#, 1);
    assert_ne!(mangled, text);
    let mut report = LoadReport::new("tau2.json");
    let run = load_bytes("tau2.json", mangled.as_bytes(), &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 2);
    let located: Vec<String> = report.located().collect();
    assert_eq!(located.len(), 1, "{located:?}");
    assert!(located[0].starts_with("tau2.json:21: trial:"), "{located:?}");
    // The user simulator's tool call is a step with role `user`; its result is the observation.
    let (run, _) = fixture("formats/tau2.json");
    let t = run.trajectory_by_key("s1").unwrap();
    let last = *run.trajectories.path(t).last().unwrap();
    assert_eq!(run.label(run.nodes.role[last.index()]), "user");
    assert_eq!(run.text(run.nodes.action[last.index()]), "run_speed_test({})");
    assert!(run.text(run.nodes.observation[last.index()]).starts_with("[tool → user] excellent"));
    assert_eq!(run.text(run.groups.prompt[0]).lines().next(), Some("reason_for_call: My data is slow."));
    assert_eq!(run.meta.metadata["agent_model"], "test-agent");
}

#[test]
fn prmbench_pairs_original_and_modified_and_warns_on_out_of_range_error_steps() {
    let Some((run, report)) = load("prmbench-subset400/target_data.jsonl") else { return };
    assert_eq!(run.meta.format, "PRMBench");
    assert_eq!((run.groups.len(), run.trajectories.len()), (394, 788));
    // multi_solutions items (10) have no error: both rollouts right, a zero-variance group.
    assert_eq!(RunSummary::of(&run).num_zero_variance_groups, 10);
    // 11 records name an error step past the end: warnings, not failures.
    let mut lines: Vec<u64> = report.warnings.iter().filter(|w| w.field == "error_steps").map(|w| w.line).collect();
    lines.dedup();
    assert_eq!(lines.len(), 11);
    assert!(report.warnings.iter().all(|w| !w.skipped));
}

#[test]
fn math_shepherd_step_tags_become_step_labels() {
    let Some((run, report)) = load("openr-prm-samples/samples_math-shepherd.jsonl") else { return };
    assert_eq!(run.meta.format, "Math-Shepherd");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings.first());
    assert_eq!((run.trajectories.len(), run.num_path_steps()), (7, 25));
    let labels = &run.nodes.scores["label"];
    assert!(labels.iter().all(|l| *l == 0.0 || *l == 1.0), "every step has a + or - label");
    // Every sample's last step is marked "-": no solution reaches the answer.
    assert_eq!(successes(&run), 0);
}

#[test]
fn toolbench_trees_keep_their_nodes_and_leaves_and_credit_the_winning_leaf() {
    // (file, nodes including the empty root, leaves, win) from SOURCE.md.
    let mut trees_with_credit = 0;
    for (file, nodes, leaves, win) in [
        ("G1_answer/10_ChatGPT_DFS_woFilter_w2.json", 7, 1, true),
        ("G1_answer/57_ChatGPT_DFS_woFilter_w2.json", 26, 4, true),
        ("G1_answer/69_ChatGPT_DFS_woFilter_w2.json", 66, 9, false),
        ("G2_answer/10_ChatGPT_DFS_woFilter_w2.json", 83, 14, false),
        ("G3_answer/13_ChatGPT_DFS_woFilter_w2.json", 188, 38, false),
        ("G3_answer/15_ChatGPT_DFS_woFilter_w2.json", 118, 22, true),
    ] {
        let Some((run, report)) = load(&format!("toolbench-dfsdt/answer/{file}")) else { return };
        assert_eq!(run.meta.format, "ToolBench DFSDT");
        assert!(report.warnings.is_empty(), "{file}");
        assert_eq!(run.nodes.len(), nodes - 1, "{file}: every node but the empty root");
        assert_eq!(run.trajectories.len(), leaves, "{file}");
        assert_eq!(successes(&run), usize::from(win), "{file}: one winning leaf on a won tree");
        // Tree credit applies: TreePS-RAG's step utility is V(step) − V(parent), V a node's mean
        // outcome over the leaves below it (the prompt's over all of the tree's), worked out here
        // from the trajectories alone.
        let credit =
            vantage::credit::compute(vantage::credit::scheme("treeps_rag").unwrap(), &run, None, &Vec::new()).unwrap();
        let tr = &run.trajectories;
        let mut below: std::collections::HashMap<vantage::model::NodeId, (f64, f64)> = Default::default();
        let mut root = (0.0, 0.0);
        for t in tr.ids() {
            let r = f64::from(tr.reward[t.index()]);
            root = (root.0 + r, root.1 + 1.0);
            for node in tr.path(t) {
                let slot = below.entry(*node).or_default();
                *slot = (slot.0 + r, slot.1 + 1.0);
            }
        }
        let value = |node: Option<&vantage::model::NodeId>| {
            let (sum, n) = node.map_or(root, |n| below[n]);
            sum / n
        };
        let mut moved = false;
        for t in tr.ids() {
            let path = tr.path(t);
            for (k, p) in tr.path_range(t).enumerate() {
                let by_hand = value(path.get(k)) - value(k.checked_sub(1).and_then(|j| path.get(j)));
                let got = f64::from(credit.step[p]);
                assert!((got - by_hand).abs() < 1e-6, "{file} {} step {k}: {got} vs {by_hand}", run.trajectory_key(t));
                moved |= by_hand != 0.0;
            }
        }
        // Some step moves exactly when the leaves' outcomes differ (a lost tree's are all 0).
        let differ = tr.reward.iter().any(|r| *r != tr.reward[0]);
        assert_eq!(moved, differ, "{file}: the leaves' outcomes differ: {differ}");
        trees_with_credit += usize::from(moved);
    }
    assert!(trees_with_credit > 0, "no tree whose credit moves: the check above checked only zeros");
}

#[test]
fn a_verl_dump_directory_is_one_run_with_groups_rebuilt_from_identical_inputs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verl_dump");
    let mut report = LoadReport::new("verl_dump");
    let run = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    assert_eq!(run.meta.format, "verl rollout dump");
    // Step 3: two prompts × two responses; step 4: one prompt × two responses.
    assert_eq!((run.groups.len(), run.trajectories.len()), (3, 6));
    assert!(run.meta.notes.iter().any(|n| n.contains("rebuilt from identical `input`")));
    let steps: Vec<Option<i64>> = run.groups.train_step.clone();
    assert_eq!(steps, [Some(3), Some(3), Some(4)]);
    // Tags split the output into think / search / answer steps, the information block observed.
    let kinds: Vec<&str> = run.nodes.kind.iter().map(|&k| run.label(k)).collect();
    assert!(kinds.contains(&"think") && kinds.contains(&"search") && kinds.contains(&"answer"));
    assert!(run.nodes.observation.iter().any(|&o| run.text(o) == "42"));
    // GRPO over the rebuilt groups: the step-4 group (both right) is zero variance.
    assert_eq!(RunSummary::of(&run).num_zero_variance_groups, 1);
}

#[test]
fn tree_of_thoughts_logs_rebuild_their_trees_and_groups() {
    // game24 BFS: 100 problems; trees rebuilt from string prefixes (8,412 proposals, 15 repeated
    // strings merged); the 5 final answers per problem carry r, and 69 problems are solved.
    let Some((bfs, report)) = load("tot-logs/game24/gpt-4_0.7_propose1_value3_greedy5_start900_end1000.json") else {
        return;
    };
    assert_eq!(bfs.meta.format, "Tree-of-Thoughts log");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings.first());
    assert_eq!((bfs.groups.len(), bfs.nodes.len()), (100, 8397));
    let rewarded = bfs.trajectories.reward.iter().filter(|r| !r.is_nan()).count();
    assert_eq!(rewarded, 500);
    let solved = bfs
        .groups
        .ids()
        .filter(|&g| bfs.groups.members(g).iter().any(|t| bfs.trajectories.reward[t.index()] == 1.0))
        .count();
    assert_eq!(solved, 69);
    assert!(bfs.nodes.scores.contains_key("value"), "LLM values as a step score");
    // game24 CoT: 100 groups of 100 samples, 403 successes (4%), 51 all-zero groups.
    let (cot, _) = load("tot-logs/game24/gpt-4_0.7_naive_cot_sample_100_start900_end1000.json").unwrap();
    assert_eq!((cot.groups.len(), cot.trajectories.len()), (100, 10_000));
    assert_eq!(successes(&cot), 403);
    assert_eq!(RunSummary::of(&cot).num_zero_variance_groups, 51);
    // Crosswords DFS: 20 puzzles, one node per DFS record (1,856), dense r_letter / r_word scores.
    let (cross, _) = load("tot-logs/crosswords/infoss_dfs_prune.json").unwrap();
    assert_eq!((cross.groups.len(), cross.nodes.len()), (20, 1856));
    assert_eq!(cross.nodes.scores["r_word"].iter().filter(|v| !v.is_nan()).count(), 1856);
}

#[test]
fn math_aps_trees_and_flat_prefixes_carry_mc_values() {
    // Trees of 143 / 90 / 24 nodes (the roots are the questions): 254 steps; 234 leaves at 1.0, 8 at 0.0.
    let Some((tree, _)) = load("openr-prm-samples/samples_math-aps-tree.jsonl") else { return };
    assert_eq!(tree.meta.format, "MATH-APS");
    assert_eq!((tree.groups.len(), tree.nodes.len(), tree.trajectories.len()), (3, 254, 242));
    assert_eq!(successes(&tree), 234);
    assert!(tree.nodes.mc_mean.as_ref().unwrap().iter().all(|v| !v.is_nan()), "an MC value on every node");
    // Flat: 90 / 13 / 42 prefixes, nested by prefix.
    let (flat, _) = load("openr-prm-samples/samples_math-aps.jsonl").unwrap();
    assert_eq!((flat.groups.len(), flat.nodes.len()), (3, 145));
    assert!(flat.nodes.next_sibling.iter().any(|s| s.is_some()), "prefixes branch");
    assert!(flat.meta.notes.iter().any(|n| n.contains("estimate")));
    // VinePPO reads the MC values at step boundaries: without its whitening, a step's credit is
    // V(after it) − V(before it), V the MC value MATH-APS logs (the prompt's: the mean outcome of
    // its rollouts, the last state's 0), the outcome added on the last step; worked out here.
    let vineppo = vantage::credit::scheme("vineppo").unwrap();
    let raw = vec![("whiten".to_owned(), "false".to_owned())];
    let credit = vantage::credit::compute(vineppo, &tree, None, &raw).unwrap();
    let tr = &tree.trajectories;
    let mut moved = 0;
    for t in tr.ids() {
        let g = tr.group[t.index()];
        let members = tree.groups.members(g);
        let v0 = members.iter().map(|m| f64::from(tr.reward[m.index()])).sum::<f64>() / members.len() as f64;
        let path = tr.path(t);
        let mc = |k: usize| f64::from(tree.nodes.mc_mean.as_ref().unwrap()[path[k].index()]);
        for (k, p) in tr.path_range(t).enumerate() {
            let before = if k == 0 { v0 } else { mc(k - 1) };
            let last = k + 1 == path.len();
            let after = if last { f64::from(tr.reward[t.index()]) } else { mc(k) };
            let by_hand = after - before;
            let got = f64::from(credit.step[p]);
            assert!((got - by_hand).abs() < 1e-5, "{} step {k}: {got} vs {by_hand}", tree.trajectory_key(t));
            moved += usize::from(!last && by_hand != 0.0);
        }
    }
    assert!(moved > 0, "no step before the last moves: the MC values were not read");
}

#[test]
fn prm800k_ratings_and_alternatives_form_a_comb() {
    let Some((run, report)) = load("openr-prm-samples/samples_prm800k.jsonl") else { return };
    assert_eq!(run.meta.format, "PRM800K");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings.first());
    // 6 records: a main path each (4 ending in a solution) plus every rated alternative as a leaf.
    assert_eq!(run.groups.len(), 6);
    let main: Vec<_> = run.trajectories.ids().filter(|&t| run.trajectory_key(t).ends_with("/main")).collect();
    assert_eq!(main.len(), 6);
    assert_eq!(successes(&run), 4);
    let ratings = &run.nodes.scores["label"];
    assert!(ratings.iter().filter(|r| !r.is_nan()).all(|r| [-1.0, 0.0, 1.0].contains(r)));
    assert!(ratings.contains(&-1.0), "some candidates are rated wrong");
}

/// A TRL completions file written the way `GRPOTrainer` logs it: 4 prompts × 4 generations, two
/// reward functions, and the advantage by TRL's formula (sum of rewards; group mean and unbiased
/// std; `(r − mean) / (std + 1e-4)`).
#[cfg(feature = "parquet")]
fn trl_completions() -> Vec<u8> {
    use polars::prelude::{Column, DataFrame, ParquetWriter};
    let (mut prompt, mut completion, mut accuracy, mut format, mut advantage) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for p in 0..4 {
        let rewards: Vec<(f32, f32)> =
            (0..4).map(|g| (((p + g) % 3 == 0) as u8 as f32, if (p * g) % 2 == 0 { 0.5 } else { 0.0 })).collect();
        let total: Vec<f32> = rewards.iter().map(|(a, f)| a + f).collect();
        let mean = total.iter().sum::<f32>() / 4.0;
        let std = (total.iter().map(|r| (r - mean) * (r - mean)).sum::<f32>() / 3.0).sqrt();
        for (g, (a, f)) in rewards.iter().enumerate() {
            prompt.push(format!("user: problem {p}"));
            completion.push(format!("answer {g}"));
            accuracy.push(*a as f64);
            format.push(*f as f64);
            advantage.push(((total[g] - mean) / (std + 1e-4)) as f64);
        }
    }
    let mut frame = DataFrame::new_infer_height(vec![
        Column::new("step".into(), vec![12i64; 16]),
        Column::new("prompt".into(), prompt),
        Column::new("completion".into(), completion),
        Column::new("accuracy_reward".into(), accuracy),
        Column::new("format_reward".into(), format),
        Column::new("advantage".into(), advantage),
    ])
    .unwrap();
    let mut bytes = Vec::new();
    ParquetWriter::new(&mut bytes).finish(&mut frame).unwrap();
    bytes
}

#[cfg(feature = "parquet")]
#[test]
fn trl_completions_keep_the_logged_advantage_and_grpo_under_the_trl_preset_reproduces_it() {
    let bytes = trl_completions();
    let mut report = LoadReport::new("completions_00012.parquet");
    let run = load_bytes("completions_00012.parquet", &bytes, &mut report).unwrap();
    assert_eq!(run.meta.format, "TRL completions parquet");
    assert_eq!((run.groups.len(), run.trajectories.len()), (4, 16));
    assert_eq!(run.groups.train_step, vec![Some(12); 4]);
    let grpo = vantage::credit::scheme("grpo").unwrap();
    let credit = vantage::credit::compute(grpo, &run, Some("trl"), &Vec::new()).unwrap();
    let logged = &run.nodes.scores["logged_advantage"];
    for t in run.trajectories.ids() {
        let p = run.trajectories.path_range(t).start;
        let node = run.trajectories.path_nodes[p].index();
        assert!(
            (credit.step[p] - logged[node]).abs() < 1e-5,
            "{}: {} vs {}",
            run.trajectory_key(t),
            credit.step[p],
            logged[node]
        );
    }
    // verl's ε (1e-6) instead of TRL's (1e-4) gives visibly different numbers.
    let verl = vantage::credit::compute(grpo, &run, Some("verl"), &Vec::new()).unwrap();
    assert!(credit.step.iter().zip(&verl.step).any(|(a, b)| (a - b).abs() > 1e-5));
}

fn fixture(path: &str) -> (Run, LoadReport) {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(path);
    let bytes = std::fs::read(&file).unwrap();
    let name = file.display().to_string();
    let mut report = LoadReport::new(&name);
    (load_bytes(&name, &bytes, &mut report).unwrap(), report)
}

#[test]
fn swe_agent_and_mini_swe_agent_trajectories_load_without_an_outcome_and_say_why() {
    let (run, report) = fixture("agents/django__django-11099.traj");
    assert_eq!(run.meta.format, "SWE-agent trajectory");
    assert!(report.warnings.is_empty());
    assert_eq!(run.num_path_steps(), 3);
    let kinds: Vec<&str> = run
        .trajectories
        .path(run.trajectories.ids().next().unwrap())
        .iter()
        .map(|&n| run.label(run.nodes.kind[n.index()]))
        .collect();
    assert_eq!(kinds, ["search_dir", "edit", "submit"]);
    assert!(run.text(run.groups.prompt[0]).contains("UsernameValidator allows trailing newline"));
    assert_eq!(run.label(run.trajectories.finish[0]), "submitted");
    assert!(run.trajectories.reward[0].is_nan(), "no reward in the file");
    assert!(run.meta.notes.iter().any(|n| n.contains("outcomes are missing")));
    // Outcome schemes refuse, with the reason.
    let grpo = vantage::credit::scheme("grpo").unwrap();
    let err = vantage::credit::compute(grpo, &run, None, &Vec::new()).unwrap_err().to_string();
    assert!(err.contains("needs outcome"), "{err}");
    let (mini, _) = fixture("agents/sympy__sympy-20590.traj.json");
    assert_eq!(mini.num_path_steps(), 2);
    let first = mini.trajectories.path_nodes[0].index();
    assert_eq!(mini.text(mini.nodes.action[first]), "grep -n __slots__ sympy/core/symbol.py");
    assert!(mini.text(mini.nodes.observation[first]).contains("__slots__ = ('name',)"));
}

#[test]
fn openhands_event_lists_and_eval_outputs_become_steps_with_observations() {
    let (run, report) = fixture("agents/openhands_trajectory.json");
    assert_eq!(run.meta.format, "OpenHands trajectory");
    assert!(report.warnings.is_empty());
    // system and user events are not steps: run, edit, finish are.
    let path = run.trajectories.path(run.trajectories.ids().next().unwrap());
    let kinds: Vec<&str> = path.iter().map(|&n| run.label(run.nodes.kind[n.index()])).collect();
    assert_eq!(kinds, ["run", "edit", "finish"]);
    assert_eq!(run.text(run.nodes.observation[path[0].index()]), "FAILED tests/test_utils.py::test_slugify");
    assert_eq!(run.text(run.nodes.thought[path[0].index()]), "First see which test fails.");
    assert_eq!(run.text(run.groups.prompt[0]), "Fix the failing test in utils.py");
    let (eval, _) = fixture("agents/output.jsonl");
    assert_eq!((eval.groups.len(), eval.trajectories.len()), (2, 2));
    assert_eq!(successes(&eval), 1, "test_result.report.resolved is the outcome");
}

#[test]
fn inspect_eval_zips_with_zstd_and_deflate_entries_and_json_logs_load() {
    let header = r#"{"version": 2, "status": "success", "eval": {"task": "arith", "model": "m", "created": "2026-01-01"}, "results": {"scores": [{"name": "match", "metrics": {"accuracy": {"value": NaN}}}]}}"#;
    let samples = [
        ("samples/1_epoch_1.json", inspect_sample("1", 1, "C")),
        ("samples/1_epoch_2.json", inspect_sample("1", 2, "I")),
        ("samples/2_epoch_1.json", inspect_sample("2", 1, "P")),
    ];
    let mut entries: Vec<(&str, u16, &[u8])> = vec![("header.json", 8, header.as_bytes())];
    entries.extend(samples.iter().map(|(name, text)| (*name, 93u16, text.as_bytes())));
    entries.push(("summaries.json", 93, b"[]"));
    let bytes = vantage::load::zip::write(&entries);
    let mut report = LoadReport::new("arith.eval");
    let run = load_bytes("arith.eval", &bytes, &mut report).unwrap();
    assert_eq!(run.meta.format, "Inspect log");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings.first());
    assert_eq!(run.meta.metadata["task"], "arith");
    // Epochs of one sample form a group; C / I / P score 1 / 0 / 0.5.
    assert_eq!((run.groups.len(), run.trajectories.len()), (2, 3));
    let rewards: Vec<f32> = run.trajectories.reward.clone();
    assert_eq!(rewards, [1.0, 0.0, 0.5]);
    // Model events are steps (tool call, then the answer); the tool result is the first one's
    // observation and the intermediate score its judge score.
    let path = run.trajectories.path(run.trajectories.ids().next().unwrap());
    assert_eq!(path.len(), 2);
    let first = path[0].index();
    assert_eq!(run.label(run.nodes.kind[first]), "tool_call");
    assert_eq!(run.text(run.nodes.observation[first]), "42");
    assert_eq!(run.text(run.nodes.thought[first]), "use the calculator");
    assert_eq!(run.nodes.scores["judge"][first], 0.8);
    // The same log as one JSON EvalLog with samples inline.
    let json = format!(
        r#"{{"version": 2, "status": "success", "eval": {{"task": "arith", "model": "m"}}, "samples": [{}, {}]}}"#,
        samples[0].1, samples[2].1
    );
    let mut report = LoadReport::new("arith.json");
    let run = load_bytes("arith.json", json.as_bytes(), &mut report).unwrap();
    assert_eq!((run.groups.len(), run.trajectories.len()), (2, 2));
    // A damaged sample entry is a located warning; the others still load.
    let mut broken = entries.clone();
    broken[1] = ("samples/1_epoch_1.json", 0, b"{\"id\": 1, \"epoch\": 1, \"events\": [");
    let bytes = vantage::load::zip::write(&broken);
    let mut report = LoadReport::new("broken.eval");
    let run = load_bytes("broken.eval", &bytes, &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 2);
    assert!(report.located().any(|l| l.contains("samples/1_epoch_1.json")), "{:?}", report.warnings);
}

/// Sets the uncompressed size that the central directory of `zip` declares for `name`.
fn declare_size(zip: &mut [u8], name: &str, size: u32) {
    let mut at = 0;
    while let Some(found) = zip[at..].windows(4).position(|w| w == b"PK\x01\x02") {
        let entry = at + found;
        let name_len = u16::from_le_bytes([zip[entry + 28], zip[entry + 29]]) as usize;
        if &zip[entry + 46..entry + 46 + name_len] == name.as_bytes() {
            zip[entry + 24..entry + 28].copy_from_slice(&size.to_le_bytes());
            return;
        }
        at = entry + 4;
    }
    panic!("{name} is not in the archive");
}

#[test]
fn a_zip_bomb_entry_is_refused_at_its_declared_size_and_the_rest_loads() {
    let header = r#"{"version": 2, "status": "success", "eval": {"task": "arith", "model": "m"}}"#;
    let good = inspect_sample("1", 1, "C");
    // 16 MB of spaces inflate from a few kB; the directory says 1 kB.
    let padding = vec![b' '; 16 << 20];
    for method in [8u16, 93] {
        let entries: Vec<(&str, u16, &[u8])> = vec![
            ("header.json", 8, header.as_bytes()),
            ("samples/1_epoch_1.json", method, good.as_bytes()),
            ("samples/2_epoch_1.json", method, &padding),
        ];
        let mut bytes = vantage::load::zip::write(&entries);
        assert!(bytes.len() < 4 << 20, "{}", bytes.len());
        declare_size(&mut bytes, "samples/2_epoch_1.json", 1000);
        let mut report = LoadReport::new("bomb.eval");
        let run = load_bytes("bomb.eval", &bytes, &mut report).unwrap();
        assert_eq!(run.trajectories.len(), 1, "method {method}");
        let bomb = report.located().find(|l| l.contains("samples/2_epoch_1.json")).expect("the bomb is named");
        assert!(bomb.starts_with("bomb.eval") && bomb.contains("inflates past the 1.0 kB"), "{bomb}");
        // An entry that declares more than the memory budget is not inflated at all.
        declare_size(&mut bytes, "samples/2_epoch_1.json", 4_000_000_000);
        let mut report = LoadReport::new("bomb.eval");
        let run = load_bytes("bomb.eval", &bytes, &mut report).unwrap();
        assert_eq!(run.trajectories.len(), 1);
        assert!(report.located().any(|l| l.contains("past the memory budget")), "{:?}", report.warnings);
    }
}

#[test]
fn a_damaged_zip_entry_fails_its_crc_and_a_zip64_archive_says_so() {
    let header = r#"{"version": 2, "status": "success", "eval": {"task": "arith", "model": "m"}}"#;
    let (one, two) = (inspect_sample("1", 1, "C"), inspect_sample("2", 1, "I"));
    let entries: Vec<(&str, u16, &[u8])> = vec![
        ("header.json", 8, header.as_bytes()),
        ("samples/1_epoch_1.json", 0, one.as_bytes()),
        ("samples/2_epoch_1.json", 0, two.as_bytes()),
    ];
    let mut bytes = vantage::load::zip::write(&entries);
    // One byte of the second sample (stored) changed: still JSON, but not what was written.
    let at = bytes.windows(3).rposition(|w| w == b"\"I\"").unwrap() + 1;
    bytes[at] = b'C';
    let mut report = LoadReport::new("damaged.eval");
    let run = load_bytes("damaged.eval", &bytes, &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 1);
    let damaged = report.located().find(|l| l.contains("samples/2_epoch_1.json")).expect("named");
    assert!(damaged.contains("damaged (CRC-32"), "{damaged}");
    // A ZIP64 end record (65 535 entries): refused, saying why.
    let mut zip64 = vantage::load::zip::write(&entries);
    let eocd = zip64.windows(4).rposition(|w| w == b"PK\x05\x06").unwrap();
    zip64[eocd + 10..eocd + 12].copy_from_slice(&0xFFFFu16.to_le_bytes());
    let err = load_bytes("big.eval", &zip64, &mut LoadReport::new("big.eval")).unwrap_err().to_string();
    assert!(err.contains("ZIP64"), "{err}");
}

/// A trajectory's key, step kinds, step actions and reward.
type TrajectoryTexts = (String, Vec<String>, Vec<String>, Option<f32>);

/// The kinds, actions and rewards of a run's trajectories, by key.
fn trajectory_texts(run: &Run) -> Vec<TrajectoryTexts> {
    run.trajectories
        .ids()
        .map(|t| {
            let path = run.trajectories.path(t);
            (
                run.trajectory_key(t).to_owned(),
                path.iter().map(|n| run.label(run.nodes.kind[n.index()]).to_owned()).collect(),
                path.iter().map(|n| run.text(run.nodes.action[n.index()]).into_owned()).collect(),
                run.trajectories.reward.get(t.index()).copied().filter(|r| !r.is_nan()),
            )
        })
        .collect()
}

#[test]
fn an_inspect_eval_opens_from_its_summaries_and_reads_each_sample_on_demand() {
    use vantage::load::formats::inspect::{EvalFile, UNREAD_KIND};
    let bytes = common::lazy_eval();
    let mut report = LoadReport::new("lazy.eval");
    let mut file = EvalFile::from_bytes("lazy.eval", bytes.as_slice(), &mut report).unwrap();
    // Five summaries (sample 3 has no entry yet); ids in natural order; nothing read.
    assert_eq!((file.len(), file.num_unread(), file.bytes_read()), (5, 4, 0));
    let run = file.run(&report).unwrap();
    let texts = trajectory_texts(&run);
    let keys: Vec<&str> = texts.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(keys, ["1/epoch1", "1/epoch2", "2/epoch1", "3/epoch1", "10/epoch1"]);
    assert_eq!(run.groups.len(), 4, "epochs of one sample share a group");
    // The summary's scores are the outcomes; each sample is one step saying what the summary knows.
    let rewards: Vec<Option<f32>> = texts.iter().map(|t| t.3).collect();
    assert_eq!(rewards, [Some(1.0), Some(0.0), Some(0.5), Some(0.0), Some(1.0)]);
    assert!(texts.iter().all(|t| t.1 == [UNREAD_KIND]));
    assert_eq!(texts[0].2[0], "sample not read yet (summary: 4 messages, 2 turns, 1.5 s)");
    assert!(texts[3].2[0].starts_with("sample has no entry in the archive"), "{}", texts[3].2[0]);
    assert!(run.meta.notes.iter().any(|n| n.contains("read lazily: 5 of 5 samples")), "{:?}", run.meta.notes);
    assert_eq!(run.meta.metadata["task"], "arith");
    // Reading one sample (the chunked one) changes only that trajectory: its events come back in
    // order from two chunks and the attachment reference is resolved.
    let i = file.index_of("2/epoch1").unwrap();
    file.read_sample(i, &mut report);
    assert!(!file.is_unread(i) && file.num_unread() == 3 && file.bytes_read() > 0);
    let after = trajectory_texts(&file.run(&report).unwrap());
    assert_eq!(after[2].1, ["tool_call", "generate"]);
    assert_eq!(after[2].2[1], "The answer is forty-two");
    assert_eq!(after[2].3, Some(0.5));
    assert!(after.iter().enumerate().all(|(k, t)| k == 2 || t.1 == [UNREAD_KIND]));
    assert_eq!(file.next_unread(), Some(0));
    // Reading everything (what `vantage check` does) gives the steps of every sample with an entry.
    let mut report = LoadReport::new("lazy.eval");
    let full = load_bytes("lazy.eval", &bytes, &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.records_loaded, 4);
    let texts = trajectory_texts(&full);
    let steps: Vec<usize> = texts.iter().map(|t| t.1.len()).collect();
    assert_eq!(steps, [2, 2, 2, 1, 2]);
    assert!(!full.meta.notes.iter().any(|n| n.contains("read lazily: 4")), "{:?}", full.meta.notes);
}

#[test]
fn an_inspect_eval_still_running_is_read_from_its_journal() {
    let start = r#"{"version": 2, "eval": {"task": "arith", "model": "m", "scorers": [{"name": "match"}]}}"#;
    let (one, two) = (inspect_sample("1", 1, "C"), inspect_sample("2", 1, "I"));
    let entries: Vec<(&str, u16, &[u8])> = vec![
        ("_journal/start.json", 8, start.as_bytes()),
        ("_journal/summaries/1.json", 8, br#"[{"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}}]"#),
        ("_journal/summaries/2.json", 8, br#"[{"id": 2, "epoch": 1, "scores": {"match": {"value": "I"}}}]"#),
        ("samples/1_epoch_1.json", 93, one.as_bytes()),
        ("samples/2_epoch_1.json", 93, two.as_bytes()),
    ];
    let bytes = vantage::load::zip::write(&entries);
    let mut report = LoadReport::new("running.eval");
    let run = load_bytes("running.eval", &bytes, &mut report).unwrap();
    assert_eq!(run.meta.metadata["task"], "arith");
    let texts = trajectory_texts(&run);
    assert_eq!(
        texts.iter().map(|t| (t.0.as_str(), t.1.len(), t.3)).collect::<Vec<_>>(),
        [("1/epoch1", 2, Some(1.0)), ("2/epoch1", 2, Some(0.0))]
    );
}

/// Every hand-written fixture of `tests/fixtures/formats/` with its format and (groups, trajectories, steps).
const FORMAT_FIXTURES: [(&str, &str, (usize, usize, usize)); 13] = [
    ("toolbench_cot.json", "ToolBench DFSDT", (1, 2, 7)),
    ("tau2.json", "tau2-bench simulations", (2, 3, 8)),
    ("processbench.json", "ProcessBench", (3, 3, 6)),
    ("tau_bench.json", "OpenAI chat trajectories", (1, 2, 4)),
    ("prmbench.jsonl", "PRMBench", (3, 6, 11)),
    ("math_shepherd.jsonl", "Math-Shepherd", (2, 2, 4)),
    ("prm800k.jsonl", "PRM800K", (2, 5, 6)),
    ("math_aps_tree.jsonl", "MATH-APS", (1, 3, 5)),
    ("math_aps_flat.jsonl", "MATH-APS", (1, 2, 4)),
    ("toolbench.json", "ToolBench DFSDT", (1, 2, 5)),
    ("tot_game24_bfs.json", "Tree-of-Thoughts log", (1, 3, 5)),
    ("tot_game24_cot.json", "Tree-of-Thoughts log", (1, 2, 4)),
    ("tot_crosswords.json", "Tree-of-Thoughts log", (1, 2, 4)),
];

#[test]
fn every_format_has_a_hand_written_fixture_that_loads_with_its_counts() {
    for (file, format, (groups, trajectories, steps)) in FORMAT_FIXTURES {
        let (run, report) = fixture(&format!("formats/{file}"));
        assert_eq!(run.meta.format, format, "{file}");
        assert_eq!(
            (run.groups.len(), run.trajectories.len(), run.num_path_steps()),
            (groups, trajectories, steps),
            "{file}"
        );
        // Only the planted out-of-range PRMBench error step warns.
        let expected_warnings = usize::from(file == "prmbench.jsonl");
        assert_eq!(report.warnings.len(), expected_warnings, "{file}: {:?}", report.warnings);
    }
}

/// Loads `bytes`, writes vantage JSONL (and Parquet), reads that back, and checks nothing changed.
fn assert_round_trips(name: &str, run: &Run) {
    let jsonl = vantage::load::formats::vantage_jsonl::write::to_jsonl(run);
    let mut report = LoadReport::new("round.jsonl");
    let again = load_bytes("round.jsonl", jsonl.as_bytes(), &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{name}: {:?}", report.warnings.first());
    assert_eq!(vantage::load::formats::vantage_jsonl::write::to_jsonl(&again), jsonl, "{name}: JSONL round trip");
    assert_eq!(RunSummary::of(&again), RunSummary::of(run), "{name}");
    #[cfg(feature = "parquet")]
    {
        let parquet = vantage::load::formats::vantage_parquet::to_parquet(run).unwrap();
        let mut report = LoadReport::new("round.parquet");
        let back = load_bytes("round.parquet", &parquet, &mut report).unwrap();
        assert_eq!(back.meta.format, "vantage Parquet v1");
        assert_eq!(vantage::load::formats::vantage_jsonl::write::to_jsonl(&back), jsonl, "{name}: Parquet round trip");
    }
}

#[test]
fn every_format_round_trips_through_vantage_jsonl_and_parquet_without_loss() {
    for (file, _, _) in FORMAT_FIXTURES {
        let (run, _) = fixture(&format!("formats/{file}"));
        assert_round_trips(file, &run);
    }
    for file in ["agents/django__django-11099.traj", "agents/openhands_trajectory.json", "agents/output.jsonl"] {
        let (run, _) = fixture(file);
        assert_round_trips(file, &run);
    }
    let Some(dir) = data_dir() else { return };
    for file in [
        "processbench/gsm8k.json",
        "tau-bench-airline-gpt4o/gpt-4o-airline.json",
        "tau2-bench-grok/2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json",
        "prmbench-subset400/target_data.jsonl",
        "openr-prm-samples/samples_math-shepherd.jsonl",
        "openr-prm-samples/samples_prm800k.jsonl",
        "openr-prm-samples/samples_math-aps.jsonl",
        "openr-prm-samples/samples_math-aps-tree.jsonl",
        "toolbench-dfsdt/answer/G3_answer/13_ChatGPT_DFS_woFilter_w2.json",
        "tot-logs/game24/gpt-4_0.7_propose1_value3_greedy5_start900_end1000.json",
        "tot-logs/crosswords/infoss_dfs_prune.json",
    ] {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let run = load_bytes(file, &bytes, &mut LoadReport::new(file)).unwrap();
        assert_round_trips(file, &run);
    }
}

#[test]
fn processbench_has_521_right_answers_reached_through_a_flawed_step() {
    let mut total = 0;
    let mut flawed_but_right = 0;
    for file in ["gsm8k.json", "math.json", "olympiadbench.json", "omnimath.json"] {
        let Some((run, _)) = load(&format!("processbench/{file}")) else { return };
        total += run.trajectories.len();
        flawed_but_right += run
            .trajectories
            .ids()
            .filter(|&t| run.trajectories.success[t.index()] == Some(true))
            .filter(|&t| run.trajectories.path(t).iter().any(|&n| run.nodes.first_error(n) == Some(true)))
            .count();
    }
    assert_eq!((total, flawed_but_right), (3400, 521));
}

#[test]
fn all_fifteen_toolbench_trees_load() {
    let Some(dir) = data_dir() else { return };
    let files = vantage::source::folder::read(&dir.join("toolbench-dfsdt/answer"), true).logs;
    assert_eq!(files.len(), 15);
    let mut wins = 0;
    for file in files {
        let mut report = LoadReport::new(&file.display().to_string());
        let run = vantage::source::path::load_path(&file, None, &mut report).unwrap();
        assert_eq!((run.meta.format.as_str(), run.trees.len()), ("ToolBench DFSDT", 1));
        assert!(report.warnings.is_empty());
        wins += usize::from(successes(&run) > 0);
    }
    assert_eq!(wins, 9, "9 of the 15 trees are wins");
}

/// A future that is pending once (waking itself), as the web's `setTimeout(0)` is.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// Polls a paced load to its end with a yielder whose budget is zero, counting how often it gave
/// the event loop back.
fn paced_load(name: &str, bytes: &[u8]) -> (Run, u64) {
    let mut report = LoadReport::new(name);
    let mut future = std::pin::pin!(vantage::load::load_bytes_paced(name, bytes, &mut report));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut pending = 0;
    loop {
        match future.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(run) => return (run.unwrap(), pending),
            std::task::Poll::Pending => pending += 1,
        }
    }
}

#[test]
fn a_paced_load_gives_the_event_loop_back_and_reads_the_same_run() {
    use vantage::load::formats::vantage_jsonl::write::to_jsonl;
    use vantage::load::pace;
    let sample =
        std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample_runs/math_grpo_prm.jsonl")).unwrap();
    let verl: String = (0..400)
        .map(|i| {
            format!(
                "{{\"input\": \"What is {a}+{a}?\", \"output\": \"<think>add</think> <answer>{}</answer>\", \"gts\": \"{}\", \"score\": {}, \"step\": 1}}\n",
                i % 7,
                2 * (i / 4 % 50),
                i % 2,
                a = i / 4 % 50
            )
        })
        .collect();
    pace::set_yielder(std::time::Duration::ZERO, || Box::pin(YieldOnce(false)), || Box::pin(YieldOnce(false)));
    for (name, bytes) in [("math_grpo_prm.jsonl", sample.as_slice()), ("3.jsonl", verl.as_bytes())] {
        let (paced, pending) = paced_load(name, bytes);
        let mut report = LoadReport::new(name);
        let before = pace::yields();
        let whole = load_bytes(name, bytes, &mut report).unwrap();
        assert_eq!(pace::yields(), before, "{name}: a blocking load never yields");
        assert!(pending >= 5, "{name}: yielded {pending} times");
        assert_eq!(to_jsonl(&paced), to_jsonl(&whole), "{name}: the paced load reads the same run");
    }
    pace::clear_yielder();
    // Without a yielder a paced load runs straight through.
    let (_, pending) = paced_load("math_grpo_prm.jsonl", &sample);
    assert_eq!(pending, 0);
}

#[test]
fn inspect_samples_read_on_every_core_give_the_run_read_one_by_one() {
    let mut entries_text =
        vec![("header.json".to_owned(), r#"{"version": 2, "status": "success", "eval": {"task": "t"}}"#.to_owned())];
    for i in 0..40 {
        let answer = ["C", "I", "P"][i % 3];
        entries_text.push((format!("samples/{i}_epoch_1.json"), inspect_sample(&i.to_string(), 1, answer)));
    }
    entries_text.push(("samples/99_epoch_1.json".to_owned(), "{ broken".to_owned()));
    let entries: Vec<(&str, u16, &[u8])> =
        entries_text.iter().map(|(n, t)| (n.as_str(), 93u16, t.as_bytes())).collect();
    let mut logs = vec![("made.eval".to_owned(), vantage::load::zip::write(&entries))];
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/inspect-ai-logs");
    if shared.is_dir() {
        for entry in std::fs::read_dir(&shared).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "eval") {
                logs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    } else {
        crate::common::skipped("the real Inspect logs: ../shared/data is absent");
    }
    for (name, bytes) in &logs {
        let mut report = LoadReport::new(name);
        let parallel = load_bytes(name, bytes, &mut report).unwrap();
        let mut one_report = LoadReport::new(name);
        let mut file =
            vantage::load::formats::inspect::EvalFile::from_bytes(name, &bytes[..], &mut one_report).unwrap();
        for i in 0..file.len() {
            file.read_sample(i, &mut one_report);
        }
        let one = file.run(&one_report).unwrap();
        let text = vantage::load::formats::vantage_jsonl::write::to_jsonl;
        assert_eq!(text(&parallel), text(&one), "{name}");
        assert_eq!(parallel.meta.warnings, one.meta.warnings, "{name}");
        assert_eq!((report.records_seen, report.records_loaded), (one_report.records_seen, one_report.records_loaded));
    }
}

#[test]
fn inspect_logs_without_scores_or_without_samples_load_and_say_so() {
    // Samples with no scores at all (every tool call errored): they load, the outcome missing.
    let header = r#"{"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}"#;
    let unscored = inspect_sample("1", 1, "C")
        .replace(r#""scores": {"match": {"value": "C"}, "includes": {"value": true}},"#, r#""scores": {},"#);
    assert!(!unscored.contains("\"match\""));
    let entries: Vec<(&str, u16, &[u8])> =
        vec![("header.json", 8, header.as_bytes()), ("samples/1_epoch_1.json", 8, unscored.as_bytes())];
    let bytes = vantage::load::zip::write(&entries);
    let mut report = LoadReport::new("unscored.eval");
    let run = load_bytes("unscored.eval", &bytes, &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 1);
    assert!(run.trajectories.reward[0].is_nan());
    assert!(run.meta.notes.iter().any(|n| n.contains("no scores")), "{:?}", run.meta.notes);
    // A cancelled eval with no samples: an empty run that says it has none.
    let cancelled = r#"{"version": 2, "status": "cancelled", "eval": {"task": "t", "model": "m"}}"#;
    let entries: Vec<(&str, u16, &[u8])> = vec![("header.json", 8, cancelled.as_bytes()), ("summaries.json", 8, b"[]")];
    let bytes = vantage::load::zip::write(&entries);
    let mut report = LoadReport::new("cancelled.eval");
    let run = load_bytes("cancelled.eval", &bytes, &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 0);
    assert!(
        report.warnings.iter().any(|w| w.reason.contains("no samples") && w.reason.contains("cancelled")),
        "{:?}",
        report.warnings
    );
}

#[test]
fn agent_trajectories_take_their_outcomes_from_the_results_beside_them() {
    // A hand-made run: two trajectories and SWE-agent's results.json (one id has no trajectory).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/swe_run");
    assert!(vantage::source::joined::is_joined_run(&dir));
    let mut report = LoadReport::new("swe_run");
    let run = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 2);
    assert_eq!(successes(&run), 1);
    assert!(run.trajectories.reward.iter().all(|r| !r.is_nan()));
    assert!(
        run.meta
            .notes
            .iter()
            .any(|n| n.contains("results.json (SWE-agent results): 2 of 2 trajectories matched, 2 of its 3 ids")),
        "{:?}",
        run.meta.notes
    );
    assert!(!run.meta.notes.iter().any(|n| n.contains("outcomes are missing")));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert!(
        run.meta.notes.iter().any(|n| n == "1 id of the results has no trajectory here (\"astropy__astropy-12907\")")
    );
    let grpo = vantage::credit::scheme("grpo").unwrap();
    assert!(vantage::credit::compute(grpo, &run, None, &Vec::new()).is_ok(), "an outcome scheme runs");
    assert_round_trips("swe_run", &run);
    // The real mini-SWE-agent 2 run and its SWE-bench harness report: 8 trajectories of 23 ids, 4 resolved.
    let Some(data) = data_dir() else { return };
    let expanded = vantage::source::folder::read(&data.join("mini-swe-agent-v2"), true).logs;
    assert_eq!(expanded, [data.join("mini-swe-agent-v2/v2_deepseek_chat_dev_rerun")]);
    let mut report = LoadReport::new("mini");
    let run = vantage::source::path::load_path(&expanded[0], None, &mut report).unwrap();
    assert_eq!((run.trajectories.len(), successes(&run)), (8, 4));
    // The report's 15 ids without a trajectory here: one note, not a warning each (#66).
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert!(
        run.meta.notes.iter().any(|n| n.starts_with("15 ids of the results have no trajectory here (")),
        "{:?}",
        run.meta.notes
    );
    assert!(run.meta.notes.iter().any(|n| n.contains("preds.json")), "{:?}", run.meta.notes);
    let kinds = RunSummary::of(&run);
    assert!(!kinds.lines().iter().any(|l| l.contains("Excellent!")), "the tool calls are the actions");
    // StableToolBench: the CoT and DFS answers with their own pass-rate votes.
    let mut report = LoadReport::new("stb");
    let run = vantage::source::path::load_path(&data.join("stabletoolbench/data_example"), None, &mut report).unwrap();
    assert_eq!((run.trajectories.len(), successes(&run)), (18, 5));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let cot = run.trajectory_by_key("1073_CoT@1/try0").unwrap();
    assert_eq!(run.trajectories.reward[cot.index()], 1.0);
    let failed = run.trajectory_by_key("588_CoT@1/try0").unwrap();
    assert_eq!(run.trajectories.reward[failed.index()], 0.0);
}

#[test]
fn openhands_resolver_output_loads_issue_by_issue_with_its_success() {
    let (run, report) = fixture("agents/resolver_output.jsonl");
    assert_eq!(run.meta.format, "OpenHands trajectory");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!((run.groups.len(), run.trajectories.len(), successes(&run)), (2, 2, 1));
    let t = run.trajectory_by_key("acme/widgets#12").unwrap();
    let path = run.trajectories.path(t);
    assert_eq!(run.text(run.nodes.action[path[0].index()]), "pytest -x");
    assert_eq!(run.text(run.nodes.observation[path[0].index()]), "IndexError");
    assert_eq!(
        run.text(run.groups.prompt[run.trajectories.group[t.index()].index()]),
        "Please fix the following issue: Crash on empty input"
    );
    // The 2024 shape: [action, observation] pairs, arguments beside `action`.
    let t = run.trajectory_by_key("acme/widgets#15").unwrap();
    let path = run.trajectories.path(t);
    assert_eq!(path.len(), 2);
    assert_eq!(run.text(run.nodes.action[path[0].index()]), "grep -rn Teh docs");
    assert_eq!(run.text(run.nodes.thought[path[0].index()]), "Find it.");
    assert_eq!(run.text(run.nodes.observation[path[0].index()]), "docs/a.md:3:Teh");
    assert_round_trips("resolver_output.jsonl", &run);
    // A mangled line: located, the other still loads.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents/resolver_output.jsonl"),
    )
    .unwrap();
    let mangled = text.replacen("\"success\": false", "\"success\": \"no\"", 1);
    let mut report = LoadReport::new("out.jsonl");
    let run = load_bytes("out.jsonl", mangled.as_bytes(), &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 1);
    let located: Vec<String> = report.located().collect();
    assert!(located.len() == 1 && located[0].starts_with("out.jsonl:2: success:"), "{located:?}");
}

#[test]
#[cfg(feature = "sqlite")]
fn a_trackio_database_made_by_trackio_loads_its_traces() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trackio/grpo-demo.db");
    let mut report = LoadReport::new("grpo-demo.db");
    let run = vantage::source::path::load_path(&path, None, &mut report).unwrap();
    assert_eq!(run.meta.format, "Trackio traces");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // run-1: 3 steps × 2 groups × 4 rollouts; run-2: one group of 2 rollouts that call a tool.
    assert_eq!((run.groups.len(), run.trajectories.len()), (7, 26));
    let steps: std::collections::BTreeSet<i64> = run.groups.train_step.iter().flatten().copied().collect();
    assert_eq!(steps.into_iter().collect::<Vec<_>>(), [0, 1, 2]);
    assert!(
        run.trajectories.components.contains_key("accuracy") && run.trajectories.components.contains_key("advantage")
    );
    assert!(run.nodes.scores.contains_key("logged_advantage"));
    let tool = run.nodes.kind.iter().position(|&k| run.label(k) == "tool_call").unwrap();
    assert_eq!(run.text(run.nodes.action[tool]), r#"calc({"expr": "6*7"})"#);
    assert_eq!(run.text(run.nodes.observation[tool]), "[tool] 42");
    assert!(run.meta.metadata.contains_key("config/run-1"));
    // From its bytes (the path the browser would take) the same run, natively.
    let bytes = std::fs::read(&path).unwrap();
    let from_bytes = load_bytes("grpo-demo.db", &bytes, &mut LoadReport::new("grpo-demo.db")).unwrap();
    assert_eq!(
        vantage::load::formats::vantage_jsonl::write::to_jsonl(&from_bytes),
        vantage::load::formats::vantage_jsonl::write::to_jsonl(&run)
    );
    assert_round_trips("grpo-demo.db", &run);
    // GRPO recomputes the logged advantage's group means.
    let grpo = vantage::credit::scheme("grpo").unwrap();
    assert!(vantage::credit::compute(grpo, &run, Some("trl"), &Vec::new()).is_ok());
}

#[test]
fn toolbench_cot_tries_are_trajectories_and_the_last_takes_the_answers_win() {
    let (run, _) = fixture("formats/toolbench_cot.json");
    let first = run.trajectory_by_key("toolbench_cot/try0").unwrap();
    let last = run.trajectory_by_key("toolbench_cot/try1").unwrap();
    assert_eq!(run.trajectories.success[first.index()], Some(false));
    assert_eq!(run.trajectories.success[last.index()], Some(true));
    assert_eq!(run.label(run.trajectories.finish[last.index()]), "give_answer");
    // A mangled try is located; the rest loads.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats/toolbench_cot.json"),
    )
    .unwrap();
    let mangled = text.replacen(r#""win": false},"#, r#""win": "no"},"#, 1);
    let mut report = LoadReport::new("cot.json");
    let result = load_bytes("cot.json", mangled.as_bytes(), &mut report);
    assert!(result.is_err() || !report.warnings.is_empty(), "a broken field is reported");
    let located: Vec<String> = report.located().collect();
    assert!(located.iter().any(|l| l.contains("trys[0].win")), "{located:?}");
}

#[test]
fn inspect_v3_message_pools_still_give_steps_their_text() {
    let Some((run, report)) = load("inspect-ai-logs/log_message_deduplication.eval") else { return };
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let t = run.trajectories.ids().next().unwrap();
    let path = run.trajectories.path(t);
    assert_eq!(path.len(), 6);
    assert!(path[..5].iter().all(|&n| run.text(run.nodes.action[n.index()]) == r#"bash({"cmd":"ls"})"#));
    assert!(run.text(run.nodes.observation[path[0].index()]).starts_with("bin\nboot"));
}

#[test]
#[cfg(feature = "sqlite")]
fn a_trackio_trace_with_broken_messages_is_a_located_warning_and_the_rest_loads() {
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trackio/grpo-demo.db");
    let copy = std::env::temp_dir().join(format!("vantage-trackio-{}.db", std::process::id()));
    std::fs::copy(&source, &copy).unwrap();
    {
        let conn = rusqlite::Connection::open(&copy).unwrap();
        let broken: String = conn.query_row("SELECT id FROM traces ORDER BY id LIMIT 1", [], |r| r.get(0)).unwrap();
        conn.execute("UPDATE traces SET messages = '[{broken' WHERE id = ?1", [&broken]).unwrap();
    }
    let mut report = LoadReport::new("copy.db");
    let run = vantage::source::path::load_path(&copy, None, &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 25);
    assert_eq!(report.warnings.len(), 1);
    assert!(report.warnings[0].field.ends_with(".messages") && report.warnings[0].skipped, "{:?}", report.warnings[0]);
    let _: std::io::Result<()> = std::fs::remove_file(&copy);
}

/// A SWE-bench submission of mini-swe-agent 1.x as the experiments bucket lays it out
/// (`tests/fixtures/runs/generate.py`): `trajs/<id>/<id>.traj.json`, the flat per-instance
/// `logs/<id>/report.json` (the id is the folder's name) and `results_summary.json` with its
/// `instances`: one run, each trajectory given its report's outcome, the summary's extra id named.
#[test]
fn a_mini_swe_agent_v1_submission_folder_is_one_run_with_its_reports_joined() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/mini_swe_agent_v1");
    let mut report = LoadReport::new("mini");
    let run = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    assert_eq!((run.trajectories.len(), successes(&run)), (2, 1));
    let sympy = run.trajectory_by_key("sympy__sympy-20590").unwrap();
    assert_eq!(run.trajectories.reward[sympy.index()], 1.0);
    let astropy = run.trajectory_by_key("astropy__astropy-12907").unwrap();
    assert_eq!(run.trajectories.success[astropy.index()], Some(false));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert!(
        run.meta.notes.iter().any(|n| n == "1 id of the results has no trajectory here (\"django__django-11099\")")
    );
    let notes = run.meta.notes.join("\n");
    assert!(notes.contains("logs/sympy__sympy-20590/report.json (SWE-bench instance report): 1 of 2"), "{notes}");
    assert!(notes.contains("1 readme (README.md)") && notes.contains("1 configuration (metadata.yaml)"), "{notes}");
    // Each shape alone, as `--outcomes` reads it.
    let summary = std::fs::read(dir.join("results_summary.json")).unwrap();
    let parsed = vantage::load::formats::outcomes::parse("results_summary.json", &summary).unwrap();
    assert_eq!((parsed.kind, parsed.entries.len()), ("run summary", 3));
    assert!(parsed.entries["sympy__sympy-20590"].success);
    let flat = std::fs::read(dir.join("logs/astropy__astropy-12907/report.json")).unwrap();
    let parsed = vantage::load::formats::outcomes::parse("logs/astropy__astropy-12907/report.json", &flat).unwrap();
    assert_eq!(parsed.entries.keys().collect::<Vec<_>>(), ["astropy__astropy-12907"]);
    assert!(vantage::load::formats::outcomes::parse("report.json", &flat).is_none(), "no folder, no id");
}

/// A Harbor job whose trial folders cut the task's name (`count-dataset-tokens-with-a-toke__…`):
/// its trials are one group under the `task_name` of their `result.json`, else the task path of
/// their `config.json`.
#[test]
fn harbor_trials_are_grouped_by_their_task_name() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/harbor_job");
    let task = "count-dataset-tokens-with-a-tokenizer-unknown";
    let mut report = LoadReport::new("job");
    let run = vantage::source::path::load_path(&fixture, None, &mut report).unwrap();
    assert_eq!((run.groups.len(), run.trajectories.len(), successes(&run)), (1, 2, 1));
    assert_eq!(run.group_key(vantage::model::GroupId(0)), task);
    // Without result.json (a trial that ended before its verifier), config.json names the task.
    let dir = crate::common::scratch("harbor-config-only");
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let trial = entry.unwrap().path();
        if !trial.is_dir() {
            continue;
        }
        let to = dir.join(trial.file_name().unwrap());
        std::fs::create_dir_all(to.join("agent")).unwrap();
        std::fs::copy(trial.join("agent/trajectory.json"), to.join("agent/trajectory.json")).unwrap();
        std::fs::copy(trial.join("config.json"), to.join("config.json")).unwrap();
    }
    // Results named with --outcomes make the folder one joined run of both trials.
    let results: Vec<_> = std::fs::read_dir(&fixture)
        .unwrap()
        .map(|e| e.unwrap().path().join("result.json"))
        .filter(|p| p.is_file())
        .collect();
    std::fs::create_dir_all(dir.join("results")).unwrap();
    for (i, result) in results.iter().enumerate() {
        let mut value: serde_json::Value = serde_json::from_slice(&std::fs::read(result).unwrap()).unwrap();
        value.as_object_mut().unwrap().remove("task_name");
        std::fs::write(dir.join(format!("results/result_{i}.json")), value.to_string()).unwrap();
    }
    let mut report = LoadReport::new("job");
    let run = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let keys: Vec<&str> = run.groups.key.iter().map(|&k| run.label(k)).collect();
    assert_eq!(keys, [task], "{keys:?}");
}

/// NeMo Gym lines that are errors the server returned (`{"detail": …}`, bare JSON strings) are
/// named in one warning with their count and lines, not called rollout inputs; a file of nothing
/// else is NeMo Gym's, with nothing loaded.
#[test]
fn nemo_gym_server_errors_are_named_as_errors_in_one_warning() {
    let rows = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trainers/nemo_gym/blackjack.jsonl"),
    )
    .unwrap();
    let mut lines = rows.lines();
    let (first, second) = (lines.next().unwrap(), lines.next().unwrap());
    let text = format!(
        "{first}\n{{\"detail\": \"Internal Server Error\"}}\n\"upstream request timeout\"\n{second}\n{{\"detail\": [{{\"msg\": \"field required\"}}]}}\n"
    );
    let mut report = LoadReport::new("rollouts.jsonl");
    let run = load_bytes("rollouts.jsonl", text.as_bytes(), &mut report).unwrap();
    assert_eq!(run.meta.format, "NeMo Gym rollouts");
    assert_eq!(run.trajectories.len(), 2);
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    let warning = &report.warnings[0];
    assert!(warning.skipped && warning.line == 2, "{warning:?}");
    assert!(
        warning.reason.starts_with("3 line(s) are errors the server returned, not rollouts (lines 2, 3, 5)"),
        "{}",
        warning.reason
    );
    assert!(warning.reason.contains("Internal Server Error") && !warning.reason.contains("rollout input"));
    let only = "{\"detail\": \"Not Found\"}\n\"Bad Gateway\"\n";
    let mut report = LoadReport::new("errors.jsonl");
    let err = load_bytes("errors.jsonl", only.as_bytes(), &mut report).unwrap_err();
    assert!(err.to_string().contains("errors the server returned"), "{err}");
}

/// NeMo Gym benchmark rows: no `response`, the Responses object under `trajectory`, the reward in
/// `verifier_result.rewards` (its other rewards components), the agent and its tokens in one note.
#[test]
fn nemo_gym_benchmark_rows_load_from_their_trajectory_and_verifier() {
    let row = |task: &str, reward: f64, tests: f64, input: u64| {
        serde_json::json!({
            "schema_version": 1,
            "task_name": task,
            "agent": {"name": "terminus-2", "version": "2.0.1"},
            "agent_result": {"n_input_tokens": input, "n_output_tokens": 50, "n_cache_tokens": 0},
            "verifier_result": {"rewards": {"reward": reward, "tests_passed": tests}},
            "trajectory": {
                "id": "resp_1",
                "object": "response",
                "output": [
                    {"type": "reasoning", "id": "r1", "summary": [{"type": "summary_text", "text": "look first"}]},
                    {"type": "function_call", "id": "f1", "call_id": "c1", "name": "bash", "arguments": "{\"cmd\": \"ls\"}"},
                    {"type": "function_call_output", "call_id": "c1", "output": "data.csv"},
                    {"type": "message", "id": "m1", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}
                ]
            }
        })
        .to_string()
    };
    let text =
        [row("count-tokens", 1.0, 3.0, 1000), row("count-tokens", 0.0, 1.0, 2000), row("fix-build", 0.5, 2.0, 500)]
            .join("\n");
    let mut report = LoadReport::new("benchmark.jsonl");
    let run = load_bytes("benchmark.jsonl", text.as_bytes(), &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(run.meta.format, "NeMo Gym rollouts");
    assert_eq!((run.groups.len(), run.trajectories.len(), successes(&run)), (2, 3, 1));
    assert_eq!(run.trajectories.reward, [1.0, 0.0, 0.5]);
    let t = vantage::model::TrajectoryId(0);
    let path = run.trajectories.path(t);
    assert_eq!(path.len(), 2, "the call and the message");
    assert!(run.text(run.nodes.observation[path[0].index()]).ends_with("data.csv"));
    let components = RunSummary::of(&run).lines().join("\n");
    assert!(components.contains("tests_passed"), "{components}");
    assert!(!components.contains("schema_version"), "{components}");
    assert!(
        run.meta
            .notes
            .iter()
            .any(|n| n == "benchmark rows by agent: terminus-2 2.0.1: 3 row(s), 3500 input and 150 output tokens"),
        "{:?}",
        run.meta.notes
    );
}
