//! OpenHands trajectories: the V0 event list (`[event…]` or `{"trajectory": [event…]}`, as the UI
//! downloads it) and the evaluation `output.jsonl` (`{instance_id, history: [event…], test_result}`
//! per line). Every agent action is a step (its kind the action type, `args.thought` the thought,
//! the command / code / path / message the action); observations caused by it (or following it)
//! are its observation; the first user message is the prompt. A trajectory's outcome is
//! `test_result.report.resolved` (or `test_result.resolved`) when the file has it, else missing.
//! The resolver's `output.jsonl` (`{issue, instruction, history, success, …}` per line, one issue
//! or pull request each) loads the same way, `success` its outcome and the instruction its prompt.
//! Events may carry their arguments under `args` or, in 2024's flattened shape, beside `action`;
//! a history of `[action, observation]` pairs is read pair by pair.

use crate::load::lines::{LineFeed, read_all, records};
use crate::load::records::{Record, array_records, finish, head_matches, line_records, object_has, text_of, text_step};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "OpenHands trajectory";

/// The OpenHands loader.
pub struct OpenHands;

#[derive(serde::Deserialize)]
struct EvalOutput {
    #[serde(default)]
    instance_id: Option<serde_json::Value>,
    history: Vec<serde_json::Value>,
    #[serde(default)]
    test_result: Option<serde_json::Value>,
    /// Resolver output: the issue (or `pr_review`) worked on.
    #[serde(default)]
    issue: Option<serde_json::Value>,
    #[serde(default)]
    pr_review: Option<serde_json::Value>,
    #[serde(default)]
    instruction: Option<String>,
    #[serde(default)]
    success: Option<bool>,
}

impl Loader for OpenHands {
    fn name(&self) -> &'static str {
        "openhands"
    }

    fn description(&self) -> &'static str {
        "OpenHands V0 events ([event] or {trajectory: [event]}) and eval output.jsonl ({instance_id, history, test_result})"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| records(RunBuilder::new(name, FORMAT), "agent action", add_output, report))
    }
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let text = text_of(FORMAT, bytes)?;
    let incompatible = |reason: &str| LoadError::Incompatible { format: FORMAT, reason: reason.to_owned() };
    let is_event = |r: &Record<'_>| {
        object_has(r.text, &["source"]) && (object_has(r.text, &["action"]) || object_has(r.text, &["observation"]))
    };
    let stem = std::path::Path::new(name).file_stem().and_then(|s| s.to_str()).unwrap_or(name).to_owned();
    let mut b = RunBuilder::new(name, FORMAT);
    // A bare event list, or {"trajectory": [...]}.
    let events_text = if text.trim_start().starts_with('{') && object_has(&text, &["trajectory"]) {
        serde_json::from_str::<serde_json::Value>(&text).ok().and_then(|v| v.get("trajectory").map(ToString::to_string))
    } else {
        None
    };
    let list = events_text.as_deref().unwrap_or(&text);
    if let Some(records) = array_records(list).filter(|r| r.first().is_some_and(is_event)) {
        report.records_seen += records.len() as u64;
        let events: Vec<serde_json::Value> = records.iter().filter_map(|r| serde_json::from_str(r.text).ok()).collect();
        report.records_loaded += events.len() as u64;
        add(&mut b, &stem, &flatten_history(&events), None, None, 1, report);
        return finish(b, report, "agent action");
    }
    if !accepts(&text) {
        return Err(incompatible("neither an event list nor output.jsonl lines with instance_id / history"));
    }
    read_all(records(b, "agent action", add_output, std::mem::take(report)), bytes, report).await
}

/// Whether `head` is the first lines of an evaluation `output.jsonl`.
fn accepts(head: &str) -> bool {
    let first = line_records(head).next();
    first.is_some_and(|r| !r.text.trim_start().starts_with('[') && !object_has(r.text, &["trajectory"]))
        && head_matches(head, |r| {
            object_has(r.text, &["instance_id", "history"])
                || (object_has(r.text, &["history", "success"])
                    && (object_has(r.text, &["issue"]) || object_has(r.text, &["pr_review"])))
        })
}

/// Adds one line of an evaluation `output.jsonl`.
fn add_output(b: &mut RunBuilder, record: Record<'_>, _: usize, output: &EvalOutput, report: &mut LoadReport) {
    let id = match (&output.instance_id, output.issue.as_ref().or(output.pr_review.as_ref())) {
        (Some(serde_json::Value::String(s)), _) => s.clone(),
        (Some(other), _) if !other.is_null() => other.to_string(),
        (_, Some(issue)) => issue_key(issue),
        _ => format!("line-{}", record.line),
    };
    let solved = output.success.or_else(|| resolved(output.test_result.as_ref()));
    let events = flatten_history(&output.history);
    add(b, &id, &events, solved, output.instruction.as_deref(), record.line, report);
}

/// An issue's id as the resolver names it: `owner/repo#number`, or `issue_<number>`.
fn issue_key(issue: &serde_json::Value) -> String {
    let text = |k: &str| issue.get(k).and_then(serde_json::Value::as_str);
    let number = issue.get("number").map(|n| text_of_value(Some(n))).unwrap_or_default();
    match (text("owner"), text("repo")) {
        (Some(owner), Some(repo)) => format!("{owner}/{repo}#{number}"),
        _ => format!("issue_{number}"),
    }
}

/// The events of a history: as they are, or the elements of `[action, observation]` pairs.
fn flatten_history(history: &[serde_json::Value]) -> Vec<serde_json::Value> {
    history
        .iter()
        .flat_map(|e| match e {
            serde_json::Value::Array(pair) => pair.clone(),
            other => vec![other.clone()],
        })
        .collect()
}

fn text_of_value(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// `test_result.report.resolved` or `test_result.resolved`.
fn resolved(test_result: Option<&serde_json::Value>) -> Option<bool> {
    let t = test_result?;
    t.pointer("/report/resolved").or_else(|| t.get("resolved")).and_then(serde_json::Value::as_bool)
}

fn add(
    b: &mut RunBuilder,
    key: &str,
    events: &[serde_json::Value],
    solved: Option<bool>,
    instruction: Option<&str>,
    line: u64,
    report: &mut LoadReport,
) {
    let field = |e: &serde_json::Value, name: &str| e.get(name).and_then(serde_json::Value::as_str).map(str::to_owned);
    let mut prompt = String::new();
    // (kind, thought, action, observation, id)
    let mut steps: Vec<(String, String, String, String, Option<i64>)> = Vec::new();
    for e in events {
        // A flattened event has no `source`: it is the agent's unless it says otherwise.
        let source = field(e, "source").unwrap_or_else(|| "agent".to_owned());
        if let Some(action) = field(e, "action") {
            let args = e.get("args");
            // Arguments under `args`, or beside `action` (the flattened shape).
            let arg = |n: &str| text_of_value(args.and_then(|a| a.get(n)).or_else(|| e.get(n)));
            if source == "user" {
                let message = arg("content");
                let message = if message.is_empty() { field(e, "message").unwrap_or_default() } else { message };
                if prompt.is_empty() {
                    prompt = message;
                } else if let Some(last) = steps.last_mut() {
                    last.3.push_str(&format!("\n[user] {message}"));
                }
                continue;
            }
            if source != "agent" || action == "system" || action == "change_agent_state" {
                continue;
            }
            let act = ["command", "code", "path", "content", "url", "outputs", "final_thought"]
                .iter()
                .map(|n| arg(n))
                .find(|s| !s.is_empty())
                .or_else(|| field(e, "message"))
                .unwrap_or_default();
            steps.push((action, arg("thought"), act, String::new(), e.get("id").and_then(serde_json::Value::as_i64)));
        } else if field(e, "observation").is_some() {
            let content = text_of_value(e.get("content"));
            let cause = e.get("cause").and_then(serde_json::Value::as_i64);
            let target = match cause {
                Some(c) => steps.iter_mut().rev().find(|s| s.4 == Some(c)),
                None => steps.last_mut(),
            };
            if let Some(step) = target {
                if !step.3.is_empty() {
                    step.3.push('\n');
                }
                step.3.push_str(&content);
            }
        }
    }
    if steps.is_empty() {
        report.warn(Warning::skipped(line, "history", "no agent action"));
        return;
    }
    if prompt.is_empty()
        && let Some(instruction) = instruction
    {
        instruction.clone_into(&mut prompt);
    }
    let (group, _) =
        b.add_group(&NewGroup { key, prompt: (!prompt.is_empty()).then_some(prompt.as_str()), ..NewGroup::default() });
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .map(|(kind, thought, action, observation, _)| text_step(kind, thought, action, observation))
        .collect();
    let outcome = Outcome {
        reward: solved.map(|s| if s { 1.0 } else { 0.0 }),
        success: solved,
        components: Vec::new(),
        finish: steps.last().filter(|s| s.0 == "finish").map(|_| "finish"),
    };
    b.add_chain_trajectory(key, group, &new_steps, &outcome, &NewTokens::default());
}
