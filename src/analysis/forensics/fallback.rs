//! Reward fallbacks: rows whose reward no longer follows the reward components that the other
//! rows of their task follow (marin #7784: reward shaping silently fell back to the sparse reward
//! for part of a run). The relation is fitted over the run, `reward = b + Σ w·component`, by least
//! squares trimmed to the rows it fits exactly; it holds when it fits half the rows or more to
//! rounding (ten at least, and three for each of its terms), with rewards that differ among them,
//! through at least one component. Rows it does not fit are flagged where other rows of the same
//! task fit it.

use std::collections::{BTreeMap, BTreeSet};

use super::{Finding, Kind};
use crate::model::{GroupId, Run, Sym, TrajectoryId};

/// Components that are statistics or flags, not reward functions.
const NOT_REWARDS: [&str; 8] = [
    "advantage",
    "advantages",
    "logged_advantage",
    "greedy_baseline",
    "filtered",
    "is_filtered",
    "mask_sample",
    "masked",
];

/// A row fits the relation when its reward is within this (plus this share of it) of the fit.
const FIT_TOLERANCE: f64 = 1e-4;

/// The share of rows the relation must fit for it to hold.
const HOLDS: f64 = 0.5;

/// The fewest rows it must fit.
const MIN_ROWS: usize = 10;

/// A linear relation `reward = weights · [1, components…]`.
struct Relation {
    names: Vec<String>,
    weights: Vec<f64>,
}

impl Relation {
    fn predict(&self, x: &[f64]) -> f64 {
        self.weights.iter().zip(std::iter::once(&1.0).chain(x)).map(|(w, v)| w * v).sum()
    }

    fn describe(&self) -> String {
        let mut terms: Vec<String> = Vec::new();
        if self.weights[0].abs() >= 5e-5 {
            terms.push(format!("{:.4}", self.weights[0]));
        }
        for (w, name) in self.weights[1..].iter().zip(&self.names) {
            if w.abs() >= 5e-5 {
                terms.push(format!("{}·{name}", trim(*w)));
            }
        }
        if terms.is_empty() { "0".to_owned() } else { terms.join(" + ") }
    }
}

fn trim(w: f64) -> String {
    let text = format!("{w:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Least squares of `y` on `[1, x]` over `rows` (normal equations, Gaussian elimination with
/// partial pivoting, a small ridge so that a constant component does not make them singular).
fn fit(xs: &[Vec<f64>], ys: &[f64], rows: &[usize]) -> Vec<f64> {
    let k = xs.first().map_or(0, Vec::len) + 1;
    let mut a = vec![vec![0.0f64; k + 1]; k];
    for &i in rows {
        let row: Vec<f64> = std::iter::once(1.0).chain(xs[i].iter().copied()).collect();
        for p in 0..k {
            for q in 0..k {
                a[p][q] += row[p] * row[q];
            }
            a[p][k] += row[p] * ys[i];
        }
    }
    for (p, row) in a.iter_mut().enumerate() {
        row[p] += 1e-12;
    }
    for col in 0..k {
        let pivot = (col..k).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap_or(col);
        a.swap(col, pivot);
        let d = a[col][col];
        if d.abs() < 1e-15 {
            continue;
        }
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / d;
                for (x, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    (0..k).map(|p| if a[p][p].abs() < 1e-15 { 0.0 } else { a[p][k] / a[p][p] }).collect()
}

fn fits(relation: &Relation, x: &[f64], y: f64) -> bool {
    (relation.predict(x) - y).abs() <= FIT_TOLERANCE + FIT_TOLERANCE * y.abs()
}

/// The relation most rows follow, refitted on the rows it fits until they no longer change.
fn relation(names: &[String], xs: &[Vec<f64>], ys: &[f64]) -> Option<Relation> {
    let all: Vec<usize> = (0..ys.len()).collect();
    let mut rows = all.clone();
    // Start from the plain sum when it fits more rows than the least squares over all of them.
    let sum =
        Relation { names: names.to_vec(), weights: std::iter::once(0.0).chain(names.iter().map(|_| 1.0)).collect() };
    let lsq = Relation { names: names.to_vec(), weights: fit(xs, ys, &all) };
    let count = |r: &Relation| all.iter().filter(|&&i| fits(r, &xs[i], ys[i])).count();
    let mut best = if count(&sum) > count(&lsq) { sum } else { lsq };
    for _ in 0..8 {
        // Keep the rows nearest the fit: those it fits, or else the nearer half.
        let mut residuals: Vec<(f64, usize)> = all.iter().map(|&i| ((best.predict(&xs[i]) - ys[i]).abs(), i)).collect();
        residuals.sort_by(|a, b| a.0.total_cmp(&b.0));
        let fitted: Vec<usize> = all.iter().copied().filter(|&i| fits(&best, &xs[i], ys[i])).collect();
        let next = if fitted.len() * 2 >= all.len() {
            fitted
        } else {
            residuals.iter().take(all.len().div_ceil(2)).map(|&(_, i)| i).collect()
        };
        if next == rows {
            break;
        }
        rows = next;
        best = Relation { names: names.to_vec(), weights: fit(xs, ys, &rows) };
    }
    let fitted: Vec<usize> = all.iter().copied().filter(|&i| fits(&best, &xs[i], ys[i])).collect();
    // A relation of k terms fits any k rows: it must fit several times as many, and more than ten.
    let enough = fitted.len() >= (3 * (names.len() + 1)).max(MIN_ROWS);
    // A relation that gives every row it fits one reward, or reads no component, explains nothing.
    let varied = fitted.iter().any(|&i| (ys[i] - ys[fitted[0]]).abs() > FIT_TOLERANCE);
    let reads = best.weights[1..].iter().any(|w| w.abs() > 1e-6);
    (fitted.len() as f64 >= HOLDS * ys.len() as f64 && enough && varied && reads).then_some(best)
}

/// The rows whose reward leaves the relation the run's other rows follow, one finding per group;
/// why none could be looked for goes to `notes` when the run logs components.
pub fn reward_fallbacks(run: &Run, notes: &mut Vec<String>) -> Vec<Finding> {
    let tr = &run.trajectories;
    let components: Vec<(&String, &Vec<f32>)> =
        tr.components.iter().filter(|(name, _)| !NOT_REWARDS.contains(&name.as_str())).collect();
    if components.is_empty() {
        return Vec::new();
    }
    let (mut xs, mut ys, mut ids) = (Vec::new(), Vec::new(), Vec::new());
    for t in tr.ids() {
        let y = tr.reward[t.index()];
        let x: Vec<f64> =
            components.iter().map(|(_, v)| f64::from(v.get(t.index()).copied().unwrap_or(f32::NAN))).collect();
        if y.is_nan() || x.iter().any(|v| v.is_nan()) {
            continue;
        }
        xs.push(x);
        ys.push(f64::from(y));
        ids.push(t);
    }
    let names: Vec<String> = components.iter().map(|(n, _)| (*n).clone()).collect();
    let Some(relation) = relation(&names, &xs, &ys) else {
        if !ys.is_empty() {
            notes.push(format!(
                "reward_fallback: no one relation of the reward to the components ({}) holds for most rows, so none is checked",
                names.join(", ")
            ));
        }
        return Vec::new();
    };
    // Tasks with a row that follows the relation.
    let task = |t: TrajectoryId| -> (Sym, Option<GroupId>) {
        let g = tr.group[t.index()];
        let task = run.groups.task[g.index()];
        if task.is_some() { (task, None) } else { (Sym::NONE, Some(g)) }
    };
    let mut following: BTreeSet<(Sym, Option<GroupId>)> = BTreeSet::new();
    let mut off: BTreeMap<GroupId, Vec<(TrajectoryId, usize, f64)>> = BTreeMap::new();
    for (i, &t) in ids.iter().enumerate() {
        if fits(&relation, &xs[i], ys[i]) {
            following.insert(task(t));
        } else {
            off.entry(tr.group[t.index()]).or_default().push((t, i, relation.predict(&xs[i])));
        }
    }
    let described = relation.describe();
    let mut out = Vec::new();
    for (g, rows) in off {
        let rows: Vec<_> = rows.into_iter().filter(|(t, _, _)| following.contains(&task(*t))).collect();
        if rows.is_empty() || run.groups.members(g).len() < 2 {
            continue;
        }
        let shown = rows.iter().map(|&(t, i, p)| {
            let alone = sole_component(&names, &xs[i], ys[i]);
            format!("{} reward {} where the components give {p:.4}{alone}", run.trajectory_key(t), ys[i])
        });
        let evidence =
            format!("the other rows of the task follow reward = {described}; {}", super::first_five(shown, ", "));
        out.push(Finding::new(run, Kind::RewardFallback, g, rows.iter().map(|r| r.0).collect(), evidence));
    }
    out
}

/// ` (the `acc` component alone)` when the reward equals one component: the sparse reward.
fn sole_component(names: &[String], x: &[f64], y: f64) -> String {
    names
        .iter()
        .zip(x)
        .find(|(_, v)| (**v - y).abs() <= FIT_TOLERANCE)
        .map(|(name, _)| format!(" (the `{name}` component alone)"))
        .unwrap_or_default()
}
