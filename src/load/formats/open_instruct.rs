//! open-instruct's saved rollouts (allenai/open-instruct `open_instruct/rl_utils.py`
//! `save_rollouts_to_disk` / `_save_rollouts`, when `save_traces` is on): shards
//! `{rollouts_save_path}/{run_name}_rollouts_{shard:06d}.jsonl` of 10 000 samples, one
//! `RolloutRecord` a line, `{step, sample_idx, prompt_idx, prompt_tokens, response_tokens, reward,
//! advantage, finish_reason, dataset, ground_truth, request_info, logprobs}`, and beside them
//! `{run_name}_metadata.jsonl` (`run_name`, `git_commit`, `model_name`, `timestamp`).
//!
//! A group is one prompt of one training step (`prompt_idx`, the sample's index over
//! `num_samples_per_prompt`); a sample is one step, its response, whose tokens are the
//! `response_tokens` (all trained) with their `logprobs`. The records hold token ids only, not
//! text: the prompt and the response are decoded with the run's tokenizer when the report carries
//! one (a `tokenizer.json` beside the rollouts, `load::tokenizer`), else read as their ids
//! (`token ids (N): …`). The reward is the
//! outcome; the trainer's `advantage` an outcome component (what the `logged` scheme shows); the
//! tool calls' count, timeouts and outputs (`request_info`) components and the observation.

use crate::load::lenient::Num;
use crate::load::lines::{LineFeed, records};
use crate::load::records::{Record, line_records, object_has};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "open-instruct rollouts";

/// The most token ids a text shows.
const SHOWN_IDS: usize = 256;

/// The open-instruct rollout loader.
pub struct OpenInstruct;

/// One `RolloutRecord`.
#[derive(serde::Deserialize)]
pub struct Rollout {
    step: i64,
    sample_idx: u64,
    prompt_idx: u64,
    #[serde(default)]
    prompt_tokens: Vec<u64>,
    #[serde(default)]
    response_tokens: Vec<u64>,
    #[serde(default)]
    reward: Option<Num>,
    #[serde(default)]
    advantage: Option<Num>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    dataset: Option<String>,
    #[serde(default)]
    request_info: Option<RequestInfo>,
    #[serde(default)]
    logprobs: Option<Vec<Option<Num>>>,
}

/// A sample's tool use (`_get_request_info_for_sample`).
#[derive(serde::Deserialize)]
struct RequestInfo {
    #[serde(default)]
    num_calls: Option<Num>,
    #[serde(default)]
    timeouts: Option<Num>,
    #[serde(default)]
    tool_outputs: Option<serde_json::Value>,
}

impl Loader for OpenInstruct {
    fn name(&self) -> &'static str {
        "open_instruct"
    }

    fn description(&self) -> &'static str {
        "open-instruct saved rollouts ({run_name}_rollouts_NNNNNN.jsonl): token ids, logprobs, reward, the trainer's advantage"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| stream(name, report))
    }
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let reason = "the first line is not a rollout record (step, sample_idx, prompt_idx, response_tokens, reward)";
    crate::load::lines::read_format((FORMAT, reason), accepts, stream, (name, bytes, report)).await
}

/// Whether the first line of `head` is a rollout record.
pub fn accepts(head: &str) -> bool {
    line_records(head).next().is_some_and(|r| {
        object_has(r.text, &["step", "sample_idx", "prompt_idx", "prompt_tokens", "response_tokens", "reward"])
    })
}

/// The streaming reader of the format.
pub fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    let mut builder = RunBuilder::new(name, FORMAT);
    let note = if report.vocab.as_ref().and_then(|v| v.get()).is_some() {
        "open-instruct saves token ids: prompts and responses decoded with the tokenizer.json beside the run"
    } else {
        "open-instruct saves token ids, not text: prompts and responses read as their ids (put the run's tokenizer.json beside the rollouts to read them as text)"
    };
    builder.meta_mut().notes.push(note.to_owned());
    records(builder, "rollout", add, report)
}

/// The shard number in a rollout file's name, `{run_name}_rollouts_{shard:06d}.jsonl`, and the
/// run's name.
pub fn shard_of_name(name: &str) -> Option<(&str, u64)> {
    let base = name.rsplit(['/', '\\']).next()?;
    let (run, shard) = base.strip_suffix(".jsonl")?.rsplit_once("_rollouts_")?;
    Some((run, shard.parse().ok()?))
}

/// Token ids as a text: `token ids (N): 1 2 3 …`, at most [`SHOWN_IDS`] of them.
fn ids_text(ids: &[u64]) -> String {
    let shown: Vec<String> = ids.iter().take(SHOWN_IDS).map(u64::to_string).collect();
    let more = if ids.len() > SHOWN_IDS { " …" } else { "" };
    format!("token ids ({}): {}{more}", ids.len(), shown.join(" "))
}

/// A request's tool outputs as an observation (a list of strings joined, a string as it is).
fn tool_text(outputs: Option<&serde_json::Value>) -> String {
    match outputs {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(items)) => {
            let parts: Vec<String> = items
                .iter()
                .filter_map(|v| match v {
                    serde_json::Value::String(s) if !s.is_empty() => Some(s.clone()),
                    serde_json::Value::String(_) | serde_json::Value::Null => None,
                    other => Some(other.to_string()),
                })
                .collect();
            parts.join("\n")
        }
        _ => String::new(),
    }
}

fn add(b: &mut RunBuilder, record: Record<'_>, _: usize, r: &Rollout, report: &mut LoadReport) {
    let group_key = format!("step-{}/prompt-{}", r.step, r.prompt_idx);
    let vocab = report.vocab.as_ref().and_then(|v| v.get());
    let decode = |ids: &[u64]| vocab.as_ref().map_or_else(|| ids_text(ids), |v| v.decode(ids));
    let prompt = decode(&r.prompt_tokens);
    let new = NewGroup {
        key: &group_key,
        task: r.dataset.as_deref(),
        train_step: Some(r.step),
        prompt: Some(&prompt),
        ..NewGroup::default()
    };
    let group = b.group(&group_key).unwrap_or_else(|| b.add_group(&new).0);
    let key = format!("step-{}/sample-{}", r.step, r.sample_idx);
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(record.line, "sample_idx", format!("duplicate sample {key:?}")));
        return;
    }
    let n = r.response_tokens.len();
    let logprob: Option<Vec<f32>> = match &r.logprobs {
        Some(values) if values.len() == n => Some(values.iter().map(|v| v.map_or(f32::NAN, |v| v.0)).collect()),
        Some(values) => {
            report.warn(Warning::kept(
                record.line,
                "logprobs",
                format!("{} log-probabilities for {n} response tokens; left out", values.len()),
            ));
            None
        }
        None => None,
    };
    let mask = vec![true; n];
    let tokens = NewTokens { mask: Some(&mask), logprob: logprob.as_deref(), ..NewTokens::default() };
    let action = decode(&r.response_tokens);
    let info = r.request_info.as_ref();
    let observation = tool_text(info.and_then(|i| i.tool_outputs.as_ref()));
    let step = NewStep {
        kind: Some("response"),
        action: Some(&action),
        observation: (!observation.is_empty()).then_some(observation.as_str()),
        token_span: Some([0, n as u32]),
        ..NewStep::default()
    };
    let mut components = Vec::new();
    let finite = |v: Option<Num>| v.map(|v| v.0).filter(|v| v.is_finite());
    if let Some(a) = finite(r.advantage) {
        components.push(("advantage", a));
    }
    if let Some(calls) = finite(info.and_then(|i| i.num_calls)) {
        components.push(("tool_calls", calls));
    }
    if let Some(timeouts) = finite(info.and_then(|i| i.timeouts)) {
        components.push(("tool_timeouts", timeouts));
    }
    let outcome = Outcome { reward: finite(r.reward), success: None, components, finish: r.finish_reason.as_deref() };
    b.add_chain_trajectory(&key, group, &[step], &outcome, &tokens);
}
