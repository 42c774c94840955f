//! Analysis: derived, cacheable views of a run: summaries, heatmap grids, tree layout, scheme
//! comparison and the exported credit table. Pure functions, no egui, no I/O.

pub mod audit;
pub mod compare;
pub mod diff;
pub mod export;
pub mod forensics;
pub mod health;
pub mod heatmap;
pub mod labels;
pub mod overview;
pub mod runs;
pub mod step_credit;
pub mod summary;
pub mod tables;
pub mod tree_layout;

pub use summary::{RunSummary, is_zero_variance};
