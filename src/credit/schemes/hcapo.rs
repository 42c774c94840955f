//! HCAPO (`hcapo`, arXiv 2603.08754) as a third party's port computes it: GRPO's group-normalized
//! outcome plus `ω` times the group-normalized hindsight return of each turn, with no critic.
//! A turn's hindsight ratio `ρ = clip(exp(m/τ), lo, hi)`, `m` the mean over its policy tokens of
//! log π(turn | context, the rollout's final state) − log π(turn | context) (the step score
//! `hindsight_logratio`; a turn without one counts `m = 0`), refines its discounted return:
//! `Q^H_k = ρ_k·γ^(T−1−k)·R`, R the outcome; adjacent turns smooth it
//! (`(1 − α)·Q_k + α·mean of its neighbours`). Both terms are normalized over the group's turns
//! (each rollout's outcome counted once a turn; the population std, plus ε, where it is above ε),
//! and the sum is clipped to ±`adv_clip`. In float32, as the port's numpy.
//!
//! A third party's port (RainyFields/Agentic-RL-CA); see docs/SCHEMES.md for what it adds.

use crate::credit::data::moments::torch_cpu_sum;
use crate::credit::engine::inputs::supports_outcomes;
use crate::credit::params::declare::{decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, Preset, SchemeInfo, SourceQuality, Terms};
use crate::model::Run;

/// The step score holding a turn's mean hindsight log-ratio.
const HINDSIGHT: &str = "hindsight_logratio";

scheme!(
    /// HCAPO's hindsight credit.
    Hcapo,
    knobs: Knobs,
    info: SchemeInfo {
        id: "hcapo",
        family: Family::Hybrid,
        display_name: "HCAPO (hindsight credit)",
        citation: "HCAPO (arXiv 2603.08754): A = (R − μ_R)/σ_R + ω·(Q^H − μ_H)/σ_H, Q^H = ρ·γ^(T−1−k)·R with ρ the clipped hindsight likelihood ratio of the turn given the final state; a third-party port (RainyFields/Agentic-RL-CA)",
        needs: "outcome rewards; each turn's mean token log-ratio with the final state in the prompt (step score `hindsight_logratio`; without it ρ = 1 and the micro term is the discounted outcome)",
        source: SourceQuality::FromCode(
            "third-party port: RainyFields/Agentic-RL-CA@2df17d247f9a98f97c62ec6f37eeacf9756db4e4 gigpo/core_hcapo.py (compute_hcapo_advantage, _group_norm). Gap: the port adds what the paper does not name, on by default: the temporal smoothing of Q^H over adjacent turns and the clip of the advantage to ±5; its ρ is exp of the turn's mean token log-ratio over a temperature, clipped to [0.8, 1.2]; the hindsight log-probs need a second forward pass with the final observation in the prompt, which vantage reads from the log and cannot make",
        ),
        checked: "the port's own compute_hcapo_advantage run with torch 2.15 and numpy on the turns of sample_runs/terminal_turn_scores.jsonl and of hand-made groups (one turn, a group of one, equal outcomes, ρ at both clips, the advantage clip binding), at its defaults and without smoothing (tests/golden/hcapo, tests/it/process_credit.rs), within 1e-5",
    },
    presets: [Preset {
        name: "port",
        values: &[("gamma", "0.95"), ("omega", "1"), ("t_temp", "5"), ("clip_lo", "0.8"), ("clip_hi", "1.2"), ("temporal_alpha", "0.5"), ("use_temporal", "true"), ("eps", "0.001"), ("adv_clip", "5")],
        doc: "compute_hcapo_advantage's defaults",
    }],
    supports: supports_outcomes,
    credit: credit,
);

params! {
    pub struct Knobs {
        gamma: f64 = range(0.0, 1.0, "0.95", "γ: a turn's return is the outcome discounted by the turns after it"),
        omega: f64 = range(0.0, 100.0, "1", "ω: the weight of the normalized hindsight return"),
        t_temp: f64 = range(0.01, 100.0, "5", "τ: the temperature dividing the mean log-ratio before exp"),
        clip_lo: f64 = range(0.0, 10.0, "0.8", "the least ρ"),
        clip_hi: f64 = range(0.0, 10.0, "1.2", "the greatest ρ"),
        temporal_alpha: f64 = range(0.0, 1.0, "0.5", "α of the smoothing of Q^H with its neighbouring turns"),
        use_temporal: bool = decl("true", "smooth Q^H over adjacent turns (the port's)"),
        eps: f64 = range(0.0, 1.0, "0.001", "ε: a group whose std is at most ε is only centred; else divided by std + ε"),
        adv_clip: f64 = range(0.0, 1000.0, "5", "the advantage is clipped to ±adv_clip (0: no clip)"),
    }
}

/// The port's `_group_norm` over one group's values, in float32.
fn group_norm(values: &[f32], eps: f32) -> Vec<f32> {
    let n = values.len() as f32;
    let mean = torch_cpu_sum(values) / n;
    let squares: Vec<f32> = values.iter().map(|v| (v - mean) * (v - mean)).collect();
    let std = (torch_cpu_sum(&squares) / n).sqrt();
    values.iter().map(|v| if std > eps { (v - mean) / (std + eps) } else { v - mean }).collect()
}

fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Credit {
    let tr = &run.trajectories;
    let hindsight = run.nodes.scores.get(HINDSIGHT);
    let mut step = vec![f32::NAN; tr.path_nodes.len()];
    let mut terms = Terms::for_rows(
        "(R − μ_R)/σ_R + ω·(Q^H − μ_H)/σ_H over the group's turns, Q^H = ρ·γ^(T−1−k)·R smoothed, clipped",
        &["R"],
        tr.len(),
    )
    .with_step_values(&["ρ", "Q^H"], if explain { step.len() } else { 0 });
    let (gamma, alpha) = (knobs.gamma, knobs.temporal_alpha as f32);
    for g in run.groups.ids() {
        // The group's turn rows: path position, outcome and smoothed Q^H.
        let (mut positions, mut outcome, mut q_h) = (Vec::new(), Vec::new(), Vec::new());
        for &t in run.groups.members(g) {
            let reward = tr.reward[t.index()];
            if !reward.is_finite() {
                continue;
            }
            let range = tr.path_range(t);
            let turns = range.len();
            let rho: Vec<f32> = tr
                .path(t)
                .iter()
                .map(|n| {
                    let m = hindsight.map_or(0.0, |c| c[n.index()]);
                    let m = if m.is_finite() { m } else { 0.0 };
                    (m / knobs.t_temp as f32).exp().clamp(knobs.clip_lo as f32, knobs.clip_hi as f32)
                })
                .collect();
            // `rho * gamma ** (T − 1 − k) * Rt`: float32 (NumPy's weak Python floats).
            let q: Vec<f32> = (0..turns).map(|k| rho[k] * gamma.powi((turns - 1 - k) as i32) as f32 * reward).collect();
            let smoothed: Vec<f32> = if knobs.use_temporal && turns >= 2 {
                (0..turns)
                    .map(|k| {
                        // `(lo, hi)` without `k`: one neighbour at either end, two inside.
                        let neighbours: Vec<f32> = [k.saturating_sub(1), (k + 1).min(turns - 1)]
                            .into_iter()
                            .filter(|&j| j != k)
                            .map(|j| q[j])
                            .collect();
                        let neigh = torch_cpu_sum(&neighbours) / neighbours.len() as f32;
                        (1.0 - alpha) * q[k] + alpha * neigh
                    })
                    .collect()
            } else {
                q
            };
            for (k, p) in range.enumerate() {
                positions.push(p);
                outcome.push(reward);
                q_h.push(smoothed[k]);
                if explain {
                    terms.set_step(p, &[f64::from(rho[k]), f64::from(smoothed[k])]);
                }
            }
            terms.set(t.index(), &[f64::from(reward)]);
        }
        if positions.is_empty() {
            continue;
        }
        let eps = knobs.eps as f32;
        let (macro_term, micro_term) = (group_norm(&outcome, eps), group_norm(&q_h, eps));
        let clip = knobs.adv_clip as f32;
        for (i, &p) in positions.iter().enumerate() {
            let a = macro_term[i] + knobs.omega as f32 * micro_term[i];
            step[p] = if clip > 0.0 { a.clamp(-clip, clip) } else { a };
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}
