//! Native-only pieces: reading files for the loaders, window options and the eframe event loop.

use std::process::ExitCode;

use crate::app::{LoadSource, VantageApp};
use crate::load::{LoadError, LoadReport, load_bytes, load_bytes_as};
use crate::model::Run;

/// Reads a file and loads it; `format` overrides detection. The one place a run is read from disk.
pub fn load_path(path: &std::path::Path, format: Option<&str>, report: &mut LoadReport) -> Result<Run, LoadError> {
    let name = path.display().to_string();
    report.file.clone_from(&name);
    let bytes = std::fs::read(path).map_err(|e| LoadError::from(e).with_path(&name))?;
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
