//! The value tree of a run: the run's own nodes, or the trie that merging a group's independent
//! rollouts by identical step prefix (or by state key) gives, with each node's value filled in by
//! [`crate::credit::kernels::tree_value`].

use std::collections::HashMap;

use crate::credit::kernels::tree_value::{Trajectories, ValueMode, ValueTree, fill_values};
use crate::credit::params::declare::{choice, decl, params};
use crate::model::Run;

choice! {
    /// How a group's rollouts are merged into a tree (`merge`), `auto` as the run suggests.
    pub enum MergeChoice { Auto = "auto", None = "none", Prefix = "prefix", StateKey = "state_key" }
}

params! {
    /// The `merge` parameter of the tree schemes.
    pub struct MergeParam {
        /// How rollouts become a tree.
        pub merge: MergeChoice = decl(
            "auto",
            "merge rollouts of a group into a tree by identical step prefix, or by state key under the same parent; auto merges prefixes when the run has no explicit branching",
        ),
    }
}

/// How rollouts of a group become one tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merge {
    /// The run's own nodes.
    None,
    /// Identical steps (kind, texts, state key) under the same parent share a node.
    Prefix,
    /// Steps with the same state key under the same parent share a node (no key: a node of its own).
    StateKey,
}

/// The merge a scheme's `merge` asks for on this run: `auto` merges prefixes when no node has a sibling.
pub fn merge_prefixes(run: &Run, merge: MergeChoice) -> Merge {
    match merge {
        MergeChoice::Prefix => Merge::Prefix,
        MergeChoice::StateKey => Merge::StateKey,
        MergeChoice::None => Merge::None,
        MergeChoice::Auto => auto_merge(run),
    }
}

/// `merge=auto`: the run's own nodes when any node has a sibling (the log branches), else the
/// trie of identical step prefixes.
pub fn auto_merge(run: &Run) -> Merge {
    if run.nodes.next_sibling.iter().any(|s| s.is_some()) { Merge::None } else { Merge::Prefix }
}

/// Content of a step, for merging identical prefixes: kind, a hash of each of the three texts
/// (64 bits of `SipHash` with fixed keys: two different texts share one with odds of about 2⁻⁶⁴,
/// and texts left in the log are hashed without being kept) and the state key.
type StepContent = (u32, u64, u64, u64, u32);

fn step_content(run: &Run, node: crate::model::NodeId) -> StepContent {
    let n = node.index();
    let nodes = &run.nodes;
    let hash = |id| {
        use std::hash::{Hash as _, Hasher as _};
        let mut h = std::hash::DefaultHasher::new();
        run.text(id).hash(&mut h);
        h.finish()
    };
    (nodes.kind[n].0, hash(nodes.thought[n]), hash(nodes.action[n]), hash(nodes.observation[n]), nodes.state_key[n].0)
}

/// Builds the value tree: the run's own nodes, or the trie of each group's steps by content
/// (identical step prefixes share a node) or by state key, then fills in the values.
pub fn build(run: &Run, mode: ValueMode, merge: Merge) -> ValueTree {
    let tr = &run.trajectories;
    let mut tree = ValueTree { node_of: vec![0; tr.path_nodes.len()], ..ValueTree::default() };
    if merge != Merge::None {
        let by_state = merge == Merge::StateKey;
        let mut index: HashMap<(u32, StepContent), u32> = HashMap::new();
        for t in tr.ids() {
            let offset = tr.path_offsets[t.index()] as usize;
            let group = tr.group[t.index()].0;
            let mut parent = u32::MAX;
            for (k, &node) in tr.path(t).iter().enumerate() {
                // Top steps are keyed under their group's root, so groups never merge.
                let content = match (by_state, run.nodes.state_key[node.index()]) {
                    (false, _) => step_content(run, node),
                    (true, state) if state.is_some() => (u32::MAX, 0, 0, 0, state.0),
                    // No state key: a node of its own (node ids are unique, and never u32::MAX).
                    (true, _) => (node.0, 0, 0, 0, u32::MAX),
                };
                let key = (if parent == u32::MAX { u32::MAX - 1 - group } else { parent }, content);
                let id = *index.entry(key).or_insert_with(|| {
                    tree.parent.push(parent);
                    tree.group.push(group);
                    (tree.parent.len() - 1) as u32
                });
                tree.node_of[offset + k] = id;
                parent = id;
            }
        }
    } else {
        tree.node_of = tr.path_nodes.iter().map(|n| n.0).collect();
        tree.parent = run.nodes.parent.iter().map(|p| p.0).collect();
        tree.group = run.nodes.group.iter().map(|g| g.0).collect();
    }
    let trajectories =
        Trajectories { reward: &tr.reward, path_offsets: &tr.path_offsets, num_groups: run.groups.len() };
    fill_values(&mut tree, mode, &trajectories, |t| tr.group[t].index());
    tree
}
