//! Tree-of-Thoughts logs (princeton-nlp/tree-of-thought-llm), three shapes in one JSON file:
//! * game24 BFS: per problem, levels of `new_ys` (full strings, each extending one string of that
//!   level's `ys`) with LLM `values` and the kept `select_new_ys`; the tree is rebuilt from string
//!   prefixes, each node's new line is its action, `value` its score, its kind `selected` or
//!   `discarded`; the final `ys` are leaves with outcome `infos[j].r`, discarded leaves have none.
//! * game24 CoT: per problem, 100 sampled solutions (`ys`) with `infos[j].r`: one group each, a
//!   step per line.
//! * crosswords DFS: per puzzle, the DFS records (`actions` from the root, `info.r_letter` /
//!   `r_word`); the tree is rebuilt from action prefixes, `r_letter` / `r_word` are step scores and
//!   the leaf's `r_word` its outcome.

use std::collections::HashMap;

use crate::load::records::{Record, array_records, finish, parse, text_of};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{GroupId, NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, TreeId, Warning};

/// The format name.
const FORMAT: &str = "Tree-of-Thoughts log";

/// The Tree-of-Thoughts loader.
pub struct TreeOfThoughts;

#[derive(serde::Deserialize)]
struct Game24 {
    idx: serde_json::Value,
    #[serde(default)]
    steps: Vec<Level>,
    ys: Vec<String>,
    infos: Vec<Info>,
}

#[derive(serde::Deserialize)]
struct Level {
    #[serde(default)]
    x: Option<String>,
    ys: Vec<String>,
    new_ys: Vec<String>,
    #[serde(default)]
    values: Vec<crate::load::lenient::Num>,
    #[serde(default)]
    select_new_ys: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Info {
    #[serde(default)]
    r: Option<crate::load::lenient::Num>,
}

#[derive(serde::Deserialize)]
struct CrosswordStep {
    actions: Vec<String>,
    info: CrosswordInfo,
}

#[derive(serde::Deserialize)]
struct CrosswordInfo {
    #[serde(default)]
    r_letter: Option<crate::load::lenient::Num>,
    #[serde(default)]
    r_word: Option<crate::load::lenient::Num>,
}

impl Loader for TreeOfThoughts {
    fn name(&self) -> &'static str {
        "tot"
    }

    fn description(&self) -> &'static str {
        "Tree-of-Thoughts logs: game24 BFS (steps/new_ys/values), game24 CoT samples (ys/infos), crosswords DFS (actions/info)"
    }

    paced!(read);
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let text = text_of(FORMAT, bytes)?;
    let incompatible = |reason: &str| LoadError::Incompatible { format: FORMAT, reason: reason.to_owned() };
    let records = array_records(&text).ok_or_else(|| incompatible("not a JSON array"))?;
    let first = records.first().ok_or_else(|| incompatible("an empty array"))?;
    let mut b = RunBuilder::new(name, FORMAT);
    if first.text.trim_start().starts_with('[') {
        if !first.text.contains("\"actions\"") {
            return Err(incompatible("nested arrays without crossword `actions`"));
        }
        for (i, record) in records.into_iter().enumerate() {
            crate::load::records::advance(report, &text, record).await;
            crossword(&mut b, i, record, report);
        }
        return finish(b, report, "crossword search");
    }
    if !crate::load::records::object_has(first.text, &["idx", "ys", "infos"]) {
        return Err(incompatible("records lack idx / ys / infos"));
    }
    for record in records {
        crate::load::records::advance(report, &text, record).await;
        let Some(problem) = parse::<Game24>(record, report) else { continue };
        if problem.steps.is_empty() {
            game24_cot(&mut b, &problem, record, report);
        } else {
            game24_bfs(&mut b, &problem, record, report);
        }
    }
    finish(b, report, "problem")
}

fn id_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn reward(info: Option<&Info>) -> Option<f32> {
    info.and_then(|i| i.r).map(|r| r.0).filter(|r| !r.is_nan())
}

/// 100 sampled solutions of one problem: one group, a step per line.
fn game24_cot(b: &mut RunBuilder, problem: &Game24, record: Record<'_>, report: &mut LoadReport) {
    let key = format!("cot-{}", id_text(&problem.idx));
    if b.group(&key).is_some() {
        report.warn(Warning::skipped(record.line, "idx", format!("duplicate problem {key:?}")));
        return;
    }
    let (group, _) = b.add_group(&NewGroup { key: &key, ..NewGroup::default() });
    for (j, y) in problem.ys.iter().enumerate() {
        let lines: Vec<&str> = y.lines().filter(|l| !l.trim().is_empty()).collect();
        let steps: Vec<NewStep<'_>> =
            lines.iter().map(|l| NewStep { kind: Some("line"), action: Some(l), ..NewStep::default() }).collect();
        if steps.is_empty() {
            report.warn(Warning::kept(record.line, format!("ys[{j}]"), "an empty sample; left out"));
            continue;
        }
        let r = reward(problem.infos.get(j));
        let outcome = Outcome { reward: r, success: r.map(|r| r > 0.5), ..Outcome::default() };
        b.add_chain_trajectory(&format!("{key}/s{j}"), group, &steps, &outcome, &NewTokens::default());
    }
}

/// A BFS tree rebuilt from string prefixes.
fn game24_bfs(b: &mut RunBuilder, problem: &Game24, record: Record<'_>, report: &mut LoadReport) {
    let key = format!("bfs-{}", id_text(&problem.idx));
    if b.group(&key).is_some() {
        report.warn(Warning::skipped(record.line, "idx", format!("duplicate problem {key:?}")));
        return;
    }
    let prompt = problem.steps.first().and_then(|s| s.x.clone());
    let (group, _) = b.add_group(&NewGroup { key: &key, prompt: prompt.as_deref(), ..NewGroup::default() });
    let Some(tree) = b.add_tree(&key, group) else { return };
    // Node of each full string; the empty string is the prompt.
    let mut node_of: HashMap<&str, NodeId> = HashMap::new();
    node_of.insert("", NodeId::NONE);
    let mut has_children: HashMap<NodeId, bool> = HashMap::new();
    for (t, level) in problem.steps.iter().enumerate() {
        for (i, y) in level.new_ys.iter().enumerate() {
            if node_of.contains_key(y.as_str()) {
                continue;
            }
            // The parent: the longest string of this level's frontier that `y` extends.
            let parent = level.ys.iter().filter(|p| y.starts_with(p.as_str())).max_by_key(|p| p.len());
            let Some(parent) = parent.and_then(|p| node_of.get(p.as_str()).map(|&n| (p, n))) else {
                report.warn(Warning::kept(
                    record.line,
                    format!("steps[{t}].new_ys[{i}]"),
                    "extends no frontier string; left out",
                ));
                continue;
            };
            let (parent_text, parent_node) = parent;
            let line = y[parent_text.len()..].trim();
            let selected = level.select_new_ys.iter().any(|s| s == y);
            let value = level.values.get(i).map(|v| v.0).filter(|v| !v.is_nan());
            let step = NewStep {
                kind: Some(if selected { "selected" } else { "discarded" }),
                action: Some(line),
                scores: value.map(|v| vec![("value", v)]).unwrap_or_default(),
                ..NewStep::default()
            };
            let node = b.add_node(group, parent_node, &step);
            has_children.insert(parent_node, true);
            node_of.insert(y.as_str(), node);
        }
    }
    add_leaves(b, problem, group, tree, &node_of, &has_children, record, report);
}

/// Every childless node ends a trajectory: the final `ys` with their `infos[j].r`, the rest without
/// an outcome.
#[expect(clippy::too_many_arguments, reason = "the pieces of one tree being finished")]
fn add_leaves(
    b: &mut RunBuilder,
    problem: &Game24,
    group: GroupId,
    tree: TreeId,
    node_of: &HashMap<&str, NodeId>,
    has_children: &HashMap<NodeId, bool>,
    record: Record<'_>,
    report: &mut LoadReport,
) {
    let key = format!("bfs-{}", id_text(&problem.idx));
    let mut leaves: Vec<(&str, NodeId)> =
        node_of.iter().filter(|(s, n)| !s.is_empty() && !has_children.contains_key(n)).map(|(s, n)| (*s, *n)).collect();
    leaves.sort_by_key(|(_, n)| n.0);
    for (text, node) in leaves {
        let final_index = problem.ys.iter().position(|y| y == text);
        let r = final_index.and_then(|j| reward(problem.infos.get(j)));
        let outcome = Outcome { reward: r, success: r.map(|r| r > 0.5), ..Outcome::default() };
        b.add_trajectory(&format!("{key}/n{}", node.0), group, tree, node, &outcome, &NewTokens::default());
    }
    for (j, y) in problem.ys.iter().enumerate() {
        if !node_of.contains_key(y.as_str()) {
            report.warn(Warning::kept(record.line, format!("ys[{j}]"), "a final answer not in the search tree"));
        }
    }
}

/// A crossword DFS trace: the tree from action prefixes, dense step scores, leaf outcomes.
fn crossword(b: &mut RunBuilder, index: usize, record: Record<'_>, report: &mut LoadReport) {
    let Some(steps) = parse::<Vec<CrosswordStep>>(record, report) else { return };
    let key = format!("crossword-{index}");
    let (group, _) = b.add_group(&NewGroup { key: &key, ..NewGroup::default() });
    let Some(tree) = b.add_tree(&key, group) else { return };
    let mut node_of: HashMap<Vec<&str>, NodeId> = HashMap::new();
    let mut scores_at: HashMap<NodeId, (f32, f32)> = HashMap::new();
    let mut has_children: HashMap<NodeId, bool> = HashMap::new();
    for step in &steps {
        let path: Vec<&str> = step.actions.iter().map(String::as_str).collect();
        let letter = step.info.r_letter.map_or(f32::NAN, |r| r.0);
        let word = step.info.r_word.map_or(f32::NAN, |r| r.0);
        let mut parent = NodeId::NONE;
        for depth in 1..=path.len() {
            let prefix = path[..depth].to_vec();
            let node = if let Some(&n) = node_of.get(&prefix) {
                n
            } else {
                // The record's own node carries its dense rewards; a prefix it passes through does not.
                let own = depth == path.len();
                let scores = if own { vec![("r_letter", letter), ("r_word", word)] } else { Vec::new() };
                let new = NewStep { kind: Some("fill"), action: Some(path[depth - 1]), scores, ..NewStep::default() };
                let n = b.add_node(group, parent, &new);
                has_children.insert(parent, true);
                node_of.insert(prefix, n);
                if own {
                    scores_at.insert(n, (letter, word));
                }
                n
            };
            parent = node;
        }
    }
    let mut leaves: Vec<NodeId> = node_of.values().copied().filter(|n| !has_children.contains_key(n)).collect();
    leaves.sort_by_key(|n| n.0);
    for leaf in leaves {
        let (letter, word) = scores_at.get(&leaf).copied().unwrap_or((f32::NAN, f32::NAN));
        let outcome = Outcome {
            reward: (!word.is_nan()).then_some(word),
            success: (!word.is_nan()).then_some(word >= 1.0),
            components: vec![("r_letter", letter), ("r_word", word)],
            finish: None,
        };
        b.add_trajectory(&format!("{key}/n{}", leaf.0), group, tree, leaf, &outcome, &NewTokens::default());
    }
}
