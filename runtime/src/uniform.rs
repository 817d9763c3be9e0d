//! The uniform-row fast path: a static-weight walk on a graph where every row's weights are
//! equal (DeepWalk on an unweighted graph, or on one whose rows are flat) takes every step by
//! eRJS's first trial: the bound is the row's weight, so the candidate `below(d)` is always
//! accepted. Such a run needs none of the per-step machinery (bound, estimate, cost model,
//! trial phases): a step is one draw, the candidate's target and the output. The draws are
//! eRJS's own (the step's Sample stream, `below(d)` first), so the walks are exactly those of
//! the general path, on every backend, and the sampler mix reads eRJS as before.
//!
//! The run qualifies only if, for every row with edges, the general path would provably do
//! the same: the weights are equal, positive and finite, the bound equals them, and (adaptive)
//! the rule picks eRJS and no dead-end test fires. One row that fails keeps the whole run on
//! the general path.

use crate::cost::CostModel;
use crate::engine::TABLE_TRIALS;
use crate::rng::{Purpose, StepRng};
use crate::run::{SamplerMode, SamplerStats, Starts, WalkConfig};
use crate::walk::{Bound, Ctx, Walk, Walker};
use rayon::prelude::*;

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
            // The general path's start of a step (`Env::turn`), for this row.
            let (bound, estimate, dead) = match walk.step_estimates(ctx, &w) {
                Some(t) => (t.bound, Some(t.estimate), t.dead_end),
                None => (walk.bound(ctx, &w), None, if walk.possible_zero() { walk.dead_end(ctx, &w) } else { None }),
            };
            if walk.possible_zero() && dead == Some(true) {
                return false;
            }
            let Bound::Max(b) = bound else { return false };
            if b.to_bits() != x.to_bits() {
                return false;
            }
            if mode == SamplerMode::Rejection {
                return true;
            }
            let s = estimate.unwrap_or_else(|| walk.sum_estimate(ctx, &w));
            let trials = d as f64 * b as f64 / s.max(f32::MIN_POSITIVE) as f64;
            trials < TABLE_TRIALS && !cost.prefers_reservoir(d, b, s)
        })
    })
}

/// One walker under way: its step's candidate edge once drawn (its target prefetched).
struct Slot<S> {
    w: Walker<S>,
    query: u64,
    row: usize,
    len: u32,
    pending: Option<usize>,
}

/// [`crate::engine`]'s `run_chunk` for a run whose rows are uniform ([`rows_are_uniform`]):
/// queries `first..first + lens.len()` into `out` (rows × stride) and `lens`, `cfg.interleave`
/// walkers in turn. A turn either draws a walker's candidate (and prefetches its target) or,
/// the next time round, moves it there (and prefetches the new row's offsets).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_chunk<W: Walk>(
    walk: &W,
    ctx: &Ctx,
    seed: u64,
    starts: &Starts,
    cfg: &WalkConfig,
    first: u64,
    out: &mut [u32],
    lens: &mut [u32],
) -> SamplerStats {
    let g = ctx.graph;
    let (offsets, targets) = (g.offsets(), g.targets());
    let stride = cfg.length as usize + 1;
    let n = g.num_nodes();
    let mut st = SamplerStats::default();
    let width = cfg.interleave.max(1);
    let rows = lens.len();
    let mut next = 0usize;
    let mut slots: Vec<Slot<W::State>> = Vec::with_capacity(width);
    let admit = |slots: &mut Vec<Slot<W::State>>, next: &mut usize, out: &mut [u32], lens: &mut [u32]| {
        while slots.len() < width && *next < rows {
            let (w, query, _) = crate::engine::begin_walk(walk, ctx, seed, starts, first + *next as u64, n);
            out[*next * stride] = w.start;
            if cfg.length > 0 {
                crate::engine::prefetch(offsets.as_ptr().wrapping_add(w.cur as usize));
                slots.push(Slot { w, query, row: *next, len: 1, pending: None });
            } else {
                lens[*next] = 1;
            }
            *next += 1;
        }
    };
    admit(&mut slots, &mut next, out, lens);
    while !slots.is_empty() {
        let mut k = 0;
        while k < slots.len() {
            let s = &mut slots[k];
            let done = match s.pending.take() {
                None => {
                    let v = s.w.cur as usize;
                    let (base, end) = (offsets[v] as usize, offsets[v + 1] as usize);
                    if base == end {
                        st.dead_ends += 1;
                        true
                    } else {
                        // eRJS's first draw of the step; its level (the second) never matters.
                        let mut rng = StepRng::new(seed, s.query, s.w.step, Purpose::Sample);
                        let e = base + rng.below((end - base) as u64) as usize;
                        crate::engine::prefetch(targets.as_ptr().wrapping_add(e));
                        s.pending = Some(e);
                        false
                    }
                }
                Some(e) => {
                    st.rejection_steps += 1;
                    st.rejection_trials += 1;
                    s.w.prev = s.w.cur;
                    s.w.cur = targets[e];
                    s.w.last_edge = e as u64;
                    s.w.step += 1;
                    out[s.row * stride + s.len as usize] = s.w.cur;
                    s.len += 1;
                    if s.w.step >= cfg.length {
                        true
                    } else {
                        crate::engine::prefetch(offsets.as_ptr().wrapping_add(s.w.cur as usize));
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
    st
}
