//! Times credit schemes on the benchmark runs, for profiling them (`perf record` on this binary
//! sees only the schemes, unlike the criterion bench, whose set-up computes every scheme once):
//! `cargo run --release --no-default-features --features examples --example scheme_timing -- SCHEMES [REPEATS] [tree] [k=v]…`
//! uses 10⁶ trajectories × 32 steps, or 10⁴ trees of 100 nodes with `tree`, sets any `k=v`
//! parameters, and prints the mean time of one `Scheme::compute` after a warm-up (and the time of
//! that first call, which also derives what the run keeps once derived), with the fastest call and
//! the median. `SCHEMES` is one
//! scheme id, several separated by commas (the run is built once), or `all` (every scheme the run
//! supports). `threads=N` computes on at most N threads (`vantage::par`; default: one per core).
#![expect(clippy::unwrap_used, clippy::print_stdout, reason = "a measuring tool fails loudly and prints")]

#[path = "../benches/synthetic/mod.rs"]
mod synthetic;

use vantage::credit::{self, Params, Support};

fn main() {
    let mut args = std::env::args().skip(1);
    let ids = args.next().expect("usage: scheme_timing SCHEMES [REPEATS] [tree] [k=v]...");
    let repeats: usize = args.next().map_or(10, |s| s.parse().unwrap());
    let rest: Vec<String> = args.collect();
    let tree = rest.iter().any(|a| a == "tree");
    // At most N threads with `threads=N` (0, the default: one per core).
    let threads = rest.iter().find_map(|a| a.strip_prefix("threads=")).map_or(0, |n| n.parse().unwrap());
    vantage::par::with_split(1 << 20, threads, || time_schemes(&ids, repeats, &rest, tree));
}

/// Times each scheme of `ids` (`all`: every one the run supports) `repeats` times.
fn time_schemes(ids: &str, repeats: usize, rest: &[String], tree: bool) {
    let run = if tree { synthetic::tree_run(10_000, 100) } else { synthetic::step_run(1_000_000, 32) };
    // `all` on the chains leaves out the tree schemes, which merge chains into trees first (their
    // target is on explicit trees: `all 10 tree`).
    let merges = |s: &dyn credit::Scheme| !tree && s.info().family == credit::Family::Tree;
    let schemes: Vec<&dyn credit::Scheme> = if ids == "all" {
        credit::SCHEMES.iter().copied().filter(|&s| s.supports(&run) == Support::Yes && !merges(s)).collect()
    } else {
        ids.split(',').map(|id| credit::scheme(id).unwrap()).collect()
    };
    for scheme in schemes {
        let id = scheme.info().id;
        let has_level = scheme.params().iter().any(|p| p.name == "level");
        let mut sets = if has_level && !tree { vec![("level".to_owned(), "step".to_owned())] } else { Vec::new() };
        sets.extend(
            rest.iter()
                .filter(|a| !a.starts_with("threads="))
                .filter_map(|a| a.split_once('='))
                .filter(|(k, _)| scheme.params().iter().any(|p| p.name == *k))
                .map(|(k, v)| (k.to_owned(), v.to_owned())),
        );
        let params = Params::resolve(scheme, None, &sets).unwrap();
        // The first call also derives what a run keeps once derived (`Run::state_slots`).
        let first_start = std::time::Instant::now();
        let Ok(first) = scheme.compute(&run, &params) else {
            println!("{id}: not computable on this run");
            continue;
        };
        let first_ms = first_start.elapsed().as_secs_f64() * 1000.0;
        drop(first);
        // Each call timed on its own: on a shared machine whose neighbours take turns with its
        // cores, the fastest call and the median say more than the mean.
        let mut each: Vec<f64> = (0..repeats.max(1))
            .map(|_| {
                let start = std::time::Instant::now();
                drop(std::hint::black_box(scheme.compute(&run, &params).unwrap()));
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        let ms = each.iter().sum::<f64>() / each.len() as f64;
        each.sort_by(f64::total_cmp);
        let (min, median) = (each[0], each[each.len() / 2]);
        let size = if tree { "10^4 trees x 100" } else { "10^6 x 32" };
        println!("{id} on {size}: {ms:.1} ms (min {min:.1}, median {median:.1}; first call {first_ms:.1} ms)");
    }
}
