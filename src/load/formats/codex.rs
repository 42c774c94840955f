//! Codex CLI rollout files: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, one JSON
//! record per line as Codex appends them (`codex-rs/protocol` `RolloutLine`): `{timestamp, type,
//! payload}` with `type` `session_meta` (the session's `id`, `cwd`, `cli_version`, …),
//! `response_item` (a Responses API item: `message`, `reasoning`, `function_call`,
//! `function_call_output`, `custom_tool_call`, `custom_tool_call_output`, `local_shell_call`),
//! `turn_context` (the turn's `model`), `event_msg` (`token_count`, `task_complete`, …) and others.
//! Older rollouts wrote the items bare, one per line after a first line of session metadata.
//!
//! Each session (from its `session_meta` to the next) is a trajectory (`load::sessions`:
//! sessions with the same first prompt are a group). The user's first message is the prompt (the
//! context Codex injects as user or developer messages, `<environment_context>` and its kin, is
//! left out); an assistant message's text and a reasoning summary are the thought of the next call;
//! a function call is a step whose kind is the tool's name and whose action is the call; its
//! output is the observation, and a command that exited with a code other than 0 (`Process exited
//! with code N`, or `metadata.exit_code`) makes the step's kind `error`. Text no call follows is
//! an answer (`message`). The model of each turn and the session's last `token_count` totals go in
//! the notes (a `token_count` after a response is one call of the turn's model). A folder of rollouts (`sessions/`, by date) is one run.

use serde_json::Value;

use crate::load::records::{call_text, line_records, text_of};
use crate::load::sessions::{self, Session};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{Run, Warning};

/// The format name.
const FORMAT: &str = "Codex CLI rollouts";

/// The Codex rollout loader.
pub struct Codex;

impl Loader for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn description(&self) -> &'static str {
        "Codex CLI rollout files (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): a session per trajectory, tool calls and outputs as steps"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let text = text_of(FORMAT, bytes)?;
        if !accepts(&text) {
            return Err(LoadError::Incompatible {
                format: FORMAT,
                reason: "the first line is not a Codex session_meta record".to_owned(),
            });
        }
        let sessions = read(&text, report);
        sessions::build(name, FORMAT, sessions, Vec::new(), report)
    }
}

/// Whether the first record is a Codex rollout's session metadata: `{type: "session_meta",
/// payload: {id, …}}`, or (older rollouts) `{id, timestamp, instructions?}` followed by bare
/// response items.
pub fn accepts(text: &str) -> bool {
    let mut records = line_records(text).take(2).map(|r| serde_json::from_str::<Value>(r.text).ok());
    let Some(Some(first)) = records.next() else { return false };
    if first.get("type").and_then(Value::as_str) == Some("session_meta") {
        return first.get("payload").and_then(|p| p.get("id")).is_some_and(Value::is_string);
    }
    let old_meta = first.get("id").is_some_and(Value::is_string)
        && first.get("timestamp").is_some_and(Value::is_string)
        && first.get("type").is_none();
    old_meta
        && records.next().flatten().is_some_and(|second| {
            matches!(second.get("type").and_then(Value::as_str), Some("message" | "reasoning" | "function_call"))
        })
}

/// The sessions of the file (or of rollouts joined), in order.
fn read(text: &str, report: &mut LoadReport) -> Vec<Session> {
    let mut sessions: Vec<Session> = Vec::new();
    // The model of the turn under way: each `token_count` after a response is one call of it.
    let mut model = String::new();
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
        let (kind, payload) = match (value.get("type").and_then(Value::as_str), value.get("payload")) {
            (Some(kind), Some(payload)) => (kind, payload),
            // An older rollout: its first line the metadata, then the items bare.
            (None, _) if value.get("id").is_some() => ("session_meta", &value),
            _ => ("response_item", &value),
        };
        if kind == "session_meta" {
            let id = payload.get("id").and_then(Value::as_str).unwrap_or_default();
            sessions.push(Session::new(id, record.line));
            model.clear();
            continue;
        }
        let Some(session) = sessions.last_mut() else {
            report.warn(Warning::skipped(record.line, "type", "a record before the session's session_meta"));
            continue;
        };
        match kind {
            "response_item" => item(session, payload),
            "turn_context" => {
                payload.get("model").and_then(Value::as_str).unwrap_or_default().clone_into(&mut model);
            }
            "event_msg" if payload.get("type").and_then(Value::as_str) == Some("token_count") => {
                // Totals so far: the last one is the session's.
                if let Some(total) = payload.get("info").and_then(|i| i.get("total_token_usage")) {
                    if !model.is_empty() {
                        session.model(&model);
                    }
                    let n = |key: &str| total.get(key).and_then(Value::as_u64).unwrap_or(0);
                    session.tokens = (n("input_tokens"), n("cached_input_tokens"), n("output_tokens"));
                }
            }
            _ => {}
        }
    }
    sessions
}

/// A response item.
fn item(session: &mut Session, item: &Value) {
    let text = |v: &Value, keys: &[&str]| -> String {
        let parts = v.as_array().into_iter().flatten().filter_map(|p| {
            let kind = p.get("type").and_then(Value::as_str).unwrap_or_default();
            keys.contains(&kind).then(|| p.get("text").and_then(Value::as_str)).flatten()
        });
        parts.collect::<Vec<_>>().join("\n")
    };
    let content = item.get("content").unwrap_or(&Value::Null);
    match item.get("type").and_then(Value::as_str).unwrap_or_default() {
        "message" => match item.get("role").and_then(Value::as_str) {
            Some("user") => {
                let said = text(content, &["input_text", "text"]);
                if !injected(&said) {
                    session.user(&said);
                }
            }
            Some("assistant") => {
                session.say(&text(content, &["reasoning"]));
                session.say(&text(content, &["output_text", "text"]));
            }
            _ => {}
        },
        "reasoning" => session.say(&text(item.get("summary").unwrap_or(&Value::Null), &["summary_text"])),
        "function_call" | "custom_tool_call" => {
            let name = item.get("name").and_then(Value::as_str).unwrap_or("tool");
            let call = item.get("call_id").and_then(Value::as_str).unwrap_or_default();
            let arguments = item.get("arguments").or_else(|| item.get("input"));
            session.call(name, call_text(name, arguments), call);
        }
        "local_shell_call" => {
            let call = item.get("call_id").and_then(Value::as_str).unwrap_or_default();
            let command = item.get("action").and_then(|a| a.get("command"));
            session.call("local_shell", call_text("local_shell", command), call);
        }
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            let call = item.get("call_id").and_then(Value::as_str).unwrap_or_default();
            let (output, code) = output(item.get("output"));
            if !session.result(call, &output, code.is_some_and(|c| c != 0)) {
                session.user(&output);
            }
        }
        _ => {}
    }
}

/// Whether a user message is context Codex injects (`<environment_context>`, `<user_instructions>`,
/// the AGENTS.md instructions, …), not what the user typed.
fn injected(text: &str) -> bool {
    let t = text.trim();
    (t.starts_with('<') && t.ends_with('>')) || t.starts_with("# AGENTS.md instructions")
}

/// A call's output as text and the exit code it reports: unified exec's `Process exited with code
/// N` header (its text after `Output:`), or the older shell tool's JSON `{output, metadata:
/// {exit_code}}`.
fn output(value: Option<&Value>) -> (String, Option<i64>) {
    let raw = match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => {
            o.get("content").and_then(Value::as_str).map_or_else(|| Value::Object(o.clone()).to_string(), str::to_owned)
        }
        Some(other) => other.to_string(),
        None => String::new(),
    };
    if let Ok(Value::Object(json)) = serde_json::from_str::<Value>(&raw)
        && let Some(text) = json.get("output").and_then(Value::as_str)
    {
        let code = json.get("metadata").and_then(|m| m.get("exit_code")).and_then(Value::as_i64);
        return (text.to_owned(), code);
    }
    let code = raw.lines().find_map(|l| l.strip_prefix("Process exited with code ")?.trim().parse::<i64>().ok());
    match (code, raw.split_once("\nOutput:\n")) {
        (Some(code), Some((_, text))) => (text.to_owned(), Some(code)),
        _ => (raw, code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_bare_rollouts_and_shell_outputs_read() {
        let text = concat!(
            r#"{"id":"s1","timestamp":"2025-05-01T10:00:00Z","instructions":null}"#,
            "\n",
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}"#,
            "\n",
            r#"{"type":"reasoning","summary":[{"type":"summary_text","text":"I should run ls."}]}"#,
            "\n",
            r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}"#,
            "\n",
            r#"{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"ls: denied\",\"metadata\":{\"exit_code\":2}}"}"#,
            "\n"
        );
        assert!(accepts(text));
        let run = Codex.load_bytes("old.jsonl", text.as_bytes(), &mut LoadReport::new("old.jsonl")).unwrap();
        let step = run.trajectories.path(run.trajectories.ids().next().unwrap())[0].index();
        assert_eq!(run.label(run.nodes.kind[step]), "error");
        assert_eq!(run.text(run.nodes.thought[step]), "I should run ls.");
        assert_eq!(run.text(run.nodes.observation[step]), "ls: denied");
        assert!(!accepts(r#"{"id":"x","timestamp":"t"}"#));
    }
}
