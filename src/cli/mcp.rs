//! `vantage mcp`: a Model Context Protocol server over stdio, so a coding agent can ask vantage
//! about a run: its tools are the JSON analyses of docs/JSON.md (`check`, `compare`, `health`) on
//! runs opened by path, and `open_app`, which opens the desktop app at a deep link so the agent can
//! show a person the step it found.
//!
//! The protocol's stdio transport is JSON-RPC 2.0, one message a line; this server answers
//! `initialize`, `ping`, `tools/list` and `tools/call` and ignores notifications. It is written here
//! rather than with the official Rust SDK (`rmcp`), which brings tokio's runtime and its macros for
//! what is a read-eval loop over four methods.

use std::io::{BufRead as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::source::OpenOptions;

/// The protocol versions this server speaks (it answers with the client's when it is one of them).
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Serves on stdin and stdout until stdin closes.
pub fn main(options: &OpenOptions) -> ExitCode {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let Some(answer) = answer(&line, options) else { continue };
        if writeln!(stdout, "{answer}").and_then(|()| stdout.flush()).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

/// The answer to one message (`None` for a notification).
pub fn answer(line: &str, options: &OpenOptions) -> Option<Value> {
    let message: Value = match serde_json::from_str(line) {
        Ok(message) => message,
        Err(err) => return Some(error(Value::Null, -32700, &format!("not JSON: {err}"))),
    };
    let id = message.get("id").cloned()?;
    let method = message["method"].as_str().unwrap_or_default();
    let params = &message["params"];
    Some(match method {
        "initialize" => {
            let asked = params["protocolVersion"].as_str().unwrap_or(VERSIONS[0]);
            let version = VERSIONS.iter().find(|v| **v == asked).copied().unwrap_or(VERSIONS[0]);
            result(
                id,
                json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": { "name": "vantage", "version": env!("CARGO_PKG_VERSION") },
                    "instructions": "Open RL rollout logs by path; compare credit schemes on them, read run-health alarms, and open the desktop app at a step. The outputs are the JSON of vantage's docs/JSON.md.",
                }),
            )
        }
        "ping" => result(id, json!({})),
        "tools/list" => result(id, json!({ "tools": tools() })),
        "tools/call" => {
            let name = params["name"].as_str().unwrap_or_default();
            let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
            let (value, is_error) = match call(name, &arguments, options) {
                Ok(value) => (value, false),
                Err(why) => (json!({ "error": why }), true),
            };
            result(
                id,
                json!({
                    "content": [{ "type": "text", "text": value.to_string() }],
                    "structuredContent": value,
                    "isError": is_error,
                }),
            )
        }
        other => error(id, -32601, &format!("no method {other:?}")),
    })
}

/// A JSON-RPC answer: `jsonrpc`, the request's `id`, and `key` (`result` or `error`).
fn reply(id: Value, key: &str, value: Value) -> Value {
    let mut message = serde_json::Map::new();
    message.insert("jsonrpc".to_owned(), Value::from("2.0"));
    message.insert("id".to_owned(), id);
    message.insert(key.to_owned(), value);
    Value::Object(message)
}

fn result(id: Value, result: Value) -> Value {
    reply(id, "result", result)
}

fn error(id: Value, code: i64, message: &str) -> Value {
    reply(id, "error", json!({ "code": code, "message": message }))
}

/// The tools, with their input schemas.
fn tools() -> Value {
    let path = json!({ "type": "string", "description": "a log, a folder of runs or a v2 dataset, on this machine" });
    json!([
        {
            "name": "check",
            "description": "What a run holds: counts, training steps, rewards, fields present, the credit schemes it supports (and why not the others), the audit of its logged advantages, warnings. docs/JSON.md: vantage check --json.",
            "inputSchema": { "type": "object", "properties": { "path": path }, "required": ["path"] },
        },
        {
            "name": "compare",
            "description": "Two credit schemes on a run: Spearman rho, the share of steps whose signs differ, named disagreements, the steps where they differ most with their text, the groups they disagree on most. Paged: limit (1 to 1000) and offset.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": path,
                    "a": { "type": "string", "description": "scheme A: a scheme id (vantage schemes), expr:FORMULA or formula:NAME" },
                    "b": { "type": "string", "description": "scheme B" },
                    "a_preset": { "type": "string", "description": "scheme A's trainer preset (verl, trl, nemo_rl, …)" },
                    "b_preset": { "type": "string" },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 1000 },
                    "offset": { "type": "integer", "minimum": 0 }
                },
                "required": ["path", "a", "b"]
            },
        },
        {
            "name": "health",
            "description": "Run-health alarms per training step (zero-variance and all-failed groups, truncated, errored, empty, repetitive or undecodable rollouts) and over the run (step scores against outcomes, length hacking, entropy collapse), each with the groups behind it. docs/HEALTH.md defines them.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": path,
                    "thresholds": { "type": "object", "description": "threshold by alarm name, e.g. {\"truncated\": 0.3}", "additionalProperties": { "type": "number" } }
                },
                "required": ["path"]
            },
        },
        {
            "name": "open_app",
            "description": "Open the vantage desktop app on a run at a deep link (#traj=ID&step=K&a=grpo&b=triage&view=compare) on this machine's display, to show a person a step.",
            "inputSchema": {
                "type": "object",
                "properties": { "path": path, "link": { "type": "string", "description": "the deep link, as Copy link writes it" } },
                "required": ["path"]
            },
        },
    ])
}

/// Runs a tool; its JSON, or why it could not.
fn call(name: &str, arguments: &Value, options: &OpenOptions) -> Result<Value, String> {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str).map(str::to_owned);
    let path = || text("path").map(PathBuf::from).ok_or_else(|| "say the run's path (`path`)".to_owned());
    match name {
        "check" => Ok(super::check_json::report(&[path()?], options, None).0),
        "compare" => {
            let number = |key: &str, default: usize| match arguments.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(v) => v
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| format!("{key}: not a whole number ({v})")),
            };
            let args = super::compare::Args {
                file: path()?,
                a: text("a").ok_or("say scheme A (`a`)")?,
                b: text("b").ok_or("say scheme B (`b`)")?,
                a_preset: text("a_preset"),
                b_preset: text("b_preset"),
                json: true,
                limit: number("limit", 20)?,
                offset: number("offset", 0)?,
            };
            super::compare::json(&args, options).map_err(|e| format!("{e:#}"))
        }
        "health" => {
            let mut thresholds = crate::analysis::health::Thresholds::default();
            if let Some(given) = arguments.get("thresholds").and_then(Value::as_object) {
                for (name, value) in given {
                    let value = value.as_f64().ok_or_else(|| format!("thresholds.{name}: not a number"))?;
                    thresholds.set(name, value)?;
                }
            }
            let (report, _, failed) = super::health_report(&[path()?], &thresholds, options);
            if failed && report["runs"].as_array().is_none_or(Vec::is_empty) {
                return Err("the run could not be read (see vantage check)".to_owned());
            }
            Ok(report)
        }
        "open_app" => {
            let path = path()?;
            let exe = std::env::current_exe().map_err(|e| format!("where is vantage? {e}"))?;
            let mut command = std::process::Command::new(exe);
            command.arg(&path);
            if let Some(link) = text("link") {
                command.args(["--link", &link]);
            }
            let child = command
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .map_err(|e| format!("could not start the app: {e}"))?;
            Ok(json!({ "opened": path.display().to_string(), "link": text("link"), "pid": child.id() }))
        }
        other => Err(format!("no tool {other:?}; the tools are check, compare, health, open_app")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_answers_initialize_lists_its_tools_and_ignores_notifications() {
        let options = OpenOptions::default();
        let init = answer(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
            &options,
        )
        .unwrap();
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(init["result"]["serverInfo"]["name"], "vantage");
        assert!(answer(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &options).is_none());
        let list = answer(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, &options).unwrap();
        let names: Vec<&str> =
            list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["check", "compare", "health", "open_app"]);
        let unknown = answer(r#"{"jsonrpc":"2.0","id":3,"method":"resources/list"}"#, &options).unwrap();
        assert_eq!(unknown["error"]["code"], -32601);
        let garbage = answer("{not json", &options).unwrap();
        assert_eq!(garbage["error"]["code"], -32700);
        let no_tool =
            answer(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rm","arguments":{}}}"#, &options)
                .unwrap();
        assert_eq!(no_tool["result"]["isError"], true);
    }
}
