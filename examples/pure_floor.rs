//! The memory floor of PURE's step credit on 10⁶ trajectories × 32 steps, timed the way
//! `scheme_timing` times the schemes, to say how far PURE itself could go on this machine: read
//! each step's score, make its softmax exponent (`−(2p − 1)/T`), write it; then the batch
//! normalization's second pass, every value read and written again. Nothing else PURE computes
//! (the `exp`, the minimum, the normalizer, the weighted sums, the baselines, the returns, the
//! batch moments) is done: this is the memory traffic PURE cannot avoid.
//!
//! `cargo run --release --no-default-features --features examples --example pure_floor -- [REPEATS] [threads=N]`
#![expect(clippy::unwrap_used, clippy::print_stdout, reason = "a measuring tool fails loudly and prints")]

use std::time::Instant;

/// The exponent pass over `out` from `scores`, then the normalization pass.
fn floor(scores: &[f32], out: &mut [f32]) {
    vantage::par::chunks_mut(out, |start, part| {
        // −r/T at PURE's default T = 0.1, less the largest exponent a score can give (10), as
        // PURE shifts each member's exponents by their largest.
        for (o, &p) in part.iter_mut().zip(&scores[start..]) {
            *o = -(2.0 * p - 1.0) * 10.0 - 10.0;
        }
    });
    std::hint::black_box(&mut *out);
    vantage::par::chunks_mut(out, |_, part| {
        for v in part {
            *v = (*v - 0.1) * 1.7;
        }
    });
}

fn main() {
    let (mut repeats, mut threads) = (20, 0);
    for arg in std::env::args().skip(1) {
        if let Some(n) = arg.strip_prefix("threads=") {
            threads = n.parse().unwrap();
        } else {
            repeats = arg.parse().unwrap();
        }
    }
    vantage::par::with_split(1 << 20, threads, || time_floor(repeats));
}

/// Times [`floor`] `repeats` times and prints the fastest and the median.
fn time_floor(repeats: usize) {
    let (trajectories, steps) = (1_000_000, 32);
    // The PRM scores of `benches/synthetic`'s step run, in path order.
    let scores: Vec<f32> =
        (0..trajectories * steps).map(|i| ((i / steps * 31 + i % steps * 17) % 101) as f32 / 100.0).collect();
    // One output, reused from call to call as the credit pool reuses PURE's.
    let mut out = vec![0.0f32; scores.len()];
    floor(&scores, &mut out);
    let mut each: Vec<f64> = (0..repeats)
        .map(|_| {
            let start = Instant::now();
            floor(&scores, &mut out);
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    each.sort_by(f64::total_cmp);
    println!("pure memory floor on 10^6 x 32: min {:.1} ms, median {:.1} ms", each[0], each[each.len() / 2]);
}
