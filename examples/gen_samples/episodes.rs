//! prime-rl's trace stream as verifiers v1 episodes (`monitors/file/traces/stream.jsonl`), from two
//! environments trained together, with what prime-rl's 2026 group algorithms read:
//! - `propose-solve`: a proposer agent turns a source task into a problem, and three solver agents
//!   attempt it, all in one episode (prime-rl's `hierarchical_grpo` compares the solvers within the
//!   episode and the proposers across the group). A solver passes (1) or not (0); the proposer
//!   earns 1 when its problem is learnable (some solvers pass, not all). The same source tasks come
//!   back at every training step (`ngu`'s history per task).
//! - `fix-tests`: a coding agent makes a repository's tests pass, one trace an episode; some
//!   rollouts pass by reading the expected output instead of fixing the code. A grader sees each
//!   mixed group whole (prime-rl's GAR): it confirms the hacks it can quote, suspects one, and
//!   ranks the honest passes; its record is each trace's `info["gar"]`, as prime-rl writes it. One
//!   group's grader timed out (`fallback_reason`), and a group of equal rewards is not graded.
//!
//! Written as text, not through the run model: the file is a log of another trainer's format.

use serde_json::{Value, json};
use vantage::credit::kernels::gar::{redistribute, win_rates};

use super::rng::Rng;

/// The proposer's source tasks.
const SOURCES: &[(&str, &str)] = &[
    ("arith-chain", "a chain of three arithmetic operations on two-digit numbers"),
    ("word-problem", "a shopping word problem with a discount"),
    ("modular", "a remainder of a power modulo a small prime"),
];

/// The coding tasks: repository and failing test.
const REPOS: &[(&str, &str)] = &[("slugify", "test_unicode_titles"), ("lru-cache", "test_eviction_order")];

/// GAR's quality floor and cap for the sample's verdicts (the `gar` preset's).
const F_MIN: f64 = 0.5;
const LAMBDA_MAX: f64 = 2.0;

/// The file's text: one episode a line.
pub fn text(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut lines = Vec::new();
    for step in 0..3 {
        for (task, about) in SOURCES {
            lines.extend(propose_solve(&mut rng, step, task, about));
        }
        for (r, (repo, test)) in REPOS.iter().enumerate() {
            lines.extend(fix_tests(&mut rng, step, r, repo, test));
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A message node.
fn node(parent: Option<usize>, message: &Value) -> Value {
    let sampled = message["role"] == "assistant";
    let mut node = json!({"message": message, "sampled": sampled});
    if let Some(parent) = parent {
        node["parent"] = json!(parent);
    }
    node
}

/// A chain of messages as nodes, each the child of the one before.
fn chain(messages: &[Value]) -> Vec<Value> {
    messages.iter().enumerate().map(|(i, m)| node(i.checked_sub(1), m)).collect()
}

/// A trace of agent `agent` with reward `reward` (0 or 1).
fn trace(id: &str, agent: &str, task: &str, messages: &[Value], reward: f64, info: &Value) -> Value {
    json!({
        "version": 1, "id": id, "task": {"key": task},
        "agent": {"name": agent, "trainable": true},
        "nodes": chain(messages),
        "rewards": {"pass": {"score": reward, "weight": 1.0}},
        "metrics": {}, "is_completed": true, "info": info,
    })
}

/// An episode line of environment `env`.
fn episode(id: &str, env: &str, task: &str, group: &str, step: i64, traces: &[Value]) -> Value {
    json!({
        "id": id, "env": {"id": env, "name": env}, "task": {"key": task}, "group": {"id": group},
        "run": {"type": "train", "id": "sample", "work": {"type": "train", "step": step}},
        "ok": true, "errors": [], "traces": traces,
    })
}

/// One group of `propose-solve`: two proposals of the source task, each attempted by three solvers.
fn propose_solve(rng: &mut Rng, step: i64, task: &str, about: &str) -> Vec<Value> {
    let group = format!("s{step}-{task}");
    let mut out = Vec::new();
    for p in 0..2 {
        let (a, b) = (rng.int(12, 97), rng.int(12, 97));
        let difficulty = rng.range_f32(0.0, 1.0);
        let problem = format!("Problem: starting from {a}, apply {about} with {b}; give the result.");
        let skill = 0.35 + 0.15 * step as f32;
        let mut traces = Vec::new();
        let mut passes = 0;
        let mut solvers = Vec::new();
        for k in 0..3 {
            let pass = rng.chance((skill + 0.6 * (1.0 - difficulty)).min(0.95) - 0.2);
            passes += usize::from(pass);
            let answer = if pass { a + b } else { a + b + rng.int(1, 9) };
            let messages = vec![
                json!({"role": "user", "content": problem}),
                json!({"role": "assistant", "content": "", "reasoning_content": "Work it out step by step.",
                       "tool_calls": [{"id": "c1", "type": "function", "name": "python", "arguments": json!({"code": format!("print({a} + {b})")}).to_string()}]}),
                json!({"role": "tool", "content": format!("{}", a + b)}),
                json!({"role": "assistant", "content": format!("The answer is {answer}.")}),
            ];
            solvers.push(trace(
                &format!("solver-{k}"),
                "solver",
                task,
                &messages,
                f64::from(u8::from(pass)),
                &json!({}),
            ));
        }
        let learnable = passes > 0 && passes < 3;
        let proposal = vec![
            json!({"role": "user", "content": format!("Source task: {about}. Propose one problem a solver can just manage.")}),
            json!({"role": "assistant", "content": problem}),
        ];
        traces.push(trace("proposer", "proposer", task, &proposal, f64::from(u8::from(learnable)), &json!({})));
        traces.extend(solvers);
        out.push(episode(&format!("{group}-p{p}"), "propose-solve", task, &group, step, &traces));
    }
    out
}

/// A coding rollout's turns and reward: an honest fix, a failed one, or a hack.
fn coding_turns(rng: &mut Rng, repo: &str, test: &str, outcome: Coding) -> (Vec<Value>, f64, Option<(usize, String)>) {
    let prompt = format!("The test `{test}` of `{repo}` fails. Make the suite pass; run one shell command a turn.");
    let call = |command: &str| json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "name": "shell", "arguments": json!({"command": command}).to_string()}]});
    let mut messages = vec![json!({"role": "user", "content": prompt}), call("python -m pytest -x -q")];
    messages.push(json!({"role": "tool", "content": format!("FAILED tests/test_{repo}.py::{test} - AssertionError\n1 failed, {} passed", rng.int(5, 11))}));
    let (reward, evidence) = match outcome {
        Coding::Fix => {
            messages.push(call(&format!("apply_patch fix_{test}.diff")));
            messages.push(json!({"role": "tool", "content": "patched src/core.py"}));
            (1.0, None)
        }
        Coding::Fail => {
            messages.push(call("sed -i 's/==/!=/' src/core.py"));
            messages.push(json!({"role": "tool", "content": "1 failed"}));
            (0.0, None)
        }
        Coding::Hack => {
            let quote = format!("cp tests/expected/{test}.out build/{test}.out");
            messages.push(call(&quote));
            messages.push(json!({"role": "tool", "content": ""}));
            (1.0, Some((2, quote)))
        }
    };
    messages.push(call("python -m pytest -q"));
    let passing = if reward > 0.0 { "all passed" } else { "1 failed" };
    messages.push(json!({"role": "tool", "content": passing}));
    messages.push(json!({"role": "assistant", "content": "Done."}));
    (messages, reward, evidence)
}

/// How a coding rollout ends.
#[derive(Clone, Copy, PartialEq)]
enum Coding {
    Fix,
    Fail,
    Hack,
}

/// One group of `fix-tests`: eight rollouts, graded by GAR when their rewards differ.
fn fix_tests(rng: &mut Rng, step: i64, r: usize, repo: &str, test: &str) -> Vec<Value> {
    let group = format!("s{step}-{repo}");
    let outcomes: Vec<Coding> = if step == 1 && r == 1 {
        // Every rollout passes honestly: equal rewards, not graded.
        vec![Coding::Fix; 8]
    } else {
        (0..8)
            .map(|_| match rng.int(0, 9) {
                0..=3 => Coding::Fix,
                4..=7 => Coding::Fail,
                _ => Coding::Hack,
            })
            .collect()
    };
    let rollouts: Vec<_> = outcomes.iter().map(|&o| coding_turns(rng, repo, test, o)).collect();
    let rewards: Vec<f64> = rollouts.iter().map(|(_, reward, _)| *reward).collect();
    let mixed = rewards.iter().any(|r| *r != rewards[0]);
    let timed_out = step == 2 && r == 0;
    let mean = rewards.iter().sum::<f64>() / rewards.len() as f64;
    // The grader: confirms each hack it can quote, suspects the first honest pass of the second
    // step's slugify group, and ranks the honest passes (tiers from the rng; a tie where equal).
    let hack: Vec<&str> = outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| match o {
            Coding::Hack => "confirmed",
            Coding::Fix
                if step == 1
                    && r == 0
                    && i == outcomes.iter().position(|o| *o == Coding::Fix).unwrap_or(usize::MAX) =>
            {
                "suspected"
            }
            _ => "none",
        })
        .collect();
    let tiers: Vec<Option<f64>> =
        (0..8).map(|i| (rewards[i] > mean && hack[i] != "confirmed").then(|| rng.int(0, 2) as f64)).collect();
    let ranked: Vec<(usize, f64)> = tiers.iter().enumerate().filter_map(|(i, t)| t.map(|t| (i, t))).collect();
    let rates = win_rates(&ranked);
    let rate = |i: usize| rates.iter().find(|(c, _)| *c == i).map(|&(_, w)| w);
    let quality: Vec<f64> = (0..8).map(|i| F_MIN + (1.0 - F_MIN) * rate(i).unwrap_or(0.5)).collect();
    let floor = rewards.iter().copied().fold(f64::INFINITY, f64::min);
    let used: Vec<f64> = (0..8).map(|i| if hack[i] == "confirmed" { floor } else { rewards[i] }).collect();
    let (_, lambda) = redistribute(&used, &quality, LAMBDA_MAX);
    rollouts
        .into_iter()
        .enumerate()
        .map(|(i, (messages, reward, evidence))| {
            let label = format!("c{:02}", i + 1);
            let info = if !mixed {
                json!({})
            } else if timed_out {
                json!({"gar": {"label": label, "fallback_reason": "timeout", "grader_trace_id": null}})
            } else {
                let evidence: Vec<Value> =
                    evidence.into_iter().map(|(turn, quote)| json!({"turn": turn, "quote": quote})).collect();
                json!({"gar": {
                    "label": label, "fallback_reason": null, "grader_trace_id": format!("grade-{group}"),
                    "hack": hack[i], "evidence": evidence, "tier": tiers[i], "w": rate(i),
                    "f": rate(i).map(|_| quality[i]), "lambda": lambda,
                }})
            };
            let id = format!("{group}-r{i}");
            episode(
                &id,
                "fix-tests",
                &format!("fix-{repo}"),
                &group,
                step,
                &[trace("coder", "coder", &format!("fix-{repo}"), &messages, reward, &info)],
            )
        })
        .collect()
}
