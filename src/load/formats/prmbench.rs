//! PRMBench: JSON lines, each a correct PRM800K solution (`original_process`) and a modified one
//! with errors at the 1-based `error_steps`. Both are one group: the original with outcome 1 and
//! every step labelled right, the modified one with outcome 0 (1 when it has no error step), its
//! error steps labelled wrong (`label` 0, the step kind naming the error class) and the first of them
//! flagged as the first error. An error step past the last step is a warning, not a failure.

use crate::load::lines::{LineFeed, head_text, read_all, records};
use crate::load::records::{Record, head_matches, object_has};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "PRMBench";

/// The PRMBench loader.
pub struct PrmBench;

#[derive(serde::Deserialize)]
struct Item {
    idx: String,
    #[serde(default)]
    classification: Option<String>,
    #[serde(default)]
    question: Option<String>,
    #[serde(default)]
    original_question: Option<String>,
    original_process: Vec<String>,
    modified_process: Vec<String>,
    #[serde(default)]
    error_steps: Vec<i64>,
}

impl Loader for PrmBench {
    fn name(&self) -> &'static str {
        "prmbench"
    }

    fn description(&self) -> &'static str {
        "PRMBench: JSONL of {idx, original_process, modified_process, error_steps (1-based), classification}"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| stream(name, report))
    }
}

fn accepts(head: &str) -> bool {
    head_matches(head, |r| object_has(r.text, &["original_process", "modified_process"]))
}

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    records(RunBuilder::new(name, FORMAT), "item", add, report)
}

/// Reads the format, giving the event loop back between slices (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    if !accepts(&head_text(bytes)) {
        let reason = "the first line lacks original_process / modified_process".to_owned();
        return Err(LoadError::Incompatible { format: FORMAT, reason });
    }
    read_all(stream(name, std::mem::take(report)), bytes, report).await
}

fn add(b: &mut RunBuilder, record: Record<'_>, _: usize, item: &Item, report: &mut LoadReport) {
    // The same problem appears once per error class: the class is part of the key.
    let key = match &item.classification {
        Some(class) => format!("{}/{class}", item.idx),
        None => item.idx.clone(),
    };
    if b.group(&key).is_some() {
        report.warn(Warning::skipped(record.line, "idx", format!("duplicate idx {key:?}")));
        return;
    }
    let n = item.modified_process.len();
    let mut errors: Vec<usize> = Vec::new();
    for &e in &item.error_steps {
        match usize::try_from(e) {
            Ok(k) if (1..=n).contains(&k) => errors.push(k - 1),
            _ => report.warn(Warning::kept(
                record.line,
                "error_steps",
                format!("step {e} is outside the modified process (1..={n}); ignored"),
            )),
        }
    }
    errors.sort_unstable();
    errors.dedup();
    let prompt = item.question.as_deref().or(item.original_question.as_deref());
    let task = item.classification.as_deref();
    let (group, _) = b.add_group(&NewGroup { key: &key, task, prompt, ..NewGroup::default() });
    let original: Vec<NewStep<'_>> = item
        .original_process
        .iter()
        .map(|t| NewStep {
            kind: Some("step"),
            thought: Some(t),
            scores: vec![("label", 1.0)],
            first_error: Some(false),
            ..NewStep::default()
        })
        .collect();
    let first = errors.first().copied();
    let modified: Vec<NewStep<'_>> = item
        .modified_process
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let wrong = errors.binary_search(&k).is_ok();
            NewStep {
                kind: Some(if wrong { task.unwrap_or("error") } else { "step" }),
                thought: Some(t),
                scores: vec![("label", if wrong { 0.0 } else { 1.0 })],
                first_error: match first {
                    Some(f) if k < f => Some(false),
                    Some(f) if k == f => Some(true),
                    Some(_) => None,
                    None => Some(false),
                },
                ..NewStep::default()
            }
        })
        .collect();
    let tokens = NewTokens::default();
    let right = Outcome { reward: Some(1.0), success: Some(true), ..Outcome::default() };
    if !original.is_empty() {
        b.add_chain_trajectory(&format!("{key}/original"), group, &original, &right, &tokens);
    }
    let sound = errors.is_empty();
    let outcome = Outcome { reward: Some(if sound { 1.0 } else { 0.0 }), success: Some(sound), ..Outcome::default() };
    if !modified.is_empty() {
        b.add_chain_trajectory(&format!("{key}/modified"), group, &modified, &outcome, &tokens);
    }
}
