//! The credit flagged rows moved: a group's advantages recomputed with and without them under the
//! run's matching estimator and preset (the audit's, else GRPO), by the scheme's own kernel on the
//! rows of the group (of the training step, for a scheme that normalizes over the batch), and put
//! beside the trainer's logged advantages to tell which of the two it computed.

use crate::credit::data::batch::Batch;
use crate::credit::{self, Level, Params, Scheme, Support, TokenKernel};
use crate::model::{GroupId, Run, TrajectoryId};

/// The logged advantage of each trajectory (the mean of its steps' finite values), when the run
/// logs advantages.
pub fn logged_per_row(run: &Run) -> Option<Vec<f32>> {
    let logged = credit::scheme("logged").ok()?;
    if logged.supports(run) != Support::Yes {
        return None;
    }
    let credit = credit::compute(logged, run, None, &Vec::new()).ok()?;
    Some(per_row(run, &credit.step))
}

/// The mean of each trajectory's finite step values (`NaN` where it has none).
fn per_row(run: &Run, step: &[f32]) -> Vec<f32> {
    let tr = &run.trajectories;
    tr.ids().map(|t| finite_mean(step.get(tr.path_range(t)).unwrap_or_default()) as f32).collect()
}

/// The mean of the finite ones of `values` (a row's steps), `NaN` when there is none.
fn finite_mean(values: &[f32]) -> f64 {
    let (sum, n) =
        values.iter().filter(|v| v.is_finite()).fold((0.0f64, 0usize), |(s, n), &v| (s + f64::from(v), n + 1));
    if n == 0 { f64::NAN } else { sum / n as f64 }
}

/// A group's rows with and without the flagged ones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counterfactual {
    /// The largest change of an other rollout's advantage (see `Finding::credit_moved`).
    pub credit_moved: Option<f64>,
    /// Whether the logged advantages are those with the rows (see `Finding::trainer_included`).
    pub trainer_included: Option<bool>,
    /// Each row of the group with and without the flagged rows.
    pub rows: Vec<super::CreditRow>,
}

/// The estimator and its kernel input, ready to recompute any group with and without rows.
pub struct Recompute<'r> {
    scheme: &'static dyn Scheme,
    preset: Option<&'static str>,
    params: Params,
    why: &'static str,
    batch: Option<Batch<'r, f32>>,
    batch_wide: bool,
}

impl<'r> Recompute<'r> {
    /// The run's matching estimator (the audit's when the run logs advantages, else GRPO under the
    /// preset its format names) and its kernel input at one position per step.
    pub fn for_run(run: &'r Run, logged: bool) -> Self {
        let (scheme, preset, why) = choose(run, logged);
        let params = Params::resolve(scheme, preset, &[]).unwrap_or_else(|_| Params::defaults(scheme));
        let batch = scheme.token_kernel().and_then(|kernel| {
            credit::batch_from_run(run, &kernel.preparation(&params), Level::Step, kernel.uses_values()).ok()
        });
        let batch_wide = scheme.batch_wide(&params).is_some();
        Self { scheme, preset, params, why, batch, batch_wide }
    }

    /// `grpo --preset verl`, as the command line names it.
    pub fn name(&self) -> String {
        let id = self.scheme.info().id;
        self.preset.map_or_else(|| id.to_owned(), |p| format!("{id} --preset {p}"))
    }

    /// Why this estimator.
    pub fn why(&self) -> &'static str {
        self.why
    }

    /// Group `g`'s advantages with and without `flagged`, and what the logged ones say.
    pub fn counterfactual(
        &self,
        run: &Run,
        g: GroupId,
        flagged: &[TrajectoryId],
        logged: Option<&[f32]>,
    ) -> Counterfactual {
        let members = run.groups.members(g);
        let mut out = Counterfactual::default();
        let (Some(batch), Some(kernel)) = (&self.batch, self.scheme.token_kernel()) else { return out };
        // The rows the estimator sees: the group's, or its training step's under a batch-wide one.
        let rows: Vec<usize> = if self.batch_wide {
            let step = run.groups.train_step[g.index()];
            let tr = &run.trajectories;
            tr.ids().filter(|t| run.groups.train_step[tr.group[t.index()].index()] == step).map(|t| t.index()).collect()
        } else {
            members.iter().map(|t| t.index()).collect()
        };
        let kept: Vec<usize> = rows.iter().copied().filter(|&i| !flagged.iter().any(|t| t.index() == i)).collect();
        let Some(with) = self.advantages(batch, kernel, &rows) else { return out };
        let without = if kept.is_empty() { Some(Vec::new()) } else { self.advantages(batch, kernel, &kept) };
        let Some(without) = without else { return out };
        let value_of = |list: &[(usize, f64)], i: usize| list.iter().find(|(j, _)| *j == i).map(|(_, v)| *v);
        let (mut moved, mut fits_with, mut fits_without, mut compared) = (None::<f64>, true, true, 0usize);
        for &t in members {
            let i = t.index();
            let a = value_of(&with, i).unwrap_or(f64::NAN);
            let b = value_of(&without, i);
            let l = logged.and_then(|l| l.get(i)).map(|&v| f64::from(v)).filter(|v| v.is_finite());
            out.rows.push(super::CreditRow { trajectory: t, with: a, without: b, logged: l });
            let Some(b) = b else { continue };
            if a.is_finite() && b.is_finite() {
                let gap = (a - b).abs();
                moved = Some(moved.map_or(gap, |m: f64| m.max(gap)));
            }
            if let Some(l) = l {
                compared += 1;
                let tolerance = crate::analysis::audit::TOLERANCE * (1.0 + l.abs());
                fits_with &= (l - a).abs() <= tolerance;
                fits_without &= (l - b).abs() <= tolerance;
            }
        }
        out.credit_moved = moved;
        if compared > 0 && fits_with != fits_without {
            out.trainer_included = Some(fits_with);
        }
        out
    }

    /// The advantage of each of `rows` (indices into the run's trajectories) when the estimator sees
    /// only them: the mean of the row's finite step values ([`finite_mean`]).
    fn advantages(
        &self,
        batch: &Batch<'_, f32>,
        kernel: &dyn TokenKernel,
        rows: &[usize],
    ) -> Option<Vec<(usize, f64)>> {
        let sub = select(batch, rows);
        let output = kernel.run32(&sub, &self.params).ok()?;
        Some(
            rows.iter()
                .enumerate()
                .map(|(k, &i)| (i, finite_mean(output.advantages.get(sub.row(k)).unwrap_or_default())))
                .collect(),
        )
    }
}

/// The estimator the credit moved is taken under, with its preset and why it is the one.
fn choose(run: &Run, logged: bool) -> (&'static dyn Scheme, Option<&'static str>, &'static str) {
    let with_kernel = |id: &str| credit::scheme(id).ok().filter(|s| s.token_kernel().is_some());
    if logged {
        let found = match crate::analysis::audit::audit(run) {
            Some(crate::analysis::audit::Audit::Reproduced(all)) => {
                all.first().map(|v| (v.scheme, v.preset, "the audit's: it reproduces the logged advantages"))
            }
            Some(crate::analysis::audit::Audit::Closest(v)) => {
                Some((v.scheme, v.preset, "the audit's closest to the logged advantages (none reproduces them)"))
            }
            None => None,
        };
        if let Some((id, preset, why)) = found
            && let Some(scheme) = with_kernel(id)
        {
            return (scheme, preset, why);
        }
    }
    let grpo = credit::scheme("grpo").unwrap_or_else(|_| credit::SCHEMES[0]);
    // The preset of the run's own trainer, as the audit puts it first.
    let format = run.meta.format.to_lowercase();
    let preset = grpo.presets().iter().map(|p| p.name).find(|p| format.contains(p.split('_').next().unwrap_or(p)));
    (grpo, preset, "GRPO under the run's trainer's preset (the run logs no advantages to audit)")
}

/// The kernel input of `rows` of `batch` only, their groups numbered anew.
fn select(batch: &Batch<'_, f32>, rows: &[usize]) -> Batch<'static, f32> {
    let positions = |column: &[f32]| -> Vec<f32> {
        rows.iter().flat_map(|&i| column.get(batch.row(i)).unwrap_or_default().iter().copied()).collect()
    };
    let per_row =
        |column: &[f32]| -> Vec<f32> { rows.iter().map(|&i| column.get(i).copied().unwrap_or(f32::NAN)).collect() };
    let mut offsets = Vec::with_capacity(rows.len() + 1);
    offsets.push(0);
    for &i in rows {
        offsets.push(offsets.last().copied().unwrap_or(0) + batch.row(i).len());
    }
    let (group, num_groups) = Batch::<f32>::dense_groups(&rows.iter().map(|&i| batch.group[i]).collect::<Vec<_>>());
    let mut group_step = vec![i64::MIN; num_groups];
    for (k, &i) in rows.iter().enumerate() {
        if let (Some(slot), Some(&old)) = (group_step.get_mut(group[k] as usize), batch.group.get(i)) {
            *slot = batch.group_step.get(old as usize).copied().unwrap_or(i64::MIN);
        }
    }
    Batch {
        offsets,
        reward: batch.reward.as_deref().map(positions),
        row_score: batch.row_score.as_deref().map(per_row),
        mask: batch.mask.as_deref().map(positions),
        group,
        num_groups,
        values: batch.values.as_deref().map(|v| std::borrow::Cow::Owned(positions(v))),
        logprob: batch.logprob.as_deref().map(positions),
        ref_logprob: batch.ref_logprob.as_deref().map(positions),
        sum_pi_squared: batch.sum_pi_squared.as_deref().map(positions),
        reward_baseline: batch.reward_baseline.as_deref().map(per_row),
        rollout_is_weights: batch.rollout_is_weights.as_deref().map(positions),
        skip_returns: true,
        max_length: batch.max_length,
        components: batch.components.iter().map(|c| per_row(c)).collect(),
        component_weights: batch.component_weights.clone(),
        tree: if batch.tree.is_empty() {
            Vec::new()
        } else {
            rows.iter().map(|&i| batch.tree.get(i).copied().unwrap_or(u32::MAX)).collect()
        },
        group_step,
    }
}
