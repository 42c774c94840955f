//! Process credit on tiny hand-made logs: each scheme moves credit the way it intends, relative to
//! the outcome-only GRPO broadcast.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use vantage::credit::{self, Params, Support};
use vantage::load::{LoadReport, load_bytes};
use vantage::model::Run;

const LOG: &str = r#"{"vantage": 1}
{"type": "trajectory", "id": "win", "group": "g", "outcome": {"reward": 1}, "steps": [{"role": "progress", "thought": "a", "first_error": false}, {"role": "regression", "thought": "b"}, {"role": "progress", "thought": "c"}]}
{"type": "trajectory", "id": "lose", "group": "g", "outcome": {"reward": 0}, "steps": [{"role": "exploration", "thought": "d", "first_error": false}, {"role": "progress", "thought": "e", "first_error": false}, {"role": "regression", "thought": "f", "first_error": true}, {"thought": "g"}]}
"#;

fn run() -> Run {
    load_bytes("tiny.jsonl", LOG.as_bytes(), &mut LoadReport::new("tiny.jsonl")).unwrap()
}

fn credit_of(run: &Run, id: &str, sets: &[(&str, &str)]) -> Vec<f32> {
    let scheme = credit::scheme(id).unwrap();
    assert_eq!(scheme.supports(run), Support::Yes, "{id}");
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let params = Params::resolve(scheme, None, &sets).unwrap();
    scheme.compute(run, &params).unwrap().step.clone()
}

#[test]
fn triage_lowers_a_regression_step_that_grpo_credits_like_the_rest() {
    let run = run();
    let grpo = credit_of(&run, "grpo", &[]);
    let triage = credit_of(&run, "triage", &[("whiten", "false")]);
    // GRPO broadcasts one value per trajectory: the regression step of the win equals its progress steps.
    assert_eq!(grpo[0], grpo[1]);
    assert!(triage[1] < triage[0], "regression below progress: {triage:?}");
    // Additive: A + w·c, with w = 0.5, c(progress) = 1, c(regression) = −0.5.
    assert!((triage[0] - (grpo[0] + 0.5)).abs() < 1e-6);
    assert!((triage[1] - (grpo[1] - 0.25)).abs() < 1e-6);
    // An unlabelled step gets c_unlabeled = 0.
    assert!((triage[6] - grpo[6]).abs() < 1e-6);
}

#[test]
fn triage_with_all_constants_zero_is_its_outcome_advantage() {
    let run = run();
    let zero = [
        ("c_progress", "0"),
        ("c_exploration", "0"),
        ("c_infrastructure", "0"),
        ("c_regression", "0"),
        ("whiten", "false"),
    ];
    assert_eq!(credit_of(&run, "triage", &zero), credit_of(&run, "grpo", &[("level", "step")]));
}

#[test]
fn fitted_role_constants_recover_the_constants_used() {
    let run = run();
    let triage = credit_of(&run, "triage", &[("whiten", "false")]);
    let grpo = credit_of(&run, "grpo", &[]);
    let per_trajectory: Vec<f32> =
        run.trajectories.ids().map(|t| grpo[run.trajectories.path_offsets[t.index()] as usize]).collect();
    let fitted = credit::triage::fit_role_constants(&run, &triage, &per_trajectory);
    assert!((fitted["progress"].0 - 0.5).abs() < 1e-6);
    assert!((fitted["regression"].0 + 0.25).abs() < 1e-6);
    assert!((fitted["exploration"].0 - 0.25).abs() < 1e-6);
    assert_eq!(fitted["progress"].1, 3);
}

#[test]
fn first_error_keeps_the_correct_prefix_of_a_failure_and_penalizes_from_the_error() {
    let run = run();
    let grpo = credit_of(&run, "grpo", &[]);
    let split = credit_of(&run, "first_error", &[]);
    // The failed trajectory is steps 3..7; its first error is its third step (index 5).
    assert!(grpo[3] < 0.0 && grpo[4] < 0.0);
    assert_eq!(split[3], 0.0, "the verified prefix is no longer punished");
    assert_eq!(split[4], 0.0);
    assert!((split[5] - (grpo[5] - 0.5)).abs() < 1e-6, "penalized from the error on");
    assert!((split[6] - (grpo[6] - 0.5)).abs() < 1e-6);
    // The win has no labelled error: unchanged.
    assert_eq!(&split[0..3], &grpo[0..3]);
}
