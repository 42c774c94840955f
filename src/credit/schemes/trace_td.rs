//! TRACE (`trace_td`, arXiv 2607.13988, Algorithm 1) as a third party's port computes it: each
//! state's value is how far the reference model's log-probability of the gold answer has come,
//! `V_k = log(d₀/d_k)` with `d_k = −log p̄_k + ε` (`log p̄_k` the mean log-probability of the gold
//! answer's tokens given the context before turn k, the step score `gold_logprob`); each turn's
//! credit is the K-step TD of the values, discounted by γ and normalized by the discounts' sum,
//! and the turns whose horizon reaches the last transition add `scale·γ^(T−i)·A_out`, `A_out` the
//! group's outcome advantage (population std; 0 where the std is at most 1e-6). A turn's advantage
//! is `w_out·A_out + w_turn·r_i`; the last step (the answer, the tail after the last transition)
//! gets `w_out·A_out` alone, as does a rollout without gold scores. In float32, as the port's torch.
//!
//! A third party's port (iOPEN-Xing/agentic-rl); see docs/SCHEMES.md for what it leaves out.

use crate::credit::data::moments::torch_cpu_sum;
use crate::credit::engine::inputs::{GOLD_LOGPROB as GOLD, supports_gold_logprob};
use crate::credit::params::declare::{decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};
use crate::model::{Run, TrajectoryId};

scheme!(
    /// TRACE's turn-level credit from the gold answer's log-probability.
    TraceTd,
    knobs: Knobs,
    info: SchemeInfo {
        id: "trace_td",
        family: Family::Hybrid,
        display_name: "TRACE (gold log-prob TD credit)",
        citation: "TRACE (arXiv 2607.13988): V_k = log(d₀/d_k), d_k = −mean log p(gold | state k) + ε; K-step normalized TD with terminal fill; A = w_out·A_out + w_turn·A_turn; a third-party port (iOPEN-Xing/agentic-rl)",
        needs: "outcome rewards and, on each step, the reference model's mean log-probability of the gold answer given the context before it (step score `gold_logprob`)",
        source: SourceQuality::FromCode(
            "third-party port: iOPEN-Xing/agentic-rl@0bcfbb4ad3ee8315b3ca85f613a71aa077d90e99 verl/verl/trainer/ppo/hybrid_advantage.py (compute_trace_log_ratio_values, compute_trace_turn_rewards, compute_trace_group_outcome_advantage, compute_grpo_hybrid_advantage). Gap: the port's values need a frozen reference model's teacher-forced scores of the gold target at every prefix, which vantage reads from the log (`gold_logprob`) and cannot recompute; vantage computes per turn, the port per token of each turn's span (the same value on each of them)",
        ),
        checked: "the port's own functions run with torch 2.15 on the CPU on the steps of sample_runs/search_qa_rag.jsonl and on hand-made turns (one turn, horizons 0, 1 and 3, a zero-std group, a group of one), at the port's defaults and others (tests/golden/trace_td, tests/it/process_credit.rs), within 1e-5",
    },
    presets: [Preset {
        name: "port",
        values: &[("outcome_weight", "1"), ("turn_weight", "0.2"), ("gap_epsilon", "0.1"), ("td_horizon", "3"), ("td_gamma", "0.8"), ("terminal_scale", "2"), ("norm_by_std", "true")],
        doc: "the port's defaults (hybrid_advantage config: outcome_weight 1, turn_weight 0.2, gap_epsilon 0.1, td_horizon 3, td_gamma 0.8, terminal_scale 2; norm_adv_by_std_in_grpo true)",
    }],
    supports: supports_gold_logprob,
    credit: credit,
);

params! {
    pub struct Knobs {
        outcome_weight: f64 = range(0.0, 100.0, "1", "w_out: the weight of the group's outcome advantage"),
        turn_weight: f64 = range(0.0, 100.0, "0.2", "w_turn (λ): the weight of each turn's TD credit"),
        gap_epsilon: f64 = range(1e-6, 10.0, "0.1", "ε in the remaining gap d_k = −log p̄_k + ε"),
        td_horizon: i64 = range(0.0, 64.0, "3", "K: the turns of TD each turn's credit looks ahead (0: terminal fill only)"),
        td_gamma: f64 = range(0.0, 1.0, "0.8", "γ of the TD credit and of the terminal fill"),
        terminal_scale: f64 = range(0.0, 100.0, "2", "the scale of the outcome advantage filled into the turns whose horizon reaches the end"),
        norm_by_std: bool = decl("true", "divide the group's centred outcomes by their population std (norm_adv_by_std_in_grpo)"),
    }
}

/// Each group's outcome advantage per trajectory (`compute_trace_group_outcome_advantage`, in
/// float32): centred by the group's mean, divided by the population std where it is above ε.
fn outcome_advantages(run: &Run, norm_by_std: bool) -> Vec<f32> {
    let tr = &run.trajectories;
    let mut out = vec![0.0f32; tr.len()];
    for g in run.groups.ids() {
        let members: Vec<TrajectoryId> =
            run.groups.members(g).iter().copied().filter(|t| tr.reward[t.index()].is_finite()).collect();
        let scores: Vec<f32> = members.iter().map(|t| tr.reward[t.index()]).collect();
        if scores.is_empty() {
            continue;
        }
        let mean = torch_cpu_sum(&scores) / scores.len() as f32;
        let mut centred: Vec<f32> = scores.iter().map(|s| s - mean).collect();
        if norm_by_std {
            let squares: Vec<f32> = centred.iter().map(|c| c * c).collect();
            let std = (torch_cpu_sum(&squares) / squares.len() as f32).sqrt();
            if std.is_finite() && std > 1e-6 {
                for c in &mut centred {
                    *c /= std;
                }
            } else {
                centred.fill(0.0);
            }
        }
        for (t, c) in members.iter().zip(centred) {
            out[t.index()] = c;
        }
    }
    out
}

/// The turns' TD credit (`compute_trace_turn_rewards`) from the states' values, in float32.
fn turn_rewards(values: &[f32], outcome: f32, knobs: &Knobs) -> Vec<f32> {
    if values.len() < 2 {
        return Vec::new();
    }
    let deltas: Vec<f32> = values.windows(2).map(|w| w[1] - w[0]).collect();
    let count = deltas.len();
    let gamma = knobs.td_gamma as f32;
    let horizon = usize::try_from(knobs.td_horizon).unwrap_or(0);
    (0..count)
        .map(|i| {
            let (end, local) = if horizon == 0 {
                (i, 0.0)
            } else {
                let end = (i + horizon - 1).min(count - 1);
                // `float(γ) ** offsets` on a float32 tensor: each discount a float32 power.
                let discounts: Vec<f32> = (0..=end - i).map(|j| gamma.powf(j as f32)).collect();
                let weighted: Vec<f32> = discounts.iter().zip(&deltas[i..=end]).map(|(d, x)| d * x).collect();
                (end, torch_cpu_sum(&weighted) / torch_cpu_sum(&discounts))
            };
            let fill = if end == count - 1 {
                // Python floats: `float(scale) * float(γ) ** (T − i)`, then times the float32 outcome.
                (knobs.terminal_scale * knobs.td_gamma.powi((count - i) as i32)) as f32 * outcome
            } else {
                0.0
            };
            local + fill
        })
        .collect()
}

fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Result<Credit, CreditError> {
    let tr = &run.trajectories;
    let gold = run.nodes.scores.get(GOLD);
    let outcome = outcome_advantages(run, knobs.norm_by_std);
    let mut step = vec![f32::NAN; tr.path_nodes.len()];
    let mut terms = Terms::for_rows(
        "w_out·A_out + w_turn·r_i (r_i: K-step TD of V = log(d₀/d_k), terminal fill); the last step w_out·A_out",
        &["A_out", "V(last)"],
        tr.len(),
    )
    .with_step_values(&["V(before)", "V(after)", "r_turn"], if explain { step.len() } else { 0 });
    let (w_out, w_turn) = (knobs.outcome_weight as f32, knobs.turn_weight as f32);
    for t in tr.ids() {
        if !tr.reward[t.index()].is_finite() {
            continue;
        }
        let a_out = outcome[t.index()];
        let range = tr.path_range(t);
        let scores: Vec<f32> = tr.path(t).iter().map(|n| gold.map_or(f32::NAN, |c| c[n.index()])).collect();
        // A rollout without a score on every step: outcome credit alone (the port's no-spans case).
        let values = if scores.iter().all(|s| s.is_finite()) {
            if let Some(bad) = scores.iter().position(|&s| s > 1e-6) {
                return Err(CreditError::Failed {
                    scheme: INFO.id.to_owned(),
                    reason: format!(
                        "trajectory {} step {bad}: {GOLD} {} is above 0 (average log-probabilities must be non-positive)",
                        run.trajectory_key(t),
                        scores[bad]
                    ),
                });
            }
            let eps = knobs.gap_epsilon as f32;
            let d0 = -scores[0] + eps;
            scores.iter().map(|s| (d0 / (-s + eps)).ln()).collect()
        } else {
            Vec::new()
        };
        let rewards = turn_rewards(&values, a_out, knobs);
        terms.set(t.index(), &[f64::from(a_out), values.last().map_or(f64::NAN, |v| f64::from(*v))]);
        for (k, p) in range.enumerate() {
            let turn = rewards.get(k).copied();
            step[p] = w_out * a_out + turn.map_or(0.0, |r| w_turn * r);
            let v = |i: usize| values.get(i).map_or(f64::NAN, |v| f64::from(*v));
            if explain {
                terms.set_step(p, &[v(k), v(k + 1), turn.map_or(f64::NAN, f64::from)]);
            }
        }
    }
    Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
}
