//! A verl rollout dump: `<step>.jsonl` files (numbered files of another format are one log of that format).

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading, any_files};
use crate::load::LoadReport;
use crate::load::lines::LineFeed;
use crate::source::listing::list_dir;

/// The format.
pub static FORMAT: FolderFormat = FolderFormat {
    name: "verl",
    list: files,
    holds: any_files,
    reading: Reading::Lines { stream, first_file: crate::load::formats::verl_dump::accepts },
};

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    Box::new(crate::load::formats::verl_dump::stream(name, report))
}

/// Which files of a directory are a verl dump: `<step>.jsonl`, by step.
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let step = path.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse::<u64>().ok());
        step.filter(|_| path.extension().is_some_and(|e| e == "jsonl"))
    })
}
