//! The serde shape of "vantage JSONL v1" records (see docs/FORMAT.md).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::load::lenient::{Flag, Id, Num};

/// Any record: the header (`"vantage": 1`), or `"type"` one of `group`, `trajectory`, `tree`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawRecord {
    /// Format version; present only in the header.
    pub vantage: Option<serde_json::Value>,
    /// Record type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
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
    pub prompt: Option<String>,
    /// Gold answer.
    pub gold: Option<String>,
    /// Outcome (trajectory records).
    pub outcome: Option<RawOutcome>,
    /// Steps (trajectory records).
    pub steps: Option<Vec<RawStep>>,
    /// Token arrays (trajectory records).
    pub tokens: Option<RawTokens>,
    /// Nodes (tree records).
    pub nodes: Option<Vec<RawStep>>,
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
pub struct RawStep {
    /// Node id (required in tree records).
    pub id: Option<Id>,
    /// Parent node id (tree records; absent or null under the prompt).
    pub parent: Option<Id>,
    /// Step kind.
    pub kind: Option<String>,
    /// Role label.
    pub role: Option<String>,
    /// Reasoning text.
    pub thought: Option<String>,
    /// Action text.
    pub action: Option<String>,
    /// Observation text.
    pub observation: Option<String>,
    /// Named scores.
    pub scores: Option<BTreeMap<String, Num>>,
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
