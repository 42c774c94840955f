//! Every file in `sample_runs/` (and the bundled demo) loads cleanly, has the expected shape, and
//! equals a fresh run of the deterministic generator.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;

use vantage::analysis::{RunSummary, is_zero_variance};
use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;

#[path = "../../examples/gen_samples/mod.rs"]
mod samples;

fn load(relative: &str) -> Run {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let bytes = std::fs::read(&path).unwrap();
    let mut report = LoadReport::new(relative);
    let run = load_bytes(relative, &bytes, &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{relative}: {:?}", report.located().collect::<Vec<_>>());
    run
}

#[test]
fn committed_samples_equal_a_fresh_generation() {
    for (relative, text) in samples::texts() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        let committed = std::fs::read_to_string(&path).unwrap();
        assert!(committed == text, "{relative} is stale: run `cargo run --features examples --example gen_samples`");
    }
}

#[test]
fn every_sample_in_the_directory_loads_without_warnings() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs");
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names.len(), 7, "{names:?}");
    for name in names {
        let run = load(&format!("sample_runs/{name}"));
        assert!(!run.trajectories.is_empty());
    }
}

/// (file, groups, trajectories, nodes, path steps, tokens)
const EXPECTED: &[(&str, usize, usize, usize, usize, usize)] = &[
    ("sample_runs/math_grpo_prm.jsonl", 36, 288, 1829, 1829, 0),
    ("sample_runs/alfworld_roles.jsonl", 16, 96, 1153, 1153, 0),
    ("sample_runs/search_qa_rag.jsonl", 20, 100, 500, 500, 0),
    ("sample_runs/tree_rollouts.jsonl", 16, 79, 286, 491, 0),
    ("sample_runs/verl_token_batch.jsonl", 4, 32, 100, 100, 1544),
    ("sample_runs/terminal_turn_scores.jsonl", 8, 29, 125, 125, 1802),
    ("sample_runs/prime_rl_episodes.jsonl", 15, 120, 318, 318, 0),
    ("assets/demo_run.jsonl", 12, 96, 662, 662, 0),
];

#[test]
fn samples_have_the_expected_counts() {
    for &(file, groups, trajectories, nodes, path_steps, tokens) in EXPECTED {
        let s = RunSummary::of(&load(file));
        assert_eq!(s.num_groups, groups, "{file}");
        assert_eq!(s.num_trajectories, trajectories, "{file}");
        assert_eq!(s.num_nodes, nodes, "{file}");
        assert_eq!(s.num_path_steps, path_steps, "{file}");
        assert_eq!(s.num_tokens, tokens, "{file}");
    }
}

#[test]
fn math_sample_has_grpo_groups_prm_scores_and_lucky_flawed_rollouts() {
    let run = load("sample_runs/math_grpo_prm.jsonl");
    let s = RunSummary::of(&run);
    assert_eq!(s.train_steps, Some((0, 2)));
    assert!(run.groups.ids().all(|g| run.groups.members(g).len() == 8));
    assert!(s.num_zero_variance_groups >= 3, "{}", s.num_zero_variance_groups);
    assert_eq!(s.scores.get("prm"), Some(&s.num_nodes));
    assert!(s.num_first_error.0 > 20);
    let lucky = run
        .trajectories
        .ids()
        .filter(|&t| run.trajectories.reward[t.index()] == 1.0)
        .filter(|&t| run.trajectories.path(t).iter().any(|&n| run.nodes.first_error(n) == Some(true)))
        .count();
    assert!(lucky >= 3, "correct answers through a flawed step: {lucky}");
}

#[test]
fn agent_sample_has_roles_env_rewards_and_repeating_state_keys() {
    let run = load("sample_runs/alfworld_roles.jsonl");
    let s = RunSummary::of(&run);
    for role in ["progress", "exploration", "infrastructure", "regression"] {
        assert!(s.roles.get(role).copied().unwrap_or(0) > 10, "{role}: {:?}", s.roles);
    }
    assert_eq!(s.num_env_rewards, s.num_nodes);
    // Some state key occurs on two different rollouts of one group (GiGPO needs this).
    let shared = run.groups.ids().any(|g| {
        let members = run.groups.members(g);
        members.iter().enumerate().any(|(i, &a)| {
            members[i + 1..].iter().any(|&b| {
                run.trajectories.path(a).iter().any(|&na| {
                    let key = run.nodes.state_key[na.index()];
                    run.trajectories.path(b).iter().any(|&nb| run.nodes.state_key[nb.index()] == key)
                })
            })
        })
    });
    assert!(shared);
    for kind in ["thought", "action", "observation"] {
        let column = match kind {
            "thought" => &run.nodes.thought,
            "action" => &run.nodes.action,
            _ => &run.nodes.observation,
        };
        assert!(column.iter().all(|t| t.is_some()), "{kind}");
    }
}

#[test]
fn rag_sample_has_docs_and_outcome_components() {
    let run = load("sample_runs/search_qa_rag.jsonl");
    let s = RunSummary::of(&run);
    assert_eq!(s.num_with_docs, 200);
    assert_eq!(s.components.keys().collect::<Vec<_>>(), ["f1", "format"]);
    assert_eq!(s.kinds.keys().collect::<Vec<_>>(), ["answer", "read", "search"]);
    let node = run.trajectories.path(vantage::model::TrajectoryId(0))[0];
    assert!(run.label(run.nodes.docs(node)[0]).starts_with("wiki:"));
}

#[test]
fn tree_sample_shares_prefixes_branches_and_truncates() {
    let run = load("sample_runs/tree_rollouts.jsonl");
    let s = RunSummary::of(&run);
    assert_eq!(s.num_trees, 16);
    assert!(s.num_branch_points >= 40, "{}", s.num_branch_points);
    assert!(s.num_path_steps > s.num_nodes + 100, "shared prefixes count once per trajectory");
    assert!(s.finish.get("truncated").copied().unwrap_or(0) >= 3, "{:?}", s.finish);
    assert!(s.num_mc > 100);
    for t in run.trajectories.ids() {
        let leaf = run.trajectories.leaf[t.index()];
        assert_eq!(run.nodes.num_children(leaf), 0, "trajectories end at leaves");
    }
    let mixed = run.groups.ids().filter(|&g| !is_zero_variance(&run, g)).count();
    assert!(mixed >= 8, "{mixed} groups with reward variance");
}

#[test]
fn token_sample_has_every_column_and_mask_holes() {
    let run = load("sample_runs/verl_token_batch.jsonl");
    assert_eq!(
        run.tokens.present(),
        [
            "mask",
            "reward",
            "logprob",
            "ref_logprob",
            "value",
            "entropy",
            "sum_pi_squared",
            "prm_logprob",
            "advantage",
            "trainer_logprob",
            "text"
        ]
    );
    let mask = run.tokens.mask.as_ref().unwrap();
    let with_hole = run.trajectories.ids().filter(|&t| {
        let m = &mask[run.trajectories.token_range(t)];
        let first = m.iter().position(|x| *x);
        let last = m.iter().rposition(|x| *x);
        matches!((first, last), (Some(a), Some(b)) if m[a..b].iter().any(|x| !*x))
    });
    assert!(with_hole.count() >= 10);
    // The token reward sits on the last policy token and equals the outcome.
    let reward = run.tokens.reward.as_ref().unwrap();
    for t in run.trajectories.ids() {
        let range = run.trajectories.token_range(t);
        let last = range.start + mask[range.clone()].iter().rposition(|x| *x).unwrap();
        assert_eq!(reward[last], run.trajectories.reward[t.index()]);
        for &node in run.trajectories.path(t) {
            let [start, end] = run.nodes.token_span(node).unwrap();
            assert!(end as usize <= range.len() && start < end);
        }
    }
}
