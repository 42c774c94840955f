//! verifiers' `vf-eval` results (v0, now `verifiers/legacy/utils/save_utils.py`):
//! `results.jsonl` beside `metadata.json`, one rollout per line: `example_id` (older versions:
//! `id`), `prompt` and `completion` (chat messages, or plain text for completion environments),
//! `answer`, `info`, `reward`, `metrics` (older versions: each reward function's score as a
//! top-level field), `error`, `is_completed`, `is_truncated`, `stop_condition`.
//!
//! The group is the example; each assistant message of the completion is a step (its tool calls
//! the action, written as objects or, as some versions write them, as JSON strings), the tool and
//! user messages after it its observation. `reward` is the outcome, the metrics its components.
//! A row whose completion is empty (an aborted save writes such rows with reward 0) still loads,
//! as a trajectory without steps' text, and is reported, so zeros are not read as failures.

use serde_json::Value;

use crate::load::lines::{LineFeed, records};
use crate::load::records::{Record, call_text, head_matches, id_text, message_text, object_has, push_observation};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "verifiers vf-eval results";

/// The vf-eval results loader.
pub struct VfEval;

#[derive(serde::Deserialize)]
struct Row {
    #[serde(default, alias = "id")]
    example_id: Option<Value>,
    #[serde(default)]
    prompt: Option<Value>,
    completion: Value,
    #[serde(default)]
    answer: Option<Value>,
    #[serde(default)]
    reward: Option<crate::load::lenient::Num>,
    #[serde(default)]
    metrics: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    is_truncated: Option<bool>,
    #[serde(default)]
    stop_condition: Option<String>,
    #[serde(default)]
    task: Option<Value>,
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

impl Loader for VfEval {
    fn name(&self) -> &'static str {
        "vf_eval"
    }

    fn description(&self) -> &'static str {
        "verifiers vf-eval results.jsonl: {example_id|id, prompt, completion, answer, reward, metrics}"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| stream(name, report))
    }
}

/// Whether one of the first lines of `head` is a vf-eval result row.
pub fn accepts(head: &str) -> bool {
    head_matches(head, |r| {
        object_has(r.text, &["prompt", "completion", "reward"])
            && (object_has(r.text, &["example_id"]) || object_has(r.text, &["id"]))
    })
}

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    let mut builder = RunBuilder::new(name, FORMAT);
    builder.meta_mut().notes.push("groups are examples (`example_id`, `id` in older versions)".to_owned());
    records(builder, "rollout", add, report)
}

/// Reads the format, giving the event loop back between slices (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let reason = "the first lines lack example_id / prompt / completion / reward";
    crate::load::lines::read_format((FORMAT, reason), accepts, stream, (name, bytes, report)).await
}

/// A tool call as an action, whether written as an object (`{function: {name, arguments}}` or
/// `{name, arguments}`) or as a JSON string of one.
fn tool_call_text(call: &Value) -> String {
    let parsed;
    let call = match call {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v) => {
                parsed = v;
                &parsed
            }
            Err(_) => return s.clone(),
        },
        other => other,
    };
    let function = call.get("function").unwrap_or(call);
    let name = function.get("name").and_then(Value::as_str).unwrap_or("tool");
    call_text(name, function.get("arguments"))
}

/// The steps of a completion: (kind, thought, action, observation) per assistant message.
fn steps_of(completion: &Value) -> Vec<(&'static str, String, String, String)> {
    let messages = match completion {
        Value::String(text) => return vec![("message", String::new(), text.clone(), String::new())],
        Value::Array(messages) => messages,
        _ => return Vec::new(),
    };
    let mut steps: Vec<(&'static str, String, String, String)> = Vec::new();
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("assistant");
        let text = message_text(m.get("content"));
        if role == "assistant" {
            let calls: Vec<String> =
                m.get("tool_calls").and_then(Value::as_array).into_iter().flatten().map(tool_call_text).collect();
            let thought = m.get("reasoning_content").and_then(Value::as_str).unwrap_or_default().to_owned();
            if calls.is_empty() {
                steps.push(("message", thought, text, String::new()));
            } else {
                let thought = if thought.is_empty() { text } else { format!("{thought}\n{text}") };
                steps.push(("tool_call", thought, calls.join("\n"), String::new()));
            }
        } else if let Some(last) = steps.last_mut() {
            let who = match m.get("name").and_then(Value::as_str) {
                Some(name) if role == "tool" => format!("tool {name}"),
                _ => role.to_owned(),
            };
            push_observation(&mut last.3, &who, &text);
        }
    }
    steps
}

/// The prompt: chat messages marked with their roles, or plain text.
fn prompt_of(prompt: Option<&Value>) -> String {
    match prompt {
        Some(Value::Array(messages)) => messages
            .iter()
            .map(|m| {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
                format!("[{role}] {}", message_text(m.get("content")))
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => message_text(other),
    }
}

/// A number or boolean as a component value.
fn component(value: &Value) -> Option<f32> {
    match value {
        Value::Number(n) => n.as_f64().map(|v| v as f32),
        Value::Bool(b) => Some(f32::from(u8::from(*b))),
        _ => None,
    }
}

/// Fields of the row that are not metrics even when they are numbers.
const NOT_METRICS: [&str; 5] = ["is_completed", "generation_ms", "scoring_ms", "total_ms", "task"];

fn add(b: &mut RunBuilder, record: Record<'_>, index: usize, row: &Row, report: &mut LoadReport) {
    let Some(example) = id_text(row.example_id.as_ref()) else {
        report.warn(Warning::skipped(record.line, "example_id", "missing (and no `id`)"));
        return;
    };
    let group_key = format!("example-{example}");
    let group = if let Some(g) = b.group(&group_key) {
        g
    } else {
        let prompt = prompt_of(row.prompt.as_ref());
        let gold = id_text(row.answer.as_ref());
        let task = id_text(row.task.as_ref());
        let new = NewGroup {
            key: &group_key,
            task: task.as_deref().or(Some(example.as_str())),
            prompt: Some(&prompt),
            gold: gold.as_deref(),
            ..NewGroup::default()
        };
        b.add_group(&new).0
    };
    let key = format!("{group_key}/rollout-{index}");
    let mut steps = steps_of(&row.completion);
    if steps.is_empty() {
        report.warn_grouped(Warning::kept(
            record.line,
            "completion",
            "empty: an aborted or failed rollout (its reward is not a model's score)",
        ));
        steps.push(("message", String::new(), String::new(), String::new()));
    }
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .map(|(kind, thought, action, observation)| crate::load::records::text_step(kind, thought, action, observation))
        .collect();
    let mut components: Vec<(&str, f32)> = Vec::new();
    for (name, value) in row.metrics.iter().flatten() {
        if let Some(v) = component(value) {
            components.push((name.as_str(), v));
        }
    }
    // Older versions: each reward function's score as a top-level field.
    for (name, value) in &row.extra {
        if !NOT_METRICS.contains(&name.as_str())
            && !components.iter().any(|(n, _)| n == name)
            && let Some(v) = component(value)
        {
            components.push((name.as_str(), v));
        }
    }
    let finish = if row.error.as_ref().is_some_and(|e| !e.is_null()) {
        Some("error")
    } else if row.is_truncated == Some(true) {
        Some("truncated")
    } else {
        row.stop_condition.as_deref()
    };
    let reward = row.reward.map(|r| r.0).filter(|r| !r.is_nan());
    let outcome = Outcome { reward, success: reward.map(|r| r > 0.5), components, finish };
    b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
}
