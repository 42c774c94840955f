//! Shared maths of several schemes, over slices, batches and value trees; a kernel never reads
//! the run's model (`tests/it/architecture.rs` checks it): the engine hands it columns.

pub(crate) mod exp;
pub mod gar;
pub mod group;
pub mod kl;
pub mod openrlhf;
pub mod outcome;
pub mod token_baseline;
pub mod tree_value;
