//! Analysis: derived, cacheable views of a run (summaries now; heatmap grids, tree layout and
//! scheme comparison as the views arrive). Pure functions, no egui, no I/O.

pub mod summary;

pub use summary::{RunSummary, is_zero_variance};
