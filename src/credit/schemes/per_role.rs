//! rLLM's per-role estimators (`per_role`): a multi-agent run trains each agent role with its own
//! outcome estimator (rLLM's `AlgorithmConfig.estimator_map`, role → estimator, the others taking
//! `estimator`). rLLM groups a task's trajectories by role (`TrajectoryGroup.group_role`); here a
//! trajectory's role is its first step's role (`default` when it has none), and a group is a
//! vantage group's trajectories of one role. Each role's estimator sees that role's groups:
//! `grpo` and `rloo` per group, `reinforce_plus_plus_baseline` and `prpo` whitened over every
//! group of the role (batch-wide), `reinforce` the reward itself. The trajectory's advantage is
//! broadcast to its steps (`stepwise_advantage_mode = "broadcast"`), in float64 as rLLM's numpy.

use crate::credit::params::declare::{Choice as _, choice, decl, from_word, params};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{Run, TrajectoryId};

scheme!(
    /// rLLM's per-role estimators.
    PerRole,
    knobs: Knobs,
    info: SchemeInfo {
        id: "per_role",
        family: Family::Outcome,
        display_name: "rLLM per-role estimators",
        citation: "rLLM (rllm-org/rllm): AlgorithmConfig.estimator_map gives each agent role its own advantage estimator (GRPO, REINFORCE, REINFORCE++ baseline, PRPO, RLOO) over that role's trajectory groups, broadcast to the role's steps",
        needs: "outcome rewards; agent roles on steps (without them every trajectory is role `default`)",
        source: SourceQuality::FromCode(
            "rllm-org/rllm@9beb6e0f rllm/trainer/algorithms/advantage.py (collect_reward_and_advantage_from_trajectory_groups, the registered estimators) and rl_algo.py (calculate_grpo_advantages_per_group, calculate_rloo_advantages_per_group)",
        ),
        checked: "rLLM's own estimators run on sample_runs/alfworld_roles.jsonl under two estimator maps (tests/golden/per_role, tests/it/process_credit.rs)",
    },
);

choice! {
    /// rLLM's built-in estimators (`rLLMAdvantageEstimator`).
    enum Estimator {
        Grpo = "grpo",
        Reinforce = "reinforce",
        ReinforcePlusPlusBaseline = "reinforce_plus_plus_baseline",
        Prpo = "prpo",
        Rloo = "rloo",
    }
}

params! {
    pub struct Knobs {
        estimators: &'static str = decl("", "each role's estimator, `role=estimator` separated by commas (rLLM's estimator_map), e.g. `solver=grpo, verifier=reinforce`; a role not named takes `estimator`"),
        estimator: Estimator = decl("grpo", "the estimator of the roles `estimators` does not name (rLLM's estimator)"),
        norm_by_std: bool = decl("true", "GRPO divides by the group's std (rLLM's norm_adv_by_std_in_grpo)"),
    }
}

/// rLLM's epsilon (`episilon=1e-6` in `calculate_grpo_advantages_per_group`, `epsilon=1e-6` in the
/// batch estimators).
const EPSILON: f64 = 1e-6;

/// Each role named by `text` with its estimator.
fn estimator_map(text: &str) -> Result<Vec<(String, Estimator)>, String> {
    let mut map = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((role, name)) = entry.split_once('=') else {
            return Err(format!("estimators: {entry:?} is not role=estimator"));
        };
        let estimator = from_word::<Estimator>(name.trim())
            .ok_or_else(|| format!("estimators: {:?} is not one of {}", name.trim(), Estimator::NAMES.join(", ")))?;
        map.push((role.trim().to_owned(), estimator));
    }
    Ok(map)
}

/// Mean and population std (numpy's `np.mean`, `np.std`).
fn moments(values: &[f64]) -> (f64, f64) {
    crate::credit::data::moments::mean_std(values, false)
}

/// One role's advantages, group by group, with each row's baseline and scale for the terms
/// (`A = (r − baseline)/scale`).
fn role_advantages(groups: &[Vec<f64>], estimator: Estimator, norm_by_std: bool) -> Vec<Vec<[f64; 3]>> {
    match estimator {
        Estimator::Grpo => groups
            .iter()
            .map(|r| {
                let (mean, std) = if r.len() <= 1 { (0.0, 1.0) } else { moments(r) };
                let scale = if norm_by_std { std + EPSILON } else { 1.0 };
                r.iter()
                    .map(|&x| [if norm_by_std { (x - mean) / (std + EPSILON) } else { x - mean }, mean, scale])
                    .collect()
            })
            .collect(),
        Estimator::Reinforce => groups.iter().map(|r| r.iter().map(|&x| [x, 0.0, 1.0]).collect()).collect(),
        Estimator::Rloo => groups
            .iter()
            .map(|r| {
                let n = r.len() as f64;
                if r.len() <= 1 {
                    return r.iter().map(|&x| [x, 0.0, 1.0]).collect();
                }
                let mean = r.iter().sum::<f64>() / n;
                r.iter().map(|&x| [n / (n - 1.0) * (x - mean), mean, (n - 1.0) / n]).collect()
            })
            .collect(),
        Estimator::ReinforcePlusPlusBaseline => {
            let centered: Vec<Vec<(f64, f64)>> = groups
                .iter()
                .map(|r| {
                    let mean = r.iter().sum::<f64>() / r.len() as f64;
                    r.iter().map(|&x| (x - mean, mean)).collect()
                })
                .collect();
            let all: Vec<f64> = centered.iter().flatten().map(|(c, _)| *c).collect();
            let (_, std) = moments(&all);
            centered
                .iter()
                .map(|g| g.iter().map(|&(c, mean)| [c / (std + EPSILON), mean, std + EPSILON]).collect())
                .collect()
        }
        Estimator::Prpo => {
            let all: Vec<f64> = groups.iter().flatten().copied().collect();
            let (mean, std) = moments(&all);
            groups
                .iter()
                .map(|r| r.iter().map(|&x| [(x - mean) / (std + EPSILON), mean, std + EPSILON]).collect())
                .collect()
        }
    }
}

impl Typed for PerRole {
    fn supports(&self, run: &Run) -> Support {
        crate::credit::engine::inputs::supports_outcomes(run)
    }

    fn batch_wide(&self, knobs: &Knobs) -> Option<&'static str> {
        let batch = |e: Estimator| matches!(e, Estimator::ReinforcePlusPlusBaseline | Estimator::Prpo);
        let map = estimator_map(knobs.estimators).unwrap_or_default();
        (batch(knobs.estimator) || map.iter().any(|(_, e)| batch(*e)))
            .then_some("whitens over every group of a role (reinforce_plus_plus_baseline, prpo)")
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let map = estimator_map(knobs.estimators)
            .map_err(|reason| CreditError::Failed { scheme: INFO.id.to_owned(), reason })?;
        let tr = &run.trajectories;
        // Each role's groups, in the order they appear, each with its trajectories of that role.
        let mut roles: Vec<(&str, Vec<Vec<TrajectoryId>>)> = Vec::new();
        for g in run.groups.ids() {
            let mut by_role: Vec<(&str, Vec<TrajectoryId>)> = Vec::new();
            for &t in run.groups.members(g) {
                if !tr.reward[t.index()].is_finite() {
                    continue;
                }
                let role = crate::credit::engine::inputs::trajectory_role(run, t);
                match by_role.iter_mut().find(|(r, _)| *r == role) {
                    Some((_, members)) => members.push(t),
                    None => by_role.push((role, vec![t])),
                }
            }
            for (role, members) in by_role {
                match roles.iter_mut().find(|(r, _)| *r == role) {
                    Some((_, groups)) => groups.push(members),
                    None => roles.push((role, vec![members])),
                }
            }
        }
        let mut step = vec![f32::NAN; tr.path_nodes.len()];
        let mut terms =
            Terms::for_rows("(r − baseline)/scale under the role's estimator", &["r", "baseline", "scale"], tr.len());
        for (role, groups) in &roles {
            let estimator = map.iter().find(|(r, _)| r == role).map_or(knobs.estimator, |(_, e)| *e);
            let rewards: Vec<Vec<f64>> =
                groups.iter().map(|g| g.iter().map(|t| f64::from(tr.reward[t.index()])).collect()).collect();
            let advantages = role_advantages(&rewards, estimator, knobs.norm_by_std);
            for ((members, values), rewards) in groups.iter().zip(&advantages).zip(&rewards) {
                for ((&t, [advantage, baseline, scale]), r) in members.iter().zip(values).zip(rewards) {
                    for p in tr.path_range(t) {
                        step[p] = *advantage as f32;
                    }
                    terms.set(t.index(), &[*r, *baseline, *scale]);
                }
            }
        }
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimator_map_is_read_and_a_wrong_entry_is_named() {
        let map = estimator_map(" solver=grpo, verifier = reinforce ,").unwrap();
        assert_eq!(map, [("solver".to_owned(), Estimator::Grpo), ("verifier".to_owned(), Estimator::Reinforce)]);
        assert!(estimator_map("solver").unwrap_err().contains("role=estimator"));
        assert!(estimator_map("solver=ppo").unwrap_err().contains("\"ppo\" is not one of grpo"));
    }

    #[test]
    fn each_estimator_is_rllm_s() {
        let groups = [vec![1.0, 0.0, 1.0, 1.0], vec![0.5]];
        let a = |e| role_advantages(&groups, e, true);
        // GRPO: (r − mean)/(std + ε); a group of one has mean 0 and std 1.
        assert!((a(Estimator::Grpo)[0][1][0] + 0.75 / (0.1875f64.sqrt() + EPSILON)).abs() < 1e-12);
        assert!((a(Estimator::Grpo)[1][0][0] - 0.5 / (1.0 + EPSILON)).abs() < 1e-12);
        // RLOO: n/(n − 1)·(r − mean); a group of one keeps its reward.
        assert!((a(Estimator::Rloo)[0][1][0] + 4.0 / 3.0 * 0.75).abs() < 1e-12);
        assert_eq!(a(Estimator::Rloo)[1][0][0], 0.5);
        assert_eq!(a(Estimator::Reinforce)[0][1][0], 0.0);
    }
}
