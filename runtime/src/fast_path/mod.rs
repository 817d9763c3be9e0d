//! The engine's fast paths: loops specialized to a run's shape, chosen once per run (`choose`,
//! `choose_after_tables`) instead of tested per step. Their walkers advance in lock step, the
//! first Philox block of sixteen walkers' step streams computed at once
//! ([`crate::rng::PhiloxLanes`]), and none of the general path's per-turn dispatch runs; on
//! the one-draw paths a step is just the draw, the candidate's target and the output.
//!
//! - **Uniform rows.** A static-weight walk on a graph where every row's weights are equal
//!   (DeepWalk unweighted, or on flat rows) takes every step by eRJS's first trial: the bound
//!   is the row's weight, so the candidate `below(d)` is always accepted. The draws are eRJS's
//!   own (the step's Sample stream, `below(d)` first), so the walks are exactly the general
//!   path's, on every backend, and the sampler mix reads eRJS as before. The run qualifies
//!   only if, for every row with edges, the general path provably does the same
//!   (`engine::step_start` decides both): one row that fails keeps the whole run on
//!   the general path.
//! - **Alias rows** (adaptive only). Any other static-weight walk without move hooks:
//!   Vose's alias table of each row's weights, built once, gives each step in one draw
//!   (`below(d)` for the slot, one word against its threshold), whatever the skew, as
//!   ThunderRW's static mode does. A new sampler with its own draws: exact by construction to
//!   the 2^-32 grid of the threshold, and held to the chi-square suite like every other.
//! - **Lock-step** (`lock_step.rs`). Any other walk without move hooks, under adaptive, eRJS
//!   or structured, whose run built no prefix table: the general path's step, structured arm
//!   included when the run built structured-proposal tables, step for step (the same draws,
//!   the same walks), in lock step.

mod lock_step;
pub mod node_starts;
mod one_draw;

use crate::cost::CostModel;
use crate::engine::TABLE_TRIALS;
use crate::error::WalkError;
use crate::rng::{LANES, PhiloxLanes, Purpose, StepRng};
use crate::run::{SamplerMode, SamplerStats, Starts, WalkConfig};
use crate::walk::{Bound, Ctx, Walk, Walker};
use rayon::prelude::*;
use std::time::Instant;

/// The fast path a run takes.
pub(crate) enum FastPath {
    /// Every step is eRJS's first candidate ([`rows_are_uniform`]); the row offsets in 32 bits
    /// when every edge index fits (see [`compact_offsets`]).
    UniformRows(Option<Vec<u32>>),
    /// Every step is one draw from its row's alias table.
    AliasRows(AliasRows),
    /// The general path's eRJS and eRVS steps, in lock step ([`lock_step`]), with the nodes'
    /// openings tabulated when they depend on the node alone.
    LockStepRejection(Option<node_starts::NodeStarts>),
    /// The general path's structured, eRJS and eRVS steps, in lock step ([`lock_step`]).
    LockStepStructured,
}

/// What the run report says about the fast path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum FastPathReport {
    /// The general path ran every step.
    #[default]
    None,
    /// Uniform rows: one draw per step, eRJS's walks.
    UniformRows,
    /// Alias rows: one alias draw per step from tables of `bytes`, built in `seconds`.
    AliasRows {
        /// The tables' size.
        bytes: u64,
        /// Seconds to build them.
        seconds: f64,
    },
    /// The general path's eRJS and eRVS steps, in lock step: the same walks. With
    /// `node_starts` bytes (0: none) of per-node openings ([`node_starts`]), or one opening
    /// shared by every node with edges.
    LockStepRejection {
        /// The per-node openings' size.
        node_starts: u64,
        /// Whether every node with edges opens its steps the same way (then no table is kept).
        shared_opening: bool,
    },
    /// The general path's structured-proposal, eRJS and eRVS steps, in lock step: the same
    /// walks.
    LockStepStructured,
}

impl FastPathReport {
    /// The summary's words for it (empty for none).
    pub fn describe(&self) -> String {
        match self {
            FastPathReport::None => String::new(),
            FastPathReport::UniformRows => ", uniform rows (one draw per step)".into(),
            FastPathReport::AliasRows { bytes, seconds } => {
                format!(", alias rows (one alias draw per step; tables {:.1} MiB in {seconds:.3} s)", *bytes as f64 / (1u64 << 20) as f64)
            }
            FastPathReport::LockStepRejection { shared_opening: true, .. } => ", lock-step eRJS (one opening for every node)".into(),
            FastPathReport::LockStepRejection { node_starts: 0, .. } => ", lock-step eRJS".into(),
            FastPathReport::LockStepRejection { node_starts, .. } => {
                format!(", lock-step eRJS (openings per node: {:.1} MiB)", *node_starts as f64 / (1u64 << 20) as f64)
            }
            FastPathReport::LockStepStructured => ", lock-step structured proposals and eRJS".into(),
        }
    }
}

/// Per-edge alias entries `[threshold, alias, target, alias's target]` in CSR order: a step on
/// row `v` draws slot `i` of its `d`, keeps edge `i` when the next word is below the threshold
/// and takes edge `alias` (an offset in the row) otherwise. The entry carries both edges'
/// targets, so a step reads one line, not the entry and then the target (two dependent misses
/// once the graph is larger than the caches). A row whose weights are all 0 has the alias
/// [`DEAD_ROW`] in every slot: the walk ends there, as on the general path.
pub(crate) struct AliasRows {
    entries: Vec<[u32; 4]>,
    seconds: f64,
}

/// The alias of every slot of a row without weight.
const DEAD_ROW: u32 = u32::MAX;

/// Bytes per edge of [`AliasRows`].
const ALIAS_ENTRY_BYTES: u64 = 16;

/// Deliberately broken alias tables, for the test that the exactness suite catches a wrong
/// sampler (feature `testing` only): while set, every threshold is halved, so a slot keeps its
/// own edge half as often as its weight says.
#[cfg(feature = "testing")]
pub static BROKEN_ALIAS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl AliasRows {
    /// The tables of `walk`'s static weights over every row, or a weight that cannot be one
    /// (negative, NaN or infinite: the error names its edge).
    fn build<W: Walk>(walk: &W, ctx: &Ctx) -> Result<Self, WalkError> {
        let t = Instant::now();
        let g = ctx.graph;
        let (off, tg) = (g.offsets(), g.targets());
        // Read at random by every step: on huge pages (+40-50% on R-MAT 18).
        let mut entries = crate::memory::huge_page_vec(g.num_edges() as usize, || [0u32; 4]);
        let chunks = crate::graph::build::row_chunks(off, 1 << 16);
        // Disjoint slices of `entries`, one per chunk of rows.
        let mut slices = Vec::with_capacity(chunks.len());
        let mut rest: &mut [[u32; 4]] = &mut entries;
        for c in &chunks {
            let (head, tail) = rest.split_at_mut((off[c.end] - off[c.start]) as usize);
            slices.push((c.clone(), head));
            rest = tail;
        }
        #[cfg(feature = "testing")]
        let broken = BROKEN_ALIAS.load(std::sync::atomic::Ordering::Relaxed);
        slices.into_par_iter().try_for_each(|(nodes, out)| {
            let first = off[nodes.start] as usize;
            let (mut values, mut prob, mut alias) = (Vec::new(), Vec::new(), Vec::new());
            let (mut small, mut large) = (Vec::new(), Vec::new());
            for v in nodes {
                let row = g.row(v as u32);
                if row.is_empty() {
                    continue;
                }
                let w = Walker::<W::State>::new(v as u32);
                values.clear();
                for e in row.clone() {
                    let x = walk.weight(ctx, &w, e);
                    if !(x >= 0.0) || x == f32::INFINITY {
                        return Err(crate::engine::bad_static_factor(walk.name(), g, e, x));
                    }
                    values.push(x as f64);
                }
                let d = values.len();
                prob.resize(d, 0.0);
                alias.resize(d, 0);
                let slots = &mut out[row.start - first..row.end - first];
                let total = crate::proposal::build_alias(&values, &mut prob, &mut alias, &mut small, &mut large);
                if !(total > 0.0) {
                    slots.fill([0, DEAD_ROW, 0, 0]);
                    continue;
                }
                for (i, s) in slots.iter_mut().enumerate() {
                    #[allow(unused_mut)]
                    let mut p = prob[i];
                    #[cfg(feature = "testing")]
                    if broken {
                        p *= 0.5;
                    }
                    *s = [crate::proposal::threshold(p), alias[i], tg[row.start + i], tg[row.start + alias[i] as usize]];
                }
            }
            Ok(())
        })?;
        Ok(AliasRows { entries, seconds: t.elapsed().as_secs_f64() })
    }
}

/// The fast path for `walk` on `ctx`'s graph under `mode` and `cost`, if one applies:
/// uniform rows under adaptive and eRJS; alias rows under adaptive when the tables fit
/// `table_budget` bytes (and the general path otherwise).
pub(crate) fn choose<W: Walk>(
    walk: &W,
    ctx: &Ctx,
    mode: SamplerMode,
    cost: &CostModel,
    table_budget: u64,
) -> Result<Option<FastPath>, WalkError> {
    if fast_paths_off() || !walk.static_weight() || walk.has_move_hooks() {
        return Ok(None);
    }
    if rows_are_uniform(walk, ctx, mode, cost) {
        return Ok(Some(FastPath::UniformRows(compact_offsets(ctx.graph.offsets()))));
    }
    let off = ctx.graph.offsets();
    let rows_fit = off.windows(2).all(|r| r[1] - r[0] <= u32::MAX as u64);
    if mode == SamplerMode::Adaptive && rows_fit && ctx.graph.num_edges().saturating_mul(ALIAS_ENTRY_BYTES) <= table_budget {
        return Ok(Some(FastPath::AliasRows(AliasRows::build(walk, ctx)?)));
    }
    Ok(None)
}

impl FastPath {
    /// What the run report says.
    pub(crate) fn report(&self) -> FastPathReport {
        match self {
            FastPath::UniformRows(_) => FastPathReport::UniformRows,
            FastPath::AliasRows(a) => FastPathReport::AliasRows { bytes: a.entries.len() as u64 * ALIAS_ENTRY_BYTES, seconds: a.seconds },
            FastPath::LockStepRejection(t) => FastPathReport::LockStepRejection {
                node_starts: t.as_ref().map_or(0, |t| t.bytes()),
                shared_opening: t.as_ref().is_some_and(|t| t.shared()),
            },
            FastPath::LockStepStructured => FastPathReport::LockStepStructured,
        }
    }
}

/// The fast path for a walk that none of [`choose`]'s fits, once the run's tables are known:
/// when the walk has no move hooks and no prefix table was built, lock-step eRJS under
/// adaptive or eRJS without structured-proposal tables (with per-node openings where the walk
/// has them), and lock-step structured under adaptive or structured with them.
pub(crate) fn choose_after_tables<W: Walk>(
    walk: &W,
    ctx: &Ctx,
    mode: SamplerMode,
    cost: &CostModel,
    structured: bool,
    prefix_table: bool,
) -> Option<FastPath> {
    if fast_paths_off() || walk.has_move_hooks() || prefix_table {
        return None;
    }
    match (structured, mode) {
        (false, SamplerMode::Adaptive | SamplerMode::Rejection) => {
            Some(FastPath::LockStepRejection(node_starts::NodeStarts::build(walk, ctx, mode, cost)))
        }
        (true, SamplerMode::Adaptive | SamplerMode::Structured) => Some(FastPath::LockStepStructured),
        _ => None,
    }
}

/// Turns every fast path off, for the tests that compare them with the general path
/// (feature `testing` only; process-wide).
#[cfg(feature = "testing")]
pub static FAST_PATHS_OFF: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn fast_paths_off() -> bool {
    #[cfg(feature = "testing")]
    return FAST_PATHS_OFF.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "testing"))]
    false
}

/// The first Philox blocks of sixteen lanes' step streams (`(query, step)` each; idle lanes
/// pass [`IDLE_QUERY`] and get a block nobody reads).
#[inline(always)]
pub(super) fn first_blocks(philox: &PhiloxLanes, lanes: impl Iterator<Item = (u64, u32)>) -> [[u32; LANES]; 4] {
    let mut ctr = [[0u32; LANES]; 4];
    for (l, (query, step)) in lanes.enumerate().take(LANES) {
        let c = StepRng::first_counter(query, step, Purpose::Sample);
        for (word, x) in ctr.iter_mut().zip(c) {
            word[l] = x;
        }
    }
    philox.blocks(&ctr)
}

/// What an idle lane passes to [`first_blocks`].
pub(super) const IDLE_QUERY: (u64, u32) = (0, 0);

/// A chunk of queries for a fast path: the walk, its graph and the run's settings, and the
/// chunk's first query.
pub(crate) struct Chunk<'a, W: Walk> {
    pub walk: &'a W,
    pub ctx: &'a Ctx<'a>,
    pub mode: SamplerMode,
    pub cost: &'a CostModel,
    pub seed: u64,
    pub starts: &'a Starts,
    pub cfg: &'a WalkConfig,
    pub first: u64,
    /// The run's structured-proposal tables, if it built them.
    pub tables: Option<&'a crate::proposal::ProposalTables>,
}

impl<W: Walk> Chunk<'_, W> {
    /// The chunk's next walker with a step to take, made in `w` (in place: a compiled walk's
    /// walker is large), with its query and output row; its start written to `out` (rows ×
    /// `length + 1`) and its row's offsets prefetched; a walker whose length is 0 ends at its
    /// start (`lens`). `None` when none is left (`next` counts them; `w` is then whatever the
    /// last skipped walker left there).
    #[inline]
    fn next_walker(&self, next: &mut usize, out: &mut [u32], lens: &mut [u32], w: &mut Walker<W::State>) -> Option<(u64, usize)> {
        let g = self.ctx.graph;
        let stride = self.cfg.length as usize + 1;
        while *next < lens.len() {
            let (query, _) =
                crate::engine::begin_walk_into(self.walk, self.ctx, self.seed, self.starts, self.first + *next as u64, g.num_nodes(), w);
            let row = *next;
            *next += 1;
            out[row * stride] = w.start;
            if w.step >= self.cfg.length {
                lens[row] = 1;
                continue;
            }
            crate::engine::prefetch(g.offsets().as_ptr().wrapping_add(w.cur as usize));
            return Some((query, row));
        }
        None
    }
}

/// [`crate::engine`]'s `run_chunk` on fast path `fast`: the chunk's queries into `out`
/// (rows × stride) and `lens`, and each move's edge into `edges` unless it is empty. Never inlined: `wayfarer bench --counts` counts the
/// instructions inside functions named `run_chunk`.
#[inline(never)]
pub(crate) fn run_chunk<W: Walk>(
    fast: &FastPath,
    chunk: &Chunk<W>,
    out: &mut [u32],
    lens: &mut [u32],
    edges: &mut [u64],
) -> Result<SamplerStats, WalkError> {
    Ok(match fast {
        FastPath::UniformRows(Some(o)) if edges.is_empty() => one_draw::lock_step::<W, u32, false, false>(o, &[], chunk, out, lens, edges),
        FastPath::UniformRows(Some(o)) => one_draw::lock_step::<W, u32, false, true>(o, &[], chunk, out, lens, edges),
        FastPath::UniformRows(None) if edges.is_empty() => {
            one_draw::lock_step::<W, u64, false, false>(chunk.ctx.graph.offsets(), &[], chunk, out, lens, edges)
        }
        FastPath::UniformRows(None) => one_draw::lock_step::<W, u64, false, true>(chunk.ctx.graph.offsets(), &[], chunk, out, lens, edges),
        FastPath::AliasRows(a) if edges.is_empty() => {
            one_draw::lock_step::<W, u64, true, false>(chunk.ctx.graph.offsets(), &a.entries, chunk, out, lens, edges)
        }
        FastPath::AliasRows(a) => one_draw::lock_step::<W, u64, true, true>(chunk.ctx.graph.offsets(), &a.entries, chunk, out, lens, edges),
        FastPath::LockStepRejection(starts) => return lock_step::lock_step(None, starts.as_ref(), chunk, out, lens, edges),
        FastPath::LockStepStructured => {
            return lock_step::lock_step(Some(chunk.tables.expect("lock-step structured with tables")), None, chunk, out, lens, edges);
        }
    })
}

/// The graph's row offsets in 32 bits, if every edge index fits: the uniform-rows path reads
/// one offset pair a step, and half the bytes keep twice the nodes' offsets in a core's L2
/// (DeepWalk unweighted on R-MAT 18 and 20: +3%, `bench/results/2026-12-05-cpu-compact-offsets.md`;
/// the alias path, which reads a table entry besides, gained nothing).
fn compact_offsets(off: &[u64]) -> Option<Vec<u32>> {
    if off.last().is_none_or(|&m| m > u32::MAX as u64) {
        return None;
    }
    let mut out = Vec::new();
    out.try_reserve_exact(off.len()).ok()?;
    off.par_iter().map(|&o| o as u32).collect_into_vec(&mut out);
    Some(out)
}

/// Whether every step of `walk` on `ctx`'s graph is eRJS accepting its first candidate, under
/// `mode` (adaptive or eRJS; other samplers never take the fast path) and `cost`.
pub(crate) fn rows_are_uniform<W: Walk>(walk: &W, ctx: &Ctx, mode: SamplerMode, cost: &CostModel) -> bool {
    if !walk.static_weight() || walk.has_move_hooks() || !matches!(mode, SamplerMode::Adaptive | SamplerMode::Rejection) {
        return false;
    }
    let g = ctx.graph;
    let chunks = crate::graph::build::row_chunks(g.offsets(), 1 << 16);
    chunks.into_par_iter().all(|nodes| {
        nodes.into_iter().all(|v| {
            let row = g.row(v as u32);
            if row.is_empty() {
                return true;
            }
            let w = Walker::<W::State>::new(v as u32);
            let x = walk.weight(ctx, &w, row.start);
            if !(x > 0.0 && x.is_finite()) || row.clone().any(|e| walk.weight(ctx, &w, e).to_bits() != x.to_bits()) {
                return false;
            }
            let d = row.len();
            // The general path's start of a step, for this row.
            let start = crate::engine::step_start(walk, ctx, &w, mode);
            if start.dead_end {
                return false;
            }
            let Bound::Max(b) = start.bound else { return false };
            if b.to_bits() != x.to_bits() {
                return false;
            }
            if mode == SamplerMode::Rejection {
                return true;
            }
            let s = start.estimate.unwrap_or_else(|| walk.sum_estimate(ctx, &w));
            let trials = d as f64 * b as f64 / s.max(f32::MIN_POSITIVE) as f64;
            trials < TABLE_TRIALS && !cost.prefers_reservoir(d, b, s)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::compact_offsets;

    #[test]
    fn offsets_are_compacted_only_when_every_edge_index_fits() {
        assert_eq!(compact_offsets(&[0, 3, 3, 7]), Some(vec![0, 3, 3, 7]));
        assert_eq!(compact_offsets(&[0, u32::MAX as u64]), Some(vec![0, u32::MAX]));
        // One edge past 2^32 - 1: the 32-bit copy would wrap, so the path keeps the u64s.
        assert_eq!(compact_offsets(&[0, 5, u32::MAX as u64 + 1]), None);
        assert_eq!(compact_offsets(&[]), None);
    }
}
