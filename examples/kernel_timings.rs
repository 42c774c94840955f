//! Times the token estimators on the deterministic benchmark batch (`credit::data::batch::synthetic_token_batch`),
//! one warm-up then the median of 5, on one thread (`median_ms`, what is compared with verl's
//! single thread) and on every core (`all_cores_ms`, `vantage::par`), and prints one JSON line per
//! estimator, plus a plain copy of the same arrays as the memory-bound floor. `bench/vs_verl.py`
//! runs this beside verl.
//!
//! `cargo run --release --no-default-features --features examples --example kernel_timings -- 32768 512`

use std::time::Instant;

use vantage::credit::{self, Params, data::batch::synthetic_token_batch};

fn median_ms(mut run: impl FnMut()) -> (f64, f64, f64) {
    run();
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[2], times[0], times[4])
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let rows = args.first().copied().unwrap_or(32_768);
    let max_len = args.get(1).copied().unwrap_or(512);
    let batch = synthetic_token_batch(rows, max_len, 8);
    let tokens = batch.num_positions();
    let (copy, copy_min, copy_max) = median_ms(|| {
        let reward = batch.reward.clone();
        let mask = batch.mask.clone();
        std::hint::black_box((reward, mask));
    });
    println!(
        r#"{{"estimator":"plain_copy","rows":{rows},"tokens":{tokens},"median_ms":{copy:.3},"min_ms":{copy_min:.3},"max_ms":{copy_max:.3}}}"#
    );
    let (copy_v, ..) = median_ms(|| {
        let arrays = (batch.reward.clone(), batch.mask.clone(), batch.values.clone());
        std::hint::black_box(arrays);
    });
    println!(r#"{{"estimator":"plain_copy_with_values","rows":{rows},"tokens":{tokens},"median_ms":{copy_v:.3}}}"#);
    for id in ["grpo", "grpo_vectorized", "rloo", "rloo_vectorized", "gae", "reinforce_plus_plus"] {
        let Ok(scheme) = credit::scheme(id) else { continue };
        let Some(kernel) = scheme.token_kernel() else { continue };
        let Ok(params) = Params::resolve(scheme, Some("verl"), &[]) else { continue };
        let time = || {
            median_ms(|| {
                std::hint::black_box(kernel.run32(&batch, &params).map(|o| o.advantages.len()).ok());
            })
        };
        let (median, min, max) = vantage::par::with_split(1 << 20, 1, time);
        let (all_cores, ..) = time();
        println!(
            r#"{{"estimator":"{id}","rows":{rows},"tokens":{tokens},"median_ms":{median:.3},"min_ms":{min:.3},"max_ms":{max:.3},"all_cores_ms":{all_cores:.3},"cores":{}}}"#,
            vantage::par::max_parts()
        );
    }
}
