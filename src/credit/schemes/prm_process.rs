//! PRM step credit (`prm_process`): from named step scores, either the DeepSeekMath
//! process-supervision form (scores normalized over the group, each step credited with the sum of
//! the normalized scores from it onwards) or a trajectory score by aggregation (min, prod, last,
//! mean, sum) put through GRPO.

use crate::credit::data::moments::group_stats_of_with;
use crate::credit::engine::inputs::Score;
use crate::credit::engine::inputs::{score_column, supports_scores};
use crate::credit::kernels::group::normalize_group_with;
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::{StepAt, StepTerms, scheme};
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::Run;

scheme!(
    /// PRM process credit.
    PrmProcess,
    knobs: Knobs,
    info: SchemeInfo {
        id: "prm_process",
        family: Family::Process,
        display_name: "PRM process credit",
        citation: "Shao et al. 2024, DeepSeekMath §4.1.3 process supervision; aggregations from huggingface/search-and-learn aggregate_scores (min, prod, last) and common practice (mean, sum)",
        needs: "named step scores (e.g. `prm`)",
        source: SourceQuality::FromCode(
            "huggingface/search-and-learn@6f81cac8b1ca4c4be9fabefc27a856c928f3ae7f (aggregations); DeepSeekMath form from the paper",
        ),
        checked: "the min, prod and last aggregations against search-and-learn's own aggregate_scores (tests/golden/prm_aggregate/cases.json, made by its generate.py from search-and-learn 6f81cac); the DeepSeekMath form (no public code) and the GRPO over aggregates against the worked example of reference/credit-schemes-process.md",
    },
);

choice! {
    enum Form { Deepseekmath = "deepseekmath", Agg = "agg" }
    enum Agg { Min = "min", Prod = "prod", Last = "last", Mean = "mean", Sum = "sum" }
    enum Missing { Skip = "skip", Zero = "zero", Outcome = "outcome" }
    enum Refine { None = "none", Clip = "clip", Delta = "delta" }
    enum Std { Unbiased = "unbiased", Population = "population" }
}

params! {
    pub struct Knobs {
        score_param: Score = GROUP,
        form: Form = decl("deepseekmath", "deepseekmath: group-normalized step scores summed from each step on; agg: GRPO on the aggregated trajectory score"),
        agg: Agg = decl("min", "aggregation of the step scores into a trajectory score (form=agg)"),
        missing: Missing = decl("skip", "a step without the score: leave it out, count it as 0, or (when a trajectory has none) fall back to its outcome. A trajectory with no scored step at all: with skip, no credit under deepseekmath, and its outcome as its score under agg (it still enters its group)"),
        refine: Refine = decl("none", "refine the step scores against reward hacking (Gao et al. 2024, arXiv 2410.15115, from the paper): clip = min(s − η, 0); delta = s_k − s_{k+1} (the last step keeps s_K, so the sum is s_1)"),
        clip_eta: f64 = range(-10.0, 10.0, "0.5", "η of the clip refinement"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "added to the std"),
        std: Std = decl("unbiased", "the group std: unbiased (n − 1, torch.std) or population (n, numpy's std)"),
    }
}

/// The most step scores the inspector lists for one step.
const STEP_TERMS: usize = 24;

/// One trajectory's step scores (its slice of the path's score column), made what `compute` uses:
/// the missing-step policy (`Outcome` puts the trajectory's `reward` on its last step when none is
/// scored), then Clip (`min(s − η, 0)`) or Delta (`s_k − s_{k+1}`, the last present score kept);
/// missing scores stay missing (NaN) under `Skip`.
fn prepare(score: &mut [f32], reward: f32, missing: Missing, how: Refine, eta: f32) {
    match missing {
        Missing::Zero => score.iter_mut().filter(|s| s.is_nan()).for_each(|s| *s = 0.0),
        Missing::Outcome => {
            if score.iter().all(|s| s.is_nan())
                && let Some(last) = score.last_mut()
            {
                *last = reward;
            }
        }
        Missing::Skip => {}
    }
    match how {
        Refine::Clip => {
            for s in score.iter_mut().filter(|s| !s.is_nan()) {
                *s = (*s - eta).min(0.0);
            }
        }
        Refine::Delta => {
            let present: Vec<usize> = (0..score.len()).filter(|&k| !score[k].is_nan()).collect();
            for pair in present.windows(2) {
                score[pair[0]] -= score[pair[1]];
            }
        }
        Refine::None => {}
    }
}

/// Aggregates step scores into a trajectory score; `None` for no scores.
#[cfg(test)]
fn aggregate(scores: &[f32], agg: Agg) -> Option<f32> {
    aggregate_present(scores.iter().copied(), agg)
}

/// [`aggregate`] over the scores an iterator yields (the present ones, without collecting them).
fn aggregate_present(scores: impl Iterator<Item = f32>, agg: Agg) -> Option<f32> {
    let (mut count, mut last, mut sum, mut product, mut min) = (0usize, 0.0f32, 0.0f32, 1.0f32, f32::INFINITY);
    for s in scores {
        count += 1;
        last = s;
        sum += s;
        product *= s;
        min = min.min(s);
    }
    (count > 0).then(|| match agg {
        Agg::Prod => product,
        Agg::Last => last,
        Agg::Mean => sum / count as f32,
        Agg::Sum => sum,
        Agg::Min => min,
    })
}

impl Typed for PrmProcess {
    fn supports(&self, run: &Run) -> Support {
        supports_scores(run)
    }
    fn step_terms(&self, run: &Run, knobs: &Knobs, _: &Credit, at: StepAt) -> StepTerms {
        let Ok(column) = score_column(run, knobs.score_param.score, "prm_process") else { return Vec::new() };
        let tr = &run.trajectories;
        let mut score: Vec<f32> = tr.path(at.t).iter().map(|n| column[n.index()]).collect();
        prepare(&mut score, tr.reward[at.t.index()], knobs.missing, knobs.refine, knobs.clip_eta as f32);
        // The deepseekmath form sums this step's score and the later ones; agg aggregates them all.
        let first = if knobs.form == Form::Agg { 0 } else { at.k };
        let shown = score.len() - first;
        let mut terms = vec![("ε".to_owned(), Some(knobs.epsilon))];
        let scores = score[first..].iter().enumerate().take(STEP_TERMS);
        terms.extend(scores.map(|(i, &p)| (format!("p{}", first + i + 1), Some(f64::from(p)))));
        if shown > STEP_TERMS {
            terms.push((format!("and {} later scores", shown - STEP_TERMS), None));
        }
        terms
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let column = score_column(run, knobs.score_param.score, "prm_process")?;
        let tr = &run.trajectories;
        let missing = knobs.missing;
        // Step scores per path position after the missing-step policy (NaN = left out).
        // Borrowed when the run's paths are its nodes in order and nothing below changes a score.
        let refinement = knobs.refine;
        let mut score = crate::credit::engine::inputs::path_column(run, column);
        if missing != Missing::Skip || refinement != Refine::None {
            score =
                std::borrow::Cow::Owned(crate::credit::engine::inputs::owned_path_column(std::mem::take(&mut score)));
            let score = score.to_mut();
            for t in tr.ids() {
                let reward = tr.reward[t.index()];
                prepare(&mut score[tr.path_range(t)], reward, missing, refinement, knobs.clip_eta as f32);
            }
        }
        let eps = knobs.epsilon as f32;
        let unbiased = knobs.std != Std::Population;
        let credit = if knobs.form == Form::Agg {
            aggregated(run, &score, knobs.agg, eps, unbiased)
        } else {
            deepseekmath(run, &score, eps, unbiased)
        };
        crate::credit::engine::inputs::give_path_column(score);
        Ok(credit)
    }
}

fn deepseekmath(run: &Run, score: &[f32], eps: f32, unbiased: bool) -> Credit {
    let tr = &run.trajectories;
    let mut terms = Terms::for_rows(
        "Σ_{j≥k} (p_j − mean)/(std + ε), mean and std over the group's step scores",
        &["mean", "std"],
        tr.len(),
    );
    // Group by group, while the group's scores are in cache: its statistics, then its members'
    // credit, each trajectory back to front (four at a time, see `rows_backward`); runs of
    // consecutive groups on their own threads (`par::by_groups`).
    let (step, _) = crate::credit::engine::par::by_groups(run, &mut terms, |groups, step, terms| {
        for g in groups {
            let members = run.groups.members(crate::model::GroupId::from_index(g));
            // verl's singleton rule: mean 0, std 1.
            let [mean, std] = group_stats_of_with(|| members.iter().map(|t| &score[tr.path_range(*t)]), unbiased);
            let scale = 1.0 / (std + eps);
            crate::credit::data::batch::rows_backward(
                crate::credit::data::batch::INLINED,
                step,
                f32::NAN,
                members.len(),
                |i| tr.path_range(members[i]),
                |_| 0.0f32,
                #[inline(always)]
                |running, _, k| {
                    let s = score[k];
                    let term = (s - mean) * scale;
                    *running += if s.is_nan() { 0.0 } else { term };
                    *running
                },
                |i, _| terms.set(members[i].index(), &[f64::from(mean), f64::from(std)]),
            );
        }
    });
    // A trajectory with no scored step has no process reward to sum: no credit, not 0.
    let mut step = step;
    for t in tr.ids() {
        let range = tr.path_range(t);
        if score[range.clone()].iter().all(|s| s.is_nan()) {
            step[range].fill(f32::NAN);
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}

fn aggregated(run: &Run, score: &[f32], agg: Agg, eps: f32, unbiased: bool) -> Credit {
    let tr = &run.trajectories;
    // A trajectory with no scored step still enters its group, with its outcome as its score
    // (no score at all only when it has no outcome either).
    let trajectory_score: Vec<f32> = tr
        .ids()
        .map(|t| {
            let range = tr.path_range(t);
            aggregate_present(score[range].iter().copied().filter(|s| !s.is_nan()), agg).unwrap_or(tr.reward[t.index()])
        })
        .collect();
    let mut step = crate::credit::data::pool::filled(score.len(), f32::NAN);
    let mut terms =
        Terms::for_rows(format!("GRPO on the {agg} of the step scores"), &["score", "mean", "std"], tr.len());
    for g in run.groups.ids() {
        let members = run.groups.members(g);
        let values: Vec<f32> = members.iter().map(|t| trajectory_score[t.index()]).collect();
        let (advantages, (mean, std)) = normalize_group_with(&values, eps, unbiased);
        for (&t, &a) in members.iter().zip(&advantages) {
            let s = trajectory_score[t.index()];
            step[tr.path_range(t)].fill(a);
            terms.set(t.index(), &[f64::from(s), f64::from(mean), f64::from(std)]);
        }
    }
    Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) }
}

#[cfg(test)]
mod tests {
    use super::{Agg, aggregate};

    #[test]
    fn aggregations_of_the_reference_example() {
        let p = [0.9, 0.6, 0.8];
        assert_eq!(aggregate(&p, Agg::Min), Some(0.6));
        assert!((aggregate(&p, Agg::Prod).unwrap() - 0.432).abs() < 1e-6);
        assert_eq!(aggregate(&p, Agg::Last), Some(0.8));
        assert!((aggregate(&p, Agg::Mean).unwrap() - 0.766_666_7).abs() < 1e-6);
        assert!((aggregate(&p, Agg::Sum).unwrap() - 2.3).abs() < 1e-6);
        assert_eq!(aggregate(&[], Agg::Min), None);
    }
}
