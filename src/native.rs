//! Native-only pieces: reading files for the loaders, window options and the eframe event loop.

use std::process::ExitCode;

use crate::app::{LoadSource, VantageApp};
use crate::load::{LoadError, LoadReport, load_bytes, load_bytes_as};
use crate::model::Run;

/// Command-line paths with directories opened up: a directory that holds one run (verl
/// `<step>.jsonl` dumps, TRL completions parquet files) stays one path; any other directory
/// becomes the log files below it (json, jsonl, eval, traj, parquet, gz, zst), sorted.
pub fn expand_paths(paths: Vec<std::path::PathBuf>) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() || crate::live::directory_kind(&path).is_some() {
            out.push(path);
            continue;
        }
        let mut stack = vec![path];
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
        out.extend(found);
    }
    out
}

/// File extensions of logs, for directories and the file dialog.
pub const LOG_EXTENSIONS: [&str; 7] = ["json", "jsonl", "eval", "traj", "parquet", "gz", "zst"];

/// Sets the memory a load may use (`load::budget`): `VANTAGE_MEMORY_BUDGET` (a size such as
/// `8G`), else the memory available now less a margin of a tenth (at least 512 MB) for the app.
pub fn init_memory_budget() {
    if let Some(bytes) = std::env::var("VANTAGE_MEMORY_BUDGET").ok().and_then(|v| crate::load::budget::parse_size(&v)) {
        crate::load::budget::set(bytes);
        return;
    }
    if let Some(available) = available_memory() {
        crate::load::budget::set(available.saturating_sub((available / 10).max(512_000_000)).max(256_000_000));
    }
}

/// The memory available to new allocations (Linux: `MemAvailable`, less a cgroup limit's headroom).
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let mut available = kb * 1024;
    let limit = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|t| t.trim().parse::<u64>().ok());
    let used = std::fs::read_to_string("/sys/fs/cgroup/memory.current").ok().and_then(|t| t.trim().parse::<u64>().ok());
    if let (Some(limit), Some(used)) = (limit, used) {
        available = available.min(limit.saturating_sub(used));
    }
    Some(available)
}

/// How many bytes of memory a file read whole takes per byte of file while it loads (the bytes
/// themselves and the run with its texts copied; measured at about 2 for vantage JSONL).
const WHOLE_READ_FACTOR: u64 = 3;

/// Reads a file and loads it; `format` overrides detection. The one place a run is read from disk.
/// A vantage JSONL file, a compressed file, a verl `<step>.jsonl` directory and a TRL completions
/// directory are read piece by piece (`crate::live`); other files whole.
pub fn load_path(path: &std::path::Path, format: Option<&str>, report: &mut LoadReport) -> Result<Run, LoadError> {
    load_path_showing(path, format, report, None)
}

/// [`load_path`], calling `shown` with the run so far while a large log is read piece by piece
/// (see `crate::live::Live::read`).
pub fn load_path_showing(
    path: &std::path::Path,
    format: Option<&str>,
    report: &mut LoadReport,
    shown: Option<crate::live::ShowRun<'_>>,
) -> Result<Run, LoadError> {
    let name = path.display().to_string();
    report.file.clone_from(&name);
    if format.is_none_or(|f| f == "vantage" || (f == "verl" && path.is_dir()) || (f == "trl" && path.is_dir()))
        && let Some(result) = crate::live::load(path, report, shown)
    {
        return result;
    }
    let size = std::fs::metadata(path).map_or(0, |m| if m.is_file() { m.len() } else { 0 });
    crate::load::budget::check(crate::load::budget::get(), size * WHOLE_READ_FACTOR, 0, size)
        .map_err(|e| e.with_path(&name))?;
    // A directory of numbered files of another format than verl's: one log, in step order.
    let numbered = if path.is_dir() { crate::live::verl_files(path).0 } else { Vec::new() };
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

/// When the process started (for `--exit-after-first-view`).
pub static STARTED: std::sync::LazyLock<web_time::Instant> = std::sync::LazyLock::new(web_time::Instant::now);

/// Opens the desktop window with `files` and the followed paths `follow` (the bundled sample when
/// both are empty) and the `start` options.
pub fn run_app(
    files: Vec<std::path::PathBuf>,
    follow: Vec<std::path::PathBuf>,
    start: crate::app::StartOptions,
) -> ExitCode {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("vantage")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([480.0, 320.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    let sources: Vec<LoadSource> =
        files.into_iter().map(LoadSource::Path).chain(follow.into_iter().map(LoadSource::Follow)).collect();
    let result = eframe::run_native(
        "vantage",
        options,
        Box::new(|cc| Ok(Box::new(VantageApp::new(cc, sources).with_start(start)))),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("vantage: could not open the window: {err:#}");
            ExitCode::from(2)
        }
    }
}
