//! KL in the reward (verl `apply_kl_penalty`, OpenRLHF `compute_reward`): per-token KL estimators
//! and `rewards = scores − β · kl · mask`.

use crate::credit::data::batch::Batch;
use crate::credit::data::real::Real;

/// A per-token KL estimator between the policy and the reference model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KlMode {
    /// `logp − ref` (verl `kl`, `k1`).
    K1,
    /// `|logp − ref|`.
    Abs,
    /// `½ (logp − ref)²` (verl `mse`, `k2`).
    K2,
    /// `exp(ref − logp) − (ref − logp) − 1`, with verl's clamps (`low_var_kl`, `k3`).
    K3,
}

crate::credit::params::declare::impl_choice!(KlMode { K1 = "k1", Abs = "abs", K2 = "k2", K3 = "k3" });

impl KlMode {
    /// From verl's names and aliases. A `+` suffix (`k3+`: the k2 gradient, straight-through) has
    /// the same forward value, which is all credit needs.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.strip_suffix('+').unwrap_or(name) {
            "k1" | "kl" => Some(Self::K1),
            "abs" => Some(Self::Abs),
            "k2" | "mse" => Some(Self::K2),
            "k3" | "low_var_kl" => Some(Self::K3),
            _ => None,
        }
    }
}

/// verl `core_algos.kl_penalty` for one token.
pub fn kl_penalty<F: Real>(logprob: F, ref_logprob: F, mode: KlMode) -> F {
    match mode {
        KlMode::K1 => logprob - ref_logprob,
        KlMode::Abs => (logprob - ref_logprob).abs(),
        KlMode::K2 => F::of(0.5) * (logprob - ref_logprob) * (logprob - ref_logprob),
        KlMode::K3 => {
            let kl = (ref_logprob - logprob).max(F::of(-20.0)).min(F::of(20.0));
            let ratio = kl.exp();
            (ratio - kl - F::ONE).max(F::of(-10.0)).min(F::of(10.0))
        }
    }
}

/// verl `apply_kl_penalty`: returns the new per-position rewards and the metric
/// `actor/reward_kl_penalty` (mean over rows of the row's masked mean KL).
pub fn kl_in_reward<F: Real>(
    scores: &[F],
    mask: &[F],
    logprob: &[F],
    ref_logprob: &[F],
    offsets: &[usize],
    beta: F,
    mode: KlMode,
) -> (Vec<F>, f64) {
    let mut rewards = Vec::with_capacity(scores.len());
    let mut row_means = Vec::new();
    for row in offsets.windows(2) {
        let (mut sum, mut count) = (F::ZERO, F::ZERO);
        for t in row[0]..row[1] {
            let kld = kl_penalty(logprob[t], ref_logprob[t], mode) * mask[t];
            rewards.push(scores[t] - beta * kld);
            sum += kld;
            count += mask[t];
        }
        // masked_mean: Σ(x·m) / (Σm + 1e-8), the denominator in float32.
        let denominator = F::of(f64::from(count.f32() + 1e-8_f32));
        row_means.push((sum / denominator).f64());
    }
    let metric = if row_means.is_empty() { 0.0 } else { row_means.iter().sum::<f64>() / row_means.len() as f64 };
    (rewards, metric)
}

/// Applies KL in the reward to a batch (materialising per-position rewards if needed).
pub fn apply_kl_in_reward<F: Real>(batch: &mut Batch<'_, F>, beta: F, mode: KlMode) -> Result<(), String> {
    let (Some(logprob), Some(ref_logprob)) = (batch.logprob.as_ref(), batch.ref_logprob.as_ref()) else {
        return Err("KL in the reward needs token logprobs and ref logprobs".to_owned());
    };
    let n = batch.num_positions();
    let scores: Vec<F> =
        (0..batch.num_rows()).flat_map(|i| batch.row(i).map(move |t| (i, t))).map(|(i, t)| batch.r(i, t)).collect();
    let mask: Vec<F> = (0..n).map(|t| batch.m(t)).collect();
    let (rewards, _) = kl_in_reward(&scores, &mask, logprob, ref_logprob, &batch.offsets, beta, mode);
    batch.reward = Some(rewards);
    batch.row_score = None;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k3_is_non_negative_and_zero_at_equal_logprobs() {
        assert_eq!(kl_penalty(-1.0f64, -1.0, KlMode::K3), 0.0);
        for (a, b) in [(-0.1, -2.0), (-3.0, -0.2), (0.0, -30.0)] {
            assert!(kl_penalty(a, b, KlMode::K3) >= 0.0);
        }
        assert_eq!(kl_penalty(0.0f64, -30.0, KlMode::K3), 10.0, "clamped to 10");
    }
}
