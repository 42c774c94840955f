//! Follow latency: how long after a trainer appends records to a followed vantage JSONL log the
//! app has them (`app::follow::Follower`, the thread behind `--follow` and the Follow toggle).
//!
//! ```text
//! cargo run --release --no-default-features --features examples --example follow_latency -- DIR [BASE_MB]
//! ```
//!
//! Writes `DIR/followed.jsonl` (`BASE_MB` of records first, default 100, so each look is at a large
//! run), follows it, then ten times appends one training step's records (51 groups of 8) and
//! times until the follower sends the run with them. Prints each latency, the median and the
//! largest. The target is under 2 s.
#![expect(clippy::unwrap_used, reason = "a benchmark stops on the first surprise")]

use std::io::Write as _;
use std::time::{Duration, Instant};

use vantage::load::LoadReport;
use vantage::source::follow::{Follower, Update};
use vantage::source::live::Live;

fn record(step: usize, group: usize, r: usize) -> String {
    let thought = "a thought about the next tool call, with a \\\"quote\\\" and\\na second line; ".repeat(6);
    let observation = "tool output line; ".repeat(40);
    format!(
        "{{\"type\": \"trajectory\", \"id\": \"s{step}/g{group}/r{r}\", \"group\": \"s{step}/g{group}\", \"train_step\": {step}, \
         \"outcome\": {{\"reward\": {}}}, \"steps\": [{}]}}\n",
        r % 2,
        (0..20)
            .map(|k| format!("{{\"kind\": \"search\", \"thought\": \"{thought}{k}\", \"action\": \"search({k})\", \"observation\": \"{observation}\"}}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn step_records(step: usize) -> String {
    (0..51).flat_map(|g| (0..8).map(move |r| record(step, g, r))).collect()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "/tmp".to_owned()));
    let base_mb: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("followed.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(b"{\"vantage\": 1, \"name\": \"followed\"}\n").unwrap();
    let mut step = 0;
    let mut written = 0;
    while written < base_mb << 20 {
        let text = step_records(step);
        written += text.len();
        file.write_all(text.as_bytes()).unwrap();
        step += 1;
    }
    file.flush().unwrap();
    let opened = Instant::now();
    let mut live = Live::open(&path, LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    live.read(None).unwrap();
    let trajectories = live.snapshot().trajectories.len();
    println!(
        "{}: {written} bytes, {trajectories} trajectories read in {:.2} s",
        path.display(),
        opened.elapsed().as_secs_f64()
    );
    let mut follower = Follower::start(live, &path, &vantage::source::OpenOptions::default(), || {}).unwrap();
    let mut latencies = Vec::new();
    let mut expected = trajectories;
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(700));
        let text = step_records(step);
        step += 1;
        expected += 51 * 8;
        let appended = Instant::now();
        file.write_all(text.as_bytes()).unwrap();
        file.flush().unwrap();
        'wait: loop {
            assert!(appended.elapsed() < Duration::from_secs(30), "the records did not arrive");
            std::thread::sleep(Duration::from_millis(5));
            for update in follower.poll() {
                if let Update::Run(run, _) = update
                    && run.trajectories.len() == expected
                {
                    break 'wait;
                }
            }
        }
        let latency = appended.elapsed().as_secs_f64();
        println!("appended {} bytes (one training step): in the app after {latency:.3} s", text.len());
        latencies.push(latency);
    }
    latencies.sort_by(f64::total_cmp);
    println!("follow latency: median {:.3} s, largest {:.3} s (10 appends)", latencies[5], latencies[9]);
}
