//! RLOO (`rloo`, verl's loop version; arXiv 2402.14740): leave-one-out baseline,
//! `s·n/(n−1) − mean·n/(n−1)` (verl) or `r − (Σ − r)/(n − 1)` (TRL, OpenRLHF), over the rows of
//! the group that have a score; a group of one keeps its raw score (verl) or gets 0. TRL's
//! options are parameters: rows without a score get 0 (`unscorable`), and the advantages may be
//! normalized over the batch (`normalize_advantages`).

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::Preparation;
use crate::credit::engine::inputs::ScoreClip;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::kernels::openrlhf::{Placement, PlacementParam};
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};

choice! {
    enum Singleton { Raw = "raw", Zero = "zero" }
    enum Baseline { Scaled = "scaled", Others = "others" }
    enum Unscorable { None = "none", Zero = "zero" }
}

params! {
    pub struct Knobs {
        singleton: Singleton = decl("raw", "a group of one: verl's loop keeps the raw score; the vectorized version and TRL give 0"),
        reward_clip: f64 = range(0.0, 1000.0, "0", "clamp the advantage to ±this (OpenRLHF clips the shaped reward to ±10); 0 = off"),
        baseline: Baseline = decl("scaled", "the leave-one-out form: verl's s·n/(n−1) − mean·n/(n−1), or r − (Σ − r)/(n − 1) as TRL and OpenRLHF write it (equal but for rounding)"),
        unscorable: Unscorable = decl("none", "a row without a score (every reward function returned None) is left out of its group's sums and count; it gets no value, or 0 as TRL's nan_to_num gives"),
        score_clip: ScoreClip = GROUP,
        normalize: bool = decl("false", "TRL normalize_advantages: (A − mean)/(std + 1e-4) over the batch's scored rows (unbiased std), before the missing ones become 0"),
        placement_param: PlacementParam = GROUP,
        common: Common = GROUP,
    }
}

estimator!(
    Rloo,
    kernel: kernel,
    info: SchemeInfo {
        id: "rloo",
        family: Family::Outcome,
        display_name: "RLOO",
        citation: "Ahmadian et al. 2024, Back to Basics (arXiv 2402.14740); verl compute_rloo_outcome_advantage; TRL RLOOTrainer; OpenRLHF rloo",
        needs: "outcome rewards (or env / token rewards); tokens optional",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs); OpenRLHF 0.11.2's own outputs (golden/openrlhf, tests/it/golden_trainers.rs); TRL RLOOTrainer's rules (unscorable rows, reward_clip_range, normalize_advantages) by named tests against its code's formulas",
    },
    params: Knobs,
    presets: [
        Preset { name: "verl", values: &[("singleton", "raw"), ("baseline", "scaled"), ("unscorable", "none"), ("normalize", "false"), ("placement", "broadcast"), ("kl_coef", "0"), ("reward_clip", "0")], doc: "verl rloo (loop)" },
        Preset { name: "trl", values: &[("singleton", "zero"), ("baseline", "others"), ("unscorable", "zero"), ("normalize", "false"), ("placement", "broadcast"), ("kl_coef", "0.05"), ("kl_mode", "k1"), ("reward_clip", "0")], doc: "TRL RLOOTrainer: k1 KL summed into the sequence reward with β = 0.05; unscorable rows left out of the baseline and given 0" },
        Preset { name: "openrlhf", values: &[("singleton", "zero"), ("baseline", "others"), ("unscorable", "none"), ("normalize", "false"), ("placement", "last_token_return"), ("kl_coef", "0.01"), ("kl_mode", "k1"), ("reward_clip", "10")], doc: "OpenRLHF rloo: clipped scalar at the last action token, k1 KL (0.01) per token, reward-to-go" },
    ],
    supports: supports_rewards,
    preparation: |knobs: &Knobs| Preparation {
        score_clip: Some(knobs.score_clip),
        openrlhf_shaping: knobs.placement_param.placement == Placement::LastTokenReturn,
        ..Preparation::of(knobs.common)
    },
);

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    let scores = batch.scores();
    let zero_singleton = knobs.singleton == Singleton::Zero;
    let others = knobs.baseline == Baseline::Others;
    let clip = F::of(knobs.reward_clip);
    // NaN marks a row with no value yet: no score, or a lone scored row when singletons get 0.
    let mut advantage = vec![F::of(f64::NAN); scores.len()];
    let mut terms =
        Terms::for_rows("r·n/(n−1) − mean·n/(n−1) = r − mean of the others", &["r", "mean", "n"], scores.len());
    for rows in batch.group_rows().iter() {
        let (mut sum, mut n) = (F::ZERO, 0usize);
        for &i in rows {
            if !scores[i].is_nan() {
                sum += scores[i];
                n += 1;
            }
        }
        let mean = sum / F::of(n as f64);
        let nf = F::of(n as f64);
        let n1 = F::of(n as f64 - 1.0);
        for &i in rows {
            let s = scores[i];
            if s.is_nan() {
                terms.set(i, &[s.f64(), mean.f64(), n as f64]);
                continue;
            }
            let mut a = match n {
                1 if zero_singleton => F::of(f64::NAN),
                1 => s,
                _ if others => s - (sum - s) / n1,
                _ => s * nf / n1 - mean * nf / n1,
            };
            if clip > F::ZERO {
                a = a.max(-clip).min(clip);
            }
            advantage[i] = a;
            terms.set(i, &[s.f64(), mean.f64(), n as f64]);
        }
    }
    if knobs.normalize {
        let valid: Vec<F> = advantage.iter().copied().filter(|a| !a.is_nan()).collect();
        if !valid.is_empty() {
            let (mean, std) = crate::credit::data::moments::mean_std(&valid, true);
            let divisor = std + F::of(1e-4);
            for a in &mut advantage {
                *a = (*a - mean) / divisor;
            }
        }
    }
    // A lone scored row gets 0; a row without a score, 0 or no value.
    let unscorable_zero = knobs.unscorable == Unscorable::Zero;
    for (a, s) in advantage.iter_mut().zip(&scores) {
        if a.is_nan() && (!s.is_nan() || unscorable_zero) {
            *a = F::ZERO;
        }
    }
    let advantages = if knobs.placement_param.placement == Placement::LastTokenReturn {
        crate::credit::kernels::openrlhf::returns(batch, &advantage, knobs.common.shape(knobs.reward_clip), F::ONE)
    } else {
        batch.broadcast(&advantage)
    };
    Ok(Output { advantages, returns: None, terms })
}
