//! verl's optimal token baseline over a batch: a per-position group baseline weighted by the
//! cumulative path variance, on all positions or on the valid ones compacted to the left (the
//! multi-turn form). The two schemes `optimal_token_baseline` and `tir_optimal_token_baseline`
//! are this kernel with `compact` false and true.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::real::Real;
use crate::credit::{CreditError, Terms};

/// Per-row position lists: all positions (`compact = false`) or only the valid ones (`true`).
pub fn kernel_with<F: Real>(
    batch: &Batch<'_, F>,
    epsilon: f64,
    handle_zero_tail: bool,
    compact: bool,
) -> Result<Output<F>, CreditError> {
    let (Some(logprob), Some(spp)) = (batch.logprob.as_ref(), batch.sum_pi_squared.as_ref()) else {
        return Err(CreditError::Unsupported {
            scheme: "optimal_token_baseline".to_owned(),
            reason: "needs logprobs and sum_pi_squared".to_owned(),
        });
    };
    let eps = F::of(epsilon);
    let n = batch.num_positions();
    // Returns and cumulative path variance, per position.
    let mut g = F::zeroed(n);
    let mut w_cum = F::zeroed(n);
    for i in 0..batch.num_rows() {
        let mut running = F::ZERO;
        for t in batch.row(i).rev() {
            running += batch.r(i, t) * batch.m(t);
            g[t] = running;
        }
        let mut cum = F::ZERO;
        for t in batch.row(i) {
            let mut w = F::ONE - F::of(2.0) * logprob[t].exp() + spp[t];
            if let Some(is_weights) = batch.rollout_is_weights.as_ref() {
                w = w * is_weights[t] * is_weights[t];
            }
            cum += w * batch.m(t);
            w_cum[t] = cum;
        }
    }
    // The positions each row contributes, in order: absolute, or valid-only (compacted).
    let positions: Vec<Vec<usize>> =
        (0..batch.num_rows())
            .map(|i| {
                if compact { batch.row(i).filter(|&t| batch.m(t) != F::ZERO).collect() } else { batch.row(i).collect() }
            })
            .collect();
    let lengths: Vec<usize> = (0..batch.num_rows())
        .map(|i| if compact { positions[i].len() } else { batch.row(i).filter(|&t| batch.m(t) != F::ZERO).count() })
        .collect();
    let mut baseline = F::zeroed(n);
    for rows in batch.group_rows().iter() {
        if rows.len() < 2 {
            continue;
        }
        let width = rows.iter().map(|&i| positions[i].len()).max().unwrap_or(0);
        for k in 0..width {
            let (mut num, mut den) = (F::ZERO, F::ZERO);
            for &i in rows {
                if let Some(&t) = positions[i].get(k) {
                    let m = if compact { F::ONE } else { batch.m(t) };
                    num += g[t] * w_cum[t] * m;
                    den += w_cum[t] * m;
                }
            }
            let b = num / (den + eps);
            for &i in rows {
                if let Some(&t) = positions[i].get(k) {
                    baseline[t] = b;
                }
            }
        }
        if handle_zero_tail {
            let mut sorted: Vec<usize> = rows.iter().map(|&i| lengths[i]).collect();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            if sorted.len() >= 2 && sorted[0] > sorted[1] {
                let second = sorted[1];
                if let Some(&longest) = rows.iter().find(|&&i| lengths[i] == sorted[0]) {
                    for &t in positions[longest].iter().skip(second) {
                        baseline[t] = F::ZERO;
                    }
                }
            }
        }
    }
    let advantages: Vec<F> = (0..n).map(|t| (g[t] - baseline[t]) * batch.m(t)).collect();
    let mut terms = Terms::new("G_t − B_t, B_t = Σ_group G·W / Σ_group W", &["G at first token"]);
    for i in 0..batch.num_rows() {
        terms.push(&[g.get(batch.offsets[i]).map_or(f64::NAN, |x| x.f64())]);
    }
    Ok(Output { advantages, returns: Some(g), terms })
}
