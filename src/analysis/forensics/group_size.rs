//! Partial groups: a group smaller than the run's group size, taken from the run's metadata where
//! the trainer logs it (verl `rollout.n`, TRL `num_generations`, OpenRLHF and slime
//! `n_samples_per_prompt`, NeMo-RL `num_generations_per_prompt`, verifiers and prime-rl
//! `rollouts_per_example`, `group_size`), else the size most groups of its training step have.

use std::collections::BTreeMap;

use super::{Finding, Kind};
use crate::model::{GroupId, Run, TreeId};

/// The metadata keys that hold the number of rollouts per prompt, anywhere in the metadata.
const SIZE_KEYS: [&str; 6] = [
    "n_samples_per_prompt",
    "num_generations",
    "num_generations_per_prompt",
    "rollouts_per_example",
    "group_size",
    "num_samples_per_prompt",
];

/// The sizes a group is held against.
pub struct Sizes {
    /// The run's group size and the metadata key it was read from.
    pub run_size: Option<(usize, String)>,
    /// Per training step, the size most of its groups of two or more have, where one clearly does.
    pub by_step: BTreeMap<Option<i64>, usize>,
}

/// A positive integer at `key` in `value`'s objects, searched four levels deep; `n` counts only
/// inside a `rollout` object (verl's `actor_rollout_ref.rollout.n`).
fn find_size(value: &serde_json::Value, path: &str, depth: usize) -> Option<(usize, String)> {
    let object = value.as_object()?;
    for (key, inner) in object {
        let named = SIZE_KEYS.contains(&key.as_str()) || (key == "n" && path.ends_with("rollout"));
        if let Some(n) = inner.as_u64().filter(|&n| named && (1..=1_000_000).contains(&n)) {
            let at = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            return Some((n as usize, at));
        }
    }
    if depth == 0 {
        return None;
    }
    object.iter().find_map(|(key, inner)| {
        let at = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
        find_size(inner, &at, depth - 1)
    })
}

/// Whether group `g` holds tree records (their leaves are not a number of samples).
fn is_tree_group(run: &Run, g: GroupId) -> bool {
    run.groups.members(g).iter().any(|t| run.trajectories.tree[t.index()] != TreeId::NONE)
}

/// The sizes of `run`'s groups.
pub fn expected(run: &Run) -> Sizes {
    // A key with a `/` holds one run's config of a file that holds several (Trackio's
    // `config/RUN`): its size is that run's, which the groups do not say, so it is not read.
    let metadata = serde_json::Value::Object(
        run.meta.metadata.iter().filter(|(k, _)| !k.contains('/')).map(|(k, v)| (k.clone(), v.clone())).collect(),
    );
    let run_size = find_size(&metadata, "", 4).map(|(n, key)| (n, format!("the run's metadata ({key})")));
    let mut counts: BTreeMap<Option<i64>, BTreeMap<usize, usize>> = BTreeMap::new();
    for g in run.groups.ids().filter(|&g| !is_tree_group(run, g) && run.groups.members(g).len() >= 2) {
        let size = run.groups.members(g).len();
        *counts.entry(run.groups.train_step[g.index()]).or_default().entry(size).or_default() += 1;
    }
    // A size is the step's only where it is clear: held by three groups or more, by half of the
    // step's groups or more, and by more groups than any other size.
    let by_step = counts
        .into_iter()
        .filter_map(|(step, sizes)| {
            let total: usize = sizes.values().sum();
            let (&most, &n) = sizes.iter().max_by_key(|(size, n)| (**n, **size))?;
            let tied = sizes.iter().any(|(&size, &m)| size != most && m == n);
            (n >= 3 && 2 * n >= total && !tied).then_some((step, most))
        })
        .collect();
    Sizes { run_size, by_step }
}

/// The groups of two or more smaller than their expected size (tree groups left out).
pub fn partial_groups(run: &Run, sizes: &Sizes) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in run.groups.ids() {
        let members = run.groups.members(g);
        // A group of one has no baseline of other rows (each estimator's rule for a lone sample
        // gives its credit), and tree groups' leaves are not a number of samples.
        if members.len() < 2 || is_tree_group(run, g) {
            continue;
        }
        let step = run.groups.train_step[g.index()];
        let (expected, whence) = match (&sizes.run_size, sizes.by_step.get(&step)) {
            (Some((n, whence)), _) => (*n, whence.clone()),
            (None, Some(&n)) => (n, format!("the size most groups of training step {} have", step_text(step))),
            (None, None) => continue,
        };
        if members.len() >= expected {
            continue;
        }
        let evidence = format!(
            "{} of {expected} rollouts ({whence}): its mean and std are taken over {} rewards",
            members.len(),
            members.len()
        );
        out.push(Finding::new(run, Kind::PartialGroup, g, members.to_vec(), evidence));
    }
    out
}

fn step_text(step: Option<i64>) -> String {
    step.map_or_else(|| "none".to_owned(), |s| s.to_string())
}
