//! REINFORCE++ (`reinforce_plus_plus`, arXiv 2501.03262): discounted return per token, whitened
//! over every valid token of the batch.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::Preparation;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::engine::whiten;
use crate::credit::engine::whiten::Whiten;
use crate::credit::engine::whiten::{too_few_positions, whiten_batch_then_mask};
use crate::credit::kernels::openrlhf::StdNorm;
use crate::credit::kernels::openrlhf::{Shaping, ShapingParam};
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};

choice! {
    enum Holes { Reset = "reset", MaskReward = "mask_reward" }
}

params! {
    pub struct Knobs {
        gamma: f64 = range(0.0, 1.0, "1", "discount"),
        holes: Holes = decl("reset", "at a masked token verl resets the running return; OpenRLHF only masks the reward"),
        whiten: Whiten = decl("verl", "batch whitening: verl (unbiased, var + 1e-8), OpenRLHF (biased, clamp(var, 1e-8)), or none"),
        std_norm_param: StdNorm = GROUP,
        shaping_param: ShapingParam = GROUP,
        reward_clip: f64 = range(0.0, 1000.0, "0", "with shaping = openrlhf, clamp the score to ±this (OpenRLHF --reward.clip_range, ±10); 0 = off"),
        common: Common = GROUP,
    }
}

estimator!(
    ReinforcePlusPlus,
    kernel: kernel,
    info: SchemeInfo {
        id: "reinforce_plus_plus",
        family: Family::Token,
        display_name: "REINFORCE++",
        citation: "Hu 2025, REINFORCE++ (arXiv 2501.03262); verl compute_reinforce_plus_plus_outcome_advantage; OpenRLHF reinforce",
        needs: "outcome, env or token rewards; at least 2 valid positions in the batch",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs); OpenRLHF 0.11.2's own outputs (golden/openrlhf, tests/it/golden_trainers.rs) (reinforce)",
    },
    params: Knobs,
    presets: [
        Preset { name: "verl", values: &[("holes", "reset"), ("whiten", "verl"), ("shaping", "verl"), ("reward_clip", "0"), ("kl_coef", "0")], doc: "verl reinforce_plus_plus" },
        Preset { name: "openrlhf", values: &[("holes", "mask_reward"), ("whiten", "openrlhf"), ("std_norm", "true"), ("shaping", "openrlhf"), ("reward_clip", "10"), ("kl_coef", "0.01"), ("kl_mode", "k1")], doc: "OpenRLHF reinforce: the score clamped to ±10 at the last action token, k1 KL (0.01, clamped to ±10) per token, masked rewards, biased whitening" },
    ],
    supports: supports_rewards,
    batch_wide: |knobs| (knobs.whiten != Whiten::None).then_some("whitens the advantages over every valid token of the batch"),
    preparation: |knobs: &Knobs| Preparation {
        openrlhf_shaping: knobs.shaping_param.shaping == Shaping::Openrlhf,
        ..Preparation::of(knobs.common)
    },
);

fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    if knobs.shaping_param.shaping == Shaping::Openrlhf {
        // OpenRLHF: compute_reward's per-token rewards, then the same recursion on them.
        let shape = knobs.common.shape(knobs.reward_clip);
        return unshaped(&crate::credit::kernels::openrlhf::shaped(batch, shape), knobs);
    }
    unshaped(batch, knobs)
}

/// The returns of the batch's rewards as they are, whitened.
fn unshaped<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    let gamma = F::of(knobs.gamma);
    let reset = knobs.holes != Holes::MaskReward;
    let n = batch.num_positions();
    let mut terms =
        Terms::for_rows("whiten(Σ_k γ^k r_{t+k}) over the batch", &["return at first token"], batch.num_rows());
    let (returns, sums) = match batch.mask {
        Some(_) => returns_rows::<F, true, false>(batch, gamma, reset, &mut terms),
        None if gamma == F::ONE => returns_rows::<F, false, true>(batch, gamma, reset, &mut terms),
        None => returns_rows::<F, false, false>(batch, gamma, reset, &mut terms),
    };
    // The sums verl's whitening needs were gathered as the returns were written.
    let gather = knobs.whiten == Whiten::Verl;
    let sums = gather.then(|| whiten::Sums::total(sums.into_iter().flatten()));
    let id = "reinforce_plus_plus";
    let (advantages, returns) = match (batch.skip_returns, sums) {
        (true, _) => {
            let mut advantages = returns;
            whiten_batch_then_mask(batch, &mut advantages, (knobs.whiten, knobs.std_norm_param.std_norm), id, sums)?;
            (advantages, None)
        }
        // verl's whitening and the mask written from the returns in one pass (the returns are
        // kept as they are).
        (false, Some(sums)) => {
            let advantages = whiten::verl_then_mask_from(&returns, batch.mask.as_deref(), Some(sums))
                .ok_or_else(|| too_few_positions(id))?;
            (advantages, Some(returns))
        }
        (false, None) => {
            // Copied in parts on their own threads (`par`), then whitened and masked.
            let mut advantages = F::scratch(n);
            crate::par::chunks_mut(&mut advantages, |start, part| {
                part.copy_from_slice(&returns[start..start + part.len()]);
            });
            whiten_batch_then_mask(batch, &mut advantages, (knobs.whiten, knobs.std_norm_param.std_norm), id, None)?;
            (advantages, Some(returns))
        }
    };
    Ok(Output { advantages, returns, terms })
}

/// A row's state in the recursion: running return, return last written (at the row's first
/// position once done), pending row score, sums for whitening.
type State<F> = (F, F, F, whiten::Sums);

/// The returns, each row back to front, four rows at a time, runs of rows on their own threads
/// (`rows_backward_parts`), each row's terms, and each row's sums for verl's whitening (gathered on
/// the way: a few adds off the chain the rows wait on, cheaper than a test per position of whether
/// they are wanted). A row's state is the running return, the return last written (at the row's
/// first position once done), the pending row score and the sums. Without a mask (`MASKED`
/// false) the reset `running · m` is left out: `x · 1 = x`, one multiply fewer in the chain; with γ = 1
/// as well (`UNIT`), the multiply by γ too.
fn returns_rows<F: Real, const MASKED: bool, const UNIT: bool>(
    batch: &Batch<'_, F>,
    gamma: F,
    reset: bool,
    terms: &mut Terms,
) -> (Vec<F>, Vec<Vec<whiten::Sums>>) {
    let cols = batch.cols();
    crate::credit::data::batch::rows_backward_parts(
        crate::credit::data::batch::OUTLINED,
        batch,
        F::ZERO,
        |i| (F::ZERO, F::of(f64::NAN), cols.row_start(i), whiten::Sums::default()),
        #[inline(always)]
        move |(running, written, pending, sums), _, t| {
            let m = if MASKED { cols.m(t) } else { F::ONE };
            let r = cols.r(pending, t);
            if UNIT {
                // γ = 1 (the default): 1 · x = x, so the multiply is left out of the chain.
                *running = r + *running;
                *written = *running;
            } else if reset || !MASKED {
                *running = r + gamma * *running;
                *written = *running;
                if MASKED {
                    *running = *running * m;
                }
            } else {
                *running = r * m + gamma * *running;
                *written = *running;
            }
            sums.add(*written, m);
            *written
        },
        terms,
        |i, (_, first, _, sums): State<F>, terms| {
            terms.set(i, &[first.f64()]);
            sums
        },
    )
}
