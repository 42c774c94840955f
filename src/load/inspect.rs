//! Inspect logs: `.eval` (a ZIP: `header.json`, `summaries.json`, `samples/{id}_epoch_{n}.json`,
//! deflate or zstd entries, read entry by entry from the central directory) and `.json` (one
//! `EvalLog` with `samples` inline; `NaN` / `Infinity` tolerated). Each sample is a trajectory;
//! the epochs of one sample form a group; the main scorer's value is the outcome (C / I / P / N
//! as 1 / 0 / 0.5 / 0) and every scorer a component. Steps come from the model events (the
//! assistant output, its reasoning as the thought, tool calls as the action) with the following
//! tool events as observations, or from the final messages when there are no events; an
//! intermediate `score` event becomes the `judge` score of the step before it.

use super::records::{finish, text_of, text_step};
use super::zip::Archive;
use super::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "Inspect log";

/// The Inspect loader.
pub struct Inspect;

impl Loader for Inspect {
    fn name(&self) -> &'static str {
        "inspect"
    }

    fn description(&self) -> &'static str {
        "Inspect .eval (ZIP with header.json and samples/*.json; deflate or zstd) and .json EvalLog"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let incompatible = |reason: String| LoadError::Incompatible { format: FORMAT, reason };
        let mut b = RunBuilder::new(name, FORMAT);
        let mut primary: Option<String> = None;
        if bytes.starts_with(b"PK\x03\x04") {
            let archive = Archive::open(bytes).map_err(|e| incompatible(format!("unreadable ZIP: {e}")))?;
            if archive.entry("header.json").is_none() && archive.entry("_journal/start.json").is_none() {
                return Err(incompatible("a ZIP without header.json or _journal/start.json".to_owned()));
            }
            if let Some(Ok(raw)) = archive.read_named("header.json")
                && let Ok(text) = text_of(FORMAT, &raw)
                && let Ok(header) = serde_json::from_str::<serde_json::Value>(&text)
            {
                primary = describe(&mut b, &header);
            }
            let mut samples: Vec<&super::zip::Entry> = archive
                .entries
                .iter()
                .filter(|e| {
                    e.name.starts_with("samples/") && e.name.ends_with(".json") && e.name.matches('/').count() == 1
                })
                .collect();
            samples.sort_by(|a, b| a.name.cmp(&b.name));
            for (i, entry) in samples.into_iter().enumerate() {
                report.records_seen += 1;
                let line = i as u64 + 1;
                let parsed = archive.read(entry).and_then(|raw| {
                    let text = text_of(FORMAT, &raw).map_err(|e| e.to_string())?;
                    serde_json::from_str::<serde_json::Value>(&text)
                        .map_err(|e| super::lenient::describe_json_error(&e))
                });
                match parsed {
                    Ok(sample) => {
                        add_sample(&mut b, &sample, primary.as_deref(), line, report);
                        report.records_loaded += 1;
                    }
                    Err(err) => report.warn(Warning::skipped(line, entry.name.clone(), err)),
                }
            }
            return finish(b, report, "sample");
        }
        let text = text_of(FORMAT, bytes)?;
        let head = text.trim_start();
        if !(head.starts_with('{') && head.contains("\"eval\"") && head.contains("\"samples\"")) {
            return Err(incompatible("neither an .eval ZIP nor a JSON EvalLog with eval and samples".to_owned()));
        }
        let log: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| incompatible(super::lenient::describe_json_error(&e)))?;
        let primary = describe(&mut b, &log);
        for (i, sample) in log.get("samples").and_then(serde_json::Value::as_array).into_iter().flatten().enumerate() {
            report.records_seen += 1;
            add_sample(&mut b, sample, primary.as_deref(), i as u64 + 1, report);
            report.records_loaded += 1;
        }
        finish(b, report, "sample")
    }
}

/// Run metadata from the header (task, model, status); the name of the main scorer, whose value
/// is the outcome.
fn describe(b: &mut RunBuilder, header: &serde_json::Value) -> Option<String> {
    let meta = b.meta_mut();
    for (key, pointer) in
        [("task", "/eval/task"), ("model", "/eval/model"), ("status", "/status"), ("created", "/eval/created")]
    {
        if let Some(v) = header.pointer(pointer) {
            meta.metadata.insert(key.to_owned(), v.clone());
        }
    }
    header.pointer("/results/scores/0/name").and_then(serde_json::Value::as_str).map(str::to_owned)
}

/// A score value as a number: numbers as they are, booleans 1 / 0, C / I / P / N as 1 / 0 / 0.5 / 0.
fn score_number(value: &serde_json::Value) -> Option<f32> {
    match value {
        serde_json::Value::Number(n) => n.as_f64().map(|x| x as f32),
        serde_json::Value::Bool(flag) => Some(if *flag { 1.0 } else { 0.0 }),
        serde_json::Value::String(s) => match s.as_str() {
            "C" => Some(1.0),
            "I" | "N" => Some(0.0),
            "P" => Some(0.5),
            other => other.parse().ok(),
        },
        _ => None,
    }
}

fn text_of_content(content: Option<&serde_json::Value>) -> (String, String) {
    // (text, reasoning)
    match content {
        Some(serde_json::Value::String(s)) => (s.clone(), String::new()),
        Some(serde_json::Value::Array(parts)) => {
            let mut text = Vec::new();
            let mut reasoning = Vec::new();
            for p in parts {
                match p.get("type").and_then(serde_json::Value::as_str) {
                    Some("reasoning") => reasoning.extend(p.get("reasoning").and_then(serde_json::Value::as_str)),
                    _ => text.extend(p.get("text").and_then(serde_json::Value::as_str)),
                }
            }
            (text.join("\n"), reasoning.join("\n"))
        }
        _ => (String::new(), String::new()),
    }
}

fn tool_calls_text(calls: Option<&serde_json::Value>) -> String {
    calls
        .and_then(serde_json::Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    let f = c.get("function").and_then(serde_json::Value::as_str).unwrap_or("tool");
                    let args = c.get("arguments").map(ToString::to_string).unwrap_or_default();
                    format!("{f}({args})")
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// (kind, thought, action, observation, judge score)
type Step = (String, String, String, String, Option<f32>);

/// Steps from the model / tool / score events.
fn steps_from_events(events: &[serde_json::Value]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for e in events {
        match e.get("event").and_then(serde_json::Value::as_str) {
            Some("model") => {
                let message = e.pointer("/output/choices/0/message");
                let (text, reasoning) = text_of_content(message.and_then(|m| m.get("content")));
                let calls = tool_calls_text(message.and_then(|m| m.get("tool_calls")));
                let kind = if calls.is_empty() { "generate" } else { "tool_call" };
                let action = if calls.is_empty() { text.clone() } else { calls };
                let thought =
                    if calls_present(message) { [reasoning, text].join("\n").trim().to_owned() } else { reasoning };
                steps.push((kind.to_owned(), thought, action, String::new(), None));
            }
            Some("tool") => {
                if let Some(last) = steps.last_mut() {
                    let result = match e.get("result") {
                        Some(serde_json::Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    };
                    if !last.3.is_empty() {
                        last.3.push('\n');
                    }
                    last.3.push_str(&result);
                }
            }
            Some("score") if e.get("intermediate").and_then(serde_json::Value::as_bool) == Some(true) => {
                if let (Some(last), Some(v)) = (steps.last_mut(), e.pointer("/score/value").and_then(score_number)) {
                    last.4 = Some(v);
                }
            }
            _ => {}
        }
    }
    steps
}

fn calls_present(message: Option<&serde_json::Value>) -> bool {
    message.and_then(|m| m.get("tool_calls")).and_then(serde_json::Value::as_array).is_some_and(|c| !c.is_empty())
}

/// Steps from the final conversation: assistant turns, tool results as observations.
fn steps_from_messages(messages: &[serde_json::Value]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for m in messages {
        let (text, reasoning) = text_of_content(m.get("content"));
        match m.get("role").and_then(serde_json::Value::as_str) {
            Some("assistant") => {
                let calls = tool_calls_text(m.get("tool_calls"));
                let (kind, thought, action) = if calls.is_empty() {
                    ("generate", reasoning, text)
                } else {
                    ("tool_call", [reasoning, text].join("\n").trim().to_owned(), calls)
                };
                steps.push((kind.to_owned(), thought, action, String::new(), None));
            }
            Some("tool") => {
                if let Some(last) = steps.last_mut() {
                    if !last.3.is_empty() {
                        last.3.push('\n');
                    }
                    last.3.push_str(&text);
                }
            }
            _ => {}
        }
    }
    steps
}

fn add_sample(
    b: &mut RunBuilder,
    sample: &serde_json::Value,
    primary: Option<&str>,
    line: u64,
    report: &mut LoadReport,
) {
    let id = match sample.get("id") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => format!("sample{line}"),
    };
    let epoch = sample.get("epoch").and_then(serde_json::Value::as_i64).unwrap_or(1);
    let input = match sample.get("input") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(messages)) => {
            messages.iter().map(|m| text_of_content(m.get("content")).0).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    };
    let target = match sample.get("target") {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Array(t)) => {
            Some(t.iter().filter_map(serde_json::Value::as_str).collect::<Vec<_>>().join(" | "))
        }
        _ => None,
    };
    let group = if let Some(g) = b.group(&id) {
        g
    } else {
        let new = NewGroup { key: &id, prompt: Some(&input), gold: target.as_deref(), ..NewGroup::default() };
        b.add_group(&new).0
    };
    let events = sample.get("events").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut steps = steps_from_events(events);
    if steps.is_empty() {
        let messages = sample.get("messages").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        steps = steps_from_messages(messages);
    }
    if steps.is_empty() {
        report.warn(Warning::skipped(line, "events", format!("sample {id} epoch {epoch}: no model turn")));
        return;
    }
    let scores: Vec<(String, f32)> = sample
        .get("scores")
        .and_then(serde_json::Value::as_object)
        .map(|s| {
            s.iter()
                .filter_map(|(name, score)| score.get("value").and_then(score_number).map(|v| (name.clone(), v)))
                .collect()
        })
        .unwrap_or_default();
    // The main scorer's value (the header names it), else the first scorer's.
    let reward = primary.and_then(|p| scores.iter().find(|s| s.0 == p)).or(scores.first()).map(|s| s.1);
    let components: Vec<(&str, f32)> = scores.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .map(|(kind, thought, action, observation, judge)| NewStep {
            scores: judge.map(|j| vec![("judge", j)]).unwrap_or_default(),
            ..text_step(kind, thought, action, observation)
        })
        .collect();
    let stop = sample.pointer("/output/choices/0/stop_reason").and_then(serde_json::Value::as_str);
    let outcome = Outcome { reward, success: reward.map(|r| r >= 1.0), components, finish: stop };
    let key = format!("{id}/epoch{epoch}");
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(line, "id", format!("duplicate sample {key:?}")));
        return;
    }
    b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
}
