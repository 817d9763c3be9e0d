//! The walk contract: what a walk program tells the engine.
//!
//! A walk is a weight function over candidate edges plus the facts the samplers need: a
//! bound `B >= max weight` for rejection sampling, an estimate `Ŝ` of the weight sum for the
//! cost model, and whether a weight can be zero. The `#[walk]` compiler generates these from
//! user code; the walks in [`crate::walks`] are written by hand against the same trait.
//!
//! Semantics, shared by every backend:
//! - A walker is at `cur`, came from `prev` ([`NO_NODE`] before its first move), started at
//!   `start`, and has made `step` moves.
//! - `weight` returns the unnormalised, finite, non-negative weight of moving along edge `e`
//!   (an index into the graph's edge arrays, inside `cur`'s row). The move is sampled with
//!   probability `weight(e) / Σ weight`. A weight of 0 means "never".
//! - If `cur` has no edges, or every weight is 0, the walk ends there (a dead end).
//! - After a move, `update` runs (it may change the walker, e.g. teleport it), then `stop`.

use crate::graph::{CsrGraph, NO_NODE};
use crate::rng::StepRng;
use rayon::prelude::*;
use wayfarer_core::ParamValue;

/// A walker's built-in state plus the program's own state `S`. `repr(C)` so that code
/// generated at run time (the Cranelift backend) can read it in place.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Walker<S> {
    /// The node the walk started from.
    pub start: u32,
    /// The current node.
    pub cur: u32,
    /// The previous node, or [`NO_NODE`] before the first move.
    pub prev: u32,
    /// The number of moves made so far.
    pub step: u32,
    /// The edge taken by the last move (`u64::MAX` before the first move).
    pub last_edge: u64,
    /// Program-defined state.
    pub state: S,
}

impl<S: Default> Walker<S> {
    /// A fresh walker at `start`.
    pub fn new(start: u32) -> Self {
        Walker { start, cur: start, prev: NO_NODE, step: 0, last_edge: u64::MAX, state: S::default() }
    }
}

/// A bound on the largest weight a walker can see this step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// Every candidate weight is at most this value.
    Max(f32),
    /// No bound is known: only reservoir sampling (eRVS) is exact.
    Unknown,
}

/// What [`Walk::step_estimates`] gives for one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepEstimates {
    /// [`Walk::bound`].
    pub bound: Bound,
    /// [`Walk::sum_estimate`].
    pub estimate: f32,
    /// [`Walk::dead_end`].
    pub dead_end: Option<bool>,
}

/// How often a walk's bound must be recomputed (reported by `explain`; the engine evaluates
/// `bound` every step either way, which costs nothing for a constant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundScope {
    /// One value for the whole run (reads only hyperparameters).
    PerKernel,
    /// Depends on the walker's state or per-node data.
    PerStep,
    /// No bound: reservoir only.
    None,
}

pub use wayfarer_core::Requirements;

/// Labels above this many get no per-label arrays (they would cost `n × k` floats twice).
pub const MAX_LABEL_STATS: u32 = 64;

/// The sum of a row's values as every backend computes it, so that per-node sums agree to the
/// bit: 32 partial sums in `f64` (partial `j` adds items `j, j + 32, …` in order, from +0),
/// combined pairwise as a warp's butterfly does (`p[j] += p[j + h]` for h = 16, 8, 4, 2, 1),
/// rounded once to `f32`. The GPU computes it with a warp per row. An empty row sums to +0.
pub fn row_sum(xs: impl IntoIterator<Item = f32>) -> f32 {
    let mut p = [0f64; 32];
    for (i, x) in xs.into_iter().enumerate() {
        p[i % 32] += x as f64;
    }
    let mut h = 16;
    while h > 0 {
        for j in 0..h {
            p[j] += p[j + h];
        }
        h /= 2;
    }
    p[0] as f32
}

/// The aggregates of one row's edges with one label. 16 bytes aligned to 16, so an entry never
/// straddles two cache lines.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LabelStat {
    /// Largest weight (1 unweighted; 0 without such edges).
    pub max: f32,
    /// Sum of weights (the count unweighted), in the summation order every backend uses.
    pub sum: f32,
    /// Number of edges.
    pub count: u32,
}

/// Per-node aggregates over each row, computed once per run.
#[derive(Debug, Default)]
pub struct NodeStats {
    /// Largest edge weight in each row (1 for unweighted graphs, 0 for empty rows).
    pub weight_max: Vec<f32>,
    /// Second-largest edge weight in each row, counting repeats (so it equals the max when
    /// two edges share it); 0 for rows with fewer than two edges.
    pub weight_second: Vec<f32>,
    /// Sum of edge weights in each row (the degree for unweighted graphs).
    pub weight_sum: Vec<f32>,
    /// Number of labels covered by the per-label arrays (0 if absent).
    pub label_k: u32,
    /// `labels[v * k + l]`: the aggregates of `v`'s edges with label `l`, side by side so
    /// that a step reads (and prefetches) one cache line for all three.
    pub labels: Vec<LabelStat>,
    /// Smallest edge weight in each row (0 for empty rows).
    pub weight_min: Vec<f32>,
    /// Largest out-degree among each row's destinations (0 for empty rows).
    pub neighbor_degree_max: Vec<u32>,
    /// Smallest out-degree among each row's destinations (0 for empty rows).
    pub neighbor_degree_min: Vec<u32>,
}

impl NodeStats {
    /// Computes what `req` asks for, in parallel. `weighted = false` treats every weight as 1.
    pub fn compute(g: &CsrGraph, req: Requirements, weighted: bool) -> Self {
        let mut s = NodeStats::default();
        let n = g.num_nodes();
        let w = if weighted { g.weights() } else { None };
        if req.weight_stats {
            let per_node: Vec<(f32, f32, f32)> = (0..n as u32)
                .into_par_iter()
                .map(|v| match w {
                    Some(w) => {
                        let row = &w[g.row(v)];
                        let (mut first, mut second) = (0f32, 0f32);
                        for &x in row {
                            if x > first {
                                second = first;
                                first = x;
                            } else if x > second {
                                second = x;
                            }
                        }
                        (first, second, row_sum(row.iter().copied()))
                    }
                    None => {
                        let d = g.degree(v);
                        ((d > 0) as u32 as f32, (d > 1) as u32 as f32, d as f32)
                    }
                })
                .collect();
            s.weight_min = (0..n as u32)
                .into_par_iter()
                .map(|v| match w {
                    Some(w) => w[g.row(v)].iter().copied().reduce(f32::min).unwrap_or(0.0),
                    None => (g.degree(v) > 0) as u32 as f32,
                })
                .collect();
            s.weight_max = per_node.iter().map(|x| x.0).collect();
            s.weight_second = per_node.iter().map(|x| x.1).collect();
            s.weight_sum = per_node.iter().map(|x| x.2).collect();
        }
        if req.label_stats
            && let Some(labels) = g.labels()
        {
            let k = g.num_labels();
            if k > 0 && k <= MAX_LABEL_STATS {
                let ku = k as usize;
                let mut stats = vec![LabelStat::default(); n * ku];
                stats.par_chunks_mut(ku).enumerate().for_each(|(v, sv)| {
                    let row = g.row(v as u32);
                    for e in row.clone() {
                        let h = w.map_or(1.0, |w| w[e]);
                        let l = &mut sv[labels[e] as usize];
                        l.max = l.max.max(h);
                        l.count += 1;
                    }
                    match w {
                        None => sv.iter_mut().for_each(|l| l.sum = l.count as f32),
                        // One pass per label, in the summation order every backend uses.
                        Some(w) => {
                            for (l, slot) in sv.iter_mut().enumerate() {
                                slot.sum = row_sum(row.clone().map(|e| if labels[e] as usize == l { w[e] } else { 0.0 }));
                            }
                        }
                    }
                });
                s.label_k = k;
                s.labels = stats;
            }
        }
        if req.neighbor_degree {
            let (mx, mn): (Vec<u32>, Vec<u32>) = (0..n as u32)
                .into_par_iter()
                .map(|v| {
                    let degs = g.neighbors(v).iter().map(|&u| g.degree(u).min(u32::MAX as u64) as u32);
                    let (mut hi, mut lo) = (0u32, u32::MAX);
                    for d in degs {
                        hi = hi.max(d);
                        lo = lo.min(d);
                    }
                    (hi, if g.degree(v) == 0 { 0 } else { lo })
                })
                .unzip();
            s.neighbor_degree_max = mx;
            s.neighbor_degree_min = mn;
        }
        s
    }
}

/// Calls `f` with a walk's weight of single edges, `weight(u, e)` for edge `e` of node `u`'s
/// row as seen by a walker standing on `u` at step 0 (what sampling policies and edge masks
/// are): the walk's checks, its per-node arrays and its prepared data set up once.
pub fn with_edge_weight<W: Walk, R>(
    g: &CsrGraph,
    walk: &W,
    f: impl FnOnce(&(dyn Fn(u32, usize) -> f32 + Sync)) -> R,
) -> Result<R, crate::WalkError> {
    walk.check(g)?;
    let stats = NodeStats::compute(g, walk.requirements(), walk.weighted());
    let base = Ctx::new(g, &stats);
    let prepared = walk.prepare(&base);
    let ctx = Ctx { prepared: prepared.as_ref(), ..base };
    Ok(f(&|u: u32, e: usize| walk.weight(&ctx, &Walker::new(u), e)))
}

/// What a walk's functions can see: the graph, the precomputed per-node arrays, and what
/// the walk itself prepared for this run ([`Walk::prepare`]).
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    /// The graph.
    pub graph: &'a CsrGraph,
    /// Precomputed per-node aggregates.
    pub stats: &'a NodeStats,
    /// What [`Walk::prepare`] returned for this graph and these arrays, if anything.
    pub prepared: Option<&'a Prepared>,
}

/// Per-run data of one walk ([`Walk::prepare`]), tagged with the walk's identity so that a
/// walk only ever reads its own.
pub struct Prepared {
    /// An id unique to the walk object that made it (e.g. from a global counter).
    pub owner: u64,
    /// The data.
    pub data: Box<dyn std::any::Any + Send + Sync>,
}

impl<'a> Ctx<'a> {
    /// A context with nothing prepared.
    pub fn new(graph: &'a CsrGraph, stats: &'a NodeStats) -> Self {
        Ctx { graph, stats, prepared: None }
    }
}

impl Ctx<'_> {
    /// The largest weight among the edges `cur -> prev` and their number (0, 0 if none, or
    /// if `prev` is [`NO_NODE`]); unweighted graphs count every weight as 1.
    #[inline]
    pub fn back_edges(&self, cur: u32, prev: u32, weighted: bool) -> (f32, u32) {
        let g = self.graph;
        if prev as usize >= g.num_nodes() {
            return (0.0, 0);
        }
        let (mut w, mut n) = (0f32, 0u32);
        if let Some(mut e) = g.find_edge(cur, prev) {
            let end = g.row(cur).end;
            while e < end && g.targets()[e] == prev {
                w = w.max(if weighted { g.weights().map_or(1.0, |x| x[e]) } else { 1.0 });
                n += 1;
                e += 1;
            }
        }
        (w, n)
    }

    /// `(max weight, weight sum, count)` of `cur`'s edges labelled `label`. Without per-label
    /// arrays (more than [`MAX_LABEL_STATS`] labels) this answers for the whole row: a sound
    /// upper bound on the max, and overestimates of the sum and count.
    #[inline]
    pub fn label_query(&self, cur: u32, label: u32) -> (f32, f32, u32) {
        let (v, k) = (cur as usize, self.stats.label_k);
        if k == 0 {
            return (self.stats.weight_max[v], self.stats.weight_sum[v], self.graph.degree(cur) as u32);
        }
        if label >= k {
            return (0.0, 0.0, 0);
        }
        let l = &self.stats.labels[v * k as usize + label as usize];
        (l.max, l.sum, l.count)
    }
}

/// The view of one candidate step that a `#[walk]` function receives: the walker's built-in
/// state, the candidate edge, and graph queries. The macro compiles the function through the
/// IR; this type lets the function itself also compile (and be called) as plain Rust.
#[derive(Clone, Copy)]
pub struct Step<'a> {
    ctx: Ctx<'a>,
    cur: u32,
    prev: u32,
    start: u32,
    step: u32,
    edge: usize,
}

impl<'a> Step<'a> {
    /// The step of `walker` along candidate edge `edge`.
    pub fn new<S>(ctx: Ctx<'a>, walker: &Walker<S>, edge: usize) -> Self {
        Step { ctx, cur: walker.cur, prev: walker.prev, start: walker.start, step: walker.step, edge }
    }
    /// The current node.
    pub fn cur(&self) -> u32 {
        self.cur
    }
    /// The previous node, or [`NO_NODE`] before the first move.
    pub fn prev(&self) -> u32 {
        self.prev
    }
    /// The start node.
    pub fn start(&self) -> u32 {
        self.start
    }
    /// Moves made so far.
    pub fn step(&self) -> u32 {
        self.step
    }
    /// The candidate edge's destination.
    pub fn dst(&self) -> u32 {
        self.ctx.graph.targets()[self.edge]
    }
    /// The candidate edge's weight (1 if the graph has none).
    pub fn weight(&self) -> f32 {
        self.ctx.graph.weights().map_or(1.0, |w| w[self.edge])
    }
    /// The candidate edge's label (0 if the graph has none).
    pub fn label(&self) -> u32 {
        self.ctx.graph.labels().map_or(0, |l| l[self.edge])
    }
    /// The candidate edge's index.
    pub fn edge(&self) -> u32 {
        self.edge as u32
    }
    /// The candidate edge's timestamp (0 if the graph has none).
    pub fn time(&self) -> f64 {
        self.ctx.graph.timestamps().map_or(0.0, |t| t[self.edge] as f64)
    }
    /// Whether the edge `u -> v` exists (false if either is not a node, e.g. [`NO_NODE`]).
    pub fn has_edge(&self, u: u32, v: u32) -> bool {
        let n = self.ctx.graph.num_nodes();
        (u as usize) < n && (v as usize) < n && self.ctx.graph.has_edge(u, v)
    }
    /// Node property `name` at node `v` (0 if the graph has no such property or `v` is not a
    /// node).
    pub fn node_prop(&self, name: &str, v: u32) -> f32 {
        self.ctx.graph.node_property(name).and_then(|p| p.get(v as usize).copied()).unwrap_or(0.0)
    }
    /// Moves the walker back to its start node, with no previous node (in a walk's `update`:
    /// a restart, as in personalized PageRank).
    pub fn restart(&mut self) {
        self.teleport(self.start);
    }
    /// Moves the walker to `v`, with no previous node (in a walk's `update`).
    pub fn teleport(&mut self, v: u32) {
        self.cur = v;
        self.prev = NO_NODE;
    }
    /// The out-degree of `v` (0 if `v` is not a node).
    pub fn degree(&self, v: u32) -> u32 {
        self.ctx.graph.walk_degree(v)
    }
}

/// A walk's `#[walk]` source text and its hyperparameter values as `name=value` text: what a
/// backend that compiles walks at run time (CUDA) needs. Floats are written so that they read
/// back to the same value; arrays as comma lists.
#[derive(Clone, Debug, PartialEq)]
pub struct WalkSource {
    /// The item, as the `#[walk]` macro saw it.
    pub source: &'static str,
    /// `(name, value)` per hyperparameter, in declaration order.
    pub params: Vec<(String, String)>,
}

/// A walk's params struct built from hyperparameter values in declaration order, and back:
/// how the library registry, the CLI and Python (which hold values, not structs) make the
/// native walk. `#[walk]` implements it. Arrays may be given short: the rest is zero.
pub trait FromParams: Sized {
    /// The struct from `values`; a value of another type than declared is an error.
    fn from_params(values: &[ParamValue]) -> Result<Self, crate::WalkError>;
    /// The values, in declaration order (arrays at their full length).
    fn to_params(&self) -> Vec<ParamValue>;
}

/// A walk program. See the [module docs](self) for the semantics every backend implements.
pub trait Walk: Sync {
    /// Per-walker program state.
    type State: Copy + Send + Sync + Default + std::fmt::Debug;

    /// The walk's name, for summaries and errors.
    fn name(&self) -> &str;

    /// Per-node arrays the walk reads from [`Ctx::stats`].
    fn requirements(&self) -> Requirements {
        Requirements::default()
    }

    /// Whether the walk reads edge weights (and the engine should use them).
    fn weighted(&self) -> bool {
        false
    }

    /// Checks that the graph has what the walk needs (labels, weights, …).
    fn check(&self, _graph: &CsrGraph) -> Result<(), crate::WalkError> {
        Ok(())
    }

    /// The step's `B`, `Ŝ` and dead-end verdict in one call, for walks that compute them
    /// together more cheaply than through [`Walk::bound`], [`Walk::sum_estimate`] and
    /// [`Walk::dead_end`] (a JIT-compiled walk: one call into its code instead of three).
    /// `None`: the engine calls those as it needs them.
    fn step_estimates(&self, _ctx: &Ctx, _walker: &Walker<Self::State>) -> Option<StepEstimates> {
        None
    }
    /// The step's `B`, `Ŝ` and dead-end verdict for every walker at `walker.cur` past its
    /// first move, when they depend on that node alone: `Some` only if computing them for
    /// `walker` (at `cur`, `step` 1) read nothing but `cur`, the node's arrays and the
    /// hyperparameters, with `step() == 0` taken as false. The values are then bit for bit
    /// [`Walk::bound`], [`Walk::sum_estimate`] and [`Walk::dead_end`] of any walker at `cur`
    /// with `step >= 1`, and the lock-step path tabulates them per node (`#[walk]` generates
    /// it; `None`, the default, leaves every step to compute its own).
    fn node_start(&self, _ctx: &Ctx, _walker: &Walker<Self::State>) -> Option<StepEstimates> {
        None
    }
    /// Data to compute once per run from the graph and arrays (a JIT-compiled walk keeps the
    /// raw-pointer image its machine code reads); the engine puts it in [`Ctx::prepared`].
    fn prepare(&self, _ctx: &Ctx) -> Option<Prepared> {
        None
    }
    /// Machine code for the engine's eRJS turns, if the walk has it (a walk compiled at run
    /// time does: see [`crate::turn::CompiledTurn`]); `ctx` is the run's context, with this
    /// walk's prepared data. The engine asks once per run, in adaptive and eRJS mode.
    fn compiled_turn(&self, _ctx: &Ctx) -> Option<crate::turn::CompiledTurn> {
        None
    }
    /// Initialises a walker's program state.
    fn init(&self, _ctx: &Ctx, _walker: &mut Walker<Self::State>, _rng: &mut StepRng) {}

    /// The weight of moving along edge `e` (inside `walker.cur`'s row).
    fn weight(&self, ctx: &Ctx, walker: &Walker<Self::State>, e: usize) -> f32;

    /// An optional cheap envelope `(lo, hi)` with `lo <= weight(e) <= hi` (exactly, in floating
    /// point). Rejection sampling uses it as a squeeze: a trial whose uniform level is below
    /// `lo` accepts, and one at or above `hi` rejects, without evaluating `weight` — which
    /// matters when `weight` is expensive (Node2Vec's adjacency test).
    #[inline(always)]
    fn weight_envelope(&self, _ctx: &Ctx, _walker: &Walker<Self::State>, _e: usize) -> Option<(f32, f32)> {
        None
    }

    /// A bound on every weight of this step.
    fn bound(&self, ctx: &Ctx, walker: &Walker<Self::State>) -> Bound;

    /// When the bound changes.
    fn bound_scope(&self) -> BoundScope;

    /// An estimate of the sum of this step's weights (for the cost model only; it never
    /// affects exactness).
    fn sum_estimate(&self, ctx: &Ctx, walker: &Walker<Self::State>) -> f32;

    /// Whether a weight can be 0 (so a step can be a dead end even with edges).
    fn possible_zero(&self) -> bool;

    /// Whether `weight(e)` depends only on the edge (and the hyperparameters), never on the
    /// walker: then the engine may precompute per-row prefix sums once and sample skewed rows
    /// by binary search instead of rejection or a full scan.
    fn static_weight(&self) -> bool {
        false
    }

    /// The walk's weight as a sum of structured terms, if the compiler found one (see
    /// [`crate::proposal`]): the engine then builds tables for their static factors and may
    /// propose from the terms instead of uniformly. Empty: no plan.
    fn proposal(&self) -> Vec<crate::proposal::TermPlan> {
        Vec::new()
    }

    /// Static factor `factor` of the plan at edge `e`: depends only on the edge.
    fn term_static(&self, _ctx: &Ctx, _factor: usize, _e: usize) -> f32 {
        1.0
    }

    /// The plan's per-step bounds `R_k` and label for `walker` (every weight of the step is
    /// at most the envelope they give).
    fn term_bounds(&self, _ctx: &Ctx, _walker: &Walker<Self::State>, _out: &mut crate::proposal::TermBounds) {}

    /// An exact, cheap dead-end test if the walk has one: `Some(true)` if every weight of this
    /// step is 0. `None` means "unknown": the samplers find out themselves.
    fn dead_end(&self, _ctx: &Ctx, _walker: &Walker<Self::State>) -> Option<bool> {
        None
    }

    /// Whether [`Walk::update`] or [`Walk::stop`] does anything: when neither does, the
    /// engine skips seeding their random stream (a walk whose hooks are opaque calls, like a
    /// run-time compiled one, says so here; for a walk compiled with the crate the default
    /// no-ops are inlined away either way).
    fn has_move_hooks(&self) -> bool {
        true
    }

    /// Runs after each move (the built-in fields are already advanced).
    fn update(&self, _ctx: &Ctx, _walker: &mut Walker<Self::State>, _rng: &mut StepRng) {}

    /// Whether the walk stops after this move, before reaching its length.
    fn stop(&self, _ctx: &Ctx, _walker: &Walker<Self::State>, _rng: &mut StepRng) -> bool {
        false
    }

    /// The walk's `#[walk]` source with its parameter values, if it has one (walks written
    /// by hand do not): what lets the GPU backend compile and run it.
    fn source(&self) -> Option<WalkSource> {
        None
    }

    /// A hash of the walk's program and parameter values: what caches of measurements on this
    /// walk are keyed by, so an edited program or another parameter value never reuses an old
    /// entry. The default hashes the name, the `#[walk]` source and its parameter values, and
    /// the weightedness; a walk without a source must override it with its parameters.
    fn fingerprint(&self) -> u64 {
        let mut h = crate::hash::Fnv64::default();
        h.write(self.name().as_bytes()).write(&[self.weighted() as u8]);
        if let Some(src) = self.source() {
            h.write(src.source.as_bytes());
            for (k, v) in &src.params {
                h.write(k.as_bytes()).write(v.as_bytes());
            }
        }
        h.finish()
    }
}
