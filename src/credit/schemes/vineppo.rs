//! VinePPO (`vineppo`): Monte-Carlo values at step boundaries, `A_k = r_k + V(s_k) − V(s_(k−1))`,
//! with `V(s_S) = 0` and the outcome as the last step's reward, as McGill-NLP/VinePPO's
//! `_compute_step_advantages` and `_compute_mc_value` do: V(s₀) from the rollouts from the prompt
//! (the group's `mc`), a state with no rollouts valued 0, a truncated rollout (and a truncated
//! trajectory) scored `truncated_rollout_reward`, the states after the first `max_steps` steps
//! valued by the return that follows them.

use crate::credit::engine::tree::build;
use crate::credit::engine::whiten;
use crate::credit::kernels::tree_value::ValueMode;
use crate::credit::params::declare::{choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::Run;

scheme!(
    /// VinePPO.
    Vineppo,
    knobs: Knobs,
    info: SchemeInfo {
        id: "vineppo",
        family: Family::Tree,
        display_name: "VinePPO (Monte-Carlo values)",
        citation: "Kazemnejad et al. 2024, VinePPO (arXiv 2410.01679); McGill-NLP/VinePPO _compute_step_advantages",
        needs: "Monte-Carlo statistics (`mc`) on steps and outcome rewards",
        source: SourceQuality::FromCode("McGill-NLP/VinePPO@efe7228469f21bad8cc8d4e44a3f688ed8cc6aac"),
        checked: "VinePPO's own code per token (tests/golden/vineppo/cases.json, made by its generate.py from VinePPO efe7228: max_step_for_value_estimation, truncated rollouts and responses, states without rollouts, the trainer's whitening); the worked example of reference/credit-schemes-process.md",
    },    supports: supports,
    credit: credit,
    batch_wide: |knobs| knobs.whiten.then_some("whitens the advantages over the batch"),
);

choice! {
    enum Unlogged { Zero = "zero", LeafMean = "leaf_mean" }
}

params! {
    pub struct Knobs {
        max_steps: i64 = range(1.0, 1000.0, "20", "max_step_for_value_estimation: the states after the first this many steps have Monte-Carlo values; later ones are valued at the return that follows them (advantage 0)"),
        truncated_rollout_reward: f64 = range(-5.0, 5.0, "0", "the reward of a rollout or trajectory cut off by the length limit (finish `length`): the reward function's unfinished_response_penalty"),
        unlogged: Unlogged = decl("zero", "the value of a state the log gives no Monte-Carlo statistics for: 0, as a state with no rollouts has in the code, or the mean outcome of the logged leaves below it"),
        whiten: bool = decl("true", "whiten the advantages over all steps of the batch, as VinePPO's PPO trainer does"),
    }
}

/// What a run needs for it.
fn supports(run: &Run) -> Support {
    Support::when(run.nodes.mc_mean.is_some(), "needs Monte-Carlo statistics on steps (`mc`)")
        .and(|| crate::credit::engine::inputs::supports_outcomes(run))
}

/// The credit under `knobs`; with `explain`, the values per step its terms need too.
fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Credit {
    let tr = &run.trajectories;
    let max_steps = knobs.max_steps.max(1) as usize;
    let penalty = knobs.truncated_rollout_reward as f32;
    let unlogged_zero = knobs.unlogged == Unlogged::Zero;
    // The leaves' mean outcome below each state: V(s₀) of a group without prompt-state
    // rollouts, and a state without statistics when `unlogged = leaf_mean`.
    let tree = build(run, ValueMode::LeafMean, crate::credit::engine::tree::Merge::None);
    let mut step = crate::credit::data::pool::filled(tr.path_nodes.len(), f32::NAN);
    // Each step's own r_k, V(s_(k−1)) and V(s_k); whitened, the batch's moments in each row.
    let (formula, names): (&str, &[&'static str]) = if knobs.whiten {
        (
            "(r_k + V(s_k) − V(s_(k−1)) − batch mean) / batch std, V(s_0) = rollouts from the prompt, V(s_S) = 0",
            &["V(s_0)", "R", "batch mean", "batch std"],
        )
    } else {
        ("r_k + V(s_k) − V(s_(k−1)), V(s_0) = rollouts from the prompt, V(s_S) = 0", &["V(s_0)", "R"])
    };
    let mut terms = Terms::for_rows(formula, names, tr.len())
        .with_step_values(&["r_k", "V(s_(k−1))", "V(s_k)"], if explain { tr.path_nodes.len() } else { 0 });
    let mut values = Vec::new();
    for t in tr.ids() {
        let logged = tr.reward[t.index()];
        if logged.is_nan() {
            continue;
        }
        let r = if is_truncated(run.label(tr.finish[t.index()])) { penalty } else { logged };
        let path = tr.path(t);
        let offset = tr.path_offsets[t.index()] as usize;
        let num = path.len();
        let g = tr.group[t.index()].index();
        // V[k] = value of the state before step k + 1.
        let v0 = match run.groups.mc[g] {
            Some(mc) => mc_value(run, mc, &run.groups.mc_rollouts[g], penalty),
            None => tree.root_value[g],
        };
        values.clear();
        values.push(v0);
        // The state after step k has a Monte-Carlo value for k < max_steps (and never the
        // terminal one); the later ones are valued by the return after them, r.
        for (k, &node) in path.iter().enumerate().take(num.saturating_sub(1)) {
            let v = match run.nodes.mc(node) {
                _ if k >= max_steps => r,
                Some(mc) => {
                    let (reward, finish) = run.nodes.mc_rollouts.of(node.index());
                    let rollouts: Vec<(f32, crate::model::Sym)> =
                        reward.iter().copied().zip(finish.iter().copied()).collect();
                    mc_value(run, mc, &rollouts, penalty)
                }
                None if unlogged_zero => 0.0,
                None => tree.value[tree.node_of[offset + k] as usize],
            };
            values.push(v);
        }
        values.push(0.0);
        for k in 0..num {
            let reward = if k + 1 == num { r } else { 0.0 };
            step[offset + k] = reward + values[k + 1] - values[k];
            if explain {
                terms.set_step(offset + k, &[reward, values[k], values[k + 1]].map(f64::from));
            }
        }
        // (Not whitened, a batch of mean 0 and std 1.)
        terms.set(t.index(), &[f64::from(v0), f64::from(r), 0.0, 1.0]);
    }
    if knobs.whiten {
        // Over tokens, as the trainer whitens: each step weighted by its policy tokens (the
        // unbiased n/(n − 1) over tokens); steps without credit stay out.
        if let Some((mean, std)) = whiten::steps_over_tokens(run, &mut step) {
            terms.fill("batch mean", mean);
            terms.fill("batch std", std);
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}

/// Whether a finish reason means the length limit cut the response off.
fn is_truncated(finish: &str) -> bool {
    matches!(finish, "length" | "truncated")
}

/// A state's Monte-Carlo value: the mean of its rollouts' rewards, a truncated one scored
/// `penalty`, when the log lists them; else the logged mean; 0 for a state with no rollouts.
fn mc_value(run: &Run, mc: crate::model::McStats, rollouts: &[(f32, crate::model::Sym)], penalty: f32) -> f32 {
    if !rollouts.is_empty() {
        let sum: f64 = rollouts
            .iter()
            .map(|&(reward, finish)| f64::from(if is_truncated(run.label(finish)) { penalty } else { reward }))
            .sum();
        return (sum / rollouts.len() as f64) as f32;
    }
    // No rollouts (`n` 0 and no mean) is 0, as VinePPO values a state it did not roll out from; a
    // mean logged without a count (MATH-APS gives none, `n` 0) is the state's value.
    if mc.mean.is_nan() { 0.0 } else { mc.mean }
}
