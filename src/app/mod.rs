//! The eframe application: open runs, loading, persisted state, commands and the credit cache.
//! Views live in `ui/`; they read the app and push [`Command`]s, which [`VantageApp::logic`] applies.

mod commands;
#[cfg(target_arch = "wasm32")]
pub mod credit_worker;
pub mod deeplink;
pub mod faults;
mod loading;
mod open_run;
pub mod png;
pub mod server;
pub mod state;

use crate::source::open::{LoadOutcome, LoadSource};
pub use commands::{Command, LABEL_FIELD};
pub use loading::{LoadMessage, LoadQueue};
pub use open_run::{AUDIT_STEPS, CreditSlot, Facets, LazyRun, OpenRun, SchemeCredit, Selection, display_name};
pub use state::{AppState, SavedFormula, SchemeChoice, Tab};

/// The page's address without its fragment (web), to which a deep link's `#…` is appended; `None`
/// natively, where the link is passed with `--link`.
pub fn page_base_url() -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    {
        let location = web_sys::window()?.location();
        let (origin, path, search) = (location.origin().ok()?, location.pathname().ok()?, location.search().ok()?);
        Some(format!("{origin}{path}{search}"))
    }
    #[cfg(not(target_arch = "wasm32"))]
    None
}

/// Command-line choices that override the saved state at start.
#[derive(Clone, Debug, Default)]
pub struct StartOptions {
    /// The view to open (`group`, `compare`, `overview`, `tokens`, `summary`).
    pub tab: Option<String>,
    /// Scheme A id.
    pub scheme_a: Option<String>,
    /// Scheme B id.
    pub scheme_b: Option<String>,
    /// Start in meeting mode.
    pub meeting: bool,
    /// A deep link (`#traj=…&step=…&a=…`) to open once the run has loaded.
    pub link: Option<String>,
    /// Print the seconds from `started` to the first frame that shows a run's group view, and
    /// close (the load benchmark's measure of the time to a first view).
    pub exit_after_first_view: Option<web_time::Instant>,
    /// `--window-size`: the window's size in screen pixels (logical pixels where the desktop
    /// scales), set once the zoom is settled (it wins over the size an earlier session saved).
    pub window_size: Option<[f32; 2]>,
}

/// The presets that describe one trainer's own estimator: the preset, the trainer, and what the
/// format of that trainer's runs names (lower case).
const TRAINER_PRESETS: [(&str, &str, &str); 5] = [
    ("nemo_rl", "NeMo-RL", "nemo-rl"),
    ("nemo_rl_no_loo", "NeMo-RL", "nemo-rl"),
    ("prime_rl", "prime-rl", "verifiers"),
    ("slime", "slime", "slime"),
    ("miles", "miles", "slime"),
];

/// The app: open runs, the selected one, loads in flight, state, commands and notifications.
#[derive(Default)]
pub struct VantageApp {
    /// Open runs, in the order they loaded.
    pub runs: Vec<OpenRun>,
    /// Index of the run shown.
    pub selected: usize,
    /// Loads in flight.
    pub loads: LoadQueue,
    /// Errors and notices for the status bar, newest last.
    pub notifications: Vec<String>,
    /// Whether the notification list is open.
    pub show_notifications: bool,
    /// Persisted state.
    pub state: AppState,
    /// Commands pushed by views this frame.
    pub commands: Vec<Command>,
    /// A deep link waiting for its run to load.
    pub pending_link: Option<deeplink::DeepLink>,
    /// The title last shown (window title natively, document title on the web): it names the
    /// selected step, so tests and users can see which step a link opened.
    pub shown_title: String,
    /// `--exit-after-first-view`: when the process started.
    pub exit_after_first_view: Option<web_time::Instant>,
    /// `--window-size`, in screen pixels.
    pub window_size: Option<[f32; 2]>,
    /// Whether `window_size` was given to the window (once the zoom the app draws with is the
    /// one in effect: egui turns a size in points into pixels by the zoom).
    pub window_size_sent: bool,
    /// `--exit-after-first-view` printed the time to the first view.
    pub first_view_said: bool,
    /// Schemes were chosen on the command line: the audit of a run's logged advantages does not
    /// replace them.
    pub schemes_given: bool,
    /// A deep link chose schemes: their presets belong to the next run shown.
    pub link_presets: bool,
    /// The first frame has run (it drops the scroll offsets an earlier session saved).
    pub started: bool,
    /// Follow the `?url=` log once it has loaded (web, `&follow=1`).
    pub follow_on_load: bool,
    /// The run list of the `vantage serve` that sent the page (web; `None` elsewhere).
    pub server: Option<server::ServerRuns>,
    /// The side panels (rollout list, scheme panel) as the user opened or closed them this
    /// session; `None`: as the window's width says (`ui::COMPACT_WIDTH`).
    pub panels: [Option<bool>; 2],
    /// Where saved formulas are also written as files (natively, the formulas folder; `None` in
    /// tests and on the web, where they live in the app's state only).
    pub formulas_dir: Option<std::path::PathBuf>,
    /// Folders dropped on the page (web), each as its files, sent by the page's drop listener.
    /// What became of each save (export), for the notices.
    pub saves: commands::SaveMessages,
    #[cfg(target_arch = "wasm32")]
    pub dropped_folders: Option<std::sync::mpsc::Receiver<Vec<(String, web_sys::File)>>>,
}

impl VantageApp {
    /// Creates the app with the saved state and starts loading `sources` (the bundled sample when
    /// empty) and following `follow` (native), opening paths as `options` say (now and later:
    /// dropped, picked and recent files too).
    pub fn new(
        cc: &eframe::CreationContext<'_>,
        sources: Vec<LoadSource>,
        #[cfg(not(target_arch = "wasm32"))] follow: Vec<std::path::PathBuf>,
        options: crate::source::OpenOptions,
    ) -> Self {
        let mut app = Self::restored(cc);
        // The app reads an Inspect `.eval`'s samples as they are shown.
        app.loads.options = crate::source::OpenOptions { lazy: true, ..options };
        // The formulas saved in the formulas folder (by this app or by hand) join the remembered ones.
        #[cfg(not(target_arch = "wasm32"))]
        {
            for (name, text) in crate::source::disk::saved_formulas() {
                app.state.keep_formula(name, text);
            }
            app.formulas_dir = crate::source::disk::formulas_dir();
        }
        let ctx = cc.egui_ctx.clone();
        let repaint = move || ctx.request_repaint();
        #[cfg(not(target_arch = "wasm32"))]
        if !follow.is_empty() {
            for path in follow {
                let options = crate::source::OpenOptions { follow: true, ..app.loads.options.clone() };
                app.loads.start_with(LoadSource::Path(path), options, repaint.clone());
            }
            if sources.is_empty() {
                return app;
            }
        }
        app.open_all(sources, repaint);
        app
    }

    /// The app with the saved state and nothing loading yet.
    pub fn restored(cc: &eframe::CreationContext<'_>) -> Self {
        let stored = cc.storage.and_then(|s| s.get_string(AppState::KEY));
        let (state, notice) = AppState::restore(stored.as_deref());
        let mut app = Self { state, ..Self::default() };
        app.notifications.extend(notice);
        app
    }

    /// Applies command-line choices; an unknown view or scheme becomes a notice.
    #[must_use]
    pub fn with_start(mut self, start: StartOptions) -> Self {
        if let Some(name) = start.tab {
            match state::Tab::from_name(&name) {
                Some(tab) => self.state.tab = tab,
                // `graph`: the Group view with its behaviour graph.
                None if name.eq_ignore_ascii_case("graph") => {
                    self.state.tab = state::Tab::Group;
                    self.state.group_shows = state::GroupShows::Graph;
                }
                None => self.notifications.push(format!("--view {name}: not a view ({}, graph)", state::Tab::names())),
            }
        }
        self.schemes_given |= start.scheme_a.is_some() || start.scheme_b.is_some();
        for (id, slot) in [(start.scheme_a, 0), (start.scheme_b, 1)] {
            let Some(id) = id else { continue };
            let Some(choice) = state::SchemeChoice::from_name(&id, &self.state.formulas) else {
                self.notifications.push(format!("unknown scheme {id:?} (see `vantage schemes`)"));
                continue;
            };
            if slot == 0 {
                self.state.scheme_a = choice;
            } else {
                self.state.scheme_b = choice;
            }
        }
        self.state.meeting_mode |= start.meeting;
        self.exit_after_first_view = start.exit_after_first_view;
        self.window_size = start.window_size;
        if let Some(link) = start.link {
            self.set_link(deeplink::DeepLink::parse(&link));
        }
        self
    }

    /// Applies a deep link's schemes and view now, and its selection once a run is open.
    pub fn set_link(&mut self, link: deeplink::DeepLink) {
        if let Some(a) = link.scheme_a.clone() {
            self.state.scheme_a = a;
        }
        if let Some(b) = link.scheme_b.clone() {
            self.state.scheme_b = b;
        }
        if link.scheme_a.is_some() || link.scheme_b.is_some() {
            self.state.preset_run = self.current().map(|o| o.run.meta.name.clone());
            self.link_presets = self.runs.is_empty();
        }
        if let Some(tab) = link.tab {
            self.state.tab = tab;
            if tab == state::Tab::Group {
                self.state.group_shows = if link.graph { state::GroupShows::Graph } else { state::GroupShows::Tree };
            }
        }
        self.pending_link = Some(link);
        self.apply_pending_link();
    }

    /// Selects the linked group / trajectory / step in the current run, if it is open.
    fn apply_pending_link(&mut self) {
        let Some(link) = self.pending_link.clone() else { return };
        let Some(open) = self.runs.get_mut(self.selected) else { return };
        let found = open.select_by_key(link.trajectory.as_deref(), link.step.unwrap_or(0), link.group.as_deref());
        // A run still being read may not have reached the linked trajectory: try again with more.
        let still_reading = open.load_id.is_some();
        if !found && !still_reading && (link.trajectory.is_some() || link.group.is_some()) {
            self.notifications.push("link: the linked trajectory is not in this run".to_owned());
        }
        // A sample still shown from its summary has one step: apply the link again once it is read.
        let unread = open.lazy.as_ref().zip(link.trajectory.as_deref()).is_some_and(|(l, k)| l.is_unread(k));
        if !unread && (found || !still_reading) {
            self.pending_link = None;
        }
    }

    /// The deep link to the current view and step as a URL fragment, naming the run when it was
    /// fetched by URL (relative to the page when `vantage serve` sent it): what Copy link writes
    /// and the web page's address shows.
    pub fn shared_fragment(&self) -> String {
        let served = self.server.is_some();
        let run_url = self
            .current()
            .map(|o| o.run.meta.name.clone())
            .filter(|n| n.starts_with("http") || (served && n.starts_with("runs/")));
        self.link_here(run_url).to_fragment()
    }

    /// The deep link to the current view and step (`run` is where the run can be fetched from).
    pub fn link_here(&self, run: Option<String>) -> deeplink::DeepLink {
        let open = self.current();
        let selection = open.map(|o| o.selection).unwrap_or_default();
        deeplink::DeepLink {
            run_url: run,
            group: open.zip(selection.group).map(|(o, g)| o.run.group_key(g).to_owned()),
            trajectory: open.zip(selection.trajectory).map(|(o, t)| o.run.trajectory_key(t).to_owned()),
            step: open.and_then(OpenRun::selected_step_index),
            scheme_a: Some(self.state.scheme_a.clone()),
            scheme_b: Some(self.state.scheme_b.clone()),
            tab: Some(self.state.tab),
            graph: self.state.group_shows == state::GroupShows::Graph,
        }
    }

    /// The title naming the selected step: "vantage — TRAJECTORY · step K".
    pub fn title(&self) -> String {
        match self.current() {
            Some(open) => match (open.selection.trajectory, open.selected_step_index()) {
                (Some(t), Some(k)) => format!("vantage — {} · step {}", open.run.trajectory_key(t), k + 1),
                _ => format!("vantage — {}", open.run.meta.name),
            },
            // The page of `vantage serve` before a run is opened: its list.
            None => match &self.server {
                Some(list) if list.loaded => format!("vantage — {} runs on this server", list.runs.len()),
                _ => "vantage".to_owned(),
            },
        }
    }

    /// Shows [`Self::title`] as the window title (native) or the page title (web) when it changes.
    fn show_title(&mut self, ctx: &egui::Context) {
        let title = self.title();
        if title == self.shown_title {
            return;
        }
        // The page title on the web (where the browser test reads it), the window title natively.
        #[cfg(target_arch = "wasm32")]
        if let Some(document) = web_sys::window().and_then(|w| w.document()) {
            document.set_title(&title);
        }
        #[cfg(target_arch = "wasm32")]
        self.show_url();
        ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
        self.shown_title = title;
    }

    /// The page's address follows the run and step shown (web): its fragment is the deep link to
    /// them, so the address bar can be copied as it is, and a reload opens the same step. Not
    /// while a link is still to be applied (it is the one in the address).
    #[cfg(target_arch = "wasm32")]
    fn show_url(&self) {
        if self.pending_link.is_some() || self.current().is_none() {
            return;
        }
        let fragment = self.shared_fragment();
        let (Some(window), Some(base)) = (web_sys::window(), page_base_url()) else { return };
        if let Ok(history) = window.history() {
            let url = format!("{base}#{fragment}");
            if let Err(err) = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url)) {
                log::warn!("could not set the page's address: {err:?}");
            }
        }
    }

    /// Starts loading `sources`, or the bundled sample when there are none.
    pub fn open_all(&mut self, mut sources: Vec<LoadSource>, repaint: impl Fn() + Send + Clone + 'static) {
        if sources.is_empty() {
            sources.push(LoadSource::Bytes { name: crate::DEMO_RUN_NAME.to_owned(), bytes: crate::DEMO_RUN.into() });
        }
        for source in sources {
            #[cfg(not(target_arch = "wasm32"))]
            if let LoadSource::Path(path) = &source {
                self.state.remember_file(&path.display().to_string());
            }
            self.loads.start(source, repaint.clone());
        }
    }

    /// Takes in what loads sent: the run so far of a large log being read (opened at once, then
    /// swapped for more as it arrives), finished loads, and files chosen in the dialog.
    pub fn accept(&mut self, messages: Vec<(u64, LoadMessage)>, repaint: impl Fn() + Send + Clone + 'static) {
        for (id, message) in messages {
            match message {
                LoadMessage::Partial(run, report) => {
                    if let Some(open) = self.runs.iter_mut().find(|r| r.load_id == Some(id)) {
                        open.replace_run(*run, report);
                        self.apply_pending_link();
                    } else {
                        let mut open = OpenRun::new(*run, report);
                        open.load_id = Some(id);
                        self.push_run(open);
                    }
                }
                LoadMessage::Done(mut outcome) => {
                    // The other logs of an opened folder open beside the first, each a run.
                    let more = std::mem::take(&mut outcome.more);
                    self.accept_outcome(id, *outcome, repaint.clone());
                    let first = self.selected;
                    for other in more {
                        self.accept_outcome(0, other, repaint.clone());
                    }
                    // The folder's first run stays shown: it carries the folder's note.
                    self.show_run(first);
                }
                LoadMessage::Picked(sources) if !sources.is_empty() => self.open_all(sources, repaint.clone()),
                LoadMessage::Picked(_) => {}
            }
        }
    }

    fn accept_outcome(&mut self, id: u64, outcome: LoadOutcome, repaint: impl Fn() + Send + Clone + 'static) {
        let shown = self.runs.iter().position(|r| r.load_id == Some(id));
        match outcome.result {
            Ok(run) => {
                for warning in outcome.report.warnings.iter().take(50) {
                    self.notifications.push(warning.located(&outcome.report.file));
                }
                if outcome.report.num_warnings() > 50 {
                    self.notifications.push(format!(
                        "{}: {} more warning(s); see the Summary tab",
                        outcome.name,
                        outcome.report.num_warnings() - 50
                    ));
                }
                // How the log was read (groups rebuilt, files of its folder skipped): among the
                // notices too, not only in the Summary.
                let short = crate::model::last_name(&outcome.name);
                for note in &run.meta.notes {
                    self.notifications.push(format!("{short}: {note}"));
                }
                // Data that makes the comparison degenerate, said once as it opens.
                for caution in crate::analysis::summary::RunSummary::of(&run).cautions() {
                    self.notifications.push(format!("{}: {caution}", outcome.name));
                }
                let lazy = outcome.lazy.map(|file| LazyRun::new(file, outcome.report.clone()));
                let open = if let Some(i) = shown {
                    // The run so far was shown while it was read: the whole run takes its place.
                    let open = &mut self.runs[i];
                    open.replace_run(run, outcome.report);
                    open.load_id = None;
                    open
                } else {
                    self.runs.push(OpenRun::new(run, outcome.report));
                    self.show_run(self.runs.len() - 1);
                    &mut self.runs[self.selected]
                };
                // A large run's credit is computed off the page's thread, on the worker's copy.
                #[cfg(target_arch = "wasm32")]
                if lazy.is_none()
                    && open.run.num_path_steps() > credit_worker::WORKER_STEPS
                    && let Some(bytes) = &outcome.bytes
                {
                    open.remote = credit_worker::register(&outcome.name, bytes);
                }
                // A log fetched by URL can be followed (the Follow toggle).
                #[cfg(target_arch = "wasm32")]
                if let Some(url) = &outcome.url {
                    open.web_source = outcome.bytes.clone().map(|b| (url.clone(), b));
                }
                // A v2 dataset's texts are fetched as they are shown; its other steps open from it.
                #[cfg(target_arch = "wasm32")]
                if let Some((dataset, texts)) = outcome.dataset {
                    crate::source::web_dataset::fetch_texts(dataset.clone(), texts, repaint);
                    open.web_dataset = Some(dataset);
                }
                #[cfg(not(target_arch = "wasm32"))]
                {
                    open.follower = outcome.follower;
                    open.source_path = outcome.path;
                    open.read_labels();
                    // Only the web fetches texts after opening.
                    drop(repaint);
                }
                open.lazy = lazy;
                self.audit_opened(shown.unwrap_or(self.selected));
                if shown.is_none() {
                    self.fit_schemes();
                }
                self.apply_pending_link();
            }
            Err(err) => {
                // In the log too (the browser's console, where page tests and benchmarks read it).
                log::warn!("{err:#}");
                if let Some(i) = shown {
                    // Cancelled or stopped part-way: what was read stays open.
                    self.runs[i].load_id = None;
                    self.notifications.push(format!("{err:#}; showing the part read before it stopped"));
                } else {
                    self.notifications.push(format!("{err:#}"));
                }
            }
        }
    }

    /// Audits the logged advantages of run `i` as it opens (`analysis::audit`): the verdict is
    /// kept for the compare view and said in a notice, and the first run opens on them, A the
    /// logged advantages and B the preset that reproduces them (or comes closest), unless the
    /// command line chose the schemes.
    fn audit_opened(&mut self, i: usize) {
        let first = self.runs.len() == 1;
        let Some(open) = self.runs.get_mut(i) else { return };
        if open.run.num_path_steps() > open_run::AUDIT_STEPS {
            return;
        }
        open.audit = crate::analysis::audit::audit(&open.run);
        let Some(audit) = &open.audit else { return };
        self.notifications.push(format!(
            "{}: {}",
            open.run.meta.name,
            crate::analysis::forensics::describe_audit(&open.run, audit)
        ));
        if self.schemes_given || !first {
            return;
        }
        let verdict = match audit {
            crate::analysis::audit::Audit::Reproduced(all) => &all[0],
            crate::analysis::audit::Audit::Closest(closest) => closest,
        };
        self.state.scheme_a = state::SchemeChoice::new("logged");
        self.state.scheme_b = state::SchemeChoice {
            scheme_id: verdict.scheme.to_owned(),
            preset: verdict.preset.map(str::to_owned),
            values: Vec::new(),
        };
        self.state.preset_run = Some(open.run.meta.name.clone());
    }

    /// Shows run `i`: schemes A and B stay with the run shown until now, and come back with run
    /// `i` when it was shown before (a preset belongs to the run it was chosen on).
    pub(crate) fn show_run(&mut self, i: usize) {
        if i >= self.runs.len() {
            return;
        }
        if i != self.selected
            && let Some(shown) = self.runs.get_mut(self.selected)
        {
            shown.schemes = Some([self.state.scheme_a.clone(), self.state.scheme_b.clone()]);
        }
        self.selected = i;
        if let Some([a, b]) = self.runs[i].schemes.take() {
            self.state.scheme_a = a;
            self.state.scheme_b = b;
            self.state.preset_run = Some(self.runs[i].run.meta.name.clone());
        }
    }

    fn push_run(&mut self, open: OpenRun) {
        self.runs.push(open);
        self.show_run(self.runs.len() - 1);
        self.fit_schemes();
        self.apply_pending_link();
    }

    /// Opens an already loaded run (tests, headless use).
    pub fn open_loaded(&mut self, run: crate::model::Run, report: crate::load::LoadReport) {
        self.accept_outcome(0, LoadOutcome::new(run.meta.name.clone(), Ok(run), report), || {});
    }

    /// Starts or stops following the current run's path (native; the Follow toggle).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn toggle_follow(&mut self, repaint: impl Fn() + Send + Clone + 'static) {
        let Some(open) = self.runs.get_mut(self.selected) else { return };
        if open.follower.take().is_some() {
            return;
        }
        let Some(path) = open.source_path.clone() else { return };
        // Read again from the start by a follower; the run shown stays until it has the new one.
        let options = crate::source::OpenOptions { follow: true, ..self.loads.options.clone() };
        let id = self.loads.start_with(LoadSource::Path(path), options, repaint);
        self.runs[self.selected].load_id = id;
    }

    /// Starts or stops following the current run's URL (web; the Follow toggle).
    #[cfg(target_arch = "wasm32")]
    pub fn toggle_web_follow(&mut self, now: f64) {
        let Some(open) = self.runs.get_mut(self.selected) else { return };
        if open.web_follower.take().is_some() || open.web_dataset_follower.take().is_some() {
            return;
        }
        // A v2 dataset by URL: its manifest is looked at every second.
        if let Some(dataset @ crate::source::web_dataset::WebDataset::Url(_)) = open.web_dataset.clone() {
            open.web_dataset_follower =
                Some(crate::source::web_dataset_follow::DatasetFollower::start(dataset, None, now));
            return;
        }
        let Some((url, bytes)) = open.web_source.clone() else { return };
        match crate::source::web_follow::WebFollower::start(&open.run.meta.name, url, &bytes, now) {
            Ok(follower) => {
                open.web_follower = Some(follower);
                // The credit worker's copy would no longer be the run: credit is computed here.
                open.remote = None;
                for slot in &mut open.credit {
                    slot.invalidate();
                }
            }
            Err(err) => self.notifications.push(format!("{}: {err}", open.run.meta.name)),
        }
    }

    /// Polls the followed URLs (web).
    #[cfg(target_arch = "wasm32")]
    fn take_web_followed(&mut self, ctx: &egui::Context) {
        let now = ctx.input(|i| i.time);
        if self.follow_on_load && self.current().is_some_and(|o| o.web_source.is_some() || o.web_dataset.is_some()) {
            self.follow_on_load = false;
            self.toggle_web_follow(now);
        }
        let mut following = false;
        for open in &mut self.runs {
            if let Some(follower) = &mut open.web_follower {
                following = true;
                let c = ctx.clone();
                if let Some((run, report)) = follower.tick(now, move || c.request_repaint()) {
                    log::info!("{}: followed: {} trajectories", run.meta.name, run.trajectories.len());
                    open.replace_run(run, report);
                }
            }
            if let Some(follower) = &mut open.web_dataset_follower {
                following = true;
                let c = ctx.clone();
                if let Some((run, texts, report)) = follower.tick(now, move || c.request_repaint()) {
                    log::info!("{}: followed: {} trajectories", run.meta.name, run.trajectories.len());
                    open.replace_run(run, report);
                    if let Some(dataset) = open.web_dataset.clone() {
                        let c = ctx.clone();
                        crate::source::web_dataset::fetch_texts(dataset, texts, move || c.request_repaint());
                    }
                }
            }
        }
        if following {
            ctx.request_repaint_after(std::time::Duration::from_secs(1));
        }
    }

    /// Takes in what the followers of open runs sent.
    #[cfg(not(target_arch = "wasm32"))]
    fn take_followed(&mut self, ctx: &egui::Context) {
        let mut notices = Vec::new();
        for open in &mut self.runs {
            let Some(follower) = &mut open.follower else { continue };
            let mut latest = None;
            for update in follower.poll() {
                match update {
                    crate::source::follow::Update::Run(run, report) => latest = Some((run, report)),
                    crate::source::follow::Update::Notice(text) => notices.push(text),
                    crate::source::follow::Update::Stopped(why) => {
                        notices.push(format!("{}: following stopped: {why}", open.run.meta.name));
                    }
                }
            }
            if let Some((run, report)) = latest {
                open.replace_run(*run, report);
            }
        }
        self.notifications.extend(notices);
        if self.runs.iter().any(|r| r.follower.is_some()) {
            // The status line's "last data … ago" ticks.
            ctx.request_repaint_after(std::time::Duration::from_secs(1));
        }
    }

    /// When scheme A or B does not apply to the current run (not supported by it, a saved formula
    /// that is an error on it, another trainer's preset), picks one that does instead.
    pub(crate) fn fit_schemes(&mut self) {
        let Some(open) = self.runs.get(self.selected) else { return };
        let name = open.run.meta.name.clone();
        // Saved choices that do not apply to this run are not applied, and a notice says so: a
        // formula that is an error on it, a trainer's preset on another trainer's run (unless the
        // audit found the run's own advantages are that preset's).
        let format = open.run.meta.format.to_lowercase();
        let audited = |scheme: &str, preset: &str| match &open.audit {
            Some(crate::analysis::audit::Audit::Reproduced(all)) => {
                all.iter().any(|v| v.scheme == scheme && v.preset == Some(preset))
            }
            _ => false,
        };
        let defaults = AppState::default();
        let mut said = Vec::new();
        if std::mem::take(&mut self.link_presets) {
            self.state.preset_run = Some(name.clone());
        }
        // A preset chosen on another run (or in an earlier session on another run) is that run's.
        let owner = self.state.preset_run.clone().filter(|owner| *owner != name && !self.schemes_given);
        let unowned = self.state.preset_run.is_none() && !self.schemes_given;
        for (slot, choice, default) in
            [("A", &mut self.state.scheme_a, &defaults.scheme_a), ("B", &mut self.state.scheme_b, &defaults.scheme_b)]
        {
            if let Some(text) = choice.formula()
                && let Err(err) = crate::credit::expr::Formula::parse(text).and_then(|f| f.compile(&open.run).map(drop))
            {
                said.push(format!(
                    "{name}: the saved formula of scheme {slot} does not apply to this run ({err}); {slot} is {} \
                     (the formula stays under Custom formula)",
                    default.scheme_id
                ));
                *choice = default.clone();
            }
            let trainer = choice.preset.as_deref().and_then(|p| {
                TRAINER_PRESETS
                    .iter()
                    .find(|(preset, _, _)| *preset == p)
                    .map(|&(p, trainer, marker)| (p, trainer, marker))
            });
            if let Some((preset, trainer, marker)) = trainer
                && !format.contains(marker)
                && !audited(&choice.scheme_id, preset)
            {
                said.push(format!(
                    "{name}: the saved preset {preset} is {trainer}'s and this is a {} run: {} ({slot}) opens with its defaults",
                    open.run.meta.format, choice.scheme_id
                ));
                choice.preset = None;
            }
            if let Some(preset) = choice.preset.clone()
                && (owner.is_some() || unowned)
                && !audited(&choice.scheme_id, &preset)
            {
                let whose = owner.as_deref().map_or_else(|| "an earlier session's".to_owned(), |o| format!("{o}'s"));
                said.push(format!(
                    "{name}: the preset {preset} of {} ({slot}) was {whose} choice; here {slot} is {} with its defaults",
                    choice.scheme_id, choice.scheme_id
                ));
                choice.preset = None;
                choice.values.clear();
            }
        }
        self.notifications.extend(said);
        let supported = |id: &str| {
            id == state::CUSTOM_ID
                || open.support.iter().any(|(info, s)| info.id == id && matches!(s, crate::credit::Support::Yes))
        };
        const PREFERRED_B: [&str; 9] = [
            "prm_process",
            "triage",
            "turn_credit",
            "prime",
            "treeps_rag",
            "gigpo",
            "vineppo",
            "first_error",
            "length_penalty",
        ];
        if !supported(&self.state.scheme_a.scheme_id)
            && let Some((info, _)) = open.support.iter().find(|(_, s)| matches!(s, crate::credit::Support::Yes))
        {
            self.state.scheme_a = state::SchemeChoice::new(info.id);
        }
        if !supported(&self.state.scheme_b.scheme_id)
            && let Some(id) = PREFERRED_B.iter().find(|id| supported(id))
        {
            self.state.scheme_b = state::SchemeChoice::new(id);
        }
        // B the same computation as A (a preset taken off, logged advantages the run lacks)
        // would compare a scheme with itself: B is the first process scheme the run supports.
        if self.state.scheme_a == self.state.scheme_b
            && let Some(id) = PREFERRED_B.iter().find(|id| supported(id) && **id != self.state.scheme_a.scheme_id)
        {
            self.notifications.push(format!("{name}: A and B were both {}; B is {id}", self.state.scheme_a.scheme_id));
            self.state.scheme_b = state::SchemeChoice::new(id);
        }
        self.state.preset_run = Some(name.clone());
        // A remembered color field the run lacks would draw everything grey: back to credit A.
        let choices = &open.facets.heat_choices;
        let mut reset = Vec::new();
        for (what, value) in [("heatmap", &mut self.state.heat_value), ("tree", &mut self.state.tree_value)] {
            if !choices.contains(value) {
                reset.push(format!("{name}: has no {} to color the {what} by; coloring by credit A", value.label()));
                *value = crate::analysis::heatmap::HeatValue::CreditA;
            }
        }
        self.notifications.extend(reset);
    }

    /// The run shown.
    pub fn current(&self) -> Option<&OpenRun> {
        self.runs.get(self.selected)
    }

    /// The run shown, mutably.
    pub fn current_mut(&mut self) -> Option<&mut OpenRun> {
        self.runs.get_mut(self.selected)
    }

    /// Per-frame work that is not drawing: loads, dropped files, keys, commands, credit.
    pub fn logic(&mut self, ctx: &egui::Context) {
        // Every view opens at its top: the scroll offsets egui's saved memory holds are an earlier
        // session's, for other content (Compare reopened mid-table, the scheme panel past scheme A).
        if !std::mem::replace(&mut self.started, true) {
            ctx.data_mut(|d| d.remove_by_type::<egui::containers::scroll_area::State>());
        }
        self.notifications.extend(self.saves.take());
        let done = self.loads.poll();
        let c = ctx.clone();
        self.accept(done, move || c.request_repaint());
        #[cfg(not(target_arch = "wasm32"))]
        self.take_followed(ctx);
        #[cfg(target_arch = "wasm32")]
        self.take_web_followed(ctx);
        #[cfg(target_arch = "wasm32")]
        if let Some(list) = &mut self.server {
            let shown = self.runs.is_empty() || list.window_open;
            let c = ctx.clone();
            list.tick(ctx.input(|i| i.time), shown, move || c.request_repaint());
            if list.loaded
                && let Some(url) = list.follow_when_listed.take()
            {
                self.follow_on_load = list.by_url(&url).is_some_and(|r| r.follow);
            }
            if shown {
                ctx.request_repaint_after(std::time::Duration::from_secs(3));
            }
        }
        if self.loads.pending_names().next().is_some() {
            // Keep the progress bars moving.
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
        let dropped = ctx.input(|i| i.raw.dropped_files.clone());
        for file in dropped {
            let c = ctx.clone();
            self.loads.start_dropped(&file, move || c.request_repaint());
        }
        #[cfg(target_arch = "wasm32")]
        for files in self.dropped_folders.as_ref().map(|r| r.try_iter().collect::<Vec<_>>()).unwrap_or_default() {
            if let Some(source) = LoadSource::of_folder(files) {
                let c = ctx.clone();
                self.loads.start(source, move || c.request_repaint());
            }
        }
        self.keyboard(ctx);
        let commands = std::mem::take(&mut self.commands);
        for command in commands {
            self.apply(command, ctx);
        }
        self.read_lazily(ctx);
        self.update_credit(ctx);
        self.show_title(ctx);
    }

    /// Reads samples of lazily opened runs (at most `LAZY_FRAME_BUDGET` of the frame in all) and
    /// keeps repainting until every sample is read.
    fn read_lazily(&mut self, ctx: &egui::Context) {
        let reading = self.runs.iter().filter(|r| r.lazy.is_some()).count();
        if reading == 0 {
            return;
        }
        let budget = open_run::LAZY_FRAME_BUDGET / reading as u32;
        let now = ctx.input(|i| i.time);
        let before = self.current().map(|o| o.run.meta.revision);
        let mut remaining = false;
        for open in &mut self.runs {
            remaining |= open.read_lazily(now, budget);
        }
        if self.current().map(|o| o.run.meta.revision) != before {
            self.apply_pending_link();
        }
        if remaining {
            ctx.request_repaint();
        }
    }

    /// Recomputes scheme A and B for the current run when their choice changed (on a worker thread
    /// for large runs), and takes in finished results.
    pub fn update_credit(&mut self, ctx: &egui::Context) {
        let (a, b) = (self.state.scheme_a.clone(), self.state.scheme_b.clone());
        let faults = &self.loads.faults;
        if let Some(open) = self.runs.get_mut(self.selected) {
            for (slot, choice) in [(0, &a), (1, &b)] {
                let c = ctx.clone();
                open.credit[slot].update(&open.run, choice, open.remote, faults, move || c.request_repaint());
            }
        }
    }

    /// Keys: arrows walk steps and rollouts, `B` bookmarks, `L` labels the step (the inspector's
    /// label field takes the name), `PageUp` / `PageDown` walk bookmarks, `F2` toggles meeting mode. Ignored while a text field has focus.
    fn keyboard(&mut self, ctx: &egui::Context) {
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let pressed = |key| ctx.input(|i| i.key_pressed(key));
        let keys = [
            (egui::Key::ArrowRight, Command::StepBy(1)),
            (egui::Key::ArrowLeft, Command::StepBy(-1)),
            (egui::Key::ArrowDown, Command::RolloutBy(1)),
            (egui::Key::ArrowUp, Command::RolloutBy(-1)),
            (egui::Key::B, Command::ToggleBookmark),
            (egui::Key::L, Command::FocusLabel),
            (egui::Key::PageDown, Command::BookmarkBy(1)),
            (egui::Key::PageUp, Command::BookmarkBy(-1)),
            (egui::Key::F2, Command::ToggleMeetingMode),
        ];
        for (key, command) in keys {
            if pressed(key) {
                self.commands.push(command);
            }
        }
    }
}
