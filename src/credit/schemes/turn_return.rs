//! NeMo-RL turn-level credit (`turn_return`): NeMo-RL's GRPO advantage of the rollout (the
//! leave-one-out baseline over the prompt's other samples, divided by their std + 1e-6 where it is
//! above 0) plus auxiliary credit from the environment's native per-turn rewards (`env_reward` on
//! each step): each turn's own reward (`immediate`) or its discounted return-to-go
//! (`return_to_go`: `G_t = r_t + γ·G_{t+1}` over the turns with a reward), composed as
//! `macro_weight · A_GRPO + turn_weight · credit(turn)`. As NeMo-RL requires, a rollout's turn
//! rewards must sum to its outcome (within `raw_reward_atol`).

use crate::credit::kernels::outcome::leave_one_out;
use crate::credit::params::declare::{choice, decl, params, range};
use crate::credit::scheme::{StepAt, StepTerms, scheme};
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{Run, TrajectoryId};

scheme!(
    /// NeMo-RL turn-level credit.
    TurnReturn,
    knobs: Knobs,
    info: SchemeInfo {
        id: "turn_return",
        family: Family::Hybrid,
        display_name: "NeMo-RL turn-level credit",
        citation: "NeMo-RL research/turn_level_credit: GRPO's advantage plus the environment's native per-turn reward or return-to-go on each turn's tokens, A = macro_weight·A_GRPO + turn_weight·credit(turn)",
        needs: "the environment's reward on each step (`env_reward`), summing to the outcome reward",
        source: SourceQuality::FromCode(
            "NVIDIA-NeMo/RL@63af7444e research/turn_level_credit (advantage.py, trace.py compute_environment_credit, scatter_turn_credit, validate_raw_reward_sums) over nemo_rl/algorithms/advantage_estimator.py GRPOAdvantageEstimator (use_leave_one_out_baseline, normalize_rewards)",
        ),
        checked: "NeMo-RL's own TurnLevelGRPOAdvantageEstimator with torch on every turn of sample_runs/terminal_turn_scores.jsonl (tests/golden/turn_return, tests/it/process_credit.rs)",
    },
);

choice! {
    /// The `mode` parameter's words (NeMo-RL's `environment_mode`).
    enum Mode { Immediate = "immediate", ReturnToGo = "return_to_go" }
}

params! {
    pub struct Knobs {
        mode: Mode = decl("immediate", "each turn's credit: its own native reward, or its discounted return-to-go"),
        discount: f64 = range(0.0, 1.0, "1", "the return-to-go's discount per turn"),
        macro_weight: f64 = range(0.0, 4.0, "1", "weight of the rollout's GRPO advantage"),
        turn_weight: f64 = range(0.0, 4.0, "0.2", "weight of the turn's credit (NeMo-RL's research config: 0.2; 0 is plain GRPO)"),
        raw_reward_atol: f64 = range(0.0, 1.0, "0.000001", "how far a rollout's turn rewards may sum from its outcome"),
    }
}

/// NeMo-RL's epsilon in `GRPOAdvantageEstimator`.
const EPSILON: f32 = 1e-6;

/// Each turn's native reward (`None` for a turn without one).
fn turn_rewards(run: &Run, t: TrajectoryId) -> Vec<Option<f32>> {
    let env = &run.nodes.env_reward;
    run.trajectories.path(t).iter().map(|n| Some(env[n.index()]).filter(|v| v.is_finite())).collect()
}

/// Each turn's credit (0 for a turn without a reward), in float32 as NeMo-RL's tensors.
fn turn_credit(rewards: &[Option<f32>], mode: Mode, discount: f32) -> Vec<f32> {
    match mode {
        Mode::Immediate => rewards.iter().map(|r| r.unwrap_or(0.0)).collect(),
        Mode::ReturnToGo => {
            let mut credit = vec![0.0f32; rewards.len()];
            let mut running = 0.0f32;
            for (k, r) in rewards.iter().enumerate().rev() {
                let Some(r) = r else { continue };
                running = r + discount * running;
                credit[k] = running;
            }
            credit
        }
    }
}

impl Typed for TurnReturn {
    fn supports(&self, run: &Run) -> Support {
        match crate::credit::engine::inputs::supports_step_rewards(run) {
            Support::Yes => crate::credit::engine::inputs::supports_outcomes(run),
            no @ Support::No(_) => no,
        }
    }

    fn step_terms(&self, run: &Run, knobs: &Knobs, _: &Credit, at: StepAt) -> StepTerms {
        let k = at.k;
        let rewards = turn_rewards(run, at.t);
        let credit = turn_credit(&rewards, knobs.mode, knobs.discount as f32);
        let (Some(reward), Some(&credit)) = (rewards.get(k), credit.get(k)) else { return Vec::new() };
        vec![("turn reward".to_owned(), reward.map(f64::from)), ("credit(turn)".to_owned(), Some(f64::from(credit)))]
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let tr = &run.trajectories;
        let failed = |reason: String| CreditError::Failed { scheme: INFO.id.to_owned(), reason };
        let (macro_weight, turn_weight) = (knobs.macro_weight as f32, knobs.turn_weight as f32);
        let mut step = vec![f32::NAN; tr.path_nodes.len()];
        let mut terms = Terms::for_rows(
            "macro_weight·A_GRPO + turn_weight·credit(turn), A_GRPO = (r − mean of the others)/(their std + ε)",
            &["r", "mean of the others", "their std", "A_GRPO", "macro_weight", "turn_weight"],
            tr.len(),
        );
        let mut others: Vec<f32> = Vec::new();
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            for &t in members {
                let r = tr.reward[t.index()];
                if r.is_nan() {
                    continue;
                }
                let rewards = turn_rewards(run, t);
                let sum: f32 = rewards.iter().flatten().sum();
                if (sum - r).abs() > knobs.raw_reward_atol as f32 {
                    return Err(failed(format!(
                        "the turn rewards of {} sum to {sum}, not to its outcome {r} (raw_reward_atol {}): NeMo-RL refuses the batch",
                        run.trajectory_key(t),
                        knobs.raw_reward_atol
                    )));
                }
                others.clear();
                others
                    .extend(members.iter().filter(|&&o| o != t).map(|o| tr.reward[o.index()]).filter(|v| !v.is_nan()));
                let (advantage, mean, std) = leave_one_out(r, &others, EPSILON, true);
                let credit = turn_credit(&rewards, knobs.mode, knobs.discount as f32);
                for (p, c) in tr.path_range(t).zip(credit) {
                    step[p] = macro_weight * advantage + turn_weight * c;
                }
                let row = [r, mean, std, advantage, macro_weight, turn_weight].map(f64::from);
                terms.set(t.index(), &row);
            }
        }
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_return_to_go_skips_turns_without_a_reward() {
        let rewards = [Some(0.5), None, Some(0.25), Some(1.0)];
        assert_eq!(turn_credit(&rewards, Mode::Immediate, 0.5), [0.5, 0.0, 0.25, 1.0]);
        // G_3 = 1, G_2 = 0.25 + 0.5·1, the rewardless turn 0, G_0 = 0.5 + 0.5·0.75.
        assert_eq!(turn_credit(&rewards, Mode::ReturnToGo, 0.5), [0.875, 0.0, 0.75, 1.0]);
    }
}
