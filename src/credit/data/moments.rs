//! Every `f64` sum and moment the schemes compute, in one place: torch's float32 mean and std
//! (the trainers' bits), the group statistics with verl's singleton rule, lane-split sums, masked
//! sums in blocks on several threads, and count / Σx / Σx² accumulators. Each keeps its own order
//! of additions, because the schemes that use it are checked bit for bit against a trainer or
//! against `tests/snapshots/credit.txt`.

use super::real::Real;

/// Mean and std of `values` as torch computes them for float32: the mean summed in the input type,
/// the variance accumulated in `f64` (Welford) and rounded once.
pub fn mean_std<F: Real>(values: &[F], unbiased: bool) -> (F, F) {
    let n = values.len();
    // Both sums in one loop: two independent chains, the same additions in the same order.
    let (mut sum, mut sum64) = (F::ZERO, 0.0f64);
    for &v in values {
        sum += v;
        sum64 += v.f64();
    }
    let mean = sum / F::of(n as f64);
    let mean64 = sum64 / n as f64;
    let sq: f64 = values.iter().map(|v| (v.f64() - mean64).powi(2)).sum();
    let dof = if unbiased { n as f64 - 1.0 } else { n as f64 };
    let std = if dof > 0.0 { (sq / dof).sqrt() } else { f64::NAN };
    (mean, F::of(std))
}

/// The sum of `values` as torch sums a contiguous float32 row on the CPU (`ATen`'s `cascade_sum`,
/// `SumKernel.cpp`): fewer than 8 values are summed in four interleaved accumulators (value `i`
/// into `i % 4`), the leftover of the last four into the first, then the four in order; 8 or more
/// as 8-wide vectors summed by the same four-way rule (vector by vector, in levels of 16 when
/// there are many), the values past the last whole vector summed in order from 0, then the eight
/// lanes added to them in order. Checked against torch 2.15's own sums of every row of 1 to 3000
/// values of two families, bit for bit (`tests/golden/torch_sums`, its generator kept; `mean` is
/// this sum over `n`).
pub fn torch_cpu_sum<F: Real>(values: &[F]) -> F {
    const LANES: usize = 8;
    if values.len() < LANES {
        return row_sum(values.len(), |i| values[i], F::ZERO, |a, b| a + b);
    }
    let vectors = values.len() / LANES;
    let lane_add = |a: [F; LANES], b: [F; LANES]| std::array::from_fn(|l| a[l] + b[l]);
    let vector = |j: usize| std::array::from_fn(|l| values[j * LANES + l]);
    let lanes = row_sum(vectors, vector, [F::ZERO; LANES], lane_add);
    let mut total = F::ZERO;
    for &v in &values[vectors * LANES..] {
        total += v;
    }
    for lane in lanes {
        total += lane;
    }
    total
}

/// `ATen`'s `row_sum`: `n` items in four interleaved accumulators (`multi_row_sum` over the whole
/// fours, in cascade levels), the leftover into the first, then the four added in order.
fn row_sum<T: Copy>(n: usize, item: impl Fn(usize) -> T, zero: T, add: impl Fn(T, T) -> T) -> T {
    const ILP: usize = 4;
    const LEVELS: usize = 4;
    let fours = n / ILP;
    let ceil_log2 = if fours <= 1 { 0 } else { usize::BITS - (fours - 1).leading_zeros() } as usize;
    let level_power = (ceil_log2 / LEVELS).max(4);
    let (level_step, level_mask) = (1usize << level_power, (1usize << level_power) - 1);
    let mut acc = [[zero; ILP]; LEVELS];
    let mut i = 0;
    while i + level_step <= fours {
        for _ in 0..level_step {
            for (k, slot) in acc[0].iter_mut().enumerate() {
                *slot = add(*slot, item(i * ILP + k));
            }
            i += 1;
        }
        for j in 1..LEVELS {
            let (lower, upper) = acc.split_at_mut(j);
            for (high, low) in upper[0].iter_mut().zip(lower[j - 1].iter_mut()) {
                *high = add(*high, *low);
                *low = zero;
            }
            if i & (level_mask << (j * level_power)) != 0 {
                break;
            }
        }
    }
    while i < fours {
        for (k, slot) in acc[0].iter_mut().enumerate() {
            *slot = add(*slot, item(i * ILP + k));
        }
        i += 1;
    }
    let mut partial = acc[0];
    for level in &acc[1..] {
        for (slot, &value) in partial.iter_mut().zip(level) {
            *slot = add(*slot, value);
        }
    }
    for i in fours * ILP..n {
        partial[0] = add(partial[0], item(i));
    }
    partial[1..].iter().fold(partial[0], |sum, &p| add(sum, p))
}

/// Mean and std of `values` as torch computes them for float32 on the CPU: the mean
/// [`torch_cpu_sum`] over `n` in the input type, the std about that mean in `f64` (the all-values
/// `std` of `std_var_all_cpu`; a float32 mean that misses equal values by an ulp gives a std above 0).
pub fn torch_mean_std<F: Real>(values: &[F], unbiased: bool) -> (F, F) {
    let n = values.len();
    let mean = torch_cpu_sum(values) / F::of(n as f64);
    let m = mean.f64();
    let sq: f64 = values.iter().map(|v| (v.f64() - m).powi(2)).sum();
    let dof = if unbiased { n as f64 - 1.0 } else { n as f64 };
    let std = if dof > 0.0 { (sq / dof).sqrt() } else { f64::NAN };
    (mean, F::of(std))
}

/// Mean and std of a row as `rows.mean(dim=-1)` then `(rows − mean).std(dim=-1)` give them for
/// float32 on the CPU (slime's group normalization): the mean [`torch_cpu_sum`] over `n`, the std
/// of the centered float32 values accumulated in `f64` (equal values give 0 however the mean missed).
pub fn torch_row_mean_std<F: Real>(values: &[F], unbiased: bool) -> (F, F) {
    let mean = torch_cpu_sum(values) / F::of(values.len() as f64);
    let centered: Vec<F> = values.iter().map(|&v| v - mean).collect();
    (mean, mean_std(&centered, unbiased).1)
}

/// Group mean and std with verl's singleton rule: fewer than two values give mean 0 and std 1.
pub fn group_stats<F: Real>(values: &[F]) -> (F, F) {
    if values.len() < 2 { (F::ZERO, F::ONE) } else { mean_std(values, true) }
}

/// [`group_stats`] (verl's singleton rule, unbiased std) of the present (non-NaN) values of
/// several slices, read in place twice and never copied; the sums run in `f64` in four lanes, so
/// the mean may differ from [`group_stats`]' float32 sum in its last bit. For schemes with no
/// trainer to match bit for bit (the process forms), over groups of many steps.
pub fn group_stats_of<'a, I: Iterator<Item = &'a [f32]>>(slices: impl Fn() -> I) -> [f32; 2] {
    group_stats_of_with(slices, true)
}

/// [`group_stats_of`] with the unbiased (n − 1) or population (n) std.
pub fn group_stats_of_with<'a, I: Iterator<Item = &'a [f32]>>(slices: impl Fn() -> I, unbiased: bool) -> [f32; 2] {
    // Without a missing value the sums need no test per value (a NaN would show in the sum).
    let (mut sum, mut n) = lane_sums::<false>(slices(), f64::from);
    let any_missing = sum.is_nan();
    if any_missing {
        (sum, n) = lane_sums::<true>(slices(), f64::from);
    }
    if n < 2 {
        return [0.0, 1.0];
    }
    let mean = sum / n as f64;
    let square = |v: f32| (f64::from(v) - mean).powi(2);
    let (sq, _) = if any_missing { lane_sums::<true>(slices(), square) } else { lane_sums::<false>(slices(), square) };
    let dof = if unbiased { n as f64 - 1.0 } else { n as f64 };
    [mean as f32, (sq / dof).sqrt() as f32]
}

/// Σ f(v) over the values of the slices (only the present ones with `SKIP_NAN`) and how many
/// were summed, in four `f64` lanes.
#[inline]
fn lane_sums<'a, const SKIP_NAN: bool>(
    slices: impl Iterator<Item = &'a [f32]>,
    f: impl Fn(f32) -> f64,
) -> (f64, usize) {
    let (mut sum, mut count) = ([0.0f64; 4], [0usize; 4]);
    let mut add = |l: usize, v: f32| {
        if SKIP_NAN {
            sum[l] += if v.is_nan() { 0.0 } else { f(v) };
            count[l] += usize::from(!v.is_nan());
        } else {
            sum[l] += f(v);
        }
    };
    let mut all = 0;
    for slice in slices {
        let chunks = slice.chunks_exact(4);
        all += slice.len();
        for &v in chunks.remainder() {
            add(0, v);
        }
        for chunk in chunks {
            for (l, &v) in chunk.iter().enumerate() {
                add(l, v);
            }
        }
    }
    let n = if SKIP_NAN { count.iter().sum() } else { all };
    ((sum[0] + sum[1]) + (sum[2] + sum[3]), n)
}

/// Σ f(item) in `f64`, in four interleaved partial sums so the additions do not wait on each
/// other (a serial sum over a group's steps waits on every add).
#[inline]
pub fn lane_sum<T: Copy>(items: &[T], f: impl Fn(T) -> f64) -> f64 {
    let mut lanes = [0.0f64; 4];
    let chunks = items.chunks_exact(4);
    let rest: f64 = chunks.remainder().iter().map(|&x| f(x)).sum();
    for chunk in chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane += f(x);
        }
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + rest
}

/// Σ f(x\[t\]) over the positions with a non-zero mask (each term times its mask), in `f64`, in
/// four interleaved partial sums so the additions do not wait on each other; a large batch as
/// the sums of blocks on several threads, added in order (`par::block_sum`: the same sum
/// whatever the number of threads; one block is this very sum).
pub fn masked_sum<F: Real>(x: &[F], mask: Option<&[F]>, f: impl Fn(F) -> f64 + Sync) -> f64 {
    let n = mask.map_or(x.len(), |m| x.len().min(m.len()));
    crate::par::block_sum(n, |range| block_lane_sum(&x[range.clone()], mask.map(|m| &m[range]), &f))
}

/// How many partial sums [`block_lane_sum`] keeps: enough independent additions in flight to
/// keep up with memory (each `f64` add waits on its lane's previous one). The sums of `f32`
/// values in `f64` are exact, or within an ulp of `f64`, whatever their order.
const SUM_LANES: usize = 16;

/// Σ x in `f64`, in `SUM_LANES` interleaved partial sums added pairwise (one block of
/// [`masked_sum`], on this thread): a row's score ([`crate::credit::data::batch::Batch::scores`]).
pub fn sum_f64<F: Real>(x: &[F]) -> f64 {
    block_lane_sum(x, None, &|v: F| v.f64())
}

/// [`masked_sum`] over one block (its first position a multiple of [`SUM_LANES`]).
fn block_lane_sum<F: Real>(x: &[F], mask: Option<&[F]>, f: &impl Fn(F) -> f64) -> f64 {
    let mut lanes = [0.0f64; SUM_LANES];
    if let Some(mask) = mask {
        // Position i in lane i mod SUM_LANES, as below; a zero mask adds nothing (not 0 · NaN).
        let term = |v: F, m: F| if m == F::ZERO { 0.0 } else { f(v) * m.f64() };
        let n = x.len().min(mask.len());
        let (x, mask) = (&x[..n], &mask[..n]);
        let whole = n - n % SUM_LANES;
        for (xs, ms) in x[..whole].chunks_exact(SUM_LANES).zip(mask[..whole].chunks_exact(SUM_LANES)) {
            for l in 0..SUM_LANES {
                lanes[l] += term(xs[l], ms[l]);
            }
        }
        for i in whole..n {
            lanes[i % SUM_LANES] += term(x[i], mask[i]);
        }
    } else {
        let chunks = x.chunks_exact(SUM_LANES);
        let rest = chunks.remainder();
        for chunk in chunks {
            for (lane, &v) in lanes.iter_mut().zip(chunk) {
                *lane += f(v);
            }
        }
        for (lane, &v) in lanes.iter_mut().zip(rest) {
            *lane += f(v);
        }
    }
    // Pairwise: lane l with lane l + half, halving until one is left.
    let mut width = SUM_LANES;
    while width > 1 {
        width /= 2;
        for l in 0..width {
            lanes[l] += lanes[l + width];
        }
    }
    lanes[0]
}

/// Σ count, Σ x and Σ x² over `values`, each value taken as `(count, x) = as_f64(v)`, in four
/// lanes (value i in lane i mod 4, the rest after them), each moment in an array of lanes of its
/// own (not four records of three), which the compiler keeps in vector registers.
#[inline(always)]
fn lane_moments(values: &[f32], as_f64: impl Fn(f32) -> (f64, f64)) -> [f64; 3] {
    let (mut count, mut sum, mut sum_sq) = ([0.0f64; 4], [0.0f64; 4], [0.0f64; 4]);
    let chunks = values.chunks_exact(4);
    let mut rest = [0.0f64; 3];
    for &v in chunks.remainder() {
        let (c, x) = as_f64(v);
        rest[0] += c;
        rest[1] += x;
        rest[2] += x * x;
    }
    for chunk in chunks {
        for (lane, &v) in chunk.iter().enumerate() {
            let (c, x) = as_f64(v);
            count[lane] += c;
            sum[lane] += x;
            sum_sq[lane] += x * x;
        }
    }
    let total = |lanes: [f64; 4], rest: f64| (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + rest;
    [total(count, rest[0]), total(sum, rest[1]), total(sum_sq, rest[2])]
}

/// Count, sum and sum of squares of the finite values seen, in `f64`: the batch mean and
/// population variance for whitening, gathered while the values are written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Moments {
    count: usize,
    sum: f64,
    sum_sq: f64,
}

impl Moments {
    /// Adds `count` copies of a value (ignored unless finite).
    #[inline]
    pub fn add_many(&mut self, value: f32, count: usize) {
        if count > 0 && value.is_finite() {
            let v = f64::from(value);
            let n = count as f64;
            self.count += count;
            self.sum += n * v;
            self.sum_sq += n * v * v;
        }
    }

    /// Adds every finite value of a slice (count, sum and sum of squares in one pass, four lanes).
    #[inline]
    pub fn add_slice(&mut self, values: &[f32]) {
        // First as if every value were finite, which the compiler does in vector lanes: the sums
        // of finite `f32` values in `f64` are finite, and a value that is not makes them not.
        // Only then is the slice read again with the values that are not finite left out (the
        // sums of the finite ones in the same lanes and order: the same bits).
        let [_, sum, sum_sq] = lane_moments(values, |v| (1.0, f64::from(v)));
        if sum.is_finite() && sum_sq.is_finite() {
            self.count += values.len();
            self.sum += sum;
            self.sum_sq += sum_sq;
            return;
        }
        // A value that is not finite is masked to 0 through its bits (exponent all ones), which
        // the compiler does four at a time; a `select` on the widened `f64` came out as a branch.
        let [count, sum, sum_sq] = lane_moments(values, |v| {
            let finite = u32::from((v.to_bits() & 0x7fff_ffff) < 0x7f80_0000);
            (f64::from(finite), f64::from(f32::from_bits(v.to_bits() & finite.wrapping_neg())))
        });
        self.count += count as usize;
        self.sum += sum;
        self.sum_sq += sum_sq;
    }

    /// Count, mean and sum of squares, `None` without a finite value.
    pub fn count_mean_sum_sq(&self) -> Option<(f64, f64, f64)> {
        (self.count > 0).then(|| (self.count as f64, self.sum / self.count as f64, self.sum_sq))
    }

    /// These moments and `other`'s together.
    #[must_use]
    pub fn merge(self, other: &Self) -> Self {
        Self { count: self.count + other.count, sum: self.sum + other.sum, sum_sq: self.sum_sq + other.sum_sq }
    }

    /// The mean and `1/√(var + 1e-8)` that whitening uses (population variance), in `f32`;
    /// `None` without a finite value.
    pub fn mean_scale(&self) -> Option<(f32, f32)> {
        if self.count == 0 {
            return None;
        }
        let n = self.count as f64;
        let mean = self.sum / n;
        let var = (self.sum_sq / n - mean * mean).max(0.0);
        Some((mean as f32, (1.0 / (var + 1e-8).sqrt()) as f32))
    }

    /// Z-scores `values` in place with these moments (ε = 1e-8 inside the square root);
    /// non-finite values stay as they are.
    pub fn whiten(&self, values: &mut [f32]) {
        let Some((mean, scale)) = self.mean_scale() else { return };
        for v in values.iter_mut() {
            // NaN and ±∞ come out as they went in (scale > 0).
            *v = (*v - mean) * scale;
        }
    }
}

/// A group's token-weighted mean and std from (Σ w, Σ w·p, Σ w·p²): population variance, +1e−8,
/// std := 1 when the group has at most one valid token.
pub fn weighted_mean_std([total, sum, squares]: [f64; 3]) -> (f64, f64) {
    if total <= 0.0 {
        return (0.0, 1.0);
    }
    let mean = sum / total;
    let var = (squares / total - mean * mean).max(0.0);
    (mean, if total <= 1.0 { 1.0 } else { (var + 1e-8).sqrt() })
}

/// (count, Σ v, Σ v²) over the present values of a path's steps (`NaN`: missing), in four
/// interleaved partial sums. A missing value is masked to 0 through its bits, which the compiler
/// does four at a time (a `select` on the `f64` it is widened to came out as a branch per step).
#[inline]
pub fn present_sums(values: &[f32]) -> [f64; 3] {
    // All ones for a present value, 0 for NaN (exponent all ones and a nonzero mantissa).
    let mask = |v: f32| u32::from((v.to_bits() & 0x7fff_ffff) <= 0x7f80_0000).wrapping_neg();
    let (mut count, mut sum, mut squares) = ([0u32; 4], [0.0f64; 4], [0.0f64; 4]);
    let chunks = values.chunks_exact(4);
    let rest = chunks.remainder();
    for chunk in chunks {
        for j in 0..4 {
            let m = mask(chunk[j]);
            let x = f64::from(f32::from_bits(chunk[j].to_bits() & m));
            count[j] += m & 1;
            sum[j] += x;
            squares[j] += x * x;
        }
    }
    let (mut n, mut s, mut q) = (0u32, 0.0f64, 0.0f64);
    for &v in rest {
        let m = mask(v);
        let x = f64::from(f32::from_bits(v.to_bits() & m));
        n += m & 1;
        s += x;
        q += x * x;
    }
    let add = |lanes: [f64; 4], rest: f64| (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + rest;
    [f64::from(count.iter().sum::<u32>() + n), add(sum, s), add(squares, q)]
}

/// Mean and unbiased std of weighted values (each counted `w` times), with verl's singleton
/// rule (fewer than two give mean 0, std 1); the sums in `f64`.
pub fn weighted_stats(values: impl Iterator<Item = (f64, f64)> + Clone) -> [f32; 2] {
    let (n, sum) = values.clone().fold((0.0, 0.0), |(n, sum), (v, w)| (n + w, sum + w * v));
    if n < 2.0 {
        return [0.0, 1.0];
    }
    let mean = sum / n;
    let sq: f64 = values.map(|(v, w)| w * (v - mean).powi(2)).sum();
    [mean as f32, (sq / (n - 1.0)).sqrt() as f32]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// torch 2.15's own sums of every row of 1 to 3000 values of two families
    /// (`tests/golden/torch_sums/generate.py`, its output beside it), bit for bit.
    #[test]
    fn torch_cpu_sum_gives_torchs_own_sums_of_rows_of_1_to_3000_values() {
        let golden: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/golden/torch_sums/sums.json")).unwrap();
        let mut compared = 0;
        for (family, sums) in golden["sums"].as_object().unwrap() {
            let sums = sums.as_array().unwrap();
            assert_eq!(sums.len(), 3000, "{family}");
            for (k, bits) in sums.iter().enumerate() {
                let n = k + 1;
                let xs: Vec<f32> = (0..n)
                    .map(|i| match family.as_str() {
                        "mod" => ((i as f64 * 0.37) % 1.3 + 0.01) as f32,
                        _ => (((i * 7919) % 10007) as f64 / 1000.0 - 5.0) as f32,
                    })
                    .collect();
                assert_eq!(u64::from(torch_cpu_sum(&xs).to_bits()), bits.as_u64().unwrap(), "{family}: {n} values");
                compared += 1;
            }
        }
        assert_eq!(compared, 6000);
    }

    #[test]
    fn torch_cpu_sum_gives_torchs_own_float32_sums() {
        // torch 2.15's `torch.tensor(xs, dtype=torch.float32).sum()` on the CPU, as bits, for
        // xs[i] = ((0.37·i) mod 1.3) + 0.01; an in-order sum differs for 5, 15, 33, 100 and 600.
        for (n, bits) in [
            (5, 0x401c_cccc),
            (7, 0x407c_28f6),
            (15, 0x4126_6667),
            (16, 0x412c_28f5),
            (33, 0x41b6_51ec),
            (100, 0x4286_3334),
            (600, 0x43c7_8ccd),
        ] {
            let xs: Vec<f32> = (0..n).map(|i| ((f64::from(i) * 0.37) % 1.3 + 0.01) as f32).collect();
            assert_eq!(torch_cpu_sum(&xs).to_bits(), bits, "{n} values");
        }
        // Sixteen rewards of 0.9: torch's mean is 0.90000004, one ulp above the reward.
        let (mean, std) = torch_mean_std(&[0.9f32; 16], true);
        assert_eq!((torch_cpu_sum(&[0.9f32; 16]).to_bits(), mean), (0x4166_6667, 0.900_000_04));
        assert!(std > 0.0, "the std about a mean that missed is above 0, as torch's is");
        assert_eq!(torch_row_mean_std(&[0.9f32; 16], true).1, 0.0, "the centered rows' std is 0");
    }

    #[test]
    fn lane_sum_adds_every_item() {
        let items: Vec<f32> = (1..=11).map(|i| i as f32).collect();
        assert_eq!(lane_sum(&items, f64::from), 66.0);
        assert_eq!(lane_sum(&items[..3], |x| f64::from(x) * 2.0), 12.0);
        assert_eq!(lane_sum::<f32>(&[], f64::from), 0.0);
    }

    #[test]
    fn group_stats_of_slices_agrees_with_group_stats_and_skips_missing_values() {
        let a = [0.1f32, 0.9, f32::NAN, 0.4, 0.7];
        let b = [0.3f32, 0.2, 0.8, 0.5, 0.6, 0.0, 1.0];
        let present: Vec<f32> = a.iter().chain(&b).copied().filter(|v| !v.is_nan()).collect();
        let (mean, std) = group_stats(&present);
        let [m, s] = group_stats_of(|| [&a[..], &b[..]].into_iter());
        assert!((m - mean).abs() < 1e-6 && (s - std).abs() < 1e-6, "{m} {s} vs {mean} {std}");
        // Without missing values (the fast path) too.
        let (mean, std) = group_stats(&b);
        let [m, s] = group_stats_of(|| std::iter::once(&b[..]));
        assert!((m - mean).abs() < 1e-6 && (s - std).abs() < 1e-6);
        // verl's singleton rule.
        assert_eq!(group_stats_of(|| std::iter::once(&[f32::NAN, 0.5][..])), [0.0, 1.0]);
    }

    #[test]
    fn moments_of_a_slice_count_only_its_finite_values() {
        let finite: Vec<f32> = (0..23).map(|i| (i * 37 % 11) as f32 / 3.0 - 1.7).collect();
        // The finite values one by one, and the lanes' order by hand (value i in lane i mod 4).
        let by_lanes = |values: &[f32]| {
            let (mut lanes, mut rest) = ([[0.0f64; 2]; 4], [0.0f64; 2]);
            let whole = values.len() / 4 * 4;
            for (i, &v) in values.iter().enumerate().filter(|(_, v)| v.is_finite()) {
                let x = f64::from(v);
                let acc = if i < whole { &mut lanes[i % 4] } else { &mut rest };
                acc[0] += x;
                acc[1] += x * x;
            }
            let total = |k: usize| (lanes[0][k] + lanes[1][k]) + (lanes[2][k] + lanes[3][k]) + rest[k];
            (values.iter().filter(|v| v.is_finite()).count(), total(0), total(1))
        };
        let mut with_gaps = finite.clone();
        with_gaps[2] = f32::NAN;
        with_gaps[9] = f32::INFINITY;
        with_gaps[22] = f32::NEG_INFINITY;
        for values in [&finite[..], &with_gaps[..], &finite[..3], &[f32::NAN; 5][..], &[]] {
            let mut m = Moments::default();
            m.add_slice(values);
            let (count, sum, sum_sq) = by_lanes(values);
            assert_eq!((m.count, m.sum.to_bits(), m.sum_sq.to_bits()), (count, sum.to_bits(), sum_sq.to_bits()));
        }
    }
}
