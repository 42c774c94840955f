//! The folder rule: what a folder that is not itself one run holds, classified once here for every
//! opener (the command line, the app's Open folder, drop and recent list, and the web build's
//! picked or dropped folder). The names are told apart on both platforms; reading a folder on
//! disk ([`read`]) is native, the web's picked folder is read by `super::web_folder`.
//!
//! - logs are loaded, each as a run: files with a log extension, and the directories below that
//!   are one run each (a verl, NeMo-RL, prime-rl or TRL directory, a v2 dataset, a slime dump, a
//!   run of trajectories and their results files);
//! - results files (`load::formats::outcomes`) are joined to the runs beside them;
//! - known sidecars (configs, metadata, summaries, READMEs, checkpoints, reports, lock files, text
//!   logs, scripts) are named as skipped in one note line, and so is anything else no loader
//!   takes (a log file that no loader recognises is added to the note by the opener, which finds
//!   out by reading it).
//!
//! Nothing here reads more than a results file's head: what a log holds is the loaders' to say.

#[cfg(not(target_arch = "wasm32"))]
use std::path::Path;
use std::path::PathBuf;

use crate::load::formats::outcomes::Outcomes;

/// At most this many entries of a folder are looked at (a folder of a million files is named as
/// such, not walked to its end).
const MAX_ENTRIES: usize = 100_000;

/// vantage's own directory beside the runs (never a run): `vantage serve`'s converted copies,
/// and the runs' labels (`labels/`).
pub const CONVERTED_DIR: &str = ".vantage";

/// At most this many skipped files are named in the note (then how many more).
const NAMED: usize = 24;

/// What a folder holds.
#[derive(Debug, Default)]
pub struct Folder {
    /// The logs to open, each a run (a file, or a directory that is one run), sorted.
    pub logs: Vec<PathBuf>,
    /// Results files, whose outcomes are joined to the runs.
    pub results: Vec<(PathBuf, Outcomes)>,
    /// What was skipped: the name (relative to the folder) and what it is, in words.
    pub skipped: Vec<(String, &'static str)>,
    /// Whether entries were left unlooked at (past the first 100 000).
    pub unvisited: bool,
}

#[cfg(not(target_arch = "wasm32"))]
/// Whether `path` is a folder the folder rule opens: a directory that is not itself one run
/// (not a verl, NeMo-RL, prime-rl or TRL directory, a v2 dataset, a slime dump, nor a run of
/// trajectories and their results files).
pub fn is_plain(path: &Path) -> bool {
    path.is_dir() && !is_one_run(path)
}

#[cfg(not(target_arch = "wasm32"))]
/// Whether the directory `dir` is one run by itself (a run of trajectories and results files
/// only when it holds a log besides its results files: `logs/<instance>/report.json` alone is
/// part of the run above it).
pub fn is_one_run(dir: &Path) -> bool {
    super::folders::of_dir(dir).is_some()
        || super::listing::is_v2_dataset(dir)
        || super::slime::is_slime_dump(dir)
        || (super::joined::is_joined_run(dir)
            && super::joined::log_files(dir).iter().any(|p| super::joined::results_file(dir, p).is_none()))
}

#[cfg(not(target_arch = "wasm32"))]
/// Reads what `dir` holds (below it too): see the module documentation. With `runs_below`, a
/// directory below that is one run is one log; without, its files are classified one by one (the
/// files of a run of trajectories and their results files).
pub fn read(dir: &Path, runs_below: bool) -> Folder {
    let mut folder = Folder::default();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else { continue };
        let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                folder.unvisited = true;
                stack.clear();
                break;
            }
            let shown = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
            let name = path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
            if path.is_dir() {
                if let Some(kind) = sidecar_dir(&name) {
                    folder.skipped.push((format!("{shown}/"), kind));
                } else if runs_below && is_one_run(&path) {
                    folder.logs.push(path);
                } else {
                    stack.push(path);
                }
                continue;
            }
            if let Some(outcomes) = super::joined::results_file(dir, &path) {
                folder.results.push((path, outcomes));
            } else if let Some(kind) = sidecar_file(&name, &path) {
                folder.skipped.push((shown, kind));
            } else if is_log_name(&name) {
                folder.logs.push(path);
            } else {
                folder.skipped.push((shown, "not a log"));
            }
        }
    }
    folder.logs.sort();
    folder.skipped.sort();
    folder
}

impl Folder {
    /// The one note line naming what was skipped in the folder `name` (`None` when nothing was),
    /// with `failed` (logs that did not load, each `(file, why)`, named relative to the folder)
    /// among them.
    pub fn note(&self, name: &str, failed: &[(String, String)]) -> Option<String> {
        let mut skipped: Vec<(String, String)> =
            self.skipped.iter().map(|(name, kind)| (name.clone(), (*kind).to_owned())).collect();
        skipped.extend(failed.iter().cloned());
        if skipped.is_empty() && !self.unvisited {
            return None;
        }
        let mut line = skipped_note(name, &skipped);
        if self.unvisited {
            line.push_str(&format!("; entries past the first {MAX_ENTRIES} not looked at"));
        }
        Some(line)
    }
}

/// One line for the files skipped in the folder `name` (each `(file, why)`), by reason, most
/// first, a few of each named: "skipped 125 files in run/ that are not logs: 80 configuration
/// (a.yaml, b.yaml, c.yaml, …), 40 not a log (…)". A folder of many files is one line, not a wall.
pub fn skipped_note(name: &str, skipped: &[(String, String)]) -> String {
    let mut by_reason: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for (file, why) in skipped {
        by_reason.entry(why.as_str()).or_default().push(file.as_str());
    }
    let mut reasons: Vec<(&str, Vec<&str>)> = by_reason.into_iter().collect();
    reasons.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    // A dozen names in all (at least two of each reason, at most eight of one).
    let each = (NAMED / 2 / reasons.len().max(1)).clamp(2, 8);
    let parts: Vec<String> = reasons
        .iter_mut()
        .map(|(why, files)| {
            files.sort_unstable();
            let mut named = files.iter().take(each).copied().collect::<Vec<_>>().join(", ");
            if files.len() > each {
                named.push_str(", …");
            }
            format!("{} {why} ({named})", files.len())
        })
        .collect();
    format!("skipped {} file(s) in {name}/ that are not logs: {}", skipped.len(), parts.join(", "))
}

/// Whether a file's name (lower case) has a log's extension.
pub fn is_log_name(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(_, ext)| super::LOG_EXTENSIONS.contains(&ext))
}

/// What a directory named `name` (lower case) is when it is a known sidecar: checkpoints,
/// configuration, caches, version control.
pub fn sidecar_dir(name: &str) -> Option<&'static str> {
    let checkpoint = ["checkpoint", "ckpt", "global_step", "actor", "critic", "hf_model", "huggingface"];
    if checkpoint.iter().any(|p| name.starts_with(p)) {
        return Some("checkpoints");
    }
    match name {
        ".hydra" | "configs" | "config" => Some("configuration"),
        ".git" | ".svn" | ".hg" => Some("version control"),
        "__pycache__" | ".cache" | "cache" | ".ipynb_checkpoints" => Some("cache"),
        CONVERTED_DIR => Some("vantage's converted copies and labels"),
        "scans" => Some("Inspect Scout scans (labels of the Inspect logs beside them)"),
        "wandb" | "tensorboard" | "tb_logs" | "runs" | "mlruns" => Some("experiment tracker files"),
        _ => None,
    }
}

/// What a file named `name` (lower case) at `path` is when it is a known sidecar: by its name
/// ([`sidecar_name`]), or NeMo Gym's failed rollouts beside its rollouts (the run's notes count them).
#[cfg(not(target_arch = "wasm32"))]
fn sidecar_file(name: &str, path: &Path) -> Option<&'static str> {
    let failures = name.strip_suffix("_failures.jsonl");
    if failures.is_some_and(|rollouts| path.with_file_name(format!("{rollouts}.jsonl")).is_file()) {
        return Some("NeMo Gym failures");
    }
    sidecar_name(name)
}

/// What a file named `name` (lower case) is when its name says it is a known sidecar.
pub fn sidecar_name(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    if name.starts_with("readme") || name.starts_with("license") || name.starts_with("changelog") {
        return Some("readme");
    }
    let configs = [
        "config",
        "configuration",
        "args",
        "hparams",
        "hyperparameters",
        "params",
        "settings",
        "generation_config",
        "special_tokens_map",
        "tokenizer",
        "tokenizer_config",
        "trainer_state",
        "training_args",
        "adapter_config",
        "model_index",
    ];
    if ext == "json" && (configs.contains(&stem) || stem.ends_with("_config") || stem.ends_with("-config")) {
        return Some("configuration");
    }
    let metadata = ["metadata", "meta", "info", "env", "environment", "system_info", "versions", "git_info"];
    if ext == "json" && (metadata.contains(&stem) || stem.ends_with("_metadata") || stem.ends_with("_meta")) {
        return Some("metadata");
    }
    let summaries = ["summary", "metrics", "stats", "statistics", "scores", "eval_results", "all_results", "result"];
    if ext == "json"
        && (summaries.contains(&stem)
            || stem.ends_with("_summary")
            || stem.ends_with("_metrics")
            || stem.ends_with("_stats"))
    {
        return Some("summary");
    }
    if ext == "json" && matches!(stem, "preds" | "predictions" | "all_preds") {
        return Some("predictions");
    }
    let kind = match ext {
        "yaml" | "yml" | "toml" | "ini" | "cfg" | "conf" | "env" => "configuration",
        "md" | "rst" | "org" => "readme",
        "txt" => "text",
        "pt" | "pth" | "ckpt" | "safetensors" | "bin" | "gguf" | "npz" | "npy" | "pkl" | "pickle" | "h5" | "onnx" => {
            "checkpoint"
        }
        "html" | "htm" | "pdf" => "report",
        "png" | "jpg" | "jpeg" | "gif" | "svg" | "webp" | "mp4" => "image",
        "lock" | "pid" => "lock file",
        "log" | "out" | "err" => "text log",
        "py" | "sh" | "ipynb" | "slurm" | "sbatch" => "script",
        "csv" | "tsv" | "xlsx" => "table",
        "diff" | "patch" => "patch",
        _ if name == "lock" || name.ends_with(".lock") => "lock file",
        _ if name.starts_with('.') => "hidden file",
        _ => return None,
    };
    Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecars_are_told_by_name_and_logs_by_extension() {
        for (name, kind) in [
            ("config.json", "configuration"),
            ("run_config.json", "configuration"),
            ("config.yaml", "configuration"),
            ("metadata.json", "metadata"),
            ("results_summary.json", "summary"),
            ("readme.md", "readme"),
            ("model.safetensors", "checkpoint"),
            ("report.html", "report"),
            ("uv.lock", "lock file"),
            ("train.log", "text log"),
            ("preds.json", "predictions"),
        ] {
            assert_eq!(sidecar_name(name), Some(kind), "{name}");
        }
        for name in ["rollouts.jsonl", "g1_answer.json", "run.eval", "step_3.parquet"] {
            assert_eq!(sidecar_name(name), None, "{name}");
            assert!(is_log_name(name), "{name}");
        }
        assert_eq!(sidecar_dir("checkpoint-500"), Some("checkpoints"));
        assert_eq!(sidecar_dir("answer"), None);
    }

    #[test]
    fn the_note_names_each_skipped_file_once_and_counts_the_rest() {
        let folder = Folder {
            skipped: (0..30).map(|i| (format!("f{i:02}.yaml"), "configuration")).collect(),
            ..Folder::default()
        };
        let note = folder.note("run", &[("q.json".to_owned(), "no loader recognises it".to_owned())]).unwrap();
        assert_eq!(
            note,
            "skipped 31 file(s) in run/ that are not logs: 30 configuration (f00.yaml, f01.yaml, f02.yaml, f03.yaml, \
             f04.yaml, f05.yaml, …), 1 no loader recognises it (q.json)"
        );
        assert_eq!(Folder::default().note("run", &[]), None);
        // 125 files of three kinds: one line, by reason, a few of each named.
        let many: Vec<(String, String)> = (0..125)
            .map(|i| (format!("f{i:03}"), ["configuration", "not a log", "checkpoints"][i % 3].to_owned()))
            .collect();
        let line = skipped_note("run", &many);
        assert!(line.starts_with("skipped 125 file(s) in run/ that are not logs: 42 configuration (f000, "), "{line}");
        assert!(line.contains("), 42 not a log (f001, ") && line.contains("), 41 checkpoints (f002, "), "{line}");
        assert!(line.len() < 400, "{line}");
    }
}
