//! Optimal token baseline (`optimal_token_baseline`): a per-position group baseline weighted by the
//! cumulative path variance `W_t = Σ_{k≤t} (1 − 2π(a_k) + Σ_v π(v)²)`.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::supports_token_baseline as supports;
use crate::credit::kernels::token_baseline::kernel_with;
use crate::credit::params::declare::{GROUP, decl, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality};

params! {
    pub struct Knobs {
        handle_zero_tail: bool = decl("false", "zero the baseline of a group's unique longest row beyond the second-longest length"),
        epsilon: f64 = range(0.0, 1.0, "0.00000001", "added to the weight sum"),
        common: Common = GROUP,
    }
}

estimator!(
    OptimalTokenBaseline,
    kernel: kernel,
    info: SchemeInfo {
        id: "optimal_token_baseline",
        family: Family::Token,
        display_name: "Optimal token baseline",
        citation: "verl compute_optimal_token_baseline_advantage (called directly: the trainer dispatch fails for it at this commit)",
        needs: "token rewards or outcomes, token logprobs and token `sum_pi_squared`",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs)",
    },
    params: Knobs,
    presets: [Preset { name: "verl", values: &[("handle_zero_tail", "false"), ("epsilon", "0.00000001")], doc: "verl optimal_token_baseline defaults" }],
    supports: supports
);

fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    kernel_with(batch, knobs.epsilon, knobs.handle_zero_tail, false)
}
