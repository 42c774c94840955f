//! The syntax of credit formulas (docs/EXPRESSIONS.md): parameters (`$w = 0.3`), named terms
//! (`let adv = …`) and one expression, parsed with winnow into a tree that keeps each part's place
//! in the text, so that later errors can point at it.

use std::ops::Range;

use winnow::ascii::{float, multispace1, till_line_ending};
use winnow::combinator::{alt, cut_err, delimited, eof, not, opt, preceded, repeat, separated, terminated};
use winnow::error::{AddContext as _, ContextError, ErrMode, StrContext, StrContextValue};
use winnow::stream::{Location as _, Stream as _};
use winnow::token::{one_of, take_while};
use winnow::{LocatingSlice, ModalResult, Parser};

type In<'a> = LocatingSlice<&'a str>;

/// A byte range in the formula's text.
pub type Span = Range<usize>;

/// A parsed formula: its statements in order, then the expression whose value is the credit.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Parameters and named terms, in the order written.
    pub statements: Vec<Statement>,
    /// The credit.
    pub body: Expr,
}

/// A statement before the credit expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `$name = value` or `$name = value in [low, high]`: a named constant the app shows as a slider.
    Param(ParamDef),
    /// `let name = expr`: a named term (shown with its value in the inspector).
    Let {
        /// Its name.
        name: String,
        /// Where the name is.
        span: Span,
        /// Its value.
        value: Expr,
    },
}

/// A named parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDef {
    /// Name, without the `$`.
    pub name: String,
    /// Where `$name` is.
    pub span: Span,
    /// Its value.
    pub value: f64,
    /// Where the value's text is (a slider rewrites it there).
    pub value_span: Span,
    /// The slider's range, when given (`in [0, 1]`).
    pub range: Option<(f64, f64)>,
}

/// An expression and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`.
    Neg,
    /// `not x`.
    Not,
}

/// Binary operators, loosest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `or`.
    Or,
    /// `and`.
    And,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `^` (right-associative).
    Pow,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Or => "or",
            Self::And => "and",
            Self::Eq => "==",
            Self::Ne => "!=",
            Self::Lt => "<",
            Self::Le => "<=",
            Self::Gt => ">",
            Self::Ge => ">=",
            Self::Add => "+",
            Self::Sub => "-",
            Self::Mul => "*",
            Self::Div => "/",
            Self::Pow => "^",
        }
    }
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A number.
    Num(f64),
    /// A string (a label: `role == "progress"`, a scheme id: `credit("grpo")`).
    Str(String),
    /// A name: a column, a named term, or a word an operation takes (`group`, `node`).
    Name(String),
    /// `$name`.
    Param(String),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `name(args…)`.
    Call {
        /// The function.
        name: String,
        /// Where its name is.
        name_span: Span,
        /// Its arguments.
        args: Vec<Arg>,
    },
}

/// A call's argument: positional, or `name=value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    /// The keyword, for `name=value`.
    pub name: Option<String>,
    /// The value.
    pub value: Expr,
}

/// A syntax error: where, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where it is.
    pub span: Span,
    /// What is wrong.
    pub message: String,
}

/// Words that cannot name a term.
pub const RESERVED: &[&str] = &["let", "and", "or", "not", "in", "true", "false"];

/// Parses a formula.
pub fn parse(text: &str) -> Result<Program, SyntaxError> {
    DEPTH.with(|d| d.set(0));
    program.parse(LocatingSlice::new(text)).map_err(|e| {
        let at = e.offset();
        let found = text.get(at..).and_then(|rest| rest.chars().next());
        let expected: Vec<String> = e
            .inner()
            .context()
            .filter_map(|c| match c {
                StrContext::Expected(StrContextValue::Description(d)) => Some((*d).to_owned()),
                StrContext::Expected(StrContextValue::StringLiteral(s)) => Some(format!("`{s}`")),
                StrContext::Expected(StrContextValue::CharLiteral(c)) => Some(format!("`{c}`")),
                _ => None,
            })
            .collect();
        let found = match found {
            Some(c) => format!("`{c}`"),
            None => "the end of the formula".to_owned(),
        };
        let message = if expected.is_empty() {
            format!("unexpected {found}")
        } else {
            // The innermost expectation is the most precise ("a number, a name, …", not "an expression").
            format!("expected {}, found {found}", expected[0])
        };
        let end = text.get(at..).and_then(|r| r.chars().next()).map_or(at, |c| at + c.len_utf8());
        SyntaxError { span: at..end, message }
    })
}

fn expected(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

/// Spaces, newlines and `#` comments.
fn ws(input: &mut In<'_>) -> ModalResult<()> {
    repeat(0.., alt((multispace1.void(), ('#', till_line_ending).void()))).parse_next(input)
}

/// `p`, then spaces.
fn lexeme<'a, O>(p: impl Parser<In<'a>, O, ErrMode<ContextError>>) -> impl Parser<In<'a>, O, ErrMode<ContextError>> {
    terminated(p, ws)
}

fn ident<'a>(input: &mut In<'a>) -> ModalResult<&'a str> {
    (
        one_of(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(0.., |c: char| c.is_ascii_alphanumeric() || c == '_'),
    )
        .take()
        .parse_next(input)
}

/// A keyword: the word, not the start of a longer name.
fn keyword<'a>(word: &'static str) -> impl Parser<In<'a>, &'a str, ErrMode<ContextError>> {
    lexeme(ident.verify(move |w: &str| w == word))
}

fn number(input: &mut In<'_>) -> ModalResult<f64> {
    // No sign: `-` is an operator. `float` alone would take `inf` and `nan` words.
    (
        take_while(1.., |c: char| c.is_ascii_digit() || c == '.'),
        opt((one_of(['e', 'E']), opt(one_of(['+', '-'])), take_while(1.., |c: char| c.is_ascii_digit()))),
    )
        .take()
        .and_then(float)
        .context(expected("a number"))
        .parse_next(input)
}

fn string(input: &mut In<'_>) -> ModalResult<String> {
    alt((
        delimited('"', take_while(0.., |c| c != '"'), cut_err('"').context(expected("a closing `\"`"))),
        delimited('\'', take_while(0.., |c| c != '\''), cut_err('\'').context(expected("a closing `'`"))),
    ))
    .map(str::to_owned)
    .parse_next(input)
}

fn program(input: &mut In<'_>) -> ModalResult<Program> {
    ws.parse_next(input)?;
    let mut statements = Vec::new();
    loop {
        if let Some(param) = opt(param_def).parse_next(input)? {
            statements.push(Statement::Param(param));
        } else if let Some(statement) = opt(let_statement).parse_next(input)? {
            statements.push(statement);
        } else {
            break;
        }
        // Statements end with a `;` or a newline (or nothing where the next one plainly starts).
        let _: Option<char> = opt(lexeme(';')).parse_next(input)?;
    }
    let body = cut_err(expr).context(expected("an expression")).parse_next(input)?;
    let _: Option<char> = opt(lexeme(';')).parse_next(input)?;
    cut_err(eof).context(expected("an operator or the end of the formula")).parse_next(input)?;
    Ok(Program { statements, body })
}

fn param_def(input: &mut In<'_>) -> ModalResult<ParamDef> {
    let (name, span) = preceded('$', ident).with_span().parse_next(input)?;
    ws.parse_next(input)?;
    let _: char = cut_err(lexeme('=')).context(expected("`=` and the parameter's value")).parse_next(input)?;
    let start = input.current_token_start();
    let negative = opt(lexeme('-')).parse_next(input)?.is_some();
    let (value, number) = cut_err(terminated(number.with_span(), ws)).parse_next(input)?;
    let value_span = start..number.end;
    let value = if negative { -value } else { value };
    let range = opt(preceded(
        keyword("in"),
        cut_err(delimited(lexeme('['), (signed, preceded(lexeme(','), signed)), lexeme(']')))
            .context(expected("a range `[low, high]`")),
    ))
    .parse_next(input)?;
    Ok(ParamDef { name: name.to_owned(), span, value, value_span, range })
}

fn signed(input: &mut In<'_>) -> ModalResult<f64> {
    let negative = opt(lexeme('-')).parse_next(input)?.is_some();
    let value = lexeme(number).parse_next(input)?;
    Ok(if negative { -value } else { value })
}

fn let_statement(input: &mut In<'_>) -> ModalResult<Statement> {
    keyword("let").parse_next(input)?;
    let (name, span) = cut_err(lexeme(ident.with_span())).context(expected("a name")).parse_next(input)?;
    let _: char = cut_err(lexeme('=')).context(expected("`=`")).parse_next(input)?;
    let value = cut_err(expr).context(expected("an expression")).parse_next(input)?;
    Ok(Statement::Let { name: name.to_owned(), span, value })
}

/// How deep expressions may nest (parentheses, calls, unary operators): far past what anyone
/// writes, and well within a thread's stack however the formula was made.
pub const MAX_DEPTH: usize = 32;

thread_local! {
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One level of nesting while it lives; an error past [`MAX_DEPTH`].
struct Nesting;

impl Nesting {
    fn enter(input: &In<'_>) -> Result<Self, ErrMode<ContextError>> {
        let depth = DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let nesting = Self;
        if depth > MAX_DEPTH {
            let error = ContextError::new().add_context(
                input,
                &input.checkpoint(),
                expected("an expression nested at most 32 deep"),
            );
            return Err(ErrMode::Cut(error));
        }
        Ok(nesting)
    }
}

impl Drop for Nesting {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

fn expr(input: &mut In<'_>) -> ModalResult<Expr> {
    let _nesting = Nesting::enter(input)?;
    or_expr(input)
}

fn binary(op: BinOp, left: Expr, right: Expr) -> Expr {
    let span = left.span.start..right.span.end;
    Expr { kind: ExprKind::Binary(op, Box::new(left), Box::new(right)), span }
}

/// A left-associative level: `next (op next)*`.
fn left_assoc(
    input: &mut In<'_>,
    next: fn(&mut In<'_>) -> ModalResult<Expr>,
    op: fn(&mut In<'_>) -> ModalResult<BinOp>,
) -> ModalResult<Expr> {
    let mut left = next(input)?;
    while let Some(op) = opt(op).parse_next(input)? {
        let right = cut_err(next).context(expected("an operand")).parse_next(input)?;
        left = binary(op, left, right);
    }
    Ok(left)
}

fn or_expr(input: &mut In<'_>) -> ModalResult<Expr> {
    left_assoc(input, and_expr, |i| keyword("or").value(BinOp::Or).parse_next(i))
}

fn and_expr(input: &mut In<'_>) -> ModalResult<Expr> {
    left_assoc(input, not_expr, |i| keyword("and").value(BinOp::And).parse_next(i))
}

/// A prefix operator (`not`, `-`) applied to `this` again, or else `next`.
fn prefixed(
    input: &mut In<'_>,
    operator: fn(&mut In<'_>) -> ModalResult<()>,
    op: UnOp,
    this: fn(&mut In<'_>) -> ModalResult<Expr>,
    next: fn(&mut In<'_>) -> ModalResult<Expr>,
) -> ModalResult<Expr> {
    let start = input.current_token_start();
    if opt(operator).parse_next(input)?.is_some() {
        let _nesting = Nesting::enter(input)?;
        let operand = cut_err(this).context(expected("an operand")).parse_next(input)?;
        let span = start..operand.span.end;
        return Ok(Expr { kind: ExprKind::Unary(op, Box::new(operand)), span });
    }
    next(input)
}

fn not_expr(input: &mut In<'_>) -> ModalResult<Expr> {
    prefixed(input, |i| keyword("not").void().parse_next(i), UnOp::Not, not_expr, comparison)
}

fn comparison(input: &mut In<'_>) -> ModalResult<Expr> {
    left_assoc(input, additive, |i| {
        lexeme(alt((
            "==".value(BinOp::Eq),
            "!=".value(BinOp::Ne),
            "<=".value(BinOp::Le),
            ">=".value(BinOp::Ge),
            "<".value(BinOp::Lt),
            ">".value(BinOp::Gt),
        )))
        .parse_next(i)
    })
}

fn additive(input: &mut In<'_>) -> ModalResult<Expr> {
    left_assoc(input, multiplicative, |i| lexeme(alt(('+'.value(BinOp::Add), '-'.value(BinOp::Sub)))).parse_next(i))
}

fn multiplicative(input: &mut In<'_>) -> ModalResult<Expr> {
    left_assoc(input, unary, |i| lexeme(alt(('*'.value(BinOp::Mul), '/'.value(BinOp::Div)))).parse_next(i))
}

fn unary(input: &mut In<'_>) -> ModalResult<Expr> {
    prefixed(input, |i| lexeme('-').void().parse_next(i), UnOp::Neg, unary, power)
}

/// `a ^ b ^ c` is `a ^ (b ^ c)`, and `-a ^ 2` is `-(a ^ 2)`.
fn power(input: &mut In<'_>) -> ModalResult<Expr> {
    let base = primary(input)?;
    if opt(lexeme('^')).parse_next(input)?.is_some() {
        let exponent = cut_err(unary).context(expected("an exponent")).parse_next(input)?;
        return Ok(binary(BinOp::Pow, base, exponent));
    }
    Ok(base)
}

fn primary(input: &mut In<'_>) -> ModalResult<Expr> {
    let start = input.current_token_start();
    let kind = alt((
        number.map(ExprKind::Num),
        string.map(ExprKind::Str),
        preceded('$', cut_err(ident).context(expected("a parameter name")))
            .map(|n: &str| ExprKind::Param(n.to_owned())),
        delimited(lexeme('('), cut_err(expr), cut_err(')').context(expected("`)`"))).map(|e| e.kind),
        call_or_name,
    ))
    .context(expected("a number, a name, a call or `(`"))
    .parse_next(input)?;
    let end = input.current_token_start();
    ws.parse_next(input)?;
    Ok(Expr { kind, span: start..end })
}

fn call_or_name(input: &mut In<'_>) -> ModalResult<ExprKind> {
    let (name, name_span) = ident
        .with_span()
        .verify(|(w, _): &(&str, Span)| !RESERVED.contains(w) || matches!(*w, "true" | "false"))
        .parse_next(input)?;
    let checkpoint = input.checkpoint();
    ws.parse_next(input)?;
    if opt(lexeme('(')).parse_next(input)?.is_none() {
        input.reset(&checkpoint);
        return Ok(ExprKind::Name(name.to_owned()));
    }
    let args = cut_err(terminated(separated(0.., argument, lexeme(',')), (opt(lexeme(',')), ')')))
        .context(expected("`,` or `)`"))
        .parse_next(input)?;
    Ok(ExprKind::Call { name: name.to_owned(), name_span, args })
}

fn argument(input: &mut In<'_>) -> ModalResult<Arg> {
    let checkpoint = input.checkpoint();
    if let Some(name) = opt(terminated(lexeme(ident), (lexeme('='), not('=')))).parse_next(input)? {
        let value = cut_err(expr).context(expected("a value")).parse_next(input)?;
        return Ok(Arg { name: Some(name.to_owned()), value });
    }
    input.reset(&checkpoint);
    Ok(Arg { name: None, value: expr(input)? })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Num(v) => format!("{v}"),
            ExprKind::Str(s) => format!("{s:?}"),
            ExprKind::Name(n) => n.clone(),
            ExprKind::Param(n) => format!("${n}"),
            ExprKind::Unary(UnOp::Neg, x) => format!("(-{})", show(x)),
            ExprKind::Unary(UnOp::Not, x) => format!("(not {})", show(x)),
            ExprKind::Binary(op, a, b) => format!("({} {} {})", show(a), op.symbol(), show(b)),
            ExprKind::Call { name, args, .. } => {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| match &a.name {
                        Some(n) => format!("{n}={}", show(&a.value)),
                        None => show(&a.value),
                    })
                    .collect();
                format!("{name}({})", args.join(", "))
            }
        }
    }

    fn body(text: &str) -> String {
        show(&parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}")).body)
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(body("1 + 2 * 3 - 4"), "((1 + (2 * 3)) - 4)");
        assert_eq!(body("-R ^ 2 ^ 3"), "(-(R ^ (2 ^ 3)))");
        assert_eq!(body("a < b and not c or d == \"x\""), "(((a < b) and (not c)) or (d == \"x\"))");
        assert_eq!(
            body("(R - mean(R, group)) / (std(R, group, unbiased) + 1e-6)"),
            "((R - mean(R, group)) / (std(R, group, unbiased) + 0.000001))"
        );
        assert_eq!(body("whiten(x, batch, by=tokens)"), "whiten(x, batch, by=tokens)");
        assert_eq!(body("if(x >= 0.5, 1, 0) # a comment"), "if((x >= 0.5), 1, 0)");
    }

    #[test]
    fn statements_parameters_and_spans() {
        let text = "$w = 0.3 in [0, 1]\n$k=-2\nlet adv = R - mean(R, group);\nadv * $w";
        let program = parse(text).unwrap();
        let Statement::Param(w) = &program.statements[0] else { panic!() };
        assert_eq!((w.name.as_str(), w.value, w.range), ("w", 0.3, Some((0.0, 1.0))));
        assert_eq!(&text[w.value_span.clone()], "0.3");
        let Statement::Param(k) = &program.statements[1] else { panic!() };
        assert_eq!((k.value, &text[k.value_span.clone()]), (-2.0, "-2"));
        let Statement::Let { name, value, .. } = &program.statements[2] else { panic!() };
        assert_eq!((name.as_str(), show(value)), ("adv", "(R - mean(R, group))".to_owned()));
        assert_eq!(show(&program.body), "(adv * $w)");
        assert_eq!(&text[program.body.span.clone()], "adv * $w");
    }

    #[test]
    fn errors_point_at_the_place() {
        let err = parse("R - ").unwrap_err();
        assert_eq!(err.span.start, 4, "{err:?}");
        let err = parse("mean(R, group").unwrap_err();
        assert_eq!(err.span.start, 13, "{err:?}");
        let err = parse("R R").unwrap_err();
        assert_eq!(err.span.start, 2, "{err:?}");
        assert!(err.message.contains("operator"), "{err:?}");
        assert!(parse("").is_err());
        assert!(parse("let = 3; R").is_err());
    }

    #[test]
    fn nesting_past_the_limit_is_an_error_not_a_stack_overflow() {
        for deep in [
            format!("{}R{}", "(".repeat(100_000), ")".repeat(100_000)),
            format!("{}R", "-".repeat(100_000)),
            format!("{}true", "not ".repeat(100_000)),
            format!("{}R{}", "abs(".repeat(100_000), ")".repeat(100_000)),
        ] {
            let err = parse(&deep).unwrap_err();
            assert!(err.message.contains("nested at most 32 deep"), "{}", err.message);
        }
        // Within the limit, and the limit is per formula (tests/it/formulas.rs checks the limit on
        // a small stack).
        let fine = format!("{}-R{}", "abs((".repeat(MAX_DEPTH / 2 - 1), "))".repeat(MAX_DEPTH / 2 - 1));
        assert!(parse(&fine).is_ok() && parse(&fine).is_ok());
    }
}
