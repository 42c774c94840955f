//! Hybrid process + outcome (`hybrid`): `α · A_outcome + β · normalized step score`, with a choice
//! of normalization, so any step score can be mixed into outcome credit.

use crate::credit::data::moments::group_stats_of;
use crate::credit::data::parts::{StepPart, TermRows};
use crate::credit::engine::inputs::Score;
use crate::credit::engine::inputs::outcome_advantages;
use crate::credit::engine::inputs::{score_column, supports_scores};
use crate::credit::kernels::outcome::OutcomeParams;
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::{StepAt, StepTerms, scheme};
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{GroupId, Run, TrajectoryId};

scheme!(
    /// Hybrid credit.
    Hybrid,
    knobs: Knobs,
    info: SchemeInfo {
        id: "hybrid",
        family: Family::Hybrid,
        display_name: "Hybrid α·outcome + β·process",
        citation: "the generic mixture behind PRM-augmented GRPO (e.g. DeepSeekMath §4.1.3, PURE's PRMVR mode)",
        needs: "named step scores and outcome rewards",
        source: SourceQuality::Approximate("a generic mixture, not one paper's exact rule"),
        checked: "its definition as a weighted mix of two schemes (tests/it/process_credit.rs)",
    },
);

choice! {
    enum ProcessNorm { Group = "group", Batch = "batch", None = "none" }
}

params! {
    pub struct Knobs {
        alpha: f64 = range(0.0, 5.0, "1", "weight of the outcome advantage"),
        beta: f64 = range(0.0, 5.0, "0.5", "weight of the normalized step score"),
        score_param: Score = GROUP,
        process_norm: ProcessNorm = decl("group", "z-score the step scores within the group, over the batch, or not at all"),
        outcome: OutcomeParams = GROUP,
    }
}

impl Typed for Hybrid {
    fn supports(&self, run: &Run) -> Support {
        supports_scores(run).and(|| crate::credit::engine::inputs::supports_outcomes(run))
    }
    fn step_terms(&self, run: &Run, knobs: &Knobs, _: &Credit, at: StepAt) -> StepTerms {
        let Ok(column) = score_column(run, knobs.score_param.score, "hybrid") else { return Vec::new() };
        vec![("s".to_owned(), Some(f64::from(column[at.node.index()])))]
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let column = score_column(run, knobs.score_param.score, "hybrid")?;
        let tr = &run.trajectories;
        let (outcome, _) = outcome_advantages(run, crate::credit::kernels::outcome::OutcomeOptions::of(knobs.outcome));
        let score = crate::credit::engine::inputs::path_column(run, column);
        let eps = knobs.outcome.epsilon as f32;
        let (alpha, beta) = (knobs.alpha as f32, knobs.beta as f32);
        // The step's own score s comes from `step_terms`.
        let mut terms = Terms::for_rows(
            "α·A_outcome + β·(s − score mean)·score scale, scale = 1/(std + ε) (a missing s counts 0)",
            &["A_outcome", "α", "β", "score mean", "score scale"],
            tr.len(),
        );
        // Writes trajectory `t`'s steps: α·A + β·(s − mean)·scale, a missing score counting 0.
        let write = |step: &mut StepPart<'_>, terms: &mut TermRows<'_>, t: TrajectoryId, [mean, scale]: [f32; 2]| {
            let a = outcome[t.index()];
            let range = tr.path_range(t);
            let value = |s: f32| alpha * a + beta * if s.is_nan() { 0.0 } else { (s - mean) * scale };
            step.write(range.clone(), score[range].iter().map(|&s| value(s)));
            let row = [a, alpha, beta, mean, scale].map(f64::from);
            terms.set(t.index(), &row);
        };
        let normalize = |[mean, std]: [f32; 2]| [mean, 1.0 / (std + eps)];
        // Runs of consecutive groups (or trajectories) on their own threads (`par`).
        let (step, _) = match knobs.process_norm {
            // Group by group, while the group's scores are in cache: statistics, then credit.
            ProcessNorm::Group => crate::credit::engine::par::by_groups(run, &mut terms, |groups, step, terms| {
                for g in groups {
                    let members = run.groups.members(GroupId::from_index(g));
                    let stats = group_stats_of(|| members.iter().map(|&t| &score[tr.path_range(t)]));
                    for &t in members {
                        write(step, terms, t, normalize(stats));
                    }
                }
            }),
            norm => {
                let stats = if norm == ProcessNorm::Batch {
                    normalize(group_stats_of(|| std::iter::once(&score[..])))
                } else {
                    [0.0, 1.0]
                };
                crate::credit::engine::par::by_trajectories(run, &mut terms, |ts, step, terms| {
                    ts.for_each(|t| write(step, terms, TrajectoryId::from_index(t), stats));
                })
            }
        };
        crate::credit::engine::inputs::give_path_column(score);
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}
