//! ProcessBench (Qwen): a JSON array of solutions, each with its steps, the 0-based index of the
//! first wrong step (`label`, −1 when every step is right) and whether the final answer is right.
//! One group per problem; steps before the first error are labelled right (`label` score 1), the
//! first error wrong (0, and the first-error flag), later steps unlabelled.

use crate::load::records::{Record, array_records, finish, object_has, parse, text_of};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "ProcessBench";

/// The ProcessBench loader.
pub struct ProcessBench;

#[derive(serde::Deserialize)]
struct Solution {
    id: String,
    #[serde(default)]
    generator: Option<String>,
    problem: String,
    steps: Vec<String>,
    final_answer_correct: bool,
    label: i64,
}

impl Loader for ProcessBench {
    fn name(&self) -> &'static str {
        "processbench"
    }

    fn description(&self) -> &'static str {
        "ProcessBench: JSON array of {id, problem, steps, label (first wrong step or -1), final_answer_correct}"
    }

    paced!(read);
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let text = text_of(FORMAT, bytes)?;
    let incompatible = |reason: &str| LoadError::Incompatible { format: FORMAT, reason: reason.to_owned() };
    let records = array_records(&text).ok_or_else(|| incompatible("not a JSON array"))?;
    if !records.first().is_some_and(|r| object_has(r.text, &["problem", "steps", "label", "final_answer_correct"])) {
        return Err(incompatible("records lack problem / steps / label / final_answer_correct"));
    }
    let mut b = RunBuilder::new(name, FORMAT);
    for record in records {
        crate::load::records::advance(report, &text, record).await;
        add(&mut b, record, report);
    }
    finish(b, report, "solution")
}

fn add(b: &mut RunBuilder, record: Record<'_>, report: &mut LoadReport) {
    let Some(s) = parse::<Solution>(record, report) else { return };
    if s.steps.is_empty() {
        report.warn(Warning::skipped(record.line, "steps", "no steps"));
        return;
    }
    let first_error = match usize::try_from(s.label) {
        Ok(k) if k < s.steps.len() => Some(k),
        Ok(k) => {
            report.warn(Warning::kept(
                record.line,
                "label",
                format!("first wrong step {k} is past the last step ({}); treated as no error", s.steps.len() - 1),
            ));
            None
        }
        Err(_) => None,
    };
    if b.has_trajectory(&s.id) {
        report.warn(Warning::skipped(record.line, "id", format!("duplicate id {:?}", s.id)));
        return;
    }
    let (group, _) = b.add_group(&NewGroup { key: &s.id, prompt: Some(&s.problem), ..NewGroup::default() });
    let steps: Vec<NewStep<'_>> = s
        .steps
        .iter()
        .enumerate()
        .map(|(k, text)| {
            let (label, flag) = match first_error {
                None => (Some(1.0), Some(false)),
                Some(e) if k < e => (Some(1.0), Some(false)),
                Some(e) if k == e => (Some(0.0), Some(true)),
                Some(_) => (None, None),
            };
            NewStep {
                kind: Some("step"),
                thought: Some(text),
                scores: label.map(|l| vec![("label", l)]).unwrap_or_default(),
                first_error: flag,
                ..NewStep::default()
            }
        })
        .collect();
    let reward = if s.final_answer_correct { 1.0 } else { 0.0 };
    let components: Vec<(&str, f32)> = Vec::new();
    let outcome = Outcome { reward: Some(reward), success: Some(s.final_answer_correct), components, finish: None };
    let key = match &s.generator {
        Some(g) => format!("{}/{g}", s.id),
        None => s.id.clone(),
    };
    b.add_chain_trajectory(&key, group, &steps, &outcome, &NewTokens::default());
}
