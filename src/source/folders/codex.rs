//! Codex CLI's sessions folder (`~/.codex/sessions/`, rollouts filed by date:
//! `YYYY/MM/DD/rollout-<time>-<id>.jsonl`), or any folder of it: its rollouts joined into one run
//! (each session a trajectory), oldest first.

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading};
use crate::source::listing::head;

/// The format.
pub static FORMAT: FolderFormat =
    FolderFormat { name: "codex", list: files, holds: |_, files| !files.is_empty(), reading: Reading::Joined };

/// At most this many rollouts are joined (a sessions folder of years is named as such).
const MAX_FILES: usize = 100_000;

/// The rollouts (`rollout-*.jsonl`) in a directory and the date folders below it (three levels at
/// most), by name (their names start with the time), when the first is a Codex rollout; the
/// directory's other entries.
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let mut found = Vec::new();
    let mut others = Vec::new();
    walk(dir, 0, &mut found, &mut others);
    found.sort_by(|a: &PathBuf, b| a.file_name().cmp(&b.file_name()));
    found.truncate(MAX_FILES);
    let accepted =
        found.first().is_some_and(|p| crate::load::formats::codex::accepts(&crate::load::lines::head_text(&head(p))));
    if !accepted {
        return (Vec::new(), others);
    }
    (found.into_iter().enumerate().map(|(i, p)| (i as u64, p)).collect(), others)
}

fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>, others: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() && depth < 3 && name.bytes().all(|b| b.is_ascii_digit()) {
            walk(&path, depth + 1, found, others);
        } else if path.is_file() && name.starts_with("rollout-") && name.ends_with(".jsonl") {
            found.push(path);
        } else if depth == 0 {
            others.push(name);
        }
    }
}
