//! GRPO-CARE (`grpo_care`): a consistency bonus added to the reward before GRPO. Accurate rollouts
//! whose answer the reference model finds about as likely as the other accurate ones get
//! `λ · acc`; the answer's likelihood is `exp(Σ ref logprob / (n + 1e-6))` over the answer span.

use crate::credit::kernels::group::normalize_group;
use crate::credit::params::declare::{params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::{NodeId, Run, TrajectoryId};

scheme!(
    /// GRPO-CARE.
    GrpoCare,
    knobs: Knobs,
    info: SchemeInfo {
        id: "grpo_care",
        family: Family::Control,
        display_name: "GRPO-CARE (consistency bonus)",
        citation: "Chen et al. 2025, GRPO-CARE (arXiv 2506.16141); TencentARC/GRPO-CARE grpo_trainer_ref_ema.py, CARE block",
        needs: "outcome rewards, token reference logprobs, and token spans on the answer step (kind `answer`, else the last step)",
        source: SourceQuality::FromCode("TencentARC/GRPO-CARE@b0628fcca665042c6812fc65596cbaf7b2fac886"),
        checked: "GRPO-CARE's own code (tests/golden/grpo_care/cases.json, made by its generate.py from GRPO-CARE b0628fc: its CARE block and group normalization, bonus, margin, cap, empty answer spans, no accurate sample); the worked example of reference/credit-schemes-process.md",
    },
);

params! {
    pub struct Knobs {
        bonus: f64 = range(0.0, 5.0, "0.5", "λ, the bonus coefficient (the script uses 0.5, the code default 1.0)"),
        margin: f64 = range(0.0, 1.0, "0.01", "how far below the accurate rollouts' mean confidence still counts as consistent"),
        confidence_cap: f64 = range(0.0, 1.0, "0.95", "upper bound of the answer likelihood"),
        accurate_threshold: f64 = range(0.0, 1.0, "0.1", "acc above this (and at least the group mean) is accurate"),
        epsilon: f64 = range(0.0, 1.0, "0.0001", "added to the group std (TRL-based code: 1e-4)"),
    }
}

/// The answer step of a trajectory: the last step of kind `answer`, else the last step.
fn answer_step(run: &Run, t: TrajectoryId) -> Option<NodeId> {
    let path = run.trajectories.path(t);
    path.iter()
        .rev()
        .copied()
        .find(|&n| run.label(run.nodes.kind[n.index()]) == "answer")
        .or_else(|| path.last().copied())
}

impl Typed for GrpoCare {
    fn supports(&self, run: &Run) -> Support {
        crate::credit::engine::inputs::supports_outcomes(run)
            .and(|| Support::when(run.tokens.ref_logprob.is_some(), "needs token reference logprobs (`ref_logprob`)"))
    }
    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let Some(ref_logprob) = run.tokens.ref_logprob.as_ref() else {
            return Err(CreditError::Unsupported {
                scheme: "grpo_care".to_owned(),
                reason: "needs token reference logprobs".to_owned(),
            });
        };
        let tr = &run.trajectories;
        let cap = knobs.confidence_cap as f32;
        let confidence = |t: TrajectoryId| -> f32 {
            let tokens = tr.token_range(t);
            let span = answer_step(run, t).and_then(|n| run.nodes.token_span(n));
            let (sum, n) = span.map_or((0.0f64, 0usize), |[start, end]| {
                let range = tokens.start + start as usize..tokens.start + end as usize;
                (range.clone().map(|k| f64::from(ref_logprob.get(k).copied().unwrap_or(0.0))).sum(), range.len())
            });
            ((sum / (n as f64 + 1e-6)).exp() as f32).min(cap)
        };
        let acc_column = tr.components.get("acc");
        let (bonus, margin, threshold, eps) =
            (knobs.bonus as f32, knobs.margin as f32, knobs.accurate_threshold as f32, knobs.epsilon as f32);
        let mut step = crate::credit::data::pool::filled(tr.path_nodes.len(), f32::NAN);
        let mut terms = Terms::for_rows(
            "(r' − mean)/(std + ε), r' = r + bonus, bonus = λ·acc when accurate and consistent",
            &["r", "acc", "confidence", "bonus", "mean", "std", "ε"],
            tr.len(),
        );
        for g in run.groups.ids() {
            let members = run.groups.members(g);
            let acc: Vec<f32> =
                members.iter().map(|t| acc_column.map_or(tr.reward[t.index()], |a| a[t.index()])).collect();
            let conf: Vec<f32> = members.iter().map(|&t| confidence(t)).collect();
            let mean_acc = acc.iter().filter(|a| !a.is_nan()).sum::<f32>()
                / acc.iter().filter(|a| !a.is_nan()).count().max(1) as f32;
            let accurate: Vec<bool> = acc.iter().map(|&a| a > threshold && a >= mean_acc).collect();
            let accurate_conf: Vec<f32> = conf.iter().zip(&accurate).filter(|(_, a)| **a).map(|(c, _)| *c).collect();
            let reference = if accurate_conf.is_empty() {
                None
            } else {
                Some(accurate_conf.iter().sum::<f32>() / accurate_conf.len() as f32 - margin)
            };
            let shaped: Vec<f32> = members
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let consistent = reference.is_some_and(|r| conf[i] >= r);
                    let b = if accurate[i] && consistent { bonus * acc[i] } else { 0.0 };
                    tr.reward[t.index()] + b
                })
                .collect();
            let (advantages, (mean, std)) = normalize_group(&shaped, eps);
            for (i, (&t, &a)) in members.iter().zip(&advantages).enumerate() {
                step[tr.path_range(t)].fill(a);
                let b = shaped[i] - tr.reward[t.index()];
                let row = [tr.reward[t.index()], acc[i], conf[i], b, mean, std, eps].map(f64::from);
                terms.set(t.index(), &row);
            }
        }
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}
