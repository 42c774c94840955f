//! One file per log format (a directory for the two with several parts), each a [`Loader`]
//! detected by content, registered once in [`LOADERS`]. The machinery they share (JSON lines,
//! compression, pacing, the memory budget, Parquet and ZIP decoding, reports) is in `load`.

use super::Loader;

pub mod art;
pub(super) mod atif;
pub mod claude_code;
pub mod codex;
pub mod inspect;
pub(super) mod math_aps;
pub(super) mod math_shepherd;
pub(super) mod nemo_gym;
pub mod nemo_rl;
pub mod open_instruct;
pub(super) mod openai_chat;
pub(super) mod openhands;
pub mod otel;
pub mod outcomes;
pub(super) mod prm800k;
pub(super) mod prmbench;
pub(super) mod processbench;
pub mod roll;
pub mod skyrl;
pub mod slime_dump;
pub(super) mod swe_agent;
pub(super) mod tau2;
pub mod tinker;
pub(super) mod toolbench;
pub(super) mod tot;
pub mod trackio;
#[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
pub mod trl_parquet;
pub mod vantage_jsonl;
#[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
pub mod vantage_parquet;
pub mod vantage_v2;
pub mod verifiers;
pub mod verl_dump;
pub(super) mod vf_eval;

/// Every loader, in detection order. A new format is a new file plus one line here.
pub static LOADERS: &[&dyn Loader] = &[
    &vantage_jsonl::VantageJsonl,
    // Before the chat formats: a ROLL batch has a `messages` column.
    &roll::Roll,
    &processbench::ProcessBench,
    &tau2::Tau2,
    &openai_chat::OpenAiChat,
    &prmbench::PrmBench,
    &math_shepherd::MathShepherd,
    &toolbench::ToolBench,
    &verl_dump::VerlDump,
    &verifiers::Verifiers,
    &nemo_gym::NemoGym,
    &nemo_rl::NemoRl,
    &vf_eval::VfEval,
    &tot::TreeOfThoughts,
    &math_aps::MathAps,
    &prm800k::Prm800k,
    &swe_agent::SweAgent,
    &openhands::OpenHands,
    &inspect::Inspect,
    &slime_dump::SlimeDump,
    &trackio::Trackio,
    &atif::Atif,
    &claude_code::ClaudeCode,
    &codex::Codex,
    &tinker::Tinker,
    &skyrl::SkyRl,
    &open_instruct::OpenInstruct,
    &otel::Otel,
    #[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
    &vantage_parquet::VantageParquet,
    #[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
    &trl_parquet::TrlParquet,
    // Parquet too, read by vantage's own reader (native and web).
    &art::Art,
];
