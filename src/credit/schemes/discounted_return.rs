//! Plain discounted return (`discounted_return`): `G_t = Σ_k γ^k r_{t+k}` over the masked rewards,
//! no baseline; the reference point the other estimators subtract from.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::params::declare::{GROUP, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, SchemeInfo, SourceQuality, Terms};

params! {
    pub struct Knobs {
        gamma: f64 = range(0.0, 1.0, "1", "discount"),
        common: Common = GROUP,
    }
}

estimator!(
    DiscountedReturn,
    kernel: kernel,
    info: SchemeInfo {
        id: "discounted_return",
        family: Family::Outcome,
        display_name: "Discounted return",
        citation: "Williams 1992, REINFORCE; the reward-to-go every estimator starts from",
        needs: "outcome, env or token rewards",
        source: SourceQuality::Approximate("textbook definition; no trainer ships it as an estimator"),
        checked: "hand-worked returns of masked rewards (its unit test)",
    },
    params: Knobs,
    presets: [],
    supports: supports_rewards
);

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    let gamma = F::of(knobs.gamma);
    let mut terms = Terms::for_rows("Σ_k γ^k r_{t+k}", &["return at first step"], batch.num_rows());
    // Rows back to front, four at a time, runs of rows on their own threads
    // (`rows_backward_parts`); the state is the running return.
    let cols = batch.cols();
    let (returns, _) = crate::credit::data::batch::rows_backward_parts(
        crate::credit::data::batch::INLINED,
        batch,
        F::ZERO,
        |i| (F::of(f64::NAN), cols.row_start(i), batch.offsets[i + 1]),
        #[inline(always)]
        move |(running, pending, end), _, t| {
            // (A row starts from 0; NaN only marks a row with no positions.)
            let previous = if t + 1 == *end { F::ZERO } else { *running };
            *running = cols.r(pending, t) * cols.m(t) + gamma * previous;
            *running
        },
        &mut terms,
        |i, (first, _, _), terms| terms.set(i, &[first.f64()]),
    );
    Ok(Output { advantages: returns, returns: None, terms })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credit::Params;
    use crate::credit::params::declare::Declared as _;

    #[test]
    fn returns_are_the_discounted_sums_of_the_masked_rewards() {
        let batch = Batch::<f64> {
            offsets: vec![0, 3, 5],
            reward: Some(vec![0.0, 2.0, 1.0, 4.0, 1.0]),
            mask: Some(vec![1.0, 0.0, 1.0, 1.0, 1.0]),
            group: vec![0, 1],
            num_groups: 2,
            ..Batch::default()
        };
        let params = Params::resolve(&DiscountedReturn, None, &[("gamma".to_owned(), "0.5".to_owned())])
            .unwrap_or_else(|e| panic!("{e}"));
        let out = kernel(&batch, &Knobs::of(&params)).unwrap_or_else(|e| panic!("{e}"));
        // Row 0: the masked 2 counts nothing; G = [0 + 0.5·(0 + 0.5·1), 0.5·1, 1]. Row 1: [4.5, 1].
        assert_eq!(out.advantages, [0.25, 0.5, 1.0, 4.5, 1.0]);
    }
}
