//! Batch whitening over all masked positions, in place: verl's `masked_whiten` (unbiased, float32
//! denominators) and OpenRLHF's (biased, clamped variance).

use super::real::Real;

/// Σ(x·m), Σm and Σ((x − mean)²·m) with verl's float32 denominators: `(mean, var·n/(n−1), n)`.
/// The sums accumulate in `f64`: torch's cascade summation is far closer to that than a running
/// float32 sum over millions of tokens would be.
fn verl_moments<F: Real>(x: &[F], mask: Option<&[F]>) -> (F, F, f32) {
    // verl sums its integer mask exactly, then divides in float32: the count in f64 (exact, in
    // four lanes), rounded once (a running float32 sum would stop counting at 2²⁴ positions).
    let n: f32 = match mask {
        Some(mask) => super::common::lane_sum(mask, |m| m.f64()) as f32,
        None => x.len() as f32,
    };
    let sum = lane_sum(x, mask, |v| v.f64());
    // `mask.sum() + 1e-8` and `n / (n − 1)` are float32 (the int64 mask promotes to the default dtype).
    let denominator = F::of(f64::from(n + 1e-8_f32));
    let mean = F::of(sum) / denominator;
    let sq = lane_sum(x, mask, |v| {
        let d = v - mean;
        (d * d).f64()
    });
    let bessel = F::of(f64::from(n / (n - 1.0)));
    (mean, F::of(sq) / denominator * bessel, n)
}

/// Σ f(x[t]) over the positions with a non-zero mask (each term times its mask), in `f64`, in
/// four interleaved partial sums so the additions do not wait on each other; a large batch as
/// the sums of blocks on several threads, added in order (`par::block_sum`: the same sum
/// whatever the number of threads; one block is this very sum).
fn lane_sum<F: Real>(x: &[F], mask: Option<&[F]>, f: impl Fn(F) -> f64 + Sync) -> f64 {
    let n = mask.map_or(x.len(), |m| x.len().min(m.len()));
    super::par::block_sum(n, |range| block_lane_sum(&x[range.clone()], mask.map(|m| &m[range]), &f))
}

/// [`lane_sum`] over one block (its first position a multiple of four).
fn block_lane_sum<F: Real>(x: &[F], mask: Option<&[F]>, f: &impl Fn(F) -> f64) -> f64 {
    let mut lanes = [0.0f64; 4];
    if let Some(mask) = mask {
        // Position i in lane i mod 4, as below; a zero mask adds nothing (not 0 · NaN).
        let term = |v: F, m: F| if m == F::ZERO { 0.0 } else { f(v) * m.f64() };
        let n = x.len().min(mask.len());
        let (x, mask) = (&x[..n], &mask[..n]);
        let whole = n - n % 4;
        for (xs, ms) in x[..whole].chunks_exact(4).zip(mask[..whole].chunks_exact(4)) {
            for l in 0..4 {
                lanes[l] += term(xs[l], ms[l]);
            }
        }
        for i in whole..n {
            lanes[i % 4] += term(x[i], mask[i]);
        }
    } else {
        let chunks = x.chunks_exact(4);
        let rest = chunks.remainder();
        for chunk in chunks {
            for (lane, &v) in lanes.iter_mut().zip(chunk) {
                *lane += f(v);
            }
        }
        for &v in rest {
            lanes[0] += f(v);
        }
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// verl `masked_whiten(x, m)`: `x ← (x − mean) · rsqrt(var·n/(n−1) + 1e-8)` at **all** positions.
/// `false` (and `x` untouched) when fewer than two positions are valid: verl raises `ValueError`.
pub fn verl<F: Real>(x: &mut [F], mask: Option<&[F]>) -> bool {
    let (mean, var, n) = verl_moments(x, mask);
    if n <= 1.0 {
        return false;
    }
    let rstd = F::ONE / (var + F::of(1e-8)).sqrt();
    super::par::chunks_mut(x, |_, part| {
        for v in part {
            *v = (*v - mean) * rstd;
        }
    });
    true
}

/// [`verl`] followed by `x ← x · m` (REINFORCE++ masks its whitened advantages), in the same
/// pass: the same operations on each value, one pass over the batch fewer.
pub fn verl_then_mask<F: Real>(x: &mut [F], mask: Option<&[F]>) -> bool {
    let Some(mask) = mask else { return verl(x, None) };
    let (mean, var, n) = verl_moments(x, Some(mask));
    if n <= 1.0 {
        return false;
    }
    let rstd = F::ONE / (var + F::of(1e-8)).sqrt();
    super::par::chunks_mut(x, |start, part| {
        for (v, &m) in part.iter_mut().zip(mask.get(start..).unwrap_or(&[])) {
            *v = (*v - mean) * rstd * m;
        }
    });
    true
}

/// [`verl`] on an unmasked batch whose row `i` holds `x[i]` at each of its `lens(i)` positions,
/// without writing the positions: the same moments, each row's term weighted by its length (so
/// a broadcast kernel whitens its rows and then writes every position once). `false` (and `x`
/// untouched) when fewer than two positions are valid.
pub fn verl_rows<F: Real>(x: &mut [F], lens: impl Fn(usize) -> usize) -> bool {
    let weighted = |f: &dyn Fn(F) -> f64| {
        let mut lanes = [0.0f64; 4];
        for (i, &v) in x.iter().enumerate() {
            lanes[i % 4] += f(v) * lens(i) as f64;
        }
        (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
    };
    let n = (0..x.len()).map(&lens).sum::<usize>() as f32;
    if n <= 1.0 {
        return false;
    }
    let denominator = F::of(f64::from(n + 1e-8_f32));
    let mean = F::of(weighted(&|v| v.f64())) / denominator;
    let sq = weighted(&|v| {
        let d = v - mean;
        (d * d).f64()
    });
    let var = F::of(sq) / denominator * F::of(f64::from(n / (n - 1.0)));
    let rstd = F::ONE / (var + F::of(1e-8)).sqrt();
    for v in x.iter_mut() {
        *v = (*v - mean) * rstd;
    }
    true
}

/// OpenRLHF whitening: `x ← (x − mean) · clamp(var, 1e-8)^(−½)` with the biased variance, or only
/// the mean subtraction with `std_norm = false`.
pub fn openrlhf<F: Real>(x: &mut [F], mask: Option<&[F]>, std_norm: bool) {
    let m = |t: usize| mask.map_or(F::ONE, |m| m[t]);
    let (mut sum, mut n) = (F::ZERO, F::ZERO);
    for (t, &v) in x.iter().enumerate() {
        sum += v * m(t);
        n += m(t);
    }
    if n == F::ZERO {
        return;
    }
    let mean = sum / n;
    let mut sq = F::ZERO;
    for (t, &v) in x.iter().enumerate() {
        sq += (v - mean) * (v - mean) * m(t);
    }
    let rstd = if std_norm { F::ONE / (sq / n).max(F::of(1e-8)).sqrt() } else { F::ONE };
    for v in x.iter_mut() {
        *v = (*v - mean) * rstd;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mask_is_counted_exactly_past_two_to_the_24() {
        // A running float32 count would stop at 2²⁴ = 16 777 216.
        let n = (1usize << 24) + 8;
        let x = vec![1.0f32; n];
        let (mean, _, count) = verl_moments(&x, Some(&x));
        assert_eq!(count, 16_777_224.0);
        assert!((mean - 1.0).abs() < 1e-6, "{mean}");
    }

    #[test]
    fn whitening_rows_equals_whitening_their_broadcast() {
        let rows = [0.25f32, -1.5, 3.0, 0.0, 2.0];
        let lens = [3usize, 1, 4, 0, 2];
        let mut broadcast: Vec<f32> = rows.iter().zip(lens).flat_map(|(&v, n)| std::iter::repeat_n(v, n)).collect();
        assert!(verl(&mut broadcast, None));
        let mut whitened = rows;
        assert!(verl_rows(&mut whitened, |i| lens[i]));
        let mut p = 0;
        for (&v, n) in whitened.iter().zip(lens) {
            for _ in 0..n {
                assert!((broadcast[p] - v).abs() <= 1e-6, "{} vs {v}", broadcast[p]);
                p += 1;
            }
        }
        // One position in all: verl raises, and the rows are left as they were.
        let mut one = [1.0f32, 2.0];
        assert!(!verl_rows(&mut one, |i| usize::from(i == 0)));
        assert_eq!(one, [1.0, 2.0]);
    }
}
