//! The eframe application: open runs, loading, notifications. Views live in `ui/`.

mod loading;

pub use loading::{LoadOutcome, LoadSource, Loader};

use crate::analysis::RunSummary;
use crate::load::LoadReport;
use crate::model::Run;

/// A run that loaded, with its report and summary.
pub struct OpenRun {
    /// The run.
    pub run: Run,
    /// Warnings from loading.
    pub report: LoadReport,
    /// Its summary.
    pub summary: RunSummary,
    /// Which credit schemes it supports, and why not the others.
    pub support: Vec<(&'static crate::credit::SchemeInfo, crate::credit::Support)>,
}

/// The app: open runs, the selected one, loads in flight and notifications.
#[derive(Default)]
pub struct VantageApp {
    /// Open runs, in the order they loaded.
    pub runs: Vec<OpenRun>,
    /// Index of the run shown.
    pub selected: usize,
    /// Loads in flight.
    pub loader: Loader,
    /// Errors and notices for the status bar, newest last.
    pub notifications: Vec<String>,
}

impl VantageApp {
    /// Creates the app and starts loading `sources` (the bundled sample when empty).
    pub fn new(cc: &eframe::CreationContext<'_>, sources: Vec<LoadSource>) -> Self {
        let mut app = Self::default();
        let ctx = cc.egui_ctx.clone();
        app.open_all(sources, move || ctx.request_repaint());
        app
    }

    /// Starts loading `sources`, or the bundled sample when there are none.
    pub fn open_all(&mut self, mut sources: Vec<LoadSource>, repaint: impl Fn() + Send + Clone + 'static) {
        if sources.is_empty() {
            sources.push(LoadSource::Bytes { name: crate::DEMO_RUN_NAME.to_owned(), bytes: crate::DEMO_RUN.into() });
        }
        for source in sources {
            self.loader.start(source, repaint.clone());
        }
    }

    /// Takes in finished loads.
    pub fn accept(&mut self, outcomes: Vec<LoadOutcome>) {
        for outcome in outcomes {
            match outcome.result {
                Ok(run) => {
                    let summary = RunSummary::of(&run);
                    let support = crate::credit::support_table(&run);
                    if !outcome.report.warnings.is_empty() {
                        self.notifications.push(format!(
                            "{}: {} warning(s) while loading",
                            outcome.name,
                            outcome.report.warnings.len()
                        ));
                    }
                    self.runs.push(OpenRun { run, report: outcome.report, summary, support });
                    self.selected = self.runs.len() - 1;
                }
                Err(err) => self.notifications.push(format!("{err:#}")),
            }
        }
    }

    /// The run shown.
    pub fn current(&self) -> Option<&OpenRun> {
        self.runs.get(self.selected)
    }

    /// Per-frame work that is not drawing: collect finished loads and dropped files.
    pub fn logic(&mut self, ctx: &egui::Context) {
        let done = self.loader.poll();
        self.accept(done);
        let dropped = ctx.input(|i| i.raw.dropped_files.clone());
        for file in dropped {
            let c = ctx.clone();
            self.loader.start_dropped(&file, move || c.request_repaint());
        }
    }
}

impl eframe::App for VantageApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        Self::logic(self, ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        crate::ui::app_ui(self, ui);
    }
}
