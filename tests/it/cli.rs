//! The headless subcommands on the sample runs: exit codes and output.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;
use std::process::Command;

use crate::common;

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
    assert_eq!(stdout.matches(": vantage JSONL v1").count(), 6, "{stdout}");
    assert!(stdout.contains("groups 36 · trajectories 288 · steps 1829 (nodes 1829) · tokens 0"), "{stdout}");
    assert!(stdout.contains(
        "tokens: mask, reward, logprob, ref_logprob, value, entropy, sum_pi_squared, prm_logprob, advantage, trainer_logprob, text"
    ));
    assert!(stdout.contains("roles: exploration (201), infrastructure (135), progress (681), regression (136)"));
    assert!(stdout.contains("tree links: yes (16 trees"));
    assert!(stdout.contains("sample_runs/prime_rl_episodes.jsonl: verifiers episodes"), "{stdout}");
    assert_eq!(stdout.matches("warnings: 0 (0 skipped)").count(), 7);
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

#[test]
fn schemes_markdown_is_committed_as_docs_schemes_md() {
    let committed = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/SCHEMES.md")).unwrap();
    assert!(
        committed == vantage::credit::listing::markdown(),
        "docs/SCHEMES.md is stale: run `cargo run -- schemes --markdown > docs/SCHEMES.md`"
    );
}

/// Reads `vantage credit --tokens --out x.csv` rows as (trajectory, token, mask, credit).
fn credit_csv(args: &[&str]) -> Vec<(String, usize, u8, f64)> {
    let out = std::env::temp_dir().join(format!(
        "vantage-credit-{}-{}.csv",
        std::process::id(),
        args.join("-").replace('/', "_")
    ));
    let out_arg = out.display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--out", &out_arg]);
    let (code, _, stderr) = vantage(&all);
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_owned(), f[2].parse().unwrap(), f[3].parse().unwrap(), f[4].parse().unwrap_or(f64::NAN))
        })
        .collect()
}

#[test]
fn grpo_under_the_verl_and_trl_presets_gives_each_trainers_numbers() {
    let file = "sample_runs/verl_token_batch.jsonl";
    let verl = credit_csv(&["credit", file, "--scheme", "grpo", "--preset", "verl", "--tokens"]);
    let trl = credit_csv(&["credit", file, "--scheme", "grpo", "--preset", "trl", "--tokens"]);
    assert_eq!(verl.len(), 1544);
    // Independent computation from the outcomes: (r − mean)/(std + ε), unbiased std, ε outside.
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let run = vantage::load::load_bytes(file, &bytes, &mut vantage::load::LoadReport::new(file)).unwrap();
    let expected = |eps: f64, t: vantage::model::TrajectoryId| {
        let g = run.trajectories.group[t.index()];
        let rewards: Vec<f64> =
            run.groups.members(g).iter().map(|m| f64::from(run.trajectories.reward[m.index()])).collect();
        let n = rewards.len() as f64;
        let mean = rewards.iter().sum::<f64>() / n;
        let std = (rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        (f64::from(run.trajectories.reward[t.index()]) - mean) / (std + eps)
    };
    let mut differing = 0;
    for (v, t) in verl.iter().zip(&trl) {
        let traj = run.trajectory_by_key(&v.0).unwrap();
        let mask = f64::from(v.2);
        assert!((v.3 - expected(1e-6, traj) * mask).abs() < 1e-5, "verl {v:?}");
        assert!((t.3 - expected(1e-4, traj) * mask).abs() < 1e-5, "trl {t:?}");
        differing += usize::from(v.3 != t.3);
    }
    assert!(differing > 1000, "the presets differ on {differing} tokens");
}

#[test]
fn check_lists_supported_schemes_and_why_others_are_not() {
    let (code, stdout, _) =
        vantage(&["check", "sample_runs/math_grpo_prm.jsonl", "sample_runs/verl_token_batch.jsonl"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("schemes supported"), "{stdout}");
    assert!(stdout.contains("scheme gae unavailable: needs critic values"), "{stdout}");
    assert!(stdout.contains("scheme remax unavailable: needs the greedy rollout's reward"), "{stdout}");
}

#[cfg(feature = "parquet")]
#[test]
fn credit_writes_parquet() {
    let out = std::env::temp_dir().join(format!("vantage-credit-{}.parquet", std::process::id()));
    let out_arg = out.display().to_string();
    let (code, _, stderr) =
        vantage(&["credit", "sample_runs/math_grpo_prm.jsonl", "--scheme", "rloo", "--out", &out_arg]);
    assert_eq!(code, Some(0), "{stderr}");
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"), "not a Parquet file");
    assert!(bytes.len() > 1000);
}

#[test]
fn convert_writes_vantage_jsonl_that_loads_the_same_and_never_overwrites_an_input() {
    let out = std::env::temp_dir().join(format!("vantage-convert-{}.jsonl", std::process::id()));
    let out_text = out.display().to_string();
    let (code, stdout, stderr) = vantage(&["convert", "tests/fixtures/verl_dump", &out_text]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("verl rollout dump") && stdout.contains("3 groups, 6 trajectories, 11 steps"), "{stdout}");
    let (code, stdout, _) = vantage(&["check", &out_text]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains(": vantage JSONL v1") && stdout.contains("groups 3 · trajectories 6 · steps 11"),
        "{stdout}"
    );
    std::fs::remove_file(&out).unwrap();
    // Writing into the input directory (or over the input file) is refused.
    let before = std::fs::read("tests/fixtures/verl_dump/3.jsonl").unwrap();
    let (code, _, stderr) = vantage(&["convert", "tests/fixtures/verl_dump", "tests/fixtures/verl_dump/3.jsonl"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("never writes to an input"), "{stderr}");
    assert_eq!(std::fs::read("tests/fixtures/verl_dump/3.jsonl").unwrap(), before);
    // So is `credit --out` over its input.
    let (code, _, stderr) = vantage(&[
        "credit",
        "tests/fixtures/verl_dump/3.jsonl",
        "--scheme",
        "grpo",
        "--out",
        "tests/fixtures/verl_dump/3.jsonl",
    ]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("never writes to an input"), "{stderr}");
    assert_eq!(std::fs::read("tests/fixtures/verl_dump/3.jsonl").unwrap(), before);
}

#[test]
fn formats_lists_every_loader_and_format_overrides_detection() {
    let (code, stdout, _) = vantage(&["formats"]);
    assert_eq!(code, Some(0));
    for name in [
        "vantage",
        "verl",
        "openai_chat",
        "processbench",
        "prmbench",
        "math_shepherd",
        "toolbench",
        "tot",
        "math_aps",
        "prm800k",
    ] {
        assert!(stdout.lines().any(|l| l.starts_with(name)), "{name} in {stdout}");
    }
    // Forcing a format that does not fit says why.
    let (code, stdout, _) = vantage(&["check", "--format", "processbench", "sample_runs/tree_rollouts.jsonl"]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stdout.contains("nothing loaded"), "{stdout}");
}

#[test]
fn check_joins_the_outcomes_of_a_results_file_given_or_listed() {
    let traj = "tests/fixtures/agents/sympy__sympy-20590.traj.json";
    let (code, out, _) = vantage(&["check", traj, "--outcomes", "tests/fixtures/swe_run/results.json"]);
    // The ids of the results without a trajectory here are one note, not a warning each (#66).
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("success 100.0%"), "{out}");
    assert!(out.contains("note: 2 ids of the results have no trajectory here"), "{out}");
    // Listed among the files, the results file is read the same way.
    let (_, listed, _) = vantage(&["check", traj, "tests/fixtures/swe_run/results.json"]);
    assert!(listed.contains("success 100.0%") && !listed.contains("results.json: nothing loaded"), "{listed}");
    let (code, _, err) = vantage(&["check", traj, "--outcomes", traj]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not a results file"), "{err}");
}

#[test]
fn an_unknown_view_or_scheme_is_a_one_line_error_before_any_window() {
    let (code, _, err) = vantage(&["--view", "nope"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--view nope")
            && err.contains("group, compare, overview, tokens, diff, transcript, runs, summary"),
        "{err}"
    );
    let (code, _, err) = vantage(&["--scheme-b", "grpoo"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--scheme-b grpoo"), "{err}");
    for bad in ["1280", "1280x", "99x99", "1280x720x3", "wide"] {
        let (code, _, err) = vantage(&["--window-size", bad]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(err.contains("is not WIDTHxHEIGHT"), "{bad}: {err}");
    }
}

#[test]
fn a_convert_killed_part_way_leaves_the_target_absent_or_whole() {
    let dir = std::env::temp_dir().join(format!("vantage-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // About 8 MB of log, so the conversion takes a while.
    let input = dir.join("big.jsonl");
    let mut log = String::from("{\"vantage\": 1}\n");
    for i in 0..20_000 {
        log.push_str(&format!(
            r#"{{"type": "trajectory", "id": "t{i}", "group": "g{}", "outcome": {{"reward": {}}}, "steps": [{{"thought": "{}"}}, {{"action": "call tool {i}", "observation": "{}"}}]}}"#,
            i / 8,
            i % 2,
            "x".repeat(150),
            "y".repeat(200)
        ));
        log.push('\n');
    }
    std::fs::write(&input, &log).unwrap();
    let whole = dir.join("whole.jsonl");
    let (code, _, err) = vantage(&["convert", input.to_str().unwrap(), whole.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let expected = std::fs::read(&whole).unwrap();
    for (k, delay) in [5u64, 40, 150, 400].into_iter().enumerate() {
        let target = dir.join(format!("out{k}.jsonl"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_vantage"))
            .args(["convert", input.to_str().unwrap(), target.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay));
        let _: std::io::Result<()> = child.kill();
        child.wait().unwrap();
        match std::fs::read(&target) {
            Ok(bytes) => {
                assert!(bytes == expected, "killed after {delay} ms: a partial target of {} bytes", bytes.len());
            }
            Err(err) => assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}"),
        }
    }
    // And a kill that lands mid-write for certain: the conversion holds with its temporary file
    // written whole and not yet renamed (VANTAGE_TEST_HOLD_WRITE), and is killed there.
    let target = dir.join("held.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["convert", input.to_str().unwrap(), target.to_str().unwrap()])
        .env("VANTAGE_TEST_HOLD_WRITE", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let temporary = dir.join(format!(".held.jsonl.{}.partial", child.id()));
    let marker = dir.join(format!(".held.jsonl.{}.partial.held", child.id()));
    let started = std::time::Instant::now();
    // Until it holds; the 60 s only guard against a conversion that never gets there.
    while !marker.exists() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the conversion never held");
        assert!(child.try_wait().unwrap().is_none(), "the conversion ended without holding");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(std::fs::read(&temporary).unwrap(), expected, "the temporary file is written whole");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::read(&target).unwrap_err().kind(), std::io::ErrorKind::NotFound, "killed mid-write");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_directory_named_like_a_log_with_nothing_in_it_says_so() {
    let dir = std::env::temp_dir().join(format!("vantage-dir-{}.jsonl", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (code, stdout, _) = vantage(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stdout.contains("nothing loaded") && stdout.contains("directory"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_that_cannot_be_read_is_named_and_the_others_still_load() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = std::env::temp_dir().join(format!("vantage-unreadable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Unreadable: no permissions (for anyone but root, who reads anything), and a symlink loop
    // (unreadable for root too), beside a readable log.
    let locked = dir.join("locked.jsonl");
    std::fs::copy("sample_runs/tree_rollouts.jsonl", &locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let locked_readable = std::fs::File::open(&locked).is_ok();
    let looped = dir.join("loop.jsonl");
    std::os::unix::fs::symlink(dir.join("loop.jsonl"), &looped).unwrap();
    let (path, looped_s) = (locked.to_str().unwrap(), looped.to_str().unwrap());
    let (code, stdout, _) = vantage(&["check", "sample_runs/tree_rollouts.jsonl", path, looped_s]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stdout.contains("sample_runs/tree_rollouts.jsonl") && stdout.contains("trajectories"), "{stdout}");
    // Each named, with why: `PATH: nothing loaded`, then `PATH: reason`.
    let said = |path: &str, why: &str| {
        stdout.contains(&format!("{path}: nothing loaded")) && stdout.contains(&format!("{path}: {why}"))
    };
    assert!(said(looped_s, "Too many levels of symbolic links"), "{stdout}");
    assert!(locked_readable || said(path, "Permission denied"), "{stdout}");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_parquet_file_of_another_schema_is_named_with_what_each_parquet_reader_missed() {
    // A Parquet file vantage wrote itself, of credit rows: valid Parquet, not a rollout log.
    let path = std::env::temp_dir().join(format!("vantage-schema-{}.parquet", std::process::id()));
    let out = path.to_str().unwrap();
    let (code, _, err) = vantage(&["credit", "sample_runs/tree_rollouts.jsonl", "--scheme", "grpo", "--out", out]);
    assert_eq!(code, Some(0), "{err}");
    let (code, stdout, _) = vantage(&["check", out]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stdout.contains(&format!("{out}: nothing loaded")), "{stdout}");
    assert!(stdout.contains(&format!("{out}:1: record: not a recognised log format (a Parquet file no reader takes: damaged, or of another schema (vantage_parquet: no json / record_type columns; trl: no `prompt` column")), "{stdout}");
    std::fs::remove_file(&path).unwrap();
}

#[cfg(feature = "parquet")]
#[test]
fn a_parquet_file_with_struct_columns_is_refused_naming_them_not_a_panic() {
    // Chat messages as lists of structs: polars (as built here) panicked reading them.
    let path = "tests/fixtures/parquet/trl_chat_messages.parquet";
    let (code, stdout, stderr) = vantage(&["check", path]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "trl: `prompt` (list<struct>): a nested column (chat messages as structs?) that vantage does not read"
        ),
        "{stdout}"
    );
}

/// Reads `vantage credit … --out x.jsonl` (per step) as its lines.
fn credit_lines(args: &[&str]) -> Result<Vec<String>, String> {
    let out = common::scratch("credit-formula").join("credit.jsonl");
    let out_arg = out.display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--out", &out_arg]);
    let (code, _, stderr) = vantage(&all);
    if code != Some(0) {
        return Err(stderr);
    }
    let text = std::fs::read_to_string(&out).unwrap();
    let _: std::io::Result<()> = std::fs::remove_dir_all(out.parent().unwrap());
    Ok(text.lines().map(str::to_owned).collect())
}

#[test]
fn credit_takes_a_formula_inline_by_name_or_in_a_file_and_its_parameters_by_set() {
    let file = "sample_runs/math_grpo_prm.jsonl";
    let builtin = credit_lines(&["credit", file, "--scheme", "grpo", "--set", "level=step"]).unwrap();
    let inline =
        credit_lines(&["credit", file, "--scheme", &format!("expr:{}", vantage::credit::expr::builtins::GRPO)])
            .unwrap();
    let named = credit_lines(&["credit", file, "--scheme", "formula:grpo"]).unwrap();
    assert_eq!(builtin.len(), 1829);
    assert_eq!(inline, named);
    // The same rows (trajectory, step) with credit equal to within rounding.
    let credit = |line: &str| serde_json::from_str::<serde_json::Value>(line).unwrap()["credit"].as_f64();
    for (b, f) in builtin.iter().zip(&inline) {
        let (b, f) = (credit(b), credit(f));
        assert!(b.zip(f).is_none_or(|(b, f)| (b - f).abs() < 1e-5), "{b:?} vs {f:?}");
    }
    // A file, and a parameter set from the command line.
    let dir = common::scratch("scheme-file");
    let path = dir.join("half.vx");
    std::fs::write(&path, "# half the outcome\n$w = 0.5 in [0, 1]\nR * $w\n").unwrap();
    let path = path.display().to_string();
    let half = credit_lines(&["credit", file, "--scheme-file", &path]).unwrap();
    let whole = credit_lines(&["credit", file, "--scheme-file", &path, "--set", "w=1"]).unwrap();
    for (h, w) in half.iter().zip(&whole) {
        let (h, w) = (credit(h).unwrap(), credit(w).unwrap());
        assert!((h * 2.0 - w).abs() < 1e-6, "{h} {w}");
    }
    let err = credit_lines(&["credit", file, "--scheme-file", &path, "--set", "v=1"]).unwrap_err();
    assert!(err.contains("the formula has no parameter $v (it has $w)"), "{err}");
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_formula_is_a_one_line_error_naming_the_place() {
    let (code, stdout, stderr) =
        vantage(&["credit", "sample_runs/math_grpo_prm.jsonl", "--scheme", "expr:R - mean(R, group) + judge"]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("`judge` at 22: this run has no step score named judge; it has prm"), "{stderr}");
}

#[test]
fn schemes_lists_the_built_in_and_saved_formulas() {
    let dir = common::scratch("saved-formulas");
    std::fs::write(dir.join("mine.vx"), "# my own scheme\nR - mean(R, group)\n").unwrap();
    let output =
        Command::new(env!("CARGO_BIN_EXE_vantage")).args(["schemes"]).env("VANTAGE_FORMULAS", &dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("formula:deepseekmath_process"), "{stdout}");
    assert!(stdout.contains("formula:mine") && stdout.contains("my own scheme"), "{stdout}");
    let credit = Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["credit", "sample_runs/math_grpo_prm.jsonl", "--scheme", "formula:mine"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("VANTAGE_FORMULAS", &dir)
        .output()
        .unwrap();
    assert!(credit.status.success(), "{}", String::from_utf8_lossy(&credit.stderr));
    assert_eq!(String::from_utf8_lossy(&credit.stdout).lines().count(), 1829);
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
}

/// A run whose trajectories and results sit in sibling folders (`trajs/`, and an evaluation's
/// `logs/<instance>/report.json` beside its other JSON outputs) is one run: `check` exits 0 with the
/// outcomes joined and names the files it skipped.
#[test]
fn a_run_with_trajectories_and_reports_in_sibling_folders_is_one_run() {
    let dir = common::scratch("sibling-folders");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/swe_run");
    std::fs::create_dir_all(dir.join("trajs")).unwrap();
    std::fs::copy(fixtures.join("sympy__sympy-20590.traj.json"), dir.join("trajs/sympy__sympy-20590.traj.json"))
        .unwrap();
    std::fs::copy(fixtures.join("django__django-11099.traj"), dir.join("trajs/django__django-11099.traj")).unwrap();
    for (id, resolved) in [("sympy__sympy-20590", true), ("django__django-11099", false)] {
        let logs = dir.join("logs").join(id);
        std::fs::create_dir_all(&logs).unwrap();
        let report = format!(r#"{{"{id}": {{"patch_exists": true, "resolved": {resolved}, "tests_status": {{}}}}}}"#);
        std::fs::write(logs.join("report.json"), report).unwrap();
        std::fs::write(logs.join("eval_result.json"), r#"{"tests": {"passed": 3, "failed": 0}}"#).unwrap();
    }
    std::fs::write(dir.join("results_summary.json"), r#"{"accuracy": 0.5, "n": 2}"#).unwrap();
    std::fs::write(dir.join("preds.json"), r#"{"sympy__sympy-20590": {"model_patch": "diff"}}"#).unwrap();
    let (code, out, err) = vantage(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("groups 2 · trajectories 2"), "{out}");
    assert!(out.contains("success 50.0%"), "{out}");
    let note = out.lines().find(|l| l.contains("note: skipped")).unwrap_or_default();
    assert!(note.contains("summary (results_summary.json)") && note.contains("predictions (preds.json)"), "{out}");
    assert!(
        note.contains("2 no loader recognises it (") && note.contains("logs/sympy__sympy-20590/eval_result.json"),
        "{out}"
    );
}

/// The folder rule: a run folder with one log and the files trainers write beside it (configs,
/// metadata, a summary, a README, a checkpoint, an HTML report, a lock file, a text log, and a JSON
/// file no loader takes) is one run, and `check` exits 0 with one note naming each skipped file.
#[test]
fn a_run_folder_with_the_usual_sidecars_is_one_run_and_one_note() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/sidecars");
    let (code, out, err) = vantage(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out.lines().filter(|l| !l.starts_with(' ')).count(), 1, "one run: {out}");
    assert!(out.contains("rollouts.jsonl: vantage JSONL"), "{out}");
    let notes: Vec<&str> = out.lines().filter(|l| l.contains("note: skipped")).collect();
    assert_eq!(notes.len(), 1, "{out}");
    // By reason, most first, each file named.
    for named in [
        "2 configuration (config.json, config.yaml)",
        "1 readme (README.md)",
        "1 checkpoints (checkpoint-100/)",
        "1 metadata (metadata.json)",
        "1 no loader recognises it (notes.json)",
        "1 report (report.html)",
        "1 summary (summary.json)",
        "1 text log (train.log)",
        "1 lock file (uv.lock)",
    ] {
        assert!(notes[0].contains(named), "{named} not named: {}", notes[0]);
    }
    assert!(notes[0].contains("skipped 10 file(s)"), "{}", notes[0]);
}

/// A folder in which nothing loads says what it holds (exit 2); one in which some logs load and
/// another fails names the failure and exits 1, not 2.
#[test]
fn a_folder_exits_2_only_when_nothing_in_it_loads() {
    let dir = common::scratch("folder-exit");
    std::fs::write(dir.join("config.json"), r#"{"lr": 0.1}"#).unwrap();
    std::fs::write(dir.join("notes.json"), r#"{"a": 1}"#).unwrap();
    let (code, out, _) = vantage(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("nothing loaded") && out.contains("1 configuration (config.json)"), "{out}");
    assert!(out.contains("1 no loader recognises it (notes.json)"), "{out}");
    std::fs::copy("sample_runs/tree_rollouts.jsonl", dir.join("good.jsonl")).unwrap();
    std::fs::copy("tests/fixtures/future_version.jsonl", dir.join("newer.jsonl")).unwrap();
    let (code, out, _) = vantage(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("good.jsonl: vantage JSONL"), "{out}");
    assert!(out.contains("newer.jsonl: nothing loaded"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The ToolBench folder of ../shared/data: its answers load (15 trees) and its query files
/// (`instruction/G*_query.json`), which no loader takes, are named once, not failures.
#[test]
fn the_toolbench_folder_loads_its_answers_and_names_its_query_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/toolbench-dfsdt");
    if !dir.is_dir() {
        crate::common::skipped("../shared/data/toolbench-dfsdt is absent");
        return;
    }
    let (code, out, err) = vantage(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out.lines().filter(|l| l.ends_with(": ToolBench DFSDT")).count(), 15, "{out}");
    let notes: Vec<&str> = out.lines().filter(|l| l.contains("note: skipped")).collect();
    assert_eq!(notes.len(), 1, "{out}");
    assert!(
        notes[0].contains("no loader recognises it (") && notes[0].contains("instruction/G1_query.json"),
        "{}",
        notes[0]
    );
}

/// sb-cli's report (written as `get-report` writes it): resolved and unresolved ids get their
/// outcome, the failed and pending ones none.
#[test]
fn an_sb_cli_report_gives_outcomes_to_the_judged_ids_only() {
    let report = "tests/fixtures/runs/sb_cli/swe-bench_lite__dev__run-7.json";
    let (code, out, err) =
        vantage(&["check", "tests/fixtures/swe_run/sympy__sympy-20590.traj.json", "--outcomes", report]);
    // The unresolved django id has no trajectory here (a note); the failed astropy one is not judged.
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("(sb-cli report): 1 of 1 trajectories matched, 1 of its 2 ids"), "{out}");
    assert!(out.contains("success 100.0%"), "{out}");
    assert!(out.contains("note: 1 id of the results has no trajectory here (\"django__django-11099\")"), "{out}");
    assert!(!out.contains("astropy"), "{out}");
}

/// The audit of a log's own advantages names the trainer preset that reproduces them (the
/// trainer's own first when several do), or says none does and which comes closest and where.
#[test]
fn check_names_the_preset_that_reproduces_the_logged_advantages() {
    let audit = |path: &str| {
        let (_, out, _) = vantage(&["check", path]);
        out.lines().find(|l| l.trim_start().starts_with("audit:")).map(str::to_owned).unwrap_or_else(|| panic!("{out}"))
    };
    let nemo = audit("tests/fixtures/trainers/nemo_rl");
    assert!(nemo.contains("the logged advantages are grpo --preset nemo_rl's: all 11 steps"), "{nemo}");
    let slime = audit("tests/fixtures/trainers/slime/dump");
    assert!(slime.contains("are grpo --preset slime's") && slime.contains("so do grpo,"), "{slime}");
    let prime = audit("tests/fixtures/trainers/verifiers/episodes.jsonl");
    assert!(prime.contains("are grpo --preset prime_rl's"), "{prime}");
    let none = audit("sample_runs/verl_token_batch.jsonl");
    assert!(none.contains("no estimator's preset reproduces the logged advantages; closest:"), "{none}");
    assert!(none.contains("the largest difference"), "{none}");
    let (_, out, _) = vantage(&["check", "sample_runs/tree_rollouts.jsonl"]);
    assert!(!out.contains("audit:"), "no logged advantages, no audit: {out}");
}

/// vf-eval's `metadata.json` beside its results: its model and sizes are noted, and an `avg_reward`
/// that is not the rows' mean is a warning (the real wordle results: 0 there, 1.1165 in the rows).
#[test]
fn a_vf_eval_metadata_average_that_disagrees_with_the_rows_is_flagged() {
    let (code, out, _) = vantage(&["check", "tests/fixtures/trainers/vf_eval/real/wordle/results.jsonl"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("note: metadata.json: model qwen/qwen3-30b-a3b-thinking-2507, examples 5, rollouts each 3"),
        "{out}"
    );
    assert!(out.contains("avg_reward: 0 in metadata.json, but the 15 rows' mean reward is 1.1165"), "{out}");
    let (code, out, _) = vantage(&["check", "tests/fixtures/trainers/vf_eval/real/math_python/results.jsonl"]);
    assert_eq!(code, Some(0), "the rows agree with their metadata: {out}");
}

/// Outcome notes, not floods (#66): a results file that covers a whole benchmark gives one note
/// with the count of its ids without a trajectory here; one that matches none of the run's
/// trajectories is named in one note and not joined, with no warning per trajectory; `check`
/// exits 0 for both. A file that matches some trajectories still warns of the others.
#[test]
fn results_files_that_cover_other_instances_are_notes_not_warnings() {
    let dir = common::scratch("outcome-notes");
    let ids: Vec<String> = (0..900).map(|i| format!("\"other__repo-{i}\"")).collect();
    let report = dir.join("report.json");
    std::fs::write(&report, format!("{{\"resolved_ids\": [{}], \"unresolved_ids\": []}}", ids.join(", "))).unwrap();
    let traj = "tests/fixtures/agents/sympy__sympy-20590.traj.json";
    let (code, out, err) = vantage(&["check", traj, "--outcomes", report.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    let notes: Vec<&str> = out.lines().filter(|l| l.contains("note: ")).collect();
    assert!(notes.iter().any(|n| n.contains("900 ids of the results have no trajectory here")), "{out}");
    assert!(notes.iter().any(|n| n.contains("no trajectory of this run is in") && n.contains("report.json")), "{out}");
    assert!(out.contains("warnings: 0"), "{out}");
    // One id matches: the report is joined, and the trajectory it does not cover is warned of.
    let log = dir.join("two.jsonl");
    std::fs::write(
        &log,
        "{\"vantage\": 1}\n{\"type\": \"trajectory\", \"id\": \"sympy__sympy-20590\", \"group\": \"g\", \"steps\": [{\"thought\": \"a\"}]}\n\
         {\"type\": \"trajectory\", \"id\": \"mine-1\", \"group\": \"g\", \"steps\": [{\"thought\": \"b\"}]}\n",
    )
    .unwrap();
    let both = format!("{{\"resolved_ids\": [\"sympy__sympy-20590\", {}], \"unresolved_ids\": []}}", ids.join(", "));
    std::fs::write(&report, both).unwrap();
    let (code, out, err) = vantage(&["check", log.to_str().unwrap(), "--outcomes", report.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("trajectory \"mine-1\" has no outcome in"), "{out}");
    assert!(
        out.contains("900 ids of the results have no trajectory here")
            && !out.contains("no trajectory of this run is in"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An OpenTelemetry file of log records or metrics and no spans (written by the OpenTelemetry SDK
/// and its OTLP encoders, `tests/fixtures/trainers/otel/make_signals.py`) says which signals it holds
/// and that it has no spans: nothing loaded, exit 2, not "not a recognised log format" (#66).
#[test]
fn an_otlp_file_of_logs_or_metrics_says_it_has_no_spans() {
    let metrics =
        "an OpenTelemetry file of 2 metrics (gen_ai.client.token.usage, gen_ai.client.operation.duration) and no spans";
    let logs = "an OpenTelemetry file of 4 log records and no spans";
    // In OTLP JSON lines and in OTLP protobuf (the file exporter's `format: proto`).
    for (file, holds) in [("logs.jsonl", logs), ("metrics.jsonl", metrics), ("logs.pb", logs), ("metrics.pb", metrics)]
    {
        let path = format!("tests/fixtures/trainers/otel/signals/{file}");
        let (code, out, err) = vantage(&["check", &path]);
        assert_eq!(code, Some(2), "{out}{err}");
        assert!(out.contains(holds) && !out.contains("not a recognised log format"), "{out}");
    }
}
