//! Measures the memory of the columnar model: builds a run of N steps (default 10⁷) shaped like a
//! math GRPO log (groups of 8, 8 steps per trajectory, a PRM score, a role, short thought text, a
//! first-error label) and prints heap bytes per step, with and without text.
//!
//! `cargo run --release --features examples --example model_memory -- 10000000`

use vantage::model::{NewGroup, NewStep, NewTokens, Outcome, RunBuilder, TreeId};

fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn main() {
    let num_steps: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000_000);
    let steps_per_trajectory = 8;
    let group_size = 8;
    let rss_before = rss_bytes().unwrap_or(0);
    let mut b = RunBuilder::new("memory", "synthetic");
    let roles = ["progress", "exploration", "infrastructure", "regression"];
    let mut thought = String::new();
    let num_trajectories = num_steps / steps_per_trajectory;
    let mut group = vantage::model::GroupId::NONE;
    for t in 0..num_trajectories {
        if t % group_size == 0 {
            let key = format!("g{}", t / group_size);
            let prompt = format!("Evaluate ((17 + {t}) × 3) − 15. Show each step.");
            group = b
                .add_group(&NewGroup {
                    key: &key,
                    task: Some(&key),
                    train_step: Some(0),
                    prompt: Some(&prompt),
                    gold: None,
                    ..NewGroup::default()
                })
                .0;
        }
        let mut parent = vantage::model::NodeId::NONE;
        for s in 0..steps_per_trajectory {
            thought.clear();
            use std::fmt::Write as _;
            let _ = write!(thought, "{} × 3 = {}", t + s, (t + s) * 3);
            let step = NewStep {
                kind: Some("think"),
                role: Some(roles[(t + s) % 4]),
                thought: Some(&thought),
                scores: vec![("prm", ((t * 7 + s) % 100) as f32 / 100.0)],
                first_error: Some(s == 3 && t % 5 == 0),
                ..NewStep::default()
            };
            parent = b.add_node(group, parent, &step);
        }
        let outcome = Outcome {
            reward: Some((t % 2) as f32),
            success: Some(t % 2 == 1),
            components: Vec::new(),
            finish: Some("stop"),
        };
        b.add_trajectory(&format!("t{t}"), group, TreeId::NONE, parent, &outcome, &NewTokens::default());
    }
    let run = b.finish();
    let rss_after = rss_bytes().unwrap_or(0);
    let steps = run.nodes.len() as f64;
    let heap = run.heap_bytes() as f64;
    let text = run.text.text_bytes() as f64;
    println!("steps {} · trajectories {} · groups {}", run.nodes.len(), run.trajectories.len(), run.groups.len());
    println!(
        "heap {:.0} MB = {:.1} bytes/step ({:.1} bytes/step of it is text, {:.1} without text)",
        heap / 1e6,
        heap / steps,
        text / steps,
        (heap - text) / steps
    );
    println!(
        "node columns {:.1} bytes/step · trajectories {:.1} bytes/step · labels {:.1} bytes/step",
        run.nodes.heap_bytes() as f64 / steps,
        run.trajectories.heap_bytes() as f64 / steps,
        run.labels.heap_bytes() as f64 / steps
    );
    println!(
        "process RSS grew by {:.0} MB ({:.1} bytes/step)",
        (rss_after - rss_before) as f64 / 1e6,
        (rss_after - rss_before) as f64 / steps
    );
}
