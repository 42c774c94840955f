//! vantage: open RL rollout logs, draw rollout trees and steps × rollouts heatmaps, and recompute
//! advantages under many credit-assignment schemes to see where they agree and disagree.
//!
//! Modules depend one way: `model` ← {`load`, `credit`} ← `analysis` ← `ui` ← `app`, with `cli`
//! beside `ui`. Nothing under `model`, `load`, `credit` or `analysis` uses egui, the filesystem or
//! threads, so the core compiles and tests headless, natively and for wasm.

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
pub mod cli;

// ----------------------------------------------------------------------------
// When compiling for web:

#[cfg(target_arch = "wasm32")]
pub mod web;
