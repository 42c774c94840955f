//! FIPO, Future-KL influenced policy optimization (`fipo`, arXiv 2603.19835), as ms-swift weights
//! its loss (`loss_type = fipo`): each policy token's credit is the base scheme's (GRPO by default)
//! times an influence weight from the discounted log-prob shift of the tokens from it to the end
//! of its rollout, `FutureKL_t = Σ_{k≥t} γ^{k−t}·Δ_k`, `Δ_k` the trainer's log-prob minus the
//! sampling policy's (`trainer_logprob` − `logprob`, 0 off the policy's tokens, and 0 where the
//! ratio `exp(Δ)` is above `delta` when set), `γ = 2^(−1/decay_rate)`; the weight is
//! `exp(FutureKL)` clipped to `[1, 1 + clip]` (`[1 − clip, 1 + clip]` without `clip_high_only`),
//! and a token of negative credit whose ratio passes `safety` keeps a weight in `[0.8, 1]`.

use crate::credit::params::declare::{decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, Level, Preset, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::Run;

scheme!(
    /// FIPO's future-KL token weights.
    Fipo,
    knobs: Knobs,
    info: SchemeInfo {
        id: "fipo",
        family: Family::Token,
        display_name: "FIPO (future-KL token weights)",
        citation: "FIPO (arXiv 2603.19835): A·clip(exp(Σ_{k≥t} γ^{k−t}·Δlog p_k)), Δlog p the trainer's minus the sampling policy's log-prob; ms-swift loss_type fipo",
        needs: "token arrays with the sampling policy's log-probs (`logprob`) and the trainer's (`trainer_logprob`), and what the base scheme needs",
        source: SourceQuality::FromCode(
            "modelscope/ms-swift@3602360a562313afbf2ef6065fdf61f271a2c5b9 swift/rlhf_trainers/grpo_trainer.py (GRPOTrainer._compute_fipo_influence; log_ratio = per_token_logps − old_per_token_logps, coef_1 = exp(log_ratio) at token level; fipo_gamma = 2 ** (−1 / fipo_decay_rate)); swift/arguments defaults (fipo_decay_rate 32, fipo_clip_range 0.2, fipo_clip_high_only true, fipo_safety_threshold 4, delta None). Gap: ms-swift's weight multiplies the clipped PPO loss of the token, whose ratio the log does not give at the trainer's step; here it multiplies the base scheme's credit",
        ),
        checked: "ms-swift's own _compute_fipo_influence run with torch 2.15 on the tokens of sample_runs/verl_token_batch.jsonl at its defaults, with delta 3, with a two-sided clip and at a short decay without the safety clip (tests/golden/fipo, tests/it/trainers_2026.rs), within 1e-5",
    },
    presets: [Preset {
        name: "ms_swift",
        values: &[("decay_rate", "32"), ("clip", "0.2"), ("clip_high_only", "true"), ("safety", "4"), ("delta", "0"), ("base", "grpo")],
        doc: "ms-swift's FIPO defaults (fipo_decay_rate 32, fipo_clip_range 0.2, fipo_clip_high_only, fipo_safety_threshold 4, delta unset) over GRPO's credit",
    }],
);

params! {
    pub struct Knobs {
        decay_rate: f64 = range(0.01, 100000.0, "32", "the half-life of the future-KL discount, in tokens: γ = 2^(−1/decay_rate) (fipo_decay_rate)"),
        clip: f64 = range(0.0, 10.0, "0.2", "the influence weight's clip range (fipo_clip_range; 0 = no clip)"),
        clip_high_only: bool = decl("true", "clip the weight to [1, 1 + clip] only (fipo_clip_high_only)"),
        safety: f64 = range(0.0, 1000.0, "4", "a token of negative credit whose ratio exp(Δ) is above this keeps a weight in [0.8, 1] (fipo_safety_threshold; 0 = off)"),
        delta: f64 = range(0.0, 1000.0, "0", "tokens whose ratio is above delta add nothing to the future KL (ms-swift's --delta; 0 = unset)"),
        base: &'static str = decl("grpo", "the scheme whose token credit is weighted (any scheme with token-level credit, with its defaults)"),
    }
}

/// Why a run without both log-probs cannot take it.
const NEEDS: &str = "needs token `logprob` and the trainer's `trainer_logprob`";

/// Each token's influence weight (ms-swift's `_compute_fipo_influence`) and future KL, given each
/// token's log-prob shift (`NaN` off the policy's tokens) and the credit's sign.
fn influence(
    shift: &[f32],
    negative: &[bool],
    ranges: &[std::ops::Range<usize>],
    knobs: &Knobs,
) -> (Vec<f32>, Vec<f32>) {
    let gamma = 2f64.powf(-1.0 / knobs.decay_rate) as f32;
    let mut future = vec![0.0f32; shift.len()];
    let mut weight = vec![1.0f32; shift.len()];
    for range in ranges {
        // Σ_{k≥t} γ^{k−t}·Δ_k from the end (masked tokens add 0 but still age the discount).
        let mut running = 0.0f64;
        for i in range.clone().rev() {
            let delta = shift[i];
            let counted =
                if delta.is_nan() || (knobs.delta > 0.0 && delta.exp() > knobs.delta as f32) { 0.0 } else { delta };
            running = f64::from(counted) + f64::from(gamma) * running;
            future[i] = if delta.is_nan() { 0.0 } else { running as f32 };
        }
    }
    for i in 0..shift.len() {
        let mut w = future[i].exp();
        if knobs.clip > 0.0 {
            let high = (1.0 + knobs.clip) as f32;
            let low = if knobs.clip_high_only { 1.0 } else { (1.0 - knobs.clip) as f32 };
            w = w.clamp(low, high);
        }
        let ratio = if shift[i].is_nan() { 1.0 } else { shift[i].exp() };
        if knobs.safety > 0.0 && negative[i] && ratio > knobs.safety as f32 {
            w = w.clamp(0.8, 1.0);
        }
        weight[i] = w;
    }
    (weight, future)
}

impl Typed for Fipo {
    fn supports(&self, run: &Run) -> Support {
        if run.tokens.logprob.is_none() || run.tokens.trainer_logprob.is_none() {
            return Support::No(NEEDS.to_owned());
        }
        crate::credit::engine::inputs::supports_rewards(run)
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let (Some(old), Some(new)) = (run.tokens.logprob.as_deref(), run.tokens.trainer_logprob.as_deref()) else {
            return Err(CreditError::Unsupported { scheme: INFO.id.to_owned(), reason: NEEDS.to_owned() });
        };
        let credit = crate::credit::base_token_credit(run, knobs.base, INFO.id)?;
        let token = credit.token.as_deref().unwrap_or_default();
        let policy = |i: usize| run.tokens.is_policy(i);
        // `log_ratio.masked_fill(~completion_mask, 0)`: NaN here marks the tokens off the mask.
        let shift: Vec<f32> = (0..token.len()).map(|i| if policy(i) { new[i] - old[i] } else { f32::NAN }).collect();
        let negative: Vec<bool> = token.iter().map(|a| *a < 0.0).collect();
        let tr = &run.trajectories;
        let ranges: Vec<_> = tr.ids().map(|t| tr.token_range(t)).collect();
        let (weight, future) = influence(&shift, &negative, &ranges, knobs);
        let weighted: Vec<f32> =
            token.iter().zip(&weight).enumerate().map(|(i, (a, w))| if policy(i) { a * w } else { 0.0 }).collect();
        let step = crate::credit::engine::inputs::step_from_tokens(run, &weighted);
        let mut terms = Terms::for_rows(
            "the base's token credit × clip(exp(Σ_{k≥t} γ^{k−t}·Δlog p_k)); shown per rollout: the mean weight and future KL of its policy tokens",
            &["mean weight", "mean future KL", "γ"],
            tr.len(),
        );
        let gamma = 2f64.powf(-1.0 / knobs.decay_rate);
        for (t, range) in tr.ids().zip(&ranges) {
            let kept: Vec<usize> = range.clone().filter(|&i| policy(i)).collect();
            let n = kept.len().max(1) as f64;
            let mean = |v: &[f32]| kept.iter().map(|&i| f64::from(v[i])).sum::<f64>() / n;
            terms.set(t.index(), &[mean(&weight), mean(&future), gamma]);
        }
        Ok(Credit { step, token: Some(weighted), token_returns: None, terms, level: Some(Level::Token) })
    }
}
