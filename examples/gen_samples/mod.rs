//! Deterministic generators for the sample runs (shared by the example and the tests).

mod agent;
mod episodes;
mod math;
mod rng;
mod search;
mod terminal;
mod tokens;
mod tree;

use vantage::load::formats::vantage_jsonl::write::to_jsonl;
use vantage::model::Run;

/// Every generated file: (path relative to the repository root, run).
pub fn all() -> Vec<(&'static str, Run)> {
    vec![
        ("sample_runs/math_grpo_prm.jsonl", math::run(0x5eed_0001, 3, 12, 8)),
        ("sample_runs/alfworld_roles.jsonl", agent::run(0x5eed_0002)),
        ("sample_runs/search_qa_rag.jsonl", search::run(0x5eed_0003)),
        ("sample_runs/tree_rollouts.jsonl", tree::run(0x5eed_0004)),
        ("sample_runs/verl_token_batch.jsonl", tokens::run(0x5eed_0005)),
        ("sample_runs/terminal_turn_scores.jsonl", terminal::run(0x5eed_0007)),
        ("assets/demo_run.jsonl", math::run(0x5eed_0006, 2, 6, 8)),
    ]
}

/// Every generated file as the text written: the runs above in vantage JSONL, and the logs written
/// in another trainer's format.
pub fn texts() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = all().into_iter().map(|(path, run)| (path, to_jsonl(&run))).collect();
    out.push(("sample_runs/prime_rl_episodes.jsonl", episodes::text(0x5eed_0008)));
    out
}
