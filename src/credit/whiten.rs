//! Batch whitening over all masked positions: verl's `masked_whiten` (unbiased, float32
//! denominators) and OpenRLHF's (biased, clamped variance).

use super::real::Real;

/// verl `masked_whiten(x, m)`: `(x − mean) · rsqrt(var·n/(n−1) + 1e-8)` applied to **all** positions.
/// `None` when fewer than two positions are valid (verl raises `ValueError`).
pub fn verl<F: Real>(x: &[F], mask: impl Fn(usize) -> F) -> Option<Vec<F>> {
    let mut n = 0.0f32;
    let mut sum = F::ZERO;
    for (t, &v) in x.iter().enumerate() {
        let m = mask(t);
        if m != F::ZERO {
            sum += v * m;
        }
        n += m.f32();
    }
    if n <= 1.0 {
        return None;
    }
    // `mask.sum() + 1e-8` and `n / (n − 1)` are float32 (the int64 mask promotes to the default dtype).
    let denominator = F::of(f64::from(n + 1e-8_f32));
    let mean = sum / denominator;
    let mut sq = F::ZERO;
    for (t, &v) in x.iter().enumerate() {
        let m = mask(t);
        if m != F::ZERO {
            let d = v - mean;
            sq += d * d * m;
        }
    }
    let bessel = F::of(f64::from(n / (n - 1.0)));
    let var = sq / denominator * bessel;
    let rstd = F::ONE / (var + F::of(1e-8)).sqrt();
    Some(x.iter().map(|&v| (v - mean) * rstd).collect())
}

/// OpenRLHF whitening: biased variance, `(x − mean) · clamp(var, 1e-8)^(−½)`, or only the mean
/// subtraction with `std_norm = false`.
pub fn openrlhf<F: Real>(x: &[F], mask: impl Fn(usize) -> F, std_norm: bool) -> Vec<F> {
    let (mut sum, mut n) = (F::ZERO, F::ZERO);
    for (t, &v) in x.iter().enumerate() {
        sum += v * mask(t);
        n += mask(t);
    }
    if n == F::ZERO {
        return x.to_vec();
    }
    let mean = sum / n;
    if !std_norm {
        return x.iter().map(|&v| v - mean).collect();
    }
    let mut sq = F::ZERO;
    for (t, &v) in x.iter().enumerate() {
        sq += (v - mean) * (v - mean) * mask(t);
    }
    let var = (sq / n).max(F::of(1e-8));
    let rstd = F::ONE / var.sqrt();
    x.iter().map(|&v| (v - mean) * rstd).collect()
}
