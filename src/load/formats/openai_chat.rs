//! OpenAI chat-message trajectories with tool calls (tau-bench's `historical_trajectories`, and any
//! JSON array or JSON-lines file of `{messages | traj, reward, task_id, trial}`): every assistant
//! turn is a step (its tool call the action, its text the thought, or the action when it calls no
//! tool); the tool results and user replies up to the next assistant turn are its observation. The
//! system message and the first user message are the prompt; `task_id` groups the trials.
//!
//! Read from a file, a message's text and a call's arguments stay in the log: each is kept as its
//! place there (a part of the step's text, beside the few words the step adds, `[tool search] `),
//! not copied.

use std::ops::Range;

use serde_json::value::RawValue;

use crate::load::lenient::{FieldError, Num};
use crate::load::lines::{JsonLines, LineFeed, LineStream, head_text, parse_json, read_all};
use crate::load::records::{
    ChatMessage, ChatPart, ChatText, ChatTurn, Record, arguments_text, array_records, chat_prompt_of, chat_step_parts,
    finish, id_text, line_records, message_text, object_has, parse, text_of,
};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, TextId, TextPart, Warning};

/// The format name.
const FORMAT: &str = "OpenAI chat trajectories";

/// The OpenAI chat loader.
pub struct OpenAiChat;

/// A record: its messages (decoded, [`ChatMessage`], or with their texts borrowed as raw JSON,
/// [`RawMessage`]), reward and ids.
#[derive(serde::Deserialize)]
#[serde(bound(deserialize = "M: serde::Deserialize<'de>"))]
struct Trajectory<M> {
    #[serde(alias = "traj")]
    messages: Vec<M>,
    #[serde(default)]
    reward: Option<Num>,
    #[serde(default)]
    task_id: Option<serde_json::Value>,
    #[serde(default)]
    trial: Option<serde_json::Value>,
    #[serde(default)]
    id: Option<serde_json::Value>,
}

#[derive(serde::Deserialize)]
struct RawMessage<'a> {
    role: String,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    tool_calls: Vec<RawCall<'a>>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(serde::Deserialize)]
struct RawCall<'a> {
    #[serde(borrow)]
    function: RawFunction<'a>,
}

#[derive(serde::Deserialize)]
struct RawFunction<'a> {
    name: String,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
}

/// A record as parsed on a parse thread (no borrow of the line: its texts are ranges of it).
pub struct Item {
    messages: Vec<ChatTurn>,
    reward: Option<Num>,
    task_id: Option<serde_json::Value>,
    trial: Option<serde_json::Value>,
    id: Option<serde_json::Value>,
}

impl Loader for OpenAiChat {
    fn name(&self) -> &'static str {
        "openai_chat"
    }

    fn description(&self) -> &'static str {
        "OpenAI chat messages with tool calls: JSON array or JSONL of {messages|traj, reward, task_id, trial} (tau-bench)"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        (!head.trim_start().starts_with('[') && accepts(head)).then(|| stream(name, report))
    }
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let head = head_text(bytes);
    if !head.trim_start().starts_with('[') {
        if !accepts(&head) {
            return Err(incompatible());
        }
        return read_all(stream(name, std::mem::take(report)), bytes, report).await;
    }
    // A JSON array is read whole.
    let text = text_of(FORMAT, bytes)?;
    let records = array_records(&text).ok_or_else(incompatible)?;
    if !records.first().is_some_and(|r| is_chat(r.text)) {
        return Err(incompatible());
    }
    let mut b = RunBuilder::new(name, FORMAT);
    for (i, record) in records.into_iter().enumerate() {
        crate::load::records::advance(report, &text, record).await;
        if let Some(t) = parse::<Trajectory<ChatMessage>>(record, report) {
            add(&mut b, record, i, &Item::made(t), report);
        }
    }
    finish(b, report, "trajectory")
}

fn incompatible() -> LoadError {
    LoadError::Incompatible { format: FORMAT, reason: "records lack messages / traj".to_owned() }
}

fn is_chat(record: &str) -> bool {
    object_has(record, &["traj"]) || object_has(record, &["messages"])
}

/// Whether the first line of `head` is a chat trajectory.
fn accepts(head: &str) -> bool {
    line_records(head).next().is_some_and(|r| is_chat(r.text))
}

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    Box::new(LineStream::new(ChatLines, RunBuilder::new(name, FORMAT), report))
}

/// The JSON-lines form, its texts kept as ranges of the lines.
struct ChatLines;

impl JsonLines for ChatLines {
    type Item = Item;

    fn what(&self) -> &'static str {
        "trajectory"
    }

    fn parse(text: &str) -> Result<Item, FieldError> {
        // Borrowed first; a record it refuses (or whose texts do not decode) is read as before,
        // for the same located error (or the same texts).
        match serde_json::from_str::<Trajectory<RawMessage<'_>>>(text).ok().and_then(|t| Item::ranges(text, t)) {
            Some(item) => Ok(item),
            None => parse_json::<Trajectory<ChatMessage>>(text).map(Item::made),
        }
    }

    fn add(&mut self, b: &mut RunBuilder, record: Record<'_>, index: usize, item: Item, report: &mut LoadReport) {
        add(b, record, index, &item, report);
    }
}

impl Item {
    /// A record parsed with its texts as they were decoded.
    fn made(t: Trajectory<ChatMessage>) -> Self {
        let messages = t.messages.iter().map(ChatTurn::decoded).collect();
        Self { messages, reward: t.reward, task_id: t.task_id, trial: t.trial, id: t.id }
    }

    /// A record parsed from `line` with its strings as ranges of it; `None` when one of them does
    /// not decode (the record is then read as before, and gives its error).
    fn ranges(line: &str, t: Trajectory<RawMessage<'_>>) -> Option<Self> {
        let mut messages = Vec::with_capacity(t.messages.len());
        for m in t.messages {
            let content = match m.content {
                None => ChatText::Empty,
                Some(raw) => match string_range(line, raw) {
                    Some(range) => ChatText::Inside(range),
                    // A list of parts, or another value: made as a `serde_json::Value` makes it.
                    None => ChatText::Made(message_text(Some(&serde_json::from_str(raw.get()).ok()?))),
                },
            };
            let mut calls = Vec::with_capacity(m.tool_calls.len());
            for call in m.tool_calls {
                let arguments = match call.function.arguments {
                    None => ChatText::Empty,
                    Some(raw) => match string_range(line, raw) {
                        Some(range) => ChatText::Inside(range),
                        None => ChatText::Made(arguments_text(Some(&serde_json::from_str(raw.get()).ok()?))),
                    },
                };
                calls.push((call.function.name, arguments));
            }
            messages.push(ChatTurn { role: m.role, content, calls, name: m.name });
        }
        Some(Self { messages, reward: t.reward, task_id: t.task_id, trial: t.trial, id: t.id })
    }
}

/// The range of `raw`'s inside in `line` when it is a string literal that decodes (`None` for
/// another value; a string that does not decode makes the caller give up).
fn string_range(line: &str, raw: &RawValue) -> Option<Range<usize>> {
    let literal = raw.get();
    let inside = literal.strip_prefix('"')?.strip_suffix('"')?;
    crate::model::decode_raw(inside.as_bytes())?;
    let start = (inside.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    Some(start..start + inside.len())
}

/// The text of `parts` for the builder: each part of the line kept as its place there (when the
/// builder keeps texts in the log), the rest as words.
fn push_parts(b: &mut RunBuilder, line: &str, parts: &[ChatPart]) -> TextId {
    let parts: Vec<TextPart<'_>> = parts
        .iter()
        .map(|p| match p {
            ChatPart::Text(ChatText::Inside(range)) => TextPart::Raw(line.get(range.clone()).unwrap_or_default()),
            ChatPart::Text(ChatText::Made(s)) | ChatPart::Words(s) => TextPart::Plain(s),
            ChatPart::Text(ChatText::Empty) => TextPart::Plain(""),
        })
        .collect();
    b.push_composed_text(&parts)
}

/// A message's text decoded.
fn decoded(line: &str, text: &ChatText) -> String {
    match text {
        ChatText::Empty => String::new(),
        ChatText::Inside(range) => {
            crate::model::decode_raw(line.get(range.clone()).unwrap_or_default().as_bytes()).unwrap_or_default().into()
        }
        ChatText::Made(s) => s.clone(),
    }
}

fn add(b: &mut RunBuilder, record: Record<'_>, index: usize, t: &Item, report: &mut LoadReport) {
    let steps = chat_step_parts(&t.messages);
    if steps.is_empty() {
        report.warn(Warning::skipped(record.line, "messages", "no assistant turn"));
        return;
    }
    let task = id_text(t.task_id.as_ref());
    let group_key = task.as_ref().map_or_else(|| format!("record-{index}"), |task| format!("task-{task}"));
    let group = if let Some(g) = b.group(&group_key) {
        g
    } else {
        let prompt = chat_prompt_of(&t.messages, |text| decoded(record.text, text));
        b.add_group(&NewGroup { key: &group_key, task: task.as_deref(), prompt: Some(&prompt), ..NewGroup::default() })
            .0
    };
    let key = match (id_text(t.id.as_ref()), id_text(t.trial.as_ref())) {
        (Some(id), _) => id,
        (None, Some(trial)) => format!("{group_key}/trial-{trial}"),
        (None, None) => format!("{group_key}/{index}"),
    };
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(record.line, "trial", format!("duplicate trajectory {key:?}")));
        return;
    }
    let new_steps: Vec<NewStep<'_>> =
        steps.iter().map(|s| NewStep { kind: Some(s.kind), ..NewStep::default() }).collect();
    let texts: Vec<[TextId; 3]> =
        steps.iter().map(|s| s.texts.each_ref().map(|parts| push_parts(b, record.text, parts))).collect();
    let reward = t.reward.map(|r| r.0).filter(|r| !r.is_nan());
    let outcome = Outcome { reward, success: reward.map(|r| r > 0.5), components: Vec::new(), finish: None };
    b.add_chain_trajectory_with_texts(&key, group, &new_steps, &texts, &outcome, &NewTokens::default());
}
