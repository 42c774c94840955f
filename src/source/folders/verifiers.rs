//! A prime-rl or verifiers run: its episode stream and annotations, or its per-step traces.

use std::path::{Path, PathBuf};

use super::accepts;
use super::{FolderFormat, Reading, any_head};
use crate::source::listing::list_dir;

/// The format.
pub static FORMAT: FolderFormat = FolderFormat {
    name: "verifiers",
    list: files,
    holds: |_, files| files.first().is_some_and(|(_, p)| accepts(p, crate::load::formats::verifiers::accepts)),
    reading: Reading::Lines { stream: crate::load::formats::verifiers::stream, first_file: any_head },
};

/// Which files make a verifiers run (`load::formats::verifiers`) of a directory, in the order they are read:
/// prime-rl's episode stream (`stream.jsonl`, or the plain chunks of `stream/`, in the directory,
/// its `traces/` or its `monitors/file/traces/`) and then its producers' annotations
/// (`annotations/<producer>.jsonl` or `annotations/<producer>/NNNNN.jsonl`, folded onto the
/// episodes), a verifiers eval's `traces.jsonl`, or prime-rl's earlier per-step files
/// (`[rollouts/]step_N/{train,eval}/all/traces.jsonl`, by step, training before eval). The others
/// are named: the indexes, zstd-sealed chunks, the `effective` subsets (the episodes trained on,
/// which `all` holds too).
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    // A chunked stream's plain chunks, `NNNNN.jsonl`, by number.
    let chunks = |d: &Path| list_dir(d, |p| p.file_name()?.to_str()?.strip_suffix(".jsonl")?.parse().ok()).0;
    for traces in [dir.to_path_buf(), dir.join("traces"), dir.join("monitors/file/traces")] {
        let stream: Vec<(u64, PathBuf)> = if traces.join("stream.jsonl").is_file() {
            vec![(0, traces.join("stream.jsonl"))]
        } else if traces.join("traces.jsonl").is_file() {
            vec![(0, traces.join("traces.jsonl"))]
        } else {
            chunks(&traces.join("stream"))
        };
        if stream.is_empty() {
            continue;
        }
        let mut files = stream;
        let annotations = traces.join("annotations");
        let mut producers: Vec<PathBuf> =
            std::fs::read_dir(&annotations).into_iter().flatten().flatten().map(|e| e.path()).collect();
        producers.sort();
        for (k, producer) in producers.iter().enumerate() {
            let base = (1 << 40) + ((k as u64) << 24);
            if producer.is_dir() {
                files.extend(chunks(producer).into_iter().map(|(n, p)| (base + n, p)));
            } else if producer
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".jsonl") && !n.ends_with(".index.jsonl"))
            {
                files.push((base, producer.clone()));
            }
        }
        let mut others = Vec::new();
        for d in [traces.clone(), traces.join("stream"), annotations] {
            for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_file() && !files.iter().any(|(_, f)| *f == path) {
                    others.push(path.strip_prefix(&traces).unwrap_or(&path).display().to_string());
                }
            }
        }
        others.sort();
        return (files, others);
    }
    let rollouts = if dir.join("rollouts").is_dir() { dir.join("rollouts") } else { dir.to_path_buf() };
    let (mut files, mut others) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(&rollouts).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(step) = name.strip_prefix("step_").and_then(|n| n.parse::<u64>().ok()) else { continue };
        for (k, kind) in ["train", "eval"].iter().enumerate() {
            let all = entry.path().join(kind).join("all/traces.jsonl");
            if all.is_file() {
                files.push((step * 2 + k as u64, all));
            }
            if entry.path().join(kind).join("effective/traces.jsonl").is_file() {
                others.push(format!("{name}/{kind}/effective/traces.jsonl"));
            }
        }
    }
    files.sort();
    others.sort();
    (files, others)
}
