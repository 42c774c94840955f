//! OpenRLHF's way of turning a shaped scalar into per-token advantages (`compute_reward` then
//! `get_cumulative_returns`): clamp the scalar, put it at the last policy token, add `−β·kl` (kl
//! clamped to ±10) at every policy token, and take the reward-to-go (γ = 1 for group estimators).

use super::batch::Batch;
use super::kl::{KlMode, kl_penalty};
use super::params::Params;
use super::real::Real;

/// Parameter that selects this pipeline.
pub const PLACEMENT: super::ParamSpec = super::ParamSpec::choice(
    "placement",
    &["broadcast", "last_token_return"],
    "broadcast",
    "broadcast the sequence advantage to every token (verl, TRL), or place it at the last policy token, add per-token KL and take the reward-to-go (OpenRLHF)",
);

/// Whether `params` ask for the OpenRLHF placement.
pub fn wanted(params: &Params) -> bool {
    params.choice("placement") == "last_token_return"
}

/// Per-position reward-to-go from one scalar per row, OpenRLHF style.
pub fn returns<F: Real>(batch: &Batch<'_, F>, scalar: &[F], params: &Params, gamma: F) -> Vec<F> {
    let beta = F::of(params.f64("kl_coef"));
    let mode = KlMode::from_name(params.choice("kl_mode")).unwrap_or(KlMode::K1);
    let kl = |t: usize| match (&batch.logprob, &batch.ref_logprob) {
        (Some(lp), Some(rp)) if beta != F::ZERO => kl_penalty(lp[t], rp[t], mode).max(F::of(-10.0)).min(F::of(10.0)),
        _ => F::ZERO,
    };
    let mut out = F::zeroed(batch.num_positions());
    for (i, &a) in scalar.iter().enumerate() {
        let range = batch.row(i);
        let last = range.clone().rev().find(|&t| batch.m(t) != F::ZERO);
        let mut running = F::ZERO;
        for t in range.rev() {
            let m = batch.m(t);
            let mut r = -(beta * kl(t)) * m;
            if Some(t) == last {
                r += a;
            }
            running = r + gamma * running;
            out[t] = running * m;
        }
    }
    out
}
