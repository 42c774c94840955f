//! The audit of a log's own advantages (the `logged` scheme): which trainer estimator and preset
//! reproduces them. Every preset of the estimators trainers log (GRPO and its trainer presets,
//! RLOO, REINFORCE++, ReMax, OPO, GPG, GAE, pass@k) that the run supports is computed and put
//! beside the logged values; the one whose every step agrees within [`TOLERANCE`] (rounding noise
//! of a zero-variance group aside, `compare::zero_variance_noise`) is named, or, when none does,
//! the closest and where it parts.

use crate::credit::{self, Support};
use crate::model::Run;

/// The estimators whose advantages trainers log, tried with their defaults and each preset.
pub const ESTIMATORS: [&str; 9] =
    ["grpo", "rloo", "reinforce_plus_plus", "reinforce_plus_plus_baseline", "remax", "opo", "gpg", "gae", "grpo_passk"];

/// Two values agree when they differ by at most this plus this share of the logged one: a trainer
/// logs float32 (or bfloat16-rounded) advantages, and the recomputation runs in another order.
pub const TOLERANCE: f64 = 1e-4;

/// Whether `b` agrees with `a` within [`TOLERANCE`] (absolute, plus relative to `a`).
pub fn within_tolerance(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOLERANCE + TOLERANCE * a.abs()
}

/// Whether `a` and `b` differ only by the rounding noise of a zero-variance group whose noise
/// reaches `bound` (`compare::zero_variance_noise`; `None` where the group's rewards differ).
pub fn is_noise(a: f64, b: f64, bound: Option<f64>) -> bool {
    bound.is_some_and(|bound| a.abs().max(b.abs()) <= bound)
}

/// Whether two credits of one step differ by no more than the audit counts as agreement:
/// within [`TOLERANCE`], or both within the rounding noise of a zero-variance group.
pub fn agree(a: f64, b: f64, bound: Option<f64>) -> bool {
    within_tolerance(a, b) || is_noise(a, b, bound)
}

/// One estimator and preset put beside the logged advantages.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Scheme id.
    pub scheme: &'static str,
    /// Preset name (`None`: the scheme's defaults).
    pub preset: Option<&'static str>,
    /// Steps with both values.
    pub compared: usize,
    /// Steps that differ by more than the tolerance (rounding noise of a zero-variance group aside).
    pub differing: usize,
    /// Steps that differ only by the rounding noise of a zero-variance group.
    pub noise: usize,
    /// The largest difference outside that noise, and the path position where it is.
    pub largest: Option<(f64, usize)>,
}

impl Verdict {
    /// `grpo --preset nemo_rl`, as the command line names it.
    pub fn name(&self) -> String {
        match self.preset {
            Some(preset) => format!("{} --preset {preset}", self.scheme),
            None => self.scheme.to_owned(),
        }
    }
}

/// What the audit found.
#[derive(Clone, Debug, PartialEq)]
pub enum Audit {
    /// These estimators and presets reproduce the logged advantages: first the one whose preset
    /// names the run's trainer (its format), else the first in [`ESTIMATORS`] order; then the others.
    Reproduced(Vec<Verdict>),
    /// None does; this one comes closest (fewest differing steps, then the smallest difference).
    Closest(Verdict),
}

/// Audits the logged advantages of `run`; `None` when it logs none, or no estimator applies.
pub fn audit(run: &Run) -> Option<Audit> {
    let logged = credit::scheme("logged").ok()?;
    if logged.supports(run) != Support::Yes {
        return None;
    }
    let logged = credit::compute(logged, run, None, &Vec::new()).ok()?;
    let logged = &logged.step;
    let noise = super::compare::zero_variance_bounds(run);
    let mut best: Option<Verdict> = None;
    let mut reproduced: Vec<Verdict> = Vec::new();
    for id in ESTIMATORS {
        let Ok(scheme) = credit::scheme(id) else { continue };
        if scheme.supports(run) != Support::Yes {
            continue;
        }
        let presets = std::iter::once(None).chain(scheme.presets().iter().map(|p| Some(p.name)));
        for preset in presets {
            let Ok(recomputed) = credit::compute(scheme, run, preset, &Vec::new()) else { continue };
            let verdict = compare(run, logged, &recomputed.step, &noise, (scheme.info().id, preset));
            if verdict.compared > 0 && verdict.differing == 0 {
                reproduced.push(verdict);
                continue;
            }
            let closer = best.as_ref().is_none_or(|b| {
                let largest = |v: &Verdict| v.largest.map_or(0.0, |(d, _)| d);
                (verdict.differing, largest(&verdict)) < (b.differing, largest(b))
            });
            if verdict.compared > 0 && closer {
                best = Some(verdict);
            }
        }
    }
    if !reproduced.is_empty() {
        // The trainer's own preset first: `nemo_rl` for a NeMo-RL dump, `slime` for slime's.
        let format = run.meta.format.to_lowercase();
        let names_trainer = |v: &Verdict| v.preset.is_some_and(|p| format.contains(p.split('_').next().unwrap_or(p)));
        if let Some(i) = reproduced.iter().position(names_trainer) {
            let own = reproduced.remove(i);
            reproduced.insert(0, own);
        }
        return Some(Audit::Reproduced(reproduced));
    }
    best.map(Audit::Closest)
}

/// Puts `recomputed` beside `logged`, step by step.
fn compare(
    run: &Run,
    logged: &[f32],
    recomputed: &[f32],
    noise: &[Option<f64>],
    (scheme, preset): (&'static str, Option<&'static str>),
) -> Verdict {
    let tr = &run.trajectories;
    let mut verdict = Verdict { scheme, preset, compared: 0, differing: 0, noise: 0, largest: None };
    for t in tr.ids() {
        let bound = noise.get(tr.group[t.index()].index()).copied().flatten();
        for p in tr.path_range(t) {
            let (Some(&l), Some(&r)) = (logged.get(p), recomputed.get(p)) else { continue };
            if !(l.is_finite() && r.is_finite()) {
                continue;
            }
            verdict.compared += 1;
            let (l, r) = (f64::from(l), f64::from(r));
            let gap = (l - r).abs();
            if within_tolerance(l, r) {
                continue;
            }
            if is_noise(l, r, bound) {
                verdict.noise += 1;
                continue;
            }
            verdict.differing += 1;
            if verdict.largest.is_none_or(|(d, _)| gap > d) {
                verdict.largest = Some((gap, p));
            }
        }
    }
    verdict
}

/// The audit in one line, for `vantage check` and the compare view: the estimator that
/// reproduces the logged advantages, or that none does and which comes closest and where.
pub fn describe(run: &Run, audit: &Audit) -> String {
    let noise = |v: &Verdict| {
        if v.noise > 0 {
            format!(" ({} more differ only by rounding noise of zero-variance groups)", v.noise)
        } else {
            String::new()
        }
    };
    match audit {
        Audit::Reproduced(all) => {
            let v = &all[0];
            let others: Vec<String> = all[1..].iter().take(4).map(Verdict::name).collect();
            let also = match all.len() - 1 {
                0 => String::new(),
                n if n > others.len() => format!("; so do {} and {} more", others.join(", "), n - others.len()),
                _ => format!("; so do {}", others.join(", ")),
            };
            format!(
                "the logged advantages are {}'s: all {} steps within {TOLERANCE:e}{}{also}",
                v.name(),
                v.compared,
                noise(v)
            )
        }
        Audit::Closest(v) => {
            let at = v.largest.and_then(|(gap, p)| {
                let t = run.trajectories.at_position(p)?;
                let step = p - run.trajectories.path_range(t).start + 1;
                Some(format!("; the largest difference, {gap:.4}, at {} step {step}", run.trajectory_key(t)))
            });
            format!(
                "no estimator's preset reproduces the logged advantages; closest: {}, {} of {} steps differ{}{}",
                v.name(),
                v.differing,
                v.compared,
                at.unwrap_or_default(),
                noise(v)
            )
        }
    }
}
