//! verifiers step rewards (`step_reward`): the per-step advantages of verifiers' `StepRewardRubric`
//! (`@vf.step_reward` handlers score each turn; Kevin, arXiv 2507.11948). Each step's reward (the
//! `env_reward` an `@vf.step_reward` handler wrote; 0 for a step without one) is turned into its
//! discounted return `G_k = r_k + γ·G_{k+1}`, and the returns of every step of every rollout of the
//! group are normalised together: `(G − mean)/(std + 1e-8)`, the population std.

use crate::credit::params::declare::{params, range};
use crate::credit::scheme::{StepAt, StepTerms, scheme};
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{Run, TrajectoryId};

scheme!(
    /// verifiers step rewards.
    StepReward,
    knobs: Knobs,
    info: SchemeInfo {
        id: "step_reward",
        family: Family::Process,
        display_name: "verifiers step rewards",
        citation: "verifiers @vf.step_reward and StepRewardRubric: γ-discounted per-step returns, normalised over every step of the group (Kevin, arXiv 2507.11948)",
        needs: "a reward on steps (`env_reward`, what an @vf.step_reward handler scores)",
        source: SourceQuality::FromCode(
            "PrimeIntellect-ai/verifiers@b6ca919fb verifiers/utils/step_reward_utils.py (compute_discounted_returns, apply_step_advantages) and rubrics/step_reward_rubric.py",
        ),
        checked: "verifiers' own apply_step_advantages on every step of sample_runs/terminal_turn_scores.jsonl under four γ (tests/golden/step_reward, tests/it/process_credit.rs)",
    },
);

params! {
    pub struct Knobs {
        gamma: f64 = range(0.0, 1.0, "1", "discount of the later steps' rewards in a step's return (StepRewardRubric's gamma)"),
    }
}

/// verifiers' epsilon in `apply_step_advantages`.
const EPSILON: f64 = 1e-8;

/// Each step's discounted return (verifiers' `compute_discounted_returns`), a step without a
/// reward counting 0.
fn returns(run: &Run, t: TrajectoryId, gamma: f64) -> Vec<f64> {
    let env = &run.nodes.env_reward;
    let rewards: Vec<f64> = run
        .trajectories
        .path(t)
        .iter()
        .map(|n| f64::from(env[n.index()]))
        .map(|r| if r.is_finite() { r } else { 0.0 })
        .collect();
    let mut out = vec![0.0; rewards.len()];
    let mut running = 0.0;
    for k in (0..rewards.len()).rev() {
        running = if k + 1 == rewards.len() { rewards[k] } else { rewards[k] + gamma * running };
        out[k] = running;
    }
    out
}

impl Typed for StepReward {
    fn supports(&self, run: &Run) -> Support {
        crate::credit::engine::inputs::supports_step_rewards(run)
    }

    fn step_terms(&self, run: &Run, knobs: &Knobs, _: &Credit, at: StepAt) -> StepTerms {
        let returns = returns(run, at.t, knobs.gamma);
        let reward = f64::from(run.nodes.env_reward[at.node.index()]);
        match returns.get(at.k) {
            Some(&g) => {
                vec![("step reward".to_owned(), Some(reward).filter(|r| r.is_finite())), ("G".to_owned(), Some(g))]
            }
            None => Vec::new(),
        }
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let gamma = knobs.gamma;
        let tr = &run.trajectories;
        let mut step = vec![f32::NAN; tr.path_nodes.len()];
        let mut terms = Terms::for_rows(
            "(G − mean)/(std + ε) over the group's steps, G_k = r_k + γ·G_{k+1}",
            &["mean", "std", "ε", "steps"],
            tr.len(),
        );
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            let all: Vec<Vec<f64>> = members.iter().map(|&t| returns(run, t, gamma)).collect();
            let n = all.iter().map(Vec::len).sum::<usize>();
            if n == 0 {
                continue;
            }
            // In verifiers' order: the sum, then the squared deviations, step after step.
            let mean = all.iter().flatten().sum::<f64>() / n as f64;
            let variance = all.iter().flatten().map(|r| (r - mean).powi(2)).sum::<f64>() / n as f64;
            let std = variance.sqrt();
            for (&t, returns) in members.iter().zip(&all) {
                for (p, r) in tr.path_range(t).zip(returns) {
                    step[p] = ((r - mean) / (std + EPSILON)) as f32;
                }
                terms.set(t.index(), &[mean, std, EPSILON, n as f64]);
            }
        }
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credit::{Params, Scheme as _};
    use crate::model::{NewGroup, NewStep, NewTokens, Outcome, RunBuilder};

    #[test]
    fn returns_are_discounted_and_the_group_s_steps_are_normalised_together() {
        let mut b = RunBuilder::new("s", "test");
        let (g, _) = b.add_group(&NewGroup { key: "g", ..NewGroup::default() });
        let step = |env_reward| NewStep { thought: Some("x"), env_reward, ..NewStep::default() };
        let outcome = |r| Outcome { reward: Some(r), ..Outcome::default() };
        b.add_chain_trajectory("a", g, &[step(Some(0.0)), step(Some(1.0))], &outcome(1.0), &NewTokens::default());
        b.add_chain_trajectory("b", g, &[step(None)], &outcome(0.0), &NewTokens::default());
        let run = b.finish();
        let params = Params::resolve(&StepReward, None, &[("gamma".to_owned(), "0.5".to_owned())]).expect("params");
        let credit = StepReward.compute(&run, &params).expect("computes");
        // Returns: a [0.5, 1], b [0] (no reward counts 0); mean 0.5, population std √(1/6).
        let std = (1.0f64 / 6.0).sqrt();
        let want = [0.0, 0.5 / (std + 1e-8), -0.5 / (std + 1e-8)];
        for (got, want) in credit.step.iter().zip(want) {
            assert!((f64::from(*got) - want).abs() < 1e-6, "{:?}", credit.step);
        }
    }
}
