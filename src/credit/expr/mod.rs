//! Credit formulas: a small typed language in which a researcher writes a credit scheme
//! (docs/EXPRESSIONS.md). A formula is parsed once ([`syntax`], with winnow), checked against a
//! run's columns ([`check`]: names, types, and the level each value lives at) and evaluated
//! column-wise over the whole run ([`eval`]), to one credit per path step (or per token).
//!
//! Values live at a level: a constant, one per trajectory (`R`, `success`), one per path step
//! (`prm`, `role`, `t`) or one per token (`logprob`). An operation on values of two levels
//! broadcasts the coarser one (a trajectory's outcome to each of its steps). A missing value is
//! `NaN`: arithmetic carries it, reductions leave it out.

pub mod builtins;
pub mod check;
pub mod eval;
pub mod nodes;
pub mod syntax;

use crate::credit::Credit;
use crate::model::Run;

pub use nodes::{Compiled, Level, Ty};
pub use syntax::{ParamDef, Span, SyntaxError};

/// The prefix that makes a `--scheme` argument a formula: `expr:(R - mean(R, group))`.
pub const EXPR_PREFIX: &str = "expr:";

/// The prefix that names a built-in or saved formula: `formula:grpo`, `formula:my_scheme`.
pub const NAMED_PREFIX: &str = "formula:";

/// The formula a scheme name stands for: the text of `expr:TEXT`, or of `formula:NAME` (a built-in
/// scheme written as a formula, else the one of `saved`, (name, text) pairs, with that name);
/// `None` for any other name (a registry id); `Some(Err(name))` when no formula has that name.
pub fn named_formula<'s>(
    id: &'s str,
    saved: impl IntoIterator<Item = (&'s str, &'s str)>,
) -> Option<Result<&'s str, &'s str>> {
    if let Some(text) = id.strip_prefix(EXPR_PREFIX) {
        return Some(Ok(text));
    }
    let name = id.strip_prefix(NAMED_PREFIX)?;
    let builtin = builtins::builtin(name).map(|b| b.text);
    Some(builtin.or_else(|| saved.into_iter().find(|(n, _)| *n == name).map(|(_, t)| t)).ok_or(name))
}

/// A formula's title: the text of its first comment line.
pub fn title(text: &str) -> Option<&str> {
    text.lines().find_map(|l| l.trim().strip_prefix('#')).map(str::trim)
}

/// A formula's error, with where in the formula it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct FormulaError {
    /// The formula's text.
    pub text: String,
    /// The part of the formula at fault (a byte range).
    pub span: Span,
    /// The part, as written (`prm`), when it is a name or a call.
    pub what: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl FormulaError {
    /// Where the error starts, as people count: `14` (the 14th character) in a one-line formula,
    /// `2:5` (line 2, character 5) in one of several lines.
    pub fn place(&self) -> String {
        let before = self.text.get(..self.span.start.min(self.text.len())).unwrap_or("");
        let line = before.matches('\n').count();
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        if self.text.trim_end().contains('\n') { format!("{}:{column}", line + 1) } else { column.to_string() }
    }

    fn render(&self) -> String {
        match &self.what {
            Some(what) => format!("`{what}` at {}: {}", self.place(), self.message),
            None => format!("at {}: {}", self.place(), self.message),
        }
    }
}

/// A parsed formula, before it meets a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Formula {
    /// The text.
    pub text: String,
    /// The syntax tree.
    pub program: syntax::Program,
}

impl Formula {
    /// Parses `text` (syntax only: names are checked against a run by [`Self::compile`]).
    pub fn parse(text: &str) -> Result<Self, FormulaError> {
        let program = syntax::parse(text).map_err(|e| FormulaError {
            text: text.to_owned(),
            span: e.span,
            what: None,
            message: e.message,
        })?;
        Ok(Self { text: text.to_owned(), program })
    }

    /// The parameters (`$w = 0.3`), in the order written.
    pub fn params(&self) -> Vec<&ParamDef> {
        self.program
            .statements
            .iter()
            .filter_map(|s| match s {
                syntax::Statement::Param(p) => Some(p),
                syntax::Statement::Let { .. } => None,
            })
            .collect()
    }

    /// The text with parameter `name` set to `value` (what a slider does), or `None` if the
    /// formula has no such parameter.
    pub fn with_param(&self, name: &str, value: f64) -> Option<String> {
        let param = self.params().into_iter().find(|p| p.name == name)?;
        let mut text = self.text.clone();
        text.replace_range(param.value_span.clone(), &format_number(value));
        Some(text)
    }

    /// Why its credit depends on the groups of other training steps, in words, or `None` when
    /// each trajectory's credit depends on its own training step only (so that credit computed
    /// one partition at a time equals the whole run's): a reduction or a whitening over `batch`,
    /// or another scheme's credit that normalizes over the batch.
    pub fn batch_wide(&self) -> Option<String> {
        fn walk(expr: &syntax::Expr) -> Option<String> {
            match &expr.kind {
                syntax::ExprKind::Unary(_, x) => walk(x),
                syntax::ExprKind::Binary(_, a, b) => walk(a).or_else(|| walk(b)),
                syntax::ExprKind::Call { name, args, .. } => {
                    let positional: Vec<&syntax::Expr> =
                        args.iter().filter(|a| a.name.is_none()).map(|a| &a.value).collect();
                    let is_batch = |e: &&syntax::Expr| matches!(&e.kind, syntax::ExprKind::Name(n) if n == "batch");
                    if name == "whiten" && positional.get(1).is_none_or(is_batch) {
                        return Some("whitens over the batch (whiten)".to_owned());
                    }
                    if name != "whiten" && positional.get(1).is_some_and(is_batch) {
                        return Some(format!("reduces over the batch ({name}(…, batch))"));
                    }
                    if name == "credit"
                        && let Some(syntax::ExprKind::Str(id)) = positional.first().map(|e| &e.kind)
                    {
                        let (id, preset) = id.split_once(':').map_or((id.as_str(), None), |(i, p)| (i, Some(p)));
                        if let Ok(scheme) = crate::credit::scheme(id)
                            && let Some(why) = crate::credit::scheme::batch_wide_under(scheme, preset)
                        {
                            return Some(format!("reads credit(\"{id}\"), which {why}"));
                        }
                    }
                    args.iter().find_map(|a| walk(&a.value))
                }
                syntax::ExprKind::Num(_)
                | syntax::ExprKind::Str(_)
                | syntax::ExprKind::Name(_)
                | syntax::ExprKind::Param(_) => None,
            }
        }
        self.program
            .statements
            .iter()
            .find_map(|s| match s {
                syntax::Statement::Let { value, .. } => walk(value),
                syntax::Statement::Param(_) => None,
            })
            .or_else(|| walk(&self.program.body))
    }

    /// Checks the formula against `run`: every name it uses, the types and levels.
    pub fn compile(&self, run: &Run) -> Result<Compiled, FormulaError> {
        check::compile(self, run)
    }

    /// Compiles and evaluates on `run`: credit per path step (and per token when the formula
    /// reads token columns).
    pub fn credit(&self, run: &Run) -> Result<Credit, FormulaError> {
        let compiled = self.compile(run)?;
        eval::evaluate(&compiled, run).map_err(|(span, message)| self.error(span, message))
    }

    pub(crate) fn error(&self, span: Span, message: String) -> FormulaError {
        FormulaError { text: self.text.clone(), span, what: None, message }
    }
}

/// A number as a formula writes it: the shortest text that reads back to it.
pub fn format_number(value: f64) -> String {
    let text = format!("{value}");
    if text.contains('e') || text.len() <= 12 { text } else { format!("{value:.6}").trim_end_matches('0').to_owned() }
}
