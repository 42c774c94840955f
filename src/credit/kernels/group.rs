//! GRPO's group normalisation of any per-trajectory value: `(x − mean)/(std + ε)` with verl's
//! singleton rule, the statistics over the present (non-NaN) values.

use crate::credit::data::moments::mean_std;

/// GRPO over one group's values, `(x − mean)/(std + ε)` with verl's singleton rule; NaN values are
/// left out of the statistics and stay NaN. Returns the advantages and `(mean, std)`.
pub fn normalize_group(values: &[f32], eps: f32) -> (Vec<f32>, (f32, f32)) {
    normalize_group_with(values, eps, true)
}

/// [`normalize_group`] with the unbiased (n − 1) or population (n) std.
pub fn normalize_group_with(values: &[f32], eps: f32, unbiased: bool) -> (Vec<f32>, (f32, f32)) {
    let valid: Vec<f32> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    let (mean, std) = if valid.len() < 2 { (0.0, 1.0) } else { mean_std(&valid, unbiased) };
    (values.iter().map(|&v| (v - mean) / (std + eps)).collect(), (mean, std))
}
