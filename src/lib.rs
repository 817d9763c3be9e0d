//! # wayfarer
//!
//! Exact graph random walks on every CPU core, written as Rust (`#[walk]`) and compiled by
//! wayfarer's own compiler (GPU backends are being added). This crate is the facade: it re-exports the
//! runtime, adds the builder API and the embedded default graph, and hosts the `wayfarer` CLI.
//!
//! ```
//! use wayfarer::prelude::*;
//!
//! let g = wayfarer::default_graph().unwrap();       // WordNet 3.0, shipped in the crate
//! let run = Node2vec { a: 2.0, b: 0.5 }                // walks/node2vec.rs, compiled by #[walk]
//!     .on(&g)
//!     .length(20)
//!     .seed(7)
//!     .cost_ratio(CostRatio::Fixed(2.0))
//!     .run()
//!     .unwrap();
//! assert_eq!(run.walks.stride, 21);
//! ```

#![warn(missing_docs)]

// Lets `#[walk]`'s generated code name `::wayfarer` inside this crate too.
extern crate self as wayfarer;

pub mod bench;
pub mod gpu;
pub mod job;
pub mod library;
pub mod partition;
#[cfg(feature = "wgpu")]
pub mod wgpu;

pub use wayfarer_macros::{mask, sampler, walk};
pub use wayfarer_runtime as runtime;
/// Neighbour aggregation of sampled blocks (sum, mean) on the CPU, in the CUDA kernels' order.
pub use wayfarer_runtime::aggregate;
/// GNN neighbor sampling (DGL-style blocks); see `wayfarer sample`.
pub use wayfarer_runtime::sample;
/// Exact triangle counting with DSL edge masks (CPU): [`triangles::count`], [`triangles::count_with`].
pub use wayfarer_runtime::triangles;
pub use wayfarer_runtime::{
    Bound, BoundScope, CostRatio, CsrGraph, Ctx, FromParams, GraphError, NO_EDGE, NO_NODE, NodeStats, ParamValue, Requirements, RunReport,
    SamplerMode, Starts, Step, StepRng, Value, Walk, WalkConfig, WalkError, Walker, Walks, engine, fast_path, graph, output, proposal, rng,
    sampler, walk,
};

/// The walk library: every walk written in the `#[walk]` DSL (`walks/*.rs`), compiled into
/// this crate. `wayfarer explain <name>` shows what the compiler derived for each.
pub use library::dsl as walks;

/// The hand-written reference walks the compiled library is tested against (the CLI's
/// `*-ref` walks).
pub use wayfarer_runtime::walks as reference;

use std::path::Path;
use std::sync::atomic::AtomicU64;

/// Everything a typical program needs.
pub mod prelude {
    pub use crate::output::IdSpace;
    pub use crate::walks::types::*;
    pub use crate::{
        CostRatio, CsrGraph, NO_NODE, RunOutput, SamplerMode, Starts, Step, StepRng, Walk, WalkExt, WalkRun, Walks, sampler, walk,
    };
}

/// The embedded default graph's edge list (gzipped text: `source target label`).
const WORDNET_EDGES_GZ: &[u8] = include_bytes!("../data/wordnet/wordnet-edges.txt.gz");

/// A one-line description of the embedded default graph.
pub const DEFAULT_GRAPH_NAME: &str = "WordNet 3.0 synset graph (116,650 linked synsets, 377,592 typed pointers, 26 pointer labels; Princeton WordNet license, see data/wordnet/LICENSE)";

/// Loads the embedded default graph: WordNet 3.0's synsets and pointers, directed, labelled
/// by pointer type (`data/wordnet/labels.tsv`). Original ids are `POS * 10^8 + offset`.
pub fn default_graph() -> Result<CsrGraph, GraphError> {
    use std::io::Read;
    let mut text = Vec::with_capacity(8 << 20);
    flate2::read::GzDecoder::new(WORDNET_EDGES_GZ)
        .read_to_end(&mut text)
        .map_err(|e| GraphError::Io { path: "<embedded wordnet>".into(), source: e })?;
    let opts = graph::EdgeListOptions { label_col: Some(3), ..Default::default() };
    CsrGraph::parse_edge_list(&text, Path::new("<embedded wordnet>"), &opts)
}

/// A walk ready to run on a graph; built by [`WalkExt::on`].
pub struct WalkRun<'g, W: Walk> {
    walk: W,
    graph: &'g CsrGraph,
    config: WalkConfig,
    starts: Starts,
    progress: Option<&'g AtomicU64>,
    backend: gpu::Backend,
    threads: Option<usize>,
    gpus: job::Gpus,
}

/// The result of [`WalkRun::run`]: the walks, the report and the graph they refer to.
pub struct RunOutput<'g> {
    /// The walks (internal ids).
    pub walks: Walks,
    /// What the run did.
    pub report: RunReport,
    /// Where it ran: `cpu` or `cuda (<device name>)`.
    pub backend: String,
    graph: &'g CsrGraph,
}

impl RunOutput<'_> {
    /// Writes the walks as `.npy` or `.txt` (by extension), in original ids.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), GraphError> {
        output::write_walks(&self.walks, self.graph, output::IdSpace::Original, path.as_ref())
    }
    /// Writes the walks as `.npy`, in original ids.
    pub fn write_npy(&self, path: impl AsRef<Path>) -> Result<(), GraphError> {
        self.write(path)
    }
}

impl<'g, W: Walk> WalkRun<'g, W> {
    /// Steps per walk (default 80).
    pub fn length(mut self, length: u32) -> Self {
        self.config.length = length;
        self
    }
    /// The seed (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.config.seed = seed;
        self
    }
    /// The sampler policy (default adaptive).
    pub fn sampler(mut self, mode: SamplerMode) -> Self {
        self.config.sampler = mode;
        self
    }
    /// Where the cost model comes from (default: [`CostRatio::Default`], fixed, so a seed gives
    /// the same walks on every machine; a measured one is opt-in).
    pub fn cost_ratio(mut self, r: CostRatio) -> Self {
        self.config.cost_ratio = r;
        self
    }
    /// Which walkers to run (default one per node).
    pub fn starts(mut self, starts: Starts) -> Self {
        self.starts = starts;
        self
    }
    /// `k` walkers from every node (query `q` starts at node `q mod n`).
    pub fn walks_per_node(mut self, k: u32) -> Self {
        self.starts = Starts::EveryNode { per_node: k };
        self
    }
    /// CPU worker threads for this run (default: rayon's global pool, all cores). The walks
    /// are the same for any count.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }
    /// Walkers advanced in turn per thread (0, [`engine::INTERLEAVE_AUTO`]: the best width for
    /// each path).
    pub fn interleave(mut self, width: usize) -> Self {
        self.config.interleave = width;
        self
    }
    /// Bytes the structured-proposal tables may take (default: `WAYFARER_TABLE_BUDGET`, else a
    /// quarter of the memory available; 0 turns them off). The longest rows get tables first,
    /// and which rows have them decides the samplers: pin it to reproduce walks elsewhere.
    pub fn table_budget(mut self, bytes: u64) -> Self {
        self.config.table_budget = Some(bytes);
        self
    }
    /// A counter advanced by finished walkers (for progress bars).
    pub fn progress(mut self, counter: &'g AtomicU64) -> Self {
        self.progress = Some(counter);
        self
    }
    /// Where to run: [`gpu::Backend::Auto`] (the default) uses the GPU when there is a usable
    /// one and the walk has a `#[walk]` source, else all CPU cores.
    pub fn backend(mut self, backend: gpu::Backend) -> Self {
        self.backend = backend;
        self
    }
    /// GPUs to run on (default 0: every visible one; each holds the graph and runs the
    /// walkers whose start node hashes to it). The walks are the same for any count.
    pub fn gpus(mut self, count: usize) -> Self {
        self.gpus.count = count;
        self
    }
    /// Runs the walk: one [`job::WalkJob`], on the backend [`job::select`] picks, with every
    /// walk collected in memory (the size is checked first).
    pub fn run(self) -> Result<RunOutput<'g>, WalkError> {
        let mut job = job::WalkJob::new(self.graph, job::JobWalk::native(&self.walk));
        job.length = self.config.length;
        job.starts = self.starts.clone();
        job.seed = self.config.seed;
        job.sampler = self.config.sampler;
        job.cost_ratio = self.config.cost_ratio;
        job.interleave = self.config.interleave;
        job.table_budget = self.config.table_budget;
        job.threads = self.threads;
        job.gpus = self.gpus;
        job.progress = self.progress;
        job.batch_bytes = usize::MAX;
        let chosen = job::select(self.backend, &job)?;
        let mut backend = String::new();
        let (walks, report) = engine::collect(job.starts.count(self.graph.num_nodes()), job.length, |sink| {
            let done = chosen.runner.run(&job, sink)?;
            backend = done.backend;
            Ok(done.report)
        })?;
        Ok(RunOutput { walks, report, backend, graph: self.graph })
    }
}

/// Adds `.on(&graph)` to every walk.
pub trait WalkExt: Walk + Sized {
    /// Prepares this walk to run on `graph`.
    fn on(self, graph: &CsrGraph) -> WalkRun<'_, Self> {
        WalkRun {
            walk: self,
            graph,
            config: WalkConfig::default(),
            starts: Starts::EveryNode { per_node: 1 },
            progress: None,
            backend: gpu::Backend::Auto,
            threads: None,
            gpus: job::Gpus::default(),
        }
    }
}

impl<W: Walk> WalkExt for W {}
