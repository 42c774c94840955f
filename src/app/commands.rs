//! Commands views push (select, walk, bookmark, export, …), applied in one place each frame.

use super::VantageApp;
use super::open_run::display_name;
use super::state::{Bookmark, Tab};
use crate::model::{GroupId, TrajectoryId};

/// Something a view asks the app to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Select a group (and its first rollout).
    SelectGroup(GroupId),
    /// Select a group and show it in the Group view (the compare view's ranking of groups).
    OpenGroup(GroupId),
    /// Walk a list of groups (an alarm's): open the first in the Group view, whose title line then
    /// has previous and next.
    WalkGroups {
        /// What the groups are ("zero variance alarm").
        what: String,
        /// The groups, in order.
        groups: Vec<GroupId>,
    },
    /// Open the next / previous group of the walk.
    WalkBy(i32),
    /// Stop walking.
    EndWalk,
    /// Select a trajectory (and its first step).
    SelectTrajectory(TrajectoryId),
    /// Select a step by path position.
    SelectStep(usize),
    /// Move the selected step along its trajectory.
    StepBy(i32),
    /// Move to the same step of the next / previous rollout of the group.
    RolloutBy(i32),
    /// Add the selected step to the bookmarks, or remove it.
    ToggleBookmark,
    /// Jump to the next / previous bookmark.
    BookmarkBy(i32),
    /// Jump to bookmark `i`.
    GoToBookmark(usize),
    /// Delete bookmark `i` (an index into the saved bookmarks).
    DeleteBookmark(usize),
    /// Switch the open run.
    SelectRun(usize),
    /// Close run `i`.
    CloseRun(usize),
    /// Toggle meeting mode.
    ToggleMeetingMode,
    /// Save the credit table (A and B per step) as CSV.
    ExportCsv,
    /// Save the window as PNG.
    ExportPng,
    /// Open other training steps of the current run, a partitioned run (a vantage Parquet v2
    /// dataset), as another run.
    OpenSteps((i64, i64)),
    /// Open a run `vantage serve` lists (web), by its URL relative to the page; follow it once in
    /// when `follow`.
    OpenServerRun {
        /// Its URL (`runs/…`).
        url: String,
        /// Whether to follow it.
        follow: bool,
    },
    /// Save a credit formula under a name (replacing one of that name): in the app's state, and
    /// natively also as `NAME.vx` in the formulas folder.
    SaveFormula {
        /// Its name.
        name: String,
        /// The formula.
        text: String,
    },
    /// Forget saved formula `name` (natively, its `NAME.vx` in the formulas folder is deleted too,
    /// or it would come back at the next start).
    DeleteFormula(String),
    /// Put the keyboard in the inspector's label field (`L`).
    FocusLabel,
    /// Label the selected step (or with `whole`, its rollout): `NAME` or `NAME=VALUE`, and a note.
    AddLabel {
        /// `NAME` or `NAME=VALUE`.
        text: String,
        /// On the whole rollout rather than the step.
        whole: bool,
    },
    /// Take the labels named `name` off `target`.
    RemoveLabel {
        /// The label's name.
        name: String,
        /// Where it is.
        target: crate::model::labels::Target,
    },
}

/// The inspector's label field, which `L` focuses.
pub const LABEL_FIELD: &str = "label_field";

impl VantageApp {
    /// Applies one command.
    pub(super) fn apply(&mut self, command: Command, ctx: &egui::Context) {
        match command {
            Command::SelectRun(i) if i < self.runs.len() => {
                self.show_run(i);
                self.fit_schemes();
            }
            Command::CloseRun(i) if i < self.runs.len() => self.close_run(i),
            Command::ToggleMeetingMode => {
                self.state.meeting_mode = !self.state.meeting_mode;
                if self.state.meeting_mode && self.state.tab == Tab::Summary {
                    self.state.tab = Tab::Compare;
                }
            }
            Command::OpenGroup(g) => {
                if let Some(open) = self.current_mut() {
                    open.select_group(g);
                }
                self.state.tab = Tab::Group;
            }
            Command::WalkGroups { what, groups } => self.walk(Some(super::open_run::Walk { what, groups, at: 0 }), 0),
            Command::WalkBy(delta) => self.walk(None, delta),
            Command::EndWalk => {
                if let Some(open) = self.current_mut() {
                    open.walk = None;
                }
            }
            Command::ToggleBookmark => self.toggle_bookmark(),
            Command::BookmarkBy(delta) => self.bookmark_by(delta),
            Command::GoToBookmark(i) => self.go_to_bookmark(i),
            Command::DeleteBookmark(i) if i < self.state.bookmarks.len() => {
                self.state.bookmarks.remove(i);
            }
            Command::ExportCsv => self.export_csv(),
            Command::ExportPng => {
                let said = self.saves.sender.clone();
                let run = self.current().map_or("vantage", |open| open.run.meta.name.as_str());
                let name = export_name(&[run, self.state.tab.label()], "png", unix_now());
                ctx.request_screenshot(move |image| {
                    match super::png::encode_rgba(image.width() as u32, image.height() as u32, image.as_raw()) {
                        Ok(bytes) => save_file(&name, bytes, &said),
                        Err(err) => log::error!("could not export the view: {err}"),
                    }
                });
            }
            Command::OpenSteps(range) => {
                #[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
                if let Some(path) = self.current().and_then(|open| open.source_path.clone()) {
                    let options = crate::source::OpenOptions { steps: Some(range), ..self.loads.options.clone() };
                    let c = ctx.clone();
                    self.loads
                        .start_with(crate::source::open::LoadSource::Path(path), options, move || c.request_repaint());
                }
                #[cfg(target_arch = "wasm32")]
                if let Some(dataset) = self.current().and_then(|open| open.web_dataset.clone()) {
                    let c = ctx.clone();
                    self.loads.start(crate::source::open::LoadSource::Dataset(dataset, Some(range)), move || {
                        c.request_repaint();
                    });
                }
                #[cfg(all(not(target_arch = "wasm32"), not(feature = "parquet")))]
                let _: (i64, i64) = range;
            }
            Command::OpenServerRun { url, follow } => self.open_server_run(&url, follow, ctx),
            Command::SaveFormula { name, text } => {
                #[cfg(not(target_arch = "wasm32"))]
                if let Some(dir) = &self.formulas_dir {
                    match crate::source::disk::save_formula(dir, &name, &text) {
                        Ok(path) => self.notifications.push(format!("formula {name} saved to {}", path.display())),
                        Err(err) => self.notifications.push(format!("formula {name}: could not save its file: {err}")),
                    }
                }
                self.state.keep_formula(name, text);
            }
            Command::DeleteFormula(name) => {
                #[cfg(not(target_arch = "wasm32"))]
                if let Some(dir) = &self.formulas_dir {
                    let file = dir.join(format!("{name}.vx"));
                    match std::fs::remove_file(&file) {
                        Ok(()) => self.notifications.push(format!("formula {name}: deleted {}", file.display())),
                        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                        Err(err) => self
                            .notifications
                            .push(format!("formula {name}: could not delete {}: {err}", file.display())),
                    }
                }
                self.state.formulas.retain(|f| f.name != name);
            }
            Command::FocusLabel => ctx.memory_mut(|m| m.request_focus(egui::Id::unique(LABEL_FIELD))),
            Command::AddLabel { text, whole } => self.add_label(&text, whole),
            Command::RemoveLabel { name, target } => {
                self.write_labels(&[crate::model::labels::Entry::Remove { name, target }]);
            }
            other => {
                if let Some(open) = self.current_mut() {
                    select(open, &other);
                }
            }
        }
    }

    /// Labels the selected step (or its rollout) `NAME` or `NAME=VALUE`, from the person at the
    /// keyboard.
    fn add_label(&mut self, text: &str, whole: bool) {
        let Some(open) = self.current() else { return };
        let Some(target) = open.selected_target(whole) else { return };
        let (name, value) = match text.split_once('=') {
            Some((name, value)) => (name.trim(), crate::model::labels::Value::parse(value)),
            None => (text.trim(), crate::model::labels::Value::Flag),
        };
        if let Some(why) = crate::model::labels::bad_name(name) {
            self.notifications.push(format!("label {text:?}: {why}"));
            return;
        }
        let user = std::env::var("USER").or_else(|_| std::env::var("USERNAME")).unwrap_or_default();
        #[cfg(not(target_arch = "wasm32"))]
        let time = Some(crate::source::labels::now());
        #[cfg(target_arch = "wasm32")]
        let time = None;
        let label = crate::model::labels::Label {
            name: name.to_owned(),
            value,
            target,
            source: crate::model::labels::Source { kind: crate::model::labels::SourceKind::Person, name: user },
            note: None,
            time,
        };
        self.write_labels(&[crate::model::labels::Entry::Add(label)]);
    }

    /// Writes label entries beside the current run and reads its labels again; a notice says where,
    /// or why not.
    fn write_labels(&mut self, entries: &[crate::model::labels::Entry]) {
        let Some(open) = self.current_mut() else { return };
        #[cfg(not(target_arch = "wasm32"))]
        {
            let Some(path) = open.source_path.clone() else {
                self.notifications
                    .push("labels: this run was not opened from a file, so it has no place for labels".to_owned());
                return;
            };
            for entry in entries {
                let target = match entry {
                    crate::model::labels::Entry::Add(label) => &label.target,
                    crate::model::labels::Entry::Remove { target, .. } => target,
                };
                if let Err(why) = crate::model::labels::check_target(&open.run, target) {
                    self.notifications.push(format!("labels: {why}"));
                    return;
                }
            }
            let written = crate::source::labels::append(&path, entries);
            open.read_labels();
            match written {
                Ok(file) => self.notifications.push(format!("labels: written to {}", file.display())),
                Err(err) => self.notifications.push(format!("labels: could not write them: {err}")),
            }
        }
        #[cfg(target_arch = "wasm32")]
        {
            let _: (&mut crate::app::OpenRun, &[crate::model::labels::Entry]) = (open, entries);
            self.notifications
                .push("labels: the web app shows labels; label with the desktop app or `vantage label`".to_owned());
        }
    }

    fn toggle_bookmark(&mut self) {
        let Some(open) = self.current() else { return };
        let (Some(t), Some(step_index)) = (open.selection.trajectory, open.selected_step_index()) else { return };
        let mark = Bookmark {
            run_name: open.run.meta.name.clone(),
            trajectory_key: open.run.trajectory_key(t).to_owned(),
            step_index,
            note: String::new(),
        };
        let marks = &mut self.state.bookmarks;
        match marks.iter().position(|m| m.same_step(&mark)) {
            Some(i) => {
                marks.remove(i);
            }
            None => marks.push(mark),
        }
    }

    /// Bookmarks of the current run, as indices into `state.bookmarks`.
    pub fn current_bookmarks(&self) -> Vec<usize> {
        let Some(open) = self.current() else { return Vec::new() };
        let name = &open.run.meta.name;
        self.state.bookmarks.iter().enumerate().filter(|(_, m)| &m.run_name == name).map(|(i, _)| i).collect()
    }

    fn bookmark_by(&mut self, delta: i32) {
        let marks = self.current_bookmarks();
        if marks.is_empty() {
            return;
        }
        let here = self.current().and_then(|open| {
            let t = open.selection.trajectory?;
            let key = open.run.trajectory_key(t);
            let step = open.selected_step_index()?;
            marks.iter().position(|&i| {
                let m = &self.state.bookmarks[i];
                m.trajectory_key == key && m.step_index == step
            })
        });
        let n = marks.len() as i32;
        let next = match here {
            Some(i) => (i as i32 + delta).rem_euclid(n),
            None if delta >= 0 => 0,
            None => n - 1,
        };
        self.go_to_bookmark(marks[next as usize]);
    }

    /// Starts walking `start`'s groups, or moves the walk under way by `delta` (wrapping), and
    /// opens the group it is at.
    fn walk(&mut self, start: Option<super::open_run::Walk>, delta: i32) {
        let Some(open) = self.current_mut() else { return };
        if let Some(walk) = start {
            open.walk = Some(walk);
        }
        let Some(walk) = &mut open.walk else { return };
        let n = walk.groups.len();
        if n == 0 {
            open.walk = None;
            return;
        }
        walk.at = (walk.at as i64 + i64::from(delta)).rem_euclid(n as i64) as usize;
        let g = walk.groups[walk.at];
        open.select_group(g);
        self.state.tab = Tab::Group;
    }

    fn close_run(&mut self, i: usize) {
        let closed = self.runs.remove(i);
        #[cfg(target_arch = "wasm32")]
        if let Some(remote) = closed.remote {
            crate::app::credit_worker::release(remote);
        }
        drop(closed);
        if i < self.selected {
            self.selected -= 1;
        } else if i == self.selected && !self.runs.is_empty() {
            // The run shown next brings back its own schemes.
            self.selected = self.selected.min(self.runs.len() - 1);
            self.show_run(self.selected);
            self.fit_schemes();
        }
    }

    fn go_to_bookmark(&mut self, i: usize) {
        let Some(mark) = self.state.bookmarks.get(i).cloned() else { return };
        let Some(run_index) = self.runs.iter().position(|r| r.run.meta.name == mark.run_name) else {
            self.notifications.push(format!("bookmark: run {} is not open", mark.run_name));
            return;
        };
        if run_index != self.selected {
            self.show_run(run_index);
            self.fit_schemes();
        }
        let open = &mut self.runs[run_index];
        let Some(t) = open.run.trajectory_by_key(&mark.trajectory_key) else { return };
        let range = open.run.trajectories.path_range(t);
        open.select_position((range.start + mark.step_index).min(range.end.saturating_sub(1)));
    }

    fn export_csv(&self) {
        let Some(open) = self.current() else { return };
        let csv = crate::analysis::export::credit_csv(
            &open.run,
            open.credit[0].step(),
            open.credit[1].step(),
            (&open.credit[0].key, &open.credit[1].key),
        );
        let (a, b) = (display_name(&open.credit[0].key), display_name(&open.credit[1].key));
        let name = export_name(&[&open.run.meta.name, a, "vs", b], "csv", unix_now());
        save_file(&name, csv.into_bytes(), &self.saves.sender);
    }
}

/// Selection commands on the current run.
fn select(open: &mut super::OpenRun, command: &Command) {
    let tr = &open.run.trajectories;
    match command {
        Command::SelectGroup(g) => open.select_group(*g),
        Command::SelectTrajectory(t) => open.select_trajectory(*t),
        Command::SelectStep(p) => open.select_position(*p),
        Command::StepBy(delta) => {
            let (Some(t), Some(p)) = (open.selection.trajectory, open.selection.position) else { return };
            let range = tr.path_range(t);
            let next = (p as i64 + i64::from(*delta)).clamp(range.start as i64, range.end as i64 - 1);
            open.select_position(next.max(0) as usize);
        }
        Command::RolloutBy(delta) => {
            let (Some(g), Some(t)) = (open.selection.group, open.selection.trajectory) else { return };
            let step = open.selected_step_index().unwrap_or(0);
            let members = open.run.groups.members(g);
            let Some(i) = members.iter().position(|&m| m == t) else { return };
            let j = (i as i64 + i64::from(*delta)).clamp(0, members.len() as i64 - 1) as usize;
            let other = members[j];
            let range = tr.path_range(other);
            open.select_position((range.start + step).min(range.end.saturating_sub(1)));
        }
        _ => {}
    }
}

/// What became of each save, sent by the save (its dialog thread, or the browser's download) to
/// the app, which shows them as notices.
pub struct SaveMessages {
    /// Where a save says what became of it.
    pub sender: std::sync::mpsc::Sender<String>,
    receiver: std::sync::mpsc::Receiver<String>,
}

impl Default for SaveMessages {
    fn default() -> Self {
        let (sender, receiver) = std::sync::mpsc::channel();
        Self { sender, receiver }
    }
}

impl SaveMessages {
    /// The messages of the saves finished since the last call.
    pub fn take(&self) -> Vec<String> {
        self.receiver.try_iter().collect()
    }
}

/// Sends `message` to the app (which may have closed).
fn say(said: &std::sync::mpsc::Sender<String>, message: String) {
    let _: Result<(), _> = said.send(message);
}

/// Where a save goes when no dialog can open: `$VANTAGE_EXPORT_DIR`, else `~/vantage-exports`,
/// else the temporary directory.
#[cfg(not(target_arch = "wasm32"))]
fn fallback_dir() -> std::path::PathBuf {
    std::env::var_os("VANTAGE_EXPORT_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join("vantage-exports")))
        .unwrap_or_else(std::env::temp_dir)
}

/// Saves into the fallback directory and says where.
#[cfg(not(target_arch = "wasm32"))]
fn save_to_fallback(name: &str, bytes: &[u8], why: &str, said: &std::sync::mpsc::Sender<String>) {
    save_into(&fallback_dir(), name, bytes, why, said);
}

/// Saves into `dir` as `name`, or beside it when an earlier export has that name, and says where.
#[cfg(not(target_arch = "wasm32"))]
fn save_into(dir: &std::path::Path, name: &str, bytes: &[u8], why: &str, said: &std::sync::mpsc::Sender<String>) {
    // Never over an earlier export: `NAME-2.png`, `NAME-3.png`, … when the name is taken.
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let path = (1..10_000)
        .map(|k| dir.join(if k == 1 { name.to_owned() } else { format!("{stem}-{k}.{ext}") }))
        .find(|p| !p.exists())
        .unwrap_or_else(|| dir.join(name));
    match std::fs::create_dir_all(dir).and_then(|()| crate::source::disk::write_atomically(&path, bytes)) {
        Ok(()) => say(said, format!("{why}; saved to {}", crate::analysis::shown_path(&path.display().to_string()))),
        Err(err) => say(said, format!("{why}, and {} could not be written: {err}", path.display())),
    }
}

impl VantageApp {
    /// Opens a run the server lists (web); natively the app opens paths, and says so.
    fn open_server_run(&mut self, url: &str, follow: bool, ctx: &egui::Context) {
        if let Some(list) = &mut self.server {
            list.window_open = false;
        }
        #[cfg(target_arch = "wasm32")]
        {
            self.follow_on_load = follow;
            let c = ctx.clone();
            self.loads.start_url(url.to_owned(), move || c.request_repaint());
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let _: &egui::Context = ctx;
            self.notifications.push(format!("{url}: open it in the page vantage serve sends (follow: {follow})"));
        }
    }
}

/// The seconds since the Unix epoch now (0 when the clock is before it).
fn unix_now() -> u64 {
    web_time::SystemTime::now().duration_since(web_time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// An export's file name: `parts` (the run's file name without its folders and extension, the view
/// or the schemes), each cut to the letters, digits, `-` and `_` a file name keeps everywhere, then
/// the UTC time `YYYYMMDD-HHMMSS` of `unix_seconds`, and `.ext`: two exports of the same run and
/// view a second apart never share a name.
pub fn export_name(parts: &[&str], ext: &str, unix_seconds: u64) -> String {
    let clean = |part: &str| -> String {
        let base = part.rsplit(['/', '\\']).next().unwrap_or(part);
        let base = base.split_once(" (").map_or(base, |(b, _)| b);
        let base = [".jsonl", ".json", ".parquet", ".eval", ".gz", ".zst"]
            .iter()
            .fold(base, |b, e| b.strip_suffix(e).unwrap_or(b));
        let kept: String =
            base.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        kept.trim_matches('_').chars().take(48).collect()
    };
    let mut name: Vec<String> = parts.iter().map(|p| clean(p)).filter(|p| !p.is_empty()).collect();
    let [year, month, day, hour, minute, second] = utc(unix_seconds);
    name.push(format!("{year:04}{month:02}{day:02}-{hour:02}{minute:02}{second:02}"));
    format!("{}.{ext}", name.join("_"))
}

/// The UTC year, month, day, hour, minute and second of `unix_seconds`: the civil date from the days
/// since 1970-01-01 (Howard Hinnant's algorithm), written here: the date crates in the tree (chrono
/// through polars, jiff through `env_logger`) are native-only, and exports are named on the web too.
pub fn utc(unix_seconds: u64) -> [i64; 6] {
    let (days, secs) = ((unix_seconds / 86_400) as i64, (unix_seconds % 86_400) as i64);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    [year, month, day, secs / 3600, secs / 60 % 60, secs % 60]
}

/// Saves `bytes` where the user picks: a native dialog on a worker thread, or the browser's save
/// dialog (a download) on the web. With `$VANTAGE_EXPORT_DIR` set, or when no dialog can open
/// (the dialog returns at once, as on a machine without a desktop portal), the file goes to the
/// fallback directory instead; either way a notice (sent on `said`) says where it went or why it
/// did not.
pub fn save_file(suggested_name: &str, bytes: Vec<u8>, said: &std::sync::mpsc::Sender<String>) {
    let name = suggested_name.to_owned();
    #[cfg(not(target_arch = "wasm32"))]
    {
        if std::env::var_os("VANTAGE_EXPORT_DIR").is_some() {
            save_to_fallback(&name, &bytes, "exported", said);
            return;
        }
        let dialog_said = said.clone();
        let spawned = std::thread::Builder::new().name("save dialog".to_owned()).spawn(move || {
            let said = dialog_said;
            let asked = std::time::Instant::now();
            match rfd::FileDialog::new().set_file_name(&name).save_file() {
                Some(path) => match crate::source::disk::write_atomically(&path, &bytes) {
                    Ok(()) => say(&said, format!("saved {}", crate::analysis::shown_path(&path.display().to_string()))),
                    Err(err) => say(&said, format!("could not write {}: {err}", path.display())),
                },
                // Back within a moment: no dialog could open (a person takes longer to cancel).
                None if asked.elapsed() < std::time::Duration::from_millis(300) => {
                    save_to_fallback(&name, &bytes, "no save dialog could open", &said);
                }
                None => {}
            }
        });
        if let Err(err) = spawned {
            say(said, format!("could not start the save dialog: {err}"));
        }
    }
    #[cfg(target_arch = "wasm32")]
    let said = said.clone();
    #[cfg(target_arch = "wasm32")]
    wasm_bindgen_futures::spawn_local(async move {
        if let Some(handle) = rfd::AsyncFileDialog::new().set_file_name(&name).save_file().await
            && let Err(err) = handle.write(&bytes).await
        {
            say(&said, format!("could not save {name}: {err}"));
        }
    });
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    #[test]
    fn exports_are_named_by_run_view_and_time() {
        // 2026-12-05 17:54:04 UTC.
        let t = 1_796_493_244;
        assert_eq!(
            super::export_name(&["../data/run_folder/alfworld_roles.jsonl", "Group"], "png", t),
            "alfworld_roles_Group_20261205-175404.png"
        );
        assert_eq!(
            super::export_name(&["demo_run.jsonl (bundled sample)", "grpo", "vs", "formula \"adv\""], "csv", 0),
            "demo_run_grpo_vs_formula__adv_19700101-000000.csv"
        );
        assert_ne!(super::export_name(&["r", "Group"], "png", t), super::export_name(&["r", "Group"], "png", t + 1));
    }

    #[test]
    fn a_fallback_export_never_replaces_an_earlier_one() {
        let dir = std::env::temp_dir().join(format!("vantage-exports-{}", std::process::id()));
        let (sender, receiver) = std::sync::mpsc::channel();
        super::save_into(&dir, "view.png", b"one", "exported", &sender);
        super::save_into(&dir, "view.png", b"two", "exported", &sender);
        assert_eq!(std::fs::read(dir.join("view.png")).unwrap(), b"one");
        assert_eq!(std::fs::read(dir.join("view-2.png")).unwrap(), b"two");
        let said: Vec<String> = receiver.try_iter().collect();
        assert!(said[1].ends_with("view-2.png"), "{said:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_atomic_write_leaves_the_whole_file_and_no_temporary() {
        let dir = std::env::temp_dir().join(format!("vantage-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.csv");
        std::fs::write(&path, b"old").unwrap();
        crate::source::disk::write_atomically(&path, b"new contents").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new contents");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 1, "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
