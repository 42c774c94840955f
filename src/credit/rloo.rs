//! RLOO (`rloo`, verl's loop version; arXiv 2402.14740): leave-one-out baseline,
//! `s·n/(n−1) − mean·n/(n−1)`; a group of one keeps its raw score.

use super::batch::{Batch, Output};
use super::common::supports_rewards;
use super::real::Real;
use super::scheme_macro::estimator;
use super::{CreditError, Family, ParamSpec, Params, Preset, SchemeInfo, SourceQuality, Terms};

estimator!(
    Rloo,
    kernel: kernel,
    info: SchemeInfo {
        id: "rloo",
        family: Family::Outcome,
        display_name: "RLOO",
        citation: "Ahmadian et al. 2024, Back to Basics (arXiv 2402.14740); verl compute_rloo_outcome_advantage; TRL RLOOTrainer; OpenRLHF rloo",
        needs: "outcome rewards (or env / token rewards); tokens optional",
        source: SourceQuality::FromCode(super::VERL_AT),
    },
    params: [
        ParamSpec::choice("singleton", &["raw", "zero"], "raw", "a group of one: verl's loop keeps the raw score; the vectorized version and TRL give 0"),
        ParamSpec::float("reward_clip", 0.0, 1000.0, "0", "clamp the advantage to ±this (OpenRLHF clips the shaped reward to ±10); 0 = off"),
        super::openrlhf::PLACEMENT,
    ],
    presets: [
        Preset { name: "verl", values: &[("singleton", "raw"), ("placement", "broadcast"), ("kl_coef", "0"), ("reward_clip", "0")], doc: "verl rloo (loop)" },
        Preset { name: "trl", values: &[("singleton", "zero"), ("placement", "broadcast"), ("kl_coef", "0.05"), ("kl_mode", "k1"), ("reward_clip", "0")], doc: "TRL RLOOTrainer: k1 KL summed into the sequence reward with β = 0.05" },
        Preset { name: "openrlhf", values: &[("singleton", "zero"), ("placement", "last_token_return"), ("kl_coef", "0.01"), ("kl_mode", "k1"), ("reward_clip", "10")], doc: "OpenRLHF rloo: clipped scalar at the last token, k1 KL (0.01) per token, reward-to-go" },
    ],
    supports: supports_rewards
);

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<'_, F>, params: &Params) -> Result<Output<F>, CreditError> {
    let scores = batch.scores();
    let zero_singleton = params.choice("singleton") == "zero";
    let clip = F::of(params.f64("reward_clip"));
    let mut advantage = vec![F::ZERO; scores.len()];
    let mut terms =
        Terms::for_rows("r·n/(n−1) − mean·n/(n−1) = r − mean of the others", &["r", "mean", "n"], scores.len());
    for rows in batch.group_rows().iter() {
        let n = rows.len();
        let mut sum = F::ZERO;
        for &i in rows {
            sum += scores[i];
        }
        let mean = sum / F::of(n as f64);
        let nf = F::of(n as f64);
        let n1 = F::of(n as f64 - 1.0);
        for &i in rows {
            let s = scores[i];
            let mut a = match n {
                1 if zero_singleton => F::ZERO,
                1 => s,
                _ => s * nf / n1 - mean * nf / n1,
            };
            if clip > F::ZERO {
                a = a.max(-clip).min(clip);
            }
            advantage[i] = a;
            terms.set(i, &[s.f64(), mean.f64(), n as f64]);
        }
    }
    let advantages = if super::openrlhf::wanted(params) {
        super::openrlhf::returns(batch, &advantage, params, F::ONE)
    } else {
        batch.broadcast(&advantage)
    };
    Ok(Output { advantages, returns: None, terms })
}
