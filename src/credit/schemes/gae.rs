//! GAE (`gae`) with logged critic values: verl's version (masked tokens are transparent) and
//! OpenRLHF's (masked values and rewards are zeroed), then batch whitening.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::Preparation;
use crate::credit::engine::whiten::Whiten;
use crate::credit::engine::whiten::{self, Sums};
use crate::credit::engine::whiten::{too_few_positions, whiten_batch};
use crate::credit::kernels::openrlhf::StdNorm;
use crate::credit::kernels::openrlhf::{Shaping, ShapingParam};
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::Run;

choice! {
    enum Holes { Skip = "skip", Zero = "zero" }
}

params! {
    pub struct Knobs {
        gamma: f64 = range(0.0, 1.0, "1", "discount"),
        lam: f64 = range(0.0, 1.0, "1", "GAE λ"),
        holes: Holes = decl("skip", "masked tokens: verl carries value and advantage across them; OpenRLHF zeroes their value and reward"),
        whiten: Whiten = decl("verl", "batch whitening of the advantages"),
        std_norm_param: StdNorm = GROUP,
        shaping_param: ShapingParam = GROUP,
        reward_clip: f64 = range(0.0, 1000.0, "0", "with shaping = openrlhf, clamp the score to ±this (OpenRLHF --reward.clip_range, ±10); 0 = off"),
        common: Common = GROUP,
    }
}

estimator!(
    Gae,
    kernel: kernel,
    info: SchemeInfo {
        id: "gae",
        family: Family::Token,
        display_name: "GAE",
        citation: "Schulman et al. 2016, GAE (arXiv 1506.02438); verl compute_gae_advantage_return; OpenRLHF get_advantages_and_returns",
        needs: "rewards and critic values: token `value`, or per step a `value` score or MC stats",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs); OpenRLHF 0.11.2's own outputs (golden/openrlhf, tests/it/golden_trainers.rs)",
    },
    params: Knobs,
    presets: [
        Preset { name: "verl", values: &[("holes", "skip"), ("whiten", "verl"), ("shaping", "verl"), ("reward_clip", "0"), ("kl_coef", "0")], doc: "verl gae" },
        Preset { name: "openrlhf", values: &[("holes", "zero"), ("whiten", "openrlhf"), ("std_norm", "true"), ("shaping", "openrlhf"), ("reward_clip", "10"), ("kl_coef", "0.01"), ("kl_mode", "k1")], doc: "OpenRLHF gae: the score clamped to ±10 at the last action token, k1 KL (0.01, clamped to ±10) per token, no hole skipping, biased whitening" },
    ],
    supports: supports,
    batch_wide: |knobs| (knobs.whiten != Whiten::None).then_some("whitens the advantages over every valid token of the batch"),
    uses_values: true,
    preparation: |knobs: &Knobs| Preparation {
        openrlhf_shaping: knobs.shaping_param.shaping == Shaping::Openrlhf,
        ..Preparation::of(knobs.common)
    },
);

fn supports(run: &Run) -> Support {
    let token_values = run.tokens.value.is_some();
    let step_values = run.nodes.scores.contains_key("value") || run.nodes.mc_mean.is_some();
    if !token_values && !step_values {
        return Support::No("needs critic values: token `value`, a `value` step score, or MC stats".to_owned());
    }
    crate::credit::engine::inputs::supports_rewards(run)
}

fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    if knobs.shaping_param.shaping == Shaping::Openrlhf {
        // OpenRLHF: compute_reward's per-token rewards, then the same recursion on them.
        let shape = knobs.common.shape(knobs.reward_clip);
        return unshaped(&crate::credit::kernels::openrlhf::shaped(batch, shape), knobs);
    }
    unshaped(batch, knobs)
}

/// GAE on the batch's rewards as they are, whitened.
fn unshaped<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    let Some(values) = batch.values.as_ref() else {
        return Err(CreditError::Unsupported {
            scheme: "gae".to_owned(),
            reason: "needs values at this level".to_owned(),
        });
    };
    let gamma = F::of(knobs.gamma);
    let lam = F::of(knobs.lam);
    let skip = knobs.holes != Holes::Zero;
    let n = batch.num_positions();
    let mut terms = Terms::for_rows(
        "whiten(Σ (γλ)^k δ_{t+k}), δ_t = r_t + γ V_{t+1} − V_t",
        &["V at first token", "return at first token"],
        batch.num_rows(),
    );
    let values: &[F] = values;
    let v_at = |t: usize| match values.get(t) {
        Some(v) if !v.is_nan() => *v,
        _ => F::ZERO,
    };
    // The sums verl's whitening needs, gathered as the advantages are written.
    let gather = knobs.whiten == Whiten::Verl;
    let step = Step { gamma, lam, skip };
    let (mut raw, sums) = match batch.mask {
        Some(_) => recursion::<F, true, false>(batch, values, step, &mut terms),
        None if gamma == F::ONE && lam == F::ONE => recursion::<F, false, true>(batch, values, step, &mut terms),
        None => recursion::<F, false, false>(batch, values, step, &mut terms),
    };
    let sums = gather.then(|| Sums::total(sums.into_iter().flatten()));
    // verl's whitening as (mean, rstd), from the sums gathered in the recursion.
    let scale = match knobs.whiten {
        Whiten::Verl => {
            Some(whiten::verl_scale(&raw, batch.mask.as_deref(), sums).ok_or_else(|| too_few_positions("gae"))?)
        }
        Whiten::Openrlhf | Whiten::None => None,
    };
    let whiten_part = move |part: &mut [F]| {
        if let Some(scale) = scale {
            whiten::scale_part(part, scale);
        }
    };
    // The returns, advantage + value (masked where the advantage was), from the advantages before
    // whitening; with verl's whitening, in the same pass (each part's returns, then its whitened
    // advantages, while the part is in cache), in parts on their own threads (`par`).
    let returns = if batch.skip_returns {
        if scale.is_some() {
            crate::par::chunks_mut(&mut raw, |_, part| whiten_part(part));
        }
        None
    } else {
        let mut returns = F::scratch(n);
        crate::par::chunks_mut2(&mut returns, &mut raw, |start, returns, raw| {
            for (k, (ret, &a)) in returns.iter_mut().zip(raw.iter()).enumerate() {
                let t = start + k;
                *ret = a + if skip { v_at(t) } else { v_at(t) * batch.m(t) };
            }
            whiten_part(raw);
        });
        Some(returns)
    };
    // verl does not re-mask: padded positions keep the whitened value of 0.
    if scale.is_none() {
        whiten_batch(batch, &mut raw, (knobs.whiten, knobs.std_norm_param.std_norm), "gae", None)?;
    }
    Ok(Output { advantages: raw, returns, terms })
}

/// A row's state in the recursion: next value, running advantage, pending row score, sums, and
/// the logged value at the position last visited (the row's first, once done; NaN for no row).
type State<F> = (F, F, F, Sums, F);

/// The recursion's parameters.
#[derive(Clone, Copy)]
struct Step<F> {
    gamma: F,
    lam: F,
    /// verl's holes (masked positions carry the next value and advantage) rather than OpenRLHF's.
    skip: bool,
}

/// The advantages before whitening, each row back to front, four rows at a time, runs of rows on
/// their own threads (`rows_backward_parts`), each row's terms, and each row's sums for verl's
/// whitening (gathered whatever the whitening: a few adds off the chain the rows wait on, cheaper
/// than a test per position of whether they are wanted). A row's state is the next value, the
/// running advantage (the one at the row's first position once done), the pending row score, the
/// sums, and the logged value at the position last visited (the row's first once done: reading it
/// after the walk would fetch a cache line per row). Without a mask (`MASKED` false) a position
/// always counts, and the carries `x·m + (1 − m)·x'` are `x` itself: one multiply and add fewer in
/// the chain each row waits on; with γ = λ = 1 as well (`UNIT`), the multiplies by them too.
fn recursion<F: Real, const MASKED: bool, const UNIT: bool>(
    batch: &Batch<'_, F>,
    values: &[F],
    Step { gamma, lam, skip }: Step<F>,
    terms: &mut Terms,
) -> (Vec<F>, Vec<Vec<Sums>>) {
    let cols = batch.cols();
    let gamma_lam = gamma * lam;
    crate::credit::data::batch::rows_backward_parts(
        // The masked recursion (token batches) walks out of line, the others inlined: each the
        // faster of the two, measured (docs/PERFORMANCE.md, "How the kernels are fast").
        crate::credit::data::batch::Lockstep::<MASKED>,
        batch,
        F::ZERO,
        |i| (F::ZERO, F::ZERO, cols.row_start(i), Sums::default(), F::of(f64::NAN)),
        #[inline(always)]
        move |(next_value, last, pending, sums, value), _, t| {
            let m = if MASKED { cols.m(t) } else { F::ONE };
            *value = values[t];
            let v = if value.is_nan() { F::ZERO } else { *value };
            let r = cols.r(pending, t);
            if UNIT {
                // γ = λ = 1 (the default): 1 · x = x, so the multiplies are left out of the chain.
                let delta = r + *next_value - v;
                *last = delta + *last;
                *next_value = v;
            } else if !MASKED {
                let delta = r + gamma * *next_value - v;
                *last = delta + gamma_lam * *last;
                *next_value = v;
            } else if skip {
                let delta = r + gamma * *next_value - v;
                let gae = delta + gamma_lam * *last;
                *next_value = v * m + (F::ONE - m) * *next_value;
                *last = gae * m + (F::ONE - m) * *last;
            } else {
                let (v, r) = (v * m, r * m);
                let delta = r + gamma * *next_value - v;
                *last = delta + gamma_lam * *last;
                *next_value = v;
            }
            sums.add(*last, m);
            *last
        },
        terms,
        |i, (_, last, _, sums, value): State<F>, terms| {
            // The return at the row's first position: its advantage plus its value (masked when
            // holes are zeroed), as the recursion computed it there.
            let v = if value.is_nan() { F::ZERO } else { value };
            let (first, end) = (batch.offsets[i], batch.offsets[i + 1]);
            let ret =
                if end > first { last + if skip || !MASKED { v } else { v * cols.m(first) } } else { F::of(f64::NAN) };
            terms.set(i, &[value.f64(), ret.f64()]);
            sums
        },
    )
}
