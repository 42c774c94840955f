//! The rows a kernel works on: one row per trajectory, with per-position rewards and a mask, in
//! flat arrays with row offsets (no padding needed, though padded rows work the same way).
//!
//! A run with tokens gives one position per token; a run without gives one position per step
//! (the outcome at the last step, env rewards where asked). Golden tests build batches directly
//! from verl's padded `(B, T)` tensors.

use crate::credit::data::parts::RowsOut;
use crate::credit::data::real::Real;

/// How many rows [`Batch::scores`] sums as one block (a part of them on each thread).
const SCORE_BLOCK: usize = 1024;

/// Rows of positions for the kernels.
#[derive(Clone, Debug, Default)]
pub struct Batch<'a, F: Clone> {
    /// Row `i` covers positions `offsets[i]..offsets[i + 1]`.
    pub offsets: Vec<usize>,
    /// Per-position reward (`token_level_rewards`); `None` when only `row_score` is known.
    pub reward: Option<Vec<F>>,
    /// Per-row total reward when `reward` is absent (the outcome, placed at the last position).
    pub row_score: Option<Vec<F>>,
    /// Per-position mask (1 = counts); `None` means all ones.
    pub mask: Option<Vec<F>>,
    /// Dense group id of each row.
    pub group: Vec<u32>,
    /// Number of groups.
    pub num_groups: usize,
    /// Per-position critic values (GAE), borrowed from the run when it holds them in this order.
    pub values: Option<std::borrow::Cow<'a, [F]>>,
    /// Per-position policy log-probabilities.
    pub logprob: Option<Vec<F>>,
    /// Per-position reference log-probabilities.
    pub ref_logprob: Option<Vec<F>>,
    /// Per-position `Σ_v π(v)²` (optimal token baseline).
    pub sum_pi_squared: Option<Vec<F>>,
    /// Per-row reward of the greedy rollout (ReMax).
    pub reward_baseline: Option<Vec<F>>,
    /// Per-position rollout importance-sampling weights (optimal token baseline).
    pub rollout_is_weights: Option<Vec<F>>,
    /// The caller needs only the advantages (step credit): kernels may leave returns out.
    pub skip_returns: bool,
    /// The longest completion the trainer allowed (TRL's `max_completion_length`), when the run's
    /// metadata records it.
    pub max_length: Option<usize>,
    /// Each reward function's value per row (NaN where it gave none), for TRL's
    /// `normalize_then_sum` (GDPO); empty when unknown.
    pub components: Vec<Vec<F>>,
    /// The reward functions' weights (`reward_weights`), one per component; empty means 1 each.
    pub component_weights: Vec<F>,
    /// Each row's tree record (`u32::MAX`: none); empty when unknown. A scheme that scores a
    /// tree once (prime-rl scores a trace once, whatever its branches) reads it.
    pub tree: Vec<u32>,
    /// Each group's training step (`i64::MIN`: none); empty when unknown. A scheme that follows
    /// a trainer's rule per training batch (slime's grouping) reads it.
    pub group_step: Vec<i64>,
}

impl<F: Real> Batch<'_, F> {
    /// Number of rows.
    pub fn num_rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Hands the large per-position buffers back to the buffer pool (they are dropped for `f64`).
    pub fn recycle(self) {
        let values = self.values.and_then(|v| match v {
            std::borrow::Cow::Owned(v) => Some(v),
            std::borrow::Cow::Borrowed(_) => None,
        });
        for buffer in
            [self.reward, self.mask, values, self.logprob, self.ref_logprob, self.sum_pi_squared].into_iter().flatten()
        {
            F::recycle(buffer);
        }
    }

    /// Number of positions.
    pub fn num_positions(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// Position range of row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i]..self.offsets[i + 1]
    }

    /// Mask value at a position.
    #[inline]
    pub fn m(&self, position: usize) -> F {
        self.cols().m(position)
    }

    /// Reward at a position: the per-position reward, or the row score at the row's last position.
    #[inline]
    pub fn r(&self, row: usize, position: usize) -> F {
        match (&self.reward, &self.row_score) {
            (Some(r), _) => r[position],
            (None, Some(s)) if position + 1 == self.offsets[row + 1] => s[row],
            _ => F::ZERO,
        }
    }

    /// The reward and mask columns as plain slices, for a recursion's closure ([`Cols`]).
    pub fn cols(&self) -> Cols<'_, F> {
        Cols { reward: self.reward.as_deref(), row_score: self.row_score.as_deref(), mask: self.mask.as_deref() }
    }

    /// `s_i = Σ_t r[i,t]` over all positions of the row (verl does not mask this sum), summed in
    /// `f64` lanes and rounded once (`whiten::sum_f64`: torch's cascade sum is far closer to that
    /// than a running sum would be, and the lanes do not wait on each other's additions); blocks
    /// of rows on their own threads (`par::blocks`), each row summed as it would be on one.
    pub fn scores(&self) -> Vec<F> {
        let rows = self.num_rows();
        match (&self.reward, &self.row_score) {
            (Some(r), _) => {
                let block = |block: std::ops::Range<usize>| -> Vec<F> {
                    block.map(|i| F::of(crate::credit::data::moments::sum_f64(&r[self.row(i)]))).collect()
                };
                crate::par::blocks(rows, SCORE_BLOCK, self.num_positions(), block).into_iter().flatten().collect()
            }
            (None, Some(s)) => (0..rows).map(|i| s[i]).collect(),
            _ => vec![F::ZERO; rows],
        }
    }

    /// Whether row `i` stands for its tree record where a trainer scores a tree record once
    /// (prime-rl scores a trace once, whatever its branches): a row of no tree always, a tree's
    /// first row met; `seen` holds the trees met so far (cleared for each group).
    pub fn first_of_tree(&self, i: usize, seen: &mut Vec<u32>) -> bool {
        let tree = self.tree.get(i).copied().unwrap_or(u32::MAX);
        if tree == u32::MAX {
            return true;
        }
        if seen.contains(&tree) {
            return false;
        }
        seen.push(tree);
        true
    }

    /// Rows of each group, in row order (one list for all groups, cut at each group's start); a
    /// row whose group is not one of the batch's (a trajectory in no group) is in none.
    pub fn group_rows(&self) -> GroupRows {
        let mut starts = vec![0usize; self.num_groups + 1];
        for &g in &self.group {
            if let Some(count) = starts.get_mut(g as usize + 1).filter(|_| (g as usize) < self.num_groups) {
                *count += 1;
            }
        }
        for g in 0..self.num_groups {
            starts[g + 1] += starts[g];
        }
        let mut next = starts.clone();
        let mut rows = vec![0usize; starts[self.num_groups]];
        for (i, &g) in self.group.iter().enumerate() {
            if let Some(slot) = next.get_mut(g as usize).filter(|_| (g as usize) < self.num_groups) {
                rows[*slot] = i;
                *slot += 1;
            }
        }
        GroupRows { starts, rows }
    }

    /// Broadcasts one value per row over its positions, times the mask (`a_i · m[i,t]`).
    /// A large batch is cut into runs of rows written on their own threads (`par`).
    pub fn broadcast(&self, per_row: &[F]) -> Vec<F> {
        let n = self.num_positions();
        let rows = per_row.len().min(self.num_rows());
        let parts = crate::par::parts_for(n);
        let ordered = || self.offsets.windows(2).take(rows).all(|w| w[0] <= w[1]);
        if parts <= 1 || !ordered() {
            let rows = per_row.iter().enumerate().map(|(i, &a)| (self.row(i), a));
            return scaled_rows(n, self.mask.as_deref(), rows);
        }
        let mut out = F::scratch(n);
        let items = crate::credit::data::parts::cut_rows(&mut out, rows, parts, |i| self.offsets[i]);
        let mask = self.mask.as_deref();
        crate::par::run_parts(items, |(rows, base, out)| {
            // Every position is written: a row's factor times the mask, zero where no row is.
            let mut part = crate::credit::data::parts::Part::new(out, base, F::ZERO, true);
            for i in rows {
                let range = self.row(i);
                match mask {
                    Some(m) => part.write(range.clone(), m[range].iter().map(|&m| per_row[i] * m)),
                    None => part.fill(range, per_row[i]),
                }
            }
            part.finish();
        });
        out
    }

    /// Dense group ids from arbitrary labels, in first-seen order (verl groups by label value).
    pub fn dense_groups<L: Eq + std::hash::Hash + Clone>(labels: &[L]) -> (Vec<u32>, usize) {
        let mut ids = std::collections::HashMap::new();
        let group = labels
            .iter()
            .map(|l| {
                let next = ids.len() as u32;
                *ids.entry(l.clone()).or_insert(next)
            })
            .collect();
        (group, ids.len())
    }
}

/// What a token-level kernel returns: advantages and returns per position, and per-row terms.
#[derive(Clone, Debug, Default)]
pub struct Output<F: Real> {
    /// Advantages per position.
    pub advantages: Vec<F>,
    /// Returns per position (`None` when they are the advantages, as for outcome estimators).
    pub returns: Option<Vec<F>>,
    /// The terms that explain each row's values.
    pub terms: crate::credit::Terms,
}

impl<F: Real> Drop for Output<F> {
    /// Hands the buffers back to the pool (`f32`), as a dropped `Credit` does: the next kernel run
    /// writes into memory that is already mapped.
    fn drop(&mut self) {
        F::recycle(std::mem::take(&mut self.advantages));
        if let Some(returns) = self.returns.take() {
            F::recycle(returns);
        }
        crate::credit::data::pool::give(std::mem::take(&mut self.terms.values));
    }
}

/// The deterministic benchmark batch that `bench/vs_verl.py` builds the same way in numpy: row `i`
/// has length `1 + (i·2654435761 mod 2³²) mod max_len`, group `i / group_size`, a binary score at its
/// last token (`1` when `i·40503 mod 7 < 3`), critic values `((31i + 17t) mod 101)/100 − ½`, and
/// a mask of ones (no padding is stored).
pub fn synthetic_token_batch(rows: usize, max_len: usize, group_size: usize) -> Batch<'static, f32> {
    let mut offsets = Vec::with_capacity(rows + 1);
    offsets.push(0);
    let mut reward = Vec::new();
    let mut values = Vec::new();
    for i in 0..rows {
        let len = 1 + ((i as u64).wrapping_mul(2_654_435_761) % (1 << 32)) as usize % max_len.max(1);
        let score = if (i as u64 * 40_503) % 7 < 3 { 1.0 } else { 0.0 };
        for t in 0..len {
            reward.push(if t + 1 == len { score } else { 0.0 });
            values.push(((31 * i + 17 * t) % 101) as f32 / 100.0 - 0.5);
        }
        offsets.push(reward.len());
    }
    let n = reward.len();
    Batch {
        offsets,
        reward: Some(reward),
        row_score: None,
        mask: Some(vec![1.0; n]),
        group: (0..rows).map(|i| (i / group_size.max(1)) as u32).collect(),
        num_groups: rows.div_ceil(group_size.max(1)),
        values: Some(values.into()),
        logprob: None,
        ref_logprob: None,
        sum_pi_squared: None,
        reward_baseline: None,
        rollout_is_weights: None,
        skip_returns: false,
        max_length: None,
        components: Vec::new(),
        component_weights: Vec::new(),
        tree: Vec::new(),
        group_step: Vec::new(),
    }
}

/// A batch's reward and mask as slices, copied into a recursion's closure: the compiler then keeps
/// them in registers rather than reloading them from the batch at every position (a write to the
/// output could, as far as it knows, have changed them). A row's reward when only its score is
/// known is carried in the row's state: [`Cols::row_start`] when the row starts, taken by the
/// first [`Cols::r`] (rows are walked back to front, so that is the row's last position), which
/// spares a test of the row's end at every position.
#[derive(Clone, Copy)]
pub struct Cols<'a, F> {
    reward: Option<&'a [F]>,
    row_score: Option<&'a [F]>,
    mask: Option<&'a [F]>,
}

impl<F: Real> Cols<'_, F> {
    /// Mask value at a position.
    #[inline(always)]
    pub fn m(self, position: usize) -> F {
        match self.mask {
            Some(m) => m[position],
            None => F::ONE,
        }
    }

    /// What row `row` starts its pending reward with (its score when there is no reward column).
    #[inline(always)]
    pub fn row_start(self, row: usize) -> F {
        match (self.reward, self.row_score) {
            (None, Some(s)) => s[row],
            _ => F::ZERO,
        }
    }

    /// The reward at `position`, the row's positions visited back to front with `pending` from
    /// [`Cols::row_start`]: the reward column's value, or the pending score (then zero).
    #[inline(always)]
    pub fn r(self, pending: &mut F, position: usize) -> F {
        match self.reward {
            Some(r) => r[position],
            None => std::mem::replace(pending, F::ZERO),
        }
    }
}

/// `n` positions where each row's range holds its factor times the mask (the factor where there is
/// no mask) and the rest zero. Rows from offsets are consecutive ranges, so the output is written
/// once, in order; rows out of order are written in place.
pub fn scaled_rows<F: Real>(
    n: usize,
    mask: Option<&[F]>,
    rows: impl Iterator<Item = (std::ops::Range<usize>, F)>,
) -> Vec<F> {
    let mut out = F::with_room(n);
    for (range, factor) in rows {
        if range.start < out.len() {
            out.resize(n, F::ZERO);
            for t in range {
                out[t] = mask.map_or(factor, |m| factor * m[t]);
            }
            continue;
        }
        out.resize(range.start, F::ZERO);
        match mask {
            Some(m) => out.extend(m[range].iter().map(|&m| factor * m)),
            None => out.resize(range.end, factor),
        }
    }
    out.resize(n, F::ZERO);
    out
}

/// The rows of each group ([`Batch::group_rows`]): `iter()` gives each group's rows in row order.
pub struct GroupRows {
    starts: Vec<usize>,
    rows: Vec<usize>,
}

impl GroupRows {
    /// Each group's rows, group by group.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[usize]> {
        self.starts.windows(2).map(|w| &self.rows[w[0]..w[1]])
    }
}

/// [`rows_backward`] over the batch's rows into a new output (`fill` where no row is): a large
/// batch whose rows follow each other in position order is cut into runs of rows, each on its own
/// thread (`par`), every row walked exactly as it would be on one. When a row is done,
/// `done(row, state, terms)` writes its explanation terms (in the part's rows of `terms`) and
/// returns what the caller keeps of it, handed back in row order as each part's list (not copied
/// into one: `kept.iter().flatten()`).
pub(crate) fn rows_backward_parts<S: Copy, F: Real, R: Send, const OUTLINED: bool>(
    walk: Lockstep<OUTLINED>,
    batch: &Batch<'_, F>,
    fill: F,
    init: impl Fn(usize) -> S + Sync,
    visit: impl Fn(&mut S, usize, usize) -> F + Sync,
    terms: &mut crate::credit::Terms,
    done: impl Fn(usize, S, &mut crate::credit::data::parts::TermRows<'_>) -> R + Sync,
) -> (Vec<F>, Vec<Vec<R>>) {
    let (n, num_rows) = (batch.num_positions(), batch.num_rows());
    let parts = crate::par::parts_for(n);
    let ordered = || (1..num_rows).all(|i| batch.row(i - 1).end <= batch.row(i).start);
    if parts <= 1 || num_rows < parts || !ordered() {
        let mut out = F::with_room(n);
        let mut kept = Vec::with_capacity(num_rows);
        let mut rows = crate::credit::data::parts::TermRows::all(terms);
        rows_backward(
            walk,
            &mut out,
            fill,
            num_rows,
            |i| batch.row(i),
            &init,
            #[inline(always)]
            |s, i, p| visit(s, i, p),
            |i, s| kept.push(done(i, s, &mut rows)),
        );
        out.resize(n.max(out.len()), fill);
        out.truncate(n);
        return (out, vec![kept]);
    }
    let mut out = F::scratch(n);
    let items = crate::credit::data::parts::cut_rows(&mut out, num_rows, parts, |i| batch.row(i).start);
    let term_rows = crate::credit::data::parts::term_rows(terms, items.iter().map(|(rows, _, _)| rows.clone()));
    let items: Vec<_> = items.into_iter().zip(term_rows).collect();
    let kept = crate::par::run_parts(items, |((rows, base, out), mut term_rows)| {
        let mut part = crate::credit::data::parts::Part::new(out, base, fill, true);
        let mut kept = Vec::with_capacity(rows.len());
        let first = rows.start;
        rows_backward(
            walk,
            &mut part,
            fill,
            rows.len(),
            |i| batch.row(first + i),
            |i| init(first + i),
            #[inline(always)]
            |s, i, p| visit(s, first + i, p),
            |i, s| kept.push(done(first + i, s, &mut term_rows)),
        );
        part.finish();
        kept
    });
    (out, kept)
}

/// How many rows [`rows_backward`] walks together.
const LANES: usize = 4;

/// Writes `out[p] = visit(&mut state, row, p)` for every position `p` of every row (`ranges(row)`,
/// in increasing order of position, or `out` already full length; positions no row covers get
/// `fill`), each row from its last position to its first,
/// with `state` starting at `init(row)`; then calls `done(row, state)`, in row order. Four rows
/// are walked in lockstep: kernels whose value at a position depends on the next one (returns,
/// GAE, suffix sums) then run four independent chains of dependent arithmetic instead of one,
/// while each row still sees its positions in the same order as a plain backward loop (the same
/// results, bit for bit). `out` is sized row block by row block, just before it is written (no
/// fill of the whole output first). `walk`: where the lockstep loop runs ([`Lockstep`]).
#[inline]
#[expect(
    clippy::too_many_arguments,
    reason = "one walk: where its loop runs, its output, its rows, a row's three steps"
)]
pub(crate) fn rows_backward<S: Copy, T: Copy, const OUTLINED: bool>(
    _walk: Lockstep<OUTLINED>,
    out: &mut (impl RowsOut<T> + ?Sized),
    fill: T,
    num_rows: usize,
    ranges: impl Fn(usize) -> std::ops::Range<usize>,
    init: impl Fn(usize) -> S,
    mut visit: impl FnMut(&mut S, usize, usize) -> T,
    mut done: impl FnMut(usize, S),
) {
    // The positions all four rows have are walked in lockstep, without a branch per position
    // (rows of very different lengths, as token rows are, would mispredict one); the rest of
    // each row after that. Callers mark `visit` `#[inline(always)]`: it is called in two places.
    let mut row = 0;
    while row < num_rows {
        let lanes = LANES.min(num_rows - row);
        let range: [std::ops::Range<usize>; LANES] =
            std::array::from_fn(|l| if l < lanes { ranges(row + l) } else { 0..0 });
        let mut state: [S; LANES] = std::array::from_fn(|l| init(row + l.min(lanes - 1)));
        out.prepare(&range[..lanes], fill);
        let common = range.iter().map(ExactSizeIterator::len).min().unwrap_or(0);
        if OUTLINED {
            let ends = [range[0].end, range[1].end, range[2].end, range[3].end];
            state = lockstep(out, ends, common, row, state, &mut visit);
        } else {
            for j in 1..=common {
                for l in 0..LANES {
                    let p = range[l].end - j;
                    out.set(p, visit(&mut state[l], row + l, p));
                }
            }
        }
        for l in 0..lanes {
            for p in (range[l].start..range[l].end - common).rev() {
                out.set(p, visit(&mut state[l], row + l, p));
            }
            done(row + l, state[l]);
        }
        row += lanes;
    }
}

/// Where [`rows_backward`] walks the positions its four rows have in common: in its own body
/// (inlined into the caller), or in a function of its own (`lockstep`). In some callers the
/// compiler kept the four states in memory (GiGPO's, seen with `perf annotate`; the states live
/// across calls in the rest of the walk): every step of every chain then waited on a store and a
/// load besides its arithmetic. Out of line, with no call in the loop, they stay in registers, but
/// the loop no longer sees the caller's constants. Which is faster depends on the kernel; each
/// caller says which it takes, measured (`examples/scheme_timing.rs`, `examples/kernel_timings.rs`).
/// It is a type parameter, not a value, so that each caller's walk compiles only its own loop (a
/// value passed down to the threads measured slower: docs/PERFORMANCE.md, "How the kernels are
/// fast").
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lockstep<const OUTLINED: bool>;

/// The lockstep loop in the caller's code.
pub(crate) const INLINED: Lockstep<false> = Lockstep;
/// The lockstep loop in `lockstep`, not inlined.
pub(crate) const OUTLINED: Lockstep<true> = Lockstep;

/// The lockstep part of [`rows_backward`] out of line ([`OUTLINED`]): the last `common`
/// positions of four rows ending at `ends`, from the last, each row's state a local of its own.
#[inline(never)]
fn lockstep<S: Copy, T: Copy>(
    out: &mut (impl RowsOut<T> + ?Sized),
    ends: [usize; LANES],
    common: usize,
    row: usize,
    state: [S; LANES],
    visit: &mut impl FnMut(&mut S, usize, usize) -> T,
) -> [S; LANES] {
    let [mut s0, mut s1, mut s2, mut s3] = state;
    for j in 1..=common {
        let p = ends.map(|end| end - j);
        out.set(p[0], visit(&mut s0, row, p[0]));
        out.set(p[1], visit(&mut s1, row + 1, p[1]));
        out.set(p[2], visit(&mut s2, row + 2, p[2]));
        out.set(p[3], visit(&mut s3, row + 3, p[3]));
    }
    [s0, s1, s2, s3]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_sum_each_row_in_f64_and_round_once() {
        // Row 0: 1 then sixteen values under half an ulp of 1, which a running f32 sum would
        // drop one by one; row 1 empty; row 2 with a NaN; then enough rows for several blocks.
        let mut batch = synthetic_token_batch(3 * SCORE_BLOCK, 7, 4);
        let small = 3e-8f32;
        let mut reward: Vec<f32> = std::iter::once(1.0).chain(std::iter::repeat_n(small, 16)).collect();
        let mut offsets = vec![0, reward.len(), reward.len()];
        reward.extend([0.5, f32::NAN, 0.25]);
        offsets.push(reward.len());
        let rest = batch.reward.take().unwrap_or_default();
        let base = reward.len();
        reward.extend(&rest[batch.offsets[3]..]);
        offsets.extend(batch.offsets[4..].iter().map(|&o| o - batch.offsets[3] + base));
        batch.offsets = offsets;
        batch.reward = Some(reward);
        batch.mask = None;
        let scores = batch.scores();
        assert_eq!(scores.len(), batch.num_rows());
        let running = (0..16).fold(1.0f32, |sum, _| sum + small);
        assert_eq!(running, 1.0, "a running f32 sum loses them");
        assert_eq!(scores[0], (1.0 + 16.0 * f64::from(small)) as f32);
        assert!(scores[0] > 1.0);
        assert_eq!(scores[1], 0.0);
        assert!(scores[2].is_nan());
        let r = batch.reward.as_deref().unwrap_or_default();
        for i in 3..batch.num_rows() {
            let want = r[batch.row(i)].iter().map(|&x| f64::from(x)).sum::<f64>() as f32;
            assert_eq!(scores[i], want, "row {i}");
        }
        // Only scores when there are no per-position rewards.
        batch.reward = None;
        batch.row_score = Some((0..batch.num_rows()).map(|i| i as f32).collect());
        assert_eq!(batch.scores(), batch.row_score.clone().unwrap_or_default());
    }

    #[test]
    fn rows_backward_visits_like_a_plain_backward_loop() {
        // Rows of uneven lengths (some empty), blocks of four rows with positions in common (the
        // lockstep part) and without, a last block of one row, and a gap no row covers: suffix
        // sums and the order in which each row's positions come, with the lockstep loop inlined
        // and out of line.
        let ranges: Vec<std::ops::Range<usize>> =
            vec![0..3, 3..5, 5..8, 8..9, 9..9, 12..14, 14..21, 21..22, 22..25, 25..30, 30..33, 33..40, 40..42];
        let values: Vec<f32> = (0..42).map(|p| p as f32 + 0.5).collect();
        fn walk<const OUTLINED: bool>(walk: Lockstep<OUTLINED>, ranges: &[std::ops::Range<usize>], values: &[f32]) {
            let mut seen = vec![Vec::new(); ranges.len()];
            let mut out = Vec::new();
            let mut totals = Vec::new();
            rows_backward(
                walk,
                &mut out,
                f32::NAN,
                ranges.len(),
                |i| ranges[i].clone(),
                |_| 0.0f32,
                |sum, i, p| {
                    seen[i].push(p);
                    *sum += values[p];
                    *sum
                },
                |i, sum| totals.push((i, sum)),
            );
            assert_eq!(out.len(), 42);
            for (i, range) in ranges.iter().enumerate() {
                assert_eq!(seen[i], range.clone().rev().collect::<Vec<_>>(), "{walk:?}");
                let mut sum = 0.0;
                for p in range.clone().rev() {
                    sum += values[p];
                    assert_eq!(out[p], sum, "{walk:?}");
                }
                assert_eq!(totals[i], (i, sum), "{walk:?}");
            }
            assert!(out[9..12].iter().all(|v| v.is_nan()), "the gap gets the fill value");
        }
        walk(INLINED, &ranges, &values);
        walk(OUTLINED, &ranges, &values);
    }
}
