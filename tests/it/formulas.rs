//! Credit formulas (docs/EXPRESSIONS.md): the built-ins written as formulas equal the built-in
//! schemes on every sample run; a formula and its algebraic rewrite agree, and scans and
//! reductions on random runs match a plain loop (proptest); bad formulas get errors that point
//! at the place.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use std::path::Path;

use proptest::prelude::*;
use vantage::credit::expr::{Formula, builtins::BUILTINS};
use vantage::credit::{self, Support};
use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;

const SAMPLES: &[&str] = &[
    "math_grpo_prm.jsonl",
    "alfworld_roles.jsonl",
    "search_qa_rag.jsonl",
    "tree_rollouts.jsonl",
    "verl_token_batch.jsonl",
];

fn sample(name: &str) -> Run {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs").join(name);
    load_bytes(name, &std::fs::read(&path).unwrap(), &mut LoadReport::new(name)).unwrap()
}

fn close(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= 2e-6 * a.abs().max(b.abs()).max(1.0)
}

/// Where two credit columns differ (the first few), for messages.
fn differences(a: &[f32], b: &[f32]) -> Vec<(usize, f32, f32)> {
    a.iter().zip(b).enumerate().filter(|(_, (x, y))| !close(**x, **y)).map(|(k, (x, y))| (k, *x, *y)).take(5).collect()
}

/// The step score the PRM scheme reads with `score=auto`.
fn auto_score(run: &Run) -> Option<&'static str> {
    credit::SCORE_NAMES.iter().copied().find(|n| run.nodes.scores.contains_key(*n))
}

#[test]
fn every_built_in_written_as_a_formula_equals_the_built_in_scheme_on_every_sample_run() {
    let mut checked = vec![0usize; BUILTINS.len()];
    for name in SAMPLES {
        let run = sample(name);
        for (b, builtin) in BUILTINS.iter().enumerate() {
            let scheme = credit::scheme(builtin.scheme).unwrap();
            if let Support::No(_) = scheme.supports(&run) {
                continue;
            }
            let sets: Vec<(String, String)> =
                builtin.settings.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
            let expected = credit::compute(scheme, &run, None, &sets).unwrap();
            // The PRM form reads the score the scheme picks.
            let text = match auto_score(&run) {
                Some(score) => builtin.text.replace("let p = prm", &format!("let p = {score}")),
                None => builtin.text.to_owned(),
            };
            let got = match Formula::parse(&text).unwrap().credit(&run) {
                Ok(credit) => credit,
                // The trainer estimators also read env and token rewards; the formulas read R.
                Err(e) if e.to_string().contains("no outcome rewards") => continue,
                Err(e) => panic!("{} on {name}: {e}", builtin.name),
            };
            assert_eq!(got.step.len(), expected.step.len());
            let diff = differences(&got.step, &expected.step);
            assert!(
                diff.is_empty(),
                "{} on {name} differs from {}: (position, formula, scheme) {diff:?}",
                builtin.name,
                builtin.scheme
            );
            checked[b] += 1;
        }
    }
    for (builtin, count) in BUILTINS.iter().zip(&checked) {
        assert!(*count > 0, "{} was checked on no sample run", builtin.name);
    }
}

#[test]
fn a_formula_reading_another_schemes_credit_mixes_with_it() {
    let run = sample("math_grpo_prm.jsonl");
    let grpo = credit::compute(credit::scheme("grpo").unwrap(), &run, None, &Vec::new()).unwrap();
    let half = Formula::parse("$w = 0.5\ncredit(\"grpo\") * $w + prm * 0").unwrap().credit(&run).unwrap();
    let prm = &run.nodes.scores["prm"];
    for (k, (h, g)) in half.step.iter().zip(&grpo.step).enumerate() {
        let p = prm[run.trajectories.path_nodes[k].index()];
        let want = if p.is_nan() { f32::NAN } else { g * 0.5 };
        assert!(close(*h, want), "{k}: {h} vs {want}");
    }
}

#[test]
fn a_parameter_moved_by_a_slider_changes_the_text_and_the_credit() {
    let run = sample("math_grpo_prm.jsonl");
    let formula = Formula::parse("$w = 0.3 in [0, 1]\nR * $w").unwrap();
    let moved = formula.with_param("w", 0.75).unwrap();
    assert_eq!(moved, "$w = 0.75 in [0, 1]\nR * $w");
    let credit = Formula::parse(&moved).unwrap().credit(&run).unwrap();
    let first = run.trajectories.reward[0];
    assert!(close(credit.step[0], first * 0.75));
    assert!(formula.with_param("nope", 1.0).is_none());
}

#[test]
fn a_token_formula_gives_token_credit_and_step_credit_from_it() {
    let run = sample("verl_token_batch.jsonl");
    let credit = Formula::parse("R - mean(R, group) + 0 * logprob").unwrap().credit(&run).unwrap();
    let token = credit.token.as_ref().unwrap();
    assert_eq!(token.len(), run.tokens.len);
    let tr = &run.trajectories;
    for t in tr.ids() {
        let members = run.groups.members(tr.group[t.index()]);
        let rewards: Vec<f32> = members.iter().map(|m| tr.reward[m.index()]).filter(|r| !r.is_nan()).collect();
        let mean = rewards.iter().map(|&r| f64::from(r)).sum::<f64>() / rewards.len() as f64;
        let want = tr.reward[t.index()] - mean as f32;
        let logprob = run.tokens.logprob.as_ref().unwrap();
        for k in tr.token_range(t) {
            let want = if logprob[k].is_nan() { f32::NAN } else { want };
            assert!(close(token[k], want), "token {k}: {} vs {want}", token[k]);
        }
    }
    assert_eq!(credit.step.len(), tr.path_nodes.len());
}

/// A table of bad formulas, the run they meet, and what their error must say (with the place).
#[test]
fn bad_formulas_get_errors_pointing_at_the_place() {
    let math = sample("math_grpo_prm.jsonl");
    let agent = sample("alfworld_roles.jsonl");
    let cases: &[(&str, &Run, &str)] = &[
        ("R - mean(R, group) + judge", &math, "`judge` at 22: this run has no step score named judge; it has prm"),
        ("(R - ", &math, "at 6: expected"),
        ("mean(R, group", &math, "at 14: expected"),
        ("R R", &math, "at 3: expected an operator or the end of the formula"),
        ("mean(R)", &math, "`mean` at 1: takes (x, scope)"),
        ("mean(R, everyone)", &math, "at 9: mean needs a scope here: group, trajectory, train_step, batch, siblings"),
        ("std(R, group, sometimes)", &math, "at 15: the estimator is unbiased or biased"),
        ("frobnicate(R)", &math, "`frobnicate` at 1: no function named frobnicate"),
        (
            "R + wat",
            &math,
            "`wat` at 5: no column, term or parameter named wat; step scores: prm; outcome components: acc, format",
        ),
        ("R * $w", &math, "`$w` at 5: no parameter $w"),
        ("$w = 2 in [0, 1]\nR", &math, "at 1:6: $w = 2 is outside its range [0, 1]"),
        ("role + 1", &agent, "at 1: the left of + must be a number; this is a label"),
        ("if(R, 1, 0)", &math, "at 4: the condition of if must be a condition"),
        ("discounted(prm, $g)\n", &math, "`$g` at 17: no parameter $g"),
        ("discounted(prm, prm)", &math, "at 17: the discount γ must be a constant"),
        ("credit(\"nope\")", &math, "at 8: unknown scheme \"nope\""),
        ("credit(\"grpo:nope\")", &math, "at 8: grpo has no preset nope"),
        ("credit(\"triage\")", &math, "at 8: triage cannot run here: needs role labels on steps"),
        ("mc_mean", &math, "`mc_mean` at 1: this run logs no Monte-Carlo statistics"),
        ("logprob", &math, "`logprob` at 1: this run logs no token logprobs"),
        ("let group = R\ngroup", &math, "`group` at 1:5: is a reserved word"),
        ("mean(logprob, siblings)", &sample("verl_token_batch.jsonl"), "at 6: mean over siblings works on steps"),
        ("", &math, "at 1: expected a number, a name, a call or `(`, found the end of the formula"),
    ];
    for (text, run, want) in cases {
        let err = match Formula::parse(text) {
            Ok(formula) => formula.credit(run).err().unwrap_or_else(|| panic!("{text:?} should fail")),
            Err(e) => e,
        };
        let message = err.to_string();
        assert!(message.starts_with(want) || message.contains(want), "{text:?}: {message:?} should say {want:?}");
    }
}

/// Formulas made of random pieces of the language: each parses or gets an error, and each that
/// parses is checked and computed (or refused) on every sample run, never panicking.
fn pieces() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "R",
        "prm",
        "judge",
        "success",
        "t",
        "depth",
        "env_reward",
        "mc_mean",
        "logprob",
        "mask",
        "nan",
        "true",
        "role",
        "\"progress\"",
        "(",
        ")",
        ",",
        " + ",
        " - ",
        " * ",
        " / ",
        " ^ ",
        " == ",
        " < ",
        " and ",
        " not ",
        "mean(",
        "std(",
        "var(",
        "rank(",
        "count(",
        "min(",
        "sum(",
        "group",
        "batch",
        "siblings",
        "trajectory",
        "train_step",
        "unbiased",
        "biased",
        "revcumsum(",
        "discounted(",
        "cummin(",
        "prefix(",
        "suffix(",
        "value(node)",
        "value(parent)",
        "parent(",
        "children_mean(",
        "whiten(",
        "by=tokens",
        "eps=1e-6",
        "credit(\"grpo\")",
        "credit(\"treeps_rag\")",
        "if(",
        "coalesce(",
        "clamp(",
        "log(",
        "0",
        "1e-6",
        "0.5",
        "$w",
        "$w = 0.5\n",
        "let a = ",
        "a",
        "\n",
        ";",
    ];
    prop::collection::vec(prop::sample::select(PIECES), 0..24).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_formula_parses_or_errs_and_computes_or_errs_without_a_panic(text in pieces()) {
        thread_local! {
            static RUNS: Vec<Run> = SAMPLES.iter().map(|s| sample(s)).collect();
        }
        if let Ok(formula) = Formula::parse(&text) {
            RUNS.with(|runs| {
                for run in runs {
                    if let Ok(credit) = formula.credit(run) {
                        assert_eq!(credit.step.len(), run.trajectories.path_nodes.len());
                    }
                }
            });
        }
    }
}

// Random runs for the properties below: groups at a few training steps, trajectories with an
// outcome (sometimes missing) and steps with a `prm` score (sometimes missing) and a first error.

#[derive(Clone, Debug)]
struct Traj {
    reward: Option<f64>,
    scores: Vec<Option<f64>>,
    first_error: Option<usize>,
}

fn run_strategy() -> impl Strategy<Value = Vec<Vec<Traj>>> {
    let score = prop::option::weighted(0.9, (-100i32..100).prop_map(|v| f64::from(v) / 50.0));
    let traj =
        (prop::option::weighted(0.9, (-4i32..5).prop_map(f64::from)), prop::collection::vec(score, 1..7), 0usize..8)
            .prop_map(|(reward, scores, e)| {
                let first_error = (e < scores.len()).then_some(e);
                Traj { reward, scores, first_error }
            });
    prop::collection::vec(prop::collection::vec(traj, 1..6), 1..6)
}

fn to_run(groups: &[Vec<Traj>]) -> Run {
    let mut text = String::from("{\"vantage\":1,\"name\":\"random\"}\n");
    for (g, trajectories) in groups.iter().enumerate() {
        text.push_str(&format!("{{\"type\":\"group\",\"id\":\"g{g}\",\"train_step\":{},\"prompt\":\"p\"}}\n", g % 2));
        for (i, t) in trajectories.iter().enumerate() {
            let steps: Vec<String> = t
                .scores
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let score = s.map_or_else(String::new, |s| format!(",\"scores\":{{\"prm\":{s}}}"));
                    let error = t.first_error.map_or_else(String::new, |e| format!(",\"first_error\":{}", e == k));
                    format!("{{\"kind\":\"think\",\"thought\":\"g{g} r{i} s{k}\"{score}{error}}}")
                })
                .collect();
            let outcome = t.reward.map_or_else(|| "{}".to_owned(), |r| format!("{{\"reward\":{r}}}"));
            text.push_str(&format!(
                "{{\"type\":\"trajectory\",\"id\":\"g{g}-r{i}\",\"group\":\"g{g}\",\"outcome\":{outcome},\"steps\":[{}]}}\n",
                steps.join(",")
            ));
        }
    }
    load_bytes("random.jsonl", text.as_bytes(), &mut LoadReport::new("random.jsonl")).unwrap()
}

fn eval(run: &Run, text: &str) -> Vec<f32> {
    Formula::parse(text).unwrap().credit(run).unwrap_or_else(|e| panic!("{text}: {e}")).step.clone()
}

fn nan_or(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

/// Whether a random run can be read by the formulas below (some outcome and some score).
fn usable(groups: &[Vec<Traj>]) -> bool {
    let all = || groups.iter().flatten();
    all().any(|t| t.reward.is_some())
        && all().any(|t| t.scores.iter().any(Option::is_some))
        && all().any(|t| t.first_error.is_some())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_formula_and_its_algebraic_rewrite_give_the_same_credit(groups in run_strategy()) {
        prop_assume!(usable(&groups));
        let run = to_run(&groups);
        let pairs = [
            ("(R - mean(R, group)) / (std(R, group) + 1)", "R / (std(R, group) + 1) - mean(R, group) / (std(R, group) + 1)"),
            ("let p = coalesce(prm, 0)\nrevcumsum(p)", "let p = coalesce(prm, 0)\nsum(p, trajectory) - cumsum(p) + p"),
            ("discounted(prm, 1)", "revcumsum(prm)"),
            ("mean(R, group) * count(R, group)", "sum(R, group)"),
            ("$w = 0.5\n2 * $w * R", "R"),
            ("let a = prm - 1\nlet b = a * 2\nb / 2 + 1", "prm"),
            ("prefix(prm) + suffix(prm)", "prm"),
            ("if(before_error, prm, 0)", "prefix(prm)"),
            ("-cummax(-prm)", "cummin(prm)"),
            ("var(R, train_step, biased)", "mean(R ^ 2, train_step) - mean(R, train_step) ^ 2"),
            ("std(R, batch) ^ 2", "var(R, batch)"),
        ];
        for (a, b) in pairs {
            let (x, y) = (eval(&run, a), eval(&run, b));
            for (k, (p, q)) in x.iter().zip(&y).enumerate() {
                prop_assert!((p.is_nan() && q.is_nan()) || (p - q).abs() <= 1e-4 * p.abs().max(q.abs()).max(1.0), "{a} vs {b} at {k}: {p} vs {q}");
            }
        }
    }

    #[test]
    fn scans_and_reductions_match_a_plain_loop(groups in run_strategy(), gamma in 0.0f64..1.0) {
        prop_assume!(usable(&groups));
        let run = to_run(&groups);
        let formulas = [
            "mean(R, group)".to_owned(),
            "std(R, group)".to_owned(),
            "sum(prm, trajectory)".to_owned(),
            "max(prm, batch)".to_owned(),
            "rank(R, group)".to_owned(),
            format!("discounted(prm, {gamma})"),
            "cummin(prm)".to_owned(),
            "count(prm, group)".to_owned(),
            "mean(R, train_step)".to_owned(),
        ];
        let got: Vec<Vec<f32>> = formulas.iter().map(|f| eval(&run, f)).collect();
        let mut k = 0;
        let all: Vec<&Traj> = groups.iter().flatten().collect();
        for (g, trajectories) in groups.iter().enumerate() {
            let rewards: Vec<f64> = trajectories.iter().filter_map(|t| t.reward).collect();
            let scores_of = |ts: &[Traj]| -> Vec<f64> { ts.iter().flat_map(|t| t.scores.iter().flatten().copied()).collect() };
            let n = rewards.len() as f64;
            let mean = rewards.iter().sum::<f64>() / n;
            let std = (rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            let std = if rewards.len() < 2 { f64::NAN } else { std };
            let max = all.iter().flat_map(|t| t.scores.iter().flatten()).copied().fold(f64::NAN, f64::max);
            let same_step: Vec<f64> = groups.iter().enumerate().filter(|(h, _)| h % 2 == g % 2).flat_map(|(_, ts)| ts.iter().filter_map(|t| t.reward)).collect();
            let step_mean = same_step.iter().sum::<f64>() / same_step.len() as f64;
            let group_count = scores_of(trajectories).len() as f64;
            for t in trajectories {
                let r = nan_or(t.reward);
                let rank = if r.is_nan() {
                    f64::NAN
                } else {
                    let below = rewards.iter().filter(|&&x| x < r).count() as f64;
                    let equal = rewards.iter().filter(|&&x| x == r).count() as f64;
                    below + (equal + 1.0) / 2.0
                };
                let present: Vec<f64> = t.scores.iter().flatten().copied().collect();
                let sum = if present.is_empty() { f64::NAN } else { present.iter().sum() };
                let s: Vec<f64> = t.scores.iter().map(|&s| nan_or(s)).collect();
                for step in 0..s.len() {
                    let discounted: f64 = s[step..].iter().enumerate().map(|(j, v)| gamma.powi(j as i32) * v).sum();
                    let cummin = s[..=step].iter().copied().fold(f64::INFINITY, |a, b| if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) });
                    let want = [mean, std, sum, max, rank, discounted, cummin, group_count, step_mean];
                    for (f, w) in formulas.iter().zip(want) {
                        let v = f64::from(got[formulas.iter().position(|x| x == f).unwrap()][k]);
                        prop_assert!((v.is_nan() && w.is_nan()) || (v - w).abs() <= 1e-4 * v.abs().max(w.abs()).max(1.0), "{f} at step {k}: {v} vs {w}");
                    }
                    k += 1;
                }
            }
        }
    }
}

#[test]
fn a_formula_nested_to_the_limit_is_checked_and_computed_on_a_small_stack() {
    use vantage::credit::expr::syntax::MAX_DEPTH;
    let deep = format!("{}-R{}", "abs((".repeat(MAX_DEPTH / 2 - 1), "))".repeat(MAX_DEPTH / 2 - 1));
    let computed = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || Formula::parse(&deep).unwrap().credit(&sample("math_grpo_prm.jsonl")).map(|c| c.step[0]))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(computed.unwrap(), 1.0);
    let deeper = format!("{}R{}", "(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
    assert!(Formula::parse(&deeper).unwrap_err().to_string().contains("nested at most 32 deep"));
}

/// The 2026 schemes are callable from a formula, each on a sample that has what it needs, and
/// `credit("ID")` there is the scheme's own credit.
#[test]
fn the_2026_schemes_are_callable_from_a_formula() {
    for &(id, sample) in crate::common::SCHEMES_2026 {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs").join(sample);
        let run = vantage::load::load_bytes(
            sample,
            &std::fs::read(&path).unwrap(),
            &mut vantage::load::LoadReport::new(sample),
        )
        .unwrap();
        let scheme = vantage::credit::scheme(id).unwrap();
        let own = vantage::credit::compute(scheme, &run, None, &Vec::new()).unwrap();
        let called = Formula::parse(&format!("credit(\"{id}\")")).unwrap().credit(&run).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&called.step), bits(&own.step), "{id} on {sample}");
        assert!(own.step.iter().any(|v| v.is_finite() && *v != 0.0), "{id} on {sample}: no credit");
    }
}
