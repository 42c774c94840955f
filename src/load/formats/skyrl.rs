//! SkyRL's dumped evaluations (NovaSky-AI/SkyRL `skyrl/train/utils/trainer_utils.py`
//! `dump_per_dataset_eval_results`, called by `skyrl/train/evaluate.py` when
//! `trainer.dump_eval_results` is on): `{export_path}/dumped_evals/global_step_{N}_evals/` (or
//! `eval_only/`) holds one `<data_source>.jsonl` per data source, one line per sample,
//! `{input_prompt, output_response, score, stop_reason, env_class, env_extras, data_source}`,
//! and `aggregated_results.jsonl`, the metrics (not samples).
//!
//! The prompt and response are the decoded tokens. A group is a prompt's samples
//! (`eval_n_samples_per_prompt` of them: the dump has no uid, so identical prompts of one data
//! source and step make a group); its training step is the `N` of the folder. A sample is one
//! step (its response); its reward the `score`, or, for token-level rewards (a list), their sum
//! (SkyRL's `avg_score`); it succeeds when that reward, or a token-level list's last reward, is
//! positive (SkyRL's pass@n); its finish the `stop_reason`; the data source is the group's task.
//! `env_class` (the environment that scored it, one per data source) and `env_extras` (the
//! dataset row's extras) are not kept.

use crate::load::lenient::FieldError;
use crate::load::lines::{JsonLines, LineFeed, LineStream, head_text, parse_json, read_all};
use crate::load::records::{Record, id_text, line_records, object_has, stable_hash};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "SkyRL dumped evals";

/// The SkyRL dumped-eval loader.
pub struct SkyRl;

/// One sample as `dump_per_dataset_eval_results` writes it.
#[derive(serde::Deserialize)]
pub struct Sample {
    input_prompt: serde_json::Value,
    output_response: serde_json::Value,
    #[serde(default)]
    score: serde_json::Value,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    data_source: Option<String>,
}

impl Loader for SkyRl {
    fn name(&self) -> &'static str {
        "skyrl"
    }

    fn description(&self) -> &'static str {
        "SkyRL dumped evals JSONL (dumped_evals/global_step_N_evals/<data_source>.jsonl): decoded prompt and response, score, stop reason"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| Box::new(stream(name, report)) as Box<dyn LineFeed>)
    }
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    if !accepts(&head_text(bytes)) {
        return Err(LoadError::Incompatible {
            format: FORMAT,
            reason: "the first line is not a dumped eval sample (input_prompt, output_response, score, env_class)"
                .to_owned(),
        });
    }
    read_all(Box::new(stream(name, std::mem::take(report))), bytes, report).await
}

/// Whether the first line of `head` is a dumped eval sample.
pub fn accepts(head: &str) -> bool {
    line_records(head)
        .next()
        .is_some_and(|r| object_has(r.text, &["input_prompt", "output_response", "score", "env_class"]))
}

/// The training step of a dump file from the folder it is in: `global_step_{N}_evals/…` is `N`,
/// `eval_only/…` (an evaluation outside training) none.
pub fn step_of_path(path: &str) -> Option<i64> {
    path.split(['/', '\\'])
        .rev()
        .skip(1)
        .find_map(|dir| dir.strip_prefix("global_step_")?.strip_suffix("_evals")?.parse().ok())
}

/// The state of a dump read file after file: the step of the file being read, and the step of
/// the run's own path (a step folder opened as a whole, or one file of one).
#[derive(Default)]
pub struct Dump {
    step: Option<i64>,
    own: Option<i64>,
    /// The file being read, and the samples read of each file so far: a sample's key is its row
    /// in its file (a followed file is started again where it grew).
    file: String,
    rows: std::collections::HashMap<String, usize>,
}

/// An empty run named `name`, read piece by piece (a `dumped_evals/` folder that gains step
/// folders while the run trains, or one file).
pub fn stream(name: &str, report: LoadReport) -> LineStream<Dump> {
    let mut builder = RunBuilder::new(name, FORMAT);
    builder.meta_mut().notes.push(
        "groups rebuilt from identical prompts of a data source and step (the dump has no uid); success is a positive reward, SkyRL's pass@n".to_owned(),
    );
    // The run's path as a folder: `…/global_step_N_evals` itself, or a file inside one.
    let own = step_of_path(&format!("{name}/"));
    let mut stream = LineStream::new(Dump { step: own, own, ..Dump::default() }, builder, report);
    stream.start_file(name);
    stream
}

/// A sample's reward: the score, or the sum of token-level scores; and whether it passes (the
/// score, or the last token-level score, positive).
fn reward(score: &serde_json::Value) -> Result<(f32, bool), &'static str> {
    match score {
        serde_json::Value::Number(n) => {
            let r = n.as_f64().unwrap_or(f64::NAN) as f32;
            Ok((r, r > 0.0))
        }
        serde_json::Value::Array(items) => {
            let values: Option<Vec<f64>> = items.iter().map(serde_json::Value::as_f64).collect();
            match values.as_deref() {
                Some([.., last]) => Ok((values.iter().flatten().sum::<f64>() as f32, *last > 0.0)),
                Some([]) => Err("an empty list of token-level scores"),
                None => Err("a list holding something other than numbers"),
            }
        }
        _ => Err("not a number or a list of token-level numbers"),
    }
}

impl JsonLines for Dump {
    type Item = Sample;

    fn what(&self) -> &'static str {
        "sample"
    }

    fn parse(text: &str) -> Result<Sample, FieldError> {
        parse_json(text)
    }

    fn start_file(&mut self, name: &str) {
        self.step = step_of_path(name).or(self.own);
        name.clone_into(&mut self.file);
    }

    fn add(&mut self, b: &mut RunBuilder, record: Record<'_>, _: usize, s: Sample, report: &mut LoadReport) {
        let row = self.rows.entry(self.file.clone()).or_default();
        let index = *row;
        *row += 1;
        let (reward, passed) = match reward(&s.score) {
            Ok(r) => r,
            Err(why) => {
                report.warn(Warning::kept(record.line, "score", why));
                (f32::NAN, false)
            }
        };
        let prompt = id_text(Some(&s.input_prompt)).unwrap_or_default();
        let source = s.data_source.as_deref().unwrap_or("unknown");
        let step = self.step.map_or_else(|| "eval_only".to_owned(), |n| format!("step-{n}"));
        let group_key = format!("{step}/{source}/prompt-{:016x}", stable_hash(&prompt));
        let new = NewGroup {
            key: &group_key,
            task: Some(source),
            train_step: self.step,
            prompt: Some(&prompt),
            ..NewGroup::default()
        };
        let group = b.group(&group_key).unwrap_or_else(|| b.add_group(&new).0);
        let key = format!("{step}/{source}/{index}");
        if b.has_trajectory(&key) {
            report.warn(Warning::skipped(record.line, "record", format!("duplicate sample {key:?}")));
            return;
        }
        let response = id_text(Some(&s.output_response)).unwrap_or_default();
        let step = NewStep { kind: Some("response"), action: Some(&response), ..NewStep::default() };
        let outcome = Outcome {
            reward: reward.is_finite().then_some(reward),
            success: reward.is_finite().then_some(passed),
            components: Vec::new(),
            finish: s.stop_reason.as_deref(),
        };
        b.add_chain_trajectory(&key, group, &[step], &outcome, &NewTokens::default());
    }
}
