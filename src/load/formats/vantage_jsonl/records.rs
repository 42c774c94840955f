//! The serde shape of "vantage JSONL v1" records (see docs/FORMAT.md). Texts (thoughts, actions,
//! observations, prompts, gold answers) are borrowed from the line as the insides of JSON string
//! literals ([`JsonText`]), so a run can keep them as byte ranges of the log instead of copies.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::load::lenient::{Flag, Id, Key, Num, describe_json_error};

/// A JSON string as it stands in the line (the inside of a literal: escapes as they are, without
/// its quotes), or decoded.
#[derive(Debug)]
pub enum JsonText<'a> {
    /// The literal's inside, borrowed from the line.
    Literal(&'a str),
    /// The decoded text.
    Decoded(Cow<'a, str>),
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue as Deserialize<'de>>::deserialize(deserializer)?;
        let literal: &'de str = raw.get();
        let inside = literal.strip_prefix('"').and_then(|l| l.strip_suffix('"')).filter(|_| literal.len() >= 2);
        // Not a string, or a string whose escapes do not decode (a `\u` escape may be a lone
        // surrogate, which serde_json's scan lets through): the error a `String` field gives.
        match inside {
            Some(inside) if surrogates_pair(inside.as_bytes()) => Ok(Self::Literal(inside)),
            _ => match serde_json::from_str::<Cow<'_, str>>(literal) {
                Err(err) => Err(serde::de::Error::custom(describe_json_error(&err))),
                // Not reached (what serde_json decodes, the check above lets through); kept whole.
                Ok(_) => Ok(Self::Literal(inside.unwrap_or_default())),
            },
        }
    }
}

thread_local! {
    /// The search for `\u` (a vectorised search for the two bytes, built once per thread).
    static UNICODE_ESCAPE: memchr::memmem::Finder<'static> = memchr::memmem::Finder::new(b"\\u");
}

/// Whether every `\u` escape of a literal's inside (which `serde_json`'s scan has checked for hex
/// digits) decodes as `serde_json` decodes it: a surrogate only as the first of a pair. Only the
/// `\u` escapes are looked at, where they stand; nothing is decoded or allocated.
fn surrogates_pair(bytes: &[u8]) -> bool {
    UNICODE_ESCAPE.with(|finder| {
        let mut from = 0;
        while let Some(found) = bytes.get(from..).and_then(|rest| finder.find(rest)) {
            let at = from + found;
            // An escape when the run of backslashes that ends at it is odd (`\\u` is a backslash, then `u`).
            let run = bytes[..=at].iter().rev().take_while(|&&b| b == b'\\').count();
            if run % 2 == 0 {
                from = at + 2;
                continue;
            }
            match crate::model::decode_escape(bytes, at) {
                Some((_, len)) => from = at + len,
                None => return false,
            }
        }
        true
    })
}

impl JsonText<'_> {
    /// The literal's inside while not decoded (the builder keeps its place in the log), else the
    /// text.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Literal(inside) => inside,
            Self::Decoded(text) => text,
        }
    }

    /// Decodes the literal in place (for a run that keeps its texts in memory).
    pub fn decode(&mut self) {
        if let Self::Literal(inside) = self {
            let text = crate::model::decode_raw(inside.as_bytes()).unwrap_or(Cow::Borrowed(""));
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

/// A step's named scores, in the order the line gives them (a later duplicate name wins when
/// they are added, as it would in a map). The first few are held inline, so that a step's
/// scores cost no allocation.
#[derive(Debug, Default)]
pub struct Scores<'a> {
    inline: [(Cow<'a, str>, Num); INLINE_SCORES],
    len: usize,
    more: Vec<(Cow<'a, str>, Num)>,
}

/// Scores a step holds without an allocation.
const INLINE_SCORES: usize = 3;

impl<'a> Scores<'a> {
    pub(super) fn push(&mut self, name: Cow<'a, str>, value: Num) {
        match self.inline.get_mut(self.len) {
            Some(slot) => {
                *slot = (name, value);
                self.len += 1;
            }
            None => self.more.push((name, value)),
        }
    }

    /// The scores, in the line's order.
    pub fn iter(&self) -> impl Iterator<Item = &(Cow<'a, str>, Num)> {
        self.inline[..self.len].iter().chain(&self.more)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scores<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// A score's name, borrowed from the line unless it has escapes.
        #[derive(Deserialize)]
        #[serde(transparent)]
        struct Name<'a>(#[serde(borrow)] Cow<'a, str>);
        struct ScoresVisitor;
        impl<'de> serde::de::Visitor<'de> for ScoresVisitor {
            type Value = Scores<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut map: M) -> Result<Scores<'de>, M::Error> {
                let mut scores = Scores::default();
                while let Some(Name(name)) = map.next_key::<Name<'de>>()? {
                    scores.push(name, map.next_value::<Num>()?);
                }
                Ok(scores)
            }
        }
        deserializer.deserialize_map(ScoresVisitor)
    }
}

/// Declares the record types; with `#[serde(deny_unknown_fields)]` for [`strict`].
macro_rules! record_types {
    ($(#[$deny:meta])?) => {
        /// Any record: the header (`"vantage": 1`), or `"type"` one of `group`, `trajectory`, `tree`.
        #[derive(Debug, Default, Deserialize)]
        #[serde(default)]
        $(#[$deny])?
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
            /// Monte-Carlo rollouts from the prompt state of the group (VinePPO's V(s₀)).
            pub mc: Option<RawMc>,
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
        $(#[$deny])?
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

        /// Monte-Carlo statistics: `n` and `mean`, and optionally the rollouts one by one.
        #[derive(Debug, Deserialize)]
        $(#[$deny])?
        pub struct RawMc {
            /// Number of continuations.
            pub n: u32,
            /// Their mean outcome.
            pub mean: Num,
            /// Each continuation's reward and finish reason.
            #[serde(default)]
            pub rollouts: Option<Vec<RawRollout>>,
        }

        /// One Monte-Carlo continuation.
        #[derive(Debug, Deserialize)]
        $(#[$deny])?
        pub struct RawRollout {
            /// Its outcome reward.
            pub reward: Num,
            /// Its finish reason (`stop`, `length`, …).
            #[serde(default)]
            pub finish: Option<String>,
        }

        /// A step of a trajectory record, or a node of a tree record (which adds `id`, `parent`, and on
        /// leaves `outcome`, `trajectory`, `tokens`).
        #[derive(Debug, Default, Deserialize)]
        #[serde(default)]
        $(#[$deny])?
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
            pub scores: Option<Scores<'a>>,
            /// Environment reward.
            pub env_reward: Option<Num>,
            /// State key.
            #[serde(borrow)]
            pub state: Option<Key<'a>>,
            /// Monte-Carlo statistics.
            pub mc: Option<RawMc>,
            /// First-error label.
            pub first_error: Option<bool>,
            /// The action was invalid (GiGPO's penalty).
            pub invalid_action: Option<bool>,
            /// Whether a leaf was selected for training (TreeRL); absent means selected.
            pub selected: Option<bool>,
            /// Retrieved document ids.
            pub docs: Option<Vec<Id>>,
            /// Token span `[start, end)` in the trajectory's tokens.
            pub token_span: Option<[u32; 2]>,
            /// Leaf outcome (tree records).
            pub outcome: Option<Box<RawOutcome>>,
            /// Trajectory id of a leaf (tree records).
            pub trajectory: Option<Id>,
            /// Token arrays of the path ending at a leaf (tree records).
            pub tokens: Option<Box<RawTokens>>,
        }

        /// Token arrays of one trajectory.
        #[derive(Debug, Default, Deserialize)]
        #[serde(default)]
        $(#[$deny])?
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
            /// The trainer's own advantage per token.
            pub advantage: Option<Vec<Num>>,
            /// The trainer's log-probability under the policy being updated.
            pub trainer_logprob: Option<Vec<Num>>,
            /// Token strings.
            pub text: Option<Vec<String>>,
        }
    };
}

// The records, refusing unknown fields: the fast parse (no field paths, no unknown-field
// tracking, each of which costs an allocation per key) that every valid record without unknown
// fields takes, and the type the loader works with (no conversion on the fast path).
record_types!(#[serde(deny_unknown_fields)]);

/// The same records, taking unknown fields: a record the fast parse refuses is parsed again as one
/// of these with field paths and unknown-field tracking (`lenient::parse_located`), for its
/// located warnings, then converted.
pub mod located {
    use super::{BTreeMap, Cow, Deserialize, Flag, Id, JsonText, Key, Num, Scores};

    record_types!();
}

impl<'a> From<located::RawRecord<'a>> for RawRecord<'a> {
    fn from(r: located::RawRecord<'a>) -> Self {
        let steps = |v: Option<Vec<located::RawStep<'a>>>| v.map(|v| v.into_iter().map(RawStep::from).collect());
        Self {
            vantage: r.vantage,
            kind: r.kind,
            name: r.name,
            meta: r.meta,
            id: r.id,
            group: r.group,
            task: r.task,
            train_step: r.train_step,
            prompt: r.prompt,
            gold: r.gold,
            mc: r.mc.map(RawMc::from),
            outcome: r.outcome.map(RawOutcome::from),
            steps: steps(r.steps),
            tokens: r.tokens.map(RawTokens::from),
            nodes: steps(r.nodes),
        }
    }
}

impl<'a> From<located::RawStep<'a>> for RawStep<'a> {
    fn from(s: located::RawStep<'a>) -> Self {
        Self {
            id: s.id,
            parent: s.parent,
            kind: s.kind,
            role: s.role,
            thought: s.thought,
            action: s.action,
            observation: s.observation,
            scores: s.scores,
            env_reward: s.env_reward,
            state: s.state,
            mc: s.mc.map(RawMc::from),
            first_error: s.first_error,
            invalid_action: s.invalid_action,
            selected: s.selected,
            docs: s.docs,
            token_span: s.token_span,
            outcome: s.outcome.map(|o| Box::new(RawOutcome::from(*o))),
            trajectory: s.trajectory,
            tokens: s.tokens.map(|t| Box::new(RawTokens::from(*t))),
        }
    }
}

impl From<located::RawMc> for RawMc {
    fn from(m: located::RawMc) -> Self {
        let rollouts =
            m.rollouts.map(|r| r.into_iter().map(|r| RawRollout { reward: r.reward, finish: r.finish }).collect());
        Self { n: m.n, mean: m.mean, rollouts }
    }
}

impl From<located::RawOutcome> for RawOutcome {
    fn from(o: located::RawOutcome) -> Self {
        Self { reward: o.reward, success: o.success, components: o.components, finish: o.finish }
    }
}

impl From<located::RawTokens> for RawTokens {
    fn from(t: located::RawTokens) -> Self {
        Self {
            mask: t.mask,
            reward: t.reward,
            logprob: t.logprob,
            ref_logprob: t.ref_logprob,
            value: t.value,
            entropy: t.entropy,
            sum_pi_squared: t.sum_pi_squared,
            prm_logprob: t.prm_logprob,
            advantage: t.advantage,
            trainer_logprob: t.trainer_logprob,
            text: t.text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_is_kept_exactly_when_serde_json_decodes_it() {
        let cases = [
            r#"plain"#,
            r#"a\nb\t\"q\" \\ \/ \b\f\r"#,
            r#"caf\u00e9 \u2192 \u65e5\u672c"#,
            r#"\ud83d\ude42 pair"#,
            r#"lone lead \ud83d then text"#,
            r#"lone lead at the end \ud83d"#,
            r#"lead then lead \ud83d\ud83d"#,
            r#"lone trail \ude42"#,
            r#"escaped backslash then u: \\ud83d"#,
            r#"three backslashes: \\\ud83d\ude42"#,
            r#"three backslashes, lone: \\\ud83d"#,
            r#"\\\\ude42"#,
            r#"\u0000 nul"#,
        ];
        for case in cases {
            let line = format!("{{\"thought\": \"{case}\"}}");
            let serde = serde_json::from_str::<serde_json::Value>(&line).is_ok();
            let ours = serde_json::from_str::<RawStep<'_>>(&line);
            assert_eq!(ours.is_ok(), serde, "{case}");
            if let Ok(step) = ours {
                assert_eq!(step.thought.as_ref().map(JsonText::as_str), Some(case));
                let mut text = step.thought.unwrap_or(JsonText::Literal(""));
                text.decode();
                let decoded: String = serde_json::from_str(&format!("\"{case}\"")).unwrap_or_default();
                assert_eq!(text.as_str(), decoded, "{case}");
            }
        }
    }
}
