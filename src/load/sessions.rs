//! Coding-agent sessions (Claude Code's session files, Codex CLI's rollouts) as a run: what their
//! two readers share. A session is a trajectory; sessions with the same prompt (the first thing
//! the user asked) are one group, so the same task run several times is a group of rollouts. The
//! models called and the tokens used go in the notes; a session has no reward, and the notes say
//! so.

use crate::load::records::{push_observation, text_step};
use crate::load::{LoadError, LoadReport};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder};

/// One step of a session.
#[derive(Debug, Default, Clone)]
pub struct Step {
    /// The tool called (`Bash`, `exec_command`, …), `message` for an answer, `error` for a call
    /// that failed.
    pub kind: String,
    /// What the agent said or thought before acting.
    pub thought: String,
    /// The call (`name(arguments)`), or the answer.
    pub action: String,
    /// What came back: the tool's result, and what the user said next.
    pub observation: String,
    /// The call's id, to find it when its result comes.
    pub call: String,
}

/// One session as read.
#[derive(Debug, Default)]
pub struct Session {
    /// The session's id.
    pub id: String,
    /// The line it starts on.
    pub line: u64,
    /// The first thing the user asked.
    pub prompt: Option<String>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Text the agent said that no call has taken as its thought yet.
    pub pending: String,
    /// The models called, with how many calls each.
    pub models: Vec<(String, usize)>,
    /// Input tokens (all of them, cached or not), of which read from a cache, and output tokens.
    pub tokens: (u64, u64, u64),
}

impl Session {
    /// A session starting at `line`.
    pub fn new(id: &str, line: u64) -> Self {
        Self { id: id.to_owned(), line, ..Self::default() }
    }

    /// Text the agent said: the thought of its next call, or an answer of its own.
    pub fn say(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        if !self.pending.is_empty() {
            self.pending.push('\n');
        }
        self.pending.push_str(text);
    }

    /// A tool call, with what the agent said before it as its thought.
    pub fn call(&mut self, kind: &str, action: String, call: &str) {
        let thought = std::mem::take(&mut self.pending);
        self.steps.push(Step { kind: kind.to_owned(), thought, action, call: call.to_owned(), ..Step::default() });
    }

    /// What the agent said that no call followed: an answer, a step of its own.
    pub fn flush(&mut self) {
        if !self.pending.is_empty() {
            let action = std::mem::take(&mut self.pending);
            self.steps.push(Step { kind: "message".to_owned(), action, ..Step::default() });
        }
    }

    /// A call's result; a failed one makes the step's kind `error`. `false` when no call of that
    /// id was made in this session.
    pub fn result(&mut self, call: &str, output: &str, failed: bool) -> bool {
        let Some(step) = self.steps.iter_mut().rev().find(|s| !call.is_empty() && s.call == call) else {
            return false;
        };
        if !step.observation.is_empty() {
            step.observation.push('\n');
        }
        step.observation.push_str(output);
        if failed {
            step.kind = "error".to_owned();
        }
        true
    }

    /// What the user said: the prompt when it is the first thing, else the observation of the
    /// step before it.
    pub fn user(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        self.flush();
        match (&self.prompt, self.steps.last_mut()) {
            (None, _) => self.prompt = Some(text.to_owned()),
            (Some(_), Some(last)) => push_observation(&mut last.observation, "user", text),
            (Some(prompt), None) => self.prompt = Some(format!("{prompt}\n\n{text}")),
        }
    }

    /// One call of `model`.
    pub fn model(&mut self, model: &str) {
        match self.models.iter_mut().find(|(m, _)| m == model) {
            Some((_, n)) => *n += 1,
            None => self.models.push((model.to_owned(), 1)),
        }
    }
}

/// The run of `sessions`: one trajectory each, grouped by prompt, with the reader's `notes`. A
/// session with no step is a located warning.
pub fn build(
    name: &str,
    format: &str,
    sessions: Vec<Session>,
    notes: Vec<String>,
    report: &mut LoadReport,
) -> Result<Run, LoadError> {
    let mut builder = RunBuilder::new(name, format);
    builder.meta_mut().notes.extend(notes);
    let mut models: Vec<(String, usize)> = Vec::new();
    let mut tokens = (0u64, 0u64, 0u64);
    for mut session in sessions {
        session.flush();
        if session.steps.is_empty() {
            report.warn(crate::model::Warning::skipped(
                session.line,
                "session",
                format!("session {} has no answer or tool call", session.id),
            ));
            continue;
        }
        for (model, n) in &session.models {
            match models.iter_mut().find(|(m, _)| m == model) {
                Some((_, total)) => *total += n,
                None => models.push((model.clone(), *n)),
            }
        }
        tokens = (tokens.0 + session.tokens.0, tokens.1 + session.tokens.1, tokens.2 + session.tokens.2);
        let prompt = session.prompt.as_deref().unwrap_or_default();
        let key = if prompt.is_empty() {
            format!("session-{}", session.id)
        } else {
            format!("prompt-{:016x}", crate::load::records::stable_hash(prompt))
        };
        let group = if let Some(g) = builder.group(&key) {
            g
        } else {
            let new = NewGroup { key: &key, prompt: session.prompt.as_deref(), ..NewGroup::default() };
            builder.add_group(&new).0
        };
        let steps: Vec<NewStep<'_>> =
            session.steps.iter().map(|s| text_step(&s.kind, &s.thought, &s.action, &s.observation)).collect();
        let outcome = Outcome { reward: None, success: None, components: Vec::new(), finish: None };
        builder.add_chain_trajectory(&session.id, group, &steps, &outcome, &NewTokens::default());
    }
    if !models.is_empty() {
        let named: Vec<String> =
            models.iter().map(|(m, n)| format!("{m} ({})", crate::model::count(*n, "call"))).collect();
        let cached = if tokens.1 > 0 { format!(" ({} read from a cache)", tokens.1) } else { String::new() };
        builder.meta_mut().notes.push(format!(
            "models: {}; tokens: {} in{cached}, {} out",
            named.join(", "),
            tokens.0,
            tokens.2
        ));
    }
    builder.meta_mut().notes.push(
        "no outcome: a session records no reward; join one from a results file (`--outcomes`) to credit outcomes"
            .to_owned(),
    );
    crate::load::records::finish(builder, report, "session")
}
