//! The rollout tree of one group, laid out once: explicit tree nodes as logged, or independent
//! rollouts merged into an implicit tree by identical step prefix or by state key. Leaves sit on
//! consecutive rows in depth-first order; a parent sits midway between its first and last child.

use std::collections::HashMap;

use crate::model::{GroupId, NodeId, Run, TrajectoryId};

/// How rollouts of a group become a tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TreeMerge {
    /// The run's own nodes: explicit trees branch, independent rollouts stay separate chains.
    #[default]
    Logged,
    /// Merge steps with identical content (kind, thought, action, observation) under the same parent.
    Prefix,
    /// Merge steps with the same state key under the same parent (steps without a key stay apart).
    StateKey,
}

impl TreeMerge {
    /// Every mode, for pickers.
    pub const ALL: [Self; 3] = [Self::Logged, Self::Prefix, Self::StateKey];

    /// Label for pickers.
    pub fn label(self) -> &'static str {
        match self {
            Self::Logged => "as logged",
            Self::Prefix => "merge identical prefixes",
            Self::StateKey => "merge by state key",
        }
    }
}

/// One node of the laid-out tree.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutNode {
    /// Parent index in [`GroupTree::nodes`], `u32::MAX` under the prompt.
    pub parent: u32,
    /// Depth (1 for a step under the prompt).
    pub depth: u32,
    /// Row (in leaf units).
    pub y: f32,
    /// A run node this tree node stands for (the first one merged into it).
    pub node: NodeId,
    /// A trajectory ending here, if any.
    pub leaf_of: Option<TrajectoryId>,
    /// Number of children.
    pub num_children: u32,
}

/// A group's tree: nodes in parent-before-child order, and the path positions merged into each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupTree {
    /// The nodes.
    pub nodes: Vec<LayoutNode>,
    /// Path positions of node `i` are `positions[position_offsets[i]..position_offsets[i + 1]]`.
    pub position_offsets: Vec<u32>,
    /// Concatenated path positions.
    pub positions: Vec<u32>,
    /// The tree node of each member path position, keyed by path position.
    pub node_of_position: HashMap<u32, u32>,
    /// Number of rows (leaves).
    pub num_rows: usize,
    /// Largest depth.
    pub max_depth: u32,
}

impl GroupTree {
    /// Builds and lays out the tree of `group`.
    pub fn build(run: &Run, group: GroupId, merge: TreeMerge) -> Self {
        let tr = &run.trajectories;
        let nodes = &run.nodes;
        let mut index: HashMap<(u32, u64), u32> = HashMap::new();
        let mut tree = Self::default();
        let mut members_of: Vec<Vec<u32>> = Vec::new();
        for &t in run.groups.members(group) {
            let mut parent = u32::MAX;
            for (k, p) in tr.path_range(t).enumerate() {
                let node = tr.path_nodes[p];
                let content = match merge {
                    TreeMerge::Logged => u64::from(node.0),
                    TreeMerge::Prefix => content_hash(run, node),
                    TreeMerge::StateKey if nodes.state_key[node.index()].is_some() => {
                        u64::from(nodes.state_key[node.index()].0)
                    }
                    // No state key: a node of its own.
                    TreeMerge::StateKey => (1 << 40) | u64::from(node.0),
                };
                let next = tree.nodes.len() as u32;
                let id = *index.entry((parent, content)).or_insert(next);
                if id == next {
                    tree.nodes.push(LayoutNode {
                        parent,
                        depth: k as u32 + 1,
                        y: 0.0,
                        node,
                        leaf_of: None,
                        num_children: 0,
                    });
                    members_of.push(Vec::new());
                    if let Some(p) = tree.nodes.get_mut(parent as usize) {
                        p.num_children += 1;
                    }
                }
                members_of[id as usize].push(p as u32);
                tree.node_of_position.insert(p as u32, id);
                parent = id;
            }
            if let Some(leaf) = tree.nodes.get_mut(parent as usize) {
                leaf.leaf_of.get_or_insert(t);
            }
        }
        tree.position_offsets.push(0);
        for members in members_of {
            tree.positions.extend(members);
            tree.position_offsets.push(tree.positions.len() as u32);
        }
        tree.layout();
        tree
    }

    /// Leaves on consecutive rows in depth-first order; parents midway between first and last child.
    fn layout(&mut self) {
        let n = self.nodes.len();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            match children.get_mut(node.parent as usize) {
                Some(list) => list.push(i as u32),
                None => roots.push(i as u32),
            }
        }
        let mut row = 0.0f32;
        // Iterative post-order: (node, children visited).
        let mut stack: Vec<(u32, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((v, done)) = stack.pop() {
            let kids = &children[v as usize];
            if kids.is_empty() {
                self.nodes[v as usize].y = row;
                row += 1.0;
            } else if done {
                let (first, last) = (kids[0] as usize, kids[kids.len() - 1] as usize);
                self.nodes[v as usize].y = (self.nodes[first].y + self.nodes[last].y) / 2.0;
            } else {
                stack.push((v, true));
                stack.extend(kids.iter().rev().map(|&c| (c, false)));
            }
        }
        self.num_rows = row as usize;
        self.max_depth = self.nodes.iter().map(|n| n.depth).max().unwrap_or(0);
    }

    /// The path positions merged into node `i`.
    pub fn positions_of(&self, i: usize) -> &[u32] {
        match (self.position_offsets.get(i), self.position_offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.positions[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The mean of `value(position)` over the path positions merged into node `i`, `NaN` when
    /// none is finite.
    pub fn mean_of(&self, i: usize, value: impl Fn(usize) -> f32) -> f32 {
        let (mut sum, mut n) = (0.0f64, 0u32);
        for &p in self.positions_of(i) {
            let v = value(p as usize);
            if v.is_finite() {
                sum += f64::from(v);
                n += 1;
            }
        }
        if n == 0 { f32::NAN } else { (sum / f64::from(n)) as f32 }
    }
}

fn content_hash(run: &Run, node: NodeId) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let n = node.index();
    let nodes = &run.nodes;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    nodes.kind[n].0.hash(&mut h);
    run.text(nodes.thought[n]).hash(&mut h);
    run.text(nodes.action[n]).hash(&mut h);
    run.text(nodes.observation[n]).hash(&mut h);
    nodes.state_key[n].0.hash(&mut h);
    // Keep the top bit clear of the state-key mode's marker space; collisions are astronomically rare.
    h.finish() >> 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{LoadReport, load_bytes};

    const LOG: &str = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "s", "state": "k0"}, {"thought": "x", "state": "k1"}]}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "s", "state": "k0"}, {"thought": "y", "state": "k1"}]}
{"type": "trajectory", "id": "c", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "t", "state": "k0"}]}
"#;

    #[test]
    fn merge_modes_give_the_trees_they_name() {
        let run = load_bytes("t.jsonl", LOG.as_bytes(), &mut LoadReport::new("t.jsonl")).expect("loads");
        let g = run.group_by_key("g").expect("group");
        // As logged: three chains, 5 nodes, 3 rows.
        let logged = GroupTree::build(&run, g, TreeMerge::Logged);
        assert_eq!((logged.nodes.len(), logged.num_rows), (5, 3));
        // Prefix: "s" is shared by a and b; c's "t" differs: s → {x, y}, t → 4 nodes, 3 rows.
        let prefix = GroupTree::build(&run, g, TreeMerge::Prefix);
        assert_eq!((prefix.nodes.len(), prefix.num_rows), (4, 3));
        assert_eq!(prefix.nodes[0].num_children, 2);
        assert_eq!(prefix.positions_of(0).len(), 2);
        // The shared node sits midway between its two children.
        assert!((prefix.nodes[0].y - 0.5).abs() < 1e-6);
        // State key: every first step is k0 (one node), both second steps are k1 (one node).
        let state = GroupTree::build(&run, g, TreeMerge::StateKey);
        assert_eq!(state.nodes.len(), 2);
        assert_eq!(state.positions_of(0).len(), 3);
        let credit: Vec<f32> = (0..run.num_path_steps()).map(|p| p as f32).collect();
        assert!((state.mean_of(1, |p| credit.get(p).copied().unwrap_or(f32::NAN)) - 2.0).abs() < 1e-6);
    }
}
