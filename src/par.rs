//! Work cut into parts on several threads: the one place below the app that starts threads.
//! [`run_parts`] computes parts on scoped threads, each taking the next part as it finishes one
//! (so that a core busy with other work holds up no more than the part it is on), and returns
//! the results in order; [`pipeline`] works on items on other threads while this one consumes the
//! results in order (a log's pieces parsed on every core while this thread adds the records);
//! [`chunks_mut`] runs an elementwise pass over an output in parts, and [`block_sum`] sums fixed
//! blocks in order, so a sum does not depend on the number of threads. How finely work is cut is
//! set per thread by [`with_split`]. `load` and `credit` both use it (`credit::engine::par` cuts a
//! run's groups and trajectories into parts with it). On the web, and on work too small to be
//! worth it, there is one part, on the calling thread.

use std::cell::Cell;
use std::ops::Range;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::atomic::{AtomicUsize, Ordering};

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
}
