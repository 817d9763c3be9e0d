//! Per-node step openings for the lock-step path: when a walk's bound, estimate and dead-end
//! verdict past the first move depend on the current node alone ([`Walk::node_start`], which
//! `#[walk]` generates from the bound analysis), the adaptive rule's verdict for every node is
//! computed once per run and a step past the first reads it in one word, instead of computing
//! the bound and the estimate and weighing eRJS against eRVS each step; where every node with
//! edges gets the same verdict, that one word is kept instead of the table. The verdicts are
//! the ones the step would reach itself (`opening` is the function both use), so the walks are
//! the same.

use crate::cost::CostModel;
use crate::run::SamplerMode;
use crate::walk::{Bound, Ctx, StepEstimates, Walk, Walker};
use rayon::prelude::*;

/// How a step starts, once its row has edges and no structured proposal serves it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Opening {
    /// eRJS under this bound.
    Rejection(f32),
    /// eRVS.
    Reservoir,
    /// No weight can be taken.
    DeadEnd,
}

/// The opening of a step on a row of `d` edges under `mode` and `cost`, from the step's
/// dead-end verdict, bound and estimate (`estimate` is called only when the adaptive rule
/// needs it).
#[inline(always)]
pub(crate) fn opening(
    dead_end: bool,
    bound: Bound,
    d: usize,
    mode: SamplerMode,
    cost: &CostModel,
    estimate: impl FnOnce() -> f32,
) -> Opening {
    if dead_end {
        return Opening::DeadEnd;
    }
    match bound {
        Bound::Max(b) if b > 0.0 && b.is_finite() => {
            if mode != SamplerMode::Adaptive || !cost.prefers_reservoir(d, b, estimate()) {
                Opening::Rejection(b)
            } else {
                Opening::Reservoir
            }
        }
        // Every weight is <= 0, i.e. 0: nothing can be taken.
        Bound::Max(b) if b <= 0.0 => Opening::DeadEnd,
        _ => Opening::Reservoir,
    }
}

/// Each node's opening past the first move, one word a node: a positive finite bound's bits
/// (eRJS), or one of the codes below.
pub(crate) struct NodeStarts {
    codes: Vec<u32>,
    /// The code of every row with edges, where they all share one.
    shared: Option<u32>,
}

const RESERVOIR: u32 = u32::MAX;
const DEAD_END: u32 = u32::MAX - 1;
/// The node's opening depends on more than the node: the step computes it.
const PER_STEP: u32 = u32::MAX - 2;

/// Bytes per node of [`NodeStarts`].
pub(crate) const NODE_START_BYTES: u64 = 4;

/// Builds the table only for runs that had it turned off: tests compare the walks with and
/// without it (feature `testing` only; process-wide).
#[cfg(feature = "testing")]
pub static NODE_STARTS_OFF: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Deliberately broken openings, for the test that a wrong table shows in the walks (feature
/// `testing` only): while set, every tabulated eRJS bound is halved.
#[cfg(feature = "testing")]
pub static BROKEN_NODE_STARTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl NodeStarts {
    /// The table for `walk` on `ctx`'s graph under `mode` (adaptive or eRJS) and `cost`, if
    /// at least one node's opening depends on the node alone (4 bytes a node, half the row
    /// offsets' size: it needs no budget of its own).
    pub(crate) fn build<W: Walk>(walk: &W, ctx: &Ctx, mode: SamplerMode, cost: &CostModel) -> Option<NodeStarts> {
        #[cfg(feature = "testing")]
        if NODE_STARTS_OFF.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let g = ctx.graph;
        let n = g.num_nodes();
        if !matches!(mode, SamplerMode::Adaptive | SamplerMode::Rejection) {
            return None;
        }
        // A walk without the method answers at once: ask one node before building.
        let probe = (0..n as u32).find(|&v| g.degree(v) > 0)?;
        let mut w = Walker::<W::State>::new(probe);
        w.step = 1;
        walk.node_start(ctx, &w)?;
        #[cfg(feature = "testing")]
        let broken = BROKEN_NODE_STARTS.load(std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(feature = "testing"))]
        let broken = false;
        let codes: Vec<u32> = (0..n as u32)
            .into_par_iter()
            .with_min_len(1 << 12)
            .map(|v| {
                let d = g.row(v).len();
                if d == 0 {
                    return PER_STEP;
                }
                let mut w = Walker::<W::State>::new(v);
                w.step = 1;
                match walk.node_start(ctx, &w) {
                    None => PER_STEP,
                    Some(StepEstimates { bound, estimate, dead_end }) => {
                        let dead = walk.possible_zero() && dead_end == Some(true);
                        match opening(dead, bound, d, mode, cost, || estimate) {
                            Opening::Rejection(b) if broken => (b * 0.5).to_bits(),
                            Opening::Rejection(b) => b.to_bits(),
                            Opening::Reservoir => RESERVOIR,
                            Opening::DeadEnd => DEAD_END,
                        }
                    }
                }
            })
            .collect();
        // Whether every row with edges opens the same way (Node2Vec unweighted: eRJS under its
        // one bound everywhere): then a step reads no table, one cache miss fewer (Node2Vec
        // unweighted at 2 threads: +13% on R-MAT 18, +38% on R-MAT 20,
        // bench/results/2026-12-07-cpu-shared-opening.md).
        let offsets = g.offsets();
        let mut nonempty = codes.iter().enumerate().filter(|&(v, _)| offsets[v + 1] > offsets[v]).map(|(_, &c)| c);
        let shared = nonempty.next().filter(|&first| first != PER_STEP && nonempty.all(|c| c == first));
        if shared.is_some() {
            // The table is not read again: its memory goes back.
            return Some(NodeStarts { codes: Vec::new(), shared });
        }
        codes.iter().any(|&c| c != PER_STEP).then_some(NodeStarts { codes, shared: None })
    }

    /// The opening of a step from `v` past the walk's first move, if it depends on `v` alone;
    /// `v`'s row must have edges (a row without is a dead end, whatever this says).
    #[inline(always)]
    pub(crate) fn get(&self, v: u32) -> Option<Opening> {
        let code = match self.shared {
            Some(c) => c,
            None => *self.codes.get(v as usize)?,
        };
        match code {
            PER_STEP => None,
            RESERVOIR => Some(Opening::Reservoir),
            DEAD_END => Some(Opening::DeadEnd),
            bits => Some(Opening::Rejection(f32::from_bits(bits))),
        }
    }

    /// Prefetches `v`'s word (nothing when the opening is shared).
    #[inline(always)]
    pub(crate) fn prefetch(&self, v: u32) {
        if self.shared.is_none() {
            crate::engine::prefetch(self.codes.as_ptr().wrapping_add(v as usize));
        }
    }

    /// Whether every row with edges opens the same way, so no table is kept.
    pub(crate) fn shared(&self) -> bool {
        self.shared.is_some()
    }

    /// The table's size.
    pub(crate) fn bytes(&self) -> u64 {
        self.codes.len() as u64 * NODE_START_BYTES
    }
}
