//! verl rollout dumps (`trainer.rollout_data_dir`): `<global_step>.jsonl`, one line per response
//! with `input`, `output`, `score`, `step`, `gts` and the reward function's extra keys. verl writes
//! no group id, so groups are rebuilt from identical `input` within a training step (the run's notes
//! say so). `output` is split into steps at `<think>`, `<tool_call>` / `<search>`, `<answer>` tags,
//! with `<tool_response>` / `<information>` / `<result>` text as the observation of the step before.

use std::collections::BTreeMap;

use super::records::{Record, finish, head_matches, line_records, object_has, parse, text_of, text_step};
use super::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder};

/// The format name.
const FORMAT: &str = "verl rollout dump";

/// The verl dump loader.
pub struct VerlDump;

#[derive(serde::Deserialize)]
struct Line {
    input: String,
    output: String,
    #[serde(default)]
    score: Option<super::lenient::Num>,
    #[serde(default)]
    step: Option<i64>,
    #[serde(default)]
    gts: Option<serde_json::Value>,
    #[serde(flatten)]
    extra: BTreeMap<String, serde_json::Value>,
}

impl Loader for VerlDump {
    fn name(&self) -> &'static str {
        "verl"
    }

    fn description(&self) -> &'static str {
        "verl rollout_data_dir dump: <step>.jsonl lines of {input, output, score, step, gts, extra reward keys}"
    }

    paced!(read);
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let text = text_of(FORMAT, bytes)?;
    if !head_matches(&text, |r| object_has(r.text, &["input", "output", "score"])) {
        return Err(LoadError::Incompatible {
            format: FORMAT,
            reason: "the first line lacks input / output / score".to_owned(),
        });
    }
    let mut stream = VerlStream::new(name);
    for record in line_records(&text) {
        super::records::advance(report, &text, record).await;
        stream.add(record, report);
    }
    finish(stream.builder, report, "response")
}

/// A verl dump read piece by piece (a `rollout_data_dir` that gains `<step>.jsonl` files while
/// the run trains): whole lines in, the run so far out at any point.
pub struct VerlStream {
    builder: RunBuilder,
    per_group: BTreeMap<String, usize>,
}

impl VerlStream {
    /// An empty dump named `name`.
    pub fn new(name: &str) -> Self {
        let mut builder = RunBuilder::new(name, FORMAT);
        builder.meta_mut().notes.push(
            "groups rebuilt from identical `input` within a training step (verl dumps no uid); two prompts with the same text share a group".to_owned(),
        );
        Self { builder, per_group: BTreeMap::new() }
    }

    /// Whether `text` (the first lines of a file) looks like a verl dump.
    pub fn accepts(text: &str) -> bool {
        head_matches(text, |r| object_has(r.text, &["input", "output", "score"]))
    }

    /// Reads whole lines of `bytes`, whose first line is line `first_line` of the dump; returns
    /// the number of the line after them.
    pub fn feed(&mut self, bytes: &[u8], first_line: u64, report: &mut LoadReport) -> u64 {
        let text = String::from_utf8_lossy(bytes);
        let text = super::lenient::quote_non_finite(&text);
        let lines = text.split('\n').count() as u64 - u64::from(text.ends_with('\n'));
        for record in line_records(&text) {
            self.add(Record { line: record.line + first_line - 1, text: record.text }, report);
        }
        first_line + lines
    }

    fn add(&mut self, record: Record<'_>, report: &mut LoadReport) {
        add(&mut self.builder, record, report, &mut self.per_group);
    }

    /// The run so far.
    pub fn snapshot(&self, report: &LoadReport) -> Run {
        super::records::snapshot(&self.builder, report)
    }

    /// Approximate heap bytes of the run so far.
    pub fn heap_bytes(&self) -> usize {
        self.builder.heap_bytes()
    }

    /// The finished run; an error when no response loaded.
    pub fn finish(self, report: &LoadReport) -> Result<Run, LoadError> {
        finish(self.builder, report, "response")
    }
}

/// Tags that open a step, with the step kind and whether the text is the action (else the thought).
const STEP_TAGS: [(&str, &str, bool); 4] = [
    ("think", "think", false),
    ("tool_call", "tool_call", true),
    ("search", "search", true),
    ("answer", "answer", true),
];
/// Tags whose text is what the environment returned to the step before.
const OBSERVATION_TAGS: [&str; 3] = ["tool_response", "information", "result"];

/// Splits a response into (kind, thought, action, observation) steps at its tags; untagged text is
/// a `response` step. A response without tags is one step.
pub fn split_output(output: &str) -> Vec<(String, String, String, String)> {
    let mut steps: Vec<(String, String, String, String)> = Vec::new();
    let mut rest = output;
    let push_text = |steps: &mut Vec<(String, String, String, String)>, text: &str| {
        if !text.trim().is_empty() {
            steps.push(("response".to_owned(), String::new(), text.trim().to_owned(), String::new()));
        }
    };
    while !rest.is_empty() {
        // The earliest known opening tag.
        let next = STEP_TAGS
            .iter()
            .map(|(tag, _, _)| *tag)
            .chain(OBSERVATION_TAGS)
            .filter_map(|tag| rest.find(&format!("<{tag}>")).map(|at| (at, tag)))
            .min_by_key(|(at, _)| *at);
        let Some((at, tag)) = next else {
            push_text(&mut steps, rest);
            break;
        };
        push_text(&mut steps, &rest[..at]);
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        let body_start = at + open.len();
        let (body, after) = match rest[body_start..].find(&close) {
            Some(end) => (&rest[body_start..body_start + end], body_start + end + close.len()),
            None => (&rest[body_start..], rest.len()),
        };
        let body = body.trim().to_owned();
        if OBSERVATION_TAGS.contains(&tag) {
            match steps.last_mut() {
                Some(last) => {
                    if !last.3.is_empty() {
                        last.3.push('\n');
                    }
                    last.3.push_str(&body);
                }
                None => steps.push(("observation".to_owned(), String::new(), String::new(), body)),
            }
        } else if let Some((_, kind, is_action)) = STEP_TAGS.iter().find(|(t, _, _)| *t == tag) {
            let (thought, action) = if *is_action { (String::new(), body) } else { (body, String::new()) };
            steps.push(((*kind).to_owned(), thought, action, String::new()));
        }
        rest = &rest[after..];
    }
    if steps.is_empty() {
        steps.push(("response".to_owned(), String::new(), output.to_owned(), String::new()));
    }
    steps
}

fn add(b: &mut RunBuilder, record: Record<'_>, report: &mut LoadReport, per_group: &mut BTreeMap<String, usize>) {
    let Some(line) = parse::<Line>(record, report) else { return };
    let step = line.step.unwrap_or(0);
    let group_key = format!("step{step}/{:016x}", fxhash(&line.input));
    let group = if let Some(g) = b.group(&group_key) {
        g
    } else {
        let gold = line.gts.as_ref().map(|g| match g {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let new = NewGroup {
            key: &group_key,
            train_step: Some(step),
            prompt: Some(&line.input),
            gold: gold.as_deref(),
            ..NewGroup::default()
        };
        b.add_group(&new).0
    };
    let index = per_group.entry(group_key.clone()).or_default();
    let key = format!("{group_key}/r{index}");
    *index += 1;
    let components: Vec<(&str, f32)> = line
        .extra
        .iter()
        .filter_map(|(k, v)| match v {
            serde_json::Value::Number(n) => n.as_f64().map(|x| (k.as_str(), x as f32)),
            serde_json::Value::Bool(flag) => Some((k.as_str(), if *flag { 1.0 } else { 0.0 })),
            _ => None,
        })
        .collect();
    let score = line.score.map(|s| s.0).filter(|s| !s.is_nan());
    let success = match line.extra.get("acc") {
        Some(serde_json::Value::Bool(flag)) => Some(*flag),
        Some(serde_json::Value::Number(n)) => n.as_f64().map(|x| x > 0.5),
        _ => score.map(|s| s > 0.5),
    };
    let steps = split_output(&line.output);
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .map(|(kind, thought, action, observation)| text_step(kind, thought, action, observation))
        .collect();
    let outcome = Outcome { reward: score, success, components, finish: None };
    b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
}

/// A stable 64-bit FNV-1a hash of a prompt (group keys must not depend on the process).
fn fxhash(text: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for byte in text.bytes() {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_splits_at_tags() {
        let steps = split_output(
            "<think>need the capital</think>\n<search>capital of Norway</search><information>Oslo is …</information><answer>Oslo</answer>",
        );
        let kinds: Vec<&str> = steps.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(kinds, ["think", "search", "answer"]);
        assert_eq!(steps[0].1, "need the capital");
        assert_eq!(steps[1].2, "capital of Norway");
        assert_eq!(steps[1].3, "Oslo is …");
        assert_eq!(steps[2].2, "Oslo");
        assert_eq!(split_output("just 5").len(), 1);
    }
}
