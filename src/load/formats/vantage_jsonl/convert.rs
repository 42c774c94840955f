//! Checks and conversions from raw records to the model's borrowed inputs.

use crate::model::{McStats, NewStep, NewTokens, Outcome, Warning};

use super::records::{JsonText, RawMc, RawOutcome, RawStep, RawTokens, Scores};

/// Owned token columns converted from a raw record.
#[derive(Default)]
pub struct TokenColumns {
    mask: Option<Vec<bool>>,
    reward: Option<Vec<f32>>,
    logprob: Option<Vec<f32>>,
    ref_logprob: Option<Vec<f32>>,
    value: Option<Vec<f32>>,
    entropy: Option<Vec<f32>>,
    sum_pi_squared: Option<Vec<f32>>,
    prm_logprob: Option<Vec<f32>>,
    advantage: Option<Vec<f32>>,
    trainer_logprob: Option<Vec<f32>>,
    text: Option<Vec<String>>,
}

impl TokenColumns {
    /// Converts the arrays and checks that they have one length; `field` prefixes error paths (e.g. `tokens`).
    pub fn from_raw(raw: Option<&RawTokens>, field: &str, line: u64) -> Result<(Self, usize), Warning> {
        let Some(raw) = raw else {
            return Ok((Self::default(), 0));
        };
        let floats = |v: &Option<Vec<crate::load::lenient::Num>>| v.as_ref().map(|v| v.iter().map(|n| n.0).collect());
        let columns = Self {
            mask: raw.mask.as_ref().map(|m| m.iter().map(|f| f.0).collect()),
            reward: floats(&raw.reward),
            logprob: floats(&raw.logprob),
            ref_logprob: floats(&raw.ref_logprob),
            value: floats(&raw.value),
            entropy: floats(&raw.entropy),
            sum_pi_squared: floats(&raw.sum_pi_squared),
            prm_logprob: floats(&raw.prm_logprob),
            advantage: floats(&raw.advantage),
            trainer_logprob: floats(&raw.trainer_logprob),
            text: raw.text.clone(),
        };
        let len = {
            let texts = columns.texts();
            columns.borrow_with(texts.as_deref()).len().map_err(|(name, len, common)| {
                Warning::skipped(
                    line,
                    format!("{field}.{name}"),
                    format!("has {len} values but the other token arrays have {common}"),
                )
            })?
        };
        Ok((columns, len))
    }

    /// The borrowed view the builder takes; `texts` must be `self.text` as `&str`s.
    pub fn borrow_with<'a>(&'a self, texts: Option<&'a [&'a str]>) -> NewTokens<'a> {
        NewTokens {
            mask: self.mask.as_deref(),
            reward: self.reward.as_deref(),
            logprob: self.logprob.as_deref(),
            ref_logprob: self.ref_logprob.as_deref(),
            value: self.value.as_deref(),
            entropy: self.entropy.as_deref(),
            sum_pi_squared: self.sum_pi_squared.as_deref(),
            prm_logprob: self.prm_logprob.as_deref(),
            advantage: self.advantage.as_deref(),
            trainer_logprob: self.trainer_logprob.as_deref(),
            text: texts,
        }
    }

    /// The token strings, for [`Self::borrow_with`].
    pub fn texts(&self) -> Option<Vec<&str>> {
        self.text.as_ref().map(|t| t.iter().map(String::as_str).collect())
    }
}

/// The borrowed step the builder takes.
pub fn new_step<'a>(raw: &'a RawStep<'_>) -> NewStep<'a> {
    NewStep {
        key: raw.id.as_ref().map(|id| id.0.as_str()),
        kind: raw.kind.as_deref(),
        role: raw.role.as_deref(),
        thought: raw.thought.as_ref().map(JsonText::as_str),
        action: raw.action.as_ref().map(JsonText::as_str),
        observation: raw.observation.as_ref().map(JsonText::as_str),
        scores: raw.scores.iter().flat_map(Scores::iter).map(|(k, v)| (k.as_ref(), v.0)).collect(),
        env_reward: raw.env_reward.map(|n| n.0),
        state_key: raw.state.as_ref().map(|s| s.0.as_ref()),
        mc: raw.mc.as_ref().map(|m| McStats { n: m.n, mean: m.mean.0 }),
        mc_rollouts: rollouts(raw.mc.as_ref()),
        first_error: raw.first_error,
        invalid_action: raw.invalid_action == Some(true),
        unselected: raw.selected == Some(false),
        docs: raw.docs.iter().flatten().map(|d| d.0.as_str()).collect(),
        token_span: raw.token_span,
    }
}

/// The borrowed outcome, plus kept warnings for a non-finite reward.
pub fn outcome<'a>(raw: Option<&'a RawOutcome>, field: &str, line: u64, warnings: &mut Vec<Warning>) -> Outcome<'a> {
    let Some(raw) = raw else {
        return Outcome::default();
    };
    let reward = raw.reward.map(|n| n.0);
    if let Some(r) = reward {
        if r.is_nan() {
            warnings.push(Warning::kept(line, format!("{field}.reward"), "reward is NaN; treated as missing"));
        } else if r.is_infinite() {
            warnings.push(Warning::kept(
                line,
                format!("{field}.reward"),
                format!("reward is {r}; group statistics that include it are not finite"),
            ));
        }
    }
    Outcome {
        reward: reward.filter(|r| !r.is_nan()),
        success: raw.success,
        components: raw.components.iter().flatten().map(|(k, v)| (k.as_str(), v.0)).collect(),
        finish: raw.finish.as_deref(),
    }
}

/// Checks the token spans of `steps` (at `field[i]`) against `num_tokens`.
pub fn check_spans<'a>(
    spans: impl Iterator<Item = (String, Option<[u32; 2]>)> + 'a,
    num_tokens: usize,
    line: u64,
) -> Result<(), Warning> {
    for (field, span) in spans {
        let Some([start, end]) = span else { continue };
        if start > end || end as usize > num_tokens {
            return Err(Warning::skipped(
                line,
                format!("{field}.token_span"),
                format!("[{start}, {end}] is outside the {num_tokens} tokens of this trajectory"),
            ));
        }
    }
    Ok(())
}

/// The rollouts of Monte-Carlo statistics, one by one (empty when the log gives only `n` and `mean`).
pub fn rollouts(mc: Option<&RawMc>) -> Vec<(f32, Option<&str>)> {
    mc.and_then(|m| m.rollouts.as_ref()).into_iter().flatten().map(|r| (r.reward.0, r.finish.as_deref())).collect()
}
