//! LeTS (`lets`): step rewards rescale the GRPO outcome advantage per segment. A step reward per
//! search call comes from the retrieved documents (knowledge redundancy for the group's best
//! rollouts, knowledge match against a better rollout for the others) or from a logged step score;
//! it is z-scored within the trajectory and segment `k` gets `A·(1 + γ·z_k)` (`A ≥ 0`) or
//! `A·(1 − γ·z_k)` (`A < 0`); the answer segment keeps `A`.

use crate::credit::engine::inputs::Score;
use crate::credit::engine::inputs::score_column;
use crate::credit::kernels::group::normalize_group;
use crate::credit::params::declare::{GROUP, choice, decl, params, range};
use crate::credit::scheme::{StepAt, StepTerms, scheme};
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{NodeId, Run, Sym, TrajectoryId};

scheme!(
    /// LeTS.
    Lets,
    knobs: Knobs,
    info: SchemeInfo {
        id: "lets",
        family: Family::Hybrid,
        display_name: "LeTS (stepwise rescaling)",
        citation: "LeTS: Learning to Think-and-Search via process-and-outcome reward hybridization (compute_hybrid_grpo_advantage, lets reward manager)",
        needs: "outcome rewards and either retrieved `docs` on search steps or a named step score",
        source: SourceQuality::FromCode(
            "Cheungki/LeTS@9ab6e26ea63b41506d80233db19661ca2d200d66 (per step: segment k = the steps up to search call k)",
        ),
        checked: "LeTS's own code (tests/golden/lets/cases.json, made by its generate.py from LeTS 9ab6e26: self-check, knowledge match with ties, no perfect rollout, γ); the worked example of reference/credit-schemes-process.md",
    },
);

choice! {
    enum StepReward { Docs = "docs", Score = "score" }
}

params! {
    pub struct Knobs {
        gamma: f64 = range(0.0, 5.0, "1", "hybrid ratio γ (the code reuses algorithm.gamma)"),
        step_reward: StepReward = decl("docs", "step rewards from retrieved documents (the code's reward manager) or a logged step score"),
        score_param: Score = GROUP,
        redundancy: bool = decl("true", "best rollouts: s_k = 1 − max Jaccard with earlier retrievals"),
        r#match: bool = decl("true", "other rollouts (only when the group's best scores 1): best Jaccard matching against a better rollout"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "added to the group std (outcome) and the step std (z)"),
    }
}

/// Jaccard similarity of two document sets (0 when both are empty).
fn jaccard(a: &[Sym], b: &[Sym]) -> f64 {
    let inter = a.iter().filter(|d| b.contains(d)).count();
    let union = a.len() + b.len() - inter;
    if union == 0 { 0.0 } else { inter as f64 / union as f64 }
}

/// Maximum-weight one-to-one assignment of rows to columns (Hungarian algorithm); the weight each
/// row gets (0 when unmatched).
fn best_assignment(weight: &[Vec<f64>]) -> Vec<f64> {
    let rows = weight.len();
    let cols = weight.first().map_or(0, Vec::len);
    let n = rows.max(cols);
    if n == 0 {
        return Vec::new();
    }
    let cost = |i: usize, j: usize| -> f64 { if i < rows && j < cols { -weight[i][j] } else { 0.0 } };
    // e-maxx formulation, 1-based with a virtual column 0.
    let (mut u, mut v) = (vec![0.0f64; n + 1], vec![0.0f64; n + 1]);
    let (mut p, mut way) = (vec![0usize; n + 1], vec![0usize; n + 1]);
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0;
        let mut minv = vec![f64::INFINITY; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let (mut delta, mut j1) = (f64::INFINITY, 0);
            for j in 1..=n {
                if !used[j] {
                    let cur = cost(i0 - 1, j - 1) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut out = vec![0.0; rows];
    for j in 1..=n {
        let i = p[j];
        if i >= 1 && i <= rows && j <= cols {
            out[i - 1] = weight[i - 1][j - 1];
        }
    }
    out
}

/// Knowledge redundancy: `s_1 = 1`, `s_k = 1 − max_{j<k} J(D_k, D_j)`.
fn redundancy(sets: &[&[Sym]]) -> Vec<f64> {
    (0..sets.len()).map(|k| 1.0 - (0..k).map(|j| jaccard(sets[k], sets[j])).fold(0.0, f64::max)).collect()
}

/// The search-call steps of a trajectory (path positions whose node retrieved documents).
fn search_steps(run: &Run, path: &[NodeId]) -> Vec<usize> {
    path.iter().enumerate().filter(|(_, n)| !run.nodes.docs(**n).is_empty()).map(|(k, _)| k).collect()
}

/// The z of the segment that path step `position` of trajectory `t` closes or lies in, as
/// `compute` scales it; `None` for the answer segment and a path with nothing to scale.
fn segment_z(run: &Run, knobs: &Knobs, t: TrajectoryId, k: usize) -> Option<f64> {
    let tr = &run.trajectories;
    let path = tr.path(t);
    if knobs.step_reward != StepReward::Docs {
        // Every step but the last is a segment, z-scored by its score within the path.
        let column = score_column(run, knobs.score_param.score, "lets").ok()?;
        let segments = &path[..path.len() - 1];
        let scores: Vec<f64> = segments.iter().map(|n| f64::from(column[n.index()])).collect();
        let (mean, std) = score_moments(&scores)?;
        return scores.get(k).map(|&x| (x - mean) / (std + knobs.epsilon));
    }
    // Segments end at the search-call steps, z-scored by their document rewards.
    if run.nodes.doc_values.is_empty() {
        return None;
    }
    let members = run.groups.members(tr.group[t.index()]);
    let i = members.iter().position(|&m| m == t)?;
    let rewards = doc_rewards(run, members, knobs).swap_remove(i)?;
    let z = zscores(&rewards, knobs.epsilon).filter(|_| rewards.iter().all(|v| v.is_finite()))?;
    let ends = search_steps(run, path);
    let segment = ends.iter().position(|&end| k <= end)?;
    z.get(segment).copied()
}

/// Step rewards from documents for every trajectory of one group, as the LeTS reward manager
/// gives them: `None` where the trajectory gets none.
fn doc_rewards(run: &Run, members: &[TrajectoryId], knobs: &Knobs) -> Vec<Option<Vec<f64>>> {
    let tr = &run.trajectories;
    let score = |t: TrajectoryId| tr.reward[t.index()];
    let best = members.iter().map(|&t| score(t)).filter(|r| !r.is_nan()).fold(f32::NEG_INFINITY, f32::max);
    let sets = |t: TrajectoryId| -> Vec<&[Sym]> {
        let path = tr.path(t);
        search_steps(run, path).into_iter().map(|k| run.nodes.docs(path[k])).collect()
    };
    members
        .iter()
        .map(|&t| {
            let r = score(t);
            if r.is_nan() || r <= 0.0 {
                return None;
            }
            if r == best {
                return knobs.redundancy.then(|| redundancy(&sets(t)));
            }
            if !knobs.r#match || best < 1.0 {
                return None;
            }
            let own = sets(t);
            // From zeros, the first better rollout (in group order) whose matching sums higher
            // than the one kept so far: a tie keeps the earlier, as the reward manager does.
            let zeros = vec![0.0; own.len()];
            let best_match = members.iter().filter(|&&o| score(o) > r).fold(zeros, |kept, &o| {
                let other = sets(o);
                let weight: Vec<Vec<f64>> = own.iter().map(|a| other.iter().map(|b| jaccard(a, b)).collect()).collect();
                let here = best_assignment(&weight);
                if here.iter().sum::<f64>() > kept.iter().sum::<f64>() { here } else { kept }
            });
            Some(best_match)
        })
        .collect()
}

/// Mean and unbiased std (as torch) of a trajectory's segment scores; `None` with fewer than two
/// or with a missing (non-finite) score. Sums in four lanes (a path is short; a serial sum would
/// wait on every add).
fn score_moments(s: &[f64]) -> Option<(f64, f64)> {
    if s.len() < 2 || !s.iter().all(|v| v.is_finite()) {
        return None;
    }
    let n = s.len() as f64;
    let mean = crate::credit::data::moments::lane_sum(s, |v| v) / n;
    let var = crate::credit::data::moments::lane_sum(s, |v| (v - mean) * (v - mean)) / (n - 1.0);
    Some((mean, var.sqrt()))
}

/// Within-trajectory z-scores (unbiased std, as torch); `None` with fewer than two steps.
fn zscores(s: &[f64], eps: f64) -> Option<Vec<f64>> {
    if s.len() < 2 {
        return None;
    }
    let n = s.len() as f64;
    let mean = s.iter().sum::<f64>() / n;
    let std = (s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt();
    Some(s.iter().map(|x| (x - mean) / (std + eps)).collect())
}

impl Typed for Lets {
    fn supports(&self, run: &Run) -> Support {
        let has_docs = !run.nodes.doc_values.is_empty();
        let has_scores = crate::credit::engine::inputs::SCORE_NAMES.iter().any(|n| run.nodes.scores.contains_key(*n));
        crate::credit::engine::inputs::supports_outcomes(run).and(|| {
            Support::when(has_docs || has_scores, "needs retrieved `docs` on search steps or a named step score")
        })
    }
    fn step_terms(&self, run: &Run, knobs: &Knobs, _: &Credit, at: StepAt) -> StepTerms {
        let z = segment_z(run, knobs, at.t, at.k);
        vec![("z_k (0: not a scaled segment)".to_owned(), Some(z.unwrap_or(0.0)))]
    }

    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let tr = &run.trajectories;
        let gamma = knobs.gamma;
        let eps = knobs.epsilon;
        let from_docs = knobs.step_reward == StepReward::Docs;
        let column = if from_docs { None } else { Some(score_column(run, knobs.score_param.score, "lets")?) };
        let mut terms = Terms::for_rows(
            "segment k: A·(1 + γ·z_k) if A ≥ 0, A·(1 − γ·z_k) if A < 0; answer segment: A",
            &["A", "γ", "segments scaled"],
            tr.len(),
        );
        // The group advantage of every trajectory (and, from documents, its step rewards) first;
        // then one pass in path order writes each step once.
        let mut advantage = vec![f32::NAN; tr.len()];
        // A run without retrieved documents has no search steps: no segments to scale.
        let from_docs = from_docs && !run.nodes.doc_values.is_empty();
        let mut doc_steps: Vec<Option<Vec<f64>>> = if from_docs { vec![None; tr.len()] } else { Vec::new() };
        let mut rewards = Vec::new();
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            rewards.clear();
            rewards.extend(members.iter().map(|t| tr.reward[t.index()]));
            let (group_advantage, _) = normalize_group(&rewards, eps as f32);
            for (&t, a) in members.iter().zip(group_advantage) {
                advantage[t.index()] = a;
            }
            if from_docs {
                for (&t, s) in members.iter().zip(doc_rewards(run, members, knobs)) {
                    doc_steps[t.index()] = s;
                }
            }
        }
        // Runs of consecutive trajectories on their own threads (`par::by_trajectories`).
        let (step, _) = crate::credit::engine::par::by_trajectories(run, &mut terms, |ts, step, terms| {
            let (mut ends, mut scores) = (Vec::new(), Vec::new());
            for t in ts.map(crate::model::TrajectoryId::from_index) {
                let path = tr.path(t);
                let range = tr.path_range(t);
                let a = f64::from(advantage[t.index()]);
                let factor = |z: f64| if a >= 0.0 { 1.0 + gamma * z } else { 1.0 - gamma * z };
                let scaled = match column {
                    // Every step but the last is a segment, scaled by its score's z within the path.
                    Some(column) => {
                        let segments = &path[..path.len().saturating_sub(1)];
                        scores.clear();
                        scores.extend(segments.iter().map(|n| f64::from(column[n.index()])));
                        if let Some((mean, std)) = score_moments(&scores) {
                            let inv = 1.0 / (std + eps);
                            let values = scores.iter().map(|&x| (a * factor((x - mean) * inv)) as f32);
                            step.write(range, values.chain(std::iter::once(a as f32)));
                            segments.len()
                        } else {
                            step.fill(range, a as f32);
                            0
                        }
                    }
                    // Segments end at the search-call steps.
                    None if !from_docs => {
                        step.fill(range, a as f32);
                        0
                    }
                    None => {
                        ends.clear();
                        ends.extend(search_steps(run, path));
                        let s = doc_steps[t.index()].as_deref().filter(|s| s.iter().all(|v| v.is_finite()));
                        let z = s.and_then(|s| zscores(s, eps)).unwrap_or_default();
                        let mut start = 0;
                        for (&end, &z) in ends.iter().zip(&z) {
                            step.fill(range.start + start..range.start + end + 1, (a * factor(z)) as f32);
                            start = end + 1;
                        }
                        step.fill(range.start + start..range.end, a as f32);
                        z.len().min(ends.len())
                    }
                };
                terms.set(t.index(), &[a, gamma, scaled as f64]);
            }
        });
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_z_scores() {
        // Best rollout with D = [{d1, d2}, {d2, d3}, {d4}]: s = [1, .667, 1], z = [.577, −1.155, .577].
        let (d1, d2, d3, d4) = (Sym::from_index(1), Sym::from_index(2), Sym::from_index(3), Sym::from_index(4));
        let sets: [&[Sym]; 3] = [&[d1, d2], &[d2, d3], &[d4]];
        let s = redundancy(&sets);
        assert!((s[0] - 1.0).abs() < 1e-9 && (s[1] - 2.0 / 3.0).abs() < 1e-9 && (s[2] - 1.0).abs() < 1e-9);
        let z = zscores(&s, 1e-6).expect("three steps");
        let a = 1.0;
        let segments: Vec<f64> = z.iter().map(|z| a * (1.0 + z)).collect();
        for (got, want) in segments.iter().zip([1.577, -0.155, 1.577]) {
            assert!((got - want).abs() < 1e-3, "{segments:?}");
        }
    }

    #[test]
    fn assignment_is_optimal() {
        // Greedy would take 0.9 (row 0 → col 0) and leave row 1 with 0.1; the optimum is 0.8 + 0.8.
        let w = vec![vec![0.9, 0.8], vec![0.8, 0.1]];
        let got = best_assignment(&w);
        assert!((got.iter().sum::<f64>() - 1.6).abs() < 1e-9, "{got:?}");
        // More rows than columns: one row stays unmatched with 0.
        let w = vec![vec![0.5], vec![0.7], vec![0.2]];
        let got = best_assignment(&w);
        assert_eq!(got, vec![0.0, 0.7, 0.0]);
    }
}
