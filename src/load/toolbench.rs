//! ToolBench DFSDT answers: one JSON object per file with the search tree under `tree.tree` (nested
//! `children`; node types Thought / Action / Action Input, tool results as `observation`, abandoned
//! branches `pruned`), the query under `answer_generation.query`, and `win` for the tree. Every node
//! but the empty root is a step; every leaf ends a trajectory whose outcome is 1 when the tree won
//! and the leaf gave the final answer (`finished`), else 0; its finish reason says `give_answer`,
//! `pruned` or `give_up`.

use super::records::{finish, text_of};
use super::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "ToolBench DFSDT";

/// The ToolBench loader.
pub struct ToolBench;

#[derive(serde::Deserialize)]
struct Answer {
    win: bool,
    tree: TreeWrap,
    #[serde(default)]
    answer_generation: Option<Generation>,
}

#[derive(serde::Deserialize)]
struct TreeWrap {
    tree: Node,
}

#[derive(serde::Deserialize)]
struct Generation {
    #[serde(default)]
    query: Option<String>,
}

#[derive(serde::Deserialize)]
struct Node {
    node_type: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    pruned: bool,
    #[serde(default)]
    finished: bool,
    #[serde(default)]
    observation: Option<String>,
    #[serde(default)]
    children: Vec<Self>,
}

impl Loader for ToolBench {
    fn name(&self) -> &'static str {
        "toolbench"
    }

    fn description(&self) -> &'static str {
        "ToolBench DFSDT answer file: {win, tree: {tree: nested node_type / children}, answer_generation}"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let text = text_of(FORMAT, bytes)?;
        let incompatible = |reason: &str| LoadError::Incompatible { format: FORMAT, reason: reason.to_owned() };
        let head = text.trim_start();
        if !(head.starts_with('{') && head.contains("\"win\"") && head.contains("\"node_type\"")) {
            return Err(incompatible("no {win, tree} object with node_type nodes"));
        }
        report.records_seen += 1;
        let answer: Answer = match super::lenient::parse_located(&text, &mut Vec::new()) {
            Ok(answer) => answer,
            Err(err) => {
                report.warn(Warning::skipped(1, err.field, err.reason));
                return finish(RunBuilder::new(name, FORMAT), report, "search tree");
            }
        };
        report.records_loaded += 1;
        let stem = std::path::Path::new(name).file_stem().and_then(|s| s.to_str()).unwrap_or(name).to_owned();
        let mut b = RunBuilder::new(name, FORMAT);
        let query = answer.answer_generation.as_ref().and_then(|g| g.query.as_deref());
        let (group, _) = b.add_group(&NewGroup { key: &stem, prompt: query, ..NewGroup::default() });
        let Some(tree) = b.add_tree(&stem, group) else { return finish(b, report, "search tree") };
        // The root is an empty placeholder: its children hang under the prompt.
        let mut leaves = Vec::new();
        let mut stack: Vec<(&Node, NodeId)> =
            answer.tree.tree.children.iter().rev().map(|c| (c, NodeId::NONE)).collect();
        while let Some((node, parent)) = stack.pop() {
            let text = node.description.as_str();
            let step = NewStep {
                kind: Some(&node.node_type),
                thought: (node.node_type == "Thought" && !text.is_empty()).then_some(text),
                action: (node.node_type != "Thought" && !text.is_empty()).then_some(text),
                observation: node.observation.as_deref().filter(|o| !o.is_empty()),
                ..NewStep::default()
            };
            let id = b.add_node(group, parent, &step);
            if node.children.is_empty() {
                leaves.push((id, node));
            }
            stack.extend(node.children.iter().rev().map(|c| (c, id)));
        }
        for (i, (leaf, node)) in leaves.into_iter().enumerate() {
            let won = answer.win && node.finished;
            let finish_reason = if node.finished {
                "give_answer"
            } else if node.pruned {
                "pruned"
            } else {
                "give_up"
            };
            let outcome = Outcome {
                reward: Some(if won { 1.0 } else { 0.0 }),
                success: Some(won),
                components: Vec::new(),
                finish: Some(finish_reason),
            };
            b.add_trajectory(&format!("{stem}/leaf{i}"), group, tree, leaf, &outcome, &NewTokens::default());
        }
        finish(b, report, "search tree")
    }
}
