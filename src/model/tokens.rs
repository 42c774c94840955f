//! Optional per-token columns, concatenated over all trajectories (see `Trajectories::token_offsets`).

use super::TextId;
use super::columns::{opt_bytes, push_opt};

/// The token arrays one trajectory may carry, all of the same length.
#[derive(Clone, Debug, Default)]
pub struct NewTokens<'a> {
    /// Policy mask: `true` for tokens the policy generated, `false` for environment / tool tokens.
    pub mask: Option<&'a [bool]>,
    /// Per-token reward.
    pub reward: Option<&'a [f32]>,
    /// Policy log-probability.
    pub logprob: Option<&'a [f32]>,
    /// Reference-model log-probability.
    pub ref_logprob: Option<&'a [f32]>,
    /// Critic value.
    pub value: Option<&'a [f32]>,
    /// Policy entropy.
    pub entropy: Option<&'a [f32]>,
    /// `Σ_v π(v)²` of the policy's next-token distribution (optimal token baseline).
    pub sum_pi_squared: Option<&'a [f32]>,
    /// Log-probability under an implicit process reward model (PRIME's `log π_φ`).
    pub prm_logprob: Option<&'a [f32]>,
    /// The advantage the trainer itself gave the token (the `logged` scheme).
    pub advantage: Option<&'a [f32]>,
    /// The trainer's log-probability under the policy being updated (`π_θ`), beside `logprob`, the
    /// sampling policy's (FIPO's log-prob shift).
    pub trainer_logprob: Option<&'a [f32]>,
    /// Token strings.
    pub text: Option<&'a [&'a str]>,
}

impl NewTokens<'_> {
    /// The common length of the present arrays, or the first pair of (name, length) that disagrees.
    pub fn len(&self) -> Result<usize, (&'static str, usize, usize)> {
        let lengths = [
            ("mask", self.mask.map(<[bool]>::len)),
            ("reward", self.reward.map(<[f32]>::len)),
            ("logprob", self.logprob.map(<[f32]>::len)),
            ("ref_logprob", self.ref_logprob.map(<[f32]>::len)),
            ("value", self.value.map(<[f32]>::len)),
            ("entropy", self.entropy.map(<[f32]>::len)),
            ("sum_pi_squared", self.sum_pi_squared.map(<[f32]>::len)),
            ("prm_logprob", self.prm_logprob.map(<[f32]>::len)),
            ("advantage", self.advantage.map(<[f32]>::len)),
            ("trainer_logprob", self.trainer_logprob.map(<[f32]>::len)),
            ("text", self.text.map(<[&str]>::len)),
        ];
        let mut common: Option<usize> = None;
        for (name, len) in lengths {
            let Some(len) = len else { continue };
            match common {
                None => common = Some(len),
                Some(c) if c != len => return Err((name, len, c)),
                Some(_) => {}
            }
        }
        Ok(common.unwrap_or(0))
    }

    /// Whether no array is present.
    pub fn is_empty(&self) -> bool {
        matches!(self.len(), Ok(0))
    }
}

/// All token columns of a run; a column is `None` when no trajectory logged it.
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    /// Total number of tokens.
    pub len: usize,
    /// Policy mask (1 = policy token); tokens of trajectories without a mask count as policy tokens.
    pub mask: Option<Vec<bool>>,
    /// Per-token reward (`NaN` where missing).
    pub reward: Option<Vec<f32>>,
    /// Policy log-probability.
    pub logprob: Option<Vec<f32>>,
    /// Reference log-probability.
    pub ref_logprob: Option<Vec<f32>>,
    /// Critic value.
    pub value: Option<Vec<f32>>,
    /// Entropy.
    pub entropy: Option<Vec<f32>>,
    /// `Σ_v π(v)²` per token.
    pub sum_pi_squared: Option<Vec<f32>>,
    /// Implicit-PRM log-probability per token.
    pub prm_logprob: Option<Vec<f32>>,
    /// The trainer's own advantage per token.
    pub advantage: Option<Vec<f32>>,
    /// The trainer's log-probability under the policy being updated (`π_θ`) per token.
    pub trainer_logprob: Option<Vec<f32>>,
    /// Token strings.
    pub text: Option<Vec<TextId>>,
}

fn push_f32s(column: &mut Option<Vec<f32>>, start: usize, values: Option<&[f32]>, len: usize) {
    for i in 0..len {
        push_opt(column, start + i, values.and_then(|v| v.get(i).copied()), f32::NAN);
    }
}

impl Tokens {
    /// Appends one trajectory's arrays (already checked to have equal length `len`); `text` is interned by the caller.
    pub(crate) fn push(&mut self, tokens: &NewTokens<'_>, text: Option<&[TextId]>, len: usize) {
        let start = self.len;
        for i in 0..len {
            push_opt(&mut self.mask, start + i, tokens.mask.and_then(|m| m.get(i).copied()), true);
        }
        push_f32s(&mut self.reward, start, tokens.reward, len);
        push_f32s(&mut self.logprob, start, tokens.logprob, len);
        push_f32s(&mut self.ref_logprob, start, tokens.ref_logprob, len);
        push_f32s(&mut self.value, start, tokens.value, len);
        push_f32s(&mut self.entropy, start, tokens.entropy, len);
        push_f32s(&mut self.sum_pi_squared, start, tokens.sum_pi_squared, len);
        push_f32s(&mut self.prm_logprob, start, tokens.prm_logprob, len);
        push_f32s(&mut self.advantage, start, tokens.advantage, len);
        push_f32s(&mut self.trainer_logprob, start, tokens.trainer_logprob, len);
        for i in 0..len {
            push_opt(&mut self.text, start + i, text.and_then(|t| t.get(i).copied()), TextId::NONE);
        }
        self.len += len;
    }

    /// Whether token `i` is the policy's (a run without a mask, or past it: every token is).
    pub fn is_policy(&self, i: usize) -> bool {
        self.mask.as_ref().is_none_or(|m| m.get(i).copied().unwrap_or(true))
    }

    /// Names of the columns present.
    pub fn present(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (name, present) in [
            ("mask", self.mask.is_some()),
            ("reward", self.reward.is_some()),
            ("logprob", self.logprob.is_some()),
            ("ref_logprob", self.ref_logprob.is_some()),
            ("value", self.value.is_some()),
            ("entropy", self.entropy.is_some()),
            ("sum_pi_squared", self.sum_pi_squared.is_some()),
            ("prm_logprob", self.prm_logprob.is_some()),
            ("advantage", self.advantage.is_some()),
            ("trainer_logprob", self.trainer_logprob.is_some()),
            ("text", self.text.is_some()),
        ] {
            if present {
                out.push(name);
            }
        }
        out
    }

    /// Releases spare capacity of every column.
    pub fn shrink_to_fit(&mut self) {
        self.mask.iter_mut().for_each(Vec::shrink_to_fit);
        for column in [
            &mut self.reward,
            &mut self.logprob,
            &mut self.ref_logprob,
            &mut self.value,
            &mut self.entropy,
            &mut self.sum_pi_squared,
            &mut self.prm_logprob,
            &mut self.advantage,
            &mut self.trainer_logprob,
        ] {
            column.iter_mut().for_each(Vec::shrink_to_fit);
        }
        self.text.iter_mut().for_each(Vec::shrink_to_fit);
    }

    /// Heap bytes used.
    pub fn heap_bytes(&self) -> usize {
        opt_bytes(self.mask.as_ref())
            + opt_bytes(self.reward.as_ref())
            + opt_bytes(self.logprob.as_ref())
            + opt_bytes(self.ref_logprob.as_ref())
            + opt_bytes(self.value.as_ref())
            + opt_bytes(self.entropy.as_ref())
            + opt_bytes(self.sum_pi_squared.as_ref())
            + opt_bytes(self.prm_logprob.as_ref())
            + opt_bytes(self.advantage.as_ref())
            + opt_bytes(self.trainer_logprob.as_ref())
            + opt_bytes(self.text.as_ref())
    }
}
