//! Optimal token baseline (`optimal_token_baseline`): a per-position group baseline weighted by the
//! cumulative path variance `W_t = Σ_{k≤t} (1 − 2π(a_k) + Σ_v π(v)²)`.

use crate::credit::engine::batch::{Batch, Output};
use crate::credit::engine::inputs::supports_token_baseline as supports;
use crate::credit::engine::real::Real;
use crate::credit::engine::scheme_macro::estimator;
use crate::credit::kernels::token_baseline::kernel_with;
use crate::credit::{CreditError, Family, ParamSpec, Params, Preset, SchemeInfo, SourceQuality};

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
    params: [
        ParamSpec::bool("handle_zero_tail", "false", "zero the baseline of a group's unique longest row beyond the second-longest length"),
        ParamSpec::float("epsilon", 0.0, 1.0, "0.00000001", "added to the weight sum"),
    ],
    presets: [Preset { name: "verl", values: &[("handle_zero_tail", "false"), ("epsilon", "0.00000001")], doc: "verl optimal_token_baseline defaults" }],
    supports: supports
);

fn kernel<F: Real>(batch: &Batch<'_, F>, params: &Params) -> Result<Output<F>, CreditError> {
    kernel_with(batch, params, false)
}
