//! GAR's redistribution (MiMo-V2.6 §4.3.2, Eq. 3) as prime-rl computes it
//! (`src/prime_rl/orchestrator/algo/gar.py`, `win_rates` and `redistribute`): the `gar` scheme's
//! arithmetic, and what the sample generator writes a verdict's λ with.

/// Each ranked candidate's win rate against the others (prime-rl's `win_rates`): `ranked` holds
/// each candidate's index and tier (0 best); a candidate in a lower tier counts 1, a tie ½, and a
/// lone candidate wins outright. In the order of the tiers.
pub fn win_rates(ranked: &[(usize, f64)]) -> Vec<(usize, f64)> {
    if ranked.len() < 2 {
        return ranked.iter().map(|&(c, _)| (c, 1.0)).collect();
    }
    let mut tiers: Vec<f64> = ranked.iter().map(|&(_, tier)| tier).collect();
    tiers.sort_by(f64::total_cmp);
    tiers.dedup();
    let total = ranked.len() as f64;
    let mut below = total;
    let mut rates = Vec::new();
    for tier in tiers {
        let members: Vec<usize> = ranked.iter().filter(|(_, t)| *t == tier).map(|&(c, _)| c).collect();
        let size = members.len() as f64;
        below -= size;
        rates.extend(members.into_iter().map(|c| (c, (below + 0.5 * (size - 1.0)) / (total - 1.0))));
    }
    rates
}

/// Eq. 3 (prime-rl's `redistribute`): `A = R − mean(R)`; each rollout above the mean gets `λ·f·A`
/// with `λ = Σ_P A / Σ_P f·A` capped at `lambda_max`; the group re-centred to zero mean. The
/// advantages and λ, in Python's order of operations.
pub fn redistribute(rewards: &[f64], quality: &[f64], lambda_max: f64) -> (Vec<f64>, f64) {
    let n = rewards.len() as f64;
    let mean = rewards.iter().fold(0.0, |s, r| s + r) / n;
    let mut advantages: Vec<f64> = rewards.iter().map(|r| r - mean).collect();
    let above: Vec<usize> = (0..advantages.len()).filter(|&i| advantages[i] > 0.0).collect();
    if above.is_empty() {
        return (advantages, 1.0);
    }
    let gain = above.iter().fold(0.0, |s, &i| s + advantages[i]);
    let weighted = above.iter().fold(0.0, |s, &i| s + quality[i] * advantages[i]);
    let ratio = gain / weighted;
    // Python's `min(lambda_max, ratio)`: the first where they are equal.
    let lambda = if ratio < lambda_max { ratio } else { lambda_max };
    for &i in &above {
        advantages[i] *= lambda * quality[i];
    }
    let shift = advantages.iter().fold(0.0, |s, a| s + a) / n;
    (advantages.iter().map(|a| a - shift).collect(), lambda)
}
