//! What a directory holds (native): whether it is a v2 dataset, its files listed in step order
//! (the folder formats' listers build on `list_dir`), and a file's first bytes. Which folder format
//! a directory holds is [`super::folders`].

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Whether `path` is a vantage Parquet v2 dataset: a directory with a `manifest.json`.
pub fn is_v2_dataset(path: &Path) -> bool {
    path.is_dir() && path.join(crate::load::formats::vantage_v2::MANIFEST).is_file()
}

/// The files of a directory that `step` gives a step number, in step order, and the names of the
/// others, sorted.
pub(crate) fn list_dir(dir: &Path, mut step: impl FnMut(&Path) -> Option<u64>) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let (mut files, mut others) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match step(&path).filter(|_| path.is_file()) {
            Some(step) => files.push((step, path)),
            None => others.push(entry.file_name().to_string_lossy().into_owned()),
        }
    }
    files.sort();
    others.sort();
    (files, others)
}

/// The first bytes of a file, enough to tell its format: eight lines, at most 4 MiB (fewer when
/// it is shorter or unreadable).
pub(crate) fn head(path: &Path) -> Vec<u8> {
    let mut head = Vec::new();
    let Ok(mut file) = std::fs::File::open(path) else { return head };
    let mut lines = 0;
    while head.len() < 4 << 20 && lines < 8 {
        let from = head.len();
        match (&mut file).take(1 << 16).read_to_end(&mut head) {
            Ok(0) | Err(_) => break,
            Ok(_) => lines += head[from..].iter().filter(|&&b| b == b'\n').count(),
        }
    }
    head
}
