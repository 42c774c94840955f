//! ProRAG (`prorag`): dual-granularity advantage, `A = A_outcome + β · z(step score)`, the step
//! scores z-scored over all valid tokens of the group (token-weighted mean, population variance),
//! with ProRAG's step-format bonus (+1 for a well-formed step, −2 otherwise).

use std::sync::LazyLock;

use super::outcome::outcome_advantages;
use super::prm_process::{SCORE_PARAM, score_column, supports_scores};
use super::{Credit, CreditError, Family, ParamSpec, Params, Scheme, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::{NodeId, Run, Sym, TrajectoryId};

/// ProRAG.
pub struct Prorag;

static INFO: SchemeInfo = SchemeInfo {
    id: "prorag",
    family: Family::Hybrid,
    display_name: "ProRAG (dual granularity)",
    citation: "ProRAG; lilinwz/ProRAG prorag/rl/trainer.py _generate_and_score_completions",
    needs: "named step scores (the PRM probability) and outcome rewards; token spans weight the steps when logged",
    source: SourceQuality::FromCode(
        "lilinwz/ProRAG@c7a64110d0c900561fde4292f234b97dfe633e94 (the step-format test is read from step kinds or a `format` score)",
    ),
};

/// Step kinds that count as well-formed ProRAG steps (subquery → retrieval, subanswer, answer).
const WELL_FORMED_KINDS: &[&str] = &["search", "subquery", "read", "retrieval", "subanswer", "answer"];

static PARAMS: LazyLock<Vec<ParamSpec>> = LazyLock::new(|| {
    vec![
        ParamSpec::float("beta", 0.0, 5.0, "0.3", "weight of the step z-score (prm_beta; the script uses 0.3)"),
        SCORE_PARAM,
        ParamSpec::choice(
            "format_source",
            &["kind", "score", "none"],
            "kind",
            "how a step's format is judged: its kind (search, read, answer, …), a `format` step score ≥ 0.5, or no format term",
        ),
        ParamSpec::float("format_bonus", 0.0, 5.0, "1", "added to a well-formed step's score"),
        ParamSpec::float("format_penalty", 0.0, 5.0, "2", "subtracted from a malformed step's score"),
        ParamSpec::choice("outcome_norm", &["grpo", "mean", "rloo"], "grpo", "outcome advantage"),
        ParamSpec::float("epsilon", 0.0, 1.0, "0.0001", "added to the outcome std (ProRAG uses 1e-4)"),
    ]
});

/// Σ w · f(p) over the `(p, w)` of a group's steps; a missing score has weight 0 and its term is
/// left out, not multiplied (0 · NaN).
/// (Σ w, Σ w·p) over the `(p, w)` of a group's steps in one pass, missing scores left out.
fn weighted_moments(steps: &[(f32, f32)]) -> (f64, f64) {
    let mut lanes = [[0.0f64; 2]; 4];
    let chunks = steps.chunks_exact(4);
    let present =
        |(p, w): (f32, f32)| if p.is_nan() { (0.0, 0.0) } else { (f64::from(w), f64::from(w) * f64::from(p)) };
    let (mut total, mut sum) = (0.0, 0.0);
    for &x in chunks.remainder() {
        let (w, wp) = present(x);
        total += w;
        sum += wp;
    }
    for chunk in chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            let (w, wp) = present(x);
            lane[0] += w;
            lane[1] += wp;
        }
    }
    let add = |i: usize| (lanes[0][i] + lanes[1][i]) + (lanes[2][i] + lanes[3][i]);
    (add(0) + total, add(1) + sum)
}

fn weighted_sum(steps: &[(f32, f32)], f: impl Fn(f64) -> f64) -> f64 {
    super::common::lane_sum(steps, |(p, w)| if p.is_nan() { 0.0 } else { f64::from(w) * f(f64::from(p)) })
}

impl Scheme for Prorag {
    fn info(&self) -> &SchemeInfo {
        &INFO
    }
    fn params(&self) -> &[ParamSpec] {
        &PARAMS
    }
    fn supports(&self, run: &Run) -> Support {
        if let Support::No(reason) = supports_scores(run) {
            return Support::No(reason);
        }
        if !super::outcome::has_outcomes(run) {
            return Support::No("needs outcome rewards".to_owned());
        }
        Support::Yes
    }
    fn compute(&self, run: &Run, params: &Params) -> Result<Credit, CreditError> {
        let column = score_column(run, params, "prorag")?;
        let tr = &run.trajectories;
        let (outcome, _) = outcome_advantages(run, params);
        let score = super::common::path_column(run, column);
        let source = match params.choice("format_source") {
            "score" => Source::Score,
            "kind" => Source::Kind,
            "none" => Source::None,
            _ => Source::Always,
        };
        let (bonus, penalty) = (params.f64("format_bonus") as f32, params.f64("format_penalty") as f32);
        let beta = params.f64("beta") as f32;
        let mut terms = Terms::for_rows(
            "A_outcome + β·z(step score), z over the group's tokens",
            &["A_outcome", "token mean", "token std", "β"],
            tr.len(),
        );
        // Group by group: the step score p (+ format term) and token weight of each of its steps,
        // into a small buffer that stays in cache; the token-weighted statistics; then its
        // members' credit. Runs of consecutive groups on their own threads (`par::by_groups`).
        let (step, _) = super::par::by_groups(run, &mut terms, |groups, step, terms| {
            let scores = run.nodes.scores.get("format").map(Vec::as_slice);
            let mut format = Format { run, source, scores, bonus, penalty, kinds: Vec::new() };
            let mut steps: Vec<(f32, f32)> = Vec::new();
            for g in groups {
                let members = run.groups.members(crate::model::GroupId::from_index(g));
                steps.clear();
                for &t in members {
                    push_steps(run, &score, &mut format, t, &mut steps);
                }
                // Σ w and Σ w·p in one pass, then the population variance around the mean.
                let (total, sum) = weighted_moments(&steps);
                let mean = if total > 0.0 { sum / total } else { 0.0 };
                let var = if total > 0.0 { weighted_sum(&steps, |p| (p - mean).powi(2)) / total } else { 0.0 };
                // std := 1 when the group has at most one valid token.
                let std = if total <= 1.0 { 1.0 } else { (var + 1e-8).sqrt() };
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
        });
        super::common::give_path_column(score);
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(super::Level::Step) })
    }
}

/// How a step's format is judged.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Score,
    Kind,
    Always,
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
            Source::Always => self.bonus,
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
    let whole = tr.token_range(t).len();
    let path = tr.path(t);
    let any_span = nodes.token_span.is_some() && path.iter().any(|&n| nodes.token_span(n).is_some());
    // A step without a span weighs 1 when others have spans, else its share of the tokens.
    let unspanned = if any_span || whole == 0 { 1.0 } else { whole as f32 / path.len() as f32 };
    let range = tr.path_range(t);
    let scores = &score[range.clone()];
    if tr.paths_in_node_order && !any_span && format.source == Source::Kind {
        // The common case in one tight loop: the path's nodes are its positions (no node ids to
        // read), one weight for every step, the kind's term looked up only when the kind changes.
        let (mut kind, mut term) = (Sym::NONE, 0.0);
        steps.extend(scores.iter().zip(&nodes.kind[range]).map(|(&p, &k)| {
            if k != kind || format.kinds.is_empty() {
                (kind, term) = (k, format.of_kind(k));
            }
            if p.is_nan() { (f32::NAN, 0.0) } else { (p + term, unspanned) }
        }));
        return;
    }
    let mut push = |node: NodeId, p: f32| {
        if p.is_nan() {
            return (f32::NAN, 0.0);
        }
        let weight = if any_span { nodes.token_span(node).map_or(1.0, |[s, e]| (e - s) as f32) } else { unspanned };
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
