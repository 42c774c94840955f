//! A terminal agent fixing a failing test suite, turn by turn, with what the 2026 trainers' turn
//! credit reads: after each turn a judge scores the state of the world (the share of the suite's
//! tests that pass: the `turn_reward` step score, prime-rl's `info["turn_rewards"]`; some turns go
//! unscored), and the environment pays each turn's native reward (`env_reward`: the change in the
//! share passing, the first turn from nothing, so that a rollout's turn rewards sum to its outcome,
//! as NeMo-RL's turn-level credit requires). Tokens: each turn's thought and command are the
//! policy's, the command's output the environment's (mask 0).

use vantage::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder};

use super::rng::Rng;

/// The repositories the tasks are set in, with their suites' sizes.
const REPOS: &[(&str, i64)] = &[("slugify", 8), ("csv-sniffer", 10), ("lru-cache", 6), ("date-parse", 12)];

/// Commands a turn may run, by what they do to the suite: fix, inspect, break.
const FIXES: &[&str] = &[
    "apply_patch fix_off_by_one.diff",
    "sed -i 's/<=/</' src/core.py",
    "apply_patch handle_empty_input.diff",
    "apply_patch unicode_normalise.diff",
];
const LOOKS: &[&str] = &["cat src/core.py", "grep -n TODO -r src", "python -m pytest -x -q", "git diff"];
const BREAKS: &[&str] = &["rm src/compat.py", "apply_patch refactor_everything.diff"];

pub fn run(seed: u64) -> Run {
    let mut rng = Rng::new(seed);
    let mut b = RunBuilder::new("terminal_turn_scores", "vantage JSONL v1");
    let meta = &mut b.meta_mut().metadata;
    meta.insert("name".into(), "Terminal agent fixing test suites, with per-turn state scores".into());
    meta.insert("trainer".into(), "prime-rl turn_credit / NeMo-RL turn-level credit, group of 4".into());
    meta.insert(
        "turn scores".into(),
        "turn_reward: share of the suite passing after the turn (a judge; some turns unscored); env_reward: its change; hindsight_logratio: the turn's mean token log-ratio with the final output in the prompt (HCAPO)"
            .into(),
    );
    meta.insert("generator".into(), format!("examples/gen_samples, seed {seed:#x}").into());
    for step in 0..2 {
        for (t, &(repo, tests)) in REPOS.iter().enumerate() {
            let group_key = format!("s{step}-{repo}");
            let start = rng.int(0, tests / 2);
            let prompt = format!(
                "The test suite of `{repo}` fails ({start} of {tests} tests pass). Make every test pass; run shell commands one at a time."
            );
            let (group, _) = b.add_group(&NewGroup {
                key: &group_key,
                task: Some(&format!("fix-{repo}")),
                train_step: Some(step),
                prompt: Some(&prompt),
                ..NewGroup::default()
            });
            // The last task of the second step is a hotfix sampled once (a group of one).
            let rollouts = if step == 1 && t == REPOS.len() - 1 { 1 } else { 4 };
            for r in 0..rollouts {
                // One rollout the judge never scored: its turns carry no state score.
                let judged = !(step == 0 && t == 1 && r == 3);
                add_rollout(&mut b, &mut rng, group, &format!("{group_key}-r{r}"), (start, tests), judged, step);
            }
        }
    }
    b.finish()
}

/// Each turn's `hindsight_logratio`: the mean over its policy tokens of log π(turn | context, the
/// rollout's final output) − log π(turn | context) (HCAPO's hindsight ratio). Knowing the suite
/// ended green makes the fixes likelier and the breakages less so; knowing it ended red, the
/// reverse. A small fixed jitter per turn (no draw from the rng, so the rest of the sample is as it
/// was).
fn hindsight_logratios(texts: &[(String, String, String)], solved: bool) -> Vec<f32> {
    texts
        .iter()
        .enumerate()
        .map(|(k, (_, command, _))| {
            let fix = FIXES.contains(&command.as_str());
            let breaks = BREAKS.contains(&command.as_str());
            let base = match (solved, fix, breaks) {
                (true, true, _) => 0.3,
                (true, _, true) => -0.25,
                (false, true, _) => -0.05,
                (false, _, true) => 0.15,
                _ => 0.02,
            };
            Rng::round3(base + ((k * 3 + texts.len()) % 4) as f32 * 0.03)
        })
        .collect()
}

/// One rollout of a task whose suite has `tests` tests, `start` of them passing.
fn add_rollout(
    b: &mut RunBuilder,
    rng: &mut Rng,
    group: vantage::model::GroupId,
    key: &str,
    (start, tests): (i64, i64),
    judged: bool,
    step: i64,
) {
    let turns = rng.int(3, 7);
    let skill = if step == 0 { 0.45 } else { 0.6 };
    let mut passing = start;
    let mut texts: Vec<(String, String, String)> = Vec::new();
    let mut scores: Vec<Option<f32>> = Vec::new();
    let mut env_rewards: Vec<f32> = Vec::new();
    for k in 0..turns {
        let before = if k == 0 { 0 } else { passing };
        let roll = rng.f32();
        let (thought, command) = if roll < skill {
            passing = (passing + rng.int(1, 3)).min(tests);
            ("The failure points at this branch; patch it.", *rng.pick(FIXES))
        } else if roll < 0.9 {
            ("Look before changing anything.", *rng.pick(LOOKS))
        } else {
            passing = (passing - rng.int(1, 2)).max(0);
            ("Simplify the module first.", *rng.pick(BREAKS))
        };
        let output = format!("pytest: {passing} passed, {} failed", tests - passing);
        texts.push((thought.to_owned(), command.to_owned(), output));
        let share = Rng::round3(passing as f32 / tests as f32);
        // The judge scores most turns; an inspection is often left unscored.
        let scored = judged && (command.starts_with("apply") || command.starts_with("sed") || rng.chance(0.5));
        scores.push(scored.then_some(share));
        env_rewards.push(Rng::round3((passing - before) as f32 / tests as f32));
        if passing == tests {
            break;
        }
    }
    let reward = Rng::round3(passing as f32 / tests as f32);
    // The native turn rewards sum to the outcome exactly (NeMo-RL checks it): the last takes the
    // rounding.
    let paid: f32 = env_rewards[..env_rewards.len() - 1].iter().sum();
    if let Some(last) = env_rewards.last_mut() {
        *last = reward - paid;
    }
    let mut mask = Vec::new();
    let mut text = Vec::new();
    let mut logprob = Vec::new();
    let mut spans = Vec::new();
    for (thought, command, output) in &texts {
        let begin = mask.len() as u32;
        for (words, policy) in [(thought.as_str(), true), (command.as_str(), true), (output.as_str(), false)] {
            for w in words.split_whitespace() {
                mask.push(policy);
                text.push(format!("{w} "));
                logprob.push(if policy { Rng::round3(-rng.range_f32(0.02, 1.5)) } else { 0.0 });
            }
        }
        spans.push([begin, mask.len() as u32]);
    }
    let hindsight = hindsight_logratios(&texts, passing == tests);
    let steps: Vec<NewStep<'_>> = texts
        .iter()
        .zip(&scores)
        .zip(&env_rewards)
        .zip(&spans)
        .zip(&hindsight)
        .map(|(((((thought, command, output), score), &env), span), &hind)| NewStep {
            kind: Some("command"),
            thought: Some(thought),
            action: Some(command),
            observation: Some(output),
            scores: score
                .map(|s| vec![("turn_reward", s), ("hindsight_logratio", hind)])
                .unwrap_or_else(|| vec![("hindsight_logratio", hind)]),
            env_reward: Some(env),
            token_span: Some(*span),
            ..NewStep::default()
        })
        .collect();
    let pieces: Vec<&str> = text.iter().map(String::as_str).collect();
    let tokens = NewTokens { mask: Some(&mask), logprob: Some(&logprob), text: Some(&pieces), ..NewTokens::default() };
    let solved = passing == tests;
    let outcome = Outcome {
        reward: Some(reward),
        success: Some(solved),
        components: vec![("tests_passing", reward)],
        finish: Some(if solved { "stop" } else { "max_turns" }),
    };
    b.add_chain_trajectory(key, group, &steps, &outcome, &tokens);
}
