//! SPIRAL's role-conditioned advantage estimation (`rae`, arXiv 2506.24119) as prime-rl scores
//! it: a rollout's advantage is its reward minus its agent role's baseline, an exponential moving
//! average of that role's rewards, taken *before* the rollout's own reward updates it
//! (`b ← decay·b + (1 − decay)·r`, from 0). The baseline runs over the run's history: groups in
//! training-step order (then as the log gives them), rollouts in their group's order, a tree
//! record counted once (prime-rl scores a trace once, whatever its branches). prime-rl keys the
//! baselines per (environment, agent); a run here is one environment, so per role (a
//! trajectory's first step's role, `default` without one). Advantages are not normalized; no
//! sibling rollouts are needed. The arithmetic is in `f64` as Python's, on the float32 rewards the run
//! holds (prime-rl's are the log's doubles: an ulp or two of float32 apart), rounded once.

use crate::credit::params::declare::{params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, Preset, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{Run, TrajectoryId, TreeId};

scheme!(
    /// SPIRAL's role-conditioned advantage.
    Rae,
    knobs: Knobs,
    info: SchemeInfo {
        id: "rae",
        family: Family::Outcome,
        display_name: "RAE (SPIRAL role-conditioned advantage)",
        citation: "SPIRAL (arXiv 2506.24119) role-conditioned advantage estimation: A = r − b_role, b_role an EMA of the role's rewards taken before the rollout updates it; prime-rl RAEAlgorithm",
        needs: "outcome rewards; agent roles on steps for a multi-agent run (without them one baseline: REINFORCE with an EMA baseline); training steps order the history",
        source: SourceQuality::FromCode(
            "PrimeIntellect-ai/prime-rl@559b44772e471d1538537b8805cc77f3824a5e64 src/prime_rl/orchestrator/algo/rae.py (RAEAlgorithm.score_group); packages/prime-rl-configs/src/prime_rl/configs/algorithm.py (RAEAlgoConfig.decay = 0.95)",
        ),
        checked: "prime-rl's own RAEAlgorithm.score_group, one instance over each case's groups in order (tests/golden/prime_algos, tests/it/trainers_2026.rs: zero-sum player pairs, a proposer and its solvers, a role that appears late, groups of 1 to 16, decay 0.95 and 0.5), within 1e-6: prime-rl's Python floats keep the log's doubles where vantage holds each reward as float32, an ulp or two apart",
    },
    presets: [Preset {
        name: "prime_rl",
        values: &[("decay", "0.95")],
        doc: "prime-rl RAEAlgorithm with RAEAlgoConfig's default decay (SPIRAL's α = 0.95)",
    }],
);

params! {
    pub struct Knobs {
        decay: f64 = range(0.0, 1.0, "0.95", "SPIRAL's α: each rollout's reward moves its role's baseline by (1 − decay) of the gap (prime-rl's decay)"),
    }
}

impl Typed for Rae {
    fn supports(&self, run: &Run) -> Support {
        crate::credit::engine::inputs::supports_outcomes(run)
    }

    fn batch_wide(&self, _: &Knobs) -> Option<&'static str> {
        Some("each role's baseline runs over every group before it, in training-step order")
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let tr = &run.trajectories;
        // The history: groups by training step (a group without one first), then as logged.
        let mut groups: Vec<_> = run.groups.ids().collect();
        groups.sort_by_key(|g| run.groups.train_step[g.index()].unwrap_or(i64::MIN));
        let mut baselines: Vec<(&str, f64)> = Vec::new();
        let mut step = vec![f32::NAN; tr.path_nodes.len()];
        let mut terms =
            Terms::for_rows("r − b (b: the role's EMA before this rollout)", &["r", "b", "decay"], tr.len());
        for g in groups {
            // A tree record's rollouts share the advantage its first rollout got.
            let mut scored: Vec<(TreeId, f64, f64)> = Vec::new();
            for &t in run.groups.members(g) {
                let reward = f64::from(tr.reward[t.index()]);
                if !reward.is_finite() {
                    continue;
                }
                let tree = tr.tree[t.index()];
                let found = scored.iter().find(|(id, _, _)| !tree.is_none() && *id == tree);
                let (advantage, baseline) = if let Some(&(_, advantage, baseline)) = found {
                    (advantage, baseline)
                } else {
                    let role = crate::credit::engine::inputs::trajectory_role(run, t);
                    let slot = if let Some(i) = baselines.iter().position(|(r, _)| *r == role) {
                        i
                    } else {
                        baselines.push((role, 0.0));
                        baselines.len() - 1
                    };
                    let baseline = baselines[slot].1;
                    baselines[slot].1 = knobs.decay * baseline + (1.0 - knobs.decay) * reward;
                    scored.push((tree, reward - baseline, baseline));
                    (reward - baseline, baseline)
                };
                set(&mut step, run, t, advantage);
                terms.set(t.index(), &[reward, baseline, knobs.decay]);
            }
        }
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}

/// Gives every step of trajectory `t` the advantage `value` (a Python float, a float32 in training).
fn set(step: &mut [f32], run: &Run, t: TrajectoryId, value: f64) {
    for p in run.trajectories.path_range(t) {
        step[p] = value as f32;
    }
}
