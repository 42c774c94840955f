//! The importers against the real third-party files in `../shared/data` (not copied into the
//! repository): exact record counts from each folder's SOURCE.md. Skipped, saying so, when the
//! folder is absent (a clean clone without the shared data beside it).
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::PathBuf;

use vantage::analysis::RunSummary;
use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;

fn data_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("VANTAGE_DATA_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"), PathBuf::from);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIPPED: no shared data at {} (set VANTAGE_DATA_DIR)", dir.display());
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
        // Tree credit applies: TreePS-RAG gives the steps before the branch point and after it different values.
        let credit = vantage::credit::compute(vantage::credit::scheme("treeps_rag").unwrap(), &run, None, &Vec::new());
        assert!(credit.is_ok(), "{file}");
    }
}

#[test]
fn a_verl_dump_directory_is_one_run_with_groups_rebuilt_from_identical_inputs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verl_dump");
    let mut report = LoadReport::new("verl_dump");
    let run = vantage::native::load_path(&dir, None, &mut report).unwrap();
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
