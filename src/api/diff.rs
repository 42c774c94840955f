//! `vantage diff RUN --left TRAJ [--right TRAJ] [--by text|state|similar] [--json]`: two rollouts
//! aligned step by step, as the app's Diff view: where they part, and what credit each step got
//! under schemes A and B (docs/JSON.md has the JSON).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Analysis, number32};
use crate::analysis::diff::{AlignBy, MAX_ALIGNED, align, align_group, default_partner, divergence};
use crate::model::{Run, TrajectoryId};
use crate::source::OpenOptions;

/// Two rollouts of a group aligned step by step (docs/JSON.md): where they part, each step's
/// text, and its credit under schemes A and B.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Args {
    /// The run: a log, a folder of runs or a v2 dataset.
    #[serde(rename = "path")]
    pub file: PathBuf,
    /// The left rollout (its id, as `compare` and the app name it).
    #[arg(long)]
    pub left: String,
    /// The right rollout (default: one of its group with the other outcome, else the next one);
    /// given more than once, every one of them is aligned with the left on the same columns too
    /// (`aligned`: up to 15 beside the left).
    #[arg(long)]
    #[serde(default, deserialize_with = "one_or_many")]
    pub right: Vec<String>,
    /// How steps match: text (the same thought and action), state (the same state key), similar
    /// (half their words in common).
    #[arg(long, default_value = "text", value_parser = super::declare::Choices(WAYS.map(|(name, _)| name).to_vec()))]
    #[serde(default = "text_way")]
    pub by: String,
    /// `--a` and `--b`: the schemes whose credit is shown.
    #[command(flatten)]
    #[serde(flatten)]
    pub schemes: super::TwoSchemes,
    /// `--json`, `--limit`, `--offset`.
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::Page,
}

/// A rollout or a list of them (an agent may pass either).
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match <Option<OneOrMany> as serde::Deserialize>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(one)) => vec![one],
        Some(OneOrMany::Many(many)) => many,
    })
}

fn text_way() -> String {
    "text".to_owned()
}

/// `--by`'s names.
const WAYS: [(&str, AlignBy); 3] = [("text", AlignBy::Text), ("state", AlignBy::State), ("similar", AlignBy::Similar)];

/// A rollout's id, outcome and length.
fn rollout(run: &Run, t: TrajectoryId) -> Value {
    let tr = &run.trajectories;
    json!({
        "trajectory": run.trajectory_key(t),
        "outcome": number32(tr.reward[t.index()]),
        "success": tr.success[t.index()],
        "steps": tr.num_steps(t),
    })
}

impl Args {
    /// The left and every right rollout on the same columns (`aligned`): each column's step of
    /// each rollout (with its credit under A and B), and the columns where they part.
    fn aligned(
        &self,
        run: &Run,
        left: TrajectoryId,
        by: AlignBy,
        credit: [Option<&[f32]>; 2],
    ) -> anyhow::Result<Value> {
        let mut rollouts = vec![left];
        for key in &self.right {
            rollouts.push(super::trajectory(run, key)?);
        }
        if rollouts.len() > MAX_ALIGNED {
            anyhow::bail!("--right: at most {} rollouts beside the left", MAX_ALIGNED - 1);
        }
        let alignment = align_group(run, &rollouts, by);
        let tr = &run.trajectories;
        let columns: Vec<Value> = alignment
            .columns
            .iter()
            .map(|column| {
                Value::Array(
                    column
                        .iter()
                        .zip(&alignment.rollouts)
                        .map(|(k, &t)| match k {
                            Some(k) => {
                                let p = tr.path_range(t).start + k;
                                let value = |c: Option<&[f32]>| c.map_or(Value::Null, |c| number32(c[p]));
                                json!({"step": k, "a": value(credit[0]), "b": value(credit[1])})
                            }
                            None => Value::Null,
                        })
                        .collect(),
                )
            })
            .collect();
        Ok(json!({
            "rollouts": alignment.rollouts.iter().map(|&t| rollout(run, t)).collect::<Vec<_>>(),
            "columns": columns,
            "forks": alignment.forks(),
        }))
    }
}

impl Analysis for Args {
    const NAME: &'static str = "diff";

    fn page(&self) -> Option<&super::Page> {
        Some(&self.page)
    }

    fn json(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        let by = WAYS
            .iter()
            .find(|(name, _)| *name == self.by)
            .map(|&(_, by)| by)
            .ok_or_else(|| anyhow::anyhow!("--by {}: one of {}", self.by, WAYS.map(|(n, _)| n).join(", ")))?;
        let run = super::open(&self.file, options)?;
        let left = super::trajectory(&run, &self.left)?;
        let right = match self.right.first() {
            Some(key) => super::trajectory(&run, key)?,
            None => default_partner(&run, left).ok_or_else(|| {
                anyhow::anyhow!("{} is alone in its group: name the rollout to align it with (--right)", self.left)
            })?,
        };
        let [a, b] = self.schemes.credit(&run)?;
        let rows = align(&run, left, right, by);
        let parted = divergence(&rows);
        let tr = &run.trajectories;
        let step = |t: TrajectoryId, k: Option<usize>| -> Value {
            let Some(k) = k else { return Value::Null };
            let p = tr.path_range(t).start + k;
            let node = tr.path_nodes[p];
            let value = |c: &Option<Vec<f32>>| c.as_ref().map_or(Value::Null, |c| number32(c[p]));
            json!({
                "step": k,
                "kind": run.label(run.nodes.kind[node.index()]),
                "text": super::step_text(&run, node, 200),
                "a": value(&a),
                "b": value(&b),
            })
        };
        let listed: Vec<Value> = self
            .page
            .of(rows.iter().enumerate())
            .map(|(i, row)| {
                json!({
                    "row": i,
                    "side": match (row.left, row.right) {
                        (Some(_), Some(_)) => "both",
                        (Some(_), None) => "left",
                        _ => "right",
                    },
                    "left": step(left, row.left),
                    "right": step(right, row.right),
                })
            })
            .collect();
        let mut out = json!({
            "vantage_diff": 1,
            "run": self.file.display().to_string(),
            "left": rollout(&run, left),
            "right": rollout(&run, right),
            "by": self.by,
            "a": self.schemes.a,
            "b": self.schemes.b,
            "matched": rows.iter().filter(|r| r.matched()).count(),
            "divergence": parted.map(|i| json!({ "row": i, "left_step": rows[i].left, "right_step": rows[i].right })),
            "offset": self.page.offset,
            "limit": self.page.limit,
            "rows_total": rows.len(),
            "rows": listed,
        });
        if self.right.len() > 1 {
            out["aligned"] = self.aligned(&run, left, by, [a.as_deref(), b.as_deref()])?;
        }
        Ok(out)
    }

    fn text(&self, json: &Value) -> String {
        let who = |side: &Value| {
            format!(
                "{} (outcome {}, {} steps)",
                side["trajectory"].as_str().unwrap_or_default(),
                super::shown(&side["outcome"]),
                side["steps"]
            )
        };
        let mut out = format!("{}: {} against {}", self.file.display(), who(&json["left"]), who(&json["right"]));
        let step_number = |v: &Value| v.as_u64().map_or_else(|| "—".to_owned(), |k| (k + 1).to_string());
        match json["divergence"].as_object() {
            Some(d) => out.push_str(&format!(
                "\n{} matching steps by {}; they part at row {} (left step {}, right step {})",
                json["matched"],
                self.by,
                d["row"].as_u64().unwrap_or(0) + 1,
                step_number(&d["left_step"]),
                step_number(&d["right_step"]),
            )),
            None => out.push_str(&format!("\n{} steps, all matching by {}", json["matched"], self.by)),
        }
        let cell = |s: &Value| {
            if s.is_null() {
                return "—".to_owned();
            }
            let mut cell = format!(
                "{}. [{}] {}",
                s["step"].as_u64().unwrap_or(0) + 1,
                s["kind"].as_str().unwrap_or_default(),
                crate::model::truncate(s["text"].as_str().unwrap_or_default(), 60)
            );
            for slot in ["a", "b"] {
                if !s[slot].is_null() {
                    cell.push_str(&format!(" {}={}", slot.to_uppercase(), super::shown(&s[slot])));
                }
            }
            cell
        };
        if let Some(aligned) = json["aligned"].as_object() {
            let names: Vec<&str> =
                aligned["rollouts"].as_array().into_iter().flatten().filter_map(|r| r["trajectory"].as_str()).collect();
            let forks: Vec<String> = aligned["forks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .map(|c| (c + 1).to_string())
                .collect();
            out.push_str(&format!(
                "\n{} rollouts on {} columns ({}); they part at column(s) {}",
                names.len(),
                aligned["columns"].as_array().map_or(0, Vec::len),
                names.join(", "),
                if forks.is_empty() { "none".to_owned() } else { forks.join(", ") }
            ));
        }
        for r in json["rows"].as_array().into_iter().flatten() {
            let mark = match r["side"].as_str() {
                Some("both") => "=",
                Some("left") => "−",
                _ => "+",
            };
            out.push_str(&format!("\n{mark} {}  |  {}", cell(&r["left"]), cell(&r["right"])));
        }
        out
    }
}
