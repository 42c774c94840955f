//! An OpenPipe ART split's trajectory logs: `trajectories/{split}/{step:04d}.parquet` (or `.yaml`).

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading, any_files};
use crate::source::listing::list_dir;

/// The format.
pub static FORMAT: FolderFormat = FolderFormat {
    name: "art",
    list: files,
    holds: any_files,
    reading: Reading::Files(|name| Some(Box::new(crate::load::formats::art::ArtRun::new(name)))),
};

/// Which files of a directory are an ART split's trajectory logs: in `…/trajectories/{split}/`,
/// `{step:04d}.parquet` (or `.yaml`, as ART logged before its Parquet logs) by step (ART's
/// `Model.log` layout); none in a folder named otherwise.
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let in_trajectories = dir.parent().and_then(Path::file_name).is_some_and(|n| n == "trajectories");
    let (files, others) = list_dir(dir, |path| {
        let stem = path.file_stem()?.to_str()?;
        let numbered = stem.len() >= 4 && stem.bytes().all(|b| b.is_ascii_digit());
        let logged = path.extension().is_some_and(|e| e == "parquet" || e == "yaml");
        (logged && numbered).then(|| stem.parse().ok()).flatten()
    });
    if in_trajectories { (files, others) } else { (Vec::new(), others) }
}
