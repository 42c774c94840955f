//! The Rust side of bench/python.py: opens a run and times, in process, what the Python package's
//! `run.credit(SCHEME)` and `run.steps()` do in Rust (`Computation::compute`, `tables::steps`),
//! printing the median seconds of each as JSON:
//! `cargo run --release --features examples --example embed_timing -- RUN SCHEME [REPEATS]`.
#![expect(clippy::unwrap_used, clippy::print_stdout, reason = "a measuring tool fails loudly and prints")]

use std::time::Instant;

use vantage::api::python as embed;

fn median(mut seconds: Vec<f64>) -> f64 {
    seconds.sort_by(f64::total_cmp);
    seconds[seconds.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = std::path::PathBuf::from(args.next().expect("usage: embed_timing RUN SCHEME [REPEATS]"));
    let scheme = args.next().expect("usage: embed_timing RUN SCHEME [REPEATS]");
    let repeats: usize = args.next().map_or(15, |r| r.parse().unwrap());
    let options = embed::open_options(None, &[], None).unwrap();
    let run = embed::open_all(&path, &options, None).pop().unwrap().result.unwrap();
    let computation = embed::Computation::resolve(&scheme, None, Vec::new()).unwrap();
    let time = |f: &dyn Fn()| {
        median(
            (0..repeats)
                .map(|_| {
                    let start = Instant::now();
                    f();
                    start.elapsed().as_secs_f64()
                })
                .collect(),
        )
    };
    let credit = time(&|| drop(computation.compute(&run).unwrap()));
    let steps = time(&|| drop(vantage::analysis::tables::steps(&run, false)));
    println!("{}", serde_json::json!({ "steps": run.num_path_steps(), "credit_s": credit, "steps_table_s": steps }));
}
