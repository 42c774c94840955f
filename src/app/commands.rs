//! Commands views push (select, walk, bookmark, export, …), applied in one place each frame.

use super::VantageApp;
use super::state::{Bookmark, Tab};
use crate::model::{GroupId, TrajectoryId};

/// Something a view asks the app to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Select a group (and its first rollout).
    SelectGroup(GroupId),
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
}

impl VantageApp {
    /// Applies one command.
    pub(super) fn apply(&mut self, command: Command, ctx: &egui::Context) {
        match command {
            Command::SelectRun(i) if i < self.runs.len() => self.selected = i,
            Command::CloseRun(i) if i < self.runs.len() => {
                let closed = self.runs.remove(i);
                #[cfg(target_arch = "wasm32")]
                if let Some(remote) = closed.remote {
                    crate::app::credit_worker::release(remote);
                }
                drop(closed);
                self.selected = self.selected.min(self.runs.len().saturating_sub(1));
            }
            Command::ToggleMeetingMode => {
                self.state.meeting_mode = !self.state.meeting_mode;
                if self.state.meeting_mode && self.state.tab == Tab::Summary {
                    self.state.tab = Tab::Compare;
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
                ctx.request_screenshot(move |image| {
                    match super::png::encode_rgba(image.width() as u32, image.height() as u32, image.as_raw()) {
                        Ok(bytes) => save_file("vantage_view.png", bytes, &said),
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
            other => {
                if let Some(open) = self.current_mut() {
                    select(open, &other);
                }
            }
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

    fn go_to_bookmark(&mut self, i: usize) {
        let Some(mark) = self.state.bookmarks.get(i).cloned() else { return };
        let Some(run_index) = self.runs.iter().position(|r| r.run.meta.name == mark.run_name) else {
            self.notifications.push(format!("bookmark: run {} is not open", mark.run_name));
            return;
        };
        self.selected = run_index;
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
        save_file("vantage_credit.csv", csv.into_bytes(), &self.saves.sender);
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
    let dir = fallback_dir();
    let path = dir.join(name);
    match std::fs::create_dir_all(&dir).and_then(|()| crate::source::disk::write_atomically(&path, bytes)) {
        Ok(()) => say(said, format!("{why}; saved to {}", path.display())),
        Err(err) => say(said, format!("{why}, and {} could not be written: {err}", path.display())),
    }
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
                    Ok(()) => say(&said, format!("saved {}", path.display())),
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
