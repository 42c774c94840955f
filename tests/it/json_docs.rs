//! docs/JSON.md's examples are what the commands print: each command runs on the sample the
//! example names, and its output has exactly the example's keys at every level (lists compared by
//! their first element), and the values the example shows for the run it names.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use serde_json::Value;

/// The JSON code blocks of docs/JSON.md, in order.
fn examples() -> Vec<Value> {
    let doc = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/JSON.md")).unwrap();
    doc.split("```json\n")
        .skip(1)
        .map(|block| serde_json::from_str(block.split("```").next().unwrap()).unwrap())
        .collect()
}

/// Objects keyed by data (scheme ids, score names, labels), not by the schema: their keys vary.
const DATA_KEYED: [&str; 10] = [
    "unavailable",
    "counts",
    "step_scores",
    "outcome_components",
    "roles",
    "kinds",
    "finish_reasons",
    "credit_share",
    "scores",
    "unsupported",
];

/// Where the keys of `a` and `b` differ (object keys at every level, lists by their first element).
fn key_differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>) {
    if DATA_KEYED.iter().any(|k| at.ends_with(&format!(".{k}"))) {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let (kx, ky): (Vec<&String>, Vec<&String>) = (x.keys().collect(), y.keys().collect());
            if kx != ky {
                out.push(format!("{at}: {kx:?} against {ky:?}"));
            }
            for (k, v) in x {
                if let Some(w) = y.get(k) {
                    key_differences(v, w, &format!("{at}.{k}"), out);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if let (Some(v), Some(w)) = (x.first(), y.first()) {
                key_differences(v, w, &format!("{at}[0]"), out);
            }
        }
        _ => {}
    }
}

/// `vantage compare` of GRPO against TRIAGE on the `ALFWorld` sample, `--limit` groups, as JSON.
fn alfworld_grpo_triage(limit: &str) -> Value {
    vantage(&[
        "compare",
        "sample_runs/alfworld_roles.jsonl",
        "--a",
        "grpo",
        "--b",
        "triage",
        "--limit",
        limit,
        "--json",
    ])
}

fn vantage(args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The graph example's counts are the fixture's, its credit within the doc's rounding.
fn graph_values_are_the_fixtures(doc: &Value, graph: &Value) {
    for key in ["merge", "rollouts", "forks", "cycles", "folded", "nodes_total"] {
        assert_eq!(doc[key], graph[key], "graph {key}");
    }
    for (kind, key) in
        [("nodes", "visits"), ("nodes", "rollouts"), ("nodes", "fork"), ("edges", "count"), ("edges", "cycle")]
    {
        let pick = |v: &Value| v[kind].as_array().unwrap().iter().map(|n| n[key].clone()).collect::<Vec<_>>();
        assert_eq!(pick(doc), pick(graph), "graph {kind}.{key}");
    }
    for (d, g) in doc["edges"].as_array().unwrap().iter().zip(graph["edges"].as_array().unwrap()) {
        let (d, g) = (d["b"].as_f64().unwrap(), g["b"].as_f64().unwrap());
        assert!((d - g).abs() < 1e-4, "graph edge b: {d} in the doc, {g} printed");
    }
}

#[test]
fn the_documented_json_is_what_the_commands_print() {
    let examples = examples();
    let check = vantage(&["check", "sample_runs/search_qa_rag.jsonl", "--json"]);
    let compare = alfworld_grpo_triage("1");
    let health = vantage(&["health", "sample_runs/tree_rollouts.jsonl", "--json"]);
    let alfworld = "sample_runs/alfworld_roles.jsonl";
    let budget = vantage(&["budget", alfworld, "--a", "grpo", "--b", "triage", "--limit", "1", "--json"]);
    let runs = vantage(&["runs", alfworld, "--limit", "1", "--json"]);
    let diff = vantage(&[
        "diff",
        alfworld,
        "--left",
        "s0-task1-r5",
        "--a",
        "grpo",
        "--b",
        "triage",
        "--offset",
        "1",
        "--limit",
        "1",
        "--json",
    ]);
    let graph = vantage(&[
        "graph",
        "tests/fixtures/graph/loop_and_fork.jsonl",
        "--group",
        "g",
        "--a",
        "grpo",
        "--b",
        "triage",
        "--limit",
        "2",
        "--json",
    ]);
    let step = vantage(&["step", alfworld, "--trajectory", "s0-task1-r5", "--step", "3", "--json"]);
    let forensics = vantage(&["forensics", "tests/fixtures/forensics/failed_rollout.jsonl", "--json"]);
    let [check_doc, compare_doc, budget_doc, runs_doc, diff_doc, graph_doc, step_doc, health_doc, forensics_doc] =
        &examples[..]
    else {
        panic!("one example per command")
    };
    for (name, example, actual) in [
        ("check", check_doc, &check),
        ("compare", compare_doc, &compare),
        ("budget", budget_doc, &budget),
        ("runs", runs_doc, &runs),
        ("diff", diff_doc, &diff),
        ("graph", graph_doc, &graph),
        ("step", step_doc, &step),
        ("health", health_doc, &health),
        ("forensics", forensics_doc, &forensics),
    ] {
        let mut out = Vec::new();
        key_differences(example, actual, name, &mut out);
        assert!(out.is_empty(), "docs/JSON.md's {name} example and the output differ:\n{}", out.join("\n"));
    }
    // The values shown are the sample's (rounded in the doc).
    // The summary's values, the mean reward as the doc rounds it.
    let mut summary = check["runs"][0]["summary"].clone();
    summary["mean_reward"] = serde_json::json!((summary["mean_reward"].as_f64().unwrap() * 1e4).round() / 1e4);
    assert_eq!(check_doc["runs"][0]["summary"], summary);
    for key in ["paired", "differing", "rows_total", "groups_total", "disagreements"] {
        assert_eq!(compare_doc[key], compare[key], "{key}");
    }
    assert_eq!(compare_doc["rows"][0]["trajectory"], compare["rows"][0]["trajectory"]);
    assert!((compare_doc["spearman"].as_f64().unwrap() - compare["spearman"].as_f64().unwrap()).abs() < 1e-3);
    assert_eq!(health_doc["runs"][0]["alarms"][0]["message"], health["runs"][0]["alarms"][0]["message"]);
    // The analyses' values are the sample's, as the doc rounds them.
    let near = |doc: &Value, actual: &Value, what: &str| {
        let (d, a) = (doc.as_f64().unwrap(), actual.as_f64().unwrap());
        assert!((d - a).abs() < 1e-4, "{what}: the doc says {d}, the command {a}");
    };
    near(&budget_doc["steps"][0]["truncated"], &budget["steps"][0]["truncated"], "budget truncated");
    near(&budget_doc["steps"][0]["b"]["mean_abs_credit"], &budget["steps"][0]["b"]["mean_abs_credit"], "budget |B|");
    for (kind, share) in budget_doc["steps"][0]["a"]["credit_share"].as_object().unwrap() {
        near(share, &budget["steps"][0]["a"]["credit_share"][kind], kind);
    }
    assert_eq!(runs_doc["changes"], runs["changes"]);
    assert_eq!(runs_doc["rows"][0]["prompt"], runs["rows"][0]["prompt"]);
    for key in ["left", "right", "matched", "divergence", "rows_total", "rows"] {
        assert_eq!(diff_doc[key], diff[key], "diff {key}");
    }
    graph_values_are_the_fixtures(graph_doc, &graph);
    assert_eq!(step_doc["texts"], step["texts"]);
    assert_eq!(forensics_doc["findings"], forensics["findings"]);
    assert_eq!(forensics_doc["counts"], forensics["counts"]);
    assert_eq!(forensics_doc["scheme"], forensics["scheme"]);
    for doc in step_doc["credit"].as_array().unwrap() {
        let actual = step["credit"].as_array().unwrap().iter().find(|c| c["scheme"] == doc["scheme"]).unwrap();
        assert_eq!(doc, actual, "step credit {}", doc["scheme"]);
    }
    for (scheme, why) in step_doc["unsupported"].as_object().unwrap() {
        assert_eq!(why, &step["unsupported"][scheme], "{scheme}");
    }
}

#[test]
fn check_json_keeps_check_s_exit_codes_and_names_a_log_that_did_not_load() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(["check", "tests/fixtures/truncated_line.jsonl", "Cargo.toml", "--json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs[0]["warnings"]["count"].as_u64().unwrap() > 0, "{json}");
    assert!(runs[1]["error"].as_str().unwrap().contains("Cargo.toml"), "{json}");
    assert!(runs[1]["summary"].is_null());
}

#[test]
fn bad_input_to_the_analyses_is_an_error_object() {
    let run = "sample_runs/alfworld_roles.jsonl";
    for (name, args) in [
        ("budget", &["budget", run, "--a", "no_such_scheme", "--json"][..]),
        ("budget", &["budget", run, "--limit", "0", "--json"][..]),
        ("budget", &["budget", "Cargo.toml", "--json"][..]),
        ("runs", &["runs", run, "--change", "improved", "--json"][..]),
        ("runs", &["runs", run, "--a-steps", "x..y", "--json"][..]),
        ("runs", &["runs", "sample_runs/search_qa_rag.jsonl", "--other", "no/such/run.jsonl", "--json"][..]),
        ("diff", &["diff", run, "--left", "no-such-rollout", "--json"][..]),
        ("diff", &["diff", run, "--left", "s0-task1-r5", "--by", "vibes", "--json"][..]),
        ("diff", &["diff", run, "--left", "s0-task1-r5", "--limit", "5000", "--json"][..]),
        ("step", &["step", run, "--trajectory", "s0-task1-r5", "--step", "16", "--json"][..]),
        ("step", &["step", run, "--trajectory", "s0-task1-r5", "--step", "0", "--scheme", "gae", "--json"][..]),
        ("step", &["step", run, "--trajectory", "s0-task1-r5", "--step", "0", "--chars", "0", "--json"][..]),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json[format!("vantage_{name}")], 1, "{args:?}");
        assert!(json["error"].as_str().is_some_and(|e| !e.is_empty()), "{args:?}: {json}");
    }
}

#[test]
fn one_run_s_training_steps_and_two_runs_are_compared_by_prompt() {
    // Steps 0 and 1 of the sample, named or by default, and the sample against itself.
    let run = "sample_runs/alfworld_roles.jsonl";
    let default = vantage(&["runs", run, "--json"]);
    let named = vantage(&["runs", run, "--a-steps", "0", "--b-steps", "1..", "--json"]);
    assert_eq!(default["changes"], named["changes"]);
    assert_eq!(named["b"]["steps"], serde_json::json!([1, 1]), "an open end is the run's last step");
    let itself = vantage(&["runs", run, "--other", run, "--change", "still_solved", "--limit", "1000", "--json"]);
    let changes = itself["changes"].as_object().unwrap();
    let moved: u64 = ["learned", "forgotten", "unclear", "only_in_a", "only_in_b"]
        .iter()
        .map(|c| changes[*c].as_u64().unwrap())
        .sum();
    assert_eq!(moved, 0, "a run against itself changes nothing: {itself}");
    assert_eq!(itself["rows_total"], itself["changes"]["still_solved"]);
    assert!(itself["rows"].as_array().unwrap().iter().all(|r| r["change"] == "still_solved" && r["a"] == r["b"]));
}

#[test]
fn a_step_s_credit_under_every_scheme_matches_vantage_credit() {
    // Each listed value is what `vantage credit` writes for that step.
    let run = "sample_runs/search_qa_rag.jsonl";
    let step = vantage(&["step", run, "--trajectory", "s0-q0-r1", "--step", "2", "--json"]);
    let credit = step["credit"].as_array().unwrap();
    assert!(credit.len() >= 20, "{step}");
    let supported = vantage(&["check", run, "--json"])["runs"][0]["schemes"]["supported"].clone();
    let listed: Vec<&Value> = credit.iter().map(|c| &c["scheme"]).collect();
    assert_eq!(listed, supported.as_array().unwrap().iter().collect::<Vec<_>>());
    for scheme in ["grpo", "prm_process", "lets"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
            .args(["credit", run, "--scheme", scheme])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        let rows: Vec<Value> =
            String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let row = rows.iter().find(|r| r["trajectory"] == "s0-q0-r1" && r["step"] == 2).unwrap();
        let listed = credit.iter().find(|c| c["scheme"] == scheme).unwrap();
        let (a, b) = (row["credit"].as_f64().unwrap(), listed["value"].as_f64().unwrap());
        assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "{scheme}: credit {a}, step {b}");
        assert!(!listed["terms"].as_array().unwrap().is_empty(), "{scheme} lists its terms");
    }
}

#[test]
fn bad_input_to_compare_is_an_error_object() {
    for args in [
        &["compare", "sample_runs/alfworld_roles.jsonl", "--a", "grpo", "--b", "no_such_scheme", "--json"][..],
        &["compare", "Cargo.toml", "--a", "grpo", "--b", "triage", "--json"][..],
        &["compare", "sample_runs/alfworld_roles.jsonl", "--a", "grpo", "--b", "triage", "--limit", "100000", "--json"]
            [..],
    ] {
        let out = vantage(args);
        assert_eq!(out["vantage_compare"], 1, "{args:?}");
        assert!(out["error"].as_str().is_some_and(|e| !e.is_empty()), "{args:?}: {out}");
    }
}

#[test]
fn groups_a_scheme_gives_no_credit_are_ranked_after_two_opinions_and_named() {
    // ALFWorld's zero-variance groups get no GRPO credit: 100% "sign disagreement" with TRIAGE,
    // which used to lead the list.
    let json = alfworld_grpo_triage("1000");
    let groups = json["groups"].as_array().unwrap();
    let silent: Vec<bool> = groups.iter().map(|g| !g["silent"].is_null()).collect();
    let first_silent = silent.iter().position(|&s| s).expect("a group GRPO is silent on");
    assert!(first_silent > 0, "a group where both give credit leads");
    assert!(silent[first_silent..].iter().all(|&s| s), "the silent groups are ranked apart, last: {silent:?}");
    assert!(groups[first_silent..].iter().all(|g| g["silent"] == "a"), "GRPO (A) is the silent one");
    assert!(groups[..first_silent].iter().all(|g| g["sign_disagreement"].as_f64().unwrap() < 1.0));
}
