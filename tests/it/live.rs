//! Reading runs piece by piece and following them (native): parallel and piecewise parsing give
//! the run one thread gives, texts left in the file read back as the copies, followed files and
//! directories grow without losing or repeating a record, and the memory budget refuses a run
//! that would not fit.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::io::Write as _;
use std::path::{Path, PathBuf};

use vantage::load::formats::vantage_jsonl::write::to_jsonl;
use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;
use vantage::source::live::Live;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory for one test of this file.
fn scratch(name: &str) -> PathBuf {
    crate::common::scratch(&format!("live-{name}"))
}

/// The run as text (its records, texts decoded) and its warnings, for comparing two loads.
fn fingerprint(run: &Run, report: &LoadReport) -> (String, Vec<String>, u64, u64) {
    (to_jsonl(run), report.located().collect(), report.records_seen, report.records_loaded)
}

/// Native JSONL logs to check: the samples, the bundled run, the fixtures, and every real file
/// of ../shared/data that loads, written as vantage JSONL.
fn native_logs() -> Vec<(String, Vec<u8>)> {
    let mut logs = Vec::new();
    let mut add_dir = |dir: &Path| {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                logs.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    };
    add_dir(&root().join("sample_runs"));
    add_dir(&root().join("tests/fixtures"));
    logs.push(("demo_run.jsonl".to_owned(), vantage::DEMO_RUN.to_vec()));
    // The samples, the fixtures and the bundled run: what a clone holds without ../shared.
    assert!(logs.len() >= 19, "{}", logs.len());
    let shared = root().join("../shared/data");
    if shared.is_dir() {
        let mut found = 0;
        for path in vantage::source::folder::read(&shared, true).logs {
            let mut report = LoadReport::default();
            if let Ok(run) = vantage::source::path::load_path(&path, None, &mut report) {
                logs.push((format!("{} as vantage JSONL", path.display()), to_jsonl(&run).into_bytes()));
                found += 1;
            }
        }
        assert!(found >= 10, "only {found} real files loaded");
    } else {
        crate::common::skipped("the real logs: ../shared/data is absent");
    }
    logs
}

/// Loads `bytes` through a stream fed in pieces cut every `lines` lines, parsing each piece in
/// parts of at least `part_bytes` (1: as many parts as the stream allows).
fn load_in_pieces(name: &str, bytes: &[u8], lines: usize, part_bytes: usize) -> Result<(Run, LoadReport), String> {
    let stream = vantage::load::line_feed(name, bytes, None, &LoadReport::new(name)).map_err(|e| e.to_string())?;
    let mut stream = stream.ok_or_else(|| format!("{name}: not a log read piece by piece"))?;
    stream.set_min_part_bytes(part_bytes);
    let mut offset = 0;
    while offset < bytes.len() {
        let mut end = offset;
        for _ in 0..lines {
            end = vantage::load::formats::vantage_jsonl::next_cut(bytes, end, 0);
            if end >= bytes.len() {
                break;
            }
        }
        stream.feed(&bytes[offset..end], offset as u64);
        offset = end;
    }
    let mut report = LoadReport::default();
    let run = stream.finish_into(&mut report).map_err(|e| e.to_string())?;
    Ok((run, report))
}

#[test]
fn parallel_and_piecewise_loading_give_the_run_one_thread_gives() {
    let logs = native_logs();
    let mut checked = 0;
    for (name, bytes) in &logs {
        let mut report = LoadReport::new(name);
        let whole = load_bytes(name, bytes, &mut report);
        let one_thread = load_in_pieces(name, bytes, usize::MAX, usize::MAX);
        let (Ok(whole), Ok((one, one_report))) = (whole, one_thread) else { continue };
        let expected = fingerprint(&whole, &report);
        assert_eq!(fingerprint(&one, &one_report), expected, "{name}: one piece, one thread");
        for (lines, part_bytes) in [(usize::MAX, 1), (1, 1), (3, 1), (7, 64)] {
            let (run, piece_report) = load_in_pieces(name, bytes, lines, part_bytes).unwrap();
            assert_eq!(
                fingerprint(&run, &piece_report),
                expected,
                "{name}: pieces of {lines} lines, parts of {part_bytes}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 15, "{checked}");
}

/// Logs of the other JSON-lines formats read piece by piece: the fixtures and the real files of
/// ../shared/data in those formats.
fn other_jsonl_logs() -> Vec<(String, Vec<u8>)> {
    let mut logs = Vec::new();
    let mut paths: Vec<PathBuf> = [
        "tests/fixtures/formats",
        "tests/fixtures/verl_dump",
        "tests/fixtures/agents",
        "tests/fixtures/trainers/verifiers",
        "tests/fixtures/trainers/nemo_gym",
        "tests/fixtures/trainers/nemo_rl",
        "tests/fixtures/trainers/tinker/run/iteration_000000",
        "tests/fixtures/trainers/tinker/run/iteration_000001",
        "tests/fixtures/trainers/skyrl/run/dumped_evals/global_step_10_evals",
        "tests/fixtures/trainers/roll/run/rlvr",
        "tests/fixtures/trainers/roll/run/agentic",
        "tests/fixtures/trainers/open_instruct/run",
        "tests/fixtures/trainers/vf_eval/current",
        "tests/fixtures/trainers/vf_eval/v0.1.3",
    ]
    .iter()
    .flat_map(|d| std::fs::read_dir(root().join(d)).unwrap().map(|e| e.unwrap().path()))
    .collect();
    let shared = root().join("../shared/data");
    if shared.is_dir() {
        paths.extend(vantage::source::folder::read(&shared, true).logs);
    } else {
        crate::common::skipped("the real logs: ../shared/data is absent");
    }
    for path in paths.into_iter().filter(|p| p.is_file()) {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.display().to_string();
        if vantage::load::line_feed(&name, &bytes, None, &LoadReport::default()).is_ok_and(|s| s.is_some())
            && vantage::load::formats::vantage_jsonl::VantageStream::start(&name, &bytes, LoadReport::default())
                .is_err()
        {
            logs.push((name, bytes));
        }
    }
    logs
}

#[test]
fn importers_of_json_lines_read_in_pieces_give_the_run_one_thread_gives() {
    let logs = other_jsonl_logs();
    let formats: std::collections::BTreeSet<String> = logs
        .iter()
        .filter_map(|(name, bytes)| load_bytes(name, bytes, &mut LoadReport::new(name)).ok())
        .map(|run| run.meta.format.clone())
        .collect();
    for format in [
        "verl rollout dump",
        "Math-Shepherd",
        "PRMBench",
        "PRM800K",
        "MATH-APS",
        "OpenHands trajectory",
        "verifiers episodes",
        "NeMo Gym rollouts",
        "NeMo-RL training dump",
        "verifiers vf-eval results",
        "tinker-cookbook rollout summaries",
        "SkyRL dumped evals",
        "ROLL rollout dump",
        "open-instruct rollouts",
    ] {
        assert!(formats.contains(format), "no {format} log among {formats:?}");
    }
    for (name, bytes) in &logs {
        let mut report = LoadReport::new(name);
        let Ok(whole) = load_bytes(name, bytes, &mut report) else { continue };
        let expected = fingerprint(&whole, &report);
        for (lines, part_bytes) in [(usize::MAX, usize::MAX), (usize::MAX, 1), (1, 1), (3, 1), (7, 64)] {
            let (run, piece_report) = load_in_pieces(name, bytes, lines, part_bytes).unwrap();
            assert_eq!(
                fingerprint(&run, &piece_report),
                expected,
                "{name}: pieces of {lines} lines, parts of {part_bytes}"
            );
        }
        // Read from the file, the texts of a verl dump stay in it and read back the same.
        let mut lazy_report = LoadReport::default();
        let lazy = vantage::source::path::load_path(Path::new(name), None, &mut lazy_report).unwrap();
        assert_eq!(fingerprint(&lazy, &lazy_report), expected, "{name}: read from the file");
        if ["verl rollout dump", "OpenAI chat trajectories"].contains(&whole.meta.format.as_str()) {
            assert!(lazy.text.in_source() > 0, "{name}: texts were copied");
            assert!(lazy.heap_bytes() < whole.heap_bytes(), "{name}");
        }
    }
}

#[test]
fn verl_texts_with_escapes_are_pieces_of_the_file_that_read_back_decoded() {
    let dir = scratch("verl-escapes");
    // Split as written (no \u or \/ escapes), and split on the decoded text, mapped back.
    let plain = r#"\n plan \"a\"\t<think> first\nthought é 😀 \\n</think><tool_call>{\"q\": \"x\"}</tool_call>\n<tool_response>\t\r\nr1\\</tool_response><tool_response>r2</tool_response><answer> 42 \n\f</answer>\n"#;
    let escaped = r#"plan \"a\"\t<think> first\nthought é 😀 </think><tool_call>{\"q\": \"x\/y\"}</tool_call>\n<tool_response>r1</tool_response><tool_response>r2\u00e9</tool_response><answer>\u00c5 \ud83d\ude00 42</answer>"#;
    for (k, output) in [plain, escaped].into_iter().enumerate() {
        // The second line has a bare NaN: quoted first, its texts are copies.
        let first = format!(r#"{{"input": "Q\n1", "output": "{output}", "score": 1.0, "step": 3, "acc": true}}"#);
        let line = format!("{first}\n{}\n", first.replace("1.0", "NaN").replace("Q\\n1", "Q2"));
        let path = dir.join(format!("{k}.jsonl"));
        std::fs::write(&path, &line).unwrap();
        let lazy = vantage::source::path::load_path(&path, None, &mut LoadReport::default()).unwrap();
        let copied = load_bytes("x", line.as_bytes(), &mut LoadReport::default()).unwrap();
        assert!(lazy.text.in_source() >= 4, "{}", lazy.text.in_source());
        let texts = |run: &Run, t: usize| {
            let path = run.trajectories.path(vantage::model::TrajectoryId::from_index(t));
            path.iter()
                .map(|&n| {
                    let i = n.index();
                    [run.nodes.thought[i], run.nodes.action[i], run.nodes.observation[i]]
                        .map(|id| run.text(id).into_owned())
                })
                .collect::<Vec<_>>()
        };
        let serde_output: serde_json::Value = serde_json::from_str(&first).unwrap();
        let decoded = vantage::load::formats::verl_dump::split_output(serde_output["output"].as_str().unwrap());
        let expected: Vec<[String; 3]> = decoded.into_iter().map(|(_, t, a, o)| [t, a, o]).collect();
        for t in 0..2 {
            assert_eq!(texts(&lazy, t), texts(&copied, t), "{k}");
            assert_eq!(texts(&lazy, t), expected, "{k}");
        }
        assert_eq!(lazy.trajectories.len(), 2);
        assert_eq!(expected[0][1], "plan \"a\"");
        assert_eq!(expected[2][2], if k == 0 { "r1\\\nr2" } else { "r1\nr2é" });
    }
}

#[test]
fn chat_texts_left_in_the_file_are_its_messages_and_read_back_as_the_copies() {
    let dir = scratch("chat-ranges");
    let lines = [
        // Escapes, \u escapes and a pair, two tool results after one turn, two calls, arguments as
        // a string and as an object, content as a list of parts, a message of no call.
        r#"{"task_id": "t1", "trial": 0, "reward": 1.0, "messages": [{"role": "system", "content": "sys \"q\"\n"}, {"role": "user", "content": "Q \u00e9"}, {"role": "assistant", "content": "think\tfirst \ud83d\ude00", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"x\\/y\"}"}}, {"function": {"name": "calc", "arguments": {"x": [1, 2.5]}}}]}, {"role": "tool", "name": "search", "content": "r1\nline"}, {"role": "tool", "content": [{"type": "text", "text": "part a"}, {"type": "text", "text": "part b"}]}, {"role": "user", "content": null}, {"role": "assistant", "content": "done \\ 42"}]}"#,
        // A bare NaN: the line is quoted first, and its texts are copies.
        r#"{"task_id": "t1", "trial": 1, "reward": NaN, "messages": [{"role": "user", "content": "Q \u00e9"}, {"role": "assistant", "content": "x", "tool_calls": [{"function": {"name": "f", "arguments": null}}]}, {"role": "tool", "name": "f", "content": "out"}]}"#,
        // A message that does not decode (a lone surrogate): a located warning, as before.
        r#"{"task_id": "t2", "trial": 0, "reward": 0, "messages": [{"role": "assistant", "content": "bad \ud83d"}]}"#,
    ];
    let text = format!("{}\n", lines.join("\n"));
    let path = dir.join("chat.jsonl");
    std::fs::write(&path, &text).unwrap();
    let mut lazy_report = LoadReport::default();
    let lazy = vantage::source::path::load_path(&path, None, &mut lazy_report).unwrap();
    let mut report = LoadReport::new(&path.display().to_string());
    let copied = load_bytes(&path.display().to_string(), text.as_bytes(), &mut report).unwrap();
    assert_eq!(lazy.meta.format, "OpenAI chat trajectories");
    assert!(lazy.text.in_source() >= 4, "{}", lazy.text.in_source());
    assert_eq!(copied.text.in_source(), 0);
    assert_eq!(fingerprint(&lazy, &lazy_report), fingerprint(&copied, &report));
    assert_eq!(lazy.trajectories.len(), 2);
    assert_eq!(lazy_report.warnings.len(), 1, "{:?}", lazy_report.warnings);
    let n = &lazy.nodes;
    let texts: Vec<[String; 3]> = (0..n.len())
        .map(|i| [n.thought[i], n.action[i], n.observation[i]].map(|id| lazy.text(id).into_owned()))
        .collect();
    assert_eq!(
        texts[0],
        [
            "think\tfirst 😀".to_owned(),
            "search({\"q\": \"x\\/y\"})\ncalc({\"x\":[1,2.5]})".to_owned(),
            "[tool search] r1\nline\n[tool] part a\npart b\n[user] ".to_owned(),
        ]
    );
    assert_eq!(texts[1], [String::new(), "done \\ 42".to_owned(), String::new()]);
    assert_eq!(texts[2], ["x".to_owned(), "f()".to_owned(), "[tool f] out".to_owned()]);
    assert_eq!(lazy.text(lazy.groups.prompt[0]), "[system] sys \"q\"\n\n[user] Q é");
}

#[test]
fn texts_left_in_the_file_read_back_as_the_copies() {
    let dir = scratch("lazy");
    for name in ["math_grpo_prm.jsonl", "tree_rollouts.jsonl", "search_qa_rag.jsonl"] {
        let bytes = std::fs::read(root().join("sample_runs").join(name)).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        let mut lazy_report = LoadReport::default();
        let lazy = vantage::source::path::load_path(&path, None, &mut lazy_report).unwrap();
        assert!(lazy.text.in_source() > 0, "{name}: texts were copied");
        let mut report = LoadReport::new(&path.display().to_string());
        let copied = load_bytes(&path.display().to_string(), &bytes, &mut report).unwrap();
        assert_eq!(copied.text.in_source(), 0);
        assert_eq!(fingerprint(&lazy, &lazy_report), fingerprint(&copied, &report), "{name}");
        assert!(lazy.heap_bytes() < copied.heap_bytes(), "{name}");
        // Many texts read at once (a stretch of the file at a time) are the texts read one by one,
        // in any order, with absent texts among them.
        let n = &lazy.nodes;
        let mut ids: Vec<_> = (0..n.len()).flat_map(|i| [n.thought[i], n.action[i], n.observation[i]]).collect();
        ids.extend(lazy.groups.prompt.iter().rev().copied());
        ids.push(vantage::model::TextId::NONE);
        let at_once = lazy.texts(&ids);
        assert_eq!(at_once.len(), ids.len(), "{name}");
        for (text, &id) in at_once.iter().zip(&ids) {
            assert_eq!(*text, lazy.text(id), "{name}: {id:?}");
        }
        assert!(at_once.iter().filter(|t| !t.is_empty()).count() > n.len() / 2, "{name}");
    }
    // A file that changes under the run shows that its texts are gone, and nothing panics.
    let path = dir.join("math_grpo_prm.jsonl");
    let run = vantage::source::path::load_path(&path, None, &mut LoadReport::default()).unwrap();
    std::fs::write(&path, b"").unwrap();
    let node = run.trajectories.path_nodes[0].index();
    assert_eq!(run.text(run.nodes.thought[node]), vantage::model::UNREADABLE);
    assert_eq!(run.texts(&[run.nodes.thought[node]; 2]), [vantage::model::UNREADABLE; 2]);
}

#[test]
fn compressed_logs_load_as_the_plain_ones() {
    let dir = scratch("compressed");
    let bytes = std::fs::read(root().join("sample_runs/alfworld_roles.jsonl")).unwrap();
    let mut plain_report = LoadReport::new("plain");
    let plain = load_bytes("plain", &bytes, &mut plain_report).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes).unwrap();
    let zst = ruzstd::encoding::compress_to_vec(&bytes[..], ruzstd::encoding::CompressionLevel::Fastest);
    for (name, data) in [("run.jsonl.gz", gz.finish().unwrap()), ("run.jsonl.zst", zst)] {
        let path = dir.join(name);
        std::fs::write(&path, &data).unwrap();
        let mut report = LoadReport::default();
        let run = vantage::source::path::load_path(&path, None, &mut report).unwrap();
        assert_eq!(to_jsonl(&run), to_jsonl(&plain), "{name}");
        assert_eq!(report.records_loaded, plain_report.records_loaded, "{name}");
        // From bytes (the web) too.
        let run = load_bytes(name, &data, &mut LoadReport::new(name)).unwrap();
        assert_eq!(to_jsonl(&run), to_jsonl(&plain), "{name} from bytes");
    }
    // A compressed file of another format loads by that format's loader.
    let tau = std::fs::read(root().join("tests/fixtures/formats/tau_bench.json")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tau).unwrap();
    let path = dir.join("tau.json.gz");
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let run = vantage::source::path::load_path(&path, None, &mut LoadReport::default()).unwrap();
    assert_eq!(run.meta.format, load_bytes("t", &tau, &mut LoadReport::new("t")).unwrap().meta.format);
}

const HEADER: &str = "{\"vantage\": 1, \"name\": \"followed\"}\n";

fn trajectory_line(step: i64, group: usize, r: usize) -> String {
    format!(
        "{{\"type\": \"trajectory\", \"id\": \"s{step}/g{group}/r{r}\", \"group\": \"s{step}/g{group}\", \"train_step\": {step}, \
         \"outcome\": {{\"reward\": {}}}, \"steps\": [{{\"kind\": \"think\", \"thought\": \"line one\\nline \\\"two\\\" of s{step}/g{group}/r{r}\"}}]}}\n",
        (r % 2) as f32
    )
}

use crate::common::append;

fn keys(run: &Run) -> Vec<String> {
    run.trajectories.ids().map(|t| run.trajectory_key(t).to_owned()).collect()
}

#[test]
fn a_followed_file_gains_appended_records_once_and_a_line_written_in_two_pieces_once() {
    let dir = scratch("follow-jsonl");
    let path = dir.join("run.jsonl");
    std::fs::write(&path, format!("{HEADER}{}{}", trajectory_line(0, 0, 0), trajectory_line(0, 0, 1))).unwrap();
    let mut live = Live::open(&path, LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    assert_eq!(keys(&live.snapshot()), ["s0/g0/r0", "s0/g0/r1"]);
    assert!(!live.poll().unwrap(), "nothing new");
    // A line written in two pieces: not read until it ends, then read once.
    let line = trajectory_line(1, 0, 0);
    let (first, second) = line.split_at(40);
    append(&path, first);
    assert!(!live.poll().unwrap(), "an incomplete last line waits");
    assert_eq!(live.snapshot().trajectories.len(), 2);
    assert!(live.report().warnings.is_empty(), "{:?}", live.report().warnings);
    append(&path, second);
    append(&path, &trajectory_line(1, 0, 1));
    assert!(live.poll().unwrap());
    let run = live.snapshot();
    assert_eq!(keys(&run), ["s0/g0/r0", "s0/g0/r1", "s1/g0/r0", "s1/g0/r1"]);
    assert!(live.report().warnings.is_empty(), "{:?}", live.report().warnings);
    let node = run.trajectories.path_nodes[2].index();
    assert_eq!(run.text(run.nodes.thought[node]), "line one\nline \"two\" of s1/g0/r0");
    let steps: std::collections::BTreeSet<_> = run.groups.train_step.iter().flatten().collect();
    assert_eq!(steps.len(), 2);
    // Truncated and rewritten: read again from its start, with a notice.
    std::fs::write(&path, format!("{HEADER}{}", trajectory_line(5, 0, 0))).unwrap();
    assert!(live.poll().unwrap());
    assert_eq!(keys(&live.snapshot()), ["s5/g0/r0"]);
    assert!(live.notices.iter().any(|n| n.contains("read again from its start")), "{:?}", live.notices);
}

#[test]
fn a_followed_file_of_another_json_lines_format_gains_its_appended_lines() {
    let dir = scratch("follow-prm");
    for name in ["math_shepherd.jsonl", "prm800k.jsonl", "prmbench.jsonl"] {
        let source = std::fs::read_to_string(root().join("tests/fixtures/formats").join(name)).unwrap();
        let whole = load_bytes(name, source.as_bytes(), &mut LoadReport::new(name)).unwrap();
        let (live, first) = crate::common::follow_in_pieces(&dir.join(name), &source);
        assert!(first >= 1, "{name}");
        let run = live.snapshot();
        assert_eq!(keys(&run), keys(&whole), "{name}");
        assert_eq!(run.meta.format, whole.meta.format);
    }
}

fn verl_line(step: i64, prompt: &str, score: f32) -> String {
    format!(
        "{{\"input\": \"{prompt}\", \"output\": \"<think>hm</think><answer>4</answer>\", \"score\": {score}, \"step\": {step}}}\n"
    )
}

#[test]
fn a_followed_verl_directory_gains_its_new_step_files() {
    let dir = scratch("follow-verl");
    std::fs::write(dir.join("1.jsonl"), format!("{}{}", verl_line(1, "2+2?", 1.0), verl_line(1, "2+2?", 0.0))).unwrap();
    std::fs::write(dir.join("config.yaml"), "not a log").unwrap();
    let mut live = Live::open(&dir, LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 2);
    std::fs::write(dir.join("2.jsonl"), format!("{}{}", verl_line(2, "2+2?", 1.0), verl_line(2, "3+3?", 1.0))).unwrap();
    assert!(live.poll().unwrap());
    let run = live.snapshot();
    assert_eq!(run.trajectories.len(), 4);
    assert_eq!(run.groups.len(), 3, "groups are per training step");
    assert!(run.meta.notes.iter().any(|n| n.contains("config.yaml")), "{:?}", run.meta.notes);
    assert!(!live.poll().unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 4, "nothing read twice");
    // Read once, as `vantage check` does, the directory is the same run.
    let mut report = LoadReport::default();
    let once = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    assert_eq!(to_jsonl(&once), to_jsonl(&run));
}

/// A tinker-cookbook log directory followed while it trains: a new iteration's training summaries
/// are read as they appear, its evaluator's and its logtree are not.
#[test]
fn a_followed_tinker_directory_gains_its_new_iterations() {
    let fixture = root().join("tests/fixtures/trainers/tinker/run");
    let dir = scratch("follow-tinker");
    let copy = |iteration: &str| {
        std::fs::create_dir_all(dir.join(iteration)).unwrap();
        for entry in std::fs::read_dir(fixture.join(iteration)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.join(iteration).join(path.file_name().unwrap())).unwrap();
        }
    };
    copy("iteration_000000");
    let mut live = Live::open(&dir, LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 8);
    copy("iteration_000001");
    assert!(live.poll().unwrap());
    let run = live.snapshot();
    assert_eq!(run.trajectories.len(), 16, "the evaluator's four are a run of their own");
    assert_eq!(run.groups.train_step, [Some(0), Some(0), Some(1), Some(1)]);
    assert!(!live.poll().unwrap());
    let mut report = LoadReport::default();
    let once = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    assert_eq!(to_jsonl(&once), to_jsonl(&run));
}

/// A SkyRL `dumped_evals/` folder followed while the run trains: a new evaluation's folder is read
/// as it appears, and a data source's file that grows gains its new samples under new keys.
#[test]
fn a_followed_skyrl_dumped_evals_folder_gains_its_new_evaluations() {
    let fixture = root().join("tests/fixtures/trainers/skyrl/run/dumped_evals");
    let dir = scratch("follow-skyrl").join("dumped_evals");
    let copy = |step: &str| {
        std::fs::create_dir_all(dir.join(step)).unwrap();
        for entry in std::fs::read_dir(fixture.join(step)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.join(step).join(path.file_name().unwrap())).unwrap();
        }
    };
    copy("global_step_10_evals");
    let mut live = Live::open(&dir, LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 9);
    copy("global_step_20_evals");
    assert!(live.poll().unwrap());
    let run = live.snapshot();
    assert_eq!(run.trajectories.len(), 18);
    assert!(!live.poll().unwrap());
    let mut report = LoadReport::default();
    let once = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    assert_eq!(to_jsonl(&once), to_jsonl(&run));
    // Samples appended to a file take the rows after its earlier ones.
    let aime = dir.join("global_step_20_evals/aime.jsonl");
    let first = std::fs::read_to_string(&aime).unwrap().lines().next().unwrap().to_owned();
    std::fs::OpenOptions::new().append(true).open(&aime).unwrap().write_all(format!("{first}\n").as_bytes()).unwrap();
    assert!(live.poll().unwrap());
    let run = live.snapshot();
    assert_eq!(run.trajectories.len(), 19);
    assert!(run.trajectory_by_key("step-20/aime/3").is_some());
    assert!(live.report().warnings.is_empty(), "{:?}", live.report().warnings);
}

/// An ART split folder followed while the model trains: each step's file is read as it appears.
#[test]
fn a_followed_art_split_folder_gains_its_new_steps() {
    let fixture = root().join("tests/fixtures/trainers/art/run/trajectories/train");
    let dir = scratch("follow-art").join("trajectories/train");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture.join("0003.parquet"), dir.join("0003.parquet")).unwrap();
    let mut live = Live::open(&dir, LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 6);
    std::fs::copy(fixture.join("0004.parquet"), dir.join("0004.parquet")).unwrap();
    assert!(live.poll().unwrap());
    let run = live.snapshot();
    assert_eq!(run.trajectories.len(), 12);
    assert_eq!(run.groups.train_step, [Some(3), Some(3), Some(4), Some(4)]);
    assert!(!live.poll().unwrap());
}

#[cfg(feature = "parquet")]
fn trl_file(path: &Path, step: i64, prompts: &[&str], rewards: &[f64]) {
    use polars::prelude::*;
    let n = prompts.len();
    let mut frame = df!(
        "step" => vec![step.to_string(); n],
        "prompt" => prompts.to_vec(),
        "completion" => (0..n).map(|i| format!("answer {i}")).collect::<Vec<_>>(),
        "accuracy_reward" => rewards.to_vec(),
        "advantage" => rewards.iter().map(|r| r - 0.5).collect::<Vec<_>>(),
    )
    .unwrap();
    let file = std::fs::File::create(path).unwrap();
    ParquetWriter::new(file).finish(&mut frame).unwrap();
}

#[cfg(feature = "parquet")]
#[test]
fn a_trl_completions_directory_is_one_run_and_gains_its_new_files() {
    let dir = scratch("follow-trl").join("completions");
    std::fs::create_dir_all(&dir).unwrap();
    trl_file(&dir.join("completions_00001.parquet"), 1, &["p", "p", "q", "q"], &[1.0, 0.0, 1.0, 1.0]);
    trl_file(&dir.join("completions_00002.parquet"), 2, &["p", "p"], &[0.0, 1.0]);
    std::fs::write(dir.join("notes.txt"), "not a log").unwrap();
    let mut report = LoadReport::default();
    let run = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 6);
    assert_eq!(run.groups.len(), 3);
    let steps: std::collections::BTreeSet<_> = run.groups.train_step.iter().flatten().copied().collect();
    assert_eq!(steps.into_iter().collect::<Vec<_>>(), [1, 2]);
    assert!(run.meta.notes.iter().any(|n| n.contains("notes.txt")), "{:?}", run.meta.notes);
    assert!(!vantage::source::folder::is_plain(&dir), "one path, one run");
    let mut live = Live::open(&dir, LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 6);
    trl_file(&dir.join("completions_00003.parquet"), 3, &["q", "q"], &[1.0, 0.0]);
    assert!(live.poll().unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 8);
    assert!(!live.poll().unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 8);
}

#[test]
fn the_memory_budget_refuses_a_run_that_needs_more_with_what_to_do() {
    let dir = scratch("budget");
    let path = dir.join("big.jsonl");
    let mut text = HEADER.to_owned();
    for g in 0..3000usize {
        text.push_str(&trajectory_line(g as i64 / 100, g, 0));
    }
    std::fs::write(&path, &text).unwrap();
    let mut live = Live::open(&path, LoadReport::with_budget("", 100_000)).unwrap().unwrap();
    let err = live.read(None).err().unwrap().to_string();
    assert!(err.contains("needs about") && err.contains("100.0 kB") && err.contains("convert"), "{err}");
    // With room, it loads.
    let mut live = Live::open(&path, LoadReport::with_budget("", 1 << 30)).unwrap().unwrap();
    live.read(None).unwrap();
    assert_eq!(live.finish(&mut LoadReport::default()).unwrap().trajectories.len(), 3000);
}

#[test]
fn a_large_log_is_shown_while_it_is_read() {
    let dir = scratch("progressive");
    let path = dir.join("run.jsonl");
    let mut text = HEADER.to_owned();
    // Well past the first piece (2 MiB).
    let mut g = 0usize;
    while text.len() < 5 << 20 {
        text.push_str(&trajectory_line(g as i64 / 100, g, 0));
        g += 1;
    }
    std::fs::write(&path, &text).unwrap();
    let mut shown = Vec::new();
    let mut report = LoadReport::default();
    let mut show = |run: vantage::model::Run, _: &LoadReport| {
        shown.push(run.trajectories.len());
        true
    };
    let run = vantage::source::path::open(&path, &Default::default(), None, &mut report, Some(&mut show)).unwrap();
    assert!(!shown.is_empty() && shown[0] > 0 && shown[0] < run.trajectories.len(), "{shown:?}");
    assert_eq!(run.trajectories.len(), g);
    // Cancelled after the first view: the load stops with a clear error.
    let err = vantage::source::path::open(
        &path,
        &Default::default(),
        None,
        &mut LoadReport::default(),
        Some(&mut |_, _| false),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("cancelled"), "{err}");
}

#[test]
fn a_log_that_arrives_in_pieces_is_the_log_read_whole() {
    // The web build's follow: bytes past what it has, in whatever pieces the server sends.
    for name in ["math_grpo_prm.jsonl", "verl_token_batch.jsonl", "tree_rollouts.jsonl"] {
        let bytes = std::fs::read(root().join("sample_runs").join(name)).unwrap();
        let mut report = LoadReport::new(name);
        let whole = load_bytes(name, &bytes, &mut report).unwrap();
        let first = vantage::load::formats::vantage_jsonl::next_cut(&bytes, 0, 0) + 17;
        let mut log = vantage::load::formats::vantage_jsonl::GrowingLog::start(name, &bytes[..first]).unwrap();
        let mut at = first;
        let mut step = 1;
        while at < bytes.len() {
            let end = (at + step * 997).min(bytes.len());
            log.append(&bytes[at..end]);
            at = end;
            step += 1;
        }
        assert_eq!(log.received(), bytes.len() as u64);
        assert_eq!(to_jsonl(&log.snapshot()), to_jsonl(&whole), "{name}");
        assert_eq!(log.report().records_loaded, report.records_loaded, "{name}");
        assert!(log.report().warnings.is_empty(), "{name}: {:?}", log.report().warnings);
    }
}

#[test]
fn a_directory_of_numbered_logs_of_another_format_is_one_log() {
    // Numbered like a verl dump, but vantage JSONL: read as one log, the other files left out.
    let dir = scratch("numbered");
    std::fs::write(dir.join("1.jsonl"), format!("{HEADER}{}", trajectory_line(1, 0, 0))).unwrap();
    std::fs::write(dir.join("README.md"), "not a log").unwrap();
    assert!(!vantage::source::folder::is_plain(&dir), "one path, one run");
    let run = vantage::source::path::load_path(&dir, None, &mut LoadReport::default()).unwrap();
    assert_eq!(keys(&run), ["s1/g0/r0"]);
}

#[test]
fn a_log_that_shrinks_or_grows_while_it_is_read_loads_what_was_there_and_nothing_panics() {
    let dir = scratch("shrinks");
    let path = dir.join("run.jsonl");
    let mut text = HEADER.to_owned();
    let mut g = 0usize;
    while text.len() < 6 << 20 {
        text.push_str(&trajectory_line(g as i64 / 100, g, 0));
        g += 1;
    }
    for change in ["shrink", "grow"] {
        std::fs::write(&path, &text).unwrap();
        // After the first piece is read (2 MiB), the file is cut to 3 MiB, mid-line, or doubled.
        let mut changed = false;
        let mut show = |_: Run, _: &LoadReport| {
            if !changed {
                changed = true;
                if change == "shrink" {
                    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(3 << 20).unwrap();
                } else {
                    append(&path, &text[HEADER.len()..]);
                }
            }
            true
        };
        let mut report = LoadReport::new("run.jsonl");
        let run = vantage::source::path::open(&path, &Default::default(), None, &mut report, Some(&mut show)).unwrap();
        assert!(changed, "{change}");
        let n = run.trajectories.len();
        if change == "shrink" {
            // What the first 3 MiB hold, the cut line last (a located warning).
            assert!(n > 0 && n < g, "{change}: {n} of {g}");
            assert_eq!(report.num_warnings(), 1, "{:?}", report.warnings);
        } else {
            // Read to its end as it is when reading gets there: every record, some twice (the
            // duplicate ids are located warnings), never a half line.
            assert!(n >= g, "{change}: {n} of {g}");
        }
        // Every text reads back (or says the log changed), none panics.
        for t in run.trajectories.ids() {
            for &node in run.trajectories.path(t) {
                let _: String = run.text(run.nodes.thought[node.index()]).into_owned();
            }
        }
    }
}
