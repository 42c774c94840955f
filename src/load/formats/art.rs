//! `OpenPipe` ART's trajectory Parquet (ART 0.5.18, `art/utils/trajectory_logging.py`
//! `write_trajectory_groups_parquet`, called by `Model.log` with
//! `{output_dir}/trajectories/{split}/{step:04d}.parquet`): one row per trajectory, columns
//! `group_index`, `group_metadata`, `group_metrics`, `group_logs`, `reward`, `metrics`,
//! `metadata` (JSON texts), `tools`, `logs`, and `messages`, a list of
//! `{role, content, tool_calls (JSON text), tool_call_id, trainable}` (the trainable ones are the
//! model's choices). Read with `load::parquet_file` (a field of a struct in a list is a leaf of
//! its own), so it opens on the web too.
//!
//! A group is a `group_index` of one file (one step of one split: the step is the file's name, the
//! split its folder's); each row a trajectory, its messages the steps as for OpenAI chat logs
//! (each assistant turn a step, its tool calls the action, the tool results its observation),
//! `reward` the outcome, the numeric `metrics` its components, the numeric `group_metrics`
//! components too. A split's folder is one run across its steps ([`ArtRun`], read and followed
//! by `source::live`). ART's older logs, `{step:04d}.yaml` in the same place, are read the same
//! way (`add_yaml`).

use crate::load::parquet_file::{Column, ParquetMeta};
use crate::load::records::{ChatMessage, ToolCall, chat_prompt, chat_steps, text_step};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "ART trajectory Parquet";
/// The format name of ART's older YAML logs.
const FORMAT_YAML: &str = "ART trajectory YAML";

/// The ART trajectory-Parquet loader.
pub struct Art;

impl Loader for Art {
    fn name(&self) -> &'static str {
        "art"
    }

    fn description(&self) -> &'static str {
        "OpenPipe ART trajectory logs (trajectories/<split>/<step>.parquet, or the older <step>.yaml): chat messages, rewards, metrics"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let (split, step) = split_and_step(name);
        let mut b = RunBuilder::new(name, FORMAT);
        if bytes.starts_with(b"PAR1") || !(name.ends_with(".yaml") || name.ends_with(".yml")) {
            add_rows(&mut b, &split, step, bytes, report)?;
        } else {
            add_yaml(&mut b, &split, step, bytes, report)?;
        }
        crate::load::records::finish(b, report, "trajectory")
    }
}

/// An ART split folder (`trajectories/{split}/`) read file by file: one `{step:04d}.parquet` per
/// logged step, gaining one as the model trains; all of them one run.
pub struct ArtRun {
    builder: RunBuilder,
    split: String,
}

impl ArtRun {
    /// An empty run of the split folder `name`.
    pub fn new(name: &str) -> Self {
        let split = name.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next().unwrap_or("train").to_owned();
        Self { builder: RunBuilder::new(name, FORMAT), split }
    }
}

impl crate::load::FileRun for ArtRun {
    fn add_file(&mut self, bytes: &[u8], file: Option<&str>, report: &mut LoadReport) -> Result<(), LoadError> {
        let step = file.and_then(|f| f.parse().ok());
        if bytes.starts_with(b"PAR1") {
            add_rows(&mut self.builder, &self.split, step, bytes, report)
        } else {
            add_yaml(&mut self.builder, &self.split, step, bytes, report)
        }
    }
    fn snapshot(&self, report: &LoadReport) -> Run {
        crate::load::records::snapshot(&self.builder, report)
    }
    fn finish(self: Box<Self>, report: &LoadReport) -> Result<Run, LoadError> {
        crate::load::records::finish(self.builder, report, "trajectory")
    }
    fn heap_bytes(&self) -> usize {
        self.builder.heap_bytes()
    }
    fn take_segment(&mut self) -> Run {
        self.builder.take_segment()
    }
}

/// Adds the rows of one file of `split` at `step`.
fn add_rows(
    b: &mut RunBuilder,
    split: &str,
    step: Option<i64>,
    bytes: &[u8],
    report: &mut LoadReport,
) -> Result<(), LoadError> {
    let incompatible = |reason: String| LoadError::Incompatible { format: FORMAT, reason };
    if !bytes.starts_with(b"PAR1") {
        return Err(incompatible("not Parquet".to_owned()));
    }
    let meta = ParquetMeta::of_file(bytes).map_err(|e| incompatible(format!("unreadable Parquet ({e})")))?;
    let message_leaf =
        |field: &str| meta.leaves.iter().position(|l| l.name == "messages" && l.path.rsplit('.').next() == Some(field));
    if meta.leaf("group_index").is_none() || meta.leaf("reward").is_none() || message_leaf("role").is_none() {
        return Err(incompatible("no group_index, reward and messages.role columns".to_owned()));
    }
    let read = |leaf: usize| -> Result<Column, LoadError> {
        crate::load::parquet_file::decode_in(&meta, leaf, bytes).map_err(|reason| LoadError::Unsupported {
            line: 0,
            field: meta.leaves[leaf].path.clone(),
            reason,
        })
    };
    let column = |name: &str| meta.leaf(name).map(read).transpose();
    let group_index = column("group_index")?.ok_or_else(|| incompatible("no group_index".to_owned()))?;
    let reward = column("reward")?.ok_or_else(|| incompatible("no reward".to_owned()))?;
    let metrics = column("metrics")?;
    let group_metrics = column("group_metrics")?;
    let field = |f: &str| message_leaf(f).map(read).transpose();
    let role = field("role")?.ok_or_else(|| incompatible("no messages.role".to_owned()))?;
    let (content, tool_calls) = (field("content")?, field("tool_calls")?);
    // The rows the messages column holds (a footer's row count is only a claim).
    let rows = role.lists.as_ref().map_or(0, |(offsets, _)| offsets.len().saturating_sub(1));
    for row in 0..rows {
        let line = row as u64 + 1;
        report.records_seen += 1;
        let Some(range) = role.list(row) else {
            report.warn(Warning::skipped(line, "messages", "no messages"));
            continue;
        };
        let text = |c: &Option<Column>, i: usize| c.as_ref().and_then(|c| c.str(i)).map(str::to_owned);
        let mut messages = Vec::with_capacity(range.len());
        for i in range {
            let calls: Vec<ToolCall> = match text(&tool_calls, i) {
                Some(json) => match serde_json::from_str(&json) {
                    Ok(calls) => calls,
                    Err(e) => {
                        report.warn(Warning::kept(
                            line,
                            "messages.tool_calls",
                            format!("not a list of tool calls ({e})"),
                        ));
                        Vec::new()
                    }
                },
                None => Vec::new(),
            };
            messages.push(ChatMessage {
                role: role.str(i).unwrap_or_default().to_owned(),
                content: text(&content, i).map(serde_json::Value::String),
                tool_calls: calls,
                name: None,
            });
        }
        let mut components = numbers(metrics.as_ref().and_then(|c| c.str(row)), line, "metrics", report);
        for (name, value) in numbers(group_metrics.as_ref().and_then(|c| c.str(row)), line, "group_metrics", report) {
            components.push((format!("group_{name}"), value));
        }
        let place = Place { split, step, group: group_index.int(row).unwrap_or(-1), row };
        add_trajectory(b, &place, &messages, reward.f32(row), &components, report);
    }
    Ok(())
}

/// Adds the trajectory groups of one YAML log, as ART wrote them before its Parquet logs
/// (`src/art/utils/trajectory_logging.py` at 779559f, `serialize_trajectory_groups`: `yaml.dump` of
/// `[{trajectories: [{reward, metrics, metadata, messages_and_choices, logs}], metadata}]`, each
/// model turn a choice `{finish_reason, index, message}`). A trajectory's place in the file stands
/// for its row; the group's place for its `group_index`. Read with `serde_yaml_ng` (a kept fork of
/// `serde_yaml` on the pure-Rust `unsafe-libyaml`, so it builds for the web).
fn add_yaml(
    b: &mut RunBuilder,
    split: &str,
    step: Option<i64>,
    bytes: &[u8],
    report: &mut LoadReport,
) -> Result<(), LoadError> {
    use serde_json::Value;
    let incompatible = |reason: String| LoadError::Incompatible { format: FORMAT, reason };
    let groups: Value = serde_yaml_ng::from_slice(bytes).map_err(|e| incompatible(format!("not YAML ({e})")))?;
    b.meta_mut().format = FORMAT_YAML.to_owned();
    let groups = groups
        .as_array()
        .filter(|gs| !gs.is_empty() && gs.iter().all(|g| g.get("trajectories").is_some_and(Value::is_array)))
        .ok_or_else(|| incompatible("not a list of trajectory groups ({trajectories, metadata})".to_owned()))?;
    let mut row = 0;
    for (g, group) in groups.iter().enumerate() {
        for trajectory in group.get("trajectories").and_then(Value::as_array).into_iter().flatten() {
            report.records_seen += 1;
            let line = row as u64 + 1;
            let mut messages = Vec::new();
            for item in trajectory.get("messages_and_choices").and_then(Value::as_array).into_iter().flatten() {
                // A choice holds the model's message; `tool_calls: null` is no calls.
                let mut message = item.get("message").unwrap_or(item).clone();
                if let Some(fields) = message.as_object_mut()
                    && fields.get("tool_calls").is_some_and(Value::is_null)
                {
                    fields.remove("tool_calls");
                }
                match serde_json::from_value::<ChatMessage>(message) {
                    Ok(message) => messages.push(message),
                    Err(e) => {
                        report.warn(Warning::kept(line, "messages_and_choices", format!("a message left out ({e})")));
                    }
                }
            }
            let reward = trajectory.get("reward").and_then(Value::as_f64).map(|r| r as f32);
            let components: Vec<(String, f32)> = trajectory
                .get("metrics")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| match v {
                    Value::Number(n) => n.as_f64().map(|x| (k.clone(), x as f32)),
                    Value::Bool(flag) => Some((k.clone(), f32::from(u8::from(*flag)))),
                    _ => None,
                })
                .collect();
            add_trajectory(b, &Place { split, step, group: g as i64, row }, &messages, reward, &components, report);
            row += 1;
        }
    }
    Ok(())
}

/// Where a trajectory is: its split, its step (the file's), its group (`group_index`, or the
/// group's place in a YAML log) and its row (or place in the file).
struct Place<'a> {
    split: &'a str,
    step: Option<i64>,
    group: i64,
    row: usize,
}

/// Adds one trajectory: its messages the steps, `reward` the outcome, `components` its parts.
fn add_trajectory(
    b: &mut RunBuilder,
    place: &Place<'_>,
    messages: &[ChatMessage],
    reward: Option<f32>,
    components: &[(String, f32)],
    report: &mut LoadReport,
) {
    let line = place.row as u64 + 1;
    let steps = chat_steps(messages);
    if steps.is_empty() {
        report.warn(Warning::skipped(line, "messages", "no assistant turn"));
        return;
    }
    let step = place.step.map_or_else(|| "none".to_owned(), |s| s.to_string());
    let group_key = format!("{}/step-{step}/group-{}", place.split, place.group);
    let prompt = chat_prompt(messages);
    let new = NewGroup { key: &group_key, train_step: place.step, prompt: Some(&prompt), ..NewGroup::default() };
    let group = b.group(&group_key).unwrap_or_else(|| b.add_group(&new).0);
    let key = format!("{group_key}/row-{}", place.row);
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .map(|(kind, thought, action, observation)| text_step(kind, thought, action, observation))
        .collect();
    let components: Vec<(&str, f32)> = components.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let outcome = Outcome { reward: reward.filter(|r| r.is_finite()), success: None, components, finish: None };
    b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
    report.records_loaded += 1;
}

/// The split and step of a file `…/trajectories/{split}/{step:04d}.parquet`.
fn split_and_step(name: &str) -> (String, Option<i64>) {
    let mut parts = name.rsplit(['/', '\\']);
    let file = parts.next().unwrap_or("");
    let stem = [".parquet", ".yaml", ".yml"].iter().find_map(|suffix| file.strip_suffix(suffix));
    let step = stem.and_then(|s| s.parse().ok());
    let split = parts.next().filter(|s| !s.is_empty()).unwrap_or("train");
    (split.to_owned(), step)
}

/// The numeric entries of a JSON object text (a warning when it is not one).
fn numbers(text: Option<&str>, line: u64, field: &str, report: &mut LoadReport) -> Vec<(String, f32)> {
    let Some(text) = text else { return Vec::new() };
    match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text) {
        Ok(map) => map.iter().filter_map(|(k, v)| Some((k.clone(), v.as_f64()? as f32))).collect(),
        Err(e) => {
            report.warn(Warning::kept(line, field, format!("not a JSON object ({e})")));
            Vec::new()
        }
    }
}
