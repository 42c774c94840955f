//! A small pool of large `f32` buffers, so recomputing credit (a slider moving) reuses memory that
//! is already mapped instead of paying the page faults of a fresh 100 MB allocation every time.
//! [`Credit`](crate::credit::Credit) hands its buffers back when dropped.

use std::sync::Mutex;

/// Buffers smaller than this are not worth pooling.
const MIN_LEN: usize = 1 << 16;
/// At most this many idle buffers are kept.
const MAX_IDLE: usize = 6;

static IDLE: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

/// The smallest idle buffer that holds `len` (a small request must not take the large buffer a
/// step-credit array needs next).
fn best_fit(idle: &[Vec<f32>], len: usize) -> Option<usize> {
    idle.iter().enumerate().filter(|(_, b)| b.capacity() >= len).min_by_key(|(_, b)| b.capacity()).map(|(i, _)| i)
}

/// A zeroed buffer of `len`, reused from the pool when one is large enough.
pub fn zeroed(len: usize) -> Vec<f32> {
    filled(len, 0.0)
}

/// The idle buffer that best fits `len`, taken out of the pool, as it is.
fn reuse(len: usize) -> Option<Vec<f32>> {
    if len < MIN_LEN {
        return None;
    }
    let mut idle = IDLE.lock().ok()?;
    let i = best_fit(&idle, len)?;
    Some(idle.swap_remove(i))
}

/// An empty buffer with room for `len`, reused from the pool when one is large enough.
pub fn take(len: usize) -> Vec<f32> {
    match reuse(len) {
        Some(mut buffer) => {
            buffer.clear();
            buffer
        }
        None => Vec::with_capacity(len),
    }
}

/// A buffer of `len` values whatever they are (an idle buffer's old contents, or zeros): for output
/// that is written in full before anyone reads it, without a pass over it first. Reused from the
/// pool when one is large enough; a fresh one is zeroed memory that the system maps as it is
/// written.
pub fn scratch(len: usize) -> Vec<f32> {
    match reuse(len) {
        Some(mut buffer) => {
            // Keeps what it holds up to `len`; only a shortfall is written.
            buffer.truncate(len);
            buffer.resize(len, 0.0);
            buffer
        }
        None => vec![0.0; len],
    }
}

/// A buffer of `len` copies of `value` (`NaN` for step credit a scheme leaves unset), reused
/// from the pool when one is large enough. Give it back (or return it in a `Credit`) when done.
pub fn filled(len: usize, value: f32) -> Vec<f32> {
    let mut buffer = take(len);
    buffer.resize(len, value);
    buffer
}

/// A buffer holding `values` (`len` of them), reused from the pool when one is large enough:
/// gathering a per-step column without a fresh allocation. Give it back when done.
pub fn collect(len: usize, values: impl Iterator<Item = f32>) -> Vec<f32> {
    let mut buffer = take(len);
    buffer.extend(values);
    buffer
}

/// Returns a buffer to the pool (dropped if the pool is full or it is small).
pub fn give(buffer: Vec<f32>) {
    if buffer.capacity() < MIN_LEN {
        return;
    }
    if let Ok(mut idle) = IDLE.lock()
        && idle.len() < MAX_IDLE
    {
        idle.push(buffer);
    }
}

/// Drops every idle buffer: the memory goes back to the system (and a test can then hand the pool
/// buffers of its own).
pub fn clear() {
    if let Ok(mut idle) = IDLE.lock() {
        idle.clear();
    }
}

/// Where a kernel's buffers of its float type come from: the pool for `f32` (the app's and the
/// trainers' precision), plain allocations for `f64` (the reference). A supertrait of
/// [`crate::credit::Real`] that only the crate can name, so kernels write `F::zeroed(n)` and the
/// float trait itself stays about arithmetic.
pub trait Buffers: Sized {
    /// A zeroed vector.
    fn zeroed(len: usize) -> Vec<Self>;
    /// An empty vector with room for `len`.
    fn with_room(len: usize) -> Vec<Self>;
    /// A buffer of `len` values whatever they are, for output written in full before it is read.
    fn scratch(len: usize) -> Vec<Self>;
    /// Hands a buffer back to the pool, or drops it.
    fn recycle(buffer: Vec<Self>);
}

impl Buffers for f32 {
    fn zeroed(len: usize) -> Vec<Self> {
        zeroed(len)
    }
    fn with_room(len: usize) -> Vec<Self> {
        take(len)
    }
    fn scratch(len: usize) -> Vec<Self> {
        scratch(len)
    }
    fn recycle(buffer: Vec<Self>) {
        give(buffer);
    }
}

impl Buffers for f64 {
    fn zeroed(len: usize) -> Vec<Self> {
        vec![0.0; len]
    }
    fn with_room(len: usize) -> Vec<Self> {
        Vec::with_capacity(len)
    }
    fn scratch(len: usize) -> Vec<Self> {
        vec![0.0; len]
    }
    fn recycle(buffer: Vec<Self>) {
        drop(buffer);
    }
}
