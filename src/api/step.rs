//! `vantage step RUN --trajectory ID --step K [--scheme S]… [--json]`: one step, as the app's step
//! inspector: its text and fields, and its credit under every scheme the run supports (or those
//! named), each with the formula and the terms that make the number (docs/JSON.md has the JSON).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Analysis, number32};
use crate::credit::{Credit, Params, Support};
use crate::model::{Run, TrajectoryId};
use crate::source::OpenOptions;

/// One step of a rollout (docs/JSON.md): its thought, action and observation, its kind, role,
/// scores and outcome, and its credit under every scheme the run supports (or those named), each
/// with the formula and the values of its terms, so the number can be redone by hand.
#[derive(Debug, clap::Args, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The run: a log, a folder of runs or a v2 dataset.
    #[serde(rename = "path")]
    pub file: PathBuf,
    /// The rollout (its id, as `compare` and the app name it).
    #[arg(long)]
    pub trajectory: String,
    /// The step along it, from 0 (as `compare` and `diff` number them).
    #[arg(long)]
    pub step: usize,
    /// A scheme to compute (repeatable; an id, `ID@PRESET`, `expr:FORMULA` or `formula:NAME`);
    /// without it, every scheme the run supports, with its defaults.
    #[arg(long = "scheme", value_name = "SCHEME")]
    #[serde(default)]
    pub schemes: Vec<String>,
    /// The characters of each text shown, at most (1 to 100000).
    #[arg(long, default_value_t = 2000)]
    #[serde(default = "default_chars")]
    pub chars: usize,
    /// Print JSON (docs/JSON.md).
    #[arg(long, help_heading = super::declare::TERMINAL)]
    #[serde(skip)]
    pub json: bool,
}

fn default_chars() -> usize {
    2000
}

/// `--chars`' largest value.
const MAX_CHARS: usize = 100_000;

/// The terms as JSON: `{"name", "value"}`, `value` `null` for a note; in `f32`'s digits, as the
/// credit itself is.
fn terms_json(terms: &[crate::analysis::step_credit::Term]) -> Value {
    terms
        .iter()
        .map(|(name, value)| json!({ "name": name, "value": value.map_or(Value::Null, |v| number32(v as f32)) }))
        .collect()
}

impl Analysis for Args {
    const NAME: &'static str = "step";

    fn wants_json(&self) -> bool {
        self.json
    }

    fn json(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        if self.chars == 0 || self.chars > MAX_CHARS {
            anyhow::bail!("--chars {}: from 1 to {MAX_CHARS}", self.chars);
        }
        let run = super::open(&self.file, options)?;
        let t = super::trajectory(&run, &self.trajectory)?;
        let tr = &run.trajectories;
        let steps = tr.num_steps(t);
        if self.step >= steps {
            anyhow::bail!(
                "--step {}: {} has {} (0 to {})",
                self.step,
                self.trajectory,
                crate::analysis::count(steps, "step"),
                steps.saturating_sub(1)
            );
        }
        let p = tr.path_range(t).start + self.step;
        let node = tr.path_nodes[p];
        let (nodes, n) = (&run.nodes, node.index());
        let texts: serde_json::Map<String, Value> =
            [("thought", nodes.thought[n]), ("action", nodes.action[n]), ("observation", nodes.observation[n])]
                .into_iter()
                .map(|(name, id)| {
                    let text = run.text(id);
                    (
                        name.to_owned(),
                        json!({ "text": crate::model::truncate(&text, self.chars), "chars": text.chars().count() }),
                    )
                })
                .collect();
        let scores: serde_json::Map<String, Value> = nodes
            .scores
            .iter()
            .filter_map(|(name, column)| column.get(n).filter(|v| !v.is_nan()).map(|&v| (name.clone(), number32(v))))
            .collect();
        let (credit, unsupported) = if self.schemes.is_empty() {
            every_scheme(&run, t, p)
        } else {
            (self.named_schemes(&run, t, p)?, serde_json::Map::new())
        };
        Ok(json!({
            "vantage_step": 1,
            "run": self.file.display().to_string(),
            "trajectory": self.trajectory,
            "group": run.group_key(tr.group[t.index()]),
            "step": self.step,
            "steps": steps,
            "outcome": number32(tr.reward[t.index()]),
            "success": tr.success[t.index()],
            "kind": run.label(nodes.kind[n]),
            "role": run.label(nodes.role[n]),
            "state_key": run.label(nodes.state_key[n]),
            "env_reward": number32(nodes.env_reward[n]),
            "scores": scores,
            "first_error": nodes.first_error(node),
            "texts": texts,
            "credit": credit,
            "unsupported": unsupported,
        }))
    }

    fn text(&self, json: &Value) -> String {
        let mut out = format!(
            "{} · step {} of {} · group {} · outcome {} · kind {}",
            self.trajectory,
            self.step + 1,
            json["steps"],
            json["group"].as_str().unwrap_or_default(),
            super::shown(&json["outcome"]),
            json["kind"].as_str().unwrap_or_default(),
        );
        for (name, score) in json["scores"].as_object().into_iter().flatten() {
            out.push_str(&format!("\nscore {name}: {}", super::shown(score)));
        }
        for (name, text) in json["texts"].as_object().into_iter().flatten() {
            let body = text["text"].as_str().unwrap_or_default();
            if !body.is_empty() {
                out.push_str(&format!("\n{name}: {body}"));
            }
        }
        out.push_str("\ncredit:");
        for c in json["credit"].as_array().into_iter().flatten() {
            let terms: Vec<String> = c["terms"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| match t["value"] {
                    Value::Null => t["name"].as_str().unwrap_or_default().to_owned(),
                    ref v => format!("{} = {}", t["name"].as_str().unwrap_or_default(), super::shown_term(v)),
                })
                .collect();
            out.push_str(&format!(
                "\n  {} = {}\n      {}",
                c["name"].as_str().unwrap_or_default(),
                super::shown(&c["value"]),
                crate::analysis::step_credit::formula_line(c["formula"].as_str().unwrap_or_default(), &terms)
            ));
        }
        let unsupported = json["unsupported"].as_object().map_or(0, serde_json::Map::len);
        if unsupported > 0 {
            out.push_str(&format!("\n{unsupported} schemes not supported by this run (see vantage check)"));
        }
        out
    }
}

/// A JSON list of credit entries, and the schemes without one (by id, with why).
type CreditList = (Vec<Value>, serde_json::Map<String, Value>);

/// Path step `p` of trajectory `t` under every scheme `run` supports, with its defaults; the others
/// with why not.
fn every_scheme(run: &Run, t: TrajectoryId, p: usize) -> CreditList {
    let mut unsupported: serde_json::Map<String, Value> = crate::credit::support_table(run)
        .into_iter()
        .filter_map(|(info, support)| match support {
            Support::No(why) => Some((info.id.to_owned(), Value::from(why))),
            Support::Yes => None,
        })
        .collect();
    let mut credit = Vec::new();
    for (scheme, computed) in crate::credit::explained_under_defaults(run) {
        let info = scheme.info();
        match computed {
            Ok(c) => {
                let terms =
                    crate::analysis::step_credit::terms(run, Some((scheme, &Params::defaults(scheme))), &c, t, p);
                credit.push(credit_entry(info.id, info.display_name, &c, &terms, p));
            }
            Err(err) => {
                unsupported.insert(info.id.to_owned(), Value::from(err.to_string()));
            }
        }
    }
    (credit, unsupported)
}

/// One scheme's entry of `credit`: its name, the step's value, the formula and the terms.
fn credit_entry(scheme: &str, name: &str, c: &Credit, terms: &[crate::analysis::step_credit::Term], p: usize) -> Value {
    json!({
        "scheme": scheme,
        "name": name,
        "value": number32(c.step[p]),
        "formula": c.terms.formula,
        "terms": terms_json(terms),
    })
}

impl Args {
    /// Path step `p` of trajectory `t` under each scheme `--scheme` names, or why one cannot be.
    fn named_schemes(&self, run: &Run, t: TrajectoryId, p: usize) -> anyhow::Result<Vec<Value>> {
        let mut credit = Vec::new();
        for spec in &self.schemes {
            let (id, preset) = super::scheme_and_preset(spec);
            let computation = super::formulas::Computation::resolve(id, preset, Vec::new())
                .map_err(|e| e.context(format!("--scheme {spec}")))?;
            let (c, scheme, name) = match &computation {
                super::formulas::Computation::Scheme { scheme, params, .. } => {
                    if let Support::No(why) = scheme.supports(run) {
                        anyhow::bail!("--scheme {spec}: not supported by this run: {why}");
                    }
                    let c =
                        scheme.compute_explained(run, params).map_err(|e| anyhow::anyhow!("--scheme {spec}: {e}"))?;
                    (c, Some((*scheme, params)), scheme.info().display_name.to_owned())
                }
                super::formulas::Computation::Formula { name, .. } => {
                    (computation.compute(run).map_err(|e| e.context(format!("--scheme {spec}")))?, None, name.clone())
                }
            };
            let terms = crate::analysis::step_credit::terms(run, scheme, &c, t, p);
            credit.push(credit_entry(spec, &name, &c, &terms, p));
        }
        Ok(credit)
    }
}
