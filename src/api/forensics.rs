//! `vantage forensics RUN [--json] [--spike-bound A]`: the rows that corrupted a group's baseline
//! (docs/FORENSICS.md), each with the credit they moved; docs/JSON.md has the JSON. The same
//! object is `vantage mcp`'s `forensics` tool and Python's `Run.forensics()`.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Analysis, number32};
use crate::analysis::forensics::{self, Finding, Forensics, Kind, Options};
use crate::model::Run;
use crate::source::OpenOptions;

/// Baseline forensics (docs/FORENSICS.md): the rows that corrupted a group's baseline (failed
/// rollouts, pad rows, partial groups, duplicates, filtered rows, advantage spikes, reward
/// fallbacks) per training step and group, each with the credit they moved, whether the logged
/// advantages include them, and the evidence.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Args {
    /// The run: a log, a folder of runs or a v2 dataset.
    #[serde(rename = "path")]
    pub file: PathBuf,
    /// A logged advantage beyond this, in absolute value, on a zero std is a `std_spike`.
    #[arg(long, value_name = "A", default_value_t = 10.0)]
    #[serde(default = "default_spike_bound")]
    pub spike_bound: f64,
    /// `--json`, `--limit`, `--offset`.
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::Page,
}

fn default_spike_bound() -> f64 {
    Options::default().spike_bound
}

/// One finding as docs/JSON.md writes it.
pub fn finding_json(run: &Run, finding: &Finding) -> Value {
    json!({
        "kind": finding.kind.name(),
        "train_step": finding.train_step,
        "group": run.group_key(finding.group),
        "trajectories": finding.trajectories.iter().map(|&t| run.trajectory_key(t)).collect::<Vec<_>>(),
        "credit_moved": finding.credit_moved.map_or(Value::Null, |v| number32(v as f32)),
        "trainer_included": finding.trainer_included,
        "evidence": finding.evidence,
        "source": finding.kind.source(),
    })
}

/// The analysis of `run` as docs/JSON.md's object, every finding listed (the command pages them).
pub fn report(run: &Run, options: &Options) -> Value {
    let found = forensics::forensics(run, options);
    object(run, &found, options, &found.findings)
}

fn object(run: &Run, found: &Forensics, options: &Options, listed: &[Finding]) -> Value {
    let counts: serde_json::Map<String, Value> =
        found.counts().into_iter().map(|(kind, n)| (kind.name().to_owned(), Value::from(n))).collect();
    json!({
        "vantage_forensics": 1,
        "scheme": found.scheme.as_ref().map(|(name, _)| name),
        "scheme_why": found.scheme.as_ref().map(|(_, why)| why),
        "group_size": found.group_size.as_ref().map(|(n, _)| n),
        "group_size_from": found.group_size.as_ref().map(|(_, from)| from),
        "spike_bound": options.spike_bound,
        "counts": counts,
        "notes": found.notes,
        "findings_total": found.findings.len(),
        "findings": listed.iter().map(|f| finding_json(run, f)).collect::<Vec<_>>(),
    })
}

impl Analysis for Args {
    const NAME: &'static str = "forensics";

    fn page(&self) -> Option<&super::Page> {
        Some(&self.page)
    }

    fn json(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        if !(self.spike_bound.is_finite() && self.spike_bound > 0.0) {
            anyhow::bail!("--spike-bound {}: a positive number", self.spike_bound);
        }
        let run = super::open(&self.file, options)?;
        let asked = Options { spike_bound: self.spike_bound, texts: true };
        let found = forensics::forensics(&run, &asked);
        let listed: Vec<Finding> = self.page.of(found.findings.iter().cloned()).collect();
        let mut out = object(&run, &found, &asked, &listed);
        if let Some(map) = out.as_object_mut() {
            map.insert("run".to_owned(), Value::from(self.file.display().to_string()));
            map.insert("offset".to_owned(), Value::from(self.page.offset));
            map.insert("limit".to_owned(), Value::from(self.page.limit));
        }
        Ok(out)
    }

    fn text(&self, json: &Value) -> String {
        let total = json["findings_total"].as_u64().unwrap_or(0);
        let mut out = format!("{}: {total} baseline findings", self.file.display());
        if let Some(scheme) = json["scheme"].as_str() {
            out.push_str(&format!(" (credit moved under {scheme}: {})", json["scheme_why"].as_str().unwrap_or("")));
        }
        for kind in Kind::ALL {
            if let Some(n) = json["counts"][kind.name()].as_u64() {
                out.push_str(&format!("\n  {:<21} {n:>6}  {} ({})", kind.name(), kind.describe(), kind.source()));
            }
        }
        for f in json["findings"].as_array().into_iter().flatten() {
            let step = f["train_step"].as_i64().map_or_else(|| "—".to_owned(), |s| s.to_string());
            let included = match f["trainer_included"].as_bool() {
                Some(true) => " · the logged advantages include them",
                Some(false) => " · the logged advantages leave them out",
                None => "",
            };
            out.push_str(&format!(
                "\n\n{} · training step {step} · group {} · credit moved {}{included}\n  {}",
                f["kind"].as_str().unwrap_or(""),
                f["group"].as_str().unwrap_or(""),
                super::shown(&f["credit_moved"]),
                f["evidence"].as_str().unwrap_or("")
            ));
        }
        for note in json["notes"].as_array().into_iter().flatten() {
            out.push_str(&format!("\nnote: {}", note.as_str().unwrap_or("")));
        }
        out
    }
}
