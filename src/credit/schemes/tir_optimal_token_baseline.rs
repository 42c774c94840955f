//! Multi-turn optimal token baseline (`tir_optimal_token_baseline`): the optimal token baseline on
//! positions with the mask holes removed (valid tokens compacted to the left), scattered back.

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
        handle_zero_tail: bool = decl("true", "zero the baseline of a group's unique longest row beyond the second-longest length"),
        epsilon: f64 = range(0.0, 1.0, "0.00000001", "added to the weight sum"),
        common: Common = GROUP,
    }
}

estimator!(
    TirOptimalTokenBaseline,
    kernel: kernel,
    info: SchemeInfo {
        id: "tir_optimal_token_baseline",
        family: Family::Token,
        display_name: "Optimal token baseline (multi-turn)",
        citation: "verl compute_multi_turn_optimal_token_baseline_advantage (called directly)",
        needs: "token rewards or outcomes, token logprobs and token `sum_pi_squared`",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs)",
    },
    params: Knobs,
    presets: [Preset { name: "verl", values: &[("handle_zero_tail", "true"), ("epsilon", "0.00000001")], doc: "verl tir_optimal_token_baseline defaults" }],
    supports: supports
);

fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    kernel_with(batch, knobs.epsilon, knobs.handle_zero_tail, true)
}
