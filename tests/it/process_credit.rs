//! Process credit on tiny hand-made logs: each scheme moves credit the way it intends, relative to
//! the outcome-only GRPO broadcast.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use vantage::credit::engine::tree::Merge;
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
    let fitted = credit::schemes::triage::fit_role_constants(&run, &triage, &per_trajectory);
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

/// The reference's worked example: t1 S0→S1→S2 with rewards [0, 0, 1], t2 S0→S1→S3→S3 with 0, γ = 0.95.
const GIGPO_LOG: &str = r#"{"vantage": 1}
{"type": "trajectory", "id": "t1", "group": "g", "outcome": {"reward": 1}, "steps": [{"state": "S0", "env_reward": 0}, {"state": "S1", "env_reward": 0}, {"state": "S2", "env_reward": 1}]}
{"type": "trajectory", "id": "t2", "group": "g", "outcome": {"reward": 0}, "steps": [{"state": "S0", "env_reward": 0}, {"state": "S1", "env_reward": 0}, {"state": "S3", "env_reward": 0}, {"state": "S3", "env_reward": 0}]}
"#;

#[test]
fn gigpo_reproduces_the_worked_example() {
    let run = load_bytes("gigpo.jsonl", GIGPO_LOG.as_bytes(), &mut LoadReport::new("gigpo.jsonl")).unwrap();
    let close = |got: &[f32], want: &[f32]| got.iter().zip(want).all(|(g, w)| (g - w).abs() < 2e-3);
    let std_norm = credit_of(&run, "gigpo", &[("mode", "mean_std_norm")]);
    let want = [1.776, 1.776, 1.069, -1.509, -1.509, -0.802, -0.802];
    assert!(close(&std_norm, &want), "{std_norm:?}");
    let mean_norm = credit_of(&run, "gigpo", &[("mode", "mean_norm")]);
    let want = [1.023, 1.046, 0.571, -0.880, -0.904, -0.429, -0.429];
    assert!(close(&mean_norm, &want), "{mean_norm:?}");
}

#[test]
fn gigpo_with_omega_zero_is_its_episode_advantage() {
    let run = load_bytes("gigpo.jsonl", GIGPO_LOG.as_bytes(), &mut LoadReport::new("gigpo.jsonl")).unwrap();
    let gigpo = credit_of(&run, "gigpo", &[("omega", "0"), ("mode", "mean_norm")]);
    // Cross-step statistics: mean over the 7 step rows of R = (1, 1, 1, 0, 0, 0, 0).
    let mean = 3.0 / 7.0;
    for (k, v) in gigpo.iter().enumerate() {
        let r = if k < 3 { 1.0 } else { 0.0 };
        assert!((v - (r - mean)).abs() < 1e-6, "{k}: {v}");
    }
}

/// The reference's example tree: root → A (→ A1: 1, A2: 0) and B (→ B1: 0, B2: 0).
const TREE_LOG: &str = r#"{"vantage": 1}
{"type": "tree", "id": "t", "group": "g", "nodes": [{"id": "A", "thought": "a"}, {"id": "B", "thought": "b"}, {"id": "A1", "parent": "A", "outcome": {"reward": 1}}, {"id": "A2", "parent": "A", "outcome": {"reward": 0}}, {"id": "B1", "parent": "B", "outcome": {"reward": 0}}, {"id": "B2", "parent": "B", "outcome": {"reward": 0}}]}
"#;

#[test]
fn treeps_rag_reproduces_the_worked_example() {
    let run = load_bytes("tree.jsonl", TREE_LOG.as_bytes(), &mut LoadReport::new("tree.jsonl")).unwrap();
    let credit = credit_of(&run, "treeps_rag", &[]);
    let by_key = |key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        let start = run.trajectories.path_offsets[t.index()] as usize;
        credit[start..start + 2].to_vec()
    };
    assert_eq!(by_key("t/A1"), [0.25, 0.5]);
    assert_eq!(by_key("t/A2"), [0.25, -0.5]);
    assert_eq!(by_key("t/B1"), [-0.25, 0.0]);
    assert_eq!(by_key("t/B2"), [-0.25, 0.0]);
    // GRPO gives the whole A1 path one value; TreePS-RAG separates the shared step from the choice.
    let grpo = credit_of(&run, "grpo", &[]);
    let t = run.trajectory_by_key("t/A1").unwrap().index();
    let start = run.trajectories.path_offsets[t] as usize;
    assert_eq!(grpo[start], grpo[start + 1]);
}

fn sample(name: &str) -> Run {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs").join(name);
    let bytes = std::fs::read(&path).unwrap();
    load_bytes(name, &bytes, &mut LoadReport::new(name)).unwrap()
}

/// On any tree, leaf-mean step utilities telescope along a path to (outcome − root value), and the
/// root value is the mean outcome of the group's leaves; on independent chains the sum is the
/// mean-baseline outcome advantage. With merged prefixes a rollout can end inside the merged tree
/// (a truncated rollout that another one continues, or two identical rollouts), so there the sum
/// is V(last step) − V(root).
#[test]
fn treeps_rag_telescopes_on_every_sample_tree_and_chain() {
    for (name, merge) in [
        ("tree_rollouts.jsonl", "none"),
        ("math_grpo_prm.jsonl", "none"),
        ("math_grpo_prm.jsonl", "prefix"),
        ("alfworld_roles.jsonl", "prefix"),
    ] {
        let run = sample(name);
        let credit = credit_of(&run, "treeps_rag", &[("merge", merge)]);
        let tree = credit::engine::tree::build(
            &run,
            credit::kernels::tree_value::ValueMode::LeafMean,
            if merge == "prefix" { Merge::Prefix } else { Merge::None },
        );
        let tr = &run.trajectories;
        for g in run.groups.ids() {
            let rewards: Vec<f32> = run.groups.members(g).iter().map(|t| tr.reward[t.index()]).collect();
            let mean = rewards.iter().sum::<f32>() / rewards.len() as f32;
            assert!((tree.root_value[g.index()] - mean).abs() < 1e-5, "{name}: root value is the mean of the leaves");
            for &t in run.groups.members(g) {
                let start = tr.path_offsets[t.index()] as usize;
                let end = start + tr.num_steps(t);
                let sum: f32 = credit[start..end].iter().sum();
                // Always: the path telescopes to V(last step) − V(root).
                let last = tree.value[tree.node_of[end - 1] as usize];
                assert!((sum - (last - mean)).abs() < 1e-4, "{name} {merge}: {sum} vs {}", last - mean);
                // Where trajectories end at leaves of their own (trees, separate chains), V(last) is the outcome.
                if merge == "none" {
                    assert!((sum - (tr.reward[t.index()] - mean)).abs() < 1e-4, "{name}: {sum}");
                }
            }
        }
    }
}

#[test]
fn prefix_merging_shares_identical_first_steps() {
    let run = sample("alfworld_roles.jsonl");
    let merged = credit::engine::tree::build(&run, credit::kernels::tree_value::ValueMode::LeafMean, Merge::Prefix);
    let separate = credit::engine::tree::build(&run, credit::kernels::tree_value::ValueMode::LeafMean, Merge::None);
    assert!(
        merged.parent.len() < separate.parent.len(),
        "merging finds shared prefixes: {} vs {}",
        merged.parent.len(),
        separate.parent.len()
    );
}

/// Every scheme runs on every sample it supports (credit aligned with the paths, finite where the
/// outcome exists) and refuses the others with a reason; every scheme runs on at least one sample.
#[test]
fn every_scheme_runs_on_every_sample_it_supports() {
    let mut ran = std::collections::BTreeSet::new();
    for name in [
        "math_grpo_prm.jsonl",
        "alfworld_roles.jsonl",
        "search_qa_rag.jsonl",
        "tree_rollouts.jsonl",
        "verl_token_batch.jsonl",
        "terminal_turn_scores.jsonl",
        "prime_rl_episodes.jsonl",
    ] {
        let run = sample(name);
        for scheme in credit::SCHEMES {
            let id = scheme.info().id;
            match scheme.supports(&run) {
                Support::Yes => {
                    let credit = match credit::compute(*scheme, &run, None, &Vec::new()) {
                        Ok(credit) => credit,
                        // verl's pass@k raises on a group of one (the terminal sample's hotfix).
                        Err(credit::CreditError::Failed { reason, .. })
                            if id == "grpo_passk" && run.groups.ids().any(|g| run.groups.members(g).len() == 1) =>
                        {
                            assert!(reason.contains("at least 2 samples"), "{name} {id}: {reason}");
                            continue;
                        }
                        Err(e) => panic!("{name} {id}: {e}"),
                    };
                    assert_eq!(credit.step.len(), run.num_path_steps(), "{name} {id}");
                    let finite = credit.step.iter().filter(|v| v.is_finite()).count();
                    assert!(finite > 0, "{name} {id}: no finite credit");
                    assert!(credit.step.iter().all(|v| !v.is_infinite()), "{name} {id}");
                    if let Some(token) = &credit.token {
                        assert_eq!(token.len(), run.tokens.len, "{name} {id}");
                    }
                    ran.insert(id);
                }
                Support::No(reason) => assert!(!reason.is_empty(), "{name} {id}"),
            }
        }
    }
    let all: std::collections::BTreeSet<&str> = credit::SCHEMES.iter().map(|s| s.info().id).collect();
    assert_eq!(ran, all, "schemes no sample exercises");
}

#[test]
fn vineppo_reproduces_the_worked_example() {
    // The prompt's value is the group's mean outcome: 4 of 9 rollouts succeed, so V(s_0) = 4/9.
    let mut log = String::from("{\"vantage\": 1}\n");
    log.push_str(r#"{"type": "trajectory", "id": "x", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "1", "mc": {"n": 9, "mean": 0.6666667}}, {"thought": "2", "mc": {"n": 9, "mean": 0.22222222}}, {"thought": "3"}]}"#);
    log.push('\n');
    for i in 0..8 {
        log.push_str(&format!(
            "{{\"type\": \"trajectory\", \"id\": \"o{i}\", \"group\": \"g\", \"outcome\": {{\"reward\": {}}}, \"steps\": [{{\"thought\": \"o\"}}]}}\n",
            u8::from(i < 4)
        ));
    }
    let run = load_bytes("vine.jsonl", log.as_bytes(), &mut LoadReport::new("vine.jsonl")).unwrap();
    let credit = credit_of(&run, "vineppo", &[("whiten", "false")]);
    let want = [0.222, -0.444, -0.222];
    for (got, want) in credit[..3].iter().zip(want) {
        assert!((got - want).abs() < 1e-3, "{:?}", &credit[..3]);
    }
}

#[test]
fn treerpo_reproduces_both_variants_of_the_worked_example() {
    let run = load_bytes("tree.jsonl", TREE_LOG.as_bytes(), &mut LoadReport::new("tree.jsonl")).unwrap();
    let path = |credit: &[f32], key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        let start = run.trajectories.path_offsets[t.index()] as usize;
        [credit[start], credit[start + 1]]
    };
    let close = |a: [f32; 2], b: [f32; 2]| (a[0] - b[0]).abs() < 1e-3 && (a[1] - b[1]).abs() < 1e-3;
    let yang = credit_of(&run, "treerpo", &[]);
    assert!(close(path(&yang, "t/A1"), [0.707, 0.707]), "{yang:?}");
    assert!(close(path(&yang, "t/A2"), [0.707, -0.707]));
    assert!(close(path(&yang, "t/B1"), [-0.707, 0.0]));
    let sapir = credit_of(&run, "treerpo", &[("std", "false"), ("value", "leaf_mean")]);
    assert!(close(path(&sapir, "t/A1"), [0.25, 0.5]), "{sapir:?}");
    assert!(close(path(&sapir, "t/B2"), [-0.25, 0.0]));
}

#[test]
fn prm_process_credits_the_flawed_step_where_grpo_credits_the_outcome() {
    let run = sample("math_grpo_prm.jsonl");
    let prm = credit_of(&run, "prm_process", &[]);
    let grpo = credit_of(&run, "grpo", &[]);
    // A correct answer through a flawed step: GRPO rewards every step, the process form does not
    // reward the step flagged as the first error as much as the steps before it.
    let tr = &run.trajectories;
    let lucky = tr
        .ids()
        .find(|&t| tr.reward[t.index()] == 1.0 && tr.path(t).iter().any(|&n| run.nodes.first_error(n) == Some(true)))
        .unwrap();
    let start = tr.path_offsets[lucky.index()] as usize;
    let error = tr.path(lucky).iter().position(|&n| run.nodes.first_error(n) == Some(true)).unwrap();
    assert!(grpo[start + error] >= 0.0);
    assert!(prm[start + error] < prm[start], "{:?}", &prm[start..start + tr.num_steps(lucky)]);
}

#[test]
fn prm_process_with_one_step_is_grpo_on_that_steps_score() {
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 0.9}, "steps": [{"scores": {"prm": 0.9}}]}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 0.2}, "steps": [{"scores": {"prm": 0.2}}]}
{"type": "trajectory", "id": "c", "group": "g", "outcome": {"reward": 0.4}, "steps": [{"scores": {"prm": 0.4}}]}
"#;
    let run = load_bytes("one.jsonl", log.as_bytes(), &mut LoadReport::new("one.jsonl")).unwrap();
    let prm = credit_of(&run, "prm_process", &[]);
    let grpo = credit_of(&run, "grpo", &[]);
    for (p, g) in prm.iter().zip(&grpo) {
        assert!((p - g).abs() < 1e-6, "{prm:?} vs {grpo:?}");
    }
}

#[test]
fn hybrid_mixes_outcome_and_process_by_its_weights() {
    let run = sample("math_grpo_prm.jsonl");
    let grpo = credit_of(&run, "grpo", &[]);
    let outcome_only = credit_of(&run, "hybrid", &[("beta", "0")]);
    for (h, g) in outcome_only.iter().zip(&grpo) {
        assert!((h - g).abs() < 1e-5, "β = 0 is the outcome advantage");
    }
    let mixed = credit_of(&run, "hybrid", &[("beta", "1")]);
    let process = credit_of(&run, "hybrid", &[("alpha", "0"), ("beta", "1")]);
    for ((m, g), p) in mixed.iter().zip(&grpo).zip(&process) {
        assert!((m - (g + p)).abs() < 1e-4, "additive");
    }
    // Within a trajectory the process part varies from step to step; GRPO does not.
    let t = run.trajectories.ids().next().unwrap();
    let start = run.trajectories.path_offsets[t.index()] as usize;
    let steps = run.trajectories.num_steps(t);
    assert!(process[start..start + steps].windows(2).any(|w| w[0] != w[1]));
}

#[test]
fn length_penalty_prefers_the_shorter_of_two_equal_outcomes() {
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "short", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "a"}]}
{"type": "trajectory", "id": "long", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "a"}, {"thought": "b"}, {"thought": "c"}]}
"#;
    let run = load_bytes("len.jsonl", log.as_bytes(), &mut LoadReport::new("len.jsonl")).unwrap();
    let grpo = credit_of(&run, "grpo", &[]);
    assert!(grpo.iter().all(|&a| a == 0.0), "equal outcomes: GRPO gives nothing");
    let penalized = credit_of(&run, "length_penalty", &[]);
    assert!(penalized[0] > 0.0 && penalized[1] < 0.0, "{penalized:?}");
    let off = credit_of(&run, "length_penalty", &[("lambda", "0")]);
    assert_eq!(off, grpo);
}

#[test]
fn null_rewards_shuffle_within_groups_reproducibly() {
    let run = sample("math_grpo_prm.jsonl");
    let a = credit_of(&run, "null_reward", &[("seed", "7")]);
    let b = credit_of(&run, "null_reward", &[("seed", "7")]);
    let c = credit_of(&run, "null_reward", &[("seed", "8")]);
    assert_eq!(a, b, "the same seed gives the same control");
    assert_ne!(a, c, "another seed gives another control");
    let grpo = credit_of(&run, "grpo", &[]);
    assert_ne!(a, grpo);
    // A shuffle keeps each group's rewards, so its advantages are a permutation of GRPO's.
    let tr = &run.trajectories;
    for g in run.groups.ids() {
        let first = |credit: &[f32]| {
            let mut v: Vec<f32> =
                run.groups.members(g).iter().map(|t| credit[tr.path_offsets[t.index()] as usize]).collect();
            v.sort_by(f32::total_cmp);
            v
        };
        assert_eq!(first(&a), first(&grpo));
    }
    let random = credit_of(&run, "null_reward", &[("mode", "random"), ("seed", "3")]);
    assert_eq!(random.len(), grpo.len());
    let format = credit_of(&run, "null_reward", &[("mode", "format_only")]);
    assert!(format.iter().all(|v| v.is_finite()));
}

#[test]
fn prorag_reproduces_the_worked_example() {
    // G = 2, R = [3, −1]; traj 1 steps of 3 and 2 tokens scoring 1.8 and 1.9; traj 2 one step of 4 tokens at −1.7.
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 3}, "steps": [{"scores": {"prm": 1.8}, "token_span": [0, 3]}, {"scores": {"prm": 1.9}, "token_span": [3, 5]}], "tokens": {"mask": [1, 1, 1, 1, 1]}}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": -1}, "steps": [{"scores": {"prm": -1.7}, "token_span": [0, 4]}], "tokens": {"mask": [1, 1, 1, 1]}}
"#;
    let run = load_bytes("prorag.jsonl", log.as_bytes(), &mut LoadReport::new("prorag.jsonl")).unwrap();
    let credit = credit_of(&run, "prorag", &[("format_source", "none")]);
    let want = [0.969, 0.986, -1.042];
    for (got, want) in credit.iter().zip(want) {
        assert!((got - want).abs() < 2e-3, "{credit:?}");
    }
}

#[test]
fn tree_grpo_reproduces_the_worked_example() {
    let log = r#"{"vantage": 1}
{"type": "tree", "id": "t1", "group": "g", "nodes": [{"id": "r"}, {"id": "x", "parent": "r", "outcome": {"reward": 1}}, {"id": "y", "parent": "r", "outcome": {"reward": 0}}]}
{"type": "tree", "id": "t2", "group": "g", "nodes": [{"id": "r"}, {"id": "x", "parent": "r", "outcome": {"reward": 0}}, {"id": "y", "parent": "r", "outcome": {"reward": 0}}]}
"#;
    let run = load_bytes("tg.jsonl", log.as_bytes(), &mut LoadReport::new("tg.jsonl")).unwrap();
    let leaf = |credit: &[f32], key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        credit[run.trajectories.path_offsets[t.index()] as usize]
    };
    let keys = ["t1/x", "t1/y", "t2/x", "t2/y"];
    let check = |sets: &[(&str, &str)], want: [f32; 4]| {
        let credit = credit_of(&run, "tree_grpo", sets);
        for (key, w) in keys.iter().zip(want) {
            assert!((leaf(&credit, key) - w).abs() < 2e-3, "{sets:?} {key}: {}", leaf(&credit, key));
        }
    };
    check(&[], [2.207, -1.207, -0.5, -0.5]);
    check(&[("combination", "2norm")], [0.707, -0.707, 0.0, 0.0]);
    check(&[("combination", "intra")], [0.707, -0.707, 0.0, 0.0]);
}

#[test]
fn treepo_reproduces_the_worked_example() {
    let run = load_bytes("tree.jsonl", TREE_LOG.as_bytes(), &mut LoadReport::new("tree.jsonl")).unwrap();
    let leaf = |credit: &[f32], key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        credit[run.trajectories.path_offsets[t.index()] as usize]
    };
    let keys = ["t/A1", "t/A2", "t/B1", "t/B2"];
    let check = |sets: &[(&str, &str)], want: [f32; 4]| {
        let credit = credit_of(&run, "treepo", sets);
        for (key, w) in keys.iter().zip(want) {
            assert!((leaf(&credit, key) - w).abs() < 2e-3, "{sets:?} {key}: {}", leaf(&credit, key));
        }
    };
    check(&[("whiten", "false")], [0.625, -0.375, -0.125, -0.125]);
    // Whitening weighs positions: the reference whitened 4 tokens per leaf (1.614, −0.968, −0.323);
    // here each leaf has 2 steps, so the unbiased std over 8 positions gives these values.
    check(&[], [1.559, -0.935, -0.312, -0.312]);
    check(&[("whiten", "false"), ("weighting", "group_size")], [0.667, -0.333, -0.167, -0.167]);
}

#[test]
fn treerl_reproduces_the_worked_example_in_all_three_forms() {
    let run = load_bytes("tree.jsonl", TREE_LOG.as_bytes(), &mut LoadReport::new("tree.jsonl")).unwrap();
    let path = |credit: &[f32], key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        let start = run.trajectories.path_offsets[t.index()] as usize;
        [credit[start], credit[start + 1]]
    };
    let check = |sets: &[(&str, &str)], want: [(&str, [f32; 2]); 3]| {
        let credit = credit_of(&run, "treerl", sets);
        for (key, w) in want {
            let got = path(&credit, key);
            assert!((got[0] - w[0]).abs() < 2e-3 && (got[1] - w[1]).abs() < 2e-3, "{sets:?} {key}: {got:?} vs {w:?}");
        }
    };
    check(&[], [("t/A1", [0.471, 1.764]), ("t/A2", [0.471, -0.902]), ("t/B1", [-0.471, -0.431])]);
    check(&[("reweight", "original")], [("t/A1", [0.667, 1.667]), ("t/A2", [0.667, -1.0]), ("t/B1", [-0.667, -0.667])]);
    check(&[("value_form", "paper")], [("t/A1", [0.354, 1.25]), ("t/A2", [0.354, -0.75]), ("t/B1", [-0.354, -0.25])]);
}

#[test]
fn pure_reproduces_the_min_form_example() {
    // P(correct) = [.9, .2, .8] → r = [.8, −.6, .6]; the softmax-min weights put everything on the
    // worst step, so the step returns are about [−.6, −.6, 0] (exact min-form would be [−.6, −.6, .6]).
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 0}, "steps": [{"scores": {"prm": 0.9}}, {"scores": {"prm": 0.2}}, {"scores": {"prm": 0.8}}]}
"#;
    let run = load_bytes("pure.jsonl", log.as_bytes(), &mut LoadReport::new("pure.jsonl")).unwrap();
    let credit = credit_of(&run, "pure", &[("baseline", "none"), ("verifiable", "false"), ("normalize", "false")]);
    let want = [-0.6, -0.6, 0.0];
    for (got, want) in credit.iter().zip(want) {
        assert!((got - want).abs() < 2e-3, "{credit:?}");
    }
    // The min-form does not add the steps up: a long sum of good steps does not outweigh one bad step.
    let uniform = credit_of(
        &run,
        "pure",
        &[("baseline", "none"), ("verifiable", "false"), ("normalize", "false"), ("weighting", "uniform")],
    );
    assert!((uniform[0] - (0.8 - 0.6 + 0.6) / 3.0).abs() < 1e-5);
}

#[test]
fn grpo_care_reproduces_the_worked_example() {
    // acc = [1, 1, 0, 1]; answer likelihoods [.9, .6, .8, .97 → capped .95], one answer token each.
    let mut log = String::from("{\"vantage\": 1}\n");
    for (i, (acc, conf)) in [(1, 0.9f64), (1, 0.6), (0, 0.8), (1, 0.97)].iter().enumerate() {
        log.push_str(&format!(
            "{{\"type\": \"trajectory\", \"id\": \"r{i}\", \"group\": \"g\", \"outcome\": {{\"reward\": {acc}, \"components\": {{\"acc\": {acc}}}}}, \"steps\": [{{\"kind\": \"think\", \"token_span\": [0, 1]}}, {{\"kind\": \"answer\", \"token_span\": [1, 2]}}], \"tokens\": {{\"ref_logprob\": [-0.5, {}]}}}}\n",
            conf.ln()
        ));
    }
    let run = load_bytes("care.jsonl", log.as_bytes(), &mut LoadReport::new("care.jsonl")).unwrap();
    let credit = credit_of(&run, "grpo_care", &[]);
    let first: Vec<f32> =
        run.trajectories.ids().map(|t| credit[run.trajectories.path_offsets[t.index()] as usize]).collect();
    let want = [0.707, 0.0, -1.414, 0.707];
    for (got, want) in first.iter().zip(want) {
        assert!((got - want).abs() < 2e-3, "{first:?}");
    }
    // Without the bonus it is plain GRPO (ε = 1e-4) on acc = [1, 1, 0, 1].
    let plain = credit_of(&run, "grpo_care", &[("bonus", "0")]);
    let grpo = credit_of(&run, "grpo", &[("epsilon", "0.0001")]);
    for (a, b) in plain.iter().zip(&grpo) {
        assert!((a - b).abs() < 1e-5);
    }
}

#[test]
fn spo_tree_reproduces_both_variants_of_the_worked_example() {
    let run = load_bytes("tree.jsonl", TREE_LOG.as_bytes(), &mut LoadReport::new("tree.jsonl")).unwrap();
    let path = |credit: &[f32], key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        let start = run.trajectories.path_offsets[t.index()] as usize;
        [credit[start], credit[start + 1]]
    };
    let official = credit_of(&run, "spo_tree", &[]);
    assert_eq!(path(&official, "t/A1"), [0.25, 0.5]);
    assert_eq!(path(&official, "t/A2"), [0.25, -0.5]);
    // B1 and B2 have the value of their parent: a zero edge, dropped (no credit).
    let b1 = path(&official, "t/B1");
    assert!(b1[0] == -0.25 && b1[1].is_nan(), "{b1:?}");
    let treepo = credit_of(&run, "spo_tree", &[("variant", "treepo_spo"), ("drop_zero", "false")]);
    let close = |got: [f32; 2], want: [f32; 2]| (got[0] - want[0]).abs() < 1e-5 && (got[1] - want[1]).abs() < 1e-5;
    assert!(close(path(&treepo, "t/A1"), [1.0, 0.0]), "{treepo:?}");
    assert!(close(path(&treepo, "t/A2"), [1.0, -2.0]), "{treepo:?}");
    assert!(close(path(&treepo, "t/B1"), [-1.0, 1.0]), "{treepo:?}");
    // GRPO credits both steps of a path alike; SPO separates the shared step from the choice.
    let grpo = credit_of(&run, "grpo", &[]);
    let g = path(&grpo, "t/A2");
    assert_eq!(g[0], g[1]);
}

/// LeTS' worked example: scores [1, .5, 0]; the best rollout searched {d1, d2}, {d2, d3}, {d4}.
const SEARCH_LOG: &str = r#"{"vantage": 1}
{"type": "trajectory", "id": "best", "group": "g", "outcome": {"reward": 1}, "steps": [{"action": "s1", "docs": ["d1", "d2"]}, {"action": "s2", "docs": ["d2", "d3"]}, {"action": "s3", "docs": ["d4"]}, {"action": "answer"}]}
{"type": "trajectory", "id": "half", "group": "g", "outcome": {"reward": 0.5}, "steps": [{"action": "s1", "docs": ["d1", "d2"]}, {"action": "s2", "docs": ["d5"]}, {"action": "answer"}]}
{"type": "trajectory", "id": "none", "group": "g", "outcome": {"reward": 0}, "steps": [{"action": "s1", "docs": ["d9"]}, {"action": "answer"}]}
{"type": "trajectory", "id": "top", "group": "g2", "outcome": {"reward": 1}, "steps": [{"action": "s1", "docs": ["d1", "d2"]}, {"action": "s2", "docs": ["d3"]}, {"action": "answer"}]}
{"type": "trajectory", "id": "mid", "group": "g2", "outcome": {"reward": 0.8}, "steps": [{"action": "s1", "docs": ["d1", "d2"]}, {"action": "s2", "docs": ["d7"]}, {"action": "answer"}]}
{"type": "trajectory", "id": "low", "group": "g2", "outcome": {"reward": 0}, "steps": [{"action": "s1", "docs": ["d9"]}, {"action": "answer"}]}
"#;

#[test]
fn lets_rescales_the_outcome_advantage_per_search_segment() {
    let run = load_bytes("search.jsonl", SEARCH_LOG.as_bytes(), &mut LoadReport::new("search.jsonl")).unwrap();
    let steps = |credit: &[f32], key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        credit[run.trajectories.path_range(t)].to_vec()
    };
    let lets = credit_of(&run, "lets", &[]);
    let grpo = credit_of(&run, "grpo", &[]);
    // GRPO: A = 1 on every step of the best rollout; LeTS: [1.577, −0.155, 1.577] and 1 on the answer.
    assert!(steps(&grpo, "best").iter().all(|&a| (a - 1.0).abs() < 1e-5));
    for (got, want) in steps(&lets, "best").iter().zip([1.577, -0.155, 1.577, 1.0]) {
        assert!((got - want).abs() < 1e-3, "{:?}", steps(&lets, "best"));
    }
    // A rollout with A = 0 is unaffected (the scaling is multiplicative).
    assert!(steps(&lets, "half").iter().all(|&a| a.abs() < 1e-5));
    // In g2 the 0.8 rollout matches the best one: {d1, d2} exactly, {d7} not at all: s = [1, 0],
    // z = ±0.707, so its first segment gains and its second loses against its answer segment.
    let mid = steps(&lets, "mid");
    assert!(
        mid[2] > 0.0 && (mid[0] / mid[2] - 1.707).abs() < 1e-3 && (mid[1] / mid[2] - 0.293).abs() < 1e-3,
        "{mid:?}"
    );
    // The failed rollout gets no step rewards: its outcome advantage everywhere (−1).
    assert!(steps(&lets, "none").iter().all(|&a| (a + 1.0).abs() < 1e-5));
}

#[test]
fn prm_clip_and_delta_refinements_bound_what_repeating_good_steps_can_earn() {
    // Two rollouts: one with three good steps, one with a single good step.
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "long", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "a", "scores": {"prm": 0.9}}, {"thought": "b", "scores": {"prm": 0.9}}, {"thought": "c", "scores": {"prm": 0.9}}]}
{"type": "trajectory", "id": "short", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "d", "scores": {"prm": 0.9}}]}
"#;
    let run = load_bytes("r.jsonl", log.as_bytes(), &mut LoadReport::new("r.jsonl")).unwrap();
    let first =
        |credit: &[f32], key: &str| credit[run.trajectories.path_range(run.trajectory_by_key(key).unwrap()).start];
    // Summing raw scores rewards the longer rollout for repeating good steps.
    let sum = credit_of(&run, "prm_process", &[("form", "agg"), ("agg", "sum")]);
    assert!(first(&sum, "long") > first(&sum, "short"));
    // Delta telescopes each sum to the first score: both rollouts score 0.9, no advantage.
    let delta = credit_of(&run, "prm_process", &[("form", "agg"), ("agg", "sum"), ("refine", "delta")]);
    assert_eq!(first(&delta, "long"), 0.0);
    // Clip at η = 0.9 makes every step worth min(s − η, 0) = 0: again no advantage for length.
    let clip =
        credit_of(&run, "prm_process", &[("form", "agg"), ("agg", "sum"), ("refine", "clip"), ("clip_eta", "0.9")]);
    assert_eq!(first(&clip, "long"), 0.0);
    // Clip at η = 1: each step −0.1, so the longer rollout now sums lower.
    let clip =
        credit_of(&run, "prm_process", &[("form", "agg"), ("agg", "sum"), ("refine", "clip"), ("clip_eta", "1")]);
    assert!(first(&clip, "long") < first(&clip, "short"));
}

#[test]
fn tree_schemes_merge_by_state_key_as_well_as_by_prefix() {
    // Different texts reaching the same states: prefix merging keeps them apart, state keys join them.
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "x", "state": "k0"}, {"thought": "y", "state": "k1"}]}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "z", "state": "k0"}, {"thought": "w", "state": "k2"}]}
"#;
    let run = load_bytes("s.jsonl", log.as_bytes(), &mut LoadReport::new("s.jsonl")).unwrap();
    let steps =
        |credit: &[f32], key: &str| credit[run.trajectories.path_range(run.trajectory_by_key(key).unwrap())].to_vec();
    let prefix = credit_of(&run, "treeps_rag", &[("merge", "prefix")]);
    assert_eq!(steps(&prefix, "a"), [0.5, 0.0]);
    let state = credit_of(&run, "treeps_rag", &[("merge", "state_key")]);
    // k0 is shared (value 0.5 = the root): no credit for it; the split comes at k1 vs k2.
    assert_eq!(steps(&state, "a"), [0.0, 0.5]);
    assert_eq!(steps(&state, "b"), [0.0, -0.5]);
}

/// One trajectory record of the ordering test: group `g`, member `m`, with every kind of step
/// data a step scheme reads (scores, roles, kinds, env rewards, state keys, first errors, docs).
fn ordering_record(g: usize, m: usize) -> String {
    let len = 2 + (g * 3 + m * 5) % 4;
    let roles = ["progress", "exploration", "infrastructure", "regression"];
    let kinds = ["think", "search", "answer"];
    let steps: Vec<String> = (0..len)
        .map(|k| {
            let prm = if (g + m + k) % 7 == 3 { "NaN".to_owned() } else { format!("{}", ((g * 13 + m * 7 + k * 5) % 10) as f32 / 10.0) };
            format!(
                r#"{{"kind": "{}", "role": "{}", "thought": "g{g} m{m} k{k}", "scores": {{"prm": {prm}, "value": {}}}, "env_reward": {}, "state": "s{}", "first_error": {}, "docs": ["d{}"]}}"#,
                kinds[(m + k) % 3],
                roles[(g + k) % 4],
                k as f32 / 10.0,
                if k + 1 == len { 1.0 } else { 0.1 },
                k % 2,
                k == 1 && m.is_multiple_of(2),
                (m + k) % 3,
            )
        })
        .collect();
    let group = if g == 3 { String::new() } else { format!(r#""group": "g{g}", "#) };
    format!(
        r#"{{"type": "trajectory", "id": "t{g}-{m}", {group}"outcome": {{"reward": {}, "success": {}}}, "steps": [{}]}}"#,
        (g + m) % 2,
        (g + m) % 2 == 1,
        steps.join(", ")
    )
}

#[test]
fn step_credit_does_not_depend_on_the_order_trajectories_are_logged_in() {
    // The same trajectories logged group after group, and with the groups interleaved (and one
    // trajectory in no group): the fast path (groups in trajectory order, output written in order)
    // and the general one (output filled, written at random) must give each step the same credit.
    let keys: Vec<(usize, usize)> = (0..3).flat_map(|g| (0..4).map(move |m| (g, m))).chain([(3, 0)]).collect();
    let in_order: Vec<String> = keys.iter().map(|&(g, m)| ordering_record(g, m)).collect();
    let mut interleaved = keys.clone();
    interleaved.sort_by_key(|&(g, m)| (m, g));
    let interleaved: Vec<String> = interleaved.iter().map(|&(g, m)| ordering_record(g, m)).collect();
    let load = |lines: &[String]| {
        let text = format!("{{\"vantage\": 1}}\n{}\n", lines.join("\n"));
        load_bytes("order.jsonl", text.as_bytes(), &mut LoadReport::new("order.jsonl")).unwrap()
    };
    let (a, b) = (load(&in_order), load(&interleaved));
    let by_step = |run: &Run, step: &[f32]| {
        let tr = &run.trajectories;
        let mut out: Vec<(String, usize, f32)> = tr
            .ids()
            .flat_map(|t| tr.path_range(t).enumerate().map(move |(k, p)| (t, k, p)))
            .map(|(t, k, p)| (run.label(tr.key[t.index()]).to_owned(), k, step[p]))
            .collect();
        out.sort_by(|x, y| (&x.0, x.1).cmp(&(&y.0, y.1)));
        out
    };
    let mut compared = 0;
    for scheme in credit::SCHEMES {
        let id = scheme.info().id;
        if scheme.supports(&a) != Support::Yes {
            continue;
        }
        let has_level = scheme.params().iter().any(|p| p.name == "level");
        let sets: Vec<(&str, &str)> = if has_level { vec![("level", "step")] } else { Vec::new() };
        let params = Params::resolve(
            *scheme,
            None,
            &sets.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect::<Vec<_>>(),
        )
        .unwrap();
        let (ca, cb) = (scheme.compute(&a, &params), scheme.compute(&b, &params));
        let (ca, cb) = match (ca, cb) {
            (Ok(ca), Ok(cb)) => (ca, cb),
            // A scheme that refuses the run (turn_return: its turn rewards do not sum to the outcome)
            // refuses it whatever the order, naming the same trajectory.
            (Err(ea), Err(eb)) => {
                assert_eq!(ea, eb, "{id}");
                continue;
            }
            (ea, eb) => panic!("{id}: {:?} in order, {:?} interleaved", ea.err(), eb.err()),
        };
        let (x, y) = (by_step(&a, &ca.step), by_step(&b, &cb.step));
        assert_eq!(x.len(), y.len(), "{id}");
        for ((key, k, u), (_, _, v)) in x.iter().zip(&y) {
            let same = (u.is_nan() && v.is_nan()) || (u - v).abs() <= 1e-5 * (1.0 + u.abs());
            assert!(same, "{id}: {key} step {k}: {u} in order, {v} interleaved");
        }
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} schemes ran");
}

/// A PURE log: `groups` groups of members with 0 to 9 steps (so that four members in lockstep end
/// at different steps), PRM scores in (0, 1) with some missing, mixed outcomes; the trajectories
/// written group after group, or interleaved across groups (every group's members then lie apart).
fn pure_log(groups: usize, interleaved: bool) -> String {
    let members = |g: usize| 1 + (g * 5) % 7;
    let mut lines = Vec::new();
    for g in 0..groups {
        for m in 0..members(g) {
            let len = (g * 3 + m * 7) % 10;
            let steps: Vec<String> = (0..len)
                .map(|j| {
                    let x = (g * 37 + m * 11 + j * 23) % 97;
                    if x % 13 == 0 {
                        "{}".to_owned()
                    } else {
                        format!(r#"{{"scores": {{"prm": {}}}}}"#, (x as f64 + 0.5) / 97.0)
                    }
                })
                .collect();
            let reward = u8::from((g + m) % 3 == 0);
            let line = format!(
                r#"{{"type": "trajectory", "id": "g{g}m{m}", "group": "g{g}", "outcome": {{"reward": {reward}}}, "steps": [{}]}}"#,
                steps.join(", ")
            );
            lines.push(((if interleaved { m } else { 0 }, g, m), line));
        }
    }
    lines.sort();
    std::iter::once("{\"vantage\": 1}".to_owned())
        .chain(lines.into_iter().map(|(_, l)| l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// PURE's credit of every trajectory by hand, without normalization: `r = 2p − 1` (missing 0),
/// `softmax(−r/T)` weights in f64, RLOO step baseline, VR at the last step.
fn pure_by_hand(run: &Run, temperature: f64) -> Vec<(String, Vec<f64>)> {
    let tr = &run.trajectories;
    let mut out = Vec::new();
    for g in run.groups.ids() {
        let members = run.groups.members(g);
        let k = members.len() as f64;
        let weighted: Vec<Vec<f64>> = members
            .iter()
            .map(|&t| {
                let r: Vec<f64> = tr
                    .path(t)
                    .iter()
                    .map(|&n| {
                        let p = f64::from(run.nodes.score("prm", n));
                        if p.is_nan() { 0.0 } else { 2.0 * p - 1.0 }
                    })
                    .collect();
                let e: Vec<f64> = r.iter().map(|&x| (-x / temperature).exp()).collect();
                let z: f64 = e.iter().sum();
                r.iter().zip(&e).map(|(x, e)| x * e / z).collect()
            })
            .collect();
        let per_step: Vec<f64> = weighted.iter().map(|w| w.iter().sum::<f64>() / w.len().max(1) as f64).collect();
        let per_step_total: f64 = per_step.iter().sum();
        let vr: Vec<f64> = members.iter().map(|&t| f64::from(tr.reward[t.index()]) - 1.0).collect();
        let vr_total: f64 = vr.iter().sum();
        for (i, &t) in members.iter().enumerate() {
            let baseline = if k > 1.0 { (per_step_total - per_step[i]) / (k - 1.0) } else { 0.0 };
            let mut running = if k > 1.0 { vr[i] - (vr_total - vr[i]) / (k - 1.0) } else { vr[i] };
            let mut returns: Vec<f64> = weighted[i]
                .iter()
                .rev()
                .map(|w| {
                    running += w - baseline;
                    running
                })
                .collect();
            returns.reverse();
            out.push((run.label(tr.key[t.index()]).to_owned(), returns));
        }
    }
    out
}

#[test]
fn pure_matches_a_plain_computation_whether_or_not_a_groups_steps_lie_together() {
    // 60 groups: enough members for several blocks of four in one group, members without steps,
    // and groups of one (no baseline, VR not centred).
    let together = load_bytes("a.jsonl", pure_log(60, false).as_bytes(), &mut LoadReport::new("a.jsonl")).unwrap();
    let apart = load_bytes("b.jsonl", pure_log(60, true).as_bytes(), &mut LoadReport::new("b.jsonl")).unwrap();
    let by_key = |run: &Run, credit: &[f32]| -> std::collections::BTreeMap<String, Vec<u32>> {
        let tr = &run.trajectories;
        tr.ids()
            .map(|t| {
                (
                    run.label(tr.key[t.index()]).to_owned(),
                    credit[tr.path_range(t)].iter().map(|v| v.to_bits()).collect(),
                )
            })
            .collect()
    };
    let plain = [("normalize", "false")];
    let raw = credit_of(&together, "pure", &plain);
    for (key, want) in pure_by_hand(&together, 0.1) {
        let t = together.trajectory_by_key(&key).unwrap();
        let got = &raw[together.trajectories.path_range(t)];
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert!((f64::from(*g) - w).abs() < 1e-5 * (1.0 + w.abs()), "{key}: {got:?} vs {want:?}");
        }
    }
    // The same bits when each group is computed in a buffer of its own and copied (members apart).
    for sets in [&plain[..], &[], &[("weighting", "uniform")], &[("transform", "as_is"), ("temperature", "0.5")]] {
        let one = by_key(&together, &credit_of(&together, "pure", sets));
        let other = by_key(&apart, &credit_of(&apart, "pure", sets));
        assert_eq!(one, other, "{sets:?}");
    }
}

#[test]
fn spo_tree_treepo_variant_adds_no_epsilon_to_the_sibling_std() {
    // Two leaves of one node whose outcomes differ by 1.2e-7: TreePO z-scores them to ∓1 by their
    // population std alone (with ε = 1e-8 added they would be ∓0.86).
    let log = r#"{"vantage": 1}
{"type": "tree", "id": "t", "group": "g", "nodes": [{"id": "A", "thought": "a"}, {"id": "A1", "parent": "A", "outcome": {"reward": 0.5}}, {"id": "A2", "parent": "A", "outcome": {"reward": 0.50000012}}]}
"#;
    let run = load_bytes("tiny.jsonl", log.as_bytes(), &mut LoadReport::new("tiny.jsonl")).unwrap();
    let credit = credit_of(&run, "spo_tree", &[("variant", "treepo_spo"), ("drop_zero", "false")]);
    let t = run.trajectory_by_key("t/A1").unwrap();
    let start = run.trajectories.path_offsets[t.index()] as usize;
    // The lone node A keeps its value (the mean of its leaves, 0.5) as its z; A1's is −1.
    assert!((credit[start + 1] - (-1.0 - 0.5)).abs() < 1e-4, "{:?}", &credit[start..start + 2]);
    // Siblings all alike give 0, not a division by zero.
    let log = log.replace("0.50000012", "0.5");
    let run = load_bytes("tiny.jsonl", log.as_bytes(), &mut LoadReport::new("tiny.jsonl")).unwrap();
    let credit = credit_of(&run, "spo_tree", &[("variant", "treepo_spo"), ("drop_zero", "false")]);
    assert!((credit[start + 1] + 0.5).abs() < 1e-6, "{:?}", &credit[start..start + 2]);
}

/// A group of three two-step rollouts with Monte-Carlo values, each step `len(k)` policy tokens
/// long (its token span).
fn token_log(len: impl Fn(usize, usize) -> usize) -> String {
    let mut log = String::from("{\"vantage\": 1}\n");
    for (i, reward) in [1.0, 0.0, 0.5].iter().enumerate() {
        let (a, b) = (len(i, 0), len(i, 1));
        let mask = vec!["1"; a + b].join(",");
        log.push_str(&format!(
            r#"{{"type": "trajectory", "id": "r{i}", "group": "g", "outcome": {{"reward": {reward}}}, "steps": [{{"thought": "s{i}", "mc": {{"n": 4, "mean": {}}}, "token_span": [0, {a}]}}, {{"action": "x{i}", "token_span": [{a}, {}]}}], "tokens": {{"mask": [{mask}]}}}}"#,
            0.25 * i as f64 + 0.2,
            a + b
        ));
        log.push('\n');
    }
    log
}

#[test]
fn treepo_and_vineppo_whiten_over_tokens() {
    let lens = |i: usize, k: usize| [[3, 1], [1, 5], [2, 2]][i][k];
    let run = load_bytes("tok.jsonl", token_log(lens).as_bytes(), &mut LoadReport::new("tok.jsonl")).unwrap();
    let weights: Vec<f64> = (0..3).flat_map(|i| (0..2).map(move |k| lens(i, k) as f64)).collect();
    let total: f64 = weights.iter().sum();
    for id in ["treepo", "vineppo"] {
        let credit = credit_of(&run, id, &[]);
        let a: Vec<f64> = credit.iter().map(|&v| f64::from(v)).collect();
        // Token-weighted mean 0 and unbiased token variance 1 (verl's masked_whiten over the tokens).
        let mean = a.iter().zip(&weights).map(|(a, w)| a * w).sum::<f64>() / total;
        let var = a.iter().zip(&weights).map(|(a, w)| a * a * w).sum::<f64>() / total * total / (total - 1.0);
        assert!(mean.abs() < 1e-5, "{id}: {a:?}");
        assert!((var - 1.0).abs() < 1e-3, "{id}: var {var}");
    }
}

#[test]
fn token_weighted_whitening_with_equal_lengths_is_step_whitening_but_for_the_bessel_term() {
    let len = 4usize;
    let with_tokens = load_bytes("tok.jsonl", token_log(|_, _| len).as_bytes(), &mut LoadReport::new("t")).unwrap();
    // The same run without tokens: each step counts once.
    let plain_log: String = token_log(|_, _| len)
        .lines()
        .map(|l| l.find(", \"tokens\"").map_or(format!("{l}\n"), |at| format!("{}}}\n", &l[..at])))
        .collect::<String>()
        .replace(&format!(", \"token_span\": [0, {len}]"), "")
        .replace(&format!(", \"token_span\": [{len}, {}]", 2 * len), "");
    let plain = load_bytes("plain.jsonl", plain_log.as_bytes(), &mut LoadReport::new("p")).unwrap();
    assert_eq!(plain.tokens.len, 0);
    let steps = 6.0f64;
    let tokens = steps * len as f64;
    let ratio = ((steps / (steps - 1.0)) / (tokens / (tokens - 1.0))).sqrt();
    for id in ["treepo", "vineppo"] {
        let a = credit_of(&with_tokens, id, &[]);
        let b = credit_of(&plain, id, &[]);
        for (x, y) in a.iter().zip(&b) {
            assert!((f64::from(*x) - f64::from(*y) * ratio).abs() < 1e-4, "{id}: {a:?} vs {b:?}");
        }
    }
}

#[test]
fn prm_process_has_a_population_std_and_scoreless_trajectories_follow_the_reference() {
    // Three trajectories of one group; the third has no scored step.
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "x", "scores": {"prm": 0.9}}, {"thought": "y", "scores": {"prm": 0.7}}]}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "x", "scores": {"prm": 0.2}}]}
{"type": "trajectory", "id": "c", "group": "g", "outcome": {"reward": 0.5}, "steps": [{"thought": "z"}]}
"#;
    let run = load_bytes("prm.jsonl", log.as_bytes(), &mut LoadReport::new("prm.jsonl")).unwrap();
    let at = |credit: &[f32], key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        credit[run.trajectories.path_offsets[t.index()] as usize]
    };
    // agg: c enters its group with its outcome (0.5) as its score: min scores 0.7, 0.2, 0.5.
    let agg = credit_of(&run, "prm_process", &[("form", "agg"), ("agg", "min")]);
    let (mean, sd) = (
        1.4f32 / 3.0,
        ((0.7f32 - 1.4 / 3.0).powi(2) * 1.0 + (0.2f32 - 1.4 / 3.0).powi(2) + (0.5f32 - 1.4 / 3.0).powi(2)) / 2.0,
    );
    assert!((at(&agg, "c") - (0.5 - mean) / (sd.sqrt() + 1e-6)).abs() < 1e-4, "{agg:?}");
    // Population std: divided by n, not n − 1.
    let pop = credit_of(&run, "prm_process", &[("form", "agg"), ("agg", "min"), ("std", "population")]);
    let pop_sd = (sd * 2.0 / 3.0).sqrt();
    assert!((at(&pop, "c") - (0.5 - mean) / (pop_sd + 1e-6)).abs() < 1e-4, "{pop:?}");
    // deepseekmath with missing = skip: c has no process reward, so no credit (not 0).
    let dsm = credit_of(&run, "prm_process", &[]);
    assert!(at(&dsm, "c").is_nan(), "{dsm:?}");
    assert!(at(&dsm, "a").is_finite());
}

#[test]
fn gigpo_penalises_an_invalid_action_in_its_row_only() {
    // The worked example with t2's second action invalid (κ = 0.1, the code's default).
    let log = GIGPO_LOG.replacen(
        r#"{"state": "S1", "env_reward": 0}, {"state": "S3""#,
        r#"{"state": "S1", "env_reward": 0, "invalid_action": true}, {"state": "S3""#,
        1,
    );
    assert_ne!(log, GIGPO_LOG);
    let run = load_bytes("gigpo.jsonl", log.as_bytes(), &mut LoadReport::new("gigpo.jsonl")).unwrap();
    let t2 = run.trajectory_by_key("t2").unwrap();
    assert!(run.nodes.invalid_action(run.trajectories.path(t2)[1]));
    let mean_norm = credit_of(&run, "gigpo", &[("mode", "mean_norm")]);
    // Episode rows 1, 1, 1, 0, −0.1, 0, 0 (mean 2.9/7); the S1 group {0.95, −0.1}.
    let e = 2.9f32 / 7.0;
    let want = [1.0 - e + 0.45125, 1.0 - e + 0.525, 1.0 - e, -e - 0.45125, -0.1 - e - 0.525, -e, -e];
    assert!(mean_norm.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-4), "{mean_norm:?} vs {want:?}");
    // κ = 0 is the example without the flag.
    let off = credit_of(&run, "gigpo", &[("mode", "mean_norm"), ("invalid_penalty", "0")]);
    let plain = credit_of(
        &load_bytes("g.jsonl", GIGPO_LOG.as_bytes(), &mut LoadReport::new("g")).unwrap(),
        "gigpo",
        &[("mode", "mean_norm")],
    );
    assert_eq!(off, plain);
    // The flag round-trips through the writer.
    assert!(vantage::load::formats::vantage_jsonl::write::to_jsonl(&run).contains("\"invalid_action\":true"));
}

#[test]
fn treerl_leaves_not_selected_count_in_the_values_and_get_no_credit() {
    let log = TREE_LOG.replace(
        r#"{"id": "B2", "parent": "B", "outcome": {"reward": 0}}"#,
        r#"{"id": "B2", "parent": "B", "outcome": {"reward": 0}, "selected": false}"#,
    );
    assert_ne!(log, TREE_LOG);
    let run = load_bytes("tree.jsonl", log.as_bytes(), &mut LoadReport::new("tree.jsonl")).unwrap();
    let credit = credit_of(&run, "treerl", &[]);
    let path = |key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        let start = run.trajectories.path_offsets[t.index()] as usize;
        [credit[start], credit[start + 1]]
    };
    // B's accumulated value −2/3 is divided by √1 (one selected leaf below), over its 2 leaves.
    let b1 = path("t/B1");
    assert!((b1[0] + 2.0 / 3.0).abs() < 1e-5 && (b1[1] + 2.0 / 3.0).abs() < 1e-5, "{b1:?}");
    assert!(path("t/B2").iter().all(|v| v.is_nan()), "no credit for the unselected leaf");
    // The A side is the worked example's.
    let a1 = path("t/A1");
    assert!((a1[0] - 0.471).abs() < 1e-3 && (a1[1] - 1.764).abs() < 1e-3, "{a1:?}");
    assert!(vantage::load::formats::vantage_jsonl::write::to_jsonl(&run).contains("\"selected\":false"));
}

#[test]
fn vineppo_values_states_as_its_code_does() {
    let log = r#"{"vantage": 1}
{"type": "group", "id": "g", "mc": {"n": 4, "mean": 0.25}}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 1, "finish": "stop"}, "steps": [{"thought": "s1", "mc": {"n": 2, "mean": 1, "rollouts": [{"reward": 1, "finish": "stop"}, {"reward": 1, "finish": "length"}]}}, {"thought": "s2", "mc": {"n": 2, "mean": 0.5}}, {"thought": "s3"}]}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 0, "finish": "stop"}, "steps": [{"thought": "t1"}, {"thought": "t2"}]}
"#;
    let run = load_bytes("vine.jsonl", log.as_bytes(), &mut LoadReport::new("vine.jsonl")).unwrap();
    let at = |credit: &[f32], key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        let range = run.trajectories.path_range(t);
        credit[range].to_vec()
    };
    let raw = |sets: &[(&str, &str)]| {
        let mut all = vec![("whiten", "false")];
        all.extend_from_slice(sets);
        credit_of(&run, "vineppo", &all)
    };
    // V(s0) = 0.25 from the prompt-state rollouts (not the group's mean outcome, 0.5); the state
    // after s1 has a truncated rollout scored 0: V = (1 + 0)/2; after s2, 0.5; terminal 0.
    let a = at(&raw(&[]), "a");
    assert!(
        (a[0] - (0.5 - 0.25)).abs() < 1e-6 && (a[1] - (0.5 - 0.5)).abs() < 1e-6 && (a[2] - (1.0 - 0.5)).abs() < 1e-6,
        "{a:?}"
    );
    // truncated_rollout_reward = −1: V(after s1) = 0.
    let a = at(&raw(&[("truncated_rollout_reward", "-1")]), "a");
    assert!((a[0] + 0.25).abs() < 1e-6 && (a[1] - 0.5).abs() < 1e-6, "{a:?}");
    // A state with no rollouts logged is valued 0: b's state after t1.
    let b = at(&raw(&[]), "b");
    assert!((b[0] - (0.0 - 0.25)).abs() < 1e-6 && (b[1] - 0.0).abs() < 1e-6, "{b:?}");
    // max_steps = 1: only the state after the first step has a Monte-Carlo value; the one after
    // s2 takes the return after it (1), so s2's advantage is 1 − 0.5 and s3's 0.
    let a = at(&raw(&[("max_steps", "1")]), "a");
    assert!((a[1] - 0.5).abs() < 1e-6 && a[2].abs() < 1e-6, "{a:?}");
    // The rollouts and the group's statistics round-trip through the writer.
    let text = vantage::load::formats::vantage_jsonl::write::to_jsonl(&run);
    assert!(text.contains(r#""mc":{"n":4,"mean":0.25}"#) && text.contains(r#""finish":"length""#), "{text}");
    let again = load_bytes("again.jsonl", text.as_bytes(), &mut LoadReport::new("again")).unwrap();
    assert_eq!(credit_of(&again, "vineppo", &[("whiten", "false")]), raw(&[]));
}

/// The cases of `tests/golden/NAME/cases.json` (made by running a paper's own code, see
/// tests/golden/README.md), at least `at_least` of them.
fn golden_cases(name: &str, at_least: usize) -> Vec<serde_json::Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name).join("cases.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let cases = golden["cases"].as_array().unwrap().clone();
    assert!(cases.len() >= at_least, "{name}: {} cases", cases.len());
    cases
}

/// Each trajectory `{prefix}{i}` of `run` has the golden step values `want[i]` under `credit`.
fn assert_rollouts(run: &Run, credit: &[f32], want: &serde_json::Value, prefix: &str, what: &str) {
    for (i, want) in want.as_array().unwrap().iter().enumerate() {
        let t = run.trajectory_by_key(&format!("{prefix}{i}")).unwrap();
        assert_close(&credit[run.trajectories.path_range(t)], want, 1e-5, &format!("{what} {prefix}{i}"));
    }
}

/// `got` equals the golden list `want` value by value within `tolerance`.
fn assert_close(got: &[f32], want: &serde_json::Value, tolerance: f64, what: &str) {
    let want: Vec<f64> = want.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(&want) {
        assert!((f64::from(*g) - w).abs() < tolerance, "{what}: {got:?} vs {want:?}");
    }
}

/// prime-rl's `turn_credit` on the terminal sample, as prime-rl's own `TurnCreditAlgorithm`
/// computed it (`tests/golden/turn_credit`): every turn of every rollout under five settings of γ and
/// β (β = 0 is the plain level; a rollout the judge never scored and a group of one are among them).
#[test]
fn turn_credit_is_prime_rl_s_own_algorithm_on_every_turn() {
    let run = sample("terminal_turn_scores.jsonl");
    for case in golden_cases("turn_credit", 5) {
        let (gamma, beta) = (case["gamma"].to_string(), case["beta"].to_string());
        let credit = credit_of(&run, "turn_credit", &[("gamma", gamma.as_str()), ("beta", beta.as_str())]);
        let advantages = case["advantages"].as_object().unwrap();
        assert_eq!(advantages.len(), run.trajectories.len());
        for (key, want) in advantages {
            let t = run.trajectory_by_key(key).unwrap();
            let what = format!("γ {gamma} β {beta} {key}");
            assert_close(&credit[run.trajectories.path_range(t)], want, 1e-5, &what);
        }
    }
}

/// NeMo-RL's turn-level credit on the terminal sample, as NeMo-RL's own
/// `TurnLevelGRPOAdvantageEstimator` computed it with torch (`tests/golden/turn_return`): every turn
/// under immediate and return-to-go credit, two discounts and three weightings (turn weight 0 is
/// NeMo-RL's GRPO alone).
#[test]
fn turn_return_is_nemo_rl_s_own_estimator_on_every_turn() {
    let run = sample("terminal_turn_scores.jsonl");
    for case in golden_cases("turn_return", 5) {
        let sets: Vec<(&str, String)> = ["mode", "discount", "macro_weight", "turn_weight"]
            .iter()
            .map(|&k| (k, case[k].as_str().map_or_else(|| case[k].to_string(), str::to_owned)))
            .collect();
        let sets: Vec<(&str, &str)> = sets.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let credit = credit_of(&run, "turn_return", &sets);
        let advantages = case["advantages"].as_object().unwrap();
        assert_eq!(advantages.len(), run.trajectories.len());
        for (key, want) in advantages {
            let t = run.trajectory_by_key(key).unwrap();
            let got = &credit[run.trajectories.path_range(t)];
            let want: Vec<f64> = want.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            assert_eq!(got.len(), want.len(), "{key}");
            // Within 1e-5 and 1e-5 of the value, as NeMo-RL's GRPO is checked (tests/it/trainers_2026.rs):
            // its float32 group moments come from a matrix product, and a group whose other rewards
            // are nearly equal (s1-csv-sniffer: 1, 0.9, 0.9 beside 0.2) divides by a small std.
            for (g, w) in got.iter().zip(&want) {
                assert!((f64::from(*g) - w).abs() <= 1e-5 + 1e-5 * w.abs(), "{sets:?} {key}: {got:?} vs {want:?}");
            }
        }
    }
    // NeMo-RL refuses a batch whose turn rewards do not sum to the outcome.
    let scheme = credit::scheme("turn_return").unwrap();
    let tight = Params::resolve(scheme, None, &[]).unwrap();
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample_runs/terminal_turn_scores.jsonl"),
    )
    .unwrap();
    // The first rollout's outcome 0.875 made 90.875; its turn rewards still sum to 0.875.
    let off = text.replacen("\"outcome\":{\"reward\":", "\"outcome\":{\"reward\":9", 1);
    let skewed = load_bytes("skewed.jsonl", off.as_bytes(), &mut LoadReport::new("skewed")).unwrap();
    let err = scheme.compute(&skewed, &tight).unwrap_err().to_string();
    assert!(err.contains("s0-slugify-r0") && err.contains("not to its outcome 90.875"), "{err}");
}

/// verifiers' step-reward advantages on the terminal sample (the steps' `env_reward` as their step
/// rewards), as verifiers' own `apply_step_advantages` computed them (`tests/golden/step_reward`):
/// every step under four γ.
#[test]
fn step_reward_is_verifiers_own_step_advantage_on_every_step() {
    let run = sample("terminal_turn_scores.jsonl");
    for case in golden_cases("step_reward", 4) {
        let gamma = case["gamma"].to_string();
        let credit = credit_of(&run, "step_reward", &[("gamma", gamma.as_str())]);
        let advantages = case["advantages"].as_object().unwrap();
        assert_eq!(advantages.len(), run.trajectories.len());
        for (key, want) in advantages {
            let t = run.trajectory_by_key(key).unwrap();
            assert_close(&credit[run.trajectories.path_range(t)], want, 1e-5, &format!("γ {gamma} {key}"));
        }
    }
}

/// A tree record of one group from TreePO-style leaf paths (`root#segment#…` → reward).
fn tree_from_paths(leaves: &serde_json::Map<String, serde_json::Value>) -> String {
    let mut nodes: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (path, reward) in leaves {
        let parts: Vec<&str> = path.split('#').skip(1).collect();
        for depth in 1..=parts.len() {
            let id = parts[..depth].join("#");
            if !seen.insert(id.clone()) {
                continue;
            }
            let parent = if depth == 1 { "null".to_owned() } else { format!("{:?}", parts[..depth - 1].join("#")) };
            let outcome =
                if depth == parts.len() { format!(r#", "outcome": {{"reward": {reward}}}"#) } else { String::new() };
            nodes.push(format!(r#"{{"id": {id:?}, "parent": {parent}, "thought": {id:?}{outcome}}}"#));
        }
    }
    format!(
        "{{\"vantage\": 1}}\n{{\"type\": \"tree\", \"id\": \"t\", \"group\": \"g\", \"nodes\": [{}]}}\n",
        nodes.join(", ")
    )
}

#[test]
fn treepo_segment_estimator_and_spo_variant_reproduce_treepos_own_code() {
    let cases = golden_cases("treepo", 3);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let log = tree_from_paths(case["leaves"].as_object().unwrap());
        let run = load_bytes("treepo.jsonl", log.as_bytes(), &mut LoadReport::new(name)).unwrap();
        let check = |credit: &[f32], want: &serde_json::Value, what: &str| {
            for (leaf, values) in want.as_object().unwrap() {
                let key = format!("t/{}", leaf.split('#').skip(1).collect::<Vec<_>>().join("#"));
                let t = run.trajectory_by_key(&key).unwrap_or_else(|| panic!("{name}: no {key}"));
                let got = &credit[run.trajectories.path_range(t)];
                let want: Vec<f64> = values.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
                assert_eq!(got.len(), want.len(), "{name} {what} {key}");
                for (g, w) in got.iter().zip(&want) {
                    assert!((f64::from(*g) - w).abs() < 1e-5, "{name} {what} {key}: {got:?} vs {want:?}");
                }
            }
        };
        let spo = credit_of(&run, "spo_tree", &[("variant", "treepo_spo"), ("drop_zero", "false")]);
        check(&spo, &case["spo"], "spo");
        for (eta, want) in case["segment"].as_object().unwrap() {
            let credit = credit_of(&run, "treepo", &[("estimator", "segment"), ("whiten", "false"), ("eta", eta)]);
            check(&credit, want, &format!("segment η={eta}"));
        }
    }
}

#[test]
fn treeps_rag_has_the_sibling_z_score_form() {
    let run = load_bytes("tree.jsonl", TREE_LOG.as_bytes(), &mut LoadReport::new("tree.jsonl")).unwrap();
    let path = |credit: &[f32], key: &str| {
        let t = run.trajectory_by_key(key).unwrap();
        let start = run.trajectories.path_offsets[t.index()] as usize;
        [credit[start], credit[start + 1]]
    };
    // V: A .5, B 0 (siblings mean .25, unbiased std .3536); A1 1, A2 0 (mean .5, std .7071); B1 = B2 = 0.
    let z = credit_of(&run, "treeps_rag", &[("form", "sibling_z")]);
    let a1 = path(&z, "t/A1");
    assert!(
        (a1[0] - 0.25 / 0.353_553_4).abs() < 1e-4 && (a1[1] - 0.5 / std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-4,
        "{a1:?}"
    );
    // Equal siblings: 0; the centred form without the std.
    assert!(path(&z, "t/B1")[1].abs() < 1e-6);
    let centred = credit_of(&run, "treeps_rag", &[("form", "sibling_z"), ("std", "false")]);
    assert!((path(&centred, "t/A2")[1] + 0.5).abs() < 1e-6);
    // The same as TreeRPO's sibling z-scores on the same leaf-mean values.
    let treerpo = credit_of(&run, "treerpo", &[("value", "leaf_mean")]);
    assert_eq!(z, treerpo);
}

/// Two rollouts of one group with PRM step scores, each step `lens[i][k]` tokens long (or no
/// tokens at all).
fn pure_token_log(lens: Option<[&[usize]; 2]>) -> String {
    let scores: [&[f64]; 2] = [&[0.9, 0.2], &[0.8]];
    let mut log = String::from("{\"vantage\": 1}\n");
    for (i, s) in scores.iter().enumerate() {
        let mut at = 0;
        let steps: Vec<String> = s
            .iter()
            .enumerate()
            .map(|(k, p)| match lens {
                Some(lens) => {
                    let span = format!(r#", "token_span": [{at}, {}]"#, at + lens[i][k]);
                    at += lens[i][k];
                    format!(r#"{{"thought": "s{k}", "scores": {{"prm": {p}}}{span}}}"#)
                }
                None => format!(r#"{{"thought": "s{k}", "scores": {{"prm": {p}}}}}"#),
            })
            .collect();
        let tokens = if lens.is_some() {
            format!(r#", "tokens": {{"mask": [{}]}}"#, vec!["1"; at].join(","))
        } else {
            String::new()
        };
        log.push_str(&format!(
            r#"{{"type": "trajectory", "id": "r{i}", "group": "g", "outcome": {{"reward": {}}}, "steps": [{}]{tokens}}}"#,
            1 - i,
            steps.join(", ")
        ));
        log.push('\n');
    }
    log
}

#[test]
fn pure_normalizes_over_tokens_as_its_replay_buffer_does() {
    let lens: [&[usize]; 2] = [&[3, 2], &[4]];
    let run = load_bytes("p.jsonl", pure_token_log(Some(lens)).as_bytes(), &mut LoadReport::new("p")).unwrap();
    let raw = credit_of(&run, "pure", &[("normalize", "false")]);
    let normalized = credit_of(&run, "pure", &[]);
    // By hand: each step's return on its tokens but the separator (which holds 0).
    let tokens = [3.0, 2.0, 4.0];
    let values: Vec<f64> = raw.iter().map(|&v| f64::from(v)).collect();
    let carrying: Vec<f64> = tokens.iter().zip(&values).map(|(n, v)| if *v == 0.0 { 0.0 } else { n - 1.0 }).collect();
    let count: f64 = carrying.iter().sum();
    let mean = values.iter().zip(&tokens).map(|(v, n)| v * (n - 1.0)).sum::<f64>() / count;
    let var =
        (values.iter().zip(&tokens).map(|(v, n)| (n - 1.0) * (v - mean).powi(2) + mean * mean).sum::<f64>()) / count;
    let std = var.max(1e-8).sqrt();
    for (got, v) in normalized.iter().zip(&values) {
        assert!((f64::from(*got) - (v - mean) / std).abs() < 1e-4, "{normalized:?} vs {values:?}");
    }
    // The old per-step form is still there.
    let steps = credit_of(&run, "pure", &[("normalize_over", "steps")]);
    assert_ne!(steps, normalized);
}

#[test]
fn pure_with_every_step_one_token_long_is_the_step_level_form() {
    let one: [&[usize]; 2] = [&[1, 1], &[1]];
    let with_tokens = load_bytes("p.jsonl", pure_token_log(Some(one)).as_bytes(), &mut LoadReport::new("p")).unwrap();
    let without = load_bytes("q.jsonl", pure_token_log(None).as_bytes(), &mut LoadReport::new("q")).unwrap();
    assert_eq!(without.tokens.len, 0);
    let a = credit_of(&with_tokens, "pure", &[("mask_separators", "false")]);
    let b = credit_of(&without, "pure", &[]);
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-5, "{a:?} vs {b:?}");
    }
}

#[test]
fn pure_token_baseline_takes_the_others_reward_per_token() {
    let lens: [&[usize]; 2] = [&[3, 2], &[4]];
    let run = load_bytes("p.jsonl", pure_token_log(Some(lens)).as_bytes(), &mut LoadReport::new("p")).unwrap();
    let none = credit_of(&run, "pure", &[("baseline", "none"), ("verifiable", "false"), ("normalize", "false")]);
    let token = credit_of(&run, "pure", &[("baseline", "token"), ("verifiable", "false"), ("normalize", "false")]);
    // r0's steps: the others' (r1's) reward per token, Σ r' / 4 tokens, times 2 and 1 tokens
    // (separators not counted); the returns add them up from the end.
    let r1_total = f64::from(none[2]);
    let rate1 = r1_total / 4.0;
    let r0_total = f64::from(none[0]);
    let rate0 = r0_total / 5.0;
    let want = [f64::from(none[0]) - 3.0 * rate1, f64::from(none[1]) - rate1, f64::from(none[2]) - 3.0 * rate0];
    for (got, w) in token.iter().zip(want) {
        assert!((f64::from(*got) - w).abs() < 1e-5, "{token:?} vs {want:?}");
    }
}

#[test]
fn pure_reproduces_pures_own_code_per_token() {
    let cases = golden_cases("pure", 12);
    for case in cases {
        let samples = case["samples"].as_array().unwrap();
        let mut log = String::from("{\"vantage\": 1}\n");
        for (i, sample) in samples.iter().enumerate() {
            let mut at = 0;
            let steps: Vec<String> = sample["steps"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(k, step)| {
                    let (n, p) = (step[0].as_u64().unwrap(), step[1].as_f64().unwrap());
                    at += n;
                    format!(r#"{{"thought": "s{k}", "scores": {{"prm": {p:?}}}, "token_span": [{}, {at}]}}"#, at - n)
                })
                .collect();
            let solved = sample["solved"].as_u64().unwrap();
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "r{i}", "group": {}, "outcome": {{"reward": {solved}, "success": {}}}, "steps": [{}], "tokens": {{"mask": [{}]}}}}"#,
                sample["group"],
                solved == 1,
                steps.join(", "),
                vec!["1"; usize::try_from(at).unwrap()].join(",")
            ));
            log.push('\n');
        }
        let run = load_bytes("pure.jsonl", log.as_bytes(), &mut LoadReport::new("pure")).unwrap();
        let flag = |key: &str| case[key].as_bool().unwrap();
        let text = |b: bool| if b { "true" } else { "false" };
        let sets = [
            ("baseline", case["reward_baseline"].as_str().unwrap()),
            ("verifiable", text(case["reward_mode"] == "PRMVR")),
            ("mask_separators", text(!flag("nomask_separator_adv"))),
            ("weighting", if flag("disable_weighted_reward") { "uniform" } else { "softmax_min" }),
            ("normalize", text(!flag("disable_advantage_normalization"))),
        ];
        let credit = credit_of(&run, "pure", &sets);
        let what = format!("{} {sets:?}", case["name"]);
        for (i, (sample, want)) in samples.iter().zip(case["advantages"].as_array().unwrap()).enumerate() {
            let t = run.trajectory_by_key(&format!("r{i}")).unwrap();
            let got = &credit[run.trajectories.path_range(t)];
            let mut at = 0;
            for (k, step) in sample["steps"].as_array().unwrap().iter().enumerate() {
                let n = usize::try_from(step[0].as_u64().unwrap()).unwrap();
                let tokens: Vec<f64> = (at..at + n).map(|j| want[j].as_f64().unwrap()).collect();
                at += n;
                // The step's value is on its tokens; its separator (last token) holds 0 when masked.
                let (body, separator) = tokens.split_at(n - 1);
                if flag("nomask_separator_adv") {
                    assert!(
                        (f64::from(got[k]) - separator[0]).abs() < 1e-5,
                        "{what} r{i} step {k}: {got:?} vs {tokens:?}"
                    );
                } else {
                    assert_eq!(separator[0], 0.0, "{what}");
                }
                for w in body {
                    assert!((f64::from(got[k]) - w).abs() < 1e-5, "{what} r{i} step {k}: {got:?} vs {tokens:?}");
                }
            }
        }
    }
}

#[test]
fn vineppo_reproduces_vineppos_own_code_per_token() {
    let cases = golden_cases("vineppo", 12);
    let mc = |rollouts: &serde_json::Value| {
        let list = rollouts.as_array().unwrap();
        let rewards: Vec<f64> = list.iter().map(|r| r[0].as_f64().unwrap()).collect();
        let mean = if list.is_empty() { 0.0 } else { rewards.iter().sum::<f64>() / rewards.len() as f64 };
        let each: Vec<String> = list.iter().map(|r| format!(r#"{{"reward": {}, "finish": {}}}"#, r[0], r[1])).collect();
        format!(r#"{{"n": {}, "mean": {mean}, "rollouts": [{}]}}"#, list.len(), each.join(", "))
    };
    for case in cases {
        let trajectories = case["trajectories"].as_array().unwrap();
        let mut log = String::from("{\"vantage\": 1}\n");
        // Each step's tokens, the EOS of a finished response in its last step.
        let mut spans: Vec<Vec<usize>> = Vec::new();
        for (i, t) in trajectories.iter().enumerate() {
            let finished = t["finish"] != "length";
            let mut counts: Vec<usize> = t["step_tokens"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| usize::try_from(n.as_u64().unwrap()).unwrap())
                .collect();
            *counts.last_mut().unwrap() += usize::from(finished);
            let states = t["state_rollouts"].as_array().unwrap();
            let mut at = 0;
            let steps: Vec<String> = counts
                .iter()
                .enumerate()
                .map(|(k, n)| {
                    let stats = states.get(k).map(|s| format!(r#", "mc": {}"#, mc(s))).unwrap_or_default();
                    at += n;
                    format!(r#"{{"thought": "s{k}"{stats}, "token_span": [{}, {at}]}}"#, at - n)
                })
                .collect();
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "t{i}", "group": {}, "mc": {}, "outcome": {{"reward": {}, "finish": {}}}, "steps": [{}], "tokens": {{"mask": [{}]}}}}"#,
                t["group"],
                mc(&t["prompt_rollouts"]),
                t["score"],
                t["finish"],
                steps.join(", "),
                vec!["1"; at].join(",")
            ));
            log.push('\n');
            spans.push(counts);
        }
        let run = load_bytes("vineppo.jsonl", log.as_bytes(), &mut LoadReport::new("vineppo")).unwrap();
        let max_steps = case["max_step_for_value_estimation"].to_string();
        let penalty = case["unfinished_response_penalty"].to_string();
        for (whiten, key) in [("false", "advantages"), ("true", "whitened")] {
            let sets =
                [("max_steps", max_steps.as_str()), ("truncated_rollout_reward", penalty.as_str()), ("whiten", whiten)];
            let credit = credit_of(&run, "vineppo", &sets);
            let what = format!("{} {sets:?}", case["name"]);
            for (i, want) in case[key].as_array().unwrap().iter().enumerate() {
                let t = run.trajectory_by_key(&format!("t{i}")).unwrap();
                let got = &credit[run.trajectories.path_range(t)];
                let mut at = 0;
                for (k, &n) in spans[i].iter().enumerate() {
                    for j in at..at + n {
                        let w = want[j].as_f64().unwrap();
                        assert!((f64::from(got[k]) - w).abs() < 1e-5, "{what} t{i} step {k}: {got:?} vs {want}");
                    }
                    at += n;
                }
                assert_eq!(at, want.as_array().unwrap().len(), "{what} t{i}");
            }
        }
    }
}

#[test]
fn gigpo_reproduces_verl_agents_own_code() {
    let cases = golden_cases("gigpo", 10);
    for case in cases {
        let mut log = String::from("{\"vantage\": 1}\n");
        for (i, t) in case["trajectories"].as_array().unwrap().iter().enumerate() {
            let steps = t["steps"].as_array().unwrap();
            let total: f64 = steps.iter().map(|s| s[1].as_f64().unwrap()).sum();
            let steps: Vec<String> = steps
                .iter()
                .map(|s| {
                    format!(
                        r#"{{"action": "a", "state": {}, "env_reward": {}, "invalid_action": {}}}"#,
                        s[0],
                        s[1],
                        !s[2].as_bool().unwrap()
                    )
                })
                .collect();
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "t{i}", "group": {}, "outcome": {{"reward": {total}}}, "steps": [{}]}}"#,
                t["group"],
                steps.join(", ")
            ));
            log.push('\n');
        }
        let run = load_bytes("gigpo.jsonl", log.as_bytes(), &mut LoadReport::new("gigpo")).unwrap();
        let (omega, gamma, kappa) = (
            case["step_advantage_w"].to_string(),
            case["gamma"].to_string(),
            case["invalid_action_penalty_coef"].to_string(),
        );
        let sets = [
            ("mode", case["mode"].as_str().unwrap()),
            ("omega", omega.as_str()),
            ("gamma", gamma.as_str()),
            ("invalid_penalty", kappa.as_str()),
            ("stats", if case["stats_over_step_rows"].as_bool().unwrap() { "steps" } else { "trajectories" }),
        ];
        let credit = credit_of(&run, "gigpo", &sets);
        let what = format!("{} {sets:?}", case["name"]);
        for (i, want) in case["advantages"].as_array().unwrap().iter().enumerate() {
            let t = run.trajectory_by_key(&format!("t{i}")).unwrap();
            let got = &credit[run.trajectories.path_range(t)];
            let want: Vec<f64> = want.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            assert_eq!(got.len(), want.len(), "{what}");
            for (g, w) in got.iter().zip(&want) {
                assert!((f64::from(*g) - w).abs() < 1e-5 * (1.0 + w.abs()), "{what} t{i}: {got:?} vs {want:?}");
            }
        }
    }
}

#[test]
fn treerl_reproduces_treerls_own_code() {
    let cases = golden_cases("treerl", 10);
    for case in cases {
        // One tree record holding the forest: each tree's root has no parent.
        let mut nodes: Vec<String> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (path, leaf) in case["leaves"].as_object().unwrap() {
            let parts: Vec<&str> = path.split('#').skip(1).collect();
            for depth in 1..=parts.len() {
                let id = parts[..depth].join("#");
                if !seen.insert(id.clone()) {
                    continue;
                }
                let parent = if depth == 1 { "null".to_owned() } else { format!("{:?}", parts[..depth - 1].join("#")) };
                let outcome = if depth == parts.len() {
                    format!(r#", "outcome": {{"reward": {}, "finish": "stop"}}, "selected": {}"#, leaf[0], leaf[1])
                } else {
                    String::new()
                };
                nodes.push(format!(r#"{{"id": {id:?}, "parent": {parent}, "thought": {id:?}{outcome}}}"#));
            }
        }
        let log = format!(
            "{{\"vantage\": 1}}\n{{\"type\": \"tree\", \"id\": \"t\", \"group\": \"g\", \"nodes\": [{}]}}\n",
            nodes.join(", ")
        );
        let run = load_bytes("treerl.jsonl", log.as_bytes(), &mut LoadReport::new("treerl")).unwrap();
        let reweight = if case["use_weighted_value"].as_bool().unwrap() {
            case["weighted_value_style"].as_str().unwrap()
        } else {
            "original"
        };
        let form = match case["reward"].as_str().unwrap() {
            "use_state_value_reward" => "local_state",
            "use_value_only" => "value_only",
            _ => "local",
        };
        let credit = credit_of(&run, "treerl", &[("reweight", reweight), ("value_form", form)]);
        let what = format!("{} {reweight} {form}", case["name"]);
        let values = case["values"].as_object().unwrap();
        for (path, leaf) in case["leaves"].as_object().unwrap() {
            let key = format!("t/{}", path.split('#').skip(1).collect::<Vec<_>>().join("#"));
            let t = run.trajectory_by_key(&key).unwrap_or_else(|| panic!("{what}: no {key}"));
            let got = &credit[run.trajectories.path_range(t)];
            if !leaf[1].as_bool().unwrap() {
                // Not selected: trained on no path, no credit.
                assert!(values.get(path).is_none() && got.iter().all(|v| v.is_nan()), "{what} {key}: {got:?}");
                continue;
            }
            let want: Vec<f64> = values[path].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            assert_eq!(got.len(), want.len(), "{what} {key}");
            for (g, w) in got.iter().zip(&want) {
                assert!((f64::from(*g) - w).abs() < 1e-5, "{what} {key}: {got:?} vs {want:?}");
            }
        }
    }
}

#[test]
fn prime_reproduces_primes_own_code_per_token() {
    let cases = golden_cases("prime", 8);
    for case in cases {
        let n = usize::try_from(case["n_samples"].as_u64().unwrap()).unwrap();
        let mut log = String::from("{\"vantage\": 1}\n");
        let samples = case["samples"].as_array().unwrap();
        for (i, s) in samples.iter().enumerate() {
            let len = s["prm_logprob"].as_array().unwrap().len();
            let acc = s["acc"].as_u64().unwrap();
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "s{i}", "group": "g{}", "outcome": {{"reward": {acc}, "success": {}}}, "steps": [{{"thought": "x", "token_span": [0, {len}]}}], "tokens": {{"mask": [{}], "prm_logprob": {}, "ref_logprob": {}, "logprob": {}}}}}"#,
                i / n,
                acc == 1,
                vec!["1"; len].join(","),
                s["prm_logprob"],
                s["ref_logprob"],
                s["ref_logprob"]
            ));
            log.push('\n');
        }
        let run = load_bytes("prime.jsonl", log.as_bytes(), &mut LoadReport::new("prime")).unwrap();
        let (low, high) = if case["filter_accuracy"].as_bool().unwrap() {
            (case["accuracy_bounds"][0].to_string(), case["accuracy_bounds"][1].to_string())
        } else {
            ("0".to_owned(), "1".to_owned())
        };
        let (gp, go) = (case["reward_model_gamma"].to_string(), case["verifier_gamma"].to_string());
        let sets: Vec<(String, String)> = [
            ("q_source", "prm_logprob"),
            ("granularity", case["prime_granularity"].as_str().unwrap()),
            ("gamma_process", gp.as_str()),
            ("gamma_outcome", go.as_str()),
            ("filter_low", low.as_str()),
            ("filter_high", high.as_str()),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let scheme = credit::scheme("prime").unwrap();
        let credit = scheme.compute(&run, &Params::resolve(scheme, None, &sets).unwrap()).unwrap();
        let (token, returns) = (credit.token.as_ref().unwrap(), credit.token_returns.as_ref().unwrap());
        let what = format!("{} {sets:?}", case["name"]);
        let kept = case["kept"].as_object().unwrap();
        for i in 0..samples.len() {
            let t = run.trajectory_by_key(&format!("s{i}")).unwrap();
            let range = run.trajectories.token_range(t);
            let Some(want) = kept.get(&i.to_string()) else {
                // Filtered out: no credit.
                assert!(token[range].iter().all(|v| v.is_nan()), "{what} s{i}");
                continue;
            };
            for (key, got) in [("advantages", &token[range.clone()]), ("returns", &returns[range.clone()])] {
                let want: Vec<f64> = want[key].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
                assert_eq!(got.len(), want.len(), "{what} s{i}");
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        (f64::from(*g) - w).abs() < 1e-5 * (1.0 + w.abs()),
                        "{what} s{i} {key}: {got:?} vs {want:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn treerpo_sapir_variant_reproduces_its_own_code() {
    let cases = golden_cases("treerpo", 3);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let leaves = case["leaves"].as_object().unwrap();
        let run = load_bytes("treerpo.jsonl", tree_from_paths(leaves).as_bytes(), &mut LoadReport::new(name)).unwrap();
        let credit =
            credit_of(&run, "treerpo", &[("value", "leaf_mean"), ("std", "false"), ("singleton", "untrained")]);
        let want = case["advantages"].as_object().unwrap();
        for leaf in leaves.keys() {
            let parts: Vec<&str> = leaf.split('#').skip(1).collect();
            let t = run.trajectory_by_key(&format!("t/{}", parts.join("#"))).unwrap();
            let got = &credit[run.trajectories.path_range(t)];
            for (depth, g) in got.iter().enumerate() {
                let node = parts[..=depth].join("#");
                match want.get(&node) {
                    // Not in a trained sibling set: no credit.
                    None => assert!(g.is_nan(), "{name} {node}: {got:?}"),
                    Some(w) => {
                        assert!((f64::from(*g) - w.as_f64().unwrap()).abs() < 1e-6, "{name} {node}: {got:?} vs {w}");
                    }
                }
            }
        }
    }
}

#[test]
fn tree_grpo_reproduces_tree_grpos_own_code() {
    let cases = golden_cases("tree_grpo", 2);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let leaves = case["leaves"].as_array().unwrap();
        // One tree record per (prompt, tree): a root step and the leaves under it.
        let mut trees: std::collections::BTreeMap<String, (String, Vec<String>)> = std::collections::BTreeMap::new();
        for (i, leaf) in leaves.iter().enumerate() {
            let (prompt, tree) = (leaf[0].as_str().unwrap(), leaf[1].as_str().unwrap());
            let entry = trees.entry(format!("{prompt}-{tree}")).or_insert_with(|| (prompt.to_owned(), Vec::new()));
            entry.1.push(format!(
                r#"{{"id": "l{i}", "parent": "root", "action": "a{i}", "trajectory": "leaf{i}", "outcome": {{"reward": {}}}}}"#,
                leaf[2]
            ));
        }
        let mut log = String::from("{\"vantage\": 1}\n");
        for (id, (group, nodes)) in &trees {
            log.push_str(&format!(
                r#"{{"type": "tree", "id": "{id}", "group": "{group}", "nodes": [{{"id": "root", "thought": "start"}}, {}]}}"#,
                nodes.join(", ")
            ));
            log.push('\n');
        }
        let run = load_bytes("tree_grpo.jsonl", log.as_bytes(), &mut LoadReport::new(name)).unwrap();
        for (estimator, combination) in [("tree", "inter+intra"), ("tree_2norm", "2norm"), ("tree_inner", "intra")] {
            let credit = credit_of(&run, "tree_grpo", &[("combination", combination)]);
            for (i, want) in case["advantages"][estimator].as_array().unwrap().iter().enumerate() {
                let t = run.trajectory_by_key(&format!("leaf{i}")).unwrap();
                let w = want.as_f64().unwrap();
                for g in &credit[run.trajectories.path_range(t)] {
                    assert!((f64::from(*g) - w).abs() < 1e-5, "{name} {estimator} leaf{i}: {g} vs {w}");
                }
            }
        }
    }
}

#[test]
fn grpo_care_reproduces_grpo_cares_own_code() {
    let cases = golden_cases("grpo_care", 9);
    for case in cases {
        let mut log = String::from("{\"vantage\": 1}\n");
        for (i, s) in case["samples"].as_array().unwrap().iter().enumerate() {
            let answer: Vec<f64> =
                s["answer_ref_logprobs"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            let (acc, format) = (s["accuracy"].as_f64().unwrap(), s["format"].as_f64().unwrap());
            let mut reference = vec![-0.7, -0.7];
            reference.extend(&answer);
            let n = reference.len();
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "s{i}", "group": "g", "outcome": {{"reward": {}, "components": {{"acc": {acc}, "format": {format}}}}}, "steps": [{{"thought": "think", "token_span": [0, 2]}}, {{"kind": "answer", "action": "answer", "token_span": [2, {n}]}}], "tokens": {{"mask": [{}], "ref_logprob": {reference:?}}}}}"#,
                acc + format,
                vec!["1"; n].join(",")
            ));
            log.push('\n');
        }
        let run = load_bytes("care.jsonl", log.as_bytes(), &mut LoadReport::new("care")).unwrap();
        let (bonus, margin, cap) = (
            case["bonus_coefficient"].to_string(),
            case["consistency_margin"].to_string(),
            case["confidence_upper_bound"].to_string(),
        );
        let sets = [("bonus", bonus.as_str()), ("margin", margin.as_str()), ("confidence_cap", cap.as_str())];
        let credit = credit_of(&run, "grpo_care", &sets);
        let what = format!("{} {sets:?}", case["name"]);
        for (i, want) in case["advantages"].as_array().unwrap().iter().enumerate() {
            let t = run.trajectory_by_key(&format!("s{i}")).unwrap();
            let w = want.as_f64().unwrap();
            for g in &credit[run.trajectories.path_range(t)] {
                assert!((f64::from(*g) - w).abs() < 1e-5, "{what} s{i}: {g} vs {w}");
            }
        }
    }
}

#[test]
fn lets_reproduces_lets_own_code() {
    let cases = golden_cases("lets", 6);
    for case in cases {
        let mut log = String::from("{\"vantage\": 1}\n");
        for (i, r) in case["rollouts"].as_array().unwrap().iter().enumerate() {
            let mut steps: Vec<String> = r["docs"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(k, docs)| format!(r#"{{"kind": "tool_call", "action": "search q{k}", "docs": {docs}}}"#))
                .collect();
            steps.push(r#"{"kind": "answer", "action": "answer"}"#.to_owned());
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "r{i}", "group": "g", "outcome": {{"reward": {}}}, "steps": [{}]}}"#,
                r["score"],
                steps.join(", ")
            ));
            log.push('\n');
        }
        let run = load_bytes("lets.jsonl", log.as_bytes(), &mut LoadReport::new("lets")).unwrap();
        let gamma = case["gamma"].to_string();
        let credit = credit_of(&run, "lets", &[("gamma", gamma.as_str())]);
        let what = format!("{} γ={gamma}", case["name"]);
        assert_rollouts(&run, &credit, &case["block_advantages"], "r", &what);
    }
}

#[test]
fn prorag_reproduces_prorags_own_code() {
    let cases = golden_cases("prorag", 4);
    for case in cases {
        let mut log = String::from("{\"vantage\": 1}\n");
        for (i, s) in case["samples"].as_array().unwrap().iter().enumerate() {
            // Each step: its generated tokens (policy), then the retrieved documents and the tag
            // after it (not policy).
            let (mut at, mut mask) = (0u64, Vec::new());
            let steps: Vec<String> = s["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|step| {
                    let (generated, retrieved) =
                        (step["generated"].as_u64().unwrap(), step["retrieved"].as_u64().unwrap());
                    let start = at;
                    at += generated + retrieved + 1;
                    mask.extend(std::iter::repeat_n("1", usize::try_from(generated).unwrap()));
                    mask.extend(std::iter::repeat_n("0", usize::try_from(retrieved + 1).unwrap()));
                    format!(
                        r#"{{"action": "step", "scores": {{"prm": {}}}, "token_span": [{start}, {at}]}}"#,
                        step["prm"]
                    )
                })
                .collect();
            log.push_str(&format!(
                r#"{{"type": "trajectory", "id": "s{i}", "group": "g", "outcome": {{"reward": {}}}, "steps": [{}], "tokens": {{"mask": [{}]}}}}"#,
                s["reward"],
                steps.join(", "),
                mask.join(",")
            ));
            log.push('\n');
        }
        let run = load_bytes("prorag.jsonl", log.as_bytes(), &mut LoadReport::new("prorag")).unwrap();
        let beta = case["prm_beta"].to_string();
        // The defaults are the code's: no format term (the code's is −2 on every step).
        let credit = credit_of(&run, "prorag", &[("beta", beta.as_str())]);
        let what = format!("{} β={beta}", case["name"]);
        assert_rollouts(&run, &credit, &case["advantages"], "s", &what);
    }
}

#[test]
fn prm_process_aggregates_as_search_and_learn_does() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/prm_aggregate/cases.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    let mut log = String::from("{\"vantage\": 1}\n");
    for (i, case) in cases.iter().enumerate() {
        let steps: Vec<String> = case["scores"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| format!(r#"{{"thought": "s", "scores": {{"prm": {p}}}}}"#))
            .collect();
        log.push_str(&format!(
            r#"{{"type": "trajectory", "id": "t{i}", "group": "g", "outcome": {{"reward": 0}}, "steps": [{}]}}"#,
            steps.join(", ")
        ));
        log.push('\n');
    }
    let run = load_bytes("agg.jsonl", log.as_bytes(), &mut LoadReport::new("agg")).unwrap();
    let scheme = credit::scheme("prm_process").unwrap();
    for agg in ["min", "prod", "last"] {
        let sets = [("form".to_owned(), "agg".to_owned()), ("agg".to_owned(), agg.to_owned())];
        let credit = scheme.compute(&run, &Params::resolve(scheme, None, &sets).unwrap()).unwrap();
        for (i, case) in cases.iter().enumerate() {
            let t = run.trajectory_by_key(&format!("t{i}")).unwrap();
            let row = credit.terms.row(t.index());
            let score = row.iter().find(|(name, _)| *name == "score").unwrap().1;
            let want = case[agg].as_f64().unwrap();
            assert!((score - want).abs() < 1e-6, "{agg} t{i}: {score} vs {want}");
        }
    }
}

#[test]
fn spo_tree_reproduces_spos_own_code() {
    let cases = golden_cases("spo_tree", 2);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let leaves = case["leaves"].as_object().unwrap();
        let run = load_bytes("spo.jsonl", tree_from_paths(leaves).as_bytes(), &mut LoadReport::new(name)).unwrap();
        for (key, sets) in [
            ("rloo", vec![("edge_adv", "rloo")]),
            ("grpo", vec![("edge_adv", "grpo")]),
            ("use_pav", vec![("pav", "true"), ("drop_zero", "false")]),
        ] {
            let credit = credit_of(&run, "spo_tree", &sets);
            let want = case[key].as_object().unwrap();
            for leaf in leaves.keys() {
                let parts: Vec<&str> = leaf.split('#').skip(1).collect();
                let t = run.trajectory_by_key(&format!("t/{}", parts.join("#"))).unwrap();
                let got = &credit[run.trajectories.path_range(t)];
                for (depth, g) in got.iter().enumerate() {
                    let node = parts[..=depth].join("#");
                    match want.get(&node) {
                        // A dropped edge: no credit.
                        None => assert!(g.is_nan(), "{name} {key} {node}: {got:?}"),
                        Some(w) => {
                            let w = w.as_f64().unwrap();
                            assert!((f64::from(*g) - w).abs() < 1e-5, "{name} {key} {node}: {got:?} vs {w}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn logged_passes_the_trainers_own_advantages_through() {
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 1, "components": {"advantage": 0.7}}, "steps": [{"thought": "x", "scores": {"logged_advantage": 0.5}, "token_span": [0, 2]}, {"thought": "y", "scores": {"logged_advantage": 0.25}, "token_span": [2, 4]}], "tokens": {"mask": [1, 1, 0, 1], "advantage": [0.1, 0.3, 9.0, 0.6]}}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 0, "components": {"advantage": -0.7}}, "steps": [{"thought": "z", "scores": {"logged_advantage": -1.0}}]}
"#;
    let run = load_bytes("logged.jsonl", log.as_bytes(), &mut LoadReport::new("logged")).unwrap();
    let scheme = credit::scheme("logged").unwrap();
    let compute = |source: &str| {
        let sets = [("source".to_owned(), source.to_owned())];
        scheme.compute(&run, &Params::resolve(scheme, None, &sets).unwrap()).unwrap()
    };
    // Per token: each step the mean over its policy tokens (the masked 9.0 left out).
    let token = compute("token");
    assert_eq!(token.token.as_deref().unwrap()[..4], [0.1, 0.3, 9.0, 0.6]);
    assert!((token.step[0] - 0.2).abs() < 1e-6 && (token.step[1] - 0.6).abs() < 1e-6, "{:?}", token.step);
    assert_eq!(compute("step").step, vec![0.5, 0.25, -1.0]);
    assert_eq!(compute("outcome").step, vec![0.7, 0.7, -0.7]);
    // auto takes the token array first (b logs no tokens: no value there).
    let auto = credit_of(&run, "logged", &[]);
    assert_eq!(auto[..2], token.step[..2]);
    assert!(auto[2].is_nan() && token.step[2].is_nan());
}

/// The terms of path step `p` by name: its trajectory's row of `credit.terms`, then the scheme's
/// own terms for that step.
fn step_terms_of(
    run: &Run,
    scheme: &dyn credit::Scheme,
    params: &Params,
    credit: &credit::Credit,
    t: vantage::model::TrajectoryId,
    p: usize,
) -> std::collections::HashMap<String, f64> {
    let mut terms: std::collections::HashMap<String, f64> =
        credit.terms.for_step(t.index(), p).into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    for (name, value) in scheme.step_terms(run, params, credit, t, p) {
        terms.insert(name, value.unwrap_or(f64::NAN));
    }
    terms
}

#[test]
fn triage_terms_reproduce_every_step_by_hand() {
    let run = sample("alfworld_roles.jsonl");
    let scheme = credit::scheme("triage").unwrap();
    for whiten in ["true", "false"] {
        let params = Params::resolve(scheme, None, &[("whiten".to_owned(), whiten.to_owned())]).unwrap();
        let credit = scheme.compute(&run, &params).unwrap();
        let tr = &run.trajectories;
        // The batch moments, worked out here over every step's A_outcome + w·c(role), the
        // A_outcome the group's GRPO advantage (checked below).
        let raw: Vec<f64> = tr
            .ids()
            .flat_map(|t| tr.path_range(t))
            .map(|p| {
                let terms = step_terms_of(&run, scheme, &params, &credit, tr.at_position(p).unwrap(), p);
                let role = run.label(run.nodes.role[tr.path_nodes[p].index()]);
                grpo_of(&run, p)
                    + terms["w"] * terms[&format!("c({})", if role.is_empty() { "unlabeled" } else { role })]
            })
            .collect();
        // The population std (over n), as TRIAGE whitens.
        let (batch_mean, batch_std) = moments(&raw, 0.0);
        for t in tr.ids() {
            for p in tr.path_range(t) {
                let terms = step_terms_of(&run, scheme, &params, &credit, t, p);
                if whiten == "true" {
                    assert!((terms["batch mean"] - batch_mean).abs() < 1e-4, "batch mean {batch_mean}: {terms:?}");
                    assert!((terms["batch std"] - batch_std).abs() < 1e-4, "batch std {batch_std}: {terms:?}");
                }
                // A_outcome is the group's GRPO advantage, worked out from its rewards here.
                let (r, mean, std, _) = group_of(&run, p);
                let grpo = (r - mean) / (std + 1e-6);
                assert!((terms["A_outcome"] - grpo).abs() < 1e-4 * (1.0 + grpo.abs()), "step {p}: A_outcome {terms:?}");
                let node = tr.path_nodes[p].index();
                let role = run.label(run.nodes.role[node]);
                let c = terms[&format!("c({})", if role.is_empty() { "unlabeled" } else { role })];
                let mut by_hand = terms["A_outcome"] + terms["w"] * c;
                if whiten == "true" {
                    by_hand = (by_hand - terms["batch mean"]) / terms["batch std"];
                } else {
                    assert!(!terms.contains_key("batch mean"));
                }
                let value = f64::from(credit.step[p]);
                assert!(
                    (value - by_hand).abs() < 1e-4 * (1.0 + value.abs()),
                    "step {p}: {value} vs {by_hand} from {terms:?}"
                );
            }
        }
    }
}

#[test]
fn prm_process_terms_list_the_scores_it_sums_and_reproduce_every_step() {
    let run = sample("math_grpo_prm.jsonl");
    let scheme = credit::scheme("prm_process").unwrap();
    for refine in ["none", "delta"] {
        let params = Params::resolve(scheme, None, &[("refine".to_owned(), refine.to_owned())]).unwrap();
        let credit = scheme.compute(&run, &params).unwrap();
        let tr = &run.trajectories;
        for t in tr.ids() {
            let range = tr.path_range(t);
            // The group's mean and unbiased std of its step scores, worked out here.
            let scores = &run.nodes.scores["prm"];
            let group: Vec<f64> = run
                .groups
                .members(tr.group[t.index()])
                .iter()
                .flat_map(|m| tr.path(*m).iter().map(|n| f64::from(scores[n.index()])))
                .filter(|s| !s.is_nan())
                .collect();
            let (mean, std) = moments(&group, 1.0);
            let n = group.len() as f64;
            for p in range.clone() {
                let terms = step_terms_of(&run, scheme, &params, &credit, t, p);
                if refine == "none" && n > 1.0 {
                    assert!((terms["mean"] - mean).abs() < 1e-5 && (terms["std"] - std).abs() < 1e-5, "{terms:?}");
                }
                let value = f64::from(credit.step[p]);
                // Σ over this step and the later ones of (p_j − mean)/(std + ε), a missing score adding 0.
                let k = p - range.start;
                let later = (k + 1..=range.len()).map(|j| terms[&format!("p{j}")]).filter(|s| !s.is_nan());
                assert!(!terms.contains_key(&format!("p{k}")), "an earlier score is listed at step {}", k + 1);
                let by_hand: f64 = later.map(|s| (s - terms["mean"]) / (terms["std"] + terms["ε"])).sum();
                if value.is_nan() {
                    continue;
                }
                assert!(
                    (value - by_hand).abs() < 1e-4 * (1.0 + value.abs()),
                    "{refine} step {p}: {value} vs {by_hand} from {terms:?}"
                );
            }
        }
    }
}

/// Each step of each trajectory of `run` under `id` with `sets`: its credit and its terms.
fn each_step(
    run: &Run,
    id: &str,
    sets: &[(&str, &str)],
    mut check: impl FnMut(usize, f64, &std::collections::HashMap<String, f64>),
) {
    let scheme = credit::scheme(id).unwrap();
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let params = Params::resolve(scheme, None, &sets).unwrap();
    let credit = scheme.compute_explained(run, &params).unwrap();
    // Explained or not, the same credit to the bit.
    let plain = scheme.compute(run, &params).unwrap();
    let bits = |c: &credit::Credit| c.step.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&plain), bits(&credit), "{id} {sets:?}: compute_explained changed the credit");
    let tr = &run.trajectories;
    let mut checked = 0;
    for t in tr.ids() {
        for p in tr.path_range(t) {
            let value = f64::from(credit.step[p]);
            if value.is_nan() {
                continue;
            }
            check(p, value, &step_terms_of(run, scheme, &params, &credit, t, p));
            checked += 1;
        }
    }
    assert!(checked > 0, "{id} {sets:?}: no step has credit");
}

fn close(value: f64, by_hand: f64, what: &str, terms: &std::collections::HashMap<String, f64>) {
    assert!((value - by_hand).abs() < 1e-4 * (1.0 + value.abs()), "{what}: {value} vs {by_hand} from {terms:?}");
}

/// A node of the value tree a tree scheme builds, worked out here: the group, and the steps from the
/// group's root to it. A step is its own node in the log when the log branches (a node with a
/// sibling: explicit trees), else its content (kind, the three texts, the state key), so that
/// identical prefixes of independent rollouts share a node (merged chains).
type Prefix = (usize, Vec<String>);

/// The value tree of `run` as the tree schemes' `merge = auto` builds it, worked out from the log
/// here (not by the code under test): each trajectory's path as tree nodes, and its outcome.
struct ByHandTree {
    paths: Vec<Vec<Prefix>>,
    outcomes: Vec<f64>,
    groups: Vec<usize>,
}

impl ByHandTree {
    fn of(run: &Run) -> Self {
        let tr = &run.trajectories;
        let nodes = &run.nodes;
        let branches = nodes.next_sibling.iter().any(|s| s.is_some());
        let step = |n: vantage::model::NodeId| {
            let i = n.index();
            if branches {
                format!("#{i}")
            } else {
                let text = |id| run.text(id).into_owned();
                format!(
                    "{:?}",
                    (
                        nodes.kind[i].0,
                        text(nodes.thought[i]),
                        text(nodes.action[i]),
                        text(nodes.observation[i]),
                        nodes.state_key[i].0
                    )
                )
            }
        };
        let mut paths = Vec::new();
        for t in tr.ids() {
            let group = tr.group[t.index()].index();
            let mut prefix = Vec::new();
            let mut path = Vec::new();
            for &n in tr.path(t) {
                prefix.push(step(n));
                path.push((group, prefix.clone()));
            }
            paths.push(path);
        }
        Self {
            paths,
            outcomes: tr.ids().map(|t| f64::from(tr.reward[t.index()])).collect(),
            groups: tr.ids().map(|t| tr.group[t.index()].index()).collect(),
        }
    }

    /// The tree node of path position `p`.
    fn node(&self, run: &Run, p: usize) -> &Prefix {
        let tr = &run.trajectories;
        let t = tr.at_position(p).unwrap();
        &self.paths[t.index()][p - tr.path_range(t).start]
    }

    /// The trajectories with an outcome: their index, path and outcome.
    fn scored(&self) -> impl Iterator<Item = (usize, &[Prefix], f64)> {
        self.paths
            .iter()
            .enumerate()
            .filter(|(t, _)| !self.outcomes[*t].is_nan())
            .map(|(t, p)| (t, &p[..], self.outcomes[t]))
    }

    /// Each node's mean outcome over the trajectories through it (`deeper`: only those that go
    /// on past it), with their count; a group's root (no steps) over all of its own.
    fn leaf_means(&self, deeper: bool) -> std::collections::HashMap<Prefix, (f64, f64)> {
        let mut sums: std::collections::HashMap<Prefix, (f64, f64)> = std::collections::HashMap::new();
        for (t, path, r) in self.scored() {
            let root = (self.groups[t], Vec::new());
            let through = if deeper { &path[..path.len().saturating_sub(1)] } else { path };
            for node in std::iter::once(&root).chain(through) {
                let slot = sums.entry(node.clone()).or_default();
                *slot = (slot.0 + r, slot.1 + 1.0);
            }
        }
        sums.into_iter().map(|(k, (s, n))| (k, (s / n, n))).collect()
    }

    /// Each node's children (a group's root's: its top steps).
    fn children(&self) -> std::collections::HashMap<Prefix, std::collections::BTreeSet<Prefix>> {
        let mut children: std::collections::HashMap<Prefix, std::collections::BTreeSet<Prefix>> =
            std::collections::HashMap::new();
        for path in &self.paths {
            for node in path {
                children.entry(parent_of(node)).or_default().insert(node.clone());
            }
        }
        children
    }

    /// Each node's mean of its children's values, where it has children with one; else, a node
    /// where trajectories end, the mean of `leaf` over them (their outcome: TreeRPO's and SPO's
    /// `child_mean`). `leaves_first`: a node where a trajectory ends keeps that value even with
    /// children (TreePO's segment rewards). A group's root is the mean of its top steps'.
    fn child_means(&self, leaves_first: bool, leaf: impl Fn(usize) -> f64) -> std::collections::HashMap<Prefix, f64> {
        let mut ends: std::collections::HashMap<Prefix, (f64, f64)> = std::collections::HashMap::new();
        for (t, path, _) in self.scored() {
            let slot = ends.entry(path.last().unwrap().clone()).or_default();
            *slot = (slot.0 + leaf(t), slot.1 + 1.0);
        }
        let children = self.children();
        let all: std::collections::BTreeSet<&Prefix> = children.keys().chain(children.values().flatten()).collect();
        let mut by_depth: Vec<&Prefix> = all.into_iter().collect();
        by_depth.sort_by_key(|node| std::cmp::Reverse(node.1.len()));
        let mut values = std::collections::HashMap::new();
        for node in by_depth {
            let own = ends.get(node).map(|(s, n)| s / n);
            let below: Vec<f64> =
                children.get(node).into_iter().flatten().filter_map(|c| values.get(c).copied()).collect();
            let below = (!below.is_empty()).then(|| below.iter().sum::<f64>() / below.len() as f64);
            if let Some(value) = if leaves_first { own.or(below) } else { below.or(own) } {
                values.insert(node.clone(), value);
            }
        }
        values
    }
}

/// The value tree's parent of `node`: the prefix one step shorter (a group's root has none).
fn parent_of(node: &Prefix) -> Prefix {
    (node.0, node.1[..node.1.len().saturating_sub(1)].to_vec())
}

/// The samples whose tree schemes' terms are worked out by hand, each with its value tree: the log's
/// own nodes on the explicit trees of the tree sample, the trie of identical step prefixes on
/// `ALFWorld`'s independent rollouts.
fn tree_samples() -> Vec<(&'static str, Run, ByHandTree)> {
    ["tree_rollouts.jsonl", "alfworld_roles.jsonl"]
        .into_iter()
        .map(|name| {
            let run = sample(name);
            let tree = ByHandTree::of(&run);
            (name, run, tree)
        })
        .collect()
}

#[test]
fn treeps_rag_and_treerl_terms_reproduce_every_step_by_hand() {
    for (name, run, tree) in tree_samples() {
        let tr = &run.trajectories;
        // Both samples share steps between rollouts: fewer tree nodes than steps.
        let distinct: std::collections::HashSet<&Prefix> = tree.paths.iter().flatten().collect();
        assert!(
            distinct.len() < tr.path_nodes.len(),
            "{name}: {} nodes for {} steps",
            distinct.len(),
            tr.path_nodes.len()
        );
        // TreePS-RAG's V(step) and V(parent) are the mean outcomes of the leaves below them (the
        // prompt's of all its group's).
        let below = tree.leaf_means(false);
        for weight in ["0", "0.5"] {
            each_step(&run, "treeps_rag", &[("outcome_weight", weight)], |p, v, t| {
                let node = tree.node(&run, p);
                close(t["V(step)"], below[node].0, &format!("{name} treeps_rag V(step) {p}"), t);
                close(t["V(parent)"], below[&parent_of(node)].0, &format!("{name} treeps_rag V(parent) {p}"), t);
                // The outcome advantage (the group's GRPO), worked out only where it is weighed.
                if t["w"] > 0.0 {
                    close(t["A_outcome"], grpo_of(&run, p), &format!("{name} treeps_rag A_outcome {p}"), t);
                }
                close(v, t["V(step)"] - t["V(parent)"] + t["w"] * t["A_outcome"], &format!("{name} treeps_rag {p}"), t);
            });
        }
        // TreeRL. Its code's V̂: the leaves below, each centred on the mean of the other leaves
        // of its forest, summed, over √(the trained ones) and over their number; its paper's V:
        // the mean outcome of the leaves below, and their number.
        let trained = |t: usize| {
            tr.path(vantage::model::TrajectoryId::from_index(t)).last().is_none_or(|l| !run.nodes.unselected(*l))
        };
        let mut tally: std::collections::HashMap<Prefix, (f64, f64, f64)> = std::collections::HashMap::new();
        for g in run.groups.ids() {
            let scored: Vec<(usize, f64)> = run
                .groups
                .members(g)
                .iter()
                .map(|m| (m.index(), tree.outcomes[m.index()]))
                .filter(|(_, r)| !r.is_nan())
                .collect();
            let total: f64 = scored.iter().map(|(_, r)| r).sum();
            for &(t, r) in &scored {
                let centred = r - (total - r) / (scored.len() as f64 - 1.0);
                for node in std::iter::once(&(g.index(), Vec::new())).chain(&tree.paths[t]) {
                    let slot = tally.entry(node.clone()).or_default();
                    *slot = (slot.0 + centred, slot.1 + 1.0, slot.2 + f64::from(u8::from(trained(t))));
                }
            }
        }
        let v_hat = |node: &Prefix| {
            tally
                .get(node)
                .map_or(0.0, |&(sum, leaves, chosen)| if chosen > 0.0 { sum / chosen.sqrt() / leaves } else { 0.0 })
        };
        for form in ["local_state", "local", "value_only", "paper"] {
            each_step(&run, "treerl", &[("value_form", form), ("penalize_truncated", "false")], |p, v, t| {
                let node = tree.node(&run, p);
                let what = |term: &str| format!("{name} treerl {form} {term} {p}");
                let by_hand = match form {
                    "local_state" => t["local"] + t["V̂(step)"],
                    "local" => t["local"],
                    "value_only" => t["V̂(step)"],
                    _ => {
                        close(t["V(step)"], below[node].0, &what("V(step)"), t);
                        close(t["V(parent)"], below[&parent_of(node)].0, &what("V(parent)"), t);
                        close(t["V(root)"], below[&(node.0, Vec::new())].0, &what("V(root)"), t);
                        close(t["leaves"], below[node].1, &what("leaves"), t);
                        ((t["V(step)"] - t["V(root)"]) + (t["V(step)"] - t["V(parent)"])) / t["leaves"].sqrt()
                    }
                };
                if form != "paper" {
                    close(t["V̂(step)"], v_hat(node), &what("V̂(step)"), t);
                }
                if form != "value_only" && form != "paper" {
                    close(t["V̂(parent)"], v_hat(&parent_of(node)), &what("V̂(parent)"), t);
                    // The local term, or (fill-in) the previous step's where it is 0.
                    let local = t["V̂(step)"] - t["V̂(parent)"];
                    assert!(
                        local.abs() < 1e-8 || (local - t["local"]).abs() < 1e-6,
                        "{}: local is V̂(step) − V̂(parent)",
                        what("local")
                    );
                }
                close(v, by_hand, &what("credit"), t);
            });
        }
    }
}

#[test]
fn spo_tree_terms_reproduce_every_step_by_hand() {
    for (name, run, tree) in tree_samples() {
        let children = tree.children();
        // SPO's V: the mean of the children's values, a leaf's its outcome; the sibling std the
        // population std of the parent's children's values; TreePO's z the value z-scored among
        // its siblings (0 when they are all alike, the value itself for a lone child).
        let by_children = tree.child_means(false, |t| tree.outcomes[t]);
        let siblings =
            |node: &Prefix| -> Vec<f64> { children[&parent_of(node)].iter().map(|c| by_children[c]).collect() };
        let z = |node: &Prefix| {
            let values = siblings(node);
            let (mean, std) = moments(&values, 0.0);
            match (values.len(), std <= 1e-8) {
                (1, _) => by_children[node],
                (_, true) => 0.0,
                _ => (by_children[node] - mean) / std,
            }
        };
        let spo = |p: usize, t: &Named, what: &str| {
            let node = tree.node(&run, p);
            close(t["V(n)"], by_children[node], &format!("{name} {what} V(n) {p}"), t);
            close(t["V(parent)"], by_children[&parent_of(node)], &format!("{name} {what} V(parent) {p}"), t);
        };
        each_step(&run, "spo_tree", &[], |p, v, t| {
            spo(p, t, "spo");
            close(v, t["V(n)"] - t["V(parent)"], &format!("{name} spo {p}"), t);
        });
        each_step(&run, "spo_tree", &[("edge_adv", "grpo")], |p, v, t| {
            spo(p, t, "spo grpo");
            let std = moments(&siblings(tree.node(&run, p)), 0.0).1;
            close(t["sibling std"], std, &format!("{name} spo grpo sibling std {p}"), t);
            close(v, (t["V(n)"] - t["V(parent)"]) / (t["sibling std"] + 1e-8), &format!("{name} spo grpo {p}"), t);
        });
        each_step(&run, "spo_tree", &[("variant", "treepo_spo")], |p, v, t| {
            let node = tree.node(&run, p);
            let parent = parent_of(node);
            close(t["z(n)"], z(node), &format!("{name} spo treepo z(n) {p}"), t);
            close(
                t["z(parent)"],
                if parent.1.is_empty() { 0.0 } else { z(&parent) },
                &format!("{name} spo treepo z(parent) {p}"),
                t,
            );
            close(v, t["z(n)"] - t["z(parent)"], &format!("{name} spo treepo {p}"), t);
        });
        each_step(&run, "spo_tree", &[("pav", "true")], |p, v, t| {
            spo(p, t, "spo pav");
            let bok = |x: f64| 1.0 - (1.0 - x).powi(t["k"] as i32);
            close(v, t["V(n)"] + t["w"] * (bok(t["V(n)"]) - bok(t["V(parent)"])), &format!("{name} spo pav {p}"), t);
        });
    }
}

#[test]
fn step_value_schemes_terms_reproduce_every_step_by_hand() {
    // Hybrid: α·A + β·(s − mean)·scale, a missing score adding 0.
    let math = sample("math_grpo_prm.jsonl");
    each_step(&math, "hybrid", &[], |p, v, t| {
        // The outcome term is the group's GRPO advantage, the score the step's own, worked out here.
        close(t["A_outcome"], grpo_of(&math, p), &format!("hybrid A_outcome {p}"), t);
        let score = f64::from(math.nodes.scores["prm"][math.trajectories.path_nodes[p].index()]);
        assert!(score.to_bits() == t["s"].to_bits() || (score - t["s"]).abs() < 1e-6, "hybrid s {p}: {t:?}");
        // The score's mean and scale 1/(std + ε) over the group's logged step scores (unbiased).
        let tr = &math.trajectories;
        let group = tr.group[tr.at_position(p).unwrap().index()];
        let scores: Vec<f64> = math
            .groups
            .members(group)
            .iter()
            .flat_map(|m| tr.path(*m).iter().map(|n| f64::from(math.nodes.scores["prm"][n.index()])))
            .filter(|s| !s.is_nan())
            .collect();
        let (mean, std) = moments(&scores, 1.0);
        close(t["score mean"], mean, &format!("hybrid score mean {p}"), t);
        close(t["score scale"], 1.0 / (std + 1e-6), &format!("hybrid score scale {p}"), t);
        let s = if t["s"].is_nan() { 0.0 } else { (t["s"] - t["score mean"]) * t["score scale"] };
        close(v, t["α"] * t["A_outcome"] + t["β"] * s, &format!("hybrid {p}"), t);
    });
    for name in ["tree_rollouts.jsonl", "alfworld_roles.jsonl"] {
        let run = sample(name);
        // VinePPO: r_k + V(s_k) − V(s_(k−1)), whitened over the batch or not.
        // Whitened: by the mean and std (unbiased, √(var + 1e-8)) of the raw values of every step
        // that has one, each weighing 1 (these samples log no tokens), worked out here.
        assert_eq!(run.tokens.len, 0, "{name}: whitening weighs steps by their tokens here");
        let vineppo = credit::scheme("vineppo").unwrap();
        let unwhitened = Params::resolve(vineppo, None, &[("whiten".to_owned(), "false".to_owned())]).unwrap();
        let raw: Vec<f64> = vineppo
            .compute(&run, &unwhitened)
            .unwrap()
            .step
            .iter()
            .map(|&v| f64::from(v))
            .filter(|v| !v.is_nan())
            .collect();
        let (mean, std) = moments(&raw, 1.0);
        let whitening = (mean, (std.powi(2) + 1e-8).sqrt());
        for whiten in ["true", "false"] {
            each_step(&run, "vineppo", &[("whiten", whiten)], |p, v, t| {
                if whiten == "true" {
                    close(t["batch mean"], whitening.0, &format!("{name} vineppo batch mean {p}"), t);
                    close(t["batch std"], whitening.1, &format!("{name} vineppo batch std {p}"), t);
                }
                // A state's value is its step's Monte-Carlo mean, the outcome the last step's reward.
                let tr = &run.trajectories;
                let traj = tr.at_position(p).unwrap();
                let (path, k) = (tr.path(traj), p - tr.path_range(traj).start);
                if k + 1 < path.len()
                    && let Some(mc) = run.nodes.mc(path[k])
                {
                    close(t["V(s_k)"], f64::from(mc.mean), &format!("{name} vineppo V(s_k) {p}"), t);
                } else if k + 1 == path.len() {
                    close(t["r_k"], f64::from(tr.reward[traj.index()]), &format!("{name} vineppo r_k {p}"), t);
                }
                // The state before: the previous step's Monte-Carlo mean.
                if k > 0
                    && let Some(mc) = run.nodes.mc(path[k - 1])
                {
                    close(t["V(s_(k−1))"], f64::from(mc.mean), &format!("{name} vineppo V(s_(k−1)) {p}"), t);
                }
                let raw = t["r_k"] + t["V(s_k)"] - t["V(s_(k−1))"];
                let (mean, std) = if whiten == "true" { (t["batch mean"], t["batch std"]) } else { (0.0, 1.0) };
                close(v, (raw - mean) / std, &format!("{name} vineppo {whiten} {p}"), t);
            });
        }
        // Tree-GRPO: inter + intra, or intra alone.
        for combination in ["inter+intra", "2norm", "intra"] {
            each_step(&run, "tree_grpo", &[("combination", combination)], |p, v, t| {
                // R is the trajectory's outcome; inter its GRPO advantage over the prompt's forest.
                close(t["R"], group_of(&run, p).0, &format!("{name} tree_grpo R {p}"), t);
                if combination == "inter+intra" {
                    close(t["inter"], grpo_of(&run, p), &format!("{name} tree_grpo inter {p}"), t);
                }
                // intra: GRPO of R among the rollouts of its tree (its group's of the same tree record).
                let tr = &run.trajectories;
                let traj = tr.at_position(p).unwrap();
                let tree: Vec<f64> = run
                    .groups
                    .members(tr.group[traj.index()])
                    .iter()
                    .filter(|m| tr.tree[m.index()] == tr.tree[traj.index()])
                    .map(|m| f64::from(tr.reward[m.index()]))
                    .collect();
                if combination != "2norm" && tree.len() > 1 {
                    let (mean, std) = moments(&tree, 1.0);
                    let intra = (f64::from(tr.reward[traj.index()]) - mean) / (std + 1e-6);
                    close(t["intra"], intra, &format!("{name} tree_grpo intra {p}"), t);
                }
                let by_hand = if combination == "inter+intra" { t["inter"] + t["intra"] } else { t["intra"] };
                close(v, by_hand, &format!("{name} tree_grpo {combination} {p}"), t);
            });
        }
    }
}

#[test]
fn treepo_and_treerpo_terms_reproduce_every_step_by_hand() {
    for (name, run, tree) in tree_samples() {
        // TreePO, over the value tree worked out here (the log's own nodes on explicit trees, the
        // trie of identical prefixes on ALFWorld's rollouts). A subgroup: at depth 0 the group, at
        // depth d the leaves through the path's (d − 1)-th node that go on past it.
        let deeper = tree.leaf_means(true);
        let tr = &run.trajectories;
        // The subgroup estimator's a: the mean over depths of R less its subgroup's mean, for the
        // subgroups of two leaves or more (the group's always, its mean 0 for a group of one).
        let subgroup_a = |t: usize| {
            let r = tree.outcomes[t];
            let path = &tree.paths[t];
            let root = deeper[&(tree.groups[t], Vec::new())];
            let mut means = vec![if root.1 < 2.0 { 0.0 } else { root.0 }];
            means.extend(path[..path.len() - 1].iter().map(|n| deeper[n]).filter(|s| s.1 >= 2.0).map(|s| s.0));
            means.iter().map(|m| r - m).sum::<f64>() / means.len() as f64
        };
        // The segment estimator: a leaf's reward is its advantage over the group and each node of
        // its path before the leaf, weighted by their subgroups' sizes (plus the leaf's own, 1, at
        // advantage 0); a node's reward is the mean of its children's (a leaf keeps its own).
        let leaf_reward = |t: usize| {
            let r = tree.outcomes[t];
            let path = &tree.paths[t];
            let root = (tree.groups[t], Vec::new());
            let subgroups = std::iter::once(&root).chain(&path[..path.len() - 1]).map(|n| deeper[n]);
            let (total, weight) =
                subgroups.fold((0.0, 1.0), |(total, weight), (mean, size)| (total + (r - mean) * size, weight + size));
            total / weight
        };
        let segment_reward = tree.child_means(true, leaf_reward);
        let eta = 0.5;
        let segment_terms = |p: usize| {
            let t = tr.at_position(p).unwrap();
            let k = p - tr.path_range(t).start;
            let node = tree.node(&run, p);
            let parent = parent_of(node);
            let parent_reward = if parent.1.is_empty() { 0.0 } else { segment_reward[&parent] };
            let weight = f64::powi(eta, (tr.num_steps(t) - k) as i32);
            (segment_reward[node], parent_reward, weight)
        };
        // The batch's whitening: the mean and the std (unbiased, √(var + 1e-8)) over every step
        // with a value, each weighing 1 (these samples log no tokens).
        assert_eq!(run.tokens.len, 0, "{name}: whitening weighs steps by their tokens here");
        let whitening = |raw: &dyn Fn(usize) -> f64| {
            let values: Vec<f64> = (0..tr.path_nodes.len()).map(raw).filter(|v| !v.is_nan()).collect();
            let (mean, std) = moments(&values, 1.0);
            (mean, (std.powi(2) + 1e-8).sqrt())
        };
        let scored = |p: usize| !tree.outcomes[tr.at_position(p).unwrap().index()].is_nan();
        let subgroup_moments =
            whitening(&|p| if scored(p) { subgroup_a(tr.at_position(p).unwrap().index()) } else { f64::NAN });
        let segment_moments = whitening(&|p| {
            let (reward, parent, weight) = segment_terms(p);
            if scored(p) { reward - weight * parent } else { f64::NAN }
        });
        for whiten in ["true", "false"] {
            let batch = |m: (f64, f64)| if whiten == "true" { m } else { (0.0, 1.0) };
            each_step(&run, "treepo", &[("whiten", whiten)], |p, v, t| {
                let what = |term: &str| format!("{name} treepo {whiten} {term} {p}");
                close(t["a"], subgroup_a(tr.at_position(p).unwrap().index()), &what("a"), t);
                let (mean, std) = batch(subgroup_moments);
                close(t["batch mean"], mean, &what("batch mean"), t);
                close(t["batch std"], std, &what("batch std"), t);
                close(v, (t["a"] - t["batch mean"]) / t["batch std"], &what("credit"), t);
            });
            each_step(&run, "treepo", &[("whiten", whiten), ("estimator", "segment"), ("eta", "0.5")], |p, v, t| {
                let what = |term: &str| format!("{name} treepo segment {whiten} {term} {p}");
                let (reward, parent, weight) = segment_terms(p);
                close(t["segment reward"], reward, &what("segment reward"), t);
                close(t["parent's reward"], parent, &what("parent's reward"), t);
                close(t["weight"], weight, &what("weight"), t);
                let (mean, std) = batch(segment_moments);
                close(t["batch mean"], mean, &what("batch mean"), t);
                close(t["batch std"], std, &what("batch std"), t);
                let raw = t["segment reward"] - t["weight"] * t["parent's reward"];
                close(v, (raw - t["batch mean"]) / t["batch std"], &what("credit"), t);
            });
        }
        // TreeRPO: a step z-scored among its siblings; one without siblings 0, or under verl's
        // rule its value over 1 + ε. Its V(step): the mean of its children's values, a leaf's its
        // outcome; the sibling count, mean and std (the population's) over its parent's children.
        let by_children = tree.child_means(false, |t| tree.outcomes[t]);
        let children = tree.children();
        for singleton in ["zero", "verl"] {
            each_step(&run, "treerpo", &[("singleton", singleton)], |p, v, t| {
                let what = |term: &str| format!("{name} treerpo {singleton} {term} {p}");
                let node = tree.node(&run, p);
                let siblings: Vec<f64> = children[&parent_of(node)].iter().map(|c| by_children[c]).collect();
                close(t["V(step)"], by_children[node], &what("V(step)"), t);
                close(t["siblings"], siblings.len() as f64, &what("siblings"), t);
                if siblings.len() > 1 {
                    // (torch's std: unbiased.)
                    let (mean, std) = moments(&siblings, 1.0);
                    close(t["sibling mean"], mean, &what("sibling mean"), t);
                    close(t["sibling std"], std, &what("sibling std"), t);
                }
                let by_hand = match (t["siblings"] > 1.0, singleton) {
                    (true, _) => (t["V(step)"] - t["sibling mean"]) / (t["sibling std"] + t["ε"]),
                    (false, "zero") => 0.0,
                    (false, _) => t["V(step)"] / (1.0 + t["ε"]),
                };
                close(v, by_hand, &what("credit"), t);
            });
        }
    }
}

/// The samples, loaded.
fn all_samples() -> Vec<(&'static str, Run)> {
    let names = [
        "alfworld_roles.jsonl",
        "math_grpo_prm.jsonl",
        "search_qa_rag.jsonl",
        "tree_rollouts.jsonl",
        "verl_token_batch.jsonl",
    ];
    names.into_iter().map(|name| (name, sample(name))).collect()
}

fn supported(run: &Run, id: &str) -> bool {
    credit::scheme(id).unwrap().supports(run) == Support::Yes
}

type Named = std::collections::HashMap<String, f64>;

/// (x − mean)/(std + ε) with the row's group moments.
fn z_of(t: &Named, x: f64) -> f64 {
    (x - t["mean"]) / (t["std"] + t["ε"])
}

/// The reward of the trajectory at path position `p`, and its group's: their mean, unbiased std and
/// count, worked out from the run's rewards here (not from the terms the scheme reports).
fn group_of(run: &Run, p: usize) -> (f64, f64, f64, f64) {
    let tr = &run.trajectories;
    let t = tr.at_position(p).unwrap();
    let rewards: Vec<f64> =
        run.groups.members(tr.group[t.index()]).iter().map(|m| f64::from(tr.reward[m.index()])).collect();
    let (mean, std) = moments(&rewards, 1.0);
    (f64::from(tr.reward[t.index()]), mean, std, rewards.len() as f64)
}

/// The mean of `values` and their std over n − `lost` values (1: unbiased, 0: the population's;
/// NaN where that is not above 0), worked out here, never by the code under test.
fn moments(values: &[f64], lost: f64) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let squares: f64 = values.iter().map(|x| (x - mean).powi(2)).sum();
    (mean, if n - lost > 0.0 { (squares / (n - lost)).sqrt() } else { f64::NAN })
}

/// The group's GRPO advantage of the trajectory at path position `p`, (r − mean)/(std + 1e-6),
/// worked out from the rewards here.
fn grpo_of(run: &Run, p: usize) -> f64 {
    let (r, mean, std, _) = group_of(run, p);
    (r - mean) / (std + 1e-6)
}

/// The terms `r`, `mean` and `std` (as many as the scheme reports) are the trajectory's reward and
/// its group's moments worked out here: a wrong mean or std fails, not only a wrong formula.
/// `variance_floor`: the std is √max(variance, floor) (verl's vectorized GRPO floors it at ε).
fn terms_are_the_groups(run: &Run, p: usize, t: &Named, what: &str, variance_floor: f64) {
    let (r, mean, std, n) = group_of(run, p);
    close(t["r"], r, &format!("{what}: r"), t);
    close(t["mean"], mean, &format!("{what}: mean"), t);
    if let Some(&reported) = t.get("std").filter(|_| n > 1.0) {
        close(reported, std.powi(2).max(variance_floor).sqrt(), &format!("{what}: std"), t);
    }
}

#[test]
fn group_schemes_terms_reproduce_every_step_by_hand() {
    let mut checked = 0;
    for (name, run) in all_samples() {
        if !supported(&run, "grpo") {
            continue;
        }
        let at = |scheme: &str, p: usize| format!("{name} {scheme} {p}");
        each_step(&run, "grpo", &[], |p, v, t| {
            terms_are_the_groups(&run, p, t, &at("grpo", p), 0.0);
            close(v, z_of(t, t["r"]), &at("grpo", p), t);
        });
        each_step(&run, "grpo_vectorized", &[], |p, v, t| {
            terms_are_the_groups(&run, p, t, &at("grpo_vectorized", p), 1e-6);
            close(v, z_of(t, t["r"]), &at("grpo_vectorized", p), t);
        });
        each_step(&run, "length_penalty", &[], |p, v, t| {
            // r' = r − 0.2 · L / L_max of the group (tokens when logged, else steps), worked out here.
            let tr = &run.trajectories;
            let length = |m: vantage::model::TrajectoryId| {
                (if run.tokens.len > 0 { tr.token_range(m).len() } else { tr.num_steps(m) }) as f64
            };
            let traj = tr.at_position(p).unwrap();
            let longest = run.groups.members(tr.group[traj.index()]).iter().map(|m| length(*m)).fold(0.0, f64::max);
            let shaped = f64::from(tr.reward[traj.index()]) - 0.2 * length(traj) / longest.max(1.0);
            close(t["r'"], shaped, &at("length_penalty r'", p), t);
            close(v, z_of(t, t["r'"]), &at("length_penalty", p), t);
        });
        each_step(&run, "null_reward", &[], |p, v, t| close(v, z_of(t, t["null reward"]), &at("null_reward", p), t));
        // Its draw (shuffle, the default) is a permutation of each group's rewards, checked here.
        let null = credit::scheme("null_reward").unwrap();
        let drawn = null.compute_explained(&run, &Params::defaults(null)).unwrap();
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            let of = |t: &vantage::model::TrajectoryId| {
                drawn.terms.row(t.index()).into_iter().find(|(n, _)| *n == "null reward").map(|(_, v)| v)
            };
            let mut shuffled: Vec<f64> = members.iter().filter_map(of).collect();
            let mut rewards: Vec<f64> = members.iter().map(|t| f64::from(run.trajectories.reward[t.index()])).collect();
            shuffled.sort_by(f64::total_cmp);
            rewards.sort_by(f64::total_cmp);
            assert_eq!(shuffled, rewards, "{name}: null_reward's draw in group {}", run.group_key(g));
        }
        each_step(&run, "grpo_passk", &[], |p, v, t| {
            // The group's best and second-best rewards, worked out here.
            let tr = &run.trajectories;
            let mut rewards: Vec<f64> = run
                .groups
                .members(tr.group[tr.at_position(p).unwrap().index()])
                .iter()
                .map(|m| f64::from(tr.reward[m.index()]))
                .collect();
            rewards.sort_by(|a, b| b.total_cmp(a));
            close(t["r_max"], rewards[0], &at("grpo_passk r_max", p), t);
            if rewards.len() > 1 {
                close(t["r_2nd"], rewards[1], &at("grpo_passk r_2nd", p), t);
            }
            close(t["std"], group_of(&run, p).2, &at("grpo_passk std", p), t);
            let best = (t["r_max"] - t["r_2nd"]) / (t["std"] + t["ε"]);
            close(v, if t["best row (1: yes)"] == 1.0 { best } else { 0.0 }, &at("grpo_passk", p), t);
        });
        each_step(&run, "rloo", &[], |p, v, t| {
            terms_are_the_groups(&run, p, t, &at("rloo", p), 0.0);
            close(t["n"], group_of(&run, p).3, &at("rloo n", p), t);
            let n = t["n"];
            close(v, t["r"] * n / (n - 1.0) - t["mean"] * n / (n - 1.0), &at("rloo", p), t);
        });
        each_step(&run, "rloo_vectorized", &[], |p, v, t| {
            // The group's count and reward sum, worked out here.
            let (r, mean, _, n) = group_of(&run, p);
            close(t["c"], n, &at("rloo_vectorized c", p), t);
            close(t["S"], mean * n, &at("rloo_vectorized S", p), t);
            close(t["r"], r, &at("rloo_vectorized r", p), t);
            close(v, (t["c"] * t["r"] - t["S"]) / (t["c"] - 1.0).max(1.0), &at("rloo_vectorized", p), t);
        });
        // OPO's L (a rollout's trained tokens, or its steps when the run logs none) and its
        // baseline Σ L·r / Σ L over the group, worked out here.
        let length = |m: vantage::model::TrajectoryId| {
            let tr = &run.trajectories;
            if run.tokens.len > 0 {
                let mask = run.tokens.mask.as_deref();
                tr.token_range(m).filter(|&i| mask.is_none_or(|k| k[i])).count() as f64
            } else {
                tr.num_steps(m) as f64
            }
        };
        each_step(&run, "opo", &[], |p, v, t| {
            let tr = &run.trajectories;
            let traj = tr.at_position(p).unwrap();
            let members = run.groups.members(tr.group[traj.index()]);
            let weighed: f64 = members.iter().map(|m| length(*m) * f64::from(tr.reward[m.index()])).sum();
            let total: f64 = members.iter().map(|m| length(*m)).sum();
            close(t["L"], length(traj), &at("opo L", p), t);
            close(t["baseline"], if members.len() == 1 { 0.0 } else { weighed / total }, &at("opo baseline", p), t);
            close(t["r"], group_of(&run, p).0, &at("opo r", p), t);
            close(v, t["r"] - t["baseline"], &at("opo", p), t);
        });
        // GPG's α: the batch's rollouts over those with a nonzero reward, worked out here.
        let rewards = &run.trajectories.reward;
        let nonzero = rewards.iter().filter(|r| **r != 0.0).count().max(1);
        let alpha = f64::from(rewards.len() as f32 / nonzero as f32);
        each_step(&run, "gpg", &[], |p, v, t| {
            terms_are_the_groups(&run, p, t, &at("gpg", p), 0.0);
            close(t["α"], alpha, &at("gpg α", p), t);
            close(v, t["α"] * (t["r"] - t["mean"]), &at("gpg", p), t);
        });
        checked += 1;
    }
    assert!(checked >= 3, "{checked} samples had outcome rewards");
}

/// GiGPO's step terms at every path position, worked out here from the log: the step's discounted
/// return G (γ = 0.95 over its env rewards, or the outcome at the last step; missing counts 0; an
/// invalid action's step G − κ, κ = 0.1) and its anchor state's mean, denominator and weight (over
/// the group's steps with the same state key, two or more: their mean, unbiased std + ε or 1, and
/// ω = 1; else 0, 1 and 0).
fn gigpo_states_by_hand(run: &Run, with_std: bool) -> Vec<[f64; 4]> {
    let tr = &run.trajectories;
    let nodes = &run.nodes;
    let (gamma, kappa) = (0.95, 0.1);
    let env = nodes.env_reward.iter().any(|r| !r.is_nan());
    let zero = |r: f32| if r.is_nan() { 0.0 } else { f64::from(r) };
    let mut returns = vec![f64::NAN; tr.path_nodes.len()];
    for t in tr.ids() {
        let (path, range) = (tr.path(t), tr.path_range(t));
        let mut running = 0.0;
        for k in (0..path.len()).rev() {
            let r = if env {
                zero(nodes.env_reward[path[k].index()])
            } else if k + 1 == path.len() {
                zero(tr.reward[t.index()])
            } else {
                0.0
            };
            running = r + gamma * running;
            returns[range.start + k] = running - if nodes.invalid_action(path[k]) { kappa } else { 0.0 };
        }
    }
    let mut out = vec![[f64::NAN; 4]; tr.path_nodes.len()];
    for g in run.groups.ids() {
        let mut states: std::collections::HashMap<u32, Vec<usize>> = std::collections::HashMap::new();
        for &t in run.groups.members(g) {
            for (k, p) in tr.path_range(t).enumerate() {
                let key = nodes.state_key[tr.path(t)[k].index()];
                out[p] = [returns[p], 0.0, 1.0, 0.0];
                if key.is_some() {
                    states.entry(key.0).or_default().push(p);
                }
            }
        }
        for positions in states.values().filter(|ps| ps.len() >= 2) {
            let values: Vec<f64> = positions.iter().map(|&p| returns[p]).collect();
            let (mean, std) = moments(&values, 1.0);
            for &p in positions {
                out[p] = [returns[p], mean, if with_std { std + 1e-6 } else { 1.0 }, 1.0];
            }
        }
    }
    out
}

/// The Jaccard similarity of two document sets (0 when both are empty).
fn jaccard_by_hand(a: &[vantage::model::Sym], b: &[vantage::model::Sym]) -> f64 {
    let union: std::collections::HashSet<_> = a.iter().chain(b).collect();
    let both = a.iter().filter(|d| b.contains(d)).count();
    if union.is_empty() { 0.0 } else { both as f64 / union.len() as f64 }
}

/// Every one-to-one matching of `rows` to columns (a row may stay unmatched, with 0) of the
/// largest total `weight`, found by trying them all: each as the weight each row gets.
fn best_matchings(weight: &[Vec<f64>]) -> (f64, Vec<Vec<f64>>) {
    fn walk(
        weight: &[Vec<f64>],
        row: usize,
        used: &mut Vec<bool>,
        got: &mut Vec<f64>,
        best: &mut (f64, Vec<Vec<f64>>),
    ) {
        if row == weight.len() {
            let total: f64 = got.iter().sum();
            if total > best.0 + 1e-12 {
                *best = (total, vec![got.clone()]);
            } else if (total - best.0).abs() <= 1e-12 {
                best.1.push(got.clone());
            }
            return;
        }
        got.push(0.0);
        walk(weight, row + 1, used, got, best);
        got.pop();
        for col in 0..used.len() {
            if !used[col] {
                used[col] = true;
                got.push(weight[row][col]);
                walk(weight, row + 1, used, got, best);
                got.pop();
                used[col] = false;
            }
        }
    }
    let cols = weight.first().map_or(0, Vec::len);
    let mut best = (f64::NEG_INFINITY, Vec::new());
    walk(weight, 0, &mut vec![false; cols], &mut Vec::new(), &mut best);
    best
}

/// LeTS's z of each step of every trajectory, worked out here: each way a trajectory's segment
/// rewards can come out (several where matchings of the best total differ), as the z per step (0
/// for the answer segment and a trajectory with nothing to scale). From a step score: every step
/// but the last a segment, its score z-scored within the path (unbiased std + ε). From documents:
/// segments end at the search calls; the group's best rollouts score `1 − max Jaccard` against
/// their earlier retrievals; the others (when the best scores 1) their best matching's Jaccards
/// against the first better rollout with the largest total; rollouts scoring 0 or less, none.
fn lets_z_by_hand(run: &Run, from_docs: bool, matched: &mut usize) -> Vec<Vec<Vec<f64>>> {
    let tr = &run.trajectories;
    let eps = 1e-6;
    let zscores = |s: &[f64]| -> Option<Vec<f64>> {
        (s.len() >= 2 && s.iter().all(|v| v.is_finite())).then(|| {
            let (mean, std) = moments(s, 1.0);
            s.iter().map(|x| (x - mean) / (std + eps)).collect()
        })
    };
    let searches = |t: vantage::model::TrajectoryId| -> Vec<usize> {
        (0..tr.num_steps(t)).filter(|&k| !run.nodes.docs(tr.path(t)[k]).is_empty()).collect()
    };
    let sets = |t: vantage::model::TrajectoryId| -> Vec<&[vantage::model::Sym]> {
        searches(t).into_iter().map(|k| run.nodes.docs(tr.path(t)[k])).collect()
    };
    let mut out = vec![Vec::new(); tr.len()];
    for g in run.groups.ids() {
        let members = run.groups.members(g);
        let best =
            members.iter().map(|m| tr.reward[m.index()]).filter(|r| !r.is_nan()).fold(f32::NEG_INFINITY, f32::max);
        for &t in members {
            let steps = tr.num_steps(t);
            let per_step = |segment_z: Option<Vec<f64>>| -> Vec<f64> {
                let Some(z) = segment_z else { return vec![0.0; steps] };
                if !from_docs {
                    return (0..steps).map(|k| z.get(k).copied().unwrap_or(0.0)).collect();
                }
                let ends = searches(t);
                (0..steps)
                    .map(|k| ends.iter().position(|&e| k <= e).and_then(|i| z.get(i).copied()).unwrap_or(0.0))
                    .collect()
            };
            if !from_docs {
                // The first score the run logs of the documented names, in their order.
                let names = ["prm", "judge", "progress", "retrieval", "value", "reward", "label"];
                let column = names.iter().find_map(|n| run.nodes.scores.get(*n)).unwrap();
                let path = tr.path(t);
                let scores: Vec<f64> =
                    path[..path.len().saturating_sub(1)].iter().map(|n| f64::from(column[n.index()])).collect();
                out[t.index()] = vec![per_step(zscores(&scores))];
                continue;
            }
            let r = tr.reward[t.index()];
            let rewards: Vec<Vec<f64>> = if r.is_nan() || r <= 0.0 {
                Vec::new()
            } else if r == best {
                let own = sets(t);
                vec![
                    (0..own.len())
                        .map(|k| 1.0 - (0..k).map(|j| jaccard_by_hand(own[k], own[j])).fold(0.0, f64::max))
                        .collect(),
                ]
            } else if best < 1.0 {
                Vec::new()
            } else {
                let own = sets(t);
                let mut kept = (0.0, vec![vec![0.0; own.len()]]);
                for &o in members.iter().filter(|o| tr.reward[o.index()] > r) {
                    let other = sets(o);
                    let weight: Vec<Vec<f64>> =
                        own.iter().map(|a| other.iter().map(|b| jaccard_by_hand(a, b)).collect()).collect();
                    let here = best_matchings(&weight);
                    if here.0 > kept.0 {
                        kept = here;
                    }
                }
                *matched += 1;
                kept.1
            };
            out[t.index()] = if rewards.is_empty() {
                vec![per_step(None)]
            } else {
                rewards.iter().map(|s| per_step(zscores(s))).collect()
            };
        }
    }
    out
}

#[test]
fn step_rule_schemes_terms_reproduce_every_step_by_hand() {
    let mut checked: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for (name, run) in all_samples() {
        if supported(&run, "grpo_care") {
            each_step(&run, "grpo_care", &[], |p, v, t| {
                close(t["r"], group_of(&run, p).0, &format!("{name} care r {p}"), t);
                close(v, z_of(t, t["r"] + t["bonus"]), &format!("{name} care {p}"), t);
            });
            checked.insert("grpo_care");
        }
        if supported(&run, "first_error") {
            let tr = &run.trajectories;
            each_step(&run, "first_error", &[], |p, v, t| {
                let traj = tr.ids().find(|&x| tr.path_range(x).contains(&p)).unwrap();
                let k = (p - tr.path_range(traj).start + 1) as f64;
                let (a, e) = (t["A_outcome"], t["first error step (−1: none)"]);
                // Both worked out here: the group's GRPO advantage, the first step flagged an error.
                close(a, grpo_of(&run, p), &format!("{name} first_error A_outcome {p}"), t);
                let flagged = tr.path(traj).iter().position(|n| run.nodes.first_error(*n) == Some(true));
                close(e, flagged.map_or(-1.0, |i| (i + 1) as f64), &format!("{name} first_error step {p}"), t);
                let by_hand = if e < 0.0 {
                    a
                } else if k < e {
                    a.max(0.0) + t["bonus"]
                } else {
                    a.min(0.0) - t["penalty"]
                };
                close(v, by_hand, &format!("{name} first_error {p}"), t);
            });
            checked.insert("first_error");
        }
        if supported(&run, "gigpo") {
            for mode in ["mean_norm", "mean_std_norm"] {
                let states = gigpo_states_by_hand(&run, mode == "mean_std_norm");
                each_step(&run, "gigpo", &[("mode", mode)], |p, v, t| {
                    // The episode's return is its outcome, and its baseline the group's mean over
                    // step rows (a trajectory weighs as many steps as it has, as the code does); both
                    // worked out here.
                    close(t["R"], group_of(&run, p).0, &format!("{name} gigpo R {p}"), t);
                    let tr = &run.trajectories;
                    let traj = tr.at_position(p).unwrap();
                    let rows: Vec<f64> = run
                        .groups
                        .members(tr.group[traj.index()])
                        .iter()
                        .flat_map(|m| std::iter::repeat_n(f64::from(tr.reward[m.index()]), tr.num_steps(*m)))
                        .collect();
                    let (mean, std) = moments(&rows, 1.0);
                    if !tr.path(traj).iter().any(|s| run.nodes.invalid_action(*s)) {
                        let episode = if mode == "mean_norm" { t["R"] - mean } else { (t["R"] - mean) / (std + 1e-6) };
                        close(t["A^E of the step"], episode, &format!("{name} gigpo {mode} A^E {p}"), t);
                    }
                    // The step's return and its anchor state's statistics, worked out here.
                    for (term, want) in ["G", "state mean", "state denominator", "state weight"].iter().zip(states[p]) {
                        close(t[*term], want, &format!("{name} gigpo {mode} {term} {p}"), t);
                    }
                    let state = t["G"] - t["state mean"];
                    let state = if mode == "mean_norm" { state } else { state / t["state denominator"] };
                    close(v, t["A^E of the step"] + state * t["state weight"], &format!("{name} gigpo {mode} {p}"), t);
                });
            }
            checked.insert("gigpo");
        }
        if supported(&run, "prorag") {
            each_step(&run, "prorag", &[], |p, v, t| {
                // The outcome term is the group's GRPO advantage with ProRAG's ε of 1e-4, worked out here.
                let (r, mean, std, _) = group_of(&run, p);
                close(t["A_outcome"], (r - mean) / (std + 1e-4), &format!("{name} prorag A_outcome {p}"), t);
                let x = (t["p"] + t["format term"] - t["token mean"]) / t["token std"];
                let by_hand = t["A_outcome"] + if t["p"].is_nan() { 0.0 } else { t["β"] * x };
                close(v, by_hand, &format!("{name} prorag {p}"), t);
            });
            checked.insert("prorag");
        }
    }
    let all = ["first_error", "gigpo", "grpo_care", "prorag"];
    assert_eq!(checked.into_iter().collect::<Vec<_>>(), all, "schemes checked on some sample");
}

#[test]
fn lets_terms_reproduce_every_step_by_hand() {
    let mut checked: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    // The samples, and a search log whose retrievals overlap in part, giving three step rewards
    // or more of different values (two, or two alike, a z-score maps to the same values
    // whatever the Jaccards): a best rollout and two matched against it and each other.
    let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "best", "group": "g", "outcome": {"reward": 1}, "steps": [{"action": "s1", "docs": ["d1", "d2"]}, {"action": "s2", "docs": ["d2", "d3"]}, {"action": "s3", "docs": ["d1", "d2", "d3", "d4"]}, {"action": "s4", "docs": ["d5"]}, {"action": "answer"}]}
{"type": "trajectory", "id": "good", "group": "g", "outcome": {"reward": 0.6}, "steps": [{"action": "s1", "docs": ["d1"]}, {"action": "s2", "docs": ["d2", "d3", "d9"]}, {"action": "s3", "docs": ["d4", "d5"]}, {"action": "answer"}]}
{"type": "trajectory", "id": "fair", "group": "g", "outcome": {"reward": 0.3}, "steps": [{"action": "s1", "docs": ["d1", "d9"]}, {"action": "s2", "docs": ["d3", "d4", "d5"]}, {"action": "s3", "docs": ["d2"]}, {"action": "answer"}]}
{"type": "trajectory", "id": "none", "group": "g", "outcome": {"reward": 0}, "steps": [{"action": "s1", "docs": ["d8"]}, {"action": "answer"}]}
"#;
    let search = load_bytes("search.jsonl", log.as_bytes(), &mut LoadReport::new("search.jsonl")).unwrap();
    for (name, run) in all_samples().into_iter().chain([("search.jsonl", search)]) {
        if supported(&run, "lets") {
            let lets = credit::scheme("lets").unwrap();
            for source in ["score", "docs"] {
                let params = Params::resolve(lets, None, &[("step_reward".to_owned(), source.to_owned())]).unwrap();
                if lets.compute(&run, &params).is_err() {
                    continue;
                }
                // Each trajectory's z per step, checked against the ways it can come out.
                let mut matched = 0;
                let by_hand = lets_z_by_hand(&run, source == "docs", &mut matched);
                let mut reported: Vec<Vec<f64>> =
                    run.trajectories.ids().map(|t| vec![f64::NAN; run.trajectories.num_steps(t)]).collect();
                each_step(&run, "lets", &[("step_reward", source)], |p, v, t| {
                    let traj = run.trajectories.at_position(p).unwrap();
                    reported[traj.index()][p - run.trajectories.path_range(traj).start] =
                        t["z_k (0: not a scaled segment)"];
                    close(t["A"], grpo_of(&run, p), &format!("{name} lets A {p}"), t);
                    let (a, g, z) = (t["A"], t["γ"], t["z_k (0: not a scaled segment)"]);
                    let by_hand = if a >= 0.0 { a * (1.0 + g * z) } else { a * (1.0 - g * z) };
                    close(v, by_hand, &format!("{name} lets {source} {p}"), t);
                });
                for t in run.trajectories.ids() {
                    let got = &reported[t.index()];
                    let fits = |want: &Vec<f64>| {
                        got.iter().zip(want).all(|(g, w)| g.is_nan() || (g - w).abs() < 1e-4 * (1.0 + w.abs()))
                    };
                    assert!(
                        by_hand[t.index()].iter().any(fits),
                        "{name} lets {source} {}: z {got:?}, by hand one of {:?}",
                        run.trajectory_key(t),
                        by_hand[t.index()]
                    );
                }
                if source == "docs" && !run.nodes.doc_values.is_empty() {
                    assert!(matched > 0, "{name}: no rollout was matched against a better one");
                }
                checked.insert(if source == "docs" { "lets docs" } else { "lets score" });
            }
        }
    }
    assert_eq!(checked.into_iter().collect::<Vec<_>>(), ["lets docs", "lets score"], "sources checked on some sample");
}

#[test]
fn a_token_level_schemes_step_number_is_the_mean_of_the_token_values_the_inspector_lists() {
    let run = sample("verl_token_batch.jsonl");
    let tr = &run.trajectories;
    let mask = run.tokens.mask.as_deref();
    let mut checked = 0;
    for scheme in credit::SCHEMES.iter().filter(|s| s.supports(&run) == Support::Yes) {
        let credit = scheme.compute(&run, &Params::defaults(*scheme)).unwrap();
        let (Some(credit::Level::Token), Some(token)) = (credit.level, credit.token.as_deref()) else { continue };
        for t in tr.ids() {
            for p in tr.path_range(t) {
                let range = vantage::credit::step_token_range(&run, t, tr.path_nodes[p]).unwrap();
                let values: Vec<f64> =
                    range.filter(|&i| mask.is_none_or(|m| m[i])).map(|i| f64::from(token[i])).collect();
                let value = f64::from(credit.step[p]);
                if values.is_empty() {
                    assert!(value.is_nan(), "{} step {p}", scheme.info().id);
                    continue;
                }
                let mean = values.iter().sum::<f64>() / values.len() as f64;
                if mean.is_nan() {
                    assert!(value.is_nan(), "{} step {p}: {value} from untrained tokens", scheme.info().id);
                    continue;
                }
                assert!(
                    (value - mean).abs() < 1e-5 * (1.0 + value.abs()),
                    "{} step {p}: {value} vs {mean}",
                    scheme.info().id
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 5, "{checked} token-level schemes");
}

#[test]
fn pure_terms_reproduce_every_step_by_hand() {
    let run = sample("math_grpo_prm.jsonl");
    let scheme = credit::scheme("pure").unwrap();
    let tr = &run.trajectories;
    for over in ["tokens", "steps"] {
        for baseline in ["step", "token", "none"] {
            let sets = [("normalize_over", over), ("baseline", baseline)];
            let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
            let params = Params::resolve(scheme, None, &sets).unwrap();
            let credit = scheme.compute_explained(&run, &params).unwrap();
            let plain = scheme.compute(&run, &params).unwrap();
            assert_eq!(
                credit.step.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                plain.step.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            let terms = |t: vantage::model::TrajectoryId, p: usize| -> Named {
                credit.terms.for_step(t.index(), p).into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            };
            for t in tr.ids() {
                let range = tr.path_range(t);
                for p in range.clone() {
                    let here = terms(t, p);
                    // The return: this step's x less the baseline, plus the next step's return
                    // (VR after the last step).
                    let next = if p + 1 < range.end { terms(t, p + 1)["G"] } else { here["VR"] };
                    let what = format!("pure {over} {baseline} {p}");
                    close(here["G"], here["x"] - here["baseline"] + next, &format!("{what}: G"), &here);
                    let value = f64::from(credit.step[p]);
                    let by_hand = (here["G"] - here["batch mean"]) / here["batch denominator"];
                    // Over tokens with the separators masked, a return of exactly 0 stays 0.
                    if !(over == "tokens" && here["G"] == 0.0 && value == 0.0) {
                        close(value, by_hand, &what, &here);
                    }
                }
            }
        }
    }
}

/// rLLM's per-role estimators on the `ALFWorld` sample, as rLLM's own
/// `collect_reward_and_advantage_from_trajectory_groups` computed them (`tests/golden/per_role`):
/// every estimator, one map of roles to estimators and the default for the others, with and
/// without GRPO's std; each trajectory's advantage on every one of its steps.
#[test]
fn per_role_is_rllm_s_own_estimator_map_on_every_trajectory() {
    let run = sample("alfworld_roles.jsonl");
    for case in golden_cases("per_role", 4) {
        let norm = case["norm_by_std"].as_bool().unwrap().to_string();
        let sets = [
            ("estimators", case["estimators"].as_str().unwrap()),
            ("estimator", case["estimator"].as_str().unwrap()),
            ("norm_by_std", norm.as_str()),
        ];
        let credit = credit_of(&run, "per_role", &sets);
        let advantages = case["advantages"].as_object().unwrap();
        assert_eq!(advantages.len(), run.trajectories.len());
        for (key, want) in advantages {
            let t = run.trajectory_by_key(key).unwrap();
            let want = want.as_f64().unwrap();
            // The sample's rewards are float32 in the run and float64 in rLLM's numpy.
            for &got in &credit[run.trajectories.path_range(t)] {
                assert!((f64::from(got) - want).abs() <= 1e-6 + 1e-6 * want.abs(), "{sets:?} {key}: {got} vs {want}");
            }
        }
    }
    // A map that names an estimator rLLM does not have is refused, naming it.
    let scheme = credit::scheme("per_role").unwrap();
    let params = Params::resolve(scheme, None, &[("estimators".to_owned(), "progress=ppo".to_owned())]).unwrap();
    let err = scheme.compute(&run, &params).unwrap_err();
    assert!(format!("{err:#}").contains("\"ppo\" is not one of grpo"), "{err:#}");
}

/// CARL (`carl`) equals a third party's port of it (`tests/golden/carl`: RainyFields/Agentic-RL-CA's
/// own `compute_carl_edge_advantages`, run on each turn of the tree sample, the math sample and
/// hand-made runs, the states being the log's nodes or the turns merged by content) within 1e-6;
/// a dropped turn (its state has one next state) gets 0 and its `kept` term says so.
#[test]
fn carl_equals_its_ports_own_edge_advantages() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/carl/cases.json");
    let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut compared = 0;
    let mut dropped = 0;
    for case in golden["cases"].as_array().unwrap() {
        let (name, merge) = (case["run"].as_str().unwrap(), case["merge"].as_str().unwrap());
        let run = match case["jsonl"].as_str() {
            Some(text) => load_bytes("hand.jsonl", text.as_bytes(), &mut LoadReport::new("hand")).unwrap(),
            None => sample(name),
        };
        let scheme = credit::scheme("carl").unwrap();
        let params = Params::resolve(scheme, None, &[("merge".to_owned(), merge.to_owned())]).unwrap();
        let credit = scheme.compute_explained(&run, &params).unwrap();
        let kept = credit.terms.step_names.iter().position(|n| n == "kept").unwrap();
        let width = credit.terms.step_names.len();
        let wanted = case["credit"].as_object().unwrap();
        for t in run.trajectories.ids() {
            let key = run.trajectory_key(t);
            let range = run.trajectories.path_range(t);
            let Some(want) = wanted.get(key) else {
                assert!(
                    credit.step[range].iter().all(|v| v.is_nan()),
                    "{name} {merge} {key}: credit without an outcome"
                );
                continue;
            };
            let want = want.as_array().unwrap();
            assert_eq!(want.len(), range.len(), "{name} {merge} {key}");
            for (p, w) in range.zip(want) {
                let (a, k) = (w[0].as_f64().unwrap(), w[1].as_bool().unwrap());
                let got = f64::from(credit.step[p]);
                assert!((got - a).abs() <= 1e-6 * (1.0 + a.abs()), "{name} {merge} {key} step {p}: {got} vs {a}");
                assert_eq!(credit.terms.step_values[p * width + kept] == 1.0, k, "{name} {merge} {key} step {p}: kept");
                dropped += usize::from(!k);
                compared += 1;
            }
        }
    }
    assert!(compared > 4000 && dropped > 100, "{compared} turns, {dropped} dropped");
}

/// The schemes that read a model's probe of each turn against their sources' own code run with
/// torch (`tests/golden/igpo`: IGPO's `compute_grpo_outcome_advantage` on the turn rewards its
/// reward function places; `tests/golden/trace_td`: the TRACE port's `compute_grpo_hybrid_advantage`,
/// both from `gold_logprob`, on the search sample; `tests/golden/hcapo`: the HCAPO port's
/// `compute_hcapo_advantage` from `hindsight_logratio`, on the terminal sample), and on hand-made
/// turns, each at several settings: every step within 1e-5.
#[test]
fn igpo_trace_and_hcapo_equal_their_sources_on_each_turns_probe() {
    for (id, folder) in [("igpo", "igpo"), ("trace_td", "trace_td"), ("hcapo", "hcapo")] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{folder}/cases.json"));
        let golden: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let mut compared = 0;
        for case in golden["cases"].as_array().unwrap() {
            let name = case["run"].as_str().unwrap();
            let run = match case["jsonl"].as_str() {
                Some(text) => load_bytes("hand.jsonl", text.as_bytes(), &mut LoadReport::new("hand")).unwrap(),
                None => sample(name),
            };
            let sets: Vec<(String, String)> = case["set"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect();
            let got = credit::compute(credit::scheme(id).unwrap(), &run, None, &sets).unwrap().step.clone();
            for (key, want) in case["credit"].as_object().unwrap() {
                let t = run.trajectory_by_key(key).unwrap();
                let want = want.as_array().unwrap();
                assert_eq!(want.len(), run.trajectories.path_range(t).len(), "{id} {name} {key}");
                for (p, w) in run.trajectories.path_range(t).zip(want) {
                    let (g, w) = (f64::from(got[p]), w.as_f64().unwrap());
                    assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{id} {name} {sets:?} {key} step {p}: {g} vs {w}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 500, "{id}: {compared}");
    }
}
