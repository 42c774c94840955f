//! What the importers of other tools' logs share: splitting a JSON array or JSON-lines file into
//! records that know their line, parsing each record with located field errors (a bad record is a
//! warning, the rest still load), and finishing a run with a clear error when nothing loaded.

use serde_json::value::RawValue;

use super::lenient::{parse_located, quote_non_finite};
use super::{LoadError, LoadReport};
use crate::model::{NewStep, Run, RunBuilder, Warning};

/// One record of a file: its 1-based line and its JSON text.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    /// Line where the record starts.
    pub line: u64,
    /// JSON text.
    pub text: &'a str,
}

/// The file as UTF-8 text with `NaN` / `Infinity` quoted, or "not this format".
pub fn text_of<'a>(format: &'static str, bytes: &'a [u8]) -> Result<std::borrow::Cow<'a, str>, LoadError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes)
        .map_err(|err| LoadError::Incompatible { format, reason: format!("the file is not UTF-8 text ({err})") })?;
    Ok(match quote_non_finite(text) {
        std::borrow::Cow::Borrowed(_) => std::borrow::Cow::Borrowed(text),
        std::borrow::Cow::Owned(owned) => std::borrow::Cow::Owned(owned),
    })
}

/// The elements of a top-level JSON array, each with the line it starts on; `None` when the text
/// is not a JSON array.
pub fn array_records(text: &str) -> Option<Vec<Record<'_>>> {
    if !text.trim_start().starts_with('[') {
        return None;
    }
    let raw: Vec<&RawValue> = serde_json::from_str(text).ok()?;
    let base = text.as_ptr() as usize;
    let mut line = 1u64;
    let mut scanned = 0usize;
    let mut out = Vec::with_capacity(raw.len());
    for value in raw {
        let offset = (value.get().as_ptr() as usize).saturating_sub(base).min(text.len());
        line += text.as_bytes()[scanned..offset].iter().filter(|&&b| b == b'\n').count() as u64;
        scanned = offset;
        out.push(Record { line, text: value.get() });
    }
    Some(out)
}

/// Before each record of `text`: records how far the load has come (for the progress bar) and
/// gives the event loop back when it is time (see `load::pace`).
pub async fn advance(report: &LoadReport, text: &str, record: Record<'_>) {
    let offset = (record.text.as_ptr() as usize).saturating_sub(text.as_ptr() as usize).min(text.len());
    report.progress.set(offset as u64);
    super::pace::pace().await;
}

/// The non-blank lines of a JSON-lines text.
pub fn line_records(text: &str) -> impl Iterator<Item = Record<'_>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| Record { line: i as u64 + 1, text: l.trim_end_matches('\r') })
}

/// Whether one of the first few records satisfies `is_format` (a damaged first line does not hide
/// the format of the rest).
pub fn head_matches(text: &str, is_format: impl Fn(Record<'_>) -> bool) -> bool {
    line_records(text).take(8).any(is_format)
}

/// Whether `json` is an object with every key in `keys`.
pub fn object_has(json: &str, keys: &[&str]) -> bool {
    match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(json) {
        Ok(map) => keys.iter().all(|k| map.contains_key(*k)),
        Err(_) => false,
    }
}

/// A step from its kind and three texts; an empty text is absent.
pub fn text_step<'a>(kind: &'a str, thought: &'a str, action: &'a str, observation: &'a str) -> NewStep<'a> {
    let some = |t: &'a str| (!t.is_empty()).then_some(t);
    NewStep {
        kind: Some(kind),
        thought: some(thought),
        action: some(action),
        observation: some(observation),
        ..NewStep::default()
    }
}

/// A tool call as an action: `name(arguments)`, the arguments as written (a JSON string as it is,
/// any other JSON value as JSON).
pub fn call_text(name: &str, arguments: Option<&serde_json::Value>) -> String {
    format!("{name}({})", arguments_text(arguments))
}

/// A call's arguments as [`call_text`] shows them: a JSON string as it is, any other JSON value as
/// JSON.
pub fn arguments_text(arguments: Option<&serde_json::Value>) -> String {
    match arguments {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

/// Appends `[who] text` to an observation, on a line of its own after what is there.
pub fn push_observation(observation: &mut String, who: &str, text: &str) {
    if !observation.is_empty() {
        observation.push('\n');
    }
    observation.push_str(&format!("[{who}] {text}"));
}

/// A stable 64-bit FNV-1a hash of a text (group keys rebuilt from prompts must not depend on the
/// process).
pub fn stable_hash(text: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for byte in text.bytes() {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A JSON id or scalar as text: a string as it is, another value as JSON (`None` for null or
/// absent).
pub fn id_text(value: Option<&serde_json::Value>) -> Option<String> {
    match value? {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Chat-message content as text: a string, or the `text` of each part of a content list.
pub fn message_text(content: Option<&serde_json::Value>) -> String {
    match content {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(serde_json::Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Parses a record into `T`; a failure becomes a located warning (the record is skipped) and
/// unknown fields are ignored silently (other tools' logs carry many we do not use).
pub fn parse<T: serde::de::DeserializeOwned>(record: Record<'_>, report: &mut LoadReport) -> Option<T> {
    report.records_seen += 1;
    let mut ignored = Vec::new();
    match parse_located::<T>(record.text, &mut ignored) {
        Ok(value) => {
            report.records_loaded += 1;
            Some(value)
        }
        Err(err) => {
            report.warn(Warning::skipped(record.line, err.field, err.reason));
            None
        }
    }
}

/// The run a builder holds so far, with the warnings found so far (a run shown while it is read
/// or while it grows).
pub fn snapshot(builder: &RunBuilder, report: &LoadReport) -> Run {
    let mut run = builder.snapshot();
    run.meta.warnings.clone_from(&report.warnings);
    run
}

/// Finishes the run; an error naming the first problem when no trajectory loaded.
pub fn finish(builder: RunBuilder, report: &LoadReport, what: &str) -> Result<Run, LoadError> {
    let mut run = builder.finish();
    run.meta.warnings.clone_from(&report.warnings);
    if run.trajectories.is_empty() {
        let reason = match report.warnings.first() {
            Some(first) => format!(
                "no {what} loaded; {} record(s) skipped, the first at line {}: {}: {}",
                report.num_skipped(),
                first.line,
                first.field,
                first.reason
            ),
            None => format!("no {what} in the file"),
        };
        return Err(LoadError::NothingLoadable { reason });
    }
    Ok(run)
}

/// An OpenAI-style chat message (`role`, `content`, `tool_calls`, `name`), as tau-bench, ROLL and
/// other agent logs write them.
#[derive(serde::Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant`, `tool`.
    pub role: String,
    /// Text, or a list of content parts.
    #[serde(default)]
    pub content: Option<serde_json::Value>,
    /// The tools an assistant message calls.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// A tool message's tool.
    #[serde(default)]
    pub name: Option<String>,
}

/// A tool call of an assistant message.
#[derive(serde::Deserialize)]
pub struct ToolCall {
    /// What it calls.
    pub function: Function,
}

/// The function a tool call names.
#[derive(serde::Deserialize)]
pub struct Function {
    /// The function's name.
    pub name: String,
    /// Its arguments (an object, or JSON in a string).
    #[serde(default)]
    pub arguments: Option<serde_json::Value>,
}

/// A text of a chat message: the inside of a JSON string of its line (by its bytes there, kept in
/// the log by a reader that has the line), or a text made here.
#[derive(Clone, Debug)]
pub enum ChatText {
    /// Nothing (`null`, absent).
    Empty,
    /// The inside of a string literal: these bytes of the line.
    Inside(std::ops::Range<usize>),
    /// Made here (a decoded string, a list of content parts, a value that is not a string).
    Made(String),
}

/// A chat message as the steps need it.
pub struct ChatTurn {
    /// `system`, `user`, `assistant`, `tool`.
    pub role: String,
    /// Its text.
    pub content: ChatText,
    /// Each call's function and arguments (`name(arguments)`).
    pub calls: Vec<(String, ChatText)>,
    /// A tool message's tool.
    pub name: Option<String>,
}

impl ChatTurn {
    /// A decoded message, its texts made.
    pub fn decoded(m: &ChatMessage) -> Self {
        Self {
            role: m.role.clone(),
            content: ChatText::Made(message_text(m.content.as_ref())),
            calls: m
                .tool_calls
                .iter()
                .map(|c| (c.function.name.clone(), ChatText::Made(arguments_text(c.function.arguments.as_ref()))))
                .collect(),
            name: m.name.clone(),
        }
    }
}

/// A part of a chat step's text: a message's text, or words the step adds (`[tool search] `).
#[derive(Clone, Debug)]
pub enum ChatPart {
    /// A message's text or a call's arguments.
    Text(ChatText),
    /// Words of the step's own.
    Words(String),
}

/// One chat step: its kind, and its thought, action and observation, each as parts.
pub struct ChatStep {
    /// `tool_call`, or `message` for a turn that calls no tool.
    pub kind: &'static str,
    /// Thought, action, observation.
    pub texts: [Vec<ChatPart>; 3],
}

/// One step per assistant turn (its calls the action and its text the thought, or its text the
/// action when it calls no tool); the messages up to the next assistant turn are its observation,
/// `[role] text` each (`[tool name] text` for a named tool), on lines of their own.
pub fn chat_step_parts(turns: &[ChatTurn]) -> Vec<ChatStep> {
    let mut steps: Vec<ChatStep> = Vec::new();
    for m in turns.iter().skip_while(|m| m.role != "assistant") {
        let text = ChatPart::Text(m.content.clone());
        if m.role == "assistant" {
            if m.calls.is_empty() {
                steps.push(ChatStep { kind: "message", texts: [Vec::new(), vec![text], Vec::new()] });
            } else {
                let mut action = Vec::new();
                for (k, (name, arguments)) in m.calls.iter().enumerate() {
                    let open = if k == 0 { format!("{name}(") } else { format!("\n{name}(") };
                    action.extend([
                        ChatPart::Words(open),
                        ChatPart::Text(arguments.clone()),
                        ChatPart::Words(")".into()),
                    ]);
                }
                steps.push(ChatStep { kind: "tool_call", texts: [vec![text], action, Vec::new()] });
            }
        } else if let Some(last) = steps.last_mut() {
            let who = match (m.role.as_str(), &m.name) {
                ("tool", Some(name)) => format!("tool {name}"),
                (role, _) => role.to_owned(),
            };
            let observation = &mut last.texts[2];
            let newline = if observation.is_empty() { "" } else { "\n" };
            observation.extend([ChatPart::Words(format!("{newline}[{who}] ")), text]);
        }
    }
    steps
}

/// The prompt of a chat: its system and user messages before the first assistant turn, one
/// `[role] text` line each, each text as `text` gives it.
pub fn chat_prompt_of(turns: &[ChatTurn], text: impl Fn(&ChatText) -> String) -> String {
    let lines: Vec<String> = turns
        .iter()
        .take_while(|m| m.role != "assistant")
        .filter(|m| m.role == "user" || m.role == "system")
        .map(|m| format!("[{}] {}", m.role, text(&m.content)))
        .collect();
    lines.join("\n")
}

/// A made text (an empty one for text of a line, which decoded messages do not have).
fn made(text: &ChatText) -> &str {
    match text {
        ChatText::Made(s) => s,
        ChatText::Empty | ChatText::Inside(_) => "",
    }
}

/// One step per assistant turn ([`chat_step_parts`]): (kind, thought, action, observation).
pub fn chat_steps(messages: &[ChatMessage]) -> Vec<(&'static str, String, String, String)> {
    let turns: Vec<ChatTurn> = messages.iter().map(ChatTurn::decoded).collect();
    let joined = |parts: &[ChatPart]| -> String {
        parts
            .iter()
            .map(|p| match p {
                ChatPart::Text(t) => made(t),
                ChatPart::Words(w) => w,
            })
            .collect()
    };
    chat_step_parts(&turns)
        .into_iter()
        .map(|s| {
            let [thought, action, observation] = s.texts.each_ref().map(|parts| joined(parts));
            (s.kind, thought, action, observation)
        })
        .collect()
}

/// The prompt of a chat ([`chat_prompt_of`]).
pub fn chat_prompt(messages: &[ChatMessage]) -> String {
    let turns: Vec<ChatTurn> = messages.iter().map(ChatTurn::decoded).collect();
    chat_prompt_of(&turns, |t| made(t).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_records_know_their_lines() {
        let text = "[\n  {\"a\": 1},\n\n  {\"a\": 2,\n \"b\": 3}, {\"a\": 4}\n]";
        let records = array_records(text).expect("an array");
        let lines: Vec<u64> = records.iter().map(|r| r.line).collect();
        assert_eq!(lines, [2, 4, 5]);
        assert_eq!(records[1].text, "{\"a\": 2,\n \"b\": 3}");
        assert!(array_records("{\"a\": 1}").is_none());
    }
}
