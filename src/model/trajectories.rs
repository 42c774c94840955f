//! Trajectories: root-to-leaf paths with outcomes, as columns.

use std::collections::BTreeMap;

use super::columns::{named_bytes, vec_bytes};
use super::{GroupId, NodeId, Sym, TrajectoryId, TreeId};

/// The outcome of a trajectory as logged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome<'a> {
    /// Scalar reward (`None` if not logged).
    pub reward: Option<f32>,
    /// Success flag.
    pub success: Option<bool>,
    /// Named reward components (`acc`, `format`, `f1`, …).
    pub components: Vec<(&'a str, f32)>,
    /// Finish reason: stop, length, truncated, invalid, or another word.
    pub finish: Option<&'a str>,
}

/// All trajectories of a run, struct-of-arrays.
#[derive(Clone, Debug, Default)]
pub struct Trajectories {
    /// External trajectory id (unique within the run).
    pub key: Vec<Sym>,
    /// Group of each trajectory.
    pub group: Vec<GroupId>,
    /// The tree record it came from, or `NONE` for a plain trajectory record.
    pub tree: Vec<TreeId>,
    /// Last node of the path.
    pub leaf: Vec<NodeId>,
    /// Outcome reward (`NaN` if missing).
    pub reward: Vec<f32>,
    /// Outcome success (`None` if not logged).
    pub success: Vec<Option<bool>>,
    /// Finish reason (`NONE` if not logged).
    pub finish: Vec<Sym>,
    /// Named outcome components, `NaN` where missing.
    pub components: BTreeMap<String, Vec<f32>>,
    /// Path of trajectory `i` is `path_nodes[path_offsets[i]..path_offsets[i + 1]]`, root first (derived).
    pub path_offsets: Vec<u32>,
    /// Concatenated paths (derived).
    pub path_nodes: Vec<NodeId>,
    /// Whether `path_nodes[k]` is node `k` for every `k` (derived): each trajectory is its own
    /// chain of steps, logged in order, as most step logs are. A per-node column is then already
    /// in path order and needs no gathering.
    pub paths_in_node_order: bool,
    /// Tokens of trajectory `i` are `token_offsets[i]..token_offsets[i + 1]` in the run's token columns.
    pub token_offsets: Vec<u64>,
}

impl Trajectories {
    /// Number of trajectories.
    pub fn len(&self) -> usize {
        self.key.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.key.is_empty()
    }

    /// All trajectory ids.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = TrajectoryId> + use<> {
        (0..self.len()).map(TrajectoryId::from_index)
    }

    /// The positions of a trajectory's steps in `path_nodes` (and in any step credit aligned with it).
    pub fn path_range(&self, trajectory: TrajectoryId) -> std::ops::Range<usize> {
        let i = trajectory.index();
        let (Some(&start), Some(&end)) = (self.path_offsets.get(i), self.path_offsets.get(i + 1)) else {
            return 0..0;
        };
        start as usize..(end as usize).max(start as usize)
    }

    /// The trajectory whose path holds `position` (an index into `path_nodes`): the last one
    /// starting at or before it; `None` past the end.
    pub fn at_position(&self, position: usize) -> Option<TrajectoryId> {
        if position >= self.path_nodes.len() || self.is_empty() {
            return None;
        }
        // Path offsets are sorted.
        let t = self.path_offsets.partition_point(|&o| o as usize <= position).saturating_sub(1);
        Some(TrajectoryId::from_index(t.min(self.len() - 1)))
    }

    /// The nodes of a trajectory, root first.
    pub fn path(&self, trajectory: TrajectoryId) -> &[NodeId] {
        self.path_nodes.get(self.path_range(trajectory)).unwrap_or(&[])
    }

    /// Number of steps on a trajectory's path.
    pub fn num_steps(&self, trajectory: TrajectoryId) -> usize {
        self.path(trajectory).len()
    }

    /// The token range of a trajectory in the run's token columns.
    pub fn token_range(&self, trajectory: TrajectoryId) -> std::ops::Range<usize> {
        let i = trajectory.index();
        let start = self.token_offsets.get(i).copied().unwrap_or(0) as usize;
        let end = self.token_offsets.get(i + 1).copied().unwrap_or(0) as usize;
        start..end.max(start)
    }

    /// Releases spare capacity of every column.
    pub fn shrink_to_fit(&mut self) {
        self.key.shrink_to_fit();
        self.group.shrink_to_fit();
        self.tree.shrink_to_fit();
        self.leaf.shrink_to_fit();
        self.reward.shrink_to_fit();
        self.success.shrink_to_fit();
        self.finish.shrink_to_fit();
        self.components.values_mut().for_each(Vec::shrink_to_fit);
        self.path_nodes.shrink_to_fit();
        self.token_offsets.shrink_to_fit();
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        vec_bytes(&self.key)
            + vec_bytes(&self.group)
            + vec_bytes(&self.tree)
            + vec_bytes(&self.leaf)
            + vec_bytes(&self.reward)
            + vec_bytes(&self.success)
            + vec_bytes(&self.finish)
            + named_bytes(&self.components)
            + vec_bytes(&self.path_offsets)
            + vec_bytes(&self.path_nodes)
            + vec_bytes(&self.token_offsets)
    }
}
