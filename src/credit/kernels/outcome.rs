//! The outcome advantage per trajectory that process schemes start from: GRPO (verl's rules),
//! mean-only (Dr.GRPO) or RLOO over each group's outcome rewards. The engine reads the rewards
//! of each group from the run (`engine::inputs::outcome_advantages`).

use crate::credit::data::moments::{group_stats, mean_std};
use crate::credit::data::real::Real;
use crate::credit::params::declare::{decl, params, range};

params! {
    /// Parameters of the outcome advantage, shared by the schemes built on it.
    pub struct OutcomeParams {
        /// The normalisation.
        pub outcome_norm: OutcomeNorm = decl(
            "grpo",
            "outcome advantage: GRPO (r − mean)/(std + ε), mean-only (Dr.GRPO) or RLOO",
        ),
        /// Added to the group std.
        pub epsilon: f64 = range(0.0, 1.0, "0.000001", "added to the group std"),
    }
}

/// How the outcome advantage is formed (`outcome_norm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutcomeNorm {
    /// `(r − mean)/(std + ε)`, with verl's singleton rule (mean 0, std 1).
    Grpo,
    /// `r − mean` (Dr.GRPO).
    Mean,
    /// `(r − mean)·n/(n − 1)`, the leave-one-out baseline; a group of one keeps `r`.
    Rloo,
}

crate::credit::params::declare::impl_choice!(OutcomeNorm { Grpo = "grpo", Mean = "mean", Rloo = "rloo" });

/// The [`OutcomeParams`] values, as the kernels take them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutcomeOptions {
    /// The normalisation.
    pub norm: OutcomeNorm,
    /// Added to the group std.
    pub eps: f32,
}

impl OutcomeOptions {
    /// The options a scheme's [`OutcomeParams`] hold.
    pub fn of(params: OutcomeParams) -> Self {
        Self { norm: params.outcome_norm, eps: params.epsilon as f32 }
    }
}

/// One group's outcome advantages: `rewards` are its members' outcomes (`NaN`: none), and
/// `out[i]` gets member `i`'s advantage (left as it is where the outcome is missing). Returns the
/// group's mean and std over its present outcomes (`valid` is scratch space for them).
pub fn group_advantages(rewards: &[f32], options: OutcomeOptions, valid: &mut Vec<f32>, out: &mut [f32]) -> [f32; 2] {
    valid.clear();
    valid.extend(rewards.iter().copied().filter(|r| !r.is_nan()));
    let n = valid.len();
    let (mean, std) = group_stats(valid);
    let eps = options.eps;
    for (o, &r) in out.iter_mut().zip(rewards) {
        if r.is_nan() {
            continue;
        }
        *o = match (options.norm, n) {
            // verl's singleton rule: mean 0, std 1.
            (OutcomeNorm::Grpo, 1) => r / (1.0 + eps),
            (OutcomeNorm::Grpo, _) => (r - mean) / (std + eps),
            (OutcomeNorm::Rloo, 1) => r,
            (OutcomeNorm::Rloo, _) => (r - mean) * n as f32 / (n as f32 - 1.0),
            (OutcomeNorm::Mean, _) => r - mean,
        };
    }
    [mean, std]
}

/// NeMo-RL's leave-one-out GRPO advantage of one member (`nemo_rl/algorithms/utils.py`
/// `calculate_baseline_and_std_per_prompt`, `advantage_estimator.py` `GRPOAdvantageEstimator`, with
/// `use_leave_one_out_baseline`): its baseline is the mean of `others` (the group's other scored
/// rewards), its std their unbiased std (0 with fewer than two), and the advantage `own − baseline`,
/// divided by `std + ε` where `norm_by_std` and that std is above 0; a member alone has its own
/// reward as baseline (advantage 0). Returns (advantage, baseline, std).
pub fn leave_one_out<F: Real>(own: F, others: &[F], eps: F, norm_by_std: bool) -> (F, F, F) {
    let (mean, std) = match others.len() {
        0 => (own, F::ZERO),
        1 => (others[0], F::ZERO),
        _ => mean_std(others, true),
    };
    let mut advantage = own - mean;
    if norm_by_std && std > F::ZERO {
        advantage = advantage / (std + eps);
    }
    (advantage, mean, std)
}
