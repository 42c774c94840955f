//! Every integration test, in one binary: each test file links the whole crate, and one binary
//! links it once (as ripgrep's tests do). A file here is one module; `cargo test NAME` runs the
//! tests whose path holds NAME (`cargo test credit_threads::`, `cargo test ui::`).

mod common;

mod architecture;
mod cli;
mod credit_props;
mod credit_snapshot;
mod credit_threads;
mod fixtures;
mod forensics;
mod format_roundtrip;
mod formulas;
mod golden_trainers;
mod golden_verl;
mod graph;
mod health;
mod importers;
mod invariants;
mod json_docs;
mod labels;
mod live;
mod load_identity;
mod parquet_decode;
#[cfg(feature = "parquet")]
mod partitions;
mod process_credit;
mod python;
mod room;
mod sample_runs;
mod serve;
mod trainers_2026;
mod ui;
mod window;
