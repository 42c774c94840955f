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
const DATA_KEYED: [&str; 6] = ["unavailable", "step_scores", "outcome_components", "roles", "kinds", "finish_reasons"];

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

fn vantage(args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vantage"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_documented_json_is_what_the_commands_print() {
    let examples = examples();
    assert_eq!(examples.len(), 3, "one example per command");
    let check = vantage(&["check", "sample_runs/search_qa_rag.jsonl", "--json"]);
    let compare = vantage(&[
        "compare",
        "sample_runs/alfworld_roles.jsonl",
        "--a",
        "grpo",
        "--b",
        "triage",
        "--limit",
        "1",
        "--json",
    ]);
    let health = vantage(&["health", "sample_runs/tree_rollouts.jsonl", "--json"]);
    for (name, example, actual) in
        [("check", &examples[0], &check), ("compare", &examples[1], &compare), ("health", &examples[2], &health)]
    {
        let mut out = Vec::new();
        key_differences(example, actual, name, &mut out);
        assert!(out.is_empty(), "docs/JSON.md's {name} example and the output differ:\n{}", out.join("\n"));
    }
    // The values shown are the sample's (rounded in the doc).
    // The summary's values, the mean reward as the doc rounds it.
    let mut summary = check["runs"][0]["summary"].clone();
    summary["mean_reward"] = serde_json::json!((summary["mean_reward"].as_f64().unwrap() * 1e4).round() / 1e4);
    assert_eq!(examples[0]["runs"][0]["summary"], summary);
    for key in ["paired", "differing", "rows_total", "groups_total", "disagreements"] {
        assert_eq!(examples[1][key], compare[key], "{key}");
    }
    assert_eq!(examples[1]["rows"][0]["trajectory"], compare["rows"][0]["trajectory"]);
    assert!((examples[1]["spearman"].as_f64().unwrap() - compare["spearman"].as_f64().unwrap()).abs() < 1e-3);
    assert_eq!(examples[2]["runs"][0]["alarms"][0]["message"], health["runs"][0]["alarms"][0]["message"]);
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
