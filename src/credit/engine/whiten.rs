//! Batch whitening over all masked positions, in place: verl's `masked_whiten` (unbiased, float32
//! denominators) and OpenRLHF's (biased, clamped variance).

use crate::credit::CreditError;
use crate::credit::data::batch::Batch;
use crate::credit::data::moments::masked_sum;
use crate::credit::data::real::Real;
use crate::credit::params::declare::choice;

/// Σ(x·m), Σm and Σ((x − mean)²·m) with verl's float32 denominators: `(mean, var·n/(n−1), n)`.
/// The sums accumulate in `f64`: torch's cascade summation is far closer to that than a running
/// float32 sum over millions of tokens would be. With `sums` (gathered while `x` was computed)
/// there is no pass over `x`: Σ((x − mean)²·m) is expanded as Σx²m − 2·mean·Σxm + mean²·Σm.
fn verl_moments<F: Real>(x: &[F], mask: Option<&[F]>, sums: Option<Sums>) -> (F, F, f32) {
    // verl sums its integer mask exactly, then divides in float32: the count in f64 (exact: sums
    // of small integers, in blocks on several threads), rounded once (a running float32 sum would
    // stop counting at 2²⁴ positions).
    let count = match mask {
        Some(mask) => masked_sum(mask, None, |m| m.f64()),
        None => x.len() as f64,
    };
    let n = count as f32;
    let sum = sums.map_or_else(|| masked_sum(x, mask, |v| v.f64()), |s| s.sum);
    // `mask.sum() + 1e-8` and `n / (n − 1)` are float32 (the int64 mask promotes to the default dtype).
    let denominator = F::of(f64::from(n + 1e-8_f32));
    let mean = F::of(sum) / denominator;
    let sq = match sums {
        Some(s) => {
            let m = mean.f64();
            (s.sq - 2.0 * m * s.sum + m * m * count).max(0.0)
        }
        None => masked_sum(x, mask, |v| {
            let d = v - mean;
            (d * d).f64()
        }),
    };
    let bessel = F::of(f64::from(n / (n - 1.0)));
    (mean, F::of(sq) / denominator * bessel, n)
}

/// Σx·m and Σx²·m in `f64`, gathered by a kernel while it computes `x` (its recursion adds each
/// value as it writes it, [`Sums::add`]), so that verl's whitening needs no pass over `x` to sum
/// it. A zero mask adds nothing (not 0 · NaN). Sums of `f32` values in `f64` are exact or within
/// an ulp of `f64` whatever their order; rows' sums are added in row order ([`Sums::total`]),
/// so the result does not depend on how the rows were cut into parts.
#[derive(Clone, Copy, Default, Debug)]
pub struct Sums {
    sum: f64,
    sq: f64,
}

impl Sums {
    /// Adds `x` with mask `m`.
    #[inline(always)]
    pub fn add<F: Real>(&mut self, x: F, m: F) {
        let x = x.f64();
        let (term, square) = if m == F::ZERO { (0.0, 0.0) } else { (x * m.f64(), x * x * m.f64()) };
        self.sum += term;
        self.sq += square;
    }

    /// The sums of several rows, added in order.
    pub fn total(rows: impl IntoIterator<Item = Self>) -> Self {
        rows.into_iter().fold(Self::default(), |a, b| Self { sum: a.sum + b.sum, sq: a.sq + b.sq })
    }
}

/// verl `masked_whiten(x, m)`: `x ← (x − mean) · rsqrt(var·n/(n−1) + 1e-8)` at **all** positions.
/// `false` (and `x` untouched) when fewer than two positions are valid: verl raises `ValueError`.
pub fn verl<F: Real>(x: &mut [F], mask: Option<&[F]>) -> bool {
    verl_with(x, mask, None)
}

/// [`verl`] with the sums gathered while `x` was computed ([`Sums`]; `None`: sum `x` here).
pub fn verl_with<F: Real>(x: &mut [F], mask: Option<&[F]>, sums: Option<Sums>) -> bool {
    let Some(scale) = verl_scale(x, mask, sums) else { return false };
    crate::par::chunks_mut(x, |_, part| scale_part(part, scale));
    true
}

/// Step credit whitened in place over tokens, as the trainers whiten (VinePPO, TreePO): each step
/// weighted by its policy tokens (the unbiased n/(n − 1) over tokens), steps without credit left
/// out. The mean and the std it divided by (√(var + 1e-8)), for a scheme's terms; `None` (nothing
/// changed) when fewer than two positions count.
pub fn steps_over_tokens(run: &crate::model::Run, step: &mut [f32]) -> Option<(f64, f64)> {
    let weights = crate::credit::engine::inputs::whitening_weights(run, step);
    let (mean, rstd) = verl_scale(step, Some(&weights), None)?;
    crate::par::chunks_mut(step, |_, part| scale_part(part, (mean, rstd)));
    Some((f64::from(mean), 1.0 / f64::from(rstd)))
}

/// `x ← (x − mean) · rstd` over one part of a batch, with `(mean, rstd)` from [`verl_scale`].
pub fn scale_part<F: Real>(part: &mut [F], scale: (F, F)) {
    for v in part {
        *v = whitened(*v, scale);
    }
}

/// One value whitened, `(v − mean) · rstd`: the operations, in their order, of every whitening
/// here.
#[inline]
fn whitened<F: Real>(v: F, (mean, rstd): (F, F)) -> F {
    (v - mean) * rstd
}

/// verl's whitening of `x` as `(mean, rstd)`, to apply as `(x − mean) · rstd` ([`verl_with`]) in
/// a pass that also does something else; `None` when fewer than two positions are valid.
pub fn verl_scale<F: Real>(x: &[F], mask: Option<&[F]>, sums: Option<Sums>) -> Option<(F, F)> {
    let (mean, var, n) = verl_moments(x, mask, sums);
    (n > 1.0).then(|| (mean, F::ONE / (var + F::of(1e-8)).sqrt()))
}

/// [`verl`] followed by `x ← x · m` (REINFORCE++ masks its whitened advantages), in the same
/// pass: the same operations on each value, one pass over the batch fewer.
pub fn verl_then_mask<F: Real>(x: &mut [F], mask: Option<&[F]>, sums: Option<Sums>) -> bool {
    let Some(mask) = mask else { return verl_with(x, None, sums) };
    let Some(scale) = verl_scale(x, Some(mask), sums) else { return false };
    crate::par::chunks_mut(x, |start, part| {
        for (v, &m) in part.iter_mut().zip(mask.get(start..).unwrap_or(&[])) {
            *v = whitened(*v, scale) * m;
        }
    });
    true
}

/// [`verl_then_mask`] written from `x` into a new buffer, `x` left as it is (REINFORCE++ keeps its
/// returns): one pass, where a copy and then [`verl_then_mask`] take two. The same operations on
/// each value. `None` when fewer than two positions are valid.
pub fn verl_then_mask_from<F: Real>(x: &[F], mask: Option<&[F]>, sums: Option<Sums>) -> Option<Vec<F>> {
    let scale = verl_scale(x, mask, sums)?;
    let mut out = F::scratch(x.len());
    crate::par::chunks_mut(&mut out, |start, part| {
        let x = &x[start..start + part.len()];
        match mask.and_then(|m| m.get(start..start + part.len())) {
            Some(mask) => {
                for ((o, &v), &m) in part.iter_mut().zip(x).zip(mask) {
                    *o = whitened(v, scale) * m;
                }
            }
            None => {
                for (o, &v) in part.iter_mut().zip(x) {
                    *o = whitened(v, scale);
                }
            }
        }
    });
    Some(out)
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
    scale_part(x, (mean, rstd));
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
    scale_part(x, (mean, rstd));
}

choice! {
    /// Which whitening a token estimator ends with (`whiten`).
    pub enum Whiten { Verl = "verl", Openrlhf = "openrlhf", None = "none" }
}

/// Whitens `x` in place over the batch as `whiten` says (OpenRLHF's dividing by the std when
/// `std_norm`); verl's with the sums the kernel gathered while computing `x`, if it did.
pub fn whiten_batch<F: Real>(
    batch: &Batch<'_, F>,
    x: &mut [F],
    (whiten, std_norm): (Whiten, bool),
    id: &str,
    sums: Option<Sums>,
) -> Result<(), CreditError> {
    let mask = batch.mask.as_deref();
    match whiten {
        Whiten::None => Ok(()),
        Whiten::Openrlhf => {
            openrlhf(x, mask, std_norm);
            Ok(())
        }
        Whiten::Verl if verl_with(x, mask, sums) => Ok(()),
        Whiten::Verl => Err(too_few_positions(id)),
    }
}

/// [`whiten_batch`], then `x ← x · m` ([`apply_mask`]); verl's whitening and the mask in one pass.
pub fn whiten_batch_then_mask<F: Real>(
    batch: &Batch<'_, F>,
    x: &mut [F],
    whiten: (Whiten, bool),
    id: &str,
    sums: Option<Sums>,
) -> Result<(), CreditError> {
    if whiten.0 == Whiten::Verl {
        return if verl_then_mask(x, batch.mask.as_deref(), sums) { Ok(()) } else { Err(too_few_positions(id)) };
    }
    whiten_batch(batch, x, whiten, id, None)?;
    apply_mask(batch, x);
    Ok(())
}

/// The error verl raises when it whitens fewer than two valid positions.
pub fn too_few_positions(id: &str) -> CreditError {
    CreditError::Failed {
        scheme: id.to_owned(),
        reason: "whitening needs at least two valid positions in the batch (verl raises here)".to_owned(),
    }
}

/// `x[t] ← x[t] · m[t]`.
pub fn apply_mask<F: Real>(batch: &Batch<'_, F>, x: &mut [F]) {
    if let Some(mask) = batch.mask.as_deref() {
        for (v, &m) in x.iter_mut().zip(mask) {
            *v = *v * m;
        }
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
        let (mean, _, count) = verl_moments(&x, Some(&x), None);
        assert_eq!(count, 16_777_224.0);
        assert!((mean - 1.0).abs() < 1e-6, "{mean}");
    }

    #[test]
    fn whitening_with_gathered_sums_is_whitening_after_summing() {
        // Σx²m − 2·mean·Σxm + mean²·Σm against the two passes over x, with a mask, a NaN behind
        // a zero mask, and an offset that makes the expansion cancel.
        let x: Vec<f32> = (0..10_000).map(|i| 3.0 + ((i * 37 % 101) as f32 - 50.0) / 25.0).collect();
        let mut mask: Vec<f32> = (0..10_000).map(|i| if i % 7 == 3 { 0.0 } else { 1.0 }).collect();
        let mut x_nan = x.clone();
        x_nan[3] = f32::NAN;
        mask[3] = 0.0;
        for mask in [None, Some(&mask[..])] {
            // The NaN only where the mask hides it.
            let source = if mask.is_some() { &x_nan } else { &x };
            let mut sums = Sums::default();
            for (t, &v) in source.iter().enumerate() {
                sums.add(v, mask.map_or(1.0, |m| m[t]));
            }
            let (mut two_pass, mut gathered) = (source.clone(), source.clone());
            assert!(verl(&mut two_pass, mask));
            assert!(verl_with(&mut gathered, mask, Some(sums)));
            for (t, (a, b)) in two_pass.iter().zip(&gathered).enumerate() {
                if t == 3 && mask.is_some() {
                    assert!(a.is_nan() && b.is_nan());
                    continue;
                }
                assert!((a - b).abs() <= 1e-6 * (1.0 + a.abs()), "{t}: {a} vs {b}");
            }
        }
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
