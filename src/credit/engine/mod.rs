//! Run → batch plumbing every scheme computes with, apart from any scheme's formula: what schemes
//! read from a run and the trainer estimators' batches (`inputs`), the value tree of a run
//! ([`tree`]), batch whitening ([`whiten`]) and step credit written in parts on several threads
//! ([`par`]). What they compute on is [`crate::credit::data`].

pub(crate) mod inputs;
pub mod par;
pub mod tree;
pub mod whiten;

/// Test support: fills the buffer pool with `count` buffers of `len` values whose bits are
/// `bits`, after emptying it, so that a test can show a position a computation forgets to write
/// (it then holds those bits instead of what the last computation left).
#[doc(hidden)]
pub fn poison_pool(len: usize, bits: u32, count: usize) {
    crate::credit::data::pool::clear();
    for _ in 0..count {
        crate::credit::data::pool::give(vec![f32::from_bits(bits); len]);
    }
}
