//! prime-rl turn credit (`turn_credit`): GRPO whose credit within a rollout follows per-turn
//! state-of-the-world scores. The turn scores (`turn_reward` step scores, prime-rl's
//! `info["turn_rewards"]`) become per-turn progress (each scored turn's score minus the previous
//! scored one; the first scored turn 0, an unscored turn 0, its progress landing on the next scored
//! turn); each turn's progress is smeared back over it and the turns before it with weights `γ^d`,
//! normalised to sum to one (`c_t = v_t + γ·c_{t+1}`, `v_t = progress_t / Σ_{d<t} γ^d`); and each
//! turn gets `A + β·(c_turn − c̄)`, where `A` is the rollout's shaped return (outcome plus net
//! progress) less its group's mean, and `c̄` the turn credits' mean weighted by each turn's policy
//! tokens. A rollout without turn scores gets `A` on every turn, as prime-rl trains it as GRPO.

use crate::credit::params::declare::{params, range};
use crate::credit::scheme::{StepAt, StepTerms, scheme};
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{Run, TrajectoryId};

scheme!(
    /// prime-rl turn credit.
    TurnCredit,
    knobs: Knobs,
    info: SchemeInfo {
        id: "turn_credit",
        family: Family::Process,
        display_name: "prime-rl turn credit",
        citation: "prime-rl turn-credit shaping (algo.type = \"turn_credit\"): per-turn state scores → progress → γ-normalised backward smear, a = A + β·(c_turn − c̄)",
        needs: "per-turn state scores (a `turn_reward` step score; prime-rl's info[\"turn_rewards\"]) and outcome rewards",
        source: SourceQuality::FromCode(
            "PrimeIntellect-ai/prime-rl@0d6024432 src/prime_rl/orchestrator/algo/turn_credit.py (length_penalty, off by default, is not offered; a forked trace's branches count as rollouts of their own)",
        ),
        checked: "prime-rl's own TurnCreditAlgorithm on every turn of sample_runs/terminal_turn_scores.jsonl under five (γ, β) (tests/golden/turn_credit, tests/it/process_credit.rs)",
    },
);

/// The step score that holds a turn's state score.
const SCORE: &str = "turn_reward";

params! {
    pub struct Knobs {
        gamma: f64 = range(0.0, 1.0, "0.9", "backward-smear decay per turn of distance (0: only the turn whose state changed; 1: evenly over the turns so far)"),
        beta: f64 = range(0.0, 4.0, "1", "shaping strength: how far credit within a rollout follows the turn credits (0: plain GRPO level)"),
    }
}

/// Per-turn progress from per-turn state scores (prime-rl's `deltas`).
fn deltas(scores: &[Option<f64>]) -> Vec<f64> {
    let mut out = vec![0.0; scores.len()];
    let mut last: Option<f64> = None;
    for (i, score) in scores.iter().enumerate() {
        let Some(score) = *score else { continue };
        if let Some(previous) = last {
            out[i] = score - previous;
        }
        last = Some(score);
    }
    out
}

/// Each turn's credit: its own and later turns' progress, smeared back (prime-rl's `smear`).
fn smear(progress: &[f64], gamma: f64) -> Vec<f64> {
    let values: Vec<f64> = progress
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let t = (i + 1) as f64;
            let z = if gamma == 1.0 { t } else { (1.0 - gamma.powf(t)) / (1.0 - gamma) };
            r / z
        })
        .collect();
    let mut credits = vec![0.0; progress.len()];
    let mut acc = 0.0;
    for t in (0..progress.len()).rev() {
        acc = values[t] + gamma * acc;
        credits[t] = acc;
    }
    credits
}

/// A trajectory's turn scores (`None` for an unscored turn), or `None` when no turn is scored.
fn turn_scores(run: &Run, t: TrajectoryId) -> Option<Vec<Option<f64>>> {
    let column = run.nodes.scores.get(SCORE)?;
    let scores: Vec<Option<f64>> = run
        .trajectories
        .path(t)
        .iter()
        .map(|n| column.get(n.index()).copied().filter(|v| v.is_finite()).map(f64::from))
        .collect();
    scores.iter().any(Option::is_some).then_some(scores)
}

/// Each turn's trainable (policy) tokens, the weights of `c̄`; 1 each on a run without tokens.
fn turn_weights(run: &Run, t: TrajectoryId) -> Vec<f64> {
    let tr = &run.trajectories;
    if tr.token_range(t).is_empty() {
        return vec![1.0; tr.num_steps(t)];
    }
    tr.path(t)
        .iter()
        .map(|&node| {
            crate::credit::step_token_range(run, t, node)
                .map_or(0.0, |range| range.filter(|&i| run.tokens.is_policy(i)).count() as f64)
        })
        .collect()
}

/// A rollout's outcome (0 without one: verifiers sums no rewards to 0).
fn reward(run: &Run, t: TrajectoryId) -> f64 {
    let r = f64::from(run.trajectories.reward[t.index()]);
    if r.is_finite() { r } else { 0.0 }
}

impl Typed for TurnCredit {
    fn supports(&self, run: &Run) -> Support {
        if !run.nodes.scores.get(SCORE).is_some_and(|c| c.iter().any(|v| v.is_finite())) {
            return Support::No(format!(
                "needs per-turn state scores (a `{SCORE}` step score; prime-rl's info[\"turn_rewards\"])"
            ));
        }
        Support::Yes
    }

    fn step_terms(&self, run: &Run, knobs: &Knobs, _: &Credit, at: StepAt) -> StepTerms {
        let (t, k) = (at.t, at.k);
        let Some(scores) = turn_scores(run, t) else { return Vec::new() };
        let progress = deltas(&scores);
        let credits = smear(&progress, knobs.gamma);
        let weights = turn_weights(run, t);
        let (Some(&credit), Some(&weight)) = (credits.get(k), weights.get(k)) else { return Vec::new() };
        vec![
            ("turn score".to_owned(), scores[k]),
            ("progress".to_owned(), Some(progress[k])),
            ("c_turn".to_owned(), Some(credit)),
            ("policy tokens".to_owned(), Some(weight)),
        ]
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let tr = &run.trajectories;
        let mut step = vec![f32::NAN; tr.path_nodes.len()];
        let mut terms = Terms::for_rows(
            "A + β·(c_turn − c̄), A = R + net progress − group mean",
            &["R", "net progress", "group mean", "A", "c̄", "β", "γ"],
            tr.len(),
        );
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            let scores: Vec<Option<Vec<Option<f64>>>> = members.iter().map(|&t| turn_scores(run, t)).collect();
            let progress: Vec<f64> =
                scores.iter().map(|s| s.as_ref().map_or(0.0, |s| deltas(s).iter().sum())).collect();
            let returns: Vec<f64> = members.iter().zip(&progress).map(|(&t, p)| reward(run, t) + p).collect();
            let baseline = returns.iter().sum::<f64>() / returns.len().max(1) as f64;
            for ((&t, scores), (&ret, &net)) in members.iter().zip(&scores).zip(returns.iter().zip(&progress)) {
                let level = ret - baseline;
                let range = tr.path_range(t);
                let mut center = f64::NAN;
                match scores {
                    Some(scores) if knobs.beta != 0.0 => {
                        let credits = smear(&deltas(scores), knobs.gamma);
                        let weights = turn_weights(run, t);
                        let total: f64 = weights.iter().sum();
                        // No trainable token: prime-rl assigns the rollout nothing.
                        if total > 0.0 {
                            center = credits.iter().zip(&weights).map(|(c, w)| c * w).sum::<f64>() / total;
                            for (k, p) in range.clone().enumerate() {
                                // A turn without trainable tokens is not trained (its tokens get 0).
                                let value =
                                    if weights[k] > 0.0 { level + knobs.beta * (credits[k] - center) } else { 0.0 };
                                step[p] = value as f32;
                            }
                        }
                    }
                    _ => step[range.clone()].fill(level as f32),
                }
                let row = [reward(run, t), net, baseline, level, center, knobs.beta, knobs.gamma];
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
    fn progress_is_the_change_between_scored_turns_and_the_smear_keeps_its_total() {
        // Turn 1 sets the start, turn 2 is unscored, turn 3 gains 0.5 over turn 1, turn 4 loses 0.25.
        let progress = deltas(&[Some(0.25), None, Some(0.75), Some(0.5)]);
        assert_eq!(progress, [0.0, 0.0, 0.5, -0.25]);
        for gamma in [0.0, 0.5, 0.9, 1.0] {
            let credits = smear(&progress, gamma);
            let total: f64 = credits.iter().sum();
            assert!((total - 0.25).abs() < 1e-12, "γ {gamma}: {credits:?}");
        }
        // γ = 0: each turn keeps its own progress; γ = 1: spread evenly over the turns so far.
        assert_eq!(smear(&progress, 0.0), progress);
        let even = smear(&progress, 1.0);
        assert!((even[0] - (0.5 / 3.0 - 0.25 / 4.0)).abs() < 1e-12, "{even:?}");
    }
}
