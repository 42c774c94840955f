//! The headless subcommands on the sample runs: exit codes and output.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::process::Command;

fn vantage(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn check_on_every_sample_exits_zero_and_prints_the_summary() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs");
    let mut files: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path().display().to_string()).collect();
    files.sort();
    let args: Vec<&str> = std::iter::once("check").chain(files.iter().map(String::as_str)).collect();
    let (code, stdout, stderr) = vantage(&args);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_eq!(stdout.matches(": vantage JSONL v1").count(), 5, "{stdout}");
    assert!(stdout.contains("groups 36 · trajectories 288 · steps 1829 (nodes 1829) · tokens 0"), "{stdout}");
    assert!(stdout.contains("tokens: mask, reward, logprob, ref_logprob, value, entropy, text"));
    assert!(stdout.contains("roles: exploration (201), infrastructure (135), progress (681), regression (136)"));
    assert!(stdout.contains("tree links: yes (16 trees"));
    assert_eq!(stdout.matches("warnings: 0 (0 skipped)").count(), 5);
}

#[test]
fn check_takes_the_worst_exit_code_over_files() {
    let (code, stdout, _) = vantage(&["check", "sample_runs/math_grpo_prm.jsonl", "tests/fixtures/duplicate_id.jsonl"]);
    assert_eq!(code, Some(1), "{stdout}");
    let (code, _, _) = vantage(&["check", "tests/fixtures/duplicate_id.jsonl", "tests/fixtures/not_vantage.jsonl"]);
    assert_eq!(code, Some(2));
    let (code, stdout, _) = vantage(&["check", "no/such/file.jsonl"]);
    assert_eq!(code, Some(2));
    assert!(stdout.contains("no/such/file.jsonl"), "{stdout}");
}

#[test]
fn explicit_format_override_is_checked() {
    let (code, stdout, _) = vantage(&["check", "--format", "vantage", "sample_runs/tree_rollouts.jsonl"]);
    assert_eq!(code, Some(0), "{stdout}");
    let (code, stdout, _) = vantage(&["check", "--format", "nonsense", "sample_runs/tree_rollouts.jsonl"]);
    assert_eq!(code, Some(2));
    assert!(stdout.contains("unknown format \"nonsense\""), "{stdout}");
}

#[test]
fn credit_with_an_unknown_scheme_is_a_one_line_error() {
    let (code, stdout, stderr) = vantage(&["credit", "sample_runs/math_grpo_prm.jsonl", "--scheme", "no_such_scheme"]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("unknown scheme \"no_such_scheme\""), "{stderr}");
}

#[test]
fn schemes_lists_the_registry() {
    let (code, stdout, _) = vantage(&["schemes"]);
    assert_eq!(code, Some(0));
    assert!(!stdout.is_empty());
    let (code, markdown, _) = vantage(&["schemes", "--markdown"]);
    assert_eq!(code, Some(0));
    assert!(markdown.starts_with("# Credit schemes"));
}
