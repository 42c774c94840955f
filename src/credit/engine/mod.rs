//! The machinery every scheme computes with, apart from any scheme's formula: the rows a token
//! kernel works on ([`batch`]), what schemes read from a run (`inputs`), the value tree of a run
//! ([`tree`]), parameters and presets (`params`), the float type kernels are generic over
//! ([`real`]), the one module of `f64` sums and moments ([`moments`]), batch whitening
//! ([`whiten`]), computing in parts on several threads ([`par`]), the buffer pool, and the
//! registry as text ([`listing`]).

pub mod batch;
pub mod declare;
pub(crate) mod inputs;
pub mod listing;
pub mod moments;
pub mod par;
pub(crate) mod params;
pub(crate) mod pool;
pub mod real;
pub mod tree;
pub mod whiten;

/// Test support: fills the buffer pool with `count` buffers of `len` values whose bits are
/// `bits`, after emptying it, so that a test can show a position a computation forgets to write
/// (it then holds those bits instead of what the last computation left).
#[doc(hidden)]
pub fn poison_pool(len: usize, bits: u32, count: usize) {
    pool::clear();
    for _ in 0..count {
        pool::give(vec![f32::from_bits(bits); len]);
    }
}
