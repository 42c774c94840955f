//! Labels joined to credit (docs/LABELS.md, "Labels out"): for each label, and each word a label
//! takes, the steps that carry it and what schemes A and B give them, beside the steps that carry
//! no label at all; and each label's credit mass per training step. The Compare view, `vantage
//! compare --by-label`, the MCP tool and Python read these numbers.

use crate::model::labels::{RunLabels, Value};
use crate::model::{Run, TrajectoryId};

/// What one scheme gives a set of steps.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Given {
    /// The steps with a credit under the scheme.
    pub steps: usize,
    /// Their mean credit (`NaN` when none).
    pub mean: f64,
    /// Their mean |credit| (`NaN` when none).
    pub mean_abs: f64,
    /// Their summed credit.
    pub sum: f64,
    /// The share of them given a positive credit (`NaN` when none).
    pub positive: f64,
}

impl Given {
    fn of(values: impl Iterator<Item = f32>) -> Self {
        let (mut n, mut sum, mut abs, mut positive) = (0usize, 0.0f64, 0.0f64, 0usize);
        for v in values.filter(|v| v.is_finite()) {
            n += 1;
            sum += f64::from(v);
            abs += f64::from(v).abs();
            positive += usize::from(v > 0.0);
        }
        let share = |x: f64| if n == 0 { f64::NAN } else { x / n as f64 };
        Self { steps: n, mean: share(sum), mean_abs: share(abs), sum, positive: share(positive as f64) }
    }
}

/// One row of the split: a label (or one of its words), or the steps with no label.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// The label's name; `None` for the steps that carry no label.
    pub label: Option<String>,
    /// The word, for a row of one word of a label that takes words.
    pub word: Option<String>,
    /// The path steps in it.
    pub steps: usize,
    /// The rollouts those steps lie on.
    pub trajectories: usize,
    /// What A gives them.
    pub a: Given,
    /// What B gives them.
    pub b: Given,
    /// The share of them (with both credits, neither zero) that A and B give opposite signs.
    pub sign_disagreement: f64,
}

/// The split of steps' credits `a` and `b` (aligned with the run's path steps) by `labels`: a row
/// per label, a row per word of a label that takes words, and the row of steps with no label.
pub fn split(run: &Run, labels: &RunLabels, a: &[f32], b: &[f32]) -> Vec<Split> {
    let n = run.num_path_steps();
    let trajectory_of = super::tables::step_trajectories(run);
    let row = |label: Option<String>, word: Option<String>, mask: &dyn Fn(usize) -> bool| {
        let positions: Vec<usize> = (0..n).filter(|&p| mask(p)).collect();
        let value = |credit: &[f32], p: usize| credit.get(p).copied().unwrap_or(f32::NAN);
        let (mut paired, mut opposite) = (0usize, 0usize);
        for &p in &positions {
            let (x, y) = (value(a, p), value(b, p));
            if x.is_finite() && y.is_finite() && x != 0.0 && y != 0.0 {
                paired += 1;
                opposite += usize::from((x > 0.0) != (y > 0.0));
            }
        }
        let mut on: Vec<TrajectoryId> = positions.iter().map(|&p| trajectory_of[p]).collect();
        on.dedup();
        Split {
            label,
            word,
            steps: positions.len(),
            trajectories: on.len(),
            a: Given::of(positions.iter().map(|&p| value(a, p))),
            b: Given::of(positions.iter().map(|&p| value(b, p))),
            sign_disagreement: if paired == 0 { f64::NAN } else { opposite as f64 / paired as f64 },
        }
    };
    let mut rows = Vec::new();
    let mut any = vec![false; n];
    for named in &labels.names {
        let mask = named.step_mask(run);
        for (slot, &m) in any.iter_mut().zip(&mask) {
            *slot |= m;
        }
        rows.push(row(Some(named.name.clone()), None, &|p| mask[p]));
        let mut words: Vec<String> = named
            .trajectories
            .values()
            .chain(named.steps.values())
            .filter_map(|v| if let Value::Word(w) = v { Some(w.clone()) } else { None })
            .collect();
        words.sort();
        words.dedup();
        for word in words {
            let value_at =
                |p: usize| named.at(trajectory_of[p], p).is_some_and(|v| matches!(v, Value::Word(w) if *w == word));
            rows.push(row(Some(named.name.clone()), Some(word.clone()), &value_at));
        }
    }
    rows.push(row(None, None, &|p| !any[p]));
    rows
}

/// A label's credit mass per training step: the summed |credit| under a scheme of the steps that
/// carry it, and its share of the step's whole |credit|.
#[derive(Clone, Debug, PartialEq)]
pub struct Mass {
    /// The label.
    pub label: String,
    /// The training step (`None` for groups without one).
    pub train_step: Option<i64>,
    /// The labelled steps in that training step.
    pub steps: usize,
    /// Their summed |credit|.
    pub mass: f64,
    /// Its share of the training step's summed |credit| (`NaN` when that is 0).
    pub share: f64,
}

/// Each label's |credit| mass per training step under `credit` (aligned with the path steps).
pub fn mass_by_train_step(run: &Run, labels: &RunLabels, credit: &[f32]) -> Vec<Mass> {
    let trajectory_of = super::tables::step_trajectories(run);
    let train_step = |p: usize| {
        let group = run.trajectories.group[trajectory_of[p].index()];
        run.groups.train_step.get(group.index()).copied().flatten()
    };
    let steps: Vec<Option<i64>> = (0..run.num_path_steps()).map(train_step).collect();
    let mut order = steps.clone();
    order.sort_unstable();
    order.dedup();
    let slot: Vec<usize> = steps.iter().map(|s| order.binary_search(s).unwrap_or(0)).collect();
    let magnitude = |p: usize| credit.get(p).filter(|c| c.is_finite()).map_or(0.0, |c| f64::from(c.abs()));
    let mut totals = vec![0.0f64; order.len()];
    for (p, &s) in slot.iter().enumerate() {
        totals[s] += magnitude(p);
    }
    let mut out = Vec::new();
    for named in &labels.names {
        let (mut mass, mut count) = (vec![0.0f64; order.len()], vec![0usize; order.len()]);
        for (p, &on) in named.step_mask(run).iter().enumerate() {
            if on {
                mass[slot[p]] += magnitude(p);
                count[slot[p]] += 1;
            }
        }
        for (i, &step) in order.iter().enumerate().filter(|&(i, _)| count[i] > 0) {
            out.push(Mass {
                label: named.name.clone(),
                train_step: step,
                steps: count[i],
                mass: mass[i],
                share: if totals[i] > 0.0 { mass[i] / totals[i] } else { f64::NAN },
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels::{Label, Source, SourceKind, Target};

    fn label(name: &str, value: Value, trajectory: &str, step: Option<u32>) -> Label {
        Label {
            name: name.to_owned(),
            value,
            target: Target { trajectory: trajectory.to_owned(), step },
            source: Source { kind: SourceKind::Person, name: String::new() },
            note: None,
            time: None,
        }
    }

    /// Two groups of two rollouts of two steps each (t0..t3), training steps 0 and 1.
    fn run() -> Run {
        let mut text = String::from("{\"vantage\": 1}\n");
        for (g, step) in [(0, 0), (1, 1)] {
            text.push_str(&format!("{{\"type\": \"group\", \"id\": \"g{g}\", \"train_step\": {step}}}\n"));
            for r in 0..2 {
                let t = g * 2 + r;
                text.push_str(&format!(
                    "{{\"type\": \"trajectory\", \"id\": \"t{t}\", \"group\": \"g{g}\", \"outcome\": {{\"reward\": {r}}}, \"steps\": [{{\"thought\": \"a\"}}, {{\"thought\": \"b\"}}]}}\n"
                ));
            }
        }
        crate::load::load_bytes("t.jsonl", text.as_bytes(), &mut crate::load::LoadReport::new("t.jsonl")).unwrap()
    }

    #[test]
    fn the_split_gives_each_label_and_word_its_steps_and_both_schemes_means() {
        let run = run();
        let labels = RunLabels::resolve(
            &run,
            vec![
                label("hack", Value::Flag, "t1", None),
                label("hack", Value::Flag, "t2", Some(0)),
                label("severity", Value::Word("high".to_owned()), "t1", Some(1)),
                label("severity", Value::Word("low".to_owned()), "t3", None),
            ],
        );
        // Path steps: t0 0..2, t1 2..4, t2 4..6, t3 6..8.
        let a = [1.0, 1.0, 0.5, -0.5, 2.0, 0.0, -1.0, f32::NAN];
        let b = [1.0, -1.0, -0.5, -0.5, 2.0, 0.0, 1.0, 1.0];
        let rows = split(&run, &labels, &a, &b);
        let names: Vec<(Option<&str>, Option<&str>, usize, usize)> =
            rows.iter().map(|r| (r.label.as_deref(), r.word.as_deref(), r.steps, r.trajectories)).collect();
        assert_eq!(
            names,
            [
                (Some("hack"), None, 3, 2),
                (Some("severity"), None, 3, 2),
                (Some("severity"), Some("high"), 1, 1),
                (Some("severity"), Some("low"), 2, 1),
                (None, None, 3, 2),
            ]
        );
        // hack: steps 2, 3, 4: A 0.5, -0.5, 2.0; B -0.5, -0.5, 2.0.
        let hack = &rows[0];
        assert!((hack.a.mean - 2.0 / 3.0).abs() < 1e-12 && (hack.b.mean - 1.0 / 3.0).abs() < 1e-12);
        assert!((hack.a.mean_abs - 1.0).abs() < 1e-12 && (hack.sign_disagreement - 1.0 / 3.0).abs() < 1e-12);
        // severity=low on t3 (steps 6, 7): A has one value (7 is NaN).
        assert_eq!(rows[3].a.steps, 1);
        assert_eq!(rows[3].a.mean, -1.0);
        // No label: steps 0, 1, 5.
        assert_eq!(rows[4].a.sum, 2.0);
        let mass = mass_by_train_step(&run, &labels, &a);
        let hack_mass: Vec<(Option<i64>, usize, f64)> =
            mass.iter().filter(|m| m.label == "hack").map(|m| (m.train_step, m.steps, m.mass)).collect();
        assert_eq!(hack_mass, [(Some(0), 2, 1.0), (Some(1), 1, 2.0)]);
        // Training step 0's |A| is 3.0, of which hack holds 1.0.
        assert!((mass[0].share - 1.0 / 3.0).abs() < 1e-12);
    }
}
