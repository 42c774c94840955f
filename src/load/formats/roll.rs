//! ROLL's rollout dumps (alibaba/ROLL `roll/pipeline/rlvr/utils.py` `write_to_json_process`, called
//! by `dump_rollout_to_specific_path` in the RLVR pipelines and by `dump_rollout_trajectories`
//! in the agentic ones when `rollout_dump_dir` is a local path): one file per training step,
//! `rollout_dump_data.step_{N}.jsonl`, holding one line: the batch as columns,
//! `{column: [value per sample]}`.
//!
//! - **RLVR** (`COLUMMNS_CONFIG`: `global_step`, `id`, `source`, `difficulty`, `prompt`,
//!   `messages`, `ground_truth`, `case_type`, `test_case_function`, `test_cases`, `tag`, `domain`,
//!   `responses`, `scores`, `sampling_params`; those the batch has): each sample one step, its
//!   decoded response; a group is a prompt `id` of the step (the samples of one prompt); the
//!   prompt, `ground_truth` and `tag` (else `domain`, else `source`) are the group's; `scores` the
//!   outcome.
//! - **Agentic** (`trajectory_data`, `messages`, `tools`, `exp_name`, `global_step`): each row a
//!   trajectory: `trajectory_data` (a JSON string: `trajectory_id`, `env_info` with `tag`,
//!   `group_id`, `episode_id`, `seed`; `reward_info` with `episode_reward` and `step_rewards`;
//!   `failure_info.stop_reason`) and `messages` (the chat as a JSON string: each assistant turn a
//!   step, as for OpenAI chat logs, its `step_rewards` entry its own reward). A group is the
//!   environment group ROLL normalizes over (`{tag}_{group_id}_{episode_id}_{seed}`).
//!
//! The whole batch is one line, so it is detected by the file's name when its first line is
//! longer than the head read to tell formats apart; a line over `MAX_LINE` (256 MiB) is skipped
//! with a warning, as for any JSON-lines log.

use serde_json::Value;

use crate::load::lines::{LineFeed, head_text, read_all, records};
use crate::load::records::{
    ChatMessage, Record, chat_prompt, chat_steps, id_text, line_records, object_has, stable_hash, text_step,
};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "ROLL rollout dump";

/// The ROLL rollout-dump loader.
pub struct Roll;

/// One batch: its columns, one value per sample.
#[derive(serde::Deserialize)]
pub struct Batch {
    #[serde(default)]
    global_step: Vec<Value>,
    #[serde(default)]
    id: Vec<Value>,
    #[serde(default)]
    source: Vec<Value>,
    #[serde(default)]
    tag: Vec<Value>,
    #[serde(default)]
    domain: Vec<Value>,
    #[serde(default)]
    prompt: Vec<Value>,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    ground_truth: Vec<Value>,
    #[serde(default)]
    responses: Vec<Value>,
    #[serde(default)]
    scores: Vec<Value>,
    #[serde(default)]
    trajectory_data: Vec<Value>,
}

impl Loader for Roll {
    fn name(&self) -> &'static str {
        "roll"
    }

    fn description(&self) -> &'static str {
        "ROLL rollout dumps (rollout_dump_data.step_N.jsonl): a batch's columns on one line, RLVR samples or agentic trajectories"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(name, head).then(|| stream(name, report))
    }
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<crate::model::Run, LoadError> {
    if !accepts(name, &head_text(bytes)) {
        return Err(LoadError::Incompatible {
            format: FORMAT,
            reason: "not a rollout_dump_data.step_N.jsonl file of batch columns (global_step with responses and scores, or trajectory_data)".to_owned(),
        });
    }
    read_all(stream(name, std::mem::take(report)), bytes, report).await
}

/// The training step in a dump's file name, `rollout_dump_data.step_{N}.jsonl`.
pub fn step_of_name(name: &str) -> Option<i64> {
    let base = name.rsplit(['/', '\\']).next()?;
    base.strip_prefix("rollout_dump_data.step_")?.strip_suffix(".jsonl")?.parse().ok()
}

/// Whether `head` (of a file named `name`) is a dump: its first line a batch of columns, or,
/// when that line is longer than the head, a dump's file name and an object.
pub fn accepts(name: &str, head: &str) -> bool {
    let Some(first) = line_records(head).next() else { return false };
    let columns = |t: &str| {
        object_has(t, &["global_step", "responses", "scores"]) || object_has(t, &["global_step", "trajectory_data"])
    };
    columns(first.text)
        || (step_of_name(name).is_some()
            && first.text.trim_start().starts_with('{')
            && !first.text.trim_end().ends_with('}'))
}

/// The streaming reader of the format.
pub fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    records(RunBuilder::new(name, FORMAT), "batch", add, report)
}

/// A column's number (a number, or a number in a string).
fn number(value: Option<&Value>) -> Option<f64> {
    match value? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn add(b: &mut RunBuilder, record: Record<'_>, _: usize, batch: &Batch, report: &mut LoadReport) {
    if !batch.trajectory_data.is_empty() {
        for row in 0..batch.trajectory_data.len() {
            add_trajectory(b, record, batch, row, report);
        }
        return;
    }
    if batch.responses.is_empty() {
        report.warn(Warning::skipped(record.line, "responses", "a batch with no responses and no trajectory_data"));
        return;
    }
    let columns = [
        ("scores", batch.scores.len()),
        ("global_step", batch.global_step.len()),
        ("id", batch.id.len()),
        ("prompt", batch.prompt.len()),
    ];
    for (name, len) in columns {
        if len != 0 && len != batch.responses.len() {
            report.warn(Warning::kept(
                record.line,
                name,
                format!(
                    "{len} values for {} responses; the rows past the shorter column have none",
                    batch.responses.len()
                ),
            ));
        }
    }
    for row in 0..batch.responses.len() {
        add_sample(b, record, batch, row, report);
    }
}

/// One RLVR sample.
fn add_sample(b: &mut RunBuilder, record: Record<'_>, batch: &Batch, row: usize, report: &mut LoadReport) {
    let step = number(batch.global_step.get(row)).map(|s| s as i64);
    let prompt = id_text(batch.prompt.get(row)).or_else(|| {
        let messages = batch.messages.get(row)?;
        let parsed: Vec<ChatMessage> = match messages {
            Value::String(s) => serde_json::from_str(s).ok()?,
            other => serde_json::from_value(other.clone()).ok()?,
        };
        Some(chat_prompt(&parsed))
    });
    let id = id_text(batch.id.get(row))
        .unwrap_or_else(|| format!("prompt-{:016x}", stable_hash(prompt.as_deref().unwrap_or(""))));
    let step_key = step.map_or_else(|| "step-none".to_owned(), |s| format!("step-{s}"));
    let group_key = format!("{step_key}/{id}");
    let task = id_text(batch.tag.get(row))
        .or_else(|| id_text(batch.domain.get(row)))
        .or_else(|| id_text(batch.source.get(row)));
    let gold = id_text(batch.ground_truth.get(row));
    let new = NewGroup {
        key: &group_key,
        task: task.as_deref(),
        train_step: step,
        prompt: prompt.as_deref(),
        gold: gold.as_deref(),
        ..NewGroup::default()
    };
    let group = b.group(&group_key).unwrap_or_else(|| b.add_group(&new).0);
    let key = format!("{step_key}/row-{row}");
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(record.line, format!("responses[{row}]"), format!("duplicate sample {key:?}")));
        return;
    }
    let response = id_text(batch.responses.get(row)).unwrap_or_default();
    let score = number(batch.scores.get(row)).map(|s| s as f32).filter(|s| s.is_finite());
    if score.is_none() && row < batch.scores.len() {
        report.warn(Warning::kept(record.line, format!("scores[{row}]"), "not a number"));
    }
    let steps = [NewStep { kind: Some("response"), action: Some(&response), ..NewStep::default() }];
    let outcome = Outcome { reward: score, success: None, components: Vec::new(), finish: None };
    b.add_chain_trajectory(&key, group, &steps, &outcome, &NewTokens::default());
}

/// What `trajectory_data` holds that becomes the run.
#[derive(serde::Deserialize, Default)]
struct TrajectoryData {
    #[serde(default)]
    trajectory_id: Option<Value>,
    #[serde(default)]
    env_info: serde_json::Map<String, Value>,
    #[serde(default)]
    reward_info: serde_json::Map<String, Value>,
    #[serde(default)]
    failure_info: serde_json::Map<String, Value>,
}

/// One agentic trajectory.
fn add_trajectory(b: &mut RunBuilder, record: Record<'_>, batch: &Batch, row: usize, report: &mut LoadReport) {
    let field = format!("trajectory_data[{row}]");
    let data: TrajectoryData = match batch.trajectory_data.get(row) {
        Some(Value::String(s)) => match serde_json::from_str(s) {
            Ok(d) => d,
            Err(e) => {
                report.warn(Warning::skipped(record.line, field, format!("not a trajectory object ({e})")));
                return;
            }
        },
        Some(Value::Object(m)) => serde_json::from_value(Value::Object(m.clone())).unwrap_or_default(),
        _ => {
            report.warn(Warning::skipped(record.line, field, "no trajectory data"));
            return;
        }
    };
    let messages: Vec<ChatMessage> = match batch.messages.get(row) {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_default(),
        Some(other) => serde_json::from_value(other.clone()).unwrap_or_default(),
        None => Vec::new(),
    };
    let turns = chat_steps(&messages);
    if turns.is_empty() {
        report.warn(Warning::skipped(record.line, format!("messages[{row}]"), "no assistant turn"));
        return;
    }
    let step = number(batch.global_step.get(row)).map(|s| s as i64);
    let env = |k: &str| id_text(data.env_info.get(k));
    let tag = env("tag");
    let group_id = [env("tag"), env("group_id"), env("episode_id"), env("seed")]
        .map(|p| p.unwrap_or_else(|| "?".to_owned()))
        .join("_");
    let step_key = step.map_or_else(|| "step-none".to_owned(), |s| format!("step-{s}"));
    let group_key = format!("{step_key}/{group_id}");
    let prompt = chat_prompt(&messages);
    let new = NewGroup {
        key: &group_key,
        task: tag.as_deref(),
        train_step: step,
        prompt: Some(&prompt),
        ..NewGroup::default()
    };
    let group = b.group(&group_key).unwrap_or_else(|| b.add_group(&new).0);
    let key = id_text(data.trajectory_id.as_ref()).unwrap_or_else(|| format!("{step_key}/row-{row}"));
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(record.line, field, format!("duplicate trajectory {key:?}")));
        return;
    }
    let step_rewards: Vec<Option<f32>> = match data.reward_info.get("step_rewards") {
        Some(Value::Array(items)) => items.iter().map(|v| number(Some(v)).map(|r| r as f32)).collect(),
        _ => Vec::new(),
    };
    if !step_rewards.is_empty() && step_rewards.len() != turns.len() {
        report.warn(Warning::kept(
            record.line,
            format!("{field}.reward_info.step_rewards"),
            format!("{} step rewards for {} assistant turns; left out", step_rewards.len(), turns.len()),
        ));
    }
    let aligned = step_rewards.len() == turns.len();
    let steps: Vec<NewStep<'_>> = turns
        .iter()
        .enumerate()
        .map(|(i, (kind, thought, action, observation))| NewStep {
            env_reward: if aligned { step_rewards[i].filter(|r| r.is_finite()) } else { None },
            ..text_step(kind, thought, action, observation)
        })
        .collect();
    let reward = number(data.reward_info.get("episode_reward")).map(|r| r as f32).filter(|r| r.is_finite());
    let stop = id_text(data.failure_info.get("stop_reason"));
    let outcome = Outcome { reward, success: None, components: Vec::new(), finish: stop.as_deref() };
    b.add_chain_trajectory(&key, group, &steps, &outcome, &NewTokens::default());
}
