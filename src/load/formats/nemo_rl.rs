//! NeMo-RL training dumps (NVIDIA-NeMo/RL `nemo_rl/algorithms/grpo.py`, written by
//! `Logger.log_batched_dict_as_jsonl`): `<log_dir>/train_data_step{N}.jsonl`, one line per sample
//! of the step's batch, every value a batch slice of one (`"rewards": [1.0]`, `"token_ids":
//! [[…]]`) plus `idx`. Lines hold `content` (the flattened messages' texts), `rewards` (with
//! dynamic sampling, `rewards` is the total reward and `filtered_rewards` the one trained on),
//! `input_lengths`, padded per-token `token_ids`, `token_loss_mask`, `advantages`,
//! `generation_logprobs`, `prev_logprobs`, and `sample_loss_mask`. `val_data_step{N}.jsonl` holds
//! `content` (message logs) and `rewards` only.
//!
//! The training step is the `N` of the file name. NeMo-RL's GRPO baseline groups the samples with
//! identical prompt tokens, and the dump has no prompt id, so a group is the step's samples whose
//! tokens before the first trained token are equal. Each run of trained tokens (`token_loss_mask`)
//! is an assistant turn and a step, spanning its tokens and the environment tokens after it; the
//! texts are given to the turns when `content` alternates as prompt, assistant, environment, …,
//! else the whole conversation is one step. Tokens are cut to `input_lengths`; the mask,
//! `generation_logprobs` (as the logprob) and `advantages` (the `logged` scheme) are kept;
//! `prev_logprobs` is left out.

use serde_json::Value;

use crate::load::lenient::FieldError;
use crate::load::lines::{JsonLines, LineFeed, LineStream, head_text, parse_json, read_all};
use crate::load::records::{Record, head_matches, object_has, stable_hash};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "NeMo-RL training dump";

/// The NeMo-RL dump loader.
pub struct NemoRl;

/// One line, each value a batch slice of one.
#[derive(serde::Deserialize)]
struct Line {
    #[serde(default)]
    content: Option<Value>,
    rewards: Value,
    #[serde(default)]
    filtered_rewards: Option<Value>,
    #[serde(default)]
    input_lengths: Option<Value>,
    #[serde(default)]
    token_ids: Option<Value>,
    #[serde(default)]
    token_loss_mask: Option<Value>,
    #[serde(default)]
    sample_loss_mask: Option<Value>,
    #[serde(default)]
    advantages: Option<Value>,
    #[serde(default)]
    generation_logprobs: Option<Value>,
    #[serde(default)]
    idx: Option<Value>,
}

impl Loader for NemoRl {
    fn name(&self) -> &'static str {
        "nemo_rl"
    }

    fn description(&self) -> &'static str {
        "NeMo-RL train_data_step{N}.jsonl / val_data_step{N}.jsonl: content, rewards, per-token token_ids, token_loss_mask, advantages, generation_logprobs"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| Box::new(stream(name, report)) as Box<dyn LineFeed>)
    }
}

/// Whether one of the first lines of `head` is a NeMo-RL dump line.
pub fn accepts(head: &str) -> bool {
    head_matches(head, |r| {
        object_has(r.text, &["content", "rewards"])
            && (object_has(r.text, &["idx"]) || object_has(r.text, &["token_loss_mask"]))
            && (object_has(r.text, &["token_loss_mask"]) || !object_has(r.text, &["token_ids"]))
    })
}

/// The training step and split of a dump file's name: `train_data_step12.jsonl` is step 12 of
/// training, `val_data_step12.jsonl` the validation at step 12.
pub fn step_of_name(name: &str) -> Option<(i64, bool)> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let stem = base.strip_suffix(".jsonl")?;
    let (train, digits) = match (stem.strip_prefix("train_data_step"), stem.strip_prefix("val_data_step")) {
        (Some(d), _) => (true, d),
        (None, Some(d)) => (false, d),
        (None, None) => return None,
    };
    Some((digits.parse().ok()?, train))
}

/// An empty dump named `name`, read piece by piece (a log directory that gains
/// `train_data_step{N}.jsonl` files while the run trains, or one file).
pub fn stream(name: &str, report: LoadReport) -> LineStream<Dump> {
    let mut builder = RunBuilder::new(name, FORMAT);
    builder.meta_mut().notes.push(
        "groups rebuilt from identical prompt tokens within a training step, as NeMo-RL's GRPO baseline groups them (the dump has no prompt id)".to_owned(),
    );
    let mut stream = LineStream::new(Dump::default(), builder, report);
    stream.start_file(name);
    stream
}

/// Reads the format, giving the event loop back between slices (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    if !accepts(&head_text(bytes)) {
        return Err(LoadError::Incompatible {
            format: FORMAT,
            reason: "the first lines lack content / rewards / idx or token_loss_mask".to_owned(),
        });
    }
    read_all(Box::new(stream(name, std::mem::take(report))), bytes, report).await
}

/// The state of a dump read file after file: the step of the file being read.
#[derive(Default)]
pub struct Dump {
    step: Option<(i64, bool)>,
}

/// A value with its batch dimension of one taken off (`[x]` is `x`).
fn unbatch(value: &Value) -> &Value {
    match value {
        Value::Array(items) if items.len() == 1 => &items[0],
        other => other,
    }
}

/// A number (a batch slice of one, or plain).
fn number(value: Option<&Value>) -> Option<f32> {
    unbatch(value?).as_f64().map(|v| v as f32)
}

/// A per-token array of numbers (a batch slice of one, or plain); non-numbers read as NaN.
fn numbers(value: Option<&Value>) -> Option<Vec<f32>> {
    let list = unbatch(value?).as_array()?;
    Some(list.iter().map(|v| v.as_f64().map_or(f32::NAN, |v| v as f32)).collect())
}

/// The texts of `content`: strings, or the `content` of message dicts (validation dumps), with
/// the role when the message names one.
fn texts(content: Option<&Value>) -> Vec<(Option<String>, String)> {
    let Some(list) = content.map(unbatch).and_then(Value::as_array) else {
        return content.map(unbatch).and_then(Value::as_str).map(|s| vec![(None, s.to_owned())]).unwrap_or_default();
    };
    list.iter()
        .map(|item| match item {
            Value::String(s) => (None, s.clone()),
            Value::Object(m) => (
                m.get("role").and_then(Value::as_str).map(str::to_owned),
                crate::load::records::message_text(m.get("content")),
            ),
            other => (None, other.to_string()),
        })
        .collect()
}

/// The runs of trained tokens: `[start, end)` of each.
fn trained_runs(mask: &[bool]) -> Vec<[usize; 2]> {
    let mut runs: Vec<[usize; 2]> = Vec::new();
    for (i, &m) in mask.iter().enumerate() {
        match runs.last_mut() {
            Some(run) if m && run[1] == i => run[1] = i + 1,
            _ if m => runs.push([i, i + 1]),
            _ => {}
        }
    }
    runs
}

/// A sample's token columns, cut to its length, and the key of its prompt tokens.
struct SampleTokens {
    mask: Vec<bool>,
    logprob: Option<Vec<f32>>,
    advantage: Option<Vec<f32>>,
    /// The token ids before the first trained token, as text (empty without `token_ids`).
    prompt_key: String,
}

/// The tokens of a line with a `token_loss_mask`; an array shorter than the sample is left out
/// with a warning.
fn tokens_of(line: &Line, record: Record<'_>, report: &mut LoadReport) -> Option<SampleTokens> {
    let mut mask: Vec<bool> =
        numbers(line.token_loss_mask.as_ref())?.iter().map(|&v| v != 0.0 && !v.is_nan()).collect();
    let length = number(line.input_lengths.as_ref()).map(|n| n.max(0.0) as usize);
    let n = length.unwrap_or(mask.len()).min(mask.len());
    mask.truncate(n);
    let mut cut = |name: &str, values: Option<Vec<f32>>| -> Option<Vec<f32>> {
        let mut v = values?;
        if v.len() < n {
            report.warn(Warning::kept(record.line, name, format!("{} values for {n} tokens; left out", v.len())));
            return None;
        }
        v.truncate(n);
        Some(v)
    };
    let advantage = cut("advantages", numbers(line.advantages.as_ref()));
    let logprob = cut("generation_logprobs", numbers(line.generation_logprobs.as_ref()));
    let first = mask.iter().position(|&m| m).unwrap_or(n);
    let prompt_key = match line.token_ids.as_ref().map(unbatch).and_then(Value::as_array) {
        Some(ids) => ids.iter().take(first).map(Value::to_string).collect::<Vec<_>>().join(","),
        None => String::new(),
    };
    Some(SampleTokens { mask, logprob, advantage, prompt_key })
}

/// The prompt and the (action, observation) texts of `turns` turns: the texts before the first
/// assistant message (by role, or by count: prompt, then assistant and environment texts
/// alternating, the last an assistant's); the whole conversation as one step when they do not fit.
fn turn_texts(texts: &[(Option<String>, String)], turns: usize) -> (String, Vec<(String, String)>) {
    let roles_given = texts.iter().any(|(role, _)| role.is_some());
    let prompt_count = if roles_given {
        texts.iter().take_while(|(role, _)| role.as_deref() != Some("assistant")).count()
    } else {
        (texts.len() + 1).saturating_sub(2 * turns)
    };
    let fits =
        prompt_count >= 1 && texts.len() > prompt_count && (roles_given || texts.len() + 1 >= 2 * turns + prompt_count);
    if !fits {
        let all = texts.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join("\n");
        return (String::new(), vec![(all, String::new())]);
    }
    let prompt: Vec<&str> = texts[..prompt_count].iter().map(|(_, t)| t.as_str()).collect();
    let steps = texts[prompt_count..]
        .chunks(2)
        .map(|pair| (pair[0].1.clone(), pair.get(1).map(|p| p.1.clone()).unwrap_or_default()))
        .collect();
    (prompt.join("\n"), steps)
}

/// A line as parsed on a parse thread.
pub struct Item(Line);

impl JsonLines for Dump {
    type Item = Item;

    fn what(&self) -> &'static str {
        "sample"
    }

    fn parse(text: &str) -> Result<Item, FieldError> {
        parse_json(text).map(Item)
    }

    fn start_file(&mut self, name: &str) {
        self.step = step_of_name(name);
    }

    fn add(&mut self, b: &mut RunBuilder, record: Record<'_>, index: usize, item: Item, report: &mut LoadReport) {
        let line = &item.0;
        let Some(reward) = number(Some(&line.rewards)) else {
            report.warn(Warning::skipped(record.line, "rewards", "not a number (or a batch slice of one)"));
            return;
        };
        let texts = texts(line.content.as_ref());
        let (step, train) = self.step.unwrap_or((-1, true));
        let tokens = tokens_of(line, record, report);
        // Without tokens, the first text is the prompt.
        let prompt_key = match &tokens {
            Some(t) if !t.prompt_key.is_empty() => t.prompt_key.clone(),
            _ => texts.first().map(|(_, t)| t.clone()).unwrap_or_default(),
        };
        let split = if train { "train" } else { "val" };
        let group_key = format!("{split}/step-{step}/prompt-{:016x}", stable_hash(&prompt_key));
        let runs = tokens.as_ref().map(|t| trained_runs(&t.mask)).unwrap_or_default();
        let (prompt, steps) = turn_texts(&texts, runs.len().max(1));
        // The steps' token spans: each run of trained tokens and the environment tokens after it.
        let spans: Option<Vec<[u32; 2]>> = tokens.as_ref().and_then(|t| {
            (runs.len() == steps.len() && !runs.is_empty()).then(|| {
                (0..runs.len())
                    .map(|k| {
                        let end = runs.get(k + 1).map_or(t.mask.len(), |r| r[0]);
                        [runs[k][0] as u32, end as u32]
                    })
                    .collect()
            })
        });
        let group = if let Some(g) = b.group(&group_key) {
            g
        } else {
            let new = NewGroup {
                key: &group_key,
                train_step: (step >= 0).then_some(step),
                prompt: (!prompt.is_empty()).then_some(prompt.as_str()),
                ..NewGroup::default()
            };
            b.add_group(&new).0
        };
        let sample = match line.idx.as_ref() {
            Some(Value::Number(n)) => n.to_string(),
            _ => index.to_string(),
        };
        let key = format!("{split}/step-{step}/sample-{sample}");
        if b.has_trajectory(&key) {
            report.warn(Warning::skipped(record.line, "idx", format!("duplicate sample {key:?}")));
            return;
        }
        let new_steps: Vec<NewStep<'_>> = steps
            .iter()
            .enumerate()
            .map(|(k, (action, observation))| NewStep {
                token_span: spans.as_ref().and_then(|s| s.get(k).copied()),
                ..crate::load::records::text_step("message", "", action, observation)
            })
            .collect();
        let mut components = Vec::new();
        if let Some(filtered) = number(line.filtered_rewards.as_ref()) {
            components.push(("filtered_reward", filtered));
        }
        if let Some(kept) = number(line.sample_loss_mask.as_ref()) {
            components.push(("sample_loss_mask", kept));
        }
        let outcome = Outcome { reward: Some(reward), success: Some(reward > 0.5), components, finish: None };
        let new_tokens = match &tokens {
            Some(t) if !t.mask.is_empty() => NewTokens {
                mask: Some(&t.mask),
                logprob: t.logprob.as_deref(),
                advantage: t.advantage.as_deref(),
                ..NewTokens::default()
            },
            _ => NewTokens::default(),
        };
        b.add_chain_trajectory(&key, group, &new_steps, &outcome, &new_tokens);
    }
}
