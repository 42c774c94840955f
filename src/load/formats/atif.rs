//! ATIF trajectories (Agent Trajectory Interchange Format, Harbor RFC 0001, `schema_version`
//! `ATIF-v1.0` … `ATIF-v1.7`): one JSON document per trajectory (Harbor's
//! `<trial>/agent/trajectory.json`), or JSON lines of them. `steps` carry a `source` (`system`,
//! `user`, `agent`), the agent's `message`, `reasoning_content`, `tool_calls` (`function_name`,
//! `arguments`) and an `observation` whose `results` answer the calls (`source_call_id`,
//! `content`, and from v1.7 `subagent_trajectory_ref`). Per-step `metrics` may hold
//! `completion_token_ids`, `prompt_token_ids` and `logprobs`.
//!
//! The system and user steps before the first agent step are the prompt; each agent step is a
//! step, the results of its calls and the user / system steps after it its observation. Steps
//! copied from an earlier trajectory (`is_copied_context`, v1.5) are context, not steps. A
//! subagent trajectory (`subagent_trajectories`, v1.7) referenced from a result is drawn as a
//! branch under the step that called it: one more trajectory, the root's steps up to that step
//! and the subagent's after them. The reward is not in the file (Harbor's verifier writes it
//! beside the trajectory): a trajectory loads with no outcome and says so, and outcomes are
//! joined from results files as for SWE-bench reports: in a Harbor job (`<job>/<trial>/agent/
//! trajectory.json` beside `<trial>/result.json`), the trajectory is named after its trial, which
//! the trial's `result.json` gives the verifier's reward, and grouped by the trial's task. Outside
//! one, each file is a group of its own unless its `extra` names a task (`task_name`, `task_id`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::load::lenient::Num;
use crate::load::records::{
    Record, array_records, call_text, id_text, line_records, parse, push_observation, text_of, text_step,
};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{GroupId, NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, TreeId, Warning};

/// The format name.
const FORMAT: &str = "ATIF trajectories";

/// The ATIF loader.
pub struct Atif;

#[derive(serde::Deserialize)]
struct Trajectory {
    #[serde(rename = "schema_version")]
    _schema_version: String,
    #[serde(default)]
    session_id: Option<Value>,
    #[serde(default)]
    trajectory_id: Option<Value>,
    steps: Vec<Step>,
    #[serde(default)]
    subagent_trajectories: Vec<Self>,
    #[serde(default)]
    extra: Option<Value>,
}

#[derive(serde::Deserialize)]
struct Step {
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    message: Option<Value>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    observation: Option<Observation>,
    #[serde(default)]
    metrics: Option<Metrics>,
    #[serde(default)]
    is_copied_context: Option<bool>,
}

#[derive(serde::Deserialize)]
struct ToolCall {
    #[serde(default)]
    function_name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(serde::Deserialize)]
struct Observation {
    #[serde(default)]
    results: Vec<ObservationResult>,
}

#[derive(serde::Deserialize)]
struct ObservationResult {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    subagent_trajectory_ref: Vec<Value>,
}

#[derive(serde::Deserialize)]
struct Metrics {
    #[serde(default)]
    prompt_token_ids: Option<Vec<serde::de::IgnoredAny>>,
    #[serde(default)]
    completion_token_ids: Option<Vec<serde::de::IgnoredAny>>,
    #[serde(default)]
    logprobs: Option<Vec<Num>>,
}

impl Loader for Atif {
    fn name(&self) -> &'static str {
        "atif"
    }

    fn description(&self) -> &'static str {
        "ATIF trajectory.json (Harbor, Terminal-Bench; v1.0–v1.7): steps with tool calls and observations, subagent trajectories"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let text = text_of(FORMAT, bytes)?;
        let records: Vec<Record<'_>> = if text.trim_start().starts_with('[') {
            array_records(&text).ok_or_else(incompatible)?
        } else if let Ok(value) = serde_json::from_str::<&serde_json::value::RawValue>(&text) {
            vec![Record { line: 1, text: value.get() }]
        } else {
            line_records(&text).collect()
        };
        if !records.iter().take(8).any(|r| is_atif(r.text)) {
            return Err(incompatible());
        }
        let mut b = RunBuilder::new(name, FORMAT);
        b.meta_mut().notes.push(
            "ATIF files hold no reward (the verifier writes it beside the trajectory): outcomes come from joined results files".to_owned(),
        );
        let trial = harbor_trial(name);
        for (i, record) in records.into_iter().enumerate() {
            if let Some(t) = parse::<Trajectory>(record, report) {
                add(&mut b, record, (i, trial.as_ref()), &t, report);
            }
        }
        crate::load::records::finish(b, report, "trajectory")
    }
}

fn incompatible() -> LoadError {
    LoadError::Incompatible { format: FORMAT, reason: "no schema_version \"ATIF-v1.x\" with steps".to_owned() }
}

/// Whether a record is an ATIF trajectory: a `schema_version` starting `ATIF` and `steps`.
fn is_atif(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        schema_version: String,
        #[serde(rename = "steps")]
        _steps: serde::de::IgnoredAny,
    }
    serde_json::from_str::<Head>(text).is_ok_and(|h| h.schema_version.starts_with("ATIF"))
}

/// A message as text: a string, or the text parts of a content list.
fn message(value: Option<&Value>) -> String {
    crate::load::records::message_text(value)
}

/// A step as read: kind, thought, action, observation, the trajectories it calls, its tokens.
#[derive(Default)]
struct Turn {
    kind: &'static str,
    thought: String,
    action: String,
    observation: String,
    subagents: Vec<String>,
    completion: usize,
    prompt: Option<usize>,
    logprobs: Option<Vec<f32>>,
}

/// The prompt and the turns of a trajectory's steps.
fn turns_of(steps: &[Step]) -> (String, Vec<Turn>) {
    let mut prompt = Vec::new();
    let mut turns: Vec<Turn> = Vec::new();
    for step in steps {
        let source = step.source.as_deref().unwrap_or("agent");
        let text = message(step.message.as_ref());
        // Context copied from an earlier trajectory (v1.5) is not trained on: it reads as prompt
        // before the first step, as observation after.
        if source != "agent" || step.is_copied_context == Some(true) {
            match turns.last_mut() {
                Some(turn) => push_observation(&mut turn.observation, source, &text),
                None => prompt.push(format!("[{source}] {text}")),
            }
            continue;
        }
        let mut action = Vec::new();
        if !text.is_empty() {
            action.push(text);
        }
        action.extend(step.tool_calls.iter().map(|c| call_text(&c.function_name, c.arguments.as_ref())));
        let mut turn = Turn {
            kind: if step.tool_calls.is_empty() { "message" } else { "tool_call" },
            thought: step.reasoning_content.clone().unwrap_or_default(),
            action: action.join("\n"),
            ..Turn::default()
        };
        for result in step.observation.iter().flat_map(|o| &o.results) {
            push_observation(&mut turn.observation, "tool", &message(result.content.as_ref()));
            for reference in &result.subagent_trajectory_ref {
                if let Some(id) =
                    id_text(reference.get("trajectory_id")).or_else(|| id_text(reference.get("session_id")))
                {
                    turn.subagents.push(id);
                }
            }
        }
        if let Some(metrics) = &step.metrics {
            turn.completion = metrics.completion_token_ids.as_ref().map_or(0, Vec::len);
            turn.prompt = metrics.prompt_token_ids.as_ref().map(Vec::len);
            turn.logprobs = metrics.logprobs.as_ref().map(|l| l.iter().map(|v| v.0).collect());
        }
        turns.push(turn);
    }
    (prompt.join("\n"), turns)
}

/// Token columns along a path of turns: each turn's new prompt tokens unmasked, its completion
/// masked in; the span of each turn. `None` when no turn logs completion token ids.
struct PathTokens {
    mask: Vec<bool>,
    logprob: Vec<f32>,
    spans: Vec<Option<[u32; 2]>>,
}

fn path_tokens(turns: &[&Turn]) -> Option<PathTokens> {
    if turns.iter().all(|t| t.completion == 0) {
        return None;
    }
    let mut out = PathTokens { mask: Vec::new(), logprob: Vec::new(), spans: Vec::new() };
    let mut context = 0usize;
    for turn in turns {
        let start = out.mask.len();
        if let Some(prompt) = turn.prompt {
            let new = if prompt >= context { prompt - context } else { prompt };
            out.mask.extend(std::iter::repeat_n(false, new));
            out.logprob.extend(std::iter::repeat_n(0.0, new));
            context = prompt + turn.completion;
        }
        out.mask.extend(std::iter::repeat_n(true, turn.completion));
        for k in 0..turn.completion {
            out.logprob.push(turn.logprobs.as_ref().and_then(|l| l.get(k)).copied().unwrap_or(f32::NAN));
        }
        let span = [u32::try_from(start).ok()?, u32::try_from(out.mask.len()).ok()?];
        out.spans.push((span[1] > span[0]).then_some(span));
    }
    Some(out)
}

/// Where a file lies in a Harbor trial directory (`<job>/<trial>/agent/trajectory.json`, a
/// continuation `trajectory.cont-1.json`): the trial's name, the trajectory's key in it (the trial
/// name, or `trial/cont-1`), and the task (the trial name before its `__<id>`, as Harbor's
/// `TrialConfig.generate_trial_name` writes it).
struct HarborTrial {
    key: String,
    task: String,
}

fn harbor_trial(name: &str) -> Option<HarborTrial> {
    let mut parts = name.rsplit(['/', '\\']);
    let file = parts.next()?;
    let stem = file.strip_prefix("trajectory")?.strip_suffix(".json")?;
    if parts.next()? != "agent" {
        return None;
    }
    let trial = parts.next().filter(|t| !t.is_empty())?;
    let task = trial.rsplit_once("__").map_or(trial, |(task, _)| task).to_owned();
    let key = match stem.strip_prefix('.') {
        Some(continuation) => format!("{trial}/{continuation}"),
        None => trial.to_owned(),
    };
    Some(HarborTrial { key, task })
}

/// The task of a trajectory, when its `extra` names one.
fn task_of(t: &Trajectory) -> Option<String> {
    let extra = t.extra.as_ref()?;
    ["task_name", "task_id", "instance_id"].iter().find_map(|k| id_text(extra.get(*k)))
}

/// Adds one trajectory (the `index`-th of the file, in the Harbor `trial` it lies in, if any).
fn add(
    b: &mut RunBuilder,
    record: Record<'_>,
    (index, trial): (usize, Option<&HarborTrial>),
    t: &Trajectory,
    report: &mut LoadReport,
) {
    let (prompt, turns) = turns_of(&t.steps);
    if turns.is_empty() {
        report.warn(Warning::skipped(record.line, "steps", "no agent step"));
        return;
    }
    let key = trial
        .filter(|_| index == 0)
        .map(|trial| trial.key.clone())
        .or_else(|| id_text(t.trajectory_id.as_ref()))
        .or_else(|| id_text(t.session_id.as_ref()))
        .unwrap_or_else(|| format!("trajectory-{index}"));
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(record.line, "session_id", format!("duplicate trajectory {key:?}")));
        return;
    }
    let task = task_of(t).or_else(|| trial.map(|trial| trial.task.clone()));
    let group_key = task.clone().unwrap_or_else(|| key.clone());
    let group = if let Some(g) = b.group(&group_key) {
        g
    } else {
        let new = NewGroup { key: &group_key, task: task.as_deref(), prompt: Some(&prompt), ..NewGroup::default() };
        b.add_group(&new).0
    };
    let subagents: BTreeMap<String, &Trajectory> = t
        .subagent_trajectories
        .iter()
        .filter_map(|s| id_text(s.trajectory_id.as_ref()).or_else(|| id_text(s.session_id.as_ref())).map(|id| (id, s)))
        .collect();
    let referenced = turns.iter().any(|turn| turn.subagents.iter().any(|id| subagents.contains_key(id)));
    let tree = if referenced { b.add_tree(&key, group).unwrap_or(TreeId::NONE) } else { TreeId::NONE };
    let root: Vec<&Turn> = turns.iter().collect();
    let tokens = path_tokens(&root);
    let nodes = add_chain(b, group, NodeId::NONE, &root, tokens.as_ref().map_or(&[], |t| &t.spans));
    let outcome = Outcome::default();
    add_with_tokens(b, &key, group, tree, nodes.last().copied().unwrap_or(NodeId::NONE), &outcome, tokens.as_ref());
    // Each subagent a branch under the step that called it.
    for (k, turn) in turns.iter().enumerate() {
        for id in &turn.subagents {
            let Some(sub) = subagents.get(id) else {
                report.warn(Warning::kept(
                    record.line,
                    "subagent_trajectory_ref",
                    format!("trajectory {id:?} is not embedded"),
                ));
                continue;
            };
            let (_, sub_turns) = turns_of(&sub.steps);
            let branch_key = format!("{key}/subagent-{id}");
            if b.has_trajectory(&branch_key) || sub_turns.is_empty() {
                continue;
            }
            let mut path: Vec<&Turn> = turns[..=k].iter().collect();
            path.extend(sub_turns.iter());
            let tokens = path_tokens(&path);
            let spans = tokens.as_ref().map_or(&[][..], |t| &t.spans[k + 1..]);
            let below = add_chain(b, group, nodes[k], &sub_turns.iter().collect::<Vec<_>>(), spans);
            let Some(&leaf) = below.last() else { continue };
            add_with_tokens(b, &branch_key, group, tree, leaf, &outcome, tokens.as_ref());
        }
    }
}

/// Adds `turns` as a chain under `parent`; the nodes made.
/// `spans`, when given, are the turns' token spans in the trajectory's tokens.
fn add_chain(
    b: &mut RunBuilder,
    group: GroupId,
    parent: NodeId,
    turns: &[&Turn],
    spans: &[Option<[u32; 2]>],
) -> Vec<NodeId> {
    let mut nodes = Vec::with_capacity(turns.len());
    let mut at = parent;
    for (k, turn) in turns.iter().enumerate() {
        let step = NewStep {
            token_span: spans.get(k).copied().flatten(),
            ..text_step(turn.kind, &turn.thought, &turn.action, &turn.observation)
        };
        at = b.add_node(group, at, &step);
        nodes.push(at);
    }
    nodes
}

fn add_with_tokens(
    b: &mut RunBuilder,
    key: &str,
    group: GroupId,
    tree: TreeId,
    leaf: NodeId,
    outcome: &Outcome<'_>,
    tokens: Option<&PathTokens>,
) {
    let new_tokens = match tokens {
        Some(t) => NewTokens { mask: Some(&t.mask), logprob: Some(&t.logprob), ..NewTokens::default() },
        None => NewTokens::default(),
    };
    b.add_trajectory(key, group, tree, leaf, outcome, &new_tokens);
}
