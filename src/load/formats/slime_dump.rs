//! slime / miles `--dump-details` (THUDM/slime 624b824a8, radixark/miles 31f1ca961): torch files
//! read without Python (`load::torch_pickle`).
//!
//! - `rollout_data/{rid}.pt` (`observability/rollout_data_utils.py` `save_debug_rollout_data`):
//!   `{rollout_id, samples: [Sample.to_dict()]}`: each sample's `prompt`, `tokens` (prompt and
//!   response), `response`, `response_length`, `loss_mask` and `rollout_log_probs` over the
//!   response, `reward` (a number, or a dict of them), `label`, `status`, `group_index`, `index`.
//! - `train_data/{rid}.pt` (slime) or `train_data/{rid}_{rank}.pt` (miles), format 2
//!   (`observability/train_data_utils.py` `_build_dump_payload`): `samples`, one dict per training
//!   sample with `sample_index` (the rollout sample's `index`) and `rollout_position`, and per
//!   response token `log_probs`, `ref_log_probs`, `values`, `advantages`, `returns`, `kl`,
//!   `entropy` tensors. A run's train data may be split over several ranks' files; all are joined.
//!
//! - `trajectory/{rid}.jsonl` (miles `ray/rollout/debug_data.py`): the messages of multi-turn
//!   samples, by `sample_index`.
//!
//! A sample is a trajectory of one step (its response; a step per assistant turn when the
//! sidecar has its messages) in the group of its prompt
//! (`group_index`) at training step `rid`; its tokens are the prompt's (unmasked) and the
//! response's (`loss_mask`), with the train dump's log-probabilities, reference log-probabilities,
//! values, entropies and advantages (the `logged` scheme) where it has them, else the rollout's
//! log-probabilities. A train file that cannot be opened (still being written, or damaged) is
//! reported and its samples load without train-side values.

use std::collections::HashMap;

use crate::load::torch_pickle::{TorchFile, Value};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "slime / miles dump";

/// The loader of one rollout dump file (`rollout_data/{rid}.pt`).
pub struct SlimeDump;

impl Loader for SlimeDump {
    fn name(&self) -> &'static str {
        "slime"
    }

    fn description(&self) -> &'static str {
        "slime / miles --dump-details: rollout_data/{rid}.pt (torch.save of Sample.to_dict()), joined with train_data/{rid}[_{rank}].pt in a dump directory"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let incompatible = |reason: &str| LoadError::Incompatible { format: FORMAT, reason: reason.to_owned() };
        if !bytes.starts_with(b"PK\x03\x04") {
            return Err(incompatible("not a torch.save ZIP"));
        }
        let file = TorchFile::parse(bytes, report.budget).map_err(|e| incompatible(&e))?;
        if file.value.get("format_version").is_some() && file.value.get("samples").is_some() {
            return Err(LoadError::NothingLoadable {
                reason: "a train dump alone has no prompts, rewards or groups: open the dump directory (rollout_data/ beside train_data/)".to_owned(),
            });
        }
        if !is_rollout_dump(&file.value) {
            return Err(incompatible("no {rollout_id, samples} of rollout samples"));
        }
        let mut b = RunBuilder::new(name, FORMAT);
        add_rollout(&mut b, &file, &[], &HashMap::new(), report);
        crate::load::records::finish(b, report, "sample")
    }
}

/// Whether a torch file's value is a rollout dump.
fn is_rollout_dump(value: &Value) -> bool {
    let first = value.get("samples").and_then(Value::items).and_then(<[Value]>::first);
    value.get("rollout_id").is_some() && first.is_some_and(|s| s.get("response_length").is_some())
}

/// The train-side values of one sample, per response token.
#[derive(Default)]
struct TrainValues {
    logprob: Option<Vec<f32>>,
    ref_logprob: Option<Vec<f32>>,
    value: Option<Vec<f32>>,
    entropy: Option<Vec<f32>>,
    advantage: Option<Vec<f32>>,
}

/// A number array: a tensor's values or a list of numbers.
fn numbers(file: &TorchFile<'_>, value: &Value) -> Option<Vec<f32>> {
    match value {
        Value::Tensor(t) => file.numbers(t).ok().map(|v| v.into_iter().map(|x| x as f32).collect()),
        Value::List(items) | Value::Tuple(items) => {
            Some(items.iter().map(|v| v.as_f64().map_or(f32::NAN, |x| x as f32)).collect())
        }
        _ => None,
    }
}

/// Reads the train-side values of the samples of `files` (name, opened file or why not), by
/// (`sample_index`, `rollout_position`); a file that cannot be read is a warning.
fn train_values(
    files: &[(String, Result<TorchFile<'_>, String>)],
    report: &mut LoadReport,
) -> Vec<(Option<i64>, Option<i64>, TrainValues)> {
    let mut out = Vec::new();
    for (name, file) in files {
        let file = match file {
            Ok(f) => f,
            Err(why) => {
                report.warn(Warning::kept(0, name.as_str(), format!("not a complete torch file (still being written, or damaged): {why}; its samples load without train-side values")));
                continue;
            }
        };
        let Some(samples) = file.value.get("samples").and_then(Value::items) else {
            report.warn(Warning::kept(0, name.as_str(), "no `samples` (a train dump before format 2?): not joined"));
            continue;
        };
        for sample in samples {
            let column = |key: &str| sample.get(key).and_then(|v| numbers(file, v));
            let values = TrainValues {
                logprob: column("log_probs"),
                ref_logprob: column("ref_log_probs"),
                value: column("values"),
                entropy: column("entropy"),
                advantage: column("advantages"),
            };
            let index = sample.get("sample_index").and_then(Value::as_i64);
            let position = sample.get("rollout_position").and_then(Value::as_i64);
            out.push((index, position, values));
        }
    }
    out
}

/// Adds the samples of a rollout dump, joined with the train dumps `trains` (each a file name and
/// its bytes) of the same rollout.
pub fn add_rollout_files(
    b: &mut RunBuilder,
    rollout: &[u8],
    trains: &[(String, Vec<u8>)],
    trajectory: Option<&[u8]>,
    report: &mut LoadReport,
) -> Result<(), LoadError> {
    let file = TorchFile::parse(rollout, report.budget)
        .map_err(|why| LoadError::Incompatible { format: FORMAT, reason: why })?;
    if !is_rollout_dump(&file.value) {
        return Err(LoadError::Incompatible {
            format: FORMAT,
            reason: "no {rollout_id, samples} of rollout samples".to_owned(),
        });
    }
    let opened: Vec<(String, Result<TorchFile<'_>, String>)> =
        trains.iter().map(|(name, bytes)| (name.clone(), TorchFile::parse(bytes, report.budget))).collect();
    let conversations = trajectory.map(conversations).unwrap_or_default();
    add_rollout(b, &file, &opened, &conversations, report);
    Ok(())
}

/// The text of a prompt: a string, or chat messages marked with their roles.
fn prompt_text(prompt: Option<&Value>) -> String {
    match prompt {
        Some(Value::Str(s)) => s.clone(),
        Some(Value::List(messages)) => messages
            .iter()
            .map(|m| {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
                let content = m.get("content").and_then(Value::as_str).unwrap_or_default();
                format!("[{role}] {content}")
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The reward and its components: a number, or a dict of numbers (its `reward` or `score` the
/// reward).
fn reward_of(reward: Option<&Value>) -> (Option<f32>, Vec<(String, f32)>) {
    match reward {
        Some(Value::Dict(items)) => {
            let components: Vec<(String, f32)> =
                items.iter().filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v.as_f64()? as f32))).collect();
            let reward = components.iter().find(|(k, _)| k == "reward" || k == "score").map(|(_, v)| *v);
            (reward, components)
        }
        Some(v) => (v.as_f64().map(|x| x as f32), Vec::new()),
        None => (None, Vec::new()),
    }
}

/// A response-long array, or `None` (with a warning) when its length is not the response's.
/// `at` is the sample's record number (1-based) and position in `samples`.
fn fit(values: Option<Vec<f32>>, length: usize, what: &str, at: usize, report: &mut LoadReport) -> Option<Vec<f32>> {
    let v = values?;
    if v.len() == length {
        return Some(v);
    }
    let reason = format!("{} values for a response of {length} tokens; left out", v.len());
    report.warn(Warning::kept(at as u64 + 1, format!("samples[{at}].{what}"), reason));
    None
}

/// A sample's token columns over its prompt and response.
struct SampleTokens {
    mask: Vec<bool>,
    logprob: Option<Vec<f32>>,
    ref_logprob: Option<Vec<f32>>,
    value: Option<Vec<f32>>,
    entropy: Option<Vec<f32>>,
    advantage: Option<Vec<f32>>,
}

impl SampleTokens {
    /// The prompt's tokens unmasked, the response's under its `loss_mask`; the train dump's values
    /// (`values`) over the response, else the rollout's log-probabilities; a response-long array
    /// of another length is left out with a warning.
    fn of(
        file: &TorchFile<'_>,
        sample: &Value,
        values: Option<&TrainValues>,
        [prompt_length, response_length]: [usize; 2],
        position: usize,
        report: &mut LoadReport,
    ) -> Self {
        let loss_mask = sample.get("loss_mask").and_then(|v| numbers(file, v));
        let loss_mask = fit(loss_mask, response_length, "loss_mask", position, report)
            .unwrap_or_else(|| vec![1.0; response_length]);
        let mut mask = vec![false; prompt_length];
        mask.extend(loss_mask.iter().map(|&m| m != 0.0));
        let over_tokens = |response: Option<Vec<f32>>| {
            response.map(|r| {
                let mut all = vec![0.0; prompt_length];
                all.extend(r);
                all
            })
        };
        let rollout = sample.get("rollout_log_probs").and_then(|v| numbers(file, v));
        let rollout_logprob = fit(rollout, response_length, "rollout_log_probs", position, report);
        let mut field =
            |v: Option<&Vec<f32>>, what: &str| over_tokens(fit(v.cloned(), response_length, what, position, report));
        Self {
            logprob: field(values.and_then(|v| v.logprob.as_ref()), "log_probs")
                .or_else(|| over_tokens(rollout_logprob)),
            ref_logprob: field(values.and_then(|v| v.ref_logprob.as_ref()), "ref_log_probs"),
            value: field(values.and_then(|v| v.value.as_ref()), "values"),
            entropy: field(values.and_then(|v| v.entropy.as_ref()), "entropy"),
            advantage: field(values.and_then(|v| v.advantage.as_ref()), "advantages"),
            mask,
        }
    }

    fn new_tokens(&self) -> NewTokens<'_> {
        NewTokens {
            mask: Some(&self.mask),
            logprob: self.logprob.as_deref(),
            ref_logprob: self.ref_logprob.as_deref(),
            value: self.value.as_deref(),
            entropy: self.entropy.as_deref(),
            advantage: self.advantage.as_deref(),
            ..NewTokens::default()
        }
    }
}

/// One step of a sample: its text and its token span.
struct Turn {
    action: String,
    observation: String,
    span: Option<[usize; 2]>,
}

/// The conversations of miles' sidecar (`trajectory/{rid}.jsonl`, `debug_data.py`
/// `trajectory_rows`): each row's `messages` (role, text) by its `sample_index`. A line that is
/// not such a row is passed over: the sidecar only adds texts.
fn conversations(bytes: &[u8]) -> HashMap<i64, Vec<(String, String)>> {
    let mut out = HashMap::new();
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(row) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
        let Some(index) = row.get("sample_index").and_then(serde_json::Value::as_i64) else { continue };
        let Some(messages) = row.get("messages").and_then(serde_json::Value::as_array) else { continue };
        let messages = messages
            .iter()
            .map(|m| {
                let role = m.get("role").and_then(serde_json::Value::as_str).unwrap_or("user").to_owned();
                (role, crate::load::records::message_text(m.get("content")))
            })
            .collect();
        out.insert(index, messages);
    }
    out
}

/// A multi-turn sample's steps: each assistant message after the prompt (the messages before the
/// first), the tool and user messages after it its observation; the runs of trained tokens of the
/// response are the steps' spans when there are as many (each to the next run's start).
fn turns_of(messages: &[(String, String)], mask: &[bool], prompt_length: usize) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    for (role, text) in messages.iter().skip_while(|(role, _)| role != "assistant") {
        if role == "assistant" {
            turns.push(Turn { action: text.clone(), observation: String::new(), span: None });
        } else if let Some(last) = turns.last_mut() {
            crate::load::records::push_observation(&mut last.observation, role, text);
        }
    }
    let mut runs: Vec<usize> = Vec::new();
    for (i, &m) in mask.iter().enumerate().skip(prompt_length) {
        if m && (i == prompt_length || !mask[i - 1]) {
            runs.push(i);
        }
    }
    if runs.len() == turns.len() {
        for (k, turn) in turns.iter_mut().enumerate() {
            turn.span = Some([runs[k], runs.get(k + 1).copied().unwrap_or(mask.len())]);
        }
    }
    turns
}

fn add_rollout(
    b: &mut RunBuilder,
    file: &TorchFile<'_>,
    trains: &[(String, Result<TorchFile<'_>, String>)],
    conversations: &HashMap<i64, Vec<(String, String)>>,
    report: &mut LoadReport,
) {
    let rid = file.value.get("rollout_id").and_then(Value::as_i64);
    let Some(samples) = file.value.get("samples").and_then(Value::items) else { return };
    let train = train_values(trains, report);
    let mut joined = vec![false; train.len()];
    for (position, sample) in samples.iter().enumerate() {
        report.records_seen += 1;
        let index = sample.get("index").and_then(Value::as_i64);
        let step_key = rid.map_or_else(|| "rollout".to_owned(), |r| format!("rollout-{r}"));
        let key = format!("{step_key}/sample-{}", index.unwrap_or(position as i64));
        let tokens = sample.get("tokens").and_then(|v| numbers(file, v)).unwrap_or_default();
        let response_length =
            sample.get("response_length").and_then(Value::as_i64).and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
        if response_length > tokens.len() {
            let reason = format!("{response_length} is more than the sample's {} tokens", tokens.len());
            report.warn(Warning::skipped(position as u64 + 1, format!("samples[{position}].response_length"), reason));
            continue;
        }
        let prompt_length = tokens.len() - response_length;
        let group_key = match sample.get("group_index").and_then(Value::as_i64) {
            Some(g) => format!("{step_key}/group-{g}"),
            None => format!("{key}/group"),
        };
        let group = if let Some(g) = b.group(&group_key) {
            g
        } else {
            let prompt = prompt_text(sample.get("prompt"));
            let label = sample.get("label").and_then(Value::as_str);
            b.add_group(&NewGroup {
                key: &group_key,
                train_step: rid,
                prompt: Some(&prompt),
                gold: label,
                ..NewGroup::default()
            })
            .0
        };
        // This sample's train-side values: by sample index, else by its position in the rollout.
        let found = train.iter().position(|(i, p, _)| match (index, i) {
            (Some(index), Some(i)) => *i == index,
            _ => *p == Some(position as i64),
        });
        let values = found.map(|k| {
            joined[k] = true;
            &train[k].2
        });
        let tokens_of = SampleTokens::of(file, sample, values, [prompt_length, response_length], position, report);
        let response = sample.get("response").and_then(Value::as_str).unwrap_or_default();
        let turns = match index.and_then(|i| conversations.get(&i)) {
            Some(messages) => turns_of(messages, &tokens_of.mask, prompt_length),
            None => vec![Turn {
                action: response.to_owned(),
                observation: String::new(),
                span: (response_length > 0).then_some([prompt_length, tokens.len()]),
            }],
        };
        let steps: Vec<NewStep<'_>> = turns
            .iter()
            .map(|t| NewStep {
                token_span: t.span.and_then(|[a, b]| Some([u32::try_from(a).ok()?, u32::try_from(b).ok()?])),
                ..crate::load::records::text_step("response", "", &t.action, &t.observation)
            })
            .collect();
        let (reward, components) = reward_of(sample.get("reward"));
        let finish = match sample.get("status").and_then(Value::as_str) {
            Some("completed") => Some("stop"),
            Some("truncated") => Some("length"),
            Some(other) => Some(other),
            None => None,
        };
        let outcome = Outcome {
            reward,
            success: reward.map(|r| r > 0.5),
            components: components.iter().map(|(k, v)| (k.as_str(), *v)).collect(),
            finish,
        };
        let new_tokens = tokens_of.new_tokens();
        if b.has_trajectory(&key) {
            report.warn(Warning::skipped(
                position as u64 + 1,
                format!("samples[{position}].index"),
                "a repeated sample index",
            ));
            continue;
        }
        report.records_loaded += 1;
        b.add_chain_trajectory(&key, group, &steps, &outcome, &new_tokens);
    }
    let unmatched = joined.iter().filter(|j| !**j).count();
    if unmatched > 0 {
        report.warn(Warning::kept(
            0,
            "train_data",
            format!("{unmatched} train sample(s) match no rollout sample (by sample_index, else rollout_position)"),
        ));
    }
}
