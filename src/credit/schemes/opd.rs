//! On-policy distillation (`opd`) as prime-rl trains it: no advantage at all; a teacher scores
//! each sampled token of the policy's own rollouts (prime-rl's `OPDAlgorithm` assigns the
//! teacher's prefill log-probabilities as the sample's reference log-probs), and the trainer's
//! `ref_kl` loss takes the reverse KL's per-token signal `ref_logprob − logprob` as the token's
//! policy-gradient weight (times the importance ratio, 1 on-policy). That weight is the credit
//! here, on the policy's tokens (0 elsewhere); a step's credit is the mean over its tokens.
//! What the log cannot tell: the trainer's own log-probs against the inference ones (the ratio,
//! and the tokens its one-sided trust region drops where the trainer's probability fell more than
//! 0.2 below the inference one), so the logged log-probs stand for both.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::params::declare::{GROUP, params};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::Run;

params! {
    pub struct Knobs {
        common: Common = GROUP,
    }
}

estimator!(
    Opd,
    kernel: kernel,
    info: SchemeInfo {
        id: "opd",
        family: Family::Token,
        display_name: "On-policy distillation (reverse KL)",
        citation: "on-policy distillation: each sampled token weighted by the teacher's minus the policy's log-probability (the reverse KL's per-token signal); prime-rl OPDAlgorithm with the trainer's ref_kl loss",
        needs: "token arrays with the policy's logprobs and the teacher's as `ref_logprob` (prime-rl ships the teacher's prefill scores as reference logprobs)",
        source: SourceQuality::FromCode(
            "PrimeIntellect-ai/prime-rl@559b44772e471d1538537b8805cc77f3824a5e64 src/prime_rl/orchestrator/algo/opd.py (OPDAlgorithm), src/prime_rl/trainer/rl/loss.py (ref_kl_loss_fn)",
        ),
        checked: "prime-rl's own ref_kl_loss_fn, its gradient with respect to the trainer's log-probs on-policy (tests/golden/prime_algos, tests/it/trainers_2026.rs: masked tokens, rows of 1 to 40 tokens), to the bit",
    },
    params: Knobs,
    presets: [Preset {
        name: "prime_rl",
        values: &[("level", "token")],
        doc: "prime-rl OPDAlgorithm with the ref_kl loss, on-policy (the importance ratio 1, no token past the trust region)",
    }],
    supports: supports
);

/// Token log-probs of the policy and of a teacher (as `ref_logprob`).
fn supports(run: &Run) -> Support {
    if run.tokens.logprob.is_none() || run.tokens.ref_logprob.is_none() {
        return Support::No("needs token logprobs and the teacher's as `ref_logprob`".to_owned());
    }
    Support::Yes
}

fn kernel<F: Real>(batch: &Batch<'_, F>, _: &Knobs) -> Result<Output<F>, CreditError> {
    let (Some(logprob), Some(teacher)) = (&batch.logprob, &batch.ref_logprob) else {
        return Err(CreditError::Unsupported {
            scheme: "opd".to_owned(),
            reason: "needs token log-probs (level = token): the reverse KL is a per-token signal".to_owned(),
        });
    };
    let mut advantage = vec![F::ZERO; batch.num_positions()];
    let rows = batch.num_rows();
    let mut terms = Terms::for_rows("teacher − policy log-prob, per token", &["row mean", "tokens"], rows);
    for row in 0..rows {
        let (start, end) = (batch.offsets[row], batch.offsets[row + 1]);
        let (mut sum, mut count) = (0.0f64, 0usize);
        for i in start..end {
            let counted = batch.mask.as_ref().is_none_or(|m| m[i] != F::ZERO);
            if counted {
                // torch: `ref_logprobs - trainer_logprobs` in float32, times a ratio of 1.
                advantage[i] = teacher[i] - logprob[i];
                sum += advantage[i].f64();
                count += 1;
            }
        }
        let mean = if count > 0 { sum / count as f64 } else { 0.0 };
        terms.set(row, &[mean, count as f64]);
    }
    Ok(Output { advantages: advantage, returns: None, terms })
}
