//! One open-instruct run's rollout shards: `{run_name}_rollouts_{shard:06d}.jsonl`.

use std::path::{Path, PathBuf};

use super::accepts;
use super::{FolderFormat, Reading, any_head};
use crate::source::listing::list_dir;

/// The format.
pub static FORMAT: FolderFormat = FolderFormat {
    name: "open_instruct",
    list: files,
    holds: |_, files| files.first().is_some_and(|(_, p)| accepts(p, crate::load::formats::open_instruct::accepts)),
    reading: Reading::Lines { stream: crate::load::formats::open_instruct::stream, first_file: any_head },
};

/// Which files of a directory are one open-instruct run's rollout shards,
/// `{run_name}_rollouts_{shard:06d}.jsonl`, by shard; none when it holds the shards of several
/// runs (each file is then a run, by the folder rule). `{run_name}_metadata.jsonl` is named.
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let mut runs = std::collections::BTreeSet::new();
    let (mut files, mut others) = list_dir(dir, |path| {
        let name = path.file_name().and_then(|n| n.to_str())?;
        let (run, shard) = crate::load::formats::open_instruct::shard_of_name(name)?;
        runs.insert(run.to_owned());
        Some(shard)
    });
    if runs.len() != 1 {
        others.extend(files.drain(..).filter_map(|(_, p)| Some(p.file_name()?.to_string_lossy().into_owned())));
        others.sort();
    }
    (files, others)
}
