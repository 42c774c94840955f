//! PURE (`pure`): min-form credit. Step rewards are weighted by `softmax(−r/T)` over the
//! trajectory's steps (so their sum approximates the minimum), an RLOO baseline over the group is
//! subtracted, a verifiable reward (solved − 1, RLOO over the group) is added at the last step, the
//! return is the undiscounted reward-to-go, and the returns are normalized over the batch.

use std::sync::LazyLock;

use super::prm_process::{SCORE_PARAM, score_column, supports_scores};
use super::{Credit, CreditError, Family, ParamSpec, Params, Scheme, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::{Run, TrajectoryId};

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

/// Step rewards `r` times their weights, in place: uniform `1/n`, or `softmax(−r/T)` over the
/// trajectory's steps (shifted by its largest exponent; `e^x` in f32, about one ulp). In `f32`
/// (four values to a vector), the normalizer summed in `f64`.
fn weigh(r: &mut [f32], uniform: bool, inverse_t: f32, exp: &mut Vec<f32>) {
    if uniform {
        let w = (1.0 / r.len() as f64) as f32;
        for x in r.iter_mut() {
            *x *= w;
        }
        return;
    }
    // max(−r/T) = −min(r)/T (T > 0), the minimum in four lanes.
    let max = -lane_min(r) * inverse_t;
    exp.clear();
    exp.extend(r.iter().map(|&x| super::common::exp_f32(-x * inverse_t - max)));
    let inverse_z = (1.0 / super::common::lane_sum(exp, f64::from)) as f32;
    for (x, &e) in r.iter_mut().zip(exp.iter()) {
        *x *= e * inverse_z;
    }
}

/// z-scores the finite values of `step` (unbiased std, ε = 1e-8 on the std) from their count, sum
/// and sum of squares, in f32 (one pass that vectorizes); non-finite values stay as they are.
fn normalize_batch(step: &mut [f32], moments: &super::triage::Moments) {
    let Some((n, mean, sum_sq)) = moments.count_mean_sum_sq().filter(|m| m.0 >= 2.0) else { return };
    let std = ((sum_sq - n * mean * mean).max(0.0) / (n - 1.0)).sqrt();
    let (mean, scale) = (mean as f32, (1.0 / (std + 1e-8)) as f32);
    // Parts of the output on their own threads (`par::chunks_mut`).
    // NaN and ±∞ come out as they went in (scale > 0), with no branch per value.
    super::par::chunks_mut(step, move |_, part| {
        for v in part {
            *v = (*v - mean) * scale;
        }
    });
}

/// The smallest value, in four lanes (∞ for none). The values are never `NaN` (a missing score
/// counts 0), so a plain comparison does, which the compiler turns into one vector `min`.
fn lane_min(values: &[f32]) -> f32 {
    let min = |a: f32, b: f32| if b < a { b } else { a };
    let mut lanes = [f32::INFINITY; 4];
    let chunks = values.chunks_exact(4);
    let rest = chunks.remainder().iter().copied().fold(f32::INFINITY, min);
    for chunk in chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane = min(*lane, v);
        }
    }
    lanes.into_iter().fold(rest, min)
}

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
        let inverse_t = (1.0 / params.f64("temperature")) as f32;
        let uniform = params.choice("weighting") == "uniform";
        let score = super::common::path_column(run, column);
        let mut terms = Terms::for_rows(
            "Σ_{j≥k} (w_j r_j − baseline) + VR at the last step, then normalized",
            &["Σ w·r", "baseline", "VR"],
            tr.len(),
        );
        let solved = |t: TrajectoryId| -> f64 {
            match tr.success[t.index()] {
                Some(s) => f64::from(u8::from(s)),
                None => f64::from(u8::from(tr.reward[t.index()] > 0.5)),
            }
        };
        let step_baseline = params.choice("baseline") == "step";
        let verifiable_on = params.bool("verifiable");
        let verifiable_coef = params.f64("verifiable_coef");
        let normalize = params.bool("normalize");
        // Group by group, in buffers that stay in cache: each member's weighted step rewards
        // r' = w·r (softmax-min weights over its steps; a missing score counts 0), the RLOO
        // baselines, then the reward-to-go, four members at a time (`rows_backward`), with the
        // batch moments for the normalization gathered on the way, per group. Runs of consecutive
        // groups on their own threads (`par::by_groups`).
        let (mut step, moments) = super::par::by_groups(run, &mut terms, |groups, step, terms| {
            let (mut weighted, mut local, mut exp, mut rows, mut totals) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
            // Per group: count, sum and sum of squares of its finite credit (summed in group order
            // below, the same whatever the number of threads).
            let mut moments: Vec<super::triage::Moments> = Vec::new();
            for g in groups.map(crate::model::GroupId::from_index) {
                let members = run.groups.members(g);
                let k = members.len() as f64;
                weighted.clear();
                local.clear();
                local.push(0);
                for &t in members {
                    let start = weighted.len();
                    // r = 2p − 1 (or p), a missing score 0: selects, not branches.
                    weighted.extend(score[tr.path_range(t)].iter().map(|&s| {
                        let r = if two_p { 2.0 * s - 1.0 } else { s };
                        if s.is_nan() { 0.0 } else { r }
                    }));
                    weigh(&mut weighted[start..], uniform, inverse_t, &mut exp);
                    local.push(weighted.len());
                }
                // Per rollout: Σ r' (its mean per step is the step baseline's unit) and VR.
                totals.clear();
                totals.extend(
                    (0..members.len()).map(|i| super::common::lane_sum(&weighted[local[i]..local[i + 1]], f64::from)),
                );
                let total = |i: usize| totals[i];
                let per_step = |i: usize| total(i) / (local[i + 1] - local[i]).max(1) as f64;
                let per_step_total: f64 = (0..members.len()).map(per_step).sum();
                let vr_total: f64 = members.iter().map(|&t| solved(t) - 1.0).sum();
                rows.clear();
                rows.extend(members.iter().enumerate().map(|(i, &t)| {
                    let baseline =
                        if step_baseline && k > 1.0 { (per_step_total - per_step(i)) / (k - 1.0) } else { 0.0 };
                    let vr = solved(t) - 1.0;
                    let verifiable = if verifiable_on {
                        let loo = if k > 1.0 { vr - (vr_total - vr) / (k - 1.0) } else { vr };
                        verifiable_coef * loo
                    } else {
                        0.0
                    };
                    terms.set(t.index(), &[total(i), baseline, verifiable]);
                    // Where member i's steps are in the group buffer relative to the output
                    // (wrapping, so that no order of members or paths can overflow it).
                    let range = tr.path_range(t);
                    (range.start.wrapping_sub(local[i]), baseline, verifiable)
                }));
                super::batch::rows_backward(
                    super::batch::INLINED,
                    step,
                    f32::NAN,
                    members.len(),
                    |i| tr.path_range(members[i]),
                    // The running return starts with VR at the last step.
                    |i| rows[i].2,
                    #[inline(always)]
                    |running, i, p| {
                        let (base, baseline, _) = rows[i];
                        *running += f64::from(weighted[p.wrapping_sub(base)]) - baseline;
                        *running as f32
                    },
                    |_, _| {},
                );
                // The batch moments from the group's credit while it is in cache.
                if normalize {
                    let mut group = super::triage::Moments::default();
                    for &t in members {
                        group.add_slice(step.written(tr.path_range(t)));
                    }
                    moments.push(group);
                }
            }
            moments
        });
        super::common::give_path_column(score);
        if normalize {
            let moments = moments.iter().flatten().fold(super::triage::Moments::default(), |all, g| all.merge(g));
            normalize_batch(&mut step, &moments);
        }
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(super::Level::Step) })
    }
}
