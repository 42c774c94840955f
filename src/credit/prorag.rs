//! ProRAG (`prorag`): dual-granularity advantage, `A = A_outcome + β · z(step score)`, the step
//! scores z-scored over all valid tokens of the group (token-weighted mean, population variance),
//! with ProRAG's step-format bonus (+1 for a well-formed step, −2 otherwise).

use std::sync::LazyLock;

use super::outcome::outcome_advantages;
use super::prm_process::{SCORE_PARAM, score_column, supports_scores};
use super::{Credit, CreditError, Family, ParamSpec, Params, Scheme, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::Run;

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
        let nodes = &run.nodes;
        let (outcome, _) = outcome_advantages(run, params);
        let (bonus, penalty) = (params.f64("format_bonus") as f32, params.f64("format_penalty") as f32);
        let format_source = params.choice("format_source");
        let format_scores = nodes.scores.get("format");
        // Step score p (+ format term) and its token weight, per path position.
        #[derive(Clone, Copy, PartialEq)]
        enum Source {
            Score,
            Kind,
            Always,
            None,
        }
        let source = match format_source {
            "score" => Source::Score,
            "kind" => Source::Kind,
            "none" => Source::None,
            _ => Source::Always,
        };
        // Whether a step kind is well formed, looked up once per kind symbol (a run has a handful).
        let mut kinds: Vec<(crate::model::Sym, bool)> = Vec::new();
        let mut well_formed = |node: crate::model::NodeId| match source {
            Source::Score => format_scores.is_some_and(|f| f[node.index()] >= 0.5),
            Source::Kind => {
                let kind = nodes.kind[node.index()];
                if let Some(&(_, good)) = kinds.iter().find(|(k, _)| *k == kind) {
                    good
                } else {
                    let good = WELL_FORMED_KINDS.contains(&run.label(kind));
                    kinds.push((kind, good));
                    good
                }
            }
            Source::Always | Source::None => true,
        };
        let beta = params.f64("beta") as f32;
        let mut terms = Terms::for_rows(
            "A_outcome + β·z(step score), z over the group's tokens",
            &["A_outcome", "token mean", "token std", "β"],
            tr.len(),
        );
        // Group by group: the step score p (+ format term) and token weight of each of its steps,
        // into a small buffer that stays in cache; the token-weighted statistics; then its
        // members' credit (`StepWriter`: in order with no fill first when the groups allow).
        let mut step = super::common::StepWriter::new(run);
        let mut steps: Vec<(f32, f32)> = Vec::new();
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            steps.clear();
            for &t in members {
                let whole = tr.token_range(t).len();
                let path = tr.path(t);
                let any_span = nodes.token_span.is_some() && path.iter().any(|&n| nodes.token_span(n).is_some());
                steps.extend(path.iter().map(|&node| {
                    let score = column[node.index()];
                    if score.is_nan() {
                        return (f32::NAN, 0.0);
                    }
                    let format = match source {
                        Source::None => 0.0,
                        _ if well_formed(node) => bonus,
                        _ => -penalty,
                    };
                    let weight = match nodes.token_span(node) {
                        Some([start, end]) => (end - start) as f32,
                        None if any_span || whole == 0 => 1.0,
                        None => whole as f32 / path.len() as f32,
                    };
                    (score + format, weight)
                }));
            }
            let total = weighted_sum(&steps, |_| 1.0);
            let mean = if total > 0.0 { weighted_sum(&steps, |p| p) / total } else { 0.0 };
            let var = if total > 0.0 { weighted_sum(&steps, |p| (p - mean).powi(2)) / total } else { 0.0 };
            // std := 1 when the group has at most one valid token.
            let std = if total <= 1.0 { 1.0 } else { (var + 1e-8).sqrt() };
            let mut next = steps.iter();
            for &t in members {
                let a = outcome[t.index()];
                let range = tr.path_range(t);
                let credit = |&(p, _): &(f32, f32)| {
                    let z = if p.is_nan() { 0.0 } else { ((f64::from(p) - mean) / std) as f32 };
                    a + beta * z
                };
                step.write(range, next.by_ref().map(credit));
                terms.set(t.index(), &[f64::from(a), mean, std, f64::from(beta)]);
            }
        }
        Ok(Credit { step: step.finish(), token: None, token_returns: None, terms, level: Some(super::Level::Step) })
    }
}
