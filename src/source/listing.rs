//! What a directory holds (native): the numbered files of a verl, NeMo-RL, prime-rl or TRL run
//! directory in step order, and which kind of run it is.

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Whether `path` is a vantage Parquet v2 dataset: a directory with a `manifest.json`.
pub fn is_v2_dataset(path: &Path) -> bool {
    path.is_dir() && path.join(crate::load::formats::vantage_v2::MANIFEST).is_file()
}

/// The files of a directory that `step` gives a step number, in step order, and the names of the
/// others, sorted.
pub(crate) fn list_dir(dir: &Path, mut step: impl FnMut(&Path) -> Option<u64>) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let (mut files, mut others) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match step(&path).filter(|_| path.is_file()) {
            Some(step) => files.push((step, path)),
            None => others.push(entry.file_name().to_string_lossy().into_owned()),
        }
    }
    files.sort();
    others.sort();
    (files, others)
}

/// Which files of a directory are a verl dump: `<step>.jsonl`, by step.
pub fn verl_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let step = path.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse::<u64>().ok());
        step.filter(|_| path.extension().is_some_and(|e| e == "jsonl"))
    })
}

/// Which files of a directory are one OpenTelemetry trace file and its rotations, as ROLL's
/// `OTLPReceiver` writes them (`traces.jsonl`, then `traces.1.jsonl`, `traces.2.jsonl`, … every 500
/// export lines), in rotation order; none unless the first is an OTLP trace file and every one
/// shares its name.
pub fn otel_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let mut stem = None::<String>;
    let (mut files, mut others) = list_dir(dir, |path| {
        let name = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
        let (base, index) = match name.rsplit_once('.') {
            Some((base, n)) if n.bytes().all(|b| b.is_ascii_digit()) => (base, n.parse::<u64>().ok()?),
            _ => (name, 0),
        };
        (stem.get_or_insert_with(|| base.to_owned()) == base).then_some(index)
    });
    let first = files.first().map(|(_, p)| head(p)).unwrap_or_default();
    if files.first().is_none_or(|(n, _)| *n != 0)
        || !crate::load::formats::otel::accepts(&crate::load::lines::head_text(&first))
    {
        others.extend(files.drain(..).filter_map(|(_, p)| Some(p.file_name()?.to_string_lossy().into_owned())));
        others.sort();
    }
    (files, others)
}

/// Which files of a directory are a NeMo-RL training dump: `train_data_step{N}.jsonl`, by step
/// (validation dumps, `val_data_step{N}.jsonl`, are runs of their own and left out).
pub fn nemo_rl_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let name = path.file_name().and_then(|n| n.to_str())?;
        let (step, train) = crate::load::formats::nemo_rl::step_of_name(name)?;
        u64::try_from(step).ok().filter(|_| train)
    })
}

/// Which files make a verifiers run (`load::formats::verifiers`) of a directory, in the order they are read:
/// prime-rl's episode stream (`stream.jsonl`, or the plain chunks of `stream/`, in the directory,
/// its `traces/` or its `monitors/file/traces/`) and then its producers' annotations
/// (`annotations/<producer>.jsonl` or `annotations/<producer>/NNNNN.jsonl`, folded onto the
/// episodes), a verifiers eval's `traces.jsonl`, or prime-rl's earlier per-step files
/// (`[rollouts/]step_N/{train,eval}/all/traces.jsonl`, by step, training before eval). The others
/// are named: the indexes, zstd-sealed chunks, the `effective` subsets (the episodes trained on,
/// which `all` holds too).
pub fn verifiers_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
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

/// Which files of a directory are a tinker-cookbook RL run: the training batches' rollout summaries,
/// `iteration_NNNNNN/train_rollout_summaries.jsonl`, by iteration; the others are named (an
/// evaluator's `eval_<name>_rollout_summaries.jsonl` is a run of its own, the logtrees, the
/// config and the metrics are not rollouts).
pub fn tinker_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
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

/// Which files of a directory are SkyRL dumped evals: in `dumped_evals/`, each step folder's
/// `global_step_{N}_evals/<data_source>.jsonl` by `N` (then `eval_only/`'s), or a step folder's own
/// files; the others are named (`aggregated_results.jsonl` is the metrics, not samples).
pub fn skyrl_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
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

/// Which files of a directory are ROLL rollout dumps: `rollout_dump_data.step_{N}.jsonl`, by step.
pub fn roll_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let name = path.file_name().and_then(|n| n.to_str())?;
        u64::try_from(crate::load::formats::roll::step_of_name(name)?).ok()
    })
}

/// Which files of a directory are one open-instruct run's rollout shards,
/// `{run_name}_rollouts_{shard:06d}.jsonl`, by shard; none when it holds the shards of several
/// runs (each file is then a run, by the folder rule). `{run_name}_metadata.jsonl` is named.
pub fn open_instruct_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
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

/// Which files of a directory are an ART split's trajectory logs: in `…/trajectories/{split}/`,
/// `{step:04d}.parquet` (or `.yaml`, as ART logged before its Parquet logs) by step (ART's
/// `Model.log` layout); none in a folder named otherwise.
pub fn art_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let in_trajectories = dir.parent().and_then(Path::file_name).is_some_and(|n| n == "trajectories");
    let (files, others) = list_dir(dir, |path| {
        let stem = path.file_stem()?.to_str()?;
        let numbered = stem.len() >= 4 && stem.bytes().all(|b| b.is_ascii_digit());
        let logged = path.extension().is_some_and(|e| e == "parquet" || e == "yaml");
        (logged && numbered).then(|| stem.parse().ok()).flatten()
    });
    if in_trajectories { (files, others) } else { (Vec::new(), others) }
}

/// Which files of a directory are TRL completions: `*.parquet`, by the step in their name.
pub(crate) fn trl_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let digits: String = stem.chars().filter(char::is_ascii_digit).collect();
        path.extension().is_some_and(|e| e == "parquet").then(|| digits.parse().unwrap_or(u64::MAX))
    })
}

/// The first bytes of a file, enough to tell its format: eight lines, at most 4 MiB (fewer when
/// it is shorter or unreadable).
pub(crate) fn head(path: &Path) -> Vec<u8> {
    let mut head = Vec::new();
    let Ok(mut file) = std::fs::File::open(path) else { return head };
    let mut lines = 0;
    while head.len() < 4 << 20 && lines < 8 {
        let from = head.len();
        match (&mut file).take(1 << 16).read_to_end(&mut head) {
            Ok(0) | Err(_) => break,
            Ok(_) => lines += head[from..].iter().filter(|&&b| b == b'\n').count(),
        }
    }
    head
}

/// What kind of run a directory holds: a verl dump, a NeMo-RL log directory, a prime-rl or
/// verifiers run, a tinker-cookbook log directory, SkyRL dumped evals, ROLL rollout dumps,
/// open-instruct rollout shards, an ART split folder, TRL completions, or none of them.
pub fn directory_kind(dir: &Path) -> Option<&'static str> {
    if !dir.is_dir() {
        return None;
    }
    if !verl_files(dir).0.is_empty() {
        return Some("verl");
    }
    if !nemo_rl_files(dir).0.is_empty() {
        return Some("nemo_rl");
    }
    let verifiers = verifiers_files(dir).0;
    if verifiers
        .first()
        .is_some_and(|(_, p)| crate::load::formats::verifiers::accepts(&crate::load::lines::head_text(&head(p))))
    {
        return Some("verifiers");
    }
    if !tinker_files(dir).0.is_empty() {
        return Some("tinker");
    }
    if !skyrl_files(dir).0.is_empty() {
        return Some("skyrl");
    }
    if !roll_files(dir).0.is_empty() {
        return Some("roll");
    }
    let shards = open_instruct_files(dir).0;
    if shards
        .first()
        .is_some_and(|(_, p)| crate::load::formats::open_instruct::accepts(&crate::load::lines::head_text(&head(p))))
    {
        return Some("open_instruct");
    }
    if !art_files(dir).0.is_empty() {
        return Some("art");
    }
    if otel_files(dir).0.len() > 1 {
        return Some("otel");
    }
    let trl = trl_files(dir).0;
    let named = |p: &PathBuf| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("completions"));
    let is_completions_dir = dir.file_name().is_some_and(|n| n == "completions");
    (!trl.is_empty() && (is_completions_dir || trl.iter().all(|(_, p)| named(p)))).then_some("trl")
}

/// Whether `path` is read piece by piece through [`super::live::Live`] when read as `format` (detected when
/// `None`): a JSON-lines log, a verl or TRL directory; any other format given is read whole.
pub fn reads_as_stream(path: &Path, format: Option<&str>) -> bool {
    format.is_none_or(|f| {
        f == "vantage"
            || (matches!(
                f,
                "verl" | "nemo_rl" | "verifiers" | "tinker" | "skyrl" | "roll" | "open_instruct" | "art" | "trl"
            ) && path.is_dir())
    })
}
