//! NeMo Gym rollouts (NVIDIA-NeMo/Gym `nemo_gym/rollout_collection.py`): JSON lines, one rollout
//! each, as the agent server's `/run` returned it: `responses_create_params` (the OpenAI Responses
//! request: `input` messages, `instructions`), `response` (a Responses object whose `output` items
//! are `message`, `reasoning`, `function_call`, `function_call_output`, …), `reward` (any sign),
//! `_ng_task_index` / `_ng_rollout_index`, `agent_ref`, and the resources server's own fields.
//!
//! Each `message` or `*_call` output item is a step (its reasoning, the `reasoning` items before
//! it, as the thought); a `function_call_output` is the observation of the call with its
//! `call_id`, an environment message (user / system) the observation of the step before (items
//! nested in lists, as some environments write each environment step's, are read in order). Training
//! rows carry `prompt_token_ids`, `generation_token_ids` and `generation_log_probs` on output
//! items: they become the trajectory's tokens, each call's new prompt tokens unmasked and its
//! generation masked in, with the generating item's step spanning them. The group is the task
//! (`agent_ref.name` and `_ng_task_index`); a row without a task index is a group of its own.
//! Top-level numbers and booleans besides the reward (`accuracy`, `is_correct`, …) become outcome
//! components. A row without a `response` (a materialized input) is skipped with a warning; a
//! response without output items (an agent that recorded none) loads as one empty step, with a
//! warning, so its reward is kept.

use serde_json::Value;

use crate::load::lines::{LineFeed, records};
use crate::load::records::{
    Record, call_text, head_matches, id_text, message_text, object_has, push_observation, text_step,
};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "NeMo Gym rollouts";

/// The NeMo Gym loader.
pub struct NemoGym;

/// One line as the rollout collector writes it (the resources server's fields in `extra`).
#[derive(serde::Deserialize)]
struct Row {
    #[serde(default)]
    responses_create_params: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    reward: Option<crate::load::lenient::Num>,
    #[serde(default, rename = "_ng_task_index")]
    task_index: Option<Value>,
    #[serde(default, rename = "_ng_rollout_index")]
    rollout_index: Option<Value>,
    #[serde(default)]
    agent_ref: Option<Value>,
    #[serde(default)]
    terminated: Option<bool>,
    #[serde(default)]
    truncated: Option<bool>,
    #[serde(default, rename = "_ng_failure_class")]
    failure_class: Option<Value>,
    #[serde(default)]
    expected_answer: Option<Value>,
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

impl Loader for NemoGym {
    fn name(&self) -> &'static str {
        "nemo_gym"
    }

    fn description(&self) -> &'static str {
        "NeMo Gym rollouts JSONL: {responses_create_params, response (OpenAI Responses output items), reward, _ng_task_index, _ng_rollout_index}"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| stream(name, report))
    }
}

/// Whether one of the first lines of `head` is a NeMo Gym row.
pub fn accepts(head: &str) -> bool {
    head_matches(head, |r| object_has(r.text, &["responses_create_params"]))
}

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    let mut builder = RunBuilder::new(name, FORMAT);
    builder.meta_mut().notes.push(
        "groups are tasks (`agent_ref.name` and `_ng_task_index`); a row without a task index is its own group"
            .to_owned(),
    );
    records(builder, "rollout", add, report)
}

/// Reads the format, giving the event loop back between slices (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let reason = "the first lines lack responses_create_params";
    crate::load::lines::read_format((FORMAT, reason), accepts, stream, (name, bytes, report)).await
}

/// A step being built from output items.
#[derive(Default)]
struct Step {
    kind: &'static str,
    thought: String,
    action: String,
    observation: String,
    call_id: Option<String>,
    tokens: Option<[u32; 2]>,
}

/// The trajectory's tokens, built call by call.
#[derive(Default)]
struct Tokens {
    mask: Vec<bool>,
    logprob: Vec<f32>,
    /// The length of the last call's prompt and generation: a later prompt that extends it adds
    /// only its new tokens.
    context: usize,
    /// A token array disagreed with the others (the tokens are dropped).
    broken: Option<String>,
}

impl Tokens {
    /// Adds one call's tokens; the span they take.
    fn add(&mut self, item: &Value) -> Option<[u32; 2]> {
        let ids = |key: &str| item.get(key).and_then(Value::as_array);
        let generation = ids("generation_token_ids")?;
        let prompt = ids("prompt_token_ids").map_or(0, Vec::len);
        let logprobs = ids("generation_log_probs");
        if logprobs.is_some_and(|l| l.len() != generation.len()) {
            self.broken = Some(format!(
                "generation_log_probs has {} values for {} generation_token_ids",
                logprobs.map_or(0, Vec::len),
                generation.len()
            ));
        }
        let start = self.mask.len();
        // The prompt tokens this call adds to what the trajectory already holds.
        let new_prompt = if prompt >= self.context { prompt - self.context } else { prompt };
        self.mask.extend(std::iter::repeat_n(false, new_prompt));
        self.logprob.extend(std::iter::repeat_n(0.0, new_prompt));
        self.mask.extend(std::iter::repeat_n(true, generation.len()));
        for k in 0..generation.len() {
            let value = logprobs.and_then(|l| l.get(k)).and_then(Value::as_f64);
            self.logprob.push(value.map_or(f32::NAN, |v| v as f32));
        }
        self.context = prompt + generation.len();
        Some([u32::try_from(start).ok()?, u32::try_from(self.mask.len()).ok()?])
    }
}

/// The text of a reasoning item: its summary and content parts.
fn reasoning_text(item: &Value) -> String {
    let mut parts = Vec::new();
    for key in ["summary", "content"] {
        if let Some(list) = item.get(key).and_then(Value::as_array) {
            parts.extend(list.iter().filter_map(|p| p.get("text").and_then(Value::as_str)));
        }
    }
    parts.join("\n")
}

/// The text of an output message: its `output_text` parts, refusals marked.
fn output_message_text(item: &Value) -> String {
    match item.get("content") {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match (p.get("text"), p.get("refusal")) {
                (Some(Value::String(t)), _) => Some(t.clone()),
                (_, Some(Value::String(r))) => Some(format!("[refusal] {r}")),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => message_text(other),
    }
}

/// The output of a tool call: a string, or the text of its parts.
fn call_output_text(item: &Value) -> String {
    match item.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => message_text(Some(&Value::Array(parts.clone()))),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// The span covering both `a` and `b` (consecutive spans of one trajectory).
fn merge(a: Option<[u32; 2]>, b: Option<[u32; 2]>) -> Option<[u32; 2]> {
    match (a, b) {
        (Some([start, _]), Some([_, end])) => Some([start, end]),
        (a, b) => a.or(b),
    }
}

/// The steps of a response's output items, and the trajectory's tokens.
fn steps_of(output: &[Value]) -> (Vec<Step>, Tokens) {
    let mut steps: Vec<Step> = Vec::new();
    let mut tokens = Tokens::default();
    let mut thought = String::new();
    let mut pending: Option<[u32; 2]> = None;
    // Some environments (aviary) write each environment step's items as a nested list.
    let mut flat: Vec<&Value> = Vec::new();
    let mut stack: Vec<&Value> = output.iter().rev().collect();
    while let Some(item) = stack.pop() {
        match item {
            Value::Array(inner) => stack.extend(inner.iter().rev()),
            other => flat.push(other),
        }
    }
    for item in flat {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("message");
        let role = item.get("role").and_then(Value::as_str);
        match (kind, role) {
            ("reasoning", _) => {
                let text = reasoning_text(item);
                if !text.is_empty() {
                    if !thought.is_empty() {
                        thought.push('\n');
                    }
                    thought.push_str(&text);
                }
                // A reasoning item's tokens go to the step it leads to.
                pending = merge(pending, tokens.add(item));
            }
            ("message", Some("user" | "system" | "developer")) => {
                let text = message_text(item.get("content"));
                if let Some(last) = steps.last_mut() {
                    push_observation(&mut last.observation, role.unwrap_or("user"), &text);
                }
            }
            ("message", _) => {
                let span = merge(pending.take(), tokens.add(item));
                steps.push(Step {
                    kind: "message",
                    thought: std::mem::take(&mut thought),
                    action: output_message_text(item),
                    tokens: span,
                    ..Step::default()
                });
            }
            (kind, _) if kind.ends_with("_output") => {
                let call_id = item.get("call_id").and_then(Value::as_str);
                let text = call_output_text(item);
                let target = call_id
                    .and_then(|id| steps.iter().rposition(|s| s.call_id.as_deref() == Some(id)))
                    .or_else(|| steps.len().checked_sub(1));
                if let Some(step) = target.and_then(|i| steps.get_mut(i)) {
                    let who = if kind == "function_call_output" { "tool" } else { kind.trim_end_matches("_output") };
                    push_observation(&mut step.observation, who, &text);
                }
            }
            (kind, _) if kind.ends_with("_call") => {
                let action = match kind {
                    "function_call" | "custom_tool_call" => {
                        let name = item.get("name").and_then(Value::as_str).unwrap_or(kind);
                        call_text(name, item.get("arguments").or_else(|| item.get("input")))
                    }
                    _ => {
                        let mut rest = item.clone();
                        if let Some(map) = rest.as_object_mut() {
                            for key in ["type", "id", "status", "call_id"] {
                                map.remove(key);
                            }
                        }
                        format!("{kind}({rest})")
                    }
                };
                let span = merge(pending.take(), tokens.add(item));
                steps.push(Step {
                    kind: "tool_call",
                    thought: std::mem::take(&mut thought),
                    action,
                    call_id: item.get("call_id").and_then(Value::as_str).map(str::to_owned),
                    tokens: span,
                    ..Step::default()
                });
            }
            _ => {}
        }
    }
    if !thought.is_empty() || pending.is_some() {
        steps.push(Step { kind: "think", thought, tokens: pending, ..Step::default() });
    }
    (steps, tokens)
}

/// The prompt: the request's instructions and input messages, each marked with its role.
fn prompt_of(params: Option<&Value>) -> String {
    let Some(params) = params else { return String::new() };
    let mut lines = Vec::new();
    if let Some(instructions) = params.get("instructions").and_then(Value::as_str) {
        lines.push(format!("[instructions] {instructions}"));
    }
    match params.get("input") {
        Some(Value::String(text)) => lines.push(format!("[user] {text}")),
        Some(Value::Array(items)) => {
            for item in items {
                let kind = item.get("type").and_then(Value::as_str).unwrap_or("message");
                if kind == "message" {
                    let role = item.get("role").and_then(Value::as_str).unwrap_or("user");
                    lines.push(format!("[{role}] {}", message_text(item.get("content"))));
                } else {
                    lines.push(format!("[{kind}] {item}"));
                }
            }
        }
        _ => {}
    }
    lines.join("\n")
}

/// The finish reason: the failure class, `truncated`, an incomplete response, or `stop`.
fn finish_of(row: &Row, response: &Value) -> Option<String> {
    if let Some(class) = id_text(row.failure_class.as_ref()) {
        return Some(class);
    }
    let incomplete = response.get("incomplete_details").and_then(|d| d.get("reason")).and_then(Value::as_str);
    if row.truncated == Some(true) || incomplete.is_some_and(|r| r.contains("token")) {
        return Some("length".to_owned());
    }
    if let Some(reason) = incomplete {
        return Some(reason.to_owned());
    }
    row.terminated.map(|_| "stop".to_owned())
}

/// Top-level numbers and booleans besides the reward: outcome components.
fn components_of(row: &Row) -> Vec<(String, f32)> {
    let mut out = Vec::new();
    for (key, value) in &row.extra {
        if key.starts_with('_') || key.contains('/') {
            continue;
        }
        let number = match value {
            Value::Number(n) => n.as_f64(),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        };
        if let Some(v) = number.filter(|v| v.is_finite()) {
            out.push((key.clone(), v as f32));
        }
    }
    out
}

fn add(b: &mut RunBuilder, record: Record<'_>, index: usize, row: &Row, report: &mut LoadReport) {
    let Some(response) = row.response.as_ref().filter(|r| !r.is_null()) else {
        report.warn(Warning::skipped(record.line, "response", "no response: a rollout input, not a result"));
        return;
    };
    let Some(output) = response.get("output").and_then(Value::as_array) else {
        report.warn(Warning::skipped(record.line, "response.output", "missing or not a list of items"));
        return;
    };
    let (mut steps, tokens) = steps_of(output);
    if steps.is_empty() {
        // A result whose agent recorded no output still has its reward: it loads as one empty step.
        report.warn(Warning::kept(
            record.line,
            "response.output",
            "no message, call or reasoning item: one empty step",
        ));
        steps.push(Step { kind: "message", ..Step::default() });
    }
    let agent = row.agent_ref.as_ref().and_then(|a| a.get("name")).and_then(Value::as_str);
    let task = id_text(row.task_index.as_ref());
    let group_key = match (&task, agent) {
        (Some(task), Some(agent)) => format!("{agent}/task-{task}"),
        (Some(task), None) => format!("task-{task}"),
        (None, _) => format!("row-{index}"),
    };
    let group = if let Some(g) = b.group(&group_key) {
        g
    } else {
        let prompt = prompt_of(row.responses_create_params.as_ref());
        let gold = match &row.expected_answer {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        let new = NewGroup {
            key: &group_key,
            task: task.as_deref(),
            prompt: Some(&prompt),
            gold: gold.as_deref(),
            ..NewGroup::default()
        };
        b.add_group(&new).0
    };
    let key = match id_text(row.rollout_index.as_ref()) {
        Some(rollout) if task.is_some() => format!("{group_key}/rollout-{rollout}"),
        _ => format!("{group_key}/line-{}", record.line),
    };
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(record.line, "_ng_rollout_index", format!("duplicate rollout {key:?}")));
        return;
    }
    let token_ok = tokens.broken.is_none() && !tokens.mask.is_empty();
    if let Some(reason) = &tokens.broken {
        report.warn(Warning::kept(record.line, "response.output", format!("{reason}; tokens left out")));
    }
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .map(|s| NewStep {
            token_span: s.tokens.filter(|_| token_ok),
            ..text_step(s.kind, &s.thought, &s.action, &s.observation)
        })
        .collect();
    let reward = row.reward.map(|r| r.0).filter(|r| !r.is_nan());
    let components = components_of(row);
    let finish = finish_of(row, response);
    let outcome = Outcome {
        reward,
        success: reward.map(|r| r > 0.5),
        components: components.iter().map(|(k, v)| (k.as_str(), *v)).collect(),
        finish: finish.as_deref(),
    };
    let new_tokens = if token_ok {
        NewTokens { mask: Some(&tokens.mask), logprob: Some(&tokens.logprob), ..NewTokens::default() }
    } else {
        NewTokens::default()
    };
    b.add_chain_trajectory(&key, group, &new_steps, &outcome, &new_tokens);
}
