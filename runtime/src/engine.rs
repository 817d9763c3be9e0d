//! The CPU engine: every walker on every core, with a per-step choice of exact sampler.
//!
//! Queries (one walker each) are split across rayon's threads in fixed chunks. A walker's
//! random numbers come from Philox streams keyed by `(seed, query, step)`, so the output does
//! not depend on the thread count, the chunking or the interleaving. It does depend on the
//! cost model (which picks the sampler, and the two samplers consume randomness differently):
//! the default, [`CPU_COST_MODEL`], is fixed, so a seed gives the same walks on any machine; a
//! measured model ([`CostRatio::Cached`], `--cost-ratio profile`) is opt-in.
//!
//! Per step, in adaptive mode, the engine compares the expected costs of the two exact
//! samplers at node `v` of degree `d`, with bound `B` and sum estimate `Ŝ`:
//! eRJS takes about `d·B/Ŝ` trials, eRVS reads `d` edges plus a fixed start-up cost worth `F`
//! edges (its first keys need logarithms and exponentials, which dominate on small rows). In
//! units of one edge read, eRVS wins iff `R·d·B > Ŝ·(d + F)`, where `R` is the time of one
//! rejection trial over the time of one reservoir edge ([`CostModel`]; measured on this machine
//! and graph by [`profile_cost_model`] when asked). With `F = 0` this is
//! FlexiWalker's rule `R·B > Ŝ`, which sends small rows to eRVS even where eRJS is cheaper.

use crate::cost::cached_model;
pub use crate::cost::{CPU_COST_MODEL, CostModel, CostRatio, SHORT_ROW, cost_cache_key, cost_cache_path, profile_cost_model};
use crate::error::WalkError;
use crate::graph::{CsrGraph, NO_NODE};
use crate::rng::{INIT_STEP, Purpose, StepRng};
use crate::sampler::{self, SampleError};
use crate::walk::{Bound, Ctx, NodeStats, Walk, Walker};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

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
            "its" | "inverse-transform" => SamplerMode::InverseTransform,
            "prefix-reservoir" | "flowwalker" => SamplerMode::ReservoirPrefix,
            _ => return Err(format!("unknown sampler `{s}`: use adaptive, erjs, ervs, its or prefix-reservoir")),
        })
    }
}

impl std::fmt::Display for SamplerMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SamplerMode::Adaptive => "adaptive",
            SamplerMode::Rejection => "erjs",
            SamplerMode::Reservoir => "ervs",
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
    /// Walkers each thread advances in turn (1 = one walker at a time). Each eRJS candidate's
    /// edge data is prefetched and the thread serves the other walkers while it arrives; the
    /// walks are identical at any width. Default 8 (see `bench/results/`).
    pub interleave: usize,
}

impl Default for WalkConfig {
    fn default() -> Self {
        WalkConfig { length: 80, seed: 0, sampler: SamplerMode::Adaptive, cost_ratio: CostRatio::Default, interleave: 8 }
    }
}

/// Walks in memory: `num_walks` rows of `stride = length + 1` node ids, padded with
/// [`NO_NODE`] after a walk that ended early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walks {
    /// Slots per walk (`length + 1`).
    pub stride: usize,
    /// Row-major node ids (internal ids).
    pub nodes: Vec<u32>,
    /// Nodes actually visited by each walk (1 ..= stride).
    pub lengths: Vec<u32>,
}

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
    /// Every walk's visited nodes (internal ids), in query order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        (0..self.len()).map(|i| self.walk(i))
    }
    /// Total moves made.
    pub fn steps(&self) -> u64 {
        self.lengths.iter().map(|&l| l as u64 - 1).sum()
    }
}

/// How steps were sampled. `repr(C)`: a [`CompiledTurn`] counts its eRJS steps in place.
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
}

impl SamplerStats {
    fn add(&mut self, o: &SamplerStats) {
        self.rejection_steps += o.rejection_steps;
        self.rejection_trials += o.rejection_trials;
        self.rejection_fallbacks += o.rejection_fallbacks;
        self.reservoir_steps += o.reservoir_steps;
        self.reference_steps += o.reference_steps;
        self.table_steps += o.table_steps;
        self.dead_ends += o.dead_ends;
        self.stopped += o.stopped;
    }

    /// "eRJS 63.2% / eRVS 36.8%"-style summary of sampled steps.
    pub fn mix(&self) -> String {
        let total = (self.rejection_steps + self.rejection_fallbacks + self.reservoir_steps + self.reference_steps + self.table_steps)
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
    /// Whether the walk's compiled turns ([`CompiledTurn`]) sampled its steps.
    pub compiled_turns: bool,
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
        )
    }
}

struct Env<'a, W: Walk> {
    walk: &'a W,
    ctx: Ctx<'a>,
    mode: SamplerMode,
    cost: CostModel,
    seed: u64,
    /// Per-row inclusive prefix sums of a static-weight walk's weights (adaptive mode).
    table: Option<Vec<f64>>,
    /// The walk's machine code for turns, with this run's constants.
    compiled: Option<Compiled>,
}

/// Rows whose expected number of eRJS trials reaches this use the prefix table instead.
pub const TABLE_TRIALS: f64 = 2.5;

/// The run's constants a [`CompiledTurn`] reads (`repr(C)`; pointers valid for the run).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TurnArgs {
    /// The walk's own data ([`CompiledTurn::new`]'s `image`).
    pub image: *const u8,
    /// The graph's row offsets (`n + 1` entries).
    pub offsets: *const u64,
    /// The graph's edge targets.
    pub targets: *const u32,
    /// Adaptive mode's per-row prefix sums of a static-weight walk, or null.
    pub table: *const f64,
    /// The cost model's `R` (rows longer than [`SHORT_ROW`]).
    pub ratio: f64,
    /// The cost model's `F`.
    pub fixed: f64,
    /// The cost model's `R` on short rows.
    pub ratio_short: f64,
    /// 1 in eRJS mode (eRJS whenever there is a bound), 0 in adaptive mode (the cost model
    /// chooses).
    pub rejection_only: u32,
}

/// Byte offsets of the engine's per-walker slot for a walk whose state type is `S`, for code
/// generated at run time: the walker ([`Walker`], `repr(C)`), its
/// sampling stream ([`StepRng`], see [`StepRng::LAYOUT`]) and the phase of its step
/// (`index: u64`, `level: f64`, `bound: f32`, `trials: u32`, `cap: u32`; `trials == 0` at a
/// step's start, else the eRJS trial whose candidate `index` and uniform level `level` are
/// pending, with at most `cap` trials for the step, or 0 until one was rejected).
#[derive(Clone, Copy, Debug)]
pub struct SlotLayout {
    /// The walker.
    pub walker: usize,
    /// The step's sampling stream.
    pub rng: usize,
    /// `phase.index`.
    pub phase_index: usize,
    /// `phase.level`.
    pub phase_level: usize,
    /// `phase.bound`.
    pub phase_bound: usize,
    /// `phase.trials`.
    pub phase_trials: usize,
    /// `phase.cap` (`u32`): the step's trial cap, [`CostModel::trial_cap`] of its row, once a
    /// trial was rejected (0 before).
    pub phase_cap: usize,
}

/// The slot layout for walks with state type `S`.
pub fn slot_layout<S>() -> SlotLayout {
    use std::mem::offset_of;
    let phase = offset_of!(Slot<S>, phase);
    SlotLayout {
        walker: offset_of!(Slot<S>, w),
        rng: offset_of!(Slot<S>, rng),
        phase_index: phase + offset_of!(Phase, index),
        phase_level: phase + offset_of!(Phase, level),
        phase_bound: phase + offset_of!(Phase, bound),
        phase_trials: phase + offset_of!(Phase, trials),
        phase_cap: phase + offset_of!(Phase, cap),
    }
}

/// The signature of a compiled turn: `(args, slot, stats) -> code`.
pub type TurnFn = unsafe extern "C" fn(args: *const TurnArgs, slot: *mut u8, stats: *mut SamplerStats) -> u32;

/// The signature of a compiled eRVS: `(args, walker, rng, base, d) -> index`, -1 for a row
/// of zero weights, -2 for a bad weight.
pub type ReservoirFn = unsafe extern "C" fn(args: *const TurnArgs, walker: *const u8, rng: *mut StepRng, base: u64, d: u64) -> i64;

/// The signature of a compiled `update`: `(args, walker, rng)`, the walker laid out as
/// [`Walker`] of the walk's state type and `rng` the move's stream ([`StepRng::LAYOUT`]),
/// its first block computed.
pub type UpdateFn = unsafe extern "C" fn(args: *const TurnArgs, walker: *mut u8, rng: *mut StepRng);

/// Machine code for the engine's eRJS turns of one walk (the Cranelift backend generates it):
/// what the engine's own turn does in adaptive and eRJS mode when the step is sampled by
/// rejection, with the walk's `B`, `Ŝ`, envelope and weight inlined and the Philox stream
/// drawn in place, so that a step costs no call per query. Every other case (eRVS, the prefix
/// table, a trial cap reached, a bad weight) it hands back untouched, and the engine's own
/// turn runs it: the walks are the same either way.
#[derive(Clone, Copy, Debug)]
pub struct CompiledTurn {
    start: TurnFn,
    trial: TurnFn,
    image: *const u8,
    update: Option<(UpdateFn, u32)>,
    reservoir: Option<ReservoirFn>,
}

impl CompiledTurn {
    /// The walker waits for its candidate's edge data (prefetched by the engine).
    pub const PENDING: u32 = 0;
    /// The walker moved.
    pub const MOVED: u32 = 1;
    /// The walker is at a dead end.
    pub const DEAD_END: u32 = 2;
    /// Nothing was changed: the engine's own turn runs this one.
    pub const FALLBACK: u32 = 3;
    /// Nothing was changed, and the step (at its start) is eRVS's: the sampler choice the
    /// engine's own turn would make, so the engine runs eRVS (counting a reservoir step)
    /// without computing `B` and `Ŝ` again.
    pub const RESERVOIR: u32 = 4;

    /// A compiled turn calling `start` for a step's first turn (`phase.trials == 0`, the
    /// step's stream started and its first block computed by the engine) and `trial` for the
    /// others, with [`TurnArgs::image`] = `image`.
    ///
    /// # Safety
    /// Each function, given a [`TurnArgs`] of this run, a slot laid out as [`slot_layout`] says for
    /// the walk's state type, and the thread's [`SamplerStats`], must read only those, the
    /// graph's arrays and `image` (valid for the run), and must leave the slot, the walker and
    /// the counters exactly as the engine's own turn would for the same slot (returning
    /// `PENDING`, `MOVED` or `DEAD_END`), or change nothing and return `FALLBACK`; `start` may
    /// also change nothing and return `RESERVOIR` where the engine's own turn would take an
    /// eRVS step (not a prefix-table one).
    pub unsafe fn new(start: TurnFn, trial: TurnFn, image: *const u8) -> Self {
        CompiledTurn { start, trial, image, update: None, reservoir: None }
    }

    /// The same, with eRVS compiled too: the engine calls `reservoir` for its eRVS steps
    /// (in every sampler mode) instead of `sampler::reservoir_jump` over [`Walk::weight`].
    ///
    /// # Safety
    /// `reservoir`, given this run's [`TurnArgs`], a walker, its step's stream and the
    /// walker's row (`base`, `d`), must return what `sampler::reservoir_jump` returns for the
    /// walk's weights (the index, or -1 for `None`), drawing the same numbers from the
    /// stream, or -2 where that reports an error; it reads only those, the graph's arrays and
    /// the image.
    pub unsafe fn with_reservoir(self, reservoir: ReservoirFn) -> Self {
        CompiledTurn { reservoir: Some(reservoir), ..self }
    }

    /// The same, with the walk's `update` compiled too: the engine calls `update` after a
    /// move instead of [`Walk::update`], having computed the first block of the move's stream
    /// when the routine takes `draws > 0` words (at most 4) from it.
    ///
    /// # Safety
    /// `update`, given this run's [`TurnArgs`], the moved walker and its move's stream, must
    /// do exactly what the walk's [`Walk::update`] does (taking the same `draws` words from the
    /// stream and no more), reading only those, the graph's arrays and the image.
    pub unsafe fn with_update(self, update: UpdateFn, draws: u32) -> Self {
        assert!(draws <= 4, "a compiled update takes at most one Philox block");
        CompiledTurn { update: Some((update, draws)), ..self }
    }
}

/// A compiled turn with its run's constants.
struct Compiled {
    /// The start and trial turns, in adaptive and eRJS mode.
    turns: Option<(TurnFn, TurnFn)>,
    update: Option<(UpdateFn, u32)>,
    reservoir: Option<ReservoirFn>,
    args: TurnArgs,
}

// SAFETY: the pointers in `args` refer to the run's graph, table and the walk's prepared data,
// shared read-only by every thread for the run's duration.
unsafe impl Send for Compiled {}
unsafe impl Sync for Compiled {}

/// Edge counts above which no prefix table is built (it costs 8 bytes per edge).
const MAX_TABLE_EDGES: u64 = 1 << 30;

/// Builds the per-row prefix sums of a static-weight walk, checking every weight.
fn build_table<W: Walk>(walk: &W, ctx: &Ctx) -> Result<Vec<f64>, WalkError> {
    let g = ctx.graph;
    let mut table = vec![0f64; g.num_edges() as usize];
    let chunks = crate::graph::build::row_chunks(g.offsets(), 1 << 16);
    let ptr = table.as_mut_ptr() as usize;
    chunks.into_par_iter().try_for_each(|nodes| {
        for v in nodes {
            let w = Walker::<W::State>::new(v as u32);
            let row = g.row(v as u32);
            let mut acc = 0f64;
            for e in row {
                let x = walk.weight(ctx, &w, e);
                if !(x >= 0.0) || x == f32::INFINITY {
                    let map = g.id_map();
                    let (src, dst) = (map.original(v as u32), map.original(g.targets()[e]));
                    return Err(WalkError::BadWeight { walk: walk.name().into(), weight: x, src, dst, step: 0 });
                }
                acc += x as f64;
                // SAFETY: rows are disjoint and each belongs to exactly one chunk.
                unsafe { *(ptr as *mut f64).add(e) = acc };
            }
        }
        Ok(())
    })?;
    Ok(table)
}

fn to_walk_error<S>(walk: &str, ctx: &Ctx, w: &Walker<S>, row_start: usize, bound: f32, e: SampleError) -> WalkError {
    match e {
        // Errors speak the user's ids.
        SampleError::BadWeight { index, weight } => WalkError::BadWeight {
            walk: walk.into(),
            weight,
            src: ctx.graph.id_map().original(w.cur),
            dst: ctx.graph.id_map().original(ctx.graph.targets()[row_start + index]),
            step: w.step,
        },
        SampleError::BoundViolated { index, weight } => WalkError::BoundViolated {
            walk: walk.into(),
            weight,
            bound,
            src: ctx.graph.id_map().original(w.cur),
            dst: ctx.graph.id_map().original(ctx.graph.targets()[row_start + index]),
            step: w.step,
        },
    }
}

#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Where a walker is within its current step: at its start (`trials == 0`; its row offsets
/// were prefetched when it moved), or after eRJS trial `trials` proposed candidate `index` at
/// level `level` under `bound` (the candidate's edge data was prefetched). `repr(C)`, like
/// the slot holding it: a [`CompiledTurn`] reads and writes it in place.
#[derive(Clone, Copy)]
#[repr(C)]
struct Phase {
    index: u64,
    level: f64,
    bound: f32,
    trials: u32,
    /// The step's trial cap ([`CostModel::trial_cap`] of its row) once a trial of the step was
    /// rejected; 0 before (a cap is at least 32).
    cap: u32,
}

impl Phase {
    const START: Phase = Phase { index: 0, level: 0.0, bound: 0.0, trials: 0, cap: 0 };
}

enum Turn {
    /// The step is not finished: serve other walkers while its data arrives.
    Pending,
    Moved,
    DeadEnd,
}

#[repr(C)]
struct Slot<S> {
    w: Walker<S>,
    query: u64,
    row: usize,
    len: u32,
    rng: StepRng,
    phase: Phase,
}

impl<W: Walk> Env<'_, W> {
    #[inline(always)]
    fn prefetch_edge(&self, e: usize) {
        let g = self.ctx.graph;
        prefetch(g.targets().as_ptr().wrapping_add(e));
        if let Some(w) = g.weights() {
            prefetch(w.as_ptr().wrapping_add(e));
        }
        if let Some(l) = g.labels() {
            prefetch(l.as_ptr().wrapping_add(e));
        }
    }

    /// Advances one walker by one turn: either a whole step, or up to the next eRJS trial
    /// whose candidate is not yet in cache. The random numbers drawn are the same whatever the
    /// interleaving, so walks do not depend on it.
    #[inline(always)]
    fn turn(&self, s: &mut Slot<W::State>, st: &mut SamplerStats, prefix: &mut Vec<f64>) -> Result<Turn, WalkError> {
        let g = self.ctx.graph;
        let walk = self.walk;
        let ctx = &self.ctx;
        let row = g.row(s.w.cur);
        let (base, d) = (row.start, row.len());
        let Slot { w, rng, phase, .. } = s;
        let wr: &Walker<W::State> = w;
        let weight = |i: usize| walk.weight(ctx, wr, base + i);
        let envelope = |i: usize| walk.weight_envelope(ctx, wr, base + i);
        let err = |e, bound| to_walk_error(walk.name(), ctx, wr, base, bound, e);
        let picked = 'pick: {
            match phase.trials {
                0 => {
                    if d == 0 {
                        return Ok(Turn::DeadEnd);
                    }
                    *rng = StepRng::new(self.seed, s.query, wr.step, Purpose::Sample);
                    match self.mode {
                        SamplerMode::Adaptive | SamplerMode::Rejection => {
                            // B and Ŝ are evaluated once per step, whichever sampler uses them;
                            // eRJS alone needs Ŝ only for the dead-end test (one load less).
                            let wants_estimate = self.mode == SamplerMode::Adaptive || walk.possible_zero();
                            let together = if wants_estimate { walk.step_estimates(ctx, wr) } else { None };
                            let dead = match together {
                                Some(t) => t.dead_end,
                                None if walk.possible_zero() => walk.dead_end(ctx, wr),
                                None => None,
                            };
                            if walk.possible_zero() && dead == Some(true) {
                                return Ok(Turn::DeadEnd);
                            }
                            let bound = together.map_or_else(|| walk.bound(ctx, wr), |t| t.bound);
                            let mut estimate = together.map(|t| t.estimate);
                            let mut sum_estimate = || *estimate.get_or_insert_with(|| walk.sum_estimate(ctx, wr));
                            if let Some(table) = &self.table {
                                let trials = match bound {
                                    Bound::Max(b) => d as f64 * b as f64 / sum_estimate().max(f32::MIN_POSITIVE) as f64,
                                    Bound::Unknown => f64::INFINITY,
                                };
                                if !(trials < TABLE_TRIALS) {
                                    st.table_steps += 1;
                                    break 'pick sampler::prefix_table(&table[base..base + d], rng);
                                }
                            }
                            let rejection_bound = match bound {
                                Bound::Max(b) if b > 0.0 && b.is_finite() => {
                                    let use_it = self.mode == SamplerMode::Rejection || !self.cost.prefers_reservoir(d, b, sum_estimate());
                                    use_it.then_some(b)
                                }
                                // Every weight is <= 0, i.e. 0: nothing can be taken.
                                Bound::Max(b) if b <= 0.0 => return Ok(Turn::DeadEnd),
                                _ => None,
                            };
                            if let Some(bound) = rejection_bound {
                                let (index, level) = sampler::rejection_propose(d, bound, rng);
                                self.prefetch_edge(base + index);
                                *phase = Phase { index: index as u64, level, trials: 1, bound, cap: 0 };
                                return Ok(Turn::Pending);
                            }
                            st.reservoir_steps += 1;
                            self.reservoir(d, base, wr, rng, weight).map_err(|e| err(e, f32::NAN))?
                        }
                        SamplerMode::Reservoir => {
                            st.reservoir_steps += 1;
                            self.reservoir(d, base, wr, rng, weight).map_err(|e| err(e, f32::NAN))?
                        }
                        SamplerMode::InverseTransform => {
                            st.reference_steps += 1;
                            sampler::inverse_transform(d, rng, prefix, weight).map_err(|e| err(e, f32::NAN))?
                        }
                        SamplerMode::ReservoirPrefix => {
                            st.reference_steps += 1;
                            sampler::reservoir_prefix(d, rng, weight).map_err(|e| err(e, f32::NAN))?
                        }
                    }
                }
                trials => {
                    let Phase { index, level, bound, cap, .. } = *phase;
                    let index = index as usize;
                    // Computed at the step's first rejection (most steps accept at once).
                    let cap = || if cap == 0 { self.cost.trial_cap(d) } else { cap };
                    if sampler::rejection_decide(index, level, bound, envelope, weight).map_err(|e| err(e, bound))? {
                        st.rejection_steps += 1;
                        st.rejection_trials += trials as u64;
                        Some(index)
                    } else if trials >= cap() {
                        // Out of trials: eRVS finishes the step, exactly (see `sampler::rejection`).
                        st.rejection_trials += trials as u64;
                        st.rejection_fallbacks += 1;
                        self.reservoir(d, base, wr, rng, weight).map_err(|e| err(e, f32::NAN))?
                    } else {
                        let (index, level) = sampler::rejection_propose(d, bound, rng);
                        self.prefetch_edge(base + index);
                        *phase = Phase { index: index as u64, level, trials: trials + 1, bound, cap: cap() };
                        return Ok(Turn::Pending);
                    }
                }
            }
        };
        // A step's start: the other fields are not read then.
        phase.trials = 0;
        let Some(i) = picked else { return Ok(Turn::DeadEnd) };
        let e = base + i;
        w.prev = w.cur;
        w.cur = g.targets()[e];
        w.last_edge = e as u64;
        w.step += 1;
        Ok(Turn::Moved)
    }

    /// The end of a step: the move along the row's `picked` edge, or a dead end (as at the
    /// end of [`Env::turn`], kept apart there: inlined, it changed the native loop's code).
    #[inline(always)]
    fn take(&self, s: &mut Slot<W::State>, base: usize, picked: Option<usize>) -> Turn {
        // A step's start: the other fields are not read then.
        s.phase.trials = 0;
        let Some(i) = picked else { return Turn::DeadEnd };
        let e = base + i;
        let w = &mut s.w;
        w.prev = w.cur;
        w.cur = self.ctx.graph.targets()[e];
        w.last_edge = e as u64;
        w.step += 1;
        Turn::Moved
    }
}

/// Calls a compiled start turn from a call site of its own (see `Env::compiled_turn`).
///
/// # Safety
/// [`CompiledTurn::new`]'s contract for `start`'s arguments.
#[inline(never)]
unsafe fn call_start_turn(start: TurnFn, args: *const TurnArgs, slot: *mut u8, st: *mut SamplerStats) -> u32 {
    // SAFETY: the caller's.
    unsafe { start(args, slot, st) }
}

impl<W: Walk> Env<'_, W> {
    /// [`Env::turn`] through the walk's compiled turn, which hands back what it does not do.
    #[inline(always)]
    fn compiled_turn(
        &self,
        ((start, trial), args): ((TurnFn, TurnFn), &TurnArgs),
        s: &mut Slot<W::State>,
        st: &mut SamplerStats,
        prefix: &mut Vec<f64>,
    ) -> Result<Turn, WalkError> {
        let slot = (s as *mut Slot<W::State>).cast();
        // Two call sites, one per function: a single site calling either mispredicts its
        // target at about every other turn (steps alternate start and trial). The start's
        // call goes through a function of its own, or LLVM merges the two calls into one.
        // SAFETY (both calls): `CompiledTurn::new`'s contract: the slot is laid out as
        // `slot_layout::<W::State>()` says (`Slot` is `repr(C)`), `args` holds this run's
        // pointers, and `st` is this thread's counters.
        let code = if s.phase.trials == 0 {
            // The compiled turn draws from the block at hand only.
            s.rng = StepRng::new(self.seed, s.query, s.w.step, Purpose::Sample);
            s.rng.refill();
            unsafe { call_start_turn(start, args, slot, st) }
        } else {
            // A step taking many trials draws two words per proposal: the block its last
            // proposal used up is renewed here (as the next draw would), so the compiled
            // trial proposes again instead of handing the trial back.
            if s.rng.block_used_up() {
                s.rng.refill();
            }
            unsafe { trial(args, slot, st) }
        };
        match code {
            CompiledTurn::PENDING => {
                self.prefetch_edge(self.ctx.graph.offsets()[s.w.cur as usize] as usize + s.phase.index as usize);
                Ok(Turn::Pending)
            }
            CompiledTurn::MOVED => Ok(Turn::Moved),
            // Out of line: with all five codes here LLVM makes the match a jump table, whose
            // one indirect branch mispredicts where eRVS and eRJS steps mix.
            other => self.compiled_turn_handed_back(other, s, st, prefix),
        }
    }

    /// What follows a compiled turn that returned `DEAD_END`, `RESERVOIR` or `FALLBACK`.
    #[inline(never)]
    fn compiled_turn_handed_back(
        &self,
        code: u32,
        s: &mut Slot<W::State>,
        st: &mut SamplerStats,
        prefix: &mut Vec<f64>,
    ) -> Result<Turn, WalkError> {
        match code {
            CompiledTurn::DEAD_END => Ok(Turn::DeadEnd),
            CompiledTurn::RESERVOIR => {
                let row = self.ctx.graph.row(s.w.cur);
                let (base, d) = (row.start, row.len());
                let (walk, ctx) = (self.walk, &self.ctx);
                let Slot { w, rng, .. } = s;
                let wr: &Walker<W::State> = w;
                st.reservoir_steps += 1;
                let picked = self
                    .reservoir(d, base, wr, rng, |i| walk.weight(ctx, wr, base + i))
                    .map_err(|e| to_walk_error(walk.name(), ctx, wr, base, f32::NAN, e))?;
                Ok(self.take(s, base, picked))
            }
            _ => self.turn(s, st, prefix),
        }
    }

    /// eRVS over the `d` edges from `base` (`sampler::reservoir_jump`), by the walk's compiled
    /// eRVS when it has one.
    #[inline(always)]
    fn reservoir(
        &self,
        d: usize,
        base: usize,
        w: &Walker<W::State>,
        rng: &mut StepRng,
        weight: impl FnMut(usize) -> f32,
    ) -> Result<Option<usize>, SampleError> {
        if let Some((f, c)) = self.compiled.as_ref().and_then(|c| Some((c.reservoir?, c))) {
            let before = rng.clone();
            // SAFETY: `CompiledTurn::with_reservoir`'s contract: `w` is `repr(C)`, `rng` the
            // step's stream, `base..base + d` the walker's row, `args` this run's pointers.
            let r = unsafe { f(&c.args, (w as *const Walker<W::State>).cast(), rng, base as u64, d as u64) };
            match r {
                0.. => return Ok(Some(r as usize)),
                -1 => return Ok(None),
                // A bad weight: sampled again here, from the same stream, to report it.
                _ => *rng = before,
            }
        }
        sampler::reservoir_jump(d, rng, weight)
    }

    /// [`Walk::update`] through the walk's compiled `update` (taking `draws` words).
    #[inline(always)]
    fn compiled_update((update, draws): (UpdateFn, u32), args: &TurnArgs, w: &mut Walker<W::State>, rng: &mut StepRng) {
        if draws > 0 {
            rng.refill();
        }
        // SAFETY: `CompiledTurn::with_update`'s contract: the walker is `repr(C)`, `rng` is
        // this move's stream with its first block computed, `args` this run's pointers.
        unsafe { update(args, (w as *mut Walker<W::State>).cast(), rng) }
    }
}

/// Runs queries `first..first+rows` into `out` (rows × stride) and `lens`, advancing up to
/// `cfg.interleave` walkers in turn.
fn run_chunk<W: Walk, const COMPILED: bool>(
    env: &Env<W>,
    starts: &Starts,
    cfg: &WalkConfig,
    first: u64,
    out: &mut [u32],
    lens: &mut [u32],
) -> Result<SamplerStats, WalkError> {
    let stride = cfg.length as usize + 1;
    let n = env.ctx.graph.num_nodes();
    let offsets = env.ctx.graph.offsets();
    let mut st = SamplerStats::default();
    let mut prefix = Vec::new();
    let width = cfg.interleave.max(1);
    let rows = lens.len();
    let mut next = 0usize;
    let mut slots: Vec<Slot<W::State>> = Vec::with_capacity(width);
    let admit = |slots: &mut Vec<Slot<W::State>>, next: &mut usize, out: &mut [u32], lens: &mut [u32]| {
        while slots.len() < width && *next < rows {
            let local = first + *next as u64;
            let start = starts.start(local, n);
            let q = starts.global(local);
            let mut w = Walker::new(start);
            let mut rng = StepRng::new(env.seed, q, INIT_STEP, Purpose::Init);
            env.walk.init(&env.ctx, &mut w, &mut rng);
            out[*next * stride] = start;
            if cfg.length == 0 {
                lens[*next] = 1;
            } else {
                prefetch(offsets.as_ptr().wrapping_add(w.cur as usize));
                slots.push(Slot { w, query: q, row: *next, len: 1, rng, phase: Phase::START });
            }
            *next += 1;
        }
    };
    admit(&mut slots, &mut next, out, lens);
    while !slots.is_empty() {
        let mut k = 0;
        while k < slots.len() {
            let s = &mut slots[k];
            let compiled = if COMPILED { env.compiled.as_ref() } else { None };
            let turn = match compiled.and_then(|c| Some((c.turns?, &c.args))) {
                Some(c) => env.compiled_turn(c, s, &mut st, &mut prefix)?,
                None => env.turn(s, &mut st, &mut prefix)?,
            };
            let done = match turn {
                Turn::Pending => false,
                Turn::DeadEnd => {
                    st.dead_ends += 1;
                    true
                }
                Turn::Moved => {
                    let hooks = env.walk.has_move_hooks();
                    let mut rng = hooks.then(|| StepRng::new(env.seed, s.query, s.w.step, Purpose::Update));
                    if let Some(rng) = &mut rng {
                        match compiled.and_then(|c| Some((c.update?, &c.args))) {
                            Some((update, args)) => Env::<W>::compiled_update(update, args, &mut s.w, rng),
                            None => env.walk.update(&env.ctx, &mut s.w, rng),
                        }
                    }
                    out[s.row * stride + s.len as usize] = s.w.cur;
                    s.len += 1;
                    if s.w.step >= cfg.length {
                        true
                    } else if let Some(rng) = &mut rng
                        && env.walk.stop(&env.ctx, &s.w, rng)
                    {
                        st.stopped += 1;
                        true
                    } else {
                        prefetch(offsets.as_ptr().wrapping_add(s.w.cur as usize));
                        false
                    }
                }
            };
            if done {
                lens[s.row] = s.len;
                slots.swap_remove(k);
                admit(&mut slots, &mut next, out, lens);
                continue;
            }
            k += 1;
        }
    }
    Ok(st)
}

/// Runs a walk on the CPU and returns every walk in memory. `progress`, if given, is advanced by
/// the number of finished walkers. The walks must fit in memory (checked before anything is
/// allocated); [`run_streaming`] hands them over in batches instead.
pub fn run<W: Walk>(
    walk: &W,
    graph: &CsrGraph,
    starts: &Starts,
    cfg: &WalkConfig,
    progress: Option<&AtomicU64>,
) -> Result<(Walks, RunReport), WalkError> {
    collect(starts.count(graph.num_nodes()), cfg.length, |sink| run_streaming(walk, graph, starts, cfg, progress, u64::MAX, sink))
}

/// Every walk of a streaming run in memory: the whole output is checked against the memory
/// available before `run` makes any (`run` streams into the sink it is given).
pub fn collect(
    walkers: u64,
    length: u32,
    run: impl FnOnce(&mut dyn FnMut(Walks) -> Result<(), WalkError>) -> Result<RunReport, WalkError>,
) -> Result<(Walks, RunReport), WalkError> {
    let stride = length as usize + 1;
    crate::memory::check(&format!("{walkers} walks of {stride} nodes"), walks_bytes(walkers, stride))
        .map_err(|m| WalkError::Config(format!("{m}: stream them to a file instead (`-o`, `engine::run_streaming`)")))?;
    let mut all = Walks { stride, nodes: Vec::new(), lengths: Vec::new() };
    let report = run(&mut |b| {
        all.append(b);
        Ok(())
    })?;
    Ok((all, report))
}

/// Bytes that `walkers` walks of `stride` slots take in memory.
pub fn walks_bytes(walkers: u64, stride: usize) -> u128 {
    walkers as u128 * (stride as u128 + 1) * 4
}

/// The most walkers per batch that [`run_streaming`] holds: about `budget` bytes of walks, at
/// most a quarter of the memory available now, never fewer than one per thread. An error,
/// before anything is allocated, if even that does not fit.
pub fn batch_walkers(walkers: u64, stride: usize, budget: u64) -> Result<u64, WalkError> {
    // Every worker allocates once first, so its malloc arena (64 MiB of address space under
    // glibc, which `ulimit -v` counts) is already part of what is measured.
    rayon::broadcast(|_| std::hint::black_box(Box::new(0u8)));
    let avail = crate::memory::available_bytes().unwrap_or(u64::MAX);
    let budget = budget.min(avail / 4).max(1) as u128;
    let min = (rayon::current_num_threads() as u64).min(walkers).max(1);
    crate::memory::check(&format!("{min} walks of {stride} nodes (one per thread)"), walks_bytes(min, stride))
        .map_err(WalkError::Config)?;
    let per = (budget / walks_bytes(1, stride)).min(walkers.max(1) as u128) as u64;
    Ok(per.max(min))
}

/// Runs a walk on the CPU in batches of about `batch_bytes` of walks (see [`batch_walkers`]:
/// chosen after the per-node arrays and tables are built, from the memory left), handing each
/// batch's walks to `sink` in query order, so outputs larger than memory are written as they
/// are made. The walks are the same for any batch size: every random number is keyed by
/// `(seed, query, step)`. The per-node arrays, the cost model and the prefix tables are
/// computed once.
pub fn run_streaming<W: Walk>(
    walk: &W,
    graph: &CsrGraph,
    starts: &Starts,
    cfg: &WalkConfig,
    progress: Option<&AtomicU64>,
    batch_bytes: u64,
    sink: &mut dyn FnMut(Walks) -> Result<(), WalkError>,
) -> Result<RunReport, WalkError> {
    walk.check(graph)?;
    let n = graph.num_nodes();
    if n == 0 {
        return Err(WalkError::Config("the graph has no nodes".into()));
    }
    starts.validate(n)?;
    let walkers = starts.count(n);
    let stride = cfg.length as usize + 1;
    let t0 = Instant::now();
    let stats = NodeStats::compute(graph, walk.requirements(), walk.weighted());
    let precompute_seconds = t0.elapsed().as_secs_f64();
    let base = Ctx::new(graph, &stats);
    let prepared = walk.prepare(&base);
    let ctx = Ctx { prepared: prepared.as_ref(), ..base };
    let needs_ratio = cfg.sampler == SamplerMode::Adaptive;
    let t1 = Instant::now();
    let (cost, source) = if !needs_ratio {
        (CostModel::uniform(1.0, 0.0), "unused")
    } else {
        match cfg.cost_ratio {
            CostRatio::Default => (CPU_COST_MODEL, "default"),
            CostRatio::Fixed(ratio) => (CostModel::uniform(ratio, 0.0), "fixed"),
            CostRatio::Model(m) => (m, "fixed"),
            CostRatio::Profile => (profile_cost_model(walk, &ctx), "profiled"),
            CostRatio::Cached => cached_model(walk, &ctx),
        }
    };
    cost.validate()?;
    let profile_seconds = t1.elapsed().as_secs_f64();

    let t3 = Instant::now();
    let table = if cfg.sampler == SamplerMode::Adaptive && walk.static_weight() && graph.num_edges() <= MAX_TABLE_EDGES {
        Some(build_table(walk, &ctx)?)
    } else {
        None
    };
    let precompute_seconds = precompute_seconds + t3.elapsed().as_secs_f64();
    let compiled = walk.compiled_turn(&ctx).map(|c| {
        Compiled {
            // The reference samplers' turns are the engine's own.
            turns: matches!(cfg.sampler, SamplerMode::Adaptive | SamplerMode::Rejection).then_some((c.start, c.trial)),
            update: c.update,
            reservoir: c.reservoir,
            args: TurnArgs {
                image: c.image,
                offsets: graph.offsets().as_ptr(),
                targets: graph.targets().as_ptr(),
                table: table.as_ref().map_or(std::ptr::null(), |t| t.as_ptr()),
                ratio: cost.ratio,
                fixed: cost.fixed,
                ratio_short: cost.ratio_short,
                rejection_only: (cfg.sampler == SamplerMode::Rejection) as u32,
            },
        }
    });
    let compiled_turns = compiled.as_ref().is_some_and(|c| c.turns.is_some());
    let env = Env { walk, ctx, mode: cfg.sampler, cost, seed: cfg.seed, table, compiled };
    let batch = batch_walkers(walkers, stride, batch_bytes)?;
    let chunk = 512usize;
    let (mut walk_seconds, mut steps) = (0.0, 0u64);
    let mut totals = SamplerStats::default();
    let mut first = 0u64;
    while first < walkers {
        let count = batch.min(walkers - first);
        let mut nodes = vec![NO_NODE; count as usize * stride];
        let mut lengths = vec![0u32; count as usize];
        let t2 = Instant::now();
        let st = nodes
            .par_chunks_mut(chunk * stride)
            .zip(lengths.par_chunks_mut(chunk))
            .enumerate()
            .map(|(c, (out, lens))| {
                let at = first + (c * chunk) as u64;
                // Two instantiations: the engine's loop for walks without compiled turns carries
                // no trace of them (its registers are all the native walk's).
                let st = if env.compiled.is_some() {
                    run_chunk::<W, true>(&env, starts, cfg, at, out, lens)?
                } else {
                    run_chunk::<W, false>(&env, starts, cfg, at, out, lens)?
                };
                if let Some(p) = progress {
                    p.fetch_add(lens.len() as u64, Ordering::Relaxed);
                }
                Ok(st)
            })
            .try_reduce(SamplerStats::default, |mut a, b| {
                a.add(&b);
                Ok(a)
            })?;
        walk_seconds += t2.elapsed().as_secs_f64();
        totals.add(&st);
        let walks = Walks { stride, nodes, lengths };
        steps += walks.steps();
        sink(walks)?;
        first += count;
    }
    let report = RunReport {
        walk: walk.name().to_string(),
        walkers,
        steps,
        walk_seconds,
        precompute_seconds,
        profile_seconds,
        cost,
        cost_ratio_source: source,
        stats: totals,
        threads: rayon::current_num_threads(),
        sampler: cfg.sampler,
        compiled_turns,
    };
    Ok(report)
}
