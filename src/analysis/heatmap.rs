//! The steps × rollouts grid behind the heatmap: which trajectories are rows (in what order), one
//! value per (row, step), and the value range for the legend. No drawing here.

use crate::model::{GroupId, Run, TrajectoryId};

/// What a heatmap cell shows.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum HeatValue {
    /// Credit under scheme A.
    CreditA,
    /// Credit under scheme B.
    CreditB,
    /// A − B.
    Difference,
    /// A named step score.
    Score(String),
    /// The environment reward of the step.
    EnvReward,
    /// The role label (categorical).
    Role,
}

impl HeatValue {
    /// Label for pickers and legends.
    pub fn label(&self) -> String {
        match self {
            Self::CreditA => "credit A".to_owned(),
            Self::CreditB => "credit B".to_owned(),
            Self::Difference => "A − B".to_owned(),
            Self::Score(name) => format!("score {name}"),
            Self::EnvReward => "env reward".to_owned(),
            Self::Role => "role".to_owned(),
        }
    }

    /// Whether the value is signed credit (diverging colors centered at 0).
    pub fn is_credit(&self) -> bool {
        matches!(self, Self::CreditA | Self::CreditB | Self::Difference)
    }

    /// The choices a run offers: the three credit views, its step scores, env reward, role.
    pub fn choices(run: &Run) -> Vec<Self> {
        let mut out = vec![Self::CreditA, Self::CreditB, Self::Difference];
        out.extend(run.nodes.scores.keys().map(|name| Self::Score(name.clone())));
        if run.nodes.env_reward.iter().any(|r| !r.is_nan()) {
            out.push(Self::EnvReward);
        }
        if run.nodes.role.iter().any(|r| !r.is_none()) {
            out.push(Self::Role);
        }
        out
    }
}

/// The grid: `rows` trajectories × `num_cols` steps, row-major, `NaN` where a row has no such step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HeatmapGrid {
    /// The trajectory of each row.
    pub rows: Vec<TrajectoryId>,
    /// Number of columns (the longest path).
    pub num_cols: usize,
    /// `rows.len() × num_cols` values.
    pub values: Vec<f32>,
    /// Smallest and largest finite value (`(0, 0)` when none).
    pub range: (f32, f32),
}

impl HeatmapGrid {
    /// Builds the grid for `rows`, reading each cell from `value_at(path position)`.
    pub fn build(run: &Run, rows: Vec<TrajectoryId>, value_at: impl Fn(usize) -> f32) -> Self {
        let tr = &run.trajectories;
        let num_cols = rows.iter().map(|&t| tr.num_steps(t)).max().unwrap_or(0);
        let mut values = vec![f32::NAN; rows.len() * num_cols];
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for (r, &t) in rows.iter().enumerate() {
            for (k, p) in tr.path_range(t).enumerate() {
                let v = value_at(p);
                values[r * num_cols + k] = v;
                if v.is_finite() {
                    lo = lo.min(v);
                    hi = hi.max(v);
                }
            }
        }
        let range = if lo <= hi { (lo, hi) } else { (0.0, 0.0) };
        Self { rows, num_cols, values, range }
    }

    /// The value at (row, col), `None` outside the grid or where the row has no such step.
    pub fn value(&self, row: usize, col: usize) -> Option<f32> {
        if col >= self.num_cols {
            return None;
        }
        self.values.get(row * self.num_cols + col).copied().filter(|v| !v.is_nan())
    }

    /// The path position of (row, col), `None` past the row's last step.
    pub fn path_position(&self, run: &Run, row: usize, col: usize) -> Option<usize> {
        let t = *self.rows.get(row)?;
        let range = run.trajectories.path_range(t);
        (col < range.len()).then_some(range.start + col)
    }
}

/// Rows for a heatmap: the members of `group` (all groups, in order, when `None`), each group's
/// rollouts sorted by outcome, best first (missing outcomes last).
pub fn rows_by_outcome(run: &Run, group: Option<GroupId>) -> Vec<TrajectoryId> {
    let tr = &run.trajectories;
    let groups: Vec<GroupId> = match group {
        Some(g) => vec![g],
        None => run.groups.ids().collect(),
    };
    let mut rows = Vec::with_capacity(if group.is_some() { 16 } else { tr.len() });
    for g in groups {
        let start = rows.len();
        rows.extend_from_slice(run.groups.members(g));
        let key = |t: &TrajectoryId| {
            let r = tr.reward[t.index()];
            if r.is_nan() { f32::INFINITY } else { -r }
        };
        rows[start..].sort_by(|a, b| key(a).total_cmp(&key(b)));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{LoadReport, load_bytes};

    const LOG: &str = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "x", "scores": {"prm": 0.5}}]}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "y", "scores": {"prm": 0.9}}, {"thought": "z", "scores": {"prm": 0.1}}]}
"#;

    #[test]
    fn rows_sort_by_outcome_and_short_rows_pad_with_nan() {
        let run = load_bytes("t.jsonl", LOG.as_bytes(), &mut LoadReport::new("t.jsonl")).expect("loads");
        let rows = rows_by_outcome(&run, None);
        assert_eq!(run.trajectory_key(rows[0]), "b");
        let prm = &run.nodes.scores["prm"];
        let grid = HeatmapGrid::build(&run, rows, |p| prm[run.trajectories.path_nodes[p].index()]);
        assert_eq!(grid.num_cols, 2);
        assert_eq!(grid.value(0, 1), Some(0.1));
        assert_eq!(grid.value(1, 0), Some(0.5));
        assert_eq!(grid.value(1, 1), None);
        assert_eq!(grid.range, (0.1, 0.9));
        assert_eq!(grid.path_position(&run, 1, 1), None);
    }
}
