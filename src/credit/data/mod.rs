//! What credit is computed on and into, below every kernel and scheme: the rows a token kernel
//! works on ([`batch`]), the float type kernels are generic over ([`real`]), the one module of
//! `f64` sums and moments ([`moments`]), one part's share of an output ([`parts`]), and the buffer
//! pool (`pool`). It reads no run and no parameter.

pub mod batch;
pub mod moments;
pub mod parts;
pub(crate) mod pool;
pub mod real;
