//! "vantage Parquet v2": a run as a Hive-style partitioned Parquet dataset, one directory per
//! training step (`train_step=17/`), with typed columns in four tables (`groups`,
//! `trajectories`, `steps`, `tokens`) and a `manifest.json` (docs/FORMAT.md). Any Parquet reader
//! reads it without vantage; vantage reads the manifest first and then only the partitions asked
//! for. The manifest and the reader build everywhere (the reader decodes Parquet with
//! `crate::load::parquet_file`); writing uses polars (native only).

pub mod manifest;
pub mod pack;
pub mod read;
pub mod remote;
#[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
pub mod write;

pub use manifest::{MANIFEST, Manifest, Partition};
