//! Writing a [`Run`] as "vantage JSONL v1": the header, one group record per group, then one
//! trajectory record per plain trajectory and one tree record per tree, in trajectory order.
//! Loading the output gives back the same run (`tests/it/format_roundtrip.rs`).

use std::fmt::Write as _;

use crate::model::{McStats, NodeId, Run, Sym, TrajectoryId, TreeId};

/// A JSON object being written, keys in the order they are added.
struct Obj<'a> {
    out: &'a mut String,
    empty: bool,
}

impl<'a> Obj<'a> {
    fn open(out: &'a mut String) -> Self {
        out.push('{');
        Self { out, empty: true }
    }

    fn key(&mut self, key: &str) -> &mut String {
        if !self.empty {
            self.out.push(',');
        }
        self.empty = false;
        push_str(self.out, key);
        self.out.push(':');
        self.out
    }

    fn str(&mut self, key: &str, value: &str) {
        let out = self.key(key);
        push_str(out, value);
    }

    fn str_opt(&mut self, key: &str, value: &str) {
        if !value.is_empty() {
            self.str(key, value);
        }
    }

    fn num(&mut self, key: &str, value: f32) {
        let out = self.key(key);
        push_num(out, value);
    }

    fn num_opt(&mut self, key: &str, value: f32) {
        if !value.is_nan() {
            self.num(key, value);
        }
    }

    fn raw(&mut self, key: &str, json: &str) {
        self.key(key).push_str(json);
    }

    fn close(self) {
        self.out.push('}');
    }
}

fn push_str(out: &mut String, value: &str) {
    out.push_str(&serde_json::to_string(value).unwrap_or_else(|_| "\"\"".to_owned()));
}

/// Finite numbers as JSON numbers; NaN and infinities as the strings the loader accepts.
fn push_num(out: &mut String, value: f32) {
    if value.is_nan() {
        out.push_str("\"NaN\"");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" });
    } else if value == value.trunc() && value.abs() < 1e15 {
        let _ = write!(out, "{}", value as i64);
    } else {
        let _ = write!(out, "{value}");
    }
}

fn push_array<T>(out: &mut String, values: &[T], mut each: impl FnMut(&mut String, &T)) {
    out.push('[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(out, v);
    }
    out.push(']');
}

/// Monte-Carlo statistics as JSON: `n`, `mean`, and the rollouts when the run has them.
fn mc_json(run: &Run, mc: McStats, rollouts: &[(f32, Sym)]) -> String {
    let mut inner = String::new();
    let mut m = Obj::open(&mut inner);
    m.raw("n", &mc.n.to_string());
    m.num("mean", mc.mean);
    if !rollouts.is_empty() {
        let out = m.key("rollouts");
        push_array(out, rollouts, |out, &(reward, finish)| {
            let mut r = Obj::open(out);
            r.num("reward", reward);
            r.str_opt("finish", run.label(finish));
            r.close();
        });
    }
    m.close();
    inner
}

/// The whole run as JSONL text.
pub fn to_jsonl(run: &Run) -> String {
    let mut out = String::new();
    header(run, &mut out);
    for group in run.groups.ids() {
        let g = group.index();
        let mut obj = Obj::open(&mut out);
        obj.str("type", "group");
        obj.str("id", run.group_key(group));
        obj.str_opt("task", run.label(run.groups.task[g]));
        if let Some(step) = run.groups.train_step[g] {
            obj.raw("train_step", &step.to_string());
        }
        obj.str_opt("prompt", &run.text(run.groups.prompt[g]));
        obj.str_opt("gold", &run.text(run.groups.gold[g]));
        if let Some(mc) = run.groups.mc[g] {
            obj.raw("mc", &mc_json(run, mc, &run.groups.mc_rollouts[g]));
        }
        obj.close();
        out.push('\n');
    }
    let mut tree_members: Vec<Vec<TrajectoryId>> = vec![Vec::new(); run.trees.len()];
    for trajectory in run.trajectories.ids() {
        if let Some(tree) = run.trajectories.tree[trajectory.index()].get() {
            tree_members[tree.index()].push(trajectory);
        }
    }
    for trajectory in run.trajectories.ids() {
        if let Some(tree) = run.trajectories.tree[trajectory.index()].get() {
            // A tree record is written once, where its first trajectory stands.
            let members = &tree_members[tree.index()];
            if members.first() == Some(&trajectory) {
                tree_record(run, tree, members, &mut out);
                out.push('\n');
            }
        } else {
            trajectory_record(run, trajectory, &mut out);
            out.push('\n');
        }
    }
    out
}

/// One trajectory as a trajectory record, its path as a chain of steps (a tree's trajectory too):
/// what it holds, whatever its place in the node arena.
pub fn trajectory_json(run: &Run, trajectory: TrajectoryId) -> String {
    let mut out = String::new();
    trajectory_record(run, trajectory, &mut out);
    out
}

/// The header's `name` (the metadata's, when a string) and `meta` (the rest of the metadata).
pub fn header_fields(run: &Run) -> (Option<&str>, serde_json::Map<String, serde_json::Value>) {
    let name = match run.meta.metadata.get("name") {
        Some(serde_json::Value::String(name)) => Some(name.as_str()),
        _ => None,
    };
    let meta =
        run.meta.metadata.iter().filter(|(k, _)| k.as_str() != "name").map(|(k, v)| (k.clone(), v.clone())).collect();
    (name, meta)
}

fn header(run: &Run, out: &mut String) {
    let mut obj = Obj::open(out);
    obj.raw("vantage", "1");
    let (name, meta) = header_fields(run);
    if let Some(name) = name {
        obj.str("name", name);
    }
    if !meta.is_empty() {
        obj.raw("meta", &serde_json::Value::Object(meta).to_string());
    }
    obj.close();
    out.push('\n');
}

fn trajectory_record(run: &Run, trajectory: TrajectoryId, out: &mut String) {
    let t = trajectory.index();
    let mut obj = Obj::open(out);
    obj.str("type", "trajectory");
    obj.str("id", run.trajectory_key(trajectory));
    obj.str("group", run.group_key(run.trajectories.group[t]));
    outcome(run, trajectory, &mut obj);
    let steps = obj.key("steps");
    push_array(steps, run.trajectories.path(trajectory), |out, &node| {
        step(run, node, Place::Chain, out);
    });
    tokens(run, trajectory, &mut obj);
    obj.close();
}

fn tree_record(run: &Run, tree: TreeId, members: &[TrajectoryId], out: &mut String) {
    let mut obj = Obj::open(out);
    obj.str("type", "tree");
    obj.str("id", run.label(run.trees.key[tree.index()]));
    obj.str("group", run.group_key(run.trees.group[tree.index()]));
    // The tree's nodes are the union of its trajectories' paths, in arena order.
    let mut nodes: Vec<NodeId> = members.iter().flat_map(|&t| run.trajectories.path(t).iter().copied()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let leaf_of = |node: NodeId| members.iter().copied().find(|&t| run.trajectories.leaf[t.index()] == node);
    let out = obj.key("nodes");
    push_array(out, &nodes, |out, &node| {
        step(run, node, Place::TreeNode(leaf_of(node)), out);
    });
    obj.close();
}

/// Where a step is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In a trajectory record's `steps`.
    Chain,
    /// In a tree record's `nodes`, with the trajectory it ends if it is a leaf.
    TreeNode(Option<TrajectoryId>),
}

/// One step or tree node.
fn step(run: &Run, node: NodeId, place: Place, out: &mut String) {
    let n = node.index();
    let nodes = &run.nodes;
    let mut obj = Obj::open(out);
    if place != Place::Chain {
        obj.str("id", &node_key(run, node));
        if let Some(parent) = nodes.parent[n].get() {
            obj.str("parent", &node_key(run, parent));
        }
    } else {
        obj.str_opt("id", run.label(nodes.key[n]));
    }
    obj.str_opt("kind", run.label(nodes.kind[n]));
    obj.str_opt("role", run.label(nodes.role[n]));
    obj.str_opt("thought", &run.text(nodes.thought[n]));
    obj.str_opt("action", &run.text(nodes.action[n]));
    obj.str_opt("observation", &run.text(nodes.observation[n]));
    let scores: Vec<(&String, f32)> =
        nodes.scores.iter().map(|(k, v)| (k, v[n])).filter(|(_, v)| !v.is_nan()).collect();
    if !scores.is_empty() {
        let mut inner = String::new();
        let mut s = Obj::open(&mut inner);
        for (k, v) in scores {
            s.num(k, v);
        }
        s.close();
        obj.raw("scores", &inner);
    }
    obj.num_opt("env_reward", nodes.env_reward[n]);
    obj.str_opt("state", run.label(nodes.state_key[n]));
    if let Some(mc) = nodes.mc(node) {
        let (reward, finish) = nodes.mc_rollouts.of(node.index());
        let rollouts: Vec<(f32, Sym)> = reward.iter().copied().zip(finish.iter().copied()).collect();
        obj.raw("mc", &mc_json(run, mc, &rollouts));
    }
    if let Some(first_error) = nodes.first_error(node) {
        obj.raw("first_error", if first_error { "true" } else { "false" });
    }
    if nodes.invalid_action(node) {
        obj.raw("invalid_action", "true");
    }
    if nodes.unselected(node) {
        obj.raw("selected", "false");
    }
    let docs = nodes.docs(node);
    if !docs.is_empty() {
        let out = obj.key("docs");
        push_array(out, docs, |out, &d| push_str(out, run.label(d)));
    }
    if let Some([start, end]) = nodes.token_span(node) {
        obj.raw("token_span", &format!("[{start},{end}]"));
    }
    if let Place::TreeNode(Some(trajectory)) = place {
        obj.str("trajectory", run.trajectory_key(trajectory));
        outcome(run, trajectory, &mut obj);
        tokens(run, trajectory, &mut obj);
    }
    obj.close();
}

/// The id a tree node is written with: its own key, or `n<index>` when the log gave none.
fn node_key(run: &Run, node: NodeId) -> String {
    let key = run.label(run.nodes.key[node.index()]);
    if key.is_empty() { format!("n{}", node.0) } else { key.to_owned() }
}

fn outcome(run: &Run, trajectory: TrajectoryId, obj: &mut Obj<'_>) {
    let t = trajectory.index();
    let tr = &run.trajectories;
    let components: Vec<(&String, f32)> =
        tr.components.iter().map(|(k, v)| (k, v[t])).filter(|(_, v)| !v.is_nan()).collect();
    let finish = run.label(tr.finish[t]);
    if tr.reward[t].is_nan() && tr.success[t].is_none() && components.is_empty() && finish.is_empty() {
        return;
    }
    let mut inner = String::new();
    let mut o = Obj::open(&mut inner);
    o.num_opt("reward", tr.reward[t]);
    if let Some(success) = tr.success[t] {
        o.raw("success", if success { "true" } else { "false" });
    }
    if !components.is_empty() {
        let mut c_text = String::new();
        let mut c = Obj::open(&mut c_text);
        for (k, v) in components {
            c.num(k, v);
        }
        c.close();
        o.raw("components", &c_text);
    }
    o.str_opt("finish", finish);
    o.close();
    obj.raw("outcome", &inner);
}

fn tokens(run: &Run, trajectory: TrajectoryId, obj: &mut Obj<'_>) {
    let range = run.trajectories.token_range(trajectory);
    if range.is_empty() {
        return;
    }
    let tk = &run.tokens;
    let mut inner = String::new();
    let mut o = Obj::open(&mut inner);
    if let Some(mask) = &tk.mask {
        push_array(o.key("mask"), &mask[range.clone()], |out, &m| {
            out.push(if m { '1' } else { '0' });
        });
    }
    for (name, column) in [
        ("reward", &tk.reward),
        ("logprob", &tk.logprob),
        ("ref_logprob", &tk.ref_logprob),
        ("value", &tk.value),
        ("entropy", &tk.entropy),
        ("sum_pi_squared", &tk.sum_pi_squared),
        ("prm_logprob", &tk.prm_logprob),
        ("advantage", &tk.advantage),
        ("trainer_logprob", &tk.trainer_logprob),
    ] {
        if let Some(column) = column {
            push_array(o.key(name), &column[range.clone()], |out, &v| {
                push_num(out, v);
            });
        }
    }
    if let Some(text) = &tk.text {
        push_array(o.key("text"), &text[range], |out, &id| {
            push_str(out, &run.text(id));
        });
    }
    o.close();
    obj.raw("tokens", &inner);
}
