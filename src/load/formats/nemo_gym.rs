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
//! warning, so its reward is kept. A benchmark row (`schema_version`, `agent`, `agent_result`,
//! `verifier_result.rewards` and the Responses object under `trajectory`, no `response`) is read
//! the same way: its steps from the trajectory's output items, its reward
//! `verifier_result.rewards.reward` (else the top-level `reward`), the verifier's other rewards
//! components, its task `task_name` / `instance_id` / `task_id`; one note gives each agent, its
//! version, rows and token usage. Lines that are errors the server returned instead of a rollout
//! (`FastAPI`'s `{"detail": …}`, or a bare JSON string) are skipped and named in one warning with
//! their count and line numbers; a file of nothing else is still this format, with nothing loaded.

use serde_json::Value;

use crate::load::lenient::FieldError;
use crate::load::lines::{JsonLines, LineFeed, LineStream, parse_json};
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

/// Whether one of the first lines of `head` is a NeMo Gym row (a rollout, or a benchmark row), or
/// all of them are errors the server returned (at least one a `{"detail": …}` object).
pub fn accepts(head: &str) -> bool {
    let lines: Vec<Record<'_>> = crate::load::records::line_records(head).take(8).collect();
    let detail = |r: &Record<'_>| object_has(r.text, &["detail"]) && !object_has(r.text, &["response"]);
    head_matches(head, |r| {
        object_has(r.text, &["responses_create_params"])
            || object_has(r.text, &["schema_version", "verifier_result", "trajectory"])
    }) || (lines.iter().any(detail) && lines.iter().all(|r| detail(r) || r.text.trim_start().starts_with('"')))
}

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    let mut builder = RunBuilder::new(name, FORMAT);
    builder.meta_mut().notes.push(
        "groups are tasks (`agent_ref.name` and `_ng_task_index`); a row without a task index is its own group"
            .to_owned(),
    );
    Box::new(LineStream::new(Lines::default(), builder, report))
}

/// One line: a rollout row, or an error the server returned (a bare JSON string).
enum Line {
    Row(Box<Row>),
    Error(String),
}

/// The lines of a rollouts file, the lines that were errors the server returned, and the agents
/// of its benchmark rows.
#[derive(Default)]
struct Lines {
    errors: Vec<u64>,
    first: String,
    /// Per agent (name, version): its benchmark rows and their input and output tokens.
    agents: std::collections::BTreeMap<(String, String), [u64; 3]>,
    /// Where the agents' note is in the run's notes.
    agents_note: Option<usize>,
}

/// At most this many line numbers of server errors are named.
const NAMED_ERRORS: usize = 20;

impl Lines {
    /// Counts line `line` as an error the server returned (`what` it said), and says so in the
    /// one warning that names them all.
    fn server_error(&mut self, line: u64, what: &str, report: &mut LoadReport) {
        const FIELD: &str = "record (server error)";
        if self.errors.is_empty() {
            self.first = what.chars().take(200).collect();
        }
        self.errors.push(line);
        report.records_seen += 1;
        let mut lines: Vec<String> = self.errors.iter().take(NAMED_ERRORS).map(u64::to_string).collect();
        if self.errors.len() > NAMED_ERRORS {
            lines.push(format!("… {} more", self.errors.len() - NAMED_ERRORS));
        }
        let reason = format!(
            "{} line(s) are errors the server returned, not rollouts (lines {}); the first said: {}",
            self.errors.len(),
            lines.join(", "),
            self.first
        );
        match report.warnings.iter_mut().find(|w| w.field == FIELD) {
            Some(warning) => warning.reason = reason,
            None => report.warn(Warning::skipped(line, FIELD, reason)),
        }
    }
}

impl Lines {
    /// Counts a benchmark row's agent and tokens, and says them in the one note on the agents.
    fn note_agent(&mut self, b: &mut RunBuilder, row: &Row) {
        let (name, version) = agent_of(row);
        let key = (name.unwrap_or("unnamed agent").to_owned(), version.unwrap_or_default().to_owned());
        let (input, output) = usage_of(row).unwrap_or((0, 0));
        let counts = self.agents.entry(key).or_default();
        *counts = [counts[0] + 1, counts[1] + input, counts[2] + output];
        let each: Vec<String> = self
            .agents
            .iter()
            .map(|((name, version), [rows, input, output])| {
                let named = if version.is_empty() { name.clone() } else { format!("{name} {version}") };
                format!("{named}: {rows} row(s), {input} input and {output} output tokens")
            })
            .collect();
        let note = format!("benchmark rows by agent: {}", each.join("; "));
        let notes = &mut b.meta_mut().notes;
        if let Some(i) = self.agents_note.filter(|&i| i < notes.len()) {
            notes[i] = note;
        } else {
            self.agents_note = Some(notes.len());
            notes.push(note);
        }
    }
}

impl JsonLines for Lines {
    type Item = Line;

    fn what(&self) -> &'static str {
        "rollout"
    }

    fn parse(text: &str) -> Result<Line, FieldError> {
        if text.trim_start().starts_with('"') {
            return serde_json::from_str::<String>(text)
                .map(Line::Error)
                .map_err(|e| FieldError { field: "record".to_owned(), reason: e.to_string() });
        }
        parse_json::<Row>(text).map(|row| Line::Row(Box::new(row)))
    }

    fn add(&mut self, b: &mut RunBuilder, record: Record<'_>, index: usize, item: Line, report: &mut LoadReport) {
        match item {
            Line::Error(text) => self.server_error(record.line, &text, report),
            Line::Row(row) if row.response.is_none() && benchmark_trajectory(&row).is_some() => {
                add(b, record, index, &row, report);
                self.note_agent(b, &row);
            }
            Line::Row(row) if row.response.is_none() && row.responses_create_params.is_none() => {
                match row.extra.get("detail") {
                    Some(detail) => {
                        let said = detail.as_str().map_or_else(|| detail.to_string(), str::to_owned);
                        self.server_error(record.line, &said, report);
                    }
                    None => add(b, record, index, &row, report),
                }
            }
            Line::Row(row) => add(b, record, index, &row, report),
        }
    }
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
                // A reasoning model's `<think>…</think>` inside the message is its thought.
                let (reasoned, said) = split_think(&output_message_text(item));
                if !reasoned.is_empty() {
                    if !thought.is_empty() {
                        thought.push('\n');
                    }
                    thought.push_str(&reasoned);
                }
                steps.push(Step {
                    kind: "message",
                    thought: std::mem::take(&mut thought),
                    action: said,
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

/// A message's leading `<think>…</think>` block (what reasoning models write before they answer)
/// and the rest; an unclosed block is all thought. `("", text)` without one.
fn split_think(text: &str) -> (String, String) {
    let trimmed = text.trim_start();
    let Some(inside) = trimmed.strip_prefix("<think>") else { return (String::new(), text.to_owned()) };
    match inside.split_once("</think>") {
        Some((thought, rest)) => (thought.trim().to_owned(), rest.trim().to_owned()),
        None => (inside.trim().to_owned(), String::new()),
    }
}

/// A benchmark row's agent: its name and version (`agent`: a name, or `{name, version}`).
fn agent_of(row: &Row) -> (Option<&str>, Option<&str>) {
    match row.extra.get("agent") {
        Some(Value::String(name)) => (Some(name.as_str()), None),
        Some(agent) => (agent.get("name").and_then(Value::as_str), agent.get("version").and_then(Value::as_str)),
        None => (None, None),
    }
}

/// A benchmark row's token usage, input and output: its `agent_result`'s (`n_input_tokens`,
/// `n_output_tokens`, else `input_tokens`, `output_tokens`), else the trajectory's `usage`.
fn usage_of(row: &Row) -> Option<(u64, u64)> {
    let pair = |v: &Value, input: &str, output: &str| -> Option<(u64, u64)> {
        let n = |k: &str| v.get(k).and_then(Value::as_u64);
        (n(input).is_some() || n(output).is_some()).then(|| (n(input).unwrap_or(0), n(output).unwrap_or(0)))
    };
    let agent_result = row.extra.get("agent_result").filter(|v| v.is_object());
    agent_result
        .and_then(|a| pair(a, "n_input_tokens", "n_output_tokens").or_else(|| pair(a, "input_tokens", "output_tokens")))
        .or_else(|| pair(benchmark_trajectory(row)?.get("usage")?, "input_tokens", "output_tokens"))
}

/// Top-level numbers and booleans besides the reward: outcome components (a benchmark row's
/// `schema_version` is not one).
fn components_of(row: &Row) -> Vec<(String, f32)> {
    let mut out = Vec::new();
    for (key, value) in &row.extra {
        if key.starts_with('_') || key.contains('/') || key == "schema_version" {
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

/// The Responses object of a benchmark row (`trajectory`, in place of `response`).
fn benchmark_trajectory(row: &Row) -> Option<&Value> {
    row.extra.get("trajectory").filter(|t| t.get("output").is_some_and(Value::is_array))
}

/// A benchmark row's verifier rewards (`verifier_result.rewards`).
fn verifier_rewards(row: &Row) -> Option<&serde_json::Map<String, Value>> {
    row.extra.get("verifier_result")?.get("rewards")?.as_object()
}

fn add(b: &mut RunBuilder, record: Record<'_>, index: usize, row: &Row, report: &mut LoadReport) {
    let benchmark = benchmark_trajectory(row);
    let Some(response) = row.response.as_ref().filter(|r| !r.is_null()).or(benchmark) else {
        report.warn(Warning::skipped(record.line, "response", "no response: a rollout input, not a result"));
        return;
    };
    let output_field =
        if benchmark.is_some_and(|t| std::ptr::eq(t, response)) { "trajectory.output" } else { "response.output" };
    let Some(output) = response.get("output").and_then(Value::as_array) else {
        report.warn(Warning::skipped(record.line, output_field, "missing or not a list of items"));
        return;
    };
    let (mut steps, tokens) = steps_of(output);
    if steps.is_empty() {
        // A result whose agent recorded no output still has its reward: it loads as one empty step.
        report.warn(Warning::kept(record.line, output_field, "no message, call or reasoning item: one empty step"));
        steps.push(Step { kind: "message", ..Step::default() });
    }
    let agent = row.agent_ref.as_ref().and_then(|a| a.get("name")).and_then(Value::as_str).or_else(|| agent_of(row).0);
    // A benchmark row names its task where a rollout row numbers it.
    let task = id_text(row.task_index.as_ref())
        .or_else(|| ["task_name", "instance_id", "task_id"].iter().find_map(|k| id_text(row.extra.get(*k))));
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
    let verified = verifier_rewards(row);
    let reward = verified
        .and_then(|r| r.get("reward"))
        .and_then(Value::as_f64)
        .map(|r| r as f32)
        .or_else(|| row.reward.map(|r| r.0))
        .filter(|r| !r.is_nan());
    let mut components = components_of(row);
    // The verifier's other rewards are components of the outcome.
    for (key, value) in verified.into_iter().flatten().filter(|(k, _)| k.as_str() != "reward") {
        if let Some(v) = value.as_f64().filter(|v| v.is_finite()) {
            components.push((key.clone(), v as f32));
        }
    }
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
    import_failures(b, row, &key);
}

/// A row's failure verdicts as labels on its rollout (docs/LABELS.md): a resources server's
/// `failure_reason` (its `FailureCode`, e.g. `bird_sql`'s `no_sql_extracted`; `none` is no failure),
/// top level or under `verifier_result`, and the collector's `failure_kind` (NVIDIA-NeMo/Gym#2750),
/// each a label of that name whose word is the code.
fn import_failures(b: &mut RunBuilder, row: &Row, key: &str) {
    use crate::model::labels::{Label, Source, SourceKind, Target, Value as LabelValue};
    let verifier = row.extra.get("verifier_result");
    for name in ["failure_reason", "failure_kind"] {
        let value = row.extra.get(name).or_else(|| verifier.and_then(|v| v.get(name)));
        let Some(code) = value.and_then(Value::as_str).map(str::trim).filter(|c| !c.is_empty() && *c != "none") else {
            continue;
        };
        b.import_label(Label {
            name: name.to_owned(),
            value: LabelValue::Word(code.to_owned()),
            target: Target { trajectory: key.to_owned(), step: None },
            source: Source { kind: SourceKind::File, name: format!("NeMo Gym ({name})") },
            note: None,
            time: None,
        });
    }
}

#[cfg(test)]
mod think_tests {
    #[test]
    fn a_leading_think_block_is_the_thought() {
        assert_eq!(
            super::split_think("<think>\nplan it</think>\n\nThe answer is 4."),
            ("plan it".to_owned(), "The answer is 4.".to_owned())
        );
        assert_eq!(super::split_think("no block"), (String::new(), "no block".to_owned()));
        assert_eq!(super::split_think("<think>cut off"), ("cut off".to_owned(), String::new()));
    }
}
