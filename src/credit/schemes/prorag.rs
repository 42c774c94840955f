//! ProRAG (`prorag`): dual-granularity advantage, `A = A_outcome + β · z(step score)`, the step
//! scores z-scored over all valid tokens of the group (token-weighted mean, population variance),
//! with ProRAG's step-format bonus (+1 for a well-formed step, −2 otherwise).

use crate::credit::data::moments::{present_sums, weighted_mean_std};
use crate::credit::engine::inputs::Score;
use crate::credit::engine::inputs::outcome_advantages;
use crate::credit::engine::inputs::{score_column, supports_scores};
use crate::credit::kernels::outcome::{OutcomeNorm, OutcomeOptions};
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::{StepAt, StepTerms, scheme};
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{GroupId, NodeId, Run, Sym, TrajectoryId};

scheme!(
    /// ProRAG.
    Prorag,
    knobs: Knobs,
    info: SchemeInfo {
        id: "prorag",
        family: Family::Hybrid,
        display_name: "ProRAG (dual granularity)",
        citation: "ProRAG; lilinwz/ProRAG prorag/rl/trainer.py _generate_and_score_completions",
        needs: "named step scores (the PRM probability) and outcome rewards; token spans weight the steps by their policy tokens when logged",
        source: SourceQuality::FromCode(
            "lilinwz/ProRAG@c7a64110d0c900561fde4292f234b97dfe633e94 (the step-format test is read from step kinds or a `format` score)",
        ),
        checked: "ProRAG's own code (tests/golden/prorag/cases.json, made by its generate.py from ProRAG c7a6411: format_reward_step and the trainer's advantage statements, β, equal outcomes); the worked example of reference/credit-schemes-process.md (with the paper's format term)",
    },
);

/// Step kinds that count as well-formed ProRAG steps (subquery → retrieval, subanswer, answer).
const WELL_FORMED_KINDS: &[&str] = &["search", "subquery", "read", "retrieval", "subanswer", "answer"];

choice! {
    enum FormatSource { None = "none", Kind = "kind", Score = "score" }
}

params! {
    pub struct Knobs {
        beta: f64 = range(0.0, 5.0, "0.3", "weight of the step z-score (prm_beta; the script uses 0.3)"),
        score_param: Score = GROUP,
        format_source: FormatSource = decl("none", "the step-format term: none, as ProRAG's code trains (its format_reward_step prefixes `<step>`, itself a tag, so no step matches a well-formed pattern and every step gets −2, a constant the z-score removes); or, as the paper means it, judged by the step's kind (search, read, answer, …) or a `format` step score ≥ 0.5"),
        format_bonus: f64 = range(0.0, 5.0, "1", "added to a well-formed step's score"),
        format_penalty: f64 = range(0.0, 5.0, "2", "subtracted from a malformed step's score"),
        outcome_norm: OutcomeNorm = decl("grpo", "outcome advantage"),
        epsilon: f64 = range(0.0, 1.0, "0.0001", "added to the outcome std (ProRAG uses 1e-4)"),
    }
}

impl Typed for Prorag {
    fn supports(&self, run: &Run) -> Support {
        supports_scores(run).and(|| crate::credit::engine::inputs::supports_outcomes(run))
    }
    fn step_terms(&self, run: &Run, knobs: &Knobs, _: &Credit, at: StepAt) -> StepTerms {
        let Ok(column) = score_column(run, knobs.score_param.score, "prorag") else { return Vec::new() };
        let node = at.node;
        let source = source_of(knobs.format_source);
        let (bonus, penalty) = (knobs.format_bonus as f32, knobs.format_penalty as f32);
        let scores = run.nodes.scores.get("format").map(Vec::as_slice);
        let mut format = Format { run, source, scores, bonus, penalty, kinds: Vec::new() };
        vec![
            ("p".to_owned(), Some(f64::from(column[node.index()]))),
            ("format term".to_owned(), Some(f64::from(format.of(node)))),
        ]
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        credit(run, knobs, true)
    }
}

/// ProRAG's credit; `fast` lets a run without token spans take the path that reads each step's
/// format term in place (`false` in a test, to check the two paths against each other).
fn credit(run: &Run, knobs: &Knobs, fast: bool) -> Result<Credit, CreditError> {
    let column = score_column(run, knobs.score_param.score, "prorag")?;
    let tr = &run.trajectories;
    let (outcome, _) = outcome_advantages(run, OutcomeOptions { norm: knobs.outcome_norm, eps: knobs.epsilon as f32 });
    let score = crate::credit::engine::inputs::path_column(run, column);
    let source = source_of(knobs.format_source);
    let (bonus, penalty) = (knobs.format_bonus as f32, knobs.format_penalty as f32);
    let beta = knobs.beta as f32;
    let mut terms = Terms::for_rows(
        "A_outcome + β·(p + format term − token mean)/token std, over the group's tokens (a missing p adds 0)",
        &["A_outcome", "token mean", "token std", "β"],
        tr.len(),
    );
    let fast = fast && run.nodes.token_span.is_none();
    let (step, _) = if fast {
        // No token spans (the common case): one weight per trajectory, each step's format
        // term from its path position without a branch.
        let term = move |well_formed: bool| if well_formed { bonus } else { -penalty };
        // One copy of `by_steps` per way of judging a step, its test inlined.
        macro_rules! by_steps {
            ($term:expr) => {
                by_steps(run, &score, &outcome, beta, &mut terms, $term)
            };
        }
        match source {
            Source::None => by_steps!(move |_| 0.0),
            Source::Score => match run.nodes.scores.get("format") {
                Some(format) => {
                    let format = crate::credit::engine::inputs::path_column(run, format);
                    let well_formed: &[f32] = &format;
                    let step = by_steps!(move |i| term(well_formed[i] >= 0.5));
                    crate::credit::engine::inputs::give_path_column(format);
                    step
                }
                None => by_steps!(move |_| -penalty),
            },
            Source::Kind => {
                let kinds = &tr.path_kinds;
                if kinds.codes.len() == tr.path_nodes.len() {
                    // A byte per step (`PathCodes`) and the term of each code.
                    let mut table = [0.0f32; 256];
                    for (slot, &kind) in table.iter_mut().zip(&kinds.labels) {
                        *slot = term(WELL_FORMED_KINDS.contains(&run.label(kind)));
                    }
                    let codes: &[u8] = &kinds.codes;
                    by_steps!(move |i| table[usize::from(codes[i])])
                } else if let Some(set) = well_formed_kinds(run) {
                    // More kinds than a byte codes: each step's kind through its node.
                    let (kind, path): (&[Sym], &[NodeId]) = (&run.nodes.kind, &tr.path_nodes);
                    by_steps!(move |i| {
                        let k = kind[path[i].index()];
                        term(set.iter().fold(false, |hit, &s| hit | (s == k)))
                    })
                } else {
                    by_steps!(move |_| -penalty)
                }
            }
        }
    } else {
        generic(run, &score, &outcome, beta, source, bonus, penalty, &mut terms)
    };
    crate::credit::engine::inputs::give_path_column(score);
    Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
}

/// How the `format_source` parameter judges a step's format.
fn source_of(choice: FormatSource) -> Source {
    match choice {
        FormatSource::Score => Source::Score,
        FormatSource::Kind => Source::Kind,
        FormatSource::None => Source::None,
    }
}

/// How a step's format is judged.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Score,
    Kind,
    None,
}

/// A step's format term (the bonus or −penalty), a kind's looked up once per kind symbol (a run
/// has a handful).
struct Format<'a> {
    run: &'a Run,
    source: Source,
    /// The `format` step score column, for `Source::Score`.
    scores: Option<&'a [f32]>,
    bonus: f32,
    penalty: f32,
    kinds: Vec<(Sym, f32)>,
}

impl Format<'_> {
    fn of_kind(&mut self, kind: Sym) -> f32 {
        if let Some(&(_, term)) = self.kinds.iter().find(|(k, _)| *k == kind) {
            return term;
        }
        let term = if WELL_FORMED_KINDS.contains(&self.run.label(kind)) { self.bonus } else { -self.penalty };
        self.kinds.push((kind, term));
        term
    }

    fn of(&mut self, node: NodeId) -> f32 {
        match self.source {
            Source::None => 0.0,
            Source::Score => {
                let well_formed = self.scores.is_some_and(|f| f[node.index()] >= 0.5);
                if well_formed { self.bonus } else { -self.penalty }
            }
            Source::Kind => self.of_kind(self.run.nodes.kind[node.index()]),
        }
    }
}

/// Appends trajectory `t`'s steps to `steps`: its score p plus the format term, and its token
/// weight (a missing score: NaN, weight 0); `score` is the score column in path order.
fn push_steps(run: &Run, score: &[f32], format: &mut Format<'_>, t: TrajectoryId, steps: &mut Vec<(f32, f32)>) {
    let (tr, nodes) = (&run.trajectories, &run.nodes);
    let path = tr.path(t);
    let any_span = nodes.token_span.is_some() && path.iter().any(|&n| nodes.token_span(n).is_some());
    // A step without a span weighs 1 when others have spans, else its share of the tokens.
    let unspanned = if any_span { 1.0 } else { unspanned_weight(run, t) };
    let range = tr.path_range(t);
    let scores = &score[range.clone()];
    let mut push = |node: NodeId, p: f32| {
        if p.is_nan() {
            return (f32::NAN, 0.0);
        }
        // A span weighs its policy tokens (the code's `rag_mask`: the retrieved documents and
        // the tags after a step carry no weight).
        let weight =
            if any_span { nodes.token_span(node).map_or(1.0, |span| policy_tokens(run, t, span)) } else { unspanned };
        (p + format.of(node), weight)
    };
    if tr.paths_in_node_order {
        // The path's nodes are its positions: no node ids to read.
        let first = range.start;
        steps.extend(scores.iter().enumerate().map(|(k, &p)| push(NodeId::from_index(first + k), p)));
    } else {
        steps.extend(path.iter().zip(scores).map(|(&node, &p)| push(node, p)));
    }
}

/// The symbols of the well-formed kinds the run has, padded with its first (a step's test is
/// then six comparisons, no branch); `None` when it has none of them.
fn well_formed_kinds(run: &Run) -> Option<[Sym; 6]> {
    let found: Vec<Sym> = WELL_FORMED_KINDS.iter().filter_map(|k| run.labels.lookup(k)).collect();
    let first = *found.first()?;
    Some(std::array::from_fn(|i| found.get(i).copied().unwrap_or(first)))
}

/// The policy tokens of a step's span (every token of it without a token mask).
fn policy_tokens(run: &Run, t: TrajectoryId, [start, end]: [u32; 2]) -> f32 {
    let tokens = run.trajectories.token_range(t);
    let span = tokens.start + start as usize..(tokens.start + end as usize).min(tokens.end);
    match run.tokens.mask.as_deref() {
        Some(mask) => span.filter(|&k| mask.get(k).copied().unwrap_or(true)).count() as f32,
        None => span.len() as f32,
    }
}

/// A trajectory's weight per step without token spans: its share of the tokens, 1 without
/// tokens.
fn unspanned_weight(run: &Run, t: TrajectoryId) -> f32 {
    let tr = &run.trajectories;
    let whole = tr.token_range(t).len();
    let steps = tr.path_range(t).len();
    if whole == 0 || steps == 0 { 1.0 } else { whole as f32 / steps as f32 }
}

/// The common case: no token spans. Group by group, each step's `v = p + term(k)` (`k` its path
/// position, `term` its format term) into a small buffer that stays in cache, (Σ w, Σ w·v,
/// Σ w·v²) from per-path sums times the path's weight, then each member's steps written once
/// from the buffer. Runs of consecutive groups on their own threads (`par::by_groups`).
fn by_steps(
    run: &Run,
    score: &[f32],
    outcome: &[f32],
    beta: f32,
    terms: &mut Terms,
    term: impl Fn(usize) -> f32 + Sync + Copy,
) -> (Vec<f32>, Vec<()>) {
    let tr = &run.trajectories;
    // `move`: the scalars are copied into the closure, so the compiler keeps them in registers
    // while it writes the output.
    crate::credit::engine::par::by_groups(run, terms, move |groups, step, terms| {
        // A copy of the test on this thread's stack: the compiler then knows that writing the
        // buffer does not change it, and keeps what it reads in registers.
        let term = term;
        let mut values: Vec<f32> = Vec::new();
        for g in groups {
            let members = run.groups.members(GroupId::from_index(g));
            let mut sums = [0.0f64; 3];
            values.clear();
            for &t in members {
                let range = tr.path_range(t);
                let (first, start) = (range.start, values.len());
                values.extend(score[range].iter().enumerate().map(|(i, &p)| p + term(first + i)));
                let w = f64::from(unspanned_weight(run, t));
                for (total, x) in sums.iter_mut().zip(present_sums(&values[start..])) {
                    *total += w * x;
                }
            }
            let (mean, std) = weighted_mean_std(sums);
            let inverse_std = 1.0 / std;
            let mut next = 0;
            for &t in members {
                let a = outcome[t.index()];
                let slots = step.slots(tr.path_range(t));
                for (slot, &v) in slots.iter_mut().zip(&values[next..]) {
                    let z = ((f64::from(v) - mean) * inverse_std) as f32;
                    // A missing score: the outcome advantage alone (a select, not a branch).
                    *slot = a + beta * if v.is_nan() { 0.0 } else { z };
                }
                next += slots.len();
                terms.set(t.index(), &[f64::from(a), mean, std, f64::from(beta)]);
            }
        }
    })
}

/// Any run: group by group, the step score p (+ format term) and token weight of each of its
/// steps into a small buffer that stays in cache, the token-weighted statistics, then its
/// members' credit.
#[expect(clippy::too_many_arguments, reason = "the scheme's parameters, passed through once")]
fn generic(
    run: &Run,
    score: &[f32],
    outcome: &[f32],
    beta: f32,
    source: Source,
    bonus: f32,
    penalty: f32,
    terms: &mut Terms,
) -> (Vec<f32>, Vec<()>) {
    let tr = &run.trajectories;
    crate::credit::engine::par::by_groups(run, terms, |groups, step, terms| {
        let scores = run.nodes.scores.get("format").map(Vec::as_slice);
        let mut format = Format { run, source, scores, bonus, penalty, kinds: Vec::new() };
        let mut steps: Vec<(f32, f32)> = Vec::new();
        for g in groups {
            let members = run.groups.members(GroupId::from_index(g));
            steps.clear();
            for &t in members {
                push_steps(run, score, &mut format, t, &mut steps);
            }
            let sums = steps.iter().fold([0.0f64; 3], |[total, sum, squares], &(p, w)| {
                if p.is_nan() {
                    return [total, sum, squares];
                }
                let (p, w) = (f64::from(p), f64::from(w));
                [total + w, sum + w * p, squares + w * p * p]
            });
            let (mean, std) = weighted_mean_std(sums);
            let inverse_std = 1.0 / std;
            let mut next = steps.iter();
            for &t in members {
                let a = outcome[t.index()];
                let credit = |&(p, _): &(f32, f32)| {
                    let z = if p.is_nan() { 0.0 } else { ((f64::from(p) - mean) * inverse_std) as f32 };
                    a + beta * z
                };
                step.write(tr.path_range(t), next.by_ref().map(credit));
                terms.set(t.index(), &[f64::from(a), mean, std, f64::from(beta)]);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credit::Params;
    use crate::credit::params::declare::Declared as _;
    use crate::model::{NewGroup, NewStep, NewTokens, Outcome, RunBuilder, TreeId};

    /// Groups of four chains with kinds (well-formed or not), a `format` score, missing PRM
    /// scores and, in some groups, token counts; `interleaved`: the group's steps added step
    /// index by step index, so that paths are not in node order.
    fn chains(interleaved: bool) -> Run {
        let mut b = RunBuilder::new("prorag", "test");
        let kinds = ["search", "think", "answer", "read", "plan"];
        for g in 0..10usize {
            let group = b.add_group(&NewGroup { key: &format!("g{g}"), ..NewGroup::default() }).0;
            let members: Vec<usize> = (4 * g..4 * g + 4).collect();
            let steps = |t: usize| 1 + (t * 7) % 9;
            let mut leaves = [NodeId::NONE; 4];
            let mut add = |t: usize, s: usize, parent: NodeId| {
                let p = ((t * 13 + s * 29) % 17) as f32 / 8.0 - 1.0;
                let step = NewStep {
                    kind: Some(kinds[(t + 2 * s) % kinds.len()]),
                    scores: vec![
                        ("prm", if (t + s) % 11 == 3 { f32::NAN } else { p }),
                        ("format", (s % 3) as f32 / 2.0),
                    ],
                    ..NewStep::default()
                };
                b.add_node(group, parent, &step)
            };
            if interleaved {
                for s in 0..9 {
                    for (k, &t) in members.iter().enumerate().filter(|&(_, &t)| s < steps(t)) {
                        leaves[k] = add(t, s, leaves[k]);
                    }
                }
            } else {
                for (k, &t) in members.iter().enumerate() {
                    for s in 0..steps(t) {
                        leaves[k] = add(t, s, leaves[k]);
                    }
                }
            }
            for (k, &t) in members.iter().enumerate() {
                let mask = vec![true; if t % 8 < 4 { 0 } else { 3 + t % 5 }];
                let tokens = NewTokens { mask: Some(&mask), ..NewTokens::default() };
                let outcome = Outcome { reward: Some(((t * 5) % 3) as f32), ..Outcome::default() };
                b.add_trajectory(&format!("t{t}"), group, TreeId::NONE, leaves[k], &outcome, &tokens);
            }
        }
        b.finish()
    }

    #[test]
    fn the_in_place_path_agrees_with_the_buffered_one() {
        let run = chains(false);
        assert!(run.trajectories.paths_in_node_order && run.nodes.token_span.is_none());
        let interleaved = chains(true);
        assert!(!interleaved.trajectories.paths_in_node_order);
        // Without a byte per step's kind (a run with more than 256 kinds), each through its node.
        let mut uncoded = run.clone();
        uncoded.trajectories.path_kinds = crate::model::PathCodes::default();
        let sources = ["kind", "score", "none"];
        let cases = sources.iter().flat_map(|&s| [(s, &run), (s, &interleaved)]).chain([("kind", &uncoded)]);
        for (source, run) in cases {
            let sets = [("format_source".to_owned(), source.to_owned())];
            let params = Params::resolve(&Prorag, None, &sets).unwrap();
            let knobs = Knobs::of(&params);
            let fast = credit(run, &knobs, true).unwrap();
            let buffered = credit(run, &knobs, false).unwrap();
            assert_eq!(fast.step.len(), buffered.step.len());
            let mut differ = 0;
            for (i, (&f, &b)) in fast.step.iter().zip(&buffered.step).enumerate() {
                assert!((f - b).abs() <= 1e-6 * (1.0 + b.abs()), "{source} {i}: {f} vs {b}");
                differ += usize::from(f.to_bits() != b.to_bits());
            }
            assert!(
                differ * 10 < fast.step.len(),
                "{source}: {differ} of {} differ in their last bits",
                fast.step.len()
            );
        }
        // The format term moves the scores: with it the credit is not that of `none`.
        let none = Params::resolve(&Prorag, None, &[("format_source".to_owned(), "none".to_owned())]).unwrap();
        let kind = Params::resolve(&Prorag, None, &[("format_source".to_owned(), "kind".to_owned())]).unwrap();
        assert_ne!(
            credit(&run, &Knobs::of(&none), true).unwrap().step,
            credit(&run, &Knobs::of(&kind), true).unwrap().step
        );
    }
}
