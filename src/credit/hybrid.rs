//! Hybrid process + outcome (`hybrid`): `α · A_outcome + β · normalized step score`, with a choice
//! of normalization, so any step score can be mixed into outcome credit.

use std::sync::LazyLock;

use super::grpo::group_stats;
use super::outcome::{OUTCOME_PARAMS, outcome_advantages};
use super::prm_process::{SCORE_PARAM, score_column, supports_scores};
use super::{Credit, CreditError, Family, ParamSpec, Params, Scheme, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::Run;

/// Hybrid credit.
pub struct Hybrid;

static INFO: SchemeInfo = SchemeInfo {
    id: "hybrid",
    family: Family::Hybrid,
    display_name: "Hybrid α·outcome + β·process",
    citation: "the generic mixture behind PRM-augmented GRPO (e.g. DeepSeekMath §4.1.3, PURE's PRMVR mode)",
    needs: "named step scores and outcome rewards",
    source: SourceQuality::Approximate("a generic mixture, not one paper's exact rule"),
};

static PARAMS: LazyLock<Vec<ParamSpec>> = LazyLock::new(|| {
    let mut params = vec![
        ParamSpec::float("alpha", 0.0, 5.0, "1", "weight of the outcome advantage"),
        ParamSpec::float("beta", 0.0, 5.0, "0.5", "weight of the normalized step score"),
        SCORE_PARAM,
        ParamSpec::choice(
            "process_norm",
            &["group", "batch", "none"],
            "group",
            "z-score the step scores within the group, over the batch, or not at all",
        ),
    ];
    params.extend(OUTCOME_PARAMS);
    params
});

impl Scheme for Hybrid {
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
        let column = score_column(run, params, "hybrid")?;
        let tr = &run.trajectories;
        let (outcome, _) = outcome_advantages(run, params);
        let mut process = super::pool::collect(tr.path_nodes.len(), tr.path_nodes.iter().map(|n| column[n.index()]));
        let eps = params.f64("epsilon") as f32;
        // z-scores the positions of `ranges` with the statistics of their present values.
        let mut present: Vec<f32> = Vec::new();
        let mut zscore = |values: &mut [f32], ranges: &[std::ops::Range<usize>]| {
            present.clear();
            present.extend(ranges.iter().flat_map(|r| values[r.clone()].iter().copied()).filter(|v| !v.is_nan()));
            let (mean, std) = group_stats(&present);
            for range in ranges {
                for v in &mut values[range.clone()] {
                    *v = (*v - mean) / (std + eps);
                }
            }
        };
        match params.choice("process_norm") {
            "group" => {
                let mut ranges = Vec::new();
                for g in run.groups.ids() {
                    ranges.clear();
                    ranges.extend(run.groups.members(g).iter().map(|&t| tr.path_range(t)));
                    zscore(&mut process, &ranges);
                }
            }
            "batch" => {
                let all = 0..process.len();
                zscore(&mut process, std::slice::from_ref(&all));
            }
            _ => {}
        }
        let (alpha, beta) = (params.f64("alpha") as f32, params.f64("beta") as f32);
        let mut step = super::pool::filled(process.len(), f32::NAN);
        let mut terms = Terms::for_rows(
            "α·A_outcome + β·normalized step score (a missing score counts 0)",
            &["A_outcome", "α", "β"],
            tr.len(),
        );
        for t in tr.ids() {
            let a = outcome[t.index()];
            for k in tr.path_range(t) {
                let p = if process[k].is_nan() { 0.0 } else { process[k] };
                step[k] = alpha * a + beta * p;
            }
            terms.set(t.index(), &[f64::from(a), f64::from(alpha), f64::from(beta)]);
        }
        super::pool::give(process);
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(super::Level::Step) })
    }
}
