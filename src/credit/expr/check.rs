//! From a formula's syntax tree to a checked plan against one run: each name resolved to a
//! column of the run (or a named term, or a parameter), each value typed (number, condition or
//! label) and placed at a level (constant, trajectory, step, token). Errors point at the place in
//! the formula and say what the run has instead.

use crate::credit::Support;
use crate::model::Run;

use super::nodes::{Compiled, Input, LabelColumn, Level, Math, Node, Op, Reduce, Scan, Scope, TokenColumn, Ty};
use super::syntax::{Arg, BinOp, Expr, ExprKind, Program, Span, Statement, UnOp};
use super::{Formula, FormulaError};

/// Words that name scopes in reductions.
pub const SCOPES: &[&str] = &["group", "trajectory", "train_step", "batch", "siblings"];

struct Checker<'a> {
    formula: &'a Formula,
    run: &'a Run,
    lets: Vec<(String, Node)>,
    params: Vec<(String, f64)>,
}

/// Checks `formula` against `run`.
pub fn compile(formula: &Formula, run: &Run) -> Result<Compiled, FormulaError> {
    let Program { statements, body } = &formula.program;
    let mut checker = Checker { formula, run, lets: Vec::new(), params: Vec::new() };
    for statement in statements {
        match statement {
            Statement::Param(p) => {
                if checker.params.iter().any(|(n, _)| *n == p.name) {
                    return Err(checker.error(
                        p.span.clone(),
                        Some(&format!("${}", p.name)),
                        "is defined twice".to_owned(),
                    ));
                }
                if let Some((low, high)) = p.range
                    && !(low <= p.value && p.value <= high)
                {
                    return Err(checker.error(
                        p.value_span.clone(),
                        None,
                        format!("${} = {} is outside its range [{low}, {high}]", p.name, p.value),
                    ));
                }
                checker.params.push((p.name.clone(), p.value));
            }
            Statement::Let { name, span, value } => {
                if super::syntax::RESERVED.contains(&name.as_str()) || SCOPES.contains(&name.as_str()) {
                    return Err(checker.error(
                        span.clone(),
                        Some(name),
                        "is a reserved word; name the term otherwise".to_owned(),
                    ));
                }
                let node = checker.expr(value)?;
                checker.lets.push((name.clone(), node));
            }
        }
    }
    let body = checker.expr(body)?;
    let body = checker.number(body, "the credit")?;
    let level = if body.level == Level::Token { Level::Token } else { Level::Step };
    Ok(Compiled { lets: checker.lets, params: checker.params, body, level, text: formula.text.clone() })
}

fn scope_of(word: &str) -> Option<Scope> {
    Some(match word {
        "group" => Scope::Group,
        "trajectory" => Scope::Trajectory,
        "train_step" => Scope::TrainStep,
        "batch" => Scope::Batch,
        "siblings" => Scope::Siblings,
        _ => return None,
    })
}

fn name_of(expr: &Expr) -> Option<&str> {
    match &expr.kind {
        ExprKind::Name(n) => Some(n),
        _ => None,
    }
}

impl Checker<'_> {
    fn error(&self, span: Span, what: Option<&str>, message: String) -> FormulaError {
        FormulaError { text: self.formula.text.clone(), span, what: what.map(str::to_owned), message }
    }

    fn node(op: Op, ty: Ty, level: Level, span: Span) -> Node {
        Node { op, ty, level, span }
    }

    /// `node` as a number (a condition counts as 0/1); a label is an error.
    fn number(&self, node: Node, role: &str) -> Result<Node, FormulaError> {
        if node.ty == Ty::Label {
            return Err(self.error(
                node.span.clone(),
                None,
                format!("{role} must be a number; this is a label (compare it: role == \"progress\")"),
            ));
        }
        Ok(node)
    }

    fn condition(&self, node: Node, role: &str) -> Result<Node, FormulaError> {
        if node.ty != Ty::Bool {
            return Err(self.error(
                node.span.clone(),
                None,
                format!(
                    "{role} must be a condition (a comparison, success, first_error, …); this is {}",
                    node.ty.word()
                ),
            ));
        }
        Ok(node)
    }

    fn expr(&self, expr: &Expr) -> Result<Node, FormulaError> {
        let span = expr.span.clone();
        match &expr.kind {
            ExprKind::Num(v) => Ok(Self::node(Op::Const(*v), Ty::Num, Level::Const, span)),
            ExprKind::Str(s) => Err(self.error(
                span,
                Some(&format!("\"{s}\"")),
                "a string stands only beside a label (role == \"progress\") or in credit(\"grpo\")".to_owned(),
            )),
            ExprKind::Param(name) => match self.params.iter().find(|(n, _)| n == name) {
                Some((_, v)) => Ok(Self::node(Op::Const(*v), Ty::Num, Level::Const, span)),
                None => Err(self.error(
                    span,
                    Some(&format!("${name}")),
                    format!("no parameter ${name}; define it first (${name} = 0.5)"),
                )),
            },
            ExprKind::Name(name) => self.name(name, span),
            ExprKind::Unary(UnOp::Neg, x) => {
                let x = self.expr(x)?;
                let x = self.number(x, "the operand of -")?;
                Ok(fold(Self::node(Op::Neg(Box::new(x.clone())), Ty::Num, x.level, span)))
            }
            ExprKind::Unary(UnOp::Not, x) => {
                let x = self.expr(x)?;
                let x = self.condition(x, "the operand of not")?;
                let level = x.level;
                Ok(Self::node(Op::Not(Box::new(x)), Ty::Bool, level, span))
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, span),
            ExprKind::Call { name, name_span, args } => self.call(name, name_span.clone(), args, span),
        }
    }

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr, span: Span) -> Result<Node, FormulaError> {
        // A label compared with a string.
        if matches!(op, BinOp::Eq | BinOp::Ne) {
            let labels = [(a, b), (b, a)];
            for (label, text) in labels {
                if let (ExprKind::Name(name), ExprKind::Str(value)) = (&label.kind, &text.kind)
                    && let Some(column) = self.label_column(name)
                {
                    let column_node = self.name(name, label.span.clone())?;
                    let sym = self.run.labels.lookup(value);
                    let op = Op::LabelIs { column, sym, equal: op == BinOp::Eq };
                    return Ok(Self::node(op, Ty::Bool, column_node.level, span));
                }
            }
        }
        let (a, b) = (self.expr(a)?, self.expr(b)?);
        let symbol = op.symbol();
        let level = a.level.max(b.level);
        let ty = match op {
            BinOp::Or | BinOp::And => {
                let a = self.condition(a, &format!("the left of {symbol}"))?;
                let b = self.condition(b, &format!("the right of {symbol}"))?;
                return Ok(Self::node(Op::Binary(op, Box::new(a), Box::new(b)), Ty::Bool, level, span));
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Ty::Bool,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Pow => Ty::Num,
        };
        let a = self.number(a, &format!("the left of {symbol}"))?;
        let b = self.number(b, &format!("the right of {symbol}"))?;
        Ok(fold(Self::node(Op::Binary(op, Box::new(a), Box::new(b)), ty, level, span)))
    }

    fn label_column(&self, name: &str) -> Option<LabelColumn> {
        if self.lets.iter().any(|(n, _)| n == name) {
            return None;
        }
        match name {
            "role" => Some(LabelColumn::Role),
            "kind" => Some(LabelColumn::Kind),
            "finish" => Some(LabelColumn::Finish),
            _ => None,
        }
    }

    #[expect(clippy::too_many_lines, reason = "one arm per column of the language, each short")]
    fn name(&self, name: &str, span: Span) -> Result<Node, FormulaError> {
        if let Some(index) = self.lets.iter().rposition(|(n, _)| n == name) {
            let node = &self.lets[index].1;
            return Ok(Self::node(Op::Let(index), node.ty, node.level, span));
        }
        let run = self.run;
        let missing = |what: &str| Err(self.error(span.clone(), Some(name), what.to_owned()));
        let input = |input: Input, ty: Ty, level: Level| Ok(Self::node(Op::Input(input), ty, level, span.clone()));
        let tokens = &run.tokens;
        let token = |column: Option<bool>, which: TokenColumn, ty: Ty, what: &str| {
            if column == Some(true) {
                input(Input::Token(which), ty, Level::Token)
            } else {
                missing(&format!("this run logs no {what}"))
            }
        };
        match name {
            "nan" => return Ok(Self::node(Op::Const(f64::NAN), Ty::Num, Level::Const, span)),
            "true" | "false" => {
                return Ok(Self::node(Op::Const(f64::from(u8::from(name == "true"))), Ty::Bool, Level::Const, span));
            }
            "R" => {
                return if crate::credit::engine::inputs::has_outcomes(run) {
                    input(Input::Reward, Ty::Num, Level::Traj)
                } else {
                    missing("this run has no outcome rewards")
                };
            }
            "success" => {
                return if run.trajectories.success.iter().any(Option::is_some) {
                    input(Input::Success, Ty::Bool, Level::Traj)
                } else {
                    missing("this run logs no success flags")
                };
            }
            "finish" => return Ok(Self::node(Op::Label(LabelColumn::Finish), Ty::Label, Level::Traj, span)),
            "role" => return Ok(Self::node(Op::Label(LabelColumn::Role), Ty::Label, Level::Step, span)),
            "kind" => return Ok(Self::node(Op::Label(LabelColumn::Kind), Ty::Label, Level::Step, span)),
            "n_steps" => return input(Input::NumSteps, Ty::Num, Level::Traj),
            "train_step" => {
                return if run.groups.train_step.iter().any(Option::is_some) {
                    input(Input::TrainStep, Ty::Num, Level::Traj)
                } else {
                    missing("this run logs no training steps")
                };
            }
            "t" => return input(Input::StepIndex, Ty::Num, Level::Step),
            "depth" => return input(Input::Depth, Ty::Num, Level::Step),
            "env_reward" => {
                return if run.nodes.env_reward.iter().any(|r| !r.is_nan()) {
                    input(Input::EnvReward, Ty::Num, Level::Step)
                } else {
                    missing("this run has no environment rewards per step")
                };
            }
            "mc_mean" | "mc_n" => {
                return if run.nodes.mc_mean.is_some() {
                    let which = if name == "mc_mean" { Input::McMean } else { Input::McN };
                    input(which, Ty::Num, Level::Step)
                } else {
                    missing("this run logs no Monte-Carlo statistics")
                };
            }
            "first_error" | "before_error" | "has_error" => {
                if !labels_first_errors(run) {
                    return missing("this run labels no first errors");
                }
                return match name {
                    "first_error" => input(Input::FirstError, Ty::Bool, Level::Step),
                    "before_error" => input(Input::BeforeError, Ty::Bool, Level::Step),
                    _ => input(Input::HasError, Ty::Bool, Level::Traj),
                };
            }
            "invalid_action" => return input(Input::InvalidAction, Ty::Bool, Level::Step),
            "mask" => return token(Some(tokens.len > 0), TokenColumn::Mask, Ty::Bool, "tokens"),
            "token_index" => return token(Some(tokens.len > 0), TokenColumn::Index, Ty::Num, "tokens"),
            "token_reward" => {
                return token(tokens.reward.as_ref().map(|_| true), TokenColumn::Reward, Ty::Num, "token rewards");
            }
            "logprob" => {
                return token(tokens.logprob.as_ref().map(|_| true), TokenColumn::Logprob, Ty::Num, "token logprobs");
            }
            "ref_logprob" => {
                let has = tokens.ref_logprob.as_ref().map(|_| true);
                return token(has, TokenColumn::RefLogprob, Ty::Num, "reference logprobs");
            }
            "token_value" => {
                return token(tokens.value.as_ref().map(|_| true), TokenColumn::Value, Ty::Num, "critic values");
            }
            "entropy" => {
                return token(tokens.entropy.as_ref().map(|_| true), TokenColumn::Entropy, Ty::Num, "token entropies");
            }
            _ => {}
        }
        let score = run.nodes.scores.contains_key(name);
        let component = run.trajectories.components.contains_key(name);
        match (score, component) {
            (true, true) => missing(&format!(
                "this run has both a step score and an outcome component named {name}: write score(\"{name}\") or component(\"{name}\")"
            )),
            (true, false) => input(Input::Score(name.to_owned()), Ty::Num, Level::Step),
            (false, true) => input(Input::Component(name.to_owned()), Ty::Num, Level::Traj),
            (false, false) if SCOPES.contains(&name) => missing(&format!(
                "{name} is a scope; it stands as the second argument of a reduction (mean(R, {name}))"
            )),
            (false, false) if crate::credit::engine::inputs::SCORE_NAMES.contains(&name) => {
                missing(&format!("this run has no step score named {name}; {}", self.has_scores()))
            }
            (false, false) => {
                let mut message = format!("no column, term or parameter named {name}");
                if !run.nodes.scores.is_empty() {
                    message.push_str(&format!("; step scores: {}", join(run.nodes.scores.keys())));
                }
                if !run.trajectories.components.is_empty() {
                    message.push_str(&format!("; outcome components: {}", join(run.trajectories.components.keys())));
                }
                if !self.lets.is_empty() {
                    message.push_str(&format!("; terms: {}", join(self.lets.iter().map(|(n, _)| n))));
                }
                missing(&message)
            }
        }
    }

    fn has_scores(&self) -> String {
        if self.run.nodes.scores.is_empty() {
            "it has none".to_owned()
        } else {
            format!("it has {}", join(self.run.nodes.scores.keys()))
        }
    }

    #[expect(clippy::too_many_lines, reason = "one arm per function of the language, each short")]
    fn call(&self, name: &str, name_span: Span, args: &[Arg], span: Span) -> Result<Node, FormulaError> {
        let fail = |message: String| Err(self.error(name_span.clone(), Some(name), message));
        let positional: Vec<&Expr> = args.iter().filter(|a| a.name.is_none()).map(|a| &a.value).collect();
        let keywords: Vec<(&str, &Expr)> =
            args.iter().filter_map(|a| a.name.as_deref().map(|n| (n, &a.value))).collect();
        let allowed_keywords: &[&str] = match name {
            "whiten" => &["by", "eps"],
            _ => &[],
        };
        if let Some((k, e)) = keywords.iter().find(|(k, _)| !allowed_keywords.contains(k)) {
            return Err(self.error(e.span.clone(), Some(k), format!("{name} takes no argument named {k}")));
        }
        let arity = |low: usize, high: usize, shape: &str| -> Result<(), FormulaError> {
            if positional.len() < low || positional.len() > high {
                return Err(self.error(
                    name_span.clone(),
                    Some(name),
                    format!("takes {shape}; it was given {} argument(s)", positional.len()),
                ));
            }
            Ok(())
        };
        let arg = |i: usize| -> Result<Node, FormulaError> {
            let node = self.expr(positional[i])?;
            self.number(node, &format!("argument {} of {name}", i + 1))
        };
        let scope_arg = |i: usize| -> Result<Scope, FormulaError> {
            let e = positional[i];
            name_of(e).and_then(scope_of).ok_or_else(|| {
                self.error(e.span.clone(), None, format!("{name} needs a scope here: {}", SCOPES.join(", ")))
            })
        };
        // The variance's estimator, a third argument: unbiased (the default) or biased.
        let estimator = |i: usize| -> Result<bool, FormulaError> {
            match positional.get(i).map(|e| (e, name_of(e))) {
                None | Some((_, Some("unbiased"))) => Ok(true),
                Some((_, Some("biased"))) => Ok(false),
                Some((e, _)) => Err(self.error(e.span.clone(), None, "the estimator is unbiased or biased".to_owned())),
            }
        };
        let constant = |node: &Node, what: &str| -> Result<f64, FormulaError> {
            match node.op {
                Op::Const(v) => Ok(v),
                _ => Err(self.error(
                    node.span.clone(),
                    None,
                    format!("{what} must be a constant (a number or a $parameter)"),
                )),
            }
        };
        let boxed = Box::new;
        match name {
            "mean" | "sum" | "min" | "max" | "count" | "rank" | "std" | "var" => {
                // min(a, b) and max(a, b) of two values, when the second is not a scope.
                if matches!(name, "min" | "max")
                    && positional.len() == 2
                    && name_of(positional[1]).and_then(scope_of).is_none()
                {
                    let (a, b) = (arg(0)?, arg(1)?);
                    let level = a.level.max(b.level);
                    let math = if name == "min" { Math::Min2 } else { Math::Max2 };
                    return Ok(Self::node(Op::Math(math, vec![a, b]), Ty::Num, level, span));
                }
                let moments = matches!(name, "std" | "var");
                if moments {
                    arity(2, 3, &format!("(x, scope) or (x, scope, unbiased|biased), e.g. {name}(R, group)"))?;
                } else {
                    arity(2, 2, &format!("(x, scope), e.g. {name}(R, group)"))?;
                }
                let x = arg(0)?;
                let scope = scope_arg(1)?;
                let unbiased = estimator(2)?;
                let how = match name {
                    "mean" => Reduce::Mean,
                    "sum" => Reduce::Sum,
                    "min" => Reduce::Min,
                    "max" => Reduce::Max,
                    "count" => Reduce::Count,
                    "rank" => Reduce::Rank,
                    "std" => Reduce::Std(unbiased),
                    _ => Reduce::Var(unbiased),
                };
                let level = self.scope_level(&x, scope, name)?;
                Ok(Self::node(Op::Reduce(how, scope, boxed(x)), Ty::Num, level, span))
            }
            "cumsum" | "revcumsum" | "cummin" | "cummax" | "revcummin" | "revcummax" | "prefix" | "suffix"
            | "discounted" => {
                let discounted = name == "discounted";
                if discounted {
                    arity(2, 2, "(x, γ), e.g. discounted(env_reward, 0.99)")?;
                } else {
                    arity(1, 1, &format!("one argument, e.g. {name}(prm)"))?;
                }
                let x = arg(0)?;
                let gamma = if discounted { constant(&arg(1)?, "the discount γ")? } else { 1.0 };
                let how = match name {
                    "cumsum" => Scan::CumSum,
                    "revcumsum" => Scan::RevCumSum,
                    "cummin" => Scan::CumMin,
                    "cummax" => Scan::CumMax,
                    "revcummin" => Scan::RevCumMin,
                    "revcummax" => Scan::RevCumMax,
                    "prefix" => Scan::Prefix,
                    "suffix" => Scan::Suffix,
                    _ => Scan::Discounted,
                };
                if matches!(how, Scan::Prefix | Scan::Suffix) {
                    if !labels_first_errors(self.run) {
                        return fail("this run labels no first errors".to_owned());
                    }
                    if x.level == Level::Token {
                        return fail("works on steps; this value is one per token".to_owned());
                    }
                }
                let level = x.level.max(Level::Step);
                Ok(Self::node(Op::Scan(how, boxed(x), gamma), Ty::Num, level, span))
            }
            "value" => {
                arity(1, 1, "node or parent: value(node), value(parent)")?;
                let parent = match name_of(positional[0]) {
                    Some("node") => false,
                    Some("parent") => true,
                    _ => {
                        return Err(self.error(
                            positional[0].span.clone(),
                            None,
                            "value takes node or parent".to_owned(),
                        ));
                    }
                };
                if !crate::credit::engine::inputs::has_outcomes(self.run) {
                    return fail("needs outcome rewards; this run has none".to_owned());
                }
                Ok(Self::node(Op::Value { parent }, Ty::Num, Level::Step, span))
            }
            "parent" | "children_mean" => {
                arity(1, 1, &format!("one argument, e.g. {name}(mc_mean)"))?;
                let x = arg(0)?;
                if x.level == Level::Token {
                    return fail("works on steps; this value is one per token".to_owned());
                }
                let op = if name == "parent" { Op::Parent(boxed(x)) } else { Op::ChildrenMean(boxed(x)) };
                Ok(Self::node(op, Ty::Num, Level::Step, span))
            }
            "whiten" => {
                arity(1, 3, "(x), (x, scope) or (x, scope, unbiased|biased), with by=tokens|steps and eps=…")?;
                let x = arg(0)?;
                let scope = if positional.len() >= 2 { scope_arg(1)? } else { Scope::Batch };
                let unbiased = estimator(2)?;
                let mut by_tokens = false;
                let mut eps = 1e-8;
                for (k, e) in &keywords {
                    if *k == "by" {
                        by_tokens = match name_of(e) {
                            Some("tokens") => true,
                            Some("steps") => false,
                            _ => return Err(self.error(e.span.clone(), None, "by is tokens or steps".to_owned())),
                        };
                    } else {
                        eps = constant(&self.number(self.expr(e)?, "eps")?, "eps")?;
                    }
                }
                if scope == Scope::Siblings {
                    return fail("whitens over group, trajectory, train_step or batch".to_owned());
                }
                if by_tokens && x.level == Level::Token {
                    return fail(
                        "by=tokens weighs steps by their tokens; this value is already one per token".to_owned(),
                    );
                }
                let level = x.level.max(Level::Step);
                Ok(Self::node(Op::Whiten { arg: boxed(x), scope, by_tokens, eps, unbiased }, Ty::Num, level, span))
            }
            "credit" => {
                arity(1, 1, "a scheme's id: credit(\"grpo\"), credit(\"grpo:trl\") with a preset")?;
                let ExprKind::Str(id) = &positional[0].kind else {
                    return Err(self.error(
                        positional[0].span.clone(),
                        None,
                        "write the scheme's id as a string: credit(\"grpo\")".to_owned(),
                    ));
                };
                let (id, preset) = match id.split_once(':') {
                    Some((id, preset)) => (id, Some(preset.to_owned())),
                    None => (id.as_str(), None),
                };
                let at = positional[0].span.clone();
                let scheme = crate::credit::scheme(id).map_err(|e| self.error(at.clone(), None, e.to_string()))?;
                if let Some(preset) = &preset
                    && !scheme.presets().iter().any(|p| p.name == preset)
                {
                    let known: Vec<&str> = scheme.presets().iter().map(|p| p.name).collect();
                    return Err(self.error(
                        at,
                        None,
                        format!("{id} has no preset {preset} (it has: {})", known.join(", ")),
                    ));
                }
                if let Support::No(reason) = scheme.supports(self.run) {
                    return Err(self.error(at, None, format!("{id} cannot run here: {reason}")));
                }
                Ok(Self::node(Op::Credit { scheme, preset }, Ty::Num, Level::Step, span))
            }
            "score" | "component" => {
                arity(1, 1, &format!("a name: {name}(\"prm\")"))?;
                let column =
                    self.name_argument(positional[0], &format!("write the name as a string: {name}(\"…\")"))?;
                let at = positional[0].span.clone();
                if name == "score" {
                    if !self.run.nodes.scores.contains_key(column) {
                        return Err(self.error(
                            at,
                            Some(column),
                            format!("this run has no step score named {column}; {}", self.has_scores()),
                        ));
                    }
                    Ok(Self::node(Op::Input(Input::Score(column.clone())), Ty::Num, Level::Step, span))
                } else {
                    if !self.run.trajectories.components.contains_key(column) {
                        let has = &self.run.trajectories.components;
                        let has = if has.is_empty() {
                            "it has none".to_owned()
                        } else {
                            format!("it has {}", join(has.keys()))
                        };
                        return Err(self.error(
                            at,
                            Some(column),
                            format!("this run has no outcome component named {column}; {has}"),
                        ));
                    }
                    Ok(Self::node(Op::Input(Input::Component(column.clone())), Ty::Num, Level::Traj, span))
                }
            }
            "label" | "label_value" => {
                arity(1, 1, &format!("a label's name: {name}(\"hack\")"))?;
                let label =
                    self.name_argument(positional[0], &format!("write the label's name as a string: {name}(\"…\")"))?;
                if self.run.meta.labels.named(label).is_none() {
                    let has: Vec<&str> = self.run.meta.labels.names.iter().map(|n| n.name.as_str()).collect();
                    let has = if has.is_empty() {
                        "it has none (docs/LABELS.md: vantage label RUN --add NAME …)".to_owned()
                    } else {
                        format!("it has {}", has.join(", "))
                    };
                    return Err(self.error(
                        positional[0].span.clone(),
                        Some(label),
                        format!("this run has no label named {label}; {has}"),
                    ));
                }
                Ok(if name == "label" {
                    Self::node(Op::Input(Input::Label(label.clone())), Ty::Bool, Level::Step, span)
                } else {
                    Self::node(Op::Input(Input::LabelValue(label.clone())), Ty::Num, Level::Step, span)
                })
            }
            "if" => {
                arity(3, 3, "(condition, then, else)")?;
                let c = self.expr(positional[0])?;
                let c = self.condition(c, "the condition of if")?;
                let (a, b) = (arg(1)?, arg(2)?);
                let level = c.level.max(a.level).max(b.level);
                Ok(fold(Self::node(Op::Math(Math::If, vec![c, a, b]), Ty::Num, level, span)))
            }
            "missing" => {
                arity(1, 1, "one argument")?;
                let x = arg(0)?;
                let level = x.level;
                Ok(Self::node(Op::Math(Math::Missing, vec![x]), Ty::Bool, level, span))
            }
            "coalesce" | "clamp" | "abs" | "sqrt" | "exp" | "log" | "sign" | "sigmoid" => {
                let (math, n) = match name {
                    "coalesce" => (Math::Coalesce, 2),
                    "clamp" => (Math::Clamp, 3),
                    "abs" => (Math::Abs, 1),
                    "sqrt" => (Math::Sqrt, 1),
                    "exp" => (Math::Exp, 1),
                    "log" => (Math::Log, 1),
                    "sign" => (Math::Sign, 1),
                    _ => (Math::Sigmoid, 1),
                };
                arity(n, n, &format!("{n} argument(s)"))?;
                let args = (0..n).map(arg).collect::<Result<Vec<_>, _>>()?;
                let level = args.iter().map(|a| a.level).max().unwrap_or(Level::Const);
                Ok(fold(Self::node(Op::Math(math, args), Ty::Num, level, span)))
            }
            _ => fail(format!(
                "no function named {name}; see docs/EXPRESSIONS.md (mean, std, sum, min, max, count, rank, cumsum, revcumsum, discounted, cummin, prefix, suffix, value, parent, children_mean, whiten, credit, label, if, …)"
            )),
        }
    }

    /// A call's argument that must be a string (a score's, a component's or a label's name), or
    /// the error `why` at it.
    fn name_argument<'e>(&self, argument: &'e Expr, why: &str) -> Result<&'e String, FormulaError> {
        match &argument.kind {
            ExprKind::Str(text) => Ok(text),
            _ => Err(self.error(argument.span.clone(), None, why.to_owned())),
        }
    }

    /// The level of a reduction's (or whitening's) result over `scope`.
    fn scope_level(&self, x: &Node, scope: Scope, name: &str) -> Result<Level, FormulaError> {
        match scope {
            Scope::Siblings if x.level == Level::Token => Err(self.error(
                x.span.clone(),
                None,
                format!("{name} over siblings works on steps; this value is one per token"),
            )),
            Scope::Siblings => Ok(Level::Step),
            _ => Ok(x.level.max(Level::Traj)),
        }
    }
}

/// Whether any step of the run carries a first-error label (true or false).
fn labels_first_errors(run: &Run) -> bool {
    run.nodes.flags.iter().any(|f| f & crate::model::FLAG_FIRST_ERROR_LABELLED != 0)
}

fn join<'a>(names: impl Iterator<Item = &'a String>) -> String {
    names.map(String::as_str).collect::<Vec<_>>().join(", ")
}

/// Computes operations on constants now (`$w * 2`, `-1e-6`).
fn fold(node: Node) -> Node {
    let value = match &node.op {
        Op::Neg(x) => match x.op {
            Op::Const(v) => Some(-v),
            _ => None,
        },
        Op::Binary(op, a, b) => match (&a.op, &b.op) {
            (Op::Const(a), Op::Const(b)) => Some(super::nodes::binary_f64(*op, *a, *b)),
            _ => None,
        },
        Op::Math(math, args) if args.iter().all(|a| matches!(a.op, Op::Const(_))) => {
            let values: Vec<f64> = args
                .iter()
                .map(|a| match a.op {
                    Op::Const(v) => v,
                    _ => f64::NAN,
                })
                .collect();
            Some(super::nodes::math_f64(*math, &values))
        }
        _ => None,
    };
    match value {
        Some(v) => Node { op: Op::Const(v), ..node },
        None => node,
    }
}
