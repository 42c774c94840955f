//! SWE-agent `<instance>.traj` (`trajectory` of `{thought, action, observation, response}`, `info`
//! with `exit_status`; a RetryAgent file's `attempts` are sibling rollouts of the task) and
//! mini-SWE-agent `*.traj.json` (`messages` with `trajectory_format: mini-swe-agent-*`). Each agent
//! step is a step (its kind the command's first word); the problem statement is the prompt. The
//! files carry no reward (it lives in SWE-bench's `results.json`), so the outcome is missing and
//! the run's notes say so: outcome schemes then say why they are unavailable.

use crate::load::records::{finish, message_text, text_of, text_step};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{GroupId, NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "SWE-agent trajectory";

/// The SWE-agent loader.
pub struct SweAgent;

#[derive(serde::Deserialize)]
struct Traj {
    #[serde(default)]
    trajectory: Vec<Step>,
    #[serde(default)]
    history: Vec<serde_json::Value>,
    #[serde(default)]
    info: Info,
    #[serde(default)]
    attempts: Vec<Self>,
    #[serde(default)]
    messages: Vec<serde_json::Value>,
    #[serde(default)]
    trajectory_format: Option<String>,
}

#[derive(serde::Deserialize)]
struct Step {
    #[serde(default)]
    thought: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    observation: String,
}

#[derive(Default, serde::Deserialize)]
struct Info {
    #[serde(default)]
    exit_status: Option<String>,
}

impl Loader for SweAgent {
    fn name(&self) -> &'static str {
        "swe_agent"
    }

    fn description(&self) -> &'static str {
        "SWE-agent .traj ({trajectory, history, info}; RetryAgent attempts) and mini-SWE-agent .traj.json ({messages, info})"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let text = text_of(FORMAT, bytes)?;
        let head = text.trim_start();
        let swe = head.starts_with('{')
            && ((head.contains("\"trajectory\"") && head.contains("\"info\""))
                || head.contains("\"trajectory_format\""));
        if !swe {
            return Err(LoadError::Incompatible {
                format: FORMAT,
                reason: "no {trajectory, info} or mini-swe-agent object".to_owned(),
            });
        }
        report.records_seen += 1;
        let traj: Traj = match crate::load::lenient::parse_located(&text, &mut Vec::new()) {
            Ok(t) => t,
            Err(err) => {
                report.warn(Warning::skipped(1, err.field, err.reason));
                return finish(RunBuilder::new(name, FORMAT), report, "trajectory");
            }
        };
        report.records_loaded += 1;
        let stem = std::path::Path::new(name).file_name().and_then(|s| s.to_str()).unwrap_or(name);
        let stem = stem.trim_end_matches(".json").trim_end_matches(".traj").to_owned();
        let mut b = RunBuilder::new(name, FORMAT);
        b.meta_mut().notes.push(
            "no reward in SWE-agent trajectories (SWE-bench keeps it in results.json): outcomes are missing".to_owned(),
        );
        let prompt = problem_statement(&traj);
        let (group, _) = b.add_group(&NewGroup { key: &stem, prompt: prompt.as_deref(), ..NewGroup::default() });
        if traj.attempts.is_empty() {
            add_one(&mut b, group, &stem, &traj);
        } else {
            for (i, attempt) in traj.attempts.iter().enumerate() {
                add_one(&mut b, group, &format!("{stem}/attempt{i}"), attempt);
            }
        }
        finish(b, report, "agent step")
    }
}

/// The first user message of the history (SWE-agent) or messages (mini), as text.
fn problem_statement(traj: &Traj) -> Option<String> {
    let messages = if traj.messages.is_empty() { &traj.history } else { &traj.messages };
    let source =
        if messages.is_empty() { traj.attempts.first().map_or(&traj.history, |a| &a.history) } else { messages };
    source
        .iter()
        .find(|m| m.get("role").and_then(serde_json::Value::as_str) == Some("user"))
        .map(|m| message_text(m.get("content")))
}

/// The command's first word, as the step kind (`edit`, `open`, `submit`, …).
fn command_kind(action: &str) -> &str {
    action.split_whitespace().next().unwrap_or("action")
}

/// The steps of a mini-SWE-agent message list: each assistant message (its bash block the action)
/// with the next message as its observation.
fn mini_steps(messages: &[serde_json::Value]) -> Vec<(String, String, String)> {
    let mut steps: Vec<(String, String, String)> = Vec::new();
    for m in messages {
        let role = m.get("role").and_then(serde_json::Value::as_str).unwrap_or("");
        let text = message_text(m.get("content"));
        // mini-SWE-agent 2 calls tools: each call's `command` (its JSON arguments) is the action.
        let calls: Vec<String> = m
            .get("tool_calls")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let args = c.pointer("/function/arguments")?;
                let parsed: Option<serde_json::Value> = match args {
                    serde_json::Value::String(s) => serde_json::from_str(s).ok(),
                    other => Some(other.clone()),
                };
                Some(match parsed.as_ref().and_then(|a| a.get("command")).and_then(serde_json::Value::as_str) {
                    Some(command) => command.to_owned(),
                    None => args.as_str().map_or_else(|| args.to_string(), str::to_owned),
                })
            })
            .collect();
        if role == "assistant" && !calls.is_empty() {
            steps.push((text.trim().to_owned(), calls.join("\n"), String::new()));
        } else if role == "assistant" {
            let (thought, action) = match text.find("```") {
                Some(at) => {
                    let block = &text[at + 3..];
                    let block = block.strip_prefix("bash").unwrap_or(block);
                    let end = block.find("```").unwrap_or(block.len());
                    (text[..at].trim().to_owned(), block[..end].trim().to_owned())
                }
                None => (String::new(), text.trim().to_owned()),
            };
            steps.push((thought, action, String::new()));
        } else if let Some(last) = steps.last_mut()
            && last.2.is_empty()
        {
            last.2 = text;
        }
    }
    steps
}

fn add_one(b: &mut RunBuilder, group: GroupId, key: &str, traj: &Traj) {
    let steps: Vec<(String, String, String)> = if traj.trajectory_format.is_some() || traj.trajectory.is_empty() {
        mini_steps(&traj.messages)
    } else {
        traj.trajectory.iter().map(|s| (s.thought.clone(), s.action.clone(), s.observation.clone())).collect()
    };
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .map(|(thought, action, observation)| text_step(command_kind(action), thought, action, observation))
        .collect();
    let outcome = Outcome { finish: traj.info.exit_status.as_deref(), ..Outcome::default() };
    b.add_chain_trajectory(key, group, &new_steps, &outcome, &NewTokens::default());
}
