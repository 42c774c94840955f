//! GRPO pass@k (`grpo_passk`, arXiv 2503.19595): only the best rollout of a group gets credit,
//! `r_max − r_2nd`, optionally divided by the group std.

use crate::credit::data::batch::{Batch, Output};
use crate::credit::data::moments::mean_std;
use crate::credit::data::real::Real;
use crate::credit::engine::inputs::Common;
use crate::credit::engine::inputs::supports_rewards;
use crate::credit::params::declare::{GROUP, decl, params, range};
use crate::credit::scheme::estimator;
use crate::credit::{CreditError, Family, Preset, SchemeInfo, SourceQuality, Terms};

params! {
    pub struct Knobs {
        norm_by_std: bool = decl("true", "divide r_max − r_2nd by the group std + ε (read from the algorithm config)"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "std offset"),
        common: Common = GROUP,
    }
}

estimator!(
    GrpoPassk,
    kernel: kernel,
    info: SchemeInfo {
        id: "grpo_passk",
        family: Family::Outcome,
        display_name: "GRPO pass@k",
        citation: "Chen et al. 2025, pass@k training (arXiv 2503.19595); verl compute_grpo_passk_outcome_advantage",
        needs: "outcome rewards; every group of at least 2 rollouts",
        source: SourceQuality::FromCode(crate::credit::VERL_AT),
        checked: "verl's own outputs (golden/verl, tests/it/golden_verl.rs)",
    },
    params: Knobs,
    presets: [Preset { name: "verl", values: &[("norm_by_std", "true"), ("epsilon", "0.000001")], doc: "verl grpo_passk" }],
    supports: supports_rewards
);

fn kernel<F: Real>(batch: &Batch<'_, F>, knobs: &Knobs) -> Result<Output<F>, CreditError> {
    let scores = batch.scores();
    let eps = F::of(knobs.epsilon);
    let norm = knobs.norm_by_std;
    let mut advantage = vec![F::ZERO; scores.len()];
    let mut terms = Terms::for_rows(
        if norm { "best row: (r_max − r_2nd)/(std + ε); others 0" } else { "best row: r_max − r_2nd; others 0" },
        &["r", "r_max", "r_2nd", "std", "ε", "best row (1: yes)"],
        scores.len(),
    );
    for rows in batch.group_rows().iter() {
        if rows.len() < 2 {
            return Err(CreditError::Failed {
                scheme: "grpo_passk".to_owned(),
                reason: "Pass@k requires at least 2 samples per group (verl raises here)".to_owned(),
            });
        }
        // torch.topk(s, 2): the first maximum, then the largest of the rest.
        let best = rows.iter().copied().fold(rows[0], |b, i| if scores[i] > scores[b] { i } else { b });
        let second = rows
            .iter()
            .copied()
            .filter(|&i| i != best)
            .map(|i| scores[i])
            .fold(None, |m: Option<F>, x| Some(m.map_or(x, |m| m.max(x))));
        let (r_max, r_2nd) = (scores[best], second.unwrap_or(scores[best]));
        let group: Vec<F> = rows.iter().map(|&i| scores[i]).collect();
        let (_, std) = mean_std(&group, true);
        let gap = r_max - r_2nd;
        advantage[best] = if norm { gap / (std + eps) } else { gap };
        for &i in rows {
            let is_best = if i == best { 1.0 } else { 0.0 };
            terms.set(i, &[scores[i].f64(), r_max.f64(), r_2nd.f64(), std.f64(), eps.f64(), is_best]);
        }
    }
    Ok(Output { advantages: batch.broadcast(&advantage), returns: None, terms })
}
