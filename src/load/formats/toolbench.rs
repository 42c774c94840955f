//! ToolBench DFSDT answers: one JSON object per file with the search tree under `tree.tree` (nested
//! `children`; node types Thought / Action / Action Input, tool results as `observation`, abandoned
//! branches `pruned`), the query under `answer_generation.query`, and `win` for the tree. Every node
//! but the empty root is a step; every leaf ends a trajectory whose outcome is 1 when the tree won
//! and the leaf gave the final answer (`finished`), else 0; its finish reason says `give_answer`,
//! `pruned` or `give_up`. A CoT answer (StableToolBench's `CoT@n`) has no tree but `trys`, each a
//! `chain` of the same nodes and its own `win`: every try is a trajectory, its outcome 1 when it won.

use crate::load::records::{finish, text_of};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "ToolBench DFSDT";

/// The ToolBench loader.
pub struct ToolBench;

#[derive(serde::Deserialize)]
struct Answer {
    win: bool,
    #[serde(default)]
    tree: Option<TreeWrap>,
    #[serde(default)]
    trys: Option<Vec<Try>>,
    #[serde(default)]
    answer_generation: Option<Generation>,
}

/// One try of a CoT answer: a chain of nodes, and whether it won.
#[derive(serde::Deserialize)]
struct Try {
    #[serde(default)]
    chain: Vec<Node>,
    #[serde(default)]
    win: bool,
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
        "ToolBench DFSDT answer file: {win, tree: {tree: nested node_type / children}, answer_generation}, or a CoT answer {win, trys: [{chain, win}]}"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let text = text_of(FORMAT, bytes)?;
        let incompatible = |reason: &str| LoadError::Incompatible { format: FORMAT, reason: reason.to_owned() };
        let head = text.trim_start();
        if !(head.starts_with('{') && head.contains("\"win\"") && head.contains("\"node_type\"")) {
            return Err(incompatible("no {win, tree | trys} object with node_type nodes"));
        }
        report.records_seen += 1;
        let answer: Answer = match crate::load::lenient::parse_located(&text, &mut Vec::new()) {
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
        if let Some(trys) = &answer.trys {
            // A try's own `win` is not kept up to date: the answer's `win` is the last try's.
            let last = trys.len().saturating_sub(1);
            for (i, attempt) in trys.iter().enumerate() {
                let steps: Vec<NewStep<'_>> = attempt.chain.iter().map(step_of).collect();
                if steps.is_empty() {
                    report.warn(Warning::skipped(1, format!("trys[{i}].chain"), "empty"));
                    continue;
                }
                let won = attempt.win || (answer.win && i == last);
                let answered =
                    attempt.chain.last().is_some_and(|n| n.finished || n.description.contains("give_answer"));
                let outcome = Outcome {
                    reward: Some(if won { 1.0 } else { 0.0 }),
                    success: Some(won),
                    components: Vec::new(),
                    finish: Some(if answered { "give_answer" } else { "give_up" }),
                };
                b.add_chain_trajectory(&format!("{stem}/try{i}"), group, &steps, &outcome, &NewTokens::default());
            }
            return finish(b, report, "CoT try");
        }
        let Some(root) = answer.tree.as_ref() else {
            report.warn(Warning::skipped(1, "tree", "missing (neither a search tree nor CoT trys)"));
            return finish(b, report, "search tree");
        };
        let Some(tree) = b.add_tree(&stem, group) else { return finish(b, report, "search tree") };
        // The root is an empty placeholder: its children hang under the prompt.
        let mut leaves = Vec::new();
        let mut stack: Vec<(&Node, NodeId)> = root.tree.children.iter().rev().map(|c| (c, NodeId::NONE)).collect();
        while let Some((node, parent)) = stack.pop() {
            let id = b.add_node(group, parent, &step_of(node));
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

/// A node as a step: Thought text the thought, any other node's text the action, the tool result
/// the observation.
fn step_of(node: &Node) -> NewStep<'_> {
    let text = node.description.as_str();
    NewStep {
        kind: Some(&node.node_type),
        thought: (node.node_type == "Thought" && !text.is_empty()).then_some(text),
        action: (node.node_type != "Thought" && !text.is_empty()).then_some(text),
        observation: node.observation.as_deref().filter(|o| !o.is_empty()),
        ..NewStep::default()
    }
}
