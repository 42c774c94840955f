//! Outcomes joined to trajectories (native): results files found beside trajectory files (a
//! SWE-bench evaluation, a Harbor job) and those named with `--outcomes`.

use crate::load::formats::outcomes::Outcomes;
use crate::load::{LoadError, LoadReport};
use crate::model::Run;

use super::LOG_EXTENSIONS;

/// The files below `dir` that hold outcomes to join to trajectories (`load::formats::outcomes`): JSON files
/// that are not trajectories themselves (`.traj.json`), up to 16 MiB, whose start names a
/// resolution or votes, told by their content.
pub fn results_files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, crate::load::formats::outcomes::Outcomes)> {
    log_files(dir).into_iter().filter_map(|path| results_file(dir, &path).map(|o| (path, o))).collect()
}

/// The outcomes in `path` if it is a results file (see [`results_files`]), named relative to `dir`.
pub(crate) fn results_file(
    dir: &std::path::Path,
    path: &std::path::Path,
) -> Option<crate::load::formats::outcomes::Outcomes> {
    use std::io::Read as _;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= 16 << 20);
    if !name.ends_with(".json") || name.ends_with(".traj.json") || !small {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(1 << 16).read_to_end(&mut head).ok()?;
    let head = String::from_utf8_lossy(&head);
    let markers = ["\"resolved", "\"is_solved\"", "\"trial_name\"", "\"instances\""];
    if !markers.iter().any(|m| head.contains(m)) {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let shown = path.strip_prefix(dir).unwrap_or(path).display().to_string();
    let mut outcomes = crate::load::formats::outcomes::parse(&shown, &bytes)?;
    if outcomes.kind == crate::load::formats::outcomes::HARBOR_TRIAL
        && let Some(trial_dir) = path.parent()
    {
        let trials: Vec<String> = outcomes.entries.keys().chain(outcomes.labels.keys()).cloned().collect();
        let (files, tests) = verifier_files(trial_dir);
        for trial in trials {
            if !files.is_empty() {
                outcomes.files.insert(trial.clone(), files.clone());
            }
            outcomes.labels.entry(trial).or_default().extend(tests.iter().cloned());
        }
    }
    Some(outcomes)
}

/// A Harbor trial's verifier files (`<trial>/verifier/`: the reward, the test output, a CTRF
/// report), each named with its size and a CTRF report with its summary ("ctrf.json: 3 of 4
/// tests passed, 1 failed"), and the report's counts as labels (`tests.passed`, `tests.failed`,
/// `tests.total`).
fn verifier_files(trial_dir: &std::path::Path) -> (Vec<String>, Vec<(String, crate::model::labels::Value)>) {
    use crate::model::labels::Value;
    let verifier = trial_dir.join("verifier");
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(&verifier)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let (mut files, mut labels) = (Vec::new(), Vec::new());
    for path in paths.iter().take(64) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let summary = ctrf_summary(path);
        let shown = match &summary {
            Some((passed, failed, total)) => {
                labels.push(("tests.passed".to_owned(), Value::Number(*passed as f64)));
                labels.push(("tests.failed".to_owned(), Value::Number(*failed as f64)));
                labels.push(("tests.total".to_owned(), Value::Number(*total as f64)));
                format!("verifier/{name}: {passed} of {total} tests passed, {failed} failed")
            }
            None => format!("verifier/{name} ({})", crate::load::budget::size(size)),
        };
        files.push(shown);
    }
    (files, labels)
}

/// A CTRF test report's summary (passed, failed, total): `{"results": {"summary": {tests, passed,
/// failed, …}}}`, the Common Test Report Format pytest-json-ctrf writes; `None` for another file.
fn ctrf_summary(path: &std::path::Path) -> Option<(u64, u64, u64)> {
    let name = path.file_name()?.to_str()?;
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= 16 << 20);
    if !name.ends_with(".json") || !small {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    let summary = value.get("results")?.get("summary")?;
    let n = |key: &str| summary.get(key).and_then(serde_json::Value::as_u64);
    Some((n("passed")?, n("failed").unwrap_or(0), n("tests")?))
}

/// Whether `dir` is one run of trajectories and the results files holding their outcomes: it holds
/// results files, and none of its subdirectories holds both results and other logs (then each
/// such subdirectory is a run of its own, and `dir` a collection of them). JSON files in a folder
/// with a results file are the harness's, not other logs: trajectories in `trajs/` and reports in
/// `logs/<instance>/` beside them are one run.
pub fn is_joined_run(dir: &std::path::Path) -> bool {
    let holds = |d: &std::path::Path| {
        let files = log_files(d);
        let parsed: Vec<(&std::path::PathBuf, bool)> = files
            .iter()
            .filter_map(|p| results_file(d, p).map(|o| (p, o.kind == crate::load::formats::outcomes::HARBOR_TRIAL)))
            .collect();
        let results: Vec<&std::path::PathBuf> = parsed.iter().map(|(p, _)| *p).collect();
        // A Harbor trial's result.json is one trial's outcome beside its trajectory, not a run's.
        let trial_only = !parsed.is_empty() && parsed.iter().all(|(_, trial)| *trial);
        // A JSON file beside a results file is the harness's too (its summary, its other
        // outputs), not a trajectory: `logs/<instance>/` of an evaluation holds such files.
        let beside_results = |p: &std::path::PathBuf| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.ends_with(".json") && !name.ends_with(".traj.json") && results.iter().any(|r| r.parent() == p.parent())
        };
        let others = files.iter().filter(|p| !results.contains(p) && !beside_results(p)).count();
        (!results.is_empty(), others > 0, trial_only)
    };
    if !holds(dir).0 {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    !entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).any(|sub| holds(&sub) == (true, true, false))
}

/// The log files below `dir` (by extension), sorted.
pub(crate) fn log_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().and_then(|e| e.to_str()).is_some_and(|e| LOG_EXTENSIONS.contains(&e)) {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// Reads the results files of `--outcomes`; an error naming a file that is not one.
pub fn read_outcome_files(paths: &[std::path::PathBuf]) -> Result<Vec<Outcomes>, LoadError> {
    let mut files = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| LoadError::from(e).with_path(&name))?;
        let outcomes = crate::load::formats::outcomes::parse(&name, &bytes).ok_or_else(|| {
            LoadError::Unrecognised {
                tried: "not a results file (a SWE-bench report, report.json, results.json or pass-rate votes)"
                    .to_owned(),
            }
            .with_path(&name)
        })?;
        files.push(outcomes);
    }
    Ok(files)
}

/// `paths` without the results files among them, and those results files' outcomes (used as
/// `--outcomes` are).
pub fn take_results_files(paths: Vec<std::path::PathBuf>) -> (Vec<std::path::PathBuf>, Vec<Outcomes>) {
    let (mut rest, mut files) = (Vec::new(), Vec::new());
    for path in paths {
        let name = path.display().to_string();
        let is_json = path.is_file() && name.ends_with(".json") && !name.ends_with(".traj.json");
        let outcomes = is_json
            .then(|| std::fs::read(&path).ok())
            .flatten()
            .and_then(|b| crate::load::formats::outcomes::parse(&name, &b));
        match outcomes {
            Some(outcomes) => files.push(outcomes),
            None => rest.push(path),
        }
    }
    (rest, files)
}

/// Keeps where a converted run came from and how it was read in its header's metadata (a run
/// converted again keeps what the first conversion wrote).
pub fn mark_converted(run: &mut Run) {
    let meta = &mut run.meta;
    meta.metadata.entry("converted_from".to_owned()).or_insert_with(|| serde_json::Value::String(meta.format.clone()));
    if !meta.notes.is_empty() {
        let notes = meta.notes.iter().cloned().map(serde_json::Value::String).collect();
        meta.metadata.entry("notes".to_owned()).or_insert(serde_json::Value::Array(notes));
    }
}

/// What every run opened from `path` gets (the door's last step, and each update of a followed
/// run): the notes about files beside it, and `outcomes` joined to it.
pub(crate) fn finish(path: &std::path::Path, outcomes: &[Outcomes], run: &mut Run, report: &mut LoadReport) {
    note_failures_sidecar(path, run);
    check_vf_eval_metadata(path, run, report);
    join_outcomes(run, outcomes, report);
}

/// vf-eval writes `metadata.json` beside `results.jsonl`: its environment, model and sizes go in
/// the run's notes, the environment and model name the run, and an `avg_reward` that is not the rows' mean reward is a warning (the rows
/// were saved part-way, or the file belongs to another evaluation).
fn check_vf_eval_metadata(path: &std::path::Path, run: &mut Run, report: &mut LoadReport) {
    if !run.meta.format.starts_with("verifiers vf-eval") {
        return;
    }
    let sidecar = path.with_file_name("metadata.json");
    let Some(meta) = std::fs::read(&sidecar).ok().and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return;
    };
    let text = |k: &str| meta.get(k).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
    let said: Vec<String> = [
        ("env", "environment"),
        ("model", "model"),
        ("num_examples", "examples"),
        ("rollouts_per_example", "rollouts each"),
    ]
    .iter()
    .filter_map(|(k, what)| text(k).map(|v| format!("{what} {v}")))
    .collect();
    if !said.is_empty() {
        run.meta.notes.push(format!("metadata.json: {}", said.join(", ")));
    }
    // Every vf-eval run is a `results.jsonl`: named by its environment and model (and the run's
    // folder, `outputs/evals/<env>--<model>/<run>/`, which tells two evaluations of one apart).
    let env = text("env_id").or_else(|| text("env"));
    if let (Some(env), Some(model)) = (env, text("model"))
        && run.meta.name.ends_with("results.jsonl")
    {
        let folder = path.parent().and_then(|p| p.file_name()).map(|f| f.to_string_lossy().into_owned());
        run.meta.name = match folder {
            Some(folder) if !folder.is_empty() => format!("{env} · {model} · {folder}"),
            _ => format!("{env} · {model}"),
        };
    }
    let Some(average) = meta.get("avg_reward").and_then(serde_json::Value::as_f64) else { return };
    let rewards: Vec<f64> = run.trajectories.reward.iter().filter(|r| r.is_finite()).map(|&r| f64::from(r)).collect();
    if rewards.is_empty() {
        return;
    }
    let mean = rewards.iter().sum::<f64>() / rewards.len() as f64;
    if (mean - average).abs() > 1e-4 + 1e-4 * average.abs() {
        let warning = crate::model::Warning::kept(
            0,
            "metadata.json: avg_reward",
            format!(
                "{average} in metadata.json, but the {} rows' mean reward is {mean:.4}: the rows were saved part-way, or the file is another evaluation's",
                rewards.len()
            ),
        );
        report.warn(warning.clone());
        run.meta.warnings.push(warning);
    }
}

/// NeMo Gym writes failed rollouts to `<stem>_failures.jsonl` beside the rollouts: when that file
/// is there, the run's notes say so (and how many lines it has), as its rollouts are not in the run.
fn note_failures_sidecar(path: &std::path::Path, run: &mut Run) {
    if !run.meta.format.starts_with("NeMo Gym") {
        return;
    }
    let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else { return };
    let sidecar = path.with_file_name(format!("{stem}_failures.jsonl"));
    let Ok(file) = std::fs::File::open(&sidecar) else { return };
    let lines = std::io::BufRead::lines(std::io::BufReader::new(file))
        .map_while(Result::ok)
        .filter(|l| !l.trim().is_empty())
        .count();
    let note = format!(
        "{lines} failed rollout(s) in {} (NeMo Gym's failures sidecar), not in this run: open it to see them",
        sidecar.display()
    );
    if !run.meta.notes.contains(&note) {
        run.meta.notes.push(note);
    }
}

/// Joins `files` (the outcomes of `--outcomes`) to `run`, warning of what did not match.
pub(crate) fn join_outcomes(run: &mut Run, files: &[Outcomes], report: &mut LoadReport) {
    if files.is_empty() {
        return;
    }
    let refs: Vec<&crate::load::formats::outcomes::Outcomes> = files.iter().collect();
    let all = (0..refs.len()).collect::<Vec<_>>();
    crate::load::formats::outcomes::join_and_report(run, &refs, |_| all.clone(), report);
}
