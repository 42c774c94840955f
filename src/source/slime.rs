//! slime / miles `--dump-details` directories (native): each rollout file joined with its
//! training-data shards.

use crate::load::{LoadError, LoadReport};
use crate::model::Run;

use super::disk::WHOLE_READ_FACTOR;

/// Whether `path` is a slime / miles `--dump-details` directory: a `rollout_data/` of `.pt` files.
pub fn is_slime_dump(path: &std::path::Path) -> bool {
    !slime_files(&path.join("rollout_data")).0.is_empty()
}

/// The `.pt` files of `dir` whose stem begins with a rollout id (`3.pt`, `3_0.pt`), by id and
/// name, and the names of the others (`eval_*.pt` among them).
fn slime_files(dir: &std::path::Path) -> (Vec<(u64, std::path::PathBuf)>, Vec<String>) {
    crate::source::listing::list_dir(dir, |p| {
        let stem = p.file_stem()?.to_str()?;
        stem.split('_').next()?.parse().ok().filter(|_| p.extension().is_some_and(|e| e == "pt"))
    })
}

/// A slime / miles dump directory as one run: each `rollout_data/{rid}.pt` joined with its
/// `train_data/{rid}.pt` or `train_data/{rid}_{rank}.pt` files (`load::formats::slime_dump`). Evaluation
/// dumps (`eval_{rid}.pt`) are left out and named in the notes.
pub(crate) fn load_slime_dir(dir: &std::path::Path, report: &mut LoadReport) -> Result<Run, LoadError> {
    let name = dir.display().to_string();
    let read =
        |p: &std::path::Path| std::fs::read(p).map_err(|e| LoadError::from(e).with_path(&p.display().to_string()));
    let (rollouts, others) = slime_files(&dir.join("rollout_data"));
    let (trains, _) = slime_files(&dir.join("train_data"));
    let total: u64 =
        rollouts.iter().chain(&trains).filter_map(|(_, p)| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    crate::load::budget::check(report.budget, total * WHOLE_READ_FACTOR, 0, total).map_err(|e| e.with_path(&name))?;
    let mut builder = crate::model::RunBuilder::new(&name, "slime / miles dump");
    for (rid, path) in &rollouts {
        let shown = path.strip_prefix(dir).unwrap_or(path).display().to_string();
        let mut shards = Vec::new();
        for (_, train) in trains.iter().filter(|(r, _)| r == rid) {
            shards.push((train.strip_prefix(dir).unwrap_or(train).display().to_string(), read(train)?));
        }
        let mut file_report = LoadReport::with_budget(&shown, report.budget);
        let sidecar = dir.join("trajectory").join(format!("{rid}.jsonl"));
        let conversation = if sidecar.is_file() { Some(read(&sidecar)?) } else { None };
        let rollout = read(path)?;
        let added = crate::load::formats::slime_dump::add_rollout_files(
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
