//! What the analysis commands share (docs/JSON.md): each prints words, or with `--json` one object
//! whose first key names it and its schema's version (`{"vantage_budget": 1, …}`); an error is
//! `{"vantage_NAME": 1, "error": "…"}` and exit 2. The same arguments, deserialized from JSON,
//! are `vantage mcp`'s tool of the same name, so the two never drift apart.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use crate::model::{NodeId, Run, TrajectoryId, truncate};
use crate::source::OpenOptions;

/// An analysis command.
pub trait JsonCommand: serde::de::DeserializeOwned {
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

    /// [`Self::json`], a limit out of range refused first.
    fn answer(&self, options: &OpenOptions) -> anyhow::Result<Value> {
        if let Some(page) = self.page() {
            check_limit(page.limit)?;
        }
        self.json(options)
    }

    /// The same in words, for a person at a terminal.
    fn text(&self, json: &Value) -> String;
}

/// Runs a command: its words or its JSON printed, or its error (as JSON too with `--json`) and exit 2.
pub fn main<C: JsonCommand>(args: &C, options: &OpenOptions) -> ExitCode {
    match args.answer(options) {
        Ok(json) => {
            let out = if args.wants_json() { json.to_string() } else { args.text(&json) };
            // A reader that stops early (`| head`) is not an error.
            let _ = writeln!(std::io::stdout().lock(), "{out}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            if args.wants_json() {
                println!("{}", serde_json::json!({ format!("vantage_{}", C::NAME): 1, "error": format!("{err:#}") }));
            }
            eprintln!("vantage {}: {err:#}", C::NAME);
            ExitCode::from(2)
        }
    }
}

/// The command's object for an MCP tool call's `arguments` (its flags by their long names, `path`
/// for the run), or why not (an argument it does not take, a value of the wrong type).
pub fn from_mcp<C: JsonCommand>(arguments: &Value, options: &OpenOptions) -> Result<Value, String> {
    let args: C = serde_json::from_value(arguments.clone()).map_err(|e| format!("arguments: {e}"))?;
    args.answer(options).map_err(|e| format!("{e:#}"))
}

/// `--json`, `--limit` and `--offset`, which every analysis that lists rows takes.
#[derive(Debug, clap::Args, serde::Deserialize)]
pub struct Page {
    /// Print JSON (docs/JSON.md).
    #[arg(long)]
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

/// The run at `path`, or its located error.
pub fn open(path: &Path, options: &OpenOptions) -> anyhow::Result<Run> {
    let mut report = options.report(&path.display().to_string());
    super::load_path(path, options, None, &mut report).map_err(|e| anyhow::anyhow!("{}", e.located()))
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
    let mut computed = super::formulas::Computation::resolve(id, preset, Vec::new())
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
