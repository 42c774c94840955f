//! TRL completions (`<output_dir>/completions/completions_<step:05d>.parquet`, `GRPOTrainer` with
//! `log_completions=True`): columns `step`, `prompt`, `completion`, one column per reward function,
//! any extra logged columns, and `advantage`. Groups are rebuilt from identical prompts within a
//! training step (the run's notes say so). The outcome is the sum of the reward columns (TRL's
//! default weights of 1, `NaN` ignored as `nansum` does), each reward column is also a component,
//! and the logged `advantage` is kept as the step score `logged_advantage` (and a component) so it
//! can be set beside vantage's GRPO under the `trl` preset. Native only (polars).

use polars::prelude::DataType;

use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "TRL completions parquet";

/// Columns that are not rewards.
const NOT_REWARDS: [&str; 4] = ["step", "prompt", "completion", "advantage"];

/// The TRL completions loader.
pub struct TrlParquet;

impl Loader for TrlParquet {
    fn name(&self) -> &'static str {
        "trl"
    }

    fn description(&self) -> &'static str {
        "TRL completions parquet: columns step, prompt, completion, <reward functions…>, advantage (native only)"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let mut run = TrlRun::new(name);
        run.add(bytes, None, report)?;
        crate::load::records::finish(run.builder, report, "completion")
    }
}

/// A TRL run read file by file: a `completions/` directory holds one `completions_<step>.parquet`
/// per logging step, and gains one as the run trains; all of them are one run.
pub struct TrlRun {
    builder: RunBuilder,
}

impl TrlRun {
    /// An empty run named `name`.
    pub fn new(name: &str) -> Self {
        let mut builder = RunBuilder::new(name, FORMAT);
        builder.meta_mut().notes.push(
            "groups rebuilt from identical prompts within a training step; outcome = sum of the reward columns"
                .to_owned(),
        );
        Self { builder }
    }

    /// The finished run; an error when no completion loaded.
    pub fn finish(self, report: &LoadReport) -> Result<Run, LoadError> {
        crate::load::records::finish(self.builder, report, "completion")
    }

    /// Adds the rows of one completions file; `file` names it in warnings and keys when the run
    /// has several. [`LoadError::Incompatible`] when the bytes are not a TRL completions file.
    pub fn add(&mut self, bytes: &[u8], file: Option<&str>, report: &mut LoadReport) -> Result<(), LoadError> {
        let incompatible = |reason: String| LoadError::Incompatible { format: FORMAT, reason };
        let (frame, unread) = crate::load::formats::vantage_parquet::read_frame(FORMAT, bytes)?;
        let text_column = |column: &str| -> Result<Vec<Option<String>>, LoadError> {
            let c = frame.column(column).map_err(|e| match unread.iter().find(|u| u.name == column) {
                Some(u) => incompatible(format!(
                    "{u}: a nested column (chat messages as structs?) that vantage does not read; log it as text"
                )),
                None => incompatible(format!("no `{column}` column ({e})")),
            })?;
            let c = c.cast(&DataType::String).map_err(|e| incompatible(format!("`{column}`: {e}")))?;
            let s = c.str().map_err(|e| incompatible(format!("`{column}`: {e}")))?;
            Ok(s.iter().map(|v| v.map(str::to_owned)).collect())
        };
        let number_column = |column: &polars::prelude::Column| -> Option<Vec<f32>> {
            let c = column.cast(&DataType::Float64).ok()?;
            Some(c.f64().ok()?.iter().map(|v| v.map_or(f32::NAN, |x| x as f32)).collect())
        };
        let prompts = text_column("prompt")?;
        let completions = text_column("completion")?;
        let steps = text_column("step")?;
        let advantage = frame.column("advantage").ok().and_then(number_column);
        let mut rewards: Vec<(String, Vec<f32>)> = Vec::new();
        for column in frame.columns() {
            let column_name = column.name().as_str();
            let numeric = column.dtype().is_primitive_numeric() || column.dtype().is_bool();
            if numeric && !NOT_REWARDS.contains(&column_name) {
                rewards.extend(number_column(column).map(|v| (column_name.to_owned(), v)));
            }
        }
        let b = &mut self.builder;
        let prefix = file.map_or_else(String::new, |f| format!("{f}/"));
        for row in 0..frame.height() {
            let line = row as u64 + 1;
            report.records_seen += 1;
            let (Some(prompt), Some(completion)) = (&prompts[row], &completions[row]) else {
                let field = file.map_or_else(|| "prompt".to_owned(), |f| format!("{f}: prompt"));
                report.warn(Warning::skipped(line, field, "row without a prompt or completion"));
                continue;
            };
            let step_text = steps[row].clone().unwrap_or_default();
            let train_step = step_text.trim().parse::<i64>().ok();
            let group_key = format!("step{step_text}/{prompt}");
            let group = if let Some(g) = b.group(&group_key) {
                g
            } else {
                b.add_group(&NewGroup { key: &group_key, train_step, prompt: Some(prompt), ..NewGroup::default() }).0
            };
            let key = format!("{prefix}step{step_text}/row{row}");
            let mut components: Vec<(&str, f32)> = rewards.iter().map(|(n, v)| (n.as_str(), v[row])).collect();
            let present: Vec<f32> = components.iter().map(|c| c.1).filter(|v| !v.is_nan()).collect();
            let reward = (!present.is_empty()).then(|| present.iter().sum::<f32>());
            let logged = advantage.as_ref().map_or(f32::NAN, |a| a[row]);
            if !logged.is_nan() {
                components.push(("logged_advantage", logged));
            }
            let step = NewStep {
                kind: Some("completion"),
                action: Some(completion),
                scores: if logged.is_nan() { Vec::new() } else { vec![("logged_advantage", logged)] },
                ..NewStep::default()
            };
            let outcome = Outcome { reward, success: reward.map(|r| r > 0.5), components, finish: None };
            b.add_chain_trajectory(&key, group, &[step], &outcome, &NewTokens::default());
            report.records_loaded += 1;
        }
        Ok(())
    }
}

impl crate::load::FileRun for TrlRun {
    fn add_file(&mut self, bytes: &[u8], file: Option<&str>, report: &mut LoadReport) -> Result<(), LoadError> {
        self.add(bytes, file, report)
    }
    fn snapshot(&self, report: &LoadReport) -> Run {
        crate::load::records::snapshot(&self.builder, report)
    }
    fn finish(self: Box<Self>, report: &LoadReport) -> Result<Run, LoadError> {
        (*self).finish(report)
    }
    fn heap_bytes(&self) -> usize {
        self.builder.heap_bytes()
    }
    fn take_segment(&mut self) -> Run {
        self.builder.take_segment()
    }
}
