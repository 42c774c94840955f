//! Built-in schemes written as formulas: each one's text, and the scheme and settings it equals
//! (tests/it/formulas.rs checks that it does, on every sample run). They are the examples of
//! docs/EXPRESSIONS.md and the app lists them beside the formulas a user saves.

/// A built-in scheme written as a formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinFormula {
    /// A short name (`grpo`).
    pub name: &'static str,
    /// What it is.
    pub title: &'static str,
    /// The scheme it equals, and the parameter values it equals it under.
    pub scheme: &'static str,
    /// Those values (`name=value`), on top of the scheme's defaults.
    pub settings: &'static [(&'static str, &'static str)],
    /// The formula.
    pub text: &'static str,
}

/// GRPO as verl computes it: `(R − mean)/(std + 1e-6)` with the unbiased std over the group's
/// scored rollouts, and verl's rule for a group of one (mean 0, std 1).
pub const GRPO: &str = "\
# GRPO (verl): the outcome normalized within its group
let n = count(R, group)
if(n == 1, R / (1 + 1e-6), (R - mean(R, group)) / (std(R, group, unbiased) + 1e-6))";

/// The built-ins, as formulas.
pub const BUILTINS: &[BuiltinFormula] = &[
    BuiltinFormula {
        name: "grpo",
        title: "GRPO, as verl computes it",
        scheme: "grpo",
        settings: &[("level", "step")],
        text: GRPO,
    },
    BuiltinFormula {
        name: "dr_grpo",
        title: "Dr.GRPO: GRPO without the division by the std",
        scheme: "grpo",
        settings: &[("level", "step"), ("norm_by_std", "false")],
        text: "\
# Dr.GRPO: the outcome minus its group's mean (a group of one keeps R, as verl)
if(count(R, group) == 1, R, R - mean(R, group))",
    },
    BuiltinFormula {
        name: "rloo",
        title: "RLOO: the outcome minus the mean of the others in its group",
        scheme: "rloo",
        settings: &[("level", "step")],
        text: "\
# RLOO (verl): r·n/(n−1) − mean·n/(n−1); a group of one keeps R
let n = count(R, group)
if(n == 1, R, R * n / (n - 1) - mean(R, group) * n / (n - 1))",
    },
    BuiltinFormula {
        name: "deepseekmath_process",
        title: "DeepSeekMath process supervision: group-normalized step scores summed from each step on",
        scheme: "prm_process",
        settings: &[],
        text: "\
# DeepSeekMath §4.1.3: normalize the step scores over the group, credit each step with the sum
# from it to the end; fewer than two scores in the group: mean 0, std 1
let p = prm
let z = if(count(p, group) < 2, p / (1 + 1e-6), (p - mean(p, group)) / (std(p, group) + 1e-6))
if(count(p, trajectory) == 0, nan, revcumsum(coalesce(z, 0)))",
    },
    BuiltinFormula {
        name: "treeps_rag",
        title: "TreePS-RAG: a step's value (mean outcome below it) minus its parent's",
        scheme: "treeps_rag",
        settings: &[],
        text: "\
# TreePS-RAG: V(step) − V(parent), V the mean outcome of the rollouts below a node
value(node) - value(parent)",
    },
    BuiltinFormula {
        name: "triage",
        title: "TRIAGE: the GRPO advantage plus a role constant, whitened over the batch",
        scheme: "triage",
        settings: &[],
        text: "\
# TRIAGE: A + w·c(role), whitened over every step of the batch (population std, ε = 1e-8)
$w = 0.5 in [0, 2]
let A = if(count(R, group) == 1, R / (1 + 1e-6), (R - mean(R, group)) / (std(R, group) + 1e-6))
let c = if(role == \"progress\", 1,
        if(role == \"exploration\", 0.5,
        if(role == \"infrastructure\", -0.1,
        if(role == \"regression\", -0.5, 0))))
whiten(A + $w * c, batch, biased)",
    },
];

/// The built-in formula named `name`.
pub fn builtin(name: &str) -> Option<&'static BuiltinFormula> {
    BUILTINS.iter().find(|b| b.name == name)
}
