//! GRPO vectorized (`grpo_vectorized`): verl's `group_mean_std` version — one-pass float32 group
//! statistics with the variance floored at ε, so the std is at least √ε.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::params::declare::{GROUP, decl, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};

params! {
    pub struct Knobs {
        norm_by_std: bool = decl("true", "divide by the std; verl's dispatcher never forwards false, so the trainer always divides"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "variance floor and std offset"),
        common: Common = GROUP,
    }
}

estimator!(
    GrpoVectorized,
    kernel: kernel,
    info: SchemeInfo {
        id: "grpo_vectorized",
        family: Family::Outcome,
        display_name: "GRPO (vectorized)",
        citation: "verl compute_grpo_vector_advantage with verl.utils.groupwise.group_mean_std",
        needs: "outcome rewards (or env / token rewards); tokens optional",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs)",
    },
    params: Knobs,
    presets: [Preset { name: "verl", values: &[("norm_by_std", "true"), ("epsilon", "0.000001")], doc: "verl grpo_vectorized as the trainer dispatches it" }],
    supports: supports_rewards
);

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    let scores = batch.scores();
    let eps32 = knobs.epsilon as f32;
    let norm = knobs.norm_by_std;
    let mut terms = Terms::for_rows(
        if norm { "(r − mean)/(std + ε), std = √max(var, ε) in float32" } else { "r − mean" },
        &["r", "mean", "std", "ε", "group size"],
        scores.len(),
    );
    let mut advantage = vec![F::ZERO; scores.len()];
    for rows in batch.group_rows().iter() {
        // group_mean_std always works in float32.
        let (mut c, mut s1, mut s2) = (0.0f32, 0.0f32, 0.0f32);
        for &i in rows {
            let x = scores[i].f32();
            c += 1.0;
            s1 += x;
            s2 += x * x;
        }
        let (mean, std) = if rows.len() == 1 {
            (0.0f32, 1.0f32)
        } else {
            let mean = s1 / c.max(1.0);
            let var = (s2 - s1 * s1 / c.max(1.0)) / (c - 1.0).max(1.0);
            (mean, var.max(eps32).sqrt())
        };
        for &i in rows {
            let s = scores[i];
            let a = if norm { (s - F::of32(mean)) / F::of32(std + eps32) } else { s - F::of32(mean) };
            advantage[i] = a;
            terms.set(i, &[s.f64(), f64::from(mean), f64::from(std), f64::from(eps32), rows.len() as f64]);
        }
    }
    Ok(Output { advantages: batch.broadcast(&advantage), returns: None, terms })
}
