//! Scheme A against scheme B on the same steps: rank correlation, mean credit per role, and the
//! steps where they disagree in sign, named by what the disagreement means.

use std::collections::BTreeMap;

use crate::model::Run;

/// What a sign disagreement between A and B means for the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Disagreement {
    /// A > 0 on a step labelled regression, or that B punishes in a failed rollout.
    ReinforcedRegression,
    /// A > 0 on a step B punishes, in a rollout that succeeded anyway.
    LuckyStep,
    /// A < 0 on a step B rewards (or labelled exploration / progress), in a failed rollout.
    PunishedExploration,
    /// A < 0 on a step B rewards, in a successful rollout.
    PunishedGoodStep,
}

impl Disagreement {
    /// Every kind, in table order.
    pub const ALL: [Self; 4] =
        [Self::ReinforcedRegression, Self::LuckyStep, Self::PunishedExploration, Self::PunishedGoodStep];

    /// The name shown above its table.
    pub fn label(self) -> &'static str {
        match self {
            Self::ReinforcedRegression => "reinforced regression",
            Self::LuckyStep => "rewarded lucky step in a flawed solution",
            Self::PunishedExploration => "punished exploration",
            Self::PunishedGoodStep => "punished good step in a successful rollout",
        }
    }

    /// One sentence on what it means.
    pub fn explanation(self) -> &'static str {
        match self {
            Self::ReinforcedRegression => "A pushes up a step that B (or its role label) says made things worse",
            Self::LuckyStep => "the rollout succeeded, A credits a step B judges wrong",
            Self::PunishedExploration => "the rollout failed, A punishes a step B judges useful",
            Self::PunishedGoodStep => "the rollout succeeded, yet A punishes a step B judges useful",
        }
    }

    /// Classifies a step with credit `a` and `b`; `None` when they agree in sign (or one is 0 / missing).
    pub fn classify(a: f32, b: f32, role: &str, success: bool) -> Option<Self> {
        Self::classify_within(a, b, [0.0, 0.0], role, success)
    }

    /// [`Self::classify`] with a value within `tolerance` of 0 (A's, B's) taken for 0: rounding
    /// noise (−1.2e-7 where the scheme means 0) is no disagreement.
    pub fn classify_within(a: f32, b: f32, tolerance: [f32; 2], role: &str, success: bool) -> Option<Self> {
        if !(a.is_finite() && b.is_finite()) || a * b >= 0.0 || a.abs() <= tolerance[0] || b.abs() <= tolerance[1] {
            return None;
        }
        Some(match (a > 0.0, success) {
            (true, _) if role == "regression" => Self::ReinforcedRegression,
            (true, true) => Self::LuckyStep,
            (true, false) => Self::ReinforcedRegression,
            (false, false) => Self::PunishedExploration,
            (false, true) => Self::PunishedGoodStep,
        })
    }
}

/// One disagreeing step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DisagreeingStep {
    /// Path position.
    pub position: usize,
    /// Credit under A.
    pub a: f32,
    /// Credit under B.
    pub b: f32,
}

/// How A and B agree within one group: for ranking the groups they disagree on most.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupAgreement {
    /// The group.
    pub group: crate::model::GroupId,
    /// Its steps with both values.
    pub steps: usize,
    /// Spearman's ρ over those steps (`NaN` with fewer than 2 or no spread).
    pub spearman: f64,
    /// Share of those steps whose signs differ (each value within its tolerance of 0 counting as 0).
    pub sign_disagreement: f64,
    /// Whether A, and B, give the group no credit (every value within its tolerance of 0): its
    /// "disagreement" is one scheme's silence, not two opinions.
    pub silent: [bool; 2],
}

impl GroupAgreement {
    /// Which scheme is silent on the group: `a`, `b`, `both`, or `None` when both give credit.
    pub fn silent_name(&self) -> Option<&'static str> {
        match self.silent {
            [true, true] => Some("both"),
            [true, false] => Some("a"),
            [false, true] => Some("b"),
            [false, false] => None,
        }
    }
}

/// The groups ranked by how much A and B disagree on them: most steps of differing sign first,
/// then the lowest rank correlation; the groups one scheme gives no credit (silent) after all the
/// others, so that two opinions lead; groups with fewer than two paired steps are left out.
/// `tolerance` is [`Comparison::sign_tolerance`].
pub fn groups_by_disagreement(run: &Run, a: &[f32], b: &[f32], tolerance: [f32; 2]) -> Vec<GroupAgreement> {
    let tr = &run.trajectories;
    let sign = |v: f32, tol: f32| {
        if v > tol {
            1
        } else if v < -tol {
            -1
        } else {
            0
        }
    };
    let mut out: Vec<GroupAgreement> = run
        .groups
        .ids()
        .filter_map(|g| {
            let (mut xs, mut ys, mut differ, mut silent) = (Vec::new(), Vec::new(), 0usize, [true; 2]);
            for &t in run.groups.members(g) {
                for p in tr.path_range(t) {
                    let (Some(&x), Some(&y)) = (a.get(p), b.get(p)) else { continue };
                    if !(x.is_finite() && y.is_finite()) {
                        continue;
                    }
                    let (sx, sy) = (sign(x, tolerance[0]), sign(y, tolerance[1]));
                    differ += usize::from(sx != sy);
                    silent[0] &= sx == 0;
                    silent[1] &= sy == 0;
                    xs.push(x);
                    ys.push(y);
                }
            }
            (xs.len() >= 2).then(|| GroupAgreement {
                group: g,
                steps: xs.len(),
                spearman: spearman(&xs, &ys),
                sign_disagreement: differ as f64 / xs.len() as f64,
                silent,
            })
        })
        .collect();
    let rho = |g: &GroupAgreement| if g.spearman.is_nan() { 1.0 } else { g.spearman };
    let apart = |g: &GroupAgreement| g.silent.iter().any(|&s| s);
    out.sort_by(|l, r| {
        apart(l)
            .cmp(&apart(r))
            .then(r.sign_disagreement.total_cmp(&l.sign_disagreement))
            .then(rho(l).total_cmp(&rho(r)))
    });
    out
}

/// The comparison of two credit vectors over the same path positions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Steps where both have a value.
    pub num_paired: usize,
    /// Spearman rank correlation over those steps (`NaN` with fewer than 2 or no spread).
    pub spearman: f64,
    /// Share of paired steps whose signs differ.
    pub sign_disagreement: f64,
    /// A's and B's values within this of 0 count as 0 in the sign test: [`SIGN_TOLERANCE`] of the
    /// scheme's largest |value|.
    pub sign_tolerance: [f32; 2],
    /// Per role label ("" = unlabelled): (number of steps, mean A, mean B).
    pub per_role: BTreeMap<String, (usize, f64, f64)>,
    /// Disagreeing steps by kind, largest |A − B| first.
    pub disagreements: BTreeMap<Disagreement, Vec<DisagreeingStep>>,
    /// Paired steps whose values differ by more than the larger scheme's tolerance (rounding noise
    /// of a zero-variance group aside).
    pub num_differing: usize,
    /// Paired steps whose values differ only by the rounding noise of a zero-variance group: every
    /// reward of the group equal, and both values within [`zero_variance_noise`] of 0 (a trainer's
    /// float32 mean missing the reward by an ulp, magnified by ε), not a filter or mask.
    pub zero_variance_noise: usize,
    /// Per rollout, its step with the largest |A − B| (above the tolerance), largest first, at
    /// most [`MOST_DIFFERENT`]: where a recomputation and the trainer's logged advantage part.
    pub most_different: Vec<DisagreeingStep>,
    /// The groups A and B disagree on most, at most [`MOST_DIFFERENT`] ([`groups_by_disagreement`]).
    pub groups: Vec<GroupAgreement>,
    /// TRIAGE's projection for A and for B: per role, the mean of (credit − GRPO outcome
    /// advantage) and the number of steps (empty when the run has no role labels).
    pub role_fit: [BTreeMap<String, (f64, usize)>; 2],
}

/// Per rollout with credit: its length (tokens when the run logs them, else steps), its number of
/// steps (turns), and the mean of its steps' credit; for plotting credit against length (the
/// length bias Dr.GRPO is about).
pub fn credit_by_length(run: &Run, credit: &[f32]) -> Vec<[f64; 3]> {
    let tr = &run.trajectories;
    let tokens = run.tokens.len > 0;
    tr.ids()
        .filter_map(|t| {
            let values: Vec<f64> = tr
                .path_range(t)
                .filter_map(|p| credit.get(p))
                .filter(|v| v.is_finite())
                .map(|&v| f64::from(v))
                .collect();
            if values.is_empty() {
                return None;
            }
            let length = if tokens { tr.token_range(t).len() } else { tr.num_steps(t) };
            Some([length as f64, tr.num_steps(t) as f64, values.iter().sum::<f64>() / values.len() as f64])
        })
        .collect()
}

/// Spearman's ρ between a rollout's length (column `axis` of [`credit_by_length`]) and its mean
/// credit.
pub fn length_correlation(points: &[[f64; 3]], axis: usize) -> f64 {
    let x: Vec<f32> = points.iter().map(|p| p[axis] as f32).collect();
    let y: Vec<f32> = points.iter().map(|p| p[2] as f32).collect();
    spearman(&x, &y)
}

/// The ε the rounding noise of a zero-variance group is measured with: the smallest the
/// group-normalizing trainers add to the std (verl, NeMo-RL, slime, miles: 1e-6).
pub const NOISE_EPSILON: f64 = 1e-6;

/// How far from 0 a group-normalized advantage can land in a group of `n` equal rewards `r` when
/// the group's float32 mean misses `r`: the float32 rounding of a sum of `n` values, `(n − 1)·u·|r|`
/// with `u = 2⁻²⁴`, over [`NOISE_EPSILON`] (0.80 for sixteen rewards of 0.9, where one ulp of
/// miss is 0.06).
pub fn zero_variance_noise(r: f32, n: usize) -> f64 {
    let unit_roundoff = f64::from(f32::EPSILON) / 2.0;
    n.saturating_sub(1) as f64 * unit_roundoff * f64::from(r.abs()) / NOISE_EPSILON
}

/// Per group: the noise bound of [`zero_variance_noise`] when all its rewards are equal (and there
/// are two or more), else `None`.
pub(crate) fn zero_variance_bounds(run: &Run) -> Vec<Option<f64>> {
    let tr = &run.trajectories;
    run.groups
        .ids()
        .map(|g| {
            let members = run.groups.members(g);
            // `summary::is_zero_variance` passes over rows without a reward; here every row has one.
            let all_rewarded = members.iter().all(|t| !tr.reward[t.index()].is_nan());
            (all_rewarded && super::summary::is_zero_variance(run, g))
                .then(|| zero_variance_noise(tr.reward[members[0].index()], members.len()))
        })
        .collect()
}

/// How many rollouts [`Comparison::most_different`] keeps.
pub const MOST_DIFFERENT: usize = 50;

/// A value within this share of a scheme's largest |value| counts as 0 when signs are compared.
pub const SIGN_TOLERANCE: f32 = 1e-5;

/// Whether trajectory `t` counts as a success: its success flag, else outcome ≥ 0.5.
pub fn is_success(run: &Run, t: crate::model::TrajectoryId) -> bool {
    let tr = &run.trajectories;
    tr.success[t.index()].unwrap_or(tr.reward[t.index()] >= 0.5)
}

/// Whether trajectory `t` passed ([`is_success`]), or `None` when it has no outcome at all (no
/// reward, no success flag): shown as neither a pass nor a failure.
pub fn outcome(run: &Run, t: crate::model::TrajectoryId) -> Option<bool> {
    let tr = &run.trajectories;
    (!tr.reward[t.index()].is_nan() || tr.success[t.index()].is_some()).then(|| is_success(run, t))
}

impl Comparison {
    /// Compares `a` and `b` (step credit per path position) on `run`.
    pub fn of(run: &Run, a: &[f32], b: &[f32]) -> Self {
        let tr = &run.trajectories;
        let mut out = Self::default();
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        let mut role_sums: BTreeMap<String, (usize, f64, f64)> = BTreeMap::new();
        let mut disagree = 0usize;
        let largest = |c: &[f32]| c.iter().filter(|v| v.is_finite()).fold(0.0f32, |m, v| m.max(v.abs()));
        out.sign_tolerance = [largest(a) * SIGN_TOLERANCE, largest(b) * SIGN_TOLERANCE];
        // A tree node shared by several paths with the same credit is listed once.
        let mut listed: std::collections::HashSet<(u32, u32, u32)> = std::collections::HashSet::new();
        let tolerance = out.sign_tolerance[0].max(out.sign_tolerance[1]);
        let noise_bounds = zero_variance_bounds(run);
        for t in tr.ids() {
            let success = is_success(run, t);
            // The noise of a zero-variance group is an outcome advantage's, the same on every step
            // of a rollout: credit that changes along the rollout (a turn's or a step's own) is
            // not noise, however small.
            let flat = |c: &[f32]| {
                let values = tr.path_range(t).filter_map(|p| c.get(p).copied()).filter(|v| v.is_finite());
                let (lo, hi) = values.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
                hi - lo <= tolerance || lo > hi
            };
            let noise = noise_bounds.get(tr.group[t.index()].index()).copied().flatten().filter(|_| flat(a) && flat(b));
            let mut widest: Option<DisagreeingStep> = None;
            for p in tr.path_range(t) {
                let (Some(&x), Some(&y)) = (a.get(p), b.get(p)) else { continue };
                if !(x.is_finite() && y.is_finite()) {
                    continue;
                }
                xs.push(x);
                ys.push(y);
                let gap = (x - y).abs();
                let is_noise = noise.is_some_and(|bound| f64::from(x.abs()).max(f64::from(y.abs())) <= bound);
                if gap > tolerance && is_noise {
                    out.zero_variance_noise += 1;
                } else if gap > tolerance {
                    out.num_differing += 1;
                    if widest.is_none_or(|w| gap > (w.a - w.b).abs()) {
                        widest = Some(DisagreeingStep { position: p, a: x, b: y });
                    }
                }
                let role = run.label(run.nodes.role[tr.path_nodes[p].index()]);
                let entry = role_sums.entry(role.to_owned()).or_default();
                entry.0 += 1;
                entry.1 += f64::from(x);
                entry.2 += f64::from(y);
                if let Some(kind) = Disagreement::classify_within(x, y, out.sign_tolerance, role, success) {
                    disagree += 1;
                    if listed.insert((tr.path_nodes[p].0, x.to_bits(), y.to_bits())) {
                        out.disagreements.entry(kind).or_default().push(DisagreeingStep { position: p, a: x, b: y });
                    }
                }
            }
            out.most_different.extend(widest);
        }
        out.most_different.sort_by(|l, r| (r.a - r.b).abs().total_cmp(&(l.a - l.b).abs()));
        out.most_different.truncate(MOST_DIFFERENT);
        for list in out.disagreements.values_mut() {
            list.sort_by(|l, r| (r.a - r.b).abs().total_cmp(&(l.a - l.b).abs()));
        }
        out.groups = groups_by_disagreement(run, a, b, out.sign_tolerance);
        out.groups.truncate(MOST_DIFFERENT);
        out.num_paired = xs.len();
        out.spearman = spearman(&xs, &ys);
        out.sign_disagreement = if xs.is_empty() { 0.0 } else { disagree as f64 / xs.len() as f64 };
        if run.nodes.role.iter().any(|r| r.is_some()) {
            out.role_fit = [
                crate::credit::schemes::triage::fit_role_constants_to(run, a),
                crate::credit::schemes::triage::fit_role_constants_to(run, b),
            ];
        }
        out.per_role =
            role_sums.into_iter().map(|(role, (n, sa, sb))| (role, (n, sa / n as f64, sb / n as f64))).collect();
        out
    }
}

/// Ranks with ties averaged (1-based).
fn ranks(values: &[f32]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
    let mut out = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = rank;
        }
        i = j + 1;
    }
    out
}

/// Spearman's ρ: Pearson correlation of the tie-averaged ranks.
pub fn spearman(x: &[f32], y: &[f32]) -> f64 {
    if x.len() < 2 || x.len() != y.len() {
        return f64::NAN;
    }
    let (rx, ry) = (ranks(x), ranks(y));
    let n = rx.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 { f64::NAN } else { sxy / (sxx * syy).sqrt() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_ranked_by_sign_disagreement_then_rank_correlation() {
        let mut log = String::from("{\"vantage\": 1}\n");
        for (g, rewards) in [("agree", [1, 0]), ("part", [1, 0]), ("flip", [1, 0])] {
            for (i, r) in rewards.iter().enumerate() {
                log.push_str(&format!(
                    "{{\"type\": \"trajectory\", \"id\": \"{g}{i}\", \"group\": \"{g}\", \"outcome\": {{\"reward\": {r}}}, \"steps\": [{{\"action\": \"a\"}}, {{\"action\": \"b\"}}]}}\n"
                ));
            }
        }
        let run = crate::load::load_bytes("g", log.as_bytes(), &mut crate::load::LoadReport::new("g")).unwrap();
        // Per group, four steps: A is the same everywhere; B agrees, flips one sign, flips all.
        let a = [1.0f32, 1.0, -1.0, -1.0];
        let b: Vec<f32> = [[1.0f32, 1.0, -1.0, -1.0], [1.0, -1.0, -1.0, -1.0], [-1.0, -1.0, 1.0, 1.0]].concat();
        let a: Vec<f32> = a.repeat(3);
        let ranked = groups_by_disagreement(&run, &a, &b, [1e-5, 1e-5]);
        let names: Vec<&str> = ranked.iter().map(|g| run.group_key(g.group)).collect();
        assert_eq!(names, ["flip", "part", "agree"]);
        assert_eq!((ranked[0].steps, ranked[0].sign_disagreement), (4, 1.0));
        assert!((ranked[1].sign_disagreement - 0.25).abs() < 1e-12);
    }

    #[test]
    fn rounding_noise_of_a_zero_variance_group_is_named_not_counted_as_a_difference() {
        // slime's own advantage on sixteen rewards of 0.9 is -0.0596, a recomputation's +0.1192:
        // noise of a group whose rewards are all equal. A group of mixed rewards differing by as
        // much is a real difference.
        let mut log = String::from("{\"vantage\": 1}\n");
        for i in 0..16 {
            log.push_str(&format!(
                "{{\"type\": \"trajectory\", \"id\": \"e{i}\", \"group\": \"equal\", \"outcome\": {{\"reward\": 0.9}}, \"steps\": [{{\"action\": \"a\"}}]}}\n"
            ));
        }
        for (i, r) in [0.0, 1.0].iter().enumerate() {
            log.push_str(&format!(
                "{{\"type\": \"trajectory\", \"id\": \"m{i}\", \"group\": \"mixed\", \"outcome\": {{\"reward\": {r}}}, \"steps\": [{{\"action\": \"a\"}}]}}\n"
            ));
        }
        let run = crate::load::load_bytes("noise", log.as_bytes(), &mut crate::load::LoadReport::new("noise")).unwrap();
        let n = run.num_path_steps();
        let logged: Vec<f32> = (0..n).map(|p| if p < 16 { -0.0596 } else { 0.5 }).collect();
        let recomputed: Vec<f32> = (0..n).map(|p| if p < 16 { 0.1192 } else { 0.6 }).collect();
        let c = Comparison::of(&run, &logged, &recomputed);
        assert_eq!((c.zero_variance_noise, c.num_differing, c.most_different.len()), (16, 2, 2));
        assert!((zero_variance_noise(0.9, 16) - 0.8047).abs() < 1e-3, "{}", zero_variance_noise(0.9, 16));
    }

    #[test]
    fn credit_that_changes_along_a_rollout_of_a_zero_variance_group_is_a_difference_not_noise() {
        // Two rollouts of equal rewards, three steps each: GRPO gives 0; a turn-level scheme gives
        // each turn a small credit of its own (0.05, 0.02, -0.03), within the noise bound of the
        // group (0.06) but changing along the rollout: six real differences.
        let mut log = String::from("{\"vantage\": 1}\n");
        for i in 0..2 {
            log.push_str(&format!(
                "{{\"type\": \"trajectory\", \"id\": \"e{i}\", \"group\": \"equal\", \"outcome\": {{\"reward\": 1}}, \"steps\": [{{\"action\": \"a\"}}, {{\"action\": \"b\"}}, {{\"action\": \"c\"}}]}}\n"
            ));
        }
        let run = crate::load::load_bytes("turns", log.as_bytes(), &mut crate::load::LoadReport::new("turns")).unwrap();
        assert!(zero_variance_noise(1.0, 2) > 0.05);
        let grpo = vec![0.0f32; 6];
        let turns = [0.05f32, 0.02, -0.03, 0.05, 0.02, -0.03];
        let c = Comparison::of(&run, &grpo, &turns);
        assert_eq!((c.zero_variance_noise, c.num_differing), (0, 6));
        // The same credit on every step of a rollout stays noise.
        let c = Comparison::of(&run, &grpo, &[0.05f32; 6]);
        assert_eq!((c.zero_variance_noise, c.num_differing), (6, 0));
    }

    #[test]
    fn spearman_of_monotone_and_reversed_and_tied() {
        assert!((spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 300.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        // Ties: ranks [1.5, 1.5, 3] vs [1, 2, 3] → ρ = 0.866.
        assert!((spearman(&[1.0, 1.0, 2.0], &[1.0, 2.0, 3.0]) - 0.866_025).abs() < 1e-5);
        assert!(spearman(&[1.0, 1.0], &[1.0, 2.0]).is_nan());
    }

    #[test]
    fn disagreements_are_named_by_sign_role_and_outcome() {
        use Disagreement as D;
        assert_eq!(D::classify(1.0, -1.0, "regression", true), Some(D::ReinforcedRegression));
        assert_eq!(D::classify(1.0, -1.0, "", true), Some(D::LuckyStep));
        assert_eq!(D::classify(1.0, -1.0, "", false), Some(D::ReinforcedRegression));
        assert_eq!(D::classify(-1.0, 1.0, "exploration", false), Some(D::PunishedExploration));
        assert_eq!(D::classify(-1.0, 1.0, "", true), Some(D::PunishedGoodStep));
        assert_eq!(D::classify(1.0, 2.0, "regression", true), None);
        assert_eq!(D::classify(1.0, f32::NAN, "", true), None);
    }

    #[test]
    fn a_shared_tree_node_is_listed_once() {
        use crate::load::{LoadReport, load_bytes};
        let log = r#"{"vantage": 1}
{"type": "tree", "id": "t", "group": "g", "nodes": [{"id": "r", "thought": "shared"}, {"id": "a", "parent": "r", "thought": "a", "outcome": {"reward": 1}}, {"id": "b", "parent": "r", "thought": "b", "outcome": {"reward": 1}}]}
"#;
        let run = load_bytes("t.jsonl", log.as_bytes(), &mut LoadReport::new("t.jsonl")).expect("loads");
        let n = run.trajectories.path_nodes.len();
        assert_eq!(n, 4);
        let c = Comparison::of(&run, &vec![1.0; n], &vec![-1.0; n]);
        let listed: usize = c.disagreements.values().map(Vec::len).sum();
        // Two paths of two steps: the root once, each leaf once.
        assert_eq!(listed, 3);
        assert!((c.sign_disagreement - 1.0).abs() < 1e-12);
    }

    #[test]
    fn credit_by_length_gives_each_rollouts_length_turns_and_mean_credit() {
        use crate::load::{LoadReport, load_bytes};
        let log = r#"{"vantage": 1}
{"type": "trajectory", "id": "a", "group": "g", "outcome": {"reward": 1}, "steps": [{"thought": "x"}, {"thought": "y"}]}
{"type": "trajectory", "id": "b", "group": "g", "outcome": {"reward": 0}, "steps": [{"thought": "z"}]}
"#;
        let run = load_bytes("t.jsonl", log.as_bytes(), &mut LoadReport::new("t.jsonl")).expect("loads");
        let points = credit_by_length(&run, &[1.0, 3.0, -1.0]);
        assert_eq!(points, vec![[2.0, 2.0, 2.0], [1.0, 1.0, -1.0]]);
        assert!((length_correlation(&points, 0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn rounding_noise_is_no_sign_disagreement() {
        use Disagreement as D;
        // B = −1.2e-7 where B's values reach 1.2: within its tolerance, taken for 0.
        let tolerance = [2.0 * SIGN_TOLERANCE, 1.2 * SIGN_TOLERANCE];
        assert_eq!(D::classify_within(0.8, -1.2e-7, tolerance, "", true), None);
        assert_eq!(D::classify_within(0.8, -0.3, tolerance, "", true), Some(D::LuckyStep));
        assert_eq!(D::classify(0.8, -1.2e-7, "", true), Some(D::LuckyStep));
    }
}
