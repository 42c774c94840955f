//! `vantage check FILES… --json`: what `check` prints, as one JSON object (docs/JSON.md), with the
//! same exit codes; `vantage mcp`'s `check` tool and the Python package's `Run.summary()`.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::analysis::RunSummary;
use crate::credit::{self, Support};
use crate::source::OpenOptions;

/// The most warnings listed per run (`warnings.count` says how many there were).
const MAX_WARNINGS: usize = 100;

/// What runs hold: counts, training steps, rewards, fields present, the credit schemes each
/// supports (and why not the others), the audit of its logged advantages, and every warning.
///
/// Exit 0 clean, 1 records skipped, 2 nothing loadable.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Args {
    /// The runs: logs, folders of runs or v2 datasets.
    #[arg(required = true)]
    #[serde(rename = "path", deserialize_with = "super::declare::one_or_more")]
    pub files: Vec<PathBuf>,
    /// Read as this format instead of detecting it; `vantage formats` names them.
    #[arg(long)]
    #[serde(default)]
    pub format: Option<String>,
    /// Print JSON (docs/JSON.md); at most the first 100 warnings of each run are listed.
    #[arg(long, help_heading = super::declare::TERMINAL)]
    #[serde(skip)]
    pub json: bool,
}

impl super::Tool for Args {
    const NAME: &'static str = "check";

    fn answer(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        Ok(report(&self.files, options, self.format.as_deref()).0)
    }
}

/// docs/JSON.md's object for `files`, and `check`'s exit code (also `vantage mcp`'s `check` tool).
pub fn report(files: &[PathBuf], options: &OpenOptions, format: Option<&str>) -> (Value, u8) {
    let mut worst = 0u8;
    let mut runs = Vec::new();
    for path in files {
        let template = options.report(&path.display().to_string());
        let opened = crate::source::path::open_all(path, options, format, &template, None);
        let any_loaded = opened.iter().any(|o| o.result.is_ok());
        for one in opened {
            let (entry, code) = entry(&one.path, one.result.as_ref(), &one.report, any_loaded);
            runs.push(entry);
            worst = worst.max(code);
        }
    }
    (json!({ "vantage_check": 1, "runs": runs }), worst)
}

/// docs/JSON.md's object for one run read from `path` (or why nothing was), and its exit code:
/// 0 clean, 1 with warnings (or when nothing loaded here but something else did), 2 nothing loaded.
pub fn entry(
    path: &std::path::Path,
    result: Result<&crate::model::Run, &crate::load::LoadError>,
    report: &crate::load::LoadReport,
    any_loaded: bool,
) -> (Value, u8) {
    let located: Vec<String> = report.located().take(MAX_WARNINGS).collect();
    let warnings = json!({
        "count": report.num_warnings(),
        "skipped": report.num_skipped(),
        "located": located,
    });
    match result {
        Ok(run) => (
            json!({
                "path": path.display().to_string(),
                "format": run.meta.format,
                "summary": summary(&RunSummary::of(run)),
                "schemes": schemes(run),
                "audit": crate::analysis::audit::audit(run).map(|a| crate::analysis::forensics::describe_audit(run, &a)),
                "notes": run.meta.notes,
                "warnings": warnings,
                "error": null,
            }),
            u8::from(!report.warnings.is_empty()),
        ),
        Err(err) => (
            json!({
                "path": path.display().to_string(),
                "format": null,
                "summary": null,
                "schemes": null,
                "audit": null,
                "notes": [],
                "warnings": warnings,
                "error": err.located(),
            }),
            if any_loaded { 1 } else { 2 },
        ),
    }
}

/// A run's counts and the fields it holds.
fn summary(s: &RunSummary) -> Value {
    json!({
        "groups": s.num_groups,
        "trajectories": s.num_trajectories,
        "steps": s.num_path_steps,
        "nodes": s.num_nodes,
        "tokens": s.num_tokens,
        "train_steps": s.train_steps.map(<[i64; 2]>::from),
        "mean_reward": s.mean_reward,
        "rewarded": s.num_with_reward,
        "success_rate": s.success_rate,
        "zero_variance_groups": s.num_zero_variance_groups,
        "groups_of_two_or_more": s.num_multi_groups,
        "step_scores": s.scores,
        "outcome_components": s.components,
        "roles": s.roles,
        "kinds": s.kinds,
        "finish_reasons": s.finish,
    })
}

/// The schemes the run supports, and why the others are not.
fn schemes(run: &crate::model::Run) -> Value {
    let table = credit::support_table(run);
    let supported: Vec<&str> = table.iter().filter(|(_, s)| *s == Support::Yes).map(|(i, _)| i.id).collect();
    let unavailable: serde_json::Map<String, Value> = table
        .iter()
        .filter_map(|(info, support)| match support {
            Support::No(reason) => Some((info.id.to_owned(), json!(reason))),
            Support::Yes => None,
        })
        .collect();
    json!({ "supported": supported, "unavailable": unavailable })
}
