//! # wayfarer-core
//!
//! What the `#[walk]` compiler and the runtime both speak, and nothing else: so the compiler
//! (and the proc macro on top of it) builds without the runtime's thread pool, memory maps and
//! file formats.
//!
//! - [`Requirements`]: the per-node arrays a walk needs precomputed, which the compiler's
//!   analysis derives and every backend builds;
//! - [`hash`]: the stable content hash cache keys use (programs, graphs, cost models);
//! - [`Value`], [`ParamValue`]: a walk's hyperparameter values, as parsed, checked and handed
//!   to every backend;
//! - [`GraphView`]: the read-only graph the reference interpreter evaluates programs over,
//!   which the runtime's CSR graph implements.

#![warn(missing_docs)]

pub mod hash;
pub mod plan;
mod value;

pub use value::{ParamValue, Value};

/// The node id that marks "no node": a walk's previous node before its first move, and the
/// padding after a walk that ended early in padded outputs. It is `u32::MAX`, so graphs hold at
/// most `u32::MAX` nodes (ids `0..u32::MAX`).
pub const NO_NODE: u32 = u32::MAX;

/// Per-node arrays a walk needs precomputed before the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requirements {
    /// Max and sum of the edge weights over each node's row.
    pub weight_stats: bool,
    /// Per-label max and sum of edge weights (or counts, unweighted) over each row.
    pub label_stats: bool,
    /// Min and max out-degree of each row's destinations.
    pub neighbor_degree: bool,
    /// The walk calls `has_edge`: the CPU runtime builds per-row edge filters first, so most
    /// absent edges are answered without searching a row.
    pub edge_queries: bool,
}

/// A read-only CSR graph: rows of edges, each with a target and optional weight, label and
/// timestamp, plus named per-node properties. Edge ids index the edge arrays.
pub trait GraphView {
    /// Number of nodes.
    fn num_nodes(&self) -> usize;
    /// The edge ids of `v`'s row.
    fn row(&self, v: u32) -> std::ops::Range<usize>;
    /// `v`'s out-degree.
    fn degree(&self, v: u32) -> u64 {
        self.row(v).len() as u64
    }
    /// Every edge's target.
    fn targets(&self) -> &[u32];
    /// Every edge's weight, if the graph is weighted.
    fn weights(&self) -> Option<&[f32]>;
    /// Every edge's label, if the graph is labelled.
    fn labels(&self) -> Option<&[u32]>;
    /// Every edge's timestamp, if the graph has them.
    fn timestamps(&self) -> Option<&[i64]>;
    /// The per-node property `name`, if the graph has it.
    fn node_property(&self, name: &str) -> Option<&[f32]>;
    /// Whether `u → v` is an edge.
    fn has_edge(&self, u: u32, v: u32) -> bool;
}
