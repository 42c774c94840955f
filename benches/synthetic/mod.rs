//! Synthetic runs shared by the benchmarks: many independent step chains, or many small trees.

use vantage::model::{NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, TreeId};

/// 10⁶ trajectories × 32 steps in groups of 8: outcome, env rewards, a PRM score, a value score,
/// roles, step kinds (three in four of them ProRAG's well-formed ones), state keys (eight, shared by the
/// rollouts of a group) and first-error labels, no text.
pub fn step_run(trajectories: usize, steps: usize) -> Run {
    let mut b = RunBuilder::new("bench", "synthetic");
    let roles = ["progress", "exploration", "infrastructure", "regression"];
    let states = ["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"];
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
                kind: Some(["think", "search", "read", "answer"][(t + 3 * s) % 4]),
                scores: vec![("prm", x), ("value", 0.5 - x / 2.0)],
                env_reward: Some(if s + 1 == steps { 1.0 } else { 0.0 }),
                // Rollouts of a group pass through the same few states (GiGPO's anchor states).
                state_key: Some(states[(s + t % 3) % 8]),
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
