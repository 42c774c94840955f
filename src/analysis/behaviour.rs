//! The behaviour graph of a group: its rollouts' steps merged into states, by the log's state keys
//! where the group's steps have them (as GiGPO groups them), else by a normalized action (the
//! action's words, lower-cased, with numbers and paths folded); transitions between states are
//! edges with their counts, and a rollout that comes back to a state draws a cycle. Each state
//! carries its visits, the rollouts through it, the mean credit of its steps under two schemes,
//! and the spread of those rollouts' outcomes: a state with two or more next states and outcomes
//! that differ is a fork, where outcome credit and process credit part.
//!
//! The layout is stable as the run grows: a state's column is the step at which a rollout first
//! reached it, in the log's order, and its row its order of arrival in that column; rollouts
//! appended later add states, and never move the ones drawn before.

use std::collections::HashMap;

use crate::model::{GroupId, NodeId, Run, TrajectoryId};

/// How steps become states.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum GraphMerge {
    /// By state key when every step of the group has one, else by action.
    #[default]
    Auto,
    /// By the log's state key (a step without one by its action).
    State,
    /// By the normalized action.
    Action,
}

impl GraphMerge {
    /// Every mode, for pickers.
    pub const ALL: [Self; 3] = [Self::Auto, Self::State, Self::Action];

    /// Its word (`--merge`, the JSON).
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::State => "state",
            Self::Action => "action",
        }
    }

    /// The mode named `word`.
    pub fn from_name(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == word)
    }
}

/// The most states a graph keeps; the rarest beyond it are folded into one `other` state.
pub const MAX_NODES: usize = 5000;

/// A state of the graph.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphNode {
    /// What merges steps into it: `start`, `state:KEY`, `action:NORMALIZED` or `other`.
    pub key: String,
    /// Its label, as drawn.
    pub label: String,
    /// Steps at this state (a rollout that comes back counts again); for `start`, the rollouts.
    pub visits: u32,
    /// Rollouts that reach it.
    pub rollouts: Vec<TrajectoryId>,
    /// Mean credit of its steps under scheme A and B (`NaN` when none has credit).
    pub credit: [f64; 2],
    /// Mean outcome of the rollouts through it.
    pub outcome_mean: f64,
    /// Population std of the outcomes of the rollouts through it.
    pub spread: f64,
    /// Whether it has two or more next states and its rollouts' outcomes differ.
    pub fork: bool,
    /// Column: the step at which a rollout first reached it (0 for `start`).
    pub column: u32,
    /// Row within its column, in order of arrival.
    pub row: u32,
}

/// A transition between states.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphEdge {
    /// Index of the state it leaves.
    pub from: u32,
    /// Index of the state it enters.
    pub to: u32,
    /// How many steps take it.
    pub count: u32,
    /// Mean credit under A and B of the steps that take it (each the step entering `to`).
    pub credit: [f64; 2],
    /// Whether it closes a cycle: it enters a state on the way to its source (a back edge of a
    /// depth-first walk from `start`, edges in order of first use).
    pub back: bool,
}

/// A group's behaviour graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BehaviourGraph {
    /// The merge used (`Auto` resolved).
    pub merge: GraphMerge,
    /// States; `start` first.
    pub nodes: Vec<GraphNode>,
    /// Transitions, in order of first use.
    pub edges: Vec<GraphEdge>,
    /// Each rollout's states, `start` first (index into `nodes`).
    pub paths: Vec<(TrajectoryId, Vec<u32>)>,
    /// States folded into `other` (0 when the graph is whole).
    pub folded: usize,
}

/// A step's action with numbers and paths folded: lower-case words, each run of digits `#`, and a
/// word with a `/` in it `<path>`; the thought when the action is empty, the kind when both are.
pub fn normalized_action(run: &Run, node: NodeId) -> String {
    let n = node.index();
    let action = run.text(run.nodes.action[n]);
    let text = if action.trim().is_empty() { run.text(run.nodes.thought[n]) } else { action };
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            if w.contains('/') {
                return "<path>".to_owned();
            }
            let mut out = String::with_capacity(w.len());
            let mut digits = false;
            for c in w.chars().flat_map(char::to_lowercase) {
                if c.is_ascii_digit() {
                    if !digits {
                        out.push('#');
                    }
                    digits = true;
                } else {
                    out.push(c);
                    digits = false;
                }
            }
            out
        })
        .collect();
    if words.is_empty() { run.label(run.nodes.kind[n]).to_owned() } else { words.join(" ") }
}

/// Mean of the finite values, `NaN` for none.
fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.filter(|v| v.is_finite()).fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    if n == 0 { f64::NAN } else { sum / f64::from(n) }
}

/// The behaviour graph of group `group`, with the step credit (by path position) of schemes A and
/// B; at most `max_nodes` states (the rarest beyond folded into `other`).
pub fn build(run: &Run, group: GroupId, credit: [&[f32]; 2], merge: GraphMerge, max_nodes: usize) -> BehaviourGraph {
    build_over(run, run.groups.members(group), credit, merge, max_nodes)
}

/// The groups of `group`'s task across the run's training steps (every group with its task, in
/// training-step order, then as logged); the group alone when it has no task.
pub fn task_groups(run: &Run, group: GroupId) -> Vec<GroupId> {
    let task = run.groups.task[group.index()];
    if run.label(task).is_empty() {
        return vec![group];
    }
    let mut groups: Vec<GroupId> = run.groups.ids().filter(|g| run.groups.task[g.index()] == task).collect();
    groups.sort_by_key(|g| run.groups.train_step[g.index()].unwrap_or(i64::MIN));
    groups
}

/// The behaviour graph of `group`'s task across training steps: the rollouts of every group of
/// its task ([`task_groups`]) in one graph, in training-step order, so a state's column and row
/// are where the earliest step first reached it.
pub fn build_task(
    run: &Run,
    group: GroupId,
    credit: [&[f32]; 2],
    merge: GraphMerge,
    max_nodes: usize,
) -> BehaviourGraph {
    let members: Vec<TrajectoryId> =
        task_groups(run, group).into_iter().flat_map(|g| run.groups.members(g).iter().copied()).collect();
    build_over(run, &members, credit, merge, max_nodes)
}

/// The behaviour graph of the rollouts `members`, in their order.
fn build_over(
    run: &Run,
    members: &[TrajectoryId],
    credit: [&[f32]; 2],
    merge: GraphMerge,
    max_nodes: usize,
) -> BehaviourGraph {
    let tr = &run.trajectories;
    let has_key = |n: &NodeId| !run.label(run.nodes.state_key[n.index()]).is_empty();
    let merge = match merge {
        GraphMerge::Auto if members.iter().flat_map(|&t| tr.path(t)).all(has_key) && !members.is_empty() => {
            GraphMerge::State
        }
        GraphMerge::Auto => GraphMerge::Action,
        other => other,
    };
    let key_of = |n: NodeId| {
        let state = run.label(run.nodes.state_key[n.index()]);
        if merge == GraphMerge::State && !state.is_empty() {
            format!("state:{state}")
        } else {
            format!("action:{}", normalized_action(run, n))
        }
    };
    // Every step's state key, and each state's first arrival (column, order), in the log's order.
    let mut first: HashMap<String, (u32, usize)> = HashMap::new();
    let mut visits: HashMap<String, u32> = HashMap::new();
    let mut keys: Vec<(TrajectoryId, Vec<String>)> = Vec::with_capacity(members.len());
    for &t in members {
        let path: Vec<String> = tr.path(t).iter().map(|&n| key_of(n)).collect();
        for (k, key) in path.iter().enumerate() {
            let next = first.len();
            first.entry(key.clone()).or_insert((k as u32 + 1, next));
            *visits.entry(key.clone()).or_insert(0) += 1;
        }
        keys.push((t, path));
    }
    // The states kept: all, or the most visited (ties by arrival) and `other`.
    let mut order: Vec<&String> = first.keys().collect();
    order.sort_by_key(|k| first[*k].1);
    let folded = order.len().saturating_sub(max_nodes.saturating_sub(2).max(1));
    let kept: std::collections::HashSet<&String> = if folded > 0 {
        let mut by_visits = order.clone();
        by_visits.sort_by_key(|k| (std::cmp::Reverse(visits[*k]), first[*k].1));
        by_visits.into_iter().take(order.len() - folded).collect()
    } else {
        order.iter().copied().collect()
    };
    let mut index: HashMap<&str, u32> = HashMap::new();
    let mut nodes = vec![node("start", "start", 0)];
    for key in order.iter().filter(|k| kept.contains(*k)) {
        index.insert(key.as_str(), nodes.len() as u32);
        let label = key.split_once(':').map_or(key.as_str(), |(_, l)| l).to_owned();
        nodes.push(node(key, &label, first[*key].0));
    }
    let other = if folded > 0 {
        nodes.push(node("other", &format!("other ({folded} rare states)"), 1));
        Some(nodes.len() as u32 - 1)
    } else {
        None
    };
    // Walk the rollouts: visits, credit, rollouts and outcomes per state; edges.
    let mut sums: Vec<[Vec<f64>; 2]> = vec![[Vec::new(), Vec::new()]; nodes.len()];
    let mut edge_index: HashMap<(u32, u32), usize> = HashMap::new();
    let mut edges: Vec<GraphEdge> = Vec::new();
    let mut edge_credit: Vec<[Vec<f64>; 2]> = Vec::new();
    let mut paths = Vec::with_capacity(keys.len());
    for (t, path) in &keys {
        let mut states = vec![0u32];
        nodes[0].visits += 1;
        nodes[0].rollouts.push(*t);
        let mut from = 0u32;
        for (p, key) in tr.path_range(*t).zip(path) {
            let to = index.get(key.as_str()).copied().or(other).unwrap_or(0);
            let node = &mut nodes[to as usize];
            node.visits += 1;
            // Rollouts are walked one at a time: the last one listed is this one once it came here.
            if node.rollouts.last() != Some(t) {
                node.rollouts.push(*t);
            }
            let values = [
                f64::from(credit[0].get(p).copied().unwrap_or(f32::NAN)),
                f64::from(credit[1].get(p).copied().unwrap_or(f32::NAN)),
            ];
            for s in 0..2 {
                sums[to as usize][s].push(values[s]);
            }
            let e = *edge_index.entry((from, to)).or_insert_with(|| {
                edges.push(GraphEdge { from, to, count: 0, credit: [f64::NAN; 2], back: false });
                edge_credit.push([Vec::new(), Vec::new()]);
                edges.len() - 1
            });
            edges[e].count += 1;
            for s in 0..2 {
                edge_credit[e][s].push(values[s]);
            }
            states.push(to);
            from = to;
        }
        paths.push((*t, states));
    }
    summarize(run, &mut nodes, &mut edges, &sums, &edge_credit);
    BehaviourGraph { merge, nodes, edges, paths, folded }
}

/// Fills in what the walk gathered: rows in order of arrival per column, each state's mean credit,
/// outcome spread and whether it is a fork, each transition's mean credit, and the cycles.
fn summarize(
    run: &Run,
    nodes: &mut [GraphNode],
    edges: &mut [GraphEdge],
    sums: &[[Vec<f64>; 2]],
    edge_credit: &[[Vec<f64>; 2]],
) {
    let tr = &run.trajectories;
    // Rows: order of arrival within each column.
    let mut rows: HashMap<u32, u32> = HashMap::new();
    for node in nodes.iter_mut() {
        let row = rows.entry(node.column).or_insert(0);
        node.row = *row;
        *row += 1;
    }
    let outcome = |t: &TrajectoryId| f64::from(tr.reward[t.index()]);
    let mut successors: Vec<std::collections::BTreeSet<u32>> = vec![Default::default(); nodes.len()];
    for edge in edges.iter() {
        successors[edge.from as usize].insert(edge.to);
    }
    for (i, node) in nodes.iter_mut().enumerate() {
        node.credit = [mean(sums[i][0].iter().copied()), mean(sums[i][1].iter().copied())];
        let outcomes: Vec<f64> = node.rollouts.iter().map(outcome).filter(|r| r.is_finite()).collect();
        node.outcome_mean = mean(outcomes.iter().copied());
        node.spread = if outcomes.is_empty() {
            f64::NAN
        } else {
            (outcomes.iter().map(|r| (r - node.outcome_mean).powi(2)).sum::<f64>() / outcomes.len() as f64).sqrt()
        };
        node.fork = successors[i].len() >= 2 && node.spread > 0.0;
    }
    for (edge, values) in edges.iter_mut().zip(edge_credit) {
        edge.credit = [mean(values[0].iter().copied()), mean(values[1].iter().copied())];
    }
    mark_back_edges(edges, nodes.len());
}

fn node(key: &str, label: &str, column: u32) -> GraphNode {
    GraphNode {
        key: key.to_owned(),
        label: label.to_owned(),
        visits: 0,
        rollouts: Vec::new(),
        credit: [f64::NAN; 2],
        outcome_mean: f64::NAN,
        spread: f64::NAN,
        fork: false,
        column,
        row: 0,
    }
}

/// Marks the edges that close a cycle: the back edges of a depth-first walk from `start`, each
/// state's edges in order of first use (without recursion: a graph can be deep).
fn mark_back_edges(edges: &mut [GraphEdge], nodes: usize) {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    for (e, edge) in edges.iter().enumerate() {
        out[edge.from as usize].push(e);
    }
    // 0: not seen, 1: on the walk's path, 2: done.
    let mut state = vec![0u8; nodes];
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    state[0] = 1;
    while let Some(&mut (node, ref mut next)) = stack.last_mut() {
        if let Some(&e) = out[node].get(*next) {
            *next += 1;
            let to = edges[e].to as usize;
            match state[to] {
                0 => {
                    state[to] = 1;
                    stack.push((to, 0));
                }
                1 => edges[e].back = true,
                _ => {}
            }
        } else {
            state[node] = 2;
            stack.pop();
        }
    }
}
