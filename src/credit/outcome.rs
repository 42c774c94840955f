//! The outcome advantage per trajectory that process schemes start from: GRPO (verl's rules),
//! mean-only (Dr.GRPO) or RLOO over each group's outcome rewards.

use super::grpo::group_stats;
use super::{ParamSpec, Params, Support};
use crate::model::Run;

/// Parameters of the outcome advantage, shared by the schemes built on it.
pub const OUTCOME_PARAMS: [ParamSpec; 2] = [
    ParamSpec::choice(
        "outcome_norm",
        &["grpo", "mean", "rloo"],
        "grpo",
        "outcome advantage: GRPO (r − mean)/(std + ε), mean-only (Dr.GRPO) or RLOO",
    ),
    ParamSpec::float("epsilon", 0.0, 1.0, "0.000001", "added to the group std"),
];

/// Whether any trajectory has an outcome reward.
pub fn has_outcomes(run: &Run) -> bool {
    run.trajectories.reward.iter().any(|r| !r.is_nan())
}

/// `Yes` when the run has outcome rewards, else why not.
pub fn supports_outcomes(run: &Run) -> Support {
    if has_outcomes(run) { Support::Yes } else { Support::No("needs outcome rewards".to_owned()) }
}

/// One outcome advantage per trajectory (`NaN` where the outcome is missing), and each group's
/// mean and std (indexed by group) for the explanation terms.
pub fn outcome_advantages(run: &Run, params: &Params) -> (Vec<f32>, Vec<[f32; 2]>) {
    let norm = params.choice("outcome_norm");
    let eps = params.f64("epsilon") as f32;
    let tr = &run.trajectories;
    let mut advantage = vec![f32::NAN; tr.len()];
    let mut stats = vec![[f32::NAN; 2]; run.groups.len()];
    let mut valid: Vec<f32> = Vec::new();
    for g in run.groups.ids() {
        let members = run.groups.members(g);
        valid.clear();
        valid.extend(members.iter().map(|t| tr.reward[t.index()]).filter(|r| !r.is_nan()));
        let n = valid.len();
        let (mean, std) = group_stats(&valid);
        stats[g.index()] = [mean, std];
        for &t in members {
            let r = tr.reward[t.index()];
            if r.is_nan() {
                continue;
            }
            advantage[t.index()] = match (norm, n) {
                // verl's singleton rule: mean 0, std 1.
                ("grpo", 1) => r / (1.0 + eps),
                ("grpo", _) => (r - mean) / (std + eps),
                ("rloo", 1) => r,
                ("rloo", _) => (r - mean) * n as f32 / (n as f32 - 1.0),
                _ => r - mean,
            };
        }
    }
    (advantage, stats)
}
