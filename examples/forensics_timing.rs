//! Times baseline forensics against the load of the same run (docs/PERFORMANCE.md, "Baseline
//! forensics"): `cargo run --release --features examples --example forensics_timing -- FILE [REPEATS]`
//! opens FILE as `vantage check` does (timed), then computes its forensics REPEATS times (3 by
//! default) and prints each time, the findings, and the median's ratio to the load.
#![expect(clippy::unwrap_used, clippy::print_stdout, reason = "a measuring tool fails loudly and prints")]

use std::time::Instant;

use vantage::analysis::forensics::{Options, forensics};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = std::path::PathBuf::from(args.next().expect("usage: forensics_timing FILE [REPEATS]"));
    let repeats: usize = args.next().map_or(3, |s| s.parse().unwrap());
    let start = Instant::now();
    let mut report = vantage::load::LoadReport::new(&path.display().to_string());
    let options = vantage::source::OpenOptions::default();
    let run = vantage::source::path::open(&path, &options, None, &mut report, None).unwrap();
    let load = start.elapsed().as_secs_f64();
    println!(
        "{}: loaded in {load:.3} s ({} groups, {} trajectories, {} steps)",
        path.display(),
        run.groups.len(),
        run.trajectories.len(),
        run.num_path_steps()
    );
    let mut times = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        let found = forensics(&run, &Options::default());
        let seconds = start.elapsed().as_secs_f64();
        println!("forensics: {seconds:.3} s, {} findings {:?}", found.findings.len(), found.counts());
        times.push(seconds);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!("median {median:.3} s = {:.3}× the load", median / load);
}
