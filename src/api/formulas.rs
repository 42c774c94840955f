//! What `vantage credit` computes: a built-in scheme under its preset and parameters, or a
//! credit formula (docs/EXPRESSIONS.md) given inline (`expr:…`), in a file (`--scheme-file`), or
//! by name (`formula:NAME`: a built-in scheme written as a formula, or one saved in the formulas
//! folder, which `vantage schemes` lists).

use std::fmt::Write as _;

use crate::credit::expr::builtins::BUILTINS;
use crate::credit::expr::{EXPR_PREFIX, Formula, named_formula};
use crate::credit::{self, Credit, ParamValues, Params, Scheme};
use crate::model::Run;

/// A built-in scheme with its parameters, or a formula.
pub enum Computation<'a> {
    /// A scheme of the registry.
    Scheme {
        /// The scheme.
        scheme: &'static dyn Scheme,
        /// Its parameters, resolved.
        params: Params,
        /// Its preset.
        preset: Option<&'a str>,
        /// The values set on top of it.
        sets: ParamValues,
    },
    /// A formula.
    Formula {
        /// How it was named (`formula`, `formula:grpo`).
        name: String,
        /// The formula, its parameters set.
        formula: Formula,
    },
}

/// `vantage schemes`' list of formulas: the built-ins written as formulas and the saved ones.
pub fn listing() -> String {
    let mut out = String::from(
        "\nFormulas (docs/EXPRESSIONS.md; --scheme formula:NAME, --scheme 'expr:…', --scheme-file FILE)\n",
    );
    for b in BUILTINS {
        let _ = writeln!(out, "  formula:{:<22} {} (equals {})", b.name, b.title, b.scheme);
    }
    let dir = crate::source::disk::formulas_dir().map_or_else(|| "no folder".to_owned(), |d| d.display().to_string());
    let saved = crate::source::disk::saved_formulas();
    if saved.is_empty() {
        let _ = writeln!(out, "  saved ({dir}): none");
    } else {
        let _ = writeln!(out, "  saved ({dir}):");
        for (name, text) in saved {
            let _ = writeln!(out, "  formula:{name:<22} {}", crate::credit::expr::title(&text).unwrap_or(""));
        }
    }
    out
}

impl<'a> Computation<'a> {
    /// Resolves `--scheme` (with `--preset` and `--set`).
    pub fn resolve(id: &str, preset: Option<&'a str>, sets: ParamValues) -> anyhow::Result<Self> {
        let saved = crate::source::disk::saved_formulas();
        let text = match named_formula(id, saved.iter().map(|(n, t)| (n.as_str(), t.as_str()))) {
            Some(Ok(text)) => text,
            Some(Err(name)) => anyhow::bail!("no formula named {name} (see `vantage schemes`)"),
            None => {
                let scheme = credit::scheme(id)?;
                let params = Params::resolve(scheme, preset, &sets)?;
                return Ok(Self::Scheme { scheme, params, preset, sets });
            }
        };
        let name = if id.starts_with(EXPR_PREFIX) { "formula".to_owned() } else { id.to_owned() };
        if preset.is_some() {
            anyhow::bail!("--preset is for built-in schemes; a formula is computed as written");
        }
        let mut formula = Formula::parse(text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        for (param, value) in sets {
            let number: f64 = value.parse().map_err(|e| anyhow::anyhow!("--set {param}={value}: {e}"))?;
            let Some(text) = formula.with_param(&param, number) else {
                let has: Vec<String> = formula.params().iter().map(|p| format!("${}", p.name)).collect();
                let has = if has.is_empty() { "none".to_owned() } else { has.join(", ") };
                anyhow::bail!("--set {param}: the formula has no parameter ${param} (it has {has})");
            };
            formula = Formula::parse(&text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        }
        Ok(Self::Formula { name, formula })
    }

    /// The scheme's id, or the formula's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Scheme { scheme, .. } => scheme.info().id,
            Self::Formula { name, .. } => name,
        }
    }

    /// Why its credit depends on more than one training step's groups, if it does.
    pub fn batch_wide(&self) -> Option<String> {
        match self {
            Self::Scheme { scheme, params, .. } => scheme.batch_wide(params).map(str::to_owned),
            Self::Formula { formula, .. } => formula.batch_wide(),
        }
    }

    /// Computes on `run`.
    pub fn compute(&self, run: &Run) -> anyhow::Result<Credit> {
        match self {
            Self::Scheme { scheme, preset, sets, .. } => Ok(credit::compute(*scheme, run, *preset, sets)?),
            Self::Formula { name, formula } => formula.credit(run).map_err(|e| anyhow::anyhow!("{name}: {e}")),
        }
    }
}
