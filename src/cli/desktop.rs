//! The desktop launcher: the eframe window and event loop around the app.

use std::process::ExitCode;

use crate::app::VantageApp;
use crate::source::open::LoadSource;

/// When the process started (for `--exit-after-first-view`).
pub static STARTED: std::sync::LazyLock<web_time::Instant> = std::sync::LazyLock::new(web_time::Instant::now);

/// Opens the desktop window with `files` and the followed paths `follow` (the bundled sample when
/// both are empty) and the `start` options, `size` points wide and high.
pub fn run_app(
    files: Vec<std::path::PathBuf>,
    follow: Vec<std::path::PathBuf>,
    open: crate::source::OpenOptions,
    start: crate::app::StartOptions,
    size: [f32; 2],
) -> ExitCode {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("vantage")
            .with_inner_size(size)
            .with_min_inner_size([480.0, 320.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    let sources: Vec<LoadSource> = files.into_iter().map(LoadSource::Path).collect();
    let result = eframe::run_native(
        "vantage",
        options,
        Box::new(|cc| Ok(Box::new(VantageApp::new(cc, sources, follow, open).with_start(start)))),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("vantage: could not open the window: {err:#}");
            ExitCode::from(2)
        }
    }
}
