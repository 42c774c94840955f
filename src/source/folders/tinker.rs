//! A tinker-cookbook RL log directory: `iteration_NNNNNN/train_rollout_summaries.jsonl`.

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading, any_files, any_head};

/// The format.
pub static FORMAT: FolderFormat = FolderFormat {
    name: "tinker",
    list: files,
    holds: any_files,
    reading: Reading::Lines { stream: crate::load::formats::tinker::stream, first_file: any_head },
};

/// Which files of a directory are a tinker-cookbook RL run: the training batches' rollout summaries,
/// `iteration_NNNNNN/train_rollout_summaries.jsonl`, by iteration; the others are named (an
/// evaluator's `eval_<name>_rollout_summaries.jsonl` is a run of its own, the logtrees, the
/// config and the metrics are not rollouts).
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let (mut files, mut others) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let iteration = name.strip_prefix("iteration_").and_then(|n| n.parse::<u64>().ok());
        let (Some(iteration), true) = (iteration, entry.path().is_dir()) else {
            others.push(name);
            continue;
        };
        let train = entry.path().join("train_rollout_summaries.jsonl");
        for inner in std::fs::read_dir(entry.path()).into_iter().flatten().flatten() {
            if inner.path() != train {
                others.push(format!("{name}/{}", inner.file_name().to_string_lossy()));
            }
        }
        if train.is_file() {
            files.push((iteration, train));
        }
    }
    files.sort();
    others.sort();
    (files, others)
}
