//! Per training step: mean reward, success rate, share of zero-variance groups, and the mean and
//! std of |credit| under two schemes, for the run overview.

use std::collections::BTreeMap;

use crate::model::{GroupId, Run};

/// Statistics of one training step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrainStepStats {
    /// The training step.
    pub train_step: i64,
    /// Groups at this step.
    pub num_groups: usize,
    /// Mean outcome reward.
    pub mean_reward: f64,
    /// Share of successes.
    pub success_rate: f64,
    /// Share of groups (of two or more) whose rewards are all equal.
    pub zero_variance_share: f64,
    /// Mean and std of |credit| under A and under B.
    pub abs_credit: [(f64, f64); 2],
}

/// One entry per training step, in order; groups without a training step count as step 0.
pub fn per_train_step(run: &Run, credit: [Option<&[f32]>; 2]) -> Vec<TrainStepStats> {
    let tr = &run.trajectories;
    let mut by_step: BTreeMap<i64, Vec<GroupId>> = BTreeMap::new();
    for g in run.groups.ids() {
        by_step.entry(run.groups.train_step[g.index()].unwrap_or(0)).or_default().push(g);
    }
    by_step
        .into_iter()
        .map(|(train_step, groups)| {
            let (mut sum, mut n, mut wins, mut flagged, mut multi) = (0.0f64, 0usize, 0usize, 0usize, 0usize);
            let mut abs = [(0.0f64, 0.0f64, 0usize); 2];
            for &g in &groups {
                let members = run.groups.members(g);
                if members.len() >= 2 {
                    multi += 1;
                    flagged += usize::from(super::is_zero_variance(run, g));
                }
                for &t in members {
                    let r = tr.reward[t.index()];
                    if !r.is_nan() {
                        sum += f64::from(r);
                        n += 1;
                        wins += usize::from(super::compare::is_success(run, t));
                    }
                    for (slot, values) in credit.iter().enumerate() {
                        let Some(values) = values else { continue };
                        for p in tr.path_range(t) {
                            if let Some(v) = values.get(p).filter(|v| v.is_finite()) {
                                let a = f64::from(v.abs());
                                abs[slot].0 += a;
                                abs[slot].1 += a * a;
                                abs[slot].2 += 1;
                            }
                        }
                    }
                }
            }
            let moments = |(s, sq, k): (f64, f64, usize)| {
                if k == 0 {
                    return (f64::NAN, f64::NAN);
                }
                let mean = s / k as f64;
                (mean, (sq / k as f64 - mean * mean).max(0.0).sqrt())
            };
            TrainStepStats {
                train_step,
                num_groups: groups.len(),
                mean_reward: if n == 0 { f64::NAN } else { sum / n as f64 },
                success_rate: if n == 0 { f64::NAN } else { wins as f64 / n as f64 },
                zero_variance_share: if multi == 0 { 0.0 } else { flagged as f64 / multi as f64 },
                abs_credit: [moments(abs[0]), moments(abs[1])],
            }
        })
        .collect()
}

/// Tasks that occur at more than one training step, each with its groups in step order.
pub fn recurring_tasks(run: &Run) -> BTreeMap<String, Vec<GroupId>> {
    let mut by_task: BTreeMap<String, Vec<GroupId>> = BTreeMap::new();
    for g in run.groups.ids() {
        let task = run.groups.task[g.index()];
        if task.is_some() {
            by_task.entry(run.label(task).to_owned()).or_default().push(g);
        }
    }
    by_task.retain(|_, groups| groups.len() > 1);
    for groups in by_task.values_mut() {
        groups.sort_by_key(|g| run.groups.train_step[g.index()]);
    }
    by_task
}
