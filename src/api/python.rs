//! What a binding in another language needs from the commands. The Python package (`python/`,
//! docs/PYTHON.md) opens, computes, compares and converts through these functions, so its numbers
//! and errors are the command line's; its type stubs and docstrings are made here from [`API`],
//! whose parameter help is the declaration's own ([`super::declare`]) where a function and a
//! command share a parameter, and whose signature is made from the command's declaration where
//! the function is the command ([`Signature::Declared`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub use super::Page;
pub use super::check::entry as check_entry;
pub use super::compare::comparison;
pub use super::formulas::Computation;
use crate::analysis::tables::Table;
use crate::load::LoadError;
use crate::model::Run;
use crate::source::OpenOptions;

/// The open options of the command line (`--steps`, `--outcomes`, the memory budget; the
/// machine's own budget when `memory_budget` is `None`).
pub fn open_options(
    steps: Option<&str>,
    outcomes: &[PathBuf],
    memory_budget: Option<&str>,
) -> Result<OpenOptions, LoadError> {
    let bad = |field: &str, reason: String| LoadError::Unsupported { line: 0, field: field.to_owned(), reason };
    let steps = steps.map(super::parse_steps).transpose().map_err(|e| bad("steps", e))?;
    let memory_budget = match memory_budget {
        Some(text) => crate::load::budget::parse_size(text)
            .ok_or_else(|| bad("memory_budget", format!("{text:?} is not a size (e.g. 8G)")))?,
        None => crate::source::disk::memory_budget(),
    };
    Ok(OpenOptions {
        steps,
        outcomes: crate::source::joined::read_outcome_files(outcomes)?.into(),
        memory_budget,
        follow: false,
        lazy: false,
    })
}

/// Every run at `path` (each log of a folder), as `vantage check` reads them.
pub fn open_all(path: &Path, options: &OpenOptions, format: Option<&str>) -> Vec<crate::source::path::Opened> {
    let template = options.report(&path.display().to_string());
    crate::source::path::open_all(path, options, format, &template, None)
}

/// `vantage credit`'s rows of the credit `values` on `run`: per step (`trajectory`, `group`,
/// `step`, `node`, `credit`; `values` aligned with `Credit::step`), or with `tokens` per token
/// (`trajectory`, `group`, `token`, `mask`, `credit`; aligned with `Credit::token`).
pub fn credit_table(run: &Run, values: &[f32], tokens: bool) -> Table {
    let table = if tokens {
        super::table::CreditTable::tokens(run, values, run.trajectories.ids())
    } else {
        super::table::CreditTable::steps(run, values, run.trajectories.ids(), None)
    };
    table.into_table()
}

/// `vantage formats`: each format's name and what it is.
pub fn formats() -> Vec<(&'static str, &'static str)> {
    crate::load::LOADERS.iter().map(|l| (l.name(), l.description())).collect()
}

/// Where a parameter's help comes from.
#[derive(Clone, Copy, Debug)]
pub enum Help {
    /// Its own words.
    Text(&'static str),
    /// The help of a declared argument: the declaration ([`super::declaration`]) and the
    /// argument's id.
    Arg(&'static str, &'static str),
}

/// Where a function's signature comes from.
#[derive(Clone, Copy, Debug)]
pub enum Signature {
    /// As Python writes it (`(path: str) -> Run`); for a class, its attributes, one `name: type` a
    /// line.
    Written(&'static str),
    /// A method that is a command on its run: its parameters are the command's arguments but the
    /// run and the paging (`limit`, `offset`: the method lists every row), with their types and
    /// defaults; its docstring starts with the command's help.
    Declared {
        /// The command.
        command: &'static str,
        /// What the method returns, as Python writes it.
        returns: &'static str,
    },
}

/// One function or method of the Python package.
#[derive(Clone, Copy, Debug)]
pub struct Item {
    /// `name` for a function, `Class.name` for a method, `Class` for a class.
    pub name: &'static str,
    /// Its parameters and return type.
    pub signature: Signature,
    /// What it does.
    pub doc: &'static str,
    /// Each parameter's help.
    pub params: &'static [(&'static str, Help)],
}

const OPEN_PARAMS: &[(&str, Help)] = &[
    (
        "path",
        Help::Text("A log, a run folder, or a vantage Parquet v2 dataset, in any format `vantage formats` lists."),
    ),
    ("format", Help::Arg("check", "format")),
    ("steps", Help::Arg("open", "steps")),
    ("outcomes", Help::Arg("open", "outcomes")),
    (
        "memory_budget",
        Help::Text(
            "The memory a load may hold (`8G`); by default what the machine has free, as the command line \
             (or VANTAGE_MEMORY_BUDGET).",
        ),
    ),
];

const CREDIT_PARAMS: &[(&str, Help)] = &[
    ("scheme", Help::Arg("credit", "scheme")),
    ("preset", Help::Arg("credit", "preset")),
    ("tokens", Help::Text("Per token instead of per step (for schemes that compute per token).")),
    ("params", Help::Arg("credit", "set")),
];

/// The Python package's functions, classes and methods, in the order the stubs list them.
pub const API: &[Item] = &[
    Item {
        name: "open",
        signature: Signature::Written(
            "(path: str | os.PathLike[str], *, format: str | None = None, steps: str | int | None = None, outcomes: Sequence[str | os.PathLike[str]] = (), memory_budget: str | None = None) -> Run",
        ),
        doc: "Open one run, as `vantage check` reads it. Raises LoadError (with the file, line and field) when nothing loads, and when a folder holds several runs (use open_all).",
        params: OPEN_PARAMS,
    },
    Item {
        name: "open_all",
        signature: Signature::Written(
            "(path: str | os.PathLike[str], *, format: str | None = None, steps: str | int | None = None, outcomes: Sequence[str | os.PathLike[str]] = (), memory_budget: str | None = None) -> list[Run]",
        ),
        doc: "Open every run at a path (each log of a run folder). Raises LoadError only when nothing loads; the runs that did not load are in `vantage check PATH`.",
        params: OPEN_PARAMS,
    },
    Item {
        name: "schemes",
        signature: Signature::Written("() -> list[dict[str, Any]]"),
        doc: "Every credit scheme, as `vantage schemes` lists it: id, name, family, citation, source, from_code, needs, checked, batch_wide, params (name, kind, range, choices, default, doc) and presets (name, sets, doc).",
        params: &[],
    },
    Item {
        name: "formats",
        signature: Signature::Written("() -> dict[str, str]"),
        doc: "The log formats vantage reads: the name `format=` takes, and what it is.",
        params: &[],
    },
    Item {
        name: "credit_batch",
        signature: Signature::Written(
            "(rewards: ArrayLike, group_ids: Sequence[Hashable], scheme: str = 'grpo', preset: str | None = None, *, mask: ArrayLike | None = None, values: ArrayLike | None = None, log_probs: ArrayLike | None = None, ref_log_probs: ArrayLike | None = None, **params: float | int | bool | str) -> numpy.ndarray",
        ),
        doc: "A scheme's advantages on plain arrays, as a trainer computes them, with the numbers the app shows. One reward per sequence (a 1-D array, as TRL and NeMo-RL pass scores), or per token (2-D, batch × length, as verl's token_level_rewards with its response mask). The result has the rewards' shape and precision (float32 or float64).",
        params: &[
            ("rewards", Help::Text("Per-sequence scores (1-D) or per-token rewards (2-D).")),
            ("group_ids", Help::Text("Each sequence's prompt (group), any hashable label; one per row of rewards.")),
            ("scheme", Help::Arg("credit", "scheme")),
            ("preset", Help::Arg("credit", "preset")),
            ("mask", Help::Text("2-D only: the response mask (1 where a token counts); all ones when absent.")),
            ("values", Help::Text("2-D only: the critic's values (GAE).")),
            ("log_probs", Help::Text("2-D only: the policy's log-probabilities (KL penalties).")),
            ("ref_log_probs", Help::Text("2-D only: the reference policy's log-probabilities (KL penalties).")),
            ("params", Help::Arg("credit", "set")),
        ],
    },
    Item {
        name: "compare",
        signature: Signature::Written("(a: Credit, b: Credit) -> Comparison"),
        doc: "Two credits on the same run side by side, as the app's Compare view and `vantage compare` set them: Spearman ρ, sign disagreements by kind, the steps where they differ most, the groups they disagree on most.",
        params: &[
            ("a", Help::Text("Scheme A's credit (Run.credit).")),
            ("b", Help::Text("Scheme B's credit on the same run.")),
        ],
    },
    Item {
        name: "convert",
        signature: Signature::Written(
            "(path: str | os.PathLike[str], out: str | os.PathLike[str], *, format: str | None = None, steps: str | int | None = None, outcomes: Sequence[str | os.PathLike[str]] = (), memory_budget: str | None = None) -> str",
        ),
        doc: "Read a log in any supported format and write it as `vantage convert` does; returns the line it prints.",
        params: &[
            ("path", Help::Arg("convert", "file")),
            ("out", Help::Arg("convert", "out")),
            ("format", Help::Arg("convert", "format")),
            ("steps", Help::Arg("open", "steps")),
            ("outcomes", Help::Arg("open", "outcomes")),
            ("memory_budget", Help::Text("The memory a load may hold (`8G`).")),
        ],
    },
    Item {
        name: "show",
        signature: Signature::Written(
            "(run: Run, scheme_a: str | None = None, scheme_b: str | None = None, *, view: str | None = None, app: bool = True) -> str",
        ),
        doc: "Open the desktop app on the run with schemes A and B (the `vantage` program on PATH, or VANTAGE_BIN), or, with app=False or when there is no program or display, print the command that does and the deep link (the fragment `--link` and a served run's URL take). Returns the command; an unknown scheme or view raises SchemeError.",
        params: &[
            ("run", Help::Text("The run to show.")),
            ("scheme_a", Help::Arg("show", "scheme_a")),
            ("scheme_b", Help::Arg("show", "scheme_b")),
            ("view", Help::Arg("show", "view")),
            ("app", Help::Text("Start the app (else only print the command).")),
        ],
    },
    Item {
        name: "Run",
        signature: Signature::Written(
            "path: str\nname: str\nformat: str\nnotes: list[str]\nwarnings: list[dict[str, Any]]",
        ),
        doc: "One opened run. `warnings` holds what `vantage check` lists: each with file, line, field, message and whether the record was skipped.",
        params: &[],
    },
    Item {
        name: "Run.summary",
        signature: Signature::Written("(self) -> dict[str, Any]"),
        doc: "What `vantage check --json` says of the run (docs/JSON.md): format, summary counts, schemes supported and why others are not, audit, notes, warnings.",
        params: &[],
    },
    Item {
        name: "Run.forensics",
        signature: Signature::Declared { command: "forensics", returns: "dict[str, Any]" },
        doc: "The object `vantage forensics --json` prints, with every finding listed: `findings` (kind, train_step, group, trajectories, credit_moved, trainer_included, evidence, source), `counts` by kind, the `scheme` credit_moved is taken under, `group_size`, `notes`.",
        params: &[],
    },
    Item {
        name: "Run.label",
        signature: Signature::Written(
            "(self, name: str, value: str | float | bool | None = None, *, trajectory: str, step: int | None = None, note: str | None = None, by: str | None = None) -> str",
        ),
        doc: "Add a label (docs/LABELS.md) beside the run, never in its log, as `vantage label RUN --add NAME[=VALUE]` does; returns the labels file written. Raises VantageError for a trajectory the run does not have or a step past its end.",
        params: &[
            ("name", Help::Text("The label's name (`hack`); no `=`.")),
            ("value", Help::Text("None or True for a flag, a word (`\"high\"`) or a number (0.8).")),
            ("trajectory", Help::Arg("label", "trajectory")),
            ("step", Help::Arg("label", "step")),
            ("note", Help::Arg("label", "note")),
            ("by", Help::Arg("label", "by")),
        ],
    },
    Item {
        name: "Run.unlabel",
        signature: Signature::Written("(self, name: str, *, trajectory: str, step: int | None = None) -> str"),
        doc: "Take the labels of a name off a target, as `vantage label RUN --remove NAME` does; returns the labels file written.",
        params: &[
            ("name", Help::Arg("label", "remove")),
            ("trajectory", Help::Arg("label", "trajectory")),
            ("step", Help::Arg("label", "step")),
        ],
    },
    Item {
        name: "Run.labels",
        signature: Signature::Written("(self) -> pyarrow.Table"),
        doc: "The run's labels, whoever made them (the app, `vantage label`, an agent through `vantage mcp`, Python), one row each in the order added: name, value (as shown; empty for a flag), number (a flag 1, a word null), trajectory, step (null on a whole trajectory), source_kind, source, note, time. Labels of trajectories the run does not have, and lines of the labels file that do not read, are warned about.",
        params: &[],
    },
    Item {
        name: "Run.steps",
        signature: Signature::Written("(self, text: bool = False, labels: bool = False) -> pyarrow.Table"),
        doc: "One row per step of every trajectory, in the order of step credit: group, trajectory, step, node, train_step, kind, role, env_reward, reward, success, first_error, scores.NAME; with labels, label.NAME per label.",
        params: &[
            (
                "text",
                Help::Text(
                    "Add each step's thought, action and observation (read from the log where the run left them there).",
                ),
            ),
            (
                "labels",
                Help::Text(
                    "Add a label.NAME column per label (docs/LABELS.md): the step's value of it (its own, else its rollout's; `true` for a flag), null where it has none.",
                ),
            ),
        ],
    },
    Item {
        name: "Run.trajectories",
        signature: Signature::Written("(self) -> pyarrow.Table"),
        doc: "One row per trajectory: trajectory, group, train_step, task, reward, success, finish, steps, tokens, outcome.NAME.",
        params: &[],
    },
    Item {
        name: "Run.tokens",
        signature: Signature::Written("(self) -> pyarrow.Table"),
        doc: "One row per token, in the order of token credit: trajectory, position, mask, and each per-token column the run logs.",
        params: &[],
    },
    Item {
        name: "Run.credit",
        signature: Signature::Written(
            "(self, scheme: str, preset: str | None = None, *, tokens: bool = False, **params: float | int | bool | str) -> Credit",
        ),
        doc: "Credit under a scheme, a preset or a formula, computed as `vantage credit` computes it (the same bits).",
        params: CREDIT_PARAMS,
    },
    Item {
        name: "Credit",
        signature: Signature::Written("run: Run\nscheme: str\npreset: str | None\nparams: dict[str, str]\nlevel: str"),
        doc: "Credit on a run: one float32 per step (aligned with Run.steps()) or per token (aligned with Run.tokens()). numpy.asarray(credit) and pyarrow.table(credit) take it as they are.",
        params: &[],
    },
    Item {
        name: "Credit.to_numpy",
        signature: Signature::Written("(self) -> numpy.ndarray"),
        doc: "The values, float32 (NaN where the scheme gives none): the core's own vector, read-only and not copied (numpy.array(credit) makes a copy to write to).",
        params: &[],
    },
    Item {
        name: "Credit.table",
        signature: Signature::Written("(self) -> pyarrow.Table"),
        doc: "`vantage credit`'s rows: trajectory, group, step, node, credit (per token: trajectory, group, token, mask, credit).",
        params: &[],
    },
    Item {
        name: "Comparison",
        signature: Signature::Written(
            "a: str\nb: str\npaired: int\nspearman: float | None\nsign_disagreement: float\ndiffering: int\ndisagreements: dict[str, int]",
        ),
        doc: "Two credits compared (vantage.compare).",
        params: &[],
    },
    Item {
        name: "Comparison.top",
        signature: Signature::Written("(self, n: int = 20, offset: int = 0) -> pyarrow.Table"),
        doc: "The steps where A and B differ most: trajectory, group, step, kind, a, b, text.",
        params: &[("n", Help::Arg("compare", "limit")), ("offset", Help::Arg("compare", "offset"))],
    },
    Item {
        name: "Comparison.groups",
        signature: Signature::Written("(self, n: int = 20, offset: int = 0) -> pyarrow.Table"),
        doc: "The groups A and B disagree on most: group, steps, spearman, sign_disagreement.",
        params: &[("n", Help::Arg("compare", "limit")), ("offset", Help::Arg("compare", "offset"))],
    },
    Item {
        name: "Comparison.by_label",
        signature: Signature::Written("(self) -> list[dict[str, Any]]"),
        doc: "The comparison split by the run's labels (docs/LABELS.md), as `vantage compare --by-label --json` lists it in `by_label`: per label, and per word of a label that takes words, the steps that carry it (label, word, steps, trajectories) and what A and B give them (a and b: steps, mean, mean_abs, sum, positive), and their sign_disagreement; last, the steps with no label (label None).",
        params: &[],
    },
    Item {
        name: "Comparison.to_dict",
        signature: Signature::Written("(self, n: int = 20, offset: int = 0) -> dict[str, Any]"),
        doc: "`vantage compare --json`'s object (docs/JSON.md).",
        params: &[("n", Help::Arg("compare", "limit")), ("offset", Help::Arg("compare", "offset"))],
    },
];

/// The help of argument `id` of declaration `command` ([`super::declaration`]), as
/// `vantage --help` prints it.
pub fn arg_help(command: &str, id: &str) -> Option<String> {
    let command = super::declaration(command)?;
    let arg = command.get_arguments().find(|a| a.get_id().as_str() == id)?;
    Some(arg.get_help()?.to_string())
}

fn help_text(help: Help) -> String {
    match help {
        Help::Text(text) => text.to_owned(),
        // A missing argument is a test failure (`tests/it/python.rs`), never an empty docstring.
        Help::Arg(command, id) => {
            let text = arg_help(command, id).unwrap_or_else(|| format!("(no help for {command} {id})"));
            sentence(text)
        }
    }
}

/// `text` ending as a sentence does.
fn sentence(text: String) -> String {
    if text.ends_with(['.', ')']) { text } else { format!("{text}.") }
}

/// The arguments a [`Signature::Declared`] method takes from its command: all but the run and the
/// paging, by name.
pub fn declared_arguments(command: &clap::Command) -> Vec<(String, &clap::Arg)> {
    super::declare::arguments(command)
        .filter(|(name, _)| !matches!(name.as_str(), "path" | "limit" | "offset"))
        .collect()
}

/// An item's signature as Python writes it: its own words, or made from its command's
/// declaration.
pub fn signature(item: &Item) -> String {
    match item.signature {
        Signature::Written(text) => text.to_owned(),
        Signature::Declared { command, returns } => {
            let Some(declaration) = super::declaration(command) else {
                return format!("(self) -> {returns}");
            };
            let mut params = vec!["self".to_owned()];
            for (name, arg) in declared_arguments(&declaration) {
                let (kind, default) = super::declare::python(arg);
                params.push(match default {
                    Some(default) => format!("{name}: {kind} = {default}"),
                    None => format!("{name}: {kind}"),
                });
            }
            format!("({}) -> {returns}", params.join(", "))
        }
    }
}

/// The docstring of `name` (a function, `Class` or `Class.method`): what it does and each
/// parameter's help; `None` for a name the package does not have.
pub fn docstring(name: &str) -> Option<String> {
    let item = API.iter().find(|i| i.name == name)?;
    let mut params: Vec<(String, String)> =
        item.params.iter().map(|(param, help)| ((*param).to_owned(), help_text(*help))).collect();
    let mut doc = item.doc.to_owned();
    if let Signature::Declared { command, .. } = item.signature
        && let Some(declaration) = super::declaration(command)
    {
        doc = format!("{}\n\n{doc}", sentence(super::declare::description(&declaration)));
        for (name, arg) in declared_arguments(&declaration) {
            let help = super::declare::help(arg).unwrap_or_else(|| format!("(no help for {command} {name})"));
            params.push((name, sentence(help)));
        }
    }
    if !params.is_empty() {
        doc.push_str("\n\nArgs:");
        for (param, help) in params {
            let _ = write!(doc, "\n    {param}: {help}");
        }
    }
    Some(doc)
}

fn quoted(doc: &str, indent: &str) -> String {
    let body: Vec<String> = doc
        .replace('\\', "\\\\")
        .lines()
        .map(|l| if l.is_empty() { String::new() } else { format!("{indent}{l}") })
        .collect();
    format!("{indent}\"\"\"{}\n{indent}\"\"\"\n", body.join("\n").trim_start())
}

/// `python/vantage/__init__.pyi`: the package's type stubs (a test keeps the committed file equal).
pub fn python_stub() -> String {
    let mut out = String::from(
        "# Generated from vantage's declarations (src/api/python.rs and the commands' in src/api/): do not edit;\n\
         # tests/it/python.rs fails when it is stale; VANTAGE_BLESS=1 cargo test python_stub writes it anew.\n\
         import os\nfrom typing import Any, Hashable, Sequence\n\nimport numpy\nimport pyarrow\nfrom numpy.typing import ArrayLike\n\n\
         __version__: str\n\n\
         class VantageError(Exception):\n    \"\"\"Any error vantage reports; `file`, `line` and `field` say where, when known.\"\"\"\n\n    file: str | None\n    line: int | None\n    field: str | None\n\n\
         class LoadError(VantageError):\n    \"\"\"A run that could not be read, with the file, line and field `vantage check` names.\"\"\"\n\n\
         class RunNotFound(LoadError, FileNotFoundError):\n    \"\"\"A path that does not exist.\"\"\"\n\n\
         class SchemeError(VantageError, ValueError):\n    \"\"\"An unknown scheme or preset, or a parameter it does not take or a value out of its range.\"\"\"\n\n\
         class ShapeError(VantageError, ValueError):\n    \"\"\"Arrays whose lengths do not fit together (credit_batch).\"\"\"\n\n",
    );
    for item in API {
        let (class, method) = match item.name.split_once('.') {
            Some((class, method)) => (Some(class), Some(method)),
            None if item.name.starts_with(char::is_uppercase) => (Some(item.name), None),
            None => (None, Some(item.name)),
        };
        let doc = docstring(item.name).unwrap_or_default();
        let signature = signature(item);
        match (class, method) {
            (Some(_), None) => {
                let _ = writeln!(out, "class {}:", item.name);
                out.push_str(&quoted(&doc, "    "));
                for attribute in signature.lines() {
                    let _ = writeln!(out, "    {attribute}");
                }
            }
            (Some(_), Some(method)) => {
                let _ = writeln!(out, "    def {method}{signature}:");
                out.push_str(&quoted(&doc, "        "));
            }
            (None, Some(function)) => {
                let _ = writeln!(out, "def {function}{signature}:");
                out.push_str(&quoted(&doc, "    "));
            }
            (None, None) => {}
        }
        // A blank line after a function or a class's last method.
        let next_is_method = API
            .iter()
            .skip_while(|i| i.name != item.name)
            .nth(1)
            .is_some_and(|n| class.is_some_and(|c| n.name.starts_with(&format!("{c}."))));
        if !next_is_method {
            out.push('\n');
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// `vantage convert PATH OUT`: the line it prints.
pub fn convert(path: &Path, out: &Path, options: &OpenOptions, format: Option<&str>) -> anyhow::Result<String> {
    super::convert::convert(path, out, options, format, None)
}

/// Plain arrays for [`credit_batch`]: `rows` sequences of `length` positions each (one position
/// per sequence for per-sequence scores), row-major.
#[derive(Clone, Debug, Default)]
pub struct BatchArrays<F> {
    /// Number of sequences.
    pub rows: usize,
    /// Positions per sequence (1 for per-sequence scores).
    pub length: usize,
    /// Rewards, `rows × length`.
    pub rewards: Vec<F>,
    /// The response mask (1 where a position counts), `rows × length`; all ones when absent.
    pub mask: Option<Vec<F>>,
    /// Critic values, `rows × length`.
    pub values: Option<Vec<F>>,
    /// Policy log-probabilities, `rows × length`.
    pub logprob: Option<Vec<F>>,
    /// Reference log-probabilities, `rows × length`.
    pub ref_logprob: Option<Vec<F>>,
    /// Each sequence's group, dense from 0.
    pub group: Vec<u32>,
}

/// Why a batch cannot be computed: the arrays disagree, or the scheme or its parameters are wrong.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The arrays' lengths do not fit together.
    #[error("{0}")]
    Shape(String),
    /// An unknown scheme or preset, or a bad parameter.
    #[error("{0}")]
    Scheme(String),
}

/// A scheme's advantages on plain arrays (`rows × length`, row-major), as its kernel computes them
/// in `vantage credit` and the trainers' golden tests: the KL taken into the reward where the
/// parameters ask for it, then the kernel.
pub fn credit_batch<F: crate::credit::KernelFloat>(
    arrays: BatchArrays<F>,
    scheme: &str,
    preset: Option<&str>,
    sets: &[(String, String)],
) -> Result<Vec<F>, BatchError> {
    let BatchArrays { rows, length, rewards, mask, values, logprob, ref_logprob, group } = arrays;
    let positions = rows.checked_mul(length).ok_or_else(|| BatchError::Shape("the batch is too large".to_owned()))?;
    if rewards.len() != positions {
        return Err(BatchError::Shape(format!("rewards hold {} values, not {rows} × {length}", rewards.len())));
    }
    for (name, column) in
        [("mask", &mask), ("values", &values), ("log_probs", &logprob), ("ref_log_probs", &ref_logprob)]
    {
        if let Some(column) = column.as_ref().filter(|c| c.len() != positions) {
            return Err(BatchError::Shape(format!("{name} holds {} values, rewards {positions}", column.len())));
        }
    }
    if group.len() != rows {
        return Err(BatchError::Shape(format!("{} group ids for {rows} sequences", group.len())));
    }
    let scheme = crate::credit::scheme(scheme).map_err(|e| BatchError::Scheme(format!("{e:#}")))?;
    let Some(kernel) = scheme.token_kernel() else {
        return Err(BatchError::Scheme(format!(
            "{} credits steps of a run (it needs {}), not plain arrays: open the run and use Run.credit",
            scheme.info().id,
            scheme.info().needs
        )));
    };
    let params =
        crate::credit::Params::resolve(scheme, preset, sets).map_err(|e| BatchError::Scheme(format!("{e:#}")))?;
    let num_groups = group.iter().max().map_or(0, |&g| g as usize + 1);
    let mut batch = crate::credit::Batch {
        offsets: (0..=rows).map(|r| r * length).collect(),
        reward: Some(rewards),
        row_score: None,
        mask,
        group,
        num_groups,
        values: values.map(Into::into),
        logprob,
        ref_logprob,
        sum_pi_squared: None,
        reward_baseline: None,
        rollout_is_weights: None,
        skip_returns: true,
        max_length: None,
        components: Vec::new(),
        component_weights: Vec::new(),
        tree: Vec::new(),
        group_step: Vec::new(),
    };
    crate::credit::prepare_batch(&mut batch, &kernel.preparation(&params)).map_err(BatchError::Scheme)?;
    let mut output = F::run(kernel, &batch, &params).map_err(|e| BatchError::Scheme(format!("{e:#}")))?;
    Ok(std::mem::take(&mut output.advantages))
}

/// The deep link (a URL fragment without `#`, as the app's "Copy link" writes it and `--link`
/// reads it) that opens schemes `a` and `b` (ids, `expr:…` or `formula:…`) in `view`, on the run
/// at `run_url` when given (a run `vantage serve` lists, or a URL the web build fetches).
pub fn deep_link(
    run_url: Option<&str>,
    a: Option<&str>,
    b: Option<&str>,
    view: Option<&str>,
) -> Result<String, String> {
    let saved = super::saved_formulas();
    let choice = |name: Option<&str>| name.map(|n| super::scheme_choice(n, &saved)).transpose();
    let view = view.map(super::view).transpose()?;
    let link = crate::app::deeplink::DeepLink {
        run_url: run_url.map(str::to_owned),
        scheme_a: choice(a)?,
        scheme_b: choice(b)?,
        tab: view.map(|(tab, _)| tab),
        graph: view.is_some_and(|(_, graph)| graph),
        ..Default::default()
    };
    Ok(link.to_fragment())
}
