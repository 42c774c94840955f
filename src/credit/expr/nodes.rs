//! What a checked formula is made of: the checked operations and values ([`Node`], [`Op`]), their
//! types and levels, the columns and scopes they read, and the arithmetic on numbers both the
//! checker (folding constants) and the evaluator (every column) do, so that the two compute the
//! same bits. The checker makes these, the evaluator runs them; neither imports the other.

use crate::credit::Scheme;
use crate::model::Sym;

use super::syntax::{BinOp, Span};

/// Where a value lives: one for the run, one per trajectory, per path step, or per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// One value.
    Const,
    /// One per trajectory.
    Traj,
    /// One per path step (aligned with `run.trajectories.path_nodes`).
    Step,
    /// One per token (aligned with the run's token columns).
    Token,
}

/// What a value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A number.
    Num,
    /// A condition (true 1, false 0; `NaN` when unknown). It counts as 0/1 in arithmetic.
    Bool,
    /// A label (a role, a step kind, a finish reason): compared with a string only.
    Label,
}

impl Ty {
    pub(super) fn word(self) -> &'static str {
        match self {
            Self::Num => "a number",
            Self::Bool => "a condition",
            Self::Label => "a label",
        }
    }
}

/// A column of the run a formula reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// The outcome reward `R`.
    Reward,
    /// The success flag.
    Success,
    /// A named outcome component.
    Component(String),
    /// Number of steps on the trajectory.
    NumSteps,
    /// The group's training step.
    TrainStep,
    /// The step's index along its trajectory, from 0.
    StepIndex,
    /// The node's depth in its tree (1 for a child of the prompt).
    Depth,
    /// The environment's reward for the step.
    EnvReward,
    /// A named step score.
    Score(String),
    /// Monte-Carlo mean outcome of continuations from the step.
    McMean,
    /// Monte-Carlo continuation count.
    McN,
    /// The step is labelled as its solution's first error.
    FirstError,
    /// The step comes before its trajectory's first error (every step, when there is none).
    BeforeError,
    /// The trajectory has a step labelled as its first error.
    HasError,
    /// The step's action was invalid.
    InvalidAction,
    /// Whether the step carries a label (its own, or its rollout's; docs/LABELS.md).
    Label(String),
    /// A label's value at the step as a number (a flag 1, a word `nan`), `nan` where it has none.
    LabelValue(String),
    /// A token column.
    Token(TokenColumn),
}

/// The token columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenColumn {
    /// Policy mask (a condition).
    Mask,
    /// Per-token reward.
    Reward,
    /// Policy log-probability.
    Logprob,
    /// Reference log-probability.
    RefLogprob,
    /// Critic value.
    Value,
    /// Entropy.
    Entropy,
    /// Position within the trajectory's tokens, from 0.
    Index,
}

/// Label columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelColumn {
    /// The step's role.
    Role,
    /// The step's kind.
    Kind,
    /// The trajectory's finish reason.
    Finish,
}

/// The reductions over a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// Mean.
    Mean,
    /// Sum.
    Sum,
    /// Smallest.
    Min,
    /// Largest.
    Max,
    /// Number of values that are not missing.
    Count,
    /// Standard deviation (`true`: unbiased, n − 1).
    Std(bool),
    /// Variance (`true`: unbiased).
    Var(bool),
    /// Rank from 1 (smallest) within the scope; ties share their mean rank.
    Rank,
}

/// The scopes of reductions and whitening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The trajectory's group (one prompt at one training step).
    Group,
    /// The trajectory.
    Trajectory,
    /// Every trajectory of the same training step.
    TrainStep,
    /// The whole run.
    Batch,
    /// The nodes with the same parent (the same prompt, for first steps).
    Siblings,
}

/// Scans along a trajectory (its steps, or its tokens).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scan {
    /// Sum from the first step to this one.
    CumSum,
    /// Sum from this step to the last.
    RevCumSum,
    /// `x_t + γ x_{t+1} + γ² x_{t+2} + …`.
    Discounted,
    /// Smallest from the first step to this one.
    CumMin,
    /// Largest from the first step to this one.
    CumMax,
    /// Smallest from this step to the last.
    RevCumMin,
    /// Largest from this step to the last.
    RevCumMax,
    /// The value before the first error, 0 from it on.
    Prefix,
    /// 0 before the first error, the value from it on.
    Suffix,
}

/// Functions applied value by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Math {
    /// `abs(x)`.
    Abs,
    /// `sqrt(x)`.
    Sqrt,
    /// `exp(x)`.
    Exp,
    /// `log(x)` (natural).
    Log,
    /// `sign(x)`: −1, 0 or 1.
    Sign,
    /// `sigmoid(x)`.
    Sigmoid,
    /// `min(a, b)` of two values.
    Min2,
    /// `max(a, b)`.
    Max2,
    /// `clamp(x, low, high)`.
    Clamp,
    /// `if(condition, then, else)`.
    If,
    /// `coalesce(x, y)`: `x`, or `y` where `x` is missing.
    Coalesce,
    /// `missing(x)`: whether `x` is missing.
    Missing,
}

/// A checked operation.
#[derive(Clone, Debug)]
pub enum Op {
    /// A number.
    Const(f64),
    /// A column of the run.
    Input(Input),
    /// A label column (compared with a string only, so never evaluated alone).
    Label(LabelColumn),
    /// A label column compared with a label: `Some(sym)` the label's symbol (`None`: the run
    /// has no such label), `equal` for `==`.
    LabelIs {
        /// The column.
        column: LabelColumn,
        /// The label, if the run has it.
        sym: Option<Sym>,
        /// `==` (or `!=`).
        equal: bool,
    },
    /// A named term, by index.
    Let(usize),
    /// `-x`.
    Neg(Box<Node>),
    /// `not c`.
    Not(Box<Node>),
    /// A binary operation.
    Binary(BinOp, Box<Node>, Box<Node>),
    /// A function value by value.
    Math(Math, Vec<Node>),
    /// A reduction over a scope, each value given its scope's result.
    Reduce(Reduce, Scope, Box<Node>),
    /// A scan along each trajectory, with its discount.
    Scan(Scan, Box<Node>, f64),
    /// The mean outcome of the trajectories through the node (`parent`: through its parent).
    Value {
        /// The parent's value instead (the group's mean outcome for a first step).
        parent: bool,
    },
    /// The value at the step's parent (missing for a first step).
    Parent(Box<Node>),
    /// The mean over the node's children (missing at a leaf).
    ChildrenMean(Box<Node>),
    /// Whitening: `(x − mean) / sqrt(var + eps)` over a scope, each step weighted by
    /// its tokens or counted once.
    Whiten {
        /// What is whitened.
        arg: Box<Node>,
        /// Over what.
        scope: Scope,
        /// Weighted by tokens.
        by_tokens: bool,
        /// Added to the variance.
        eps: f64,
        /// The unbiased variance (n − 1), as verl; else the population's, as TRIAGE.
        unbiased: bool,
    },
    /// The step credit of a built-in scheme.
    Credit {
        /// The scheme.
        scheme: &'static dyn Scheme,
        /// Its preset.
        preset: Option<String>,
    },
}

impl std::fmt::Debug for dyn Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.info().id)
    }
}

/// A checked value: what it computes, what it is, where it lives, where it is written.
#[derive(Clone, Debug)]
pub struct Node {
    /// The operation.
    pub op: Op,
    /// Its type.
    pub ty: Ty,
    /// Its level.
    pub level: Level,
    /// Where it is in the formula.
    pub span: Span,
}

/// A formula checked against a run.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The named terms, in order (each may use the ones before).
    pub lets: Vec<(String, Node)>,
    /// The parameters and their values.
    pub params: Vec<(String, f64)>,
    /// The credit.
    pub body: Node,
    /// The credit's level: `Step`, or `Token` when it reads token columns.
    pub level: Level,
    /// The formula's text.
    pub text: String,
}

/// A binary operation on two numbers, as the columns compute it (`f32`).
pub fn binary_f64(op: BinOp, a: f64, b: f64) -> f64 {
    f64::from(binary_f32(op, a as f32, b as f32))
}

#[inline(always)]
pub(super) fn binary_f32(op: BinOp, a: f32, b: f32) -> f32 {
    let truth = |c: bool| f32::from(u8::from(c));
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Pow => a.powf(b),
        _ if a.is_nan() || b.is_nan() => f32::NAN,
        BinOp::Eq => truth(a == b),
        BinOp::Ne => truth(a != b),
        BinOp::Lt => truth(a < b),
        BinOp::Le => truth(a <= b),
        BinOp::Gt => truth(a > b),
        BinOp::Ge => truth(a >= b),
        BinOp::And => truth(a != 0.0 && b != 0.0),
        BinOp::Or => truth(a != 0.0 || b != 0.0),
    }
}

/// A function on numbers, as the columns compute it.
pub fn math_f64(math: Math, args: &[f64]) -> f64 {
    let args: Vec<f32> = args.iter().map(|&a| a as f32).collect();
    f64::from(math_f32(math, &args))
}

#[inline(always)]
pub(super) fn math_f32(math: Math, a: &[f32]) -> f32 {
    let x = a.first().copied().unwrap_or(f32::NAN);
    let y = a.get(1).copied().unwrap_or(f32::NAN);
    let z = a.get(2).copied().unwrap_or(f32::NAN);
    match math {
        Math::Abs => x.abs(),
        Math::Sqrt => x.sqrt(),
        Math::Exp => x.exp(),
        Math::Log => x.ln(),
        Math::Sign => {
            if x.is_nan() || x == 0.0 {
                x
            } else {
                x.signum()
            }
        }
        Math::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Math::Min2 | Math::Max2 if x.is_nan() || y.is_nan() => f32::NAN,
        Math::Min2 => x.min(y),
        Math::Max2 => x.max(y),
        Math::Clamp if x.is_nan() => x,
        Math::Clamp => x.max(y).min(z),
        Math::If if x.is_nan() => f32::NAN,
        Math::If => {
            if x != 0.0 {
                y
            } else {
                z
            }
        }
        Math::Coalesce => {
            if x.is_nan() {
                y
            } else {
                x
            }
        }
        Math::Missing => f32::from(u8::from(x.is_nan())),
    }
}
