//! Node values for tree credit: the mean outcome of a node's descendant leaves, or the mean of its
//! children's values; over explicit trees, or over the implicit tree that merging independent
//! rollouts of a group by identical step prefix gives. The tree itself is built from the run by the engine (`engine::tree`).

/// How a node's value is formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueMode {
    /// Mean outcome over the leaves below the node (each trajectory counted once).
    LeafMean,
    /// Mean of the children's values (leaves: their outcome).
    ChildMean,
}

/// A tree over the run's path positions: each path position maps to a tree node; each tree node has
/// a parent (`u32::MAX` under the group's root) and a group.
#[derive(Clone, Debug, Default)]
pub struct ValueTree {
    /// Tree node of each entry of `run.trajectories.path_nodes`.
    pub node_of: Vec<u32>,
    /// Parent of each tree node (`u32::MAX`: under the root).
    pub parent: Vec<u32>,
    /// Group of each tree node.
    pub group: Vec<u32>,
    /// Value of each tree node.
    pub value: Vec<f32>,
    /// Value of each group's root (over its trajectories with an outcome).
    pub root_value: Vec<f32>,
}

/// Sibling sets of a [`ValueTree`]: the children of each node, and each group's top nodes, as one
/// concatenated list (CSR).
#[derive(Clone, Debug, Default)]
pub struct SiblingSets {
    offsets: Vec<u32>,
    members: Vec<u32>,
}

impl SiblingSets {
    /// Each non-empty set of siblings.
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> {
        self.offsets.windows(2).map(|w| &self.members[w[0] as usize..w[1] as usize]).filter(|s| !s.is_empty())
    }
}

impl ValueTree {
    /// The sibling sets, in node order within each set.
    pub fn sibling_sets(&self) -> SiblingSets {
        let n = self.parent.len();
        let slot = |v: usize| match self.parent[v] {
            u32::MAX => n + self.group[v] as usize,
            p => p as usize,
        };
        let slots = n + self.root_value.len();
        let mut offsets = vec![0u32; slots + 1];
        for v in 0..n {
            offsets[slot(v) + 1] += 1;
        }
        for i in 0..slots {
            offsets[i + 1] += offsets[i];
        }
        let mut next = offsets.clone();
        let mut members = vec![0u32; n];
        for v in 0..n {
            let s = slot(v);
            members[next[s] as usize] = v as u32;
            next[s] += 1;
        }
        SiblingSets { offsets, members }
    }

    /// Each node's value relative to its siblings' (the children of its parent, or the top nodes
    /// of its group): `(V − mean)/(std + ε)` with `use_std`, else `V − mean` (unbiased std over the
    /// siblings with a value). A node without siblings gets 0, or with `verl_singleton` verl's
    /// rule `V/(1 + ε)`. Also each node's (mean, std) of its siblings. NaN where a node has no value.
    pub fn sibling_z(&self, use_std: bool, eps: f32, verl_singleton: bool) -> (Vec<f32>, Vec<[f32; 2]>) {
        let mut advantage = vec![f32::NAN; self.parent.len()];
        let mut stats = vec![[f32::NAN; 2]; self.parent.len()];
        let sets = self.sibling_sets();
        let mut values = Vec::new();
        for members in sets.iter() {
            values.clear();
            values.extend(members.iter().map(|&v| self.value[v as usize]).filter(|x| !x.is_nan()));
            let (mean, std) = crate::credit::data::moments::group_stats(&values);
            for &v in members {
                let x = self.value[v as usize];
                if x.is_nan() {
                    continue;
                }
                advantage[v as usize] = match values.len() {
                    1 if verl_singleton => x / (1.0 + eps),
                    1 => 0.0,
                    _ if use_std => (x - mean) / (std + eps),
                    _ => x - mean,
                };
                stats[v as usize] = [mean, std];
            }
        }
        (advantage, stats)
    }

    /// The value of a tree node's parent (the group's root value for a top node).
    pub fn parent_value(&self, v: u32) -> f32 {
        match self.parent[v as usize] {
            u32::MAX => self.root_value[self.group[v as usize] as usize],
            p => self.value[p as usize],
        }
    }
}

/// What [`fill_values`] reads of the run's trajectories: each one's outcome (`NaN`: none), its
/// path's range in [`ValueTree::node_of`] (`path_offsets[t]..path_offsets[t + 1]`); and how many
/// groups there are (each trajectory's group is [`fill_values`]' `group_of`).
#[derive(Clone, Copy, Debug)]
pub struct Trajectories<'a> {
    /// Outcome reward of each trajectory.
    pub reward: &'a [f32],
    /// Path offsets, one more than trajectories.
    pub path_offsets: &'a [u32],
    /// Number of groups.
    pub num_groups: usize,
}

/// Fills in each tree node's value (and each group's root value) from the trajectories' outcomes.
pub fn fill_values(
    tree: &mut ValueTree,
    mode: ValueMode,
    trajectories: &Trajectories<'_>,
    group_of: impl Fn(usize) -> usize,
) {
    let n = tree.parent.len();
    let num_groups = trajectories.num_groups;
    // Leaf outcomes: the reward of the trajectory ending at each tree node.
    let mut leaf_sum = vec![0.0f64; n];
    let mut leaf_count = vec![0u32; n];
    let mut root_sum = vec![0.0f64; num_groups];
    let mut root_count = vec![0u32; num_groups];
    for (t, &r) in trajectories.reward.iter().enumerate() {
        if r.is_nan() {
            continue;
        }
        let end = trajectories.path_offsets[t + 1] as usize;
        let start = trajectories.path_offsets[t] as usize;
        if end == start {
            continue;
        }
        match mode {
            ValueMode::LeafMean => {
                for k in start..end {
                    let v = tree.node_of[k] as usize;
                    leaf_sum[v] += f64::from(r);
                    leaf_count[v] += 1;
                }
            }
            ValueMode::ChildMean => {
                let leaf = tree.node_of[end - 1] as usize;
                leaf_sum[leaf] += f64::from(r);
                leaf_count[leaf] += 1;
            }
        }
        root_sum[group_of(t)] += f64::from(r);
        root_count[group_of(t)] += 1;
    }
    tree.value = vec![f32::NAN; n];
    match mode {
        ValueMode::LeafMean => {
            for v in 0..n {
                if leaf_count[v] > 0 {
                    tree.value[v] = (leaf_sum[v] / f64::from(leaf_count[v])) as f32;
                }
            }
            tree.root_value = (0..num_groups)
                .map(|g| if root_count[g] > 0 { (root_sum[g] / f64::from(root_count[g])) as f32 } else { f32::NAN })
                .collect();
        }
        ValueMode::ChildMean => {
            // Parents precede children (in the arena, and in trie creation order), so one reverse
            // pass sees every child before its parent.
            let mut child_sum = vec![0.0f64; n];
            let mut child_count = vec![0u32; n];
            let mut top_sum = vec![0.0f64; num_groups];
            let mut top_count = vec![0u32; num_groups];
            for v in (0..n).rev() {
                let value = if child_count[v] > 0 {
                    child_sum[v] / f64::from(child_count[v])
                } else if leaf_count[v] > 0 {
                    leaf_sum[v] / f64::from(leaf_count[v])
                } else {
                    continue;
                };
                tree.value[v] = value as f32;
                match tree.parent[v] {
                    u32::MAX => {
                        top_sum[tree.group[v] as usize] += value;
                        top_count[tree.group[v] as usize] += 1;
                    }
                    p => {
                        child_sum[p as usize] += value;
                        child_count[p as usize] += 1;
                    }
                }
            }
            tree.root_value = (0..num_groups)
                .map(|g| if top_count[g] > 0 { (top_sum[g] / f64::from(top_count[g])) as f32 } else { f32::NAN })
                .collect();
        }
    }
}
