//! RLOO vectorized (`rloo_vectorized`): `(c·s − S)/max(c−1, 1)`, and 0 for a group of one.

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
    RlooVectorized,
    kernel: kernel,
    info: SchemeInfo {
        id: "rloo_vectorized",
        family: Family::Outcome,
        display_name: "RLOO (vectorized)",
        citation: "verl compute_rloo_vectorized_outcome_advantage",
        needs: "outcome rewards (or env / token rewards); tokens optional",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs, bit-exact (tests/golden/verl_extra, made by its generate.py from verl b178a3c; ../shared/golden/verl has no file for it); property tests (tests/it/credit_props.rs)",
    },
    params: Knobs,
    presets: [Preset { name: "verl", values: &[], doc: "verl rloo_vectorized (singleton → 0)" }],
    supports: supports_rewards
);

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<'_, F>, _: &Knobs) -> Result<Output<F>, CreditError> {
    let scores = batch.scores();
    let mut advantage = vec![F::ZERO; scores.len()];
    let mut terms = Terms::for_rows("(c·r − S)/max(c − 1, 1), 0 when c = 1", &["r", "S", "c"], scores.len());
    for rows in batch.group_rows().iter() {
        let c = F::of(rows.len() as f64);
        let mut total = F::ZERO;
        for &i in rows {
            total += scores[i];
        }
        for &i in rows {
            advantage[i] = if rows.len() > 1 { (c * scores[i] - total) / (c - F::ONE).max(F::ONE) } else { F::ZERO };
            terms.set(i, &[scores[i].f64(), total.f64(), rows.len() as f64]);
        }
    }
    Ok(Output { advantages: batch.broadcast(&advantage), returns: None, terms })
}
