//! Run-health alarms (docs/HEALTH.md): for each alarm a run built to trip it and nothing else,
//! and a healthy run that trips none; `vantage health` exits 1 on an alarm, 0 without, and prints
//! JSON with `--json`.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use vantage::analysis::health::{Thresholds, alarms};
use vantage::load::{LoadReport, load_bytes};

/// One rollout: group, training step, reward, finish, its steps' thoughts, optional tokens' entropy
/// and the last step's `prm` score.
struct R<'a> {
    group: &'a str,
    step: i64,
    reward: f32,
    finish: &'a str,
    thoughts: Vec<String>,
    entropy: Option<f32>,
    prm: Option<f32>,
}

impl<'a> R<'a> {
    fn new(group: &'a str, step: i64, reward: f32, text: &str) -> Self {
        Self { group, step, reward, finish: "stop", thoughts: vec![text.to_owned()], entropy: None, prm: None }
    }
}

/// A vantage JSONL log of `rollouts`.
fn log(rollouts: &[R<'_>]) -> String {
    let mut out = String::from("{\"vantage\": 1}\n");
    let mut groups = std::collections::BTreeMap::new();
    for r in rollouts {
        groups.insert(r.group, r.step);
    }
    for (g, step) in &groups {
        out.push_str(&serde_json::json!({"type": "group", "id": g, "train_step": step}).to_string());
        out.push('\n');
    }
    for (i, r) in rollouts.iter().enumerate() {
        let n = r.thoughts.len();
        let steps: Vec<serde_json::Value> = r
            .thoughts
            .iter()
            .enumerate()
            .map(|(k, text)| {
                let mut step = serde_json::json!({"thought": text});
                if let (Some(prm), true) = (r.prm, k + 1 == n) {
                    step["scores"] = serde_json::json!({"prm": prm});
                }
                step
            })
            .collect();
        let mut line = serde_json::json!({
            "type": "trajectory", "id": format!("t{i}"), "group": r.group,
            "outcome": {"reward": r.reward, "finish": r.finish}, "steps": steps,
        });
        if let Some(e) = r.entropy {
            line["tokens"] = serde_json::json!({"mask": [1, 1], "entropy": [e, e]});
        }
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// The names of the alarms that fire on `rollouts`.
fn fired(rollouts: &[R<'_>]) -> Vec<&'static str> {
    let text = log(rollouts);
    let mut report = LoadReport::new("health.jsonl");
    let run = load_bytes("health.jsonl", text.as_bytes(), &mut report).unwrap();
    let mut names: Vec<&'static str> = alarms(&run, &Thresholds::default()).iter().map(|a| a.name).collect();
    names.dedup();
    names
}

/// Two groups of two at step 0, one rollout of each passing: healthy.
fn healthy() -> Vec<R<'static>> {
    vec![
        R::new("g0", 0, 1.0, "I add two and two and get four, which I check once."),
        R::new("g0", 0, 0.0, "I multiply three by three and get ten, a slip."),
        R::new("g1", 0, 1.0, "The capital of Norway is Oslo, as the atlas says."),
        R::new("g1", 0, 0.0, "The capital of Norway is Bergen, I think."),
    ]
}

#[test]
fn a_healthy_run_trips_no_alarm() {
    assert_eq!(fired(&healthy()), Vec::<&str>::new());
}

#[test]
fn each_alarm_fires_on_a_run_built_to_trip_it() {
    // Every group's rewards equal, all passing.
    let mut run = healthy();
    for r in &mut run {
        r.reward = 1.0;
    }
    assert_eq!(fired(&run), ["zero_variance"]);
    // Every rollout of one group of two fails: 50% of groups.
    let mut run = healthy();
    run[0].reward = 0.0;
    assert_eq!(fired(&run), ["all_failed"]);
    // Cut off by the length limit; errors.
    let mut run = healthy();
    run[0].finish = "length";
    assert_eq!(fired(&run), ["truncated"]);
    let mut run = healthy();
    run[0].finish = "error";
    // The errored rollout also counts in its group's reward baseline (baseline forensics).
    assert_eq!(fired(&run), ["errors", "failed_rollout"]);
    // No text; text repeating itself; undecodable text.
    let mut run = healthy();
    run[1].thoughts = vec![String::new()];
    // An empty response in a group baseline is a failed rollout there too (baseline forensics).
    assert_eq!(fired(&run), ["empty", "failed_rollout"]);
    let mut run = healthy();
    run[1].thoughts = vec!["the answer is the answer is ".repeat(6)];
    assert_eq!(fired(&run), ["repetitive"]);
    let mut run = healthy();
    run[1].thoughts = vec!["caf\u{FFFD} au lait".to_owned()];
    assert_eq!(fired(&run), ["undecodable"]);
    // A PRM sure of the final step of failed rollouts.
    let mut run = healthy();
    for r in &mut run {
        r.prm = Some(if r.reward > 0.5 { 0.2 } else { 0.9 });
    }
    assert_eq!(fired(&run), ["score_disagreement"]);
    // Over three steps, longer rollouts and more reward.
    let mut run = Vec::new();
    for (step, group, words, reward) in [(0, "a", 4, 0.0), (1, "b", 12, 0.5), (2, "c", 30, 1.0)] {
        let text: Vec<String> = (0..words).map(|w| format!("w{w}")).collect();
        let mut r = R::new(group, step, reward, &text.join(" "));
        r.thoughts.push(format!("step {step} ends"));
        run.push(r);
        let mut other = R::new(group, step, 1.0 - reward, &format!("other {step} short"));
        other.reward = if step == 1 { 0.5 } else { reward };
        run.push(other);
    }
    let names = fired(&run);
    assert!(names.contains(&"length_hacking"), "{names:?}");
    // Token entropy falling from 2.0 to 0.4.
    let mut run = healthy();
    for r in &mut run {
        r.entropy = Some(2.0);
    }
    let mut later: Vec<R<'_>> = healthy()
        .into_iter()
        .map(|mut r| {
            r.group = if r.group == "g0" { "h0" } else { "h1" };
            r.step = 1;
            r.entropy = Some(0.4);
            r
        })
        .collect();
    run.append(&mut later);
    assert_eq!(fired(&run), ["entropy_collapse"]);
}

#[test]
fn thresholds_are_set_by_name_and_an_unknown_name_is_an_error() {
    let mut t = Thresholds::default();
    t.set("truncated", 0.9).unwrap();
    assert!((t.truncated - 0.9).abs() < 1e-12);
    let err = t.set("truncation", 0.9).unwrap_err();
    assert!(err.contains("zero_variance"), "{err}");
    assert!(t.set("errors", f64::NAN).is_err());
}

#[test]
fn vantage_health_exits_one_on_an_alarm_and_prints_json() {
    let dir = crate::common::scratch("health-cli");
    let mut bad = healthy();
    bad[0].finish = "length";
    std::fs::write(dir.join("bad.jsonl"), log(&bad)).unwrap();
    std::fs::write(dir.join("good.jsonl"), log(&healthy())).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage")).arg("health").args(args).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let good = dir.join("good.jsonl").display().to_string();
    let bad = dir.join("bad.jsonl").display().to_string();
    let (code, text) = run(&[&good]);
    assert_eq!((code, text.trim().ends_with("no alarm")), (Some(0), true), "{text}");
    let (code, text) = run(&[&bad]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(
            "[truncated] training step 0: 25% of rollouts cut off by the length limit (above 20%) (groups g0)"
        ),
        "{text}"
    );
    let (code, text) = run(&[&bad, "--set", "truncated=0.3"]);
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = run(&[&bad, "--json"]);
    assert_eq!(code, Some(1));
    let json: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(json["vantage_health"], 1);
    let alarm = &json["runs"][0]["alarms"][0];
    assert_eq!((alarm["name"].as_str(), alarm["train_step"].as_i64()), (Some("truncated"), Some(0)));
    assert_eq!(alarm["groups"], serde_json::json!(["g0"]));
    let (code, _) = run(&[&bad, "--set", "nonsense=1"]);
    assert_eq!(code, Some(2));
    let (code, _) = run(&[dir.join("missing.jsonl").to_str().unwrap()]);
    assert_eq!(code, Some(2));
}

/// Logged advantages that no trainer preset reproduces trip `advantage_mismatch`; GRPO's own do not.
#[test]
fn logged_advantages_no_preset_reproduces_trip_an_alarm() {
    let with = |a: f32, b: f32| {
        format!(
            "{{\"vantage\": 1}}\n{{\"type\": \"group\", \"id\": \"g0\", \"train_step\": 0}}\n\
             {{\"type\": \"trajectory\", \"id\": \"t0\", \"group\": \"g0\", \"outcome\": {{\"reward\": 1}}, \"steps\": [{{\"thought\": \"I add two and two and get four.\", \"scores\": {{\"logged_advantage\": {a}}}}}]}}\n\
             {{\"type\": \"trajectory\", \"id\": \"t1\", \"group\": \"g0\", \"outcome\": {{\"reward\": 0}}, \"steps\": [{{\"thought\": \"I add two and two and get five.\", \"scores\": {{\"logged_advantage\": {b}}}}}]}}\n"
        )
    };
    let names = |text: String| {
        let mut report = LoadReport::new("logged.jsonl");
        let run = load_bytes("logged.jsonl", text.as_bytes(), &mut report).unwrap();
        alarms(&run, &Thresholds::default()).iter().map(|a| a.name).collect::<Vec<_>>()
    };
    assert_eq!(names(with(0.707_106_77, -0.707_106_77)), Vec::<&str>::new(), "GRPO's own advantages");
    assert_eq!(names(with(5.0, 5.0)), ["advantage_mismatch"]);
}

/// `vantage health --follow` watches a run that is still training and exits 1 once an alarm fires.
#[test]
fn health_follow_exits_one_when_the_growing_run_trips_an_alarm() {
    let dir = crate::common::scratch("health-follow");
    let path = dir.join("growing.jsonl");
    std::fs::write(&path, log(&healthy())).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["health", "--follow", "--interval", "0.3"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(900));
    assert!(child.try_wait().unwrap().is_none(), "a healthy run is watched on");
    // The trainer writes a step of truncated rollouts.
    let mut more = healthy();
    for r in &mut more {
        r.group = if r.group == "g0" { "k0" } else { "k1" };
        r.step = 1;
        r.finish = "length";
    }
    // Its rollouts' ids are new (the log's own are t0…t3).
    let text = log(&more).replace("\"id\":\"t", "\"id\":\"u");
    crate::common::append(&path, text.split_once('\n').unwrap().1);
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "no alarm after the log grew");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(1));
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(out.contains("[truncated] training step 1: 100% of rollouts cut off"), "{out}");
}

/// On real logs from ../shared/data the alarms are the ones their definitions give, counted here
/// independently of vantage where it is short: tau-bench's airline run has 50 tasks of 4 trials, 14
/// of them failed in every trial (28% > 25%) and 24 with equal rewards (48% < 50%); the ToolBench
/// DFSDT answer is one group of 9 rollouts, all rewarded 0; ProcessBench's GSM8K has no outcome
/// groups to fault.
/// An alarm as the test expects it: name, training step, value (to 3 decimals).
type Expected = (&'static str, Option<i64>, f64);

#[test]
fn real_logs_trip_the_alarms_their_definitions_give() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    let cases: [(&str, &[Expected]); 3] = [
        ("tau-bench-airline-gpt4o/gpt-4o-airline.json", &[("all_failed", Some(0), 0.28)]),
        (
            "toolbench-dfsdt/answer/G1_answer/69_ChatGPT_DFS_woFilter_w2.json",
            &[("zero_variance", Some(0), 1.0), ("all_failed", Some(0), 1.0)],
        ),
        ("processbench/gsm8k.json", &[]),
    ];
    for (file, want) in cases {
        let path = data.join(file);
        let Ok(bytes) = std::fs::read(&path) else {
            crate::common::skipped(&format!("{} is absent", path.display()));
            continue;
        };
        let mut report = LoadReport::new(file);
        let run = load_bytes(file, &bytes, &mut report).unwrap();
        let got: Vec<Expected> = alarms(&run, &Thresholds::default())
            .iter()
            .map(|a| (a.name, a.train_step, (a.value * 1000.0).round() / 1000.0))
            .collect();
        assert_eq!(got, want, "{file}");
    }
}

/// The alarms a view computes without reading texts (a run whose texts stay in its log) leave out
/// exactly the text alarms, and keep the others.
#[test]
fn the_alarms_without_texts_leave_out_only_the_text_alarms() {
    let mut run = healthy();
    run[1].thoughts = vec![String::new()];
    run[0].finish = "length";
    let text = log(&run);
    let mut report = LoadReport::new("health.jsonl");
    let loaded = load_bytes("health.jsonl", text.as_bytes(), &mut report).unwrap();
    assert!(loaded.text.holds_every_text());
    let names = |alarms: Vec<vantage::analysis::health::Alarm>| alarms.iter().map(|a| a.name).collect::<Vec<_>>();
    // The empty response is also a failed rollout in its group's baseline, which is told without
    // reading a text (an empty text is stored as none).
    assert_eq!(names(alarms(&loaded, &Thresholds::default())), ["truncated", "empty", "failed_rollout"]);
    assert_eq!(
        names(vantage::analysis::health::alarms_without_texts(&loaded, &Thresholds::default())),
        ["truncated", "failed_rollout"]
    );
    // A vantage JSONL log read from its file keeps its texts there.
    let dir = crate::common::scratch("health-texts");
    std::fs::write(dir.join("run.jsonl"), &text).unwrap();
    let mut report = LoadReport::new("run.jsonl");
    let from_file = vantage::source::path::load_path(&dir.join("run.jsonl"), None, &mut report).unwrap();
    assert!(!from_file.text.holds_every_text());
}

/// An alarm's name and training step (`None`: over the run).
type Fired<'a> = (&'a str, Option<i64>);

/// Every sample run fires exactly these alarms, and the shares of truncated rollouts and of
/// all-failed groups, counted here from the run itself, are the alarms' values.
#[test]
fn every_sample_run_fires_the_alarms_its_rollouts_give() {
    let expected: &[(&str, &[Fired<'_>])] = &[
        ("alfworld_roles.jsonl", &[("truncated", Some(0)), ("truncated", Some(1))]),
        ("math_grpo_prm.jsonl", &[]),
        ("prime_rl_episodes.jsonl", &[]),
        ("search_qa_rag.jsonl", &[("all_failed", Some(0)), ("score_disagreement", None)]),
        (
            "terminal_turn_scores.jsonl",
            &[("all_failed", Some(0)), ("repetitive", Some(0)), ("repetitive", Some(1)), ("score_disagreement", None)],
        ),
        ("tree_rollouts.jsonl", &[("truncated", Some(0))]),
        ("verl_token_batch.jsonl", &[("advantage_mismatch", None)]),
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs");
    let mut names: Vec<String> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(
        names,
        expected.iter().map(|(n, _)| (*n).to_owned()).collect::<Vec<_>>(),
        "a sample without its alarms here"
    );
    for (name, alarms) in expected {
        let path = root.join(name);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
            .args(["health", path.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(i32::from(!alarms.is_empty())), "{name}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let fired = json["runs"][0]["alarms"].as_array().unwrap();
        let got: Vec<Fired<'_>> =
            fired.iter().map(|a| (a["name"].as_str().unwrap(), a["train_step"].as_i64())).collect();
        assert_eq!(&got, alarms, "{name}");
        // The two shares counted from the run itself.
        let bytes = std::fs::read(&path).unwrap();
        let run = vantage::load::load_bytes(name, &bytes, &mut vantage::load::LoadReport::new(name)).unwrap();
        let tr = &run.trajectories;
        for alarm in fired {
            let step = alarm["train_step"].as_i64();
            let groups: Vec<_> = run.groups.ids().filter(|&g| run.groups.train_step[g.index()] == step).collect();
            let value = alarm["value"].as_f64().unwrap();
            match alarm["name"].as_str().unwrap() {
                "truncated" => {
                    let members: Vec<_> = groups.iter().flat_map(|&g| run.groups.members(g).iter().copied()).collect();
                    let cut = members
                        .iter()
                        .filter(|&&t| matches!(run.label(tr.finish[t.index()]), "length" | "truncated"))
                        .count();
                    assert!((value - cut as f64 / members.len() as f64).abs() < 1e-9, "{name} {alarm}");
                }
                "all_failed" => {
                    let multi: Vec<_> = groups.iter().filter(|&&g| run.groups.members(g).len() >= 2).collect();
                    let failed = multi
                        .iter()
                        .filter(|&&&g| run.groups.members(g).iter().all(|&t| tr.success[t.index()] == Some(false)))
                        .count();
                    assert!((value - failed as f64 / multi.len() as f64).abs() < 1e-9, "{name} {alarm}");
                }
                _ => {}
            }
        }
    }
}
