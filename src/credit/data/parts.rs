//! One part's share of an output, for computing in parts on several threads: a part of the step
//! or token output written row by row ([`Part`], [`StepPart`]), rows cut into parts at multiples of
//! a block ([`cut_rows`]), and a part's rows of the explanation terms ([`TermRows`]). What fills
//! them from a run, group by group or trajectory by trajectory, is `engine::par`.

use std::ops::Range;

use crate::credit::Terms;

/// One part's share of an output: the positions `base..base + out.len()`, written row by row
/// (a trajectory's path, a token row). In order, every position is written, the ones no row
/// covers with `gap` (`NaN` for step credit); otherwise the output was filled with `gap` first
/// and rows are written where they are.
pub struct Part<'a, T> {
    out: &'a mut [T],
    base: usize,
    cursor: usize,
    gap: T,
    in_order: bool,
}

/// A part of the step output (`engine::par::by_groups`, `engine::par::by_trajectories`).
pub type StepPart<'a> = Part<'a, f32>;

impl<'a, T: Copy> Part<'a, T> {
    /// A part holding positions `base..base + out.len()`.
    pub fn new(out: &'a mut [T], base: usize, gap: T, in_order: bool) -> Self {
        Self { out, base, cursor: base, gap, in_order }
    }

    /// In order: `gap` at the positions from the last one written up to `start`.
    #[inline]
    fn gap_to(&mut self, start: usize) {
        if self.in_order && start > self.cursor {
            self.out[self.cursor - self.base..start - self.base].fill(self.gap);
            self.cursor = start;
        }
    }

    /// Writes `values` at the positions of `range` (a row's range; `gap` where the values run
    /// out).
    #[inline]
    pub fn write(&mut self, range: Range<usize>, values: impl Iterator<Item = T>) {
        let gap = self.gap;
        let slots = self.slots(range);
        let mut written = 0;
        for (slot, v) in slots.iter_mut().zip(values) {
            *slot = v;
            written += 1;
        }
        slots[written..].fill(gap);
    }

    /// Writes one value at every position of `range`.
    #[inline]
    pub fn fill(&mut self, range: Range<usize>, value: T) {
        self.slots(range).fill(value);
    }

    /// The positions of `range` to write in place; every one of them must be written.
    #[inline]
    pub fn slots(&mut self, range: Range<usize>) -> &mut [T] {
        self.gap_to(range.start);
        self.cursor = self.cursor.max(range.end);
        &mut self.out[range.start - self.base..range.end - self.base]
    }

    /// Adds `delta` to the value already written at position `at`.
    #[inline]
    pub fn add(&mut self, at: usize, delta: T)
    where
        T: std::ops::AddAssign,
    {
        self.out[at - self.base] += delta;
    }

    /// In order: `gap` from the last position written to the end of the part.
    pub fn finish(mut self) {
        let end = self.base + self.out.len();
        self.gap_to(end);
    }
}

impl<T: Copy> RowsOut<T> for Part<'_, T> {
    #[inline]
    fn prepare(&mut self, ranges: &[Range<usize>], _fill: T) {
        for range in ranges {
            self.slots(range.clone());
        }
    }
    #[inline]
    fn set(&mut self, position: usize, value: T) {
        self.out[position - self.base] = value;
    }
}

/// Cuts `out` (positions `0..out.len()`) with `num_rows` rows, row `i` starting at `start(i)`
/// (increasing), into up to `parts` runs of consecutive rows of about as many positions each:
/// each run's rows, its first position and its share of `out`, in order.
pub fn cut_rows<T>(
    out: &mut [T],
    num_rows: usize,
    parts: usize,
    start: impl Fn(usize) -> usize,
) -> Vec<(Range<usize>, usize, &mut [T])> {
    let n = out.len();
    // Run k starts at the first row that starts at or after k/parts of the positions.
    let mut cuts = vec![0usize];
    for k in 1..parts {
        let (mut lo, mut hi) = (cuts[cuts.len() - 1], num_rows);
        while lo < hi {
            let mid = usize::midpoint(lo, hi);
            if start(mid) < k * n / parts {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo > cuts[cuts.len() - 1] && lo < num_rows {
            cuts.push(lo);
        }
    }
    let mut runs = Vec::with_capacity(cuts.len());
    let mut rest = out;
    let mut base = 0;
    for (k, &first) in cuts.iter().enumerate() {
        let (end_row, end) = cuts.get(k + 1).map_or((num_rows, n), |&next| (next, start(next)));
        let (here, after) = std::mem::take(&mut rest).split_at_mut(end - base);
        runs.push((first..end_row, base, here));
        rest = after;
        base = end;
    }
    runs
}

/// One part's rows of the explanation terms (`first..first + n`), and its path steps' values
/// (`Terms::step_values`, from path position `base`) when the terms keep some.
pub struct TermRows<'a> {
    values: &'a mut [f32],
    first: usize,
    width: usize,
    steps: &'a mut [f32],
    base: usize,
    step_width: usize,
}

impl<'a> TermRows<'a> {
    /// The rows `first..` of `values` (`width` values each) and the path steps `base..` of `steps`
    /// (`step_width` each): one part of a [`Terms`]' rows and step values.
    pub fn new(
        values: &'a mut [f32],
        first: usize,
        width: usize,
        steps: &'a mut [f32],
        base: usize,
        step_width: usize,
    ) -> Self {
        Self { values, first, width, steps, base, step_width }
    }

    /// All rows of `terms`, as one part.
    pub fn all(terms: &'a mut Terms) -> Self {
        let (width, step_width) = (terms.names.len(), terms.step_names.len());
        TermRows { values: &mut terms.values, first: 0, width, steps: &mut terms.step_values, base: 0, step_width }
    }

    /// The values of path step `p` (within this part) as set so far (zeros when none are kept).
    pub fn step(&self, p: usize) -> [f64; 4] {
        let start = (p - self.base) * self.step_width;
        let mut out = [0.0; 4];
        if let Some(slot) = self.steps.get(start..start + self.step_width) {
            for (o, &v) in out.iter_mut().zip(slot) {
                *o = f64::from(v);
            }
        }
        out
    }

    /// Sets the values of path step `p` (within this part), as [`Terms::set_step`].
    #[inline]
    pub fn set_step(&mut self, p: usize, values: &[f64]) {
        let start = (p - self.base) * self.step_width;
        crate::credit::store(self.steps.get_mut(start..start + self.step_width), values);
    }

    /// Sets row `i` (a trajectory index within this part), as [`Terms::set`].
    #[inline]
    pub fn set(&mut self, i: usize, values: &[f64]) {
        let start = (i - self.first) * self.width;
        crate::credit::store(self.values.get_mut(start..start + self.width), values);
    }
}

/// The rows of `terms` cut at consecutive row ranges (the first starting at row 0), one
/// [`TermRows`] per range.
pub fn term_rows(terms: &mut Terms, ranges: impl IntoIterator<Item = Range<usize>>) -> Vec<TermRows<'_>> {
    let width = terms.names.len();
    let mut rest: &mut [f32] = &mut terms.values;
    let mut cut = Vec::new();
    for range in ranges {
        let len = (range.len() * width).min(rest.len());
        let (here, after) = std::mem::take(&mut rest).split_at_mut(len);
        cut.push(TermRows { values: here, first: range.start, width, steps: &mut [], base: 0, step_width: 0 });
        rest = after;
    }
    cut
}

/// Where [`rows_backward`] writes: a `Vec` sized block by block (or already full length), or a
/// part of the step output ([`crate::credit::data::parts::StepPart`]).
pub(crate) trait RowsOut<T> {
    /// Makes room for the next block of rows (ranges in increasing order), `fill` in between.
    fn prepare(&mut self, ranges: &[std::ops::Range<usize>], fill: T);
    /// Writes one position.
    fn set(&mut self, position: usize, value: T);
}

impl<T: Copy> RowsOut<T> for Vec<T> {
    #[inline]
    fn prepare(&mut self, ranges: &[std::ops::Range<usize>], fill: T) {
        let end = ranges.iter().map(|r| r.end).max().unwrap_or(0);
        self.resize(end.max(self.len()), fill);
    }
    #[inline]
    fn set(&mut self, position: usize, value: T) {
        self[position] = value;
    }
}

impl<T: Copy> RowsOut<T> for [T] {
    /// A slice is already as long as the rows it takes.
    #[inline]
    fn prepare(&mut self, _: &[std::ops::Range<usize>], _: T) {}
    #[inline]
    fn set(&mut self, position: usize, value: T) {
        self[position] = value;
    }
}
