//! An agent's OpenTelemetry traces under the `GenAI` semantic conventions (`invoke_agent`, `chat`
//! and `execute_tool` spans with `gen_ai.*` attributes), as the OpenAI and Anthropic SDK
//! instrumentations, the Microsoft Agent Framework and GitHub Copilot write them, read by the
//! [`super::Otel`] reader when the traces have no `rl.*` spans.
//!
//! An agent invocation (`invoke_agent`, the outermost where they nest) is a trajectory; without
//! one, each trace with a model call is. The invocations of one conversation
//! (`gen_ai.conversation.id`, else the trace) are a group. The spans below an invocation, by start
//! time, are its steps: a model call (`chat`) a step whose thought is its text and whose action its
//! tool calls, a tool call (`execute_tool`) the observation of the call before it (or a step of its
//! own), a span with an error status a failed step with its message. The outcome is an evaluation
//! score where a writer records one (`gen_ai.evaluation.score.value` on the invocation or a span
//! below it); otherwise the run has none and its notes say so. The models called and the tokens
//! used go in the notes.

use super::{KeyValue, Span, prompt_of};
use crate::load::{LoadError, LoadReport};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder};

/// The format name.
pub const FORMAT: &str = "OpenTelemetry GenAI trace";

/// The evaluation score attribute.
const SCORE: &str = "gen_ai.evaluation.score.value";

/// Whether a span is one of the `GenAI` conventions' operations.
pub fn is_genai(span: &Span) -> bool {
    matches!(
        span.operation().as_str(),
        "invoke_agent" | "create_agent" | "chat" | "text_completion" | "generate_content" | "execute_tool"
    )
}

/// The run from an agent's `GenAI` spans.
pub fn build(
    name: &str,
    spans: &[Span],
    resources: &[Vec<KeyValue>],
    parent: &dyn Fn(usize) -> Option<usize>,
    report: &mut LoadReport,
) -> Result<Run, LoadError> {
    let is_agent = |s: &Span| s.operation() == "invoke_agent";
    let agent_of = super::nearest_where(spans, parent, &is_agent);
    // The outermost invocation above each span (a sub-agent's spans are its caller's steps).
    let outermost = |i: usize| {
        let mut at = agent_of[i]?;
        let mut hops = 0;
        while let Some(up) = parent(at).and_then(|p| agent_of[p]) {
            at = up;
            hops += 1;
            if hops > spans.len() {
                break;
            }
        }
        Some(at)
    };
    let roots_of: Vec<Option<usize>> = if spans.iter().any(is_agent) {
        (0..spans.len()).map(outermost).collect()
    } else {
        // No invocation: each trace is one, rooted at its first span without a parent.
        let root_of_trace = |trace: &str| {
            (0..spans.len())
                .filter(|&i| spans[i].trace == trace && parent(i).is_none())
                .min_by_key(|&i| (spans[i].start, i))
        };
        (0..spans.len()).map(|i| root_of_trace(&spans[i].trace)).collect()
    };
    let mut roots: Vec<usize> = roots_of.iter().flatten().copied().collect();
    roots.sort_by_key(|&i| (spans[i].start, i));
    roots.dedup();
    let mut below: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
    for (i, root) in roots_of.iter().enumerate() {
        if let Some(root) = root.filter(|&r| r != i) {
            below.entry(root).or_default().push(i);
        }
    }
    for list in below.values_mut() {
        list.sort_by_key(|&i| (spans[i].start, i));
    }
    let mut builder = RunBuilder::new(name, FORMAT);
    builder.meta_mut().notes.extend(super::notes(resources, &[]));
    let (mut models, mut tokens, mut scored) = (Vec::<(String, usize)>::new(), (0u64, 0u64), 0usize);
    for &root in &roots {
        let r = &spans[root];
        let children = below.get(&root).map(Vec::as_slice).unwrap_or_default();
        // Model calls only: an invocation's own usage sums its calls' (the Microsoft Agent
        // Framework's), and its request model is not a call (the OpenAI Agents instrumentation's).
        for &c in children.iter().filter(|&&c| is_model_call(&spans[c])) {
            let span = &spans[c];
            if let Some(model) = span.text("gen_ai.response.model").or_else(|| span.text("gen_ai.request.model")) {
                match models.iter_mut().find(|(m, _)| *m == model) {
                    Some((_, n)) => *n += 1,
                    None => models.push((model, 1)),
                }
            }
            tokens.0 += span.number("gen_ai.usage.input_tokens").map_or(0, |n| n.max(0.0) as u64);
            tokens.1 += span.number("gen_ai.usage.output_tokens").map_or(0, |n| n.max(0.0) as u64);
        }
        let steps = steps_of(spans, children);
        if steps.is_empty() {
            report.warn(crate::model::Warning::skipped(
                r.line,
                "span",
                format!("agent span {} ({}) has no model or tool call below it", r.id, r.name),
            ));
            continue;
        }
        let conversation = r
            .text("gen_ai.conversation.id")
            .or_else(|| children.iter().find_map(|&c| spans[c].text("gen_ai.conversation.id")));
        let group_key = conversation.map_or_else(|| format!("trace-{}", r.trace), |c| c.clone());
        let group = if let Some(g) = builder.group(&group_key) {
            g
        } else {
            let prompt = prompt_of(r).or_else(|| children.iter().find_map(|&c| prompt_of(&spans[c])));
            // A workflow's root invocation names no agent (the OpenAI Agents SDK's "Agent
            // workflow"): the first agent invoked below it does.
            let agent = r.text("gen_ai.agent.name").or_else(|| {
                children
                    .iter()
                    .find(|&&c| spans[c].operation() == "invoke_agent")
                    .and_then(|&c| spans[c].text("gen_ai.agent.name"))
            });
            let new =
                NewGroup { key: &group_key, task: agent.as_deref(), prompt: prompt.as_deref(), ..NewGroup::default() };
            builder.add_group(&new).0
        };
        let score = r.number(SCORE).or_else(|| children.iter().rev().find_map(|&c| spans[c].number(SCORE)));
        scored += usize::from(score.is_some());
        let finish = r.error.as_ref().map(|_| "error");
        let outcome = Outcome {
            reward: score.map(|x| x as f32).filter(|x| x.is_finite()),
            success: None,
            components: Vec::new(),
            finish,
        };
        let key = format!("{group_key}/{}", r.id);
        let new_steps: Vec<NewStep<'_>> =
            steps.iter().map(|(kind, t, a, o)| crate::load::records::text_step(kind, t, a, o)).collect();
        builder.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
    }
    builder.meta_mut().notes.extend(usage_notes(&models, tokens, scored));
    crate::load::records::finish(builder, report, "agent span")
}

/// The notes on what the agent used (models, tokens) and on a run without any score.
fn usage_notes(models: &[(String, usize)], tokens: (u64, u64), scored: usize) -> Vec<String> {
    let mut notes = Vec::new();
    if !models.is_empty() {
        let named: Vec<String> =
            models.iter().map(|(m, n)| format!("{m} ({})", crate::model::count(*n, "call"))).collect();
        notes.push(format!("models: {}; tokens: {} in, {} out", named.join(", "), tokens.0, tokens.1));
    }
    if scored == 0 {
        notes.push(format!(
            "no outcome: no span carries an evaluation score ({SCORE}), so the schemes that credit an outcome have none"
        ));
    }
    notes
}

/// Whether a span is a call to a model (`chat`, `text_completion`, `generate_content`).
fn is_model_call(span: &Span) -> bool {
    matches!(span.operation().as_str(), "chat" | "text_completion" | "generate_content")
}

/// An invocation's steps (kind, thought, action, observation) from the spans below it.
fn steps_of(spans: &[Span], children: &[usize]) -> Vec<super::Step> {
    let mut steps: Vec<super::Step> = Vec::new();
    // Whether the last model call's output named its tool calls.
    let mut named_calls = false;
    for &c in children {
        let span = &spans[c];
        let call = || {
            format!(
                "{}({})",
                span.text("gen_ai.tool.name").unwrap_or_default(),
                span.text("gen_ai.tool.call.arguments").unwrap_or_default()
            )
        };
        match span.operation().as_str() {
            "chat" | "text_completion" | "generate_content" => {
                if let Some(error) = &span.error {
                    steps.push(("error", String::new(), span.name.clone(), format!("error: {error}")));
                    continue;
                }
                named_calls = !super::output_of(span).1.is_empty();
                steps.push(super::chat_step(span));
            }
            "execute_tool" => {
                if let Some(error) = &span.error {
                    // A failed tool call is a failed step of its own, with its message.
                    steps.push(("error", String::new(), call(), format!("error: {error}")));
                    continue;
                }
                let result = span.text("gen_ai.tool.call.result").unwrap_or_default();
                match steps.last_mut() {
                    Some(last) if last.0 == "chat" && last.3.is_empty() => {
                        // A model call whose output names no tool call (the OpenAI Agents
                        // instrumentation writes a tool-calling message as text): its text is
                        // the thought and the call the action.
                        if !named_calls {
                            last.1 = std::mem::replace(&mut last.2, call());
                            named_calls = true;
                        }
                        last.3 = result;
                    }
                    _ => steps.push(("tool", String::new(), call(), result)),
                }
            }
            _ if span.error.is_some() => {
                let error = span.error.clone().unwrap_or_default();
                steps.push(("error", String::new(), span.name.clone(), format!("error: {error}")));
            }
            _ => {}
        }
    }
    steps
}
