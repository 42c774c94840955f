//! `vantage credit RUN_DIR --out OUT_DIR/`: credit over a vantage Parquet v2 dataset, one
//! training-step partition at a time (so in the memory of one partition), written as a
//! partitioned dataset `OUT_DIR/train_step=K/credit.parquet` that any Parquet reader reads back as
//! one table. `--partition train_step=K` computes one partition, so that a distributed engine can
//! run one process per partition (docs/SCALE.md); each partition's file is replaced atomically,
//! so processes writing different partitions into one `OUT_DIR` do not disturb each other.

use std::path::Path;

use super::{CreditRequest, CreditTable};
use crate::api::credit::BatchScope;
use crate::api::formulas::Computation;
use crate::load::formats::vantage_v2::{Partition, manifest::parse_range};
use crate::source::dataset::Dataset;

/// The output file of a partition, relative to `OUT_DIR`.
pub fn output_file(partition: &Partition) -> String {
    format!("{}/credit.parquet", partition.dir)
}

/// Computes and writes the credit of the partitions asked for.
pub(super) fn run(
    dir: &Path,
    computation: &Computation<'_>,
    request: &CreditRequest<'_>,
    options: &crate::source::OpenOptions,
    out: &Path,
) -> anyhow::Result<()> {
    let dataset = Dataset::open(dir)?;
    let partitions = selected(&dataset, request.partition, options.steps)?;
    let scope = match (computation.batch_wide(), request.batch_scope) {
        (Some(why), None) => anyhow::bail!(
            "scheme {} {why}, so its credit depends on what one batch is: say --batch-scope step (each \
             training step is one batch, as in training; one partition at a time) or --batch-scope run \
             (the whole run is one batch, as `vantage credit LOG` and the app compute it)",
            computation.name()
        ),
        (None, _) => BatchScope::Step,
        (Some(_), Some(scope)) => scope,
    };
    if scope == BatchScope::Run && request.partition.is_some() {
        anyhow::bail!("--partition computes one training step: it cannot take --batch-scope run");
    }
    let mut written = 0usize;
    let mut report = options.report(&dir.display().to_string());
    match scope {
        BatchScope::Step => {
            for partition in &partitions {
                let (run, ids) = dataset.load_with_ids(&[partition], &mut report)?;
                let credit = computation.compute(&run).map_err(|e| anyhow::anyhow!("{}: {e:#}", partition.dir))?;
                write(out, partition, request.table(&run, &credit, run.trajectories.ids(), Some(&ids))?)?;
                written += 1;
            }
        }
        BatchScope::Run => {
            let (run, ids) = dataset.load_with_ids(&partitions, &mut report)?;
            let credit =
                computation.compute(&run).map_err(|e| anyhow::anyhow!("the training steps selected: {e:#}"))?;
            for partition in &partitions {
                let step = partition.train_step;
                let members = run.trajectories.ids().filter(|t| {
                    run.groups.train_step.get(run.trajectories.group[t.index()].index()).copied().flatten() == step
                });
                write(out, partition, request.table(&run, &credit, members, Some(&ids))?)?;
                written += 1;
            }
        }
    }
    for warning in report.located() {
        eprintln!("warning: {warning}");
    }
    eprintln!("{written} partition(s) of credit ({}) written to {}/", computation.name(), out.display());
    Ok(())
}

/// The partitions asked for: `--partition` (one, which must exist), else those `--steps` selects.
fn selected<'d>(
    dataset: &'d Dataset,
    partition: Option<&str>,
    steps: Option<(i64, i64)>,
) -> anyhow::Result<Vec<&'d Partition>> {
    let manifest = &dataset.manifest;
    let Some(text) = partition else { return Ok(manifest.select(steps)) };
    let null = format!("train_step={}", crate::load::formats::vantage_v2::manifest::NULL_PARTITION);
    if text == null {
        return Ok(manifest.partitions.iter().filter(|p| p.train_step.is_none()).collect());
    }
    let (lo, hi) = parse_range(text).map_err(|e| anyhow::anyhow!("--partition {e}"))?;
    if lo != hi {
        anyhow::bail!("--partition {text}: one training step (train_step=K); a range is --steps A..B");
    }
    let found = manifest.select(Some((lo, hi)));
    if found.is_empty() {
        let steps: Vec<String> = manifest.partitions.iter().map(|p| p.dir.clone()).take(12).collect();
        anyhow::bail!("--partition {text}: the dataset has no such partition (it has {}…)", steps.join(", "));
    }
    Ok(found)
}

fn write(out: &Path, partition: &Partition, table: CreditTable) -> anyhow::Result<()> {
    let path = out.join(output_file(partition));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    }
    table.write_parquet(&path)
}
