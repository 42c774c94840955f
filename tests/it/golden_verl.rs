//! verl's own outputs, reproduced: every `*.json` in `$VANTAGE_GOLDEN_DIR` (default
//! `../shared/golden/verl`) and in `tests/golden/verl_extra` (made here by running verl's code) is
//! run through the matching scheme with the `verl` preset, in float32 against `outputs` and in float64 against `outputs_float64` (rtol 1e-5, atol 1e-6; the number of
//! bit-exact float32 values is printed; those of `tests/golden/verl_extra` must all be, as
//! docs/SCHEMES.md says of `rloo_vectorized`). A file whose estimator cannot be run fails the test.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::PathBuf;

use serde_json::Value;
use vantage::credit::{self, Batch, KlMode, Output, Params, Real, Scheme};

const RTOL: f64 = 1e-5;
const ATOL: f64 = 1e-6;

fn golden_dir() -> PathBuf {
    std::env::var_os("VANTAGE_GOLDEN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/golden/verl"))
}

fn matrix(v: &Value) -> Option<(Vec<f64>, Vec<usize>)> {
    let rows = v.as_array()?;
    let mut flat = Vec::new();
    let mut offsets = vec![0];
    for row in rows {
        for x in row.as_array()? {
            flat.push(x.as_f64()?);
        }
        offsets.push(flat.len());
    }
    Some((flat, offsets))
}

fn vector(v: &Value) -> Option<Vec<f64>> {
    v.as_array()?.iter().map(Value::as_f64).collect()
}

fn conv<F: Real>(x: &[f64]) -> Vec<F> {
    x.iter().map(|&v| F::of(v)).collect()
}

/// Builds the kernel input from a golden file's `inputs`.
fn batch<F: Real>(inputs: &Value) -> Batch<'static, F> {
    let (reward, offsets) = matrix(&inputs["token_level_rewards"]).unwrap();
    let (mask, _) = matrix(&inputs["response_mask"]).unwrap();
    let labels: Vec<String> = inputs["index"].as_array().unwrap().iter().map(|l| l.to_string()).collect();
    let (group, num_groups) = Batch::<F>::dense_groups(&labels);
    let opt = |name: &str| matrix(&inputs[name]).map(|(m, _)| conv::<F>(&m));
    Batch {
        offsets,
        reward: Some(conv(&reward)),
        row_score: None,
        mask: Some(conv(&mask)),
        group,
        num_groups,
        values: opt("values").map(Into::into),
        logprob: opt("old_log_probs"),
        ref_logprob: None,
        sum_pi_squared: opt("sum_pi_squared"),
        reward_baseline: vector(&inputs["reward_baselines"]).map(|v| conv(&v)),
        rollout_is_weights: opt("rollout_is_weights"),
        skip_returns: false,
        max_length: None,
        components: Vec::new(),
        component_weights: Vec::new(),
        tree: Vec::new(),
        group_step: Vec::new(),
    }
}

/// The verl preset plus what the file's config sets, as the trainer would pass it.
fn params(scheme: &dyn Scheme, file: &Value) -> Params {
    let p = &file["params"];
    let config = &p["algorithm_config"];
    let has = |name: &str| scheme.params().iter().any(|s| s.name == name);
    let mut sets: Vec<(String, String)> = Vec::new();
    for (key, name) in [("gamma", "gamma"), ("lam", "lam")] {
        if let Some(v) = config[key].as_f64().filter(|_| has(name)) {
            sets.push((name.to_owned(), v.to_string()));
        }
    }
    let via_dispatch = file["called_via"].as_str().unwrap_or("").contains("compute_advantage");
    // The dispatcher forwards norm_adv_by_std_in_grpo to grpo and (through config) grpo_passk only.
    let forwards_norm = matches!(scheme.info().id, "grpo" | "grpo_passk") || !via_dispatch;
    if let Some(v) = config["norm_adv_by_std_in_grpo"].as_bool().filter(|_| has("norm_by_std") && forwards_norm) {
        sets.push(("norm_by_std".to_owned(), v.to_string()));
    }
    if let Some(v) = p["handle_zero_tail"].as_bool().filter(|_| has("handle_zero_tail")) {
        sets.push(("handle_zero_tail".to_owned(), v.to_string()));
    }
    if let Some(v) = p["epsilon"].as_f64().filter(|_| has("epsilon")) {
        sets.push(("epsilon".to_owned(), v.to_string()));
    }
    assert!(config["use_kl_in_reward"].as_bool() != Some(true), "KL in reward inside an advantage file is not handled");
    let preset = scheme.presets().iter().any(|p| p.name == "verl").then_some("verl");
    Params::resolve(scheme, preset, &sets).unwrap()
}

/// Compares `got` with `want`; returns (number equal bit for bit, first mismatch).
fn compare(name: &str, got: &[f64], want: &[f64]) -> (usize, Option<String>) {
    if got.len() != want.len() {
        return (0, Some(format!("{name}: {} values, expected {}", got.len(), want.len())));
    }
    let mut exact = 0;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if g == w {
            exact += 1;
        } else if (g - w).abs() > ATOL + RTOL * w.abs() {
            return (exact, Some(format!("{name}[{i}]: got {g}, expected {w}")));
        }
    }
    (exact, None)
}

fn outputs<F: Real>(out: &Output<F>) -> (Vec<f64>, Vec<f64>) {
    let adv: Vec<f64> = out.advantages.iter().map(|x| x.f64()).collect();
    let ret = out.returns.as_ref().map_or_else(|| adv.clone(), |r| r.iter().map(|x| x.f64()).collect());
    (adv, ret)
}

fn check_estimator(file: &Value, scheme: &dyn Scheme) -> Result<(usize, usize), String> {
    let kernel = scheme.token_kernel().ok_or("the scheme has no token kernel")?;
    let params = params(scheme, file);
    let (mut exact, mut total) = (0, 0);
    let out32 = kernel.run32(&batch::<f32>(&file["inputs"]), &params).map_err(|e| format!("{e:#}"))?;
    let out64 = kernel.run64(&batch::<f64>(&file["inputs"]), &params).map_err(|e| format!("{e:#}"))?;
    for (label, (adv, ret), expected) in
        [("f32", outputs(&out32), &file["outputs"]), ("f64", outputs(&out64), &file["outputs_float64"])]
    {
        if expected.is_null() {
            continue;
        }
        for (name, got) in [("advantages", &adv), ("returns", &ret)] {
            let (want, _) = matrix(&expected[name]).ok_or(format!("no outputs.{name}"))?;
            let (n, err) = compare(&format!("{label} {name}"), got, &want);
            if let Some(err) = err {
                return Err(err);
            }
            if label == "f32" {
                exact += n;
                total += want.len();
            }
        }
    }
    Ok((exact, total))
}

fn check_kl(file: &Value) -> Result<usize, String> {
    let inputs = &file["inputs"];
    let mode = KlMode::from_name(file["params"]["kl_penalty"].as_str().unwrap_or("")).ok_or("unknown kl mode")?;
    let beta = file["params"]["kl_coef"].as_f64().ok_or("no kl_coef")?;
    let mut exact = 0;
    for (label, expected) in [("f32", &file["outputs"]), ("f64", &file["outputs_float64"])] {
        if expected.is_null() {
            continue;
        }
        let (scores, offsets) = matrix(&inputs["token_level_scores"]).unwrap();
        let (mask, _) = matrix(&inputs["response_mask"]).unwrap();
        let (logp, _) = matrix(&inputs["old_log_probs"]).unwrap();
        let (refp, _) = matrix(&inputs["ref_log_prob"]).unwrap();
        let (got, metric): (Vec<f64>, f64) = if label == "f32" {
            let (r, m) = credit::kl_in_reward::<f32>(
                &conv(&scores),
                &conv(&mask),
                &conv(&logp),
                &conv(&refp),
                &offsets,
                beta as f32,
                mode,
            );
            (r.iter().map(|x| f64::from(*x)).collect(), m)
        } else {
            credit::kl_in_reward::<f64>(&scores, &mask, &logp, &refp, &offsets, beta, mode)
        };
        let (want, _) = matrix(&expected["token_level_rewards"]).ok_or("no token_level_rewards")?;
        let (n, err) = compare(&format!("{label} token_level_rewards"), &got, &want);
        if let Some(err) = err {
            return Err(err);
        }
        exact += if label == "f32" { n } else { 0 };
        let want_metric = expected["metrics"]["actor/reward_kl_penalty"].as_f64().ok_or("no metric")?;
        if (metric - want_metric).abs() > ATOL + RTOL * want_metric.abs() {
            return Err(format!("{label} metric: got {metric}, expected {want_metric}"));
        }
    }
    Ok(exact)
}

fn check_agg(file: &Value) -> Result<usize, String> {
    let (loss, offsets) = matrix(&file["inputs"]["loss_mat"]).unwrap();
    let (mask, _) = matrix(&file["inputs"]["loss_mask"]).unwrap();
    let mut exact = 0;
    for (label, expected) in [("f32", &file["outputs"]), ("f64", &file["outputs_float64"])] {
        if expected.is_null() {
            continue;
        }
        for (mode, want) in expected["loss"].as_object().ok_or("no loss")? {
            let want = want.as_f64().ok_or("loss not a number")?;
            let got = if label == "f32" {
                f64::from(credit::schemes::loss_agg::agg_loss::<f32>(&conv(&loss), &conv(&mask), &offsets, mode))
            } else {
                credit::schemes::loss_agg::agg_loss::<f64>(&loss, &mask, &offsets, mode)
            };
            let (n, err) = compare(&format!("{label} {mode}"), &[got], &[want]);
            if let Some(err) = err {
                return Err(err);
            }
            exact += if label == "f32" { n } else { 0 };
        }
    }
    Ok(exact)
}

/// Runs every golden file of `dir`; the failures.
/// Each golden file of `dir` checked: the failures, and the files whose float32 estimator outputs
/// are not all equal to verl's bit for bit (`name: exact of total`).
fn check_dir(dir: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap();
    let mut files: Vec<PathBuf> =
        entries.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    files.sort();
    let (mut failures, mut inexact) = (Vec::new(), Vec::new());
    for path in &files {
        let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let estimator = file["estimator"].as_str().unwrap_or("");
        let result = match estimator {
            "apply_kl_penalty" => check_kl(&file).map(|exact| (exact, None)),
            "agg_loss" => check_agg(&file).map(|exact| (exact, None)),
            id => match credit::scheme(id) {
                Ok(scheme) => check_estimator(&file, scheme).map(|(exact, total)| (exact, Some(total))),
                Err(err) => Err(format!("{err:#}")),
            },
        };
        let name = path.file_name().unwrap().to_string_lossy();
        match result {
            Ok((exact, total)) => {
                println!("ok   {name} ({exact} float32 values bit-exact)");
                if let Some(total) = total.filter(|&t| t != exact) {
                    inexact.push(format!("{name}: {exact} of {total}"));
                }
            }
            Err(err) => {
                println!("FAIL {name}: {err}");
                failures.push(format!("{name}: {err}"));
            }
        }
    }
    assert!(!files.is_empty(), "no golden files in {}", dir.display());
    (failures, inexact)
}

#[test]
fn verl_golden_vectors_are_reproduced() {
    let dir = golden_dir();
    if std::fs::read_dir(&dir).is_err() {
        crate::common::skipped(&format!("no golden directory at {} (set VANTAGE_GOLDEN_DIR)", dir.display()));
        return;
    }
    let (failures, _) = check_dir(&dir);
    assert!(failures.is_empty(), "{} golden files failed:\n{}", failures.len(), failures.join("\n"));
}

/// The estimators `../shared/golden/verl` has no file for (`rloo_vectorized`), made by running verl's
/// code (`tests/golden/verl_extra/generate.py`): bit for bit in float32, as docs/SCHEMES.md says.
#[test]
fn verl_golden_vectors_made_here_are_reproduced() {
    let (failures, inexact) = check_dir(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/verl_extra"));
    assert!(failures.is_empty(), "{} golden files failed:\n{}", failures.len(), failures.join("\n"));
    assert!(inexact.is_empty(), "not bit-exact in float32:\n{}", inexact.join("\n"));
}
