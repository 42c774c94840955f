//! REINFORCE++ (`reinforce_plus_plus`, arXiv 2501.03262): discounted return per token, whitened
//! over every valid token of the batch.

use super::batch::{Batch, Output};
use super::common::supports_rewards;
use super::real::Real;
use super::scheme_macro::estimator;
use super::{CreditError, Family, ParamSpec, Params, Preset, SchemeInfo, SourceQuality, Terms, whiten};

estimator!(
    ReinforcePlusPlus,
    kernel: kernel,
    info: SchemeInfo {
        id: "reinforce_plus_plus",
        family: Family::Token,
        display_name: "REINFORCE++",
        citation: "Hu 2025, REINFORCE++ (arXiv 2501.03262); verl compute_reinforce_plus_plus_outcome_advantage; OpenRLHF reinforce",
        needs: "outcome, env or token rewards; at least 2 valid positions in the batch",
        source: SourceQuality::FromCode(super::VERL_AT),
    },
    params: [
        ParamSpec::float("gamma", 0.0, 1.0, "1", "discount"),
        ParamSpec::choice("holes", &["reset", "mask_reward"], "reset", "at a masked token verl resets the running return; OpenRLHF only masks the reward"),
        ParamSpec::choice("whiten", &["verl", "openrlhf", "none"], "verl", "batch whitening: verl (unbiased, var + 1e-8), OpenRLHF (biased, clamp(var, 1e-8)), or none"),
    ],
    presets: [
        Preset { name: "verl", values: &[("holes", "reset"), ("whiten", "verl"), ("kl_coef", "0")], doc: "verl reinforce_plus_plus" },
        Preset { name: "openrlhf", values: &[("holes", "mask_reward"), ("whiten", "openrlhf"), ("kl_coef", "0.01"), ("kl_mode", "k1")], doc: "OpenRLHF reinforce: k1 KL (0.01) per token, masked rewards, biased whitening" },
    ],
    supports: supports_rewards
);

/// Whitens `x` in place over the batch as `params` say (`whiten` = verl / openrlhf / none).
pub fn whiten_batch<F: Real>(batch: &Batch<F>, x: &mut [F], params: &Params, id: &str) -> Result<(), CreditError> {
    let mask = batch.mask.as_deref();
    match params.choice("whiten") {
        "none" => Ok(()),
        "openrlhf" => {
            whiten::openrlhf(x, mask, true);
            Ok(())
        }
        _ if whiten::verl(x, mask) => Ok(()),
        _ => Err(too_few_positions(id)),
    }
}

/// [`whiten_batch`], then `x ← x · m` ([`apply_mask`]); verl's whitening and the mask in one pass.
pub fn whiten_batch_then_mask<F: Real>(
    batch: &Batch<F>,
    x: &mut [F],
    params: &Params,
    id: &str,
) -> Result<(), CreditError> {
    if params.choice("whiten") == "verl" {
        return if whiten::verl_then_mask(x, batch.mask.as_deref()) { Ok(()) } else { Err(too_few_positions(id)) };
    }
    whiten_batch(batch, x, params, id)?;
    apply_mask(batch, x);
    Ok(())
}

/// The error verl raises when it whitens fewer than two valid positions.
pub fn too_few_positions(id: &str) -> CreditError {
    CreditError::Failed {
        scheme: id.to_owned(),
        reason: "whitening needs at least two valid positions in the batch (verl raises here)".to_owned(),
    }
}

/// `x[t] ← x[t] · m[t]`.
pub fn apply_mask<F: Real>(batch: &Batch<F>, x: &mut [F]) {
    if let Some(mask) = batch.mask.as_deref() {
        for (v, &m) in x.iter_mut().zip(mask) {
            *v = *v * m;
        }
    }
}

fn kernel<F: Real>(batch: &Batch<F>, params: &Params) -> Result<Output<F>, CreditError> {
    let gamma = F::of(params.f64("gamma"));
    let reset = params.choice("holes") != "mask_reward";
    let n = batch.num_positions();
    let mut terms =
        Terms::for_rows("whiten(Σ_k γ^k r_{t+k}) over the batch", &["return at first token"], batch.num_rows());
    // Rows back to front, four at a time, runs of rows on their own threads
    // (`rows_backward_parts`); the state is the running return and the return last written (at
    // the row's first position once the row is done).
    let (returns, states) = super::batch::rows_backward_parts(
        n,
        F::ZERO,
        batch.num_rows(),
        |i| batch.row(i),
        |_| (F::ZERO, F::of(f64::NAN)),
        #[inline(always)]
        move |(running, written), i, t| {
            let m = batch.m(t);
            if reset {
                *running = batch.r(i, t) + gamma * *running;
                *written = *running;
                *running = *running * m;
            } else {
                *running = batch.r(i, t) * m + gamma * *running;
                *written = *running;
            }
            *written
        },
    );
    for (i, (_, first)) in states.into_iter().enumerate() {
        terms.set(i, &[first.f64()]);
    }
    let (mut advantages, returns) = if batch.skip_returns {
        (returns, None)
    } else {
        let mut advantages = F::with_room(n);
        advantages.extend_from_slice(&returns);
        (advantages, Some(returns))
    };
    whiten_batch_then_mask(batch, &mut advantages, params, "reinforce_plus_plus")?;
    Ok(Output { advantages, returns, terms })
}
