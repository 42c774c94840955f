//! Credit benchmarks (criterion): the token estimators on a 32768 × 512 token batch (group 8,
//! lengths 1..512, the batch `bench/vs_verl.py` gives verl), and every step-level scheme on a run of
//! 10⁶ trajectories × 32 steps. `cargo bench --no-default-features --bench credit`.
#![expect(clippy::unwrap_used, reason = "a benchmark fails loudly")]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use vantage::credit::{self, Params, Support, batch::synthetic_token_batch};
use vantage::model::{NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, TreeId};

fn token_batch(c: &mut Criterion) {
    let batch = synthetic_token_batch(32_768, 512, 8);
    let mut group = c.benchmark_group("token 32768x512");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function("plain copy (reward + mask)", |b| {
        b.iter(|| black_box((batch.reward.clone(), batch.mask.clone())));
    });
    for id in ["grpo", "grpo_vectorized", "rloo", "rloo_vectorized", "gae", "reinforce_plus_plus"] {
        let scheme = credit::scheme(id).unwrap();
        let params = Params::resolve(scheme, Some("verl"), &[]).unwrap();
        let kernel = scheme.token_kernel().unwrap();
        group.bench_function(id, |b| b.iter(|| black_box(kernel.run32(&batch, &params).unwrap())));
    }
    group.finish();
}

/// 10⁶ trajectories × 32 steps in groups of 8: outcome, env rewards, a PRM score, a value score,
/// roles, state keys and first-error labels, no text.
pub fn step_run(trajectories: usize, steps: usize) -> Run {
    let mut b = RunBuilder::new("bench", "synthetic");
    let roles = ["progress", "exploration", "infrastructure", "regression"];
    let mut group = vantage::model::GroupId::NONE;
    for t in 0..trajectories {
        if t % 8 == 0 {
            group =
                b.add_group(&NewGroup { key: &format!("g{}", t / 8), train_step: Some(0), ..NewGroup::default() }).0;
        }
        let mut parent = NodeId::NONE;
        for s in 0..steps {
            let x = ((t * 31 + s * 17) % 101) as f32 / 100.0;
            let step = NewStep {
                role: Some(roles[(t + s) % 4]),
                scores: vec![("prm", x), ("value", 0.5 - x / 2.0)],
                env_reward: Some(if s + 1 == steps { 1.0 } else { 0.0 }),
                first_error: Some(s == 5 && t % 3 == 0),
                ..NewStep::default()
            };
            parent = b.add_node(group, parent, &step);
        }
        let reward = if (t * 40_503) % 7 < 3 { 1.0 } else { 0.0 };
        let outcome = Outcome { reward: Some(reward), success: Some(reward > 0.5), ..Outcome::default() };
        b.add_trajectory(&format!("t{t}"), group, TreeId::NONE, parent, &outcome, &NewTokens::default());
    }
    b.finish()
}

fn step_level(c: &mut Criterion) {
    let run = step_run(1_000_000, 32);
    let mut group = c.benchmark_group("step 1e6x32");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function("plain copy (one f32 per step)", |b| {
        b.iter(|| black_box(run.nodes.env_reward.clone()));
    });
    for scheme in credit::SCHEMES {
        if scheme.supports(&run) != Support::Yes {
            continue;
        }
        let has_level = scheme.params().iter().any(|p| p.name == "level");
        let sets = if has_level { vec![("level".to_owned(), "step".to_owned())] } else { Vec::new() };
        let params = Params::resolve(*scheme, None, &sets).unwrap();
        if scheme.compute(&run, &params).is_err() {
            continue;
        }
        group.bench_function(scheme.info().id, |b| b.iter(|| black_box(scheme.compute(&run, &params).unwrap())));
    }
    group.finish();
}

/// 10⁴ trees of 100 nodes (binary-heap shaped: node i hangs under (i − 1) / 2), one tree per
/// group, a PRM score and MC statistics on every node, an outcome on every leaf.
pub fn tree_run(trees: usize, nodes_per_tree: usize) -> Run {
    let mut b = RunBuilder::new("bench", "synthetic");
    for tree in 0..trees {
        let group = b.add_group(&NewGroup { key: &format!("g{tree}"), ..NewGroup::default() }).0;
        let tree_id = b.add_tree(&format!("t{tree}"), group).unwrap();
        let mut ids = Vec::with_capacity(nodes_per_tree);
        for i in 0..nodes_per_tree {
            let parent = if i == 0 { NodeId::NONE } else { ids[(i - 1) / 2] };
            let x = ((tree * 31 + i * 17) % 101) as f32 / 100.0;
            let step = NewStep {
                scores: vec![("prm", x)],
                mc: Some(vantage::model::McStats { n: 4, mean: x }),
                ..NewStep::default()
            };
            ids.push(b.add_node(group, parent, &step));
        }
        for (i, &leaf) in ids.iter().enumerate().filter(|(i, _)| 2 * i + 1 >= nodes_per_tree) {
            let reward = if (tree * 7 + i) % 3 == 0 { 1.0 } else { 0.0 };
            let outcome = Outcome { reward: Some(reward), finish: Some("stop"), ..Outcome::default() };
            b.add_trajectory(&format!("t{tree}/{i}"), group, tree_id, leaf, &outcome, &NewTokens::default());
        }
    }
    b.finish()
}

fn tree_level(c: &mut Criterion) {
    let run = tree_run(10_000, 100);
    let mut group = c.benchmark_group("tree 1e4x100");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for id in ["treeps_rag", "treerpo", "treerl", "treepo", "tree_grpo", "vineppo", "prm_process", "pure"] {
        let scheme = credit::scheme(id).unwrap();
        let params = Params::resolve(scheme, None, &[]).unwrap();
        group.bench_function(id, |b| b.iter(|| black_box(scheme.compute(&run, &params).unwrap())));
    }
    group.finish();
}

criterion_group!(benches, token_batch, step_level, tree_level);
criterion_main!(benches);
