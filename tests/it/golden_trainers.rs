//! TRL's and OpenRLHF's own outputs, reproduced: every `*.json` in `$VANTAGE_GOLDEN_TRL_DIR`
//! (default `../shared/golden/trl`) and `$VANTAGE_GOLDEN_OPENRLHF_DIR` (default
//! `../shared/golden/openrlhf`) is run through the matching scheme with the trainer's preset and
//! the file's configuration, in float32 against `outputs` and, where the file has it, in float64
//! against `outputs_float64` (rtol 1e-5, atol 1e-6). A file that cannot be run fails the test.
//!
//! TRL's advantages are one per sequence (broadcast in the loss): every valid token of a row must
//! carry it. OpenRLHF's are per token; only positions whose action mask is 1 are compared (what
//! OpenRLHF leaves at the others is not used by its loss).
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::PathBuf;

use serde_json::Value;
use vantage::credit::{self, Batch, KernelFloat, Output, Params, Real, Scheme};

const RTOL: f64 = 1e-5;
const ATOL: f64 = 1e-6;

fn dir(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/golden").join(default))
}

/// A (B, T) matrix as one row-major vector and its row offsets; `null` entries become NaN.
fn matrix(v: &Value) -> Option<(Vec<f64>, Vec<usize>)> {
    let mut flat = Vec::new();
    let mut offsets = vec![0];
    for row in v.as_array()? {
        for x in row.as_array()? {
            flat.push(x.as_f64().unwrap_or(f64::NAN));
        }
        offsets.push(flat.len());
    }
    Some((flat, offsets))
}

fn vector(v: &Value) -> Option<Vec<f64>> {
    Some(v.as_array()?.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect())
}

fn conv<F: Real>(x: &[f64]) -> Vec<F> {
    x.iter().map(|&v| F::of(v)).collect()
}

/// The kernel input: one score per row, the mask, the groups of `index`, and the token arrays
/// the file has (log-probabilities, reference log-probabilities, values).
fn batch<F: KernelFloat>(inputs: &Value, mask_key: &str, logp: &str, ref_logp: &str) -> Batch<'static, F> {
    let (mask, offsets) = matrix(&inputs[mask_key]).unwrap();
    let labels: Vec<String> = inputs["index"].as_array().unwrap().iter().map(ToString::to_string).collect();
    let (group, num_groups) = Batch::<F>::dense_groups(&labels);
    let opt = |name: &str| matrix(&inputs[name]).map(|(m, _)| conv::<F>(&m));
    Batch {
        offsets,
        reward: None,
        row_score: Some(conv(&vector(&inputs["rewards"]).unwrap())),
        mask: Some(conv(&mask)),
        group,
        num_groups,
        values: opt("values").map(Into::into),
        logprob: opt(logp),
        ref_logprob: opt(ref_logp),
        ..Batch::default()
    }
}

fn resolve(scheme: &dyn Scheme, preset: &str, sets: &[(&str, String)]) -> Params {
    let has = |name: &str| scheme.params().iter().any(|s| s.name == name);
    for (name, _) in sets {
        assert!(has(name), "{} has no parameter {name}", scheme.info().id);
    }
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    Params::resolve(scheme, Some(preset), &sets).unwrap()
}

/// The scheme and parameters a TRL file runs: its trainer's preset plus the config it holds.
fn trl_params(file: &Value) -> Result<(&'static dyn Scheme, Params), String> {
    let p = &file["params"];
    let config = &p["config"];
    let epsilon = p["epsilon"].as_f64().unwrap_or(1e-4).to_string();
    match file["estimator"].as_str() {
        Some("grpo") => {
            let scheme = credit::scheme("grpo").unwrap();
            if config["multi_objective_aggregation"].as_str().is_some_and(|m| m != "sum_then_normalize") {
                return Err(format!(
                    "multi_objective_aggregation {} is not handled",
                    config["multi_objective_aggregation"]
                ));
            }
            let mut sets = vec![("epsilon", epsilon)];
            match config["scale_rewards"].as_str().unwrap_or("group") {
                "none" | "false" => sets.push(("norm_by_std", "false".to_owned())),
                "batch" => sets.push(("scale", "batch".to_owned())),
                _ => {}
            }
            Ok((scheme, resolve(scheme, "trl", &sets)))
        }
        Some("rloo") => {
            let scheme = credit::scheme("rloo").unwrap();
            let mut sets = vec![("kl_coef", config["beta"].as_f64().unwrap_or(0.05).to_string())];
            if let Some(norm) = config["normalize_advantages"].as_bool() {
                sets.push(("normalize", norm.to_string()));
            }
            if let Some(range) = config["reward_clip_range"].as_array().filter(|r| r.len() == 2) {
                let (low, high) = (range[0].as_f64().unwrap(), range[1].as_f64().unwrap());
                sets.push(("score_min", low.to_string()));
                sets.push(("score_max", high.to_string()));
            }
            Ok((scheme, resolve(scheme, "trl", &sets)))
        }
        other => Err(format!("TRL estimator {other:?} is not handled")),
    }
}

/// The scheme and parameters an OpenRLHF file runs.
fn openrlhf_params(file: &Value) -> Result<(&'static dyn Scheme, Params), String> {
    let p = &file["params"];
    let adv = &p["algo.advantage"];
    let kl = &p["algo.kl"];
    let estimator = adv["estimator"].as_str().unwrap_or("");
    let id = match estimator {
        "group_norm" | "dr_grpo" | "flash_reinforce" => "grpo",
        "rloo" => "rloo",
        "reinforce" => "reinforce_plus_plus",
        "reinforce_baseline" => "reinforce_plus_plus_baseline",
        "gae" => "gae",
        other => return Err(format!("OpenRLHF estimator {other:?} is not handled")),
    };
    let scheme = credit::scheme(id).unwrap();
    // The KL is in the reward unless it is a loss term or there is no reference model.
    let kl_coef = if kl["use_loss"].as_bool() == Some(true) || p["ref_model"].as_bool() == Some(false) {
        0.0
    } else {
        kl["init_coef"].as_f64().unwrap_or(0.01).max(0.0)
    };
    let mut sets =
        vec![("kl_coef", kl_coef.to_string()), ("kl_mode", kl["estimator"].as_str().unwrap_or("k1").to_owned())];
    let clip = p["reward.clip_range"].as_array().map(|r| (r[0].as_f64().unwrap(), r[1].as_f64().unwrap()));
    match clip {
        Some((low, high)) if (low + high).abs() > 0.0 => {
            return Err(format!("an asymmetric reward.clip_range [{low}, {high}] is not handled"));
        }
        Some((_, high)) => sets.push(("reward_clip", high.to_string())),
        None => sets.push(("reward_clip", "0".to_owned())),
    }
    match estimator {
        "dr_grpo" => sets.push(("norm_by_std", "false".to_owned())),
        "flash_reinforce" => {
            sets.push(("norm_by_std", "false".to_owned()));
            sets.push(("mean", "batch".to_owned()));
        }
        "reinforce" | "gae" => {
            sets.push(("gamma", adv["gamma"].as_f64().unwrap_or(1.0).to_string()));
            if estimator == "gae" {
                sets.push(("lam", adv["lambd"].as_f64().unwrap_or(1.0).to_string()));
            }
        }
        _ => {}
    }
    if matches!(estimator, "reinforce" | "reinforce_baseline" | "gae") {
        sets.push(("std_norm", (adv["no_std_norm"].as_bool() != Some(true)).to_string()));
    }
    Ok((scheme, resolve(scheme, "openrlhf", &sets)))
}

/// Compares `got` with `want` at the positions `keep` allows; returns (bit-exact count, error).
fn compare(name: &str, got: &[f64], want: &[f64], keep: impl Fn(usize) -> bool) -> (usize, Option<String>) {
    if got.len() != want.len() {
        return (0, Some(format!("{name}: {} values, expected {}", got.len(), want.len())));
    }
    let mut exact = 0;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if !keep(i) {
            continue;
        }
        if g == w {
            exact += 1;
        } else if g.is_nan() || (g - w).abs() > ATOL + RTOL * w.abs() {
            return (exact, Some(format!("{name}[{i}]: got {g}, expected {w}")));
        }
    }
    (exact, None)
}

fn f64s<F: Real>(x: &[F]) -> Vec<F64> {
    x.iter().map(|v| v.f64()).collect()
}

type F64 = f64;

/// What `vantage credit` does with a batch: the KL in the reward where the parameters ask for
/// it, then the scheme's kernel.
fn run<F: KernelFloat>(scheme: &dyn Scheme, params: &Params, batch: &mut Batch<'_, F>) -> Result<Output<F>, String> {
    let kernel = scheme.token_kernel().ok_or("the scheme has no token kernel")?;
    credit::prepare_batch(batch, &kernel.preparation(params))?;
    F::run(kernel, batch, params).map_err(|e| format!("{e:#}"))
}

fn check_trl(file: &Value) -> Result<usize, String> {
    if file["estimator"].as_str() == Some("loss_type") {
        return check_loss_types(file);
    }
    let (scheme, params) = trl_params(file)?;
    let inputs = &file["inputs"];
    let mut b = batch::<f32>(inputs, "completion_mask", "old_per_token_logps", "ref_per_token_logps");
    // Each reward function's values, in the order of `reward_funcs`, and their weights (GDPO).
    let funcs: Vec<&str> =
        file["params"]["reward_funcs"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    b.components = funcs.iter().filter_map(|f| vector(&inputs["rewards_per_func"][*f]).map(|v| conv(&v))).collect();
    b.component_weights = vector(&file["params"]["config"]["reward_weights"]).map(|w| conv(&w)).unwrap_or_default();
    let out = run(scheme, &params, &mut b)?;
    let want = vector(&file["outputs"]["advantages"]).ok_or("no outputs.advantages")?;
    let (mask, offsets) = matrix(&inputs["completion_mask"]).unwrap();
    // Every valid token of row i carries the row's advantage.
    let mut expanded = vec![f64::NAN; mask.len()];
    for (i, w) in offsets.windows(2).enumerate() {
        for slot in &mut expanded[w[0]..w[1]] {
            *slot = want[i];
        }
    }
    let (n, err) = compare("f32 advantages", &f64s(&out.advantages), &expanded, |t| mask[t] != 0.0);
    err.map_or(Ok(n), Err)
}

/// TRL's loss types as per-token weights (`loss_agg_weight`), against the weights measured
/// through the trainer's `_compute_loss`.
fn check_loss_types(file: &Value) -> Result<usize, String> {
    let scheme = credit::scheme("loss_agg_weight").unwrap();
    let inputs = &file["inputs"];
    let max_len = file["params"]["config"]["max_completion_length"].as_f64().ok_or("no max_completion_length")?;
    let mut exact = 0;
    for (loss_type, want) in file["outputs"]["token_weights"].as_object().ok_or("no token_weights")? {
        let mode = match loss_type.as_str() {
            "grpo" | "sapo" => "trl-grpo",
            "bnpo" | "dapo" | "cispo" | "vespo" => "token-mean",
            "dr_grpo" => "trl-dr_grpo",
            "luspo" => "trl-luspo",
            other => return Err(format!("loss_type {other} is not handled")),
        };
        let params =
            resolve(scheme, "trl", &[("mode", mode.to_owned()), ("max_completion_length", max_len.to_string())]);
        let mut b = batch::<f32>(inputs, "completion_mask", "", "");
        let out = run(scheme, &params, &mut b)?;
        let (want, _) = matrix(want).ok_or("token weights not a matrix")?;
        let (n, err) = compare(&format!("{loss_type} weights"), &f64s(&out.advantages), &want, |_| true);
        if let Some(err) = err {
            return Err(err);
        }
        exact += n;
    }
    Ok(exact)
}

fn check_openrlhf(file: &Value) -> Result<usize, String> {
    let (scheme, params) = openrlhf_params(file)?;
    let inputs = &file["inputs"];
    let (mask, _) = matrix(&inputs["action_mask"]).unwrap();
    let mut exact = 0;
    let out32 =
        run(scheme, &params, &mut batch::<f32>(inputs, "action_mask", "action_log_probs", "base_action_log_probs"))?;
    let out64 =
        run(scheme, &params, &mut batch::<f64>(inputs, "action_mask", "action_log_probs", "base_action_log_probs"))?;
    for (label, adv, ret, expected) in [
        ("f32", f64s(&out32.advantages), out32.returns.as_deref().map(f64s), &file["outputs"]),
        ("f64", f64s(&out64.advantages), out64.returns.as_deref().map(f64s), &file["outputs_float64"]),
    ] {
        if expected.is_null() {
            continue;
        }
        let ret = ret.unwrap_or_else(|| adv.clone());
        for (name, got) in [("advantages", &adv), ("returns", &ret)] {
            let (want, _) = matrix(&expected[name]).ok_or(format!("no {label} {name}"))?;
            let (n, err) = compare(&format!("{label} {name}"), got, &want, |t| mask[t] != 0.0);
            if let Some(err) = err {
                return Err(err);
            }
            exact += if label == "f32" { n } else { 0 };
        }
    }
    Ok(exact)
}

fn check_dir(var: &str, default: &str, check: fn(&Value) -> Result<usize, String>) -> usize {
    let dir = dir(var, default);
    if !dir.is_dir() {
        crate::common::skipped(&format!("{} is absent (set {var})", dir.display()));
        return 0;
    }
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    for path in paths {
        let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match check(&file) {
            Ok(exact) => {
                println!("{name}: ok ({exact} values bit for bit in float32)");
                checked += 1;
            }
            Err(err) => failures.push(format!("{name}: {err}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files failed:\n{}",
        failures.len(),
        failures.len() + checked,
        failures.join("\n")
    );
    assert!(checked > 0, "no golden files in {}", dir.display());
    checked
}

#[test]
fn trl_golden_vectors_are_reproduced() {
    check_dir("VANTAGE_GOLDEN_TRL_DIR", "trl", check_trl);
}

#[test]
fn openrlhf_golden_vectors_are_reproduced() {
    check_dir("VANTAGE_GOLDEN_OPENRLHF_DIR", "openrlhf", check_openrlhf);
}

// The disagreements these trainers' code showed, each named.

/// A batch of rows of `len` positions with `mask` (1 = action token) per row, one score each,
/// groups given by `group`.
fn small_batch(scores: &[f64], masks: &[&[f64]], group: &[u32]) -> Batch<'static, f64> {
    let mut offsets = vec![0];
    let mut mask = Vec::new();
    for m in masks {
        mask.extend_from_slice(m);
        offsets.push(mask.len());
    }
    Batch {
        offsets,
        row_score: Some(scores.to_vec()),
        mask: Some(mask),
        group: group.to_vec(),
        num_groups: group.iter().max().map_or(0, |g| *g as usize + 1),
        ..Batch::default()
    }
}

fn advantages(id: &str, preset: &str, sets: &[(&str, String)], batch: &mut Batch<'_, f64>) -> Output<f64> {
    let scheme = credit::scheme(id).unwrap();
    run(scheme, &resolve(scheme, preset, sets), batch).unwrap()
}

#[test]
fn trl_dr_grpo_divides_by_the_configured_max_completion_length_not_the_longest_row() {
    let masks: [&[f64]; 2] = [&[1.0, 1.0, 0.0], &[1.0, 1.0, 1.0]];
    let mut b = small_batch(&[1.0, 0.0], &masks, &[0, 0]);
    let configured = advantages(
        "loss_agg_weight",
        "trl",
        &[("mode", "trl-dr_grpo".into()), ("max_completion_length", "8".into())],
        &mut b,
    );
    assert_eq!(configured.advantages[0], 1.0 / 16.0, "B · max_completion_length = 2 · 8");
    let unset = advantages("loss_agg_weight", "trl", &[("mode", "trl-dr_grpo".into())], &mut b);
    assert_eq!(unset.advantages[0], 1.0 / 6.0, "without it, the longest row (3)");
    b.max_length = Some(10);
    let from_metadata = advantages("loss_agg_weight", "trl", &[("mode", "trl-dr_grpo".into())], &mut b);
    assert_eq!(from_metadata.advantages[0], 1.0 / 20.0, "the run's metadata");
    // And from a run whose metadata records it, through `vantage credit`'s path.
    let mut run = vantage::load::load_bytes(
        "x.jsonl",
        br#"{"vantage": 1, "meta": {"config": {"max_completion_length": 64}}}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 1}, "steps": [{"action": "x"}, {"action": "y"}]}
"#,
        &mut vantage::load::LoadReport::default(),
    )
    .unwrap();
    let scheme = credit::scheme("loss_agg_weight").unwrap();
    let sets = vec![("mode".to_owned(), "trl-dr_grpo".to_owned()), ("level".to_owned(), "step".to_owned())];
    let credit = credit::compute(scheme, &run, Some("trl"), &sets).unwrap();
    assert_eq!(credit.step[0], 1.0 / 64.0, "{:?}", credit.step);
    run.meta.metadata.clear();
    let credit = credit::compute(scheme, &run, Some("trl"), &sets).unwrap();
    assert_eq!(credit.step[0], 1.0 / 2.0);
}

#[test]
fn trl_rloo_leaves_unscorable_rows_out_of_the_baseline_and_gives_them_zero() {
    let nan = f64::NAN;
    let masks: [&[f64]; 4] = [&[1.0]; 4];
    let mut b = small_batch(&[1.0, nan, 0.0, 0.5], &masks, &[0, 0, 0, 0]);
    let out = advantages("rloo", "trl", &[("kl_coef", "0".into())], &mut b);
    // The baseline of row 0 is the mean of the other scored rows, (0 + 0.5) / 2.
    assert!((out.advantages[0] - 0.75).abs() < 1e-12, "{:?}", out.advantages);
    assert_eq!(out.advantages[1], 0.0, "unscorable: 0");
    assert!((out.advantages[2] + 0.75).abs() < 1e-12);
    // A group with one scored row: 0 for both.
    let mut b = small_batch(&[nan, 2.0], &masks[..2], &[0, 0]);
    let out = advantages("rloo", "trl", &[("kl_coef", "0".into())], &mut b);
    assert_eq!(out.advantages, [0.0, 0.0]);
    // verl's preset keeps a row without a score as no value.
    let mut b = small_batch(&[1.0, nan, 0.0], &masks[..3], &[0, 0, 0]);
    let out = advantages("rloo", "verl", &[], &mut b);
    assert!(out.advantages[1].is_nan() && (out.advantages[0] - 1.0).abs() < 1e-12);
}

#[test]
fn trl_rloo_without_unscorable_rows_is_the_rloo_of_before() {
    let masks: Vec<&[f64]> = vec![&[1.0, 1.0]; 7];
    let scores = [0.3, 1.0, -0.5, 0.0, 2.0, 0.25, 1.5];
    let group = [0, 0, 0, 1, 1, 1, 1];
    let verl = advantages("rloo", "verl", &[], &mut small_batch(&scores, &masks, &group));
    let trl = advantages("rloo", "trl", &[("kl_coef", "0".into())], &mut small_batch(&scores, &masks, &group));
    for (a, b) in verl.advantages.iter().zip(&trl.advantages) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    // normalize_advantages: zero mean and unit (unbiased) std over the batch's rows.
    let norm = advantages(
        "rloo",
        "trl",
        &[("kl_coef", "0".into()), ("normalize", "true".into())],
        &mut small_batch(&scores, &[&[1.0][..]; 7], &group),
    );
    let mean: f64 = norm.advantages.iter().sum::<f64>() / 7.0;
    assert!(mean.abs() < 1e-9, "{mean}");
}

#[test]
fn openrlhf_no_std_norm_only_subtracts_the_token_mean() {
    let masks: [&[f64]; 4] = [&[1.0, 1.0]; 4];
    for id in ["reinforce_plus_plus", "reinforce_plus_plus_baseline"] {
        let mut b = small_batch(&[1.0, 0.0, 3.0, 0.0], &masks, &[0, 0, 1, 1]);
        let with = advantages(id, "openrlhf", &[("kl_coef", "0".into())], &mut b.clone());
        let without = advantages(id, "openrlhf", &[("kl_coef", "0".into()), ("std_norm", "false".into())], &mut b);
        let returns = without.returns.clone().unwrap();
        let mean = returns.iter().sum::<f64>() / returns.len() as f64;
        for (a, r) in without.advantages.iter().zip(&returns) {
            assert!((a - (r - mean)).abs() < 1e-12, "{id}: {a} vs {r} − {mean}");
        }
        assert_ne!(with.advantages, without.advantages, "{id}");
    }
}

#[test]
fn openrlhf_puts_the_reward_on_the_last_action_token_when_observation_tokens_end_the_row() {
    // Row 0 ends with two observation tokens (mask 0).
    let masks: [&[f64]; 2] = [&[1.0, 1.0, 0.0, 0.0], &[1.0, 1.0, 1.0, 1.0]];
    let mut b = small_batch(&[1.0, 0.0], &masks, &[0, 1]);
    let out = advantages("reinforce_plus_plus", "openrlhf", &[("kl_coef", "0".into()), ("gamma", "1".into())], &mut b);
    let returns = out.returns.clone().unwrap();
    assert_eq!(&returns[..2], [1.0, 1.0], "the reward reaches the action tokens: {returns:?}");
    let mut b = small_batch(&[1.0, 0.0], &masks, &[0, 1]);
    b.values = Some(vec![0.0; 8].into());
    let out = advantages("gae", "openrlhf", &[("kl_coef", "0".into())], &mut b);
    assert_eq!(&out.returns.clone().unwrap()[..2], [1.0, 1.0]);
}

#[test]
fn openrlhf_clamps_the_reward_and_the_kl_to_ten_in_reinforce_and_gae() {
    let masks: [&[f64]; 2] = [&[1.0, 1.0], &[1.0, 1.0]];
    for id in ["reinforce_plus_plus", "gae"] {
        let mut b = small_batch(&[50.0, -50.0], &masks, &[0, 1]);
        b.values = Some(vec![0.0; 4].into());
        // A log-ratio of 30 at the first token of row 0: k1 clamped to 10.
        b.logprob = Some(vec![0.0, 0.0, 0.0, 0.0]);
        b.ref_logprob = Some(vec![-30.0, 0.0, 0.0, 0.0]);
        let out = advantages(id, "openrlhf", &[("kl_coef", "0.1".into()), ("gamma", "1".into())], &mut b);
        let returns = out.returns.clone().unwrap();
        // Row 0: 10 at its last token, −0.1·10 at its first; row 1: −10.
        assert!((returns[1] - 10.0).abs() < 1e-12 && (returns[0] - 9.0).abs() < 1e-12, "{id}: {returns:?}");
        assert!((returns[3] + 10.0).abs() < 1e-12, "{id}: {returns:?}");
    }
}

#[test]
fn trl_rloo_reward_clip_range_clamps_the_reward_before_the_baseline() {
    let masks: [&[f64]; 3] = [&[1.0]; 3];
    let sets = [("kl_coef", "0".to_owned()), ("score_min", "-1".to_owned()), ("score_max", "2".to_owned())];
    let out = advantages("rloo", "trl", &sets, &mut small_batch(&[5.0, 0.0, -3.0], &masks, &[0, 0, 0]));
    // Clamped to 2, 0, −1: row 0's baseline is (0 − 1)/2.
    assert!((out.advantages[0] - 2.5).abs() < 1e-12, "{:?}", out.advantages);
}

#[test]
fn openrlhf_flash_reinforce_and_trl_luspo_are_parameters() {
    let masks: [&[f64]; 4] = [&[1.0, 1.0], &[1.0, 0.0], &[1.0, 1.0], &[1.0, 1.0]];
    let sets = [("kl_coef", "0".to_owned()), ("norm_by_std", "false".to_owned()), ("mean", "batch".to_owned())];
    let out = advantages("grpo", "openrlhf", &sets, &mut small_batch(&[1.0, 0.0, 0.0, 3.0], &masks, &[0, 0, 1, 1]));
    // r − the batch mean (1), at every action token (γ = 1 reward-to-go of one reward).
    assert_eq!(out.advantages, [0.0, 0.0, -1.0, 0.0, -1.0, -1.0, 2.0, 2.0]);
    let weights = advantages(
        "loss_agg_weight",
        "trl",
        &[("mode", "trl-luspo".to_owned())],
        &mut small_batch(&[0.0; 4], &masks, &[0, 0, 1, 1]),
    );
    assert_eq!(weights.advantages, [0.25, 0.25, 0.25, 0.0, 0.25, 0.25, 0.25, 0.25]);
}

#[test]
fn trl_normalize_then_sum_normalizes_each_reward_function_in_its_group_then_the_weighted_sum() {
    // 2 groups × 3 rows, 2 reward functions (one value missing), weights 1 and 0.5.
    let nan = f64::NAN;
    let f1 = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0];
    let f2 = [0.2, 0.8, nan, 0.5, 0.1, 0.9];
    let weights = [1.0, 0.5];
    let masks: Vec<&[f64]> = vec![&[1.0]; 6];
    let mut b = small_batch(&[0.0; 6], &masks, &[0, 0, 0, 1, 1, 1]);
    b.components = vec![f1.to_vec(), f2.to_vec()];
    b.component_weights = weights.to_vec();
    let sets = [("aggregation", "normalize_then_sum".to_owned()), ("epsilon", "0.0001".to_owned())];
    let out = advantages("grpo", "trl", &sets, &mut b);
    // An independent computation of TRL's lines (nanmean, unbiased nanstd, + 1e-4).
    let stats = |v: &[f64]| {
        let p: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
        let m = p.iter().sum::<f64>() / p.len() as f64;
        let s = (p.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (p.len() as f64 - 1.0)).sqrt();
        (m, s)
    };
    let mut x = [0.0f64; 6];
    for (f, w) in [(&f1, weights[0]), (&f2, weights[1])] {
        for g in [0..3, 3..6] {
            let (m, s) = stats(&f[g.clone()]);
            for i in g {
                if !f[i].is_nan() {
                    x[i] += w * (f[i] - m) / (s + 1e-4);
                }
            }
        }
    }
    let (m, s) = stats(&x);
    for (i, got) in out.advantages.iter().enumerate() {
        let want = (x[i] - m) / (s + 1e-4);
        assert!((got - want).abs() < 1e-9, "row {i}: {got} vs {want}");
    }
    // Without the functions' values it says what it needs.
    let scheme = credit::scheme("grpo").unwrap();
    let params = resolve(scheme, "trl", &sets);
    let mut plain = small_batch(&[0.0; 6], &masks, &[0, 0, 0, 1, 1, 1]);
    assert!(run(scheme, &params, &mut plain).unwrap_err().contains("reward function"));
}
