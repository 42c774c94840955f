//! Where runs come from, native and web side by side: paths and directories on disk, joined runs,
//! vantage Parquet v2 datasets, following a growing log, and HTTP (whole files and byte ranges).
//! Every opener takes an [`OpenOptions`]; what it has to say comes back in its `LoadReport` or
//! on the channel it answers on. Nothing here draws: the app above asks, `load` below parses.

// ----------------------------------------------------------------------------
// Native: files and directories on disk.

#[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
pub mod dataset;
#[cfg(not(target_arch = "wasm32"))]
pub mod disk;
#[cfg(not(target_arch = "wasm32"))]
pub mod follow;
#[cfg(not(target_arch = "wasm32"))]
pub mod joined;
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
pub mod web_follow;
