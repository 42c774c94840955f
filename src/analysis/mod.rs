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

/// `n` things of a kind, in words: `1 step`, `2 steps`, `3 trajectories` (`what` singular).
pub fn count(n: usize, what: &str) -> String {
    match (n, what.strip_suffix('y')) {
        (1, _) => format!("1 {what}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {what}s"),
    }
}
