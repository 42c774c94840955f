//! OpenAI chat-message trajectories with tool calls (tau-bench's `historical_trajectories`, and any
//! JSON array or JSON-lines file of `{messages | traj, reward, task_id, trial}`): every assistant
//! turn is a step (its tool call the action, its text the thought, or the action when it calls no
//! tool); the tool results and user replies up to the next assistant turn are its observation. The
//! system message and the first user message are the prompt; `task_id` groups the trials.

use crate::load::lines::{LineFeed, head_text, read_all, records};
use crate::load::records::{
    ChatMessage, Record, array_records, chat_prompt, chat_steps, finish, id_text, line_records, object_has, parse,
    text_of, text_step,
};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "OpenAI chat trajectories";

/// The OpenAI chat loader.
pub struct OpenAiChat;

#[derive(serde::Deserialize)]
struct Trajectory {
    #[serde(alias = "traj")]
    messages: Vec<ChatMessage>,
    #[serde(default)]
    reward: Option<crate::load::lenient::Num>,
    #[serde(default)]
    task_id: Option<serde_json::Value>,
    #[serde(default)]
    trial: Option<serde_json::Value>,
    #[serde(default)]
    id: Option<serde_json::Value>,
}

impl Loader for OpenAiChat {
    fn name(&self) -> &'static str {
        "openai_chat"
    }

    fn description(&self) -> &'static str {
        "OpenAI chat messages with tool calls: JSON array or JSONL of {messages|traj, reward, task_id, trial} (tau-bench)"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        (!head.trim_start().starts_with('[') && accepts(head)).then(|| stream(name, report))
    }
}

/// Reads the format, giving the event loop back between records (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let head = head_text(bytes);
    if !head.trim_start().starts_with('[') {
        if !accepts(&head) {
            return Err(incompatible());
        }
        return read_all(stream(name, std::mem::take(report)), bytes, report).await;
    }
    // A JSON array is read whole.
    let text = text_of(FORMAT, bytes)?;
    let records = array_records(&text).ok_or_else(incompatible)?;
    if !records.first().is_some_and(|r| is_chat(r.text)) {
        return Err(incompatible());
    }
    let mut b = RunBuilder::new(name, FORMAT);
    for (i, record) in records.into_iter().enumerate() {
        crate::load::records::advance(report, &text, record).await;
        if let Some(t) = parse::<Trajectory>(record, report) {
            add(&mut b, record, i, &t, report);
        }
    }
    finish(b, report, "trajectory")
}

fn incompatible() -> LoadError {
    LoadError::Incompatible { format: FORMAT, reason: "records lack messages / traj".to_owned() }
}

fn is_chat(record: &str) -> bool {
    object_has(record, &["traj"]) || object_has(record, &["messages"])
}

/// Whether the first line of `head` is a chat trajectory.
fn accepts(head: &str) -> bool {
    line_records(head).next().is_some_and(|r| is_chat(r.text))
}

fn stream(name: &str, report: LoadReport) -> Box<dyn LineFeed> {
    records(RunBuilder::new(name, FORMAT), "trajectory", add, report)
}

fn add(b: &mut RunBuilder, record: Record<'_>, index: usize, t: &Trajectory, report: &mut LoadReport) {
    let steps = chat_steps(&t.messages);
    if steps.is_empty() {
        report.warn(Warning::skipped(record.line, "messages", "no assistant turn"));
        return;
    }
    let prompt = chat_prompt(&t.messages);
    let task = id_text(t.task_id.as_ref());
    let group_key = task.as_ref().map_or_else(|| format!("record-{index}"), |task| format!("task-{task}"));
    let group = if let Some(g) = b.group(&group_key) {
        g
    } else {
        b.add_group(&NewGroup { key: &group_key, task: task.as_deref(), prompt: Some(&prompt), ..NewGroup::default() })
            .0
    };
    let key = match (id_text(t.id.as_ref()), id_text(t.trial.as_ref())) {
        (Some(id), _) => id,
        (None, Some(trial)) => format!("{group_key}/trial-{trial}"),
        (None, None) => format!("{group_key}/{index}"),
    };
    if b.has_trajectory(&key) {
        report.warn(Warning::skipped(record.line, "trial", format!("duplicate trajectory {key:?}")));
        return;
    }
    let new_steps: Vec<NewStep<'_>> = steps
        .iter()
        .map(|(kind, thought, action, observation)| text_step(kind, thought, action, observation))
        .collect();
    let reward = t.reward.map(|r| r.0).filter(|r| !r.is_nan());
    let outcome = Outcome { reward, success: reward.map(|r| r > 0.5), components: Vec::new(), finish: None };
    b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
}
