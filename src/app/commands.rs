//! Commands views push (select, walk, bookmark, export, …), applied in one place each frame.

use super::VantageApp;
use super::state::{Bookmark, Tab};
use crate::model::{GroupId, TrajectoryId};

/// Something a view asks the app to do.
#[derive(Clone, Copy, Debug, PartialEq)]
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
            Command::ExportCsv => self.export_csv(),
            Command::ExportPng => {
                ctx.request_screenshot(|image| {
                    let bytes = super::png::encode_rgba(image.width() as u32, image.height() as u32, image.as_raw());
                    save_file("vantage_view.png", bytes);
                });
            }
            other => {
                if let Some(open) = self.current_mut() {
                    select(open, other);
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
        };
        let marks = &mut self.state.bookmarks;
        match marks.iter().position(|m| *m == mark) {
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
        save_file("vantage_credit.csv", csv.into_bytes());
    }
}

/// Selection commands on the current run.
fn select(open: &mut super::OpenRun, command: Command) {
    let tr = &open.run.trajectories;
    match command {
        Command::SelectGroup(g) => open.select_group(g),
        Command::SelectTrajectory(t) => open.select_trajectory(t),
        Command::SelectStep(p) => open.select_position(p),
        Command::StepBy(delta) => {
            let (Some(t), Some(p)) = (open.selection.trajectory, open.selection.position) else { return };
            let range = tr.path_range(t);
            let next = (p as i64 + i64::from(delta)).clamp(range.start as i64, range.end as i64 - 1);
            open.select_position(next.max(0) as usize);
        }
        Command::RolloutBy(delta) => {
            let (Some(g), Some(t)) = (open.selection.group, open.selection.trajectory) else { return };
            let step = open.selected_step_index().unwrap_or(0);
            let members = open.run.groups.members(g);
            let Some(i) = members.iter().position(|&m| m == t) else { return };
            let j = (i as i64 + i64::from(delta)).clamp(0, members.len() as i64 - 1) as usize;
            let other = members[j];
            let range = tr.path_range(other);
            open.select_position((range.start + step).min(range.end.saturating_sub(1)));
        }
        _ => {}
    }
}

/// Saves `bytes` where the user picks: a native dialog on a worker thread, or the browser's save
/// dialog (a download) on the web.
pub fn save_file(suggested_name: &str, bytes: Vec<u8>) {
    let name = suggested_name.to_owned();
    #[cfg(not(target_arch = "wasm32"))]
    {
        let spawned = std::thread::Builder::new().name("save dialog".to_owned()).spawn(move || {
            if let Some(path) = rfd::FileDialog::new().set_file_name(&name).save_file()
                && let Err(err) = std::fs::write(&path, &bytes)
            {
                log::error!("could not write {}: {err}", path.display());
            }
        });
        if let Err(err) = spawned {
            log::error!("could not start the save dialog thread: {err}");
        }
    }
    #[cfg(target_arch = "wasm32")]
    wasm_bindgen_futures::spawn_local(async move {
        if let Some(handle) = rfd::AsyncFileDialog::new().set_file_name(&name).save_file().await
            && let Err(err) = handle.write(&bytes).await
        {
            log::error!("could not save {name}: {err}");
        }
    });
}
