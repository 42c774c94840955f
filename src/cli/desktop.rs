//! The desktop launcher: the eframe window and event loop around the app.

use std::process::ExitCode;

use crate::app::VantageApp;
use crate::source::open::LoadSource;

/// When the process started (for `--exit-after-first-view`).
pub static STARTED: std::sync::LazyLock<web_time::Instant> = std::sync::LazyLock::new(web_time::Instant::now);

/// The window's size when neither `--window-size` nor a saved one gives it.
pub const DEFAULT_SIZE: [f32; 2] = [1280.0, 800.0];

/// The window's options: `size` (`--window-size`) wins over the size and place saved by an
/// earlier run, which is then neither restored nor overwritten (a rehearsal at projector size
/// leaves the usual window as it was); without it the saved one is restored, else
/// [`DEFAULT_SIZE`].
pub fn native_options(size: Option<[f32; 2]>) -> eframe::NativeOptions {
    eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("vantage")
            .with_inner_size(size.unwrap_or(DEFAULT_SIZE))
            .with_min_inner_size([480.0, 320.0])
            .with_drag_and_drop(true),
        persist_window: size.is_none(),
        ..Default::default()
    }
}

/// Opens the desktop window with `files` and the followed paths `follow` (the bundled sample when
/// both are empty) and the `start` options, `size` points wide and high when given.
pub fn run_app(
    files: Vec<std::path::PathBuf>,
    follow: Vec<std::path::PathBuf>,
    open: crate::source::OpenOptions,
    start: crate::app::StartOptions,
    size: Option<[f32; 2]>,
) -> ExitCode {
    let options = native_options(size);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_on_the_command_line_wins_over_the_saved_one() {
        let given = native_options(Some([1280.0, 720.0]));
        assert_eq!(given.viewport.inner_size, Some(egui::vec2(1280.0, 720.0)));
        assert!(!given.persist_window, "a saved size would replace the one given");
        let usual = native_options(None);
        assert_eq!(usual.viewport.inner_size, Some(egui::vec2(DEFAULT_SIZE[0], DEFAULT_SIZE[1])));
        assert!(usual.persist_window);
    }
}
