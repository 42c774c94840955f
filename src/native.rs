//! Native-only pieces: reading files for the loaders, window options and the eframe event loop.

use std::process::ExitCode;

use crate::app::{LoadSource, VantageApp};
use crate::load::{LoadError, LoadReport, load_bytes, load_bytes_as};
use crate::model::Run;

/// Writes a file through a temporary one beside it (`.NAME.PID.partial`), renamed into place once
/// `write` has written all of it: an interrupted or failed write never leaves half a file at
/// `path`, and the temporary one is removed.
pub fn replace_atomically(
    path: &std::path::Path,
    write: impl FnOnce(&std::path::Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
    let written = write(&temporary).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _: std::io::Result<()> = std::fs::remove_file(&temporary);
    }
    written
}

/// [`replace_atomically`] with `bytes`.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_atomically(path, |temporary| std::fs::write(temporary, bytes))
}

/// The folder saved formulas live in (`NAME.vx`): `$VANTAGE_FORMULAS`, else `vantage/formulas`
/// in the user's configuration folder (`$XDG_CONFIG_HOME`, `~/.config`, or `%APPDATA%`).
pub fn formulas_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("VANTAGE_FORMULAS") {
        return Some(std::path::PathBuf::from(dir));
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config")))
        .or_else(|| std::env::var_os("APPDATA").map(std::path::PathBuf::from))?;
    Some(config.join("vantage").join("formulas"))
}

/// The saved formulas: (name, text), by name.
pub fn saved_formulas() -> Vec<(String, String)> {
    let Some(dir) = formulas_dir() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut found: Vec<(String, String)> = entries
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            (path.extension()? == "vx").then_some(())?;
            let name = path.file_stem()?.to_str()?.to_owned();
            Some((name, std::fs::read_to_string(&path).ok()?))
        })
        .collect();
    found.sort();
    found
}

/// Saves a formula as `NAME.vx` in the formulas folder `dir` (replacing one of that name).
pub fn save_formula(dir: &std::path::Path, name: &str, text: &str) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{name}.vx"));
    write_atomically(&path, text.as_bytes())?;
    Ok(path)
}

/// Whether `path` is a vantage Parquet v2 dataset: a directory with a `manifest.json`.
pub fn is_v2_dataset(path: &std::path::Path) -> bool {
    path.is_dir() && path.join(crate::load::vantage_v2::MANIFEST).is_file()
}

/// Whether `path` is a slime / miles `--dump-details` directory: a `rollout_data/` of `.pt` files.
pub fn is_slime_dump(path: &std::path::Path) -> bool {
    !slime_files(&path.join("rollout_data")).0.is_empty()
}

/// The `.pt` files of `dir` whose stem begins with a rollout id (`3.pt`, `3_0.pt`), by id and
/// name, and the names of the others (`eval_*.pt` among them).
fn slime_files(dir: &std::path::Path) -> (Vec<(u64, std::path::PathBuf)>, Vec<String>) {
    crate::live::list_dir(dir, |p| {
        let stem = p.file_stem()?.to_str()?;
        stem.split('_').next()?.parse().ok().filter(|_| p.extension().is_some_and(|e| e == "pt"))
    })
}

/// A slime / miles dump directory as one run: each `rollout_data/{rid}.pt` joined with its
/// `train_data/{rid}.pt` or `train_data/{rid}_{rank}.pt` files (`load::slime_dump`). Evaluation
/// dumps (`eval_{rid}.pt`) are left out and named in the notes.
fn load_slime_dir(dir: &std::path::Path, report: &mut LoadReport) -> Result<Run, LoadError> {
    let name = dir.display().to_string();
    let read =
        |p: &std::path::Path| std::fs::read(p).map_err(|e| LoadError::from(e).with_path(&p.display().to_string()));
    let (rollouts, others) = slime_files(&dir.join("rollout_data"));
    let (trains, _) = slime_files(&dir.join("train_data"));
    let total: u64 =
        rollouts.iter().chain(&trains).filter_map(|(_, p)| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    crate::load::budget::check(crate::load::budget::get(), total * WHOLE_READ_FACTOR, 0, total)
        .map_err(|e| e.with_path(&name))?;
    let mut builder = crate::model::RunBuilder::new(&name, "slime / miles dump");
    for (rid, path) in &rollouts {
        let shown = path.strip_prefix(dir).unwrap_or(path).display().to_string();
        let mut shards = Vec::new();
        for (_, train) in trains.iter().filter(|(r, _)| r == rid) {
            shards.push((train.strip_prefix(dir).unwrap_or(train).display().to_string(), read(train)?));
        }
        let mut file_report = LoadReport::new(&shown);
        let sidecar = dir.join("trajectory").join(format!("{rid}.jsonl"));
        let conversation = if sidecar.is_file() { Some(read(&sidecar)?) } else { None };
        let rollout = read(path)?;
        let added = crate::load::slime_dump::add_rollout_files(
            &mut builder,
            &rollout,
            &shards,
            conversation.as_deref(),
            &mut file_report,
        );
        if let Err(err) = added {
            report.warn(crate::model::Warning::skipped(0, shown, format!("{err}")));
            continue;
        }
        report.records_seen += file_report.records_seen;
        report.records_loaded += file_report.records_loaded;
        for mut warning in file_report.warnings {
            if !warning.field.contains(".pt") {
                warning.field = format!("{shown}: {}", warning.field);
            }
            report.warn(warning);
        }
    }
    let evals: Vec<&str> = others.iter().map(String::as_str).filter(|n| n.starts_with("eval_")).collect();
    if !evals.is_empty() {
        builder.meta_mut().notes.push(format!("evaluation dumps left out (open one by itself): {}", evals.join(", ")));
    }
    crate::load::finish_run(builder, report, "sample").map_err(|e| e.with_path(&name))
}

/// Command-line paths with directories opened up: a directory that holds one run (verl
/// `<step>.jsonl` dumps, TRL completions parquet files) stays one path; any other directory
/// becomes the log files below it (json, jsonl, eval, traj, parquet, gz, zst), sorted.
pub fn expand_paths(paths: Vec<std::path::PathBuf>) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir()
            || crate::live::directory_kind(&path).is_some()
            || is_joined_run(&path)
            || is_v2_dataset(&path)
            || is_slime_dump(&path)
        {
            out.push(path);
            continue;
        }
        let mut stack = vec![path.clone()];
        let mut found = Vec::new();
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let p = entry.path();
                if p.is_dir() && (is_joined_run(&p) || is_v2_dataset(&p) || is_slime_dump(&p)) {
                    found.push(p);
                } else if p.is_dir() {
                    stack.push(p);
                } else if p.extension().and_then(|e| e.to_str()).is_some_and(|e| LOG_EXTENSIONS.contains(&e)) {
                    found.push(p);
                }
            }
        }
        found.sort();
        // A directory without a log below it stays itself, so opening it says what it is.
        if found.is_empty() {
            out.push(path);
        }
        out.extend(found);
    }
    out
}

/// The files below `dir` that hold outcomes to join to trajectories (`load::outcomes`): JSON files
/// that are not trajectories themselves (`.traj.json`), up to 16 MiB, whose start names a
/// resolution or votes, told by their content.
pub fn results_files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, crate::load::outcomes::Outcomes)> {
    log_files(dir).into_iter().filter_map(|path| results_file(dir, &path).map(|o| (path, o))).collect()
}

/// The outcomes in `path` if it is a results file (see [`results_files`]), named relative to `dir`.
fn results_file(dir: &std::path::Path, path: &std::path::Path) -> Option<crate::load::outcomes::Outcomes> {
    use std::io::Read as _;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= 16 << 20);
    if !name.ends_with(".json") || name.ends_with(".traj.json") || !small {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(1 << 16).read_to_end(&mut head).ok()?;
    let head = String::from_utf8_lossy(&head);
    if !head.contains("\"resolved") && !head.contains("\"is_solved\"") && !head.contains("\"trial_name\"") {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let shown = path.strip_prefix(dir).unwrap_or(path).display().to_string();
    crate::load::outcomes::parse(&shown, &bytes)
}

/// Whether `dir` is one run of trajectories and the results files holding their outcomes: it holds
/// results files, and none of its subdirectories holds both results and other logs (then each
/// such subdirectory is a run of its own, and `dir` a collection of them). JSON files in a folder
/// with a results file are the harness's, not other logs: trajectories in `trajs/` and reports in
/// `logs/<instance>/` beside them are one run.
pub fn is_joined_run(dir: &std::path::Path) -> bool {
    let holds = |d: &std::path::Path| {
        let files = log_files(d);
        let parsed: Vec<(&std::path::PathBuf, bool)> = files
            .iter()
            .filter_map(|p| results_file(d, p).map(|o| (p, o.kind == crate::load::outcomes::HARBOR_TRIAL)))
            .collect();
        let results: Vec<&std::path::PathBuf> = parsed.iter().map(|(p, _)| *p).collect();
        // A Harbor trial's result.json is one trial's outcome beside its trajectory, not a run's.
        let trial_only = !parsed.is_empty() && parsed.iter().all(|(_, trial)| *trial);
        // A JSON file beside a results file is the harness's too (its summary, its other
        // outputs), not a trajectory: `logs/<instance>/` of an evaluation holds such files.
        let beside_results = |p: &std::path::PathBuf| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.ends_with(".json") && !name.ends_with(".traj.json") && results.iter().any(|r| r.parent() == p.parent())
        };
        let others = files.iter().filter(|p| !results.contains(p) && !beside_results(p)).count();
        (!results.is_empty(), others > 0, trial_only)
    };
    if !holds(dir).0 {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    !entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).any(|sub| holds(&sub) == (true, true, false))
}

/// Whether the file at `path` begins with `magic`.
#[cfg(feature = "sqlite")]
fn starts_with(path: &std::path::Path, magic: &[u8]) -> bool {
    use std::io::Read as _;
    let mut head = vec![0; magic.len()];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && head == magic
}

/// The log files below `dir` (by extension), sorted.
fn log_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().and_then(|e| e.to_str()).is_some_and(|e| LOG_EXTENSIONS.contains(&e)) {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

/// A directory of trajectory files and the results files that hold their outcomes, as one run:
/// every file that loads, its trajectories given the outcomes of the results file nearest to it
/// (the one whose directories it shares most of), the others named in the notes.
fn load_joined(
    dir: &std::path::Path,
    results: &[(std::path::PathBuf, crate::load::outcomes::Outcomes)],
    report: &mut LoadReport,
) -> Result<Run, LoadError> {
    use std::collections::BTreeMap;
    let name = dir.display().to_string();
    let components = |p: &std::path::Path| -> Vec<String> {
        p.strip_prefix(dir)
            .unwrap_or(p)
            .parent()
            .into_iter()
            .flat_map(|p| p.components().map(|c| c.as_os_str().to_string_lossy().into_owned()))
            .collect()
    };
    let result_paths: Vec<&std::path::PathBuf> = results.iter().map(|(p, _)| p).collect();
    let mut merged = String::from("{\"vantage\": 1}\n");
    let (mut formats, mut notes, mut skipped) = (Vec::<String>::new(), Vec::<String>::new(), Vec::<String>::new());
    let mut source_of: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
    for path in log_files(dir) {
        if result_paths.contains(&&path) {
            continue;
        }
        let shown = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
        let mut file_report = LoadReport::new(&shown);
        match load_path(&path, None, &mut file_report) {
            Ok(run) => {
                for t in run.trajectories.ids() {
                    source_of.insert(run.label(run.trajectories.key[t.index()]).to_owned(), path.clone());
                }
                if !formats.contains(&run.meta.format) {
                    formats.push(run.meta.format.clone());
                }
                notes.extend(run.meta.notes.iter().filter(|n| !notes.contains(n)).cloned().collect::<Vec<_>>());
                let jsonl = crate::load::vantage_jsonl::write::to_jsonl(&run);
                merged.extend(jsonl.split_inclusive('\n').skip(1));
                for mut warning in file_report.warnings {
                    warning.field = format!("{shown}: {}", warning.field);
                    report.warn(warning);
                }
            }
            Err(err) => {
                let reason =
                    if err.is_unrecognised() { "not a recognised log format".to_owned() } else { err.to_string() };
                skipped.push(format!("{shown} ({reason})"));
            }
        }
    }
    let mut run = crate::load::vantage_jsonl::load(&name, merged.as_bytes(), &mut LoadReport::new(&name))?;
    run.meta.format = formats.join(" + ");
    run.meta.notes = notes;
    if !skipped.is_empty() {
        run.meta.notes.push(format!("files that are not trajectories, skipped: {}", skipped.join("; ")));
    }
    // Each trajectory's results files, nearest first: those sharing the most directories with its file.
    let outcomes: Vec<&crate::load::outcomes::Outcomes> = results.iter().map(|(_, o)| o).collect();
    let files_for = |t: crate::model::TrajectoryId| -> Vec<usize> {
        let Some(source) = source_of.get(run.label(run.trajectories.key[t.index()])) else {
            return (0..results.len()).collect();
        };
        let mine = components(source);
        let shared = |p: &std::path::Path| components(p).iter().filter(|c| mine.contains(c)).count();
        let best = results.iter().map(|(p, _)| shared(p)).max().unwrap_or(0);
        (0..results.len()).filter(|&i| shared(&results[i].0) == best).collect()
    };
    let chosen: Vec<Vec<usize>> = run.trajectories.ids().map(files_for).collect();
    let joined = crate::load::outcomes::join_with(&mut run, &outcomes, |t| chosen[t.index()].clone());
    for warning in crate::load::outcomes::warnings(&joined, &outcomes) {
        report.warn(warning);
    }
    run.meta.warnings.clone_from(&report.warnings);
    Ok(run)
}

/// The results files named with `--outcomes` (or among the files opened), whose outcomes every
/// run opened gets.
static OUTCOME_FILES: std::sync::Mutex<Vec<crate::load::outcomes::Outcomes>> = std::sync::Mutex::new(Vec::new());

/// Reads the results files of `--outcomes`; an error naming a file that is not one.
pub fn set_outcome_files(paths: &[std::path::PathBuf]) -> Result<(), LoadError> {
    for path in paths {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| LoadError::from(e).with_path(&name))?;
        let outcomes = crate::load::outcomes::parse(&name, &bytes).ok_or_else(|| {
            LoadError::Unrecognised {
                tried: "not a results file (a SWE-bench report, report.json, results.json or pass-rate votes)"
                    .to_owned(),
            }
            .with_path(&name)
        })?;
        if let Ok(mut files) = OUTCOME_FILES.lock() {
            files.push(outcomes);
        }
    }
    Ok(())
}

/// `paths` without the results files among them, which are read as `--outcomes` are.
pub fn take_results_files(paths: Vec<std::path::PathBuf>) -> Vec<std::path::PathBuf> {
    let mut rest = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        let is_json = path.is_file() && name.ends_with(".json") && !name.ends_with(".traj.json");
        let outcomes =
            is_json.then(|| std::fs::read(&path).ok()).flatten().and_then(|b| crate::load::outcomes::parse(&name, &b));
        match outcomes {
            Some(outcomes) => {
                if let Ok(mut files) = OUTCOME_FILES.lock() {
                    files.push(outcomes);
                }
            }
            None => rest.push(path),
        }
    }
    rest
}

/// Keeps where a converted run came from and how it was read in its header's metadata (a run
/// converted again keeps what the first conversion wrote).
pub fn mark_converted(run: &mut Run) {
    let meta = &mut run.meta;
    meta.metadata.entry("converted_from".to_owned()).or_insert_with(|| serde_json::Value::String(meta.format.clone()));
    if !meta.notes.is_empty() {
        let notes = meta.notes.iter().cloned().map(serde_json::Value::String).collect();
        meta.metadata.entry("notes".to_owned()).or_insert(serde_json::Value::Array(notes));
    }
}

/// Joins the outcomes of `--outcomes` to `run`, warning of what did not match.
pub(crate) fn join_outcome_files(run: &mut Run, report: &mut LoadReport) {
    let Ok(files) = OUTCOME_FILES.lock() else { return };
    if files.is_empty() {
        return;
    }
    let refs: Vec<&crate::load::outcomes::Outcomes> = files.iter().collect();
    let joined = crate::load::outcomes::join(run, &refs);
    for warning in crate::load::outcomes::warnings(&joined, &refs) {
        report.warn(warning.clone());
        run.meta.warnings.push(warning);
    }
}

/// File extensions of logs, for directories and the file dialog.
pub const LOG_EXTENSIONS: [&str; 8] = ["json", "jsonl", "eval", "traj", "parquet", "gz", "zst", "db"];

/// Sets the memory a load may use (`load::budget`): `VANTAGE_MEMORY_BUDGET` (a size such as
/// `8G`), else the memory available now less a margin of a tenth (at least 512 MB) for the app.
pub fn init_memory_budget() {
    if let Some(bytes) = std::env::var("VANTAGE_MEMORY_BUDGET").ok().and_then(|v| crate::load::budget::parse_size(&v)) {
        crate::load::budget::set(bytes);
        return;
    }
    if let Some(available) = available_memory() {
        crate::load::budget::set(available.saturating_sub((available / 10).max(512_000_000)).max(256_000_000));
    }
}

/// The memory available to new allocations (Linux: `MemAvailable`, less a cgroup limit's headroom).
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let mut available = kb * 1024;
    let limit = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|t| t.trim().parse::<u64>().ok());
    let used = std::fs::read_to_string("/sys/fs/cgroup/memory.current").ok().and_then(|t| t.trim().parse::<u64>().ok());
    if let (Some(limit), Some(used)) = (limit, used) {
        available = available.min(limit.saturating_sub(used));
    }
    Some(available)
}

/// How many bytes of memory a file read whole takes per byte of file while it loads (the bytes
/// themselves and the run with its texts copied; measured at about 2 for vantage JSONL).
const WHOLE_READ_FACTOR: u64 = 3;

/// Reads a file and loads it; `format` overrides detection. The one place a run is read from disk.
/// A vantage JSONL file, a compressed file, a verl `<step>.jsonl` directory and a TRL completions
/// directory are read piece by piece (`crate::live`); other files whole.
pub fn load_path(path: &std::path::Path, format: Option<&str>, report: &mut LoadReport) -> Result<Run, LoadError> {
    load_path_showing(path, format, report, None)
}

/// [`load_path_showing`], then the outcomes of `--outcomes` joined to the run.
pub fn load_path_joined(
    path: &std::path::Path,
    format: Option<&str>,
    report: &mut LoadReport,
    shown: Option<crate::live::ShowRun<'_>>,
) -> Result<Run, LoadError> {
    let mut run = load_path_showing(path, format, report, shown)?;
    join_outcome_files(&mut run, report);
    Ok(run)
}

/// [`load_path`], calling `shown` with the run so far while a large log is read piece by piece
/// (see `crate::live::Live::read`).
pub fn load_path_showing(
    path: &std::path::Path,
    format: Option<&str>,
    report: &mut LoadReport,
    shown: Option<crate::live::ShowRun<'_>>,
) -> Result<Run, LoadError> {
    let mut run = read_path(path, format, report, shown)?;
    note_failures_sidecar(path, &mut run);
    Ok(run)
}

/// NeMo Gym writes failed rollouts to `<stem>_failures.jsonl` beside the rollouts: when that file
/// is there, the run's notes say so (and how many lines it has), as its rollouts are not in the run.
fn note_failures_sidecar(path: &std::path::Path, run: &mut Run) {
    if !run.meta.format.starts_with("NeMo Gym") {
        return;
    }
    let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else { return };
    let sidecar = path.with_file_name(format!("{stem}_failures.jsonl"));
    let Ok(file) = std::fs::File::open(&sidecar) else { return };
    let lines = std::io::BufRead::lines(std::io::BufReader::new(file))
        .map_while(Result::ok)
        .filter(|l| !l.trim().is_empty())
        .count();
    run.meta.notes.push(format!(
        "{lines} failed rollout(s) in {} (NeMo Gym's failures sidecar), not in this run: open it to see them",
        sidecar.display()
    ));
}

/// Reads a path as [`load_path_showing`] does, before the notes about files beside it.
fn read_path(
    path: &std::path::Path,
    format: Option<&str>,
    report: &mut LoadReport,
    shown: Option<crate::live::ShowRun<'_>>,
) -> Result<Run, LoadError> {
    let name = path.display().to_string();
    report.file.clone_from(&name);
    if format.is_none_or(|f| f == "vantage_v2") && is_v2_dataset(path) {
        #[cfg(feature = "parquet")]
        return crate::dataset::open_default(path, report);
        #[cfg(not(feature = "parquet"))]
        return Err(LoadError::Incompatible {
            format: "vantage Parquet v2",
            reason: "this build has no Parquet support (build with the `parquet` feature)".to_owned(),
        }
        .with_path(&name));
    }
    if path.is_dir() && format.is_none_or(|f| f == "slime") && is_slime_dump(path) {
        return load_slime_dir(path, report);
    }
    if crate::live::reads_as_stream(path, format)
        && let Some(result) = crate::live::load(path, report, shown)
    {
        return result;
    }
    if path.is_dir() && format.is_none() && is_joined_run(path) {
        return load_joined(path, &results_files(path), report);
    }
    #[cfg(feature = "sqlite")]
    if path.is_file() && format.is_none_or(|f| f == "trackio") && starts_with(path, crate::load::trackio::MAGIC) {
        return crate::load::trackio::load_path(path, report).map_err(|e| e.with_path(&name));
    }
    let size = std::fs::metadata(path).map_or(0, |m| if m.is_file() { m.len() } else { 0 });
    crate::load::budget::check(crate::load::budget::get(), size * WHOLE_READ_FACTOR, 0, size)
        .map_err(|e| e.with_path(&name))?;
    // A directory of numbered files of another format than verl's: one log, in step order.
    let numbered = if path.is_dir() { crate::live::verl_files(path).0 } else { Vec::new() };
    let bytes = match (!numbered.is_empty()).then_some(numbered) {
        Some(files) => {
            let mut joined = Vec::new();
            for (_, file) in files {
                let part =
                    std::fs::read(&file).map_err(|e| LoadError::from(e).with_path(&file.display().to_string()))?;
                joined.extend_from_slice(&part);
                if !joined.ends_with(b"\n") {
                    joined.push(b'\n');
                }
            }
            joined
        }
        None => std::fs::read(path).map_err(|e| LoadError::from(e).with_path(&name))?,
    };
    match format {
        Some(format) => load_bytes_as(format, &name, &bytes, report),
        None => load_bytes(&name, &bytes, report),
    }
}

/// When the process started (for `--exit-after-first-view`).
pub static STARTED: std::sync::LazyLock<web_time::Instant> = std::sync::LazyLock::new(web_time::Instant::now);

/// Opens the desktop window with `files` and the followed paths `follow` (the bundled sample when
/// both are empty) and the `start` options, `size` points wide and high.
pub fn run_app(
    files: Vec<std::path::PathBuf>,
    follow: Vec<std::path::PathBuf>,
    start: crate::app::StartOptions,
    size: [f32; 2],
) -> ExitCode {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("vantage")
            .with_inner_size(size)
            .with_min_inner_size([480.0, 320.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    let sources: Vec<LoadSource> =
        files.into_iter().map(LoadSource::Path).chain(follow.into_iter().map(LoadSource::Follow)).collect();
    let result = eframe::run_native(
        "vantage",
        options,
        Box::new(|cc| Ok(Box::new(VantageApp::new(cc, sources).with_start(start)))),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("vantage: could not open the window: {err:#}");
            ExitCode::from(2)
        }
    }
}
