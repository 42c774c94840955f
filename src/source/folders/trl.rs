//! TRL completions: `completions_<step>.parquet` files, or a `completions/` folder of them.

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading};
use crate::source::listing::list_dir;

/// The format.
pub static FORMAT: FolderFormat = FolderFormat { name: "trl", list: files, holds, reading: Reading::Files(run) };

/// A folder of `completions*.parquet` files, or any Parquet files in a folder named `completions`.
fn holds(dir: &Path, files: &[(u64, PathBuf)]) -> bool {
    let named = |p: &PathBuf| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("completions"));
    let is_completions_dir = dir.file_name().is_some_and(|n| n == "completions");
    !files.is_empty() && (is_completions_dir || files.iter().all(|(_, p)| named(p)))
}

/// The run its files make (none without the Parquet readers).
#[cfg_attr(
    feature = "parquet",
    expect(clippy::unnecessary_wraps, reason = "Reading::Files takes None from a build without Parquet")
)]
fn run(name: &str) -> Option<Box<dyn crate::load::FileRun>> {
    #[cfg(feature = "parquet")]
    return Some(Box::new(crate::load::formats::trl_parquet::TrlRun::new(name)));
    #[cfg(not(feature = "parquet"))]
    {
        let _: &str = name;
        None
    }
}

/// Which files of a directory are TRL completions: `*.parquet`, by the step in their name.
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let digits: String = stem.chars().filter(char::is_ascii_digit).collect();
        path.extension().is_some_and(|e| e == "parquet").then(|| digits.parse().unwrap_or(u64::MAX))
    })
}
