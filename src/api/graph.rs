//! `vantage graph RUN --group G [--across-steps] [--merge auto|state|action] [--a S] [--b S] [--json]`: the
//! behaviour graph of a group, as the app's Graph view draws it: its states merged across rollouts,
//! the transitions between them with their counts, each state's visits, mean credit under schemes
//! A and B and outcome spread, and the forks (docs/JSON.md has the JSON).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::Analysis;
use crate::analysis::behaviour::{self, GraphMerge, MAX_NODES};
use crate::source::OpenOptions;

/// A group's behaviour graph (docs/JSON.md): states, transitions, credit and forks.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Args {
    /// The run: a log, a folder of runs or a v2 dataset.
    #[serde(rename = "path")]
    pub file: PathBuf,
    /// The group (its id, as `compare` and the app name it).
    #[arg(long)]
    pub group: String,
    /// The graph of the group's task across training steps: every group of its task in one graph.
    #[arg(long)]
    #[serde(default)]
    pub across_steps: bool,
    /// How steps become states: auto (state keys when every step has one, else actions), state,
    /// action (the action with numbers and paths folded).
    #[arg(long, default_value = "auto", value_parser = super::declare::Choices(GraphMerge::ALL.map(GraphMerge::name).to_vec()))]
    #[serde(default = "auto")]
    pub merge: String,
    /// `--a` and `--b`: the schemes whose credit colours the graph (A is GRPO when neither is named).
    #[command(flatten)]
    #[serde(flatten)]
    pub schemes: super::TwoSchemes,
    /// `--json`, `--limit`, `--offset` (over the states).
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::Page,
}

fn auto() -> String {
    "auto".to_owned()
}

/// A number, or `null` where it is not finite.
fn number(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

impl Analysis for Args {
    const NAME: &'static str = "graph";

    fn page(&self) -> Option<&super::Page> {
        Some(&self.page)
    }

    fn json(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        let merge = GraphMerge::from_name(&self.merge).ok_or_else(|| {
            anyhow::anyhow!("--merge {}: one of {}", self.merge, GraphMerge::ALL.map(GraphMerge::name).join(", "))
        })?;
        let run = super::open(&self.file, options)?;
        let group = run.group_by_key(&self.group).ok_or_else(|| {
            anyhow::anyhow!("{}: no group {:?} (`vantage compare` lists them)", self.file.display(), self.group)
        })?;
        let schemes = super::TwoSchemes {
            a: self.schemes.a.clone().or_else(|| self.schemes.b.is_none().then(|| "grpo".to_owned())),
            b: self.schemes.b.clone(),
        };
        let [a, b] = schemes.credit(&run)?;
        let none: Vec<f32> = Vec::new();
        let credit = [a.as_deref().unwrap_or(&none), b.as_deref().unwrap_or(&none)];
        let (graph, groups) = if self.across_steps {
            (behaviour::build_task(&run, group, credit, merge, MAX_NODES), behaviour::task_groups(&run, group).len())
        } else {
            (behaviour::build(&run, group, credit, merge, MAX_NODES), 1)
        };
        let nodes: Vec<Value> = self
            .page
            .of(graph.nodes.iter().enumerate())
            .map(|(i, n)| {
                json!({
                    "id": i,
                    "key": n.key,
                    "label": n.label,
                    "visits": n.visits,
                    "rollouts": n.rollouts.len(),
                    "a": number(n.credit[0]),
                    "b": number(n.credit[1]),
                    "outcome_mean": number(n.outcome_mean),
                    "spread": number(n.spread),
                    "fork": n.fork,
                    "column": n.column,
                    "row": n.row,
                })
            })
            .collect();
        let edges: Vec<Value> = graph
            .edges
            .iter()
            .map(|e| {
                json!({
                    "from": e.from,
                    "to": e.to,
                    "count": e.count,
                    "a": number(e.credit[0]),
                    "b": number(e.credit[1]),
                    "cycle": e.back,
                })
            })
            .collect();
        Ok(json!({
            "vantage_graph": 1,
            "run": self.file.display().to_string(),
            "group": self.group,
            "groups": groups,
            "merge": graph.merge.name(),
            "a": schemes.a,
            "b": schemes.b,
            "rollouts": graph.paths.len(),
            "forks": graph.nodes.iter().filter(|n| n.fork).count(),
            "cycles": graph.edges.iter().filter(|e| e.back).count(),
            "folded": graph.folded,
            "offset": self.page.offset,
            "limit": self.page.limit,
            "nodes_total": graph.nodes.len(),
            "nodes": nodes,
            "edges": edges,
        }))
    }

    fn text(&self, json: &Value) -> String {
        let mut out = format!(
            "{}: group {}{}, {} rollouts, {} states by {}, {} transitions ({} closing a cycle), {} fork(s)",
            self.file.display(),
            self.group,
            if self.across_steps { format!(" and its task across {} groups", json["groups"]) } else { String::new() },
            json["rollouts"],
            json["nodes_total"],
            json["merge"].as_str().unwrap_or_default(),
            json["edges"].as_array().map_or(0, Vec::len),
            json["cycles"],
            json["forks"],
        );
        if json["folded"].as_u64().unwrap_or(0) > 0 {
            out.push_str(&format!("; {} rare states folded into `other`", json["folded"]));
        }
        for n in json["nodes"].as_array().into_iter().flatten() {
            let credit = ["a", "b"]
                .iter()
                .filter(|s| !json[**s].is_null())
                .map(|s| format!(" {}={}", s.to_uppercase(), super::shown(&n[*s])))
                .collect::<String>();
            out.push_str(&format!(
                "\n{}{:>4}  {:<40} visits {:>3}, rollouts {:>3}, spread {}{}",
                if n["fork"].as_bool().unwrap_or(false) { "*" } else { " " },
                n["id"].as_u64().unwrap_or(0),
                crate::model::truncate(n["label"].as_str().unwrap_or_default(), 40),
                n["visits"].as_u64().unwrap_or(0),
                n["rollouts"].as_u64().unwrap_or(0),
                super::shown(&n["spread"]),
                credit,
            ));
        }
        out
    }
}
