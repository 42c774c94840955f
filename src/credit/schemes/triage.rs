//! TRIAGE (`triage`): role-typed segment credit added to the outcome advantage,
//! `A_ik = A_i + w · c(role_ik)`, optionally whitened over all segments of the batch.

use crate::credit::data::moments::Moments;
use crate::credit::engine::inputs::outcome_advantages;
use crate::credit::kernels::outcome::OutcomeParams;
use crate::credit::params::declare::{GROUP, decl, params, range};
use crate::credit::scheme::default_knobs;
use crate::credit::scheme::{StepAt, StepTerms, scheme};
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{Run, TrajectoryId};
use std::collections::BTreeMap;

scheme!(
    /// TRIAGE.
    Triage,
    knobs: Knobs,
    info: SchemeInfo {
        id: "triage",
        family: Family::Role,
        display_name: "TRIAGE (role-typed credit)",
        citation: "Xu, Zhou, Sang et al. 2026, TRIAGE (arXiv 2606.32017); constants and additive rule from a third-party reimplementation",
        needs: "role labels on steps (progress / exploration / infrastructure / regression) and outcome rewards",
        source: SourceQuality::Approximate(
            "the paper's method section was not readable; constants and rule from a reimplementation",
        ),
        checked: "its projection identities and fitted constants (tests/it/process_credit.rs); not run against the paper's code",
    },
);

params! {
    pub struct Knobs {
        w: f64 = range(0.0, 2.0, "0.5", "mixing weight of the role constant"),
        c_progress: f64 = range(-2.0, 2.0, "1", "constant for decisive progress"),
        c_exploration: f64 = range(-2.0, 2.0, "0.5", "constant for useful exploration"),
        c_infrastructure: f64 = range(-2.0, 2.0, "-0.1", "constant for no-progress infrastructure"),
        c_regression: f64 = range(-2.0, 2.0, "-0.5", "constant for regression"),
        c_unlabeled: f64 = range(-2.0, 2.0, "0", "constant for a step without a role (or a role of your own)"),
        whiten: bool = decl("true", "z-score the combined values over all segments of the batch (population std, ε = 1e-8)"),
        outcome: OutcomeParams = GROUP,
    }
}

impl Typed for Triage {
    fn batch_wide(&self, knobs: &Knobs) -> Option<&'static str> {
        knobs.whiten.then_some("whitens the advantages over all segments of the batch")
    }

    fn supports(&self, run: &Run) -> Support {
        Support::when(run.nodes.role.iter().any(|r| r.is_some()), "needs role labels on steps")
            .and(|| crate::credit::engine::inputs::supports_outcomes(run))
    }
    fn step_terms(&self, run: &Run, knobs: &Knobs, _: &Credit, at: StepAt) -> StepTerms {
        let role = run.nodes.role[at.node.index()];
        let role = if role.is_some() { run.label(role) } else { "" };
        let name = if role.is_empty() { "unlabeled" } else { role };
        vec![(format!("c({name})"), Some(role_constant(knobs, role)))]
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let (outcome, stats) =
            outcome_advantages(run, crate::credit::kernels::outcome::OutcomeOptions::of(knobs.outcome));
        let constant = |role: &str| role_constant(knobs, role) as f32;
        let w = knobs.w as f32;
        let tr = &run.trajectories;
        // Each step's role as a one-byte code with its bonus w · c: the run's role codes
        // (`PathCodes`, derived when it was built), or, for a run with more distinct roles than a
        // byte holds, TRIAGE's five classes, coded here.
        let own;
        let (codes, bonus): (&[u8], Vec<f32>) = if tr.path_roles.codes.len() == tr.path_nodes.len() {
            let roles = &tr.path_roles.labels;
            (&tr.path_roles.codes, roles.iter().map(|&r| w * constant(run.label(r))).collect())
        } else {
            own = class_codes(run);
            (&own, CLASSES.iter().map(|&class| w * constant(class)).collect())
        };
        let kinds = bonus.len();
        // The batch moments for whitening without writing a value: a trajectory's steps take one
        // value per code, A + w·c, so its moments are those values times how often each code
        // occurs. Per block of trajectories, the blocks added in order (`par::blocks`: the same
        // moments whatever the number of threads).
        let block = crate::credit::engine::par::TRAJECTORY_BLOCK;
        let scale = knobs.whiten.then(|| {
            let blocks = crate::par::blocks(tr.len(), block, codes.len(), |ts| {
                let mut moments = Moments::default();
                // Four interleaved tallies, so that equal codes in a row do not wait on each other.
                let mut tally = [[0u32; 256]; 4];
                for t in ts {
                    for lane in &mut tally {
                        lane[..kinds].fill(0);
                    }
                    for (k, &code) in codes[tr.path_range(TrajectoryId::from_index(t))].iter().enumerate() {
                        tally[k & 3][usize::from(code)] += 1;
                    }
                    let a = outcome[t];
                    for (code, &b) in bonus.iter().enumerate() {
                        let count = tally.iter().map(|lane| lane[code]).sum::<u32>();
                        moments.add_many(a + b, count as usize);
                    }
                }
                moments
            });
            blocks.iter().fold(Moments::default(), |all, block| all.merge(block)).mean_scale()
        });
        // A row's terms: its outcome advantage with the group moments behind it, w, and the
        // batch's whitening moments (its std as whitening divides by it: √(var + 1e-8)); the step's
        // c(role) comes from `step_terms`.
        let batch = scale.flatten();
        let mut terms = match batch {
            Some(_) => Terms::for_rows(
                "(A_outcome + w·c(role) − batch mean) / batch std",
                &["A_outcome", "group mean", "group std", "w", "batch mean", "batch std"],
                tr.len(),
            ),
            None => Terms::for_rows("A_outcome + w·c(role)", &["A_outcome", "group mean", "group std", "w"], tr.len()),
        };
        let batch = batch.map(|(mean, scale)| [f64::from(mean), 1.0 / f64::from(scale)]);
        // Each step written once, in path order, from its trajectory's table of values per code.
        // Runs of consecutive trajectories on their own threads (`par`).
        let (step, _) = crate::credit::engine::par::by_trajectories(run, &mut terms, |ts, step, terms| {
            let mut value = [0f32; 256];
            for t in ts.map(TrajectoryId::from_index) {
                let a = outcome[t.index()];
                for (v, &b) in value.iter_mut().zip(&bonus) {
                    // As whitening the value: NaN and ±∞ come out as they went in (scale > 0).
                    *v = match scale {
                        Some(Some((mean, scale))) => (a + b - mean) * scale,
                        _ => a + b,
                    };
                }
                let range = tr.path_range(t);
                for (slot, &code) in step.slots(range.clone()).iter_mut().zip(&codes[range]) {
                    *slot = value[usize::from(code)];
                }
                let [mean, std] = stats.get(tr.group[t.index()].index()).copied().unwrap_or([f32::NAN; 2]);
                let row = [f64::from(a), f64::from(mean), f64::from(std), f64::from(w)];
                match batch {
                    Some([m, s]) => terms.set(t.index(), &[row[0], row[1], row[2], row[3], m, s]),
                    None => terms.set(t.index(), &row),
                }
            }
        });
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}

/// TRIAGE's role classes; any other role (or none) is unlabeled.
const CLASSES: [&str; 5] = ["progress", "exploration", "infrastructure", "regression", ""];

/// Each path step's TRIAGE class (an index into [`CLASSES`]), for a run without role codes.
fn class_codes(run: &Run) -> Vec<u8> {
    let class = |role: crate::model::Sym| {
        let label = if role.is_some() { run.label(role) } else { "" };
        CLASSES[..4].iter().position(|&c| c == label).unwrap_or(4) as u8
    };
    let mut of_sym: Vec<u8> = vec![u8::MAX; run.labels.len() + 1];
    let tr = &run.trajectories;
    tr.path_nodes
        .iter()
        .map(|node| {
            let role = run.nodes.role[node.index()];
            let slot = if role.is_some() { role.index().min(of_sym.len() - 1) } else { of_sym.len() - 1 };
            if of_sym[slot] == u8::MAX {
                of_sym[slot] = class(role);
            }
            of_sym[slot]
        })
        .collect()
}

/// Population z-score over the finite values (ε = 1e-8 inside the square root), in place: what
/// `compute` does with the moments it gathers on the way.
pub fn zscore(values: &mut [f32]) {
    let mut moments = Moments::default();
    for &v in values.iter() {
        moments.add_many(v, 1);
    }
    moments.whiten(values);
}

/// TRIAGE's projection: for each role, the mean of (reference credit − outcome advantage) over the
/// steps with that role, and how many there are; the constants a reference scheme implies.
pub fn fit_role_constants(run: &Run, reference: &[f32], outcome: &[f32]) -> BTreeMap<String, (f64, usize)> {
    let tr = &run.trajectories;
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for t in tr.ids() {
        let offset = tr.path_offsets[t.index()] as usize;
        for (k, &node) in tr.path(t).iter().enumerate() {
            let (Some(&r), Some(&a)) = (reference.get(offset + k), outcome.get(t.index())) else { continue };
            if !r.is_finite() || !a.is_finite() {
                continue;
            }
            let role = run.label(run.nodes.role[node.index()]);
            let entry =
                sums.entry(if role.is_empty() { "(unlabeled)".to_owned() } else { role.to_owned() }).or_default();
            entry.0 += f64::from(r - a);
            entry.1 += 1;
        }
    }
    sums.into_iter().map(|(role, (sum, n))| (role, (sum / n as f64, n))).collect()
}

/// [`fit_role_constants`] against TRIAGE's default outcome advantage (GRPO over each group).
pub fn fit_role_constants_to(run: &Run, reference: &[f32]) -> BTreeMap<String, (f64, usize)> {
    let (outcome, _) =
        outcome_advantages(run, crate::credit::kernels::outcome::OutcomeOptions::of(default_knobs(&Triage).outcome));
    fit_role_constants(run, reference, &outcome)
}

/// The constant `knobs` give a role label: its class's, or the unlabeled one.
fn role_constant(knobs: &Knobs, role: &str) -> f64 {
    match role {
        "progress" => knobs.c_progress,
        "exploration" => knobs.c_exploration,
        "infrastructure" => knobs.c_infrastructure,
        "regression" => knobs.c_regression,
        _ => knobs.c_unlabeled,
    }
}

/// TRIAGE's default constant for a role label.
pub fn default_constant(role: &str) -> f64 {
    role_constant(&default_knobs(&Triage), role)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_of_the_reference() {
        // Success trajectory (A = +1) with roles P, I, R, P; failure (A = −1) with E, I, R; w = 0.5.
        let c = |r: &str| match r {
            "P" => 1.0,
            "E" => 0.5,
            "I" => -0.1,
            _ => -0.5,
        };
        let mut values: Vec<f32> = ["P", "I", "R", "P"]
            .iter()
            .map(|r| 1.0 + 0.5 * c(r))
            .chain(["E", "I", "R"].iter().map(|r| -1.0 + 0.5 * c(r)))
            .collect();
        let before = [1.5, 0.95, 0.75, 1.5, -0.75, -1.05, -1.25];
        for (v, b) in values.iter().zip(before) {
            assert!((v - b).abs() < 1e-6);
        }
        zscore(&mut values);
        let after = [1.127, 0.637, 0.459, 1.127, -0.879, -1.147, -1.325];
        for (v, a) in values.iter().zip(after) {
            assert!((v - a).abs() < 2e-3, "{v} vs {a}");
        }
    }
}
