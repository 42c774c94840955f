//! The serde shape of "vantage JSONL v1" records (see docs/FORMAT.md). Texts (thoughts, actions,
//! observations, prompts, gold answers) are borrowed from the line as JSON string literals
//! ([`JsonText`]), so a run can keep them as byte ranges of the log instead of copies.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::load::lenient::{Flag, Id, Num, describe_json_error};

/// A JSON string as it stands in the line (a literal with its quotes and escapes), or decoded.
#[derive(Debug)]
pub enum JsonText<'a> {
    /// The literal, borrowed from the line.
    Literal(&'a RawValue),
    /// The decoded text.
    Decoded(Cow<'a, str>),
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue as Deserialize<'de>>::deserialize(deserializer)?;
        let literal = raw.get();
        // Not a string, or a string whose escapes do not decode: the error a `String` field gives.
        if (!literal.starts_with('"') || literal.contains("\\u"))
            && let Err(err) = serde_json::from_str::<Cow<'_, str>>(literal)
        {
            return Err(serde::de::Error::custom(describe_json_error(&err)));
        }
        Ok(Self::Literal(raw))
    }
}

impl JsonText<'_> {
    /// The literal while not decoded (the builder keeps its place in the log), else the text.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Literal(raw) => raw.get(),
            Self::Decoded(text) => text,
        }
    }

    /// Decodes the literal in place (for a run that keeps its texts in memory).
    pub fn decode(&mut self) {
        if let Self::Literal(raw) = self {
            let text = serde_json::from_str::<Cow<'_, str>>(raw.get()).unwrap_or(Cow::Borrowed(""));
            *self = Self::Decoded(text);
        }
    }
}

/// Decodes every text of `record` (and of its steps and nodes) in place.
pub fn decode_texts(record: &mut RawRecord<'_>) {
    for text in [&mut record.prompt, &mut record.gold].into_iter().flatten() {
        text.decode();
    }
    for step in record.steps.iter_mut().chain(record.nodes.iter_mut()).flatten() {
        for text in [&mut step.thought, &mut step.action, &mut step.observation].into_iter().flatten() {
            text.decode();
        }
    }
}

/// Any record: the header (`"vantage": 1`), or `"type"` one of `group`, `trajectory`, `tree`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawRecord<'a> {
    /// Format version; present only in the header.
    pub vantage: Option<serde_json::Value>,
    /// Record type.
    #[serde(rename = "type", borrow)]
    pub kind: Option<Cow<'a, str>>,
    /// Run name (header).
    pub name: Option<String>,
    /// Run metadata (header).
    pub meta: Option<BTreeMap<String, serde_json::Value>>,
    /// Record id: group, trajectory or tree id.
    pub id: Option<Id>,
    /// Group id (trajectory and tree records).
    pub group: Option<Id>,
    /// Task / prompt id.
    pub task: Option<Id>,
    /// Training step.
    pub train_step: Option<i64>,
    /// Prompt text.
    #[serde(borrow)]
    pub prompt: Option<JsonText<'a>>,
    /// Gold answer.
    #[serde(borrow)]
    pub gold: Option<JsonText<'a>>,
    /// Outcome (trajectory records).
    pub outcome: Option<RawOutcome>,
    /// Steps (trajectory records).
    #[serde(borrow)]
    pub steps: Option<Vec<RawStep<'a>>>,
    /// Token arrays (trajectory records).
    pub tokens: Option<RawTokens>,
    /// Nodes (tree records).
    #[serde(borrow)]
    pub nodes: Option<Vec<RawStep<'a>>>,
}

/// A trajectory's outcome.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawOutcome {
    /// Scalar reward.
    pub reward: Option<Num>,
    /// Success flag.
    pub success: Option<bool>,
    /// Named components.
    pub components: Option<BTreeMap<String, Num>>,
    /// Finish reason.
    pub finish: Option<String>,
}

/// Monte-Carlo statistics.
#[derive(Debug, Deserialize)]
pub struct RawMc {
    /// Number of continuations.
    pub n: u32,
    /// Their mean outcome.
    pub mean: Num,
}

/// A step of a trajectory record, or a node of a tree record (which adds `id`, `parent`, and on
/// leaves `outcome`, `trajectory`, `tokens`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawStep<'a> {
    /// Node id (required in tree records).
    pub id: Option<Id>,
    /// Parent node id (tree records; absent or null under the prompt).
    pub parent: Option<Id>,
    /// Step kind.
    #[serde(borrow)]
    pub kind: Option<Cow<'a, str>>,
    /// Role label.
    #[serde(borrow)]
    pub role: Option<Cow<'a, str>>,
    /// Reasoning text.
    #[serde(borrow)]
    pub thought: Option<JsonText<'a>>,
    /// Action text.
    #[serde(borrow)]
    pub action: Option<JsonText<'a>>,
    /// Observation text.
    #[serde(borrow)]
    pub observation: Option<JsonText<'a>>,
    /// Named scores.
    #[serde(borrow)]
    pub scores: Option<BTreeMap<Cow<'a, str>, Num>>,
    /// Environment reward.
    pub env_reward: Option<Num>,
    /// State key.
    pub state: Option<Id>,
    /// Monte-Carlo statistics.
    pub mc: Option<RawMc>,
    /// First-error label.
    pub first_error: Option<bool>,
    /// Retrieved document ids.
    pub docs: Option<Vec<Id>>,
    /// Token span `[start, end)` in the trajectory's tokens.
    pub token_span: Option<[u32; 2]>,
    /// Leaf outcome (tree records).
    pub outcome: Option<RawOutcome>,
    /// Trajectory id of a leaf (tree records).
    pub trajectory: Option<Id>,
    /// Token arrays of the path ending at a leaf (tree records).
    pub tokens: Option<RawTokens>,
}

/// Token arrays of one trajectory.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawTokens {
    /// Policy mask.
    pub mask: Option<Vec<Flag>>,
    /// Per-token reward.
    pub reward: Option<Vec<Num>>,
    /// Policy log-probability.
    pub logprob: Option<Vec<Num>>,
    /// Reference log-probability.
    pub ref_logprob: Option<Vec<Num>>,
    /// Critic value.
    pub value: Option<Vec<Num>>,
    /// Entropy.
    pub entropy: Option<Vec<Num>>,
    /// `Σ_v π(v)²` per token.
    pub sum_pi_squared: Option<Vec<Num>>,
    /// Implicit-PRM log-probability per token.
    pub prm_logprob: Option<Vec<Num>>,
    /// Token strings.
    pub text: Option<Vec<String>>,
}
