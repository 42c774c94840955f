//! OpenRLHF's way of turning a shaped scalar into per-token advantages (`compute_reward` then
//! `get_cumulative_returns`): clamp the scalar, put it at the last policy token, add `−β·kl` (kl
//! clamped to ±10) at every policy token, and take the reward-to-go (γ = 1 for group estimators).

use crate::credit::data::batch::Batch;
use crate::credit::data::real::Real;
use crate::credit::kernels::kl::{KlMode, kl_penalty};
use crate::credit::params::declare::{choice, decl, params};

choice! {
    /// Where a group estimator's sequence advantage goes (`placement`).
    pub enum Placement { Broadcast = "broadcast", LastTokenReturn = "last_token_return" }
}

params! {
    /// Parameter that selects this pipeline.
    pub struct PlacementParam {
        /// Broadcast, or OpenRLHF's placement at the last token.
        pub placement: Placement = decl(
            "broadcast",
            "broadcast the sequence advantage to every token (verl, TRL), or place it at the last policy token, add per-token KL and take the reward-to-go (OpenRLHF)",
        ),
    }
}

choice! {
    /// How a token estimator turns the score into rewards (`shaping`).
    pub enum Shaping { Verl = "verl", Openrlhf = "openrlhf" }
}

params! {
    /// Parameter of the token estimators (REINFORCE++, GAE) that selects OpenRLHF's `compute_reward`.
    pub struct ShapingParam {
        /// verl's rewards, or OpenRLHF's `compute_reward`.
        pub shaping: Shaping = decl(
            "verl",
            "verl: the score at the row's last position, KL per token in the reward (kl_coef); openrlhf: compute_reward, the score clamped to ±reward_clip at the last action token and −β·clamp(kl, ±10) at every action token",
        ),
    }
}

params! {
    /// OpenRLHF's final whitening with or without the division (`--algo.advantage.no_std_norm`).
    pub struct StdNorm {
        /// Divide by the token std.
        pub std_norm: bool = decl(
            "true",
            "OpenRLHF whitening divides by the token std; false (--algo.advantage.no_std_norm) only subtracts the token mean",
        ),
    }
}

/// OpenRLHF's shaping of one scheme: β of the per-token KL, the clip of the scalar (0 = off)
/// and the KL estimator.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// β of the per-token KL.
    pub kl_coef: f64,
    /// The scalar is clamped to ±this (0: not clamped).
    pub reward_clip: f64,
    /// The KL estimator.
    pub kl_mode: KlMode,
}

/// OpenRLHF's `compute_reward`: per position, `−β·kl` (k1/k2/k3 of the log-probabilities, clamped
/// to ±10, zero where the action mask is 0, as the log-probabilities are masked there), plus each
/// row's scalar, clamped to ±`reward_clip` (0 = off), at the row's last action token (its last
/// position when it has none).
pub fn compute_reward<F: Real>(batch: &Batch<'_, F>, scalar: &[F], shape: Shape) -> Vec<F> {
    let beta = F::of(shape.kl_coef.max(0.0));
    let clip = F::of(shape.reward_clip);
    let mode = shape.kl_mode;
    let kl = |t: usize| match (&batch.logprob, &batch.ref_logprob) {
        (Some(lp), Some(rp)) if beta != F::ZERO && batch.m(t) != F::ZERO => {
            kl_penalty(lp[t], rp[t], mode).max(F::of(-10.0)).min(F::of(10.0))
        }
        _ => F::ZERO,
    };
    let mut out = F::zeroed(batch.num_positions());
    for (i, &r) in scalar.iter().enumerate() {
        let range = batch.row(i);
        let r = if clip > F::ZERO { r.max(-clip).min(clip) } else { r };
        let last = range.clone().rev().find(|&t| batch.m(t) != F::ZERO).or(range.clone().last());
        for t in range {
            let kl_reward = -beta * kl(t);
            out[t] = if Some(t) == last { r + kl_reward } else { kl_reward };
        }
    }
    out
}

/// OpenRLHF's `get_cumulative_returns`: the reward-to-go of `rewards · mask` with discount `gamma`
/// (the running return runs through masked positions), zeroed where the mask is 0.
pub fn cumulative_returns<F: Real>(batch: &Batch<'_, F>, rewards: &[F], gamma: F) -> Vec<F> {
    let mut out = F::zeroed(batch.num_positions());
    for i in 0..batch.num_rows() {
        let mut running = F::ZERO;
        for t in batch.row(i).rev() {
            let m = batch.m(t);
            running = rewards[t] * m + gamma * running;
            out[t] = running * m;
        }
    }
    out
}

/// Per-position reward-to-go from one scalar per row, OpenRLHF style ([`compute_reward`], then
/// [`cumulative_returns`]).
pub fn returns<F: Real>(batch: &Batch<'_, F>, scalar: &[F], shape: Shape, gamma: F) -> Vec<F> {
    cumulative_returns(batch, &compute_reward(batch, scalar, shape), gamma)
}

/// `batch` with its rewards replaced by OpenRLHF's [`compute_reward`] of its row scores (for the
/// token estimators, whose recursions then run on them as on any per-position reward).
pub fn shaped<'a, F: Real>(batch: &Batch<'a, F>, shape: Shape) -> Batch<'a, F> {
    let reward = compute_reward(batch, &batch.scores(), shape);
    Batch { reward: Some(reward), row_score: None, ..batch.clone() }
}
