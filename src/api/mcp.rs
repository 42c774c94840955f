//! `vantage mcp`: a Model Context Protocol server over stdio, so a coding agent can ask vantage
//! about a run: its tools are the JSON analyses of docs/JSON.md (`check`, `compare`, `budget`,
//! `runs`, `diff`, `graph`, `step`, `health`, `forensics`, `label`) on runs opened by path, and `open_app`, which
//! opens the desktop app at a deep link so the agent can show a person the step it found. Each
//! tool's description and input schema are made from its command's declaration
//! ([`super::declare`]), and its arguments are read into that same declaration.
//!
//! The protocol's stdio transport is JSON-RPC 2.0, one message a line; this server answers
//! `initialize`, `ping`, `tools/list` and `tools/call` and ignores notifications. It is written here
//! rather than with the official Rust SDK (`rmcp`), which brings tokio's runtime and its macros for
//! what is a read-eval loop over four methods.

use std::io::{BufRead as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Value, json};

use super::{Tool, declare};
use crate::source::OpenOptions;

/// The protocol versions this server speaks (it answers with the client's when it is one of them).
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Serves on stdin and stdout until stdin closes.
pub fn main(options: &OpenOptions) -> ExitCode {
    let mut session = Session::default();
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let Some(answer) = answer(&line, options, &mut session) else { continue };
        if writeln!(stdout, "{answer}").and_then(|()| stdout.flush()).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

/// What the server knows of its client: its name, from `initialize` (what an agent's labels say
/// made them).
#[derive(Debug, Default)]
pub struct Session {
    /// The client's name (`clientInfo.name`), `mcp client` until it says.
    pub client: Option<String>,
}

/// The answer to one message (`None` for a notification).
pub fn answer(line: &str, options: &OpenOptions, session: &mut Session) -> Option<Value> {
    let message: Value = match serde_json::from_str(line) {
        Ok(message) => message,
        Err(err) => return Some(error(Value::Null, -32700, &format!("not JSON: {err}"))),
    };
    let id = message.get("id").cloned()?;
    let method = message["method"].as_str().unwrap_or_default();
    let params = &message["params"];
    Some(match method {
        "initialize" => {
            session.client = params["clientInfo"]["name"].as_str().map(str::to_owned);
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
            let agent = session.client.as_deref().unwrap_or("mcp client");
            let (value, is_error) = match call_named(name, &arguments, options, agent) {
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

/// A tool: its declaration's JSON face, and its call.
struct Entry {
    name: &'static str,
    declaration: fn() -> Value,
    call: fn(&Value, &OpenOptions, &str) -> Result<Value, String>,
}

/// The entry of tool `T`.
fn entry<T: Tool>() -> Entry {
    Entry { name: T::NAME, declaration: declare::tool::<T>, call: call::<T> }
}

/// The tools, in `tools/list`'s order.
fn entries() -> [Entry; 11] {
    [
        entry::<super::check::Args>(),
        entry::<super::compare::Args>(),
        entry::<super::budget::Args>(),
        entry::<super::runs::Args>(),
        entry::<super::diff::Args>(),
        entry::<super::graph::Args>(),
        entry::<super::step::Args>(),
        entry::<super::health::Args>(),
        entry::<super::forensics::Args>(),
        entry::<super::label::Args>(),
        entry::<OpenApp>(),
    ]
}

/// The tools, with their descriptions and input schemas.
fn tools() -> Value {
    Value::Array(entries().iter().map(|e| (e.declaration)()).collect())
}

/// Tool `T` on `arguments` (its properties by name: a misspelt one is an error, never silently
/// left out): its JSON, or why not (an argument of the wrong type, the analysis's error).
fn call<T: Tool>(arguments: &Value, options: &OpenOptions, agent: &str) -> Result<Value, String> {
    let Some(given) = arguments.as_object() else { return Err("arguments: not an object".to_owned()) };
    let schema = declare::tool::<T>();
    let known = schema["inputSchema"]["properties"].as_object().cloned().unwrap_or_default();
    if let Some(unknown) = given.keys().find(|k| !known.contains_key(*k)) {
        return Err(format!(
            "arguments: {} takes no {unknown:?}; it takes {}",
            T::NAME,
            known.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
        ));
    }
    let mut args: T = serde_json::from_value(arguments.clone()).map_err(|e| format!("arguments: {e}"))?;
    args.called_by_agent(agent);
    args.answer(options).map_err(|e| format!("{e:#}"))
}

/// Runs tool `name`; its JSON, or why it could not.
fn call_named(name: &str, arguments: &Value, options: &OpenOptions, agent: &str) -> Result<Value, String> {
    let entries = entries();
    let Some(entry) = entries.iter().find(|e| e.name == name) else {
        let names: Vec<&str> = entries.iter().map(|e| e.name).collect();
        return Err(format!("no tool {name:?}; the tools are {}", names.join(", ")));
    };
    (entry.call)(arguments, options, agent)
}

/// Open the vantage desktop app on a run at a deep link on this machine's display, to show a
/// person a step.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct OpenApp {
    /// The run: a log, a folder of runs or a v2 dataset.
    pub path: PathBuf,
    /// The deep link, as the app's Copy link writes it (`#traj=ID&step=K&a=grpo&b=triage&view=compare`;
    /// `step` counts from 1 as the app shows steps: the `step` tool's step 3 is `step=4`).
    #[arg(long)]
    #[serde(default)]
    pub link: Option<String>,
}

impl Tool for OpenApp {
    const NAME: &'static str = "open_app";

    fn answer(&self, _: &OpenOptions) -> anyhow::Result<Value> {
        let exe = std::env::current_exe().map_err(|e| anyhow::anyhow!("where is vantage? {e}"))?;
        let mut command = std::process::Command::new(exe);
        command.arg(&self.path);
        if let Some(link) = &self.link {
            command.args(["--link", link]);
        }
        let child = command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| anyhow::anyhow!("could not start the app: {e}"))?;
        Ok(json!({ "opened": self.path.display().to_string(), "link": self.link, "pid": child.id() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_answers_initialize_lists_its_tools_and_ignores_notifications() {
        let options = OpenOptions::default();
        let mut session = Session::default();
        let mut answer = |line: &str| answer(line, &options, &mut session);
        let init = answer(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"claude-code"}}}"#,
        )
        .unwrap();
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(init["result"]["serverInfo"]["name"], "vantage");
        assert!(answer(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_none());
        let list = answer(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).unwrap();
        let names: Vec<&str> =
            list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["check", "compare", "budget", "runs", "diff", "graph", "step", "health", "forensics", "label", "open_app"]
        );
        let unknown = answer(r#"{"jsonrpc":"2.0","id":3,"method":"resources/list"}"#).unwrap();
        assert_eq!(unknown["error"]["code"], -32601);
        let garbage = answer("{not json").unwrap();
        assert_eq!(garbage["error"]["code"], -32700);
        let no_tool =
            answer(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rm","arguments":{}}}"#).unwrap();
        assert_eq!(no_tool["result"]["isError"], true);

        assert_eq!(session.client.as_deref(), Some("claude-code"));
    }

    use super::declare::tool;
    use serde_json::Map;

    /// A value the schema allows: its default, its least value, its first possible one.
    fn sample(schema: &Value) -> Value {
        if let Some(default) = schema.get("default") {
            return default.clone();
        }
        if let Some(first) = schema["enum"].get(0) {
            return first.clone();
        }
        match schema["type"].as_str() {
            Some("boolean") => json!(true),
            Some("integer") => schema.get("minimum").cloned().unwrap_or(json!(1)),
            Some("number") => json!(1.5),
            Some("array") => json!([sample(&schema["items"])]),
            Some("object") => json!({ "truncated": 0.5 }),
            _ => json!("x"),
        }
    }

    /// What serde makes of `arguments` for tool `T`: `Ok` when it reads them.
    fn reads<T: Tool>(arguments: &Value) -> Result<(), String> {
        serde_json::from_value::<T>(arguments.clone()).map(drop).map_err(|e| e.to_string())
    }

    /// Each property the schema lists is read by serde, the required ones are needed, and serde
    /// needs none the schema does not require.
    fn schema_and_serde_agree<T: Tool>() {
        let tool = tool::<T>();
        let name = T::NAME;
        let schema = &tool["inputSchema"];
        let properties = schema["properties"].as_object().unwrap();
        let required: Vec<&str> = schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(!tool["description"].as_str().unwrap().is_empty(), "{name}: no description");
        for (key, property) in properties {
            assert!(property["description"].is_string(), "{name}.{key}: no description");
        }
        let all: Map<String, Value> = properties.iter().map(|(k, p)| (k.clone(), sample(p))).collect();
        reads::<T>(&Value::Object(all.clone())).unwrap_or_else(|e| panic!("{name}: every property: {e}"));
        let least: Map<String, Value> =
            all.iter().filter(|(k, _)| required.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
        reads::<T>(&Value::Object(least.clone())).unwrap_or_else(|e| panic!("{name}: the required ones only: {e}"));
        for key in &required {
            let mut without = least.clone();
            without.remove(*key);
            assert!(
                reads::<T>(&Value::Object(without)).is_err(),
                "{name}: serde reads it without {key}, which the schema requires"
            );
        }
        // serde reads by the schema's names: a property renamed on one side only fails here.
        for key in all.keys().filter(|k| !required.contains(&k.as_str())) {
            let mut with = least.clone();
            with.insert(key.clone(), json!({ "not": "a value of this type" }));
            assert!(reads::<T>(&Value::Object(with)).is_err(), "{name}.{key}: serde does not read it by that name");
        }
    }

    #[test]
    fn each_tools_schema_is_what_serde_reads_from_its_arguments() {
        schema_and_serde_agree::<super::super::check::Args>();
        schema_and_serde_agree::<super::super::compare::Args>();
        schema_and_serde_agree::<super::super::budget::Args>();
        schema_and_serde_agree::<super::super::runs::Args>();
        schema_and_serde_agree::<super::super::diff::Args>();
        schema_and_serde_agree::<super::super::graph::Args>();
        schema_and_serde_agree::<super::super::step::Args>();
        schema_and_serde_agree::<super::super::health::Args>();
        schema_and_serde_agree::<super::super::forensics::Args>();
        schema_and_serde_agree::<super::super::label::Args>();
        schema_and_serde_agree::<OpenApp>();
        let checked =
            ["check", "compare", "budget", "runs", "diff", "graph", "step", "health", "forensics", "label", "open_app"];
        assert_eq!(entries().map(|e| e.name), checked, "a tool whose schema this test does not hold to serde");
    }

    #[test]
    fn types_defaults_and_bounds_come_from_the_declaration() {
        let compare = tool::<super::super::compare::Args>();
        let schema = &compare["inputSchema"];
        assert_eq!(schema["required"], json!(["path", "a", "b"]));
        assert_eq!(schema["properties"]["limit"]["type"], "integer");
        assert_eq!(
            (schema["properties"]["limit"]["minimum"].clone(), schema["properties"]["limit"]["maximum"].clone()),
            (json!(1), json!(1000))
        );
        assert_eq!(schema["properties"]["limit"]["default"], 20);
        assert!(schema["properties"].get("json").is_none(), "--json is the terminal's");
        let health = tool::<super::super::health::Args>();
        let properties = &health["inputSchema"]["properties"];
        assert_eq!(properties["thresholds"]["type"], "object");
        assert!(properties.get("follow").is_none() && properties.get("interval").is_none());
        let runs = tool::<super::super::runs::Args>();
        assert_eq!(runs["inputSchema"]["properties"]["change"]["items"]["enum"][0], "learned");
        let forensics = tool::<super::super::forensics::Args>();
        assert_eq!(forensics["inputSchema"]["properties"]["spike_bound"]["default"], 10.0);
    }
}
