//! PURE (`pure`): min-form credit. Step rewards are weighted by `softmax(−r/T)` over the
//! trajectory's steps (so their sum approximates the minimum), an RLOO baseline over the group is
//! subtracted, a verifiable reward (solved − 1, RLOO over the group) is added at the last step, the
//! return is the undiscounted reward-to-go, and the returns are normalized over the batch.

use std::sync::LazyLock;

use super::prm_process::{SCORE_PARAM, score_column, supports_scores};
use super::{Credit, CreditError, Family, ParamSpec, Params, Scheme, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::Run;

/// PURE.
pub struct Pure;

static INFO: SchemeInfo = SchemeInfo {
    id: "pure",
    family: Family::Process,
    display_name: "PURE (min-form credit)",
    citation: "Cheng et al. 2025, Stop Summation: Min-Form Credit Assignment Is All Process Reward Model Needs (PURE); CJReinforce/PURE",
    needs: "named step scores (a PRM's P(correct)) and, for the verifiable reward, a success flag or outcome",
    source: SourceQuality::FromCode(
        "CJReinforce/PURE@41f9363b8cc4af044b7fc5f7f9bbbf62139e9553 (per step; the code works per token)",
    ),
};

static PARAMS: LazyLock<Vec<ParamSpec>> = LazyLock::new(|| {
    vec![
        SCORE_PARAM,
        ParamSpec::choice(
            "transform",
            &["two_p_minus_one", "as_is"],
            "two_p_minus_one",
            "r = P(correct) − P(wrong) = 2p − 1 for a probability, or the score as logged",
        ),
        ParamSpec::float("temperature", 0.001, 10.0, "0.1", "T of the softmax-min weights"),
        ParamSpec::choice(
            "weighting",
            &["softmax_min", "uniform"],
            "softmax_min",
            "min-form weights, or uniform 1/S (disable_weighted_reward)",
        ),
        ParamSpec::choice(
            "baseline",
            &["step", "none"],
            "step",
            "subtract the mean per-step reward of the other rollouts of the group (RLOO)",
        ),
        ParamSpec::bool(
            "verifiable",
            "true",
            "add the verifiable reward solved − 1 (RLOO over the group) at the last step (PRMVR)",
        ),
        ParamSpec::float("verifiable_coef", 0.0, 10.0, "1", "weight of the verifiable reward"),
        ParamSpec::bool("normalize", "true", "normalize the returns over all steps of the batch (mean/std)"),
    ]
});

impl Scheme for Pure {
    fn info(&self) -> &SchemeInfo {
        &INFO
    }
    fn params(&self) -> &[ParamSpec] {
        &PARAMS
    }
    fn supports(&self, run: &Run) -> Support {
        if let Support::No(reason) = supports_scores(run) {
            return Support::No(reason);
        }
        Support::Yes
    }
    fn compute(&self, run: &Run, params: &Params) -> Result<Credit, CreditError> {
        let column = score_column(run, params, "pure")?;
        let tr = &run.trajectories;
        let two_p = params.choice("transform") == "two_p_minus_one";
        let temperature = params.f64("temperature");
        let uniform = params.choice("weighting") == "uniform";
        // Weighted step rewards r' per path position (a missing score counts 0).
        let mut weighted = vec![0.0f64; tr.path_nodes.len()];
        let (mut r, mut exp) = (Vec::new(), Vec::new());
        for t in tr.ids() {
            let range = tr.path_range(t);
            r.clear();
            r.extend(range.clone().map(|k| {
                let s = f64::from(column[tr.path_nodes[k].index()]);
                if s.is_nan() {
                    0.0
                } else if two_p {
                    2.0 * s - 1.0
                } else {
                    s
                }
            }));
            let max = r.iter().map(|x| -x / temperature).fold(f64::NEG_INFINITY, f64::max);
            exp.clear();
            exp.extend(r.iter().map(|x| (-x / temperature - max).exp()));
            let z: f64 = exp.iter().sum();
            for (i, k) in range.enumerate() {
                let w = if uniform { 1.0 / r.len() as f64 } else { exp[i] / z };
                weighted[k] = w * r[i];
            }
        }
        let mut step = super::pool::filled(tr.path_nodes.len(), f32::NAN);
        let mut terms = Terms::for_rows(
            "Σ_{j≥k} (w_j r_j − baseline) + VR at the last step, then normalized",
            &["Σ w·r", "baseline", "VR"],
            tr.len(),
        );
        let solved = |t: crate::model::TrajectoryId| -> f64 {
            match tr.success[t.index()] {
                Some(s) => f64::from(u8::from(s)),
                None => f64::from(u8::from(tr.reward[t.index()] > 0.5)),
            }
        };
        let step_baseline = params.choice("baseline") == "step";
        let verifiable_on = params.bool("verifiable");
        let verifiable_coef = params.f64("verifiable_coef");
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            let k = members.len() as f64;
            // Per rollout: mean weighted reward per step (the step baseline's unit) and VR.
            let per_step: Vec<f64> = members
                .iter()
                .map(|t| {
                    let range = tr.path_range(*t);
                    let n = range.len().max(1) as f64;
                    weighted[range].iter().sum::<f64>() / n
                })
                .collect();
            let vr: Vec<f64> = members.iter().map(|&t| solved(t) - 1.0).collect();
            let (per_step_total, vr_total): (f64, f64) = (per_step.iter().sum(), vr.iter().sum());
            for (i, &t) in members.iter().enumerate() {
                let baseline = if step_baseline && k > 1.0 { (per_step_total - per_step[i]) / (k - 1.0) } else { 0.0 };
                let verifiable = if verifiable_on {
                    let loo = if k > 1.0 { vr[i] - (vr_total - vr[i]) / (k - 1.0) } else { vr[i] };
                    verifiable_coef * loo
                } else {
                    0.0
                };
                let range = tr.path_range(t);
                let last = range.end.saturating_sub(1);
                let mut running = 0.0;
                for k in range.clone().rev() {
                    running += weighted[k] - baseline + if k == last { verifiable } else { 0.0 };
                    step[k] = running as f32;
                }
                terms.set(t.index(), &[weighted[range].iter().sum::<f64>(), baseline, verifiable]);
            }
        }
        if params.bool("normalize") {
            let finite = || step.iter().filter(|v| v.is_finite()).map(|&v| f64::from(v));
            let count = finite().count();
            if count >= 2 {
                let mean = finite().sum::<f64>() / count as f64;
                let std = (finite().map(|v| (v - mean).powi(2)).sum::<f64>() / (count as f64 - 1.0)).sqrt();
                for v in step.iter_mut().filter(|v| v.is_finite()) {
                    *v = ((f64::from(*v) - mean) / (std + 1e-8)) as f32;
                }
            }
        }
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(super::Level::Step) })
    }
}
