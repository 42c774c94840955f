//! GPG (`gpg`): group-mean baseline scaled by `α = B / #nonzero scores`.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::params::declare::{GROUP, params};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};

params! {
    pub struct Knobs {
        common: Common = GROUP,
    }
}

estimator!(
    Gpg,
    kernel: kernel,
    info: SchemeInfo {
        id: "gpg",
        family: Family::Outcome,
        display_name: "GPG",
        citation: "Chu et al. 2025, GPG: Group Policy Gradient (arXiv 2504.02546); verl compute_gpg_outcome_advantage",
        needs: "outcome rewards (or env / token rewards); tokens optional",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs)",
    },
    params: Knobs,
    presets: [Preset { name: "verl", values: &[], doc: "verl gpg (f_norm = 1)" }],
    supports: supports_rewards,
    batch_wide: |_| Some("scales by α = B / #nonzero scores over the whole batch")
);

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<'_, F>, _: &Knobs) -> Result<Output<F>, CreditError> {
    let scores = batch.scores();
    let nonzero = scores.iter().filter(|s| **s != F::ZERO).count().max(1);
    // A float32 scalar in verl.
    let alpha = F::of32(scores.len() as f32 / nonzero as f32);
    let mut advantage = vec![F::ZERO; scores.len()];
    let mut terms = Terms::for_rows("α·(r − mean), α = B / #nonzero", &["r", "mean", "α"], scores.len());
    for rows in batch.group_rows().iter() {
        let mean = if rows.len() == 1 {
            F::ZERO
        } else {
            let mut sum = F::ZERO;
            for &i in rows {
                sum += scores[i];
            }
            sum / F::of(rows.len() as f64)
        };
        for &i in rows {
            advantage[i] = alpha * (scores[i] - mean) / F::ONE;
            terms.set(i, &[scores[i].f64(), mean.f64(), alpha.f64()]);
        }
    }
    Ok(Output { advantages: batch.broadcast(&advantage), returns: None, terms })
}
