//! Credit schemes: one file per scheme in [`schemes`], listed once in [`SCHEMES`]; what they
//! compute with in [`engine`] (batches, run inputs, sums and moments, whitening, parts on
//! threads) and [`kernels`] (maths several schemes share, which never reads the run's model).
//!
//! A scheme describes itself ([`SchemeInfo`]), its parameters ([`ParamSpec`]) and presets
//! ([`Preset`]: `verl`, `trl`, `openrlhf`), says whether a run has what it needs
//! ([`Scheme::supports`]), and computes credit as a pure, deterministic function of the run and the
//! parameter values. Step credit is aligned with trajectory paths: `Credit::step[k]` belongs to
//! `run.trajectories.path_nodes[k]`; token credit, where there is any, to the run's token columns.

pub mod data;
pub mod engine;
pub mod expr;
pub mod kernels;
pub mod listing;
pub mod params;
pub mod scheme;
pub mod schemes;

pub use data::batch::{Batch, Output};
pub use data::real::Real;
pub use engine::inputs::{Level, Preparation, SCORE_NAMES, batch_from_run, prepare_batch, step_token_range};
pub use kernels::kl::{KlMode, kl_in_reward, kl_penalty};
pub use params::{ParamKind, ParamSpec, ParamValue, Params, Preset};
pub use scheme::{Declaration, KernelFloat, Scheme, TokenKernel, Typed};
pub use schemes::SCHEMES;

use crate::model::Run;
use data::pool;

/// Where a scheme's formula comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceQuality {
    /// Transcribed from a trainer's code (`repo@commit`).
    FromCode(&'static str),
    /// Reconstructed from a paper; shown as "approximate".
    Approximate(&'static str),
}

/// Scheme families, as the survey sorts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// Outcome-only, group-relative or baseline estimators.
    Outcome,
    /// Token-level estimators with a critic or per-token rewards.
    Token,
    /// Process reward (step scores).
    Process,
    /// Role-typed credit.
    Role,
    /// Tree and Monte-Carlo credit.
    Tree,
    /// Mixtures of process and outcome credit.
    Hybrid,
    /// Bonuses, penalties and null controls.
    Control,
}

/// Who a scheme is, for listings.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemeInfo {
    /// Registry id (`snake_case`; verl's registry name where it has one).
    pub id: &'static str,
    /// Family.
    pub family: Family,
    /// Display name.
    pub display_name: &'static str,
    /// Citation (paper, and the code it follows).
    pub citation: &'static str,
    /// What a run must log for it, in words (`supports` gives the reason for a given run).
    pub needs: &'static str,
    /// Whether the formula comes from code or is approximate.
    pub source: SourceQuality,
    /// What its numbers were checked against (docs/SCHEMES.md says it for each scheme).
    pub checked: &'static str,
}

/// The verl snapshot the outcome estimators follow.
pub const VERL_AT: &str = "volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7";
/// The TRL snapshot.
pub const TRL_AT: &str = "huggingface/trl@f2cd57710ae345ea6428ae95363267fcf38a3dc8";
/// The OpenRLHF snapshot.
pub const OPENRLHF_AT: &str = "OpenRLHF/OpenRLHF@3c3be6234e0cb353e76bb8019947db9dfe99fca7";

/// Whether a run has what a scheme needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    /// The scheme can run.
    Yes,
    /// It cannot, and why ("needs token values").
    No(String),
}

impl Support {
    /// `Yes` when the run `has` it, else `No` saying what it `needs`.
    pub fn when(has: bool, needs: &str) -> Self {
        if has { Self::Yes } else { Self::No(needs.to_owned()) }
    }

    /// This, and where it is `Yes`, `next` too: the first reason a run falls short.
    #[must_use]
    pub fn and(self, next: impl FnOnce() -> Self) -> Self {
        match self {
            Self::Yes => next(),
            no @ Self::No(_) => no,
        }
    }
}

/// Parameter values by name, as text (the CLI's `--set`).
pub type ParamValues = Vec<(String, String)>;

/// Writes `values` (as `f32`, as many as fit) into `slot` when there is one: one row or one path
/// step of explanation terms.
#[inline]
pub(crate) fn store(slot: Option<&mut [f32]>, values: &[f64]) {
    for (s, &v) in slot.into_iter().flatten().zip(values) {
        *s = v as f32;
    }
}

/// The most path steps a scheme keeps values per step for ([`Terms::with_step_values`]): at four
/// values a step, 64 MiB.
pub const STEP_VALUES_LIMIT: usize = 1 << 22;

/// The terms that explain each row's credit: a formula and named values per row. A row is a
/// trajectory, or a path step where `per_step` (a formula's named terms). A scheme whose per-row
/// terms cannot reproduce each step's number also keeps a few values per path step (a tree
/// node's value and its parent's) in `step_names` / `step_values`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Terms {
    /// The formula in words, e.g. `(r − mean)/(std + ε)`.
    pub formula: String,
    /// Term names, e.g. `["r", "mean", "std", "ε"]`.
    pub names: Vec<std::borrow::Cow<'static, str>>,
    /// Row-major values: row `i` has `values[i * names.len()..(i + 1) * names.len()]`.
    pub values: Vec<f32>,
    /// Rows are path steps (positions in `run.trajectories.path_nodes`), not trajectories.
    pub per_step: bool,
    /// Names of the values kept per path step besides the rows' (none for most schemes).
    pub step_names: Vec<std::borrow::Cow<'static, str>>,
    /// Path-step-major values: step `p` has `step_values[p * step_names.len()..][..step_names.len()]`.
    pub step_values: Vec<f32>,
}

impl Terms {
    /// Empty terms with a formula and names.
    pub fn new(formula: impl Into<String>, names: &[&'static str]) -> Self {
        Self::for_rows(formula, names, 0)
    }

    /// Terms for `rows` rows, all zero until [`Self::set`].
    pub fn for_rows(formula: impl Into<String>, names: &[&'static str], rows: usize) -> Self {
        let names = names.iter().map(|&n| std::borrow::Cow::Borrowed(n)).collect::<Vec<_>>();
        let values = pool::zeroed(rows * names.len());
        Self {
            formula: formula.into(),
            names,
            values,
            per_step: false,
            step_names: Vec::new(),
            step_values: Vec::new(),
        }
    }

    /// Keeps the values `names` for each of `steps` path steps too, all zero until
    /// [`Self::set_step`]; on a run of more than [`STEP_VALUES_LIMIT`] steps none are kept (they
    /// would cost several times the credit's own memory), and the rows' terms are all there is.
    pub fn with_step_values(mut self, names: &[&'static str], steps: usize) -> Self {
        if steps <= STEP_VALUES_LIMIT {
            self.step_names = names.iter().map(|&n| std::borrow::Cow::Borrowed(n)).collect();
            self.step_values = pool::zeroed(steps * names.len());
        }
        self
    }

    /// Sets term `name` of every row to `value` (a batch-wide term, known once all rows are).
    pub fn fill(&mut self, name: &str, value: f64) {
        let width = self.names.len();
        if let Some(j) = self.names.iter().position(|n| n == name) {
            for row in self.values.chunks_exact_mut(width) {
                row[j] = value as f32;
            }
        }
    }

    /// Sets the values of path step `p` (as many as `step_names`).
    pub fn set_step(&mut self, p: usize, values: &[f64]) {
        let n = self.step_names.len();
        store(self.step_values.get_mut(p * n..(p + 1) * n), values);
    }

    /// Appends one row's values (as many as names).
    pub fn push(&mut self, values: &[f64]) {
        self.values.extend(values.iter().map(|&v| v as f32));
    }

    /// Sets row `i` (as many values as names) of terms made with [`Self::for_rows`].
    pub fn set(&mut self, i: usize, values: &[f64]) {
        let n = self.names.len();
        store(self.values.get_mut(i * n..(i + 1) * n), values);
    }

    /// The named values of row `i`.
    pub fn row(&self, i: usize) -> Vec<(&str, f64)> {
        let n = self.names.len();
        let Some(values) = self.values.get(i * n..(i + 1) * n) else { return Vec::new() };
        self.names.iter().map(|n| &**n).zip(values.iter().map(|&v| f64::from(v))).collect()
    }

    /// The named values explaining the credit of path step `position` on trajectory `row`: the
    /// row's, then the step's own.
    pub fn for_step(&self, row: usize, position: usize) -> Vec<(&str, f64)> {
        let mut terms = self.row(if self.per_step { position } else { row });
        let n = self.step_names.len();
        if let Some(values) = self.step_values.get(position * n..(position + 1) * n) {
            terms.extend(self.step_names.iter().map(|n| &**n).zip(values.iter().map(|&v| f64::from(v))));
        }
        terms
    }
}

/// Credit computed by a scheme.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Credit {
    /// One value per entry of `run.trajectories.path_nodes` (`NaN` where the scheme gives none).
    pub step: Vec<f32>,
    /// One value per token, for token-level computations.
    pub token: Option<Vec<f32>>,
    /// Returns per token (GAE, REINFORCE++, …), where they differ from the advantages.
    pub token_returns: Option<Vec<f32>>,
    /// Per-trajectory explanation.
    pub terms: Terms,
    /// Whether it was computed per token or per step.
    pub level: Option<Level>,
}

impl Drop for Credit {
    fn drop(&mut self) {
        pool::give(std::mem::take(&mut self.step));
        if let Some(token) = self.token.take() {
            pool::give(token);
        }
        if let Some(returns) = self.token_returns.take() {
            pool::give(returns);
        }
        pool::give(std::mem::take(&mut self.terms.values));
        pool::give(std::mem::take(&mut self.terms.step_values));
    }
}

/// Why credit could not be computed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CreditError {
    /// No scheme with this id.
    #[error("unknown scheme {0:?} (see `vantage schemes`)")]
    UnknownScheme(String),
    /// The scheme has no such parameter.
    #[error("scheme {scheme}: unknown parameter {name:?}")]
    UnknownParam {
        /// Scheme id.
        scheme: String,
        /// Parameter name.
        name: String,
    },
    /// The scheme has no such preset.
    #[error("scheme {scheme}: unknown preset {preset:?} (has: {known})")]
    UnknownPreset {
        /// Scheme id.
        scheme: String,
        /// Preset name.
        preset: String,
        /// The presets it has.
        known: String,
    },
    /// A value is out of range or of the wrong type.
    #[error("scheme {scheme}: parameter {name}={value}: {reason}")]
    BadValue {
        /// Scheme id.
        scheme: String,
        /// Parameter name.
        name: String,
        /// The value given.
        value: String,
        /// What is wrong.
        reason: String,
    },
    /// The run lacks what the scheme needs.
    #[error("scheme {scheme} is not supported by this run: {reason}")]
    Unsupported {
        /// Scheme id.
        scheme: String,
        /// Why.
        reason: String,
    },
    /// The computation itself refuses these inputs, as the trainer would.
    #[error("scheme {scheme}: {reason}")]
    Failed {
        /// Scheme id.
        scheme: String,
        /// Why.
        reason: String,
    },
}

/// The scheme with registry id `id`.
pub fn scheme(id: &str) -> Result<&'static dyn Scheme, CreditError> {
    SCHEMES.iter().copied().find(|s| s.info().id == id).ok_or_else(|| CreditError::UnknownScheme(id.to_owned()))
}

/// Each scheme with whether `run` supports it.
pub fn support_table(run: &Run) -> Vec<(&'static SchemeInfo, Support)> {
    SCHEMES.iter().map(|s| (s.info(), s.supports(run))).collect()
}

/// Each scheme `run` supports, with its credit under its defaults and the values per path step its
/// terms need ([`Scheme::compute_explained`]): the list a step's every credit is read from (the
/// step inspector, `vantage step`).
pub fn explained_under_defaults(
    run: &Run,
) -> impl Iterator<Item = (&'static dyn Scheme, Result<Credit, CreditError>)> + '_ {
    SCHEMES
        .iter()
        .copied()
        .filter(|s| matches!(s.supports(run), Support::Yes))
        .map(|s| (s, s.compute_explained(run, &Params::defaults(s))))
}

/// The token-level credit of scheme `base` under its defaults (per token where it has a `level`),
/// for a scheme `own` that reweights another's token credit (`entropy_mask`, `fipo`); its token
/// column is there, else the error says why.
pub fn base_token_credit(run: &Run, base: &str, own: &str) -> Result<Credit, CreditError> {
    let failed = |reason: String| CreditError::Failed { scheme: own.to_owned(), reason };
    if base == own {
        return Err(failed(format!("base: a scheme other than {own} itself")));
    }
    let scheme = scheme(base).map_err(|e| failed(format!("base: {e}")))?;
    let sets = vec![("level".to_owned(), "token".to_owned())];
    let sets = if scheme.params().iter().any(|p| p.name == "level") { sets } else { Vec::new() };
    let credit = compute(scheme, run, None, &sets)?;
    if credit.token.is_none() {
        return Err(failed(format!("base: {base} gives no token-level credit")));
    }
    Ok(credit)
}

/// Resolves parameters and computes, checking support first: the one entry point the CLI and app use.
pub fn compute(
    scheme: &dyn Scheme,
    run: &Run,
    preset: Option<&str>,
    sets: &ParamValues,
) -> Result<Credit, CreditError> {
    let params = Params::resolve(scheme, preset, sets)?;
    if let Support::No(reason) = scheme.supports(run) {
        return Err(CreditError::Unsupported { scheme: scheme.info().id.to_owned(), reason });
    }
    scheme.compute(run, &params)
}
