//! Times the behaviour graph of one group of 64 rollouts of 40 steps (`analysis::behaviour::build`:
//! states, transitions, credit, spread, forks and the layout), the issue's target being under
//! 100 ms. The group is synthetic: each rollout walks 40 steps over 120 states with loops back,
//! its states as keys, as an agent run's would be.
//!
//! `cargo run --release --example graph_layout`

use std::time::Instant;

use vantage::analysis::behaviour::{GraphMerge, MAX_NODES, build};
use vantage::load::{LoadReport, load_bytes};

fn main() {
    let mut log = String::from("{\"vantage\": 1}\n");
    let mut x: u64 = 0x5eed;
    let mut next = || {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize
    };
    for r in 0..64 {
        let mut state = 0usize;
        let steps: Vec<String> = (0..40)
            .map(|k| {
                // Forward most of the time, back a few states now and then: loops.
                state = if next() % 5 == 0 { state.saturating_sub(next() % 4) } else { (state + 1 + next() % 3) % 120 };
                format!(r#"{{"action": "act {k} of {r}", "state": "s{state}"}}"#)
            })
            .collect();
        log.push_str(&format!(
            r#"{{"type": "trajectory", "id": "r{r}", "group": "g", "outcome": {{"reward": {}}}, "steps": [{}]}}"#,
            r % 2,
            steps.join(", ")
        ));
        log.push('\n');
    }
    let run =
        load_bytes("graph.jsonl", log.as_bytes(), &mut LoadReport::new("graph")).expect("the synthetic group loads");
    let group = run.group_by_key("g").expect("group g");
    let credit: Vec<f32> = (0..run.trajectories.path_nodes.len()).map(|p| (p % 7) as f32 - 3.0).collect();
    let mut times = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        let graph = build(&run, group, [&credit, &credit], GraphMerge::Auto, MAX_NODES);
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        assert!(graph.nodes.len() > 50);
    }
    times.sort_by(f64::total_cmp);
    let graph = build(&run, group, [&credit, &credit], GraphMerge::Auto, MAX_NODES);
    println!(
        "64 rollouts × 40 steps: {} states, {} transitions, {} loops, {} forks; build and layout median {:.2} ms (min {:.2}, max {:.2}) over 20 runs; target < 100 ms",
        graph.nodes.len() - 1,
        graph.edges.len(),
        graph.edges.iter().filter(|e| e.back).count(),
        graph.nodes.iter().filter(|n| n.fork).count(),
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
}
