//! Credit computed on several threads is the credit computed on one, bit for bit: every scheme on
//! a run large enough to be cut into parts (and for whole-batch sums to span several blocks), and
//! on every sample run, at one part and at three. The split (`par::with_split`) holds for the
//! call it wraps only, so these run beside the other tests.
#![expect(clippy::unwrap_used, reason = "a test fails loudly on the first surprise")]

use vantage::credit::{self, Credit, Params, Support};
use vantage::load::{LoadReport, load_bytes};
use vantage::model::{GroupId, NewGroup, NewStep, NewTokens, NodeId, Outcome, Run, RunBuilder, TreeId};
use vantage::par;

/// 16 000 trajectories of 2–40 steps in groups of 8 (every 97th trajectory and the last in no group), with
/// every kind of step data a step scheme reads: 3.3 × 10⁵ path steps, more than one block of a
/// whole-batch sum (`par::SUM_BLOCK`).
fn step_run() -> Run {
    let mut b = RunBuilder::new("threads", "synthetic");
    let roles = ["progress", "exploration", "infrastructure", "regression"];
    let kinds = ["think", "search", "answer"];
    let states = ["s0", "s1", "s2", "s3", "s4"];
    let mut group = GroupId::NONE;
    for t in 0..16_000usize {
        if t % 8 == 0 {
            group = b.add_group(&NewGroup { key: &format!("g{}", t / 8), ..NewGroup::default() }).0;
        }
        let in_group = if t % 97 == 50 || t == 15_999 { GroupId::NONE } else { group };
        let len = 2 + (t * 7 + t / 8) % 39;
        let mut parent = NodeId::NONE;
        for s in 0..len {
            let x = ((t * 31 + s * 17) % 101) as f32 / 100.0;
            let prm = if (t + s) % 13 == 5 { f32::NAN } else { x };
            let step = NewStep {
                kind: Some(kinds[(t + s) % 3]),
                role: ((t + s) % 9 != 0).then_some(roles[(t * 3 + s) % 4]),
                scores: vec![("prm", prm), ("value", 0.5 - x / 2.0)],
                env_reward: Some(if s + 1 == len { 1.0 } else { x / 10.0 }),
                state_key: Some(states[(s + t / 8) % 5]),
                first_error: Some(s == 1 + t % 5 && t % 3 == 0),
                ..NewStep::default()
            };
            parent = b.add_node(in_group, parent, &step);
        }
        let reward = if (t * 40_503) % 7 < 3 { 1.0 } else { 0.0 };
        let outcome = Outcome { reward: Some(reward), success: Some(reward > 0.5), ..Outcome::default() };
        b.add_trajectory(&format!("t{t}"), in_group, TreeId::NONE, parent, &outcome, &NewTokens::default());
    }
    b.finish()
}

fn sample_runs() -> Vec<(String, Run)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sample_runs");
    let mut runs = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        runs.push((name.clone(), load_bytes(&name, &bytes, &mut LoadReport::new(&name)).unwrap()));
    }
    runs
}

/// NaNs with bits of their own, which no scheme writes.
const POISON: [u32; 3] = [0x7fa1_1bad, 0x7fa2_2bad, 0x7fa3_3bad];

/// Fills the buffer pool with buffers of `poison` (a different one for each computation compared),
/// so a position a computation forgets to write shows instead of holding what the last one left.
fn poison_pool(len: usize, poison: u32) {
    credit::engine::poison_pool(len.max(1 << 16), poison, 6);
}

fn bits(values: &[f32]) -> Vec<u32> {
    // Every NaN the same, but the poisons (NaNs with bits of their own) stay themselves.
    let canonical =
        |v: &f32| if v.is_nan() && !POISON.contains(&v.to_bits()) { f32::NAN.to_bits() } else { v.to_bits() };
    values.iter().map(canonical).collect()
}

fn same(what: &str, one: &Credit, many: &Credit) {
    assert_eq!(bits(&one.step), bits(&many.step), "{what}: step credit");
    assert_eq!(one.token.as_deref().map(bits), many.token.as_deref().map(bits), "{what}: token credit");
    assert_eq!(one.token_returns.as_deref().map(bits), many.token_returns.as_deref().map(bits), "{what}: returns");
    assert_eq!(bits(&one.terms.values), bits(&many.terms.values), "{what}: terms");
}

#[test]
fn credit_on_several_threads_is_the_credit_on_one() {
    let mut runs = vec![("synthetic".to_owned(), step_run())];
    runs.extend(sample_runs());
    let mut compared = 0;
    for (name, run) in &runs {
        for &scheme in credit::SCHEMES {
            let id = scheme.info().id;
            if scheme.supports(run) != Support::Yes {
                continue;
            }
            // Tree schemes merge chains by step content: the synthetic run has none to merge.
            if name == "synthetic" && scheme.params().iter().any(|p| p.name == "merge") {
                continue;
            }
            let has_level = scheme.params().iter().any(|p| p.name == "level");
            let levels: &[&str] = if has_level && run.tokens.len > 0 { &["step", "token"] } else { &["default"] };
            for &level in levels {
                let sets: Vec<(String, String)> =
                    if has_level && level != "default" { vec![("level".to_owned(), level.to_owned())] } else { vec![] };
                let params = Params::resolve(scheme, None, &sets).unwrap();
                poison_pool(run.num_path_steps(), POISON[0]);
                let Ok(one) = par::with_split(usize::MAX, 1, || scheme.compute(run, &params)) else { continue };
                // Parts of at least 1 000 steps (the synthetic run is cut in three; a sample run
                // in as many parts as it has thousands of steps, at most three).
                poison_pool(run.num_path_steps(), POISON[1]);
                let many = par::with_split(1_000, 3, || scheme.compute(run, &params)).unwrap();
                same(&format!("{name} {id} level={level}"), &one, &many);
                poison_pool(run.num_path_steps(), POISON[2]);
                let tiny = par::with_split(1, 3, || scheme.compute(run, &params)).unwrap();
                same(&format!("{name} {id} level={level}, tiny parts"), &one, &tiny);
                compared += 1;
            }
        }
    }
    assert!(runs[0].1.num_path_steps() > par::SUM_BLOCK);
    assert!(compared >= 60, "only {compared} computations compared");
}

#[test]
fn triage_from_the_runs_role_codes_is_triage_from_its_roles() {
    // A run keeps each path step's role in a byte (`PathCodes`); without those codes (a run with
    // more distinct roles than a byte holds) TRIAGE codes its five classes itself. Both ways give
    // the same credit, bit for bit, whitened or not.
    let mut runs = vec![("synthetic".to_owned(), step_run())];
    runs.extend(sample_runs().into_iter().filter(|(_, run)| !run.trajectories.path_roles.codes.is_empty()));
    assert!(runs.len() >= 2, "a sample run with roles");
    let triage = credit::scheme("triage").unwrap();
    for (name, run) in &runs {
        assert_eq!(run.trajectories.path_roles.codes.len(), run.num_path_steps(), "{name}");
        let mut uncoded = run.clone();
        uncoded.trajectories.path_roles = vantage::model::PathCodes::default();
        for whiten in ["true", "false"] {
            let params = Params::resolve(triage, None, &[("whiten".to_owned(), whiten.to_owned())]).unwrap();
            let coded = triage.compute(run, &params).unwrap();
            let classes = triage.compute(&uncoded, &params).unwrap();
            same(&format!("{name} triage whiten={whiten}"), &coded, &classes);
        }
    }
}
