//! The terms behind one step's credit under one scheme, so that the number can be redone by hand:
//! the terms of its row (a trajectory's r, mean, std…), the step's own (TRIAGE's c(role), the
//! later PRM scores a sum runs over, a tree node's value and its parent's) and, under a
//! token-level scheme, the policy tokens' values whose mean it is. The inspector and
//! `vantage step` list them.

use crate::credit::{Credit, Level, Params, Scheme};
use crate::model::{Run, TrajectoryId};

/// The most token values listed for one step.
pub const TOKEN_TERMS: usize = 24;

/// A named term, or a note (no value: "and 12 more").
pub type Term = (String, Option<f64>);

/// Under a token-level scheme, a step's number is the mean of its policy tokens' values: those
/// values (the first [`TOKEN_TERMS`]), so that the mean can be taken by hand; none otherwise.
pub fn token_terms(run: &Run, credit: &Credit, t: TrajectoryId, p: usize) -> Vec<Term> {
    let (Some(Level::Token), Some(token)) = (credit.level, credit.token.as_deref()) else {
        return Vec::new();
    };
    let Some(range) =
        run.trajectories.path_nodes.get(p).and_then(|&node| crate::credit::step_token_range(run, t, node))
    else {
        return Vec::new();
    };
    let values: Vec<f32> =
        range.filter(|&i| run.tokens.is_policy(i)).map(|i| token.get(i).copied().unwrap_or(f32::NAN)).collect();
    let mut terms = vec![(format!("the mean of its {} policy tokens' values", values.len()), None)];
    terms.extend(
        values.iter().take(TOKEN_TERMS).enumerate().map(|(i, &v)| (format!("token {}", i + 1), Some(f64::from(v)))),
    );
    if values.len() > TOKEN_TERMS {
        terms.push((format!("and {} more", values.len() - TOKEN_TERMS), None));
    }
    terms
}

/// The values `explained` (a [`Scheme::compute_explained`] credit) keeps for path step `p` of
/// trajectory `t` beyond its row's.
pub fn own_values(explained: &Credit, t: TrajectoryId, p: usize) -> Vec<Term> {
    let row = explained.terms.for_step(t.index(), p);
    row.into_iter().skip(explained.terms.names.len()).map(|(k, v)| (k.to_owned(), Some(v))).collect()
}

/// Every term of path step `p` of trajectory `t` under `scheme` (computed under `params` as
/// `credit`, with its values per step when `credit` is `compute_explained`'s): its row's, the
/// step's own, its tokens'.
pub fn terms(
    run: &Run,
    scheme: Option<(&dyn Scheme, &Params)>,
    credit: &Credit,
    t: TrajectoryId,
    p: usize,
) -> Vec<Term> {
    let mut terms: Vec<Term> =
        credit.terms.for_step(t.index(), p).into_iter().map(|(k, v)| (k.to_owned(), Some(v))).collect();
    if let Some((scheme, params)) = scheme {
        terms.extend(scheme.step_terms(run, params, credit, t, p));
    }
    terms.extend(token_terms(run, credit, t, p));
    terms
}

/// A credit's formula and the values of its terms ("with" only when there are some).
pub fn formula_line(formula: &str, terms: &[String]) -> String {
    if terms.is_empty() { formula.to_owned() } else { format!("{formula}  with  {}", terms.join(", ")) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{LoadReport, load_bytes};

    #[test]
    fn a_step_s_terms_redo_its_grpo_number() {
        let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "x"}]}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "y"}]}
"#;
        let run = load_bytes("t.jsonl", log.as_bytes(), &mut LoadReport::new("t.jsonl")).expect("loads");
        let scheme = crate::credit::scheme("grpo").expect("grpo");
        let params = Params::defaults(scheme);
        let credit = scheme.compute_explained(&run, &params).expect("computes");
        let a = run.trajectory_by_key("a").expect("a");
        let p = run.trajectories.path_range(a).start;
        let terms = terms(&run, Some((scheme, &params)), &credit, a, p);
        let value = |name: &str| terms.iter().find(|(k, _)| k == name).and_then(|(_, v)| *v);
        // (r − mean)/(std + ε): r 1, mean ½, the unbiased std of {1, 0} is √½.
        assert_eq!(value("r"), Some(1.0));
        assert_eq!(value("mean"), Some(0.5));
        let std = value("std").expect("std");
        assert!((std - 0.5f64.sqrt()).abs() < 1e-6, "{terms:?}");
        assert!(((1.0 - 0.5) / std - f64::from(credit.step[p])).abs() < 1e-4);
        assert!(own_values(&credit, a, p).is_empty());
        assert!(token_terms(&run, &credit, a, p).is_empty(), "a step-level scheme has no token terms");
    }

    #[test]
    fn a_formula_without_terms_has_no_dangling_with() {
        assert_eq!(
            formula_line("the trainer's logged advantage (token)", &[]),
            "the trainer's logged advantage (token)"
        );
        let terms = ["r = 1".to_owned(), "mean = 0.5".to_owned()];
        assert_eq!(formula_line("r − mean", &terms), "r − mean  with  r = 1, mean = 0.5");
    }
}
