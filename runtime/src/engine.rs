//! The CPU engine: every walker on every core, with a per-step choice of exact sampler.
//!
//! Queries (one walker each) are split across rayon's threads in fixed chunks. A walker's
//! random numbers come from Philox streams keyed by `(seed, query, step)`, so the output does
//! not depend on the thread count, the chunking or the interleaving. It does depend on the
//! cost ratio `R` (which picks the sampler, and the two samplers consume randomness
//! differently): `R` is printed in every report and can be fixed with [`CostRatio::Fixed`].
//!
//! Per step, in adaptive mode, the engine compares the expected costs of the two exact
//! samplers at node `v` of degree `d`, with bound `B` and sum estimate `Ŝ`:
//! eRJS takes about `d·B/Ŝ` trials, eRVS reads `d` edges plus a fixed start-up cost worth `F`
//! edges (its first keys need logarithms and exponentials, which dominate on small rows). In
//! units of one edge read, eRVS wins iff `R·d·B > Ŝ·(d + F)`, where `R` is the time of one
//! rejection trial over the time of one reservoir edge. `R` and `F` are measured on this
//! machine and graph by a short profiling pass ([`CostModel`]). With `F = 0` this is
//! FlexiWalker's rule `R·B > Ŝ`, which sends small rows to eRVS even where eRJS is cheaper.

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

/// Rows up to this length count as short in the cost model: they fit in a few cache lines,
/// so an eRJS trial there is much cheaper than on a hub's row.
pub const SHORT_ROW: usize = 64;

/// The per-step cost model: eRVS iff `R·d·B > Ŝ·(d + F)` (see the module docs), with `R`
/// measured separately for short rows (up to [`SHORT_ROW`] edges) and long ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    /// `R` on long rows: time of one eRJS trial over time of one eRVS edge.
    pub ratio: f64,
    /// `F`: eRVS's fixed cost per step, in edge reads.
    pub fixed: f64,
    /// `R` on short rows.
    pub ratio_short: f64,
}

impl Default for CostModel {
    /// `R = 1`, `F = 0`: the model the non-adaptive policies run with (it sets eRJS's trial cap).
    fn default() -> Self {
        CostModel::uniform(1.0, 0.0)
    }
}

impl CostModel {
    /// Whether eRVS is expected to be cheaper than eRJS for this step.
    #[inline(always)]
    pub fn prefers_reservoir(&self, d: usize, bound: f32, sum_estimate: f32) -> bool {
        let r = self.ratio_for(d);
        let d = d as f64;
        r * d * bound as f64 > sum_estimate as f64 * (d + self.fixed)
    }

    /// `R` for a row of length `d`.
    #[inline(always)]
    pub fn ratio_for(&self, d: usize) -> f64 {
        if d <= SHORT_ROW { self.ratio_short } else { self.ratio }
    }

    /// One `R` for every row length.
    pub fn uniform(ratio: f64, fixed: f64) -> Self {
        CostModel { ratio, fixed, ratio_short: ratio }
    }

    /// eRJS's trial cap: about twice the trials eRVS's whole step would cost, so a loose bound
    /// costs at most a small constant factor over choosing eRVS directly.
    #[inline(always)]
    pub fn trial_cap(&self, d: usize) -> u32 {
        (2.0 * (d as f64 + self.fixed) / self.ratio_for(d).max(1e-3)).clamp(32.0, 1e9) as u32
    }

    fn validate(&self) -> Result<(), WalkError> {
        for r in [self.ratio, self.ratio_short] {
            if !(r > 0.0 && r.is_finite()) {
                return Err(WalkError::param("cost-ratio", format!("R = {r} must be finite and > 0")));
            }
        }
        if !(self.fixed >= 0.0 && self.fixed.is_finite()) {
            return Err(WalkError::param("cost-ratio", format!("F = {} must be finite and >= 0", self.fixed)));
        }
        Ok(())
    }
}

/// Where the cost model comes from.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum CostRatio {
    /// Profile once per (walk, graph) on this machine and reuse the value from the cache file
    /// afterwards, so repeated runs choose the same samplers (see [`cost_cache_path`]).
    #[default]
    Cached,
    /// Profile on every run.
    Profile,
    /// Use this `R`, with `F = 0` (FlexiWalker's rule).
    Fixed(f64),
    /// Use this model.
    Model(CostModel),
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
        WalkConfig { length: 80, seed: 0, sampler: SamplerMode::Adaptive, cost_ratio: CostRatio::Cached, interleave: 8 }
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
    /// Where it came from: "fixed", "profiled", "cached" or "unused".
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
            self.cost_ratio_source,
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
                    return Err(WalkError::BadWeight { walk: walk.name().into(), weight: x, src: v as u32, dst: g.targets()[e], step: 0 });
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
        SampleError::BadWeight { index, weight } => {
            WalkError::BadWeight { walk: walk.into(), weight, src: w.cur, dst: ctx.graph.targets()[row_start + index], step: w.step }
        }
        SampleError::BoundViolated { index, weight } => WalkError::BoundViolated {
            walk: walk.into(),
            weight,
            bound,
            src: w.cur,
            dst: ctx.graph.targets()[row_start + index],
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

/// Runs a walk on the CPU. `progress`, if given, is advanced by the number of finished walkers.
pub fn run<W: Walk>(
    walk: &W,
    graph: &CsrGraph,
    starts: &Starts,
    cfg: &WalkConfig,
    progress: Option<&AtomicU64>,
) -> Result<(Walks, RunReport), WalkError> {
    walk.check(graph)?;
    let n = graph.num_nodes();
    if n == 0 {
        return Err(WalkError::Config("the graph has no nodes".into()));
    }
    starts.validate(n)?;
    let walkers = starts.count(n);
    let stride = cfg.length as usize + 1;
    let cells = (walkers as u128) * stride as u128;
    if cells > (isize::MAX as u128) / 4 {
        return Err(WalkError::Config(format!("{walkers} walks of {stride} nodes do not fit in memory")));
    }
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
    let mut nodes = vec![NO_NODE; cells as usize];
    let mut lengths = vec![0u32; walkers as usize];
    let chunk = 512usize;
    let t2 = Instant::now();
    let totals = nodes
        .par_chunks_mut(chunk * stride)
        .zip(lengths.par_chunks_mut(chunk))
        .enumerate()
        .map(|(c, (out, lens))| {
            // Two instantiations: the engine's loop for walks without compiled turns carries
            // no trace of them (its registers are all the native walk's).
            let st = if env.compiled.is_some() {
                run_chunk::<W, true>(&env, starts, cfg, (c * chunk) as u64, out, lens)?
            } else {
                run_chunk::<W, false>(&env, starts, cfg, (c * chunk) as u64, out, lens)?
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
    let walk_seconds = t2.elapsed().as_secs_f64();
    let walks = Walks { stride, nodes, lengths };
    let report = RunReport {
        walk: walk.name().to_string(),
        walkers,
        steps: walks.steps(),
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
    Ok((walks, report))
}

/// Measures the cost model for this walk on this graph: `R` = (time per eRJS trial) /
/// (time per eRVS edge), and `F` = eRVS's fixed cost per step in edge reads.
///
/// Probes are the states reached by short pilot walks (exact eRVS, a few steps) from nodes
/// spread over the id range, so they sit where walkers spend their time. Rejection probes run a fixed number of trials whatever they accept, each
/// exactly as the engine runs it (envelope squeeze included). Reservoir
/// probes run twice: over at most `MAX_EDGES_PER_PROBE` edges of the probe's own row (never
/// past it), and over its first two edges only; the difference separates the per-edge cost
/// from the per-step cost. Each measurement is the best of three rounds.
pub fn profile_cost_model<W: Walk>(walk: &W, ctx: &Ctx) -> CostModel {
    const PROBES: usize = 2048;
    const TRIALS: usize = 32;
    const MAX_EDGES_PER_PROBE: usize = 4096;
    const MAX_EDGES: usize = 1 << 20;
    const SHORT: usize = 2;
    const PILOT_STEPS: u32 = 6;
    let fallback = CostModel::uniform(1.0, 0.0);
    let g = ctx.graph;
    let n = g.num_nodes();
    let stride = (n / PROBES).max(1);
    let mut probes = Vec::new();
    for p in (0..n).step_by(stride) {
        let t = p as u32;
        let mut w = Walker::<W::State>::new(t);
        let mut rng = StepRng::new(0, p as u64, INIT_STEP, Purpose::Profile);
        walk.init(ctx, &mut w, &mut rng);
        // A short pilot walk (exact, eRVS) puts the probe where walkers spend their time:
        // on hubs and, with skewed weights, on the heavy edges they go back and forth on.
        for step in 0..PILOT_STEPS {
            let row = g.row(w.cur);
            if row.is_empty() || row.len() > MAX_EDGES_PER_PROBE {
                break;
            }
            let mut rng = StepRng::new(1, p as u64, step, Purpose::Profile);
            let pick = sampler::reservoir_jump(row.len(), &mut rng, |i| walk.weight(ctx, &w, row.start + i).max(0.0));
            let Ok(Some(i)) = pick else { break };
            w.prev = w.cur;
            w.cur = g.targets()[row.start + i];
            w.last_edge = (row.start + i) as u64;
            w.step += 1;
        }
        if g.degree(w.cur) >= SHORT as u64
            && let Bound::Max(b) = walk.bound(ctx, &w)
            && b > 0.0
            && b.is_finite()
        {
            probes.push((w, b));
        }
    }
    if probes.is_empty() {
        return fallback;
    }
    let reservoir = |round: u64, cap: usize| -> (f64, usize, usize) {
        let t = Instant::now();
        let (mut edges, mut steps) = (0usize, 0usize);
        for (k, (w, _)) in probes.iter().enumerate() {
            if edges >= MAX_EDGES {
                break;
            }
            let row = g.row(w.cur);
            let d = row.len().min(cap);
            let mut rng = StepRng::new(round, k as u64, 1, Purpose::Profile);
            let r = sampler::reservoir_jump(d, &mut rng, |i| walk.weight(ctx, w, row.start + i).max(0.0));
            std::hint::black_box(r.ok());
            edges += d;
            steps += 1;
        }
        (t.elapsed().as_secs_f64(), edges, steps)
    };
    let (mut best_rjs, mut best_rjs_short) = (f64::INFINITY, f64::INFINITY);
    let short_probes = probes.iter().filter(|(w, _)| g.degree(w.cur) as usize <= SHORT_ROW).count();
    let (mut best_long, mut best_short) = (f64::INFINITY, f64::INFINITY);
    let (mut long_edges, mut long_steps, mut short_steps) = (0, 0, 0);
    for round in 0..3 {
        // Short and long rows are timed apart: a trial in a row of a few cache lines costs
        // far less than one in a hub's row.
        for short in [false, true] {
            let t = Instant::now();
            let mut acc = 0u64;
            for (k, (w, b)) in probes.iter().enumerate() {
                let row = g.row(w.cur);
                if (row.len() <= SHORT_ROW) != short {
                    continue;
                }
                let d = row.len() as u64;
                let mut rng = StepRng::new(round, k as u64, 0, Purpose::Profile);
                // The same trial as the engine's, squeeze included: on skewed weights most
                // rejections are decided by the envelope alone, and R must reflect that.
                for _ in 0..TRIALS {
                    let (i, y) = sampler::rejection_propose(d as usize, *b, &mut rng);
                    let envelope = |i: usize| walk.weight_envelope(ctx, w, row.start + i);
                    let weight = |i: usize| walk.weight(ctx, w, row.start + i);
                    acc += sampler::rejection_decide(i, y, f32::INFINITY, envelope, weight).unwrap_or(false) as u64;
                }
            }
            std::hint::black_box(acc);
            let el = t.elapsed().as_secs_f64();
            if short {
                best_rjs_short = best_rjs_short.min(el);
            } else {
                best_rjs = best_rjs.min(el);
            }
        }
        let (tl, el, sl) = reservoir(round, MAX_EDGES_PER_PROBE);
        best_long = best_long.min(tl);
        (long_edges, long_steps) = (el, sl);
        let (ts, _, ss) = reservoir(round, SHORT);
        best_short = best_short.min(ts);
        short_steps = ss;
    }
    let long_probes = probes.len() - short_probes;
    let per_trial_long = (long_probes > 0).then(|| best_rjs / (long_probes * TRIALS) as f64);
    let per_trial_short = (short_probes > 0).then(|| best_rjs_short / (short_probes * TRIALS) as f64);
    let (per_trial, per_trial_short) = match (per_trial_long, per_trial_short) {
        (Some(l), Some(s)) => (l, s),
        (Some(l), None) => (l, l),
        (None, Some(s)) => (s, s),
        (None, None) => return fallback,
    };
    let per_short_step = best_short / short_steps as f64;
    // Long scans: steps·(c0 + SHORT·ce) + (edges - SHORT·steps)·ce.
    let extra_edges = long_edges as f64 - (SHORT * long_steps) as f64;
    let per_edge = if extra_edges > 0.0 { (best_long - per_short_step * long_steps as f64) / extra_edges } else { f64::NAN };
    if !(per_edge > 0.0 && per_edge.is_finite() && per_trial > 0.0) {
        // Too few long rows to separate the costs: fall back to the plain ratio.
        let per_edge = best_long / long_edges.max(1) as f64;
        let m = CostModel { ratio: per_trial / per_edge, fixed: 0.0, ratio_short: per_trial_short / per_edge };
        return if m.validate().is_ok() { m } else { fallback };
    }
    let fixed = (per_short_step / per_edge - SHORT as f64).max(0.0);
    let m = CostModel { ratio: per_trial / per_edge, fixed, ratio_short: per_trial_short / per_edge };
    if m.validate().is_ok() { m } else { fallback }
}

/// The cost-ratio cache: `$WAYFARER_CACHE_DIR/cost-ratio.tsv`, else
/// `$XDG_CACHE_HOME/wayfarer/…`, else `~/.cache/wayfarer/…`.
pub fn cost_cache_path() -> Option<std::path::PathBuf> {
    let dir = if let Some(d) = std::env::var_os("WAYFARER_CACHE_DIR") {
        std::path::PathBuf::from(d)
    } else if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        std::path::PathBuf::from(d).join("wayfarer")
    } else {
        std::path::PathBuf::from(std::env::var_os("HOME")?).join(".cache").join("wayfarer")
    };
    Some(dir.join("cost-ratio.tsv"))
}

fn cached_model<W: Walk>(walk: &W, ctx: &Ctx) -> (CostModel, &'static str) {
    let g = ctx.graph;
    let key = format!(
        "v{}/3|{}|{}|n={}|m={}",
        env!("CARGO_PKG_VERSION"),
        walk.name(),
        if walk.weighted() { "weighted" } else { "unweighted" },
        g.num_nodes(),
        g.num_edges()
    );
    let path = cost_cache_path();
    if let Some(p) = &path
        && let Ok(text) = std::fs::read_to_string(p)
    {
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() == 4
                && f[0] == key
                && let (Ok(ratio), Ok(fixed), Ok(ratio_short)) =
                    (f[1].trim().parse::<f64>(), f[2].trim().parse::<f64>(), f[3].trim().parse::<f64>())
            {
                let m = CostModel { ratio, fixed, ratio_short };
                if m.validate().is_ok() {
                    return (m, "cached");
                }
            }
        }
    }
    let m = profile_cost_model(walk, ctx);
    if let Some(p) = &path {
        // A cache that cannot be written only costs a re-profile next time.
        let _ = std::fs::create_dir_all(p.parent().unwrap()).and_then(|_| {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(p)?;
            writeln!(f, "{key}\t{}\t{}\t{}", m.ratio, m.fixed, m.ratio_short)
        });
    }
    (m, "profiled")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walks::{Node2vec, Weighting};

    #[test]
    fn cost_model_reduces_to_flexiwalker_rule_without_fixed_cost() {
        let m = CostModel::uniform(4.0, 0.0);
        assert!(m.prefers_reservoir(10, 2.0, 7.9));
        assert!(!m.prefers_reservoir(10, 2.0, 8.0));
        // A fixed cost moves small rows to rejection sampling.
        let f = CostModel::uniform(4.0, 30.0);
        assert!(!f.prefers_reservoir(3, 2.0, 4.0));
        assert!(f.prefers_reservoir(3000, 2.0, 4.0));
        assert!(f.trial_cap(0) >= 32);
    }

    #[test]
    fn profiling_gives_a_usable_model() {
        let mut g = crate::graph::generate::rmat(12, 16, 2).unwrap();
        g.set_weights(Some(crate::graph::generate::weights(&g, "uniform".parse().unwrap(), 2))).unwrap();
        let walk = Node2vec::new(2.0, 0.5, Weighting::Weighted).unwrap();
        let stats = NodeStats::compute(&g, walk.requirements(), true);
        let m = profile_cost_model(&walk, &Ctx::new(&g, &stats));
        assert!(m.validate().is_ok(), "{m:?}");
    }
}
