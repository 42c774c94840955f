//! The one door (native): every path the command line and the app open (a file, a run
//! directory, any folder; opened, dropped, recent or followed) comes through [`open_all`] with its
//! `OpenOptions`, which decides here once which reader it goes to. A v2 dataset, a slime dump, a
//! JSON-lines log or a directory read piece by piece ([`super::live`]), a directory of
//! trajectories joined with its results files (`load_joined`), a Trackio database, an Inspect
//! `.eval` opened lazily, any other file read whole and detected by content, and a folder that is
//! none of these by the folder rule ([`super::folder`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::load::formats::inspect::EvalFile;
use crate::load::{LoadError, LoadReport, load_bytes, load_bytes_as};
use crate::model::Run;

use super::disk::WHOLE_READ_FACTOR;
use super::joined::{is_joined_run, results_files};
use super::listing::is_v2_dataset;
use super::live::{Live, ShowRun};
use super::slime::{is_slime_dump, load_slime_dir};

/// Whether the file at `path` begins with `magic`.
#[cfg(feature = "sqlite")]
fn starts_with(path: &std::path::Path, magic: &[u8]) -> bool {
    use std::io::Read as _;
    let mut head = vec![0; magic.len()];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && head == magic
}

/// One run opened from a path, or why it did not open, with what goes on reading it.
pub struct Opened {
    /// The path the run was read from (a log of a folder: the log's own path).
    pub path: PathBuf,
    /// The run, or why nothing loaded.
    pub result: Result<Run, LoadError>,
    /// Its warnings.
    pub report: LoadReport,
    /// An Inspect `.eval` opened from its header and summaries (`OpenOptions::lazy`), whose
    /// samples are still to be read.
    pub lazy: Option<EvalFile<Arc<[u8]>>>,
    /// The reader that goes on following the run (`OpenOptions::follow`), read up to now.
    pub live: Option<Live>,
}

impl Opened {
    fn new(path: &Path, result: Result<Run, LoadError>, report: LoadReport) -> Self {
        Self { path: path.to_owned(), result, report, lazy: None, live: None }
    }
}

/// The one door: opens `path` as `options` say, for the command line and the app alike. A file
/// or a directory that is one run gives one run (or why it did not open); a folder that is not
/// one run (`super::folder::is_plain`) gives a run for each log in it, the results files in it
/// joined to them as `--outcomes` are, and one note on the first run naming what was skipped
/// (sidecars, and logs no loader recognises); when no log in it loads, one error naming what it
/// holds.
/// `template` gives each load its progress; `format` overrides detection; `shown` is called with
/// the run so far while a large log is read piece by piece (for a folder, only when it holds one
/// log).
pub fn open_all(
    path: &Path,
    options: &super::OpenOptions,
    format: Option<&str>,
    template: &LoadReport,
    shown: Option<ShowRun<'_>>,
) -> Vec<Opened> {
    let name = path.display().to_string();
    // Logs that save token ids read them with the run's tokenizer when one is beside it (looked
    // for only when such a log asks).
    let mut template = template.clone();
    if template.vocab.is_none() {
        let beside = path.to_owned();
        let find = move || super::disk::tokenizer_beside(&beside);
        template.vocab = Some(std::sync::Arc::new(crate::load::tokenizer::LazyVocab::new(find)));
    }
    let report = || LoadReport { file: name.clone(), ..template.clone() };
    if !super::folder::is_plain(path) {
        let mut report = report();
        return vec![open_one(path, options, format, &mut report, shown)];
    }
    let folder = super::folder::read(path, true);
    let mut options = options.clone();
    if !folder.results.is_empty() {
        let outcomes = options.outcomes.iter().cloned().chain(folder.results.iter().map(|(_, o)| o.clone()));
        options.outcomes = outcomes.collect();
    }
    let mut shown = shown.filter(|_| folder.logs.len() == 1);
    let (mut opened, mut unrecognised) = (Vec::new(), Vec::new());
    for log in &folder.logs {
        // `open_one` names the report after the log.
        let mut report = template.clone();
        let one = open_one(log, &options, format, &mut report, shown.take());
        match &one.result {
            Err(err) if err.is_unrecognised() => {
                let shown = log.strip_prefix(path).unwrap_or(log).display();
                unrecognised.push((shown.to_string(), "no loader recognises it".to_owned()));
            }
            _ => opened.push(one),
        }
    }
    let note = folder.note(&folder_name(path), &unrecognised);
    if opened.is_empty() {
        let reason = match note {
            Some(note) => format!("a directory in which no log loads ({note})"),
            None => "an empty directory: no log in it".to_owned(),
        };
        let err = LoadError::NothingLoadable { reason }.with_path(&name);
        return vec![Opened::new(path, Err(err), report())];
    }
    // Said once, on the first run: the others opened from the folder come with it.
    if let (Some(note), Some(run)) = (note, opened.iter_mut().find_map(|o| o.result.as_mut().ok())) {
        run.meta.notes.push(note);
    }
    opened
}

/// The last part of a folder's path, as notes name it.
fn folder_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// [`open_all`] for one run: a folder must hold exactly one log that loads (else an error naming
/// the runs in it). `report` takes the run's warnings.
pub fn open(
    path: &Path,
    options: &super::OpenOptions,
    format: Option<&str>,
    report: &mut LoadReport,
    shown: Option<ShowRun<'_>>,
) -> Result<Run, LoadError> {
    let mut opened = open_all(path, options, format, report, shown);
    if opened.len() > 1 {
        let loaded: Vec<String> = opened
            .iter()
            .filter(|o| o.result.is_ok())
            .map(|o| o.path.strip_prefix(path).unwrap_or(&o.path).display().to_string())
            .collect();
        let reason = format!("a folder of {} runs ({}): name one of them", loaded.len(), loaded.join(", "));
        return Err(LoadError::NothingLoadable { reason }.with_path(&path.display().to_string()));
    }
    let one = opened.pop().expect("open_all gives at least one");
    *report = one.report;
    one.result
}

/// [`open`] with the default options but the budget `report` has: every training step that fits,
/// no outcomes joined.
pub fn load_path(path: &Path, format: Option<&str>, report: &mut LoadReport) -> Result<Run, LoadError> {
    let options = super::OpenOptions { memory_budget: report.budget, ..super::OpenOptions::default() };
    open(path, &options, format, report, None)
}

/// Opens a file or a directory that is one run: followed, lazily or read to its end as `options`
/// say, then given the notes about the files beside it and the outcomes of `options`.
fn open_one(
    path: &Path,
    options: &super::OpenOptions,
    format: Option<&str>,
    report: &mut LoadReport,
    shown: Option<ShowRun<'_>>,
) -> Opened {
    report.budget = options.memory_budget;
    report.file = path.display().to_string();
    let mut opened = if options.follow {
        let mut nothing = |_: Run, _: &LoadReport| true;
        match super::follow::open(path, report, shown.unwrap_or(&mut nothing)) {
            Ok((run, live)) => Opened { live: Some(live), ..Opened::new(path, Ok(run), report.clone()) },
            Err(err) => Opened::new(path, Err(err), report.clone()),
        }
    } else if let Some(lazy) = open_lazily(path, options, report) {
        lazy
    } else {
        let result = read_path(path, options.steps, format, report, shown);
        Opened::new(path, result, report.clone())
    };
    if let Ok(run) = &mut opened.result {
        super::joined::finish(path, &options.outcomes, run, &mut opened.report);
        // Its labels, from beside it (docs/LABELS.md), last: they name its rollouts as joined.
        // Inspect Scout's scans beside an Inspect log come with those the log carries.
        let (scout, scout_notes) = super::labels::scout(path, run);
        run.meta.imported_labels.extend(scout);
        run.meta.notes.extend(scout_notes.into_iter().map(|n| format!("labels: {n}")));
        let (labels, notes) = super::labels::resolved(path, run);
        if !labels.labels.is_empty() || !notes.is_empty() || !run.meta.labels.labels.is_empty() {
            run.meta.labels = std::sync::Arc::new(labels);
            run.meta.notes.extend(notes.into_iter().map(|n| format!("labels: {n}")));
        }
    }
    opened
}

/// An Inspect `.eval` opened from its header and summaries, its samples read later
/// (`OpenRun::read_lazily`), when `options` ask for it and no outcomes are to be joined (those
/// need every sample: such a file is read whole). `None` when `path` is no such file.
fn open_lazily(path: &Path, options: &super::OpenOptions, report: &mut LoadReport) -> Option<Opened> {
    let is_eval = path.is_file() && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("eval"));
    if !(options.lazy && is_eval && options.outcomes.is_empty()) {
        return None;
    }
    let name = path.display().to_string();
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let bytes: Arc<[u8]> = match crate::load::budget::check(report.budget, size * WHOLE_READ_FACTOR, 0, size)
        .and_then(|()| std::fs::read(path).map_err(LoadError::from))
    {
        Ok(bytes) => bytes.into(),
        Err(err) => return Some(Opened::new(path, Err(err.with_path(&name)), report.clone())),
    };
    let file = EvalFile::from_bytes(&name, bytes, report).ok().filter(|f| f.num_unread() > 0)?;
    let result = file.run(report);
    let lazy = result.is_ok().then_some(file);
    Some(Opened { lazy, ..Opened::new(path, result, report.clone()) })
}

/// A directory of trajectory files and the results files that hold their outcomes, as one run:
/// every file that loads, its trajectories given the outcomes of the results file nearest to it
/// (the one whose directories it shares most of); the files that are not trajectories (sidecars,
/// files no loader recognises or that fail) named in one note.
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
    let mut folder = super::folder::read(dir, false);
    let mut merged = String::from("{\"vantage\": 1}\n");
    let (mut formats, mut notes) = (Vec::<String>::new(), Vec::<String>::new());
    let mut skipped: Vec<(String, String)> = Vec::new();
    let mut source_of: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
    // A Harbor trial's verifier files are kept with its outcome (`joined::results_file`), not
    // logs to try nor files to name as skipped.
    let verifiers: Vec<std::path::PathBuf> = results
        .iter()
        .filter(|(_, o)| o.kind == crate::load::formats::outcomes::HARBOR_TRIAL)
        .filter_map(|(p, _)| Some(p.parent()?.join("verifier")))
        .collect();
    let in_verifier = |p: &std::path::Path| verifiers.iter().any(|v| p.starts_with(v));
    folder.logs.retain(|p| !in_verifier(p));
    folder.skipped.retain(|(name, _)| !in_verifier(&dir.join(name)));
    for path in std::mem::take(&mut folder.logs).into_iter().filter(|p| !results.iter().any(|(r, _)| r == p)) {
        let shown = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
        let mut file_report = LoadReport::with_budget(&shown, report.budget);
        match load_path(&path, None, &mut file_report) {
            Ok(mut run) => {
                if let Some((cut, task)) = harbor_task(&path, results) {
                    regroup(&mut run, &cut, &task);
                }
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
                let reason = if err.is_unrecognised() { "no loader recognises it".to_owned() } else { err.to_string() };
                skipped.push((shown.clone(), reason));
            }
        }
    }
    let agentless = agentless_trials(results, &source_of, &mut merged);
    if agentless > 0 {
        formats.push(crate::load::formats::outcomes::HARBOR_TRIAL.to_owned());
        notes.push(format!(
            "{} without a trajectory (no agent/ folder, as Harbor's nop agent leaves it, or none in it): \
             each a rollout of no step, with its outcome",
            crate::model::count(agentless, "trial")
        ));
    }
    let mut run = crate::load::formats::vantage_jsonl::load(
        &name,
        merged.as_bytes(),
        &mut LoadReport::with_budget(&name, report.budget),
    )?;
    run.meta.format = formats.join(" + ");
    run.meta.notes = notes;
    run.meta.notes.extend(folder.note(&folder_name(dir), &skipped));
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
    run.meta.notes.extend(crate::load::formats::outcomes::notes(&joined, &outcomes));
    for warning in crate::load::formats::outcomes::warnings(&joined, &outcomes) {
        report.warn(warning);
    }
    run.meta.warnings.clone_from(&report.warnings);
    Ok(run)
}

/// The Harbor trials with an outcome and no trajectory loaded (their agent wrote none: Harbor's
/// `nop` agent runs nothing and leaves no `agent/` folder), each added to `merged` as a
/// trajectory of no step with its outcome, in its task's group; how many.
fn agentless_trials(
    results: &[(PathBuf, crate::load::formats::outcomes::Outcomes)],
    source_of: &std::collections::BTreeMap<String, PathBuf>,
    merged: &mut String,
) -> usize {
    let mut added = 0;
    for (path, outcomes) in results.iter().filter(|(_, o)| o.kind == crate::load::formats::outcomes::HARBOR_TRIAL) {
        let Some(trial_dir) = path.parent() else { continue };
        for (trial, entry) in &outcomes.entries {
            if source_of.contains_key(trial) {
                continue;
            }
            let cut = trial.rsplit_once("__").map_or(trial.as_str(), |(task, _)| task).to_owned();
            let task = harbor_task(&trial_dir.join("agent").join("trajectory.json"), results).map_or(cut, |(_, t)| t);
            let record = serde_json::json!({
                "type": "trajectory",
                "id": trial,
                "group": task,
                "task": task,
                "steps": [],
                "outcome": { "reward": entry.reward, "success": entry.success },
            });
            merged.push_str(&record.to_string());
            merged.push('\n');
            added += 1;
        }
    }
    added
}

/// The task of a Harbor trial's trajectory (`<trial>/agent/trajectory*.json`), as the name its
/// loader cut from the trial folder's name (which Harbor shortens: `…-unkn__AbC123`) and the full
/// one: the `task_name` of the trial's `result.json`, else the last part of the `task.path` of its
/// `config.json`. `None` outside a trial, or when neither file names the task.
fn harbor_task(
    path: &Path,
    results: &[(PathBuf, crate::load::formats::outcomes::Outcomes)],
) -> Option<(String, String)> {
    let agent = path.parent()?;
    if agent.file_name()? != "agent" {
        return None;
    }
    let trial_dir = agent.parent()?;
    let trial = trial_dir.file_name()?.to_str()?;
    let cut = trial.rsplit_once("__").map_or(trial, |(task, _)| task).to_owned();
    let from_result =
        results.iter().filter(|(p, _)| p.parent() == Some(trial_dir)).find_map(|(_, o)| o.tasks.get(trial).cloned());
    let task = from_result.or_else(|| {
        let config: serde_json::Value =
            serde_json::from_slice(&std::fs::read(trial_dir.join("config.json")).ok()?).ok()?;
        let task_path = config.get("task")?.get("path")?.as_str()?;
        task_path.rsplit(['/', '\\']).find(|s| !s.is_empty()).map(str::to_owned)
    })?;
    Some((cut, task))
}

/// Renames the groups of `run` keyed `cut` (a task named by its trial folder) to `task`.
fn regroup(run: &mut Run, cut: &str, task: &str) {
    for g in 0..run.groups.len() {
        if run.label(run.groups.key[g]) == cut {
            let sym = run.labels.intern(task);
            run.groups.key[g] = sym;
            let named = run.label(run.groups.task[g]);
            if named.is_empty() || named == cut {
                run.groups.task[g] = sym;
            }
        }
    }
}

/// The format [`open`] reads `path` as, told from its name, its folder's files and its first lines
/// without reading it (the loader's name for JSON lines), and whether a loader reads it as JSON
/// lines: `vantage serve` lists its runs so, and converts those read as JSON lines as they grow.
pub fn format_of(path: &Path) -> (String, bool) {
    let named = |name: &str| (name.to_owned(), false);
    if path.is_dir() {
        if is_v2_dataset(path) {
            return named("vantage_v2");
        }
        if let Some(found) = crate::source::folders::of_dir(path) {
            return named(found.format.name);
        }
        if is_slime_dump(path) {
            return named("slime");
        }
        return named("run folder");
    }
    let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "eval" => return named("inspect"),
        "parquet" => return named("parquet"),
        "db" => return named("trackio"),
        "gz" | "zst" => return named(&format!("compressed ({ext})")),
        _ => {}
    }
    let head = crate::source::listing::head(path);
    match crate::load::lines_format(&name, &head) {
        Some(loader) => (loader.to_owned(), true),
        None => named("json"),
    }
}

/// Reads a path as [`open`] does, before the notes about files beside it and the outcomes.
fn read_path(
    path: &std::path::Path,
    steps: Option<(i64, i64)>,
    format: Option<&str>,
    report: &mut LoadReport,
    shown: Option<crate::source::live::ShowRun<'_>>,
) -> Result<Run, LoadError> {
    let name = path.display().to_string();
    report.file.clone_from(&name);
    if format.is_none_or(|f| f == "vantage_v2") && is_v2_dataset(path) {
        #[cfg(feature = "parquet")]
        return super::dataset::open_default(path, steps, report);
        #[cfg(not(feature = "parquet"))]
        let _: Option<(i64, i64)> = steps; // for the Parquet reader, which this build lacks
        #[cfg(not(feature = "parquet"))]
        return Err(LoadError::Incompatible {
            format: "vantage Parquet v2",
            reason: "this build has no Parquet support (build with the `parquet` feature)".to_owned(),
        }
        .with_path(&name));
    }
    if path.is_dir() && format.is_none_or(|f| f == "slime") && is_slime_dump(path) {
        return load_slime_dir(path, report);
    }
    if crate::source::folders::reads_as_stream(path, format)
        && let Some(result) = crate::source::live::load(path, report, shown)
    {
        return result;
    }
    if path.is_dir() && format.is_none() && is_joined_run(path) {
        return load_joined(path, &results_files(path), report);
    }
    #[cfg(feature = "sqlite")]
    if path.is_file()
        && format.is_none_or(|f| f == "trackio")
        && starts_with(path, crate::load::formats::trackio::MAGIC)
    {
        return crate::load::formats::trackio::load_path(path, report).map_err(|e| e.with_path(&name));
    }
    let size = std::fs::metadata(path).map_or(0, |m| if m.is_file() { m.len() } else { 0 });
    crate::load::budget::check(report.budget, size * WHOLE_READ_FACTOR, 0, size).map_err(|e| e.with_path(&name))?;
    // A folder format's files that are one log: numbered files of another format than the
    // folder's (verl's `<step>.jsonl` holding another log), or a trace file and its rotations.
    let numbered = match path.is_dir().then(|| crate::source::folders::of_dir(path)).flatten() {
        Some(found) if !matches!(found.format.reading, crate::source::folders::Reading::Files(_)) => found.files,
        _ => Vec::new(),
    };
    let bytes = match (!numbered.is_empty()).then_some(numbered) {
        Some(files) => {
            let mut joined = Vec::new();
            for (_, file) in files {
                let part =
                    std::fs::read(&file).map_err(|e| LoadError::from(e).with_path(&file.display().to_string()))?;
                joined.extend_from_slice(&part);
                // Text parts end in a newline; binary ones (OTLP protobuf) join as they are.
                let head = &part[..part.len().min(256)];
                let text =
                    !head.contains(&0) && std::str::from_utf8(head).map_or_else(|e| e.error_len().is_none(), |_| true);
                if !joined.ends_with(b"\n") && text {
                    joined.push(b'\n');
                }
            }
            joined
        }
        None => std::fs::read(path).map_err(|e| LoadError::from(e).with_path(&name))?,
    };
    match format {
        Some(format) => load_bytes_as(format, &name, &bytes, report),
        None => load_bytes(&name, &bytes, report),
    }
}
