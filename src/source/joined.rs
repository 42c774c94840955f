//! Outcomes joined to trajectories (native): results files found beside trajectory files (a
//! SWE-bench evaluation, a Harbor job) and those named with `--outcomes`.

use crate::load::formats::outcomes::Outcomes;
use crate::load::{LoadError, LoadReport};
use crate::model::Run;

use super::path::{LOG_EXTENSIONS, load_path};

/// The files below `dir` that hold outcomes to join to trajectories (`load::formats::outcomes`): JSON files
/// that are not trajectories themselves (`.traj.json`), up to 16 MiB, whose start names a
/// resolution or votes, told by their content.
pub fn results_files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, crate::load::formats::outcomes::Outcomes)> {
    log_files(dir).into_iter().filter_map(|path| results_file(dir, &path).map(|o| (path, o))).collect()
}

/// The outcomes in `path` if it is a results file (see [`results_files`]), named relative to `dir`.
fn results_file(dir: &std::path::Path, path: &std::path::Path) -> Option<crate::load::formats::outcomes::Outcomes> {
    use std::io::Read as _;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= 16 << 20);
    if !name.ends_with(".json") || name.ends_with(".traj.json") || !small {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(1 << 16).read_to_end(&mut head).ok()?;
    let head = String::from_utf8_lossy(&head);
    if !head.contains("\"resolved") && !head.contains("\"is_solved\"") && !head.contains("\"trial_name\"") {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let shown = path.strip_prefix(dir).unwrap_or(path).display().to_string();
    crate::load::formats::outcomes::parse(&shown, &bytes)
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
fn log_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
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

/// A directory of trajectory files and the results files that hold their outcomes, as one run:
/// every file that loads, its trajectories given the outcomes of the results file nearest to it
/// (the one whose directories it shares most of), the others named in the notes.
pub(crate) fn load_joined(
    dir: &std::path::Path,
    results: &[(std::path::PathBuf, crate::load::formats::outcomes::Outcomes)],
    report: &mut LoadReport,
) -> Result<Run, LoadError> {
    use std::collections::BTreeMap;
    let name = dir.display().to_string();
    let components = |p: &std::path::Path| -> Vec<String> {
        p.strip_prefix(dir)
            .unwrap_or(p)
            .parent()
            .into_iter()
            .flat_map(|p| p.components().map(|c| c.as_os_str().to_string_lossy().into_owned()))
            .collect()
    };
    let result_paths: Vec<&std::path::PathBuf> = results.iter().map(|(p, _)| p).collect();
    let mut merged = String::from("{\"vantage\": 1}\n");
    let (mut formats, mut notes, mut skipped) = (Vec::<String>::new(), Vec::<String>::new(), Vec::<String>::new());
    let mut source_of: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
    for path in log_files(dir) {
        if result_paths.contains(&&path) {
            continue;
        }
        let shown = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
        let mut file_report = LoadReport::with_budget(&shown, report.budget);
        match load_path(&path, None, &mut file_report) {
            Ok(run) => {
                for t in run.trajectories.ids() {
                    source_of.insert(run.label(run.trajectories.key[t.index()]).to_owned(), path.clone());
                }
                if !formats.contains(&run.meta.format) {
                    formats.push(run.meta.format.clone());
                }
                notes.extend(run.meta.notes.iter().filter(|n| !notes.contains(n)).cloned().collect::<Vec<_>>());
                let jsonl = crate::load::formats::vantage_jsonl::write::to_jsonl(&run);
                merged.extend(jsonl.split_inclusive('\n').skip(1));
                for mut warning in file_report.warnings {
                    warning.field = format!("{shown}: {}", warning.field);
                    report.warn(warning);
                }
            }
            Err(err) => {
                let reason =
                    if err.is_unrecognised() { "not a recognised log format".to_owned() } else { err.to_string() };
                skipped.push(format!("{shown} ({reason})"));
            }
        }
    }
    let mut run = crate::load::formats::vantage_jsonl::load(
        &name,
        merged.as_bytes(),
        &mut LoadReport::with_budget(&name, report.budget),
    )?;
    run.meta.format = formats.join(" + ");
    run.meta.notes = notes;
    if !skipped.is_empty() {
        run.meta.notes.push(format!("files that are not trajectories, skipped: {}", skipped.join("; ")));
    }
    // Each trajectory's results files, nearest first: those sharing the most directories with its file.
    let outcomes: Vec<&crate::load::formats::outcomes::Outcomes> = results.iter().map(|(_, o)| o).collect();
    let files_for = |t: crate::model::TrajectoryId| -> Vec<usize> {
        let Some(source) = source_of.get(run.label(run.trajectories.key[t.index()])) else {
            return (0..results.len()).collect();
        };
        let mine = components(source);
        let shared = |p: &std::path::Path| components(p).iter().filter(|c| mine.contains(c)).count();
        let best = results.iter().map(|(p, _)| shared(p)).max().unwrap_or(0);
        (0..results.len()).filter(|&i| shared(&results[i].0) == best).collect()
    };
    let chosen: Vec<Vec<usize>> = run.trajectories.ids().map(files_for).collect();
    let joined = crate::load::formats::outcomes::join_with(&mut run, &outcomes, |t| chosen[t.index()].clone());
    for warning in crate::load::formats::outcomes::warnings(&joined, &outcomes) {
        report.warn(warning);
    }
    run.meta.warnings.clone_from(&report.warnings);
    Ok(run)
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

/// Joins `files` (the outcomes of `--outcomes`) to `run`, warning of what did not match.
pub(crate) fn join_outcomes(run: &mut Run, files: &[Outcomes], report: &mut LoadReport) {
    if files.is_empty() {
        return;
    }
    let refs: Vec<&crate::load::formats::outcomes::Outcomes> = files.iter().collect();
    let joined = crate::load::formats::outcomes::join(run, &refs);
    for warning in crate::load::formats::outcomes::warnings(&joined, &refs) {
        report.warn(warning.clone());
        run.meta.warnings.push(warning);
    }
}
