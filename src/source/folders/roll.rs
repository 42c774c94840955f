//! ROLL rollout dumps: `rollout_dump_data.step_{N}.jsonl`.

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading, any_files, any_head};
use crate::source::listing::list_dir;

/// The format.
pub static FORMAT: FolderFormat = FolderFormat {
    name: "roll",
    list: files,
    holds: any_files,
    reading: Reading::Lines { stream: crate::load::formats::roll::stream, first_file: any_head },
};

/// Which files of a directory are ROLL rollout dumps: `rollout_dump_data.step_{N}.jsonl`, by step.
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let name = path.file_name().and_then(|n| n.to_str())?;
        u64::try_from(crate::load::formats::roll::step_of_name(name)?).ok()
    })
}
