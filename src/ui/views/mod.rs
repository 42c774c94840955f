//! Views: one module per view, each a `ui()` function over a [`crate::ui::ViewCtx`]; the central
//! ones are dispatched by [`crate::app::state::Tab`] in `ui/mod.rs`.

pub mod compare;
pub mod diff;
pub mod forensics;
pub mod graph;
pub mod group;
pub mod heatmap;
pub mod inspector;
pub mod overview;
pub mod run_browser;
pub mod run_summary;
pub mod runs;
pub mod scheme_panel;
pub mod server_runs;
pub mod tokens;
pub mod transcript;
pub mod tree;
