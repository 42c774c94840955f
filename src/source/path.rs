//! Opening a path on disk (native): which reader a file or directory goes to, decided here once.
//! A v2 dataset, a slime dump, a JSON-lines log or a directory read piece by piece ([`super::live`]),
//! a directory of trajectories joined with its results files ([`super::joined`]), a Trackio
//! database, or any other file read whole and detected by content.

use crate::load::{LoadError, LoadReport, load_bytes, load_bytes_as};
use crate::model::Run;

use super::joined::{is_joined_run, join_outcomes, load_joined, results_files};
use super::slime::{is_slime_dump, load_slime_dir};

/// Whether `path` is a vantage Parquet v2 dataset: a directory with a `manifest.json`.
pub fn is_v2_dataset(path: &std::path::Path) -> bool {
    path.is_dir() && path.join(crate::load::formats::vantage_v2::MANIFEST).is_file()
}

/// Command-line paths with directories opened up: a directory that holds one run (verl
/// `<step>.jsonl` dumps, TRL completions parquet files) stays one path; any other directory
/// becomes the log files below it (json, jsonl, eval, traj, parquet, gz, zst), sorted.
pub fn expand_paths(paths: Vec<std::path::PathBuf>) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir()
            || crate::source::listing::directory_kind(&path).is_some()
            || is_joined_run(&path)
            || is_v2_dataset(&path)
            || is_slime_dump(&path)
        {
            out.push(path);
            continue;
        }
        let mut stack = vec![path.clone()];
        let mut found = Vec::new();
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let p = entry.path();
                if p.is_dir() && (is_joined_run(&p) || is_v2_dataset(&p) || is_slime_dump(&p)) {
                    found.push(p);
                } else if p.is_dir() {
                    stack.push(p);
                } else if p.extension().and_then(|e| e.to_str()).is_some_and(|e| LOG_EXTENSIONS.contains(&e)) {
                    found.push(p);
                }
            }
        }
        found.sort();
        // A directory without a log below it stays itself, so opening it says what it is.
        if found.is_empty() {
            out.push(path);
        }
        out.extend(found);
    }
    out
}

/// Whether the file at `path` begins with `magic`.
#[cfg(feature = "sqlite")]
fn starts_with(path: &std::path::Path, magic: &[u8]) -> bool {
    use std::io::Read as _;
    let mut head = vec![0; magic.len()];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && head == magic
}

/// File extensions of logs, for directories and the file dialog.
pub const LOG_EXTENSIONS: [&str; 8] = ["json", "jsonl", "eval", "traj", "parquet", "gz", "zst", "db"];

/// How many bytes of memory a file read whole takes per byte of file while it loads (the bytes
/// themselves and the run with its texts copied; measured at about 2 for vantage JSONL).
pub(crate) const WHOLE_READ_FACTOR: u64 = 3;

/// Opens `path` as `options` say, the one place a run is read from disk (the CLI and the app
/// call it): `format` overrides detection; the run's training steps (a v2 dataset), the memory
/// budget (put in `report`) and the outcomes joined to it come from `options`; `shown` is called
/// with the run so far while a large log is read piece by piece (see `super::live::Live::read`).
/// A vantage JSONL file, a compressed file, a verl `<step>.jsonl` directory and a TRL completions
/// directory are read piece by piece (`super::live`); other files whole. Following is the
/// caller's: `super::live::Live` reads on from where this stopped.
pub fn open(
    path: &std::path::Path,
    options: &super::OpenOptions,
    format: Option<&str>,
    report: &mut LoadReport,
    shown: Option<super::live::ShowRun<'_>>,
) -> Result<Run, LoadError> {
    report.budget = options.memory_budget;
    let mut run = read_path(path, options.steps, format, report, shown)?;
    note_failures_sidecar(path, &mut run);
    join_outcomes(&mut run, &options.outcomes, report);
    Ok(run)
}

/// [`open`] with the default options but the budget `report` has: every training step that fits,
/// no outcomes joined.
pub fn load_path(path: &std::path::Path, format: Option<&str>, report: &mut LoadReport) -> Result<Run, LoadError> {
    load_path_showing(path, format, report, None)
}

/// [`load_path`], calling `shown` with the run so far while a large log is read piece by piece.
pub fn load_path_showing(
    path: &std::path::Path,
    format: Option<&str>,
    report: &mut LoadReport,
    shown: Option<super::live::ShowRun<'_>>,
) -> Result<Run, LoadError> {
    let options = super::OpenOptions { memory_budget: report.budget, ..super::OpenOptions::default() };
    open(path, &options, format, report, shown)
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
    run.meta.notes.push(format!(
        "{lines} failed rollout(s) in {} (NeMo Gym's failures sidecar), not in this run: open it to see them",
        sidecar.display()
    ));
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
        return Err(LoadError::Incompatible {
            format: "vantage Parquet v2",
            reason: "this build has no Parquet support (build with the `parquet` feature)".to_owned(),
        }
        .with_path(&name));
    }
    if path.is_dir() && format.is_none_or(|f| f == "slime") && is_slime_dump(path) {
        return load_slime_dir(path, report);
    }
    if crate::source::listing::reads_as_stream(path, format)
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
    // A directory of numbered files of another format than verl's: one log, in step order.
    let numbered = if path.is_dir() { crate::source::listing::verl_files(path).0 } else { Vec::new() };
    let bytes = match (!numbered.is_empty()).then_some(numbered) {
        Some(files) => {
            let mut joined = Vec::new();
            for (_, file) in files {
                let part =
                    std::fs::read(&file).map_err(|e| LoadError::from(e).with_path(&file.display().to_string()))?;
                joined.extend_from_slice(&part);
                if !joined.ends_with(b"\n") {
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
