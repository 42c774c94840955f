//! `vantage label RUN`: add, take off and list a run's labels (docs/LABELS.md); also `vantage
//! mcp`'s `label` tool and the Python package's `Run.label` and `Run.labels`. Labels are written
//! beside the run (`source::labels`), never into its log.

use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

use super::{Analysis, number};
use crate::model::Run;
use crate::model::labels::{Entry, Label, RunLabels, Source, SourceKind, Target, Value, bad_name, check_target};
use crate::source::OpenOptions;

/// Add, take off and list a run's labels (docs/LABELS.md): a name, maybe a value, on a trajectory
/// or one of its steps, kept beside the run, never in its log.
///
/// Without --add, --remove or --rule it lists them.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Args {
    /// The run: a log, a folder of runs or a v2 dataset.
    #[serde(rename = "path")]
    pub file: PathBuf,
    /// Add this label: `NAME`, or `NAME=VALUE` with a word or a number (`severity=high`,
    /// `confidence=0.8`).
    #[arg(long, value_name = "NAME[=VALUE]")]
    #[serde(default)]
    pub add: Option<String>,
    /// Take off the labels of this name from the target.
    #[arg(long, value_name = "NAME", conflicts_with = "add")]
    #[serde(default)]
    pub remove: Option<String>,
    /// The trajectory labelled (its id, as `compare` and the app name it).
    #[arg(long)]
    #[serde(default)]
    pub trajectory: Option<String>,
    /// The step of the trajectory labelled, from 0 (without it, the whole trajectory).
    #[arg(long)]
    #[serde(default)]
    pub step: Option<u32>,
    /// With --add: label every step this formula selects (docs/EXPRESSIONS.md; a step is selected
    /// where the formula is true or not zero), instead of one target.
    #[arg(long, value_name = "FORMULA", requires = "add", conflicts_with = "trajectory")]
    #[serde(default)]
    pub rule: Option<String>,
    /// A note on the label.
    #[arg(long)]
    #[serde(default)]
    pub note: Option<String>,
    /// Who labels, `KIND:NAME` with KIND person, file, agent or rule (default: the person at the
    /// terminal; an MCP client's name for the tool; the formula for --rule).
    #[arg(long, value_name = "KIND:NAME")]
    #[serde(default)]
    pub by: Option<String>,
    /// List the labels (what the command does without --add, --remove or --rule).
    #[arg(long, conflicts_with_all = ["add", "remove"])]
    #[serde(default)]
    pub list: bool,
    /// List only the labels of this name.
    #[arg(long, value_name = "NAME")]
    #[serde(default)]
    pub name: Option<String>,
    /// `--json`, `--limit`, `--offset`.
    #[command(flatten)]
    #[serde(flatten)]
    pub page: super::Page,
}

/// The person at the terminal (`$USER`, `$USERNAME`), for a label's source.
pub fn person() -> Source {
    let name = std::env::var("USER").or_else(|_| std::env::var("USERNAME")).unwrap_or_default();
    Source { kind: SourceKind::Person, name }
}

/// `KIND:NAME` as a source.
pub fn source(text: &str) -> anyhow::Result<Source> {
    let (kind, name) = text.split_once(':').unwrap_or((text, ""));
    let kind = SourceKind::from_name(kind.trim()).ok_or_else(|| {
        let kinds: Vec<&str> = SourceKind::ALL.iter().map(|k| k.name()).collect();
        anyhow::anyhow!("--by {text}: KIND:NAME with KIND one of {}", kinds.join(", "))
    })?;
    Ok(Source { kind, name: name.trim().to_owned() })
}

/// `NAME[=VALUE]` as a name and a value, or why not.
pub fn name_and_value(text: &str) -> anyhow::Result<(String, Value)> {
    let (name, value) = match text.split_once('=') {
        Some((name, value)) => (name.trim(), Value::parse(value)),
        None => (text.trim(), Value::Flag),
    };
    if let Some(why) = bad_name(name) {
        anyhow::bail!("--add {text}: {why}");
    }
    Ok((name.to_owned(), value))
}

/// Adds `labels` to the run at `path` (`run` as opened from it), each on a target the run has
/// (refused with the reason otherwise, and then none is written); the labels file written.
pub fn add(path: &Path, run: &Run, labels: Vec<Label>) -> anyhow::Result<PathBuf> {
    for label in &labels {
        check_target(run, &label.target).map_err(|why| anyhow::anyhow!("{}: {why}", label.name))?;
        if let Some(why) = bad_name(&label.name) {
            anyhow::bail!("{:?}: {why}", label.name);
        }
    }
    let entries: Vec<Entry> = labels.into_iter().map(Entry::Add).collect();
    crate::source::labels::append(path, &entries).map_err(|e| anyhow::anyhow!("could not write the labels: {e}"))
}

/// Takes the labels named `name` off `target` of the run at `path`; the labels file written.
pub fn remove(path: &Path, run: &Run, name: &str, target: Target) -> anyhow::Result<PathBuf> {
    check_target(run, &target).map_err(|why| anyhow::anyhow!("{name}: {why}"))?;
    crate::source::labels::append(path, &[Entry::Remove { name: name.to_owned(), target }])
        .map_err(|e| anyhow::anyhow!("could not write the labels: {e}"))
}

/// The labels of the run at `path` on `run`, read now, with the warnings of the files read
/// (located) and the notes (labels of another run, refused ones).
pub fn of(path: &Path, run: &Run) -> (RunLabels, Vec<String>) {
    crate::source::labels::resolved(path, run)
}

/// One label as docs/LABELS.md's row.
pub fn row(label: &Label) -> Json {
    let value = match &label.value {
        Value::Flag => Json::Bool(true),
        Value::Word(word) => Json::from(word.clone()),
        Value::Number(n) => number(*n),
    };
    json!({
        "name": label.name,
        "value": value,
        "trajectory": label.target.trajectory,
        "step": label.target.step,
        "source": { "kind": label.source.kind.name(), "name": label.source.name },
        "note": label.note,
        "time": label.time,
    })
}

impl Args {
    /// The labels this call adds (on its target, or on the steps its rule selects).
    fn new_labels(&self, run: &Run, name: &str, value: &Value) -> anyhow::Result<Vec<Label>> {
        let by = self.by.as_deref().map(source).transpose()?;
        let time = Some(crate::source::labels::now());
        let label = |target: Target, source: Source| Label {
            name: name.to_owned(),
            value: value.clone(),
            target,
            source,
            note: self.note.clone(),
            time: time.clone(),
        };
        if let Some(rule) = &self.rule {
            let spec = format!("{}{rule}", crate::credit::expr::EXPR_PREFIX);
            let values = super::step_credit(run, "--rule", &spec, None)?;
            let source = by.unwrap_or(Source { kind: SourceKind::Rule, name: rule.clone() });
            let mut labels = Vec::new();
            for t in run.trajectories.ids() {
                let range = run.trajectories.path_range(t);
                for (step, position) in range.clone().enumerate() {
                    if values.get(position).is_some_and(|v| v.is_finite() && *v != 0.0) {
                        let target = Target { trajectory: run.trajectory_key(t).to_owned(), step: Some(step as u32) };
                        labels.push(label(target, source.clone()));
                    }
                }
            }
            return Ok(labels);
        }
        let Some(trajectory) = self.trajectory.clone() else {
            anyhow::bail!("say the trajectory labelled (--trajectory), or a --rule");
        };
        Ok(vec![label(Target { trajectory, step: self.step }, by.unwrap_or_else(person))])
    }
}

impl Analysis for Args {
    const NAME: &'static str = "label";

    fn called_by_agent(&mut self, agent: &str) {
        if self.by.is_none() && self.rule.is_none() {
            self.by = Some(format!("agent:{agent}"));
        }
    }

    fn page(&self) -> Option<&super::Page> {
        Some(&self.page)
    }

    fn json(&self, options: &OpenOptions) -> anyhow::Result<Json> {
        let run = super::open(&self.file, options)?;
        let (mut added, mut removed, mut written) = (0, 0, None);
        if let Some(spec) = &self.add {
            let (name, value) = name_and_value(spec)?;
            let labels = self.new_labels(&run, &name, &value)?;
            added = labels.len();
            if added > 0 {
                written = Some(add(&self.file, &run, labels)?);
            }
        } else if let Some(name) = &self.remove {
            let Some(trajectory) = self.trajectory.clone() else {
                anyhow::bail!("say the trajectory to take --remove {name} off (--trajectory)");
            };
            written = Some(remove(&self.file, &run, name, Target { trajectory, step: self.step })?);
            removed = 1;
        }
        let (labels, notes) = of(&self.file, &run);
        let listed: Vec<&Label> =
            labels.labels.iter().filter(|l| self.name.as_ref().is_none_or(|n| *n == l.name)).collect();
        let names: Vec<Json> = labels
            .names
            .iter()
            .map(|n| {
                let on = run.trajectories.ids().filter(|&t| n.on_trajectory(&run, t)).count();
                json!({ "name": n.name, "trajectories": on, "steps": n.steps.len(), "on_whole_trajectories": n.trajectories.len() })
            })
            .collect();
        Ok(json!({
            "vantage_label": 1,
            "run": self.file.display().to_string(),
            "file": written.map(|w| w.display().to_string()),
            "added": added,
            "removed": removed,
            "names": names,
            "labels_total": listed.len(),
            "offset": self.page.offset,
            "labels": self.page.of(listed.iter().map(|l| row(l))).collect::<Vec<_>>(),
            "notes": notes,
        }))
    }

    fn text(&self, json: &Json) -> String {
        let mut out = Vec::new();
        if let Some(file) = json["file"].as_str() {
            let (added, removed) = (json["added"].as_u64().unwrap_or(0), json["removed"].as_u64().unwrap_or(0));
            out.push(if removed > 0 {
                format!("took {removed} label name off: {file}")
            } else {
                format!("added {added} label(s): {file}")
            });
        } else if json["added"] == 0 && self.add.is_some() {
            out.push("the rule selected no step: nothing added".to_owned());
        }
        for name in json["names"].as_array().into_iter().flatten() {
            out.push(format!(
                "{}: {} trajector(y/ies), {} step label(s)",
                name["name"].as_str().unwrap_or_default(),
                name["trajectories"],
                name["steps"]
            ));
        }
        for label in json["labels"].as_array().into_iter().flatten() {
            let value = match &label["value"] {
                Json::Bool(true) => String::new(),
                Json::String(word) => format!("={word}"),
                other => format!("={other}"),
            };
            let at = match label["step"].as_u64() {
                Some(step) => format!("{} step {step}", label["trajectory"].as_str().unwrap_or_default()),
                None => label["trajectory"].as_str().unwrap_or_default().to_owned(),
            };
            let note = label["note"].as_str().map(|n| format!(" — {n}")).unwrap_or_default();
            out.push(format!(
                "  {}{value} on {at} by {}:{}{note}",
                label["name"].as_str().unwrap_or_default(),
                label["source"]["kind"].as_str().unwrap_or_default(),
                label["source"]["name"].as_str().unwrap_or_default()
            ));
        }
        let total = json["labels_total"].as_u64().unwrap_or(0);
        let shown = json["labels"].as_array().map_or(0, Vec::len) as u64;
        if total > shown {
            out.push(format!("  … {} more (--offset, --limit)", total - shown));
        }
        for note in json["notes"].as_array().into_iter().flatten() {
            out.push(format!("note: {}", note.as_str().unwrap_or_default()));
        }
        if out.is_empty() {
            out.push("no labels".to_owned());
        }
        out.join("\n")
    }
}
