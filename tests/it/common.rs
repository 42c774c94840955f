//! Test inputs built in code, shared by several test files.
#![allow(dead_code, reason = "each test module uses a part")]
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

/// One Inspect sample: a tool call, its result, an intermediate score, then the answer.
pub fn inspect_sample(id: &str, epoch: u32, value: &str) -> String {
    format!(
        r#"{{"id": "{id}", "epoch": {epoch}, "input": "What is 6 * 7?", "target": "42",
  "metadata": {{"difficulty": NaN}},
  "messages": [{{"role": "user", "content": "What is 6 * 7?"}}],
  "events": [
    {{"event": "sample_init", "timestamp": "2026-01-01T00:00:00"}},
    {{"event": "model", "model": "m", "output": {{"choices": [{{"message": {{"role": "assistant", "content": [{{"type": "reasoning", "reasoning": "use the calculator"}}], "tool_calls": [{{"id": "c1", "function": "calc", "arguments": {{"expr": "6*7"}}}}]}}, "stop_reason": "tool_calls"}}]}}}},
    {{"event": "tool", "function": "calc", "result": "42"}},
    {{"event": "score", "score": {{"value": 0.8}}, "intermediate": true}},
    {{"event": "model", "model": "m", "output": {{"choices": [{{"message": {{"role": "assistant", "content": "The answer is 42"}}, "stop_reason": "stop"}}]}}}}
  ],
  "scores": {{"match": {{"value": "{value}"}}, "includes": {{"value": true}}}},
  "output": {{"choices": [{{"message": {{"role": "assistant", "content": "The answer is 42"}}, "stop_reason": "stop"}}]}}}}"#
    )
}

/// A summary of `inspect_sample`, as `summaries.json` lists it.
fn inspect_summary(id: &str, epoch: u32, value: &str) -> String {
    format!(
        r#"{{"id": {id}, "epoch": {epoch}, "input": "What is 6 * 7?", "target": "42", "scores": {{"match": {{"value": "{value}"}}}}, "message_count": 4, "turn_count": 2, "total_time": 1.5}}"#
    )
}

/// An Inspect `.eval` with a header and summaries: samples 1 (epochs 1 and 2) and 10 as single
/// entries, sample 2 in the chunked shape (events in two chunks, the answer behind an
/// `attachment://` reference), and sample 3 summarised but with no entry (still running).
pub fn lazy_eval() -> Vec<u8> {
    let header = r#"{"version": 2, "status": "started", "eval": {"task": "arith", "model": "m"}, "results": {"scores": [{"name": "match"}]}}"#;
    let summaries = format!(
        "[{}]",
        [("10", 1, "C"), ("1", 1, "C"), ("1", 2, "I"), ("2", 1, "P"), ("3", 1, "I")]
            .map(|(id, epoch, value)| inspect_summary(id, epoch, value))
            .join(", ")
    );
    let chunked: serde_json::Value = serde_json::from_str(&inspect_sample("2", 1, "P").replace("NaN", "null")).unwrap();
    let events = chunked["events"].as_array().unwrap();
    let mut later: Vec<serde_json::Value> = events[2..].to_vec();
    later[2]["output"]["choices"][0]["message"]["content"] = "attachment://a1b2".into();
    let mut shell = chunked.clone();
    shell.as_object_mut().unwrap().remove("events");
    let (shell, first, later) = (shell.to_string(), serde_json::Value::from(events[..2].to_vec()), later);
    let later = serde_json::Value::from(later).to_string();
    let first = first.to_string();
    let samples = [inspect_sample("1", 1, "C"), inspect_sample("1", 2, "I"), inspect_sample("10", 1, "C")];
    let entries: Vec<(&str, u16, &[u8])> = vec![
        ("header.json", 8, header.as_bytes()),
        ("summaries.json", 93, summaries.as_bytes()),
        ("samples/1_epoch_1.json", 93, samples[0].as_bytes()),
        ("samples/1_epoch_2.json", 8, samples[1].as_bytes()),
        ("samples/10_epoch_1.json", 0, samples[2].as_bytes()),
        ("samples/2_epoch_1/sample.json", 93, shell.as_bytes()),
        ("samples/2_epoch_1/events/0.json", 8, first.as_bytes()),
        ("samples/2_epoch_1/events/2.json", 93, later.as_bytes()),
        ("samples/2_epoch_1/attachments/0.json", 8, br#"{"a1b2": "The answer is forty-two"}"#),
    ];
    vantage::load::zip::write(&entries)
}

/// A fresh, empty directory under the temporary one for one test: `vantage-<name>-<pid>`.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("vantage-{name}-{}", std::process::id()));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Appends `text` to the file at `path`.
pub fn append(path: &std::path::Path, text: &str) {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file.flush().unwrap();
}

/// A JSON-lines log followed while it is written: its first line is written to `path` and read,
/// then the rest is appended in two pieces (the last line split), each followed by a poll. Returns
/// the followed log and how many trajectories the first line gave.
pub fn follow_in_pieces(path: &std::path::Path, source: &str) -> (vantage::source::live::Live, usize) {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    assert!(lines.len() >= 2, "{}", path.display());
    std::fs::write(path, lines[0]).unwrap();
    let mut live =
        vantage::source::live::Live::open(path, vantage::load::LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    let first = live.snapshot().trajectories.len();
    let rest = lines[1..].concat();
    let (a, b) = rest.split_at(rest.len() - 5);
    append(path, a);
    live.poll().unwrap();
    append(path, b);
    live.poll().unwrap();
    (live, first)
}

/// Says that a test, or part of one, did not run because what it reads is absent (`what`, e.g.
/// "../shared/data is absent"): prints `SKIPPED: what` and appends the line to the run's list of
/// skips (`$CARGO_TARGET_TMPDIR/skips.txt`, which `./check` counts at its end). Under
/// `VANTAGE_SHARED_REQUIRED=1`, as `.ci/run` sets, it fails the test instead: in CI every test that
/// reads `../shared` must find it.
pub fn skipped(what: &str) {
    let line = format!("SKIPPED: {what}");
    assert!(
        std::env::var_os("VANTAGE_SHARED_REQUIRED").is_none_or(|v| v != "1"),
        "{line}, and VANTAGE_SHARED_REQUIRED=1 says every test that reads ../shared must find it"
    );
    println!("{line}");
    record_skip(&line);
}

/// Appends `line` to the list of skips `./check` reports.
fn record_skip(line: &str) {
    use std::io::Write as _;
    // `VANTAGE_SKIPS_FILE` elsewhere: a test of skipping keeps its skips out of the run's count.
    let path = std::env::var_os("VANTAGE_SKIPS_FILE")
        .map_or_else(|| std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("skips.txt"), std::path::PathBuf::from);
    // One write of one line: the test threads' lines do not interleave.
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _: std::io::Result<()> = file.write_all(format!("{line}\n").as_bytes());
    }
}

#[test]
fn a_test_that_would_skip_fails_when_shared_data_is_required() {
    // This binary again, on tests that read ../shared, their data moved to where nothing is.
    let absent = scratch("shared-moved-away").join("absent");
    for (test, var) in [
        ("importers::processbench_files_load_with_their_published_counts", "VANTAGE_DATA_DIR"),
        ("golden_verl::verl_golden_vectors_are_reproduced", "VANTAGE_GOLDEN_DIR"),
        ("golden_trainers::trl_golden_vectors_are_reproduced", "VANTAGE_GOLDEN_TRL_DIR"),
    ] {
        let run = |required: bool| {
            let mut command = std::process::Command::new(std::env::current_exe().unwrap());
            command.args(["--exact", test, "--test-threads", "1", "--nocapture"]).env(var, &absent);
            command.env("VANTAGE_SKIPS_FILE", absent.with_file_name("skips.txt"));
            if required {
                command.env("VANTAGE_SHARED_REQUIRED", "1");
            } else {
                command.env_remove("VANTAGE_SHARED_REQUIRED");
            }
            command.output().unwrap()
        };
        let out = run(true);
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!out.status.success(), "{test} passed with its data absent and required:\n{text}");
        assert!(text.contains("VANTAGE_SHARED_REQUIRED=1") && text.contains(&absent.display().to_string()), "{text}");
        assert!(text.contains("1 failed"), "{test} did not run:\n{text}");
        // Without the requirement it passes, saying SKIPPED.
        let out = run(false);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success() && text.contains("SKIPPED: "), "{text}");
    }
}

/// The 2026 schemes, each with a sample that has what it needs (the room test draws each against
/// GRPO there; the formula test calls each there).
pub const SCHEMES_2026: &[(&str, &str)] = &[
    ("maxrl", "alfworld_roles.jsonl"),
    ("rae", "alfworld_roles.jsonl"),
    ("opd", "verl_token_batch.jsonl"),
    ("entropy_mask", "verl_token_batch.jsonl"),
    ("fipo", "verl_token_batch.jsonl"),
    ("hierarchical_grpo", "prime_rl_episodes.jsonl"),
    ("ngu", "prime_rl_episodes.jsonl"),
    ("gar", "prime_rl_episodes.jsonl"),
    ("carl", "tree_rollouts.jsonl"),
    ("igpo", "search_qa_rag.jsonl"),
    ("trace_td", "search_qa_rag.jsonl"),
    ("hcapo", "terminal_turn_scores.jsonl"),
];
