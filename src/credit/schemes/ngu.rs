//! prime-rl's NGU (`ngu`): a historical binary baseline with positive-anchored, zero-sum
//! advantages. With `attempts` and `successes` the prompt's counts, a group with both passes and
//! fails gives each pass `1 − successes/attempts` and each fail `−positive·P/N` (P passes, N fails
//! in the group), so the group sums to 0 and a pass is worth more the rarer passes have been; a
//! group of all passes or all fails gives 0. Rewards must be unshaped binary (0 or 1), as prime-rl
//! requires. prime-rl's `score_group` counts the group itself (`attempts` = its traces,
//! `successes` = its passes: then a pass gets N/n and a fail −P/n, the group's r − mean); its
//! `score_history` takes the counts of the prompt's history, which `history = run` gives here: the
//! prompt's groups (by task, else prompt text) in training-step order, each counted with the ones
//! before it. A tree record counts once (prime-rl scores a trace once). Python floats (f64),
//! rounded once.

use crate::credit::engine::inputs::{fill_steps, group_traces};
use crate::credit::params::declare::{choice, decl, params};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, Preset, SchemeInfo, SourceQuality, Support, Terms};
use crate::model::{GroupId, Run};

/// prime-rl at the commit read.
const PRIME_RL_AT: &str = "PrimeIntellect-ai/prime-rl@8142e69a145e1b6e732d645311e1f76669b88bf6 src/prime_rl/orchestrator/algo/ngu.py (anchored_advantages, NGUAlgorithm.score_group, score_history)";

scheme!(
    /// prime-rl's historical binary baseline.
    Ngu,
    knobs: Knobs,
    info: SchemeInfo {
        id: "ngu",
        family: Family::Outcome,
        display_name: "NGU (historical binary baseline)",
        citation: "prime-rl NGUAlgorithm: positive-anchored zero-sum advantages from a prompt's historical pass rate: a pass gets 1 − successes/attempts, a fail −positive·P/N",
        needs: "unshaped binary outcome rewards (0 or 1); training steps order the history (history = run)",
        source: SourceQuality::FromCode(PRIME_RL_AT),
        checked: "prime-rl's own anchored_advantages and NGUAlgorithm (8142e69a) run on groups of 1 to 16, all-pass and all-fail groups, and a prompt's groups over several training steps (tests/golden/prime_grouped, tests/it/trainers_2026.rs), to the bit",
    },
    presets: [
        Preset {
            name: "prime_rl",
            values: &[("history", "group")],
            doc: "prime-rl NGUAlgorithm.score_group: the counts are the group's own (no length penalty, NGUAlgoConfig's length_penalty unset)",
        },
        Preset {
            name: "history",
            values: &[("history", "run")],
            doc: "NGUAlgorithm.score_history with the prompt's counts over the run's training steps up to and with the group (the caller that keeps prime-rl's history is not in the files read: this is vantage's reading of it); like prime_rl, every trace counts, where prime-rl leaves out failed and untrainable ones",
        },
    ],
    supports: supports,
    credit: credit,
    batch_wide: |knobs| (knobs.history == History::Run).then_some("a prompt's counts run over its groups of every training step before"),
);

choice! {
    /// Whose counts set the baseline.
    pub enum History { Group = "group", Run = "run" }
}

params! {
    pub struct Knobs {
        history: History = decl("group", "the counts: the group's own (prime-rl's score_group), or the prompt's over the run's training steps up to this group (score_history)"),
    }
}

/// `Yes` when every outcome is 0 or 1, else how many are not (the credit names the first).
fn supports(run: &Run) -> Support {
    if !crate::credit::engine::inputs::has_outcomes(run) {
        return Support::No("needs outcome rewards".to_owned());
    }
    let tr = &run.trajectories;
    let shaped = tr.reward.iter().filter(|r| r.is_finite() && ![0.0, 1.0].contains(*r)).count();
    if shaped == 0 {
        Support::Yes
    } else {
        Support::No(format!("needs unshaped binary rewards (0 or 1): {shaped} of {} rollouts have others", tr.len()))
    }
}

/// The first trajectory whose outcome is not 0 or 1, named.
fn not_binary(run: &Run) -> Option<String> {
    let tr = &run.trajectories;
    tr.ids().find(|t| tr.reward[t.index()].is_finite() && ![0.0, 1.0].contains(&tr.reward[t.index()])).map(|t| {
        format!(
            "NGU requires unshaped binary rewards (0 or 1): trajectory {} has {}",
            run.trajectory_key(t),
            tr.reward[t.index()]
        )
    })
}

/// The key a prompt's groups share across training steps: its task, else its prompt, else the
/// group's key.
fn prompt_of(run: &Run, g: GroupId) -> String {
    let task = run.label(run.groups.task[g.index()]);
    if !task.is_empty() {
        return format!("task:{task}");
    }
    let prompt = run.text(run.groups.prompt[g.index()]);
    if prompt.is_empty() { format!("group:{}", run.group_key(g)) } else { format!("prompt:{prompt}") }
}

fn credit(run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
    if let Some(reason) = not_binary(run) {
        return Err(CreditError::Failed { scheme: INFO.id.to_owned(), reason });
    }
    let tr = &run.trajectories;
    let mut groups: Vec<GroupId> = run.groups.ids().collect();
    if knobs.history == History::Run {
        groups.sort_by_key(|g| run.groups.train_step[g.index()].unwrap_or(i64::MIN));
    }
    // The prompt's counts so far (history = run).
    let mut counts: std::collections::HashMap<String, (u64, u64)> = std::collections::HashMap::new();
    let mut step = vec![f32::NAN; tr.path_nodes.len()];
    let mut terms = Terms::for_rows(
        "pass: 1 − successes/attempts; fail: −positive·P/N; 0 unless the group has both",
        &["r", "attempts", "successes"],
        tr.len(),
    );
    for g in groups {
        let traces = group_traces(run, g);
        let rewards: Vec<f64> = traces.iter().map(|t| f64::from(tr.reward[t[0].index()])).collect();
        let positives: f64 = rewards.iter().sum();
        let negatives = rewards.len() as f64 - positives;
        let (attempts, successes) = match knobs.history {
            History::Group => (rewards.len() as u64, positives as u64),
            History::Run => {
                let seen = counts.entry(prompt_of(run, g)).or_default();
                seen.0 += rewards.len() as u64;
                seen.1 += positives as u64;
                *seen
            }
        };
        let (positive, negative) = if positives == 0.0 || negatives == 0.0 || attempts == 0 {
            (0.0, 0.0)
        } else {
            let positive = 1.0 - successes as f64 / attempts as f64;
            // Python's `-positive * positives / negatives`: left to right.
            (positive, -positive * positives / negatives)
        };
        for (trace, &r) in traces.iter().zip(&rewards) {
            fill_steps(&mut step, run, trace, if r == 1.0 { positive } else { negative });
            for t in trace {
                terms.set(t.index(), &[r, attempts as f64, successes as f64]);
            }
        }
    }
    Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
}
