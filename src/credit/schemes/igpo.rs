//! IGPO (`igpo`, arXiv 2510.14967) as its authors' code computes it: each turn's reward is its
//! information gain, how much more likely the policy finds the gold answer after the turn than
//! before it, `IG_k = p_{k+1} − p_k` with `p_k = exp(mean log p(gold | context before turn k))` (the
//! step score `gold_logprob`); the last turn's reward is the outcome (IGPO's F1). Each turn's return
//! is the sum of the rewards from it on (γ = 1), and its advantage is the return minus the mean of
//! the group's returns at the same position (a position past a rollout's end counts 0); the code
//! computes a std it never divides by. Turns are positions here (IGPO's code aligns the tokens of
//! the response); a rollout without a score on every step gets the outcome alone, as IGPO's reward
//! function does when its info gains do not match the turns.

use crate::credit::engine::inputs::{GOLD_LOGPROB as GOLD, supports_gold_logprob};
use crate::credit::params::declare::{params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, Preset, SchemeInfo, SourceQuality, Terms};
use crate::model::Run;

scheme!(
    /// IGPO's information-gain turn rewards.
    Igpo,
    knobs: Knobs,
    info: SchemeInfo {
        id: "igpo",
        family: Family::Process,
        display_name: "IGPO (information gain)",
        citation: "IGPO (arXiv 2510.14967): turn reward = gain in the policy's probability of the gold answer, the last turn the outcome; return-to-go minus the group's mean return at the same position",
        needs: "outcome rewards and, on each step, the policy's mean log-probability of the gold answer given the context before it (step score `gold_logprob`)",
        source: SourceQuality::FromCode(
            "GuoqingWang1/IGPO@bff163b72718a8b8f9175ce019ec7114ad6bd59a scrl/llm_agent/generation.py (run_llm_loop: info_gain_rewards, cur_prob − gt_probs, exp of the mean gold log-prob), verl/utils/reward_score/info_gain.py (compute_score: each turn's gain at its last token, F1 at the last), verl/trainer/ppo/core_algos.py (compute_grpo_outcome_advantage: γ = 1 returns, the group's per-position mean, no std). Gap: the code aligns the group's rows by token and vantage by turn; the paper normalizes the turn rewards within the group, the code does not",
        ),
        checked: "IGPO's own compute_grpo_outcome_advantage run with torch 2.15 on the CPU on rows of turn rewards built as its reward function builds them, from the steps of sample_runs/search_qa_rag.jsonl and hand-made turns (a group of one, a rollout without scores, a one-turn rollout, alpha 1 and 0.5) (tests/golden/igpo, tests/it/process_credit.rs), within 1e-5",
    },
    presets: [Preset {
        name: "igpo",
        values: &[("alpha", "1")],
        doc: "IGPO's code: the outcome at weight alpha = 1.0 (info_gain.compute_score), returns over the whole response (its script leaves verl's multi_turn off)",
    }],
    supports: supports_gold_logprob,
    credit: credit,
);

params! {
    pub struct Knobs {
        alpha: f64 = range(0.0, 100.0, "1", "the weight of the outcome (F1) on the last turn (IGPO's alpha)"),
    }
}

fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Credit {
    let tr = &run.trajectories;
    let gold = run.nodes.scores.get(GOLD);
    let mut step = vec![f32::NAN; tr.path_nodes.len()];
    let mut terms = Terms::for_rows(
        "G_k − mean of the group's G at turn k (G_k = Σ rewards from turn k: info gains, the outcome last)",
        &["r"],
        tr.len(),
    )
    .with_step_values(&["reward", "G", "group mean G"], if explain { step.len() } else { 0 });
    for g in run.groups.ids() {
        let members: Vec<_> =
            run.groups.members(g).iter().copied().filter(|t| tr.reward[t.index()].is_finite()).collect();
        // Each member's turn rewards and returns, in float32 as the reward tensor holds them.
        let mut returns: Vec<Vec<f32>> = Vec::with_capacity(members.len());
        let mut rewards: Vec<Vec<f32>> = Vec::with_capacity(members.len());
        for &t in &members {
            let scores: Vec<f32> = tr.path(t).iter().map(|n| gold.map_or(f32::NAN, |c| c[n.index()])).collect();
            let n = scores.len();
            let mut reward = vec![0.0f32; n];
            if n > 1 && scores.iter().all(|s| s.is_finite()) {
                // `torch.exp(mean).item()`: a float32 probability, differences in Python floats.
                let p: Vec<f64> = scores.iter().map(|s| f64::from(s.exp())).collect();
                for k in 0..n - 1 {
                    reward[k] = (p[k + 1] - p[k]) as f32;
                }
            }
            if let Some(last) = reward.last_mut() {
                // `alpha * f1_score` in Python floats, stored in the float32 reward tensor.
                *last = (knobs.alpha * f64::from(tr.reward[t.index()])) as f32;
            }
            // γ = 1 returns from the end (verl's multi_turn off: no position stops them).
            let mut g_k = vec![0.0f32; n];
            let mut next = 0.0f32;
            for k in (0..n).rev() {
                g_k[k] = reward[k] + next;
                next = g_k[k];
            }
            returns.push(g_k);
            rewards.push(reward);
        }
        let width = returns.iter().map(Vec::len).max().unwrap_or(0);
        // The group's mean at each position, rows past their end counting 0 (torch's mean over dim 0).
        let means: Vec<f32> = (0..width)
            .map(|k| {
                let column: Vec<f32> = returns.iter().map(|r| r.get(k).copied().unwrap_or(0.0)).collect();
                crate::credit::data::moments::torch_cpu_sum(&column) / column.len() as f32
            })
            .collect();
        for (i, &t) in members.iter().enumerate() {
            terms.set(t.index(), &[f64::from(tr.reward[t.index()])]);
            for (k, p) in tr.path_range(t).enumerate() {
                step[p] = returns[i][k] - means[k];
                if explain {
                    terms.set_step(p, &[f64::from(rewards[i][k]), f64::from(returns[i][k]), f64::from(means[k])]);
                }
            }
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}
