//! `vantage mcp`: a Model Context Protocol server over stdio, so a coding agent can ask vantage
//! about a run: its tools are the JSON analyses of docs/JSON.md (`check`, `compare`, `budget`,
//! `runs`, `diff`, `step`, `health`, `forensics`) on runs opened by path, and `open_app`, which opens the desktop app at a deep link so the agent can
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

use super::json_command;
use crate::source::OpenOptions;

/// The tools, in `tools/list`'s order.
const TOOLS: [&str; 9] = ["check", "compare", "budget", "runs", "diff", "step", "health", "forensics", "open_app"];

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
                    "instructions": "Open RL rollout logs by path; compare credit schemes on them, read run-health alarms and the rows that corrupted a group baseline, and open the desktop app at a step. The outputs are the JSON of vantage's docs/JSON.md.",
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

/// The properties the tools' input schemas share.
struct Properties {
    path: Value,
    scheme: Value,
    limit: Value,
    offset: Value,
}

/// The tools, with their input schemas.
fn tools() -> Value {
    let common = Properties {
        path: json!({ "type": "string", "description": "a log, a folder of runs or a v2 dataset, on this machine" }),
        scheme: json!({ "type": "string", "description": "a scheme id (vantage schemes), ID@PRESET (grpo@verl), expr:FORMULA or formula:NAME" }),
        limit: json!({ "type": "integer", "minimum": 1, "maximum": 1000 }),
        offset: json!({ "type": "integer", "minimum": 0 }),
    };
    let mut tools = run_tools(&common);
    tools.extend(step_tools(&common));
    Value::Array(tools)
}

/// The tools on a whole run: `check`, `compare`, `budget`, `runs`.
fn run_tools(common: &Properties) -> Vec<Value> {
    let Properties { path, scheme, limit, offset } = common;
    vec![
        json!({
            "name": "check",
            "description": "What a run holds: counts, training steps, rewards, fields present, the credit schemes it supports (and why not the others), the audit of its logged advantages, warnings. docs/JSON.md: vantage check --json.",
            "inputSchema": { "type": "object", "properties": { "path": path }, "required": ["path"] },
        }),
        json!({
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
                    "limit": limit,
                    "offset": offset
                },
                "required": ["path", "a", "b"]
            },
        }),
        json!({
            "name": "budget",
            "description": "The signal budget per training step: mean reward, success rate, the share of rollouts in zero-variance groups (no gradient under GRPO), truncated, and given no credit under schemes a and b, and where each scheme's |credit| goes (successful / failed rollouts, roles, before / after the first error). Paged over training steps.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": path,
                    "a": scheme.clone(),
                    "b": scheme.clone(),
                    "limit": limit.clone(),
                    "offset": offset.clone()
                },
                "required": ["path"]
            },
        }),
        json!({
            "name": "runs",
            "description": "Run A against run B on the same prompts (or two ranges of training steps of one run): each prompt's pass rate on either side with its 95% Wilson interval, and whether it was learned, forgotten, unclear (too few rollouts), still failing, still solved, or seen by one side only. Paged over prompts.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": path,
                    "other": { "type": "string", "description": "run B (without it, B is later training steps of the same run)" },
                    "a_steps": { "type": "string", "description": "A's training steps: 10..20 (inclusive), ..99, 17" },
                    "b_steps": { "type": "string", "description": "B's training steps" },
                    "change": { "type": "array", "items": { "enum": ["learned", "forgotten", "unclear", "still_failing", "still_solved", "only_in_a", "only_in_b"] }, "description": "list only these prompts" },
                    "limit": limit.clone(),
                    "offset": offset.clone()
                },
                "required": ["path"]
            },
        }),
    ]
}

/// The tools on rollouts and steps, and the rest: `diff`, `step`, `health`, `forensics`, `open_app`.
fn step_tools(common: &Properties) -> Vec<Value> {
    let Properties { path, scheme, limit, offset } = common;
    vec![
        json!({
            "name": "diff",
            "description": "Two rollouts of a group aligned step by step (longest common subsequence by text, state key or similar words): where they part, each step's text, and its credit under schemes a and b. Paged over rows.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": path,
                    "left": { "type": "string", "description": "a rollout's id (as compare's rows name it)" },
                    "right": { "type": "string", "description": "the other rollout (default: one of its group with the other outcome)" },
                    "by": { "enum": ["text", "state", "similar"] },
                    "a": scheme.clone(),
                    "b": scheme.clone(),
                    "limit": limit.clone(),
                    "offset": offset.clone()
                },
                "required": ["path", "left"]
            },
        }),
        json!({
            "name": "step",
            "description": "One step of a rollout: its thought, action and observation, its kind, role, scores and outcome, and its credit under every scheme the run supports (or those named), each with the formula and the values of its terms, so the number can be redone by hand.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": path,
                    "trajectory": { "type": "string", "description": "the rollout's id" },
                    "step": { "type": "integer", "minimum": 0, "description": "the step along it, from 0 (as compare and diff number them)" },
                    "schemes": { "type": "array", "items": scheme.clone(), "description": "the schemes to compute (default: every supported one)" },
                    "chars": { "type": "integer", "minimum": 1, "maximum": 100000, "description": "characters of each text shown (default 2000)" }
                },
                "required": ["path", "trajectory", "step"]
            },
        }),
        json!({
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
        }),
        json!({
            "name": "forensics",
            "description": "Baseline forensics: the rows that corrupted a group's baseline (failed_rollout, padding_row, partial_group, duplicate_rollout, filtered_in_baseline, std_spike, reward_fallback), per training step and group, each with the rows, the largest change of the group's other advantages without them (credit_moved), whether the logged advantages include them, and the evidence. docs/FORENSICS.md defines the kinds. Paged over findings.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": path,
                    "spike_bound": { "type": "number", "exclusiveMinimum": 0, "description": "a logged |advantage| above this on a zero std is a std_spike (default 10)" },
                    "limit": limit.clone(),
                    "offset": offset.clone()
                },
                "required": ["path"]
            },
        }),
        json!({
            "name": "open_app",
            "description": "Open the vantage desktop app on a run at a deep link (#traj=ID&step=K&a=grpo&b=triage&view=compare) on this machine's display, to show a person a step.",
            "inputSchema": {
                "type": "object",
                "properties": { "path": path, "link": { "type": "string", "description": "the deep link, as Copy link writes it" } },
                "required": ["path"]
            },
        }),
    ]
}

/// That `arguments` is an object of arguments tool `name` takes (its input schema's properties): a
/// misspelt one is an error, never silently left out.
fn check_arguments(name: &str, arguments: &Value) -> Result<(), String> {
    let tools = tools();
    let Some(tool) = tools.as_array().into_iter().flatten().find(|t| t["name"] == name) else {
        return Err(format!("no tool {name:?}; the tools are {}", TOOLS.join(", ")));
    };
    let Some(given) = arguments.as_object() else { return Err("arguments: not an object".to_owned()) };
    let known = tool["inputSchema"]["properties"].as_object().cloned().unwrap_or_default();
    match given.keys().find(|k| !known.contains_key(*k)) {
        Some(unknown) => Err(format!(
            "arguments: {name} takes no {unknown:?}; it takes {}",
            known.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
        )),
        None => Ok(()),
    }
}

/// Runs a tool; its JSON, or why it could not.
fn call(name: &str, arguments: &Value, options: &OpenOptions) -> Result<Value, String> {
    check_arguments(name, arguments)?;
    let text = |key: &str| arguments.get(key).and_then(Value::as_str).map(str::to_owned);
    let path = || text("path").map(PathBuf::from).ok_or_else(|| "say the run's path (`path`)".to_owned());
    match name {
        "check" => Ok(super::check_json::report(&[path()?], options, None).0),
        "compare" => json_command::from_mcp::<super::compare::Args>(arguments, options),
        "budget" => json_command::from_mcp::<super::budget::Args>(arguments, options),
        "runs" => json_command::from_mcp::<super::runs::Args>(arguments, options),
        "diff" => json_command::from_mcp::<super::diff::Args>(arguments, options),
        "step" => json_command::from_mcp::<super::step::Args>(arguments, options),
        "forensics" => json_command::from_mcp::<super::forensics::Args>(arguments, options),
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
        other => Err(format!("no tool {other:?}; the tools are {}", TOOLS.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The arguments a command's clap declaration takes, by the names its JSON (and so its MCP
    /// tool) takes them: the positional run as `path`, `--json` left out; and those it requires.
    fn declared<C: clap::Args>() -> (std::collections::BTreeSet<String>, std::collections::BTreeSet<String>) {
        let command = C::augment_args(clap::Command::new("declared"));
        let (mut all, mut required) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
        for arg in command.get_arguments().filter(|a| a.get_id() != "json") {
            let name = if arg.is_positional() { "path".to_owned() } else { arg.get_id().as_str().to_owned() };
            if arg.is_required_set() {
                required.insert(name.clone());
            }
            all.insert(name);
        }
        (all, required)
    }

    #[test]
    fn each_analysis_tool_takes_the_arguments_its_command_declares() {
        let tools = tools();
        let schema = |name: &str| {
            let tool = tools.as_array().unwrap().iter().find(|t| t["name"] == name).unwrap();
            let keys = |v: &Value| -> std::collections::BTreeSet<String> {
                match v {
                    Value::Object(o) => o.keys().cloned().collect(),
                    Value::Array(a) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                    _ => std::collections::BTreeSet::new(),
                }
            };
            (keys(&tool["inputSchema"]["properties"]), keys(&tool["inputSchema"]["required"]))
        };
        let declared = [
            ("compare", declared::<super::super::compare::Args>()),
            ("budget", declared::<super::super::budget::Args>()),
            ("runs", declared::<super::super::runs::Args>()),
            ("diff", declared::<super::super::diff::Args>()),
            ("step", declared::<super::super::step::Args>()),
            ("forensics", declared::<super::super::forensics::Args>()),
        ];
        for (name, (all, required)) in declared {
            let (properties, schema_required) = schema(name);
            assert_eq!(properties, all, "{name}: the MCP schema's properties against the command's arguments");
            assert_eq!(schema_required, required, "{name}: required arguments");
        }
    }

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
        assert_eq!(names, TOOLS);
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
