//! `vantage credit`'s declaration: what it computes (a scheme, a preset, its settings), read by
//! the command line and by the Python package's `Run.credit` and `credit_batch` docstrings.

use std::path::PathBuf;

/// Compute credit under one scheme and write it per step (or per token) as JSONL or CSV.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The rollout log.
    pub file: PathBuf,
    /// Scheme id (see `vantage schemes`); `expr:FORMULA` for a formula of your own
    /// (docs/EXPRESSIONS.md), `formula:NAME` for a built-in or saved formula.
    #[arg(long, required_unless_present = "scheme_file", conflicts_with = "scheme_file")]
    pub scheme: Option<String>,
    /// A file holding a formula (`my_scheme.vx`, docs/EXPRESSIONS.md).
    #[arg(long, value_name = "FILE")]
    pub scheme_file: Option<PathBuf>,
    /// Trainer preset: verl, trl, openrlhf (see `vantage schemes`).
    #[arg(long)]
    pub preset: Option<String>,
    /// Parameter value, repeatable: `--set gamma=0.99` (for a formula, its `$gamma`).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Write per-token rows instead of per-step rows.
    #[arg(long)]
    pub tokens: bool,
    /// Output file (`.jsonl`, `.csv` or `.parquet`); standard output as JSONL when absent. For a
    /// v2 dataset, a directory: one `train_step=K/credit.parquet` per partition.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Read as this format instead of detecting it.
    #[arg(long)]
    pub format: Option<String>,
    /// v2 dataset: compute this partition only (`train_step=K`), for one process per partition.
    #[arg(long, value_name = "train_step=K")]
    pub partition: Option<String>,
    /// v2 dataset, for a scheme that normalizes over the batch: `step` (each training step is
    /// a batch, as in training; one partition at a time) or `run` (the whole run is one batch,
    /// as `vantage credit LOG` computes it; reads every partition selected).
    #[arg(long, value_enum)]
    pub batch_scope: Option<BatchScope>,
}

/// What one batch is when credit normalizes over the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BatchScope {
    /// One training step (a partition).
    Step,
    /// The whole run (every partition selected).
    Run,
}
