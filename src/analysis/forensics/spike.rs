//! Advantage spikes: a logged advantage beyond a bound where the group's reward std, or the
//! leave-one-out std of the row's others, is zero (NeMo-RL #4158: `[0] + [0.95] * 7` gives the
//! lone row an advantage of about −0.95/ε under the leave-one-out normalization).

use super::{Finding, Kind};
use crate::model::{Run, TrajectoryId};

/// Whether every value of `values` is the same (and there is at least one).
fn all_equal(values: &[f32]) -> bool {
    values.first().is_some_and(|first| values.iter().all(|v| v == first))
}

/// The groups with rows whose logged advantage (`logged`, per trajectory) is beyond `bound` on a
/// zero std, one finding per group.
pub fn std_spikes(run: &Run, logged: &[f32], bound: f64) -> Vec<Finding> {
    let tr = &run.trajectories;
    let mut out = Vec::new();
    for g in run.groups.ids() {
        let members = run.groups.members(g);
        if members.len() < 2 {
            continue;
        }
        let rewarded: Vec<TrajectoryId> = members.iter().copied().filter(|t| !tr.reward[t.index()].is_nan()).collect();
        let rewards: Vec<f32> = rewarded.iter().map(|t| tr.reward[t.index()]).collect();
        let mut rows: Vec<(TrajectoryId, f32, &'static str)> = Vec::new();
        for (k, &t) in rewarded.iter().enumerate() {
            let Some(&a) = logged.get(t.index()).filter(|a| a.is_finite() && f64::from(a.abs()) > bound) else {
                continue;
            };
            let others: Vec<f32> = rewards.iter().enumerate().filter(|(j, _)| *j != k).map(|(_, r)| *r).collect();
            let why = if all_equal(&rewards) {
                "the group's rewards are all equal: its std is 0"
            } else if all_equal(&others) {
                "its others' rewards are all equal: the leave-one-out std is 0"
            } else {
                continue;
            };
            rows.push((t, a, why));
        }
        if rows.is_empty() {
            continue;
        }
        let shown = rows.iter().map(|(t, a, why)| {
            format!("{} logged {a} (|A| > {bound}) with reward {}; {why}", run.trajectory_key(*t), tr.reward[t.index()])
        });
        let evidence = super::first_five(shown, "; ");
        out.push(Finding::new(run, Kind::StdSpike, g, rows.iter().map(|r| r.0).collect(), evidence));
    }
    out
}
