//! First-error split (`first_error`, VPPO / Cliff style): with a labelled first erroneous step,
//! the steps before it keep or gain credit and the steps from it on are penalized; trajectories
//! without a labelled error keep their outcome advantage on every step.

use crate::credit::engine::inputs::outcome_advantages;
use crate::credit::kernels::outcome::OutcomeParams;
use crate::credit::params::declare::{GROUP, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::Run;

scheme!(
    /// First-error split.
    FirstError,
    knobs: Knobs,
    info: SchemeInfo {
        id: "first_error",
        family: Family::Process,
        display_name: "First-error split",
        citation: "VPPO (Verifiable Prefix Policy Optimization) and Cliff: reward the verified prefix, penalize from the first mistake on",
        needs: "first-error labels on steps (a `first_error` flag) and outcome rewards",
        source: SourceQuality::Approximate("reconstructed from the VPPO and Cliff abstracts; no code"),
        checked: "the worked example of reference/credit-schemes-process.md (tests/it/process_credit.rs); not run against the paper's code",
    },
);

params! {
    pub struct Knobs {
        prefix_bonus: f64 = range(0.0, 2.0, "0", "added to the prefix credit max(A, 0) before the first error"),
        suffix_penalty: f64 = range(0.0, 2.0, "0.5", "subtracted from min(A, 0) at the first error and after it"),
        outcome: OutcomeParams = GROUP,
    }
}

impl Typed for FirstError {
    fn supports(&self, run: &Run) -> Support {
        let labelled = run.nodes.flags.iter().any(|f| f & crate::model::FLAG_FIRST_ERROR != 0);
        Support::when(labelled, "needs first-error labels (a step with `first_error: true`)")
            .and(|| crate::credit::engine::inputs::supports_outcomes(run))
    }
    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let (outcome, _) = outcome_advantages(run, crate::credit::kernels::outcome::OutcomeOptions::of(knobs.outcome));
        let bonus = knobs.prefix_bonus as f32;
        let penalty = knobs.suffix_penalty as f32;
        let tr = &run.trajectories;
        let flags = &run.nodes.flags;
        let mut terms = Terms::for_rows(
            "before the first error: max(A, 0) + bonus; from it on: min(A, 0) − penalty; no error: A",
            &["A_outcome", "first error step (−1: none)", "bonus", "penalty"],
            tr.len(),
        );
        // One pass in path order, each output written once (no fill first): the credit of a step
        // depends only on whether a labelled first error came at or before it. Runs of
        // consecutive trajectories on their own threads (`par`).
        let error = crate::model::FLAG_FIRST_ERROR | crate::model::FLAG_FIRST_ERROR_LABELLED;
        let (step, _) = crate::credit::engine::par::by_trajectories(run, &mut terms, |ts, step, terms| {
            for t in ts.map(crate::model::TrajectoryId::from_index) {
                let a = outcome[t.index()];
                let range = tr.path_range(t);
                let first = if tr.paths_in_node_order {
                    flags[range.clone()].iter().position(|&f| f & error == error)
                } else {
                    tr.path(t).iter().position(|&n| flags[n.index()] & error == error)
                };
                match first {
                    None => step.fill(range, a),
                    Some(e) => {
                        step.fill(range.start..range.start + e, a.max(0.0) + bonus);
                        step.fill(range.start + e..range.end, a.min(0.0) - penalty);
                    }
                }
                let row = [f64::from(a), first.map_or(-1.0, |e| e as f64 + 1.0), f64::from(bonus), f64::from(penalty)];
                terms.set(t.index(), &row);
            }
        });
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}
