//! Math-Shepherd: JSON lines of `{task, input, label}` where `input` marks each step's end with
//! `ки` and `label` replaces each mark with `+` (the step can still reach the right answer, by
//! Monte-Carlo rollouts) or `-`. Steps get the `label` score 1 / 0 and the first `-` step the
//! first-error flag; the last step's label stands for the outcome. One group per problem.

use crate::load::lines::{LineFeed, head_text, read_all, records};
use crate::load::records::{Record, head_matches, object_has};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "Math-Shepherd";
/// The step tag.
const TAG: &str = "ки";

/// The Math-Shepherd loader.
pub struct MathShepherd;

#[derive(serde::Deserialize)]
struct Item {
    #[serde(default)]
    task: Option<String>,
    input: String,
    label: String,
}

impl Loader for MathShepherd {
    fn name(&self) -> &'static str {
        "math_shepherd"
    }

    fn description(&self) -> &'static str {
        "Math-Shepherd: JSONL of {task, input (steps end in ки), label (ки replaced by + or -)}"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| stream(name, report))
    }
}

fn accepts(head: &str) -> bool {
    let tagged = |r: Record<'_>| serde_json::from_str::<Item>(r.text).is_ok_and(|item| item.input.contains(TAG));
    head_matches(head, |r| object_has(r.text, &["input", "label"]) && tagged(r))
}

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    records(RunBuilder::new(name, FORMAT), "solution", add, report)
}

/// Reads the format, giving the event loop back between slices (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    if !accepts(&head_text(bytes)) {
        return Err(LoadError::Incompatible { format: FORMAT, reason: format!("no {{input, label}} with {TAG} tags") });
    }
    read_all(stream(name, std::mem::take(report)), bytes, report).await
}

/// Splits `input` at the tags: (question, steps). The question is the text before "Step 1:".
fn split(input: &str) -> (String, Vec<String>) {
    let mut parts: Vec<&str> = input.split(TAG).collect();
    parts.pop_if(|p| p.trim().is_empty());
    let mut steps: Vec<String> = parts.iter().map(|p| p.trim().to_owned()).collect();
    let mut question = String::new();
    if let Some(first) = steps.first_mut()
        && let Some(at) = first.find("Step 1:")
    {
        question = first[..at].trim().to_owned();
        *first = first[at..].to_owned();
    }
    (question, steps)
}

/// The `+` / `-` marks of `label`, in order.
fn marks(label: &str, input: &str) -> Vec<bool> {
    // The label is the input with each tag replaced by a mark: read the mark after each step text.
    let mut out = Vec::new();
    let mut rest = label;
    for part in input.split(TAG).take(input.matches(TAG).count()) {
        let Some(at) = rest.find(part.trim_end()) else { break };
        rest = &rest[at + part.trim_end().len()..];
        let trimmed = rest.trim_start();
        match trimmed.chars().next() {
            Some('+') => out.push(true),
            Some('-') => out.push(false),
            _ => break,
        }
        rest = &trimmed[1..];
    }
    out
}

fn add(b: &mut RunBuilder, record: Record<'_>, index: usize, item: &Item, report: &mut LoadReport) {
    let (question, steps) = split(&item.input);
    let marks = marks(&item.label, &item.input);
    if steps.is_empty() {
        report.warn(Warning::skipped(record.line, "input", format!("no {TAG} step tags")));
        return;
    }
    if marks.len() != steps.len() {
        report.warn(Warning::kept(
            record.line,
            "label",
            format!("{} marks for {} steps; steps without a mark are unlabelled", marks.len(), steps.len()),
        ));
    }
    let key = format!("{}-{index}", item.task.as_deref().unwrap_or("item"));
    let (group, _) = b.add_group(&NewGroup {
        key: &key,
        task: item.task.as_deref(),
        prompt: Some(&question),
        ..NewGroup::default()
    });
    let first_wrong = marks.iter().position(|m| !m);
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .enumerate()
        .map(|(k, t)| NewStep {
            kind: Some("step"),
            thought: Some(t),
            scores: marks.get(k).map(|&m| vec![("label", if m { 1.0 } else { 0.0 })]).unwrap_or_default(),
            first_error: match (marks.get(k), first_wrong) {
                (None, _) => None,
                (Some(_), Some(f)) if k > f => None,
                (Some(_), f) => Some(f == Some(k)),
            },
            ..NewStep::default()
        })
        .collect();
    let last = marks.get(steps.len() - 1).copied();
    let outcome = Outcome { reward: last.map(|m| if m { 1.0 } else { 0.0 }), success: last, ..Outcome::default() };
    b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
}
