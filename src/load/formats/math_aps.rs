//! MATH-APS (OpenR's OmegaPRM output), two shapes of JSON lines `{question_id, question,
//! final_answer, reasoning_steps}`: `reasoning_steps` as a nested tree (`text`, `mc_value`,
//! `children`) or as a flat list of `{solution_prefix, mc_value}` whose prefixes nest. Either way
//! every node is a step carrying its Monte-Carlo value (as MC statistics with an unknown count and
//! as the `value` score), and every leaf ends a trajectory whose outcome is its MC value (1.0 / 0.0
//! on the complete rollouts of the trees; an estimate on flat prefixes, which the run's notes say).

use crate::load::lenient::FieldError;
use crate::load::lines::{JsonLines, LineFeed, LineStream, head_text, parse_json, read_all};
use crate::load::records::{Record, head_matches, object_has};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{GroupId, McStats, NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, TreeId, Warning};

/// The format name.
const FORMAT: &str = "MATH-APS";

/// The MATH-APS loader.
pub struct MathAps;

#[derive(serde::Deserialize)]
struct Item {
    question_id: serde_json::Value,
    #[serde(default)]
    question: Option<String>,
    #[serde(default)]
    final_answer: Option<serde_json::Value>,
    reasoning_steps: Steps,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Steps {
    Tree(TreeNode),
    Flat(Vec<Prefix>),
}

#[derive(serde::Deserialize)]
struct TreeNode {
    #[serde(default)]
    text: String,
    #[serde(default)]
    mc_value: Option<crate::load::lenient::Num>,
    #[serde(default)]
    children: Vec<Self>,
}

#[derive(serde::Deserialize)]
struct Prefix {
    solution_prefix: String,
    #[serde(default)]
    mc_value: Option<crate::load::lenient::Num>,
}

impl Loader for MathAps {
    fn name(&self) -> &'static str {
        "math_aps"
    }

    fn description(&self) -> &'static str {
        "MATH-APS (OmegaPRM): JSONL of {question_id, question, reasoning_steps: tree {text, mc_value, children} or [{solution_prefix, mc_value}]}"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| stream(name, report))
    }
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    if !accepts(&head_text(bytes)) {
        return Err(LoadError::Incompatible {
            format: FORMAT,
            reason: "the first line lacks question_id / reasoning_steps".to_owned(),
        });
    }
    read_all(stream(name, std::mem::take(report)), bytes, report).await
}

fn accepts(head: &str) -> bool {
    head_matches(head, |r| object_has(r.text, &["question_id", "reasoning_steps"]))
}

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    Box::new(LineStream::new(Lines { flat: false }, RunBuilder::new(name, FORMAT), report))
}

/// The format's lines; whether a flat question was seen (the run's notes say what that means).
struct Lines {
    flat: bool,
}

impl JsonLines for Lines {
    type Item = Item;
    fn what(&self) -> &'static str {
        "question"
    }

    fn parse(text: &str) -> Result<Item, FieldError> {
        parse_json(text)
    }

    fn add(&mut self, b: &mut RunBuilder, record: Record<'_>, _: usize, item: Item, report: &mut LoadReport) {
        if add(b, record, &item, report) && !self.flat {
            self.flat = true;
            b.meta_mut()
                .notes
                .push("flat MATH-APS prefixes: a leaf's outcome is its Monte-Carlo value, an estimate".to_owned());
        }
    }
}

fn value(v: Option<crate::load::lenient::Num>) -> Option<f32> {
    v.map(|v| v.0).filter(|v| !v.is_nan())
}

fn step(text: &str, mc: Option<f32>) -> NewStep<'_> {
    NewStep {
        kind: Some("step"),
        thought: Some(text.trim()),
        scores: mc.map(|v| vec![("value", v)]).unwrap_or_default(),
        mc: mc.map(|mean| McStats { n: 0, mean }),
        ..NewStep::default()
    }
}

/// Adds one question; whether it was the flat shape.
fn add(b: &mut RunBuilder, record: Record<'_>, item: &Item, report: &mut LoadReport) -> bool {
    let mut key = match &item.question_id {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if b.group(&key).is_some() {
        let unique = format!("{key}@{}", record.line);
        report.warn(Warning::kept(record.line, "question_id", format!("{key:?} repeats; this one is {unique:?}")));
        key = unique;
    }
    let gold = item.final_answer.as_ref().map(|g| match g {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let new = NewGroup { key: &key, prompt: item.question.as_deref(), gold: gold.as_deref(), ..NewGroup::default() };
    let (group, _) = b.add_group(&new);
    let Some(tree) = b.add_tree(&key, group) else { return false };
    let mut leaves: Vec<(NodeId, Option<f32>)> = Vec::new();
    let flat = matches!(item.reasoning_steps, Steps::Flat(_));
    match &item.reasoning_steps {
        Steps::Tree(root) => {
            // The root is the question itself: its children hang under the prompt.
            let mut stack: Vec<(&TreeNode, NodeId)> = root.children.iter().rev().map(|c| (c, NodeId::NONE)).collect();
            while let Some((node, parent)) = stack.pop() {
                let mc = value(node.mc_value);
                let id = b.add_node(group, parent, &step(&node.text, mc));
                if node.children.is_empty() {
                    leaves.push((id, mc));
                }
                stack.extend(node.children.iter().rev().map(|c| (c, id)));
            }
        }
        Steps::Flat(prefixes) => flat_tree(b, group, prefixes, &mut leaves),
    }
    for (i, (leaf, mc)) in leaves.into_iter().enumerate() {
        let outcome = Outcome { reward: mc, success: mc.map(|v| v >= 1.0), ..Outcome::default() };
        b.add_trajectory(&format!("{key}/leaf{i}"), group, tree, leaf, &outcome, &NewTokens::default());
    }
    let _: TreeId = tree;
    flat
}

/// The tree implied by nested prefixes: each prefix hangs under the longest other prefix it extends.
fn flat_tree(b: &mut RunBuilder, group: GroupId, prefixes: &[Prefix], leaves: &mut Vec<(NodeId, Option<f32>)>) {
    let mut order: Vec<usize> = (0..prefixes.len()).collect();
    order.sort_by_key(|&i| (prefixes[i].solution_prefix.len(), i));
    let mut placed: Vec<(usize, NodeId)> = Vec::new();
    let mut has_children = vec![false; prefixes.len()];
    for &i in &order {
        let text = prefixes[i].solution_prefix.as_str();
        let parent = placed
            .iter()
            .filter(|(j, _)| {
                let p = prefixes[*j].solution_prefix.as_str();
                p.len() < text.len() && text.starts_with(p)
            })
            .max_by_key(|(j, _)| prefixes[*j].solution_prefix.len())
            .copied();
        let (own, parent_node) = match parent {
            Some((j, node)) => {
                has_children[j] = true;
                (&text[prefixes[j].solution_prefix.len()..], node)
            }
            None => (text, NodeId::NONE),
        };
        let id = b.add_node(group, parent_node, &step(own, value(prefixes[i].mc_value)));
        placed.push((i, id));
    }
    for (i, node) in placed {
        if !has_children[i] {
            leaves.push((node, value(prefixes[i].mc_value)));
        }
    }
}
