//! Baseline forensics (docs/FORENSICS.md): each kind found on a fixture built as its fix describes
//! it (tests/fixtures/forensics/make.py), nothing found on the sample runs and the fixtures without
//! such rows, bad input an empty list with a note, and `vantage forensics --json`, the MCP tool and
//! the JSON Python returns the same findings.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};

use vantage::analysis::forensics::{Forensics, Kind, Options, forensics};
use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/forensics").join(name)
}

fn load(path: &Path) -> Run {
    let bytes = std::fs::read(path).unwrap();
    let mut report = LoadReport::new(&path.display().to_string());
    load_bytes(&path.display().to_string(), &bytes, &mut report).unwrap()
}

fn found(name: &str) -> (Run, Forensics) {
    let run = load(&fixture(name));
    let found = forensics(&run, &Options::default());
    (run, found)
}

/// The findings as (kind, group, flagged rows).
fn summary(run: &Run, found: &Forensics) -> Vec<(&'static str, String, Vec<String>)> {
    found
        .findings
        .iter()
        .map(|f| {
            let rows = f.trajectories.iter().map(|&t| run.trajectory_key(t).to_owned()).collect();
            (f.kind.name(), run.group_key(f.group).to_owned(), rows)
        })
        .collect()
}

fn rows(keys: &[&str]) -> Vec<String> {
    keys.iter().map(|k| (*k).to_owned()).collect()
}

#[test]
fn failed_generations_in_the_leave_one_out_baseline_are_found_with_the_credit_they_moved() {
    let (run, found) = found("failed_rollout.jsonl");
    assert_eq!(summary(&run, &found), [("failed_rollout", "s1-p9".to_owned(), rows(&["s1-p9-r6", "s1-p9-r7"]))]);
    let f = &found.findings[0];
    assert_eq!(f.train_step, Some(1));
    // The group's others, rewards [1, 0, 1, 1, 0, 1]: without the two zeros the baseline rises.
    let moved = f.credit_moved.unwrap();
    assert!(moved > 0.1, "{moved}");
    // The logged advantages are NeMo-RL's leave-one-out ones with the failed rows inside.
    assert_eq!(f.trainer_included, Some(true), "{found:?}");
    assert!(f.evidence.contains("finish `error`") && f.evidence.contains("an empty response"), "{}", f.evidence);
}

#[test]
fn one_token_pad_rows_are_found() {
    let (run, found) = found("padding_row.jsonl");
    assert_eq!(summary(&run, &found), [("padding_row", "s0-p7".to_owned(), rows(&["s0-p7-r3"]))]);
    let f = &found.findings[0];
    assert_eq!(f.trainer_included, Some(true));
    // verl GRPO on [1, 0, 1, 0] against [1, 0, 1]: the others' advantages move.
    assert!(f.credit_moved.unwrap() > 0.1);
}

#[test]
fn a_group_smaller_than_the_logged_group_size_is_partial() {
    let (run, found) = found("partial_group.jsonl");
    assert_eq!(
        summary(&run, &found),
        [("partial_group", "s1-p5".to_owned(), rows(&["s1-p5-r0", "s1-p5-r1", "s1-p5-r2"]))]
    );
    assert_eq!(found.group_size.as_ref().map(|(n, _)| *n), Some(4));
    assert!(found.findings[0].evidence.starts_with("3 of 4 rollouts"), "{}", found.findings[0].evidence);
    assert_eq!(found.findings[0].credit_moved, None);
}

#[test]
fn without_a_logged_group_size_the_most_common_size_of_the_step_is_taken() {
    let text = std::fs::read_to_string(fixture("partial_group.jsonl")).unwrap();
    let text = text.replacen(", \"n_samples_per_prompt\": 4", "", 1);
    let mut report = LoadReport::new("partial.jsonl");
    let run = load_bytes("partial.jsonl", text.as_bytes(), &mut report).unwrap();
    let found = forensics(&run, &Options::default());
    assert_eq!(found.group_size, None);
    assert_eq!(summary(&run, &found)[0].1, "s1-p5");
    assert!(found.findings[0].evidence.contains("the size most groups of training step 1 have"));
}

#[test]
fn the_same_response_twice_in_a_group_is_a_duplicate() {
    let (run, found) = found("duplicate_rollout.jsonl");
    assert_eq!(summary(&run, &found), [("duplicate_rollout", "s0-p4".to_owned(), rows(&["s0-p4-r3"]))]);
    assert!(found.findings[0].evidence.contains("the response of s0-p4-r0"));
    assert!(found.findings[0].credit_moved.unwrap() > 0.0);
}

#[test]
fn a_filtered_row_is_a_finding_only_where_the_logged_advantages_keep_its_reward() {
    let (run, found) = found("filtered_in_baseline.jsonl");
    // s1-p3 logs the others' advantages with the dropped row's reward in the mean; s1-p4 without.
    assert_eq!(summary(&run, &found), [("filtered_in_baseline", "s1-p3".to_owned(), rows(&["s1-p3-r3"]))]);
    assert_eq!(found.findings[0].trainer_included, Some(true));
    // The logged advantages are r − the group's mean (prime-rl's GRPO, the same numbers as Dr.GRPO's
    // and tinker's here); the audit names the closest, as one group left the row out.
    let scheme = found.scheme.as_ref().map(|(s, _)| s.as_str()).unwrap_or_default();
    assert!(["grpo --preset dr_grpo", "grpo --preset prime_rl", "grpo --preset tinker"].contains(&scheme), "{scheme}");
}

#[test]
fn a_leave_one_out_spike_on_a_zero_std_is_found() {
    let (run, found) = found("std_spike.jsonl");
    let kinds = summary(&run, &found);
    assert!(kinds.contains(&("std_spike", "s1-p6".to_owned(), rows(&["s1-p6-r0"]))), "{kinds:?}");
    assert_eq!(kinds.len(), 1, "{kinds:?}");
    assert!(found.findings[0].evidence.contains("leave-one-out std is 0"), "{}", found.findings[0].evidence);
    // The audit says its largest difference lies on the flagged row (vantage check, the app).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["check", fixture("std_spike.jsonl").to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("the largest difference lies on a flagged row of group s1-p6 with advantage spikes"),
        "{text}"
    );
    // A higher bound than the spike (NeMo-RL's own -3183.6) finds nothing.
    let run = load(&fixture("std_spike.jsonl"));
    assert!(forensics(&run, &Options { spike_bound: 1e7, texts: true }).findings.is_empty());
}

#[test]
fn rewards_that_left_their_components_are_a_fallback() {
    let (run, found) = found("reward_fallback.jsonl");
    let kinds = summary(&run, &found);
    // In s2-p1 the reward is `correct` alone; the rows whose format is 0 still fit and are not off.
    assert_eq!(kinds.len(), 1, "{kinds:?}");
    assert_eq!((kinds[0].0, kinds[0].1.as_str()), ("reward_fallback", "s2-p1"));
    assert_eq!(kinds[0].2, rows(&["s2-p1-r0", "s2-p1-r2", "s2-p1-r3"]));
    assert!(found.findings[0].evidence.contains("1·correct + 0.2·format"), "{}", found.findings[0].evidence);
}

#[test]
fn nothing_is_found_on_a_clean_run_the_sample_runs_and_the_fixtures_without_such_rows() {
    let (_, found) = found("clean.jsonl");
    assert!(found.findings.is_empty(), "{found:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(root.join("sample_runs")).unwrap().map(|e| e.unwrap().path()).collect();
    paths.push(root.join("assets/demo_run.jsonl"));
    paths.sort();
    for path in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")) {
        let run = load(path);
        let found = forensics(&run, &Options::default());
        assert!(found.findings.is_empty(), "{}: {:?}", path.display(), found.findings);
    }
    // Every other fixture that opens: the trainers' own dumps, the formats, the agents (a PRM800K
    // `found_error` is a label, a small step's two groups of unequal size no evidence of a size).
    let mut files = Vec::new();
    let mut dirs = vec![root.join("tests/fixtures")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if !path.starts_with(root.join("tests/fixtures/forensics")) {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut opened = 0;
    for path in &files {
        let mut report = LoadReport::new(&path.display().to_string());
        let options = vantage::source::OpenOptions::default();
        let Ok(run) = vantage::source::path::open(path, &options, None, &mut report, None) else { continue };
        opened += 1;
        let found = forensics(&run, &Options::default());
        assert!(found.findings.is_empty(), "{}: {:?}", path.display(), found.findings);
    }
    assert!(opened >= 40, "{opened} fixtures opened");
}

#[test]
fn bad_input_gives_an_empty_list_with_a_note() {
    let cases = [
        ("no groups", "{\"vantage\": 1}\n"),
        (
            "groups of one",
            "{\"vantage\": 1}\n{\"type\": \"trajectory\", \"id\": \"a\", \"group\": \"g\", \"outcome\": {\"reward\": 1}, \"steps\": [{\"action\": \"x\"}]}\n{\"type\": \"trajectory\", \"id\": \"b\", \"group\": \"h\", \"outcome\": {\"reward\": 0}, \"steps\": [{\"action\": \"y\"}]}\n",
        ),
        (
            "no rewards",
            "{\"vantage\": 1}\n{\"type\": \"trajectory\", \"id\": \"a\", \"group\": \"g\", \"steps\": [{\"action\": \"x\"}]}\n{\"type\": \"trajectory\", \"id\": \"b\", \"group\": \"g\", \"steps\": [{\"action\": \"\"}], \"outcome\": {\"finish\": \"error\"}}\n",
        ),
    ];
    for (what, text) in cases {
        let mut report = LoadReport::new("bad.jsonl");
        let Ok(run) = load_bytes("bad.jsonl", text.as_bytes(), &mut report) else {
            continue;
        };
        let found = forensics(&run, &Options::default());
        assert!(found.findings.is_empty(), "{what}: {found:?}");
        assert_eq!(found.notes.len(), 1, "{what}: {:?}", found.notes);
    }
}

#[test]
fn health_fires_an_alarm_for_each_kind() {
    use vantage::analysis::health::{Thresholds, alarms};
    for kind in Kind::ALL {
        let run = load(&fixture(&format!("{}.jsonl", kind.name())));
        let names: Vec<&str> = alarms(&run, &Thresholds::default()).iter().map(|a| a.name).collect();
        assert!(names.contains(&kind.name()), "{}: {names:?}", kind.name());
        // A threshold above the share keeps it quiet.
        let mut quiet = Thresholds::default();
        quiet.set(kind.name(), 1.0).unwrap();
        let names: Vec<&str> = alarms(&run, &quiet).iter().map(|a| a.name).collect();
        assert!(!names.contains(&kind.name()), "{}: {names:?}", kind.name());
    }
    let run = load(&fixture("clean.jsonl"));
    assert!(alarms(&run, &Thresholds::default()).is_empty());
}

/// `vantage forensics --json`, the MCP tool `forensics` and the JSON `Run.forensics()` returns
/// (`api::forensics::report`, which the Python module calls) list the same findings.
#[test]
fn the_command_the_mcp_tool_and_python_give_the_same_findings() {
    for kind in Kind::ALL {
        let path = fixture(&format!("{}.jsonl", kind.name()));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
            .args(["forensics", "--json", "--limit", "1000"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let cli: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(cli["vantage_forensics"], 1);
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "forensics", "arguments": {"path": path.display().to_string(), "limit": 1000}}});
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
            .arg("mcp")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().unwrap();
            writeln!(stdin, "{call}").unwrap();
        }
        let out = child.wait_with_output().unwrap();
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let mcp: serde_json::Value =
            serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        let python = vantage::api::forensics::report(&load(&path), &Options::default());
        assert!(!cli["findings"].as_array().unwrap().is_empty(), "{}", kind.name());
        assert_eq!(cli["findings"], mcp["findings"], "{}", kind.name());
        assert_eq!(cli["findings"], python["findings"], "{}", kind.name());
        assert_eq!(cli["counts"], python["counts"]);
    }
}
