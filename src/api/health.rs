//! `vantage health RUN…`: the run-health alarms of docs/HEALTH.md, as docs/JSON.md's object
//! (`{"vantage_health": 1, "runs": [...]}`); also `vantage mcp`'s `health` tool.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::analysis::health::Thresholds;
use crate::source::OpenOptions;

/// Run-health alarms per training step (zero-variance and all-failed groups, truncated, errored,
/// empty, repetitive or undecodable rollouts) and over the run (step scores against outcomes,
/// length hacking, entropy collapse), each with the groups behind it (docs/HEALTH.md).
///
/// Prints those that fire; exit 0 when none does, 1 when one does, 2 when a run cannot be read.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Args {
    /// The runs: logs, folders of runs or v2 datasets.
    #[arg(required = true)]
    #[serde(rename = "path", deserialize_with = "super::declare::one_or_more")]
    pub files: Vec<PathBuf>,
    /// A threshold by alarm name, repeatable: `--set zero_variance=0.8` (docs/HEALTH.md names
    /// them).
    #[arg(long = "set", value_name = "NAME=NUMBER")]
    #[serde(default, deserialize_with = "super::declare::named_numbers")]
    pub thresholds: Vec<String>,
    /// Print JSON (`{"vantage_health": 1, "runs": [...]}`).
    #[arg(long, help_heading = super::declare::TERMINAL)]
    #[serde(skip)]
    pub json: bool,
    /// Watch a run that is still training: read it again every `--interval` seconds until an
    /// alarm fires (then exit 1).
    #[arg(long, help_heading = super::declare::TERMINAL)]
    #[serde(skip)]
    pub follow: bool,
    /// With --follow: seconds between two reads.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, requires = "follow", help_heading = super::declare::TERMINAL)]
    #[serde(skip)]
    pub interval: f64,
}

impl Args {
    /// The thresholds, the defaults with those set, or why not (a setting that is not
    /// `NAME=NUMBER`, an alarm that does not exist).
    pub fn thresholds(&self) -> Result<Thresholds, String> {
        let mut thresholds = Thresholds::default();
        for set in &self.thresholds {
            let (name, value) = set.split_once('=').ok_or_else(|| format!("--set {set}: say NAME=VALUE"))?;
            let value = value.trim().parse::<f64>().map_err(|e| format!("--set {set}: {e}"))?;
            thresholds.set(name.trim(), value)?;
        }
        Ok(thresholds)
    }
}

impl super::Tool for Args {
    const NAME: &'static str = "health";

    fn answer(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        let thresholds = self.thresholds().map_err(anyhow::Error::msg)?;
        let (report, _, failed) = report(&self.files, &thresholds, options);
        if failed && report["runs"].as_array().is_none_or(Vec::is_empty) {
            anyhow::bail!("the run could not be read (see vantage check)");
        }
        Ok(report)
    }
}

/// docs/JSON.md's health object for `files` (each log of a folder a run), whether an alarm fired,
/// and whether a run could not be read (errors go to stderr).
pub fn report(files: &[PathBuf], thresholds: &Thresholds, options: &OpenOptions) -> (Value, bool, bool) {
    let (mut fired, mut failed, mut runs) = (false, false, Vec::new());
    let opened = files.iter().flat_map(|path| {
        let template = options.report(&path.display().to_string());
        crate::source::path::open_all(path, options, None, &template, None)
    });
    for one in opened {
        let run = match one.result {
            Ok(run) => run,
            Err(err) => {
                eprintln!("vantage health: {}", err.located());
                failed = true;
                continue;
            }
        };
        let alarms = crate::analysis::health::alarms(&run, thresholds);
        fired |= !alarms.is_empty();
        let alarms: Vec<Value> = alarms
            .iter()
            .map(|a| {
                json!({
                    "name": a.name,
                    "train_step": a.train_step,
                    "value": a.value,
                    "threshold": a.threshold,
                    "groups": a.groups.iter().map(|&g| run.group_key(g)).collect::<Vec<_>>(),
                    "message": a.message,
                })
            })
            .collect();
        runs.push(json!({ "run": one.path.display().to_string(), "alarms": alarms }));
    }
    (json!({ "vantage_health": 1, "runs": runs }), fired, failed)
}

/// The report in words: each run's alarms, with up to five of the groups behind each.
pub fn text(report: &Value) -> String {
    let mut out = Vec::new();
    for run in report["runs"].as_array().into_iter().flatten() {
        let name = run["run"].as_str().unwrap_or_default();
        let alarms = run["alarms"].as_array().cloned().unwrap_or_default();
        if alarms.is_empty() {
            out.push(format!("{name}: no alarm"));
            continue;
        }
        out.push(format!("{name}: {} alarm(s)", alarms.len()));
        for alarm in &alarms {
            let groups: Vec<&str> =
                alarm["groups"].as_array().into_iter().flatten().filter_map(|g| g.as_str()).collect();
            let more = if groups.len() > 5 { ", …" } else { "" };
            let shown = groups.iter().take(5).copied().collect::<Vec<_>>().join(", ");
            let behind = if groups.is_empty() { String::new() } else { format!(" (groups {shown}{more})") };
            out.push(format!(
                "  [{}] {}{behind}",
                alarm["name"].as_str().unwrap_or_default(),
                alarm["message"].as_str().unwrap_or_default()
            ));
        }
    }
    out.join("\n")
}
