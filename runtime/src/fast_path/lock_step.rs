//! The lock-step path: a walk without move hooks, under adaptive, eRJS or structured, whose
//! run has no prefix table, takes each step as the general path would (`Env::turn`: its
//! dead-end test, its bound, the structured arm when the run built structured-proposal tables
//! ([`crate::structured`], the same functions), the adaptive rule between eRJS and eRVS, eRJS
//! trials up to the cap, then eRVS), with the same draws, so the walks are the general path's.
//! What changes is the schedule: the walkers advance in lock step, the first Philox block of
//! sixteen step streams is computed at once, and none of the general path's per-turn dispatch
//! (compiled turns, phases, the table arm) runs. A structured trial whose candidate comes
//! from a table entry takes two rounds: the entry is prefetched in one and read in the next,
//! as the candidate's edge is before it is decided.

use super::node_starts::{NodeStarts, Opening, opening};
use super::{Chunk, IDLE_QUERY, first_blocks};
use crate::engine::{StepStart, prefetch, step_start};
use crate::error::WalkError;
use crate::proposal::{EntrySource, LabelStep, MIXTURE_INLINE_TRIALS, MixtureStep, PendingEntry, ProposalTables, StepTerms, TermBounds};
use crate::rng::{LANES, PhiloxLanes, Purpose, StepRng};
use crate::run::{SamplerMode, SamplerStats};
use crate::sampler;
use crate::structured::{self, Candidate};
use crate::walk::{Bound, Ctx, Walk, Walker};

/// Where a lane's step stands.
#[derive(Clone, Copy, PartialEq)]
enum Stage {
    /// No walker.
    Idle,
    /// Its next step starts this round.
    Start,
    /// Its eRJS trial's candidate is in flight.
    Trial,
    /// Its structured trial's table entry is in flight.
    Entry,
    /// Its structured trial's candidate edge is in flight.
    Edge,
}

/// One walker under way and its step's eRJS state.
struct Lane<S> {
    w: Walker<S>,
    rng: StepRng,
    query: u64,
    row: usize,
    len: u32,
    stage: Stage,
    /// The step's row.
    base: usize,
    d: usize,
    /// The pending trial: candidate `index` (an offset in the row under eRJS, the edge under
    /// structured) at level `level` under `bound` (eRJS), the `trials`th of at most `cap`
    /// (eRJS: 0 until the first rejection computes it).
    index: usize,
    level: f64,
    bound: f32,
    trials: u32,
    cap: u32,
    /// A structured step's terms, and its pending table entry.
    terms: StepTerms,
    entry: PendingEntry,
}

/// The walk, its graph and the run's settings, as every lane reads them.
struct Env<'a, W: Walk> {
    walk: &'a W,
    ctx: &'a Ctx<'a>,
    mode: SamplerMode,
    cost: &'a crate::cost::CostModel,
    tables: Option<&'a ProposalTables>,
    /// The tables when they serve every step's start inline ([`ProposalTables::label_step`]).
    label_steps: Option<&'a ProposalTables>,
    /// The tables when [`ProposalTables::mixture_step`] serves the walk's steps.
    mixture_steps: Option<&'a ProposalTables>,
    /// The nodes' openings past the first move, where they depend on the node alone (runs
    /// without structured-proposal tables only).
    node_starts: Option<&'a NodeStarts>,
}

impl<W: Walk> Env<'_, W> {
    /// The error of a bad weight (or one over `bound`) met on `l`'s row.
    fn err(&self, l: &Lane<W::State>, bound: f32, e: sampler::SampleError) -> WalkError {
        crate::engine::to_walk_error(self.walk.name(), self.ctx, &l.w, l.base, bound, e)
    }

    /// eRVS over `l`'s row, from where its stream stands.
    fn reservoir(&self, l: &mut Lane<W::State>) -> Result<Option<usize>, WalkError> {
        let (walk, ctx, base) = (self.walk, self.ctx, l.base);
        let w = &l.w;
        sampler::reservoir_jump(l.d, &mut l.rng, |i| walk.weight(ctx, w, base + i))
            .map_err(|e| crate::engine::to_walk_error(walk.name(), ctx, w, base, f32::NAN, e))
    }

    /// The start of `l`'s step (its stream's first block given): a dead end (`Ok(None)` with
    /// the stage left at `Start`... see the caller), an eRJS trial in flight, or an eRVS pick.
    fn start(&self, l: &mut Lane<W::State>, st: &mut SamplerStats) -> Result<Started, WalkError> {
        let g = self.ctx.graph;
        let row = g.row(l.w.cur);
        (l.base, l.d) = (row.start, row.len());
        if l.d == 0 {
            return Ok(Started::DeadEnd);
        }
        if let Some(starts) = self.node_starts
            && l.w.step != 0
            && let Some(o) = starts.get(l.w.cur)
        {
            return self.open(o, l, st);
        }
        // Where the structured arm is always taken (an exact plan over a part of the row, on a
        // row with tables), the step is the arm's whatever the bound and the estimate
        // (`structured::start` reads neither then): they are not computed.
        if let Some(tables) = self.label_steps {
            // One label term on tables over every row: the start and the first draw inline.
            let mut tb = TermBounds::default();
            self.walk.term_bounds(self.ctx, &l.w, &mut tb);
            match tables.label_step(l.w.cur, l.base, &tb, &mut l.rng) {
                LabelStep::Other => {}
                LabelStep::DeadEnd => return Ok(Started::DeadEnd),
                LabelStep::Drawn(terms, entry) => {
                    // The cap is computed at the first rejection (structured_decide): nearly
                    // every trial of an exact plan is accepted.
                    (l.terms, l.trials, l.cap, l.entry) = (terms, 1, 0, entry);
                    prefetch(tables.entry_address(&entry));
                    return Ok(Started::Pending(Stage::Entry));
                }
            }
        } else if let Some(tables) = self.mixture_steps {
            // An exact has_edge(prev, dst) mixture: the start and the trials up to the first
            // candidate inline; the candidate is taken untested once its edge is here.
            let mut tb = TermBounds::default();
            self.walk.term_bounds(self.ctx, &l.w, &mut tb);
            match tables.mixture_step(self.ctx.graph, l.w.prev, l.base, l.d, &tb, &mut l.rng) {
                MixtureStep::Other => {}
                MixtureStep::DeadEnd => return Ok(Started::DeadEnd),
                MixtureStep::Drawn(terms, e, trials) => {
                    (l.terms, l.trials, l.cap, l.index) = (terms, trials, 0, e);
                    self.prefetch_edge(e);
                    return Ok(Started::Pending(Stage::Edge));
                }
                MixtureStep::Missed(terms) => {
                    (l.terms, l.trials, l.cap) = (terms, MIXTURE_INLINE_TRIALS, self.cost.trial_cap(l.d));
                    return self.structured_next(tables, l, st);
                }
            }
        }
        if let Some(tables) = self.tables.filter(|t| {
            (self.mode == SamplerMode::Structured || self.mode == SamplerMode::Adaptive && t.always_structured()) && t.coverage.covers(l.d)
        }) {
            match structured::start(self.walk, self.ctx, tables, self.mode, self.cost, &l.w, l.d, f64::INFINITY, &mut None) {
                structured::Start::Skip => {}
                structured::Start::DeadEnd => return Ok(Started::DeadEnd),
                structured::Start::Use(terms) => {
                    (l.terms, l.trials, l.cap) = (terms, 0, self.cost.trial_cap(l.d));
                    return self.structured_next(tables, l, st);
                }
            }
        }
        let StepStart { dead_end, bound, mut estimate } = step_start(self.walk, self.ctx, &l.w, self.mode);
        if dead_end {
            return Ok(Started::DeadEnd);
        }
        if let Some(tables) = self.tables {
            // `d·B`: plain eRJS's expected trials times the weights' sum.
            let plain_mass = match bound {
                Bound::Max(b) if b.is_finite() => l.d as f64 * b as f64,
                _ => f64::INFINITY,
            };
            match structured::start(self.walk, self.ctx, tables, self.mode, self.cost, &l.w, l.d, plain_mass, &mut estimate) {
                structured::Start::Skip => {}
                structured::Start::DeadEnd => return Ok(Started::DeadEnd),
                structured::Start::Use(terms) => {
                    (l.terms, l.trials, l.cap) = (terms, 0, self.cost.trial_cap(l.d));
                    return self.structured_next(tables, l, st);
                }
            }
        }
        let o = opening(false, bound, l.d, self.mode, self.cost, || estimate.unwrap_or_else(|| self.walk.sum_estimate(self.ctx, &l.w)));
        self.open(o, l, st)
    }

    /// `start`'s most common case inline, without its call and result: a step past the first
    /// move whose node's tabulated opening is eRJS gets its first trial in flight (`true`);
    /// anything else (`false`) is left to `start`, which reaches the same opening for it.
    #[inline(always)]
    fn open_tabulated(&self, l: &mut Lane<W::State>) -> bool {
        let Some(starts) = self.node_starts else { return false };
        if l.w.step == 0 {
            return false;
        }
        // A row without edges is left to `start` (its dead end): `NodeStarts::get` answers for
        // rows with edges.
        let row = self.ctx.graph.row(l.w.cur);
        if row.is_empty() {
            return false;
        }
        let Some(Opening::Rejection(b)) = starts.get(l.w.cur) else { return false };
        (l.base, l.d) = (row.start, row.len());
        (l.bound, l.trials, l.cap) = (b, 0, 0);
        self.propose(l);
        true
    }

    /// `l`'s step started as `o` says: its first eRJS trial in flight, or an eRVS pick.
    #[inline(always)]
    fn open(&self, o: Opening, l: &mut Lane<W::State>, st: &mut SamplerStats) -> Result<Started, WalkError> {
        match o {
            Opening::Rejection(b) => {
                (l.bound, l.trials, l.cap) = (b, 0, 0);
                self.propose(l);
                Ok(Started::Pending(Stage::Trial))
            }
            Opening::DeadEnd => Ok(Started::DeadEnd),
            Opening::Reservoir => {
                st.reservoir_steps += 1;
                Ok(match self.reservoir(l)? {
                    Some(i) => Started::Picked(i),
                    None => Started::DeadEnd,
                })
            }
        }
    }

    /// `l`'s next structured trial: its candidate's entry or edge prefetched, or, once the cap
    /// is reached, the step finished by eRVS (as `engine::Env::structured_propose`).
    fn structured_next(&self, tables: &ProposalTables, l: &mut Lane<W::State>, st: &mut SamplerStats) -> Result<Started, WalkError> {
        match structured::draw(self.walk, self.ctx, tables, &l.terms, &l.w, &mut l.rng, l.trials, l.cap) {
            Some((Candidate::Edge(e), t)) => {
                (l.index, l.trials) = (e, t);
                self.prefetch_edge(e);
                Ok(Started::Pending(Stage::Edge))
            }
            Some((Candidate::Entry(p), t)) => {
                (l.entry, l.trials) = (p, t);
                prefetch(tables.entry_address(&p));
                Ok(Started::Pending(Stage::Entry))
            }
            None => {
                st.structured_trials += l.cap as u64;
                st.structured_fallbacks += 1;
                Ok(match self.reservoir(l)? {
                    Some(i) => Started::Picked(i),
                    None => Started::DeadEnd,
                })
            }
        }
    }

    /// Decides `l`'s pending structured trial: `Some(pick)` when the step is done, `None` when
    /// another trial is in flight (its stage set).
    fn structured_decide(
        &self,
        tables: &ProposalTables,
        l: &mut Lane<W::State>,
        st: &mut SamplerStats,
    ) -> Result<Option<Option<usize>>, WalkError> {
        if structured::accept(self.walk, self.ctx, tables, &l.terms, &l.w, l.base, l.index, &mut l.rng)? {
            st.structured_steps += 1;
            st.structured_trials += l.trials as u64;
            return Ok(Some(Some(l.index - l.base)));
        }
        if l.cap == 0 {
            l.cap = self.cost.trial_cap(l.d);
        }
        Ok(match self.structured_next(tables, l, st)? {
            Started::Pending(stage) => {
                l.stage = stage;
                None
            }
            Started::Picked(i) => Some(Some(i)),
            Started::DeadEnd => Some(None),
        })
    }

    /// `l`'s next eRJS trial: its candidate drawn and its edge data prefetched.
    #[inline(always)]
    fn propose(&self, l: &mut Lane<W::State>) {
        let (index, level) = sampler::rejection_propose(l.d, l.bound, &mut l.rng);
        (l.index, l.level) = (index, level);
        l.trials += 1;
        self.prefetch_edge(l.base + index);
    }

    /// Prefetches edge `e`'s target, weight and label.
    #[inline(always)]
    fn prefetch_edge(&self, e: usize) {
        crate::engine::prefetch_edge(self.ctx.graph, e);
    }

    /// Decides `l`'s pending trial: `Some(pick)` when the step is done (accepted, or finished
    /// by eRVS at the cap), `None` to try again next round.
    fn decide(&self, l: &mut Lane<W::State>, st: &mut SamplerStats) -> Result<Option<Option<usize>>, WalkError> {
        let (walk, ctx, base) = (self.walk, self.ctx, l.base);
        let w = &l.w;
        let accepted = sampler::rejection_decide(
            l.index,
            l.level,
            l.bound,
            |i| walk.weight_envelope(ctx, w, base + i),
            |i| walk.weight(ctx, w, base + i),
        )
        .map_err(|e| self.err(l, l.bound, e))?;
        if accepted {
            st.rejection_steps += 1;
            st.rejection_trials += l.trials as u64;
            return Ok(Some(Some(l.index)));
        }
        if l.cap == 0 {
            l.cap = self.cost.trial_cap(l.d);
        }
        if l.trials >= l.cap {
            // Out of trials: eRVS finishes the step, exactly (see `sampler::rejection`).
            st.rejection_trials += l.trials as u64;
            st.rejection_fallbacks += 1;
            return self.reservoir(l).map(Some);
        }
        Ok(None)
    }
}

/// What a step's start (or a structured trial's draw) came to.
enum Started {
    DeadEnd,
    /// A trial in flight, at this stage.
    Pending(Stage),
    Picked(usize),
}

/// [`super::run_chunk`] on the lock-step path (see the module docs), with the run's
/// structured-proposal tables if it built them.
pub(super) fn lock_step<W: Walk>(
    tables: Option<&ProposalTables>,
    node_starts: Option<&NodeStarts>,
    chunk: &Chunk<W>,
    out: &mut [u32],
    lens: &mut [u32],
    edges: &mut [u64],
) -> Result<SamplerStats, WalkError> {
    let label_steps = tables.filter(|t| matches!(chunk.mode, SamplerMode::Adaptive | SamplerMode::Structured) && t.serves_label_steps());
    let mixture_steps =
        tables.filter(|t| matches!(chunk.mode, SamplerMode::Adaptive | SamplerMode::Structured) && t.serves_mixture_steps());
    let env = Env { walk: chunk.walk, ctx: chunk.ctx, mode: chunk.mode, cost: chunk.cost, tables, label_steps, mixture_steps, node_starts };
    let (cfg, seed) = (chunk.cfg, chunk.seed);
    let g = chunk.ctx.graph;
    let (offsets, targets) = (g.offsets(), g.targets());
    let edge_queries = chunk.walk.requirements().edge_queries;
    let stride = cfg.length as usize + 1;
    let philox = PhiloxLanes::new(seed);
    let width = cfg.lock_step_interleave(tables.is_some());
    let mut lanes: Vec<Lane<W::State>> = Vec::with_capacity(width.div_ceil(LANES) * LANES);
    let mut st = SamplerStats::default();
    let mut next = 0usize;
    // The next walker into `lane`, if any is left.
    let admit = |lane: &mut Lane<W::State>, next: &mut usize, out: &mut [u32], lens: &mut [u32]| -> bool {
        match chunk.next_walker(next, out, lens, &mut lane.w) {
            Some((query, row)) => {
                if let Some(t) = tables {
                    structured::prefetch_step(chunk.walk, chunk.ctx, t, &lane.w, label_steps.is_none());
                }
                (lane.query, lane.row, lane.len, lane.stage) = (query, row, 1, Stage::Start);
                true
            }
            None => {
                lane.stage = Stage::Idle;
                false
            }
        }
    };
    let mut active = 0;
    for i in 0..width.div_ceil(LANES) * LANES {
        lanes.push(Lane::idle());
        if i < width {
            active += admit(&mut lanes[i], &mut next, out, lens) as usize;
        }
    }
    while active > 0 {
        // Start steps (sixteen streams' first blocks at once) or propose the next trials.
        for group in lanes.chunks_mut(LANES) {
            let blocks =
                first_blocks(&philox, group.iter().map(|l| if l.stage == Stage::Start { (l.query, l.w.step) } else { IDLE_QUERY }));
            for (l, lane) in group.iter_mut().enumerate() {
                match lane.stage {
                    Stage::Idle | Stage::Edge => {}
                    Stage::Trial => env.propose(lane),
                    Stage::Entry => {
                        let t = tables.expect("structured trials only with tables");
                        lane.index = t.resolve(&lane.entry, lane.base);
                        env.prefetch_edge(lane.index);
                        lane.stage = Stage::Edge;
                    }
                    Stage::Start => {
                        let block = [blocks[0][l], blocks[1][l], blocks[2][l], blocks[3][l]];
                        lane.rng = StepRng::with_first_block(seed, lane.query, lane.w.step, Purpose::Sample, block);
                        if env.open_tabulated(lane) {
                            lane.stage = Stage::Trial;
                            continue;
                        }
                        match env.start(lane, &mut st)? {
                            Started::Pending(stage) => lane.stage = stage,
                            Started::DeadEnd => {
                                st.dead_ends += 1;
                                lens[lane.row] = lane.len;
                                active -= !admit(lane, &mut next, out, lens) as usize;
                            }
                            Started::Picked(i) => {
                                if advance(&env, lane, lane.base + i, targets, (out, &mut *edges), stride, cfg.length, offsets) {
                                    lens[lane.row] = lane.len;
                                    active -= !admit(lane, &mut next, out, lens) as usize;
                                }
                            }
                        }
                    }
                }
            }
        }
        // Walks that ask has_edge mostly ask has_edge(prev, candidate): its filter word is
        // fetched for every lane before any lane decides, so the lanes' misses overlap.
        if edge_queries {
            for lane in lanes.iter().filter(|l| l.w.prev != crate::NO_NODE) {
                match lane.stage {
                    Stage::Trial => env.ctx.graph.prefetch_has_edge(lane.w.prev, targets[lane.base + lane.index]),
                    Stage::Edge => env.ctx.graph.prefetch_has_edge(lane.w.prev, targets[lane.index]),
                    _ => {}
                }
            }
        }
        // Decide the trials in flight.
        for lane in lanes.iter_mut().filter(|l| matches!(l.stage, Stage::Trial | Stage::Edge)) {
            let decided = match lane.stage {
                Stage::Trial => env.decide(lane, &mut st)?,
                _ => env.structured_decide(tables.expect("structured trials only with tables"), lane, &mut st)?,
            };
            let Some(picked) = decided else { continue };
            lane.stage = Stage::Start;
            let ended = match picked {
                Some(i) => advance(&env, lane, lane.base + i, targets, (out, &mut *edges), stride, cfg.length, offsets),
                None => {
                    st.dead_ends += 1;
                    true
                }
            };
            if ended {
                lens[lane.row] = lane.len;
                active -= !admit(lane, &mut next, out, lens) as usize;
            }
        }
    }
    Ok(st)
}

/// Moves `lane` along edge `e` and writes its node (and the edge, when `edges` is not empty);
/// whether its walk has reached its length.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn advance<W: Walk>(
    env: &Env<W>,
    lane: &mut Lane<W::State>,
    e: usize,
    targets: &[u32],
    (out, edges): (&mut [u32], &mut [u64]),
    stride: usize,
    length: u32,
    offsets: &[u64],
) -> bool {
    let w = &mut lane.w;
    w.prev = w.cur;
    let at = lane.row * stride + lane.len as usize;
    debug_assert!(e < targets.len() && at < out.len());
    // SAFETY: `e` is an edge of the walker's row (`base + index`, index below its length),
    // and rows lie within the targets (`CsrGraph`'s invariant); `at` is a slot of this lane's
    // output row (`len <= length < stride`), a row of `out`.
    w.cur = unsafe { *targets.get_unchecked(e) };
    w.last_edge = e as u64;
    w.step += 1;
    unsafe { *out.get_unchecked_mut(at) = w.cur };
    // These walks have no move hooks: every move is by its edge.
    if !edges.is_empty() {
        edges[lane.row * (stride - 1) + lane.len as usize - 1] = e as u64;
    }
    lane.len += 1;
    let ended = w.step >= length;
    if !ended {
        prefetch(offsets.as_ptr().wrapping_add(w.cur as usize));
        if let Some(starts) = env.node_starts {
            starts.prefetch(w.cur);
        }
        if let Some(t) = env.tables {
            structured::prefetch_step(env.walk, env.ctx, t, w, env.label_steps.is_none());
        }
    }
    ended
}

impl<S: Default> Lane<S> {
    fn idle() -> Self {
        Lane {
            w: Walker::new(0),
            rng: StepRng::new(0, 0, 0, Purpose::Sample),
            query: 0,
            row: 0,
            len: 0,
            stage: Stage::Idle,
            base: 0,
            d: 0,
            index: 0,
            level: 0.0,
            bound: 0.0,
            trials: 0,
            cap: 0,
            terms: StepTerms::EMPTY,
            entry: PendingEntry { at: 0, word: 0, source: EntrySource::Order },
        }
    }
}
