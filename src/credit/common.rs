//! What every trainer estimator shares: building a [`Batch`] from a run (per token when tokens are
//! logged, per step otherwise), KL in the reward, and turning kernel output back into [`Credit`].

use super::batch::{Batch, Output};
use super::kl::{KlMode, apply_kl_in_reward};
use super::{Credit, CreditError, ParamSpec, Params, Scheme, Support};
use crate::model::{NodeId, Run};

/// Whether credit was computed per token or per step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// One position per token.
    Token,
    /// One position per step (the outcome at the last step).
    Step,
}

/// A trainer estimator over rows of positions, in `f32` (the trainer's precision) or `f64`.
pub trait TokenKernel: Sync {
    /// Runs in `f32`.
    fn run32(&self, batch: &Batch<f32>, params: &Params) -> Result<Output<f32>, CreditError>;
    /// Runs in `f64`.
    fn run64(&self, batch: &Batch<f64>, params: &Params) -> Result<Output<f64>, CreditError>;
    /// Whether the kernel reads critic values (only then are they gathered into the batch).
    fn uses_values(&self) -> bool {
        false
    }
}

/// Implements [`TokenKernel`] for a scheme type from a generic kernel function.
macro_rules! token_kernel {
    ($ty:ty, $kernel:ident) => {
        $crate::credit::common::token_kernel!($ty, $kernel, false);
    };
    ($ty:ty, $kernel:ident, $uses_values:expr) => {
        impl $crate::credit::TokenKernel for $ty {
            fn run32(
                &self,
                batch: &$crate::credit::Batch<f32>,
                params: &$crate::credit::Params,
            ) -> Result<$crate::credit::Output<f32>, $crate::credit::CreditError> {
                $kernel::<f32>(batch, params)
            }
            fn run64(
                &self,
                batch: &$crate::credit::Batch<f64>,
                params: &$crate::credit::Params,
            ) -> Result<$crate::credit::Output<f64>, $crate::credit::CreditError> {
                $kernel::<f64>(batch, params)
            }
            fn uses_values(&self) -> bool {
                $uses_values
            }
        }
    };
}
pub(crate) use token_kernel;

/// Parameters every trainer estimator has: granularity, reward source and KL in the reward.
pub const COMMON_PARAMS: [ParamSpec; 4] = [
    ParamSpec::choice(
        "level",
        &["auto", "token", "step"],
        "auto",
        "compute per token (needs token arrays) or per step; auto picks token when the run logs tokens",
    ),
    ParamSpec::choice(
        "reward_source",
        &["outcome", "env", "outcome+env"],
        "outcome",
        "per-step rewards at step level: the outcome at the last step, the env rewards, or both",
    ),
    ParamSpec::float(
        "kl_coef",
        0.0,
        10.0,
        "0",
        "β of KL in the reward (0 = off); needs token logprobs and ref logprobs",
    ),
    ParamSpec::choice(
        "kl_mode",
        &["k1", "abs", "k2", "k3"],
        "k1",
        "KL estimator per token: k1 = logp − ref, abs, k2 = ½(logp − ref)², k3 = low-variance KL",
    ),
];

/// Concatenates a scheme's own parameters with [`COMMON_PARAMS`].
pub fn with_common(own: &[ParamSpec]) -> Vec<ParamSpec> {
    own.iter().cloned().chain(COMMON_PARAMS.iter().cloned()).collect()
}

/// The slot of `key` in a small memo (a run has a handful of roles and step kinds), its value
/// computed the first time the key is seen.
pub fn memo_slot<K: PartialEq + Copy, T>(memo: &mut Vec<(K, T)>, key: K, compute: impl FnOnce() -> T) -> usize {
    if let Some(slot) = memo.iter().position(|(k, _)| *k == key) {
        return slot;
    }
    memo.push((key, compute()));
    memo.len() - 1
}

/// The granularity `params` ask for on `run`.
pub fn level(run: &Run, params: &Params) -> Level {
    match params.choice("level") {
        "token" => Level::Token,
        "step" => Level::Step,
        _ if run.tokens.len > 0 => Level::Token,
        _ => Level::Step,
    }
}

/// Whether the run can feed a trainer estimator at all (it needs outcome or per-position rewards).
pub fn supports_rewards(run: &Run) -> Support {
    let has_outcome = run.trajectories.reward.iter().any(|r| !r.is_nan());
    let has_env = run.nodes.env_reward.iter().any(|r| !r.is_nan());
    if has_outcome || has_env || run.tokens.reward.is_some() {
        Support::Yes
    } else {
        Support::No("needs outcome rewards, env rewards or token rewards".to_owned())
    }
}

fn to_f32s(values: &[f32]) -> Vec<f32> {
    values.to_vec()
}

/// Builds the kernel input from a run at `level`, applying KL in the reward when `kl_coef > 0`.
pub fn batch_from_run(run: &Run, params: &Params, level: Level, with_values: bool) -> Result<Batch<f32>, CreditError> {
    let tr = &run.trajectories;
    let mut batch = Batch::<f32> {
        group: tr.group.iter().map(|g| g.0).collect(),
        num_groups: run.groups.len(),
        ..Batch::default()
    };
    let baseline = tr.components.get("greedy_baseline");
    batch.reward_baseline = baseline.map(|b| to_f32s(b));
    match level {
        Level::Token => {
            batch.offsets = tr.token_offsets.iter().map(|&o| o as usize).collect();
            let tk = &run.tokens;
            batch.mask = tk.mask.as_ref().map(|m| m.iter().map(|&b| f32::from(u8::from(b))).collect());
            match &tk.reward {
                Some(r) => batch.reward = Some(r.iter().map(|x| if x.is_nan() { 0.0 } else { *x }).collect()),
                None => batch.row_score = Some(tr.reward.clone()),
            }
            batch.values = if with_values { tk.value.clone() } else { None };
            batch.logprob = tk.logprob.clone();
            batch.ref_logprob = tk.ref_logprob.clone();
            batch.sum_pi_squared = tk.sum_pi_squared.clone();
        }
        Level::Step => {
            batch.offsets = tr.path_offsets.iter().map(|&o| o as usize).collect();
            let env = |k: usize| {
                let r = run.nodes.env_reward[tr.path_nodes[k].index()];
                if r.is_nan() { 0.0 } else { r }
            };
            match params.choice("reward_source") {
                "env" => batch.reward = Some((0..tr.path_nodes.len()).map(env).collect()),
                "outcome+env" => {
                    let mut reward: Vec<f32> = (0..tr.path_nodes.len()).map(env).collect();
                    for t in tr.ids() {
                        let end = tr.path_offsets[t.index() + 1] as usize;
                        if end > 0 && !tr.reward[t.index()].is_nan() {
                            reward[end - 1] += tr.reward[t.index()];
                        }
                    }
                    batch.reward = Some(reward);
                }
                _ => batch.row_score = Some(tr.reward.clone()),
            }
            batch.values = if with_values { step_values(run) } else { None };
        }
    }
    let kl_coef = params.f64("kl_coef");
    // OpenRLHF's placement adds its per-token KL itself, after shaping the sequence advantage.
    if kl_coef > 0.0 && !super::openrlhf::wanted(params) {
        let mode = KlMode::from_name(params.choice("kl_mode")).unwrap_or(KlMode::K1);
        apply_kl_in_reward(&mut batch, kl_coef as f32, mode)
            .map_err(|reason| CreditError::Unsupported { scheme: "kl_in_reward".to_owned(), reason })?;
    }
    Ok(batch)
}

/// Per-step values for step-level GAE: a `value` step score, else the Monte-Carlo mean.
fn step_values(run: &Run) -> Option<Vec<f32>> {
    let tr = &run.trajectories;
    let per_node: &[f32] = match (run.nodes.scores.get("value"), run.nodes.mc_mean.as_ref()) {
        (Some(v), _) => v,
        (None, Some(mc)) => mc,
        (None, None) => return None,
    };
    Some(tr.path_nodes.iter().map(|n| per_node[n.index()]).collect())
}

/// Runs a token kernel on `run` and maps its output to step (and token) credit.
pub fn compute_token_scheme(
    scheme: &dyn Scheme,
    kernel: &dyn TokenKernel,
    run: &Run,
    params: &Params,
) -> Result<Credit, CreditError> {
    let level = level(run, params);
    if level == Level::Token && run.tokens.len == 0 {
        return Err(CreditError::Unsupported {
            scheme: scheme.info().id.to_owned(),
            reason: "level=token needs token arrays; this run has none".to_owned(),
        });
    }
    let batch = batch_from_run(run, params, level, kernel.uses_values())?;
    let output = kernel.run32(&batch, params)?;
    drop(batch);
    Ok(match level {
        Level::Step => Credit {
            step: {
                if let Some(returns) = output.returns {
                    super::pool::give(returns);
                }
                output.advantages
            },
            token: None,
            token_returns: None,
            terms: output.terms,
            level: Some(Level::Step),
        },
        Level::Token => Credit {
            step: step_from_tokens(run, &output.advantages),
            token: Some(output.advantages),
            token_returns: output.returns,
            terms: output.terms,
            level: Some(Level::Token),
        },
    })
}

/// Step credit from token credit: the mean over the step's policy tokens (its `token_span`); steps
/// without policy tokens get `NaN`; a trajectory whose steps have no spans gives every step the mean
/// over all its policy tokens.
pub fn step_from_tokens(run: &Run, token: &[f32]) -> Vec<f32> {
    let tr = &run.trajectories;
    let mask = run.tokens.mask.as_ref();
    let mut out = super::pool::filled(tr.path_nodes.len(), f32::NAN);
    let mean = |range: std::ops::Range<usize>| {
        let (mut sum, mut count) = (0.0f64, 0u32);
        for t in range {
            if mask.is_none_or(|m| m.get(t).copied().unwrap_or(true)) {
                sum += f64::from(token.get(t).copied().unwrap_or(f32::NAN));
                count += 1;
            }
        }
        if count == 0 { f32::NAN } else { (sum / f64::from(count)) as f32 }
    };
    for t in tr.ids() {
        let tokens = tr.token_range(t);
        let offset = tr.path_offsets[t.index()] as usize;
        let path: &[NodeId] = tr.path(t);
        let any_span = path.iter().any(|&n| run.nodes.token_span(n).is_some());
        let whole = if any_span { f32::NAN } else { mean(tokens.clone()) };
        for (k, &node) in path.iter().enumerate() {
            out[offset + k] = match run.nodes.token_span(node) {
                Some([start, end]) => mean(tokens.start + start as usize..tokens.start + end as usize),
                None => whole,
            };
        }
    }
    out
}
