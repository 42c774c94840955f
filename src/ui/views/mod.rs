//! Views: one module per view, each an `Options` struct and a `ui()` function.

pub mod run_summary;
