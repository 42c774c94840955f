//! prime-rl's hierarchical GRPO (`hierarchical_grpo`) for proposer–solver runs: a trace's
//! advantage is its reward minus the mean of its peers, with no std. The peers of a trace whose
//! agent role is in `episode_agents` (normally the solvers) are the traces of that role in the same
//! episode (attempts at one proposed problem); the peers of any other role (the proposer) are the
//! traces of that role across the whole group (the proposals from one source task). A comparison
//! of one trace gives 0. The role is the trajectory's first step's role (verifiers: the trace's
//! `agent.name`); the episode is the key up to its first `/` (verifiers keys a trace's rollouts
//! `episode/trace`). A tree record counts once (prime-rl scores a trace once, whatever its
//! branches). Python floats (f64), rounded once.

use crate::credit::engine::inputs::{fill_steps, group_traces, supports_outcomes, trajectory_episode, trajectory_role};
use crate::credit::params::declare::{decl, params};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, Family, Preset, SchemeInfo, SourceQuality, Terms};
use crate::model::Run;

scheme!(
    /// prime-rl's GRPO for proposer–solver runs.
    HierarchicalGrpo,
    knobs: Knobs,
    info: SchemeInfo {
        id: "hierarchical_grpo",
        family: Family::Outcome,
        display_name: "Hierarchical GRPO (proposer–solver)",
        citation: "prime-rl HierarchicalGRPOAlgorithm: r − mean over peers; roles in episode_agents (solvers) are compared within their episode, other roles (proposers) across the group",
        needs: "outcome rewards; agent roles on steps and episodes in the trajectory keys (`episode/trace`, as verifiers episodes load) for a proposer–solver run",
        source: SourceQuality::FromCode(
            "PrimeIntellect-ai/prime-rl@559b44772e471d1538537b8805cc77f3824a5e64 src/prime_rl/orchestrator/algo/hierarchical_grpo.py (HierarchicalGRPOAlgorithm.score_group); packages/prime-rl-configs/src/prime_rl/configs/algorithm.py (HierarchicalGRPOAlgoConfig.episode_agents, required, [\"solver\"] in its doc)",
        ),
        checked: "prime-rl's own HierarchicalGRPOAlgorithm.score_group (559b4477) run on proposer–solver groups, lone solvers, a judge role outside episode_agents, and two roles scoped to their episode (tests/golden/prime_grouped, tests/it/trainers_2026.rs), within 1e-6 (prime-rl's Python floats keep the log's doubles, vantage the float32 of each reward)",
    },
    presets: [Preset {
        name: "prime_rl",
        values: &[("episode_agents", "solver")],
        doc: "prime-rl HierarchicalGRPOAlgorithm with episode_agents = [\"solver\"], as HierarchicalGRPOAlgoConfig's doc advises (the field has no default)",
    }],
    supports: supports_outcomes,
    credit: credit,
);

params! {
    pub struct Knobs {
        episode_agents: &'static str = decl("solver", "the roles compared within one episode, separated by commas (prime-rl's episode_agents); other roles are compared across the group"),
    }
}

/// Comparison groups: (role, episode for a scoped role) and the traces in it.
type Peers<'a> = Vec<((&'a str, Option<&'a str>), Vec<usize>)>;

fn credit(run: &Run, knobs: &Knobs, _explain: bool) -> Credit {
    let scoped: Vec<&str> = knobs.episode_agents.split(',').map(str::trim).filter(|r| !r.is_empty()).collect();
    let tr = &run.trajectories;
    let mut step = vec![f32::NAN; tr.path_nodes.len()];
    let mut terms = Terms::for_rows(
        "r − mean of the peers (same role; same episode for episode_agents)",
        &["r", "mean", "peers"],
        tr.len(),
    );
    for g in run.groups.ids() {
        let traces = group_traces(run, g);
        // Peers by (role, episode for a scoped role), in the order first met.
        let mut peers: Peers<'_> = Vec::new();
        for (i, trace) in traces.iter().enumerate() {
            let role = trajectory_role(run, trace[0]);
            let key = (role, scoped.contains(&role).then(|| trajectory_episode(run, trace[0])));
            match peers.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push(i),
                None => peers.push((key, vec![i])),
            }
        }
        for (_, members) in &peers {
            let rewards: Vec<f64> = members.iter().map(|&i| f64::from(tr.reward[traces[i][0].index()])).collect();
            // Python's `sum(...) / len(...)`: left to right.
            let baseline = rewards.iter().fold(0.0, |sum, r| sum + r) / rewards.len() as f64;
            for (&i, &r) in members.iter().zip(&rewards) {
                fill_steps(&mut step, run, &traces[i], r - baseline);
                for t in &traces[i] {
                    terms.set(t.index(), &[r, baseline, members.len() as f64]);
                }
            }
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}
