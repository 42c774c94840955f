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
//! by `source::live`).

use crate::load::parquet_file::{Column, ParquetMeta};
use crate::load::records::{ChatMessage, ToolCall, chat_prompt, chat_steps, text_step};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "ART trajectory Parquet";

/// The ART trajectory-Parquet loader.
pub struct Art;

impl Loader for Art {
    fn name(&self) -> &'static str {
        "art"
    }

    fn description(&self) -> &'static str {
        "OpenPipe ART trajectory Parquet (trajectories/<split>/<step>.parquet): chat messages, rewards, metrics"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let (split, step) = split_and_step(name);
        let mut b = RunBuilder::new(name, FORMAT);
        add_rows(&mut b, &split, step, bytes, report)?;
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
        add_rows(&mut self.builder, &self.split, step, bytes, report)
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
    {
        let incompatible = |reason: String| LoadError::Incompatible { format: FORMAT, reason };
        if !bytes.starts_with(b"PAR1") {
            return Err(incompatible("not Parquet".to_owned()));
        }
        let meta = ParquetMeta::of_file(bytes).map_err(|e| incompatible(format!("unreadable Parquet ({e})")))?;
        let message_leaf = |field: &str| {
            meta.leaves.iter().position(|l| l.name == "messages" && l.path.rsplit('.').next() == Some(field))
        };
        if meta.leaf("group_index").is_none() || meta.leaf("reward").is_none() || message_leaf("role").is_none() {
            return Err(incompatible("no group_index, reward and messages.role columns".to_owned()));
        }
        let read = |leaf: usize| -> Result<Column, LoadError> {
            let chunks: Vec<&[u8]> = meta
                .chunks(leaf)
                .map(|c| bytes.get(c.start as usize..(c.start + c.len) as usize).unwrap_or(&[]))
                .collect();
            crate::load::parquet_file::decode(&meta, leaf, &chunks).map_err(|reason| LoadError::Unsupported {
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
            let steps = chat_steps(&messages);
            if steps.is_empty() {
                report.warn(Warning::skipped(line, "messages", "no assistant turn"));
                continue;
            }
            let g = group_index.int(row).unwrap_or(-1);
            let group_key =
                format!("{split}/step-{}/group-{g}", step.map_or_else(|| "none".to_owned(), |s| s.to_string()));
            let prompt = chat_prompt(&messages);
            let new = NewGroup { key: &group_key, train_step: step, prompt: Some(&prompt), ..NewGroup::default() };
            let group = b.group(&group_key).unwrap_or_else(|| b.add_group(&new).0);
            let key = format!("{group_key}/row-{row}");
            let new_steps: Vec<NewStep<'_>> = steps
                .iter()
                .map(|(kind, thought, action, observation)| text_step(kind, thought, action, observation))
                .collect();
            let mut components = numbers(metrics.as_ref().and_then(|c| c.str(row)), line, "metrics", report);
            for (name, value) in numbers(group_metrics.as_ref().and_then(|c| c.str(row)), line, "group_metrics", report)
            {
                components.push((format!("group_{name}"), value));
            }
            let components: Vec<(&str, f32)> = components.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            let outcome =
                Outcome { reward: reward.f32(row).filter(|r| r.is_finite()), success: None, components, finish: None };
            b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
            report.records_loaded += 1;
        }
        Ok(())
    }
}

/// The split and step of a file `…/trajectories/{split}/{step:04d}.parquet`.
fn split_and_step(name: &str) -> (String, Option<i64>) {
    let mut parts = name.rsplit(['/', '\\']);
    let file = parts.next().unwrap_or("");
    let step = file.strip_suffix(".parquet").and_then(|s| s.parse().ok());
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
