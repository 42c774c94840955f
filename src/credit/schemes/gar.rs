//! GAR, groupwise advantage redistribution (`gar`, MiMo-V2.6 §4.3.2), as prime-rl scores it
//! from a grader's verdict on a group. The verdicts are read from the log: prime-rl writes each
//! graded trace's record to `trace.info["gar"]`, which the verifiers importer makes the labels
//! `gar_hack` (the grader's `confirmed` or `suspected`), `gar_tier` (the trace's tier in the
//! ranking, 0 best), `gar_lambda` (a verdict was applied) and `gar_fallback` (why a group kept
//! plain GRPO); a person may add or take off such labels and see the credit follow.
//!
//! In a graded group with rewards not all equal: the candidates are the episodes (one trace each in
//! GAR's coding tasks; an episode's first trace stands for it), `passed` those above the mean of
//! the candidates' rewards. A confirmed hack's reward drops to the group's minimum; the passed
//! candidates that are not confirmed hacks are ranked by their tiers into win rates (a lower tier
//! counts 1, a tie ½; a lone candidate 1), and each candidate's quality is
//! `f = f_min + (1 − f_min)·w` (`w` = ½ for a candidate the ranking leaves out). Then Eq. 3:
//! `A = R − mean(R)`; each rollout above the mean gets `λ·f·A` with `λ = Σ_P A / Σ_P f·A` capped at
//! `lambda_max`; the group is re-centred to zero mean. A group without a verdict (a fallback, or no
//! GAR record) and a group of equal rewards get prime-rl's GRPO: `r − mean` with torch's float32
//! mean. A tree record counts once. The verdict's arithmetic is in Python floats (f64), rounded once.

use crate::credit::data::moments::torch_cpu_sum;
use crate::credit::engine::inputs::{fill_steps, group_traces, supports_outcomes, trajectory_episode};
use crate::credit::kernels::gar::{redistribute, win_rates};
use crate::credit::params::declare::{params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, Preset, SchemeInfo, SourceQuality, Terms};
use crate::model::labels::{Named, Value};
use crate::model::{Run, TrajectoryId};

scheme!(
    /// GAR's groupwise advantage redistribution.
    Gar,
    knobs: Knobs,
    info: SchemeInfo {
        id: "gar",
        family: Family::Outcome,
        display_name: "GAR (groupwise advantage redistribution)",
        citation: "GAR, MiMo-V2.6 §4.3.2 (Eq. 3): a grader ranks the rollouts above the group mean and confirmed hacks drop to the group's minimum; A = R − mean, P rescaled by λ·f, re-centred; prime-rl GARAlgorithm",
        needs: "outcome rewards and GAR's verdicts (prime-rl's trace.info.gar: labels gar_hack, gar_tier, gar_lambda, gar_fallback); groups without a verdict get GRPO",
        source: SourceQuality::FromCode(
            "PrimeIntellect-ai/prime-rl@1366638ea57cc6889d43a276ca1659b4707c25ac src/prime_rl/orchestrator/algo/gar.py (win_rates, redistribute, GARAlgorithm.grade_group, apply); the fallback: src/prime_rl/orchestrator/algo/grpo.py GRPOAlgorithm.score_group (559b4477). GARAlgoConfig's defaults for f_min and lambda_max are not in the files read: the defaults here are vantage's",
        ),
        checked: "prime-rl's own GARAlgorithm.apply, win_rates and redistribute (1366638e) run on graded groups (a confirmed hack, a suspected one, ties in the ranking, the λ cap binding, all passes hacked, groups of 2 to 16, several traces to an episode), their info.gar records loaded through the verifiers importer (tests/golden/prime_grouped, tests/it/trainers_2026.rs), within 1e-6 (prime-rl's Python floats keep the log's doubles, vantage the float32 of each reward)",
    },
    presets: [Preset {
        name: "prime_rl",
        values: &[("f_min", "0.5"), ("lambda_max", "2")],
        doc: "prime-rl GARAlgorithm's redistribution with f_min = 0.5 and lambda_max = 2 (vantage's choice: GARAlgoConfig's defaults are not in the files read; λ ≤ 1/f_min, so this cap never binds)",
    }],
    supports: supports_outcomes,
    credit: credit,
);

params! {
    pub struct Knobs {
        f_min: f64 = range(0.0, 1.0, "0.5", "the quality of the lowest-ranked pass: f = f_min + (1 − f_min)·w (prime-rl's f_min)"),
        lambda_max: f64 = range(0.0, 100.0, "2", "the cap on λ = Σ_P A / Σ_P f·A (prime-rl's lambda_max)"),
    }
}

/// The GAR labels a verdict is read from.
struct Verdicts<'a> {
    hack: Option<&'a Named>,
    tier: Option<&'a Named>,
    lambda: Option<&'a Named>,
    fallback: Option<&'a Named>,
}

impl Verdicts<'_> {
    fn confirmed(&self, t: TrajectoryId) -> bool {
        self.hack.and_then(|n| n.trajectories.get(&t)).is_some_and(|v| *v == Value::Word("confirmed".to_owned()))
    }
    fn tier(&self, t: TrajectoryId) -> Option<f64> {
        self.tier.and_then(|n| n.trajectories.get(&t)).map(Value::number).filter(|v| v.is_finite())
    }
    fn has(named: Option<&Named>, t: TrajectoryId) -> bool {
        named.is_some_and(|n| n.trajectories.contains_key(&t))
    }
}

fn credit(run: &Run, knobs: &Knobs, _explain: bool) -> Credit {
    let labels = &run.meta.labels;
    let verdicts = Verdicts {
        hack: labels.named("gar_hack"),
        tier: labels.named("gar_tier"),
        lambda: labels.named("gar_lambda"),
        fallback: labels.named("gar_fallback"),
    };
    let tr = &run.trajectories;
    let mut step = vec![f32::NAN; tr.path_nodes.len()];
    let mut terms = Terms::for_rows(
        "graded: A = R − mean, P (A > 0) × λ·f, re-centred (R: a confirmed hack at the group's minimum); else r − mean",
        &["r", "R", "f", "λ"],
        tr.len(),
    );
    for g in run.groups.ids() {
        let traces = group_traces(run, g);
        let rewards: Vec<f64> = traces.iter().map(|t| f64::from(tr.reward[t[0].index()])).collect();
        // The candidates: one per episode, its first trace standing for it.
        let mut episodes: Vec<&str> = Vec::new();
        let mut candidate_of = Vec::with_capacity(traces.len());
        let mut first: Vec<usize> = Vec::new();
        for (i, trace) in traces.iter().enumerate() {
            let episode = trajectory_episode(run, trace[0]);
            let c = episodes.iter().position(|e| *e == episode).unwrap_or_else(|| {
                episodes.push(episode);
                first.push(i);
                episodes.len() - 1
            });
            candidate_of.push(c);
        }
        let candidate_rewards: Vec<f64> = first.iter().map(|&i| rewards[i]).collect();
        let mixed = candidate_rewards.iter().any(|r| *r != candidate_rewards[0]);
        let graded = traces.iter().any(|t| Verdicts::has(verdicts.lambda, t[0]))
            && !traces.iter().any(|t| Verdicts::has(verdicts.fallback, t[0]));
        if !(mixed && graded) {
            // prime-rl's GRPO: `rewards - rewards.mean()` in float32.
            let rewards32: Vec<f32> = traces.iter().map(|t| tr.reward[t[0].index()]).collect();
            let mean = torch_cpu_sum(&rewards32) / rewards32.len().max(1) as f32;
            for (trace, &r) in traces.iter().zip(&rewards32) {
                fill_steps(&mut step, run, trace, f64::from(r - mean));
                for t in trace {
                    terms.set(t.index(), &[f64::from(r), f64::from(r), f64::NAN, f64::NAN]);
                }
            }
            continue;
        }
        let mean = candidate_rewards.iter().fold(0.0, |s, r| s + r) / candidate_rewards.len() as f64;
        let confirmed: Vec<bool> = first.iter().map(|&i| verdicts.confirmed(traces[i][0])).collect();
        let ranked: Vec<(usize, f64)> = (0..first.len())
            .filter(|&c| candidate_rewards[c] > mean && !confirmed[c])
            .filter_map(|c| verdicts.tier(traces[first[c]][0]).map(|tier| (c, tier)))
            .collect();
        let rates = win_rates(&ranked);
        let quality: Vec<f64> = (0..first.len())
            .map(|c| {
                let w = rates.iter().find(|(r, _)| *r == c).map_or(0.5, |&(_, w)| w);
                knobs.f_min + (1.0 - knobs.f_min) * w
            })
            .collect();
        let floor = rewards.iter().copied().fold(f64::INFINITY, f64::min);
        let used: Vec<f64> =
            (0..traces.len()).map(|i| if confirmed[candidate_of[i]] { floor } else { rewards[i] }).collect();
        let trace_quality: Vec<f64> = candidate_of.iter().map(|&c| quality[c]).collect();
        let (advantages, lambda) = redistribute(&used, &trace_quality, knobs.lambda_max);
        for (i, trace) in traces.iter().enumerate() {
            fill_steps(&mut step, run, trace, advantages[i]);
            for t in trace {
                terms.set(t.index(), &[rewards[i], used[i], trace_quality[i], lambda]);
            }
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}
