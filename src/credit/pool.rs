//! A small pool of large `f32` buffers, so recomputing credit (a slider moving) reuses memory that
//! is already mapped instead of paying the page faults of a fresh 100 MB allocation every time.
//! [`Credit`](super::Credit) hands its buffers back when dropped.

use std::sync::Mutex;

/// Buffers smaller than this are not worth pooling.
const MIN_LEN: usize = 1 << 16;
/// At most this many idle buffers are kept.
const MAX_IDLE: usize = 6;

static IDLE: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());

/// A zeroed buffer of `len`, reused from the pool when one is large enough.
pub fn zeroed(len: usize) -> Vec<f32> {
    if len >= MIN_LEN
        && let Ok(mut idle) = IDLE.lock()
        && let Some(i) = idle.iter().position(|b| b.capacity() >= len)
    {
        let mut buffer = idle.swap_remove(i);
        buffer.clear();
        buffer.resize(len, 0.0);
        return buffer;
    }
    vec![0.0; len]
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
