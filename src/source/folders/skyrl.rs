//! SkyRL dumped evals: `dumped_evals/global_step_{N}_evals/<data_source>.jsonl`.

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading, any_files, any_head};
use crate::load::LoadReport;
use crate::load::lines::LineFeed;
use crate::source::listing::head;

/// The format.
pub static FORMAT: FolderFormat = FolderFormat {
    name: "skyrl",
    list: files,
    holds: any_files,
    reading: Reading::Lines { stream, first_file: any_head },
};

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    Box::new(crate::load::formats::skyrl::stream(name, report))
}

/// Which files of a directory are SkyRL dumped evals: in `dumped_evals/`, each step folder's
/// `global_step_{N}_evals/<data_source>.jsonl` by `N` (then `eval_only/`'s), or a step folder's own
/// files; the others are named (`aggregated_results.jsonl` is the metrics, not samples).
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let step_of = |name: &str| match name {
        "eval_only" => Some(u64::MAX),
        _ => name.strip_prefix("global_step_")?.strip_suffix("_evals")?.parse::<u64>().ok(),
    };
    let samples =
        |folder: &Path, step: u64, prefix: &str, files: &mut Vec<(u64, PathBuf)>, others: &mut Vec<String>| {
            for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.ends_with(".jsonl") && name != "aggregated_results.jsonl" && entry.path().is_file() {
                    files.push((step, entry.path()));
                } else {
                    others.push(format!("{prefix}{name}"));
                }
            }
        };
    let (mut files, mut others) = (Vec::new(), Vec::new());
    let own = dir.file_name().and_then(|n| n.to_str()).and_then(step_of);
    if let Some(step) = own {
        samples(dir, step, "", &mut files, &mut others);
    } else {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            match step_of(&name).filter(|_| entry.path().is_dir()) {
                Some(step) => samples(&entry.path(), step, &format!("{name}/"), &mut files, &mut others),
                None => others.push(name),
            }
        }
    }
    // Only when they are SkyRL samples: a folder of other logs in step folders is not this run.
    if files
        .first()
        .is_none_or(|(_, p)| !crate::load::formats::skyrl::accepts(&crate::load::lines::head_text(&head(p))))
    {
        let named = files.drain(..).filter_map(|(_, p)| p.strip_prefix(dir).ok().map(|p| p.display().to_string()));
        others.extend(named.collect::<Vec<_>>());
    }
    files.sort();
    others.sort();
    (files, others)
}
