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
    /// Each path step's role in one byte (derived).
    pub path_roles: PathCodes,
    /// Each path step's kind in one byte (derived).
    pub path_kinds: PathCodes,
}

/// Each path step's label of one kind (its role, its step kind) as a one-byte code, derived when
/// the run is built: `codes[k]` is the label of `path_nodes[k]` as an index into `labels`, the
/// run's distinct labels in first-seen order along the paths ([`Sym::NONE`] for a step without
/// one). A scheme that reads a role or kind per step (TRIAGE, ProRAG) reads a byte in path order
/// instead of a four-byte symbol through the path. Empty when no step has a label, or when a run
/// has more than 256 distinct ones (read the node column then).
#[derive(Clone, Debug, Default)]
pub struct PathCodes {
    /// One code per path step, or none.
    pub codes: Vec<u8>,
    /// The label of each code.
    pub labels: Vec<Sym>,
}

impl PathCodes {
    /// The codes of `path_nodes` given each node's label (see the type).
    pub fn derive(path_nodes: &[NodeId], node_labels: &[Sym]) -> Self {
        if !node_labels.iter().any(|r| r.is_some()) {
            return Self::default();
        }
        // Code by symbol index (the last slot for `NONE` and anything out of range).
        let slots = node_labels.iter().filter(|r| r.is_some()).map(|r| r.index() + 1).max().unwrap_or(0) + 1;
        let mut code_of = vec![u16::MAX; slots];
        let mut labels = Vec::new();
        let mut codes = Vec::with_capacity(path_nodes.len());
        for node in path_nodes {
            let label = node_labels.get(node.index()).copied().unwrap_or(Sym::NONE);
            let slot = if label.is_some() { label.index().min(slots - 1) } else { slots - 1 };
            let mut code = code_of[slot];
            if code == u16::MAX {
                if labels.len() == 256 {
                    return Self::default();
                }
                code = labels.len() as u16;
                code_of[slot] = code;
                labels.push(label);
            }
            codes.push(code as u8);
        }
        Self { codes, labels }
    }
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
        self.path_roles.codes.shrink_to_fit();
        self.path_kinds.codes.shrink_to_fit();
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
            + vec_bytes(&self.path_roles.codes)
            + vec_bytes(&self.path_roles.labels)
            + vec_bytes(&self.path_kinds.codes)
            + vec_bytes(&self.path_kinds.labels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_codes_code_each_step_in_first_seen_order() {
        let [a, b] = [Sym::from_index(7), Sym::from_index(2)];
        let node_labels = [a, Sym::NONE, b, a];
        let path: Vec<NodeId> = [0, 1, 2, 3, 0, 2].into_iter().map(NodeId::from_index).collect();
        let roles = PathCodes::derive(&path, &node_labels);
        assert_eq!(roles.labels, [a, Sym::NONE, b]);
        assert_eq!(roles.codes, [0, 1, 2, 0, 0, 2]);
        // No role at all: nothing kept.
        assert!(PathCodes::derive(&path, &[Sym::NONE; 4]).codes.is_empty());
        // 257 distinct roles do not fit in a byte: nothing kept (TRIAGE then reads `nodes.role`).
        let many: Vec<Sym> = (0..257).map(Sym::from_index).collect();
        let path: Vec<NodeId> = (0..257).map(NodeId::from_index).collect();
        assert!(PathCodes::derive(&path, &many).codes.is_empty());
        assert_eq!(PathCodes::derive(&path[..256], &many).labels.len(), 256);
    }
}
