//! tau2-bench simulation results (`data/simulations/<run>.json`): `{info, tasks, simulations}`,
//! each simulation one trial of one task: its messages, `reward_info` and `termination_reason`.
//! The trials of a task form a group; its prompt is the task's user scenario. Every assistant turn
//! is a step, and so is every turn of the user simulator that calls tools (dual control, as in
//! telecom): the requestor is the step's role, a turn's tool calls (flat `{name, arguments}`) its
//! action and its text the thought. Tool results and user replies up to the next step are its
//! observation. The reward is the outcome, the reward breakdown its components, the termination
//! reason its finish reason. A run without simulations (aborted) loads empty, with a warning.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::load::records::{array_records, message_text, parse, text_of, text_step};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "tau2-bench simulations";

/// The tau2-bench loader.
pub struct Tau2;

#[derive(serde::Deserialize)]
struct Results<'a> {
    #[serde(default)]
    info: Option<serde_json::Value>,
    #[serde(default)]
    tasks: Vec<Task>,
    #[serde(borrow)]
    simulations: &'a RawValue,
}

#[derive(serde::Deserialize)]
struct Task {
    id: serde_json::Value,
    #[serde(default)]
    description: Option<serde_json::Value>,
    #[serde(default)]
    user_scenario: Option<serde_json::Value>,
}

#[derive(serde::Deserialize)]
struct Simulation {
    #[serde(default)]
    id: Option<serde_json::Value>,
    task_id: serde_json::Value,
    #[serde(default)]
    trial: Option<i64>,
    #[serde(default)]
    termination_reason: Option<String>,
    #[serde(default)]
    reward_info: Option<RewardInfo>,
    #[serde(default)]
    messages: Vec<Message>,
}

#[derive(serde::Deserialize)]
struct RewardInfo {
    #[serde(default)]
    reward: Option<crate::load::lenient::Num>,
    #[serde(default)]
    reward_breakdown: Option<BTreeMap<String, Option<crate::load::lenient::Num>>>,
}

#[derive(serde::Deserialize)]
struct Message {
    role: String,
    #[serde(default)]
    content: Option<serde_json::Value>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCall>>,
    #[serde(default)]
    requestor: Option<String>,
}

#[derive(serde::Deserialize)]
struct ToolCall {
    name: String,
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

impl Loader for Tau2 {
    fn name(&self) -> &'static str {
        "tau2"
    }

    fn description(&self) -> &'static str {
        "tau2-bench simulation results: {info, tasks, simulations[{task_id, trial, messages, reward_info, termination_reason}]}"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        read(name, bytes, report)
    }
}

fn incompatible(reason: &str) -> LoadError {
    LoadError::Incompatible { format: FORMAT, reason: reason.to_owned() }
}

/// A JSON value as an id: a string as it is, anything else as JSON.
fn id_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let text = text_of(FORMAT, bytes)?;
    if !(text.trim_start().starts_with('{') && text.contains("\"simulations\"") && text.contains("\"tasks\"")) {
        return Err(incompatible("not a {info, tasks, simulations} object"));
    }
    let results: Results<'_> = serde_json::from_str(&text).map_err(|e| {
        incompatible(&format!("not tau2-bench results ({})", crate::load::lenient::describe_json_error(&e)))
    })?;
    let mut b = RunBuilder::new(name, FORMAT);
    if let Some(info) = &results.info {
        let meta = &mut b.meta_mut().metadata;
        for (key, pointer) in [
            ("git_commit", "/git_commit"),
            ("num_trials", "/num_trials"),
            ("domain", "/environment_info/domain_name"),
            ("agent_model", "/agent_info/llm"),
            ("user_model", "/user_info/llm"),
        ] {
            if let Some(v) = info.pointer(pointer).filter(|v| !v.is_null()) {
                meta.insert(key.to_owned(), v.clone());
            }
        }
    }
    let prompts: BTreeMap<String, String> = results.tasks.iter().map(|t| (id_text(&t.id), task_prompt(t))).collect();
    // Simulations with the line each starts on.
    let raw = results.simulations.get();
    let base = (raw.as_ptr() as usize).saturating_sub(text.as_ptr() as usize).min(text.len());
    let first_line = text.as_bytes()[..base].iter().filter(|&&b| b == b'\n').count() as u64;
    let records = array_records(raw).ok_or_else(|| incompatible("`simulations` is not an array"))?;
    let mut user_calls = 0usize;
    for record in records {
        let record = crate::load::records::Record { line: record.line + first_line, text: record.text };
        let Some(sim) = parse::<Simulation>(record, report) else { continue };
        user_calls += add(&mut b, &sim, &prompts, record.line, report);
    }
    if user_calls > 0 {
        b.meta_mut().notes.push(format!(
            "the user simulator calls tools too (dual control): {user_calls} of its turns are steps with role `user`"
        ));
    }
    let mut run = b.finish();
    run.meta.warnings.clone_from(&report.warnings);
    if run.trajectories.is_empty() {
        // An aborted run: an empty run, said, not a failure to load.
        let warning = Warning::kept(
            1,
            "simulations",
            format!("no simulations: the run lists {} task(s) and ran none", results.tasks.len()),
        );
        report.warn(warning.clone());
        run.meta.warnings.push(warning);
        run.meta.notes.push("no simulations were run".to_owned());
    }
    Ok(run)
}

/// A task's prompt: its user scenario's instructions (reason for the call, what the user knows,
/// how to act), else its purpose.
fn task_prompt(task: &Task) -> String {
    let instructions = task.user_scenario.as_ref().and_then(|s| s.get("instructions"));
    let text = |v: Option<&serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    let parts: Vec<String> = ["reason_for_call", "known_info", "unknown_info", "task_instructions"]
        .iter()
        .filter_map(|k| text(instructions.and_then(|i| i.get(*k))).map(|t| format!("{k}: {t}")))
        .collect();
    if !parts.is_empty() {
        return parts.join("\n");
    }
    text(instructions).or_else(|| text(task.description.as_ref().and_then(|d| d.get("purpose")))).unwrap_or_default()
}

/// One step per assistant turn and per user turn that calls tools: (role, kind, thought, action,
/// observation).
fn steps_of(messages: &[Message]) -> Vec<(String, &'static str, String, String, String)> {
    let mut steps: Vec<(String, &'static str, String, String, String)> = Vec::new();
    for m in messages {
        let text = message_text(m.content.as_ref());
        let calls: Vec<String> = m
            .tool_calls
            .iter()
            .flatten()
            .map(|c| crate::load::records::call_text(&c.name, c.arguments.as_ref()))
            .collect();
        let is_step = m.role == "assistant" || (m.role == "user" && !calls.is_empty());
        if is_step {
            let step = if calls.is_empty() {
                (m.role.clone(), "message", String::new(), text, String::new())
            } else {
                (m.role.clone(), "tool_call", text, calls.join("\n"), String::new())
            };
            steps.push(step);
        } else if let Some(last) = steps.last_mut() {
            let who = match (m.role.as_str(), m.requestor.as_deref()) {
                ("tool", Some(requestor)) => format!("tool → {requestor}"),
                (role, _) => role.to_owned(),
            };
            crate::load::records::push_observation(&mut last.4, &who, &text);
        }
    }
    steps
}

/// Adds one simulation; returns how many of its steps are the user simulator's.
fn add(
    b: &mut RunBuilder,
    sim: &Simulation,
    prompts: &BTreeMap<String, String>,
    line: u64,
    report: &mut LoadReport,
) -> usize {
    let steps = steps_of(&sim.messages);
    if steps.is_empty() {
        report.warn(Warning::skipped(line, "messages", "no assistant turn"));
        return 0;
    }
    let task = id_text(&sim.task_id);
    let group = if let Some(g) = b.group(&task) {
        g
    } else {
        let prompt = prompts.get(&task).map(String::as_str);
        b.add_group(&NewGroup { key: &task, task: Some(&task), prompt, ..NewGroup::default() }).0
    };
    let key = match (&sim.id, sim.trial) {
        (Some(id), _) if !id.is_null() => id_text(id),
        (_, Some(trial)) => format!("{task}/trial-{trial}"),
        _ => format!("{task}/line-{line}"),
    };
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(line, "id", format!("duplicate simulation {key:?}")));
        return 0;
    }
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .map(|(role, kind, thought, action, observation)| NewStep {
            role: Some(role),
            ..text_step(kind, thought, action, observation)
        })
        .collect();
    let info = sim.reward_info.as_ref();
    let reward = info.and_then(|i| i.reward).map(|r| r.0).filter(|r| !r.is_nan());
    let components: Vec<(&str, f32)> = info
        .and_then(|i| i.reward_breakdown.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.map(|v| (k.as_str(), v.0)))
        .collect();
    let outcome =
        Outcome { reward, success: reward.map(|r| r >= 1.0), components, finish: sim.termination_reason.as_deref() };
    b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
    steps.iter().filter(|s| s.0 == "user").count()
}
