//! Batch whitening over all masked positions, in place: verl's `masked_whiten` (unbiased, float32
//! denominators) and OpenRLHF's (biased, clamped variance).

use super::real::Real;

/// Σ(x·m), Σm and Σ((x − mean)²·m) with verl's float32 denominators: `(mean, var·n/(n−1), n)`.
/// The sums accumulate in `f64`: torch's cascade summation is far closer to that than a running
/// float32 sum over millions of tokens would be.
fn verl_moments<F: Real>(x: &[F], mask: Option<&[F]>) -> (F, F, f32) {
    let (mut sum, mut n) = (0.0f64, 0.0f32);
    if let Some(mask) = mask {
        for (&v, &m) in x.iter().zip(mask) {
            if m != F::ZERO {
                sum += (v * m).f64();
            }
            n += m.f32();
        }
    } else {
        for &v in x {
            sum += v.f64();
        }
        n = x.len() as f32;
    }
    // `mask.sum() + 1e-8` and `n / (n − 1)` are float32 (the int64 mask promotes to the default dtype).
    let denominator = F::of(f64::from(n + 1e-8_f32));
    let mean = F::of(sum) / denominator;
    let mut sq = 0.0f64;
    match mask {
        Some(mask) => {
            for (&v, &m) in x.iter().zip(mask) {
                if m != F::ZERO {
                    let d = v - mean;
                    sq += (d * d * m).f64();
                }
            }
        }
        None => {
            for &v in x {
                let d = v - mean;
                sq += (d * d).f64();
            }
        }
    }
    let bessel = F::of(f64::from(n / (n - 1.0)));
    (mean, F::of(sq) / denominator * bessel, n)
}

/// verl `masked_whiten(x, m)`: `x ← (x − mean) · rsqrt(var·n/(n−1) + 1e-8)` at **all** positions.
/// `false` (and `x` untouched) when fewer than two positions are valid: verl raises `ValueError`.
pub fn verl<F: Real>(x: &mut [F], mask: Option<&[F]>) -> bool {
    let (mean, var, n) = verl_moments(x, mask);
    if n <= 1.0 {
        return false;
    }
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
