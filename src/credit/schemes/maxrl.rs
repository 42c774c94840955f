//! MaxRL (`maxrl`), maximum-likelihood RL (arXiv 2602.02710) as prime-rl scores it: the GRPO
//! pipeline with mean-normalized advantages, `(r − mean)/mean` over the rollouts of a prompt,
//! and 0 for the whole group where the mean reward is at most 0 (no signal). The float32 mean is
//! torch's CPU mean (`rewards.mean()`), and a tree record counts once (prime-rl scores a trace
//! once, whatever its branches), as the `grpo` preset `prime_rl` counts it.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::moments::torch_cpu_sum;
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::params::declare::{GROUP, params};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};

params! {
    pub struct Knobs {
        common: Common = GROUP,
    }
}

/// prime-rl at the commit read (`src/prime_rl/orchestrator/algo/max_rl.py`).
const PRIME_RL_AT: &str = "PrimeIntellect-ai/prime-rl@559b44772e471d1538537b8805cc77f3824a5e64 src/prime_rl/orchestrator/algo/max_rl.py (MaxRLAlgorithm.score_group)";

estimator!(
    MaxRl,
    kernel: kernel,
    info: SchemeInfo {
        id: "maxrl",
        family: Family::Outcome,
        display_name: "MaxRL",
        citation: "MaxRL, maximum-likelihood RL (arXiv 2602.02710): A = (r − mean)/mean over a prompt's rollouts, 0 where mean ≤ 0; prime-rl MaxRLAlgorithm",
        needs: "outcome rewards, non-negative (canonically 0/1: a group whose mean is at most 0 gets 0); tokens optional",
        source: SourceQuality::FromCode(PRIME_RL_AT),
        checked: "prime-rl's own MaxRLAlgorithm.score_group run with torch 2.15 on the CPU on groups of 1 to 16, mixed sizes, negative rewards and all-equal groups (tests/golden/prime_algos, tests/it/trainers_2026.rs), to the bit",
    },
    params: Knobs,
    presets: [Preset {
        name: "prime_rl",
        values: &[],
        doc: "prime-rl MaxRLAlgorithm (559b4477): (r − mean)/mean with torch's float32 mean, every group's mean ≤ 0 giving 0",
    }],
    supports: supports_rewards
);

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<'_, F>, _: &Knobs) -> Result<Output<F>, CreditError> {
    let scores = batch.scores();
    let mut advantage = vec![F::ZERO; scores.len()];
    let mut terms = Terms::for_rows("(r − mean)/mean, 0 where mean ≤ 0", &["r", "mean"], scores.len());
    let mut counted: Vec<F> = Vec::new();
    let mut seen: Vec<u32> = Vec::new();
    for rows in batch.group_rows().iter() {
        counted.clear();
        seen.clear();
        for &i in rows {
            // A tree record counted once: its first row stands for it.
            if batch.first_of_tree(i, &mut seen) {
                counted.push(scores[i]);
            }
        }
        // torch: `rewards.mean()` of a float32 row (an empty group's mean is NaN there; none here).
        let mean = torch_cpu_sum(&counted) / F::of(counted.len().max(1) as f64);
        for &i in rows {
            let s = scores[i];
            // `mean <= 0` is false for NaN in torch too: a NaN mean divides.
            advantage[i] = if mean <= F::ZERO { F::ZERO } else { (s - mean) / mean };
            terms.set(i, &[s.f64(), mean.f64()]);
        }
    }
    Ok(Output { advantages: batch.broadcast(&advantage), returns: None, terms })
}
