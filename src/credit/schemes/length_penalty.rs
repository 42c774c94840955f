//! Length / efficiency penalty (`length_penalty`): `r' = r − λ · L / L_max(group)` (tokens when
//! logged, else steps), then GRPO on `r'`: a control that shows how much credit length alone moves.

use crate::credit::kernels::group::normalize_group;
use crate::credit::params::declare::{choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::Run;

scheme!(
    /// Length penalty.
    LengthPenalty,
    knobs: Knobs,
    info: SchemeInfo {
        id: "length_penalty",
        family: Family::Control,
        display_name: "Length penalty",
        citation: "efficiency penalties on response length (e.g. Kimi k1.5 length reward, DAPO overlong shaping), in their simplest linear form",
        needs: "outcome rewards",
        source: SourceQuality::Approximate("a linear penalty; trainers' exact shaping differs"),
        checked: "its definition (tests/it/process_credit.rs)",
    },
);

choice! {
    enum Unit { Auto = "auto", Tokens = "tokens", Steps = "steps" }
}

params! {
    pub struct Knobs {
        lambda: f64 = range(0.0, 5.0, "0.2", "penalty for the longest rollout of the group"),
        unit: Unit = decl("auto", "length in tokens (when logged) or steps"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "added to the group std"),
    }
}

impl Typed for LengthPenalty {
    fn supports(&self, run: &Run) -> Support {
        crate::credit::engine::inputs::supports_outcomes(run)
    }
    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let tr = &run.trajectories;
        let tokens = match knobs.unit {
            Unit::Tokens => true,
            Unit::Steps => false,
            Unit::Auto => run.tokens.len > 0,
        };
        let length =
            |t: crate::model::TrajectoryId| if tokens { tr.token_range(t).len() } else { tr.num_steps(t) } as f32;
        let lambda = knobs.lambda as f32;
        let eps = knobs.epsilon as f32;
        let mut terms = Terms::for_rows(
            "(r' − mean)/(std + ε), r' = r − λ·L/L_max, mean and std of r' over the group",
            &["r", "L", "L_max", "r'", "mean", "std", "ε"],
            tr.len(),
        );
        // Runs of consecutive groups on their own threads (`par::by_groups`).
        let (step, _) = crate::credit::engine::par::by_groups(run, &mut terms, |groups, step, terms| {
            for g in groups.map(crate::model::GroupId::from_index) {
                let members = run.groups.members(g);
                let max_len = members.iter().map(|&t| length(t)).fold(1.0f32, f32::max);
                let shaped: Vec<f32> =
                    members.iter().map(|&t| tr.reward[t.index()] - lambda * length(t) / max_len).collect();
                let (advantages, (mean, std)) = normalize_group(&shaped, eps);
                for ((&t, &r), &a) in members.iter().zip(&shaped).zip(&advantages) {
                    step.fill(tr.path_range(t), a);
                    let row = [tr.reward[t.index()], length(t), max_len, r, mean, std, eps].map(f64::from);
                    terms.set(t.index(), &row);
                }
            }
        });
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}
