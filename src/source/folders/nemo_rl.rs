//! A NeMo-RL log directory: `train_data_step{N}.jsonl` files.

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading, any_files, any_head};
use crate::load::LoadReport;
use crate::load::lines::LineFeed;
use crate::source::listing::list_dir;

/// The format.
pub static FORMAT: FolderFormat = FolderFormat {
    name: "nemo_rl",
    list: files,
    holds: any_files,
    reading: Reading::Lines { stream, first_file: any_head },
};

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    Box::new(crate::load::formats::nemo_rl::stream(name, report))
}

/// Which files of a directory are a NeMo-RL training dump: `train_data_step{N}.jsonl`, by step
/// (validation dumps, `val_data_step{N}.jsonl`, are runs of their own and left out).
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let name = path.file_name().and_then(|n| n.to_str())?;
        let (step, train) = crate::load::formats::nemo_rl::step_of_name(name)?;
        u64::try_from(step).ok().filter(|_| train)
    })
}
