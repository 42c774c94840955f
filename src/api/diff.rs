//! `vantage diff RUN --left TRAJ [--right TRAJ] [--by text|state|similar] [--json]`: two rollouts
//! aligned step by step, as the app's Diff view: where they part, and what credit each step got
//! under schemes A and B (docs/JSON.md has the JSON).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Analysis, number32};
use crate::analysis::diff::{AlignBy, align, default_partner, divergence};
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
    /// The right rollout (default: one of its group with the other outcome, else the next one).
    #[arg(long)]
    #[serde(default)]
    pub right: Option<String>,
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
        let right = match &self.right {
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
        Ok(json!({
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
        }))
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
