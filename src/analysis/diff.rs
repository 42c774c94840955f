//! Step-aligned diff of two trajectories: a longest common subsequence over their steps, matched
//! by step text, by state key, or by word overlap, so "where did the successful rollout diverge,
//! and what credit did that step get" is one table.

use crate::model::{NodeId, Run, TrajectoryId};

/// How two steps are taken for the same step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlignBy {
    /// The same thought and action text (whitespace and case aside).
    #[default]
    Text,
    /// The same state key.
    State,
    /// Words in common: Jaccard similarity of their word sets at least one half.
    Similar,
}

impl AlignBy {
    /// Every way, in the order of the picker.
    pub const ALL: [Self; 3] = [Self::Text, Self::State, Self::Similar];

    /// Label.
    pub fn label(self) -> &'static str {
        match self {
            Self::Text => "same text",
            Self::State => "same state key",
            Self::Similar => "similar text",
        }
    }
}

/// One row of an alignment: a step of the left trajectory, of the right one, or both (a match).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Step index along the left trajectory.
    pub left: Option<usize>,
    /// Step index along the right trajectory.
    pub right: Option<usize>,
}

impl Row {
    /// Whether both sides have a step here.
    pub fn matched(&self) -> bool {
        self.left.is_some() && self.right.is_some()
    }
}

/// Above this many cells (left steps × right steps) the alignment is greedy, not an exact LCS.
const MAX_CELLS: usize = 4_000_000;

/// What a step is compared by.
fn step_key(run: &Run, node: NodeId, by: AlignBy) -> String {
    let n = node.index();
    match by {
        AlignBy::State => {
            let key = run.label(run.nodes.state_key[n]);
            // A step without a key matches nothing.
            if key.is_empty() { format!("\u{0}{n}") } else { key.to_owned() }
        }
        AlignBy::Text | AlignBy::Similar => {
            let text = format!("{} {}", run.text(run.nodes.thought[n]), run.text(run.nodes.action[n]));
            text.split_whitespace().map(str::to_lowercase).collect::<Vec<_>>().join(" ")
        }
    }
}

/// Jaccard similarity of two texts' word sets.
fn word_jaccard(a: &str, b: &str) -> f64 {
    let wa: std::collections::BTreeSet<&str> = a.split(' ').filter(|w| !w.is_empty()).collect();
    let wb: std::collections::BTreeSet<&str> = b.split(' ').filter(|w| !w.is_empty()).collect();
    let union = wa.union(&wb).count();
    if union == 0 { 1.0 } else { wa.intersection(&wb).count() as f64 / union as f64 }
}

/// The alignment of trajectories `left` and `right`, in step order.
pub fn align(run: &Run, left: TrajectoryId, right: TrajectoryId, by: AlignBy) -> Vec<Row> {
    let tr = &run.trajectories;
    let a: Vec<String> = tr.path(left).iter().map(|&n| step_key(run, n, by)).collect();
    let b: Vec<String> = tr.path(right).iter().map(|&n| step_key(run, n, by)).collect();
    let same = |i: usize, j: usize| match by {
        AlignBy::Similar => word_jaccard(&a[i], &b[j]) >= 0.5,
        _ => a[i] == b[j],
    };
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > MAX_CELLS {
        return greedy(n, m, same);
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let width = m + 1;
    let mut lcs = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * width + j] = if same(i, j) {
                lcs[(i + 1) * width + j + 1] + 1
            } else {
                lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
            };
        }
    }
    let mut rows = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same(i, j) && lcs[i * width + j] == lcs[(i + 1) * width + j + 1] + 1 {
            rows.push(Row { left: Some(i), right: Some(j) });
            i += 1;
            j += 1;
        } else if lcs[(i + 1) * width + j] >= lcs[i * width + j + 1] {
            rows.push(Row { left: Some(i), right: None });
            i += 1;
        } else {
            rows.push(Row { left: None, right: Some(j) });
            j += 1;
        }
    }
    rows.extend((i..n).map(|i| Row { left: Some(i), right: None }));
    rows.extend((j..m).map(|j| Row { left: None, right: Some(j) }));
    rows
}

/// A linear alignment for very long paths: match while the steps agree, else step the side that
/// finds its partner sooner (within a window).
fn greedy(n: usize, m: usize, same: impl Fn(usize, usize) -> bool) -> Vec<Row> {
    const WINDOW: usize = 32;
    let mut rows = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same(i, j) {
            rows.push(Row { left: Some(i), right: Some(j) });
            i += 1;
            j += 1;
            continue;
        }
        let ahead_right = (1..WINDOW).find(|&d| j + d < m && same(i, j + d));
        let ahead_left = (1..WINDOW).find(|&d| i + d < n && same(i + d, j));
        match (ahead_left, ahead_right) {
            (_, Some(d)) if ahead_left.is_none_or(|l| d <= l) => {
                rows.extend((j..j + d).map(|j| Row { left: None, right: Some(j) }));
                j += d;
            }
            (Some(d), _) => {
                rows.extend((i..i + d).map(|i| Row { left: Some(i), right: None }));
                i += d;
            }
            _ => {
                rows.push(Row { left: Some(i), right: None });
                rows.push(Row { left: None, right: Some(j) });
                i += 1;
                j += 1;
            }
        }
    }
    rows.extend((i..n).map(|i| Row { left: Some(i), right: None }));
    rows.extend((j..m).map(|j| Row { left: None, right: Some(j) }));
    rows
}

/// The first row where the two stop matching (their divergence), if they ever do.
pub fn divergence(rows: &[Row]) -> Option<usize> {
    rows.iter().position(|r| !r.matched())
}

/// The rollout to compare `t` with by default: another of its group with the other outcome, else
/// the next one of the group.
pub fn default_partner(run: &Run, t: TrajectoryId) -> Option<TrajectoryId> {
    let tr = &run.trajectories;
    let members = run.groups.members(tr.group[t.index()]);
    let success = super::compare::is_success(run, t);
    members
        .iter()
        .copied()
        .find(|&o| o != t && !tr.reward[o.index()].is_nan() && super::compare::is_success(run, o) != success)
        .or_else(|| members.iter().copied().find(|&o| o != t))
}

/// Rollouts aligned together: one column per aligned position, each rollout's step there (or none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupAlignment {
    /// The rollouts, the first the one the others are aligned to.
    pub rollouts: Vec<TrajectoryId>,
    /// Per column, each rollout's step index there (`None`: a gap).
    pub columns: Vec<Vec<Option<usize>>>,
}

impl GroupAlignment {
    /// The columns where the rollouts part: some have a step there and some do not, the first
    /// rollout's step being one of them (a state where some went on the same way and some not).
    pub fn forks(&self) -> Vec<usize> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c[0].is_some() && c.iter().any(Option::is_none) && c.iter().skip(1).any(Option::is_some))
            .map(|(i, _)| i)
            .collect()
    }
}

/// The most rollouts aligned together.
pub const MAX_ALIGNED: usize = 16;

/// `rollouts` (the first the anchor, at most [`MAX_ALIGNED`]) aligned on the same columns: each
/// other rollout is aligned with the first as [`align`] aligns two, and the columns merged around
/// the first's steps; a rollout's steps that match none of the first's sit in the columns just
/// before the first's next step, in their order. With two rollouts the columns are [`align`]'s rows.
pub fn align_group(run: &Run, rollouts: &[TrajectoryId], by: AlignBy) -> GroupAlignment {
    let rollouts: Vec<TrajectoryId> = rollouts.iter().copied().take(MAX_ALIGNED).collect();
    let Some(&anchor) = rollouts.first() else { return GroupAlignment::default() };
    let n = run.trajectories.num_steps(anchor);
    // Per other rollout: its step matched to each of the anchor's, and its steps before each of
    // the anchor's (the last slot: after its last step).
    let mut matched: Vec<Vec<Option<usize>>> = Vec::new();
    let mut before: Vec<Vec<Vec<usize>>> = Vec::new();
    for &other in &rollouts[1..] {
        let (mut m, mut b) = (vec![None; n], vec![Vec::new(); n + 1]);
        let rows = align(run, anchor, other, by);
        // Each right-only step waits for the anchor's next step.
        let mut pending: Vec<usize> = Vec::new();
        for row in &rows {
            match (row.left, row.right) {
                (Some(i), right) => {
                    b[i].append(&mut pending);
                    m[i] = right;
                }
                (None, Some(j)) => pending.push(j),
                (None, None) => {}
            }
        }
        b[n].append(&mut pending);
        matched.push(m);
        before.push(b);
    }
    let k = rollouts.len();
    let mut columns = Vec::new();
    for i in 0..=n {
        let width = before.iter().map(|b| b[i].len()).max().unwrap_or(0);
        for slot in 0..width {
            let mut column = vec![None; k];
            for (r, b) in before.iter().enumerate() {
                column[r + 1] = b[i].get(slot).copied();
            }
            columns.push(column);
        }
        if i < n {
            let mut column = vec![Some(i); 1];
            column.extend(matched.iter().map(|m| m[i]));
            columns.push(column);
        }
    }
    GroupAlignment { rollouts, columns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{LoadReport, load_bytes};

    const LOG: &str = r#"{"vantage": 1}
{"type": "trajectory", "id": "win", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "Read the task", "state": "s0"}, {"thought": "search docs", "state": "s1"}, {"thought": "open result 2", "state": "s2"}, {"thought": "answer 42", "state": "s3"}]}
{"type": "trajectory", "id": "lose", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "read the  task", "state": "s0"}, {"thought": "search docs", "state": "s1"}, {"thought": "open result 5", "state": "s9"}, {"thought": "answer 41", "state": "s8"}, {"thought": "give up", "state": "s7"}]}
"#;

    fn run() -> Run {
        load_bytes("d.jsonl", LOG.as_bytes(), &mut LoadReport::new("d.jsonl")).expect("loads")
    }

    #[test]
    fn the_alignment_matches_shared_steps_and_finds_the_divergence() {
        let run = run();
        let (win, lose) = (run.trajectory_by_key("win").unwrap(), run.trajectory_by_key("lose").unwrap());
        let rows = align(&run, win, lose, AlignBy::Text);
        // Case and spacing aside, the first two steps match; then the two go their own ways.
        assert!(rows[0].matched() && rows[1].matched());
        assert_eq!(divergence(&rows), Some(2));
        assert_eq!(rows.iter().filter(|r| r.left.is_some()).count(), 4);
        assert_eq!(rows.iter().filter(|r| r.right.is_some()).count(), 5);
        // Similar text pairs "open result 2" with "open result 5" (2 words of 4 in common).
        let similar = align(&run, win, lose, AlignBy::Similar);
        assert_eq!(similar.iter().filter(|r| r.matched()).count(), 3);
        let by_state = align(&run, win, lose, AlignBy::State);
        assert_eq!(by_state.iter().filter(|r| r.matched()).count(), 2);
        assert_eq!(default_partner(&run, win), Some(lose));
    }

    #[test]
    fn the_greedy_alignment_keeps_every_step_once_in_order() {
        let a = [1, 2, 3, 4, 5, 6];
        let b = [1, 9, 2, 3, 7, 6];
        let rows = greedy(a.len(), b.len(), |i, j| a[i] == b[j]);
        let left: Vec<usize> = rows.iter().filter_map(|r| r.left).collect();
        let right: Vec<usize> = rows.iter().filter_map(|r| r.right).collect();
        assert_eq!(left, (0..6).collect::<Vec<_>>());
        assert_eq!(right, (0..6).collect::<Vec<_>>());
        assert_eq!(rows.iter().filter(|r| r.matched()).count(), 4);
    }
}
