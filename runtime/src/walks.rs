//! Hand-written reference walks: DeepWalk, Node2Vec, MetaPath and second-order PageRank.
//!
//! These follow the exact transition weights of FlexiWalker's workloads (see
//! `../shared/reference/flexiwalker-flowwalker.md` §2), each with its bound `B` and sum
//! estimate `Ŝ`. They are the references the `#[walk]` compiler's output must match.
//! Where a walk reads `h` (the edge weight), an unweighted run uses `h = 1`.

use crate::error::WalkError;
use crate::graph::{CsrGraph, NO_NODE};
use crate::walk::{Bound, BoundScope, Ctx, MAX_LABEL_STATS, Requirements, Walk, Walker};

/// Whether a walk reads the graph's edge weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weighting {
    /// Use the graph's edge weights `h`.
    Weighted,
    /// Treat every edge weight as 1.
    Unweighted,
}

impl Weighting {
    /// `Weighted` if the graph has weights and the user did not ask otherwise.
    pub fn for_graph(g: &CsrGraph, unweighted: bool) -> Self {
        if g.weights().is_some() && !unweighted { Weighting::Weighted } else { Weighting::Unweighted }
    }
}

#[inline(always)]
fn h(ctx: &Ctx, weighting: Weighting, e: usize) -> f32 {
    match weighting {
        Weighting::Weighted => ctx.graph.weights().map_or(1.0, |w| w[e]),
        Weighting::Unweighted => 1.0,
    }
}

fn check_weights(name: &str, weighting: Weighting, g: &CsrGraph) -> Result<(), WalkError> {
    if weighting == Weighting::Weighted && g.weights().is_none() {
        return Err(WalkError::MissingGraphData { walk: name.into(), what: "edge weights".into() });
    }
    Ok(())
}

/// DeepWalk: `w = h` (uniform when unweighted).
#[derive(Clone, Debug)]
pub struct DeepWalk {
    /// Weighted or not.
    pub weighting: Weighting,
}

impl Walk for DeepWalk {
    fn fingerprint(&self) -> u64 {
        crate::hash::fnv64(&[format!("{self:?}").as_bytes()])
    }
    type State = ();
    fn name(&self) -> &str {
        "deepwalk"
    }
    fn requirements(&self) -> Requirements {
        Requirements { weight_stats: true, ..Default::default() }
    }
    fn weighted(&self) -> bool {
        self.weighting == Weighting::Weighted
    }
    fn check(&self, g: &CsrGraph) -> Result<(), WalkError> {
        check_weights(self.name(), self.weighting, g)
    }
    #[inline(always)]
    fn weight(&self, ctx: &Ctx, _w: &Walker<()>, e: usize) -> f32 {
        h(ctx, self.weighting, e)
    }
    fn static_weight(&self) -> bool {
        true
    }
    #[inline(always)]
    fn bound(&self, ctx: &Ctx, w: &Walker<()>) -> Bound {
        Bound::Max(ctx.stats.weight_max[w.cur as usize])
    }
    fn bound_scope(&self) -> BoundScope {
        match self.weighting {
            Weighting::Weighted => BoundScope::PerStep,
            Weighting::Unweighted => BoundScope::PerKernel,
        }
    }
    #[inline(always)]
    fn sum_estimate(&self, ctx: &Ctx, w: &Walker<()>) -> f32 {
        ctx.stats.weight_sum[w.cur as usize]
    }
    fn possible_zero(&self) -> bool {
        self.weighting == Weighting::Weighted
    }
    #[inline(always)]
    fn dead_end(&self, ctx: &Ctx, w: &Walker<()>) -> Option<bool> {
        Some(ctx.stats.weight_sum[w.cur as usize] <= 0.0)
    }
}

/// Node2Vec: `a` is the return parameter p, `b` the in-out parameter q.
///
/// First move: `h`. Then, for a candidate `u` with previous node `t`: `h/a` if `u == t`,
/// `h` if `u` is adjacent to `t`, else `h/b`.
#[derive(Clone, Debug)]
pub struct Node2vec {
    /// Return parameter p (> 0).
    pub a: f32,
    /// In-out parameter q (> 0).
    pub b: f32,
    /// Weighted or not.
    pub weighting: Weighting,
}

impl Node2vec {
    /// Validates the hyperparameters.
    pub fn new(a: f32, b: f32, weighting: Weighting) -> Result<Self, WalkError> {
        for (name, v) in [("a", a), ("b", b)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(WalkError::param(name, format!("{v} must be finite and > 0")));
            }
        }
        Ok(Node2vec { a, b, weighting })
    }
}

impl Node2vec {
    /// Whether knowing the weight of the way back can change the bound much: when the return
    /// branch can dominate (1/a large), or when the row's max may be the way back (a heavy
    /// edge that walkers go back and forth on, common with skewed weights).
    #[inline(always)]
    fn back_matters(&self, ctx: &Ctx, w: &Walker<()>) -> bool {
        let v = w.cur as usize;
        let hmax = ctx.stats.weight_max[v];
        hmax / self.a > hmax.max(hmax / self.b) || hmax > 1.25 * ctx.stats.weight_second[v]
    }

    /// The largest weight among the edges from `cur` back to `prev` (0 if there is none).
    #[inline(always)]
    fn back_weight(&self, ctx: &Ctx, w: &Walker<()>) -> f32 {
        ctx.back_edges(w.cur, w.prev, self.weighting == Weighting::Weighted).0
    }
}

impl Walk for Node2vec {
    fn fingerprint(&self) -> u64 {
        crate::hash::fnv64(&[format!("{self:?}").as_bytes()])
    }
    type State = ();
    fn name(&self) -> &str {
        "node2vec"
    }
    fn requirements(&self) -> Requirements {
        Requirements { weight_stats: true, edge_queries: true, ..Default::default() }
    }
    fn weighted(&self) -> bool {
        self.weighting == Weighting::Weighted
    }
    fn check(&self, g: &CsrGraph) -> Result<(), WalkError> {
        check_weights(self.name(), self.weighting, g)
    }
    #[inline(always)]
    fn weight(&self, ctx: &Ctx, w: &Walker<()>, e: usize) -> f32 {
        let hv = h(ctx, self.weighting, e);
        if w.prev == NO_NODE {
            return hv;
        }
        let u = ctx.graph.targets()[e];
        if u == w.prev {
            hv / self.a
        } else if ctx.graph.has_edge(w.prev, u) {
            hv
        } else {
            hv / self.b
        }
    }
    #[inline(always)]
    fn weight_envelope(&self, ctx: &Ctx, w: &Walker<()>, e: usize) -> Option<(f32, f32)> {
        if w.prev == NO_NODE {
            return None;
        }
        // The three branches scale the same h, computed as in `weight`, so the envelope
        // holds exactly and only the adjacency test is skipped. The back edge is known from
        // the target alone (the trial's edge is in cache): its weight is exact, and any other
        // edge's envelope leaves out 1/a, so a trial below both remaining values (half of
        // them at a = 2, b = 0.5, against a quarter) is taken without the test.
        let hv = h(ctx, self.weighting, e);
        if ctx.graph.targets()[e] == w.prev {
            let x = hv / self.a;
            return Some((x, x));
        }
        let (y, z) = (hv, hv / self.b);
        Some((y.min(z), y.max(z)))
    }
    #[inline(always)]
    fn bound(&self, ctx: &Ctx, w: &Walker<()>) -> Bound {
        let v = w.cur as usize;
        let hmax = ctx.stats.weight_max[v];
        if w.prev == NO_NODE {
            return Bound::Max(hmax);
        }
        // Same operations as `weight`: correctly rounded division is monotone, so the bound
        // holds bit for bit, not just in exact arithmetic.
        let others = hmax.max(hmax / self.b);
        if !self.back_matters(ctx, w) {
            return Bound::Max(others);
        }
        // The `u == prev` branch concerns known edges (the way back): they get their own
        // weight / a, and every other edge is bounded by the row max — or, when the way back
        // holds the max, by the second largest weight.
        let back = self.back_weight(ctx, w);
        let rest = if back >= hmax { ctx.stats.weight_second[v] } else { hmax };
        Bound::Max((back / self.a).max(rest).max(rest / self.b))
    }
    fn bound_scope(&self) -> BoundScope {
        BoundScope::PerStep
    }
    #[inline(always)]
    fn sum_estimate(&self, ctx: &Ctx, w: &Walker<()>) -> f32 {
        let s = ctx.stats.weight_sum[w.cur as usize];
        if w.prev == NO_NODE {
            return s;
        }
        // The way back is weighted 1/a; the others lie between "no common neighbours"
        // (scaled by 1/b) and "all common" (1): take the middle.
        let back = if self.back_matters(ctx, w) { self.back_weight(ctx, w) } else { 0.0 };
        back / self.a + (s - back).max(0.0) * (1.0 + 1.0 / self.b) * 0.5
    }
    fn possible_zero(&self) -> bool {
        self.weighting == Weighting::Weighted
    }
    #[inline(always)]
    fn dead_end(&self, ctx: &Ctx, w: &Walker<()>) -> Option<bool> {
        Some(ctx.stats.weight_sum[w.cur as usize] <= 0.0)
    }
}

/// MetaPath: at step `s` only edges labelled `schema[s mod len]` may be taken, with weight
/// `h` (1 unweighted). A node without such an edge ends the walk.
#[derive(Clone, Debug)]
pub struct MetaPath {
    /// The label sequence, repeated cyclically.
    pub schema: Vec<u32>,
    /// Weighted or not.
    pub weighting: Weighting,
}

impl MetaPath {
    /// Validates the schema.
    pub fn new(schema: Vec<u32>, weighting: Weighting) -> Result<Self, WalkError> {
        if schema.is_empty() {
            return Err(WalkError::param("schema", "must list at least one label, e.g. -p schema=0,1,2"));
        }
        Ok(MetaPath { schema, weighting })
    }

    #[inline(always)]
    fn wanted(&self, step: u32) -> u32 {
        self.schema[step as usize % self.schema.len()]
    }

    #[inline(always)]
    fn label_stat<'a>(&self, ctx: &'a Ctx, v: u32, step: u32) -> Option<(f32, f32)> {
        let k = ctx.stats.label_k;
        let l = self.wanted(step);
        if k == 0 {
            return None;
        }
        if l >= k {
            return Some((0.0, 0.0));
        }
        let i = v as usize * k as usize + l as usize;
        let s = &ctx.stats.labels[i];
        Some((s.max, s.sum))
    }
}

impl Walk for MetaPath {
    fn fingerprint(&self) -> u64 {
        crate::hash::fnv64(&[format!("{self:?}").as_bytes()])
    }
    type State = ();
    fn name(&self) -> &str {
        "metapath"
    }
    fn requirements(&self) -> Requirements {
        Requirements { weight_stats: true, label_stats: true, ..Default::default() }
    }
    fn weighted(&self) -> bool {
        self.weighting == Weighting::Weighted
    }
    fn check(&self, g: &CsrGraph) -> Result<(), WalkError> {
        check_weights(self.name(), self.weighting, g)?;
        if g.labels().is_none() {
            return Err(WalkError::MissingGraphData {
                walk: "metapath".into(),
                what: "edge labels (convert with --label-col, or gen with --labels K)".into(),
            });
        }
        Ok(())
    }
    #[inline(always)]
    fn weight(&self, ctx: &Ctx, w: &Walker<()>, e: usize) -> f32 {
        if ctx.graph.labels().unwrap()[e] == self.wanted(w.step) { h(ctx, self.weighting, e) } else { 0.0 }
    }
    #[inline(always)]
    fn bound(&self, ctx: &Ctx, w: &Walker<()>) -> Bound {
        match self.label_stat(ctx, w.cur, w.step) {
            Some((max, _)) => Bound::Max(max),
            None => Bound::Max(ctx.stats.weight_max[w.cur as usize]),
        }
    }
    fn bound_scope(&self) -> BoundScope {
        BoundScope::PerStep
    }
    #[inline(always)]
    fn sum_estimate(&self, ctx: &Ctx, w: &Walker<()>) -> f32 {
        match self.label_stat(ctx, w.cur, w.step) {
            Some((_, sum)) => sum,
            // Without per-label arrays (more than MAX_LABEL_STATS labels), assume labels are
            // spread evenly.
            None => ctx.stats.weight_sum[w.cur as usize] / ctx.graph.num_labels().clamp(1, u32::MAX) as f32,
        }
    }
    fn possible_zero(&self) -> bool {
        true
    }
    #[inline(always)]
    fn dead_end(&self, ctx: &Ctx, w: &Walker<()>) -> Option<bool> {
        self.label_stat(ctx, w.cur, w.step).map(|(_, sum)| sum <= 0.0)
    }
}

const _: () = assert!(MAX_LABEL_STATS <= 64);

/// Second-order PageRank (Wu et al., KDD'16) with parameter `gamma` (FlexiWalker's α):
/// `w(u) = (1-γ)·h(v,u)/H(v) + γ·h(t,u)/H(t)·[u ∈ N(t)]`, with `H` the row weight sum
/// (the degree, unweighted), `v` the current and `t` the previous node. First move: `h`.
#[derive(Clone, Debug)]
pub struct Ppr2 {
    /// Weight of the second-order term, in [0, 1].
    pub gamma: f32,
    /// Weighted or not.
    pub weighting: Weighting,
}

impl Ppr2 {
    /// Validates `gamma`.
    pub fn new(gamma: f32, weighting: Weighting) -> Result<Self, WalkError> {
        if !(0.0..=1.0).contains(&gamma) {
            return Err(WalkError::param("gamma", format!("{gamma} must be in [0, 1]")));
        }
        Ok(Ppr2 { gamma, weighting })
    }
}

#[inline(always)]
fn ratio(x: f32, sum: f32) -> f32 {
    if sum > 0.0 { x / sum } else { 0.0 }
}

impl Walk for Ppr2 {
    fn fingerprint(&self) -> u64 {
        crate::hash::fnv64(&[format!("{self:?}").as_bytes()])
    }
    type State = ();
    fn name(&self) -> &str {
        "ppr2"
    }
    fn requirements(&self) -> Requirements {
        Requirements { weight_stats: true, edge_queries: true, ..Default::default() }
    }
    fn weighted(&self) -> bool {
        self.weighting == Weighting::Weighted
    }
    fn check(&self, g: &CsrGraph) -> Result<(), WalkError> {
        check_weights(self.name(), self.weighting, g)
    }
    #[inline(always)]
    fn weight(&self, ctx: &Ctx, w: &Walker<()>, e: usize) -> f32 {
        let hv = h(ctx, self.weighting, e);
        if w.prev == NO_NODE {
            return hv;
        }
        let s = &ctx.stats.weight_sum;
        let first = (1.0 - self.gamma) * ratio(hv, s[w.cur as usize]);
        let u = ctx.graph.targets()[e];
        let second = match self.weighting {
            // Unweighted, only adjacency matters.
            Weighting::Unweighted => {
                if ctx.graph.has_edge(w.prev, u) {
                    self.gamma * ratio(1.0, s[w.prev as usize])
                } else {
                    0.0
                }
            }
            Weighting::Weighted => match ctx.graph.find_edge(w.prev, u) {
                Some(f) => self.gamma * ratio(h(ctx, self.weighting, f), s[w.prev as usize]),
                None => 0.0,
            },
        };
        first + second
    }
    #[inline(always)]
    fn bound(&self, ctx: &Ctx, w: &Walker<()>) -> Bound {
        let (mx, s) = (&ctx.stats.weight_max, &ctx.stats.weight_sum);
        let v = w.cur as usize;
        if w.prev == NO_NODE {
            return Bound::Max(mx[v]);
        }
        let t = w.prev as usize;
        // The same operations as `weight` on larger inputs: rounding is monotone, so this
        // bounds the computed weights exactly.
        Bound::Max((1.0 - self.gamma) * ratio(mx[v], s[v]) + self.gamma * ratio(mx[t], s[t]))
    }
    #[inline(always)]
    fn weight_envelope(&self, ctx: &Ctx, w: &Walker<()>, e: usize) -> Option<(f32, f32)> {
        if w.prev == NO_NODE {
            return None;
        }
        // The first term is cheap; the second is 0 or at most γ·max(h over t's row)/H(t),
        // with the same operations as `weight` and `bound`, so the envelope holds exactly.
        let (mx, s) = (&ctx.stats.weight_max, &ctx.stats.weight_sum);
        let first = (1.0 - self.gamma) * ratio(h(ctx, self.weighting, e), s[w.cur as usize]);
        let t = w.prev as usize;
        Some((first, first + self.gamma * ratio(mx[t], s[t])))
    }
    fn bound_scope(&self) -> BoundScope {
        BoundScope::PerStep
    }
    #[inline(always)]
    fn sum_estimate(&self, ctx: &Ctx, w: &Walker<()>) -> f32 {
        if w.prev == NO_NODE {
            return ctx.stats.weight_sum[w.cur as usize];
        }
        // The first term sums to 1-γ; the second to γ times the share of t's weight that
        // lands on common neighbours, unknown without an intersection: assume half.
        1.0 - 0.5 * self.gamma
    }
    fn possible_zero(&self) -> bool {
        true
    }
}
