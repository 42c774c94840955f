//! vantage: open RL rollout logs, draw rollout trees and steps × rollouts heatmaps, and recompute
//! advantages under many credit-assignment schemes to see where they agree and disagree.
//!
//! A stack, each layer importing only those below it (`tests/it/architecture.rs` checks it):
//! the launchers (`cli`, with the desktop window; `web`) over `api` (the commands the command
//! line, `vantage mcp` and the Python package share, each declared once; native) and `serve` (the
//! web app and runs over HTTP) over `ui` (everything that draws, with the eframe shell) over `app` (state, commands, workers) over `source` (where runs come from,
//! as `source::OpenOptions` say) over `analysis` over `load` and `credit` over `model` and `par`.
//! Nothing in `model`, `par`, `load`, `credit` or `analysis` uses egui or the filesystem, and
//! only `par` starts threads, so the core compiles and tests headless, natively and for wasm.
//! See docs/ARCHITECTURE.md.

pub mod analysis;
pub mod app;
pub mod credit;
#[doc(hidden)]
pub mod fuzzing;
pub mod load;
pub mod model;
pub mod par;
pub mod source;
pub mod ui;

pub use app::VantageApp;

/// The bundled sample run that opens when no file is given.
pub const DEMO_RUN: &[u8] = include_bytes!("../assets/demo_run.jsonl");

/// The display name of the bundled sample run.
pub const DEMO_RUN_NAME: &str = "demo_run.jsonl (bundled sample)";

// ----------------------------------------------------------------------------
// When compiling for native:

#[cfg(not(target_arch = "wasm32"))]
pub mod api;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;

#[cfg(not(target_arch = "wasm32"))]
pub mod serve;

// ----------------------------------------------------------------------------
// When compiling for web:

#[cfg(target_arch = "wasm32")]
pub mod web;
