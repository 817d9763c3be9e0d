//! # wayfarer-runtime
//!
//! The run-time half of wayfarer: graphs and their I/O, generators, the counter-based RNG, the
//! exact samplers, the walk contract ([`Walk`]) and the CPU engine that runs walks on every
//! core. The `#[walk]` compiler (a later crate) generates implementations of [`Walk`]; the
//! hand-written walks in [`walks`] are the references it must match.
//!
//! ```
//! use wayfarer_runtime::{graph::generate, engine, walks::{Node2vec, Weighting}};
//! let mut g = generate::rmat(8, 8, 1).unwrap();
//! g.set_weights(Some(generate::weights(&g, "uniform".parse().unwrap(), 1))).unwrap();
//! let walk = Node2vec::new(2.0, 0.5, Weighting::Weighted).unwrap();
//! let cfg = engine::WalkConfig { length: 10, seed: 7, cost_ratio: engine::CostRatio::Fixed(1.0), ..Default::default() };
//! let (walks, report) = engine::run(&walk, &g, &engine::Starts::EveryNode { per_node: 1 }, &cfg, None).unwrap();
//! assert_eq!(walks.len(), 256);
//! println!("{}", report.summary("cpu"));
//! ```

#![warn(missing_docs)]

pub mod aggregate;
pub mod atomic_file;
pub mod cost;
pub mod engine;
pub mod error;
pub mod fast_path;
pub mod graph;
pub mod memory;
pub mod npy;
pub mod output;
pub mod proposal;
pub mod rng;
pub mod run;
pub mod sample;
pub mod sampler;
mod structured;
#[cfg(feature = "testing")]
pub mod testing;
pub mod triangles;
pub mod turn;
pub mod walk;
pub mod walks;

pub use wayfarer_core::hash;
pub use wayfarer_core::{ParamValue, Value};

pub use engine::{CostRatio, NO_EDGE, RunReport, SamplerMode, Starts, WalkConfig, Walks};
pub use error::{GraphError, WalkError};
pub use graph::{CsrGraph, NO_NODE};
pub use rng::StepRng;
pub use walk::{
    Bound, BoundScope, Ctx, FromParams, LabelStat, NodeStats, Prepared, Requirements, Step, StepEstimates, Walk, WalkSource, Walker,
};
