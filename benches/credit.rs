//! Credit benchmarks (criterion): the token estimators on a 32768 × 512 token batch (group 8,
//! lengths 1..512, the batch `bench/vs_verl.py` gives verl), and every step-level scheme on a run of
//! 10⁶ trajectories × 32 steps, and credit formulas (docs/EXPRESSIONS.md) on that run beside the
//! built-ins they equal. `cargo bench --no-default-features --bench credit`
//! (`-- formula` for the formulas only).
#![expect(clippy::unwrap_used, reason = "a benchmark fails loudly")]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use vantage::credit::{self, Params, Support, data::batch::synthetic_token_batch};

mod synthetic;
use synthetic::{step_run, tree_run};

fn token_batch(c: &mut Criterion) {
    let batch = synthetic_token_batch(32_768, 512, 8);
    let mut group = c.benchmark_group("token 32768x512");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function("plain copy (reward + mask)", |b| {
        b.iter(|| black_box((batch.reward.clone(), batch.mask.clone())));
    });
    for id in ["grpo", "grpo_vectorized", "rloo", "rloo_vectorized", "gae", "reinforce_plus_plus"] {
        let scheme = credit::scheme(id).unwrap();
        let params = Params::resolve(scheme, Some("verl"), &[]).unwrap();
        let kernel = scheme.token_kernel().unwrap();
        group.bench_function(id, |b| b.iter(|| black_box(kernel.run32(&batch, &params).unwrap())));
    }
    group.finish();
}

fn step_level(c: &mut Criterion) {
    let run = step_run(1_000_000, 32);
    let mut group = c.benchmark_group("step 1e6x32");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function("plain copy (one f32 per step)", |b| {
        b.iter(|| black_box(run.nodes.env_reward.clone()));
    });
    for scheme in credit::SCHEMES {
        if scheme.supports(&run) != Support::Yes {
            continue;
        }
        let has_level = scheme.params().iter().any(|p| p.name == "level");
        let sets = if has_level { vec![("level".to_owned(), "step".to_owned())] } else { Vec::new() };
        let params = Params::resolve(*scheme, None, &sets).unwrap();
        if scheme.compute(&run, &params).is_err() {
            continue;
        }
        group.bench_function(scheme.info().id, |b| b.iter(|| black_box(scheme.compute(&run, &params).unwrap())));
    }
    group.finish();
}

/// Credit formulas on the 10⁶ × 32 run: parsed and checked once, each iteration one evaluation
/// over the whole run; the built-in each one equals beside it.
fn formulas(c: &mut Criterion) {
    use vantage::credit::expr::{Formula, builtins};
    let run = step_run(1_000_000, 32);
    let mut group = c.benchmark_group("formula 1e6x32");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    let cases = [
        ("grpo (formula)", builtins::GRPO, Some(("grpo", vec![("level".to_owned(), "step".to_owned())]))),
        (
            "rloo (formula)",
            builtins::builtin("rloo").unwrap().text,
            Some(("rloo", vec![("level".to_owned(), "step".to_owned())])),
        ),
        (
            "grpo + 0.3 env_reward (formula)",
            "(R - mean(R, group)) / (std(R, group) + 1e-6) + 0.3 * coalesce(env_reward, 0)",
            None,
        ),
        ("discounted env_reward (formula)", "discounted(coalesce(env_reward, 0), 0.99)", None),
    ];
    for (name, text, builtin) in cases {
        let compiled = Formula::parse(text).unwrap().compile(&run).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| black_box(vantage::credit::expr::eval::evaluate(&compiled, &run).unwrap()));
        });
        if let Some((id, sets)) = builtin {
            let scheme = credit::scheme(id).unwrap();
            let params = Params::resolve(scheme, None, &sets).unwrap();
            group.bench_function(format!("{id} (built-in)"), |b| {
                b.iter(|| black_box(scheme.compute(&run, &params).unwrap()));
            });
        }
    }
    group.finish();
}

fn tree_level(c: &mut Criterion) {
    let run = tree_run(10_000, 100);
    let mut group = c.benchmark_group("tree 1e4x100");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for id in ["treeps_rag", "treerpo", "treerl", "treepo", "tree_grpo", "spo_tree", "vineppo", "prm_process", "pure"] {
        let scheme = credit::scheme(id).unwrap();
        let params = Params::resolve(scheme, None, &[]).unwrap();
        group.bench_function(id, |b| b.iter(|| black_box(scheme.compute(&run, &params).unwrap())));
    }
    group.finish();
}

criterion_group!(benches, token_batch, step_level, formulas, tree_level);
criterion_main!(benches);
