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
use crate::fast_path::node_starts::Opening;
use crate::graph::{CsrGraph, NO_NODE};

use crate::proposal::{EntrySource, PendingEntry, ProposalTables, StepTerms, TableNeed};
use crate::rng::{INIT_STEP, Purpose, StepRng};
pub use crate::run::ProposalReport;
pub use crate::run::{
    FAST_PATH_INTERLEAVE, GENERAL_INTERLEAVE, INTERLEAVE_AUTO, NO_EDGE, RunReport, SamplerMode, SamplerStats, Starts, WalkConfig, Walks,
    parse_interleave,
};
use crate::sampler::{self, SampleError};
use crate::structured::{self, Candidate};
pub use crate::turn::{CompiledTurn, ReservoirFn, TurnArgs, TurnFn, UpdateFn};
use crate::walk::{Bound, Ctx, NodeStats, Walk, Walker};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

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
    /// Tables for the walk's structured proposals, when it has a plan and they were built.
    structured: Option<ProposalTables>,
}

/// Rows whose expected number of eRJS trials reaches this use the prefix table instead.
pub const TABLE_TRIALS: f64 = 2.5;

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

pub(crate) fn to_walk_error<S>(walk: &str, ctx: &Ctx, w: &Walker<S>, row_start: usize, bound: f32, e: SampleError) -> WalkError {
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
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Prefetches edge `e`'s target, weight and label (what deciding a candidate reads).
#[inline(always)]
pub(crate) fn prefetch_edge(g: &CsrGraph, e: usize) {
    prefetch(g.targets().as_ptr().wrapping_add(e));
    if let Some(w) = g.weights() {
        prefetch(w.as_ptr().wrapping_add(e));
    }
    if let Some(l) = g.labels() {
        prefetch(l.as_ptr().wrapping_add(e));
    }
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
    /// What the pending trial waits for: [`STAGE_ERJS`] (a plain eRJS candidate), or, for a
    /// structured trial, [`STAGE_ENTRY`] (a table entry at `index`, its word in `level`, its
    /// table in `source`) or [`STAGE_EDGE`] (the candidate edge `index`). After the fields a
    /// [`CompiledTurn`] reads: it never runs with structured proposals.
    stage: u32,
    source: EntrySource,
}

const STAGE_ERJS: u32 = 0;
const STAGE_ENTRY: u32 = 1;
const STAGE_EDGE: u32 = 2;

/// A structured trial's outcome when it does not wait.
enum Structured {
    Pending,
    Picked(Option<usize>),
}

impl Phase {
    const START: Phase = Phase { index: 0, level: 0.0, bound: 0.0, trials: 0, cap: 0, stage: STAGE_ERJS, source: EntrySource::Order };
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
    /// The structured step's terms, while one is under way.
    terms: StepTerms,
}

impl<W: Walk> Env<'_, W> {
    #[inline(always)]
    fn prefetch_edge(&self, e: usize) {
        prefetch_edge(self.ctx.graph, e);
    }

    /// Prefetches what the structured proposal's masses will read at the walker's next step
    /// (its label segment's offsets and sums), as the row's offsets are.
    #[inline(always)]
    fn prefetch_terms(&self, w: &Walker<W::State>) {
        if let Some(t) = &self.structured {
            structured::prefetch_step(self.walk, &self.ctx, t, w, true);
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
        let Slot { w, rng, phase, terms: slot_terms, .. } = s;
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
                        SamplerMode::Adaptive | SamplerMode::Rejection | SamplerMode::Structured => {
                            let start = step_start(walk, ctx, wr, self.mode);
                            if start.dead_end {
                                return Ok(Turn::DeadEnd);
                            }
                            let bound = start.bound;
                            let mut estimate = start.estimate;
                            // `d·B`: plain eRJS's expected trials times the weights' sum.
                            let plain_mass = match bound {
                                Bound::Max(b) if b.is_finite() => d as f64 * b as f64,
                                _ => f64::INFINITY,
                            };
                            if let Some(tables) = &self.structured {
                                match structured::start(walk, ctx, tables, self.mode, &self.cost, wr, d, plain_mass, &mut estimate) {
                                    structured::Start::Skip => {}
                                    structured::Start::DeadEnd => return Ok(Turn::DeadEnd),
                                    structured::Start::Use(terms) => {
                                        *slot_terms = terms;
                                        match self.structured_propose(tables, slot_terms, d, base, wr, rng, phase, 0, st)? {
                                            Structured::Pending => return Ok(Turn::Pending),
                                            Structured::Picked(p) => break 'pick p,
                                        }
                                    }
                                }
                            }
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
                            // The lock-step path's rule, and its per-node tables' (one function).
                            match crate::fast_path::node_starts::opening(false, bound, d, self.mode, &self.cost, sum_estimate) {
                                Opening::DeadEnd => return Ok(Turn::DeadEnd),
                                Opening::Rejection(bound) => {
                                    let (index, level) = sampler::rejection_propose(d, bound, rng);
                                    self.prefetch_edge(base + index);
                                    *phase = Phase { index: index as u64, level, trials: 1, bound, ..Phase::START };
                                    return Ok(Turn::Pending);
                                }
                                Opening::Reservoir => {}
                            }
                            st.reservoir_steps += 1;
                            self.reservoir(d, base, wr, rng, weight).map_err(|e| err(e, f32::NAN))?
                        }
                        SamplerMode::Reservoir => {
                            st.reservoir_steps += 1;
                            self.reservoir(d, base, wr, rng, weight).map_err(|e| err(e, f32::NAN))?
                        }
                        SamplerMode::Table => {
                            st.table_steps += 1;
                            let table = self.table.as_ref().expect("a table for --sampler table (checked at the start)");
                            sampler::prefix_table(&table[base..base + d], rng)
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
                trials if phase.stage != STAGE_ERJS => {
                    let tables = self.structured.as_ref().expect("structured trials only with tables");
                    if phase.stage == STAGE_ENTRY {
                        let p = PendingEntry { at: phase.index as usize, word: phase.level as u32, source: phase.source };
                        let e = tables.resolve(&p, base);
                        self.prefetch_edge(e);
                        phase.index = e as u64;
                        phase.stage = STAGE_EDGE;
                        return Ok(Turn::Pending);
                    }
                    let e = phase.index as usize;
                    let i = e - base;
                    let accept = structured::accept(walk, ctx, tables, slot_terms, wr, base, e, rng)?;
                    if accept {
                        st.structured_steps += 1;
                        st.structured_trials += trials as u64;
                        Some(i)
                    } else {
                        match self.structured_propose(tables, slot_terms, d, base, wr, rng, phase, trials, st)? {
                            Structured::Pending => return Ok(Turn::Pending),
                            Structured::Picked(p) => p,
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
                        *phase = Phase { index: index as u64, level, trials: trials + 1, bound, cap: cap(), ..Phase::START };
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

    /// The next structured trial of a step that has made `done` trials: draws a candidate from
    /// the step's mixture of terms and leaves it pending (its table entry or its edge data
    /// prefetched, while other walkers run), or, once the trial cap is reached, finishes the
    /// step by eRVS (exact, as after plain eRJS: conditioning on rejections does not change
    /// the accepted distribution). A candidate is accepted with probability `w(e) / E(e)`
    /// when its edge data has arrived (`Env::turn`).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn structured_propose(
        &self,
        tables: &ProposalTables,
        terms: &StepTerms,
        d: usize,
        base: usize,
        w: &Walker<W::State>,
        rng: &mut StepRng,
        phase: &mut Phase,
        done: u32,
        st: &mut SamplerStats,
    ) -> Result<Structured, WalkError> {
        let (walk, ctx) = (self.walk, &self.ctx);
        let cap = if phase.cap == 0 || done == 0 { self.cost.trial_cap(d) } else { phase.cap };
        match structured::draw(walk, ctx, tables, terms, w, rng, done, cap) {
            Some((Candidate::Edge(e), t)) => {
                self.prefetch_edge(e);
                *phase = Phase { index: e as u64, trials: t, cap, stage: STAGE_EDGE, ..Phase::START };
                return Ok(Structured::Pending);
            }
            Some((Candidate::Entry(p), t)) => {
                prefetch(tables.entry_address(&p));
                *phase = Phase {
                    index: p.at as u64,
                    level: p.word as f64,
                    trials: t,
                    cap,
                    stage: STAGE_ENTRY,
                    source: p.source,
                    ..Phase::START
                };
                return Ok(Structured::Pending);
            }
            None => {}
        }
        st.structured_trials += cap as u64;
        st.structured_fallbacks += 1;
        let weight = |i: usize| walk.weight(ctx, w, base + i);
        let picked = self.reservoir(d, base, w, rng, weight).map_err(|e| to_walk_error(walk.name(), ctx, w, base, f32::NAN, e))?;
        Ok(Structured::Picked(picked))
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

/// What a step under eRJS, adaptive or structured decides before any draw: whether the
/// walk's own dead-end test ends it, the bound `B` and, when it came with the bound, the
/// estimate `Ŝ`. One function for `Env::turn` and the fast paths' qualification
/// ([`crate::fast_path`]), so both decide alike.
pub(crate) struct StepStart {
    /// The walk's dead-end test says every weight of the step is 0.
    pub dead_end: bool,
    /// The bound on this step's weights (unused when `dead_end`).
    pub bound: Bound,
    /// `Ŝ`, when the walk computes it with the bound.
    pub estimate: Option<f32>,
}

/// The start of `w`'s step under `mode` ([`StepStart`]). B and Ŝ are evaluated once per step,
/// whichever sampler uses them; eRJS alone needs Ŝ only for the dead-end test (one load less).
#[inline(always)]
pub(crate) fn step_start<W: Walk>(walk: &W, ctx: &Ctx, w: &Walker<W::State>, mode: SamplerMode) -> StepStart {
    let wants_estimate = mode == SamplerMode::Adaptive || walk.possible_zero();
    let together = if wants_estimate { walk.step_estimates(ctx, w) } else { None };
    let dead = match together {
        Some(t) => t.dead_end,
        None if walk.possible_zero() => walk.dead_end(ctx, w),
        None => None,
    };
    if walk.possible_zero() && dead == Some(true) {
        return StepStart { dead_end: true, bound: Bound::Unknown, estimate: None };
    }
    let bound = together.map_or_else(|| walk.bound(ctx, w), |t| t.bound);
    StepStart { dead_end: false, bound, estimate: together.map(|t| t.estimate) }
}

/// The edge behind the move `w` just made: the one it took, unless the walk's `update` then
/// restarted or teleported it (which leaves it with no previous node): [`NO_EDGE`].
#[inline(always)]
pub(crate) fn move_edge<S>(w: &Walker<S>) -> u64 {
    if w.prev == NO_NODE { NO_EDGE } else { w.last_edge }
}

/// Chunk query `local` at its start, made in `w` (`n` nodes): its walker after `init`; returns
/// its global query and the init stream. In place: a compiled walk's walker (sixteen state
/// words) returned by value was copied three times on its way to a fast path's lane (17
/// instructions a step of a length-5 compiled MetaPath).
#[inline(always)]
pub(crate) fn begin_walk_into<W: Walk>(
    walk: &W,
    ctx: &Ctx,
    seed: u64,
    starts: &Starts,
    local: u64,
    n: usize,
    w: &mut Walker<W::State>,
) -> (u64, StepRng) {
    let q = starts.global(local);
    *w = Walker::new(starts.start(local, n));
    let mut rng = StepRng::new(seed, q, INIT_STEP, Purpose::Init);
    walk.init(ctx, w, &mut rng);
    (q, rng)
}

/// Runs queries `first..first+rows` into `out` (rows × stride) and `lens`, advancing up to
/// `cfg.interleave` walkers in turn; with `edges` (rows × (stride - 1), else empty), the edge
/// behind each move ([`move_edge`]).
fn run_chunk<W: Walk, const COMPILED: bool>(
    env: &Env<W>,
    starts: &Starts,
    cfg: &WalkConfig,
    first: u64,
    out: &mut [u32],
    lens: &mut [u32],
    edges: &mut [u64],
) -> Result<SamplerStats, WalkError> {
    let stride = cfg.length as usize + 1;
    let n = env.ctx.graph.num_nodes();
    let offsets = env.ctx.graph.offsets();
    let mut st = SamplerStats::default();
    let mut prefix = Vec::new();
    let width = cfg.general_interleave();
    let rows = lens.len();
    let mut next = 0usize;
    let mut slots: Vec<Slot<W::State>> = Vec::with_capacity(width);
    let admit = |slots: &mut Vec<Slot<W::State>>, next: &mut usize, out: &mut [u32], lens: &mut [u32]| {
        while slots.len() < width && *next < rows {
            let mut w = Walker::new(0);
            let (q, rng) = begin_walk_into(env.walk, &env.ctx, env.seed, starts, first + *next as u64, n, &mut w);
            out[*next * stride] = w.start;
            if cfg.length == 0 {
                lens[*next] = 1;
            } else {
                prefetch(offsets.as_ptr().wrapping_add(w.cur as usize));
                env.prefetch_terms(&w);
                slots.push(Slot { w, query: q, row: *next, len: 1, rng, phase: Phase::START, terms: StepTerms::EMPTY });
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
                    if !edges.is_empty() {
                        edges[s.row * (stride - 1) + s.len as usize - 1] = move_edge(&s.w);
                    }
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
                        env.prefetch_terms(&s.w);
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
    let mut all = Walks { stride, nodes: Vec::new(), lengths: Vec::new(), edges: Vec::new() };
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
    // `--sampler table` needs a prefix table: checked before any work.
    if cfg.sampler == SamplerMode::Table {
        if !walk.static_weight() {
            return Err(WalkError::param(
                "--sampler",
                format!(
                    "table draws from prefix sums of weights that read only the edge; `{}`'s weight reads the walker too (`wayfarer explain` shows it): use structured for its tables",
                    walk.name()
                ),
            ));
        }
        if graph.num_edges() > MAX_TABLE_EDGES {
            return Err(WalkError::param(
                "--sampler",
                format!("table: the graph has {} edges, over the {MAX_TABLE_EDGES} a prefix table is built for", graph.num_edges()),
            ));
        }
    }
    let stride = cfg.length as usize + 1;
    let t0 = Instant::now();
    let requirements = walk.requirements();
    let stats = NodeStats::compute(graph, requirements, walk.weighted());
    if requirements.edge_queries {
        graph.prepare_edge_filter();
    }
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

    // A fast path, when one applies, makes the walk's tables and turns unneeded.
    let budget = table_budget(cfg.table_budget)?;
    let fast = crate::fast_path::choose(walk, &ctx, cfg.sampler, &cost, budget)?;
    let (structured, proposal) =
        if fast.is_some() { (None, ProposalReport::None) } else { proposal_tables(walk, &ctx, cfg.sampler, budget)? };
    // A walk's compiled turns know no structured proposals: with tables the steps go through
    // the engine's own turns (calling the walk's compiled functions), so every CPU backend
    // makes the same walks for a seed.
    let turn = walk.compiled_turn(&ctx);
    let turns_run = structured.is_none() && matches!(cfg.sampler, SamplerMode::Adaptive | SamplerMode::Rejection);
    let t3 = Instant::now();
    let wants_table = match cfg.sampler {
        SamplerMode::Adaptive => fast.is_none() && structured.is_none() && walk.static_weight() && graph.num_edges() <= MAX_TABLE_EDGES,
        SamplerMode::Table => true,
        _ => false,
    };
    let table = if wants_table { Some(build_table(walk, &ctx)?) } else { None };
    let fast =
        fast.or_else(|| crate::fast_path::choose_after_tables(walk, &ctx, cfg.sampler, &cost, structured.is_some(), table.is_some()));
    let precompute_seconds = precompute_seconds + t3.elapsed().as_secs_f64();
    let compiled = turn.map(|c| {
        Compiled {
            // The reference samplers' turns are the engine's own.
            turns: turns_run.then_some((c.start, c.trial)),
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
    let compiled_turns = fast.is_none() && compiled.as_ref().is_some_and(|c| c.turns.is_some());
    let env = Env { walk, ctx, mode: cfg.sampler, cost, seed: cfg.seed, table, compiled, structured };
    // Recorded edges take two node slots' bytes per move: batches are sized with them.
    let slots_per_walk = if cfg.record_edges { stride + 2 * (stride - 1) } else { stride };
    let batch = batch_walkers(walkers, slots_per_walk, batch_bytes)?;
    let chunk = 512usize;
    let (mut walk_seconds, mut steps) = (0.0, 0u64);
    let mut totals = SamplerStats::default();
    let mut first = 0u64;
    while first < walkers {
        let count = batch.min(walkers - first);
        // Filled here to commit the pages before the clock starts (as a peer's preallocated
        // buffers are); each chunk's worker fills its part again below.
        let mut nodes = vec![NO_NODE; count as usize * stride];
        let mut lengths = vec![0u32; count as usize];
        // The edge behind each move, when asked for: `stride - 1` per walk.
        let steps_per_walk = if cfg.record_edges { stride - 1 } else { 0 };
        let mut edges = vec![NO_EDGE; count as usize * steps_per_walk];
        let edge_chunks: Vec<&mut [u64]> = if steps_per_walk > 0 {
            edges.chunks_mut(chunk * steps_per_walk).collect()
        } else {
            (0..(count as usize).div_ceil(chunk)).map(|_| &mut [][..]).collect()
        };
        let t2 = Instant::now();
        let st = nodes
            .par_chunks_mut(chunk * stride)
            .zip(lengths.par_chunks_mut(chunk))
            .zip(edge_chunks)
            .enumerate()
            .map(|(c, ((out, lens), edges))| {
                let at = first + (c * chunk) as u64;
                // Rewriting the chunk's words (512 walks' worth, ~160 KiB at 80 steps) brings
                // its output lines into this core's L2, owned, before the steps store into them
                // one word at a time: otherwise each line's first store waits on the shared L3
                // or memory. DeepWalk unweighted, 2 threads: +15-20%
                // (bench/results/2026-12-05-cpu-chunk-fill.md).
                out.fill(NO_NODE);
                // Two instantiations: the engine's loop for walks without compiled turns carries
                // no trace of them (its registers are all the native walk's).
                let st = if let Some(fast) = &fast {
                    let chunk = crate::fast_path::Chunk {
                        walk,
                        ctx: &env.ctx,
                        mode: env.mode,
                        cost: &env.cost,
                        seed: env.seed,
                        starts,
                        cfg,
                        first: at,
                        tables: env.structured.as_ref(),
                    };
                    crate::fast_path::run_chunk(fast, &chunk, out, lens, edges)?
                } else if env.compiled.is_some() {
                    run_chunk::<W, true>(&env, starts, cfg, at, out, lens, edges)?
                } else {
                    run_chunk::<W, false>(&env, starts, cfg, at, out, lens, edges)?
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
        let walks = Walks { stride, nodes, lengths, edges };
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
        fast_path: fast.as_ref().map_or_else(Default::default, |f| f.report()),
        proposal,
        edge_filter_bytes: if requirements.edge_queries { graph.edge_filter_bytes() } else { 0 },
    };
    Ok(report)
}

/// The error for a static factor that is negative, NaN or infinite at edge `e` (found while
/// building the tables, before any walk), naming the edge by its original ids.
pub fn bad_static_factor(walk: &str, g: &CsrGraph, e: usize, x: f32) -> WalkError {
    let src = g.offsets().partition_point(|&o| o as usize <= e).saturating_sub(1) as u32;
    let map = g.id_map();
    WalkError::BadWeight { walk: walk.into(), weight: x, src: map.original(src), dst: map.original(g.targets()[e]), step: 0 }
}

/// The bytes structured-proposal tables may take (0 turns structured proposals off): the
/// run's own setting (`explicit`), else `WAYFARER_TABLE_BUDGET` when set, else a quarter of
/// the host memory available (the tables are built on the host for every backend).
pub fn table_budget(explicit: Option<u64>) -> Result<u64, WalkError> {
    if let Some(b) = explicit {
        return Ok(b);
    }
    match std::env::var("WAYFARER_TABLE_BUDGET") {
        Ok(v) => v.trim().parse::<u64>().map_err(|_| WalkError::param("WAYFARER_TABLE_BUDGET", format!("`{v}` is not a number of bytes"))),
        Err(_) => Ok(crate::memory::available_bytes().unwrap_or(u64::MAX) / 4),
    }
}

/// The tables of the walk's structured proposal plan, when it has one and the policy uses it,
/// over the longest rows that fit `budget` bytes ([`table_budget`]); otherwise why not.
fn proposal_tables<W: Walk>(
    walk: &W,
    ctx: &Ctx,
    mode: SamplerMode,
    budget: u64,
) -> Result<(Option<ProposalTables>, ProposalReport), WalkError> {
    let terms = walk.proposal();
    if terms.is_empty() || !matches!(mode, SamplerMode::Adaptive | SamplerMode::Structured) {
        return Ok((None, ProposalReport::None));
    }
    let g = ctx.graph;
    let skipped = |why: String| Ok((None, ProposalReport::Skipped(why)));
    if budget == 0 {
        return skipped("a table budget of 0 turns structured proposals off".into());
    }
    let t = Instant::now();
    let factor = |i: usize, e: usize| walk.term_static(ctx, i, e);
    let need = if mode == SamplerMode::Structured { TableNeed::Always } else { TableNeed::WhereTheyPay };
    match ProposalTables::build(g, &terms, &factor, budget, need) {
        Err((_, e, x)) => Err(bad_static_factor(walk.name(), g, e, x)),
        Ok(Err(why)) => skipped(why.to_string()),
        Ok(Ok(tables)) => {
            let report = ProposalReport::Built { seconds: t.elapsed().as_secs_f64(), coverage: tables.coverage };
            Ok((Some(tables), report))
        }
    }
}
