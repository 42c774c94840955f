//! The importers of the 2026 trainers' outputs: verifiers v1 episodes (prime-rl, verifiers eval),
//! vf-eval results, NeMo Gym rollouts, NeMo-RL training dumps and ATIF trajectories, on the
//! fixtures in tests/fixtures/trainers (real NeMo Gym files; the others written by the projects'
//! own serialisation code or, where it cannot run here, as their writers define the lines; each
//! folder says which). The logged advantages are read into the `logged` scheme.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};

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
    // A call that stopped at the length limit finishes `length`.
    assert!(run.trajectories.finish.iter().any(|&f| run.label(f) == "length"));
    // Tokens concatenate along each branch; advantages and reference logprobs were spread onto
    // the sampled tokens.
    let tokens = &run.tokens;
    assert!(tokens.advantage.is_some() && tokens.ref_logprob.is_some());
    // The logged advantages are GRPO's with the biased std and ε = 1e-6 (how the fixture was
    // made): the audit finds no difference.
    let logged = credit(&run, "logged", None, &[]);
    let grpo = credit(&run, "grpo", Some("verl"), &[("std", "biased")]);
    assert_close(&logged, &grpo, "logged vs grpo");
    // With the unbiased std (verl's default) they differ: the audit would name the rows.
    let unbiased = credit(&run, "grpo", Some("verl"), &[]);
    assert!(logged.iter().zip(&unbiased).any(|(a, b)| (a - b).abs() > 1e-3));
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
    // NeMo-RL's default GRPO: leave-one-out baseline over the unbiased std + 1e-6, checked here
    // against the logged advantages computed from the rewards independently.
    let logged = credit(&step1, "logged", None, &[]);
    let tr = &step1.trajectories;
    for g in step1.groups.ids() {
        let members = step1.groups.members(g);
        let rewards: Vec<f64> = members.iter().map(|t| f64::from(tr.reward[t.index()])).collect();
        let n = rewards.len() as f64;
        let mean = rewards.iter().sum::<f64>() / n;
        let std = (rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        for (k, t) in members.iter().enumerate() {
            let others = (rewards.iter().sum::<f64>() - rewards[k]) / (n - 1.0);
            let expected = (rewards[k] - others) / (std + 1e-6);
            let p = tr.path_range(*t).start;
            assert!(
                (f64::from(logged[p]) - expected).abs() < 1e-4,
                "{}: {} vs {expected}",
                step1.trajectory_key(*t),
                logged[p]
            );
        }
    }
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
    let mut live = vantage::live::Live::open(&dir, LoadReport::default(), u64::MAX).unwrap().unwrap();
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
    let once = vantage::native::load_path(&dir, None, &mut LoadReport::default()).unwrap();
    assert_eq!(counts(&once), counts(&run));
}

#[test]
fn a_followed_episode_stream_gains_its_appended_episodes() {
    let dir = crate::common::scratch("follow-episodes");
    let path = dir.join("stream.jsonl");
    let text = std::fs::read_to_string(fixture_path("verifiers/episodes.jsonl")).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    std::fs::write(&path, lines[0]).unwrap();
    let mut live = vantage::live::Live::open(&path, LoadReport::default(), u64::MAX).unwrap().unwrap();
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

fn append(path: &Path, text: &str) {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

#[test]
fn a_nemo_gym_failures_sidecar_is_named_in_the_notes() {
    let dir = crate::common::scratch("nemo-gym-sidecar");
    let path = dir.join("rollouts.jsonl");
    std::fs::copy(fixture_path("nemo_gym/blackjack.jsonl"), &path).unwrap();
    let run = vantage::native::load_path(&path, None, &mut LoadReport::default()).unwrap();
    assert!(!run.meta.notes.iter().any(|n| n.contains("failures")));
    std::fs::write(dir.join("rollouts_failures.jsonl"), "{\"_ng_failure_class\": \"timeout\"}\n{}\n").unwrap();
    let run = vantage::native::load_path(&path, None, &mut LoadReport::default()).unwrap();
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
