//! `vantage runs RUN [--other RUN] [--a-steps A..B] [--b-steps C..D] [--json]`: run A against run B
//! on the same prompts, as the app's Runs view: each prompt's pass rate on either side, and what
//! became of it (learned, forgotten, …). Two runs, or two ranges of training steps of one
//! (docs/JSON.md has the JSON).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Analysis, number};
use crate::analysis::runs::{Change, PromptStats, Side};
use crate::source::OpenOptions;

/// Run A against run B on the same prompts, or two ranges of training steps of one run
/// (docs/JSON.md): each prompt's pass rate on either side with its 95% Wilson interval, and
/// whether it was learned, forgotten, unclear (too few rollouts), still failing, still solved, or
/// seen by one side only.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Args {
    /// Run A: a log, a folder of runs or a v2 dataset.
    #[serde(rename = "path")]
    pub file: PathBuf,
    /// Run B (without it, B is later training steps of run A).
    #[arg(long, value_name = "RUN")]
    #[serde(default)]
    pub other: Option<PathBuf>,
    /// A's training steps (`10..20` inclusive, `..99`, `17`); with one run, the first half of them.
    #[arg(long, value_name = "A..B")]
    #[serde(default)]
    pub a_steps: Option<String>,
    /// B's training steps; with one run, the steps after A's.
    #[arg(long, value_name = "C..D")]
    #[serde(default)]
    pub b_steps: Option<String>,
    /// List only prompts that changed so (repeatable).
    #[arg(long, value_parser = super::declare::Choices(Change::ALL.map(name).to_vec()))]
    #[serde(default)]
    pub change: Vec<String>,
    /// `--json`, `--limit`, `--offset`.
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::Page,
}

/// A change's name in the JSON and on the command line.
fn name(change: Change) -> &'static str {
    match change {
        Change::Learned => "learned",
        Change::Forgotten => "forgotten",
        Change::Unclear => "unclear",
        Change::StillFailing => "still_failing",
        Change::StillSolved => "still_solved",
        Change::OnlyInA => "only_in_a",
        Change::OnlyInB => "only_in_b",
    }
}

/// A range of training steps: `10..20`, `..99`, `2000..`, `17`.
fn steps(flag: &str, text: &Option<String>) -> anyhow::Result<Option<(i64, i64)>> {
    text.as_deref().map(|t| super::parse_steps(t).map_err(|e| anyhow::anyhow!("{flag} {t}: {e}"))).transpose()
}

/// One side's counts for one prompt.
fn side(stats: &PromptStats) -> Value {
    let (lo, hi) = stats.interval();
    json!({
        "rollouts": stats.rollouts,
        "successes": stats.successes,
        "pass_rate": number(stats.pass_rate()),
        "interval": [lo, hi],
    })
}

impl Analysis for Args {
    const NAME: &'static str = "runs";

    fn page(&self) -> Option<&super::Page> {
        Some(&self.page)
    }

    fn json(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        let wanted: Vec<Change> = self
            .change
            .iter()
            .map(|c| {
                Change::ALL.into_iter().find(|&k| name(k) == c).ok_or_else(|| {
                    let names: Vec<&str> = Change::ALL.into_iter().map(name).collect();
                    anyhow::anyhow!("--change {c}: one of {}", names.join(", "))
                })
            })
            .collect::<anyhow::Result<_>>()?;
        let (a_steps, b_steps) = (steps("--a-steps", &self.a_steps)?, steps("--b-steps", &self.b_steps)?);
        let run_a = super::open(&self.file, options)?;
        let run_b = self.other.as_deref().map(|p| super::open(p, options)).transpose()?;
        let (a, b) = if let Some(run_b) = &run_b {
            (Side { run: &run_a, steps: a_steps }, Side { run: run_b, steps: b_steps })
        } else {
            // One run: its first half of training steps against the rest, as the Runs view.
            let (lo, hi) = crate::analysis::runs::step_range(&run_a)
                .filter(|(lo, hi)| hi > lo || (a_steps.is_some() && b_steps.is_some()))
                .ok_or_else(|| {
                    anyhow::anyhow!("the run has one training step: name another run to compare with (--other)")
                })?;
            let split = lo + (hi - lo) / 2;
            let a_steps = a_steps.unwrap_or((lo, split));
            let b_steps = b_steps.unwrap_or((a_steps.1.saturating_add(1), hi));
            (Side { run: &run_a, steps: Some(a_steps) }, Side { run: &run_a, steps: Some(b_steps) })
        };
        let rows = crate::analysis::runs::compare(a, b);
        let changes: serde_json::Map<String, Value> = Change::ALL
            .into_iter()
            .map(|c| (name(c).to_owned(), Value::from(rows.iter().filter(|r| r.change == c).count())))
            .collect();
        let chosen: Vec<_> = rows.iter().filter(|r| wanted.is_empty() || wanted.contains(&r.change)).collect();
        let listed: Vec<Value> = self
            .page
            .of(chosen.iter())
            .map(|r| {
                json!({
                    "prompt": crate::model::truncate(&r.key, 200),
                    "change": name(r.change),
                    "a": side(&r.a),
                    "b": side(&r.b),
                })
            })
            .collect();
        // Each side's prompts are the rows not only the other side has (`compare` read them already).
        let count = |only_other: Change| rows.iter().filter(|r| r.change != only_other).count();
        let describe = |s: Side<'_>, path: &std::path::Path, prompts: usize| {
            // An open end (`..99`) as the run's own first or last step.
            let own = crate::analysis::runs::step_range(s.run);
            let steps = s.steps.zip(own).map(|((lo, hi), (first, last))| [lo.max(first), hi.min(last)]);
            json!({
                "run": path.display().to_string(),
                "steps": steps,
                "prompts": prompts,
            })
        };
        Ok(json!({
            "vantage_runs": 1,
            "a": describe(a, &self.file, count(Change::OnlyInB)),
            "b": describe(b, self.other.as_deref().unwrap_or(&self.file), count(Change::OnlyInA)),
            "changes": changes,
            "offset": self.page.offset,
            "limit": self.page.limit,
            "rows_total": chosen.len(),
            "rows": listed,
        }))
    }

    fn text(&self, json: &Value) -> String {
        let label = |side: &Value| {
            let steps = side["steps"].as_array().map_or_else(String::new, |s| format!(" steps {}..{}", s[0], s[1]));
            format!("{}{steps} ({} prompts)", side["run"].as_str().unwrap_or_default(), side["prompts"])
        };
        let mut out = format!("A {} against B {}", label(&json["a"]), label(&json["b"]));
        for change in Change::ALL {
            out.push_str(&format!("\n  {}: {}", change.label(), json["changes"][name(change)]));
        }
        let rows = json["rows"].as_array().cloned().unwrap_or_default();
        out.push_str(&format!("\nprompts ({} of {}):", rows.len(), json["rows_total"]));
        let rate = |s: &Value| format!("{}/{}", s["successes"], s["rollouts"]);
        for r in &rows {
            out.push_str(&format!(
                "\n  [{}] A {} → B {}: {}",
                r["change"].as_str().unwrap_or_default(),
                rate(&r["a"]),
                rate(&r["b"]),
                crate::model::truncate(r["prompt"].as_str().unwrap_or_default(), 120)
            ));
        }
        out
    }
}
