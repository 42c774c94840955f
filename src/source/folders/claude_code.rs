//! A Claude Code project folder (`~/.claude/projects/<cwd with / as ->/`): its session files,
//! joined into one run (each session a trajectory).

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading};
use crate::source::listing::{head, list_dir};

/// The format.
pub static FORMAT: FolderFormat =
    FolderFormat { name: "claude_code", list: files, holds: |_, files| files.len() > 1, reading: Reading::Joined };

/// The session files (`*.jsonl`) of a directory, by name, when the first is a Claude Code session
/// (the subagents' folders beside them, `<session>/subagents/`, are not read: each subagent's
/// result is in its caller's session).
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let mut n = 0u64;
    let (mut files, mut others) = list_dir(dir, |path| {
        (path.extension()? == "jsonl").then(|| {
            n += 1;
            n
        })
    });
    // Listed in the directory's order: number them by name.
    files.sort_by(|a, b| a.1.cmp(&b.1));
    for (i, (n, _)) in files.iter_mut().enumerate() {
        *n = i as u64;
    }
    let first = files.first().map(|(_, p)| head(p)).unwrap_or_default();
    if !crate::load::formats::claude_code::accepts(&crate::load::lines::head_text(&first)) {
        others.extend(files.drain(..).filter_map(|(_, p)| Some(p.file_name()?.to_string_lossy().into_owned())));
        others.sort();
    }
    (files, others)
}
