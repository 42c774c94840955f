//! CARL (`carl`, arXiv 2512.04949): credit only at the critical states. A group's rollouts form a
//! tree of states, the group's prompt its root, built as the other tree schemes build it
//! ([`crate::credit::engine::tree`], `merge`): the log's own tree where it branches, else the
//! rollouts merged by identical turns (kind, texts and state key: CARL's node identity is a hash of
//! the full next prompt, so rollouts sampled apart share their identical first turns). A state's
//! value is the mean of its distinct children's values (a rollout's last state: the mean
//! of the outcomes that ended there, pooled with its children's values where it has both, Eq. 10).
//! A state with more than one distinct child is critical; a turn from a critical state `u` to `v`
//! gets `A = V(v) − V(u)` (Eq. 11), and any other turn is dropped from the update (Eq. 13): its
//! credit is 0 and its `kept` term 0. Python floats (f64), rounded once.
//!
//! A third party's port (RainyFields/Agentic-RL-CA); see docs/SCHEMES.md for what it leaves out.

use crate::credit::engine::inputs::supports_outcomes;
use crate::credit::engine::tree::{MergeParam, build, merge_prefixes};
use crate::credit::kernels::tree_value::{ValueMode, ValueTree};
use crate::credit::params::declare::{GROUP, params};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, SchemeInfo, SourceQuality, Terms};
use crate::model::Run;

scheme!(
    /// CARL's critical-state credit.
    Carl,
    knobs: Knobs,
    info: SchemeInfo {
        id: "carl",
        family: Family::Tree,
        display_name: "CARL (critical-state credit)",
        citation: "CARL (arXiv 2512.04949): V(u) = mean of its distinct children's values; A = V(v) − V(u) on turns leaving a state with ≥ 2 distinct children, the other turns dropped; a third-party port (RainyFields/Agentic-RL-CA)",
        needs: "outcome rewards; rollouts of a group that share turns (a tree, or identical turns): where none do, only the first turn is credited (r − the group's mean)",
        source: SourceQuality::FromCode(
            "third-party port: RainyFields/Agentic-RL-CA@06aa80fc650e89412d0fac747d6ac2934e9389fd credit_assignment/core_carl.py (compute_node_values, compute_carl_edge_advantages). Gap: the paper finds its critical states by the policy's entropy while it samples, branching the tree there; the port's credit, and vantage, take the tree as sampled and call a state critical when it has ≥ 2 distinct next states, so on rollouts sampled apart the forks are where they happened to part",
        ),
        checked: "the port's own compute_carl_edge_advantages run on every rollout of sample_runs/tree_rollouts.jsonl and math_grpo_prm.jsonl and on hand-made runs (a state both where a rollout ended and a parent, repeated turns, a lone rollout, a rollout without an outcome), with the log's nodes and with turns merged by content as node ids (tests/golden/carl, tests/it/process_credit.rs), within 1e-6",
    },
    supports: supports_outcomes,
    credit: credit,
);

params! {
    pub struct Knobs {
        merge_param: MergeParam = GROUP,
    }
}

/// Each tree node's distinct children, and each group's top nodes, as index lists.
fn children(tree: &ValueTree, groups: usize) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let mut children = vec![Vec::new(); tree.parent.len()];
    let mut tops = vec![Vec::new(); groups];
    for (v, &parent) in tree.parent.iter().enumerate() {
        match parent {
            u32::MAX => tops[tree.group[v] as usize].push(v as u32),
            p => children[p as usize].push(v as u32),
        }
    }
    (children, tops)
}

fn credit(run: &Run, knobs: &Knobs, explain: bool) -> Credit {
    let tr = &run.trajectories;
    let tree = build(run, ValueMode::ChildMean, merge_prefixes(run, knobs.merge_param.merge));
    let (children, tops) = children(&tree, run.groups.len());
    // The outcomes that ended at each node (a rollout's last turn's node).
    let mut ended: Vec<Vec<f64>> = vec![Vec::new(); tree.parent.len()];
    for t in tr.ids() {
        let range = tr.path_range(t);
        if tr.reward[t.index()].is_finite() && !range.is_empty() {
            ended[tree.node_of[range.end - 1] as usize].push(f64::from(tr.reward[t.index()]));
        }
    }
    // Eq. 10, children and ended outcomes pooled; parents precede children (in the arena and in the
    // trie), so one reverse pass sees every child first. A node no outcome reaches has none.
    let mut value = vec![f64::NAN; tree.parent.len()];
    for v in (0..value.len()).rev() {
        let known = children[v].iter().map(|&c| value[c as usize]).filter(|x| !x.is_nan());
        let (sum, count) = known.chain(ended[v].iter().copied()).fold((0.0, 0u32), |(s, n), x| (s + x, n + 1));
        if count > 0 {
            value[v] = sum / f64::from(count);
        }
    }
    let root: Vec<f64> = tops
        .iter()
        .map(|top| {
            let known: Vec<f64> = top.iter().map(|&c| value[c as usize]).filter(|x| !x.is_nan()).collect();
            known.iter().sum::<f64>() / known.len() as f64
        })
        .collect();
    let mut step = vec![f32::NAN; tr.path_nodes.len()];
    let mut terms = Terms::for_rows(
        "V(s') − V(s) where s has ≥ 2 distinct next states, else 0 (dropped)",
        &["r", "V(root)"],
        tr.len(),
    )
    .with_step_values(&["V(s')", "V(s)", "next states of s", "kept"], if explain { step.len() } else { 0 });
    for t in tr.ids() {
        if !tr.reward[t.index()].is_finite() {
            continue;
        }
        let g = tr.group[t.index()].index();
        terms.set(t.index(), &[f64::from(tr.reward[t.index()]), root[g]]);
        for p in tr.path_range(t) {
            let v = tree.node_of[p] as usize;
            // The distinct next states an outcome reaches (a branch of rollouts without one is no row).
            let reached = |next: &[u32]| next.iter().filter(|&&c| !value[c as usize].is_nan()).count();
            let (from, branches) = match tree.parent[v] {
                u32::MAX => (root[g], reached(&tops[g])),
                u => (value[u as usize], reached(&children[u as usize])),
            };
            let critical = branches > 1;
            step[p] = if critical { (value[v] - from) as f32 } else { 0.0 };
            if explain {
                terms.set_step(p, &[value[v], from, branches as f64, f64::from(u8::from(critical))]);
            }
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}
