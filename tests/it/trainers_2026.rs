//! The importers of the 2026 trainers' outputs: verifiers v1 episodes (prime-rl, verifiers eval),
//! vf-eval results, NeMo Gym rollouts, NeMo-RL training dumps and ATIF trajectories, on the
//! fixtures in tests/fixtures/trainers (real NeMo Gym files; the others written by the projects'
//! own serialisation code or, where it cannot run here, as their writers define the lines; each
//! folder says which). The logged advantages are read into the `logged` scheme.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};

use crate::common::append;

use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;

fn fixture_path(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trainers").join(path)
}

fn fixture(path: &str) -> (Run, LoadReport) {
    let file = fixture_path(path);
    let bytes = std::fs::read(&file).unwrap();
    let name = file.display().to_string();
    let mut report = LoadReport::new(&name);
    let run = load_bytes(&name, &bytes, &mut report).unwrap_or_else(|e| panic!("{name}: {e}"));
    (run, report)
}

fn counts(run: &Run) -> (usize, usize, usize) {
    (run.groups.len(), run.trajectories.len(), run.num_path_steps())
}

fn kinds(run: &Run) -> Vec<&str> {
    run.nodes.kind.iter().map(|&k| run.label(k)).collect()
}

/// Step credit of `scheme` under `preset` with `set` parameters.
fn credit(run: &Run, scheme: &str, preset: Option<&str>, set: &[(&str, &str)]) -> Vec<f32> {
    let scheme = vantage::credit::scheme(scheme).unwrap();
    let set: Vec<(String, String)> = set.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    vantage::credit::compute(scheme, run, preset, &set).unwrap().step.clone()
}

/// The token sample (`sample_runs/verl_token_batch.jsonl`) and GRPO's credit of each of its tokens,
/// which the token schemes' goldens mask or weight.
fn token_sample_with_grpo() -> (Run, Vec<f32>) {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs/verl_token_batch.jsonl");
    let run =
        load_bytes("verl_token_batch.jsonl", &std::fs::read(log).unwrap(), &mut LoadReport::new("tokens")).unwrap();
    let set = vec![("level".to_owned(), "token".to_owned())];
    let grpo = vantage::credit::compute(vantage::credit::scheme("grpo").unwrap(), &run, None, &set).unwrap();
    let grpo = grpo.token.clone().unwrap();
    (run, grpo)
}

fn assert_close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    assert!(a.iter().chain(b).all(|v| v.is_finite()), "{what}: a value is missing");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() < 1e-4 || (x.is_nan() && y.is_nan()), "{what}: [{i}] {x} vs {y}");
    }
}

#[test]
fn verifiers_episodes_are_trees_of_branches_grouped_by_episode_group_with_their_advantages() {
    let (run, report) = fixture("verifiers/episodes.jsonl");
    assert_eq!(run.meta.format, "verifiers episodes");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // g0: trace t-a branches after its tool result (2 trajectories), t-b is one; g1: two traces.
    assert_eq!((run.groups.len(), run.trajectories.len()), (2, 5));
    assert_eq!(run.groups.train_step, vec![Some(7), Some(7)]);
    // t-a's two branches share their first step: 3 nodes for t-a, 2 for t-b, 1 each in g1.
    assert_eq!(run.nodes.len(), 7);
    assert_eq!(run.trees.len(), 1, "only the branching trace is a tree record");
    assert_eq!(kinds(&run).iter().filter(|k| **k == "tool_call").count(), 2);
    // The tool result is the first step's observation; the prompt is the system and user messages.
    let first = run.trajectories.path(run.trajectories.ids().next().unwrap())[0];
    assert!(run.text.get(run.nodes.observation[first.index()]).contains("391"));
    let g0 = vantage::model::GroupId::from_index(0);
    let prompt = run.text.get(run.groups.prompt[g0.index()]);
    assert!(prompt.starts_with("[system] You are a calculator agent.") && prompt.contains("17 * 23"), "{prompt}");
    // Rewards are Σ score × weight; each reward's score and each metric a component.
    let reward = &run.trajectories.reward;
    assert!((reward[0] - 1.1).abs() < 1e-6 && (reward[2] - 0.1).abs() < 1e-6, "{reward:?}");
    assert!(run.trajectories.components.contains_key("format"));
    assert!(run.trajectories.components.contains_key("num_tool_calls"));
    // Each trace's agent is its steps' role: the episodes' solver traces, and g1's judge.
    let roles: Vec<&str> =
        run.trajectories.ids().map(|t| run.label(run.nodes.role[run.trajectories.path(t)[0].index()])).collect();
    assert_eq!(roles.iter().filter(|r| **r == "solver").count(), 4, "{roles:?}");
    assert_eq!(roles.iter().filter(|r| **r == "judge").count(), 1, "{roles:?}");
    // A call that stopped at the length limit finishes `length`.
    assert!(run.trajectories.finish.iter().any(|&f| run.label(f) == "length"));
    // Tokens concatenate along each branch; advantages and reference logprobs were spread onto
    // the sampled tokens.
    let tokens = &run.tokens;
    assert!(tokens.advantage.is_some() && tokens.ref_logprob.is_some());
    // The logged advantages are prime-rl's own (the fixture ran its GRPOAlgorithm.score_group):
    // under the matching preset the audit finds nothing; counting each branch of the branching
    // trace as prime-rl does not, it names the rows of that group.
    let logged = credit(&run, "logged", None, &[]);
    let prime = credit(&run, "grpo", Some("prime_rl"), &[]);
    assert_close(&logged, &prime, "logged vs grpo:prime_rl");
    let audit = vantage::analysis::compare::Comparison::of(&run, &logged, &prime);
    assert!(audit.most_different.is_empty() && audit.num_differing == 0);
    let per_branch = credit(&run, "grpo", Some("prime_rl"), &[("count", "trajectory")]);
    let audit = vantage::analysis::compare::Comparison::of(&run, &logged, &per_branch);
    let named: std::collections::BTreeSet<&str> = audit
        .most_different
        .iter()
        .filter_map(|d| run.trajectories.ids().find(|&t| run.trajectories.path_range(t).contains(&d.position)))
        .map(|t| run.trajectory_key(t))
        .collect();
    assert_eq!(named.len(), 3, "{named:?}");
    assert!(named.iter().all(|k| k.starts_with("e-1/") || k.starts_with("e-2/")), "{named:?}");
}

/// An episode line with its `traces` edited by `edit`.
fn edited_episode(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let text = std::fs::read_to_string(fixture_path("verifiers/episodes.jsonl")).unwrap();
    let mut episode: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    edit(&mut episode);
    episode.to_string()
}

#[test]
fn a_broken_verifiers_graph_or_token_array_is_a_located_warning_and_the_rest_loads() {
    let cycle = edited_episode(|e| e["traces"][0]["nodes"][0]["parent"] = 4.into());
    let outside = edited_episode(|e| {
        e["id"] = "e-9".into();
        e["traces"][0]["nodes"][2]["parent"] = 99.into();
    });
    let short = edited_episode(|e| {
        e["id"] = "e-8".into();
        e["traces"][0]["nodes"][2]["mask"] = serde_json::json!([true]);
    });
    let good = std::fs::read_to_string(fixture_path("verifiers/episodes.jsonl")).unwrap();
    let text = format!("{cycle}\n{outside}\nnot json\n{short}\n{good}");
    let mut report = LoadReport::new("bad.jsonl");
    let run = load_bytes("bad.jsonl", text.as_bytes(), &mut report).unwrap();
    let located: Vec<String> = report.warnings.iter().map(|w| w.located("bad.jsonl")).collect();
    assert!(
        located[0].starts_with("bad.jsonl:1: traces.e-1/t-a.nodes[0].parent") && located[0].contains("cycle"),
        "{located:?}"
    );
    assert!(located[1].starts_with("bad.jsonl:2:") && located[1].contains("not a node"), "{located:?}");
    assert!(located[2].starts_with("bad.jsonl:3:"), "{located:?}");
    assert!(located[3].starts_with("bad.jsonl:4:") && located[3].contains("mask has 1 values"), "{located:?}");
    // The episode with the short mask loads without tokens; the good lines load whole.
    assert_eq!(run.trajectories.len(), 2 + 5);
}

#[test]
fn vf_eval_results_of_old_and_new_versions_group_by_example() {
    let (old, report) = fixture("vf_eval/v0.1.3/results.jsonl");
    assert_eq!(old.meta.format, "verifiers vf-eval results");
    assert!(report.warnings.is_empty());
    assert_eq!(counts(&old), (2, 4, 5));
    // The tool call written as a JSON string reads as the call.
    assert!(kinds(&old).contains(&"tool_call"));
    let action = old.nodes.action.iter().map(|&a| old.text.get(a)).find(|a| a.starts_with("calc(")).unwrap();
    assert_eq!(action, r#"calc({"x": 6, "y": 7})"#);
    assert!(old.trajectories.components.contains_key("correct_answer_reward_func"));
    let (new, report) = fixture("vf_eval/current/results.jsonl");
    assert_eq!(counts(&new), (2, 3, 4));
    // The aborted rollout (empty completion) loads, with a warning, finished by its error.
    assert_eq!(report.warnings.len(), 1);
    assert!(report.warnings[0].located("r").starts_with("r:3: completion: empty"), "{:?}", report.warnings);
    let finishes: Vec<&str> = new.trajectories.finish.iter().map(|&f| new.label(f)).collect();
    assert_eq!(finishes, ["no_tools", "truncated", "error"]);
    assert_eq!(new.trajectories.components["num_turns"][..2], [2.0, 1.0]);
}

#[test]
fn nemo_gym_rollouts_become_steps_of_output_items_grouped_by_task() {
    let (run, report) = fixture("nemo_gym/example_mcp_weather.jsonl");
    assert_eq!(run.meta.format, "NeMo Gym rollouts");
    assert!(report.warnings.is_empty());
    assert_eq!(counts(&run), (5, 5, 10));
    // Each function call is a step; its output (matched by call_id) its observation.
    let t = run.trajectories.ids().next().unwrap();
    let path = run.trajectories.path(t);
    assert_eq!(run.label(run.nodes.kind[path[0].index()]), "tool_call");
    assert!(run.text.get(run.nodes.observation[path[0].index()]).starts_with("[tool] "));
    assert!(run.trajectories.components.contains_key("tool_call_seen"));
    // Negative rewards stay negative (blackjack: −1 a loss); user turns are observations.
    let (blackjack, _) = fixture("nemo_gym/blackjack.jsonl");
    assert_eq!(counts(&blackjack), (1, 5, 7));
    assert!(blackjack.trajectories.reward.contains(&-1.0));
    assert!(
        blackjack.nodes.observation.iter().map(|&o| blackjack.text.get(o)).any(|o| o.starts_with("[user] Your hand"))
    );
    // Reasoning items are the thought of the step they lead to.
    let (xlam, _) = fixture("nemo_gym/xlam_fc.jsonl");
    assert_eq!(counts(&xlam), (5, 5, 16));
    assert!(xlam.nodes.thought.iter().any(|&t| !xlam.text.get(t).is_empty()));
    for (file, expected) in
        [("example_tool_call_multireward", (5, 5, 10)), ("openenv", (5, 5, 12)), ("openair_congestion", (5, 5, 5))]
    {
        let (run, report) = fixture(&format!("nemo_gym/{file}.jsonl"));
        assert!(report.warnings.is_empty(), "{file}");
        assert_eq!(counts(&run), expected, "{file}");
    }
}

#[test]
fn nemo_gym_inputs_empty_outputs_and_training_tokens() {
    let weather = std::fs::read_to_string(fixture_path("nemo_gym/example_mcp_weather.jsonl")).unwrap();
    let mut row: serde_json::Value = serde_json::from_str(weather.lines().next().unwrap()).unwrap();
    // An input row (no response), a result with no output items, and a training row whose output
    // items carry token ids and logprobs.
    let mut input = row.clone();
    input.as_object_mut().unwrap().remove("response");
    let mut empty = row.clone();
    empty["response"]["output"] = serde_json::json!([]);
    empty["_ng_rollout_index"] = 1.into();
    let output = row["response"]["output"].as_array_mut().unwrap();
    output[0]["prompt_token_ids"] = serde_json::json!([1, 2, 3]);
    output[0]["generation_token_ids"] = serde_json::json!([4, 5]);
    output[0]["generation_log_probs"] = serde_json::json!([-0.5, -0.25]);
    let last = output.len() - 1;
    output[last]["prompt_token_ids"] = serde_json::json!([1, 2, 3, 4, 5, 6, 7]);
    output[last]["generation_token_ids"] = serde_json::json!([8]);
    output[last]["generation_log_probs"] = serde_json::json!([-1.0]);
    row["_ng_rollout_index"] = 2.into();
    let text = format!("{input}\n{empty}\n{row}\n");
    let mut report = LoadReport::new("rollouts.jsonl");
    let run = load_bytes("rollouts.jsonl", text.as_bytes(), &mut report).unwrap();
    let located: Vec<String> = report.warnings.iter().map(|w| w.located("r")).collect();
    assert!(located[0].starts_with("r:1: response: no response"), "{located:?}");
    assert!(located[1].starts_with("r:2: response.output: no message"), "{located:?}");
    assert_eq!(run.trajectories.len(), 2, "the empty result keeps its reward");
    // Tokens: 3 prompt, 2 generated, then the 2 new prompt tokens and 1 generated.
    let t = vantage::model::TrajectoryId::from_index(1);
    let range = run.trajectories.token_range(t);
    let mask = &run.tokens.mask.as_ref().unwrap()[range.clone()];
    assert_eq!(mask, [false, false, false, true, true, false, false, true]);
    let logprob = &run.tokens.logprob.as_ref().unwrap()[range];
    assert_eq!(logprob[3..5], [-0.5, -0.25]);
    let first = run.trajectories.path(t)[0];
    assert_eq!(run.nodes.token_span(first), Some([0, 5]));
}

#[test]
fn nemo_rl_dumps_group_by_prompt_tokens_and_carry_the_trainers_advantages() {
    let (step1, report) = fixture("nemo_rl/train_data_step1.jsonl");
    assert_eq!(step1.meta.format, "NeMo-RL training dump");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(counts(&step1), (2, 6, 6));
    assert_eq!(step1.groups.train_step, vec![Some(1), Some(1)]);
    // Tokens are cut to input_lengths (the padding is gone).
    assert_eq!(step1.tokens.len, 6 + 5 + 7 + 6 + 8 + 7);
    // The logged advantages are NeMo-RL's own (its GRPOAdvantageEstimator made them): under the
    // nemo_rl preset the audit finds nothing; without the leave-one-out baseline it names rows.
    let logged = credit(&step1, "logged", None, &[]);
    let nemo = credit(&step1, "grpo", Some("nemo_rl"), &[]);
    assert_close(&logged, &nemo, "logged vs grpo:nemo_rl");
    assert_eq!(vantage::analysis::compare::Comparison::of(&step1, &logged, &nemo).num_differing, 0);
    let no_loo = credit(&step1, "grpo", Some("nemo_rl_no_loo"), &[]);
    assert!(!vantage::analysis::compare::Comparison::of(&step1, &logged, &no_loo).most_different.is_empty());
    // A multi-turn sample: one step per run of trained tokens, texts alternating.
    let (step2, _) = fixture("nemo_rl/train_data_step2.jsonl");
    assert_eq!(counts(&step2), (1, 3, 5));
    let t = step2.trajectories.ids().next().unwrap();
    let path = step2.trajectories.path(t);
    assert_eq!(step2.text.get(step2.nodes.action[path[0].index()]), "calc(15-10)");
    assert_eq!(step2.text.get(step2.nodes.observation[path[0].index()]), "5");
    assert_eq!(step2.nodes.token_span(path[0]), Some([5, 11]));
    assert_eq!(step2.nodes.token_span(path[1]), Some([11, 14]));
    // A validation dump: message logs with roles, rewards, no tokens.
    let (val, _) = fixture("nemo_rl/val_data_step2.jsonl");
    assert_eq!(counts(&val), (1, 2, 2));
    assert!(val.tokens.advantage.is_none());
}

#[test]
fn a_nemo_rl_log_directory_is_one_run_across_steps_and_gains_new_step_files() {
    let dir = crate::common::scratch("nemo-rl-dir");
    std::fs::copy(fixture_path("nemo_rl/train_data_step1.jsonl"), dir.join("train_data_step1.jsonl")).unwrap();
    std::fs::copy(fixture_path("nemo_rl/val_data_step2.jsonl"), dir.join("val_data_step2.jsonl")).unwrap();
    std::fs::write(dir.join("config.yaml"), "grpo: {}").unwrap();
    let mut live = vantage::source::live::Live::open(&dir, LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 6);
    std::fs::copy(fixture_path("nemo_rl/train_data_step2.jsonl"), dir.join("train_data_step2.jsonl")).unwrap();
    assert!(live.poll().unwrap());
    let run = live.snapshot();
    assert_eq!(counts(&run), (3, 9, 11));
    let steps: Vec<Option<i64>> = run.groups.train_step.clone();
    assert_eq!(steps, vec![Some(1), Some(1), Some(2)]);
    assert!(run.meta.notes.iter().any(|n| n.contains("val_data_step2.jsonl")), "{:?}", run.meta.notes);
    // Read once, as `vantage check` does: the same run.
    let once = vantage::source::path::load_path(&dir, None, &mut LoadReport::default()).unwrap();
    assert_eq!(counts(&once), counts(&run));
}

#[test]
fn a_followed_episode_stream_gains_its_appended_episodes() {
    let dir = crate::common::scratch("follow-episodes");
    let path = dir.join("stream.jsonl");
    let text = std::fs::read_to_string(fixture_path("verifiers/episodes.jsonl")).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    std::fs::write(&path, lines[0]).unwrap();
    let mut live = vantage::source::live::Live::open(&path, LoadReport::with_budget("", u64::MAX)).unwrap().unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 2);
    let rest = lines[1..].concat();
    let (a, b) = rest.split_at(rest.len() - 7);
    append(&path, a);
    live.poll().unwrap();
    append(&path, b);
    live.poll().unwrap();
    assert_eq!(live.snapshot().trajectories.len(), 5);
}

#[test]
fn a_nemo_gym_failures_sidecar_is_named_in_the_notes() {
    let dir = crate::common::scratch("nemo-gym-sidecar");
    let path = dir.join("rollouts.jsonl");
    std::fs::copy(fixture_path("nemo_gym/blackjack.jsonl"), &path).unwrap();
    let run = vantage::source::path::load_path(&path, None, &mut LoadReport::default()).unwrap();
    assert!(!run.meta.notes.iter().any(|n| n.contains("failures")));
    std::fs::write(dir.join("rollouts_failures.jsonl"), "{\"_ng_failure_class\": \"timeout\"}\n{}\n").unwrap();
    let run = vantage::source::path::load_path(&path, None, &mut LoadReport::default()).unwrap();
    assert!(
        run.meta.notes.iter().any(|n| n.starts_with("2 failed rollout(s) in") && n.contains("rollouts_failures.jsonl")),
        "{:?}",
        run.meta.notes
    );
}

#[test]
fn atif_subagents_are_branches_under_the_calling_step_and_tokens_follow_the_calls() {
    let (run, report) = fixture("atif/subagents.json");
    assert_eq!(run.meta.format, "ATIF trajectories");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // The root: 3 agent steps (the user's question after step 4 is its observation); the worker
    // hangs under the first step with its 2 agent steps.
    assert_eq!(counts(&run), (1, 2, 3 + 3));
    assert_eq!(run.nodes.len(), 5);
    let keys: Vec<&str> = run.trajectories.ids().map(|t| run.trajectory_key(t)).collect();
    assert_eq!(keys, ["root-7", "root-7/subagent-worker-1"]);
    let branch = run.trajectories.path(vantage::model::TrajectoryId::from_index(1));
    let root = run.trajectories.path(vantage::model::TrajectoryId::from_index(0));
    assert_eq!(branch[0], root[0], "the branch starts at the calling step");
    assert!(run.text.get(run.nodes.observation[root[1].index()]).contains("[user] Thanks"));
    // No reward in the file: no outcome, and the notes say where it comes from.
    assert!(run.trajectories.reward.iter().all(|r| r.is_nan()));
    assert!(run.meta.notes.iter().any(|n| n.contains("no reward")));
    let (tokens, _) = fixture("atif/tokens.json");
    let mask = tokens.tokens.mask.as_ref().unwrap();
    assert_eq!(mask, &[false, false, false, false, true, true, true, false, false, true]);
    let path = tokens.trajectories.path(vantage::model::TrajectoryId::from_index(0));
    assert_eq!(tokens.nodes.token_span(path[1]), Some([7, 10]));
    assert_eq!(tokens.groups.task.iter().map(|&t| tokens.label(t)).collect::<Vec<_>>(), ["hello-world"]);
}

/// The largest leave-one-out advantage NeMo-RL's own function gives in a group of equal rewards
/// (`tests/golden/trainers_2026/cases.json`, `equal_pairs_of_octets`: 3.1626e-4 on the octet of
/// 0.3, 1.8398e-4 on that of 0.7), rounded up: rounding noise of its float32 BLAS mean, which ε =
/// 1e-6 magnifies, where vantage's sequential mean leaves at most 6e-8.
const NEMO_RL_NOISE: f64 = 3.2e-4;

/// Each 2026 trainer's own outcome advantage (`tests/golden/trainers_2026`, made by running the
/// trainers' functions) equals `grpo` under its preset (NeMo-RL with and without its leave-one-out
/// baseline, prime-rl, slime, miles) on batches of groups of 1 to 16, mixed sizes, negative
/// rewards, interleaved prompts and all-equal groups: slime and miles to the bit (their presets sum
/// as torch does on the CPU), the others within 1e-5. The one gap: NeMo-RL takes its means by a
/// matrix product (BLAS), whose order vantage does not reproduce, so in a group whose rewards are
/// all equal and not dyadic (0.3, 0.7) its leave-one-out advantage is rounding noise where
/// vantage's is at most 6e-8. Only there, under `nemo_rl` (where it was measured), and only up to the noise
/// measured ([`NEMO_RL_NOISE`]), as docs/SCHEMES.md says.
#[test]
fn the_2026_trainers_presets_reproduce_the_trainers_own_advantages() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/trainers_2026/cases.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    assert!(cases.len() >= 11);
    let (mut compared, mut noise, mut failures, mut inexact) = (0, Vec::new(), Vec::new(), Vec::new());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let samples: Vec<(String, f64)> = case["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s[0].as_str().unwrap().to_owned(), s[1].as_f64().unwrap()))
            .collect();
        let mut log = String::from("{\"vantage\": 1}\n");
        for (i, (prompt, reward)) in samples.iter().enumerate() {
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "s{i}", "group": "{prompt}", "outcome": {{"reward": {reward}}}, "steps": [{{"action": "a"}}]}}"#
            ));
            log.push('\n');
        }
        let run = load_bytes(name, log.as_bytes(), &mut LoadReport::new(name)).unwrap();
        for trainer in ["nemo_rl", "nemo_rl_no_loo", "prime_rl", "slime", "miles"] {
            let got = credit(&run, "grpo", Some(trainer), &[]);
            for (i, want) in case["advantages"][trainer].as_array().unwrap().iter().enumerate() {
                let t = run.trajectory_by_key(&format!("s{i}")).unwrap();
                let (g, w) = (f64::from(got[run.trajectories.path_range(t).start]), want.as_f64().unwrap());
                compared += 1;
                if g as f32 != w as f32 {
                    inexact.push(format!("{name} {trainer} s{i}: {g} vs {w}"));
                }
                if (g - w).abs() <= 1e-5 + 1e-5 * w.abs() {
                    continue;
                }
                // NeMo-RL's leave-one-out advantage in a group of equal rewards: vantage's within the
                // 1e-5 of every other row (its float32 r minus the others' mean: 6e-8 at most
                // here), the trainer's within the noise its BLAS mean was measured to leave.
                let (prompt, reward) = &samples[i];
                let group: Vec<f64> = samples.iter().filter(|(p, _)| p == prompt).map(|(_, r)| *r).collect();
                let equal = group.iter().all(|r| r == reward);
                if trainer == "nemo_rl" && equal && g.abs() <= 1e-5 && w.abs() <= NEMO_RL_NOISE {
                    noise.push(format!("{name} {trainer} s{i}: vantage {g:.4}, trainer {w:.4}"));
                } else {
                    failures.push(format!("{name} {trainer} s{i}: {g} vs {w}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
    assert!(compared >= 400, "{compared}");
    // The carve-out is the measured one: the eight rows of the octets of 0.3 and 0.7, no more.
    assert_eq!(noise.len(), 8, "{noise:?}");
    println!("rounding noise of zero-variance groups ({} rows):\n{}", noise.len(), noise.join("\n"));
    println!("not equal to the bit ({} rows):\n{}", inexact.len(), inexact.join("\n"));
    // slime's and miles' presets sum as torch does on the CPU: their numbers are the trainers' bits.
    let torch_exact: Vec<&String> =
        inexact.iter().filter(|l| l.split(' ').nth(1).is_some_and(|t| t == "slime" || t == "miles")).collect();
    assert!(torch_exact.is_empty(), "slime and miles not to the bit:\n{torch_exact:?}");
}

/// Whether vantage's `got` is a golden `want`: to the bit (either zero) when `exact`, else within
/// 1e-6 absolute and relative (Python's doubles against vantage's float32 rewards).
fn agrees(got: f32, want: f32, exact: bool) -> bool {
    if exact {
        got.to_bits() == want.to_bits() || (got == 0.0 && want == 0.0)
    } else {
        (got - want).abs() <= 1e-6 + 1e-6 * want.abs()
    }
}

/// prime-rl's algorithms beyond GRPO (`tests/golden/prime_algos`, made by running prime-rl's own
/// classes with torch 2.15 on the CPU) equal vantage's schemes under their `prime_rl` presets, to
/// the bit of float32 for `maxrl` (`MaxRLAlgorithm`, whose torch tensor rounds the rewards to
/// float32 as vantage holds them), within 1e-6 for `rae` (`RAEAlgorithm`, one instance over a case's
/// groups in order, at its default decay and at 0.5: its Python floats keep the log's doubles,
/// vantage the float32 of each reward, an ulp or two apart), on the batches of the trainers' cases,
/// groups whose mean reward is at most 0, and multi-agent groups.
#[test]
fn prime_rls_own_algorithms_are_reproduced_to_the_bit() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/prime_algos/cases.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    assert!(cases.len() >= 15);
    let (mut compared, mut failures) = (std::collections::BTreeMap::new(), Vec::new());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let samples = case["samples"].as_array().unwrap();
        let mut log = String::from("{\"vantage\": 1}\n");
        for (i, sample) in samples.iter().enumerate() {
            let (prompt, role, reward) = (sample[0].as_str().unwrap(), sample[1].as_str().unwrap(), &sample[2]);
            // A role of `default` is what a trajectory without one has: written as none.
            let role = if role == "default" { String::new() } else { format!(r#", "role": "{role}""#) };
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "s{i}", "group": "{prompt}", "outcome": {{"reward": {reward}}}, "steps": [{{"action": "a"{role}}}]}}"#
            ));
            log.push('\n');
        }
        let run = load_bytes(name, log.as_bytes(), &mut LoadReport::new(name)).unwrap();
        // Each golden key: the scheme, and the decay set (none: the preset's).
        for (key, scheme, decay) in
            [("maxrl", "maxrl", None), ("rae", "rae", None), ("rae_decay_0.5", "rae", Some("0.5"))]
        {
            let set: Vec<(&str, &str)> = decay.map(|d| ("decay", d)).into_iter().collect();
            let Some(wanted) = case["advantages"][key].as_array() else { continue };
            let got = credit(&run, scheme, Some("prime_rl"), &set);
            for (i, want) in wanted.iter().enumerate() {
                let t = run.trajectory_by_key(&format!("s{i}")).unwrap();
                let (g, w) = (got[run.trajectories.path_range(t).start], want.as_f64().unwrap() as f32);
                *compared.entry(key).or_insert(0) += 1;
                if !agrees(g, w, scheme == "maxrl") {
                    failures.push(format!("{name} {key} s{i}: {g} vs {w}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
    assert!(compared.values().all(|&n| n >= 100), "{compared:?}");
    assert_eq!(compared.len(), 3, "{compared:?}");
}

/// prime-rl's on-policy distillation (`opd`): each token's weight under the trainer's own
/// `ref_kl_loss_fn` (minus its gradient with respect to the trainer's log-probs, on-policy; made
/// with torch in `tests/golden/prime_algos`) is the token credit, to the bit, masked tokens 0; a
/// step's credit is the mean over its policy tokens.
#[test]
fn prime_rls_on_policy_distillation_weights_are_the_token_credit() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/prime_algos/cases.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let rows = golden["opd"].as_array().unwrap();
    assert!(rows.len() >= 5);
    let floats = |v: &serde_json::Value| -> Vec<f32> {
        v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
    };
    let mut log = String::from("{\"vantage\": 1}\n");
    for (i, row) in rows.iter().enumerate() {
        let n = row["logprob"].as_array().unwrap().len();
        let mask: Vec<u8> = row["mask"].as_array().unwrap().iter().map(|m| u8::from(m.as_bool().unwrap())).collect();
        log.push_str(&format!(
            r#"{{"type": "trajectory", "id": "r{i}", "group": "g", "outcome": {{"reward": 1}}, "steps": [{{"action": "a", "token_span": [0, {n}]}}], "tokens": {{"mask": {mask:?}, "logprob": {}, "ref_logprob": {}}}}}"#,
            row["logprob"], row["teacher"]
        ));
        log.push('\n');
    }
    let run = load_bytes("opd.jsonl", log.as_bytes(), &mut LoadReport::new("opd")).unwrap();
    let scheme = vantage::credit::scheme("opd").unwrap();
    let credit = vantage::credit::compute(scheme, &run, Some("prime_rl"), &Vec::new()).unwrap();
    let token = credit.token.as_ref().expect("token credit");
    let mut compared = 0;
    for (i, row) in rows.iter().enumerate() {
        let t = run.trajectory_by_key(&format!("r{i}")).unwrap();
        let span =
            run.trajectories.token_offsets[t.index()] as usize..run.trajectories.token_offsets[t.index() + 1] as usize;
        let (want, mask) = (floats(&row["weights"]), row["mask"].as_array().unwrap());
        assert_eq!(span.len(), want.len(), "r{i}");
        for ((got, want), m) in token[span].iter().zip(&want).zip(mask) {
            assert!(got.to_bits() == want.to_bits() || (*got == 0.0 && *want == 0.0), "r{i}: {got} vs {want}");
            if !m.as_bool().unwrap() {
                assert_eq!(*got, 0.0, "r{i}: a masked token has no weight");
            }
            compared += 1;
        }
        // The step's credit: the mean of its policy tokens' weights.
        let kept: Vec<f64> =
            want.iter().zip(mask).filter(|(_, m)| m.as_bool().unwrap()).map(|(w, _)| f64::from(*w)).collect();
        let mean = kept.iter().sum::<f64>() / kept.len() as f64;
        let step = credit.step[run.trajectories.path_range(t).start];
        assert!((f64::from(step) - mean).abs() < 1e-5, "r{i}: step {step} vs {mean}");
    }
    assert_eq!(compared, 64);
    // Without a teacher's log-probs it says what it needs.
    let plain = load_bytes("p.jsonl", b"{\"vantage\": 1}\n{\"type\": \"trajectory\", \"id\": \"t\", \"group\": \"g\", \"outcome\": {\"reward\": 1}, \"steps\": [{\"action\": \"a\"}]}\n", &mut LoadReport::new("p")).unwrap();
    assert!(matches!(scheme.supports(&plain), vantage::credit::Support::No(why) if why.contains("ref_logprob")));
}

/// ms-swift's high-entropy token training (`entropy_mask`): the mask its own statements give on
/// the token sample's entropies (`tests/golden/ms_swift`, run with torch) at ρ = 0.2, 0.5 and 1,
/// to the token, with the same threshold to the bit; a kept token has the base scheme's credit
/// (GRPO's), a masked one 0.
#[test]
fn ms_swifts_entropy_mask_keeps_the_tokens_its_own_code_keeps() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/ms_swift/entropy_mask.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let (run, grpo) = token_sample_with_grpo();
    assert_eq!(golden["tokens"].as_u64().unwrap() as usize, run.tokens.len);
    let scheme = vantage::credit::scheme("entropy_mask").unwrap();
    for case in golden["cases"].as_array().unwrap() {
        let quantile = case["quantile"].as_f64().unwrap();
        let sets = vec![("quantile".to_owned(), quantile.to_string())];
        let credit = vantage::credit::compute(scheme, &run, None, &sets).unwrap();
        let token = credit.token.as_ref().unwrap();
        let mask: Vec<bool> = case["mask"].as_array().unwrap().iter().map(|m| m.as_bool().unwrap()).collect();
        let mut kept = 0;
        for (i, &keep) in mask.iter().enumerate() {
            let want = if keep { grpo[i] } else { 0.0 };
            assert_eq!(token[i].to_bits(), want.to_bits(), "ρ = {quantile}, token {i}: {} vs {want}", token[i]);
            kept += usize::from(keep && run.tokens.mask.as_ref().is_none_or(|m| m[i]));
        }
        if let Some(threshold) = case["threshold"].as_f64() {
            let shown = credit.terms.for_step(0, 0).into_iter().find(|(k, _)| *k == "entropy threshold").unwrap().1;
            assert_eq!((shown as f32).to_bits(), (threshold as f32).to_bits(), "ρ = {quantile}");
        }
        assert!(kept > 0, "ρ = {quantile}: no token kept");
    }
    // Without token entropies it says what it needs.
    let plain = load_bytes("p.jsonl", b"{\"vantage\": 1}\n{\"type\": \"trajectory\", \"id\": \"t\", \"group\": \"g\", \"outcome\": {\"reward\": 1}, \"steps\": [{\"action\": \"a\"}]}\n", &mut LoadReport::new("p")).unwrap();
    assert!(matches!(scheme.supports(&plain), vantage::credit::Support::No(why) if why.contains("entropy")));
}

/// slime normalizes each rollout (training step) by its own rule: a step that holds
/// `n_samples_per_prompt × rollout_batch_size` rows by prompt-sized runs of rows, a step that
/// dynamic sampling left short as one group, whatever the other steps hold.
#[test]
fn slime_applies_its_batch_rule_per_training_step() {
    let mut log = String::from("{\"vantage\": 1}\n");
    let rows = [(0, "a", [1, 0, 1, 0].as_slice()), (0, "b", &[1, 1, 0, 0]), (1, "c", &[1, 0, 0, 0]), (1, "d", &[1, 1])];
    for (step, prompt, rewards) in rows {
        for (i, r) in rewards.iter().enumerate() {
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "{prompt}{i}", "group": "{prompt}", "train_step": {step}, "outcome": {{"reward": {r}}}, "steps": [{{"action": "a"}}]}}"#
            ));
            log.push('\n');
        }
    }
    let run = load_bytes("steps", log.as_bytes(), &mut LoadReport::new("steps")).unwrap();
    let got = credit(&run, "grpo", Some("slime"), &[]);
    let at = |key: &str| f64::from(got[run.trajectories.path_range(run.trajectory_by_key(key).unwrap()).start]);
    // Step 0: by prompt, (1 − 0.5)/(std([1, 0, 1, 0]) + 1e-6).
    assert!((at("a0") - 0.5 / (1.0f64 / 3.0).sqrt()).abs() < 1e-5, "{}", at("a0"));
    // Step 1: six rows of two prompts of unequal size, one group: mean 0.5, std √0.3.
    assert!((at("c0") - 0.5 / 0.3f64.sqrt()).abs() < 1e-5, "{}", at("c0"));
    assert!((at("c1") + 0.5 / 0.3f64.sqrt()).abs() < 1e-5, "{}", at("c1"));
    // Told the sizes, a step of another size is one group too.
    let sized = credit(&run, "grpo", Some("slime"), &[("n_samples_per_prompt", "4"), ("rollout_batch_size", "4")]);
    let a0 = f64::from(sized[run.trajectories.path_range(run.trajectory_by_key("a0").unwrap()).start]);
    assert!((a0 - 0.5 / (2.0f64 / 7.0).sqrt()).abs() < 1e-5, "step 0 as one group of 8: {a0}");
}

#[test]
fn a_slime_dump_directory_joins_rollout_and_sharded_train_dumps_and_reports_a_shard_being_written() {
    let dir = fixture_path("slime/dump");
    let mut report = LoadReport::new("dump");
    let run = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    assert_eq!(run.meta.format, "slime / miles dump");
    // Rollouts 3 and 4: two prompts of two samples each; rollout 3's sample 2 took two turns, which
    // miles' conversation sidecar (trajectory/3.jsonl) gives as two steps spanning its trained runs.
    assert_eq!(counts(&run), (4, 8, 9));
    let multi = run.trajectory_by_key("rollout-3/sample-2").unwrap();
    let steps = run.trajectories.path(multi);
    assert_eq!(steps.len(), 2);
    assert_eq!(run.text.get(run.nodes.observation[steps[0].index()]), "[tool] true");
    assert_eq!(run.nodes.token_span(steps[0]), Some([4, 6]));
    assert_eq!(run.nodes.token_span(steps[1]), Some([6, 7]));
    assert_eq!(run.groups.train_step, vec![Some(3), Some(3), Some(4), Some(4)]);
    // Rollout 4's second shard is half a file: reported, not misread.
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0].field.contains("train_data/4_1.pt")
            && report.warnings[0].reason.contains("still being written")
    );
    // The prompt's tokens are unmasked, the response's follow its loss mask; the train dump's
    // log-probabilities, reference log-probabilities, entropies and advantages are joined by
    // sample index across rollout 3's two rank files.
    let t = run.trajectory_by_key("rollout-3/sample-0").unwrap();
    let range = run.trajectories.token_range(t);
    assert_eq!(&run.tokens.mask.as_ref().unwrap()[range.clone()], &[false, false, false, true, true]);
    let ref_logprob = &run.tokens.ref_logprob.as_ref().unwrap()[range];
    assert!((ref_logprob[3] - (-0.12)).abs() < 1e-6, "{ref_logprob:?}");
    assert!(run.tokens.entropy.is_some() && run.tokens.advantage.is_some());
    // slime's own GRPO normalisation made the logged advantages: the slime preset recomputes them.
    let logged = credit(&run, "logged", None, &[]);
    let slime = credit(&run, "grpo", Some("slime"), &[]);
    assert_close(&logged, &slime, "logged vs grpo:slime");
    // One rollout file alone loads; a train file alone says to open the directory.
    let (alone, _) = fixture("slime/dump/rollout_data/4.pt");
    assert_eq!(counts(&alone), (2, 4, 4));
    let train = std::fs::read(fixture_path("slime/dump/train_data/3_0.pt")).unwrap();
    let err = load_bytes("3_0.pt", &train, &mut LoadReport::new("3_0.pt")).unwrap_err();
    assert!(err.to_string().contains("open the dump directory"), "{err}");
}

/// A Harbor job (`<job>/<trial>/agent/trajectory.json` beside `<trial>/result.json`) is one run:
/// each trajectory named after its trial and grouped by its task, the verifier's reward joined from
/// the trial's result; a trial whose verifier did not run has no outcome, said in a warning.
#[test]
fn a_harbor_job_joins_each_trials_reward_and_groups_trials_by_task() {
    let mut report = LoadReport::new("job");
    let run = vantage::source::path::load_path(&fixture_path("atif/job"), None, &mut report).unwrap();
    assert_eq!(run.meta.format, "ATIF trajectories");
    assert_eq!((run.groups.len(), run.trajectories.len()), (2, 3));
    let reward = |key: &str| run.trajectories.reward[run.trajectory_by_key(key).unwrap().index()];
    assert_eq!(reward("hello-world__Xk2Lm9Q"), 1.0);
    assert_eq!(reward("hello-world__Pq7Rt3Z"), 0.0);
    assert!(reward("fix-git__Ab3Cd5E").is_nan());
    let group = |key: &str| run.trajectories.group[run.trajectory_by_key(key).unwrap().index()];
    assert_eq!(group("hello-world__Xk2Lm9Q"), group("hello-world__Pq7Rt3Z"));
    assert_eq!(report.warnings.len(), 1);
    assert!(report.warnings[0].reason.contains("\"fix-git__Ab3Cd5E\" has no outcome"), "{:?}", report.warnings);
    // One trial's directory opens by itself with its reward.
    let one = vantage::source::path::load_path(
        &fixture_path("atif/job/hello-world__Xk2Lm9Q"),
        None,
        &mut LoadReport::new("t"),
    )
    .unwrap();
    assert_eq!(one.trajectories.reward, vec![1.0]);
}

/// Every 2026 format's fixture written as vantage JSONL reads back the same (trees, token arrays
/// and the logged advantages included), so a run can be converted and shared.
#[test]
fn every_2026_format_round_trips_through_vantage_jsonl() {
    for file in [
        "verifiers/episodes.jsonl",
        "vf_eval/v0.1.3/results.jsonl",
        "vf_eval/current/results.jsonl",
        "nemo_gym/xlam_fc.jsonl",
        "nemo_gym/blackjack.jsonl",
        "nemo_rl/train_data_step2.jsonl",
        "nemo_rl/val_data_step2.jsonl",
        "atif/subagents.json",
        "atif/tokens.json",
        "slime/dump/rollout_data/3.pt",
    ] {
        let (run, _) = fixture(file);
        let jsonl = vantage::load::formats::vantage_jsonl::write::to_jsonl(&run);
        let mut report = LoadReport::new("round.jsonl");
        let again = load_bytes("round.jsonl", jsonl.as_bytes(), &mut report).unwrap();
        assert!(report.warnings.is_empty(), "{file}: {:?}", report.warnings.first());
        assert_eq!(vantage::load::formats::vantage_jsonl::write::to_jsonl(&again), jsonl, "{file}");
        assert_eq!(vantage::analysis::RunSummary::of(&again), vantage::analysis::RunSummary::of(&run), "{file}");
    }
}

/// prime-rl's layouts open as one run: the trace stream directory (its index and annotations named
/// in the notes, not tried as logs) and the earlier `rollouts/step_N/{train,eval}/all/traces.jsonl`
/// (the `effective` subsets named, not read twice), followed as new steps arrive.
#[test]
fn prime_rl_trace_directories_open_as_one_run() {
    let text = std::fs::read_to_string(fixture_path("verifiers/episodes.jsonl")).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let run_dir = crate::common::scratch("prime-rl-run");
    let traces = run_dir.join("monitors/file/traces");
    std::fs::create_dir_all(traces.join("annotations")).unwrap();
    std::fs::write(traces.join("stream.jsonl"), &text).unwrap();
    std::fs::write(traces.join("stream.index.jsonl"), "{\"offset\": 0}\n").unwrap();
    // The trainer's update of trace t-b (one branch of 40 tokens): advantage 2 where it knows one.
    let stream: Vec<Option<f64>> = (0..40).map(|k| (k >= 14).then_some(2.0)).collect();
    let update = serde_json::json!({"version": 1, "trace_id": "t-b", "info": {}, "branches": [{"index": 0, "advantages": stream}]});
    std::fs::write(traces.join("annotations/trainer.jsonl"), format!("{update}\n")).unwrap();
    std::fs::write(traces.join("annotations/trainer.index.jsonl"), "{\"trace_id\": \"t-b\"}\n").unwrap();
    for dir in [run_dir.clone(), traces.clone()] {
        let mut report = LoadReport::new("run");
        let run = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
        assert_eq!((run.meta.format.as_str(), run.trajectories.len()), ("verifiers episodes", 5));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let notes = &run.meta.notes;
        assert!(
            notes.iter().any(|n| n.contains("stream.index.jsonl") && n.contains("trainer.index.jsonl")),
            "{notes:?}"
        );
        // The update is folded: t-b's steps now carry the trainer's 2, the others their own.
        let logged = credit(&run, "logged", None, &[]);
        let t = run.trajectory_by_key("e-2/t-b").unwrap();
        assert!(logged[run.trajectories.path_range(t)].iter().all(|&v| v == 2.0), "{logged:?}");
        let a = run.trajectory_by_key("e-1/t-a/branch-0").unwrap();
        assert!(logged[run.trajectories.path_range(a)].iter().all(|&v| v == 0.5));
    }
    // A chunked stream (prime-rl seals full chunks with zstd: those are named, not read).
    let chunked = crate::common::scratch("prime-rl-chunks").join("traces");
    std::fs::create_dir_all(chunked.join("stream")).unwrap();
    std::fs::write(chunked.join("stream/00000.jsonl"), lines[0]).unwrap();
    std::fs::write(chunked.join("stream/00001.jsonl"), lines[1..].concat()).unwrap();
    std::fs::write(chunked.join("stream/00002.jsonl.zst"), b"\x28\xb5\x2f\xfd").unwrap();
    let run = vantage::source::path::load_path(&chunked, None, &mut LoadReport::new("c")).unwrap();
    assert_eq!(run.trajectories.len(), 5);
    assert!(run.meta.notes.iter().any(|n| n.contains("00002.jsonl.zst")), "{:?}", run.meta.notes);
    let rollouts = crate::common::scratch("prime-rl-rollouts").join("rollouts");
    let write = |path: &str, text: &str| {
        let file = rollouts.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write("step_7/train/all/traces.jsonl", &lines[..2].concat());
    write("step_7/train/effective/traces.jsonl", lines[0]);
    let mut live = vantage::source::live::Live::open(rollouts.parent().unwrap(), LoadReport::with_budget("", u64::MAX))
        .unwrap()
        .unwrap();
    live.follow();
    assert!(live.read(None).unwrap());
    assert_eq!(live.snapshot().trajectories.len(), 3);
    write("step_8/eval/all/traces.jsonl", lines[2]);
    assert!(live.poll().unwrap());
    let run = live.snapshot();
    assert_eq!(run.trajectories.len(), 5);
    assert!(run.meta.notes.iter().any(|n| n.contains("step_7/train/effective/traces.jsonl")), "{:?}", run.meta.notes);
}

/// A line that is a bare trace (its message graph at the top level, as verifiers' readers accept)
/// is an episode of one trace, its own group.
#[test]
fn a_bare_verifiers_trace_line_is_an_episode_of_one_trace() {
    let text = std::fs::read_to_string(fixture_path("verifiers/episodes.jsonl")).unwrap();
    let episode: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let trace = episode["traces"][0].to_string();
    let mut report = LoadReport::new("trace.jsonl");
    let run = load_bytes("trace.jsonl", format!("{trace}\n").as_bytes(), &mut report).unwrap();
    assert_eq!(run.meta.format, "verifiers episodes");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(counts(&run), (1, 1, 2));
    assert_eq!(run.trajectories.reward[0], 0.1);
}

/// Each JSON-lines format of the 2026 trainers, followed while it is written: a file that gains
/// its lines (the last in two pieces) ends as the whole file read at once.
#[test]
fn the_2026_json_lines_formats_are_followed_as_they_grow() {
    let dir = crate::common::scratch("follow-2026");
    for file in ["nemo_gym/xlam_fc.jsonl", "vf_eval/current/results.jsonl", "nemo_rl/train_data_step1.jsonl"] {
        let source = std::fs::read_to_string(fixture_path(file)).unwrap();
        let (whole, _) = fixture(file);
        let (live, first) = crate::common::follow_in_pieces(&dir.join(Path::new(file).file_name().unwrap()), &source);
        assert_eq!(first, 1, "{file}");
        let run = live.snapshot();
        assert_eq!(run.meta.format, whole.meta.format, "{file}");
        assert_eq!(counts(&run), counts(&whole), "{file}");
        assert_eq!(run.groups.train_step, whole.groups.train_step, "{file}");
    }
}

/// Output items nested in lists (aviary writes each environment step's items as one list) are
/// the same steps as the flat items.
#[test]
fn nested_nemo_gym_output_items_are_read_in_order() {
    let weather = std::fs::read_to_string(fixture_path("nemo_gym/example_mcp_weather.jsonl")).unwrap();
    let mut row: serde_json::Value = serde_json::from_str(weather.lines().next().unwrap()).unwrap();
    let flat = load_bytes("flat.jsonl", format!("{row}\n").as_bytes(), &mut LoadReport::new("f")).unwrap();
    let items = row["response"]["output"].take();
    let (first, rest) = items.as_array().unwrap().split_at(1);
    row["response"]["output"] = serde_json::json!([first, rest]);
    let nested = load_bytes("nested.jsonl", format!("{row}\n").as_bytes(), &mut LoadReport::new("n")).unwrap();
    assert_eq!(counts(&nested), counts(&flat));
    assert_eq!(
        vantage::load::formats::vantage_jsonl::write::to_jsonl(&nested).replace("nested.jsonl", ""),
        vantage::load::formats::vantage_jsonl::write::to_jsonl(&flat).replace("flat.jsonl", "")
    );
}

/// Real vf-eval outputs (committed in verifiers' history) load with their counts, one of them an
/// aborted save whose empty completions get one warning with their count and lines; a Git LFS pointer in a result's place
/// is named as such.
#[test]
fn real_vf_eval_results_load_and_an_lfs_pointer_says_what_it_is() {
    for (dir, expected, component) in [
        ("tool_test", (5, 15, 15), "tool_call_reward_func"),
        ("math_python", (5, 15, 31), "correct_answer_reward_func"),
        ("wordle", (5, 15, 68), "check_answer_reward_func"),
    ] {
        let (run, report) = fixture(&format!("vf_eval/real/{dir}/results.jsonl"));
        assert_eq!(run.meta.format, "verifiers vf-eval results", "{dir}");
        // tool_test's save was aborted: every completion is empty, and one warning says so with
        // the count and the lines (all fifteen counted).
        let empty = if dir == "tool_test" { 15 } else { 0 };
        assert_eq!(report.num_warnings(), empty, "{dir}: {:?}", report.warnings.first());
        assert_eq!(report.warnings.len(), usize::from(empty > 0), "{dir}");
        assert!(report.warnings.iter().all(|w| !w.skipped && w.field == "completion"));
        if let Some(w) = report.warnings.first() {
            assert!(
                w.reason.ends_with("(15 records: lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)"),
                "{}",
                w.reason
            );
        }
        assert_eq!(counts(&run), expected, "{dir}");
        assert!(run.trajectories.components.contains_key(component), "{dir}");
    }
    let pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:d808\nsize 23975\n";
    let err = load_bytes("results.jsonl", pointer, &mut LoadReport::new("results.jsonl")).unwrap_err();
    assert!(err.to_string().contains("Git LFS pointer"), "{err}");
}

/// A verifiers trace's `info.turn_rewards` (prime-rl's per-turn state scores, one per sampled node
/// in node order, `null` for an unscored turn) are its turns' `turn_reward` step scores, shared by
/// the branches that share a turn; a list of the wrong length is a located warning, and the trace
/// loads without them.
#[test]
fn verifiers_turn_rewards_are_the_turns_state_scores() {
    // t-a's sampled nodes: 2 (the tool call, shared), 4 and 5 (the two final answers).
    let scored = edited_episode(|e| e["traces"][0]["info"] = serde_json::json!({"turn_rewards": [0.25, null, 1.0]}));
    let mut report = LoadReport::new("scored.jsonl");
    let run = load_bytes("scored.jsonl", scored.as_bytes(), &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let column = &run.nodes.scores["turn_reward"];
    let branch = |i: usize| {
        let t = run.trajectory_by_key(&format!("e-1/t-a/branch-{i}")).unwrap();
        run.trajectories.path(t).iter().map(|n| column[n.index()]).collect::<Vec<f32>>()
    };
    let (first, second) = (branch(0), branch(1));
    assert_eq!(first[0], 0.25);
    assert!(first[1].is_nan(), "{first:?}");
    assert_eq!(second, [0.25, 1.0]);
    assert_eq!(vantage::credit::scheme("turn_credit").unwrap().supports(&run), vantage::credit::Support::Yes);
    let short = edited_episode(|e| e["traces"][0]["info"] = serde_json::json!({"turn_rewards": [0.25]}));
    let mut report = LoadReport::new("short.jsonl");
    let run = load_bytes("short.jsonl", short.as_bytes(), &mut report).unwrap();
    let located: Vec<String> = report.warnings.iter().map(|w| w.located("short.jsonl")).collect();
    assert_eq!(located.len(), 1, "{located:?}");
    assert!(
        located[0].starts_with("short.jsonl:1: traces.e-1/t-a.info.turn_rewards")
            && located[0].contains("1 entries for 3 sampled turns"),
        "{located:?}"
    );
    assert!(!run.nodes.scores.contains_key("turn_reward"));
}

/// A tinker-cookbook RL log directory (written by the cookbook's own `serialize_rollout_summaries`,
/// `tests/fixtures/trainers/tinker/make_run.py`): the training batches' summaries of every iteration
/// are one run, its evaluator's file a run of its own, the logtrees and the config named as
/// skipped; each transition is a step with its own reward, metrics and logs.
#[test]
fn a_tinker_cookbook_run_directory_is_its_iterations_rollout_summaries() {
    let dir = fixture_path("tinker/run");
    let options = vantage::source::OpenOptions::default();
    let mut report = LoadReport::new("run");
    let run = vantage::source::path::open(&dir, &options, None, &mut report, None).unwrap();
    assert_eq!(run.meta.format, "tinker-cookbook rollout summaries");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // Two iterations of two problems of four trajectories; 63 transitions.
    assert_eq!(counts(&run), (4, 16, 63));
    assert_eq!(run.groups.train_step, [Some(0), Some(0), Some(1), Some(1)]);
    let note = run.meta.notes.iter().find(|n| n.contains("skipped")).unwrap();
    for skipped in ["iteration_000001/eval_guess_rollout_summaries.jsonl", "train_logtree.json", "config.json"] {
        assert!(note.contains(skipped), "{note}");
    }
    // The first trajectory: four wrong guesses and a last one, each −0.1, total −0.5; its texts
    // are the environment's logs.
    let t = run.trajectory_by_key("train/iteration-0/group-0/traj-0").unwrap();
    let path = run.trajectories.path(t);
    assert_eq!(path.len(), 5);
    assert!((run.trajectories.reward[t.index()] + 0.5).abs() < 1e-6);
    assert!(path.iter().all(|n| (run.nodes.env_reward[n.index()] + 0.1).abs() < 1e-6));
    assert_eq!(run.text(run.nodes.action[path[0].index()]), "feedback: lower\nguess: 15");
    assert_eq!(run.nodes.scores["distance"][path[2].index()], 1.0);
    // The one cut off at the turn limit.
    assert_eq!(kinds(&run).len(), 63);
    let truncated: Vec<&str> = run
        .trajectories
        .ids()
        .filter(|&t| run.label(run.trajectories.finish[t.index()]) == "truncated")
        .map(|t| run.trajectory_key(t))
        .collect();
    assert_eq!(truncated.len(), 1, "{truncated:?}");
    // tinker's advantage is the total reward minus the group's mean: grpo --preset tinker.
    let credit = credit(&run, "grpo", Some("tinker"), &[]);
    for g in run.groups.ids() {
        let members = run.groups.members(g);
        let mean = members.iter().map(|&m| run.trajectories.reward[m.index()]).sum::<f32>() / members.len() as f32;
        for &m in members {
            let want = run.trajectories.reward[m.index()] - mean;
            for p in run.trajectories.path_range(m) {
                assert!((credit[p] - want).abs() < 1e-6, "{}: {} vs {want}", run.trajectory_key(m), credit[p]);
            }
        }
    }
    // The evaluator's summaries open as a run of their own.
    let (eval, report) = fixture("tinker/run/iteration_000001/eval_guess_rollout_summaries.jsonl");
    assert!(report.warnings.is_empty());
    assert_eq!(counts(&eval), (1, 4, 16));
    assert_eq!(eval.group_key(vantage::model::GroupId::from_index(0)), "eval/guess/iteration-1/group-0");
}

/// SkyRL's dumped evals (written by SkyRL's own `dump_per_dataset_eval_results`,
/// `tests/fixtures/trainers/skyrl/make_run.py`): `dumped_evals/` is one run of every step folder's
/// data-source files, the metrics named as skipped; a prompt's samples are a group of its step and
/// data source; token-level scores are summed; one file alone takes its step from its folder.
#[test]
fn skyrl_dumped_evals_are_one_run_of_every_step_and_data_source() {
    let dir = fixture_path("skyrl/run/dumped_evals");
    let options = vantage::source::OpenOptions::default();
    let mut report = LoadReport::new("dumped_evals");
    let run = vantage::source::path::open(&dir, &options, None, &mut report, None).unwrap();
    assert_eq!(run.meta.format, "SkyRL dumped evals");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // Two steps × (gsm8k: two prompts, aime: one) × three samples, one step each.
    assert_eq!(counts(&run), (6, 18, 18));
    let steps: std::collections::BTreeSet<Option<i64>> = run.groups.train_step.iter().copied().collect();
    assert_eq!(steps, [Some(10), Some(20)].into_iter().collect());
    let note = run.meta.notes.iter().find(|n| n.contains("skipped")).unwrap();
    assert!(note.contains("global_step_10_evals/aggregated_results.jsonl"), "{note}");
    let tasks: std::collections::BTreeSet<&str> = run.groups.task.iter().map(|&t| run.label(t)).collect();
    assert_eq!(tasks, ["aime", "openai/gsm8k"].into_iter().collect());
    // The token-level sample: its scores summed (1.0), passing (its last score positive).
    let t = run.trajectory_by_key("step-10/openai/gsm8k/1").unwrap();
    assert_eq!((run.trajectories.reward[t.index()], run.trajectories.success[t.index()]), (1.0, Some(true)));
    let response = run.text(run.nodes.action[run.trajectories.path(t)[0].index()]);
    assert!(response.ends_with("The answer is 72."), "{response}");
    let g = run.trajectories.group[t.index()];
    assert_eq!(run.groups.members(g).len(), 3);
    assert!(run.text(run.groups.prompt[g.index()]).starts_with("Natalia sold clips"));
    let finishes: std::collections::BTreeSet<&str> = run.trajectories.finish.iter().map(|&f| run.label(f)).collect();
    assert_eq!(finishes, ["length", "stop"].into_iter().collect());
    // GRPO credits each group of three.
    assert_eq!(vantage::credit::scheme("grpo").unwrap().supports(&run), vantage::credit::Support::Yes);
    // One data source's file alone: the step from its folder's name.
    let (one, report) = fixture("skyrl/run/dumped_evals/global_step_20_evals/aime.jsonl");
    assert!(report.warnings.is_empty());
    assert_eq!(counts(&one), (1, 3, 3));
    assert_eq!(one.groups.train_step, [Some(20)]);
    // A step folder alone: its data sources.
    let mut report = LoadReport::new("step");
    let step =
        vantage::source::path::open(&dir.join("global_step_20_evals"), &options, None, &mut report, None).unwrap();
    assert_eq!(counts(&step), (3, 9, 9));
}

/// A dumped eval with a score that is not a number loads with a located warning and no reward.
#[test]
fn a_skyrl_sample_without_a_numeric_score_is_a_located_warning() {
    let text = std::fs::read_to_string(fixture_path("skyrl/run/dumped_evals/global_step_10_evals/aime.jsonl")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut bad: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    bad["score"] = serde_json::json!("high");
    lines[1] = bad.to_string();
    lines.insert(2, "{\"input_prompt\": \"cut".to_owned());
    let joined = format!("{}\n", lines.join("\n"));
    let mut report = LoadReport::new("bad.jsonl");
    let run = load_bytes("bad.jsonl", joined.as_bytes(), &mut report).unwrap();
    let located: Vec<String> = report.warnings.iter().map(|w| w.located("bad.jsonl")).collect();
    assert_eq!(located.len(), 2, "{located:?}");
    assert!(located[0].starts_with("bad.jsonl:2: score"), "{located:?}");
    assert!(located[1].starts_with("bad.jsonl:3:"), "{located:?}");
    assert_eq!(run.trajectories.len(), 3);
    assert!(run.trajectories.reward[1].is_nan());
}

/// ROLL's rollout dumps (written by ROLL's own `write_to_json_process` and
/// `dump_rollout_trajectories`, `tests/fixtures/trainers/roll/make_run.py`): a dump directory is
/// one run by step; an RLVR batch's samples are grouped by prompt id, an agentic batch's
/// trajectories by environment group, each assistant turn a step with its own reward.
#[test]
fn roll_rollout_dumps_load_rlvr_samples_and_agentic_trajectories() {
    let options = vantage::source::OpenOptions::default();
    let mut report = LoadReport::new("rlvr");
    let run = vantage::source::path::open(&fixture_path("roll/run/rlvr"), &options, None, &mut report, None).unwrap();
    assert_eq!(run.meta.format, "ROLL rollout dump");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // Two steps × two prompts × four samples.
    assert_eq!(counts(&run), (4, 16, 16));
    assert_eq!(run.groups.train_step, [Some(0), Some(0), Some(1), Some(1)]);
    let g = run.group_by_key("step-1/gsm8k-17").unwrap();
    assert_eq!(run.groups.members(g).len(), 4);
    assert_eq!(run.label(run.groups.task[g.index()]), "gsm8k");
    assert_eq!(run.text(run.groups.gold[g.index()]), "72");
    assert!(run.text(run.groups.prompt[g.index()]).starts_with("Natalia sold 48 clips"));
    let t = run.trajectory_by_key("step-1/row-1").unwrap();
    assert_eq!(run.trajectories.reward[t.index()], 1.0);
    assert!(run.text(run.nodes.action[run.trajectories.path(t)[0].index()]).ends_with("The answer is 72."));
    let (agentic, report) = fixture("roll/run/agentic/rollout_dump_data.step_3.jsonl");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(counts(&agentic), (1, 2, 4));
    assert_eq!(agentic.group_key(vantage::model::GroupId::from_index(0)), "step-3/SearchQA_7_0_42");
    let t = agentic.trajectory_by_key("SearchQA_0_1_7_0_0_42_20261206_010203_000000").unwrap();
    let path = agentic.trajectories.path(t);
    assert_eq!(agentic.trajectories.reward[t.index()], 1.0);
    assert_eq!(agentic.label(agentic.trajectories.finish[t.index()]), "FINISH");
    assert_eq!(path.iter().map(|n| agentic.nodes.env_reward[n.index()]).collect::<Vec<_>>(), [0.0, 1.0]);
    assert!(agentic.text(agentic.nodes.action[path[0].index()]).starts_with("search("));
    assert!(agentic.text(agentic.nodes.observation[path[0].index()]).contains("France's capital is Paris."));
    assert_eq!(vantage::credit::scheme("step_reward").unwrap().supports(&agentic), vantage::credit::Support::Yes);
}

/// A ROLL batch longer than the head read to tell formats apart is told by its file's name; a
/// short score column is a located warning.
#[test]
fn a_roll_batch_longer_than_the_head_is_told_by_its_name_and_short_columns_are_warnings() {
    let text = std::fs::read_to_string(fixture_path("roll/run/rlvr/rollout_dump_data.step_0.jsonl")).unwrap();
    let mut batch: serde_json::Value = serde_json::from_str(&text).unwrap();
    let long = "x".repeat(5 << 20);
    batch["prompt"][0] = serde_json::json!(long);
    batch["scores"].as_array_mut().unwrap().pop();
    let bytes = format!("{batch}\n");
    let mut report = LoadReport::new("rollout_dump_data.step_0.jsonl");
    let run = load_bytes("dumps/rollout_dump_data.step_0.jsonl", bytes.as_bytes(), &mut report).unwrap();
    assert_eq!(run.meta.format, "ROLL rollout dump");
    assert_eq!(run.trajectories.len(), 8);
    assert!(run.trajectories.reward[7].is_nan());
    let located: Vec<String> = report.warnings.iter().map(|w| w.located("d")).collect();
    assert_eq!(located.len(), 1, "{located:?}");
    assert!(located[0].starts_with("d:1: scores") && located[0].contains("7 values for 8 responses"), "{located:?}");
    // Under another name, the same long line is not taken for a dump.
    assert!(load_bytes("other.jsonl", bytes.as_bytes(), &mut LoadReport::new("other.jsonl")).is_err());
}

/// open-instruct's saved rollouts (written by open-instruct's own `_save_rollouts` and
/// `save_rollout_metadata`, `tests/fixtures/trainers/open_instruct/make_run.py`): a save path of
/// one run's shards is one run; a prompt of a step is a group, each sample one step over its
/// response tokens with their logprobs; the trainer's advantage is what `logged` shows.
#[test]
fn open_instruct_rollout_shards_load_with_their_tokens_and_advantages() {
    let dir = fixture_path("open_instruct/run");
    let options = vantage::source::OpenOptions::default();
    let mut report = LoadReport::new("run");
    let run = vantage::source::path::open(&dir, &options, None, &mut report, None).unwrap();
    assert_eq!(run.meta.format, "open-instruct rollouts");
    // Two steps × two prompts × three samples.
    assert_eq!(counts(&run), (4, 12, 12));
    assert_eq!(run.groups.train_step, [Some(1), Some(1), Some(2), Some(2)]);
    let note = run.meta.notes.iter().find(|n| n.contains("skipped")).unwrap();
    assert!(note.contains("olmo_rlvr_demo_metadata.jsonl"), "{note}");
    // One sample's logprobs were cut short: a located warning, its tokens kept without them.
    let located: Vec<String> = report.warnings.iter().map(|w| w.located("f")).collect();
    assert_eq!(located.len(), 1, "{located:?}");
    assert!(
        located[0].contains("logprobs") && located[0].contains("8 log-probabilities for 10 response tokens"),
        "{located:?}"
    );
    let t = run.trajectory_by_key("step-1/sample-5").unwrap();
    let path = run.trajectories.path(t);
    assert!(run.text(run.nodes.action[path[0].index()]).starts_with("token ids (14): 27 2630 29 12 40"));
    assert_eq!(run.text(run.nodes.observation[path[0].index()]), "<output>Paris</output>");
    assert_eq!(run.trajectories.token_range(t).len(), 14);
    let logprob = run.tokens.logprob.as_ref().unwrap();
    assert_eq!(logprob[run.trajectories.token_range(t).start + 1], -0.06);
    assert_eq!(run.trajectories.components["tool_calls"][t.index()], 1.0);
    let g = run.trajectories.group[t.index()];
    assert_eq!(run.label(run.groups.task[g.index()]), "rlvr_qa");
    // The trainer's advantage, as it logged it.
    let logged = credit(&run, "logged", None, &[]);
    for t in run.trajectories.ids() {
        let want = run.trajectories.components["advantage"][t.index()];
        for p in run.trajectories.path_range(t) {
            assert!((logged[p] - want).abs() < 1e-6, "{}: {} vs {want}", run.trajectory_key(t), logged[p]);
        }
    }
    // One shard alone opens as the same run.
    let shard = fixture("open_instruct/run/olmo_rlvr_demo_rollouts_000000.jsonl").0;
    assert_eq!(counts(&shard), (4, 12, 12));
}

/// Token ids decode as the `tokenizers` library decodes them (`tests/golden/tokenizers`, made by
/// running the library: byte-level BPE, SentencePiece-style byte fallback, WordPiece).
#[test]
fn token_ids_decode_as_the_tokenizers_library_decodes_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/tokenizers");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("cases.json")).unwrap()).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    assert!(cases.len() >= 15);
    for case in cases {
        let file = case["tokenizer"].as_str().unwrap();
        let vocab = vantage::load::tokenizer::Vocab::from_json(&std::fs::read(dir.join(file)).unwrap()).unwrap();
        let ids: Vec<u64> = case["ids"].as_array().unwrap().iter().map(|i| i.as_u64().unwrap()).collect();
        assert_eq!(vocab.decode(&ids), case["decoded"].as_str().unwrap(), "{file}: {}", case["text"]);
    }
}

/// An open-instruct run with its `tokenizer.json` beside the rollouts reads as text.
#[test]
fn open_instruct_rollouts_read_as_text_with_the_tokenizer_beside_them() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/tokenizers");
    let cases: serde_json::Value = serde_json::from_slice(&std::fs::read(golden.join("cases.json")).unwrap()).unwrap();
    let case = &cases["cases"][1];
    let dir = std::env::temp_dir().join(format!("vantage-oi-tokenizer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(golden.join(case["tokenizer"].as_str().unwrap()), dir.join("tokenizer.json")).unwrap();
    let record = serde_json::json!({
        "step": 1, "sample_idx": 0, "prompt_idx": 0, "prompt_tokens": case["ids"], "response_tokens": case["ids"],
        "reward": 1.0, "advantage": 0.0, "finish_reason": "stop", "dataset": "demo", "ground_truth": null,
        "request_info": null, "logprobs": null
    });
    let shard = dir.join("demo_rollouts_000000.jsonl");
    std::fs::write(&shard, format!("{record}\n")).unwrap();
    let mut report = LoadReport::new("shard");
    let run =
        vantage::source::path::open(&shard, &vantage::source::OpenOptions::default(), None, &mut report, None).unwrap();
    let t = vantage::model::TrajectoryId::from_index(0);
    assert_eq!(run.text(run.nodes.action[run.trajectories.path(t)[0].index()]), case["decoded"].as_str().unwrap());
    assert!(run.meta.notes.iter().any(|n| n.contains("decoded with the tokenizer.json")), "{:?}", run.meta.notes);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// OpenPipe ART's trajectory Parquet (written by ART's own `write_trajectory_groups_parquet`,
/// `tests/fixtures/trainers/art/make_run.py`): each row a trajectory of its group at the file's
/// step, the chat's assistant turns its steps, the metrics and group metrics its components; read
/// by vantage's own Parquet reader (a struct's fields inside the `messages` list).
#[test]
fn art_trajectory_parquet_loads_its_groups_messages_and_metrics() {
    let (run, report) = fixture("art/run/trajectories/train/0003.parquet");
    assert_eq!(run.meta.format, "ART trajectory Parquet");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // Two scenarios × three trajectories, each a tool call and an answer.
    assert_eq!(counts(&run), (2, 6, 12));
    assert_eq!(run.groups.train_step, [Some(3), Some(3)]);
    assert_eq!(run.group_key(vantage::model::GroupId::from_index(1)), "train/step-3/group-1");
    let t = run.trajectory_by_key("train/step-3/group-0/row-0").unwrap();
    let path = run.trajectories.path(t);
    assert_eq!(kinds(&run)[path[0].index()], "tool_call");
    assert!(
        run.text(run.nodes.action[path[0].index()]).starts_with("search_inbox("),
        "{}",
        run.text(run.nodes.action[path[0].index()])
    );
    assert!(run.text(run.nodes.observation[path[0].index()]).contains("due on May 3"));
    assert_eq!(run.text(run.nodes.action[path[1].index()]), "It is due on May 3.");
    assert_eq!(run.trajectories.reward[t.index()], 1.0);
    assert_eq!(run.trajectories.components["judge_correct"][t.index()], 1.0);
    assert_eq!(run.trajectories.components["group_difficulty"][t.index()], 1.5);
    let g = run.trajectories.group[t.index()];
    assert!(run.text(run.groups.prompt[g.index()]).contains("When is invoice 1 due?"));
    // A split's folder is one run across its steps.
    let options = vantage::source::OpenOptions::default();
    let mut report = LoadReport::new("train");
    let train =
        vantage::source::path::open(&fixture_path("art/run/trajectories/train"), &options, None, &mut report, None)
            .unwrap();
    assert_eq!(train.meta.format, "ART trajectory Parquet");
    assert_eq!(counts(&train), (4, 12, 24));
    assert_eq!(train.groups.train_step, [Some(3), Some(3), Some(4), Some(4)]);
    assert!(train.trajectory_by_key("train/step-4/group-1/row-5").is_some());
    // The validation split keeps its name.
    let (val, _) = fixture("art/run/trajectories/val/0004.parquet");
    assert_eq!(val.group_key(vantage::model::GroupId::from_index(0)), "val/step-4/group-0");
    assert_eq!(counts(&val), (2, 6, 12));
}

/// A tinker-cookbook summaries file with broken lines: each is a located warning naming its line
/// and field, and the good lines load.
#[test]
fn a_broken_tinker_summary_line_is_a_located_warning_and_the_rest_loads() {
    let text =
        std::fs::read_to_string(fixture_path("tinker/run/iteration_000000/train_rollout_summaries.jsonl")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut bad: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    bad["steps"] = serde_json::json!("not a list");
    lines[1] = bad.to_string();
    let mut empty: serde_json::Value = serde_json::from_str(&lines[2]).unwrap();
    empty["steps"] = serde_json::json!([]);
    lines[2] = empty.to_string();
    lines.insert(3, "{\"schema_version\": 1, \"iteration\": 0".to_owned());
    let joined = format!("{}\n", lines.join("\n"));
    let mut report = LoadReport::new("broken.jsonl");
    let run = load_bytes("broken.jsonl", joined.as_bytes(), &mut report).unwrap();
    let located: Vec<String> = report.warnings.iter().map(|w| w.located("broken.jsonl")).collect();
    assert_eq!(located.len(), 3, "{located:?}");
    assert!(located[0].starts_with("broken.jsonl:2: steps"), "{located:?}");
    assert!(located[1].starts_with("broken.jsonl:3: steps") && located[1].contains("no transition"), "{located:?}");
    assert!(located[2].starts_with("broken.jsonl:4:"), "{located:?}");
    assert_eq!(run.trajectories.len(), 8 - 2);
}

#[test]
fn otel_traces_with_rl_spans_are_samples_grouped_by_task_within_each_loop() {
    let (run, report) = fixture("otel/traces/traces.jsonl");
    assert_eq!(run.meta.format, "OpenTelemetry trace (rl.* spans)");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // Two rl.loop iterations × two tasks × four rl.sample spans; 46 model calls.
    assert_eq!(counts(&run), (4, 16, 46));
    assert_eq!(run.groups.train_step, [Some(0), Some(0), Some(1), Some(1)]);
    let note = run.meta.notes.iter().find(|n| n.contains("left out")).unwrap();
    assert!(note.contains("pipeline_step ×2") && note.contains("generate ×2"), "{note}");
    assert!(run.meta.notes.iter().any(|n| n.contains("rl.run.id = exp_search_001")), "{:?}", run.meta.notes);
    // The first sample: one search and the answer; the tool's result is the search step's observation.
    let t = run.trajectory_by_key("iteration-0/hotpot-17/9531985d5d9dc9f8").unwrap();
    assert_eq!((run.trajectories.reward[t.index()], run.trajectories.success[t.index()]), (1.0, Some(true)));
    let path = run.trajectories.path(t);
    assert_eq!(path.len(), 2);
    let search = path[0].index();
    assert!(run.text(run.nodes.thought[search]).starts_with("I should search for"));
    assert!(run.text(run.nodes.action[search]).starts_with("search({\"query\":"));
    assert_eq!(run.text(run.nodes.observation[search]), "Result 0: Seine is mentioned.\nSee also: line two.");
    assert_eq!(run.text(run.nodes.action[path[1].index()]), "The answer is Seine.");
    let g = run.trajectories.group[t.index()];
    assert_eq!(
        run.text(run.groups.prompt[g.index()]),
        "Which river flows through the city where the Eiffel Tower stands?"
    );
    assert_eq!(run.label(run.groups.task[g.index()]), "search_qa");
    let finishes: std::collections::BTreeMap<&str, usize> =
        run.trajectories.finish.iter().fold(Default::default(), |mut m, &f| {
            *m.entry(run.label(f)).or_default() += 1;
            m
        });
    assert_eq!(finishes, [("completed", 12), ("max_turns", 4)].into_iter().collect());
    assert_eq!(vantage::credit::scheme("grpo").unwrap().supports(&run), vantage::credit::Support::Yes);
    // The export lines in another order (a batch's children come before their parents anyway):
    // the same run.
    let text = std::fs::read_to_string(fixture_path("otel/traces/traces.jsonl")).unwrap();
    let reversed: Vec<&str> = text.lines().rev().collect();
    let mut report = LoadReport::new("reversed.jsonl");
    let again = load_bytes("reversed.jsonl", reversed.join("\n").as_bytes(), &mut report).unwrap();
    assert_eq!(
        vantage::load::formats::vantage_jsonl::write::to_jsonl(&again),
        vantage::load::formats::vantage_jsonl::write::to_jsonl(&run)
    );
}

#[test]
fn otel_traces_a_broken_line_is_located_and_traces_without_rl_spans_say_what_they_hold() {
    let text = std::fs::read_to_string(fixture_path("otel/traces/traces.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let broken = lines[3].replacen("\"spans\":[", "\"spans\":{", 1);
    lines[3] = &broken;
    let mut report = LoadReport::new("broken.jsonl");
    let run = load_bytes("broken.jsonl", lines.join("\n").as_bytes(), &mut report).unwrap();
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert_eq!(report.warnings[0].line, 4);
    assert!(run.trajectories.len() < 16 && !run.trajectories.is_empty());
    // A span without an id: that span is left out with a located warning, its line's others load.
    let mut lines: Vec<&str> = text.lines().collect();
    let no_id = lines[3].replacen("\"spanId\":", "\"spanIdGone\":", 1);
    lines[3] = &no_id;
    let mut report = LoadReport::new("no_id.jsonl");
    load_bytes("no_id.jsonl", lines.join("\n").as_bytes(), &mut report).unwrap();
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert_eq!((report.warnings[0].line, report.warnings[0].field.as_str()), (4, "spanId"));
    // ROLL's own spans alone (system timing, no rl.* conventions): nothing to load, and why.
    let system = r#"{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"roll"},"spans":[{"traceId":"ab","spanId":"01","name":"pipeline_step","kind":1,"startTimeUnixNano":"1"},{"traceId":"ab","spanId":"02","parentSpanId":"01","name":"generate","kind":1,"startTimeUnixNano":"2"}]}]}]}"#;
    let err = load_bytes("traces.jsonl", system.as_bytes(), &mut LoadReport::new("traces.jsonl")).unwrap_err();
    let said = err.to_string();
    assert!(said.contains("none named rl.sample") && said.contains("generate, pipeline_step"), "{said}");
}

#[test]
fn a_trace_file_and_its_rotations_are_one_run() {
    // ROLL's receiver starts traces.1.jsonl after 500 export lines: a sample's spans and its
    // rl.loop may be in different files; the folder is read as one log, in rotation order.
    let text = std::fs::read_to_string(fixture_path("otel/traces/traces.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let dir = std::env::temp_dir().join(format!("vantage-otel-rotated-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |part: &[&str]| format!("{}\n", part.join("\n"));
    std::fs::write(dir.join("traces.jsonl"), file(&lines[..3])).unwrap();
    std::fs::write(dir.join("traces.1.jsonl"), file(&lines[3..6])).unwrap();
    std::fs::write(dir.join("traces.2.jsonl"), file(&lines[6..])).unwrap();
    assert!(!vantage::source::folder::is_plain(&dir), "one path, one run");
    let run = vantage::source::path::load_path(&dir, None, &mut LoadReport::default()).unwrap();
    let (whole, _) = fixture("otel/traces/traces.jsonl");
    assert_eq!(counts(&run), counts(&whole));
    assert_eq!(run.groups.train_step, whole.groups.train_step);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn art_yaml_logs_from_before_its_parquet_load_as_the_same_run() {
    // The same agent logged by ART's older YAML serialiser and by its Parquet writer: the same
    // groups, trajectories, rewards and step texts (the YAML has no group metrics).
    let open = |path: &str| {
        let options = vantage::source::OpenOptions::default();
        vantage::source::path::open(&fixture_path(path), &options, None, &mut LoadReport::new("x"), None).unwrap()
    };
    let yaml = open("art/yaml_run/trajectories/train");
    let parquet = open("art/run/trajectories/train");
    assert_eq!(yaml.meta.format, "ART trajectory YAML");
    assert_eq!(counts(&yaml), (4, 12, 24));
    assert_eq!(counts(&yaml), counts(&parquet));
    assert_eq!(yaml.groups.train_step, parquet.groups.train_step);
    for t in parquet.trajectories.ids() {
        let key = parquet.trajectory_key(t);
        let y = yaml.trajectory_by_key(key).unwrap_or_else(|| panic!("{key}"));
        assert_eq!(yaml.trajectories.reward[y.index()], parquet.trajectories.reward[t.index()], "{key}");
        let texts = |run: &Run, t: vantage::model::TrajectoryId| -> Vec<String> {
            let n = &run.nodes;
            run.trajectories
                .path(t)
                .iter()
                .flat_map(|s| [n.thought[s.index()], n.action[s.index()], n.observation[s.index()]])
                .map(|id| run.text(id).into_owned())
                .collect()
        };
        assert_eq!(texts(&yaml, y), texts(&parquet, t), "{key}");
        assert_eq!(
            yaml.trajectories.components["judge_correct"][y.index()],
            parquet.trajectories.components["judge_correct"][t.index()]
        );
    }
    let g = yaml.trajectories.group[0];
    assert_eq!(yaml.text(yaml.groups.prompt[g.index()]), parquet.text(parquet.groups.prompt[g.index()]));
    // A YAML file alone, and one that is not a list of trajectory groups.
    let (one, _) = fixture("art/yaml_run/trajectories/val/0004.yaml");
    assert_eq!((counts(&one), one.groups.train_step[0]), ((2, 6, 12), Some(4)));
    let err = load_bytes("0001.yaml", b"- just: a list\n", &mut LoadReport::new("0001.yaml")).unwrap_err();
    assert!(err.to_string().contains("not a list of trajectory groups"), "{err}");
}

#[test]
fn a_vf_eval_run_is_named_by_its_environment_model_and_folder_not_results_jsonl() {
    let path = fixture_path("vf_eval/current/results.jsonl");
    let run = vantage::source::path::load_path(&path, None, &mut LoadReport::default()).unwrap();
    // metadata.json beside it: env_id "weather", model "m"; the run's folder is `current`.
    assert_eq!(run.meta.name, "weather · m · current");
}

/// An agent's traces under the OpenTelemetry `GenAI` conventions, written by the OpenTelemetry SDK
/// (`tests/fixtures/trainers/otel/make_genai.py`) in the two shapes no reader took (#66): the
/// console exporter's spans and OTLP JSON export requests pretty-printed one after another. Each
/// `invoke_agent` span is a trajectory, grouped by `gen_ai.conversation.id`; model calls are steps
/// with their tool calls, a tool's result is their observation, a failed tool call is a failed
/// step with its message, an evaluation score is the outcome.
#[test]
fn otel_genai_traces_load_from_the_console_exporter_and_pretty_printed_otlp() {
    let mut runs = Vec::new();
    for file in ["otel/genai/console.json", "otel/genai/otlp.json"] {
        let (run, report) = fixture(file);
        assert_eq!(run.meta.format, "OpenTelemetry GenAI trace", "{file}");
        assert!(report.warnings.is_empty(), "{file}: {:?}", report.warnings);
        assert_eq!(counts(&run), (2, 3, 8), "{file}");
        let groups: Vec<&str> = run.groups.ids().map(|g| run.group_key(g)).collect();
        assert_eq!(groups, ["conv-1", "conv-2"], "{file}");
        assert!(
            run.meta.notes.iter().any(|n| n == "models: gpt-4o (7 calls); tokens: 840 in, 210 out"),
            "{:?}",
            run.meta.notes
        );
        // The first task: three model calls, the tool results their observations, scored 1.
        let first = run.trajectories.ids().next().unwrap();
        assert_eq!(run.trajectories.reward[first.index()], 1.0);
        let path = run.trajectories.path(first);
        assert_eq!(path.len(), 3);
        let read = path[0].index();
        assert_eq!(run.text(run.nodes.thought[read]), "I will read the failing test.");
        assert_eq!(run.text(run.nodes.action[read]), "bash({\"cmd\": \"pytest -x tests/test_dates.py\"})");
        assert_eq!(run.text(run.nodes.observation[read]), "1 failed: test_leap_year");
        let g = run.trajectories.group[first.index()];
        assert_eq!(run.text(run.groups.prompt[g.index()]), "Fix the failing date test in dates.py.");
        assert_eq!(run.label(run.groups.task[g.index()]), "fixer");
        // The lint task: its failed tool call is a step of kind `error` with the message; no score.
        let lint =
            run.trajectories.ids().find(|&t| run.group_key(run.trajectories.group[t.index()]) == "conv-2").unwrap();
        assert!(run.trajectories.reward[lint.index()].is_nan());
        let kinds: Vec<&str> =
            run.trajectories.path(lint).iter().map(|n| run.label(run.nodes.kind[n.index()])).collect();
        assert_eq!(kinds, ["chat", "error", "chat"]);
        let failed = run.trajectories.path(lint)[1].index();
        assert_eq!(run.text(run.nodes.observation[failed]), "error: ruff: command not found");
        runs.push(vantage::load::formats::vantage_jsonl::write::to_jsonl(&run));
    }
    // Both shapes are the same spans: the same run.
    assert_eq!(runs[0], runs[1]);
    // The console exporter's spans separated by blank lines, or one to a line (a formatter
    // without indentation): the same run too.
    let console = std::fs::read_to_string(fixture_path("otel/genai/console.json")).unwrap();
    let spans: Vec<serde_json::Value> =
        serde_json::Deserializer::from_str(&console).into_iter::<serde_json::Value>().map(Result::unwrap).collect();
    let blank = spans.iter().map(|v| serde_json::to_string_pretty(v).unwrap()).collect::<Vec<_>>().join("\n\n");
    let compact = spans.iter().map(serde_json::Value::to_string).collect::<Vec<_>>().join("\n");
    for (name, text) in [("blank.json", blank), ("compact.jsonl", compact)] {
        let mut report = LoadReport::new(name);
        let run = load_bytes(name, text.as_bytes(), &mut report).unwrap();
        assert_eq!(vantage::load::formats::vantage_jsonl::write::to_jsonl(&run), runs[0], "{name}");
    }
    // A file cut in its third export request: the two before it load, one warning located at the
    // line the broken request starts on.
    let otlp = std::fs::read_to_string(fixture_path("otel/genai/otlp.json")).unwrap();
    let third = otlp.match_indices("\n{").nth(1).unwrap().0 + 1;
    let start = otlp[..third].matches('\n').count() as u64 + 1;
    let mut report = LoadReport::new("cut.json");
    let run = load_bytes("cut.json", &otlp.as_bytes()[..third + 500], &mut report).unwrap();
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert_eq!(report.warnings[0].line, start);
    assert!(!run.trajectories.is_empty());
    // Without any evaluation score, the notes say the run has no outcome.
    let text = std::fs::read_to_string(fixture_path("otel/genai/console.json")).unwrap();
    let unscored = text.replace("gen_ai.evaluation.score.value", "gen_ai.evaluation.other");
    let mut report = LoadReport::new("unscored.json");
    let run = load_bytes("unscored.json", unscored.as_bytes(), &mut report).unwrap();
    assert!(
        run.meta.notes.iter().any(|n| n.starts_with("no outcome: no span carries an evaluation score")),
        "{:?}",
        run.meta.notes
    );
}

/// The kinds of each trajectory's steps, in order.
fn step_kinds(run: &vantage::model::Run) -> Vec<Vec<&str>> {
    run.trajectories
        .ids()
        .map(|t| run.trajectories.path(t).iter().map(|n| run.label(run.nodes.kind[n.index()])).collect())
        .collect()
}

/// The Microsoft Agent Framework's own telemetry (`make_agent_framework.py`: the framework's
/// `Agent`, `@tool` and telemetry layers, exported by the SDK's console exporter): each
/// `invoke_agent` span, one per `run`, is a trajectory of its own trace; a tool's result is the
/// observation of the call that asked for it; the tool that raised is a failed step with the
/// exception; the invocation's own token usage (the sum of its calls') is not counted twice.
#[test]
fn otel_genai_traces_of_the_microsoft_agent_framework_load() {
    let (run, report) = fixture("otel/agent_framework/console.json");
    assert_eq!(run.meta.format, "OpenTelemetry GenAI trace");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(counts(&run), (3, 3, 6));
    assert_eq!(step_kinds(&run), [vec!["chat", "chat"], vec!["chat"], vec!["chat", "error", "chat"]]);
    assert!(
        run.meta.notes.iter().any(|n| n == "models: qwen3-8b (5 calls); tokens: 1110 in, 83 out"),
        "{:?}",
        run.meta.notes
    );
    assert!(run.meta.notes.iter().any(|n| n.starts_with("no outcome: no span carries an evaluation score")));
    let first = run.trajectories.ids().next().unwrap();
    let read = run.trajectories.path(first)[0].index();
    assert_eq!(run.text(run.nodes.action[read]), "read_file({\"path\":\"calc.py\"})");
    assert_eq!(run.text(run.nodes.observation[read]), "def add(a, b):\n    return a - b\n");
    let g = run.trajectories.group[first.index()];
    assert_eq!(run.text(run.groups.prompt[g.index()]), "Why does add(2, 2) give 0?");
    assert_eq!(run.label(run.groups.task[g.index()]), "fixer");
    let last = run.trajectories.ids().last().unwrap();
    let failed = run.trajectories.path(last)[1].index();
    assert_eq!(run.text(run.nodes.action[failed]), "read_file({\"path\": \"missing.py\"})");
    assert_eq!(run.text(run.nodes.observation[failed]), "error: FileNotFoundError('no such file: missing.py')");
}

/// The OpenAI Agents SDK under its OpenTelemetry instrumentation (`make_openai_agents.py`: the
/// SDK's `Runner` and Chat Completions model over a recorded HTTP transport), as the Collector's
/// file exporter writes it in OTLP JSON lines, in OTLP protobuf, and rotated into backups: the
/// same run each time. The workflow span is the trajectory and names no agent (the agent below it
/// does); the instrumentation writes a tool-calling answer as text, so the tool span's call is the
/// step's action and the text its thought; the agent span's request model is not a model call.
#[test]
fn otel_genai_traces_of_the_openai_agents_sdk_load_from_json_protobuf_and_rotations() {
    let mut written = Vec::new();
    for file in ["otel/openai_agents/traces.jsonl", "otel/openai_agents/traces.pb", "otel/openai_agents/rotated"] {
        let path = fixture_path(file);
        let mut report = LoadReport::new(file);
        let run = vantage::source::path::load_path(&path, None, &mut report).unwrap();
        assert_eq!(run.meta.format, "OpenTelemetry GenAI trace", "{file}");
        assert!(report.warnings.is_empty(), "{file}: {:?}", report.warnings);
        assert_eq!(counts(&run), (2, 2, 5), "{file}");
        assert_eq!(step_kinds(&run), [vec!["chat", "chat"], vec!["chat", "error", "chat"]], "{file}");
        assert!(
            run.meta.notes.iter().any(|n| n == "models: gpt-4o (4 calls); tokens: 940 in, 116 out"),
            "{:?}",
            run.meta.notes
        );
        let first = run.trajectories.ids().next().unwrap();
        let g = run.trajectories.group[first.index()];
        assert_eq!(run.label(run.groups.task[g.index()]), "fixer", "{file}");
        let read = run.trajectories.path(first)[0].index();
        assert_eq!(run.text(run.nodes.action[read]), "read_file({\"path\": \"calc.py\"})", "{file}");
        assert!(run.text(run.nodes.thought[read]).contains("'tool_calls'"), "{file}");
        assert_eq!(run.text(run.nodes.observation[read]), "def add(a, b):\n    return a - b\n", "{file}");
        let second = run.trajectories.ids().nth(1).unwrap();
        let failed = run.trajectories.path(second)[1].index();
        assert!(run.text(run.nodes.observation[failed]).starts_with("error: Error running tool (non-fatal)"), "{file}");
        written.push(vantage::load::formats::vantage_jsonl::write::to_jsonl(&run));
    }
    assert!(written.windows(2).all(|w| w[0] == w[1]), "JSON, protobuf and rotations read differently");
    // A protobuf file cut inside its last request (still being written): the requests before it
    // load, one warning says the last is cut short.
    let bytes = std::fs::read(fixture_path("otel/openai_agents/traces.pb")).unwrap();
    let mut report = LoadReport::new("cut.pb");
    let run = load_bytes("cut.pb", &bytes[..bytes.len() - 100], &mut report).unwrap();
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(report.warnings[0].reason.contains("cut short"), "{:?}", report.warnings);
    assert!(!run.trajectories.is_empty());
    // The same requests with a varint before each (the OTLP file exporter specification's
    // delimited writing) read the same.
    let mut varint = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let mut n = len;
        while n >= 0x80 {
            varint.push((n as u8) | 0x80);
            n >>= 7;
        }
        varint.push(n as u8);
        varint.extend_from_slice(&bytes[at + 4..at + 4 + len]);
        at += 4 + len;
    }
    let run = load_bytes("delimited.pb", &varint, &mut LoadReport::new("delimited.pb")).unwrap();
    assert_eq!(vantage::load::formats::vantage_jsonl::write::to_jsonl(&run), written[0]);
}

/// A folder of session files opened as one run, with its report.
fn folder_run(path: &str) -> (Run, LoadReport) {
    let path = fixture_path(path);
    let mut report = LoadReport::new(&path.display().to_string());
    let run = vantage::source::path::load_path(&path, None, &mut report).unwrap();
    (run, report)
}

/// The trajectory whose steps' kinds are `kinds`.
fn trajectory_with(run: &Run, kinds: &[&str]) -> vantage::model::TrajectoryId {
    let found = run.trajectories.ids().find(|&t| {
        let path = run.trajectories.path(t);
        path.len() == kinds.len() && path.iter().zip(kinds).all(|(n, k)| run.label(run.nodes.kind[n.index()]) == *k)
    });
    found.unwrap_or_else(|| panic!("no trajectory of kinds {kinds:?}: {:?}", step_kinds(run)))
}

/// Claude Code's own session files (`tests/fixtures/trainers/claude_code/make_sessions.py`: Claude
/// Code 2.1.332 in print mode against a scripted Messages API, running its tools itself): the
/// project folder is one run, each session a trajectory, the two sessions of the same prompt one
/// group. A tool call is a step named after the tool, its result the observation, a result marked
/// `is_error` an `error` step; the text before a call its thought, the last answer a `message`
/// step. A message streamed one block per line is one model call, its usage counted once.
#[test]
fn claude_code_sessions_are_trajectories_and_a_project_folder_one_run() {
    let (run, report) = folder_run("claude_code/projects/-tmp-ccwork");
    assert_eq!(run.meta.format, "Claude Code sessions");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(counts(&run), (2, 3, 9));
    assert!(
        run.meta.notes.iter().any(|n| n == "models: claude-sonnet-4-5-20250929 (9 calls); tokens: 12850 in, 360 out"),
        "{:?}",
        run.meta.notes
    );
    assert!(run.meta.notes.iter().any(|n| n.starts_with("no outcome: a session records no reward")));
    let long = trajectory_with(&run, &["error", "Read", "Edit", "error", "message"]);
    let path = run.trajectories.path(long);
    let first = path[0].index();
    assert_eq!(run.text(run.nodes.thought[first]), "I'll run the tests first.");
    assert_eq!(
        run.text(run.nodes.action[first]),
        "Bash({\"command\":\"python3 test_calc.py\",\"description\":\"Run the tests\"})"
    );
    assert!(run.text(run.nodes.observation[first]).contains("AssertionError: 0"));
    assert_eq!(run.text(run.nodes.observation[path[1].index()]), "1\tdef add(a, b):\n2\t    return a - b\n3\t");
    assert!(run.text(run.nodes.observation[path[3].index()]).contains("cat: NOTES.md: No such file or directory"));
    assert_eq!(run.text(run.nodes.action[path[4].index()]), "Fixed: add() subtracted; it now returns a + b.");
    let g = run.trajectories.group[long.index()];
    assert_eq!(run.text(run.groups.prompt[g.index()]), "The test in test_calc.py fails. Fix calc.py.");
    let short = trajectory_with(&run, &["Edit", "message"]);
    assert_eq!(run.trajectories.group[short.index()], g, "the same prompt is one group");
    let ask = trajectory_with(&run, &["Read", "message"]);
    assert_ne!(run.trajectories.group[ask.index()], g);
    // One session file alone is a run of one trajectory.
    let one =
        std::fs::read_dir(fixture_path("claude_code/projects/-tmp-ccwork")).unwrap().next().unwrap().unwrap().path();
    let mut report = LoadReport::new("one.jsonl");
    let run = load_bytes("one.jsonl", &std::fs::read(one).unwrap(), &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 1);
    // A broken line is a located warning; the rest loads.
    let text = std::fs::read_to_string(
        fixture_path("claude_code/projects/-tmp-ccwork").join(
            std::fs::read_dir(fixture_path("claude_code/projects/-tmp-ccwork"))
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .file_name(),
        ),
    )
    .unwrap();
    let broken = text.replacen("\n{", "\n{broken\n{", 1);
    let mut report = LoadReport::new("broken.jsonl");
    let run = load_bytes("broken.jsonl", broken.as_bytes(), &mut report).unwrap();
    assert_eq!(run.trajectories.len(), 1);
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert_eq!(report.warnings[0].line, 2);
}

/// Codex CLI's own rollouts (`tests/fixtures/trainers/codex/make_rollouts.py`: Codex 0.171.0
/// `exec` against a scripted Responses API, running the commands itself), filed by date under
/// `sessions/`: the folder is one run, each rollout a trajectory, the two of the same prompt one
/// group; the context Codex injects is not the prompt; a command that exited with a code other
/// than 0 is an `error` step whose observation is its output; the last token totals count.
#[test]
fn codex_rollouts_are_trajectories_and_the_sessions_folder_one_run() {
    let (run, report) = folder_run("codex/sessions");
    assert_eq!(run.meta.format, "Codex CLI rollouts");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(counts(&run), (2, 3, 7));
    assert!(
        run.meta.notes.iter().any(|n| n == "models: gpt-5-codex (7 calls); tokens: 15200 in, 166 out"),
        "{:?}",
        run.meta.notes
    );
    let long = trajectory_with(&run, &["error", "exec_command", "error", "message"]);
    let path = run.trajectories.path(long);
    let first = path[0].index();
    assert_eq!(run.text(run.nodes.thought[first]), "Running the test first.");
    assert_eq!(run.text(run.nodes.action[first]), "exec_command({\"cmd\": \"python3 test_calc.py\"})");
    assert!(run.text(run.nodes.observation[first]).ends_with("AssertionError: 0\n"));
    assert_eq!(run.text(run.nodes.observation[path[1].index()]), "ok\n");
    let g = run.trajectories.group[long.index()];
    assert_eq!(run.text(run.groups.prompt[g.index()]), "The test in test_calc.py fails. Fix calc.py.");
    assert_eq!(run.trajectories.group[trajectory_with(&run, &["message"]).index()], g);
    assert_ne!(run.trajectories.group[trajectory_with(&run, &["exec_command", "message"]).index()], g);
    // A day's folder, and one rollout alone, read the same way.
    let (day, _) = folder_run("codex/sessions/2026/12/07");
    assert_eq!(counts(&day), (2, 3, 7));
}

/// A Harbor job with a trial its `nop` agent ran (`atif/make_job_nop.py`: no `agent/` folder, the
/// verifier's files written by pytest and pytest-json-ctrf): the trial is a rollout of no step
/// with its outcome, in its task's group, so GRPO's baseline counts it and forensics names it; the
/// verifier files are kept with each trial and the CTRF counts are its labels; the files are not
/// named as skipped. A job of nop trials alone opens too, and a rollout of no step survives
/// vantage JSONL and Parquet v2.
#[test]
fn a_harbor_trial_without_an_agent_folder_is_a_rollout_of_no_step_with_its_outcome() {
    let (run, report) = folder_run("atif/job_nop");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(counts(&run), (1, 2, 2));
    let nop = run.trajectories.ids().find(|&t| run.trajectory_key(t) == "hello-world__Nop4Kd2").unwrap();
    assert_eq!(run.trajectories.num_steps(nop), 0);
    assert_eq!(run.trajectories.reward[nop.index()], 0.0);
    assert_eq!(run.trajectories.success[nop.index()], Some(false));
    let g = run.trajectories.group[nop.index()];
    assert_eq!(run.group_key(g), "hello-world");
    assert_eq!(run.groups.members(g).len(), 2, "the nop trial is in its task's group");
    assert!(
        run.meta.notes.iter().any(|n| n.starts_with("1 trial without a trajectory (no agent/ folder")),
        "{:?}",
        run.meta.notes
    );
    assert!(
        run.meta.notes.iter().all(|n| !n.contains("verifier/")),
        "verifier files named as skipped: {:?}",
        run.meta.notes
    );
    let files = &run.meta.metadata[vantage::load::formats::outcomes::FILES_KEY];
    assert_eq!(files["hello-world__Nop4Kd2"][0], "verifier/ctrf.json: 0 of 2 tests passed, 2 failed");
    assert_eq!(files["hello-world__Xk2Lm9Q"][0], "verifier/ctrf.json: 2 of 2 tests passed, 0 failed");
    assert!(files["hello-world__Xk2Lm9Q"][2].as_str().unwrap().starts_with("verifier/test-stdout.txt ("));
    let failed = run
        .meta
        .imported_labels
        .iter()
        .find(|l| l.name == "tests.failed" && l.target.trajectory == "hello-world__Nop4Kd2")
        .unwrap();
    assert_eq!(failed.value, vantage::model::labels::Value::Number(2.0));
    // GRPO's baseline counts the nop trial: the other trial's steps get (1 - 0.5) / std.
    let credit = credit(&run, "grpo", None, &[]);
    let done = run.trajectories.ids().find(|&t| t != nop).unwrap();
    let first = run.trajectories.path_range(done).start;
    assert!((credit[first] - 0.707_105_7).abs() < 1e-4, "{}", credit[first]);
    // Vantage JSONL and Parquet v2 keep the rollout of no step.
    let jsonl = vantage::load::formats::vantage_jsonl::write::to_jsonl(&run);
    let again = load_bytes("nop.jsonl", jsonl.as_bytes(), &mut LoadReport::new("nop.jsonl")).unwrap();
    assert_eq!(counts(&again), (1, 2, 2));
    assert_eq!(again.trajectories.ids().filter(|&t| again.trajectories.num_steps(t) == 0).count(), 1);
    // A job of the nop trial alone: one rollout of no step.
    let dir = std::env::temp_dir().join(format!("vantage-nop-only-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    copy_dir(&fixture_path("atif/job_nop/hello-world__Nop4Kd2"), &dir.join("hello-world__Nop4Kd2"));
    std::fs::copy(fixture_path("atif/job_nop/result.json"), dir.join("result.json")).unwrap();
    let mut report = LoadReport::new("nop-only");
    let only = vantage::source::path::load_path(&dir, None, &mut report).unwrap();
    assert_eq!(counts(&only), (1, 1, 0));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// A golden case's episodes as verifiers episode lines (one user and one assistant message per
/// trace; each trace's `info` as prime-rl wrote it), keyed `episode/trace` as the importer keys them.
fn episode_lines(episodes: &[serde_json::Value]) -> String {
    let mut log = String::new();
    for e in episodes {
        let group = e["group"].as_str().unwrap();
        let traces: Vec<serde_json::Value> = e["traces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                serde_json::json!({
                    "id": t["id"], "agent": {"name": t["agent"], "trainable": true},
                    "rewards": {"r": {"score": t["reward"], "weight": 1.0}},
                    "nodes": [{"message": {"role": "user", "content": "q"}}, {"parent": 0, "message": {"role": "assistant", "content": "a"}}],
                    "info": t.get("info").cloned().unwrap_or_else(|| serde_json::json!({})),
                })
            })
            .collect();
        let line = serde_json::json!({
            "id": e["id"], "group": {"id": group}, "task": {"key": group.split("-s").next().unwrap()},
            "run": {"type": "train", "work": {"type": "train", "step": e["step"]}}, "ok": true, "traces": traces,
        });
        log.push_str(&line.to_string());
        log.push('\n');
    }
    log
}

/// prime-rl's group algorithms over episodes (`tests/golden/prime_grouped`, made by running
/// prime-rl's own code in plain Python): `hierarchical_grpo` (`HierarchicalGRPOAlgorithm`, solvers
/// compared within their episode, proposers and judges across the group), `ngu`
/// (`NGUAlgorithm.score_group`, and `score_history` over a prompt's training steps) and `gar`
/// (`GARAlgorithm.apply` on a grader's verdict, read back from the `info.gar` records prime-rl
/// logs) equal vantage's schemes on the same episodes loaded as verifiers lines: `ngu` to the bit
/// (binary rewards), the others within 1e-6 (prime-rl's Python floats keep the log's doubles,
/// vantage the float32 of each reward).
#[test]
fn prime_rls_group_algorithms_over_episodes_are_reproduced() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/prime_grouped/cases.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let (mut compared, mut failures) = (std::collections::BTreeMap::new(), Vec::new());
    for case in golden["cases"].as_array().unwrap() {
        let (scheme, name) = (case["scheme"].as_str().unwrap(), case["name"].as_str().unwrap());
        let episodes = case["episodes"].as_array().unwrap();
        let log = episode_lines(episodes);
        let run = load_bytes("episodes.jsonl", log.as_bytes(), &mut LoadReport::new(name)).unwrap();
        let set: Vec<(&str, &str)> =
            case["set"].as_object().unwrap().iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap())).collect();
        let got = credit(&run, scheme, None, &set);
        for e in episodes {
            for t in e["traces"].as_array().unwrap() {
                let key = format!("{}/{}", e["id"].as_str().unwrap(), t["id"].as_str().unwrap());
                let trajectory = run.trajectory_by_key(&key).unwrap_or_else(|| panic!("{name}: {key} not loaded"));
                let g = got[run.trajectories.path_range(trajectory).start];
                let w = case["advantages"][t["id"].as_str().unwrap()].as_f64().unwrap() as f32;
                if !agrees(g, w, scheme == "ngu") {
                    failures.push(format!("{scheme} {name} {key}: {g} vs {w}"));
                }
                *compared.entry(scheme).or_insert(0) += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(compared.len(), 3, "{compared:?}");
    assert!(compared.values().all(|&n| n >= 60), "{compared:?}");
}

/// `gar` on groups without a verdict (a grader's fallback, or no GAR record at all) is prime-rl's
/// GRPO, the `grpo` preset `prime_rl` (checked against prime-rl's own GRPO in
/// `tests/golden/trainers_2026`); taking a confirmed hack's label off changes its credit to what an
/// honest pass of its rank gets; `ngu` refuses a run with a reward that is not 0 or 1, counting them.
#[test]
fn gar_falls_back_to_prime_rls_grpo_follows_its_labels_and_ngu_names_a_shaped_reward() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/prime_grouped/cases.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let case = golden["cases"].as_array().unwrap().iter().find(|c| c["name"] == "hack_and_ranking").unwrap();
    let mut episodes = case["episodes"].as_array().unwrap().clone();
    // Without the records: every group is GRPO's.
    let mut bare = episodes.clone();
    for e in &mut bare {
        for t in e["traces"].as_array_mut().unwrap() {
            t.as_object_mut().unwrap().remove("info");
        }
    }
    let run = load_bytes("bare.jsonl", episode_lines(&bare).as_bytes(), &mut LoadReport::new("bare")).unwrap();
    let grpo = credit(&run, "grpo", Some("prime_rl"), &[]);
    assert_eq!(credit(&run, "gar", None, &[]), grpo);
    // A fallback record (the grader timed out): GRPO's too.
    for e in &mut episodes {
        for t in e["traces"].as_array_mut().unwrap() {
            t["info"] =
                serde_json::json!({"gar": {"label": "c00", "fallback_reason": "timeout", "grader_trace_id": null}});
        }
    }
    let run = load_bytes("fallback.jsonl", episode_lines(&episodes).as_bytes(), &mut LoadReport::new("fb")).unwrap();
    assert_eq!(credit(&run, "gar", None, &[]), grpo);
    // The graded group, then its confirmed hack's label taken off: the hack's reward counts again.
    let graded = case["episodes"].as_array().unwrap();
    let mut run = load_bytes("graded.jsonl", episode_lines(graded).as_bytes(), &mut LoadReport::new("graded")).unwrap();
    let hacked = run.trajectory_by_key("ga-e1/ga-e1-t0").unwrap();
    let before = credit(&run, "gar", None, &[]);
    let p = run.trajectories.path_range(hacked).start;
    assert!(before[p] < 0.0, "a confirmed hack drops to the group's minimum: {}", before[p]);
    let kept: Vec<_> = run
        .meta
        .imported_labels
        .iter()
        .filter(|l| !(l.name == "gar_hack" && l.target.trajectory == "ga-e1/ga-e1-t0"))
        .cloned()
        .collect();
    run.meta.labels = std::sync::Arc::new(vantage::model::labels::RunLabels::resolve(&run, kept));
    let after = credit(&run, "gar", None, &[]);
    assert!(after[p] > 0.0, "without the verdict it is a pass: {}", after[p]);
    // ngu: a shaped reward is counted.
    let mut shaped = bare.clone();
    shaped[3]["traces"][0]["reward"] = serde_json::json!(0.5);
    let run = load_bytes("shaped.jsonl", episode_lines(&shaped).as_bytes(), &mut LoadReport::new("shaped")).unwrap();
    let scheme = vantage::credit::scheme("ngu").unwrap();
    let err = vantage::credit::compute(scheme, &run, None, &Vec::new()).unwrap_err().to_string();
    assert!(err.contains("binary rewards (0 or 1): 1 of 8 rollouts"), "{err}");
}

/// FIPO (`fipo`): each policy token's credit is GRPO's times ms-swift's own influence weight
/// (`tests/golden/fipo`: `GRPOTrainer._compute_fipo_influence` run with torch on the token sample's
/// trainer and sampling log-probs) at its defaults, with `delta`, with a two-sided clip and at a
/// short decay without the safety clip, within 1e-5; the tool's tokens get 0.
#[test]
fn fipo_weights_grpos_token_credit_by_ms_swifts_influence() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/fipo/cases.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let (run, grpo) = token_sample_with_grpo();
    let mask = run.tokens.mask.as_ref().unwrap();
    let (mut compared, mut weighted) = (0, 0);
    for case in golden["cases"].as_array().unwrap() {
        let sets: Vec<(String, String)> =
            case["set"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned())).collect();
        let credit = vantage::credit::compute(vantage::credit::scheme("fipo").unwrap(), &run, None, &sets).unwrap();
        let token = credit.token.as_ref().unwrap();
        for (key, weights) in case["weights"].as_object().unwrap() {
            let t = run.trajectory_by_key(key).unwrap();
            let range = run.trajectories.token_range(t);
            let weights = weights.as_array().unwrap();
            assert_eq!(weights.len(), range.len(), "{key}");
            for (i, w) in range.zip(weights) {
                let want = if mask[i] { f64::from(grpo[i]) * w.as_f64().unwrap() } else { 0.0 };
                let got = f64::from(token[i]);
                assert!(
                    (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                    "{} {key} token {i}: {got} vs {want}",
                    case["name"]
                );
                weighted += usize::from(mask[i] && w.as_f64().unwrap() != 1.0);
                compared += 1;
            }
        }
    }
    assert!(compared > 6000 && weighted > 4000, "{compared} tokens, {weighted} weighted");
}
