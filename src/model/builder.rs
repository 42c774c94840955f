//! Building a [`Run`] record by record, then deriving paths, children and group members.
//!
//! The builder trusts its caller (a loader) to have validated each record: it never panics, but
//! it does not report problems either, except the few that only it can see (duplicate ids).

use std::collections::HashMap;

use super::nodes::NodeRow;
use super::text::{RawWindow, TextSource};
use super::{GroupId, McStats, NewStep, NewTokens, NodeId, Outcome, Run, RunMeta, Sym, TextId, TrajectoryId, TreeId};

/// A group's attributes as a record states them.
#[derive(Clone, Debug, Default)]
pub struct NewGroup<'a> {
    /// External id.
    pub key: &'a str,
    /// Task / prompt id.
    pub task: Option<&'a str>,
    /// Training step.
    pub train_step: Option<i64>,
    /// Prompt text.
    pub prompt: Option<&'a str>,
    /// Gold answer.
    pub gold: Option<&'a str>,
    /// Monte-Carlo statistics of rollouts from the prompt state.
    pub mc: Option<McStats>,
    /// Those rollouts one by one (reward, finish reason), when the log lists them.
    pub mc_rollouts: Vec<(f32, Option<&'a str>)>,
}

/// Accumulates records into a [`Run`].
#[derive(Debug, Default)]
pub struct RunBuilder {
    run: Run,
    groups_by_key: HashMap<Sym, GroupId>,
    trajectories_by_key: HashMap<Sym, TrajectoryId>,
    trees_by_key: HashMap<Sym, TreeId>,
}

impl RunBuilder {
    /// An empty run named `name`, read from `format`.
    pub fn new(name: &str, format: &str) -> Self {
        let mut builder = Self::default();
        builder.run.meta.name = name.to_owned();
        builder.run.meta.format = format.to_owned();
        builder
    }

    /// The run's metadata, to fill in header fields.
    pub fn meta_mut(&mut self) -> &mut RunMeta {
        &mut self.run.meta
    }

    /// Number of nodes so far.
    pub fn num_nodes(&self) -> usize {
        self.run.nodes.len()
    }

    /// Number of trajectories so far.
    pub fn num_trajectories(&self) -> usize {
        self.run.trajectories.len()
    }

    /// The group with external id `key`, if one was added.
    pub fn group(&self, key: &str) -> Option<GroupId> {
        self.groups_by_key.get(&self.run.labels.lookup(key)?).copied()
    }

    /// Whether a trajectory with this external id exists.
    pub fn has_trajectory(&self, key: &str) -> bool {
        self.run.labels.lookup(key).is_some_and(|sym| self.trajectories_by_key.contains_key(&sym))
    }

    /// The tree with external id `key`, if one was added.
    pub fn tree(&self, key: &str) -> Option<TreeId> {
        self.trees_by_key.get(&self.run.labels.lookup(key)?).copied()
    }

    /// Whether a tree with this external id exists.
    pub fn has_tree(&self, key: &str) -> bool {
        self.run.labels.lookup(key).is_some_and(|sym| self.trees_by_key.contains_key(&sym))
    }

    /// Adds a group, or merges into the existing one with the same key. Returns the group and the
    /// names of attributes whose new value disagrees with the one already set (the first wins).
    pub fn add_group(&mut self, group: &NewGroup<'_>) -> (GroupId, Vec<&'static str>) {
        let key = self.run.labels.intern(group.key);
        let run = &mut self.run;
        if let Some(&id) = self.groups_by_key.get(&key) {
            let i = id.index();
            let mut conflicts = Vec::new();
            if let Some(task) = group.task {
                let sym = run.labels.intern(task);
                if run.groups.task[i].is_none() {
                    run.groups.task[i] = sym;
                } else if run.groups.task[i] != sym {
                    conflicts.push("task");
                }
            }
            if let Some(step) = group.train_step {
                match run.groups.train_step[i] {
                    None => run.groups.train_step[i] = Some(step),
                    Some(existing) if existing != step => conflicts.push("train_step"),
                    Some(_) => {}
                }
            }
            for (name, value, column) in
                [("prompt", group.prompt, &mut run.groups.prompt), ("gold", group.gold, &mut run.groups.gold)]
            {
                let Some(value) = value.filter(|v| !v.is_empty()) else {
                    continue;
                };
                if column[i].is_none() {
                    column[i] = run.text.push(value);
                } else if !run.text.equals(column[i], value) {
                    conflicts.push(name);
                }
            }
            if run.groups.mc[i].is_none() && group.mc.is_some() {
                run.groups.mc[i] = group.mc;
                run.groups.mc_rollouts[i] =
                    group.mc_rollouts.iter().map(|&(r, f)| (r, run.labels.intern_opt(f))).collect();
            }
            return (id, conflicts);
        }
        let id = GroupId::from_index(run.groups.len());
        run.groups.mc.push(group.mc);
        run.groups.mc_rollouts.push(group.mc_rollouts.iter().map(|&(r, f)| (r, run.labels.intern_opt(f))).collect());
        run.groups.key.push(key);
        run.groups.task.push(run.labels.intern_opt(group.task));
        run.groups.train_step.push(group.train_step);
        run.groups.prompt.push(run.text.push_opt(group.prompt));
        run.groups.gold.push(run.text.push_opt(group.gold));
        self.groups_by_key.insert(key, id);
        (id, Vec::new())
    }

    /// Adds a tree record; `None` if a tree with this key exists.
    pub fn add_tree(&mut self, key: &str, group: GroupId) -> Option<TreeId> {
        let sym = self.run.labels.intern(key);
        if self.trees_by_key.contains_key(&sym) {
            return None;
        }
        let id = TreeId::from_index(self.run.trees.len());
        self.run.trees.key.push(sym);
        self.run.trees.group.push(group);
        self.trees_by_key.insert(sym, id);
        Some(id)
    }

    /// Adds one node under `parent` (`NONE`: under the prompt). The parent must already exist.
    pub fn add_node(&mut self, group: GroupId, parent: NodeId, step: &NewStep<'_>) -> NodeId {
        let run = &mut self.run;
        let parent = if parent.index() < run.nodes.len() { parent } else { NodeId::NONE };
        let row = NodeRow {
            parent,
            group,
            key: run.labels.intern_opt(step.key),
            kind: run.labels.intern_opt(step.kind),
            role: run.labels.intern_opt(step.role),
            thought: run.text.push_opt(step.thought),
            action: run.text.push_opt(step.action),
            observation: run.text.push_opt(step.observation),
            state_key: run.labels.intern_opt(step.state_key),
            docs: step.docs.iter().map(|d| run.labels.intern(d)).collect(),
            mc_rollouts: step.mc_rollouts.iter().map(|&(r, f)| (r, run.labels.intern_opt(f))).collect(),
        };
        run.nodes.push(&row, step)
    }

    /// Adds a chain of steps under the prompt of `group`, returning the last node (`NONE` if `steps` is empty).
    pub fn add_chain(&mut self, group: GroupId, steps: &[NewStep<'_>]) -> NodeId {
        let mut parent = NodeId::NONE;
        for step in steps {
            parent = self.add_node(group, parent, step);
        }
        parent
    }

    /// Adds a trajectory ending at `leaf` ([`NodeId::NONE`]: a trajectory of no step, its outcome
    /// alone); `None` if the key is taken or `leaf` does not exist.
    /// Token arrays must have equal lengths (checked by the caller); extra values are ignored.
    pub fn add_trajectory(
        &mut self,
        key: &str,
        group: GroupId,
        tree: TreeId,
        leaf: NodeId,
        outcome: &Outcome<'_>,
        tokens: &NewTokens<'_>,
    ) -> Option<TrajectoryId> {
        let run = &mut self.run;
        let sym = run.labels.intern(key);
        if self.trajectories_by_key.contains_key(&sym) || (leaf != NodeId::NONE && leaf.index() >= run.nodes.len()) {
            return None;
        }
        let index = run.trajectories.len();
        let t = &mut run.trajectories;
        t.key.push(sym);
        t.group.push(group);
        t.tree.push(tree);
        t.leaf.push(leaf);
        t.reward.push(outcome.reward.unwrap_or(f32::NAN));
        t.success.push(outcome.success);
        t.finish.push(run.labels.intern_opt(outcome.finish));
        super::columns::push_named(&mut t.components, index, &outcome.components);
        let num_tokens = tokens.len().unwrap_or(0);
        let text: Option<Vec<TextId>> = tokens.text.map(|strings| strings.iter().map(|s| run.text.push(s)).collect());
        if t.token_offsets.is_empty() {
            t.token_offsets.push(0);
        }
        run.tokens.push(tokens, text.as_deref(), num_tokens);
        t.token_offsets.push(run.tokens.len as u64);
        let id = TrajectoryId::from_index(index);
        self.trajectories_by_key.insert(sym, id);
        Some(id)
    }

    /// Adds a trajectory of no step: its outcome alone (a trial whose agent did nothing, a failed
    /// generation that still entered its group). `None` if the key is taken.
    pub fn add_outcome_only_trajectory(
        &mut self,
        key: &str,
        group: GroupId,
        outcome: &Outcome<'_>,
    ) -> Option<TrajectoryId> {
        self.add_trajectory(key, group, TreeId::NONE, NodeId::NONE, outcome, &NewTokens::default())
    }

    /// Adds a plain trajectory: a chain of `steps` under the group's prompt, ending in the outcome.
    /// `None` if the key is taken or there are no steps.
    pub fn add_chain_trajectory(
        &mut self,
        key: &str,
        group: GroupId,
        steps: &[NewStep<'_>],
        outcome: &Outcome<'_>,
        tokens: &NewTokens<'_>,
    ) -> Option<TrajectoryId> {
        if steps.is_empty() || self.has_trajectory(key) {
            return None;
        }
        let leaf = self.add_chain(group, steps);
        self.add_trajectory(key, group, TreeId::NONE, leaf, outcome, tokens)
    }

    /// Adds a plain trajectory whose steps' texts (thought, action, observation) are already
    /// stored ([`RunBuilder::push_composed_text`]); the steps' own texts are not read. `None` if
    /// the key is taken or there are no steps.
    pub fn add_chain_trajectory_with_texts(
        &mut self,
        key: &str,
        group: GroupId,
        steps: &[NewStep<'_>],
        texts: &[[TextId; 3]],
        outcome: &Outcome<'_>,
        tokens: &NewTokens<'_>,
    ) -> Option<TrajectoryId> {
        if steps.is_empty() || self.has_trajectory(key) {
            return None;
        }
        let mut parent = NodeId::NONE;
        for (i, step) in steps.iter().enumerate() {
            parent = self.add_node(group, parent, step);
            self.set_node_texts(parent, texts.get(i).copied().unwrap_or([TextId::NONE; 3]));
        }
        self.add_trajectory(key, group, TreeId::NONE, parent, outcome, tokens)
    }

    /// Stores a text made of `parts` ([`super::TextArena::push_composed`]).
    pub fn push_composed_text(&mut self, parts: &[super::TextPart<'_>]) -> TextId {
        self.run.text.push_composed(parts)
    }

    /// The run's token columns and the token range of the trajectory `key`, to fill in values a
    /// log gives after the trajectory (a trainer's later annotations); `None` without it.
    pub fn trajectory_tokens_mut(&mut self, key: &str) -> Option<(std::ops::Range<usize>, &mut super::Tokens)> {
        let id = *self.trajectories_by_key.get(&self.run.labels.lookup(key)?)?;
        let range = self.run.trajectories.token_range(id);
        Some((range, &mut self.run.tokens))
    }

    /// From now on, texts that lie in `window` are raw JSON of the log (string literals, or pieces
    /// of one's inside), kept as byte ranges of it (see [`RawWindow`]); `None` ends that.
    pub fn set_raw_window(&mut self, window: Option<RawWindow>) {
        self.run.text.set_window(window);
    }

    /// Whether `text` lies in the raw window (so raw JSON of it may be handed over as it is).
    pub fn in_raw_window(&self, text: &str) -> bool {
        self.run.text.in_window(text)
    }

    /// Where texts kept as byte ranges are read from.
    pub fn set_text_source(&mut self, source: std::sync::Arc<dyn TextSource>) {
        self.run.text.set_source(source);
    }

    /// A text left in the source under `key` ([`super::TextArena::push_external`]).
    pub fn push_external_text(&mut self, key: u64) -> TextId {
        self.run.text.push_external(key)
    }

    /// Sets a node's thought, action and observation to texts already stored.
    pub fn set_node_texts(&mut self, node: NodeId, [thought, action, observation]: [TextId; 3]) {
        let (n, nodes) = (node.index(), &mut self.run.nodes);
        if n < nodes.len() {
            nodes.thought[n] = thought;
            nodes.action[n] = action;
            nodes.observation[n] = observation;
        }
    }

    /// Sets a group's prompt and gold answer to texts already stored.
    pub fn set_group_texts(&mut self, group: GroupId, [prompt, gold]: [TextId; 2]) {
        let (g, groups) = (group.index(), &mut self.run.groups);
        if g < groups.len() {
            groups.prompt[g] = prompt;
            groups.gold[g] = gold;
        }
    }

    /// Approximate heap bytes of the run so far.
    pub fn heap_bytes(&self) -> usize {
        self.run.heap_bytes()
            + (self.groups_by_key.capacity() + self.trajectories_by_key.capacity() + self.trees_by_key.capacity()) * 16
    }

    /// The run as it stands, finished (paths, children and members derived), while the builder
    /// goes on taking records: a run that is still being read or still growing, shown as it is.
    pub fn snapshot(&self) -> Run {
        let mut run = self.run.clone();
        run.text.set_window(None);
        derive(&mut run);
        run
    }

    /// Finishes the run read so far and goes on with an empty one of the same name, format,
    /// metadata, notes and text source (not the warnings: the caller's report holds those). A
    /// stream converted piece by piece (`vantage convert` to a v2 dataset) hands on each piece
    /// and holds only the next. Groups, trajectories and trees met again after the cut are new
    /// ones of the next piece.
    pub fn take_segment(&mut self) -> Run {
        let mut fresh = Self::default();
        fresh.run.meta = RunMeta {
            warnings: Vec::new(),
            imported_labels: Vec::new(),
            labels: std::sync::Arc::default(),
            ..self.run.meta.clone()
        };
        fresh.run.text = self.run.text.empty_like();
        std::mem::replace(self, fresh).finish()
    }

    /// Imports a label the log carries (docs/LABELS.md): put on the run when it is finished.
    pub fn import_label(&mut self, label: super::labels::Label) {
        self.run.meta.imported_labels.push(label);
    }

    /// Derives paths, children and group members, and returns the run.
    pub fn finish(mut self) -> Run {
        self.run.text.set_window(None);
        derive(&mut self.run);
        self.run
    }
}

/// Derives a run's paths, children, path codes and group members from its records.
fn derive(run: &mut Run) {
    run.nodes.link_children();
    let t = &mut run.trajectories;
    if t.token_offsets.is_empty() {
        t.token_offsets.push(0);
    }
    t.path_offsets = Vec::with_capacity(t.len() + 1);
    t.path_offsets.push(0);
    t.path_nodes.clear();
    for &leaf in &t.leaf {
        let start = t.path_nodes.len();
        let mut current = leaf;
        // Parents precede children, so this walk ends; the bound guards against a broken arena.
        while let Some(node) = current.get() {
            t.path_nodes.push(node);
            if t.path_nodes.len() - start > run.nodes.parent.len() {
                break;
            }
            current = run.nodes.parent.get(node.index()).copied().unwrap_or(NodeId::NONE);
        }
        t.path_nodes[start..].reverse();
        t.path_offsets.push(t.path_nodes.len() as u32);
    }
    t.paths_in_node_order =
        t.path_nodes.len() == run.nodes.parent.len() && t.path_nodes.iter().enumerate().all(|(k, n)| n.index() == k);
    t.path_roles = super::PathCodes::derive(&t.path_nodes, &run.nodes.role);
    t.path_kinds = super::PathCodes::derive(&t.path_nodes, &run.nodes.kind);
    let num_groups = run.groups.len();
    let mut counts = vec![0u32; num_groups + 1];
    for g in &t.group {
        if let Some(c) = counts.get_mut(g.index() + 1) {
            *c += 1;
        }
    }
    for i in 0..num_groups {
        counts[i + 1] += counts[i];
    }
    let mut fill = counts.clone();
    let mut members = vec![TrajectoryId::NONE; t.len()];
    for (i, g) in t.group.iter().enumerate() {
        if let Some(slot) = fill.get_mut(g.index()) {
            members[*slot as usize] = TrajectoryId::from_index(i);
            *slot += 1;
        }
    }
    run.groups.member_offsets = counts;
    run.groups.member_ids = members;
    run.shrink_to_fit();
    // The labels the log carries, on the rollouts as derived.
    if !run.meta.imported_labels.is_empty() {
        let labels = super::labels::RunLabels::resolve(run, run.meta.imported_labels.clone());
        run.meta.labels = std::sync::Arc::new(labels);
    }
}
