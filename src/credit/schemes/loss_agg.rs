//! Loss aggregation as per-token weights (`loss_agg_weight`): the weight each token's loss gets
//! under verl's four `loss_agg_mode`s and TRL's `loss_type`s, so the length bias Dr.GRPO is about
//! can be seen token by token. `agg_loss` is verl's `core_algos.agg_loss` itself.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};

choice! {
    /// The aggregation modes (`mode`).
    pub enum LossAgg { TokenMean = "token-mean", SeqMeanTokenSum = "seq-mean-token-sum", SeqMeanTokenMean = "seq-mean-token-mean", SeqMeanTokenSumNorm = "seq-mean-token-sum-norm", TrlGrpo = "trl-grpo", TrlDrGrpo = "trl-dr_grpo", TrlLuspo = "trl-luspo" }
}

params! {
    pub struct Knobs {
        mode: LossAgg = decl("token-mean", "token-mean (verl default, TRL dapo/bnpo), seq-mean-token-sum, seq-mean-token-mean (verl: 1/(n + 1e-8) over non-empty rows), seq-mean-token-sum-norm (Dr.GRPO in verl), trl-grpo (TRL grpo/sapo: 1/max(n, 1) over all rows), trl-dr_grpo (Σ/(B·max_completion_length)), trl-luspo (mean over rows of the sequence loss times its length: 1/B per token)"),
        max_completion_length: i64 = range(0.0, 1000000.0, "0", "TRL dr_grpo's normalizer: the configured max_completion_length; 0 = the one the run's metadata records, else the longest row"),
        common: Common = GROUP,
    }
}

estimator!(
    LossAggWeight,
    kernel: kernel,
    info: SchemeInfo {
        id: "loss_agg_weight",
        family: Family::Control,
        display_name: "Loss aggregation weight",
        citation: "verl core_algos.agg_loss (actor.loss_agg_mode); TRL GRPOTrainer loss_type; Dr.GRPO (arXiv 2503.20783) on the length bias",
        needs: "any trajectories (token masks give token weights)",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs) (agg_loss); TRL 1.16's own outputs (golden/trl, tests/it/golden_trainers.rs) (loss types, as gradients of _compute_loss)",
    },
    params: Knobs,
    presets: [
        Preset { name: "verl", values: &[("mode", "token-mean")], doc: "verl default actor.loss_agg_mode" },
        Preset { name: "trl", values: &[("mode", "token-mean")], doc: "TRL default loss_type=dapo: global token mean" },
        Preset { name: "openrlhf", values: &[("mode", "token-mean")], doc: "OpenRLHF token_level_loss=True" },
        Preset { name: "dr_grpo", values: &[("mode", "seq-mean-token-sum-norm")], doc: "Dr.GRPO's constant normalizer as verl runs it" },
    ],
    supports: supports_rewards,
    batch_wide: |_| Some("weights each position by the batch's token or row count")
);

/// Per-position weights `w` such that the aggregated loss is `Σ_t w_t · L_t` (dp size 1, default
/// denominators); no mask means every position is valid.
pub fn weights<F: Real>(mask: Option<&[F]>, offsets: &[usize], mode: LossAgg) -> Vec<F> {
    weights_with(mask, offsets, mode, None)
}

/// [`weights`] with TRL `dr_grpo`'s `max_completion_length` (`None`: the longest row).
pub fn weights_with<F: Real>(
    mask: Option<&[F]>,
    offsets: &[usize],
    mode: LossAgg,
    max_length: Option<usize>,
) -> Vec<F> {
    let rows: Vec<(usize, usize)> = offsets.windows(2).map(|w| (w[0], w[1])).collect();
    let counts: Vec<F> = rows
        .iter()
        .map(|&(a, b)| match mask {
            Some(mask) => {
                let mut c = F::ZERO;
                for &m in &mask[a..b] {
                    c += m;
                }
                c
            }
            // A sum of ones, exactly.
            None => F::of((b - a) as f64),
        })
        .collect();
    let nonempty = F::of(counts.iter().filter(|c| **c > F::ZERO).count() as f64);
    let width = F::of(rows.iter().map(|&(a, b)| b - a).max().unwrap_or(0) as f64);
    let mut total = F::ZERO;
    for c in &counts {
        total += *c;
    }
    let positions = offsets.last().copied().unwrap_or(0);
    let factors = rows.iter().zip(&counts).map(|(&(a, b), &n)| {
        // One factor per row, so the inner loop is a multiply.
        let factor = match mode {
            LossAgg::SeqMeanTokenSum if n > F::ZERO => F::ONE / nonempty,
            LossAgg::SeqMeanTokenMean if n > F::ZERO => F::ONE / (n + F::of(1e-8)) / nonempty,
            LossAgg::SeqMeanTokenSumNorm => F::ONE / width,
            LossAgg::TrlGrpo => F::ONE / n.max(F::ONE) / F::of(rows.len() as f64),
            LossAgg::TrlLuspo => F::ONE / F::of(rows.len() as f64),
            LossAgg::TrlDrGrpo => F::ONE / (F::of(rows.len() as f64) * max_length.map_or(width, |l| F::of(l as f64))),
            LossAgg::TokenMean if total > F::ZERO => F::ONE / total,
            _ => F::ZERO,
        };
        (a..b, factor)
    });
    crate::credit::data::batch::scaled_rows(mask.map_or(positions, <[F]>::len), mask, factors)
}

/// verl `agg_loss(loss_mat, loss_mask, mode)` with dp size 1 and default denominators.
pub fn agg_loss<F: Real>(loss: &[F], mask: &[F], offsets: &[usize], mode: &str) -> F {
    // A mode verl does not have weighs nothing.
    let Some(mode) = crate::credit::params::declare::from_word::<LossAgg>(mode) else { return F::ZERO };
    let w = weights(Some(mask), offsets, mode);
    let mut sum = F::ZERO;
    for (l, w) in loss.iter().zip(&w) {
        if *w != F::ZERO {
            sum += *l * *w;
        }
    }
    sum
}

#[expect(clippy::unnecessary_wraps, reason = "every kernel has the signature TokenKernel needs")]
fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    let mode = knobs.mode;
    let max_length = usize::try_from(knobs.max_completion_length).ok().filter(|&l| l > 0).or(batch.max_length);
    let advantages = weights_with(batch.mask.as_deref(), &batch.offsets, mode, max_length);
    // Each row's valid tokens and the number its tokens' losses are divided by (1 / the weight of
    // its valid tokens; 0 where the row has no weight), so the explanation adds up to the value.
    let mut terms = Terms::new(
        format!("weight of each token's loss under {mode} = 1 / divisor"),
        &["row's valid tokens", "divisor"],
    );
    for i in 0..batch.num_rows() {
        let mut count = F::ZERO;
        let mut weight = F::ZERO;
        for t in batch.row(i) {
            count += batch.m(t);
            if batch.m(t) > F::ZERO && weight == F::ZERO {
                weight = advantages[t];
            }
        }
        let divisor = if weight > F::ZERO { 1.0 / weight.f64() } else { 0.0 };
        terms.push(&[count.f64(), divisor]);
    }
    Ok(Output { advantages, returns: None, terms })
}
