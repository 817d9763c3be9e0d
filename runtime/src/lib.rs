//! # wayfarer-runtime
//!
//! The run-time half of wayfarer: graphs and their I/O, generators, the counter-based RNG, the
//! exact samplers, the walk contract ([`Walk`]) and the CPU engine that runs walks on every
//! core. The `#[walk]` compiler (a later crate) generates implementations of [`Walk`]; the
//! hand-written walks in [`walks`] are the references it must match.

#![warn(missing_docs)]

pub mod error;
pub mod graph;
pub mod rng;

pub use error::{GraphError, WalkError};
pub use graph::{CsrGraph, NO_NODE};
