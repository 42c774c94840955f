//! Plain discounted return (`discounted_return`): `G_t = Σ_k γ^k r_{t+k}` over the masked rewards,
//! no baseline; the reference point the other estimators subtract from.

use super::batch::{Batch, Output};
use super::common::supports_rewards;
use super::real::Real;
use super::scheme_macro::estimator;
use super::{CreditError, Family, ParamSpec, Params, SchemeInfo, SourceQuality, Terms};

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
    },
    params: [ParamSpec::float("gamma", 0.0, 1.0, "1", "discount")],
    presets: [],
    supports: supports_rewards
);

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<F>, params: &Params) -> Result<Output<F>, CreditError> {
    let gamma = F::of(params.f64("gamma"));
    let mut returns = F::zeroed(batch.num_positions());
    let mut terms = Terms::new("Σ_k γ^k r_{t+k}", &["return at first step"]);
    for i in 0..batch.num_rows() {
        let mut running = F::ZERO;
        for t in batch.row(i).rev() {
            running = batch.r(i, t) * batch.m(t) + gamma * running;
            returns[t] = running;
        }
        terms.push(&[returns.get(batch.offsets[i]).map_or(f64::NAN, |x| x.f64())]);
    }
    Ok(Output { advantages: returns, returns: None, terms })
}
