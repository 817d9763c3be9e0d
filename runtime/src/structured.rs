//! A structured-proposal step in three pieces, shared by the general path (`engine::Env::turn`)
//! and the lock-step path ([`crate::fast_path`]), so both decide alike and draw the same words:
//!
//! 1. [`start`]: whether the step uses the walk's structured tables (the adaptive rule against
//!    plain eRJS, or always under `--sampler structured`) and, if so, its terms' masses;
//! 2. [`draw`]: the next trial's candidate (an edge, or the table entry that names one);
//! 3. [`accept`]: the candidate's acceptance, `u · E(e) < w(e)`, through the squeeze first.

use crate::cost::CostModel;
use crate::error::WalkError;
use crate::proposal::{Draw, PendingEntry, ProposalTables, StepTerms, TermBounds};
use crate::rng::StepRng;
use crate::run::SamplerMode;
use crate::sampler::SampleError;
use crate::walk::{Ctx, Walk, Walker};

/// Prefetches what [`start`] will read at `w`'s next step when the plan has a label term:
/// the label's segment offsets and sums, and the label's aggregates that the walk's bound and
/// estimate read (`Ctx::label_query`) unless `reads_bound` is false (steps that
/// `ProposalTables::label_step` starts read neither), as the row's offsets are.
#[inline(always)]
pub(crate) fn prefetch_step<W: Walk>(walk: &W, ctx: &Ctx, tables: &ProposalTables, w: &Walker<W::State>, reads_bound: bool) {
    if !tables.has_label_term() {
        return;
    }
    let mut tb = TermBounds::default();
    walk.term_bounds(ctx, w, &mut tb);
    for p in tables.step_addresses(w.cur, tb.label).into_iter().flatten() {
        crate::engine::prefetch(p);
    }
    let k = ctx.stats.label_k;
    if reads_bound && tb.label < k && !ctx.stats.labels.is_empty() {
        crate::engine::prefetch(ctx.stats.labels.as_ptr().wrapping_add(w.cur as usize * k as usize + tb.label as usize));
    }
}

/// What [`start`] decided.
pub(crate) enum Start {
    /// The step takes another sampler.
    Skip,
    /// Every weight of the step is 0 (each is at most its envelope, which is 0 here).
    DeadEnd,
    /// The step draws from the tables with these terms.
    Use(StepTerms),
}

/// The start of `w`'s step on its row of `d` edges under `mode` and `cost`: `plain_mass` is
/// `d·B` (plain eRJS's expected trials times the weights' sum; infinite without a finite
/// bound), `estimate` the step's `Ŝ` once computed (computed here if needed, and kept).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn start<W: Walk>(
    walk: &W,
    ctx: &Ctx,
    tables: &ProposalTables,
    mode: SamplerMode,
    cost: &CostModel,
    w: &Walker<W::State>,
    d: usize,
    plain_mass: f64,
    estimate: &mut Option<f32>,
) -> Start {
    let mut sum_estimate = || *estimate.get_or_insert_with(|| walk.sum_estimate(ctx, w));
    // Without a `has_edge(prev, dst)` term Ŝ is a fair estimate (its only guesses halve
    // unknown branches): where plain eRJS needs at most a structured trial's cost in trials
    // (structured needs one at the least) it wins, and the terms are not even computed.
    // An exact plan over a part of the row, or an exact has_edge(prev, dst) mixture, is always
    // taken (on the GPU too): its candidates are taken untested
    // (`wayfarer_core::plan::always_structured`).
    let always = mode == SamplerMode::Structured || (mode == SamplerMode::Adaptive && tables.always_structured());
    let consider = tables.coverage.covers(d)
        && (always || tables.has_prev_neighbor_term() || plain_mass > tables.trial_cost() * sum_estimate() as f64);
    if !consider {
        return Start::Skip;
    }
    let mut tb = TermBounds::default();
    walk.term_bounds(ctx, w, &mut tb);
    // The rule below needs c·M <= d·B: a floor under M that already exceeds it decides the
    // step for plain eRJS before the other terms (a search of prev's row, say) are computed.
    if !always && tables.trial_cost() * tables.mass_floor(w.cur, d, &tb) > plain_mass {
        return Start::Skip;
    }
    let factor = |i: usize, e: usize| walk.term_static(ctx, i, e);
    let Some(terms) = tables.step(ctx.graph, w.cur, w.prev, &tb, factor) else { return Start::Skip };
    if !(terms.total > 0.0) {
        return Start::DeadEnd;
    }
    let use_it = always || {
        let s_hat = sum_estimate().max(f32::MIN_POSITIVE) as f64;
        let r = cost.ratio_for(d);
        // Against plain eRJS the weights' sum cancels: only the masses are compared, which
        // are exact.
        let structured = tables.trial_cost() * terms.total;
        structured <= plain_mass && r * structured / s_hat <= d as f64 + cost.fixed
    };
    if use_it { Start::Use(terms) } else { Start::Skip }
}

/// A trial's candidate, not yet read.
pub(crate) enum Candidate {
    /// The edge (to prefetch, then [`accept`] or not).
    Edge(usize),
    /// The table entry that names the edge (to prefetch, then `ProposalTables::resolve`).
    Entry(PendingEntry),
}

/// The step's next trial after `done`: its candidate and its number, drawing again while the
/// mixture misses, or `None` once `cap` trials are spent (the caller finishes by eRVS).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn draw<W: Walk>(
    walk: &W,
    ctx: &Ctx,
    tables: &ProposalTables,
    terms: &StepTerms,
    w: &Walker<W::State>,
    rng: &mut StepRng,
    done: u32,
    cap: u32,
) -> Option<(Candidate, u32)> {
    let factor = |i: usize, e: usize| walk.term_static(ctx, i, e);
    let mut t = done;
    while t < cap {
        t += 1;
        match tables.draw(ctx.graph, w.cur, terms, rng, factor) {
            Draw::Missed => continue,
            Draw::Edge(e) => return Some((Candidate::Edge(e), t)),
            Draw::Entry(p) => return Some((Candidate::Entry(p), t)),
        }
    }
    None
}

/// Whether candidate edge `e` (of the row from `base`) is accepted, with probability
/// `w(e) / E(e)`: one uniform from the step's stream, or none when the plan is exact
/// ([`ProposalTables::accepts_untested`]: the envelope is the weight). A weight that is negative, NaN,
/// infinite or over its envelope is an error naming the edge.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn accept<W: Walk>(
    walk: &W,
    ctx: &Ctx,
    tables: &ProposalTables,
    terms: &StepTerms,
    w: &Walker<W::State>,
    base: usize,
    e: usize,
    rng: &mut StepRng,
) -> Result<bool, WalkError> {
    // An exact plan's envelope is the weight: nothing to test (no uniform is drawn).
    #[cfg(feature = "testing")]
    let untested = tables.accepts_untested() || crate::proposal::BROKEN_UNTESTED.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "testing"))]
    let untested = tables.accepts_untested();
    if untested {
        return Ok(true);
    }
    let g = ctx.graph;
    let factor = |i: usize, e: usize| walk.term_static(ctx, i, e);
    let err = |e, bound| crate::engine::to_walk_error(walk.name(), ctx, w, base, bound, e);
    let i = e - base;
    let u = rng.uniform();
    // The squeeze first (`ProposalTables::envelope_range`): most trials of a walk with a
    // `has_edge` condition are decided without searching.
    if let Some((lo, hi)) = walk.weight_envelope(ctx, w, e) {
        let (env_lo, env_hi) = tables.envelope_range(g, w.prev, terms, e, factor);
        if u * env_hi < lo as f64 && lo as f64 <= env_hi {
            return Ok(true);
        }
        if u * env_lo >= hi as f64 {
            return Ok(false);
        }
    }
    let env = tables.envelope(g, w.cur, w.prev, terms, e, factor);
    let x = walk.weight(ctx, w, e);
    if !(x >= 0.0) || x == f32::INFINITY {
        return Err(err(SampleError::BadWeight { index: i, weight: x }, f32::NAN));
    }
    if x as f64 > env {
        return Err(err(SampleError::BoundViolated { index: i, weight: x }, env as f32));
    }
    Ok(u * env < x as f64)
}
