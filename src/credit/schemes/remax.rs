//! ReMax (`remax`, arXiv 2310.10505): undiscounted reward-to-go minus the reward of the greedy
//! rollout of the same prompt.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::params::declare::{GROUP, params};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::Run;

params! {
    pub struct Knobs {
        common: Common = GROUP,
    }
}

estimator!(
    Remax,
    kernel: kernel,
    info: SchemeInfo {
        id: "remax",
        family: Family::Outcome,
        display_name: "ReMax",
        citation: "Li et al. 2023, ReMax (arXiv 2310.10505); verl compute_remax_outcome_advantage",
        needs: "outcome rewards and the greedy rollout's reward as outcome component `greedy_baseline`",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs)",
    },
    params: Knobs,
    presets: [Preset { name: "verl", values: &[], doc: "verl remax" }],
    supports: supports
);

fn supports(run: &Run) -> Support {
    if !run.trajectories.components.get("greedy_baseline").is_some_and(|c| c.iter().any(|x| !x.is_nan())) {
        return Support::No("needs the greedy rollout's reward as outcome component `greedy_baseline`".to_owned());
    }
    supports_rewards(run)
}

fn kernel<F: Real>(batch: &Batch<'_, F>, _: &Knobs) -> Result<Output<F>, CreditError> {
    let Some(baseline) = batch.reward_baseline.as_ref() else {
        return Err(CreditError::Unsupported { scheme: "remax".to_owned(), reason: "no reward_baselines".to_owned() });
    };
    let mut returns = F::zeroed(batch.num_positions());
    let mut advantages = F::zeroed(batch.num_positions());
    let mut terms = Terms::new("Σ_{k≥t} r_k − b_greedy", &["return at first token", "b_greedy"]);
    for (i, &b) in baseline.iter().enumerate().take(batch.num_rows()) {
        let mut running = F::ZERO;
        for t in batch.row(i).rev() {
            running += batch.r(i, t) * batch.m(t);
            returns[t] = running;
        }
        for t in batch.row(i) {
            advantages[t] = returns[t] - b * batch.m(t);
        }
        terms.push(&[returns.get(batch.offsets[i]).map_or(f64::NAN, |r| r.f64()), b.f64()]);
    }
    Ok(Output { advantages, returns: Some(returns), terms })
}
