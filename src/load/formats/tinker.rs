//! tinker-cookbook rollout summaries (thinking-machines-lab/tinker-cookbook
//! `tinker_cookbook/rl/rollout_logging.py` `serialize_rollout_summaries`, written by
//! `stores/training_store.py` `TrainingRunStore.write_rollouts` as
//! `<log_path>/iteration_NNNNNN/<base>_rollout_summaries.jsonl`, `train` for the training batch,
//! `eval_<name>` for an evaluator's): one line per trajectory, `{schema_version: 1, split,
//! iteration, group_idx, traj_idx, tags, sampling_client_step, total_reward, final_reward,
//! trajectory_metrics, steps: [{step_idx, ob_len, ac_len, reward, episode_done, metrics, logs}],
//! final_ob_len}`.
//!
//! A group is one problem of one iteration and split (`group_idx`); its training step is the
//! iteration (its `tags`, the environment's logging tags, are not a problem's id and are left out). A trajectory's outcome is its `total_reward` (tinker's return: the steps' rewards
//! plus the group's `final_reward`), its components `final_reward` and the numeric
//! `trajectory_metrics`. Each transition is a step: its `reward` the step's own (`env_reward`),
//! its numeric `metrics` step scores, its `logs` (the environment's text for display) the step's
//! text, its `ob_len` / `ac_len` token counts in the text when it has none. The summaries hold no
//! messages: the texts a run logs to `<base>_logtree.json` beside them are not read.

use crate::load::lenient::Num;
use crate::load::lines::{LineFeed, records};
use crate::load::records::{Record, line_records, object_has};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "tinker-cookbook rollout summaries";

/// The tinker-cookbook rollout-summary loader.
pub struct Tinker;

#[derive(serde::Deserialize)]
struct Summary {
    #[serde(default)]
    split: Option<String>,
    iteration: i64,
    group_idx: u64,
    traj_idx: u64,
    #[serde(default)]
    total_reward: Option<Num>,
    #[serde(default)]
    final_reward: Option<Num>,
    #[serde(default)]
    trajectory_metrics: serde_json::Map<String, serde_json::Value>,
    steps: Vec<Transition>,
}

#[derive(serde::Deserialize)]
struct Transition {
    #[serde(default)]
    ob_len: Option<u64>,
    #[serde(default)]
    ac_len: Option<u64>,
    #[serde(default)]
    reward: Option<Num>,
    #[serde(default)]
    episode_done: Option<bool>,
    #[serde(default)]
    metrics: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    logs: serde_json::Map<String, serde_json::Value>,
}

impl Loader for Tinker {
    fn name(&self) -> &'static str {
        "tinker"
    }

    fn description(&self) -> &'static str {
        "tinker-cookbook rollout summaries JSONL (iteration_NNNNNN/train_rollout_summaries.jsonl): per-step rewards, metrics and logs"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| stream(name, report))
    }
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let reason = "the first line is not a rollout summary (schema_version, group_idx, traj_idx, steps)";
    crate::load::lines::read_format((FORMAT, reason), accepts, stream, (name, bytes, report)).await
}

/// Whether the first line of `head` is a rollout summary.
pub fn accepts(head: &str) -> bool {
    line_records(head)
        .next()
        .is_some_and(|r| object_has(r.text, &["schema_version", "iteration", "group_idx", "traj_idx", "steps"]))
}

/// The streaming reader of the format.
pub fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    records(RunBuilder::new(name, FORMAT), "rollout summary", add, report)
}

/// The numeric values of a metrics object, by name.
fn numbers(metrics: &serde_json::Map<String, serde_json::Value>) -> Vec<(&str, f32)> {
    metrics.iter().filter_map(|(k, v)| Some((k.as_str(), v.as_f64()? as f32))).collect()
}

/// A transition's text: its logs, one `key: value` line each, by key (a string as it is).
fn logs_text(logs: &serde_json::Map<String, serde_json::Value>) -> String {
    let lines: Vec<String> = logs
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}: {s}"),
            other => format!("{k}: {other}"),
        })
        .collect();
    lines.join("\n")
}

fn add(b: &mut RunBuilder, record: Record<'_>, _: usize, s: &Summary, report: &mut LoadReport) {
    if s.steps.is_empty() {
        report.warn(Warning::skipped(record.line, "steps", "no transition"));
        return;
    }
    let split = s.split.as_deref().unwrap_or("train");
    let group_key = format!("{split}/iteration-{}/group-{}", s.iteration, s.group_idx);
    let group = match b.group(&group_key) {
        Some(g) => g,
        None => b.add_group(&NewGroup { key: &group_key, train_step: Some(s.iteration), ..NewGroup::default() }).0,
    };
    let key = format!("{group_key}/traj-{}", s.traj_idx);
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(record.line, "traj_idx", format!("duplicate trajectory {key:?}")));
        return;
    }
    let texts: Vec<String> = s
        .steps
        .iter()
        .map(|t| {
            let logs = logs_text(&t.logs);
            if logs.is_empty() {
                let lengths = [("observation", t.ob_len), ("action", t.ac_len)];
                let said: Vec<String> =
                    lengths.iter().filter_map(|(what, n)| n.map(|n| format!("{n}-token {what}"))).collect();
                said.join(", ")
            } else {
                logs
            }
        })
        .collect();
    let steps: Vec<NewStep<'_>> = s
        .steps
        .iter()
        .zip(&texts)
        .map(|(t, text)| NewStep {
            kind: Some("transition"),
            action: (!text.is_empty()).then_some(text.as_str()),
            env_reward: t.reward.map(|r| r.0).filter(|r| r.is_finite()),
            scores: numbers(&t.metrics),
            ..NewStep::default()
        })
        .collect();
    let mut components = numbers(&s.trajectory_metrics);
    if let Some(final_reward) = s.final_reward.filter(|r| r.0.is_finite()) {
        components.insert(0, ("final_reward", final_reward.0));
    }
    let done = s.steps.last().and_then(|t| t.episode_done);
    let outcome = Outcome {
        reward: s.total_reward.map(|r| r.0).filter(|r| r.is_finite()),
        success: None,
        components,
        finish: done.map(|d| if d { "stop" } else { "truncated" }),
    };
    b.add_chain_trajectory(&key, group, &steps, &outcome, &NewTokens::default());
}
