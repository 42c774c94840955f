//! A loaded run: one source, its groups, node arena, trajectories and tokens.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::{
    GroupId, Groups, Interner, NodeId, Nodes, StateSlots, Sym, TextArena, TextId, Tokens, Trajectories, TrajectoryId,
    Trees, Warning,
};

/// What a run is and where it came from.
#[derive(Clone, Debug, Default)]
pub struct RunMeta {
    /// Display name (usually the file name).
    pub name: String,
    /// The format it was read from, e.g. `vantage JSONL v1`.
    pub format: String,
    /// Free-form run metadata from the log's header (model, trainer, config, …).
    pub metadata: BTreeMap<String, serde_json::Value>,
    /// Warnings recorded while loading, in file order.
    pub warnings: Vec<Warning>,
    /// Facts about how the log was interpreted, e.g. "groups rebuilt from identical prompts".
    pub notes: Vec<String>,
    /// Which training steps are open, when the run is some of the training steps of a
    /// partitioned run (a vantage Parquet v2 dataset opened with a range); the app offers others.
    pub step_window: Option<StepWindow>,
    /// The outcomes of every training step of the whole partitioned run, from its manifest
    /// (empty for other runs): what the overview draws beyond the steps open.
    pub all_steps: Vec<StepOutcome>,
    /// How many times the run was rebuilt with more of its file read (a lazily read Inspect
    /// `.eval` grows as its samples are read); views key their caches on it with the name.
    pub revision: u64,
    /// Its labels (docs/LABELS.md): those its log carries and those beside it when it was opened,
    /// put on its rollouts and steps; what formulas' `label(NAME)` reads.
    pub labels: std::sync::Arc<super::labels::RunLabels>,
    /// The labels its log itself carries (a grader's verdicts, a verifier's failure reasons),
    /// which a loader imports (source kind `file`); a labels file beside the run can take them off.
    pub imported_labels: Vec<super::labels::Label>,
}

/// The training steps open of a partitioned run, and those it has (inclusive ranges).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepWindow {
    /// The first and last training step open.
    pub open: (i64, i64),
    /// The first and last training step of the whole run.
    pub all: (i64, i64),
    /// How many training-step partitions are open, and how many the run has.
    pub partitions: (usize, usize),
}

/// One training step of a partitioned run, as its manifest counts it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepOutcome {
    /// The training step.
    pub train_step: i64,
    /// Its trajectories.
    pub trajectories: u64,
    /// Mean logged outcome reward (`NaN` when none was logged).
    pub mean_reward: f64,
    /// Share of successes among the trajectories with a success flag (`NaN` when none has one).
    pub success_rate: f64,
}

/// A run in memory: struct-of-arrays, `u32` indices, interned labels, one text arena.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// Name, format, metadata and load warnings.
    pub meta: RunMeta,
    /// Interned labels (kinds, roles, ids, state keys, document ids, finish reasons).
    pub labels: Interner,
    /// All texts.
    pub text: TextArena,
    /// Groups.
    pub groups: Groups,
    /// Tree records.
    pub trees: Trees,
    /// The node arena.
    pub nodes: Nodes,
    /// Trajectories (root-to-leaf paths).
    pub trajectories: Trajectories,
    /// Per-token columns.
    pub tokens: Tokens,
    /// Each path step's state key as a slot in its group, derived on first use.
    state_slots: OnceLock<StateSlots>,
}

impl Run {
    /// The string of a label, `""` if absent.
    pub fn label(&self, sym: Sym) -> &str {
        self.labels.str(sym)
    }

    /// A text, `""` if absent (read from the log when the run left it there, see [`TextArena`]).
    pub fn text(&self, id: TextId) -> std::borrow::Cow<'_, str> {
        self.text.get(id)
    }

    /// The texts of `ids`, in their order ([`crate::model::TextArena::get_many`]: those left in
    /// the log are read a stretch at a time).
    pub fn texts(&self, ids: &[TextId]) -> Vec<std::borrow::Cow<'_, str>> {
        self.text.get_many(ids)
    }

    /// Each path step's state key as a one-byte slot within its group ([`StateSlots`]), derived
    /// the first time it is asked for and kept with the run (a run's steps do not change once
    /// built).
    pub fn state_slots(&self) -> &StateSlots {
        self.state_slots.get_or_init(|| StateSlots::derive(self))
    }

    /// Sum of path lengths over all trajectories (a shared tree prefix counts once per trajectory).
    pub fn num_path_steps(&self) -> usize {
        self.trajectories.path_nodes.len()
    }

    /// The trajectory with external id `key`.
    pub fn trajectory_by_key(&self, key: &str) -> Option<TrajectoryId> {
        let sym = self.labels.lookup(key)?;
        self.trajectories.key.iter().position(|&k| k == sym).map(TrajectoryId::from_index)
    }

    /// The group with external id `key`.
    pub fn group_by_key(&self, key: &str) -> Option<GroupId> {
        let sym = self.labels.lookup(key)?;
        self.groups.key.iter().position(|&k| k == sym).map(GroupId::from_index)
    }

    /// External id of a trajectory.
    pub fn trajectory_key(&self, trajectory: TrajectoryId) -> &str {
        self.label(self.trajectories.key.get(trajectory.index()).copied().unwrap_or(Sym::NONE))
    }

    /// External id of a group.
    pub fn group_key(&self, group: GroupId) -> &str {
        self.label(self.groups.key.get(group.index()).copied().unwrap_or(Sym::NONE))
    }

    /// Depth of a node (1 for a child of the prompt).
    pub fn depth(&self, node: NodeId) -> usize {
        let mut depth = 0;
        let mut current = node;
        while let Some(n) = current.get() {
            depth += 1;
            current = self.nodes.parent.get(n.index()).copied().unwrap_or(NodeId::NONE);
            if depth > self.nodes.len() {
                break;
            }
        }
        depth
    }

    /// Releases spare capacity of every column (builders grow them by doubling).
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.nodes.shrink_to_fit();
        self.trajectories.shrink_to_fit();
        self.tokens.shrink_to_fit();
    }

    /// Approximate heap bytes of the whole run.
    pub fn heap_bytes(&self) -> usize {
        self.labels.heap_bytes()
            + self.text.heap_bytes()
            + self.groups.heap_bytes()
            + self.trees.key.capacity() * 8
            + self.nodes.heap_bytes()
            + self.trajectories.heap_bytes()
            + self.tokens.heap_bytes()
            + self.state_slots.get().map_or(0, StateSlots::heap_bytes)
    }
}
