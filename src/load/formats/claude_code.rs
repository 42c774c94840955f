//! Claude Code session files: `~/.claude/projects/<cwd with / as ->/<session id>.jsonl`, one JSON
//! record per line as Claude Code appends them. `user` and `assistant` records carry the
//! conversation (`message`, as the Anthropic Messages API has it) with the `sessionId`, `uuid` and
//! `parentUuid`; the other records (`summary`, `queue-operation`, `attachment`,
//! `file-history-snapshot`, `system`, `cost-state`, …) are the tool's bookkeeping.
//!
//! Each session (`sessionId`) is a trajectory (`load::sessions`: sessions with the same
//! first prompt are a group). An assistant message is written one content block per line (the same
//! `message.id` on each): its text and thinking are the thought of its next `tool_use`, which is a
//! step whose kind is the tool's name and whose action is the call; the `tool_result` with that
//! call's id is the observation, and one marked `is_error` makes the step's kind `error`. Text no
//! call follows is an answer (`message`). What the user types later in the session is the
//! observation of the step before it. A subagent's records (`isSidechain`) are left out (its
//! result is the `Task` call's observation), and counted in the notes. The model and token usage
//! of each message (its last line's: a streamed message's first lines carry partial counts) go in
//! the notes; synthetic messages (`model` `<synthetic>`, Claude Code's own API error notices) are
//! failed steps, not model calls. A folder of session files (a project's folder) is one run.

use serde_json::Value;

use crate::load::records::{call_text, line_records, message_text, text_of};
use crate::load::sessions::{self, Session};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{Run, Warning};

/// The format name.
const FORMAT: &str = "Claude Code sessions";

/// The Claude Code session loader.
pub struct ClaudeCode;

impl Loader for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude_code"
    }

    fn description(&self) -> &'static str {
        "Claude Code session files (~/.claude/projects/<project>/<session>.jsonl): a session per trajectory, tool calls and results as steps"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let text = text_of(FORMAT, bytes)?;
        if !accepts(&text) {
            return Err(LoadError::Incompatible {
                format: FORMAT,
                reason: "no user or assistant record with a sessionId and a message in the first lines".to_owned(),
            });
        }
        let (sessions, notes) = read(&text, report);
        sessions::build(name, FORMAT, sessions, notes, report)
    }
}

/// Whether one of the first 64 records is a Claude Code `user` or `assistant` record.
pub fn accepts(text: &str) -> bool {
    line_records(text).take(64).any(|r| {
        serde_json::from_str::<serde_json::Map<String, Value>>(r.text).is_ok_and(|m| {
            matches!(m.get("type").and_then(Value::as_str), Some("user" | "assistant"))
                && m.get("sessionId").is_some_and(Value::is_string)
                && m.get("message").is_some_and(Value::is_object)
        })
    })
}

/// The sessions of the file (or of session files joined), in the order they start, and the notes
/// on what was left out.
fn read(text: &str, report: &mut LoadReport) -> (Vec<Session>, Vec<String>) {
    let mut sessions: Vec<Session> = Vec::new();
    // Per session: the last message id and its usage (counted once, from its last line).
    let mut usage: Vec<(String, Option<Value>)> = Vec::new();
    let mut sidechain = 0usize;
    for record in line_records(text) {
        report.records_seen += 1;
        let value: Value = match serde_json::from_str(record.text) {
            Ok(v) => v,
            Err(err) => {
                report.warn(Warning::skipped(record.line, "record", err.to_string()));
                continue;
            }
        };
        report.records_loaded += 1;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or_default();
        if !matches!(kind, "user" | "assistant") {
            continue;
        }
        if value.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            sidechain += 1;
            continue;
        }
        let Some(id) = value.get("sessionId").and_then(Value::as_str) else {
            report.warn(Warning::skipped(record.line, "sessionId", "a user or assistant record without a sessionId"));
            continue;
        };
        let at = if let Some(at) = sessions.iter().position(|s| s.id == id) {
            at
        } else {
            sessions.push(Session::new(id, record.line));
            usage.push((String::new(), None));
            sessions.len() - 1
        };
        let Some(message) = value.get("message") else {
            report.warn(Warning::skipped(record.line, "message", "a user or assistant record without a message"));
            continue;
        };
        let session = &mut sessions[at];
        if kind == "user" {
            user(session, message, &value);
        } else {
            assistant(session, message, &value, &mut usage[at]);
        }
    }
    for (session, (_, last)) in sessions.iter_mut().zip(usage) {
        count(session, last.as_ref());
    }
    let mut notes = Vec::new();
    if sidechain > 0 {
        notes.push(format!(
            "{} of subagents (isSidechain) left out: each subagent's result is the observation of the call that started it",
            crate::model::count(sidechain, "record")
        ));
    }
    (sessions, notes)
}

/// A user record: the prompt, what the user says later, or tool results.
fn user(session: &mut Session, message: &Value, record: &Value) {
    // Claude Code's own injected texts (command output, caveats) are marked as meta.
    if record.get("isMeta").and_then(Value::as_bool) == Some(true) {
        return;
    }
    match message.get("content") {
        Some(Value::Array(blocks)) => {
            for block in blocks {
                if block.get("type").and_then(Value::as_str) == Some("tool_result") {
                    let id = block.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
                    let output = message_text(block.get("content"));
                    let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
                    if !session.result(id, &output, failed) {
                        session.user(&output);
                    }
                } else if let Some(text) = block.get("text").and_then(Value::as_str) {
                    session.user(text);
                }
            }
        }
        other => session.user(&message_text(other)),
    }
}

/// An assistant record: one or more content blocks of a message.
fn assistant(session: &mut Session, message: &Value, record: &Value, usage: &mut (String, Option<Value>)) {
    let model = message.get("model").and_then(Value::as_str).unwrap_or_default();
    let synthetic = model == "<synthetic>" || record.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
    let id = message.get("id").and_then(Value::as_str).unwrap_or_default();
    if !synthetic && (id.is_empty() || id != usage.0) {
        // A new message: the last one's usage is final.
        let last = std::mem::replace(usage, (id.to_owned(), None));
        count(session, last.1.as_ref());
        if !model.is_empty() {
            session.model(model);
        }
    }
    if !synthetic && let Some(u) = message.get("usage") {
        usage.1 = Some(u.clone());
    }
    for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") if synthetic => {
                session.flush();
                let text = block.get("text").and_then(Value::as_str).unwrap_or_default();
                session.steps.push(sessions::Step {
                    kind: "error".to_owned(),
                    observation: text.to_owned(),
                    ..Default::default()
                });
            }
            Some("text") => session.say(block.get("text").and_then(Value::as_str).unwrap_or_default()),
            Some("thinking") => session.say(block.get("thinking").and_then(Value::as_str).unwrap_or_default()),
            Some("tool_use" | "server_tool_use") => {
                let name = block.get("name").and_then(Value::as_str).unwrap_or("tool");
                let call = block.get("id").and_then(Value::as_str).unwrap_or_default();
                session.call(name, call_text(name, block.get("input")), call);
            }
            _ => {}
        }
    }
}

/// Adds a message's usage to its session's tokens.
fn count(session: &mut Session, usage: Option<&Value>) {
    let Some(usage) = usage else { return };
    let n = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let cached = n("cache_read_input_tokens");
    session.tokens.0 += n("input_tokens") + n("cache_creation_input_tokens") + cached;
    session.tokens.1 += cached;
    session.tokens.2 += n("output_tokens");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: &str, extra: &str, message: &str) -> String {
        format!(r#"{{"type":"{kind}","sessionId":"s","uuid":"u"{extra},"message":{message}}}"#)
    }

    /// A subagent's records are left out and counted; a synthetic API error notice is a failed
    /// step, not a model call; what the user says later is the observation of the step before.
    #[test]
    fn sidechains_synthetic_errors_and_later_prompts() {
        let text = [
            line("user", "", r#"{"role":"user","content":"fix it"}"#),
            line("assistant", "", r#"{"id":"m1","model":"claude-x","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":5,"output_tokens":1}}"#),
            line("user", r#","isSidechain":true"#, r#"{"role":"user","content":"sub task"}"#),
            line("user", "", r#"{"role":"user","content":"are you sure?"}"#),
            line("assistant", r#","isApiErrorMessage":true"#, r#"{"id":"m2","model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 overloaded"}]}"#),
        ]
        .join("\n");
        let mut report = LoadReport::new("s.jsonl");
        let run = ClaudeCode.load_bytes("s.jsonl", text.as_bytes(), &mut report).unwrap();
        let path = run.trajectories.path(run.trajectories.ids().next().unwrap());
        let kinds: Vec<&str> = path.iter().map(|n| run.label(run.nodes.kind[n.index()])).collect();
        assert_eq!(kinds, ["message", "error"]);
        assert_eq!(run.text(run.nodes.observation[path[0].index()]), "[user] are you sure?");
        assert_eq!(run.text(run.nodes.observation[path[1].index()]), "API Error: 529 overloaded");
        assert!(run.meta.notes.iter().any(|n| n.starts_with("1 record of subagents")), "{:?}", run.meta.notes);
        assert!(
            run.meta.notes.iter().any(|n| n == "models: claude-x (1 call); tokens: 5 in, 1 out"),
            "{:?}",
            run.meta.notes
        );
    }
}
