//! Credit computed in parts on several threads. A scheme whose groups are independent (its
//! statistics are per group, or per group and then reduced) hands [`by_groups`] (or
//! [`by_trajectories`]) the body of its loop; when the groups follow each other in trajectory order
//! (as logs write them), they are cut into runs of consecutive groups (a few for each thread, which
//! the threads take in turn as they finish one, so that a core busy with other work holds up no
//! more than the part it is on), each writing its own disjoint part of the step output and of the
//! explanation terms. Token kernels cut their rows the same way ([`cut_rows`]), elementwise passes
//! their output ([`chunks_mut`]), and whole-batch sums are sums of fixed blocks added in order
//! ([`block_sum`]).
//! Every group, row and block is computed by the same code whichever part it falls in, so the
//! credit does not depend on the number of threads (`tests/it/credit_threads.rs` checks it). On the
//! web, and on runs too small to be worth it, there is one part, on the calling thread.

use std::cell::Cell;
use std::ops::Range;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::credit::Terms;
use crate::model::Run;

/// Path steps a part must have before a run is cut into parts (a thread is not worth less).
const MIN_STEPS_PER_PART: usize = 1 << 20;

thread_local! {
    /// How computations started on this thread cut their runs: (the least path steps in a part,
    /// the most parts; 0: as many as the machine has cores). Set for a call by [`with_split`],
    /// and handed to the threads a computation starts.
    static SPLIT: Cell<(usize, usize)> = const { Cell::new((MIN_STEPS_PER_PART, 0)) };
}

/// Runs `f` with runs cut into parts of at least `min_steps` path steps, at most `max_parts` of
/// them (0: as many as the machine has cores), then puts back the split there was. Only the
/// computations `f` starts on this thread (and the threads they start) see it, so tests that
/// cut tiny runs can run side by side with others. For tests (which cut tiny runs to check the
/// credit does not change) and benchmarks (`max_parts` 1 measures one thread).
pub fn with_split<R>(min_steps: usize, max_parts: usize, f: impl FnOnce() -> R) -> R {
    /// Puts the split back when `f` returns or panics.
    struct Restore((usize, usize));
    impl Drop for Restore {
        fn drop(&mut self) {
            SPLIT.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SPLIT.with(|s| s.replace((min_steps.max(1), max_parts))));
    f()
}

/// How many threads a computation may use: the machine's cores (at most 8), or what
/// [`with_split`] allows; one on the web.
pub fn max_parts() -> usize {
    if cfg!(target_arch = "wasm32") {
        return 1;
    }
    match SPLIT.with(Cell::get).1 {
        0 => cores().min(8),
        n => n,
    }
}

/// How many parts each thread's share of a computation is cut into. The threads take the next
/// part as each finishes one, so a thread whose core is also busy with other work (another
/// program, the UI, a neighbour on the host) ends up with fewer parts and the others with more,
/// instead of the whole computation waiting for its one equal share.
const PARTS_PER_THREAD: usize = 4;

/// How many parts a computation over `len` positions is cut into: `PARTS_PER_THREAD` for each
/// thread it is worth (one per [`with_split`]'s minimum of positions, at most [`max_parts`]), or
/// one part when one thread does it all.
pub fn parts_for(len: usize) -> usize {
    match (len / SPLIT.with(Cell::get).0).clamp(1, max_parts()) {
        1 => 1,
        threads => threads * PARTS_PER_THREAD,
    }
}

/// How many threads compute `parts` parts: one per part, at most [`max_parts`] (a part cut
/// smaller than [`parts_for`] asks is still worth its thread: the parts of a few whole blocks).
fn threads_for(parts: usize) -> usize {
    parts.clamp(1, max_parts())
}

/// Runs `work` on each item, on this thread and (for more than one item) on scoped threads, each
/// taking the next item not yet taken (the items of a thread that could not be started go to the
/// others), and returns the results in order. A panic in a part is raised again here. On the web,
/// one after the other on this thread.
pub fn run_parts<I: Send, R: Send>(items: Vec<I>, work: impl Fn(I) -> R + Sync) -> Vec<R> {
    let threads = threads_for(items.len());
    if threads <= 1 {
        return items.into_iter().map(&work).collect();
    }
    on_threads(items, threads, work)
}

/// The web has one thread.
#[cfg(target_arch = "wasm32")]
fn cores() -> usize {
    1
}

/// The cores this process may use (asked once: the answer reads the process's CPU limits).
#[cfg(not(target_arch = "wasm32"))]
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}

/// The web has no threads: the parts one after the other.
#[cfg(target_arch = "wasm32")]
fn on_threads<I: Send, R: Send>(items: Vec<I>, _threads: usize, work: impl Fn(I) -> R + Sync) -> Vec<R> {
    items.into_iter().map(work).collect()
}

/// Computes the items on `threads` threads, this one among them. The only place in the core that
/// starts threads (native only: `tests/it/architecture.rs` checks that every use of the standard
/// thread module is in a function the web build leaves out).
#[cfg(not(target_arch = "wasm32"))]
fn on_threads<I: Send, R: Send>(items: Vec<I>, threads: usize, work: impl Fn(I) -> R + Sync) -> Vec<R> {
    let cells: Vec<std::sync::Mutex<(Option<I>, Option<R>)>> =
        items.into_iter().map(|i| std::sync::Mutex::new((Some(i), None))).collect();
    let compute = |cell: &std::sync::Mutex<(Option<I>, Option<R>)>| {
        let item = cell.lock().ok().and_then(|mut c| c.0.take());
        if let Some(item) = item {
            let result = work(item);
            if let Ok(mut c) = cell.lock() {
                c.1 = Some(result);
            }
        }
    };
    // Each thread takes the next item until none is left, cutting what it computes as this one does.
    let split = SPLIT.with(Cell::get);
    let next = AtomicUsize::new(0);
    let take_items = || {
        while let Some(cell) = cells.get(next.fetch_add(1, Ordering::Relaxed)) {
            compute(cell);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            // Not started: the others take its items.
            let part = || {
                SPLIT.with(|s| s.set(split));
                take_items();
            };
            if let Err(err) = std::thread::Builder::new().name("credit part".to_owned()).spawn_scoped(scope, part) {
                log::warn!("could not start a credit thread ({err}); the others take its parts");
            }
        }
        take_items();
    });
    for cell in &cells {
        compute(cell);
    }
    cells.into_iter().filter_map(|c| c.into_inner().ok().and_then(|c| c.1)).collect()
}

/// Runs `work` on each item on other threads and hands the results to `consume` on this thread,
/// in order, each as soon as it and those before it are done, while the later ones are still
/// being worked on (a log's pieces are parsed on every core while this thread adds the parsed
/// records to the run). What `consume` returns is dropped on the thread that made the result
/// (memory is cheaper to free on the thread that allocated it). A panic in `work` is raised
/// again here. On the web, and for one item or one core, one after the other on this thread.
pub fn pipeline<I: Send, R: Send, G: Send>(
    items: Vec<I>,
    work: impl Fn(I) -> R + Sync,
    mut consume: impl FnMut(R) -> G,
) {
    let threads = max_parts().min(items.len());
    if threads <= 1 {
        for item in items {
            drop(consume(work(item)));
        }
        return;
    }
    in_pipeline(items, threads, work, consume);
}

/// The web has no threads: the items one after the other.
#[cfg(target_arch = "wasm32")]
fn in_pipeline<I: Send, R: Send, G: Send>(
    items: Vec<I>,
    _threads: usize,
    work: impl Fn(I) -> R + Sync,
    mut consume: impl FnMut(R) -> G,
) {
    for item in items {
        drop(consume(work(item)));
    }
}

/// [`pipeline`] on `threads` worker threads, this one consuming. A worker that panics marks the
/// pipeline broken and wakes this thread, which stops waiting; the scope then raises the panic.
#[cfg(not(target_arch = "wasm32"))]
fn in_pipeline<I: Send, R: Send, G: Send>(
    items: Vec<I>,
    threads: usize,
    work: impl Fn(I) -> R + Sync,
    mut consume: impl FnMut(R) -> G,
) {
    use std::sync::atomic::AtomicBool;
    use std::sync::{Condvar, Mutex};
    /// A result, and the worker that made it.
    type Slot<R> = (Mutex<Option<(R, usize)>>, Condvar);
    let n = items.len();
    let inputs: Vec<Mutex<Option<I>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let outputs: Vec<Slot<R>> = (0..n).map(|_| (Mutex::new(None), Condvar::new())).collect();
    // What `consume` returned, for each worker to drop (the last one: this thread's own).
    let garbage: Vec<Mutex<Vec<G>>> = (0..=threads).map(|_| Mutex::new(Vec::new())).collect();
    let next = AtomicUsize::new(0);
    let broken = AtomicBool::new(false);
    let consumed = AtomicBool::new(false);
    let drop_garbage = |me: usize| {
        let mine = garbage.get(me).and_then(|g| g.lock().ok().map(|mut g| std::mem::take(&mut *g)));
        drop(mine);
    };
    let worker = |me: usize| {
        // Marks the pipeline broken if this worker unwinds, so the consumer does not wait forever.
        struct OnUnwind<'a, R>(&'a AtomicBool, &'a [Slot<R>]);
        impl<R> Drop for OnUnwind<'_, R> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.store(true, Ordering::SeqCst);
                    for (slot, ready) in self.1 {
                        let _guard = slot.lock();
                        ready.notify_all();
                    }
                }
            }
        }
        let _unwind = OnUnwind(&broken, &outputs);
        loop {
            drop_garbage(me);
            let i = next.fetch_add(1, Ordering::Relaxed);
            let (Some(input), Some((slot, ready))) = (inputs.get(i), outputs.get(i)) else { break };
            let Some(item) = input.lock().ok().and_then(|mut i| i.take()) else { continue };
            let result = work(item);
            if let Ok(mut slot) = slot.lock() {
                *slot = Some((result, me));
            }
            ready.notify_one();
        }
        // The last results are still being consumed: drop what they leave as it comes.
        while !consumed.load(Ordering::SeqCst) && !broken.load(Ordering::SeqCst) {
            drop_garbage(me);
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        drop_garbage(me);
    };
    std::thread::scope(|scope| {
        let mut started = 0;
        for me in 0..threads {
            match std::thread::Builder::new().name("load part".to_owned()).spawn_scoped(scope, move || worker(me)) {
                Ok(_) => started += 1,
                Err(err) => log::warn!("could not start a load thread ({err}); the others take its parts"),
            }
        }
        if started == 0 {
            consumed.store(true, Ordering::SeqCst);
            worker(threads);
        }
        'consume: for (slot, ready) in &outputs {
            let Ok(mut guard) = slot.lock() else { break };
            while guard.is_none() && !broken.load(Ordering::SeqCst) {
                let Ok(next_guard) = ready.wait(guard) else { break 'consume };
                guard = next_guard;
            }
            let Some((result, maker)) = guard.take() else { break };
            drop(guard);
            let left = consume(result);
            if let Some(Ok(mut queue)) = garbage.get(maker).map(Mutex::lock) {
                queue.push(left);
            }
        }
        consumed.store(true, Ordering::SeqCst);
    });
}

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

/// A part of the step output ([`by_groups`], [`by_trajectories`]).
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

impl<T: Copy> crate::credit::engine::batch::RowsOut<T> for Part<'_, T> {
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

/// One part's rows of the explanation terms (`first..first + n`).
pub struct TermRows<'a> {
    values: &'a mut [f32],
    first: usize,
    width: usize,
}

impl<'a> TermRows<'a> {
    /// All rows of `terms`, as one part.
    pub fn all(terms: &'a mut Terms) -> Self {
        let width = terms.names.len();
        TermRows { values: &mut terms.values, first: 0, width }
    }

    /// Sets row `i` (a trajectory index within this part), as [`Terms::set`].
    #[inline]
    pub fn set(&mut self, i: usize, values: &[f64]) {
        let start = (i - self.first) * self.width;
        if let Some(slot) = self.values.get_mut(start..start + self.width) {
            for (s, &v) in slot.iter_mut().zip(values) {
                *s = v as f32;
            }
        }
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
        cut.push(TermRows { values: here, first: range.start, width });
        rest = after;
    }
    cut
}

/// Step credit from `body`, called with a range of group indices, that range's share of the step
/// output and its rows of `terms` (made by [`Terms::for_rows`] for every trajectory); `body`
/// writes every trajectory of its groups and returns what it gathered (partial sums, …), in group
/// order across the parts. The groups are cut into parts of consecutive groups, computed on the
/// threads ([`run_parts`]), when they follow each other in trajectory order and the run is large
/// enough; else one part over a `NaN`-filled output. Positions of trajectories in no group stay `NaN`.
pub fn by_groups<R: Send>(
    run: &Run,
    terms: &mut Terms,
    body: impl Fn(Range<usize>, &mut StepPart<'_>, &mut TermRows<'_>) -> R + Sync,
) -> (Vec<f32>, Vec<R>) {
    let tr = &run.trajectories;
    let len = tr.path_nodes.len();
    let num_groups = run.groups.len();
    if !crate::credit::engine::inputs::groups_in_trajectory_order(run) {
        let mut step = crate::credit::engine::pool::filled(len, f32::NAN);
        let mut part = StepPart::new(&mut step, 0, f32::NAN, false);
        let mut rows = TermRows::all(terms);
        let result = body(0..num_groups, &mut part, &mut rows);
        return (step, vec![result]);
    }
    // Cut points: the first group whose first member starts at or after k/parts of the steps.
    let parts = parts_for(len);
    let mut cuts = vec![(0usize, 0usize, 0usize)]; // (group, path position, trajectory row)
    for g in 0..num_groups {
        if cuts.len() == parts {
            break;
        }
        let Some(&first) = run.groups.members(crate::model::GroupId::from_index(g)).first() else { continue };
        let start = tr.path_range(first).start;
        if start >= cuts.len() * len / parts && g > cuts[cuts.len() - 1].0 {
            cuts.push((g, start, first.index()));
        }
    }
    run_cut(run, terms, &cuts, num_groups, body)
}

/// [`by_trajectories`] cuts its parts at multiples of this many trajectories: a scheme that sums
/// over the whole batch sums per block of this many trajectories (aligned at multiples of it) and
/// then the blocks in order, which gives the same sum whatever the number of threads.
pub const TRAJECTORY_BLOCK: usize = 1024;

/// Runs `work` on `values` cut into parts (as many as [`parts_for`] its length), on the threads
/// ([`run_parts`]), with the position of the part's first value: an elementwise pass over a whole
/// output (whitening it once its moments are known).
pub fn chunks_mut<T: Send>(values: &mut [T], work: impl Fn(usize, &mut [T]) + Sync) {
    let parts = parts_for(values.len());
    let size = values.len().div_ceil(parts).max(1);
    run_parts(values.chunks_mut(size).enumerate().map(|(k, part)| (k * size, part)).collect(), |(start, part)| {
        work(start, part);
    });
}

/// [`chunks_mut`] over two slices at once, cut at the same positions (`b` as long as `a` or
/// longer): a pass that writes two outputs.
pub fn chunks_mut2<T: Send, U: Send>(a: &mut [T], b: &mut [U], work: impl Fn(usize, &mut [T], &mut [U]) + Sync) {
    let parts = parts_for(a.len());
    let size = a.len().div_ceil(parts).max(1);
    let items = a.chunks_mut(size).zip(b.chunks_mut(size)).enumerate().map(|(k, (a, b))| (k * size, a, b)).collect();
    run_parts(items, |(start, a, b)| work(start, a, b));
}

/// How many positions [`block_sum`] sums as one block.
pub const SUM_BLOCK: usize = 1 << 18;

/// Σ over positions `0..len` as the sums of blocks of [`SUM_BLOCK`] positions (`block(range)`
/// sums one), added in order: parts of whole blocks on their own threads, and the same sum
/// whatever the number of threads. Up to one block it is `block(0..len)` itself.
pub fn block_sum(len: usize, block: impl Fn(Range<usize>) -> f64 + Sync) -> f64 {
    if len <= SUM_BLOCK {
        return block(0..len);
    }
    blocks(len, SUM_BLOCK, len, block).into_iter().reduce(|total, b| total + b).unwrap_or(0.0)
}

/// `block(range)` for each block of `size` items of `0..len`, in order: parts of whole blocks on
/// their own threads (as many as [`parts_for`] `work`, the number of positions the blocks cover).
/// The blocks do not depend on the number of threads, so neither does a sum of their results
/// taken in order.
pub fn blocks<R: Send>(len: usize, size: usize, work: usize, block: impl Fn(Range<usize>) -> R + Sync) -> Vec<R> {
    let size = size.max(1);
    let count = len.div_ceil(size);
    let parts = parts_for(work).clamp(1, count.max(1));
    let per_part = count.div_ceil(parts).max(1);
    let ranges: Vec<Range<usize>> = (0..count).step_by(per_part).map(|b| b..(b + per_part).min(count)).collect();
    let results =
        run_parts(ranges, |blocks| blocks.map(|b| block(b * size..((b + 1) * size).min(len))).collect::<Vec<R>>());
    results.into_iter().flatten().collect()
}

/// Step credit from `body` called with a range of trajectory indices (all of them, in parts of
/// consecutive trajectories, on the threads when the run is large enough), that range's
/// share of the step output and its rows of `terms`; `body` writes every trajectory of its range.
pub fn by_trajectories<R: Send>(
    run: &Run,
    terms: &mut Terms,
    body: impl Fn(Range<usize>, &mut StepPart<'_>, &mut TermRows<'_>) -> R + Sync,
) -> (Vec<f32>, Vec<R>) {
    let cuts = trajectory_cuts(run);
    run_cut(run, terms, &cuts, run.trajectories.len(), body)
}

/// Where [`by_trajectories`] cuts: (first trajectory, its first path position, itself) per part,
/// at multiples of [`TRAJECTORY_BLOCK`].
fn trajectory_cuts(run: &Run) -> Vec<(usize, usize, usize)> {
    let tr = &run.trajectories;
    let len = tr.path_nodes.len();
    let parts = parts_for(len);
    let mut cuts = vec![(0usize, 0usize, 0usize)];
    for k in 1..parts {
        let target = k * len / parts;
        let t = tr.path_offsets.partition_point(|&o| (o as usize) < target).min(tr.len());
        // Parts start at a multiple of the block, so per-block sums do not depend on the cut.
        let t = t / TRAJECTORY_BLOCK * TRAJECTORY_BLOCK;
        if t > cuts[cuts.len() - 1].0 && t < tr.len() {
            cuts.push((t, tr.path_offsets[t] as usize, t));
        }
    }
    cuts
}

/// Cuts the step output and the terms at `cuts` (first item, path position, trajectory row of
/// each part) and runs `body` on each part, in order.
fn run_cut<R: Send>(
    run: &Run,
    terms: &mut Terms,
    cuts: &[(usize, usize, usize)],
    num_items: usize,
    body: impl Fn(Range<usize>, &mut StepPart<'_>, &mut TermRows<'_>) -> R + Sync,
) -> (Vec<f32>, Vec<R>) {
    let tr = &run.trajectories;
    let len = tr.path_nodes.len();
    let width = terms.names.len();
    let mut step = crate::credit::engine::pool::scratch(len);
    let mut items = Vec::with_capacity(cuts.len());
    let (mut out, mut values): (&mut [f32], &mut [f32]) = (&mut step, &mut terms.values);
    for (k, &(item, position, row)) in cuts.iter().enumerate() {
        let (end_item, end_position, end_row) = cuts.get(k + 1).map_or((num_items, len, tr.len()), |&c| c);
        let (here, rest) = std::mem::take(&mut out).split_at_mut(end_position - position);
        out = rest;
        let rows_here = ((end_row - row) * width).min(values.len());
        let (rows, rest) = std::mem::take(&mut values).split_at_mut(rows_here);
        values = rest;
        items.push((
            item..end_item,
            StepPart::new(here, position, f32::NAN, true),
            TermRows { values: rows, first: row, width },
        ));
    }
    let results = run_parts(items, |(range, mut part, mut rows)| {
        let result = body(range, &mut part, &mut rows);
        part.finish();
        result
    });
    (step, results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_come_back_in_order_and_a_part_is_computed_even_with_one() {
        let squares = run_parts((0..5u64).collect(), |x| x * x);
        assert_eq!(squares, vec![0, 1, 4, 9, 16]);
        assert_eq!(run_parts(vec![7u64], |x| x + 1), vec![8]);
        assert!(run_parts(Vec::<u64>::new(), |x| x).is_empty());
    }

    /// Two threads, eight parts: the first part waits until every other part is done, which only
    /// happens if the second thread takes the parts the first would have had in equal shares.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn a_thread_held_up_in_one_part_leaves_the_other_parts_to_the_others() {
        let done = AtomicUsize::new(0);
        let start = std::time::Instant::now();
        let out = on_threads((0..8u64).collect(), 2, |x| {
            if x == 0 {
                while done.load(Ordering::SeqCst) < 7 && start.elapsed() < std::time::Duration::from_secs(20) {
                    std::hint::spin_loop();
                }
                assert_eq!(done.load(Ordering::SeqCst), 7, "the other parts waited for the first");
            } else {
                done.fetch_add(1, Ordering::SeqCst);
            }
            x * 10
        });
        assert_eq!(out, (0..8).map(|x| x * 10).collect::<Vec<u64>>());
    }

    #[test]
    fn a_part_writes_nan_where_no_trajectory_is_and_keeps_its_own_positions() {
        let mut out = [5.0f32; 8];
        let mut part = StepPart::new(&mut out[2..], 2, f32::NAN, true);
        part.write(3..5, [1.0, 2.0].into_iter());
        part.fill(6..7, 3.0);
        part.finish();
        assert_eq!(&out[..2], &[5.0, 5.0]);
        let rest: Vec<String> = out[2..].iter().map(|v| format!("{v}")).collect();
        assert_eq!(rest, ["NaN", "1", "2", "NaN", "3", "NaN"]);
    }
}
