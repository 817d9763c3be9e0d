//! The types every backend's walk run shares: which walkers run ([`Starts`]), with which
//! sampler policy ([`SamplerMode`]) and settings ([`WalkConfig`]), the walks they make
//! ([`Walks`]) and what the run did ([`RunReport`], [`SamplerStats`]). The CPU engine, the
//! CUDA and wgpu backends and the job seam all speak these.

use crate::cost::CostModel;
pub use crate::cost::CostRatio;
use crate::error::WalkError;
use crate::graph::CsrGraph;
use rayon::prelude::*;

/// Which sampler runs each step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SamplerMode {
    /// The cost model picks eRJS or eRVS per step.
    #[default]
    Adaptive,
    /// eRJS whenever the walk has a bound (eRVS otherwise, and to finish a step whose trials
    /// ran out).
    Rejection,
    /// eRVS on every step.
    Reservoir,
    /// Structured eRJS (proposals from the walk's terms, [`crate::proposal`]) on every step
    /// where the walk has a plan and its tables were built; plain eRJS otherwise (eRVS without
    /// a bound, and to finish a step whose trials ran out).
    Structured,
    /// Direct draws from per-row prefix sums of a static-weight walk's weights (one uniform
    /// and a binary search, no rejection), on every step: the adaptive rule's table steps,
    /// forced, for ablations. CPU only; a walk whose weight reads more than the edge is an
    /// error.
    Table,
    /// Reference: inverse transform over a prefix sum.
    InverseTransform,
    /// Reference: FlowWalker-style reservoir with one random number per edge.
    ReservoirPrefix,
}

impl std::str::FromStr for SamplerMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "adaptive" => SamplerMode::Adaptive,
            "erjs" | "rejection" => SamplerMode::Rejection,
            "ervs" | "reservoir" => SamplerMode::Reservoir,
            "structured" => SamplerMode::Structured,
            "table" => SamplerMode::Table,
            "its" | "inverse-transform" => SamplerMode::InverseTransform,
            "prefix-reservoir" | "flowwalker" => SamplerMode::ReservoirPrefix,
            _ => return Err(format!("unknown sampler `{s}`: use adaptive, erjs, structured, ervs, table, its or prefix-reservoir")),
        })
    }
}

impl std::fmt::Display for SamplerMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SamplerMode::Adaptive => "adaptive",
            SamplerMode::Rejection => "erjs",
            SamplerMode::Reservoir => "ervs",
            SamplerMode::Structured => "structured",
            SamplerMode::Table => "table",
            SamplerMode::InverseTransform => "its",
            SamplerMode::ReservoirPrefix => "prefix-reservoir",
        })
    }
}

/// Which walkers to run.
#[derive(Clone, Debug)]
pub enum Starts {
    /// `per_node` walkers from every node: query `q` starts at node `q mod n`.
    EveryNode {
        /// Walkers per node.
        per_node: u32,
    },
    /// One walker per listed node, in order.
    Nodes(Vec<u32>),
    /// Queries `first .. first + count` of `of` (one process's shard of a run split over
    /// processes): the same walks as those queries of the whole run, returned in order.
    Shard {
        /// The whole run's starts (not itself a shard).
        of: Box<Starts>,
        /// The shard's first query.
        first: u64,
        /// Its queries.
        count: u64,
    },
}

impl Starts {
    /// The number of walkers on a graph of `n` nodes.
    pub fn count(&self, n: usize) -> u64 {
        match self {
            Starts::EveryNode { per_node } => n as u64 * *per_node as u64,
            Starts::Nodes(v) => v.len() as u64,
            Starts::Shard { count, .. } => *count,
        }
    }

    /// Shard `rank` of `ranks` of these starts on a graph of `n` nodes: contiguous query
    /// ranges of sizes differing by at most one, in rank order.
    pub fn shard(self, rank: usize, ranks: usize, n: usize) -> Starts {
        let total = self.count(n);
        let ranks = ranks.max(1) as u64;
        let at = |r: u64| (total as u128 * r as u128 / ranks as u128) as u64;
        let (first, end) = (at(rank as u64), at(rank as u64 + 1));
        Starts::Shard { of: Box::new(self), first, count: end - first }
    }

    /// The whole run these starts belong to, and the global index of their first query.
    pub fn whole(&self) -> (&Starts, u64) {
        match self {
            Starts::Shard { of, first, .. } => (of, *first),
            other => (other, 0),
        }
    }

    /// The start node of local query `q` (`q < count`).
    #[inline]
    pub fn start(&self, q: u64, n: usize) -> u32 {
        match self {
            Starts::EveryNode { .. } => (q % n as u64) as u32,
            Starts::Nodes(v) => v[q as usize],
            Starts::Shard { of, first, .. } => of.start(first + q, n),
        }
    }

    /// Checks the starts against a graph of `n` nodes.
    pub fn validate(&self, n: usize) -> Result<(), WalkError> {
        match self {
            Starts::Nodes(v) => match v.iter().find(|&&s| s as usize >= n) {
                Some(&bad) => Err(WalkError::BadStart { node: bad as u64, num_nodes: n }),
                None => Ok(()),
            },
            Starts::EveryNode { per_node: 0 } => Err(WalkError::param("walks-per-node", "must be at least 1")),
            Starts::EveryNode { .. } => Ok(()),
            Starts::Shard { of, first, count } => {
                if matches!(**of, Starts::Shard { .. }) || first + count > of.count(n) {
                    return Err(WalkError::Config(format!("shard {first}+{count} is not within the run's queries")));
                }
                of.validate(n)
            }
        }
    }

    /// The global index of local query `q`: what its random streams are keyed by.
    #[inline]
    pub fn global(&self, q: u64) -> u64 {
        match self {
            Starts::Shard { first, .. } => first + q,
            _ => q,
        }
    }
}

/// Run settings.
#[derive(Clone, Debug)]
pub struct WalkConfig {
    /// Steps per walk: a complete walk holds `length + 1` nodes, the start first.
    pub length: u32,
    /// The seed.
    pub seed: u64,
    /// Sampler policy.
    pub sampler: SamplerMode,
    /// Cost ratio source.
    pub cost_ratio: CostRatio,
    /// Walkers each thread advances in turn (1 = one walker at a time). Each candidate's edge
    /// data is prefetched and the thread serves the other walkers while it arrives; the walks
    /// are identical at any width. [`INTERLEAVE_AUTO`] (0, the default): 8 on the general path,
    /// 64 on the one-draw fast paths and the structured lock-step path, whose steps are short
    /// enough to need many more walkers in flight, 32 on the lock-step eRJS path (see
    /// `bench/results/`).
    pub interleave: usize,
    /// Bytes the structured-proposal tables may take (`None`: `WAYFARER_TABLE_BUDGET`, else a
    /// quarter of the memory available; 0 turns them off). Which rows get tables follows the
    /// budget, and so do the walks: pin it to reproduce walks on another machine.
    pub table_budget: Option<u64>,
    /// Whether to record the edge behind each move ([`Walks::edges`]). The CPU engines do;
    /// the GPU backends refuse it.
    pub record_edges: bool,
}

/// [`WalkConfig::interleave`]'s "choose for me": the width each path runs best at.
pub const INTERLEAVE_AUTO: usize = 0;
/// The general path's width under [`INTERLEAVE_AUTO`].
pub const GENERAL_INTERLEAVE: usize = 8;
/// The fast paths' width under [`INTERLEAVE_AUTO`].
pub const FAST_PATH_INTERLEAVE: usize = 64;
/// The lock-step eRJS path's width under [`INTERLEAVE_AUTO`]: its lanes are larger and its
/// steps longer, and 64 of them ran 3-7% slower than 32 on R-MAT 18 and 22
/// (`bench/results/2026-12-06-cpu-lock-step-width.md`).
pub const LOCK_STEP_REJECTION_INTERLEAVE: usize = 32;

/// An interleave width as written on a command line: `auto` ([`INTERLEAVE_AUTO`]) or a width
/// of at least 1.
pub fn parse_interleave(s: &str) -> Result<usize, String> {
    match s {
        "auto" => Ok(INTERLEAVE_AUTO),
        _ => match s.parse::<usize>() {
            Ok(0) | Err(_) => Err(format!("`{s}` is not `auto` or a width of at least 1")),
            Ok(n) => Ok(n),
        },
    }
}

impl WalkConfig {
    /// The general path's width.
    pub fn general_interleave(&self) -> usize {
        if self.interleave == INTERLEAVE_AUTO { GENERAL_INTERLEAVE } else { self.interleave }
    }

    /// The fast paths' width.
    pub fn fast_path_interleave(&self) -> usize {
        if self.interleave == INTERLEAVE_AUTO { FAST_PATH_INTERLEAVE } else { self.interleave }
    }

    /// The lock-step path's width: with structured-proposal tables or without (eRJS).
    pub fn lock_step_interleave(&self, structured: bool) -> usize {
        match self.interleave {
            INTERLEAVE_AUTO if structured => FAST_PATH_INTERLEAVE,
            INTERLEAVE_AUTO => LOCK_STEP_REJECTION_INTERLEAVE,
            width => width,
        }
    }
}

impl Default for WalkConfig {
    fn default() -> Self {
        WalkConfig {
            length: 80,
            seed: 0,
            sampler: SamplerMode::Adaptive,
            cost_ratio: CostRatio::Default,
            interleave: INTERLEAVE_AUTO,
            table_budget: None,
            record_edges: false,
        }
    }
}

/// Walks in memory: `num_walks` rows of `stride = length + 1` node ids, padded with
/// [`NO_NODE`](crate::graph::NO_NODE) after a walk that ended early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walks {
    /// Slots per walk (`length + 1`).
    pub stride: usize,
    /// Row-major node ids (internal ids).
    pub nodes: Vec<u32>,
    /// Nodes actually visited by each walk (1 ..= stride).
    pub lengths: Vec<u32>,
    /// When asked for ([`WalkConfig::record_edges`]): per walk, `stride - 1` edge ids (indices
    /// into the CSR's edge arrays), the edge behind each move, row-major; [`NO_EDGE`] past a
    /// walk's end and for a move made without an edge (a restart or teleport). Empty
    /// otherwise.
    pub edges: Vec<u64>,
}

/// [`Walks::edges`]' entry where a move took no edge, or past a walk's end.
pub const NO_EDGE: u64 = u64::MAX;

impl Walks {
    /// Appends the next walks (of the same stride): how batched runs collect their output.
    pub fn append(&mut self, batch: Walks) {
        debug_assert_eq!(self.stride, batch.stride);
        if self.lengths.is_empty() {
            *self = batch;
            return;
        }
        self.nodes.extend(batch.nodes);
        self.lengths.extend(batch.lengths);
        self.edges.extend(batch.edges);
    }

    /// The walks as anonymous walks: each node replaced by the index of its first visit in
    /// its walk (`0 1 0 2` for `a b a c`), so walks with the same shape are equal whatever
    /// the nodes' ids. Slots past a walk's end are unchanged.
    pub fn to_anonymous(mut self) -> Walks {
        let stride = self.stride;
        self.nodes.par_chunks_mut(stride.max(1)).zip(self.lengths.par_iter()).for_each(|(row, &len)| {
            let row = &mut row[..len as usize];
            // Walks are short (stride slots): a linear scan of the distinct nodes beats hashing.
            let mut seen: Vec<u32> = Vec::with_capacity(16);
            for v in row.iter_mut() {
                *v = match seen.iter().position(|&u| u == *v) {
                    Some(i) => i as u32,
                    None => {
                        seen.push(*v);
                        seen.len() as u32 - 1
                    }
                };
            }
        });
        self
    }
    /// Number of walks.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }
    /// Whether there are no walks.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }
    /// The visited nodes of walk `i`.
    pub fn walk(&self, i: usize) -> &[u32] {
        &self.nodes[i * self.stride..i * self.stride + self.lengths[i] as usize]
    }
    /// The edges behind walk `i`'s moves ([`Walks::edges`]; empty unless recorded).
    pub fn walk_edges(&self, i: usize) -> &[u64] {
        if self.edges.is_empty() {
            return &[];
        }
        let steps = self.stride - 1;
        &self.edges[i * steps..i * steps + self.lengths[i] as usize - 1]
    }
    /// Every walk's visited nodes (internal ids), in query order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        (0..self.len()).map(|i| self.walk(i))
    }
    /// Total moves made.
    pub fn steps(&self) -> u64 {
        self.lengths.iter().map(|&l| l as u64 - 1).sum()
    }
}

/// How steps were sampled. `repr(C)`: a [`CompiledTurn`](crate::turn::CompiledTurn) counts its eRJS steps in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct SamplerStats {
    /// Steps finished by eRJS.
    pub rejection_steps: u64,
    /// eRJS trials (accepted or not).
    pub rejection_trials: u64,
    /// Steps where eRJS ran out of trials and eRVS finished the step.
    pub rejection_fallbacks: u64,
    /// Steps sampled by eRVS from the start.
    pub reservoir_steps: u64,
    /// Steps sampled by a reference sampler.
    pub reference_steps: u64,
    /// Steps of a static-weight walk sampled by binary search in precomputed row prefix sums.
    pub table_steps: u64,
    /// Walks ended at a dead end before their length.
    pub dead_ends: u64,
    /// Walks ended by the program's stop rule.
    pub stopped: u64,
    /// Steps finished by structured eRJS ([`crate::proposal`]).
    pub structured_steps: u64,
    /// Structured eRJS trials (accepted or not).
    pub structured_trials: u64,
    /// Steps where structured eRJS ran out of trials and eRVS finished the step.
    pub structured_fallbacks: u64,
    /// Steps of a static-weight walk drawn from per-row alias tables (the alias fast path,
    /// [`crate::fast_path`]).
    pub alias_steps: u64,
}

impl SamplerStats {
    /// Adds `o`'s counts to these (the run's totals over its chunks).
    pub fn add(&mut self, o: &SamplerStats) {
        self.rejection_steps += o.rejection_steps;
        self.rejection_trials += o.rejection_trials;
        self.rejection_fallbacks += o.rejection_fallbacks;
        self.reservoir_steps += o.reservoir_steps;
        self.reference_steps += o.reference_steps;
        self.table_steps += o.table_steps;
        self.dead_ends += o.dead_ends;
        self.stopped += o.stopped;
        self.structured_steps += o.structured_steps;
        self.structured_trials += o.structured_trials;
        self.structured_fallbacks += o.structured_fallbacks;
        self.alias_steps += o.alias_steps;
    }

    /// "eRJS 63.2% / eRVS 36.8%"-style summary of sampled steps.
    pub fn mix(&self) -> String {
        let total = (self.rejection_steps
            + self.rejection_fallbacks
            + self.reservoir_steps
            + self.reference_steps
            + self.table_steps
            + self.structured_steps
            + self.structured_fallbacks
            + self.alias_steps)
            .max(1) as f64;
        let pct = |x: u64| 100.0 * x as f64 / total;
        if self.reference_steps > 0 {
            return format!("reference 100% ({} steps)", self.reference_steps);
        }
        let mut s = format!("eRJS {:.1}% / eRVS {:.1}%", pct(self.rejection_steps), pct(self.reservoir_steps));
        if self.rejection_fallbacks > 0 {
            s += &format!(" / eRJS->eRVS {:.2}%", pct(self.rejection_fallbacks));
        }
        if self.table_steps > 0 {
            s += &format!(" / prefix table {:.1}%", pct(self.table_steps));
        }
        if self.alias_steps > 0 {
            s += &format!(" / alias table {:.1}%", pct(self.alias_steps));
        }
        if self.structured_steps + self.structured_fallbacks > 0 {
            s += &format!(
                " / structured {:.1}% ({:.2} trials/step)",
                pct(self.structured_steps),
                self.structured_trials as f64 / (self.structured_steps + self.structured_fallbacks).max(1) as f64
            );
            if self.structured_fallbacks > 0 {
                s += &format!(" / structured->eRVS {:.2}%", pct(self.structured_fallbacks));
            }
        }
        s
    }
}

/// What a run did and how long it took.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// The walk's name.
    pub walk: String,
    /// Walkers run.
    pub walkers: u64,
    /// Moves made.
    pub steps: u64,
    /// Seconds spent walking (excludes precomputation and profiling).
    pub walk_seconds: f64,
    /// Seconds spent computing per-node arrays.
    pub precompute_seconds: f64,
    /// Seconds spent profiling the cost ratio (0 if cached or fixed).
    pub profile_seconds: f64,
    /// The cost model used (`R` and `F`).
    pub cost: CostModel,
    /// Where it came from: "default", "fixed", "profiled", "cached" (measured on an earlier run),
    /// "unused" (not the adaptive rule); on the GPU also "gpu default" and "tuned".
    pub cost_ratio_source: &'static str,
    /// Sampler counters.
    pub stats: SamplerStats,
    /// Worker threads.
    pub threads: usize,
    /// The sampler policy.
    pub sampler: SamplerMode,
    /// Whether the walk's compiled turns ([`CompiledTurn`](crate::turn::CompiledTurn)) sampled its steps.
    pub compiled_turns: bool,
    /// The engine's fast path, if the steps took one ([`crate::fast_path`]): uniform rows (the
    /// walks and sampler counts of eRJS, one draw per step) or alias rows (one alias draw per
    /// step).
    pub fast_path: crate::fast_path::FastPathReport,
    /// The structured proposals' tables: what was built, or why none were.
    pub proposal: ProposalReport,
    /// Memory of the graph's `has_edge` filters (0: none; CPU runs of walks that call it).
    pub edge_filter_bytes: usize,
}

/// What a run did about the walk's structured proposal plan ([`crate::proposal`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ProposalReport {
    /// The walk has no plan (or the sampler policy does not use one).
    #[default]
    None,
    /// Tables built: their bytes and seconds.
    Built {
        /// Seconds to build them.
        seconds: f64,
        /// Which rows they cover, and the bytes held.
        coverage: crate::proposal::TableCoverage,
    },
    /// The walk has a plan but no tables were built, and why.
    Skipped(String),
}

impl RunReport {
    /// Steps per second of walking time.
    pub fn steps_per_second(&self) -> f64 {
        self.steps as f64 / self.walk_seconds.max(1e-9)
    }

    /// The one-line summary printed after a run.
    pub fn summary(&self, backend: &str) -> String {
        format!(
            "{}: {} walkers, {} steps in {:.3} s ({:.2} M steps/s), backend {backend}{}, sampler {} [{}], R = {:.3}, F = {:.1}, R(short rows) = {:.3} ({}), dead ends {}",
            self.walk,
            self.walkers,
            self.steps,
            self.walk_seconds,
            self.steps_per_second() / 1e6,
            if self.threads > 0 { format!(" ({} threads)", self.threads) } else { String::new() },
            self.sampler,
            self.stats.mix(),
            self.cost.ratio,
            self.cost.fixed,
            self.cost.ratio_short,
            match self.cost_ratio_source {
                s @ ("profiled" | "cached" | "tuned") => format!("{s} on this machine: the walks depend on it"),
                s => s.to_string(),
            },
            self.stats.dead_ends,
        ) + &self.fast_path.describe()
            + &match &self.proposal {
                ProposalReport::None => String::new(),
                ProposalReport::Built { seconds, coverage } => {
                    format!(
                        ", proposal tables {:.1} MiB in {:.3} s{}",
                        coverage.bytes as f64 / (1u64 << 20) as f64,
                        seconds,
                        coverage.describe()
                    )
                }
                ProposalReport::Skipped(why) => format!(", no proposal tables ({why})"),
            }
            + &if self.edge_filter_bytes > 0 {
                format!(", has_edge filters {:.1} MiB", self.edge_filter_bytes as f64 / (1u64 << 20) as f64)
            } else {
                String::new()
            }
    }
}

// Here rather than beside `WalkError`: it needs the graph, and errors do not depend on graphs.
impl WalkError {
    /// The error a GPU kernel reported for `walk` on `graph`: `code` 2 a weight above the
    /// bound `bound`, any other a bad weight (negative, NaN or infinite), met at `step` on
    /// edge entry `edge`. The row holding the edge names the source node.
    pub fn from_device_report(graph: &CsrGraph, walk: &str, code: u64, step: u64, edge: u64, weight: f32, bound: f32) -> Self {
        let map = graph.id_map();
        let src = map.original(graph.offsets().partition_point(|&o| o <= edge).saturating_sub(1) as u32);
        let dst = usize::try_from(edge).ok().and_then(|e| graph.targets().get(e).copied()).map_or(u64::MAX, |d| map.original(d));
        let (walk, step) = (walk.to_string(), u32::try_from(step).unwrap_or(u32::MAX));
        match code {
            2 => WalkError::BoundViolated { walk, weight, bound, src, dst, step },
            _ => WalkError::BadWeight { walk, weight, src, dst, step },
        }
    }
}
