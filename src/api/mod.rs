//! The analyses the command line, `vantage mcp` and the Python package share, each declared once.
//!
//! A command here is one clap declaration (`Args`, with a doc comment that is its help and MCP
//! description, and its arguments' help, types and defaults) that serde also reads from JSON: the
//! command line parses it from flags (`cli/` flattens it into `vantage`'s subcommands), `vantage
//! mcp` deserializes the same struct from a tool call's `arguments` and offers an input schema
//! generated from the declaration ([`declare`]), and the Python stubs take their signatures and
//! docstrings from it ([`python`]). An argument under the heading [`declare::TERMINAL`] (`--json`,
//! `--follow`) is the terminal's only.
//!
//! Each analysis prints words, or with `--json` one object whose first key names it and its
//! schema's version (`{"vantage_budget": 1, …}`; docs/JSON.md); an error is
//! `{"vantage_NAME": 1, "error": "…"}` and exit 2.
//!
//! This layer sits under the launchers (`cli/`, the Python package) and over `app` (the deep
//! links `open_app` and `vantage.show` write); it never imports `cli`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::model::{NodeId, Run, TrajectoryId, truncate};
use crate::source::OpenOptions;

pub mod budget;
pub mod check;
pub mod compare;
pub mod convert;
pub mod credit;
pub mod declare;
pub mod diff;
pub mod forensics;
pub mod formulas;
pub mod graph;
pub mod health;
pub mod label;
pub mod mcp;
pub mod python;
pub mod runs;
pub mod step;
pub mod table;

/// A command `vantage mcp` offers as a tool of the same name: its declaration, read from flags or
/// from a tool call's JSON arguments, and its answer as docs/JSON.md's object.
pub trait Tool: clap::Args + serde::de::DeserializeOwned {
    /// `vantage NAME` and its MCP tool.
    const NAME: &'static str;

    /// The answer as docs/JSON.md's object, or why not.
    fn answer(&self, options: &OpenOptions) -> anyhow::Result<Value>;

    /// Called before [`Self::answer`] when an agent calls the tool (`vantage mcp`), with the
    /// agent's name: what it writes says so.
    fn called_by_agent(&mut self, _agent: &str) {}
}

/// An analysis command: a [`Tool`] that prints words, or its object with `--json`.
pub trait Analysis: clap::Args + serde::de::DeserializeOwned {
    /// `vantage NAME`, its object's first key `vantage_NAME`, and its MCP tool.
    const NAME: &'static str;

    /// Its `--json`, `--limit` and `--offset`, when it lists rows.
    fn page(&self) -> Option<&Page> {
        None
    }

    /// Whether `--json` was given.
    fn wants_json(&self) -> bool {
        self.page().is_some_and(|p| p.json)
    }

    /// The analysis as docs/JSON.md's object (its page's limit already checked).
    fn json(&self, options: &OpenOptions) -> anyhow::Result<Value>;

    /// The same in words, for a person at a terminal.
    fn text(&self, json: &Value) -> String;

    /// [`Tool::called_by_agent`].
    fn called_by_agent(&mut self, _agent: &str) {}
}

impl<A: Analysis> Tool for A {
    const NAME: &'static str = A::NAME;

    /// [`Analysis::json`], a limit out of range refused first.
    fn answer(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        if let Some(page) = self.page() {
            check_limit(page.limit)?;
        }
        self.json(options)
    }

    fn called_by_agent(&mut self, agent: &str) {
        Analysis::called_by_agent(self, agent);
    }
}

/// `--json`, `--limit` and `--offset`, which every analysis that lists rows takes.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Page {
    /// Print JSON (docs/JSON.md).
    #[arg(long, help_heading = declare::TERMINAL)]
    #[serde(skip)]
    pub json: bool,
    /// The rows listed, at most (1 to 1000).
    #[arg(long, default_value_t = 20)]
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Skip this many rows first (paging).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub offset: usize,
}

impl Page {
    /// The rows of `rows` this page lists.
    pub fn of<T>(&self, rows: impl IntoIterator<Item = T>) -> impl Iterator<Item = T> {
        rows.into_iter().skip(self.offset).take(self.limit)
    }
}

/// Schemes A and B, each optional, whose credit an analysis shows beside its rows.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct TwoSchemes {
    /// Scheme A (an id, `ID@PRESET`, `expr:FORMULA` or `formula:NAME`).
    #[arg(long)]
    #[serde(default)]
    pub a: Option<String>,
    /// Scheme B.
    #[arg(long)]
    #[serde(default)]
    pub b: Option<String>,
}

impl TwoSchemes {
    /// Credit per path step under A and under B (`None` for a scheme not named), or why not.
    pub fn credit(&self, run: &Run) -> anyhow::Result<[Option<Vec<f32>>; 2]> {
        let credit = |flag: &str, spec: &Option<String>| -> anyhow::Result<Option<Vec<f32>>> {
            let Some(spec) = spec else { return Ok(None) };
            let (id, preset) = scheme_and_preset(spec);
            step_credit(run, flag, id, preset).map(Some)
        };
        Ok([credit("--a", &self.a)?, credit("--b", &self.b)?])
    }
}

/// The most rows a command lists at once (`--limit`).
pub const MAX_LIMIT: usize = 1000;

/// `--limit`'s default.
pub fn default_limit() -> usize {
    20
}

/// `--limit` checked: from 1 to [`MAX_LIMIT`].
fn check_limit(limit: usize) -> anyhow::Result<()> {
    if limit == 0 || limit > MAX_LIMIT {
        anyhow::bail!("--limit {limit}: from 1 to {MAX_LIMIT}");
    }
    Ok(())
}

/// Loads a path as the commands do: the options of the command line (`--steps`, `--outcomes`,
/// the memory budget).
pub fn load_path(
    path: &Path,
    options: &OpenOptions,
    format: Option<&str>,
    report: &mut crate::load::LoadReport,
) -> Result<Run, crate::load::LoadError> {
    crate::source::path::open(path, options, format, report, None)
}

/// How every command opens runs: `vantage`'s global `--steps` and `--outcomes`, and the Python
/// package's `steps=` and `outcomes=`.
#[derive(Debug, Default, clap::Args)]
pub struct OpenArgs {
    /// v2 datasets: read only these training steps (`17`, `10..20` inclusive, `2000..`, `..99`).
    #[arg(long, value_name = "A..B", global = true, value_parser = parse_steps)]
    pub steps: Option<(i64, i64)>,
    /// Join the outcomes of this results file to the trajectories opened (a SWE-bench report,
    /// `report.json`, `results.json`, StableToolBench pass-rate votes); repeatable. A results file
    /// among the files opened is used the same way.
    #[arg(long, value_name = "FILE", global = true)]
    pub outcomes: Vec<PathBuf>,
}

/// What a deep link names: the view and schemes A and B the app opens on (`vantage`'s flags and
/// `vantage.show`'s arguments).
#[derive(Debug, Default, clap::Args)]
pub struct Show {
    /// App: the view to open (group, compare, overview, tokens, diff, transcript, runs, summary;
    /// graph: the Group view on its behaviour graph).
    #[arg(long)]
    pub view: Option<String>,
    /// App: scheme A (a registry id, `expr:FORMULA` or `formula:NAME`; see `vantage schemes`).
    #[arg(long)]
    pub scheme_a: Option<String>,
    /// App: scheme B.
    #[arg(long)]
    pub scheme_b: Option<String>,
}

/// The command a declaration makes, under `name`.
fn of<T: clap::Args>(name: &'static str) -> clap::Command {
    T::augment_args(clap::Command::new(name))
}

/// Every declaration in `api/` by name: the commands (`check`, `credit`, `convert`, the analyses,
/// `open_app`), and the argument groups `open` (`--steps`, `--outcomes`) and `show` (`--view`,
/// `--scheme-a`, `--scheme-b`). The Python package's docstrings name arguments through them.
pub fn declaration(name: &str) -> Option<clap::Command> {
    Some(match name {
        "open" => of::<OpenArgs>("open"),
        "show" => of::<Show>("show"),
        "credit" => of::<credit::Args>("credit"),
        "convert" => of::<convert::Args>("convert"),
        "check" => declare::command::<check::Args>(),
        "compare" => declare::command::<compare::Args>(),
        "budget" => declare::command::<budget::Args>(),
        "runs" => declare::command::<runs::Args>(),
        "diff" => declare::command::<diff::Args>(),
        "graph" => declare::command::<graph::Args>(),
        "step" => declare::command::<step::Args>(),
        "health" => declare::command::<health::Args>(),
        "forensics" => declare::command::<forensics::Args>(),
        "label" => declare::command::<label::Args>(),
        "open_app" => declare::command::<mcp::OpenApp>(),
        _ => return None,
    })
}

/// A training-step range: `17`, `10..20`, `train_step=17`.
pub fn parse_steps(text: &str) -> Result<(i64, i64), String> {
    crate::load::formats::vantage_v2::manifest::parse_range(text)
}

/// The formulas saved in the formulas folder, as the app holds them.
pub fn saved_formulas() -> Vec<crate::app::SavedFormula> {
    crate::source::disk::saved_formulas()
        .into_iter()
        .map(|(name, text)| crate::app::SavedFormula { name, text })
        .collect()
}

/// The scheme `name` names for the app (an id, `expr:…`, `formula:NAME` of the built-ins or of
/// `saved`), or why none.
pub fn scheme_choice(name: &str, saved: &[crate::app::SavedFormula]) -> Result<crate::app::SchemeChoice, String> {
    crate::app::SchemeChoice::from_name(name, saved)
        .ok_or_else(|| format!("{name}: not a scheme (see `vantage schemes`)"))
}

/// The app's view named `name` (and whether it is the Group view's graph: `graph`), or why none.
pub fn view(name: &str) -> Result<(crate::app::Tab, bool), String> {
    if name.eq_ignore_ascii_case("graph") {
        return Ok((crate::app::Tab::Group, true));
    }
    crate::app::Tab::from_name(name)
        .map(|tab| (tab, false))
        .ok_or_else(|| format!("{name}: not a view; one of {}, graph", crate::app::Tab::names()))
}

/// The run at `path`, or its located error.
pub fn open(path: &Path, options: &OpenOptions) -> anyhow::Result<Run> {
    let mut report = options.report(&path.display().to_string());
    load_path(path, options, None, &mut report).map_err(|e| anyhow::anyhow!("{}", e.located()))
}

/// The trajectory with external id `key`, or an error naming a few that are.
pub fn trajectory(run: &Run, key: &str) -> anyhow::Result<TrajectoryId> {
    run.trajectory_by_key(key).ok_or_else(|| {
        let some: Vec<&str> = run.trajectories.ids().take(5).map(|t| run.trajectory_key(t)).collect();
        anyhow::anyhow!(
            "no trajectory {key:?} in the run (it has {}, e.g. {})",
            run.trajectories.len(),
            some.join(", ")
        )
    })
}

/// What a step says, in one line: its action, else its thought, cut to `chars` characters.
pub fn step_text(run: &Run, node: NodeId, chars: usize) -> String {
    let n = node.index();
    let mut text = run.text(run.nodes.action[n]).trim().to_owned();
    if text.is_empty() {
        text = run.text(run.nodes.thought[n]).trim().to_owned();
    }
    truncate(&text, chars)
}

/// A number, `null` when it is not finite (JSON has no NaN).
pub fn number(value: f64) -> Value {
    if value.is_finite() { Value::from(value) } else { Value::Null }
}

/// An `f32` as JSON writes it shortest (`0.1`, not `0.10000000149011612`), `null` when not finite.
pub fn number32(value: f32) -> Value {
    // An f32's shortest decimal (Display) read as f64 is what a reader of the JSON expects.
    if value.is_finite() { value.to_string().parse::<f64>().map_or(Value::Null, Value::from) } else { Value::Null }
}

/// A formula's term as the app's inspector writes it: a whole number without decimals (a count,
/// a 0/1 reward: "group size = 2", not "2.0000"), else as [`shown`].
pub fn shown_term(value: &Value) -> String {
    match value.as_f64() {
        Some(v) if v.fract() == 0.0 && v.abs() < 1e7 => format!("{v:.0}"),
        _ => shown(value),
    }
}

/// A number as the words print it: four decimals, or in scientific notation when that would show
/// only zeros (`1e-6`), `—` when there is none.
pub fn shown(value: &Value) -> String {
    match value.as_f64() {
        None => "—".to_owned(),
        Some(v) if v != 0.0 && v.abs() < 5e-5 => format!("{v:.3e}"),
        Some(v) => format!("{v:.4}"),
    }
}

/// One scheme a command computes: `ID` or `ID@PRESET` (a registry id, `expr:FORMULA` or
/// `formula:NAME`; a formula takes no preset, and an `@` in it is its own).
pub fn scheme_and_preset(spec: &str) -> (&str, Option<&str>) {
    if spec.starts_with(crate::credit::expr::EXPR_PREFIX) {
        return (spec, None);
    }
    match spec.split_once('@') {
        Some((id, preset)) => (id, Some(preset)),
        None => (spec, None),
    }
}

/// Credit per path step under `id` (with `preset`), or why not, naming `flag`.
pub fn step_credit(run: &Run, flag: &str, id: &str, preset: Option<&str>) -> anyhow::Result<Vec<f32>> {
    let mut computed = formulas::Computation::resolve(id, preset, Vec::new())
        .and_then(|c| c.compute(run))
        .map_err(|e| e.context(format!("{flag} {id}")))?;
    Ok(std::mem::take(&mut computed.step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_and_numbers_are_read_and_written_as_the_json_says() {
        assert_eq!(scheme_and_preset("grpo@verl"), ("grpo", Some("verl")));
        assert_eq!(scheme_and_preset("expr:r@x"), ("expr:r@x", None));
        assert_eq!(number(f64::NAN), Value::Null);
        assert_eq!(number32(0.1), serde_json::json!(0.1));
        assert_eq!(shown(&serde_json::json!(1e-6)), "1.000e-6");
        assert_eq!(shown(&serde_json::json!(-2.04123)), "-2.0412");
        assert_eq!(shown(&Value::Null), "—");
    }
}
