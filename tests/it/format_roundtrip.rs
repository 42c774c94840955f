//! The native format round-trips: load → write gives the same bytes, write → load gives the same
//! run, and every example in docs/FORMAT.md loads without a warning.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;

use vantage::load::formats::vantage_jsonl::write::to_jsonl;
use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;

fn load_clean(name: &str, text: &str) -> Run {
    let mut report = LoadReport::new(name);
    let run = load_bytes(name, text.as_bytes(), &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{name}: {:?}", report.located().collect::<Vec<_>>());
    run
}

/// Structural equality of two runs, NaN included (Debug prints NaN as NaN).
fn assert_same_run(a: &Run, b: &Run) {
    let strip = |run: &Run| {
        let mut run = run.clone();
        run.meta.name.clear();
        format!("{run:?}")
    };
    assert!(strip(a) == strip(b), "runs differ");
}

#[test]
fn samples_are_written_back_byte_for_byte() {
    for dir in ["sample_runs", "assets"] {
        for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let run = load_clean(&path.display().to_string(), &text);
            // A sample in another trainer's format (prime_rl_episodes.jsonl) is not written back.
            if run.meta.format != "vantage JSONL v1" {
                continue;
            }
            let written = to_jsonl(&run);
            assert!(written == text, "{} changed on the way through", path.display());
            assert_same_run(&run, &load_clean("again", &written));
        }
    }
}

fn format_doc_examples() -> String {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/FORMAT.md")).unwrap();
    let mut lines = Vec::new();
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with("```jsonl") {
            inside = true;
        } else if line.starts_with("```") {
            inside = false;
        } else if inside {
            lines.push(line);
        }
    }
    lines.join("\n")
}

#[test]
fn every_record_kind_in_the_format_doc_loads_and_round_trips() {
    let text = format_doc_examples();
    assert_eq!(text.lines().count(), 4, "header, group, trajectory and tree examples");
    let run = load_clean("FORMAT.md", &text);
    assert_eq!(run.meta.metadata.get("trainer").and_then(|v| v.as_str()), Some("verl 0.9.1"));
    assert_eq!(run.groups.len(), 2);
    assert_eq!(run.trajectories.len(), 4);
    assert_eq!(run.trees.len(), 1);

    let t = run.trajectory_by_key("s3-p07-r2").unwrap();
    let g = run.trajectories.group[t.index()];
    assert_eq!(run.text(run.groups.gold[g.index()]), "72");
    assert_eq!(run.groups.train_step[g.index()], Some(3));
    assert_eq!(run.trajectories.components["format"][t.index()], 1.0);
    assert_eq!(run.label(run.trajectories.finish[t.index()]), "stop");
    let path = run.trajectories.path(t);
    assert_eq!(path.len(), 3);
    let tool = path[1];
    assert_eq!(run.label(run.nodes.role[tool.index()]), "infrastructure");
    assert_eq!(run.text(run.nodes.observation[tool.index()]), "72");
    assert_eq!(run.nodes.docs(tool).iter().map(|&d| run.label(d)).collect::<Vec<_>>(), ["wiki:123", "wiki:456"]);
    assert_eq!(run.nodes.mc(tool).map(|m| (m.n, m.mean)), Some((8, 0.875)));
    assert_eq!(run.label(run.nodes.state_key[tool.index()]), "calc:72");
    assert_eq!(run.nodes.first_error(path[0]), Some(false));
    assert_eq!(run.nodes.first_error(path[2]), None);
    assert!(run.nodes.score("prm", path[2]).is_nan());
    assert_eq!(run.nodes.token_span(path[2]), Some([20, 24]));
    assert_eq!(run.trajectories.token_range(t).len(), 24);
    let mask = &run.tokens.mask.as_ref().unwrap()[run.trajectories.token_range(t)];
    assert_eq!(mask.iter().filter(|m| !**m).count(), 4);

    let lucky = run.trajectory_by_key("s0-p3-a").unwrap();
    assert_eq!(run.trajectories.path(lucky).len(), 3);
    let truncated = run.trajectory_by_key("tree-s0-p3/n5").unwrap();
    assert_eq!(run.label(run.trajectories.finish[truncated.index()]), "truncated");
    let shared = run.trajectories.path(lucky)[0];
    assert_eq!(run.trajectories.path(truncated)[0], shared, "tree paths share their root");
    assert_eq!(run.nodes.num_children(shared), 2);

    // The first load interns labels in file order; once written, the run is in canonical order,
    // and from then on load and write are exact inverses.
    let written = to_jsonl(&run);
    let again = load_clean("written", &written);
    assert_eq!(to_jsonl(&again), written);
    assert_same_run(&again, &load_clean("third", &to_jsonl(&again)));
    assert_eq!(again.trajectories.len(), run.trajectories.len());
    assert_eq!(again.tokens.len, run.tokens.len);
}

#[test]
fn non_finite_token_values_survive_the_round_trip() {
    let text = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "steps": [{"action": "x", "token_span": [0, 3]}], "tokens": {"value": [NaN, Infinity, -Infinity], "logprob": [null, -1e-30, 3.4e38]}}"#;
    let run = load_clean("inline", text);
    let written = to_jsonl(&run);
    assert!(written.contains(r#""value":["NaN","Infinity","-Infinity"]"#), "{written}");
    let again = load_clean("written", &written);
    let value = again.tokens.value.as_ref().unwrap();
    assert!(value[0].is_nan() && value[1] == f32::INFINITY && value[2] == f32::NEG_INFINITY);
    assert_eq!(again.tokens.logprob.as_ref().unwrap()[1..], [-1e-30, 3.4e38]);
    assert_same_run(&run, &again);
}
