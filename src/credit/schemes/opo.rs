//! OPO (`opo`, arXiv 2505.23585): the group baseline is the length-weighted mean score.

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
    Opo,
    kernel: kernel,
    info: SchemeInfo {
        id: "opo",
        family: Family::Outcome,
        display_name: "OPO",
        citation: "Hao et al. 2025, On-Policy RL with Optimal Reward Baseline (arXiv 2505.23585); verl compute_opo_outcome_advantage",
        needs: "outcome rewards (or env / token rewards); tokens optional",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs)",
    },
    params: Knobs,
    presets: [Preset { name: "verl", values: &[], doc: "verl opo" }],
    supports: supports_rewards
);

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<'_, F>, _: &Knobs) -> Result<Output<F>, CreditError> {
    let scores = batch.scores();
    let lengths: Vec<F> = (0..batch.num_rows())
        .map(|i| {
            let mut l = F::ZERO;
            for t in batch.row(i) {
                l += batch.m(t);
            }
            l
        })
        .collect();
    let mut advantage = vec![F::ZERO; scores.len()];
    let mut terms =
        Terms::for_rows("r − Σ L·r / Σ L (length-weighted group mean)", &["r", "baseline", "L"], scores.len());
    for rows in batch.group_rows().iter() {
        let baseline = if rows.len() == 1 {
            F::ZERO
        } else {
            let (mut num, mut den) = (F::ZERO, F::ZERO);
            for &i in rows {
                num += lengths[i] * scores[i];
                den += lengths[i];
            }
            num / den
        };
        for &i in rows {
            advantage[i] = scores[i] - baseline;
            terms.set(i, &[scores[i].f64(), baseline.f64(), lengths[i].f64()]);
        }
    }
    Ok(Output { advantages: batch.broadcast(&advantage), returns: None, terms })
}
