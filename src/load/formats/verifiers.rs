//! verifiers v1 episodes (PrimeIntellect-ai/verifiers `verifiers/v1/episode.py`, `trace.py`,
//! `graph.py`): JSON lines, one `Episode` each, as prime-rl's file monitor appends them
//! (`monitors/file/traces/stream.jsonl`, earlier `rollouts/step_N/{train,eval}/{all,effective}/
//! traces.jsonl`) and as a verifiers eval writes `traces.jsonl`. A line that is a bare `Trace`
//! (a message graph at the top level) is read as an episode of one trace, as verifiers' own
//! readers accept it.
//!
//! An episode holds traces, one per agent run; a trace's message nodes form a tree by `parent`,
//! and every root-to-leaf branch is a trajectory (verifiers trains each branch as one sample).
//! Along a branch, the messages before the first assistant message are the prompt; each assistant
//! message is a step, the tool and user messages after it its observation. Branches that share a
//! prefix share its steps, so a trace is drawn as a rollout tree. Node tokens concatenate along a
//! branch (`token_ids`, `mask`); `logprobs`, `advantages`, `reference_logprobs` and `entropies` are stored
//! compactly over the sampled tokens and are spread onto them (0 elsewhere, as `Branch.spread`
//! does). The trace's `rewards` (`score × weight`, summed) are the outcome, each reward's score
//! and each metric an outcome component. The group is the episode's `group.id` (eval episodes
//! apart from training ones); the training step is `run.work.step`. The trace's agent
//! (`agent.name`: a solver, its judge, a proposer, two players) is the role of its steps, which
//! the per-role schemes (`rae`, `per_role`) key by.
//!
//! A trace's `info.turn_rewards` (the per-turn state scores prime-rl's `turn_credit` reads) become
//! its turns' `turn_reward` step scores.
//!
//! A line of prime-rl's trace updates (`monitors/file/traces/update.py`: `{trace_id, branches:
//! [{index, advantages, entropies, …}]}`, in `annotations/<producer>.jsonl`, read after the
//! stream) folds its per-token streams onto the trace's branches read before it.

use std::collections::{BTreeMap, HashMap};

use serde::de::IgnoredAny;
use serde_json::Value;

use crate::load::lenient::FieldError;
use crate::load::lenient::Num;
use crate::load::lines::{JsonLines, LineFeed, LineStream, parse_json};
use crate::load::records::{
    Record, call_text, head_matches, id_text, message_text, object_has, push_observation, text_step,
};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{GroupId, NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, TreeId, Warning};

/// The format name.
const FORMAT: &str = "verifiers episodes";

/// The verifiers v1 episode loader.
pub struct Verifiers;

/// An episode, or a bare trace (then `nodes` and the trace's fields are at the top level).
#[derive(serde::Deserialize)]
struct Line {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    group: Option<Value>,
    #[serde(default)]
    run: Option<RunInfo>,
    #[serde(default)]
    task: Option<Value>,
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    errors: Vec<Value>,
    #[serde(default)]
    traces: Option<Vec<Trace>>,
    #[serde(flatten)]
    bare: Option<Trace>,
}

#[derive(serde::Deserialize)]
struct RunInfo {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    work: Option<WorkInfo>,
}

#[derive(serde::Deserialize)]
struct WorkInfo {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    step: Option<i64>,
}

#[derive(serde::Deserialize)]
struct Trace {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    task: Option<Value>,
    nodes: Vec<Node>,
    #[serde(default)]
    calls: Vec<Call>,
    #[serde(default)]
    rewards: BTreeMap<String, Option<Reward>>,
    #[serde(default)]
    metrics: BTreeMap<String, Option<Num>>,
    #[serde(default)]
    stop_condition: Option<String>,
    #[serde(default)]
    is_completed: Option<bool>,
    /// The environment's extra information; `turn_rewards` (one state score or `null` per sampled
    /// turn, in node order) is read as each turn's `turn_reward` step score, as prime-rl's
    /// `turn_credit` reads it.
    #[serde(default)]
    info: Option<Value>,
    /// The agent that ran the trace (`agent.name`, `agent.trainable`): a multi-agent episode's
    /// roles (a proposer, its solvers, two players), the role of the trace's steps.
    #[serde(default)]
    agent: Option<Agent>,
}

/// A trace's agent, as far as it is read.
#[derive(serde::Deserialize)]
struct Agent {
    #[serde(default)]
    name: Option<String>,
}

#[derive(serde::Deserialize)]
struct Reward {
    score: Num,
    #[serde(default)]
    weight: Option<Num>,
}

#[derive(serde::Deserialize)]
struct Call {
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(serde::Deserialize)]
struct Node {
    #[serde(default)]
    parent: Option<usize>,
    message: Message,
    /// Whether the policy sampled it (verifiers' `MessageNode.sampled`; absent: an assistant message).
    #[serde(default)]
    sampled: Option<bool>,
    #[serde(default)]
    token_ids: Vec<IgnoredAny>,
    #[serde(default)]
    mask: Vec<bool>,
    #[serde(default)]
    logprobs: Vec<Num>,
    #[serde(default)]
    advantages: Option<Vec<Num>>,
    #[serde(default)]
    reference_logprobs: Option<Vec<Num>>,
    /// The trainer's policy entropies over the sampled tokens (verifiers#2481, stamped by prime-rl).
    #[serde(default)]
    entropies: Option<Vec<Num>>,
}

#[derive(serde::Deserialize)]
struct Message {
    role: String,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCall>>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(serde::Deserialize)]
struct ToolCall {
    #[serde(default)]
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

impl Loader for Verifiers {
    fn name(&self) -> &'static str {
        "verifiers"
    }

    fn description(&self) -> &'static str {
        "verifiers v1 episodes JSONL (prime-rl traces/stream.jsonl, verifiers eval traces.jsonl): traces of message-graph nodes, rewards, per-token advantages"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| stream(name, report))
    }
}

/// Whether one of the first lines of `head` is an episode or a bare trace.
pub fn accepts(head: &str) -> bool {
    head_matches(head, |r| object_has(r.text, &["traces", "task"]) || object_has(r.text, &["nodes", "agent", "task"]))
}

/// An empty run named `name`, read piece by piece (a stream prime-rl appends to, or one file).
pub fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    let mut builder = RunBuilder::new(name, FORMAT);
    builder.meta_mut().notes.push(
        "each trace's message graph is a tree: one trajectory per root-to-leaf branch; groups are the episodes' group ids".to_owned(),
    );
    Box::new(LineStream::new(Episodes::default(), builder, report))
}

/// prime-rl's trace update (`monitors/file/traces/update.py`, written to
/// `traces/annotations/<producer>.jsonl` after the episode): per-token streams over each branch
/// of a trace, full length over the branch's tokens, `null` where unknown.
#[derive(serde::Deserialize)]
struct Update {
    trace_id: String,
    /// Facts merged into the trace's `info` (GAR's `{"gar": {...}}` verdict).
    #[serde(default)]
    info: Option<Value>,
    #[serde(default)]
    branches: Vec<BranchStreams>,
}

#[derive(serde::Deserialize)]
struct BranchStreams {
    index: usize,
    #[serde(default)]
    advantages: Option<Vec<Option<f64>>>,
    #[serde(default)]
    entropies: Option<Vec<Option<f64>>>,
}

/// A line: an episode (or bare trace), or a trace update.
enum Item {
    Episode(Box<Line>),
    Update(Update),
}

/// The episodes read so far: each trace's trajectories, by trace id, in branch order (`None`
/// for a branch skipped), where a later update's streams go.
#[derive(Default)]
struct Episodes {
    traces: HashMap<String, Vec<Option<String>>>,
}

impl JsonLines for Episodes {
    type Item = Item;

    fn what(&self) -> &'static str {
        "episode"
    }

    fn parse(text: &str) -> Result<Item, FieldError> {
        // A trace update names its trace and carries branches; an episode has neither key.
        if text.contains("\"trace_id\"") && text.contains("\"branches\"") && !text.contains("\"traces\"") {
            return parse_json(text).map(Item::Update);
        }
        parse_json(text).map(|line| Item::Episode(Box::new(line)))
    }

    fn add(&mut self, b: &mut RunBuilder, record: Record<'_>, index: usize, item: Item, report: &mut LoadReport) {
        match item {
            Item::Episode(line) => {
                for (trace, branches) in add(b, record, index, &line, report) {
                    self.traces.insert(trace, branches);
                }
            }
            Item::Update(update) => self.fold(b, record, &update, report),
        }
    }
}

impl Episodes {
    /// Folds a trace update onto its trace's trajectories, as prime-rl's readers fold it: each
    /// branch's `advantages` and `entropies` replace the values of its sampled tokens where the
    /// stream has one. An update of a trace not read (yet) is a warning.
    fn fold(&self, b: &mut RunBuilder, record: Record<'_>, update: &Update, report: &mut LoadReport) {
        let Some(keys) = self.traces.get(&update.trace_id) else {
            report.warn(Warning::kept(
                record.line,
                "trace_id",
                format!("an update of trace {:?}, which no episode read holds", update.trace_id),
            ));
            return;
        };
        if let Some(gar) = update.info.as_ref().and_then(|i| i.get("gar")) {
            import_gar(b, gar, keys);
        }
        for branch in &update.branches {
            let Some(Some(key)) = keys.get(branch.index) else {
                report.warn(Warning::kept(
                    record.line,
                    "branches.index",
                    format!("trace {:?} has no branch {} loaded", update.trace_id, branch.index),
                ));
                continue;
            };
            let Some((range, tokens)) = b.trajectory_tokens_mut(key) else { continue };
            let mask = tokens.mask.as_ref().map(|m| m[range.clone()].to_vec()).unwrap_or_default();
            let len = tokens.len;
            for (stream, column) in
                [(&branch.advantages, &mut tokens.advantage), (&branch.entropies, &mut tokens.entropy)]
            {
                let Some(stream) = stream else { continue };
                let column = column.get_or_insert_with(|| vec![f32::NAN; len]);
                for (k, position) in range.clone().enumerate() {
                    if let (Some(Some(v)), Some(true)) = (stream.get(k), mask.get(k)) {
                        column[position] = *v as f32;
                    }
                }
            }
        }
    }
}

/// GAR's verdict on a trace (prime-rl `orchestrator/algo/gar.py`, `trace.info["gar"]` and its
/// annotation update) as labels on each of the trace's rollouts (docs/LABELS.md): `gar_hack` with
/// the grader's `hack` (`confirmed`, `suspected`; its cited evidence as the note), `gar_tier` with
/// the rollout's ranking tier (0 best), `gar_lambda` with the λ of the group's redistribution (a
/// verdict was applied), and `gar_fallback` with the reason a group kept its plain GRPO advantages
/// (`stale`, `timeout`, `error`, `invalid`). The `gar` scheme reads its credit from these.
fn import_gar(b: &mut RunBuilder, gar: &Value, keys: &[Option<String>]) {
    use crate::model::labels::{Label, Source, SourceKind, Target, Value as LabelValue};
    let word = |key: &str| gar.get(key).and_then(Value::as_str).filter(|w| !w.is_empty() && *w != "none");
    let evidence: Vec<String> = gar
        .get("evidence")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let quote = e.get("quote").and_then(Value::as_str)?;
            Some(match e.get("turn").and_then(Value::as_u64) {
                Some(turn) => format!("turn {turn}: {quote:?}"),
                None => format!("{quote:?}"),
            })
        })
        .collect();
    let mut found: Vec<(&str, LabelValue, Option<String>)> = Vec::new();
    if let Some(hack) = word("hack") {
        found.push((
            "gar_hack",
            LabelValue::Word(hack.to_owned()),
            (!evidence.is_empty()).then(|| evidence.join("; ")),
        ));
    }
    if let Some(tier) = gar.get("tier").and_then(Value::as_f64) {
        found.push(("gar_tier", LabelValue::Number(tier), None));
    }
    // A verdict applied: the λ its redistribution took (the `gar` scheme reads the group as graded).
    if let Some(lambda) = gar.get("lambda").and_then(Value::as_f64) {
        found.push(("gar_lambda", LabelValue::Number(lambda), None));
    }
    if let Some(reason) = word("fallback_reason") {
        found.push(("gar_fallback", LabelValue::Word(reason.to_owned()), None));
    }
    for key in keys.iter().flatten() {
        for (name, value, note) in &found {
            b.import_label(Label {
                name: (*name).to_owned(),
                value: value.clone(),
                target: Target { trajectory: key.clone(), step: None },
                source: Source { kind: SourceKind::File, name: "prime-rl GAR (trace.info.gar)".to_owned() },
                note: note.clone(),
                time: None,
            });
        }
    }
}

/// Reads the format, giving the event loop back between slices (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let reason = "the first lines are neither episodes (traces, task) nor traces (nodes, agent, task)";
    crate::load::lines::read_format((FORMAT, reason), accepts, stream, (name, bytes, report)).await
}

/// The task's key (or hash) in a `TraceTask`.
fn task_key(task: Option<&Value>) -> Option<String> {
    let task = task?;
    id_text(task.get("key")).or_else(|| id_text(task.get("hash")))
}

/// The trajectories of each trace an episode added: its trace id, and each branch's trajectory key
/// (`None` for a branch that was skipped).
type Added = Vec<(String, Vec<Option<String>>)>;

/// Adds an episode (or bare trace) line; what it added, by trace.
fn add(b: &mut RunBuilder, record: Record<'_>, index: usize, line: &Line, report: &mut LoadReport) -> Added {
    let traces: Vec<&Trace> = match (&line.traces, &line.bare) {
        (Some(traces), _) => traces.iter().collect(),
        (None, Some(bare)) => vec![bare],
        (None, None) => {
            report.warn(Warning::skipped(record.line, "traces", "neither an episode's traces nor a trace's nodes"));
            return Added::new();
        }
    };
    let episode = id_text(line.id.as_ref()).unwrap_or_else(|| format!("line-{}", record.line));
    if traces.is_empty() {
        let why = line.errors.last().and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or("no error given");
        let ok = if line.ok == Some(true) { "ok" } else { "failed" };
        report.warn(Warning::skipped(record.line, "traces", format!("episode {episode} ({ok}) has no trace: {why}")));
        return Added::new();
    }
    let work = line.run.as_ref().and_then(|r| r.work.as_ref());
    let eval = line.run.as_ref().and_then(|r| r.kind.as_deref()) == Some("eval")
        || work.and_then(|w| w.kind.as_deref()) == Some("eval");
    let group_id = line.group.as_ref().and_then(|g| id_text(g.get("id")));
    let group_key = match (group_id, eval) {
        (Some(id), false) => id,
        (Some(id), true) => format!("eval/{id}"),
        (None, _) => format!("episode-{episode}"),
    };
    let task = task_key(line.task.as_ref()).or_else(|| traces.iter().find_map(|t| task_key(t.task.as_ref())));
    let group = if let Some(g) = b.group(&group_key) {
        g
    } else {
        let prompt = traces.first().map(|t| prompt_of(t)).unwrap_or_default();
        let new = NewGroup {
            key: &group_key,
            task: task.as_deref(),
            train_step: work.and_then(|w| w.step),
            prompt: Some(&prompt),
            ..NewGroup::default()
        };
        b.add_group(&new).0
    };
    let mut added = Added::new();
    for (k, trace) in traces.iter().enumerate() {
        let trace_id = id_text(trace.id.as_ref()).unwrap_or_else(|| format!("{index}-{k}"));
        let branches = add_trace(b, record, group, &format!("{episode}/{trace_id}"), trace, report);
        if let Some(gar) = trace.info.as_ref().and_then(|i| i.get("gar")) {
            import_gar(b, gar, &branches);
        }
        added.push((trace_id, branches));
    }
    added
}

/// The leaves of a trace in node order, or the node whose parent chain is broken.
fn leaves(nodes: &[Node]) -> Result<Vec<usize>, (usize, &'static str)> {
    let mut has_child = vec![false; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        if let Some(p) = node.parent {
            if p >= nodes.len() {
                return Err((i, "parent is not a node of the trace"));
            }
            has_child[p] = true;
        }
    }
    // A chain longer than the trace has a cycle.
    for i in 0..nodes.len() {
        let (mut at, mut hops) = (Some(i), 0);
        while let Some(n) = at {
            hops += 1;
            if hops > nodes.len() {
                return Err((i, "parents form a cycle"));
            }
            at = nodes[n].parent;
        }
    }
    Ok((0..nodes.len()).filter(|&i| !has_child[i]).collect())
}

/// The root-to-`leaf` path (checked acyclic by [`leaves`]).
fn path_to(nodes: &[Node], leaf: usize) -> Vec<usize> {
    let mut path = Vec::new();
    let mut at = Some(leaf);
    while let Some(n) = at.filter(|_| path.len() <= nodes.len()) {
        path.push(n);
        at = nodes[n].parent;
    }
    path.reverse();
    path
}

/// The prompt of a trace: the messages before the first assistant message of its first branch.
fn prompt_of(trace: &Trace) -> String {
    let Some(&leaf) = leaves(&trace.nodes).ok().and_then(|l| l.first().copied()).as_ref() else { return String::new() };
    path_to(&trace.nodes, leaf)
        .iter()
        .map(|&n| &trace.nodes[n].message)
        .take_while(|m| m.role != "assistant")
        .map(|m| format!("[{}] {}", m.role, message_text(m.content.as_ref())))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A node's values over its sampled tokens spread onto all its tokens (0 on the others), as
/// verifiers' `Branch.spread` does; a full-length array is taken as it is.
fn spread(values: &[Num], mask: &[bool], out: &mut Vec<f32>) {
    if values.len() == mask.len() {
        out.extend(values.iter().map(|v| v.0));
        return;
    }
    let mut next = values.iter();
    for &sampled in mask {
        out.push(if sampled { next.next().map_or(0.0, |v| v.0) } else { 0.0 });
    }
}

/// A branch's token columns.
#[derive(Default)]
struct BranchTokens {
    mask: Vec<bool>,
    logprob: Vec<f32>,
    advantage: Vec<f32>,
    reference: Vec<f32>,
    entropy: Vec<f32>,
    has_advantage: bool,
    has_reference: bool,
    has_entropy: bool,
}

/// The tokens of the nodes of `path`, or why they cannot be read.
fn branch_tokens(nodes: &[Node], path: &[usize]) -> Result<BranchTokens, String> {
    let mut out = BranchTokens::default();
    for &n in path {
        let node = &nodes[n];
        let len = node.token_ids.len();
        let mask: Vec<bool> = if node.mask.is_empty() { vec![false; len] } else { node.mask.clone() };
        if mask.len() != len {
            return Err(format!("node {n}: mask has {} values for {len} token_ids", mask.len()));
        }
        let sampled = mask.iter().filter(|&&m| m).count();
        for (name, values) in [
            ("logprobs", Some(&node.logprobs)),
            ("advantages", node.advantages.as_ref()),
            ("reference_logprobs", node.reference_logprobs.as_ref()),
            ("entropies", node.entropies.as_ref()),
        ] {
            if let Some(values) = values.filter(|v| !v.is_empty() && v.len() != sampled && v.len() != len) {
                return Err(format!(
                    "node {n}: {name} has {} values for {sampled} sampled tokens of {len}",
                    values.len()
                ));
            }
        }
        spread(&node.logprobs, &mask, &mut out.logprob);
        out.has_advantage |= node.advantages.is_some();
        out.has_reference |= node.reference_logprobs.is_some();
        spread(node.advantages.as_deref().unwrap_or_default(), &mask, &mut out.advantage);
        spread(node.reference_logprobs.as_deref().unwrap_or_default(), &mask, &mut out.reference);
        out.has_entropy |= node.entropies.is_some();
        spread(node.entropies.as_deref().unwrap_or_default(), &mask, &mut out.entropy);
        out.mask.extend(mask);
    }
    Ok(out)
}

/// The text of a message for a step: its content and tool calls.
fn action_of(message: &Message) -> String {
    let mut parts = Vec::new();
    let text = message_text(message.content.as_ref());
    if !text.is_empty() {
        parts.push(text);
    }
    for call in message.tool_calls.iter().flatten() {
        parts.push(call_text(&call.name, call.arguments.as_ref()));
    }
    parts.join("\n")
}

/// One turn of a branch: the assistant node at `first` and the messages after it up to `last`.
struct Turn {
    first: usize,
    last: usize,
}

/// A branch cut into turns; `None` when it has no assistant message.
fn turns(nodes: &[Node], path: &[usize]) -> Option<Vec<Turn>> {
    let start = path.iter().position(|&n| nodes[n].message.role == "assistant")?;
    let mut out: Vec<Turn> = Vec::new();
    for (k, &n) in path.iter().enumerate().skip(start) {
        match out.last_mut() {
            Some(turn) if nodes[n].message.role != "assistant" => turn.last = k,
            _ => out.push(Turn { first: k, last: k }),
        }
    }
    Some(out)
}

/// The finish reason of a trace: a truncation, the last call's `length`, or its stop condition.
fn finish_of(trace: &Trace) -> Option<String> {
    const TRUNCATED: [&str; 5] =
        ["max_turns", "max_input_tokens", "max_output_tokens", "max_total_tokens", "context_length"];
    match trace.stop_condition.as_deref() {
        Some(c) if TRUNCATED.contains(&c) => return Some("truncated".to_owned()),
        Some("error") => return Some("error".to_owned()),
        _ => {}
    }
    if trace.calls.last().and_then(|c| c.finish_reason.as_deref()) == Some("length") {
        return Some("length".to_owned());
    }
    trace.stop_condition.clone().or_else(|| trace.is_completed.filter(|c| *c).map(|_| "stop".to_owned()))
}

/// The texts of a turn's step: thought, action and observation (the messages after the first).
struct StepTexts {
    kind: &'static str,
    thought: String,
    action: String,
    observation: String,
}

impl StepTexts {
    fn step(&self, token_span: Option<[u32; 2]>) -> NewStep<'_> {
        NewStep { token_span, ..text_step(self.kind, &self.thought, &self.action, &self.observation) }
    }
}

/// The step of a turn: its assistant message (`turn[0]`) and the messages after it.
fn turn_step(nodes: &[Node], turn: &[usize]) -> StepTexts {
    let message = &nodes[turn[0]].message;
    let mut observation = String::new();
    for &n in &turn[1..] {
        let m = &nodes[n].message;
        let who = match (m.role.as_str(), &m.name) {
            ("tool", Some(name)) => format!("tool {name}"),
            (role, _) => role.to_owned(),
        };
        push_observation(&mut observation, &who, &message_text(m.content.as_ref()));
    }
    let calls = message.tool_calls.as_ref().is_some_and(|c| !c.is_empty());
    StepTexts {
        kind: if calls { "tool_call" } else { "message" },
        thought: message.reasoning_content.clone().unwrap_or_default(),
        action: action_of(message),
        observation,
    }
}

/// Each node's state score from the trace's `info.turn_rewards` (by its place among the sampled
/// nodes), `None` for a node without one; a list that does not fit is warned about and left out.
fn turn_rewards(trace: &Trace, key: &str, line: u64, report: &mut LoadReport) -> Vec<Option<f32>> {
    let nodes = &trace.nodes;
    let mut out = vec![None; nodes.len()];
    let Some(raw) = trace.info.as_ref().and_then(|i| i.get("turn_rewards")).filter(|v| !v.is_null()) else {
        return out;
    };
    let sampled: Vec<usize> =
        (0..nodes.len()).filter(|&n| nodes[n].sampled.unwrap_or(nodes[n].message.role == "assistant")).collect();
    let field = format!("traces.{key}.info.turn_rewards");
    let Some(list) = raw.as_array().filter(|l| l.len() == sampled.len()) else {
        let got = raw.as_array().map_or_else(|| "not a list".to_owned(), |l| format!("{} entries", l.len()));
        let why = format!("{got} for {} sampled turns; the turn scores are left out", sampled.len());
        report.warn(Warning::kept(line, field, why));
        return out;
    };
    for (i, (&n, entry)) in sampled.iter().zip(list).enumerate() {
        match entry.as_f64().filter(|v| v.is_finite()) {
            Some(v) => out[n] = Some(v as f32),
            None if entry.is_null() => {}
            None => {
                report.warn(Warning::kept(line, format!("{field}[{i}]"), "not a finite number or null; left out"));
            }
        }
    }
    out
}

/// Adds a trace's branches; each branch's trajectory key, `None` where it was skipped.
fn add_trace(
    b: &mut RunBuilder,
    record: Record<'_>,
    group: GroupId,
    key: &str,
    trace: &Trace,
    report: &mut LoadReport,
) -> Vec<Option<String>> {
    let nodes = &trace.nodes;
    let leaves = match leaves(nodes) {
        Ok(leaves) => leaves,
        Err((node, why)) => {
            report.warn(Warning::skipped(record.line, format!("traces.{key}.nodes[{node}].parent"), why));
            return Vec::new();
        }
    };
    if b.has_tree(key) || b.has_trajectory(key) {
        report.warn(Warning::skipped(record.line, "traces.id", format!("duplicate trace {key:?}")));
        return Vec::new();
    }
    // A trace with one branch is a plain trajectory; with more, its branches form a tree record.
    let tree = if leaves.len() > 1 { b.add_tree(key, group).unwrap_or(TreeId::NONE) } else { TreeId::NONE };
    let reward: f32 = trace.rewards.values().flatten().map(|r| r.score.0 * r.weight.map_or(1.0, |w| w.0)).sum();
    let has_reward = trace.rewards.values().any(Option::is_some);
    let mut components: Vec<(&str, f32)> =
        trace.rewards.iter().filter_map(|(name, r)| r.as_ref().map(|r| (name.as_str(), r.score.0))).collect();
    for (name, value) in &trace.metrics {
        if let Some(v) = value.filter(|_| !components.iter().any(|(n, _)| n == name)) {
            components.push((name.as_str(), v.0));
        }
    }
    let finish = finish_of(trace);
    let turn_scores = turn_rewards(trace, key, record.line, report);
    let reward = has_reward.then_some(reward);
    let outcome = Outcome { reward, success: reward.map(|r| r > 0.5), components, finish: finish.as_deref() };
    // Turns met on earlier branches: (parent step, first and last message) → step.
    let mut made: HashMap<(NodeId, usize, usize), NodeId> = HashMap::new();
    let mut keys = vec![None; leaves.len()];
    for (i, &leaf) in leaves.iter().enumerate() {
        let path = path_to(nodes, leaf);
        let Some(turns) = turns(nodes, &path) else {
            report.warn(Warning::skipped(
                record.line,
                format!("traces.{key}"),
                format!("branch {i} has no assistant message"),
            ));
            continue;
        };
        let tokens = match branch_tokens(nodes, &path) {
            Ok(t) => Some(t),
            Err(why) => {
                report.warn(Warning::kept(
                    record.line,
                    format!("traces.{key}.nodes"),
                    format!("{why}; tokens left out"),
                ));
                None
            }
        };
        // Where each message's tokens begin along the branch.
        let mut offsets = vec![0u32; path.len() + 1];
        for (k, &n) in path.iter().enumerate() {
            offsets[k + 1] = offsets[k].saturating_add(u32::try_from(nodes[n].token_ids.len()).unwrap_or(u32::MAX));
        }
        let mut parent = NodeId::NONE;
        for turn in &turns {
            let first = path[turn.first];
            let last = path[turn.last];
            if let Some(&node) = made.get(&(parent, first, last)) {
                parent = node;
                continue;
            }
            let span =
                (tokens.is_some() && offsets[turn.last + 1] > 0).then(|| [offsets[turn.first], offsets[turn.last + 1]]);
            let texts = turn_step(nodes, &path[turn.first..=turn.last]);
            let mut step = texts.step(span);
            step.role = trace.agent.as_ref().and_then(|a| a.name.as_deref()).filter(|n| !n.is_empty());
            if let Some(score) = turn_scores[first] {
                step.scores.push(("turn_reward", score));
            }
            let node = b.add_node(group, parent, &step);
            made.insert((parent, first, last), node);
            parent = node;
        }
        let new_tokens = match &tokens {
            Some(t) if !t.mask.is_empty() => NewTokens {
                mask: Some(&t.mask),
                logprob: Some(&t.logprob),
                advantage: t.has_advantage.then_some(t.advantage.as_slice()),
                ref_logprob: t.has_reference.then_some(t.reference.as_slice()),
                entropy: t.has_entropy.then_some(t.entropy.as_slice()),
                ..NewTokens::default()
            },
            _ => NewTokens::default(),
        };
        let branch_key = if leaves.len() == 1 { key.to_owned() } else { format!("{key}/branch-{i}") };
        if b.add_trajectory(&branch_key, group, tree, parent, &outcome, &new_tokens).is_none() {
            report.warn(Warning::skipped(record.line, "traces.id", format!("duplicate trajectory {branch_key:?}")));
        } else {
            keys[i] = Some(branch_key);
        }
    }
    keys
}
