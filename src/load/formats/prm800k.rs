//! PRM800K raw labels (JSON lines `{labeler, timestamp, question, label: {steps, finish_reason}}`):
//! at every step the labeler rated each candidate completion −1 / 0 / +1 and chose one (or wrote
//! one) to continue. The chosen completions form the main path; the other rated candidates hang off
//! it as alternatives, so a record is a comb-shaped tree. Ratings are the `label` step score. The
//! main path ends a trajectory with outcome 1 when the labeler finished with a `solution`, else 0
//! (`found_error`, `give_up`, where an `end` step closes the path); each alternative ends one
//! without an outcome.

use crate::load::lines::{LineFeed, head_text, read_all, records};
use crate::load::records::{Record, head_matches, object_has};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "PRM800K";

/// The PRM800K loader.
pub struct Prm800k;

#[derive(serde::Deserialize)]
struct Item {
    #[serde(default)]
    labeler: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    question: Question,
    label: Label,
}

#[derive(serde::Deserialize)]
struct Question {
    problem: String,
    #[serde(default)]
    ground_truth_answer: Option<String>,
}

#[derive(serde::Deserialize)]
struct Label {
    steps: Vec<LabelStep>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(serde::Deserialize)]
struct LabelStep {
    #[serde(default)]
    completions: Option<Vec<Completion>>,
    #[serde(default)]
    human_completion: Option<Completion>,
    #[serde(default)]
    chosen_completion: Option<usize>,
}

#[derive(serde::Deserialize)]
struct Completion {
    text: String,
    #[serde(default)]
    rating: Option<i64>,
}

impl Loader for Prm800k {
    fn name(&self) -> &'static str {
        "prm800k"
    }

    fn description(&self) -> &'static str {
        "PRM800K raw labels: JSONL of {question, label: {steps: [{completions, chosen_completion, human_completion}], finish_reason}}"
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
            reason: "the first line lacks question / label.steps.completions".to_owned(),
        });
    }
    read_all(stream(name, std::mem::take(report)), bytes, report).await
}

fn accepts(head: &str) -> bool {
    head_matches(head, |r| object_has(r.text, &["question", "label"]) && r.text.contains("\"completions\""))
}

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    records(RunBuilder::new(name, FORMAT), "labelled solution", add, report)
}

fn step_of(c: &Completion) -> NewStep<'_> {
    NewStep {
        kind: Some("step"),
        thought: Some(&c.text),
        scores: c.rating.map(|r| vec![("label", r as f32)]).unwrap_or_default(),
        ..NewStep::default()
    }
}

fn add(b: &mut RunBuilder, record: Record<'_>, index: usize, item: &Item, report: &mut LoadReport) {
    if item.label.steps.is_empty() {
        report.warn(Warning::skipped(record.line, "label.steps", "no steps"));
        return;
    }
    let labeler: String = item.labeler.as_deref().unwrap_or("labeler").chars().take(8).collect();
    let key = format!("{index}-{labeler}-{}", item.timestamp.as_deref().unwrap_or(""));
    let new = NewGroup {
        key: &key,
        prompt: Some(&item.question.problem),
        gold: item.question.ground_truth_answer.as_deref(),
        ..NewGroup::default()
    };
    let (group, _) = b.add_group(&new);
    let Some(tree) = b.add_tree(&key, group) else { return };
    let tokens = NewTokens::default();
    let mut parent = NodeId::NONE;
    let mut alternatives = 0usize;
    for (k, s) in item.label.steps.iter().enumerate() {
        let completions = s.completions.as_deref().unwrap_or(&[]);
        let chosen = s.chosen_completion.filter(|&c| c < completions.len());
        // Rated candidates that did not continue the solution: leaves without an outcome.
        for (i, c) in completions.iter().enumerate() {
            if Some(i) == chosen {
                continue;
            }
            let leaf = b.add_node(group, parent, &step_of(c));
            b.add_trajectory(&format!("{key}/s{k}c{i}"), group, tree, leaf, &Outcome::default(), &tokens);
            alternatives += 1;
        }
        let next = match (chosen, &s.human_completion) {
            (Some(i), _) => Some(step_of(&completions[i])),
            (None, Some(human)) => Some(NewStep { kind: Some("human"), ..step_of(human) }),
            (None, None) => None,
        };
        if let Some(step) = next {
            parent = b.add_node(group, parent, &step);
        } else {
            // No completion continues (found_error / give_up): the main path ends in a step of its
            // own, so it ends at a leaf and its outcome survives any conversion.
            let reason = item.label.finish_reason.as_deref().unwrap_or("stopped");
            let end = NewStep { kind: Some("end"), action: Some(reason), ..NewStep::default() };
            parent = b.add_node(group, parent, &end);
            break;
        }
    }
    if parent.is_some() {
        let solved = item.label.finish_reason.as_deref() == Some("solution");
        let outcome = Outcome {
            reward: Some(if solved { 1.0 } else { 0.0 }),
            success: Some(solved),
            components: Vec::new(),
            finish: item.label.finish_reason.as_deref(),
        };
        b.add_trajectory(&format!("{key}/main"), group, tree, parent, &outcome, &tokens);
    } else if alternatives == 0 {
        report.warn(Warning::skipped(record.line, "label.steps", "no completion to follow"));
    }
}
