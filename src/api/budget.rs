//! `vantage budget RUN [--a SCHEME] [--b SCHEME] [--json]`: the signal budget per training step,
//! as the app's Overview draws it: how many rollouts teach nothing (in zero-variance groups, cut
//! off, given no credit) and where each scheme's |credit| goes (docs/JSON.md has the JSON).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Analysis, number};
use crate::source::OpenOptions;

/// The signal budget per training step (docs/JSON.md): mean reward, success rate, the rollouts
/// that teach nothing (in zero-variance groups, which give no gradient under GRPO; truncated;
/// given no credit under A or B), and where schemes A and B put their |credit| (successful and
/// failed rollouts, roles, before and after the first error).
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Args {
    /// The run: a log, a folder of runs or a v2 dataset.
    #[serde(rename = "path")]
    pub file: PathBuf,
    /// `--a` and `--b`: the schemes whose credit is shown.
    #[command(flatten)]
    #[serde(flatten)]
    pub schemes: super::TwoSchemes,
    /// `--json`, `--limit`, `--offset`.
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::Page,
}

impl Analysis for Args {
    const NAME: &'static str = "budget";

    fn page(&self) -> Option<&super::Page> {
        Some(&self.page)
    }

    fn json(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        let run = super::open(&self.file, options)?;
        let [a, b] = self.schemes.credit(&run)?;
        let stats = crate::analysis::overview::per_train_step(&run, [a.as_deref(), b.as_deref()]);
        let scheme = |slot: usize, s: &crate::analysis::overview::TrainStepStats| {
            let (mean, std) = s.abs_credit[slot];
            json!({
                "mean_abs_credit": number(mean),
                "std_abs_credit": number(std),
                "uncredited": number(s.uncredited_share[slot]),
                "credit_share": s.credit_share[slot],
            })
        };
        // Each label's |credit| mass per training step, under A and under B (docs/LABELS.md).
        let (labels, _) = super::label::of(&self.file, &run);
        let mass = |credit: &Option<Vec<f32>>| {
            credit.as_deref().map(|c| crate::analysis::labels::mass_by_train_step(&run, &labels, c)).unwrap_or_default()
        };
        let (mass_a, mass_b) = (mass(&a), mass(&b));
        let labels_of = |train_step: i64| -> Vec<Value> {
            let of = |masses: &[crate::analysis::labels::Mass], name: &str| {
                masses
                    .iter()
                    .find(|m| m.label == name && m.train_step.unwrap_or(0) == train_step)
                    .map_or(Value::Null, |m| json!({ "mass": number(m.mass), "share": number(m.share) }))
            };
            let on: Vec<&crate::analysis::labels::Mass> =
                mass_a.iter().chain(&mass_b).filter(|m| m.train_step.unwrap_or(0) == train_step).collect();
            let mut names: Vec<&str> = Vec::new();
            for m in &on {
                if !names.contains(&m.label.as_str()) {
                    names.push(&m.label);
                }
            }
            names
                .iter()
                .map(|name| {
                    let steps = on.iter().find(|m| m.label == *name).map_or(0, |m| m.steps);
                    json!({ "label": name, "steps": steps, "a": of(&mass_a, name), "b": of(&mass_b, name) })
                })
                .collect()
        };
        let steps: Vec<Value> = self
            .page
            .of(stats.iter())
            .map(|s| {
                json!({
                    "train_step": s.train_step,
                    "groups": s.num_groups,
                    "mean_reward": number(s.mean_reward),
                    "success_rate": number(s.success_rate),
                    "zero_variance_groups": s.zero_variance_share,
                    "zero_variance_rollouts": s.zero_variance_rollouts,
                    "truncated": s.truncated_share,
                    "a": if a.is_some() { scheme(0, s) } else { Value::Null },
                    "b": if b.is_some() { scheme(1, s) } else { Value::Null },
                    "labels": labels_of(s.train_step),
                })
            })
            .collect();
        Ok(json!({
            "vantage_budget": 1,
            "run": self.file.display().to_string(),
            "a": self.schemes.a,
            "b": self.schemes.b,
            "offset": self.page.offset,
            "limit": self.page.limit,
            "steps_total": stats.len(),
            "steps": steps,
        }))
    }

    fn text(&self, json: &Value) -> String {
        let percent = |v: &Value| v.as_f64().map_or_else(|| "—".to_owned(), |v| format!("{:.0}%", v * 100.0));
        let mut out = format!(
            "{}: signal budget of {} training steps ({} listed from {})",
            self.file.display(),
            json["steps_total"],
            json["steps"].as_array().map_or(0, Vec::len),
            self.page.offset
        );
        for s in json["steps"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "\n  step {} · {} groups · mean reward {} · success {} · zero-variance rollouts {} · truncated {}",
                s["train_step"],
                s["groups"],
                super::shown(&s["mean_reward"]),
                percent(&s["success_rate"]),
                percent(&s["zero_variance_rollouts"]),
                percent(&s["truncated"]),
            ));
            for (slot, spec) in [("a", &self.schemes.a), ("b", &self.schemes.b)] {
                let (Some(spec), Some(scheme)) = (spec, s[slot].as_object()) else { continue };
                let shares: Vec<String> = scheme["credit_share"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(kind, share)| format!("{kind} {}", percent(share)))
                    .collect();
                out.push_str(&format!(
                    "\n    {spec}: mean |credit| {} · uncredited {} · |credit| to {}",
                    super::shown(&scheme["mean_abs_credit"]),
                    percent(&scheme["uncredited"]),
                    shares.join(", ")
                ));
            }
            for label in s["labels"].as_array().into_iter().flatten() {
                let side = |slot: &str| match label[slot].as_object() {
                    Some(m) => {
                        format!("{} |{}| ({})", slot.to_uppercase(), super::shown(&m["mass"]), percent(&m["share"]))
                    }
                    None => format!("{} —", slot.to_uppercase()),
                };
                out.push_str(&format!(
                    "\n    label {} · {} steps · {} · {}",
                    label["label"].as_str().unwrap_or_default(),
                    label["steps"],
                    side("a"),
                    side("b")
                ));
            }
        }
        out
    }
}
