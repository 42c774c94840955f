//! REINFORCE++-baseline (`reinforce_plus_plus_baseline`): subtract the group mean score, broadcast
//! over the tokens, then whiten over every valid token of the batch.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::Preparation;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::engine::whiten::Whiten;
use crate::credit::engine::whiten::whiten_batch_then_mask;
use crate::credit::kernels::openrlhf::StdNorm;
use crate::credit::kernels::openrlhf::{Placement, PlacementParam};
use crate::credit::params::declare::{GROUP, decl, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};

params! {
    pub struct Knobs {
        whiten: Whiten = decl("verl", "batch whitening: verl (unbiased, var + 1e-8), OpenRLHF (biased, clamp(var, 1e-8)), or none"),
        std_norm_param: StdNorm = GROUP,
        placement_param: PlacementParam = GROUP,
        reward_clip: f64 = range(0.0, 1000.0, "0", "with placement = last_token_return, clamp r − mean to ±this (OpenRLHF --reward.clip_range, ±10); 0 = off"),
        common: Common = GROUP,
    }
}

estimator!(
    ReinforcePlusPlusBaseline,
    kernel: kernel,
    info: SchemeInfo {
        id: "reinforce_plus_plus_baseline",
        family: Family::Outcome,
        display_name: "REINFORCE++-baseline",
        citation: "Hu 2025 (arXiv 2501.03262); verl compute_reinforce_plus_plus_baseline_outcome_advantage; OpenRLHF reinforce_baseline",
        needs: "outcome, env or token rewards; at least 2 valid positions in the batch",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs); OpenRLHF 0.11.2's own outputs (golden/openrlhf, tests/it/golden_trainers.rs) (reinforce_baseline)",
    },
    params: Knobs,
    presets: [
        Preset { name: "verl", values: &[("whiten", "verl"), ("placement", "broadcast"), ("reward_clip", "0"), ("kl_coef", "0")], doc: "verl reinforce_plus_plus_baseline" },
        Preset { name: "openrlhf", values: &[("whiten", "openrlhf"), ("std_norm", "true"), ("placement", "last_token_return"), ("reward_clip", "10"), ("kl_coef", "0.01"), ("kl_mode", "k1")], doc: "OpenRLHF reinforce_baseline: r − mean clamped to ±10 at the last action token, k1 KL per token, reward-to-go, biased whitening" },
    ],
    supports: supports_rewards,
    batch_wide: |knobs| (knobs.whiten != Whiten::None).then_some("whitens the advantages over every valid token of the batch"),
    preparation: |knobs: &Knobs| Preparation {
        openrlhf_shaping: knobs.placement_param.placement == Placement::LastTokenReturn,
        ..Preparation::of(knobs.common)
    },
);

fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    let scores = batch.scores();
    let mut centred = vec![F::ZERO; scores.len()];
    let mut terms = Terms::for_rows("whiten(r − mean) over the batch's tokens", &["r", "mean"], scores.len());
    for rows in batch.group_rows().iter() {
        let mut sum = F::ZERO;
        for &i in rows {
            sum += scores[i];
        }
        let mean = if rows.len() == 1 { F::ZERO } else { sum / F::of(rows.len() as f64) };
        for &i in rows {
            centred[i] = scores[i] - mean;
            terms.set(i, &[scores[i].f64(), mean.f64()]);
        }
    }
    // The batch's whitening (verl's or OpenRLHF's), then the mask.
    let whiten = |advantages: &mut Vec<F>| {
        let whitening = (knobs.whiten, knobs.std_norm_param.std_norm);
        whiten_batch_then_mask(batch, advantages, whitening, "reinforce_plus_plus_baseline", None)
    };
    if knobs.placement_param.placement == Placement::LastTokenReturn {
        // OpenRLHF forces γ = 1 here; its returns are the reward-to-go before whitening.
        let returns =
            crate::credit::kernels::openrlhf::returns(batch, &centred, knobs.common.shape(knobs.reward_clip), F::ONE);
        let mut advantages = returns.clone();
        whiten(&mut advantages)?;
        return Ok(Output { advantages, returns: Some(returns), terms });
    }
    // Without a mask every position of a row holds its centred score: whiten the rows, weighted by
    // their lengths, and write each position once (the same moments as whitening the positions).
    if batch.mask.is_none() && knobs.whiten == Whiten::Verl {
        if !crate::credit::engine::whiten::verl_rows(&mut centred, |i| batch.row(i).len()) {
            return Err(crate::credit::engine::whiten::too_few_positions("reinforce_plus_plus_baseline"));
        }
        return Ok(Output { advantages: batch.broadcast(&centred), returns: None, terms });
    }
    let mut advantages = batch.broadcast(&centred);
    whiten(&mut advantages)?;
    Ok(Output { advantages, returns: None, terms })
}
