//! Run summaries: counts, which fields are present, outcome statistics, zero-variance groups.

use std::collections::BTreeMap;

use crate::model::{GroupId, Run};

/// What a run contains, for `vantage check` and the run overview.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSummary {
    /// Number of groups.
    pub num_groups: usize,
    /// Number of trajectories.
    pub num_trajectories: usize,
    /// Number of distinct steps (nodes).
    pub num_nodes: usize,
    /// Sum of path lengths (a shared tree prefix counts once per trajectory).
    pub num_path_steps: usize,
    /// Number of tokens.
    pub num_tokens: usize,
    /// Number of tree records.
    pub num_trees: usize,
    /// Nodes with more than one child (branch points).
    pub num_branch_points: usize,
    /// Smallest and largest training step.
    pub train_steps: Option<(i64, i64)>,
    /// Mean outcome reward over trajectories that have one.
    pub mean_reward: Option<f64>,
    /// Trajectories with a logged outcome reward.
    pub num_with_reward: usize,
    /// Share of successes among trajectories with a success flag; `None` too when the reward is
    /// continuous and every flag only says whether the reward is above 0.5 (no success rate then).
    pub success_rate: Option<f64>,
    /// The reward is continuous (a value besides 0 and 1) and the success flags only threshold it.
    pub continuous_reward: bool,
    /// Groups of two or more rewarded trajectories whose rewards are all equal.
    pub num_zero_variance_groups: usize,
    /// Groups with at least two trajectories.
    pub num_multi_groups: usize,
    /// Step score names and how many nodes carry each.
    pub scores: BTreeMap<String, usize>,
    /// Outcome component names and how many trajectories carry each.
    pub components: BTreeMap<String, usize>,
    /// Role labels and their node counts.
    pub roles: BTreeMap<String, usize>,
    /// Step kinds and their node counts.
    pub kinds: BTreeMap<String, usize>,
    /// Finish reasons and their trajectory counts.
    pub finish: BTreeMap<String, usize>,
    /// Nodes with an environment reward.
    pub num_env_rewards: usize,
    /// Nodes with a state key, and how many distinct keys.
    pub num_state_keys: (usize, usize),
    /// Nodes with Monte-Carlo statistics.
    pub num_mc: usize,
    /// Nodes labelled as the first error, and nodes with any first-error label.
    pub num_first_error: (usize, usize),
    /// Nodes with retrieved documents.
    pub num_with_docs: usize,
    /// Token columns present.
    pub token_columns: Vec<&'static str>,
}

impl RunSummary {
    /// What makes a comparison on this run degenerate, in words (empty when nothing does).
    pub fn cautions(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.num_trajectories > 1 && self.num_multi_groups == 0 {
            out.push(
                "every group has a single rollout: group-relative schemes (GRPO, RLOO, …) have no baseline, so GRPO's credit is the raw reward (verl's rule) or 0"
                    .to_owned(),
            );
        } else if self.num_multi_groups > 0 && self.num_zero_variance_groups == self.num_multi_groups {
            out.push(
                "every group's rollouts have equal outcomes: GRPO and RLOO give every step 0 (no gradient)".to_owned(),
            );
        }
        let missing = self.num_trajectories - self.num_with_reward.min(self.num_trajectories);
        if missing > 0 {
            out.push(format!(
                "{missing} of {} trajectories have no outcome reward: outcome schemes give them no credit, and the tree draws their leaves without a success or failure mark",
                self.num_trajectories
            ));
        }
        out
    }
}

/// Whether a group has at least two rewarded trajectories, all with the same reward.
pub fn is_zero_variance(run: &Run, group: GroupId) -> bool {
    let mut rewards =
        run.groups.members(group).iter().map(|t| run.trajectories.reward[t.index()]).filter(|r| !r.is_nan());
    let Some(first) = rewards.next() else {
        return false;
    };
    let mut count = 1;
    for r in rewards {
        if r != first {
            return false;
        }
        count += 1;
    }
    count >= 2
}

fn count_labels(run: &Run, column: &[crate::model::Sym]) -> BTreeMap<String, usize> {
    let mut counts = vec![0usize; run.labels.len()];
    for sym in column {
        if let Some(c) = counts.get_mut(sym.index()) {
            *c += 1;
        }
    }
    counts
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(i, c)| (run.label(crate::model::Sym::from_index(i)).to_owned(), *c))
        .collect()
}

impl RunSummary {
    /// Summarises a run in one pass over its columns.
    pub fn of(run: &Run) -> Self {
        let nodes = &run.nodes;
        let tr = &run.trajectories;
        let rewards: Vec<f64> = tr.reward.iter().filter(|r| !r.is_nan()).map(|&r| f64::from(r)).collect();
        let successes: Vec<bool> = tr.success.iter().flatten().copied().collect();
        // A loader that knows no success flag thresholds the reward at 0.5: with a continuous
        // reward that is no success rate.
        let continuous = rewards.iter().any(|&r| r != 0.0 && r != 1.0)
            && tr.ids().all(|t| {
                let (r, s) = (tr.reward[t.index()], tr.success[t.index()]);
                s.is_none_or(|s| r.is_nan() || s == (r > 0.5))
            });
        let steps: Vec<i64> = run.groups.train_step.iter().flatten().copied().collect();
        let mut distinct_states: Vec<u32> = nodes.state_key.iter().filter(|s| s.is_some()).map(|s| s.0).collect();
        let num_state_nodes = distinct_states.len();
        distinct_states.sort_unstable();
        distinct_states.dedup();
        Self {
            num_groups: run.groups.len(),
            num_trajectories: tr.len(),
            num_nodes: nodes.len(),
            num_path_steps: run.num_path_steps(),
            num_tokens: run.tokens.len,
            num_trees: run.trees.len(),
            num_branch_points: (0..nodes.len())
                .filter(|&i| nodes.children(crate::model::NodeId::from_index(i)).nth(1).is_some())
                .count(),
            train_steps: steps.iter().min().zip(steps.iter().max()).map(|(a, b)| (*a, *b)),
            mean_reward: (!rewards.is_empty()).then(|| rewards.iter().sum::<f64>() / rewards.len() as f64),
            num_with_reward: rewards.len(),
            success_rate: (!successes.is_empty() && !continuous)
                .then(|| successes.iter().filter(|s| **s).count() as f64 / successes.len() as f64),
            continuous_reward: continuous && !successes.is_empty(),
            num_zero_variance_groups: run.groups.ids().filter(|&g| is_zero_variance(run, g)).count(),
            num_multi_groups: run.groups.ids().filter(|&g| run.groups.members(g).len() >= 2).count(),
            scores: nodes.scores.iter().map(|(k, v)| (k.clone(), v.iter().filter(|x| !x.is_nan()).count())).collect(),
            components: tr
                .components
                .iter()
                .map(|(k, v)| (k.clone(), v.iter().filter(|x| !x.is_nan()).count()))
                .collect(),
            roles: count_labels(run, &nodes.role),
            kinds: count_labels(run, &nodes.kind),
            finish: count_labels(run, &tr.finish),
            num_env_rewards: nodes.env_reward.iter().filter(|x| !x.is_nan()).count(),
            num_state_keys: (num_state_nodes, distinct_states.len()),
            num_mc: (0..nodes.len()).filter(|&i| nodes.mc(crate::model::NodeId::from_index(i)).is_some()).count(),
            num_first_error: (
                nodes.flags.iter().filter(|f| **f & crate::model::FLAG_FIRST_ERROR != 0).count(),
                nodes.flags.iter().filter(|f| **f & crate::model::FLAG_FIRST_ERROR_LABELLED != 0).count(),
            ),
            num_with_docs: (0..nodes.len())
                .filter(|&i| !nodes.docs(crate::model::NodeId::from_index(i)).is_empty())
                .count(),
            token_columns: run.tokens.present(),
        }
    }

    /// Whether any node has more than one child, i.e. the run has real tree structure.
    pub fn has_tree_links(&self) -> bool {
        self.num_branch_points > 0
    }

    /// Human-readable lines, as `vantage check` prints them (indented by the caller).
    pub fn lines(&self) -> Vec<String> {
        let list = |map: &BTreeMap<String, usize>| {
            if map.is_empty() {
                "none".to_owned()
            } else {
                map.iter().map(|(k, v)| format!("{k} ({v})")).collect::<Vec<_>>().join(", ")
            }
        };
        let mut lines = vec![format!(
            "groups {} · trajectories {} · steps {} (nodes {}) · tokens {}",
            self.num_groups, self.num_trajectories, self.num_path_steps, self.num_nodes, self.num_tokens
        )];
        let mut outcome = Vec::new();
        if let Some((a, b)) = self.train_steps {
            outcome.push(if a == b { format!("train step {a}") } else { format!("train steps {a}..{b}") });
        }
        match self.mean_reward {
            Some(mean) => outcome.push(format!("mean reward {mean:.3} ({} rewarded)", self.num_with_reward)),
            None => outcome.push("no outcome rewards".to_owned()),
        }
        if let Some(rate) = self.success_rate {
            outcome.push(format!("success {:.1}%", rate * 100.0));
        } else if self.continuous_reward {
            outcome.push("no success rate (the reward is continuous)".to_owned());
        }
        outcome.push(format!("zero-variance groups {} of {}", self.num_zero_variance_groups, self.num_multi_groups));
        lines.push(outcome.join(" · "));
        lines.push(format!("step scores: {}", list(&self.scores)));
        lines.push(format!("outcome components: {}", list(&self.components)));
        lines.push(format!("roles: {}", list(&self.roles)));
        lines.push(format!("kinds: {}", list(&self.kinds)));
        lines.push(format!("finish reasons: {}", list(&self.finish)));
        lines.push(format!(
            "tree links: {} · env rewards {} · state keys {} ({} distinct) · MC stats {} · first-error labels {} ({} errors) · retrieved docs {}",
            if self.has_tree_links() {
                format!("yes ({} trees, {} branch points)", self.num_trees, self.num_branch_points)
            } else {
                "no".to_owned()
            },
            self.num_env_rewards,
            self.num_state_keys.0,
            self.num_state_keys.1,
            self.num_mc,
            self.num_first_error.1,
            self.num_first_error.0,
            self.num_with_docs,
        ));
        lines.push(format!(
            "tokens: {}",
            if self.token_columns.is_empty() { "none".to_owned() } else { self.token_columns.join(", ") }
        ));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::RunSummary;
    use crate::load::{LoadReport, load_bytes};

    fn cautions(log: &str) -> Vec<String> {
        let run = load_bytes("c.jsonl", log.as_bytes(), &mut LoadReport::new("c.jsonl")).expect("loads");
        RunSummary::of(&run).cautions()
    }

    #[test]
    fn degenerate_runs_are_said() {
        let singletons = "{\"vantage\": 1}\n{\"type\": \"trajectory\", \"id\": \"a\", \"group\": \"g1\", \"outcome\": {\"reward\": 1}, \"steps\": [{\"thought\": \"x\"}]}\n{\"type\": \"trajectory\", \"id\": \"b\", \"group\": \"g2\", \"outcome\": {\"reward\": 0}, \"steps\": [{\"thought\": \"y\"}]}\n";
        let said = cautions(singletons);
        assert!(said.len() == 1 && said[0].contains("single rollout"), "{said:?}");
        let equal = singletons.replace("\"g2\", \"outcome\": {\"reward\": 0}", "\"g1\", \"outcome\": {\"reward\": 1}");
        let said = cautions(&equal);
        assert!(said.len() == 1 && said[0].contains("equal outcomes"), "{said:?}");
        let unscored = singletons.replace(", \"outcome\": {\"reward\": 0}", "").replace("\"g2\"", "\"g1\"");
        let said = cautions(&unscored);
        assert!(said.iter().any(|c| c.starts_with("1 of 2 trajectories have no outcome")), "{said:?}");
        let fine = singletons.replace("\"g2\"", "\"g1\"");
        assert!(cautions(&fine).is_empty());
    }
}

#[cfg(test)]
mod continuous_tests {
    #[test]
    fn a_continuous_reward_has_no_success_rate_but_a_binary_one_and_logged_flags_do() {
        let summary = |rows: &[(f32, Option<bool>)]| {
            let mut log = String::from("{\"vantage\": 1}\n");
            for (i, (r, s)) in rows.iter().enumerate() {
                let success = s.map_or(String::new(), |s| format!(", \"success\": {s}"));
                log.push_str(&format!(
                    "{{\"type\": \"trajectory\", \"id\": \"t{i}\", \"group\": \"g\", \"outcome\": {{\"reward\": {r}{success}}}, \"steps\": [{{\"action\": \"a\"}}]}}\n"
                ));
            }
            let run = crate::load::load_bytes("r", log.as_bytes(), &mut crate::load::LoadReport::new("r")).unwrap();
            super::RunSummary::of(&run).lines().join("\n")
        };
        // Thresholded flags on a continuous reward (what a loader without flags writes).
        let continuous = summary(&[(1.25, Some(true)), (0.75, Some(true)), (0.3, Some(false))]);
        assert!(continuous.contains("no success rate (the reward is continuous)"), "{continuous}");
        assert!(summary(&[(1.0, Some(true)), (0.0, Some(false))]).contains("success 50.0%"));
        // A logged flag that is not the threshold (a majority vote on a 0.75 reward says no).
        assert!(summary(&[(0.75, Some(false)), (0.25, Some(false)), (1.0, Some(true))]).contains("success 33.3%"));
    }
}
