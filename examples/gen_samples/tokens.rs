//! A verl-like token batch: multi-turn tool use with policy masks that have holes where tool
//! output was inserted, token rewards on the last policy token, critic values, log-probabilities
//! of the policy and the reference model, and entropies.

use vantage::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder};

use super::rng::Rng;

const FILLER: &[&str] = &[
    "so",
    "the",
    "product",
    "is",
    "then",
    "we",
    "check",
    "carefully",
    "first",
    "next",
    "which",
    "gives",
    "because",
    "multiply",
    "add",
    "result",
    "let",
    "me",
    "verify",
    "again",
];

struct Segment {
    kind: &'static str,
    policy: bool,
    words: Vec<String>,
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(|w| format!("{w} ")).collect()
}

pub fn run(seed: u64) -> Run {
    let mut rng = Rng::new(seed);
    let mut b = RunBuilder::new("verl_token_batch", "vantage JSONL v1");
    let meta = &mut b.meta_mut().metadata;
    meta.insert("name".into(), "verl batch dump: multi-turn calculator tool use".into());
    meta.insert("trainer".into(), "verl 0.9.1, rollout n=8, response_length 256".into());
    meta.insert("tokens".into(), "mask 0 on tool output (multi-turn holes); reward on the last policy token".into());
    meta.insert("generator".into(), format!("examples/gen_samples, seed {seed:#x}").into());
    for p in 0..4 {
        let a = rng.int(12, 99);
        let c = rng.int(3, 40);
        let answer = a * c;
        let group_key = format!("uid-{p}");
        let prompt = format!("What is {a} × {c}? You may call the calculator tool. Put the answer in \\boxed{{}}.");
        let gold = answer.to_string();
        let (group, _) = b.add_group(&NewGroup {
            key: &group_key,
            task: Some(&format!("calc-{p}")),
            train_step: Some(7),
            prompt: Some(&prompt),
            gold: Some(&gold),
            ..NewGroup::default()
        });
        for r in 0..8 {
            let uses_tool = rng.chance(0.7);
            let mut segments = Vec::new();
            let mut think: Vec<String> = words(&format!("I need {a} times {c} .")).into_iter().collect();
            let extra = rng.int(5, 60);
            for _ in 0..extra {
                think.push(format!("{} ", rng.pick(FILLER)));
            }
            segments.push(Segment { kind: "response", policy: true, words: think });
            let mut value = answer;
            if uses_tool {
                segments.push(Segment {
                    kind: "tool_call",
                    policy: true,
                    words: words(&format!("<tool> calc {a}*{c} </tool>")),
                });
                segments.push(Segment {
                    kind: "observation",
                    policy: false,
                    words: words(&format!("<result> {answer} </result>")),
                });
            } else if rng.chance(0.5) {
                value = answer + rng.int(1, 9) * 10;
            }
            let final_words = words(&format!("The answer is \\boxed{{{value}}}"));
            segments.push(Segment { kind: "answer", policy: true, words: final_words });
            let correct = value == answer;
            let reward = if correct { 1.0 } else { 0.0 };
            let Columns { mask, text, spans, token_reward, logprob, ref_logprob, values, entropy } =
                columns(&mut rng, &segments, reward);
            let texts: Vec<&str> = text.iter().map(String::as_str).collect();
            let (sum_pi_squared, prm_logprob, trainer_logprob) = derived_columns(&logprob, &mask, correct);
            // The trainer's own advantage as it logged it: REINFORCE with a fixed baseline of 0.5
            // on the policy tokens, 0 on the tool's (what the `logged` scheme shows).
            let advantage: Vec<f32> = mask.iter().map(|&m| if m { reward - 0.5 } else { 0.0 }).collect();
            let joined: Vec<String> = segments.iter().map(|s| s.words.concat().trim_end().to_owned()).collect();
            let steps: Vec<NewStep<'_>> = segments
                .iter()
                .zip(&joined)
                .zip(&spans)
                .map(|((s, j), span)| NewStep {
                    kind: Some(s.kind),
                    action: s.policy.then_some(j.as_str()),
                    observation: (!s.policy).then_some(j.as_str()),
                    token_span: Some(*span),
                    ..NewStep::default()
                })
                .collect();
            let tokens = NewTokens {
                mask: Some(&mask),
                reward: Some(&token_reward),
                logprob: Some(&logprob),
                ref_logprob: Some(&ref_logprob),
                value: Some(&values),
                entropy: Some(&entropy),
                sum_pi_squared: Some(&sum_pi_squared),
                prm_logprob: Some(&prm_logprob),
                advantage: Some(&advantage),
                trainer_logprob: Some(&trainer_logprob),
                text: Some(&texts),
            };
            // The greedy rollout of this prompt (ReMax's baseline): right for every other prompt.
            let greedy = if p % 2 == 0 { 1.0 } else { 0.0 };
            let outcome = Outcome {
                reward: Some(reward),
                success: Some(correct),
                components: vec![("acc", reward), ("greedy_baseline", greedy)],
                finish: Some("stop"),
            };
            b.add_chain_trajectory(&format!("{group_key}-r{r}"), group, &steps, &outcome, &tokens);
        }
    }
    b.finish()
}

/// `Σ_v π(v)²` (at least π(a)², π(a) = exp(logprob)), an implicit PRM's log-probability (PRIME's
/// `log π_φ`): the policy's, nudged up on the tokens of correct rollouts and down on wrong ones, and
/// the trainer's log-probability after its update (FIPO's `π_θ` beside the sampling `π_old`): a small
/// shift up on correct rollouts and down on wrong ones, and on wrong ones a token every 23 that the
/// update made over four times likelier (FIPO's safety threshold).
fn derived_columns(logprob: &[f32], mask: &[bool], correct: bool) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let sum_pi_squared = logprob
        .iter()
        .zip(mask)
        .map(|(&lp, &m)| if m { Rng::round3((lp.exp() * lp.exp() + 0.05).min(1.0)) } else { 0.0 })
        .collect();
    let sign = if correct { 1.0 } else { -1.0 };
    let prm_logprob = logprob
        .iter()
        .zip(mask)
        .enumerate()
        .map(|(i, (&lp, &m))| if m { Rng::round3(lp + sign * 0.02 * ((i % 7) as f32 / 7.0 + 0.5)) } else { 0.0 })
        .collect();
    let trainer_logprob = logprob
        .iter()
        .zip(mask)
        .enumerate()
        .map(|(i, (&lp, &m))| match (m, correct) {
            (false, _) => 0.0,
            (true, false) if i % 23 == 11 => Rng::round3(lp + 1.5),
            (true, _) => Rng::round3(lp + sign * 0.02 * (((i * 5) % 11) as f32 / 11.0 - 0.35)),
        })
        .collect();
    (sum_pi_squared, prm_logprob, trainer_logprob)
}

/// Token columns of one rollout.
struct Columns {
    mask: Vec<bool>,
    text: Vec<String>,
    spans: Vec<[u32; 2]>,
    token_reward: Vec<f32>,
    logprob: Vec<f32>,
    ref_logprob: Vec<f32>,
    values: Vec<f32>,
    entropy: Vec<f32>,
}

fn columns(rng: &mut Rng, segments: &[Segment], reward: f32) -> Columns {
    // Token columns.
    let mut mask = Vec::new();
    let mut text = Vec::new();
    let mut spans = Vec::new();
    for s in segments {
        let start = mask.len() as u32;
        for w in &s.words {
            mask.push(s.policy);
            text.push(w.clone());
        }
        spans.push([start, mask.len() as u32]);
    }
    let n = mask.len();
    let last_policy = mask.iter().rposition(|m| *m).unwrap_or(0);
    let mut token_reward = vec![0.0f32; n];
    token_reward[last_policy] = reward;
    let mut logprob = Vec::with_capacity(n);
    let mut ref_logprob = Vec::with_capacity(n);
    let mut values = Vec::with_capacity(n);
    let mut entropy = Vec::with_capacity(n);
    let base = rng.range_f32(0.3, 0.7);
    for (i, &m) in mask.iter().enumerate() {
        let lp = if m { -rng.range_f32(0.01, 1.2) - if rng.chance(0.05) { 3.0 } else { 0.0 } } else { 0.0 };
        logprob.push(Rng::round3(lp));
        ref_logprob.push(Rng::round3(if m { lp + rng.range_f32(-0.25, 0.2) } else { 0.0 }));
        let progress = i as f32 / n as f32;
        values.push(Rng::round3(base + (reward - base) * progress * 0.8 + rng.range_f32(-0.08, 0.08)));
        entropy.push(Rng::round3(if m { rng.range_f32(0.05, 2.4) } else { 0.0 }));
    }
    Columns { mask, text, spans, token_reward, logprob, ref_logprob, values, entropy }
}
