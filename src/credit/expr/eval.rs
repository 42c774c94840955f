//! Evaluates a checked formula column-wise over a whole run: each operation is one pass over its
//! operands' columns, at the coarsest level that holds them (a formula on outcomes stays one
//! value per trajectory until the credit is spread over the steps). Values are `f32`, as the
//! trainers compute; sums, means and moments accumulate in `f64`.

use std::borrow::Cow;
use std::rc::Rc;

use crate::credit::data::pool;
use crate::credit::engine::inputs::{path_column, step_from_tokens, step_token_weights};
use crate::credit::engine::tree::{auto_merge, build};
use crate::credit::kernels::tree_value::{ValueMode, ValueTree};
use crate::credit::{Credit, Terms};
use crate::model::FLAG_FIRST_ERROR;
use crate::model::{NodeId, Run};

use super::nodes::{
    Compiled, Input, LabelColumn, Level, Math, Node, Op, Reduce, Scan, Scope, TokenColumn, binary_f32, math_f32,
    math_f64,
};
use super::syntax::Span;

/// A column's values: the run's own, a new column, or a named term's (shared by its uses).
#[derive(Clone, Debug)]
pub enum Data<'a> {
    /// A column of the run.
    Borrowed(&'a [f32]),
    /// Computed here (its buffer goes back to the pool when consumed).
    Owned(Vec<f32>),
    /// A named term's values, read by each use without a copy.
    Shared(Rc<[f32]>),
}

impl std::ops::Deref for Data<'_> {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        match self {
            Self::Borrowed(data) => data,
            Self::Owned(data) => data,
            Self::Shared(data) => data,
        }
    }
}

impl FromIterator<f32> for Data<'_> {
    fn from_iter<I: IntoIterator<Item = f32>>(iter: I) -> Self {
        Self::Owned(iter.into_iter().collect())
    }
}

impl<'a> From<Cow<'a, [f32]>> for Data<'a> {
    fn from(data: Cow<'a, [f32]>) -> Self {
        match data {
            Cow::Borrowed(data) => Self::Borrowed(data),
            Cow::Owned(data) => Self::Owned(data),
        }
    }
}

impl Data<'_> {
    /// The values in a buffer of their own: this one's, or a copy from the pool.
    fn into_vec(self) -> Vec<f32> {
        match self {
            Self::Owned(data) => data,
            other => pool::collect(other.len(), other.iter().copied()),
        }
    }
}

/// A value: a constant, or a column at a level.
#[derive(Clone, Debug)]
pub enum Value<'a> {
    /// One number.
    Const(f64),
    /// A column.
    Col(Level, Data<'a>),
}

/// Gives a consumed value's buffer back to the pool.
fn recycle(value: Value<'_>) {
    if let Value::Col(_, Data::Owned(data)) = value {
        pool::give(data);
    }
}

/// Gives a spread column's buffer back to the pool, if it made one.
fn recycle_cow(data: Cow<'_, [f32]>) {
    if let Cow::Owned(data) = data {
        pool::give(data);
    }
}

impl Value<'_> {
    fn level(&self) -> Level {
        match self {
            Self::Const(_) => Level::Const,
            Self::Col(level, _) => *level,
        }
    }
}

type Fail = (Span, String);

/// Evaluates `compiled` on `run` (the run it was checked against): the credit, with the named
/// terms' values at each step for the inspector.
pub fn evaluate(compiled: &Compiled, run: &Run) -> Result<Credit, Fail> {
    let mut ctx = Ctx::new(run);
    for (_, node) in &compiled.lets {
        // Each use of a term reads the same values.
        let value = match ctx.eval(node)? {
            Value::Col(level, Data::Owned(data)) => {
                let shared = Value::Col(level, Data::Shared(Rc::from(data.as_slice())));
                pool::give(data);
                shared
            }
            other => other,
        };
        ctx.lets.push(value);
    }
    let body = ctx.eval(&compiled.body)?;
    let out = ctx.owned_at(body, compiled.level);
    let mut terms = ctx.step_terms(compiled);
    terms.formula =
        compiled.text.get(compiled.body.span.clone()).unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" ");
    Ok(match compiled.level {
        Level::Token => Credit {
            step: step_from_tokens(run, &out),
            token: Some(out),
            token_returns: None,
            terms,
            level: Some(crate::credit::Level::Token),
        },
        _ => Credit { step: out, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) },
    })
}

/// The most term values kept for the inspector (steps × terms): 64 MB of them.
const MAX_TERM_VALUES: usize = 16 << 20;

struct Ctx<'a> {
    run: &'a Run,
    lets: Vec<Value<'a>>,
    /// Each trajectory's first error's position along its path (its length when it has none).
    first_error: Option<Vec<u32>>,
    /// The tree the tree operations work on, built when one needs it.
    tree: std::cell::OnceCell<ValueTree>,
}

impl<'a> Ctx<'a> {
    fn new(run: &'a Run) -> Self {
        Self { run, lets: Vec::new(), first_error: None, tree: std::cell::OnceCell::new() }
    }

    /// The run's tree as the tree schemes see it (`merge=auto`): its own nodes when the log
    /// branches, else each group's rollouts merged by identical step prefix; node values are the
    /// mean outcome of the trajectories below.
    fn tree(&self) -> &ValueTree {
        self.tree.get_or_init(|| build(self.run, ValueMode::LeafMean, auto_merge(self.run)))
    }

    fn len(&self, level: Level) -> usize {
        match level {
            Level::Const => 1,
            Level::Traj => self.run.trajectories.len(),
            Level::Step => self.run.trajectories.path_nodes.len(),
            Level::Token => self.run.tokens.len,
        }
    }

    /// The range of trajectory `i`'s values at `level`.
    fn range(&self, level: Level, i: usize) -> std::ops::Range<usize> {
        let tr = &self.run.trajectories;
        match level {
            Level::Const => 0..1,
            Level::Traj => i..i + 1,
            Level::Step => tr.path_offsets[i] as usize..tr.path_offsets[i + 1] as usize,
            Level::Token => {
                let start = tr.token_offsets.get(i).copied().unwrap_or(0) as usize;
                let end = tr.token_offsets.get(i + 1).copied().unwrap_or(0) as usize;
                start.min(self.run.tokens.len)..end.min(self.run.tokens.len).max(start.min(self.run.tokens.len))
            }
        }
    }

    /// The named terms' values at each path step, for the inspector (a token term as the mean
    /// over the step's tokens; labels left out); none past [`MAX_TERM_VALUES`].
    fn step_terms(&self, compiled: &Compiled) -> Terms {
        let named: Vec<(&String, &Value<'a>)> = compiled
            .lets
            .iter()
            .zip(&self.lets)
            .filter(|((_, node), _)| node.ty != super::nodes::Ty::Label)
            .map(|((name, _), value)| (name, value))
            .collect();
        let steps = self.len(Level::Step);
        let mut terms = Terms { per_step: true, ..Terms::default() };
        if named.is_empty() || steps.saturating_mul(named.len()) > MAX_TERM_VALUES {
            return terms;
        }
        let columns: Vec<Cow<'_, [f32]>> = named
            .iter()
            .map(|(_, value)| match value {
                Value::Col(Level::Token, data) => Cow::Owned(step_from_tokens(self.run, data)),
                _ => self.spread(value, Level::Step),
            })
            .collect();
        terms.names = named.iter().map(|(name, _)| Cow::Owned((*name).clone())).collect();
        terms.values = (0..steps).flat_map(|k| columns.iter().map(move |c| c[k])).collect();
        terms
    }

    /// `value` at `level` in a buffer of its own (its own buffer when it is already there).
    fn owned_at(&self, value: Value<'a>, level: Level) -> Vec<f32> {
        match value {
            Value::Col(from, data) if from == level => data.into_vec(),
            other => {
                let out = self.spread(&other, level).into_owned();
                recycle(other);
                out
            }
        }
    }

    /// `value` at `level` (a coarser value repeated over what it holds; a step's value over its
    /// `token_span`, tokens outside every span missing).
    fn spread<'v>(&self, value: &'v Value<'a>, level: Level) -> Cow<'v, [f32]> {
        let n = self.len(level);
        let (from, data) = match value {
            Value::Const(v) => return Cow::Owned(pool::filled(n, *v as f32)),
            Value::Col(from, data) if *from == level => return Cow::Borrowed(&**data),
            Value::Col(from, data) => (*from, data),
        };
        let tr = &self.run.trajectories;
        let mut out = pool::filled(n, f32::NAN);
        for i in 0..tr.len() {
            let target = self.range(level, i);
            match from {
                Level::Traj => out[target].fill(data[i]),
                Level::Step => {
                    // Steps to tokens, through the nodes' token spans.
                    let steps = self.range(Level::Step, i);
                    for k in steps {
                        if let Some([s, e]) = self.run.nodes.token_span(tr.path_nodes[k]) {
                            let (s, e) = (target.start + s as usize, (target.start + e as usize).min(target.end));
                            if s < e {
                                out[s..e].fill(data[k]);
                            }
                        }
                    }
                }
                Level::Const | Level::Token => {}
            }
        }
        Cow::Owned(out)
    }

    fn eval(&mut self, node: &Node) -> Result<Value<'a>, Fail> {
        Ok(match &node.op {
            Op::Const(v) => Value::Const(*v),
            Op::Input(input) => self.input(input),
            Op::Label(_) => return Err((node.span.clone(), "a label must be compared with a string".to_owned())),
            Op::LabelIs { column, sym, equal } => self.label_is(*column, *sym, *equal),
            Op::Let(i) => self.lets[*i].clone(),
            Op::Neg(x) => {
                let x = self.eval(x)?;
                Self::map(x, |v| -v)
            }
            Op::Not(x) => {
                let x = self.eval(x)?;
                Self::map(x, |v| if v.is_nan() { v } else { f32::from(u8::from(v == 0.0)) })
            }
            Op::Binary(op, a, b) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                let op = *op;
                self.zip(a, b, move |x, y| binary_f32(op, x, y))
            }
            Op::Math(math, args) => {
                let values = args.iter().map(|a| self.eval(a)).collect::<Result<Vec<_>, _>>()?;
                self.math(*math, values, node.level)
            }
            Op::Reduce(how, scope, x) => {
                let x = self.eval(x)?;
                let out = self.reduce(*how, *scope, &x, node.level);
                recycle(x);
                out
            }
            Op::Scan(how, x, gamma) => {
                let x = self.eval(x)?;
                self.scan(*how, x, *gamma, node.level)
            }
            Op::Value { parent } => self.tree_value(*parent),
            Op::Parent(x) => {
                let x = self.eval(x)?;
                self.parent(x)
            }
            Op::ChildrenMean(x) => {
                let x = self.eval(x)?;
                let out = self.children_mean(&x);
                recycle(x);
                out
            }
            Op::Whiten { arg, scope, by_tokens, eps, unbiased } => {
                let x = self.eval(arg)?;
                self.whiten(x, *scope, (*by_tokens, *unbiased), *eps, node.level)
            }
            Op::Credit { scheme, preset } => {
                let credit = crate::credit::compute(*scheme, self.run, preset.as_deref(), &Vec::new())
                    .map_err(|e| (node.span.clone(), e.to_string()))?;
                Value::Col(Level::Step, Data::Owned(credit.step.clone()))
            }
        })
    }

    fn input(&mut self, input: &Input) -> Value<'a> {
        let run = self.run;
        let tr = &run.trajectories;
        let step = |per_node: &'a [f32]| Value::Col(Level::Step, path_column(run, per_node).into());
        let steps_from = |f: &dyn Fn(NodeId) -> f32| {
            Value::Col(Level::Step, Data::Owned(tr.path_nodes.iter().map(|&n| f(n)).collect()))
        };
        let truth = |c: bool| f32::from(u8::from(c));
        match input {
            Input::Reward => Value::Col(Level::Traj, Data::Borrowed(&tr.reward)),
            Input::Success => Value::Col(Level::Traj, tr.success.iter().map(|s| s.map_or(f32::NAN, truth)).collect()),
            Input::Component(name) => match tr.components.get(name) {
                Some(c) => Value::Col(Level::Traj, Data::Borrowed(c)),
                None => Value::Const(f64::NAN),
            },
            Input::NumSteps => Value::Col(Level::Traj, tr.ids().map(|t| tr.num_steps(t) as f32).collect()),
            Input::TrainStep => Value::Col(
                Level::Traj,
                tr.group.iter().map(|g| run.groups.train_step[g.index()].map_or(f32::NAN, |s| s as f32)).collect(),
            ),
            Input::StepIndex => self.along(Level::Step, |_, t| t as f32),
            Input::Depth => self.along(Level::Step, |_, t| t as f32 + 1.0),
            Input::EnvReward => step(&run.nodes.env_reward),
            Input::Score(name) => match run.nodes.scores.get(name) {
                Some(c) => step(c),
                None => Value::Const(f64::NAN),
            },
            Input::Label(name) | Input::LabelValue(name) => {
                let Some(named) = run.meta.labels.named(name) else { return Value::Const(f64::NAN) };
                let value = matches!(input, Input::LabelValue(_));
                let mut column = Vec::with_capacity(tr.path_nodes.len());
                for t in tr.ids() {
                    for position in tr.path_range(t) {
                        let at = named.at(t, position);
                        column.push(match (value, at) {
                            (false, at) => truth(at.is_some()),
                            (true, Some(v)) => v.number() as f32,
                            (true, None) => f32::NAN,
                        });
                    }
                }
                Value::Col(Level::Step, Data::Owned(column))
            }
            Input::McMean => match &run.nodes.mc_mean {
                Some(c) => step(c),
                None => Value::Const(f64::NAN),
            },
            Input::McN => {
                let counts = run.nodes.mc_n.as_deref().unwrap_or(&[]);
                steps_from(&|n| counts.get(n.index()).map_or(f32::NAN, |&c| c as f32))
            }
            Input::FirstError => steps_from(&|n| truth(run.nodes.flags[n.index()] & FLAG_FIRST_ERROR != 0)),
            Input::InvalidAction => {
                steps_from(&|n| truth(run.nodes.flags[n.index()] & crate::model::FLAG_INVALID_ACTION != 0))
            }
            Input::BeforeError | Input::HasError => {
                let first = self.first_errors().to_vec();
                if matches!(input, Input::HasError) {
                    let has = (0..tr.len()).map(|i| truth((first[i] as usize) < self.range(Level::Step, i).len()));
                    return Value::Col(Level::Traj, has.collect());
                }
                self.along(Level::Step, |i, t| truth(t < first[i] as usize))
            }
            Input::Token(column) => self.token_input(*column),
        }
    }

    fn token_input(&self, column: TokenColumn) -> Value<'a> {
        let tokens = &self.run.tokens;
        let col = |c: &'a Option<Vec<f32>>| match c {
            Some(c) => Value::Col(Level::Token, Data::Borrowed(c.as_slice())),
            None => Value::Const(f64::NAN),
        };
        match column {
            TokenColumn::Mask => match &tokens.mask {
                Some(m) => Value::Col(Level::Token, m.iter().map(|&b| f32::from(u8::from(b))).collect()),
                None => Value::Col(Level::Token, Data::Owned(pool::filled(tokens.len, 1.0))),
            },
            TokenColumn::Reward => col(&tokens.reward),
            TokenColumn::Logprob => col(&tokens.logprob),
            TokenColumn::RefLogprob => col(&tokens.ref_logprob),
            TokenColumn::Value => col(&tokens.value),
            TokenColumn::Entropy => col(&tokens.entropy),
            TokenColumn::Index => self.along(Level::Token, |_, t| t as f32),
        }
    }

    /// A column at `level` whose value at position `t` of trajectory `i` is `f(i, t)`.
    fn along(&self, level: Level, f: impl Fn(usize, usize) -> f32) -> Value<'a> {
        let mut out = pool::zeroed(self.len(level));
        for i in 0..self.run.trajectories.len() {
            for (t, slot) in out[self.range(level, i)].iter_mut().enumerate() {
                *slot = f(i, t);
            }
        }
        Value::Col(level, Data::Owned(out))
    }

    fn first_errors(&mut self) -> &[u32] {
        if self.first_error.is_none() {
            let tr = &self.run.trajectories;
            let flags = &self.run.nodes.flags;
            let first = tr
                .ids()
                .map(|t| {
                    let path = tr.path(t);
                    path.iter().position(|n| flags[n.index()] & FLAG_FIRST_ERROR != 0).unwrap_or(path.len()) as u32
                })
                .collect();
            self.first_error = Some(first);
        }
        self.first_error.as_deref().unwrap_or(&[])
    }

    fn label_is(&self, column: LabelColumn, sym: Option<crate::model::Sym>, equal: bool) -> Value<'a> {
        let run = self.run;
        let tr = &run.trajectories;
        let test = |s: crate::model::Sym| f32::from(u8::from((Some(s) == sym) == equal));
        match column {
            LabelColumn::Finish => Value::Col(Level::Traj, tr.finish.iter().map(|&s| test(s)).collect()),
            LabelColumn::Role | LabelColumn::Kind => {
                let labels = if column == LabelColumn::Role { &run.nodes.role } else { &run.nodes.kind };
                Value::Col(Level::Step, tr.path_nodes.iter().map(|n| test(labels[n.index()])).collect())
            }
        }
    }

    fn map(x: Value<'a>, mut f: impl FnMut(f32) -> f32) -> Value<'a> {
        match x {
            Value::Const(v) => Value::Const(f64::from(f(v as f32))),
            Value::Col(level, data) => {
                let mut data = data.into_vec();
                for v in &mut data {
                    *v = f(*v);
                }
                Value::Col(level, Data::Owned(data))
            }
        }
    }

    fn zip(&self, a: Value<'a>, b: Value<'a>, f: impl Fn(f32, f32) -> f32) -> Value<'a> {
        match (&a, &b) {
            (Value::Const(x), Value::Const(y)) => return Value::Const(f64::from(f(*x as f32, *y as f32))),
            (Value::Const(x), Value::Col(..)) => {
                let x = *x as f32;
                return Self::map(b, |y| f(x, y));
            }
            (Value::Col(..), Value::Const(y)) => {
                let y = *y as f32;
                return Self::map(a, |x| f(x, y));
            }
            (Value::Col(..), Value::Col(..)) => {}
        }
        // Into the left operand's buffer (or the right's, when only it is the result's own).
        let level = a.level().max(b.level());
        let b_is_own = matches!(&b, Value::Col(l, Data::Owned(_)) if *l == level);
        let a_is_own = matches!(&a, Value::Col(l, Data::Owned(_)) if *l == level);
        if b_is_own && !a_is_own {
            let mut out = self.owned_at(b, level);
            let x = self.spread(&a, level);
            for (o, &x) in out.iter_mut().zip(x.iter()) {
                *o = f(x, *o);
            }
            recycle_cow(x);
            recycle(a);
            return Value::Col(level, Data::Owned(out));
        }
        let mut out = self.owned_at(a, level);
        let y = self.spread(&b, level);
        for (o, &y) in out.iter_mut().zip(y.iter()) {
            *o = f(*o, y);
        }
        recycle_cow(y);
        recycle(b);
        Value::Col(level, Data::Owned(out))
    }

    fn math(&self, math: Math, mut values: Vec<Value<'a>>, level: Level) -> Value<'a> {
        if values.iter().all(|v| matches!(v, Value::Const(_))) {
            let args: Vec<f64> = values.iter().map(|v| if let Value::Const(c) = v { *c } else { f64::NAN }).collect();
            return Value::Const(math_f64(math, &args));
        }
        // One column among constants (`abs(x)`, `coalesce(x, 0)`, `clamp(x, -1, 1)`): one pass over
        // it, in its own buffer.
        let columns: Vec<usize> = (0..values.len()).filter(|&i| matches!(values[i], Value::Col(..))).collect();
        if let [only] = columns[..] {
            let mut args: Vec<f32> =
                values.iter().map(|v| if let Value::Const(c) = v { *c as f32 } else { f32::NAN }).collect();
            let column = values.swap_remove(only);
            return Self::map(column, move |v| {
                args[only] = v;
                math_f32(math, &args)
            });
        }
        let spread: Vec<Cow<'_, [f32]>> = values.iter().map(|v| self.spread(v, level)).collect();
        let n = self.len(level);
        let mut args = vec![0.0f32; spread.len()];
        let out = pool::collect(
            n,
            (0..n).map(|i| {
                for (a, c) in args.iter_mut().zip(&spread) {
                    *a = c[i];
                }
                math_f32(math, &args)
            }),
        );
        spread.into_iter().for_each(recycle_cow);
        values.into_iter().for_each(recycle);
        Value::Col(level, Data::Owned(out))
    }

    /// Each trajectory's key in `scope` (not siblings), and the number of keys.
    fn keys(&self, scope: Scope) -> (Vec<u32>, usize) {
        let run = self.run;
        let tr = &run.trajectories;
        match scope {
            Scope::Group => (tr.group.iter().map(|g| g.index() as u32).collect(), run.groups.len()),
            Scope::Trajectory => ((0..tr.len() as u32).collect(), tr.len()),
            Scope::Batch | Scope::Siblings => (vec![0; tr.len()], 1),
            Scope::TrainStep => {
                let steps: Vec<Option<i64>> = tr.group.iter().map(|g| run.groups.train_step[g.index()]).collect();
                crate::credit::Batch::<f32>::dense_groups(&steps)
            }
        }
    }

    /// Whether token `k` counts in token statistics (a policy token).
    fn counts(&self, level: Level, k: usize) -> bool {
        level != Level::Token || self.run.tokens.mask.as_ref().is_none_or(|m| m.get(k).copied().unwrap_or(true))
    }

    fn reduce(&self, how: Reduce, scope: Scope, x: &Value<'a>, level: Level) -> Value<'a> {
        if scope == Scope::Siblings {
            return self.reduce_siblings(how, x);
        }
        let data = self.spread(x, level);
        let (keys, n_keys) = self.keys(scope);
        // Every (key, position) pair, trajectory by trajectory.
        let each = |f: &mut dyn FnMut(usize, usize)| {
            for (i, &key) in keys.iter().enumerate() {
                let key = key as usize;
                for k in self.range(level, i) {
                    if self.counts(level, k) {
                        f(key, k);
                    }
                }
            }
        };
        let per_key = match how {
            Reduce::Rank => {
                let mut items = Vec::new();
                each(&mut |key, k| {
                    if !data[k].is_nan() {
                        items.push((key as u32, data[k], k as u32));
                    }
                });
                let mut out = pool::filled(data.len(), f32::NAN);
                rank_into(&mut items, &mut out);
                recycle_cow(data);
                return Value::Col(level, Data::Owned(out));
            }
            _ => keyed_stats(how, n_keys, &data, each),
        };
        let mut out = pool::filled(data.len(), f32::NAN);
        for (i, &key) in keys.iter().enumerate() {
            out[self.range(level, i)].fill(per_key[key as usize]);
        }
        recycle_cow(data);
        Value::Col(level, Data::Owned(out))
    }

    /// Each tree node's value of `x`: the mean over the path steps at the node (the node's own
    /// value wherever `x` is a node's column; the mean outcome below it for an outcome).
    fn node_values(&self, x: &Value<'a>) -> Vec<f32> {
        let data = self.spread(x, Level::Step);
        let tree = self.tree();
        let n = tree.parent.len();
        let (mut sum, mut count) = (vec![0.0f64; n], vec![0u32; n]);
        for (k, &v) in tree.node_of.iter().enumerate() {
            if !data[k].is_nan() {
                sum[v as usize] += f64::from(data[k]);
                count[v as usize] += 1;
            }
        }
        sum.iter().zip(&count).map(|(&s, &c)| if c == 0 { f32::NAN } else { (s / f64::from(c)) as f32 }).collect()
    }

    fn reduce_siblings(&self, how: Reduce, x: &Value<'a>) -> Value<'a> {
        let values = self.node_values(x);
        let tree = self.tree();
        let n = tree.parent.len();
        // Siblings share a parent; top steps share their group's prompt.
        let key = |v: usize| match tree.parent[v] {
            u32::MAX => n + tree.group[v] as usize,
            p => p as usize,
        };
        let n_keys = n + self.run.groups.len();
        let each = |f: &mut dyn FnMut(usize, usize)| {
            for v in 0..n {
                f(key(v), v);
            }
        };
        let per_node: Vec<f32> = if how == Reduce::Rank {
            let mut items = Vec::new();
            each(&mut |key, v| {
                if !values[v].is_nan() {
                    items.push((key as u32, values[v], v as u32));
                }
            });
            let mut out = vec![f32::NAN; n];
            rank_into(&mut items, &mut out);
            out
        } else {
            let per_key = keyed_stats(how, n_keys, &values, each);
            (0..n).map(|v| per_key[key(v)]).collect()
        };
        let out = tree.node_of.iter().map(|&v| per_node[v as usize]).collect();
        Value::Col(Level::Step, Data::Owned(out))
    }

    fn scan(&mut self, how: Scan, x: Value<'a>, gamma: f64, level: Level) -> Value<'a> {
        let mut out = self.owned_at(x, level);
        let first = if matches!(how, Scan::Prefix | Scan::Suffix) { self.first_errors().to_vec() } else { Vec::new() };
        let gamma = gamma as f32;
        for i in 0..self.run.trajectories.len() {
            let row = &mut out[self.range(level, i)];
            match how {
                Scan::CumSum => forward(row, |acc, v| acc + v),
                Scan::CumMin => forward(row, |a, b| nan_or(a, b, f32::min)),
                Scan::CumMax => forward(row, |a, b| nan_or(a, b, f32::max)),
                Scan::RevCumSum => backward(row, |acc, v| acc + v),
                Scan::RevCumMin => backward(row, |a, b| nan_or(a, b, f32::min)),
                Scan::RevCumMax => backward(row, |a, b| nan_or(a, b, f32::max)),
                Scan::Discounted => backward(row, |acc, v| v + gamma * acc),
                Scan::Prefix | Scan::Suffix => {
                    let e = first[i] as usize;
                    for (t, v) in row.iter_mut().enumerate() {
                        if (t < e) != (how == Scan::Prefix) {
                            *v = 0.0;
                        }
                    }
                }
            }
        }
        Value::Col(level, Data::Owned(out))
    }

    fn tree_value(&self, parent: bool) -> Value<'a> {
        let tree = self.tree();
        let out = if parent {
            tree.node_of.iter().map(|&v| tree.parent_value(v)).collect()
        } else {
            tree.node_of.iter().map(|&v| tree.value[v as usize]).collect()
        };
        Value::Col(Level::Step, Data::Owned(out))
    }

    fn parent(&self, x: Value<'a>) -> Value<'a> {
        let mut out = self.owned_at(x, Level::Step);
        for i in 0..self.run.trajectories.len() {
            let row = &mut out[self.range(Level::Step, i)];
            row.rotate_right(1);
            if let Some(first) = row.first_mut() {
                *first = f32::NAN;
            }
        }
        Value::Col(Level::Step, Data::Owned(out))
    }

    fn children_mean(&self, x: &Value<'a>) -> Value<'a> {
        let values = self.node_values(x);
        let tree = self.tree();
        let n = tree.parent.len();
        let (mut sum, mut count) = (vec![0.0f64; n], vec![0u32; n]);
        for v in (0..n).filter(|&v| !values[v].is_nan()) {
            if let Some(p) = tree.parent.get(v).copied().filter(|&p| p != u32::MAX) {
                sum[p as usize] += f64::from(values[v]);
                count[p as usize] += 1;
            }
        }
        let out = tree
            .node_of
            .iter()
            .map(|&v| {
                let (s, c) = (sum[v as usize], count[v as usize]);
                if c == 0 { f32::NAN } else { (s / f64::from(c)) as f32 }
            })
            .collect();
        Value::Col(Level::Step, Data::Owned(out))
    }

    fn whiten(
        &self,
        x: Value<'a>,
        scope: Scope,
        (by_tokens, unbiased): (bool, bool),
        eps: f64,
        level: Level,
    ) -> Value<'a> {
        let mut data = self.owned_at(x, level);
        let weights: Option<Vec<f32>> = if by_tokens { step_token_weights(self.run) } else { None };
        let weight = |k: usize| match (&weights, level) {
            (Some(w), _) => f64::from(w[k]),
            (None, Level::Token) => f64::from(u8::from(self.counts(level, k))),
            (None, _) => 1.0,
        };
        let (keys, n_keys) = self.keys(if scope == Scope::Siblings { Scope::Batch } else { scope });
        let (mut sw, mut swx) = (vec![0.0f64; n_keys], vec![0.0f64; n_keys]);
        for (i, &key) in keys.iter().enumerate() {
            let key = key as usize;
            for k in self.range(level, i) {
                if !data[k].is_nan() {
                    sw[key] += weight(k);
                    swx[key] += weight(k) * f64::from(data[k]);
                }
            }
        }
        let mean: Vec<f64> = swx.iter().zip(&sw).map(|(&s, &w)| s / w).collect();
        let mut sq = vec![0.0f64; n_keys];
        for (i, &key) in keys.iter().enumerate() {
            let key = key as usize;
            for k in self.range(level, i) {
                if !data[k].is_nan() {
                    let d = f64::from(data[k]) - mean[key];
                    sq[key] += weight(k) * d * d;
                }
            }
        }
        // Unbiased as verl's masked_whiten, Σw(x − mean)² / (Σw − 1); or Σw(x − mean)² / Σw.
        let dof = |w: f64| if unbiased { w - 1.0 } else { w };
        let scale: Vec<f32> = sq.iter().zip(&sw).map(|(&s, &w)| (1.0 / (s / dof(w) + eps).sqrt()) as f32).collect();
        for (i, &key) in keys.iter().enumerate() {
            let key = key as usize;
            let (m, s) = (mean[key] as f32, scale[key]);
            for v in &mut data[self.range(level, i)] {
                *v = (*v - m) * s;
            }
        }
        Value::Col(level, Data::Owned(data))
    }
}

/// `f(a, b)`, missing when either is (`f32::min` would drop a missing value).
fn nan_or(a: f32, b: f32, f: fn(f32, f32) -> f32) -> f32 {
    if a.is_nan() || b.is_nan() { f32::NAN } else { f(a, b) }
}

fn forward(row: &mut [f32], f: impl Fn(f32, f32) -> f32) {
    for t in 1..row.len() {
        row[t] = f(row[t - 1], row[t]);
    }
}

fn backward(row: &mut [f32], f: impl Fn(f32, f32) -> f32) {
    for t in (0..row.len().saturating_sub(1)).rev() {
        row[t] = f(row[t + 1], row[t]);
    }
}

/// Sum, mean, min, max, count and moments per key over the values `each` visits (missing ones
/// left out); `NaN` for a key with none (and for an unbiased moment of a single value).
fn keyed_stats(how: Reduce, n_keys: usize, data: &[f32], each: impl Fn(&mut dyn FnMut(usize, usize))) -> Vec<f32> {
    let (mut sum, mut count) = (vec![0.0f64; n_keys], vec![0u32; n_keys]);
    let mut extreme = vec![f32::NAN; n_keys];
    each(&mut |key, k| {
        let v = data[k];
        if v.is_nan() {
            return;
        }
        sum[key] += f64::from(v);
        count[key] += 1;
        let e = &mut extreme[key];
        *e = match how {
            Reduce::Min if e.is_nan() || v < *e => v,
            Reduce::Max if e.is_nan() || v > *e => v,
            _ => *e,
        };
    });
    let mean = |key: usize| if count[key] == 0 { f64::NAN } else { sum[key] / f64::from(count[key]) };
    match how {
        Reduce::Sum => sum.iter().zip(&count).map(|(&s, &c)| if c == 0 { f32::NAN } else { s as f32 }).collect(),
        Reduce::Count => count.iter().map(|&c| c as f32).collect(),
        Reduce::Mean => (0..n_keys).map(|k| mean(k) as f32).collect(),
        Reduce::Min | Reduce::Max => extreme,
        Reduce::Std(unbiased) | Reduce::Var(unbiased) => {
            let means: Vec<f64> = (0..n_keys).map(mean).collect();
            let mut sq = vec![0.0f64; n_keys];
            each(&mut |key, k| {
                let v = data[k];
                if !v.is_nan() {
                    let d = f64::from(v) - means[key];
                    sq[key] += d * d;
                }
            });
            let std = matches!(how, Reduce::Std(_));
            (0..n_keys)
                .map(|k| {
                    let n = f64::from(count[k]);
                    let var = sq[k] / if unbiased { n - 1.0 } else { n };
                    let var = if count[k] == 0 || (unbiased && count[k] == 1) { f64::NAN } else { var };
                    (if std { var.sqrt() } else { var }) as f32
                })
                .collect()
        }
        Reduce::Rank => vec![f32::NAN; n_keys],
    }
}

/// Ranks from 1 within each key, ties sharing their mean rank: `items` are (key, value, slot).
fn rank_into(items: &mut [(u32, f32, u32)], out: &mut [f32]) {
    items.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut start = 0;
    while start < items.len() {
        let key = items[start].0;
        let mut end = start;
        while end < items.len() && items[end].0 == key {
            end += 1;
        }
        // Within the key: runs of equal values.
        let mut i = start;
        while i < end {
            let mut j = i;
            while j < end && items[j].1 == items[i].1 {
                j += 1;
            }
            let rank = ((i - start + 1 + j - start) as f32) / 2.0;
            for item in &items[i..j] {
                out[item.2 as usize] = rank;
            }
            i = j;
        }
        start = end;
    }
}
