//! Null-reward controls (`null_reward`): GRPO on rewards that carry no information about the
//! steps — shuffled within the group, random with the group's success rate, or the format score
//! alone — with a seed, so a user can see how large a credit difference is by chance.

use crate::credit::kernels::group::normalize_group;
use crate::credit::params::declare::{choice, decl, params, range};
use crate::credit::scheme::scheme;
use crate::credit::{Credit, CreditError, Family, SchemeInfo, SourceQuality, Support, Terms, Typed};
use crate::model::Run;

scheme!(
    /// Null-reward controls.
    NullReward,
    knobs: Knobs,
    info: SchemeInfo {
        id: "null_reward",
        family: Family::Control,
        display_name: "Null-reward control",
        citation: "spurious-reward controls (Shao et al. 2025, Spurious Rewards: random and format-only rewards)",
        needs: "outcome rewards (format-only: an outcome component `format`)",
        source: SourceQuality::Approximate("a control built for comparison, not a trainer's estimator"),
        checked: "its definition (tests/it/process_credit.rs)",
    },
);

choice! {
    enum Mode { Shuffle = "shuffle", Random = "random", FormatOnly = "format_only" }
}

params! {
    pub struct Knobs {
        mode: Mode = decl("shuffle", "shuffle rewards within each group, draw random 0/1 rewards at the group's rate, or use the `format` component"),
        seed: i64 = range(0.0, 1000000.0, "0", "random seed"),
        epsilon: f64 = range(0.0, 1.0, "0.000001", "added to the group std"),
    }
}

/// The `SplitMix64` mixing step.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Typed for NullReward {
    fn batch_wide(&self, _: &Knobs) -> Option<&'static str> {
        Some("draws its null rewards from each trajectory's and group's place in the run")
    }

    fn supports(&self, run: &Run) -> Support {
        crate::credit::engine::inputs::supports_outcomes(run)
    }
    fn credit(&self, run: &Run, knobs: &Knobs, _explain: bool) -> Result<Credit, CreditError> {
        let tr = &run.trajectories;
        let seed = knobs.seed as u64;
        let eps = knobs.epsilon as f32;
        let mode = knobs.mode;
        let format = tr.components.get("format");
        if mode == Mode::FormatOnly && format.is_none() {
            return Err(CreditError::Unsupported {
                scheme: "null_reward".to_owned(),
                reason: "mode=format_only needs an outcome component `format`".to_owned(),
            });
        }
        let mut terms = Terms::for_rows(
            format!("(null reward − mean)/(std + ε) over the group, {mode} rewards (seed {seed})"),
            &["null reward", "logged reward", "mean", "std", "ε"],
            tr.len(),
        );
        // Runs of consecutive groups on their own threads (`par::by_groups`).
        let (step, _) = crate::credit::engine::par::by_groups(run, &mut terms, |groups, step, terms| {
            for g in groups.map(crate::model::GroupId::from_index) {
                let members = run.groups.members(g);
                let logged: Vec<f32> = members.iter().map(|t| tr.reward[t.index()]).collect();
                let null: Vec<f32> = match mode {
                    Mode::FormatOnly => members.iter().map(|t| format.map_or(f32::NAN, |f| f[t.index()])).collect(),
                    Mode::Random => {
                        let valid: Vec<f32> = logged.iter().copied().filter(|r| !r.is_nan()).collect();
                        let rate = if valid.is_empty() { 0.5 } else { valid.iter().sum::<f32>() / valid.len() as f32 };
                        members
                            .iter()
                            .map(|t| {
                                f32::from(u8::from(
                                    ((mix(seed ^ (t.0 as u64) << 20) >> 40) as f32 / (1u64 << 24) as f32) < rate,
                                ))
                            })
                            .collect()
                    }
                    Mode::Shuffle => {
                        // Fisher–Yates with the seed and the group as the stream.
                        let mut shuffled = logged.clone();
                        let mut state = seed ^ (u64::from(g.0) << 32);
                        for i in (1..shuffled.len()).rev() {
                            state = mix(state);
                            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
                        }
                        shuffled
                    }
                };
                let (advantages, (mean, std)) = normalize_group(&null, eps);
                for (((&t, &r), &l), &a) in members.iter().zip(&null).zip(&logged).zip(&advantages) {
                    step.fill(tr.path_range(t), a);
                    terms.set(t.index(), &[r, l, mean, std, eps].map(f64::from));
                }
            }
        });
        Ok(Credit { step, token: None, token_returns: None, terms, level: Some(crate::credit::Level::Step) })
    }
}
