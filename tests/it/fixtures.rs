//! Every broken fixture gives its located warning (`FILE:LINE: FIELD: reason`), the valid records
//! still load, and `vantage check` exits 1 (records skipped) or 2 (nothing loadable).

use std::path::Path;
use std::process::Command;

use vantage::load::{LoadReport, load_bytes};

struct Case {
    file: &'static str,
    exit: i32,
    /// Trajectories that still load (0 when nothing does).
    trajectories: usize,
    /// A substring of the located line `vantage check` prints.
    located: &'static str,
}

const CASES: &[Case] = &[
    Case {
        file: "truncated_line.jsonl",
        exit: 1,
        trajectories: 2,
        located: "truncated_line.jsonl:3: record: record is cut off",
    },
    Case {
        file: "nan_reward.jsonl",
        exit: 1,
        trajectories: 2,
        located: "nan_reward.jsonl:3: outcome.reward: reward is NaN; treated as missing",
    },
    Case {
        file: "missing_parent.jsonl",
        exit: 1,
        trajectories: 2,
        located: "missing_parent.jsonl:2: nodes[2].parent: no node \"n9\" in tree \"tree1\"",
    },
    Case {
        file: "parent_cycle.jsonl",
        exit: 1,
        trajectories: 1,
        located: "parent_cycle.jsonl:2: nodes[2].parent: parent links form a cycle",
    },
    Case {
        file: "wrong_type.jsonl",
        exit: 1,
        trajectories: 1,
        located: "wrong_type.jsonl:3: steps[0].scores.prm: invalid type: string \"high\", expected a number",
    },
    Case {
        file: "duplicate_id.jsonl",
        exit: 1,
        trajectories: 1,
        located: "duplicate_id.jsonl:3: id: duplicate trajectory id \"t1\"",
    },
    Case {
        file: "invalid_utf8.jsonl",
        exit: 1,
        trajectories: 2,
        located: "invalid_utf8.jsonl:3: record: invalid UTF-8 at byte",
    },
    Case {
        file: "token_span_out_of_bounds.jsonl",
        exit: 1,
        trajectories: 1,
        located: "token_span_out_of_bounds.jsonl:3: steps[0].token_span: [0, 9] is outside the 3 tokens",
    },
    Case {
        file: "token_length_mismatch.jsonl",
        exit: 1,
        trajectories: 1,
        located: "token_length_mismatch.jsonl:3: tokens.logprob: has 2 values but the other token arrays have 3",
    },
    Case {
        file: "unknown_field.jsonl",
        exit: 1,
        trajectories: 1,
        located: "unknown_field.jsonl:2: steps[0].thougth: unknown field, ignored",
    },
    Case {
        file: "nothing_loadable.jsonl",
        exit: 2,
        trajectories: 0,
        located: "nothing_loadable.jsonl:2: steps: empty and no outcome; a trajectory needs at least one step, or an outcome alone",
    },
    Case {
        file: "not_vantage.jsonl",
        exit: 2,
        trajectories: 0,
        located: "not_vantage.jsonl:1: record: not a recognised log format",
    },
    Case {
        file: "future_version.jsonl",
        exit: 2,
        trajectories: 0,
        located: "future_version.jsonl:1: vantage: format version 2 is not supported",
    },
];

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

#[test]
fn every_fixture_is_covered() {
    let mut on_disk: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    on_disk.sort();
    let mut covered: Vec<String> = CASES.iter().map(|c| c.file.to_owned()).collect();
    covered.sort();
    assert_eq!(on_disk, covered);
}

#[test]
fn library_reports_located_warnings_and_keeps_valid_records() {
    for case in CASES {
        let bytes = std::fs::read(fixture(case.file)).unwrap();
        let mut report = LoadReport::new(case.file);
        let result = load_bytes(case.file, &bytes, &mut report);
        match result {
            Ok(run) => {
                assert_eq!(run.trajectories.len(), case.trajectories, "{}", case.file);
                assert!(report.located().any(|l| l.contains(case.located)), "{}: {:?}", case.file, report.warnings);
            }
            Err(err) => {
                assert_eq!(case.trajectories, 0, "{}: {err:#}", case.file);
                let all: Vec<String> = report.located().chain([err.located()]).collect();
                assert!(all.iter().any(|l| l.contains(case.located)), "{}: {all:?}", case.file);
            }
        }
    }
}

#[test]
fn check_exits_with_the_documented_code_and_prints_the_location() {
    for case in CASES {
        let output = Command::new(env!("CARGO_BIN_EXE_vantage")).arg("check").arg(fixture(case.file)).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(case.exit), "{}: {stdout}", case.file);
        assert!(stdout.contains(case.located), "{}: {stdout}", case.file);
        assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"), "{}", case.file);
    }
}

#[test]
fn cycle_members_are_all_reported_and_orphans_name_their_ancestor() {
    let bytes = std::fs::read(fixture("parent_cycle.jsonl")).unwrap();
    let mut report = LoadReport::new("parent_cycle.jsonl");
    let run = load_bytes("parent_cycle.jsonl", &bytes, &mut report).unwrap();
    let fields: Vec<&str> = report.warnings.iter().map(|w| w.field.as_str()).collect();
    assert_eq!(fields, ["nodes[2].parent", "nodes[3].parent"]);
    assert!(report.warnings.iter().all(|w| w.reason == "parent links form a cycle" && w.skipped));
    assert_eq!(run.nodes.len(), 2);

    let bytes = std::fs::read(fixture("missing_parent.jsonl")).unwrap();
    let mut report = LoadReport::new("missing_parent.jsonl");
    let run = load_bytes("missing_parent.jsonl", &bytes, &mut report).unwrap();
    assert_eq!(report.warnings[1].field, "nodes[3].parent");
    assert_eq!(report.warnings[1].reason, "ancestor nodes[2] was skipped");
    assert_eq!(run.nodes.len(), 3);
    assert_eq!(run.trajectories.len(), 2);
}

#[test]
fn non_finite_numbers_are_accepted_where_they_are_values() {
    let bytes = std::fs::read(fixture("nan_reward.jsonl")).unwrap();
    let mut report = LoadReport::new("nan_reward.jsonl");
    let run = load_bytes("nan_reward.jsonl", &bytes, &mut report).unwrap();
    let t = run.trajectory_by_key("t2").unwrap();
    assert!(run.trajectories.reward[t.index()].is_nan());
    let node = run.trajectories.path(t)[0];
    assert_eq!(run.nodes.env_reward[node.index()], f32::NEG_INFINITY);
    assert!(run.nodes.score("prm", node).is_nan());
    assert_eq!(report.warnings.len(), 1, "only the NaN outcome reward is worth a warning");
}

/// Hostile inputs made on the fly (too large to keep as fixtures): each gives a located message,
/// bounded work, and everything valid beside it still loads.
#[test]
fn hostile_lines_are_located_and_the_valid_records_beside_them_load() {
    let valid =
        r#"{"type": "trajectory", "id": "ok", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "x"}]}"#;
    // Nesting a million deep: refused at serde_json's recursion limit, no stack overflow.
    let deep = format!("{}{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    // Numbers past f32: the reward becomes infinite, with a warning that names the field.
    let huge = r#"{"type": "trajectory", "id": "huge", "group": "g", "outcome": {"reward": 1e300}, "steps": [{"thought": "y", "scores": {"prm": -1e50}}]}"#;
    // A 16 MB line of one thought.
    let long = format!(
        r#"{{"type": "trajectory", "id": "long", "group": "g", "outcome": {{"reward": 0}}, "steps": [{{"thought": "{}"}}]}}"#,
        "z".repeat(16 << 20)
    );
    let log = format!("{{\"vantage\": 1}}\n{deep}\n{valid}\n{huge}\n{long}\n");
    let mut report = LoadReport::new("hostile.jsonl");
    let run = load_bytes("hostile.jsonl", log.as_bytes(), &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 3);
    let located: Vec<String> = report.located().collect();
    assert!(located.iter().any(|l| l.starts_with("hostile.jsonl:2:") && l.contains("recursion limit")), "{located:?}");
    assert!(
        located.iter().any(|l| l.starts_with("hostile.jsonl:4: outcome.reward") && l.contains("inf")),
        "{located:?}"
    );
    let long = run.trajectory_by_key("long").unwrap();
    let node = run.trajectories.path(long)[0];
    assert_eq!(run.text(run.nodes.thought[node.index()]).len(), 16 << 20);
}

#[test]
fn ten_thousand_tiny_records_per_line_group_load_in_order() {
    // 10⁵ one-step rollouts in 10⁴ groups: ids, groups and order kept.
    let mut log = String::from("{\"vantage\": 1}\n");
    for i in 0..100_000 {
        log.push_str(&format!(
            "{{\"type\": \"trajectory\", \"id\": \"t{i}\", \"group\": \"g{}\", \"outcome\": {{\"reward\": {}}}, \"steps\": [{{}}]}}\n",
            i / 10,
            i % 2
        ));
    }
    let mut report = LoadReport::new("tiny.jsonl");
    let run = load_bytes("tiny.jsonl", log.as_bytes(), &mut report).unwrap();
    assert_eq!((run.trajectories.len(), run.groups.len()), (100_000, 10_000));
    assert_eq!(run.trajectory_key(vantage::model::TrajectoryId::from_index(99_999)), "t99999");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

/// Writes a vantage log whose third line is `long` bytes of one unfinished thought (then a valid
/// record), to `path`, gzip-compressed when `gzip`. Plain, the line's body is a hole in a sparse
/// file (NUL bytes that take no disk: CI machines may have little), read like any other bytes.
fn log_with_a_long_line(path: &Path, long: usize, gzip: bool) -> std::io::Result<()> {
    use std::io::{Seek as _, Write as _};
    let record = |id: &str| {
        format!(
            r#"{{"type": "trajectory", "id": "{id}", "group": "g", "outcome": {{"reward": 1}}, "steps": [{{"thought": "x"}}]}}"#
        )
    };
    let head = format!("{{\"vantage\": 1}}\n{}\n", record("before"));
    let start = br#"{"type": "trajectory", "id": "long", "group": "g", "steps": [{"thought": ""#;
    let tail = format!("\n{}\n", record("after"));
    let mut file = std::fs::File::create(path)?;
    if !gzip {
        file.write_all(head.as_bytes())?;
        file.write_all(start)?;
        file.seek(std::io::SeekFrom::Current((long - start.len()) as i64))?;
        return file.write_all(tail.as_bytes());
    }
    let mut out = flate2::write::GzEncoder::new(std::io::BufWriter::new(file), flate2::Compression::fast());
    out.write_all(head.as_bytes())?;
    out.write_all(start)?;
    let block = vec![b'z'; 1 << 20];
    let mut left = long - start.len();
    while left > 0 {
        let n = left.min(block.len());
        out.write_all(&block[..n])?;
        left -= n;
    }
    out.write_all(tail.as_bytes())?;
    out.finish()?.flush()
}

#[test]
fn a_one_gigabyte_line_is_passed_over_with_a_located_warning_and_the_rest_loads() {
    let dir = std::env::temp_dir().join(format!("vantage-long-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 1 GB plain; 300 MB (past the 268 MB limit) inside gzip, read through the decoder.
    for (name, long, gzip) in [("long.jsonl", 1 << 30, false), ("long.jsonl.gz", 300 << 20, true)] {
        let path = dir.join(name);
        log_with_a_long_line(&path, long, gzip).unwrap();
        let mut report = LoadReport::new(name);
        let run = vantage::source::path::load_path(&path, None, &mut report).unwrap();
        std::fs::remove_file(&path).unwrap();
        let keys: Vec<&str> = run.trajectories.ids().map(|t| run.trajectory_key(t)).collect();
        assert_eq!(keys, ["before", "after"], "{name}");
        let located: Vec<String> = report.located().collect();
        assert_eq!(located.len(), 1, "{located:?}");
        assert!(
            located[0].contains(":3: record: the line is ")
                && located[0].ends_with("past the 268.4 MB a record may be (skipped)"),
            "{located:?}"
        );
        // Never held: the run is small.
        assert!(run.heap_bytes() < 1 << 20, "{}", run.heap_bytes());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ten_million_tiny_broken_records_keep_ten_thousand_warnings_and_the_valid_ones_load() {
    // 10⁷ records of `{}` (no type): each one a skipped record, counted; only the first 10⁴
    // warnings are kept, so the messages stay a few megabytes, not gigabytes.
    let dir = std::env::temp_dir().join(format!("vantage-tiny-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tiny.jsonl");
    let valid =
        r#"{"type": "trajectory", "id": "ok", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "x"}]}"#;
    let mut log = format!("{{\"vantage\": 1}}\n{valid}\n").into_bytes();
    log.extend(b"{}\n".repeat(10_000_000));
    log.extend(valid.replace("\"ok\"", "\"last\"").as_bytes());
    std::fs::write(&path, &log).unwrap();
    drop(log);
    let mut report = LoadReport::new("tiny.jsonl");
    let run = vantage::source::path::load_path(&path, None, &mut report).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(run.trajectories.len(), 2);
    assert_eq!(report.records_seen, 10_000_003, "the header, two valid records, 10⁷ broken ones");
    assert_eq!((report.num_warnings(), report.num_skipped()), (10_000_000, 10_000_000));
    assert_eq!(report.warnings.len(), vantage::load::MAX_WARNINGS);
    let located: Vec<String> = report.located().collect();
    assert!(located[0].contains(":3: "), "{}", located[0]);
    assert!(
        located.last().unwrap().contains("9990000 more warning(s), 9990000 of them skipping a record"),
        "{located:?}"
    );
}

#[test]
fn ids_that_are_one_after_decoding_or_interning_collide_and_are_located() {
    // `"a\u0062"` is `"ab"`, `7` is `"7"`, `"\u0067"` is group `"g"`: read whole and read with
    // its texts left in the file, each collision is a located duplicate and the first stays.
    let log = concat!(
        "{\"vantage\": 1}\n",
        r#"{"type": "trajectory", "id": "ab", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "x"}]}"#,
        "\n",
        r#"{"type": "trajectory", "id": "a\u0062", "group": "\u0067", "outcome": {"reward": 0}, "steps": [{"thought": "y"}]}"#,
        "\n",
        r#"{"type": "trajectory", "id": 7, "group": "\u0067", "outcome": {"reward": 0}, "steps": [{"thought": "y"}]}"#,
        "\n",
        r#"{"type": "trajectory", "id": "7", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "y"}]}"#,
        "\n",
    );
    let path = std::env::temp_dir().join(format!("vantage-collide-{}.jsonl", std::process::id()));
    std::fs::write(&path, log).unwrap();
    let mut whole = LoadReport::new("collide.jsonl");
    let mut lazy = LoadReport::new("collide.jsonl");
    for (run, report) in [
        (load_bytes("collide.jsonl", log.as_bytes(), &mut whole).unwrap(), &whole),
        (vantage::source::path::load_path(&path, None, &mut lazy).unwrap(), &lazy),
    ] {
        assert_eq!((run.groups.len(), run.trajectories.len()), (1, 2));
        let located: Vec<String> =
            report.located().map(|l| l.replace(&path.display().to_string(), "collide.jsonl")).collect();
        assert_eq!(
            located,
            [
                "collide.jsonl:3: id: duplicate trajectory id \"ab\" (skipped)",
                "collide.jsonl:5: id: duplicate trajectory id \"7\" (skipped)"
            ]
        );
    }
    std::fs::remove_file(&path).unwrap();
}

// ----------------------------------------------------------------------------
// The fuzz targets' kept corpus (`fuzz/corpus/<target>/`) and every finding, fixed
// (`fuzz/regressions/<target>/`), replayed through each target: how CI checks them without a
// fuzzing toolchain (fuzz/README.md). A panic here is a regression.

/// The files of `dir`, sorted (none when it is absent).
fn files_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

#[test]
fn every_target_has_a_fuzz_binary_and_a_kept_corpus() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut binaries: Vec<String> = files_in(&fuzz.join("fuzz_targets"))
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    binaries.sort();
    let mut targets = vantage::fuzzing::targets();
    targets.sort();
    // Every target the library names has its binary (the Parquet ones only with that feature).
    for target in &targets {
        assert!(binaries.contains(target), "fuzz/fuzz_targets/{target}.rs is missing");
        assert!(!files_in(&fuzz.join("corpus").join(target)).is_empty(), "fuzz/corpus/{target} is empty");
    }
    // And every binary is one the library names, so that the replay below, which takes the
    // library's list, leaves none out.
    for binary in &binaries {
        assert!(vantage::fuzzing::run(binary, b""), "fuzz target {binary} is not one vantage::fuzzing runs");
        assert!(targets.contains(binary), "fuzz target {binary} is not in vantage::fuzzing::targets()");
    }
}

/// The fuzz targets whose kept inputs the replay runs: the library's list, every binary, every
/// folder of kept inputs (so that none is left out).
fn replayed_targets(fuzz: &Path) -> Vec<String> {
    let mut all: std::collections::BTreeSet<String> = vantage::fuzzing::targets().into_iter().collect();
    for dir in ["fuzz_targets", "corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir)) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            let Some(name) = path.file_stem().map(|n| n.to_string_lossy().into_owned()) else { continue };
            if dir == "fuzz_targets" || path.is_dir() {
                all.insert(name);
            }
        }
    }
    all.into_iter().collect()
}

#[test]
fn the_kept_corpus_and_every_finding_replay_without_a_panic() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut replayed = 0;
    let mut fixed = 0;
    for target in replayed_targets(&fuzz) {
        assert!(vantage::fuzzing::run(&target, b""), "no fuzz target {target} to replay its inputs on");
        for kind in ["corpus", "regressions"] {
            for file in files_in(&fuzz.join(kind).join(&target)) {
                let data = std::fs::read(&file).unwrap();
                // A ZIP's checksums as the fuzzer (which skips them) saw them: past them to the parsers.
                let data = vantage::fuzzing::replayable(&data);
                fixed += usize::from(matches!(data, std::borrow::Cow::Owned(_)));
                let ok = std::panic::catch_unwind(|| vantage::fuzzing::run(&target, &data));
                assert!(ok.is_ok(), "{target} panics on {}", file.display());
                replayed += 1;
            }
        }
    }
    println!("replayed {replayed} inputs ({fixed} archives with their checksums set to their contents')");
    assert!(replayed > 0 && fixed > 0);
}
