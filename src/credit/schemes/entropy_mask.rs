//! High-entropy token training (`entropy_mask`, arXiv 2506.01939, "Beyond the 80/20 rule") as
//! ms-swift trains it (`top_entropy_quantile`): only the tokens whose entropy is in the top ρ of
//! the batch's policy tokens carry their loss; the others' is multiplied by 0. Here that is any
//! token-level scheme's credit (`base`, GRPO by default) times the mask: a token keeps its credit
//! where its entropy is at least the batch's `1 − ρ` quantile (torch's `nanquantile`, linear
//! between the two nearest tokens), and gets 0 below it. The batch is the run: ms-swift takes the
//! quantile over the tokens of the micro-batch its loss is computed on, one device's share of a
//! training step, which the log does not record.

use crate::credit::params::declare::{decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, Level, Preset, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::Run;

scheme!(
    /// High-entropy token training.
    EntropyMask,
    knobs: Knobs,
    info: SchemeInfo {
        id: "entropy_mask",
        family: Family::Token,
        display_name: "High-entropy tokens only (entropy mask)",
        citation: "Wang et al. 2025, Beyond the 80/20 Rule: High-Entropy Minority Tokens Drive Effective RL (arXiv 2506.01939): train only the top-ρ highest-entropy tokens; ms-swift top_entropy_quantile",
        needs: "token arrays with each token's entropy, and what the base scheme needs",
        source: SourceQuality::FromCode(
            "modelscope/ms-swift@3602360a562313afbf2ef6065fdf61f271a2c5b9 swift/rlhf_trainers/grpo_trainer.py (GRPOTrainer._compute_loss_and_metrics: entropy_threshold = nanquantile(entropies, 1 − top_entropy_quantile), entropy_mask = entropies ≥ threshold, per_token_loss × entropy_mask)",
        ),
        checked: "ms-swift's own lines, run with torch 2.15 on the tokens of sample_runs/verl_token_batch.jsonl at ρ = 0.2, 0.5 and 1 (tests/golden/ms_swift, tests/it/trainers_2026.rs): the mask to the token, the credit the base scheme's times it",
    },
    presets: [Preset {
        name: "ms_swift",
        values: &[("quantile", "0.2"), ("base", "grpo")],
        doc: "ms-swift top_entropy_quantile = 0.2 (the paper's 20 %) over GRPO's credit",
    }],
);

params! {
    pub struct Knobs {
        quantile: f64 = range(0.0, 1.0, "0.2", "ρ: the share of the batch's policy tokens, by entropy from the highest, that keep their credit (ms-swift top_entropy_quantile; 1 = every token)"),
        base: &'static str = decl("grpo", "the scheme whose token credit is masked (any scheme with token-level credit, with its defaults)"),
    }
}

/// torch's `nanquantile(values, q)` on float32 (linear interpolation): the `q` quantile of the
/// values that are not NaN, `NaN` when none is. As `ATen` computes it: `q` a float32 scalar, the rank
/// `q·(n − 1)` in float32, the values at its floor and ceiling, `lerp` by its fraction.
fn nanquantile(values: &mut [f32], q: f64) -> f32 {
    values.sort_unstable_by(f32::total_cmp);
    let n = values.iter().take_while(|v| !v.is_nan()).count();
    if n == 0 {
        return f32::NAN;
    }
    let rank = q as f32 * (n - 1) as f32;
    let (below, above) = (rank.floor(), rank.ceil());
    let weight = rank - below;
    let (lo, hi) = (values[below as usize], values[(above as usize).min(n - 1)]);
    // ATen's lerp: a + w·(b − a) below a weight of one half, b − (b − a)·(1 − w) from it.
    if weight < 0.5 { lo + weight * (hi - lo) } else { hi - (hi - lo) * (1.0 - weight) }
}

impl Typed for EntropyMask {
    fn supports(&self, run: &Run) -> Support {
        if run.tokens.entropy.is_none() {
            return Support::No("needs each token's entropy (token `entropy`)".to_owned());
        }
        // The default base's needs (another base says its own when computed).
        crate::credit::engine::inputs::supports_rewards(run)
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let Some(entropy) = run.tokens.entropy.as_deref() else {
            return Err(CreditError::Unsupported {
                scheme: INFO.id.to_owned(),
                reason: "needs each token's entropy (token `entropy`)".to_owned(),
            });
        };
        let credit = crate::credit::base_token_credit(run, knobs.base, INFO.id)?;
        let token = credit.token.as_deref().unwrap_or_default();
        let policy = |i: usize| run.tokens.is_policy(i);
        // ms-swift fills the padding (tokens outside the completion mask) with NaN first.
        let mut values: Vec<f32> = (0..entropy.len()).map(|i| if policy(i) { entropy[i] } else { f32::NAN }).collect();
        let threshold = nanquantile(&mut values, 1.0 - knobs.quantile);
        let kept: Vec<f32> = (0..token.len())
            .map(|i| {
                let keep = policy(i) && entropy.get(i).is_some_and(|&h| h >= threshold);
                if keep { token[i] } else { 0.0 }
            })
            .collect();
        let step = crate::credit::engine::inputs::step_from_tokens(run, &kept);
        let mut terms = Terms::for_rows(
            "the base's token credit where the token's entropy ≥ the batch's (1 − ρ) quantile, else 0",
            &["entropy threshold", "ρ"],
            run.trajectories.len(),
        );
        for t in run.trajectories.ids() {
            terms.set(t.index(), &[f64::from(threshold), knobs.quantile]);
        }
        Ok(Credit { step, token: Some(kept), token_returns: None, terms, level: Some(Level::Token) })
    }
}
