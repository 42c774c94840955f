//! PURE (`pure`): min-form credit. Step rewards are weighted by `softmax(−r/T)` over the
//! trajectory's steps (so their sum approximates the minimum), an RLOO baseline over the group is
//! subtracted, a verifiable reward (solved − 1, RLOO over the group) is added at the last step, the
//! return is the undiscounted reward-to-go, and the returns are normalized over the batch.

use crate::credit::engine::inputs::Score;
use crate::credit::engine::inputs::{score_column, supports_scores};
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{Run, TrajectoryId};

scheme!(
    /// PURE.
    Pure,
    knobs: Knobs,
    info: SchemeInfo {
        id: "pure",
        family: Family::Process,
        display_name: "PURE (min-form credit)",
        citation: "Cheng et al. 2025, Stop Summation: Min-Form Credit Assignment Is All Process Reward Model Needs (PURE); CJReinforce/PURE",
        needs: "named step scores (a PRM's P(correct)) and, for the verifiable reward, a success flag or outcome",
        source: SourceQuality::FromCode(
            "CJReinforce/PURE@41f9363b8cc4af044b7fc5f7f9bbbf62139e9553 (per step; the code works per token)",
        ),
        checked: "PURE's own code per token (tests/golden/pure/cases.json, made by its generate.py from PURE 41f9363: both baselines, with and without the verifiable reward, masked separators, weighting and normalization); the worked example of reference/credit-schemes-process.md",
    },
);

choice! {
    enum TransformChoice { TwoPMinusOne = "two_p_minus_one", AsIs = "as_is" }
    enum Weighting { SoftmaxMin = "softmax_min", Uniform = "uniform" }
    enum Baseline { Step = "step", Token = "token", None = "none" }
    enum NormalizeOver { Tokens = "tokens", Steps = "steps" }
}

params! {
    pub struct Knobs {
        score_param: Score = GROUP,
        transform: TransformChoice = decl("two_p_minus_one", "r = P(correct) − P(wrong) = 2p − 1 for a probability, or the score as logged"),
        temperature: f64 = range(0.001, 10.0, "0.1", "T of the softmax-min weights"),
        weighting: Weighting = decl("softmax_min", "min-form weights, or uniform 1/S (disable_weighted_reward)"),
        baseline: Baseline = decl("step", "RLOO over the group: step subtracts the other rollouts' mean per-step reward from each step; token subtracts the others' reward per token times the step's tokens (its separator not counted), as the release script does"),
        verifiable: bool = decl("true", "add the verifiable reward solved − 1 (RLOO over the group) at the last step (PRMVR)"),
        verifiable_coef: f64 = range(0.0, 10.0, "1", "weight of the verifiable reward"),
        normalize: bool = decl("true", "normalize the returns over the batch (mean/std)"),
        normalize_over: NormalizeOver = decl("tokens", "tokens: as the code's replay buffer, over the action tokens (a step's return on each of its tokens; with masked separators only tokens whose return is not 0 counted and a 0 kept, every token in the variance, std √max(var, 1e-8)); a run without tokens counts each step as one token. steps: one value per step, unbiased std + 1e-8"),
        mask_separators: bool = decl("true", "the separator (a step's last token, where its reward sits) has return 0 (off: nomask_separator_adv); tokens only"),
    }
}

/// The group's weighted step rewards `r' = w·r` in `group` (member i's at `local[i]..local[i + 1]`)
/// from their step scores (`score(i)`), and each member's `Σ r'` in `totals`: `r = 2p − 1` (or
/// `p`; a missing score counts 0), weighted uniformly `1/n` or by `softmax(−r/T)` over the
/// member's steps (shifted by its largest exponent; `e^x` in f32, about one ulp). In `f32`, four
/// values to a vector; the softmax normalizer and `Σ r'` in four `f64` lanes (value i in lane
/// i mod 4, the rest after them: [`crate::credit::data::moments::lane_sum`]'s order). The exponents of the whole
/// group are taken together rather than one loop per member (each `exp` is a long chain of
/// dependent operations, and a member's few steps a short loop to overlap them in:
/// [`crate::credit::kernels::exp::exp_f32_in_place`]; docs/PERFORMANCE.md, "How the kernels are
/// fast").
fn weigh_group<'s>(
    group: &mut [f32],
    local: &[usize],
    score: impl Fn(usize) -> &'s [f32],
    transform: Transform,
    exp: &mut Vec<f32>,
    totals: &mut Vec<f64>,
) {
    let members = local.len().saturating_sub(1);
    let member = |i: usize| local[i]..local[i + 1];
    totals.clear();
    exp.clear();
    for i in 0..members {
        let out = &mut group[member(i)];
        let least = rewards_and_min(out, score(i), transform.two_p);
        if transform.uniform {
            let w = (1.0 / out.len() as f64) as f32;
            for x in out.iter_mut() {
                *x *= w;
            }
            totals.push(crate::credit::data::moments::lane_sum(out, f64::from));
        } else {
            // The exponents' arguments, −r/T − max(−r/T), with max(−r/T) = −min(r)/T (T > 0).
            let (inverse_t, max) = (transform.inverse_t, -least * transform.inverse_t);
            exp.extend(out.iter().map(|&x| -x * inverse_t - max));
        }
    }
    if transform.uniform {
        return;
    }
    crate::credit::kernels::exp::exp_f32_in_place(exp);
    for i in 0..members {
        let exp = &exp[member(i)];
        let inverse_z = (1.0 / crate::credit::data::moments::lane_sum(exp, f64::from)) as f32;
        totals.push(weigh_and_sum(&mut group[member(i)], exp, inverse_z));
    }
}

/// One member's step rewards into `out` from its step scores (`r = 2p − 1`, or `p`; a missing
/// score counts 0), and their minimum, in four lanes: `r` is never `NaN`, so a plain comparison
/// does, which the compiler turns into one vector `min`.
fn rewards_and_min(out: &mut [f32], score: &[f32], two_p: bool) -> f32 {
    let reward = |s: f32| {
        // Selects, not branches.
        let r = if two_p { 2.0 * s - 1.0 } else { s };
        if s.is_nan() { 0.0 } else { r }
    };
    let min = |a: f32, b: f32| if b < a { b } else { a };
    let mut lanes = [f32::INFINITY; 4];
    let mut out_chunks = out.chunks_exact_mut(4);
    let mut score_chunks = score.chunks_exact(4);
    for (o, s) in (&mut out_chunks).zip(&mut score_chunks) {
        for l in 0..4 {
            o[l] = reward(s[l]);
            lanes[l] = min(lanes[l], o[l]);
        }
    }
    let mut least = f32::INFINITY;
    for (o, &s) in out_chunks.into_remainder().iter_mut().zip(score_chunks.remainder()) {
        *o = reward(s);
        least = min(least, *o);
    }
    lanes.into_iter().fold(least, min)
}

/// Multiplies each of `values` by its weight, `exp[i] · inverse_z`, in place and returns the sum of
/// the products in four `f64` lanes ([`crate::credit::data::moments::lane_sum`]'s order).
fn weigh_and_sum(values: &mut [f32], exp: &[f32], inverse_z: f32) -> f64 {
    let mut sums = [0.0f64; 4];
    let mut chunks = values.chunks_exact_mut(4);
    let mut exp_chunks = exp.chunks_exact(4);
    for (chunk, e) in (&mut chunks).zip(&mut exp_chunks) {
        for l in 0..4 {
            chunk[l] *= e[l] * inverse_z;
            sums[l] += f64::from(chunk[l]);
        }
    }
    let rest: f64 = chunks
        .into_remainder()
        .iter_mut()
        .zip(exp_chunks.remainder())
        .map(|(x, &e)| {
            *x *= e * inverse_z;
            f64::from(*x)
        })
        .sum();
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + rest
}

/// The per-step reward's transform and weighting.
#[derive(Clone, Copy)]
struct Transform {
    two_p: bool,
    uniform: bool,
    inverse_t: f32,
}

/// Each member's returns in place: `members` holds the members' weighted step rewards one after
/// another (member i's at `local[i]..local[i + 1]`), and each becomes
/// `init(i) + Σ_{j ≥ k} (r'_j − baseline(i))`, summed in `f64` from the member's last step to its
/// first and rounded once per step. Four members at a time in lockstep over the steps they all
/// have (four independent chains of adds instead of one), then the rest of each; each member sees
/// its steps in the same order as a plain backward loop. The lockstep of
/// [`crate::credit::data::batch::rows_backward`], over slices: that walk writes an output it cannot read, and
/// here each step's value is read where its return is written.
fn returns_in_place(
    members: &mut [f32],
    local: &[usize],
    init: impl Fn(usize) -> f64,
    baseline: impl Fn(usize) -> f64,
) {
    let step = |running: &mut f64, x: &mut f32, baseline: f64| {
        *running += f64::from(*x) - baseline;
        *x = *running as f32;
    };
    let mut rest = members;
    let count = local.len().saturating_sub(1);
    let mut i = 0;
    while i < count {
        let lanes = 4.min(count - i);
        let mut rows: [&mut [f32]; 4] = Default::default();
        for (l, row) in rows.iter_mut().enumerate().take(lanes) {
            let (here, after) = std::mem::take(&mut rest).split_at_mut(local[i + l + 1] - local[i + l]);
            *row = here;
            rest = after;
        }
        let mut running: [f64; 4] = std::array::from_fn(|l| if l < lanes { init(i + l) } else { 0.0 });
        let base: [f64; 4] = std::array::from_fn(|l| if l < lanes { baseline(i + l) } else { 0.0 });
        let [r0, r1, r2, r3] = rows;
        let common = if lanes == 4 { r0.len().min(r1.len()).min(r2.len()).min(r3.len()) } else { 0 };
        let (h0, t0) = r0.split_at_mut(r0.len() - common);
        let (h1, t1) = r1.split_at_mut(r1.len() - common);
        let (h2, t2) = r2.split_at_mut(r2.len() - common);
        let (h3, t3) = r3.split_at_mut(r3.len() - common);
        let [mut s0, mut s1, mut s2, mut s3] = running;
        for (((x0, x1), x2), x3) in
            t0.iter_mut().rev().zip(t1.iter_mut().rev()).zip(t2.iter_mut().rev()).zip(t3.iter_mut().rev())
        {
            step(&mut s0, x0, base[0]);
            step(&mut s1, x1, base[1]);
            step(&mut s2, x2, base[2]);
            step(&mut s3, x3, base[3]);
        }
        running = [s0, s1, s2, s3];
        for (l, head) in [h0, h1, h2, h3].into_iter().enumerate().take(lanes) {
            for x in head.iter_mut().rev() {
                step(&mut running[l], x, base[l]);
            }
        }
        i += lanes;
    }
}

/// For `compute_explained` (`explain`): each member's values in `group` (member i's at
/// `local[i]..local[i + 1]`) as step value `column` of its path steps, the other column kept.
fn keep_steps(
    explain: bool,
    terms: &mut crate::credit::data::parts::TermRows<'_>,
    run: &Run,
    members: &[TrajectoryId],
    local: &[usize],
    group: &[f32],
    column: usize,
) {
    if !explain {
        return;
    }
    for (i, &t) in members.iter().enumerate() {
        for (p, &v) in run.trajectories.path_range(t).zip(&group[local[i]..local[i + 1]]) {
            let mut own = terms.step(p);
            own[column] = f64::from(v);
            terms.set_step(p, &own);
        }
    }
}

/// z-scores the finite values of `step` (unbiased std, ε = 1e-8 on the std) from their count, sum
/// and sum of squares, in f32 (one pass that vectorizes); non-finite values stay as they are.
fn normalize_batch(step: &mut [f32], moments: &crate::credit::data::moments::Moments) -> Option<(f64, f64)> {
    let (n, mean, sum_sq) = moments.count_mean_sum_sq().filter(|m| m.0 >= 2.0)?;
    let std = ((sum_sq - n * mean * mean).max(0.0) / (n - 1.0)).sqrt();
    let (mean, scale) = (mean as f32, (1.0 / (std + 1e-8)) as f32);
    // Parts of the output on their own threads (`par::chunks_mut`).
    // NaN and ±∞ come out as they went in (scale > 0), with no branch per value.
    crate::par::chunks_mut(step, move |_, part| {
        for v in part {
            *v = (*v - mean) * scale;
        }
    });
    Some((f64::from(mean), 1.0 / f64::from(scale)))
}

/// PURE's token baseline, subtracted from each member's weighted step rewards in `group` (member
/// i's at `local[i]..local[i + 1]`, its path steps `path(i)`, its `Σ r'` in `totals[i]`): the other
/// members' reward per token, `Σ_{j≠i} Σ r'_j / Σ_{j≠i} T_j`, times the step's tokens less its
/// separator (`tokens` per path step; without tokens each step is one token and has none).
fn subtract_token_baseline(
    group: &mut [f32],
    local: &[usize],
    path: impl Fn(usize) -> std::ops::Range<usize>,
    tokens: Option<&[f32]>,
    totals: &[f64],
) {
    let members = local.len().saturating_sub(1);
    let count = |i: usize| -> Vec<f64> {
        match tokens {
            Some(w) => w[path(i)].iter().map(|&n| f64::from(n)).collect(),
            None => vec![1.0; path(i).len()],
        }
    };
    let lengths: Vec<f64> = (0..members).map(|i| count(i).iter().sum()).collect();
    let (all_reward, all_tokens): (f64, f64) = (totals.iter().sum(), lengths.iter().sum());
    let separator = if tokens.is_some() { 1.0 } else { 0.0 };
    for i in 0..members {
        let others = all_tokens - lengths[i];
        let rate = if others > 0.0 { (all_reward - totals[i]) / others } else { 0.0 };
        for (x, n) in group[local[i]..local[i + 1]].iter_mut().zip(count(i)) {
            *x -= ((n - separator).max(0.0) * rate) as f32;
        }
    }
}

/// The code's normalization over the replay buffer's action tokens, done on steps: step k's return
/// is on each of its policy tokens (`tokens[k]`; one per step without tokens) but its separator,
/// which holds 0 when `mask_separators`. The mean and the variance are divided by the number of
/// tokens whose return is not 0 (every action token when the separators are not masked); the
/// variance sums over every token (separators and zero returns as (0 − mean)²); the std is
/// √max(var, 1e-8). A step whose return is exactly 0 keeps 0 when the separators are masked, as
/// the code's buffer keeps every token it took for a separator. Steps without a value stay so.
fn normalize_over_tokens(step: &mut [f32], tokens: Option<&[f32]>, mask_separators: bool) -> Option<(f64, f64)> {
    let share = |k: usize| -> (f64, f64) {
        match tokens {
            Some(w) if mask_separators => ((f64::from(w[k]) - 1.0).max(0.0), f64::from(w[k].min(1.0))),
            Some(w) => (f64::from(w[k]), 0.0),
            None => (1.0, 0.0),
        }
    };
    // With the separators masked, every token whose return is exactly 0 is taken for one: left
    // out of the count and left at 0 (the buffer's `advantages == 0` mask); unmasked, every
    // action token counts and is normalized.
    let skipped = |v: f32| mask_separators && v == 0.0;
    let (mut count, mut sum) = (0.0f64, 0.0f64);
    for (k, &v) in step.iter().enumerate() {
        if v.is_finite() && !skipped(v) {
            let (carrying, _) = share(k);
            count += carrying;
            sum += carrying * f64::from(v);
        }
    }
    if count == 0.0 {
        return None;
    }
    let mean = sum / count;
    let mut sq = 0.0f64;
    for (k, &v) in step.iter().enumerate() {
        if v.is_finite() {
            let (carrying, separators) = share(k);
            sq += carrying * (f64::from(v) - mean).powi(2) + separators * mean * mean;
        }
    }
    let std = (sq / count).max(1e-8).sqrt();
    for v in step.iter_mut().filter(|v| v.is_finite() && !skipped(**v)) {
        *v = ((f64::from(*v) - mean) / std) as f32;
    }
    Some((mean, std))
}

impl Typed for Pure {
    fn batch_wide(&self, knobs: &Knobs) -> Option<&'static str> {
        knobs.normalize.then_some("normalizes the returns over the batch")
    }

    fn supports(&self, run: &Run) -> Support {
        if let Support::No(reason) = supports_scores(run) {
            return Support::No(reason);
        }
        Support::Yes
    }
    fn credit(&self, run: &Run, knobs: &Knobs, explain: bool) -> Result<Credit, CreditError> {
        credit(run, knobs, explain)
    }
}

/// The credit `compute` gives; with `explain`, also each step's weighted reward and return
/// (`compute_explained`).
#[expect(
    clippy::too_many_lines,
    reason = "one pass per group while its buffers are in cache: weights, baselines, returns, moments, in order"
)]
fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Result<Credit, CreditError> {
    let column = score_column(run, knobs.score_param.score, "pure")?;
    let tr = &run.trajectories;
    let two_p = knobs.transform == TransformChoice::TwoPMinusOne;
    let inverse_t = (1.0 / knobs.temperature) as f32;
    let uniform = knobs.weighting == Weighting::Uniform;
    let score = crate::credit::engine::inputs::path_column(run, column);
    // With `explain`, each step's x = w·r (less its token baseline) and its return G; the
    // normalization's mean and denominator in every row (0 and 1 when not normalized).
    let mut terms = Terms::for_rows(
        "(G − batch mean) / batch denominator, G_k = x_k − baseline + G_(k+1), G after the last step = VR",
        &["Σ w·r", "baseline", "VR", "batch mean", "batch denominator"],
        tr.len(),
    )
    .with_step_values(&["x", "G"], if explain { tr.path_nodes.len() } else { 0 });
    let solved = |t: TrajectoryId| -> f64 {
        match tr.success[t.index()] {
            Some(s) => f64::from(u8::from(s)),
            None => f64::from(u8::from(tr.reward[t.index()] > 0.5)),
        }
    };
    let step_baseline = knobs.baseline == Baseline::Step;
    let token_baseline = knobs.baseline == Baseline::Token;
    let over_tokens = knobs.normalize_over == NormalizeOver::Tokens;
    // Policy tokens of each path step, when the run logs tokens.
    let token_counts = crate::credit::engine::inputs::step_token_weights(run);
    let step_tokens = token_counts.as_deref();
    let transform = Transform { two_p, uniform, inverse_t };
    // Group by group, in cache: each member's weighted step rewards r' = w·r (softmax-min
    // weights over its steps; a missing score counts 0), the RLOO baselines, then the
    // reward-to-go in place, four members at a time (`returns_in_place`), with the batch
    // moments for the normalization gathered on the way, per group. A group whose members'
    // steps follow each other in the output is computed where it is written; any other in a
    // buffer of its own, then copied. Runs of consecutive groups on their own threads
    // (`par::by_groups`).
    let (mut step, moments) = crate::credit::engine::par::by_groups(run, &mut terms, |groups, step, terms| {
        let (mut buffer, mut local, mut exp, mut rows, mut totals) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        // Per group: count, sum and sum of squares of its finite credit (summed in group order
        // below, the same whatever the number of threads).
        let mut moments: Vec<crate::credit::data::moments::Moments> = Vec::new();
        for g in groups.map(crate::model::GroupId::from_index) {
            let members = run.groups.members(g);
            if members.is_empty() {
                continue;
            }
            let k = members.len() as f64;
            // Where each member's steps are in the group's values, and whether they follow each
            // other in the output as they do there.
            local.clear();
            local.push(0);
            let first = tr.path_range(members[0]).start;
            let mut in_place = true;
            for &t in members {
                let range = tr.path_range(t);
                let end = local[local.len() - 1];
                in_place &= range.start == first + end;
                local.push(end + range.len());
            }
            let len = local[local.len() - 1];
            let group: &mut [f32] = if in_place {
                step.slots(first..first + len)
            } else {
                buffer.clear();
                buffer.resize(len, 0.0);
                &mut buffer
            };
            weigh_group(group, &local, |i| &score[tr.path_range(members[i])], transform, &mut exp, &mut totals);
            // Per rollout: Σ r', its mean per step (the step baseline's unit), the baseline and VR.
            let per_step = |i: usize| totals[i] / (local[i + 1] - local[i]).max(1) as f64;
            let per_step_total: f64 = (0..members.len()).map(per_step).sum();
            let vr_total: f64 = members.iter().map(|&t| solved(t) - 1.0).sum();
            rows.clear();
            rows.extend(members.iter().enumerate().map(|(i, &t)| {
                let baseline = if step_baseline && k > 1.0 { (per_step_total - per_step(i)) / (k - 1.0) } else { 0.0 };
                let vr = solved(t) - 1.0;
                let verifiable = if knobs.verifiable {
                    let loo = if k > 1.0 { vr - (vr_total - vr) / (k - 1.0) } else { vr };
                    knobs.verifiable_coef * loo
                } else {
                    0.0
                };
                terms.set(t.index(), &[totals[i], baseline, verifiable, 0.0, 1.0]);
                (baseline, verifiable)
            }));
            // The token baseline: each step less its tokens (separator not counted) times the
            // other rollouts' reward per token.
            if token_baseline && k > 1.0 {
                subtract_token_baseline(group, &local, |i| tr.path_range(members[i]), step_tokens, &totals);
            }
            // The running return starts with VR at the last step.
            keep_steps(explain, terms, run, members, &local, group, 0);
            returns_in_place(group, &local, |i| rows[i].1, |i| rows[i].0);
            keep_steps(explain, terms, run, members, &local, group, 1);
            // The batch moments from the group's credit while it is in cache.
            if knobs.normalize && !over_tokens {
                let mut moments_here = crate::credit::data::moments::Moments::default();
                moments_here.add_slice(group);
                moments.push(moments_here);
            }
            if !in_place {
                for (i, &t) in members.iter().enumerate() {
                    step.slots(tr.path_range(t)).copy_from_slice(&buffer[local[i]..local[i + 1]]);
                }
            }
        }
        moments
    });
    crate::credit::engine::inputs::give_path_column(score);
    let normalized = if knobs.normalize && over_tokens {
        normalize_over_tokens(&mut step, step_tokens, knobs.mask_separators)
    } else if knobs.normalize {
        let moments =
            moments.iter().flatten().fold(crate::credit::data::moments::Moments::default(), |all, g| all.merge(g));
        normalize_batch(&mut step, &moments)
    } else {
        None
    };
    if let Some((mean, denominator)) = normalized {
        terms.fill("batch mean", mean);
        terms.fill("batch denominator", denominator);
    }
    Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
}
