//! GAE (`gae`) with logged critic values: verl's version (masked tokens are transparent) and
//! OpenRLHF's (masked values and rewards are zeroed), then batch whitening.

use super::batch::{Batch, Output};
use super::real::Real;
use super::reinforce_plus_plus::whiten_batch;
use super::scheme_macro::estimator;
use super::{CreditError, Family, ParamSpec, Params, Preset, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::Run;

estimator!(
    Gae,
    kernel: kernel,
    info: SchemeInfo {
        id: "gae",
        family: Family::Token,
        display_name: "GAE",
        citation: "Schulman et al. 2016, GAE (arXiv 1506.02438); verl compute_gae_advantage_return; OpenRLHF get_advantages_and_returns",
        needs: "rewards and critic values: token `value`, or per step a `value` score or MC stats",
        source: SourceQuality::FromCode(super::VERL_AT),
    },
    params: [
        ParamSpec::float("gamma", 0.0, 1.0, "1", "discount"),
        ParamSpec::float("lam", 0.0, 1.0, "1", "GAE λ"),
        ParamSpec::choice("holes", &["skip", "zero"], "skip", "masked tokens: verl carries value and advantage across them; OpenRLHF zeroes their value and reward"),
        ParamSpec::choice("whiten", &["verl", "openrlhf", "none"], "verl", "batch whitening of the advantages"),
    ],
    presets: [
        Preset { name: "verl", values: &[("holes", "skip"), ("whiten", "verl"), ("kl_coef", "0")], doc: "verl gae" },
        Preset { name: "openrlhf", values: &[("holes", "zero"), ("whiten", "openrlhf"), ("kl_coef", "0.01"), ("kl_mode", "k1")], doc: "OpenRLHF gae: k1 KL (0.01) per token, no hole skipping, biased whitening" },
    ],
    supports: supports,
    uses_values: true
);

fn supports(run: &Run) -> Support {
    let token_values = run.tokens.value.is_some();
    let step_values = run.nodes.scores.contains_key("value") || run.nodes.mc_mean.is_some();
    if !token_values && !step_values {
        return Support::No("needs critic values: token `value`, a `value` step score, or MC stats".to_owned());
    }
    super::common::supports_rewards(run)
}

fn kernel<F: Real>(batch: &Batch<F>, params: &Params) -> Result<Output<F>, CreditError> {
    let Some(values) = batch.values.as_ref() else {
        return Err(CreditError::Unsupported {
            scheme: "gae".to_owned(),
            reason: "needs values at this level".to_owned(),
        });
    };
    let gamma = F::of(params.f64("gamma"));
    let lam = F::of(params.f64("lam"));
    let skip = params.choice("holes") != "zero";
    let n = batch.num_positions();
    let mut terms = Terms::for_rows(
        "whiten(Σ (γλ)^k δ_{t+k}), δ_t = r_t + γ V_{t+1} − V_t",
        &["V at first token", "return at first token"],
        batch.num_rows(),
    );
    // Rows back to front, four at a time, runs of rows on their own threads
    // (`rows_backward_parts`); the state is the next value, the running advantage and the return
    // last computed (at the row's first position once done).
    let (mut raw, states) = super::batch::rows_backward_parts(
        n,
        F::ZERO,
        batch.num_rows(),
        |i| batch.row(i),
        |_| (F::ZERO, F::ZERO, F::of(f64::NAN)),
        #[inline(always)]
        move |(next_value, last, ret), i, t| {
            let m = batch.m(t);
            let v = if values[t].is_nan() { F::ZERO } else { values[t] };
            if skip {
                let delta = batch.r(i, t) + gamma * *next_value - v;
                let gae = delta + gamma * lam * *last;
                *next_value = v * m + (F::ONE - m) * *next_value;
                *last = gae * m + (F::ONE - m) * *last;
                *ret = *last + v;
            } else {
                let (v, r) = (v * m, batch.r(i, t) * m);
                let delta = r + gamma * *next_value - v;
                *last = delta + gamma * lam * *last;
                *next_value = v;
                *ret = *last + v;
            }
            *last
        },
    );
    for (i, (_, _, ret)) in states.into_iter().enumerate() {
        let first = batch.offsets[i];
        terms.set(i, &[values.get(first).map_or(f64::NAN, |x| x.f64()), ret.f64()]);
    }
    // The returns, advantage + value (masked where the advantage was), before whitening.
    let returns = (!batch.skip_returns).then(|| {
        let mut returns = F::with_room(n);
        returns.extend(raw.iter().enumerate().map(|(t, &a)| {
            let v = if values[t].is_nan() { F::ZERO } else { values[t] };
            a + if skip { v } else { v * batch.m(t) }
        }));
        returns
    });
    // verl does not re-mask: padded positions keep the whitened value of 0.
    whiten_batch(batch, &mut raw, params, "gae")?;
    Ok(Output { advantages: raw, returns, terms })
}
