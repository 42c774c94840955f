//! Native-only pieces: reading files for the loaders, window options and the eframe event loop.

use std::process::ExitCode;

use crate::app::{LoadSource, VantageApp};
use crate::load::{LoadError, LoadReport, load_bytes, load_bytes_as};
use crate::model::Run;

/// The numbered JSON-lines files of a directory (`<global_step>.jsonl`, as verl's
/// `rollout_data_dir` holds), in step order; `None` unless every file is one.
fn numbered_jsonl(dir: &std::path::Path) -> Option<Vec<std::path::PathBuf>> {
    let mut files: Vec<(u64, std::path::PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let step = path.file_stem()?.to_str()?.parse::<u64>().ok()?;
        if path.extension()? != "jsonl" {
            return None;
        }
        files.push((step, path));
    }
    files.sort();
    (!files.is_empty()).then(|| files.into_iter().map(|(_, p)| p).collect())
}

/// Command-line paths with directories opened up: a directory of `<step>.jsonl` files stays one
/// path (one run); any other directory becomes the log files below it (json, jsonl, eval, traj,
/// parquet), sorted.
pub fn expand_paths(paths: Vec<std::path::PathBuf>) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() || numbered_jsonl(&path).is_some() {
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
                } else if p
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| ["json", "jsonl", "eval", "traj", "parquet"].contains(&e))
                {
                    found.push(p);
                }
            }
        }
        found.sort();
        out.extend(found);
    }
    out
}

/// Reads a file and loads it; `format` overrides detection. The one place a run is read from disk.
/// A directory of `<step>.jsonl` files (a verl dump) is read as one log, in step order.
pub fn load_path(path: &std::path::Path, format: Option<&str>, report: &mut LoadReport) -> Result<Run, LoadError> {
    let name = path.display().to_string();
    report.file.clone_from(&name);
    let bytes = match numbered_jsonl(path).filter(|_| path.is_dir()) {
        Some(files) => {
            let mut joined = Vec::new();
            for file in files {
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

/// Opens the desktop window with `files` (the bundled sample when empty) and the `start` options.
pub fn run_app(files: Vec<std::path::PathBuf>, start: crate::app::StartOptions) -> ExitCode {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("vantage")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([480.0, 320.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    let sources: Vec<LoadSource> = files.into_iter().map(LoadSource::Path).collect();
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
