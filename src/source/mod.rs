//! Where runs come from, native and web side by side: paths and directories on disk, joined runs,
//! vantage Parquet v2 datasets, following a growing log, and HTTP (whole files and byte ranges).
//! Every opener takes an [`OpenOptions`]; what it has to say comes back in its `LoadReport` or
//! on the channel it answers on. Nothing here draws: the app above asks, `load` below parses.

pub mod folder;
pub mod open;
pub mod served;

// ----------------------------------------------------------------------------
// Native: files and directories on disk.

#[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
pub mod convert;
#[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
pub mod dataset;
#[cfg(not(target_arch = "wasm32"))]
pub mod disk;
#[cfg(not(target_arch = "wasm32"))]
pub mod folders;
#[cfg(not(target_arch = "wasm32"))]
pub mod follow;
#[cfg(not(target_arch = "wasm32"))]
pub mod joined;
#[cfg(not(target_arch = "wasm32"))]
pub mod labels;
#[cfg(not(target_arch = "wasm32"))]
pub mod listing;
#[cfg(not(target_arch = "wasm32"))]
pub mod live;
#[cfg(not(target_arch = "wasm32"))]
pub mod path;
#[cfg(not(target_arch = "wasm32"))]
pub mod slime;
#[cfg(not(target_arch = "wasm32"))]
pub mod text_files;

// ----------------------------------------------------------------------------
// Web: URLs and files picked on the page.

#[cfg(target_arch = "wasm32")]
pub mod http;
#[cfg(target_arch = "wasm32")]
pub mod web_dataset;
#[cfg(target_arch = "wasm32")]
pub mod web_dataset_follow;
#[cfg(target_arch = "wasm32")]
pub mod web_folder;
#[cfg(target_arch = "wasm32")]
pub mod web_follow;

use crate::load::formats::outcomes::Outcomes;

/// File extensions of logs, for folders (`folder`) and the file dialog.
pub const LOG_EXTENSIONS: [&str; 8] = ["json", "jsonl", "eval", "traj", "parquet", "gz", "zst", "db"];

/// How runs are opened: chosen once by the CLI (`--steps`, `--outcomes`, `--follow`, the memory
/// budget) or by the app (its "Open steps"), and passed by value to the opener of each run. Nothing
/// below keeps a copy between loads.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// The training steps of a vantage Parquet v2 dataset to read (`None`: all of them when their
    /// files fit in `dataset::DEFAULT_WINDOW`, else the latest that do).
    pub steps: Option<(i64, i64)>,
    /// Outcomes to join to every run opened: the results files of `--outcomes`, and those named
    /// among the files opened.
    pub outcomes: std::sync::Arc<[Outcomes]>,
    /// The bytes a load may hold (it is handed to the loaders in their `LoadReport::budget`).
    pub memory_budget: u64,
    /// Follow the run while it grows (a JSON-lines log, a verl, NeMo-RL, prime-rl or TRL directory).
    pub follow: bool,
    /// Open an Inspect `.eval` from its header and summaries and read its samples later, as the
    /// app does (the command line reads every sample at once). Not when outcomes are to be
    /// joined: they need every sample.
    pub lazy: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            steps: None,
            outcomes: std::sync::Arc::from(Vec::new()),
            memory_budget: crate::load::budget::DEFAULT_BUDGET,
            follow: false,
            lazy: false,
        }
    }
}

impl OpenOptions {
    /// A report for a load of `file` under these options (their memory budget).
    pub fn report(&self, file: &str) -> crate::load::LoadReport {
        crate::load::LoadReport::with_budget(file, self.memory_budget)
    }
}
