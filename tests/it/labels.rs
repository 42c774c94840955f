//! Labels (docs/LABELS.md): made by the command line and by an agent through `vantage mcp` they are
//! the same labels, read back by each; two processes labelling one run at once lose none; a kill
//! mid-write leaves no partial label; bad labels files load what they can and say the rest. The
//! Python package's side is in python/tests.

#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::{Path, PathBuf};
use std::process::Command;

use egui_kittest::kittest::Queryable as _;
use serde_json::{Value, json};
use vantage::source::OpenOptions;

/// A copy of the sample run in a folder of its own (labels go beside it).
fn run_copy(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("vantage-labels-{name}-{}", std::process::id()));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = dir.join("alfworld_roles.jsonl");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs/alfworld_roles.jsonl"), &run).unwrap();
    (dir, run)
}

/// Every run of the folder at `dir`, as `vantage check` opens them.
fn open_folder(dir: &Path) -> Vec<vantage::source::path::Opened> {
    vantage::source::path::open_all(dir, &OpenOptions::default(), None, &vantage::load::LoadReport::default(), None)
}

fn vantage(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_vantage")).args(args).env("USER", "ana").output().unwrap()
}

fn listed(run: &Path) -> Value {
    let out = vantage(&["label", run.to_str().unwrap(), "--list", "--json", "--limit", "1000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The labels' (name, trajectory, step, source kind, source name), in order.
fn summary(json: &Value) -> Vec<(String, String, Option<u64>, String, String)> {
    json["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_owned(),
                l["trajectory"].as_str().unwrap().to_owned(),
                l["step"].as_u64(),
                l["source"]["kind"].as_str().unwrap().to_owned(),
                l["source"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn labels_made_by_the_command_line_and_an_agent_are_one_set_read_back_by_each() {
    let (dir, run) = run_copy("faces");
    let path = run.to_str().unwrap();
    let out = vantage(&[
        "label",
        path,
        "--add",
        "hack",
        "--trajectory",
        "s0-task1-r5",
        "--step",
        "2",
        "--note",
        "reads the answer",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // An agent, through the MCP server: initialize (its name), then the tool.
    let options = OpenOptions::default();
    let mut session = vantage::api::mcp::Session::default();
    let init =
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "claude-code"}}});
    vantage::api::mcp::answer(&init.to_string(), &options, &mut session).unwrap();
    let call = |arguments: Value, session: &mut vantage::api::mcp::Session| {
        let message = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "label", "arguments": arguments}});
        let answer = vantage::api::mcp::answer(&message.to_string(), &options, session).unwrap();
        (answer["result"]["structuredContent"].clone(), answer["result"]["isError"] == true)
    };
    let (added, error) = call(json!({"path": path, "add": "severity=high", "trajectory": "s0-task1-r0"}), &mut session);
    assert!(!error, "{added}");
    assert_eq!(added["added"], 1);
    let (by_agent, _) = call(json!({"path": path, "limit": 1000}), &mut session);
    let by_cli = listed(&run);
    let want = vec![
        ("hack".to_owned(), "s0-task1-r5".to_owned(), Some(2), "person".to_owned(), "ana".to_owned()),
        ("severity".to_owned(), "s0-task1-r0".to_owned(), None, "agent".to_owned(), "claude-code".to_owned()),
    ];
    assert_eq!(summary(&by_cli), want);
    assert_eq!(summary(&by_agent), want);
    assert_eq!(by_cli["labels"][0]["note"], "reads the answer");
    assert_eq!(by_cli["labels"][1]["value"], "high");
    // The library reads the same, as the app and Python do.
    let opened = vantage::api::open(&run, &options).unwrap();
    let (labels, notes) = vantage::api::label::of(&run, &opened);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(labels.labels.len(), 2);
    let hack = labels.named("hack").unwrap();
    let t = opened.trajectory_by_key("s0-task1-r5").unwrap();
    let position = opened.trajectories.path_range(t).start + 2;
    assert!(hack.step_mask(&opened)[position] && hack.at(t, position).is_some());
    // Taken off by the agent, gone for the command line.
    let (_, error) =
        call(json!({"path": path, "remove": "hack", "trajectory": "s0-task1-r5", "step": 2}), &mut session);
    assert!(!error);
    assert_eq!(summary(&listed(&run)), want[1..]);
    // The labels live beside the run, never in it.
    assert_eq!(
        std::fs::read(&run).unwrap(),
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs/alfworld_roles.jsonl")).unwrap()
    );
    assert!(dir.join(".vantage/labels/alfworld_roles.jsonl.labels.jsonl").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_processes_labelling_one_run_at_once_lose_no_label() {
    let (dir, run) = run_copy("writers");
    let path = run.to_str().unwrap();
    let per_writer = 20;
    std::thread::scope(|scope| {
        for writer in 0..2 {
            scope.spawn(move || {
                for i in 0..per_writer {
                    let name = format!("w{writer}_{i}");
                    let out = vantage(&["label", path, "--add", &name, "--trajectory", "s0-task0-r0"]);
                    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                }
            });
        }
    });
    let json = listed(&run);
    let mut names: Vec<String> = summary(&json).into_iter().map(|l| l.0).collect();
    names.sort();
    let mut want: Vec<String> = (0..2).flat_map(|w| (0..per_writer).map(move |i| format!("w{w}_{i}"))).collect();
    want.sort();
    assert_eq!(names, want);
    assert!(json["notes"].as_array().unwrap().is_empty(), "{json}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_kill_mid_write_leaves_no_partial_label() {
    let (dir, run) = run_copy("kill");
    let path = run.to_str().unwrap();
    assert!(vantage(&["label", path, "--add", "before", "--trajectory", "s0-task0-r0"]).status.success());
    // A rule labels many steps in one write; the writer holds halfway (VANTAGE_TEST_HOLD_WRITE) and
    // is killed there.
    let file = dir.join(".vantage/labels/alfworld_roles.jsonl.labels.jsonl");
    let whole_before = std::fs::read(&file).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["label", path, "--add", "regress", "--rule", "role == \"regression\""])
        .env("VANTAGE_TEST_HOLD_WRITE", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let marker = dir.join(".vantage/labels/alfworld_roles.jsonl.labels.jsonl.held");
    let started = std::time::Instant::now();
    while !marker.exists() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the writer never held");
        assert!(child.try_wait().unwrap().is_none(), "the writer ended without holding");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let held = std::fs::read(&file).unwrap();
    assert!(held.len() > whole_before.len() && !held.ends_with(b"\n"), "killed with half its lines written");
    child.kill().unwrap();
    child.wait().unwrap();
    // Read now: the whole lines written are labels, the cut one is none.
    let json = listed(&run);
    assert!(json["notes"].as_array().unwrap().is_empty(), "{json}");
    let names: Vec<String> = summary(&json).into_iter().map(|l| l.0).collect();
    assert_eq!(names[0], "before");
    assert!(names[1..].iter().all(|n| n == "regress"));
    // The next writer cuts the partial line off and appends whole lines.
    assert!(vantage(&["label", path, "--add", "after", "--trajectory", "s0-task0-r1"]).status.success());
    let bytes = std::fs::read(&file).unwrap();
    let (entries, warnings) = vantage::load::labels::read(&bytes);
    assert!(warnings.is_empty() && bytes.ends_with(b"\n"), "{warnings:?}");
    assert_eq!(entries.len(), names.len() + 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_labels_file_loads_what_it_can_and_says_the_rest() {
    let (dir, run) = run_copy("bad");
    let path = run.to_str().unwrap();
    let file = dir.join(".vantage/labels/alfworld_roles.jsonl.labels.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let line = |trajectory: &str, step: Option<u32>| {
        let mut l =
            json!({"vantage_label": 1, "name": "x", "trajectory": trajectory, "source": {"kind": "file", "name": "f"}});
        if let Some(step) = step {
            l["step"] = json!(step);
        }
        l.to_string()
    };
    let lines = [
        line("s0-task0-r0", Some(1)),
        "{\"vantage_label\": 1, \"name\": \"x\", \"trajectory\": \"s0-task0-r0\", \"value\": [1]}".to_owned(),
        line("another-run-r0", None),
        line("another-run-r1", None),
        line("s0-task0-r0", Some(500)),
        line("s0-task0-r1", None),
    ];
    std::fs::write(&file, format!("{}\n", lines.join("\n"))).unwrap();
    let json = listed(&run);
    assert_eq!(json["labels_total"], 2, "{json}");
    let notes: Vec<&str> = json["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].contains(":2: value:"), "a located warning: {}", notes[0]);
    assert!(notes[1].starts_with("2 label(s) name trajectories this run does not have"), "{}", notes[1]);
    assert!(notes[2].contains("step 500 is past the end"), "{}", notes[2]);
    // Adding one past the end is refused with the reason, and nothing is written.
    let before = std::fs::read(&file).unwrap();
    let out = vantage(&["label", path, "--add", "x", "--trajectory", "s0-task0-r0", "--step", "500", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let error: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(error["error"].as_str().unwrap().contains("past the end"), "{error}");
    let out = vantage(&["label", path, "--add", "x", "--trajectory", "no-such-rollout"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_label_made_in_the_app_from_the_keyboard_is_the_command_lines_and_goes_back_off() {
    let (dir, run) = run_copy("app");
    let bytes = std::fs::read(&run).unwrap();
    let mut app = crate::ui::app_with("alfworld_roles.jsonl", &bytes);
    let open = app.current_mut().unwrap();
    open.source_path = Some(run.clone());
    open.read_labels();
    assert!(open.select_by_key(Some("s0-task1-r5"), 2, None));
    // Scheme B zeroes the credit of steps labelled hack: an error until a step is.
    app.state.scheme_b =
        vantage::app::SchemeChoice::from_name("expr:if(label(\"hack\"), 0, credit(\"grpo\"))", &[]).unwrap();
    let mut h = crate::ui::harness(app);
    assert!(h.state().current().unwrap().credit[1].step().is_none(), "no label hack yet");
    // L puts the keyboard in the label field; Enter adds the label to the selected step.
    h.key_press(egui::Key::L);
    h.run_ok();
    h.get_by_label("label this step").type_text("hack=high");
    h.run_ok();
    h.key_press(egui::Key::Enter);
    h.run_ok();
    let json = listed(&run);
    assert_eq!(
        summary(&json),
        [(
            "hack".to_owned(),
            "s0-task1-r5".to_owned(),
            Some(2),
            "person".to_owned(),
            std::env::var("USER").unwrap_or_default()
        )]
    );
    assert_eq!(json["labels"][0]["value"], "high");
    // The formula is computed again with the label: the labelled step's credit is 0.
    h.run_ok();
    let open = h.state().current().unwrap();
    let t = open.run.trajectory_by_key("s0-task1-r5").unwrap();
    let position = open.run.trajectories.path_range(t).start + 2;
    let b = open.credit[1].step().expect("B computed once the label exists");
    assert_eq!(b[position], 0.0);
    assert!(b.iter().filter(|v| **v != 0.0).count() > 100);
    // The inspector shows it, and its button takes it off.
    h.get_by_label("hack=high ×").scroll_to_me();
    h.run_ok();
    h.get_by_label("hack=high ×").click();
    h.run_ok();
    assert!(summary(&listed(&run)).is_empty(), "{:?}", h.state().notifications);
    assert!(h.state().current().unwrap().run.meta.labels.labels.is_empty());
    // A label the command line adds shows in the app once it reads the labels again.
    assert!(
        vantage(&["label", run.to_str().unwrap(), "--add", "loop", "--trajectory", "s0-task1-r5"]).status.success()
    );
    h.state_mut().current_mut().unwrap().read_labels();
    h.run_ok();
    h.get_by_label("loop (rollout) ×");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_formula_reads_labels_so_a_scheme_can_zero_the_credit_of_flagged_steps() {
    let (dir, run) = run_copy("formula");
    let path = run.to_str().unwrap();
    assert!(vantage(&["label", path, "--add", "hack", "--trajectory", "s0-task1-r5", "--step", "2"]).status.success());
    assert!(vantage(&["label", path, "--add", "confidence=0.25", "--trajectory", "s0-task1-r0"]).status.success());
    let options = OpenOptions::default();
    let opened = vantage::api::open(&run, &options).unwrap();
    let grpo = vantage::api::step_credit(&opened, "--a", "grpo", None).unwrap();
    let zeroed =
        vantage::api::step_credit(&opened, "--b", "expr:if(label(\"hack\"), 0, credit(\"grpo\"))", None).unwrap();
    let t = opened.trajectory_by_key("s0-task1-r5").unwrap();
    let flagged = opened.trajectories.path_range(t).start + 2;
    for (p, (&g, &z)) in grpo.iter().zip(&zeroed).enumerate() {
        assert_eq!(z, if p == flagged { 0.0 } else { g }, "step {p}");
    }
    let value = vantage::api::step_credit(&opened, "--b", "expr:label_value(\"confidence\")", None).unwrap();
    let t0 = opened.trajectory_by_key("s0-task1-r0").unwrap();
    let on: Vec<usize> = (0..value.len()).filter(|&p| !value[p].is_nan()).collect();
    assert_eq!(on, opened.trajectories.path_range(t0).collect::<Vec<_>>());
    assert!(on.iter().all(|&p| value[p] == 0.25));
    // A label the run does not have is an error that names those it has.
    let err = vantage::api::step_credit(&opened, "--b", "expr:label(\"loop\")", None).unwrap_err();
    assert!(format!("{err:#}").contains("no label named loop; it has hack, confidence"), "{err:#}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gar_verdicts_written_by_prime_rl_are_labels_a_person_can_take_off() {
    // The episodes, then GAR's trace updates (tests/fixtures/trainers/verifiers/make_gar.py), as a
    // prime-rl trace stream reads them.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trainers/verifiers");
    let dir = std::env::temp_dir().join(format!("vantage-labels-gar-{}", std::process::id()));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let stream = dir.join("stream.jsonl");
    let mut text = std::fs::read_to_string(fixtures.join("episodes.jsonl")).unwrap();
    text.push_str(&std::fs::read_to_string(fixtures.join("gar_annotations.jsonl")).unwrap());
    std::fs::write(&stream, text).unwrap();
    let path = stream.to_str().unwrap();
    let json = listed(&stream);
    let found: Vec<(String, String, Option<u64>, String, String)> = summary(&json);
    let by = |name: &str| -> Vec<String> { found.iter().filter(|l| l.0 == name).map(|l| l.1.clone()).collect() };
    assert_eq!(by("gar_hack"), ["e-1/t-a/branch-0", "e-1/t-a/branch-1"]);
    assert_eq!(by("gar_tier"), ["e-2/t-b"]);
    assert_eq!(by("gar_fallback"), ["e-3/t-c", "e-3/t-d"]);
    let hack = json["labels"].as_array().unwrap().iter().find(|l| l["name"] == "gar_hack").unwrap();
    assert_eq!(hack["value"], "confirmed");
    assert_eq!(hack["source"]["kind"], "file");
    assert_eq!(hack["note"], "turn 2: \"cat tests/expected_output.txt\"");
    let tier = json["labels"].as_array().unwrap().iter().find(|l| l["name"] == "gar_tier").unwrap();
    assert_eq!(tier["value"], 0.0);
    // A person takes a verdict off: the labels file beside the run says so, the log is untouched.
    assert!(vantage(&["label", path, "--remove", "gar_hack", "--trajectory", "e-1/t-a/branch-1"]).status.success());
    assert_eq!(by("gar_hack").len(), 2);
    let after: Vec<String> = summary(&listed(&stream)).into_iter().filter(|l| l.0 == "gar_hack").map(|l| l.1).collect();
    assert_eq!(after, ["e-1/t-a/branch-0"]);
    // A formula reads an imported verdict as any label.
    let out = vantage(&["credit", path, "--scheme", "expr:if(label(\"gar_hack\"), 1, 0)"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let flagged = String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains("\"credit\":1.0")).count();
    assert!(flagged > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn nemo_gym_failure_reasons_written_by_its_collector_are_labels_on_their_rollouts() {
    // A real file of NeMo Gym's rollout collector (tests/fixtures/trainers/nemo_gym/SOURCE.md):
    // spider2_lite's verify responses carry `failure_reason`.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trainers/nemo_gym/spider2_lite.jsonl");
    let text = std::fs::read_to_string(&fixture).unwrap();
    // What the file says, read here on its own: each row's reason and its rollout.
    let mut want: Vec<(String, String)> = text
        .lines()
        .filter_map(|line| {
            let row: Value = serde_json::from_str(line).unwrap();
            let reason = row["failure_reason"].as_str()?.to_owned();
            let task = row["_ng_task_index"].as_u64()?;
            let rollout = row["_ng_rollout_index"].as_u64()?;
            (reason != "none").then(|| (format!("spider2_lite_simple_agent/task-{task}/rollout-{rollout}"), reason))
        })
        .collect();
    want.sort();
    assert_eq!(want.len(), 2, "{want:?}");
    let run = vantage::source::path::load_path(&fixture, None, &mut vantage::load::LoadReport::default()).unwrap();
    let mut got: Vec<(String, String)> = run
        .meta
        .labels
        .labels
        .iter()
        .map(|l| {
            assert_eq!((l.name.as_str(), l.source.kind), ("failure_reason", vantage::model::labels::SourceKind::File));
            (l.target.trajectory.clone(), l.value.shown())
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
    // Loaded from bytes (the web build), the log's own labels are there too.
    let from_bytes =
        vantage::load::load_bytes("spider2_lite.jsonl", text.as_bytes(), &mut vantage::load::LoadReport::default())
            .unwrap();
    assert_eq!(from_bytes.meta.labels.labels.len(), 2);
}

#[test]
fn a_harbor_trials_exception_and_its_verifiers_other_rewards_are_labels_on_its_trajectory() {
    // Two result.json files written by Harbor's own models (tests/fixtures/labels/harbor), each in
    // its trial folder beside an ATIF trajectory of tests/fixtures/trainers/atif/job.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = std::env::temp_dir().join(format!("vantage-labels-harbor-{}", std::process::id()));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
    for (trial, trajectory) in [("timed-out__Ab3Cd5E", "fix-git__Ab3Cd5E"), ("graded__Pq7Rt3Z", "hello-world__Pq7Rt3Z")]
    {
        std::fs::create_dir_all(dir.join(trial).join("agent")).unwrap();
        std::fs::copy(
            fixtures.join("labels/harbor").join(trial).join("result.json"),
            dir.join(trial).join("result.json"),
        )
        .unwrap();
        std::fs::copy(
            fixtures.join("trainers/atif/job").join(trajectory).join("agent/trajectory.json"),
            dir.join(trial).join("agent/trajectory.json"),
        )
        .unwrap();
    }
    let opened = open_folder(&dir);
    let mut found: Vec<(String, String, String)> = opened
        .iter()
        .flat_map(|o| o.result.as_ref().unwrap().meta.labels.labels.clone())
        .map(|l| (l.name, l.value.shown(), l.source.name))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            (
                "harbor_exception".to_owned(),
                "AgentTimeoutError".to_owned(),
                "timed-out__Ab3Cd5E/result.json".to_owned()
            ),
            ("verifier.tests_passed".to_owned(), "0.75".to_owned(), "graded__Pq7Rt3Z/result.json".to_owned()),
        ],
        "{:?}",
        opened.iter().map(|o| o.result.as_ref().map(|r| r.meta.notes.clone()).unwrap_or_default()).collect::<Vec<_>>()
    );
    // Every reward of the verifier's reward.json is an outcome component too (#66): `reward` and
    // `tests_passed` on the graded trial, none on the one whose verifier did not run.
    let run = opened.iter().find_map(|o| o.result.as_ref().ok()).unwrap();
    let graded = run.trajectory_by_key("graded__Pq7Rt3Z").unwrap();
    let timed_out = run.trajectory_by_key("timed-out__Ab3Cd5E").unwrap();
    let components = &run.trajectories.components;
    assert_eq!(components.keys().collect::<Vec<_>>(), ["reward", "tests_passed"], "{components:?}");
    assert_eq!((components["reward"][graded.index()], components["tests_passed"][graded.index()]), (1.0, 0.75));
    assert!(components["tests_passed"][timed_out.index()].is_nan());
    assert_eq!(run.trajectories.reward[graded.index()], 1.0, "reward stays the outcome");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_run_browser_filters_by_label_and_the_exported_table_carries_them() {
    let (dir, run) = run_copy("browse");
    let path = run.to_str().unwrap();
    assert!(
        vantage(&["label", path, "--add", "hack=high", "--trajectory", "s0-task1-r5", "--step", "2"]).status.success()
    );
    assert!(vantage(&["label", path, "--add", "loop", "--trajectory", "s0-task0-r1"]).status.success());
    let opened = vantage::api::open(&run, &OpenOptions::default()).unwrap();
    let labels = &opened.meta.labels;
    // The browser: the rollouts that carry the label, on a step or on themselves.
    let options = |label: &str| vantage::app::state::BrowserOptions { label: label.to_owned(), ..Default::default() };
    let keys = |label: &str| -> Vec<String> {
        vantage::ui::views::run_browser::filtered_by(&opened, labels, &options(label))
            .into_iter()
            .map(|t| opened.trajectory_key(t).to_owned())
            .collect()
    };
    assert_eq!(keys("hack"), ["s0-task1-r5"]);
    assert_eq!(keys("loop"), ["s0-task0-r1"]);
    assert!(keys("nothing").is_empty());
    assert_eq!(keys("").len(), opened.trajectories.len());
    assert!(options("hack").filters_on());
    // The app's exported table: a column per label.
    let csv = vantage::analysis::export::credit_csv(&opened, None, None, ("a", "b"));
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",label.hack,label.loop"));
    let rows: Vec<&str> = lines.filter(|l| l.starts_with("s0-task1-r5,") || l.starts_with("s0-task0-r1,")).collect();
    assert!(rows.iter().any(|r| r.starts_with("s0-task1-r5,s0-task1,2,") && r.ends_with(",high,")), "{rows:?}");
    assert!(rows.iter().filter(|r| r.starts_with("s0-task0-r1,")).all(|r| r.ends_with(",,true")), "{rows:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inspect_scout_scans_beside_an_inspect_log_are_labels_on_its_samples() {
    // A real scan (tests/fixtures/labels/scout/make_scan.py: Scout's own scan() and recorder) of
    // ../shared's popularity log, laid out as Scout writes it beside the log.
    let log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/inspect-ai-logs/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval");
    if !log.is_file() {
        crate::common::skipped("../shared/data/inspect-ai-logs is absent");
        return;
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/labels/scout");
    let dir = std::env::temp_dir().join(format!("vantage-labels-scout-{}", std::process::id()));
    let _: std::io::Result<()> = std::fs::remove_dir_all(&dir);
    let scan = dir.join("scans/scan_id=fixture");
    std::fs::create_dir_all(&scan).unwrap();
    let copy = dir.join(log.file_name().unwrap());
    std::fs::copy(&log, &copy).unwrap();
    for scanner in ["answered_yes.parquet", "reply_words.parquet"] {
        std::fs::copy(fixtures.join(scanner), scan.join(scanner)).unwrap();
    }
    // What Scout's own reader says (make_scan.py's expected.json): true and numbers are labels,
    // false is none.
    let expected: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("expected.json")).unwrap()).unwrap();
    let mut want: Vec<(String, String, String)> = expected
        .iter()
        .filter(|r| r["value"] != false)
        .map(|r| {
            let value = match &r["value"] {
                Value::Bool(true) => String::new(),
                other => other.as_f64().map_or_else(|| other.to_string(), |n| n.to_string()),
            };
            (
                format!("scout.{}", r["scanner"].as_str().unwrap()),
                format!("{}/epoch{}", r["sample"].as_str().unwrap(), r["epoch"]),
                value,
            )
        })
        .collect();
    want.sort();
    assert!(want.iter().any(|w| w.0 == "scout.answered_yes") && want.iter().any(|w| w.0 == "scout.reply_words"));
    let run = vantage::source::path::load_path(&copy, None, &mut vantage::load::LoadReport::default()).unwrap();
    let mut got: Vec<(String, String, String)> =
        run.meta.labels.labels.iter().map(|l| (l.name.clone(), l.target.trajectory.clone(), l.value.shown())).collect();
    got.sort();
    assert_eq!(got, want, "{:?}", run.meta.notes);
    let yes = run.meta.labels.labels.iter().find(|l| l.name == "scout.answered_yes").unwrap();
    assert_eq!(yes.note.as_deref(), Some("last reply: 'Yes'"));
    assert_eq!(yes.source.kind, vantage::model::labels::SourceKind::File);
    // Opened as a folder, the scans are no run: the log opens, with its labels.
    let opened = open_folder(&dir);
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0].result.as_ref().unwrap().meta.labels.labels.len(), want.len());
    std::fs::remove_dir_all(&dir).unwrap();
}
