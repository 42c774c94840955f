//! Credit schemes: one file per scheme, listed once in [`SCHEMES`].
//!
//! A scheme describes itself ([`SchemeInfo`]), its parameters ([`ParamSpec`]), what it needs from a
//! run ([`Scheme::supports`]) and computes credit as a pure, deterministic function of the run and
//! the parameter values. Credit is aligned with trajectory paths: `Credit::step[k]` belongs to
//! `run.trajectories.path_nodes[k]`.

use std::collections::BTreeMap;

use crate::model::Run;

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

/// What kind of value a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// A real number in `[min, max]`.
    Float {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// An integer in `[min, max]`.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// On or off.
    Bool,
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
}

/// A parameter descriptor: the CLI `--set`, the UI sliders and docs/SCHEMES.md all come from it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    /// Name used in `--set name=value`.
    pub name: &'static str,
    /// Type and range.
    pub kind: ParamKind,
    /// Default value, as text.
    pub default: &'static str,
    /// One sentence on what it does.
    pub doc: &'static str,
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
    /// Whether the formula comes from code or is approximate.
    pub source: SourceQuality,
}

/// Whether a run has what a scheme needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    /// The scheme can run.
    Yes,
    /// It cannot, and why ("needs step scores `prm`").
    No(String),
}

/// Parameter values by name, as text until a scheme parses them.
pub type ParamValues = BTreeMap<String, String>;

/// Credit computed by a scheme.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Credit {
    /// One value per entry of `run.trajectories.path_nodes`.
    pub step: Vec<f32>,
    /// One value per token, for token-level schemes.
    pub token: Option<Vec<f32>>,
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
}

/// A credit-assignment scheme.
pub trait Scheme: Sync {
    /// Who it is.
    fn info(&self) -> &SchemeInfo;

    /// Its parameters.
    fn params(&self) -> &[ParamSpec];

    /// Whether `run` has what it needs.
    fn supports(&self, run: &Run) -> Support;

    /// Computes credit; pure and deterministic.
    fn compute(&self, run: &Run, params: &ParamValues) -> Result<Credit, CreditError>;
}

/// Every scheme, listed once. A new scheme is a new file plus one line here.
pub static SCHEMES: &[&dyn Scheme] = &[];

/// The scheme with registry id `id`.
pub fn scheme(id: &str) -> Result<&'static dyn Scheme, CreditError> {
    SCHEMES.iter().copied().find(|s| s.info().id == id).ok_or_else(|| CreditError::UnknownScheme(id.to_owned()))
}

/// Each scheme with whether `run` supports it.
pub fn support_table(run: &Run) -> Vec<(&'static SchemeInfo, Support)> {
    SCHEMES.iter().map(|s| (s.info(), s.supports(run))).collect()
}
