//! Structured proposals: rejection sampling whose proposal follows the weight's structure.
//!
//! The compiler writes a walk's weight as a sum of terms `w(e) ≤ Σ_k R_k · s_k(e) · [c_k(e)]`
//! ([`TermPlan`]): `s_k` a static factor that depends only on the edge (1, the edge's weight,
//! the target's degree, …), `R_k` a bound on the rest that the walk computes per step
//! ([`crate::Walk::term_bounds`]), and `c_k` a condition the engine can enumerate: every edge of the
//! row, the edges with label `L`, the edges back to `prev`, or the edges to neighbours of
//! `prev` ([`TermCond`]). That right-hand side is the *envelope* `E(e)`. A trial picks term `k`
//! with probability `M_k / M` (`M_k = R_k · Σ_{c_k} s_k`, `M = Σ M_k`), draws an edge from term
//! `k`'s proposal (an alias table of `s_k` over the row or the label's segment, the edges back,
//! or a uniform edge of `prev`'s row looked up in `cur`'s), and accepts it with probability
//! `w(e) / E(e)`. Each edge is then proposed with probability `E(e) / M`, so accepted edges
//! follow `w` exactly; the expected number of trials is `M / Σ w`. For Node2Vec over an alias
//! table of `h` that is at most `max / min` of its three factors whatever the weights; for
//! second-order PageRank at most `1 / (1 − γ)` on simple graphs.
//!
//! Exactness rests on `E(e) ≥ w(e)`. The compiler derives the `R_k` with the same interval
//! arithmetic as eRJS's bound, but `E` multiplies where the weight divides, so the engine
//! widens `E` by a factor `1 + 2^-16` (far more than the rounding of any weight expression)
//! and stops the run with an error if a weight still exceeds it: never a biased walk.
//! Multi-edges are exact too: the proposal through `prev`'s row lands on edge `e` with
//! probability `c_prev(x) / (d_prev · m_cur(x))` (`x = dst(e)`, `c` and `m` the counts of `x` in
//! the two rows), and its envelope is `R_k · K · c_prev(x) / m_cur(x)` with `K` the graph's
//! largest multiplicity, which is at least `R_k` wherever the condition holds.

use crate::graph::CsrGraph;
use crate::rng::StepRng;
use rayon::prelude::*;

/// The most terms a walk's plan may have.
pub const MAX_TERMS: usize = 4;

pub use wayfarer_core::plan::{StaticFactor, TermCond, TermPlan};

/// What a walk computes per step for its plan ([`crate::Walk::term_bounds`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TermBounds {
    /// `R_k`: term `k`'s non-static part is at most this on the edges it concerns.
    pub bound: [f32; MAX_TERMS],
    /// The label of the [`TermCond::Label`] terms this step.
    pub label: u32,
}

/// Vose's alias tables over consecutive segments of one edge order, one entry per slot:
/// `[threshold, keep, alias]`, the last two as edge offsets within the row. A draw takes one
/// bounded integer (the slot) and one 32-bit word (kept iff below the threshold): one cache
/// line gives the edge.
struct AliasTable {
    entries: Vec<[u32; 3]>,
}

/// A static factor's values along a segment, as an alias table plus each segment's sum.
pub(crate) fn build_alias(values: &[f64], prob: &mut [f64], alias: &mut [u32], small: &mut Vec<u32>, large: &mut Vec<u32>) -> f64 {
    let d = values.len();
    let total: f64 = values.iter().sum();
    small.clear();
    large.clear();
    if d == 0 {
        return 0.0;
    }
    if !(total > 0.0) {
        // Never proposed from (its mass is 0); any valid table will do.
        prob.fill(1.0);
        for (i, a) in alias.iter_mut().enumerate() {
            *a = i as u32;
        }
        return total;
    }
    let scale = d as f64 / total;
    for (i, &v) in values.iter().enumerate() {
        prob[i] = v * scale;
        alias[i] = i as u32;
        if prob[i] < 1.0 { small.push(i as u32) } else { large.push(i as u32) }
    }
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        alias[s as usize] = l;
        prob[l as usize] -= 1.0 - prob[s as usize];
        if prob[l as usize] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // What is left is 1 up to rounding.
    for &i in small.iter().chain(large.iter()) {
        prob[i as usize] = 1.0;
    }
    total
}

/// Per-(node, label) segments of every row: the row's edge offsets ordered by label (stable,
/// so by destination within a label); rows themselves stay sorted by destination.
struct LabelSegments {
    k: u32,
    /// Edge offsets within their row, in label order, at the row's position.
    order: Vec<u32>,
    /// `starts[v * (k + 1) + l]`: where label `l`'s segment of row `v` starts in `order`,
    /// relative to the row's start.
    starts: Vec<u32>,
}

/// A static factor's alias table over rows (or segments) plus the sums it samples from.
struct FactorTable {
    alias: AliasTable,
    /// Whether the factor is constant within every row (segment): then the alias entries are
    /// dropped and a uniform slot is drawn (an unweighted graph's `weight()`, say).
    flat: bool,
    /// Sum of the factor per row (`All`) or per (row, label) segment (`Label`).
    sums: Vec<f64>,
    /// Whether the factor is 1 on every edge (an unweighted graph's `weight()`): then a
    /// segment's sum is its length, which the CPU reads from the segment starts it reads
    /// anyway (one line less per step), exactly the same value.
    ones: bool,
}

/// Everything a run's structured proposals read, built once.
pub struct ProposalTables {
    terms: Vec<TermPlan>,
    /// Per static factor: its table over rows in row order.
    rows: Vec<Option<FactorTable>>,
    /// Per static factor: its table over label segments.
    segments: Vec<Option<FactorTable>>,
    labels: Option<LabelSegments>,
    /// The largest number of parallel edges between two nodes.
    multiplicity: u32,
    /// [`ProposalTables::accepts_untested`].
    untested: bool,
    /// [`ProposalTables::always_structured`].
    always: bool,
    /// Which rows have per-edge tables (the longest, within the budget), and the bytes held.
    pub coverage: TableCoverage,
    /// Where each row's per-edge slots start when only some rows have them (`v`'s at
    /// `row_at[v]`); `None`: every row has them, at its CSR offset.
    row_at: Option<Vec<u64>>,
}

/// Which rows the tables cover: the per-edge arrays (alias entries, label order) are built for
/// the longest rows first, as many as the memory budget allows; a step on a shorter row takes
/// the plain samplers (on short rows they cost little anyway).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TableCoverage {
    /// Rows with fewer edges have no per-edge tables; 0: every row has them.
    pub min_degree: u32,
    /// Edges in the rows with tables.
    pub edges: u64,
    /// Edges in all.
    pub total_edges: u64,
    /// Bytes the tables take.
    pub bytes: u64,
}

impl TableCoverage {
    /// Whether some rows with edges have no tables.
    pub fn is_partial(&self) -> bool {
        self.min_degree > 0
    }

    /// Whether a row of `d` edges has tables.
    #[inline(always)]
    pub fn covers(&self, d: usize) -> bool {
        d >= self.min_degree as usize
    }

    /// `", rows of degree >= 40 (63% of edges; …)"` for a partial cover, else empty.
    pub fn describe(&self) -> String {
        if self.is_partial() {
            format!(
                ", rows of degree >= {} ({:.0}% of edges; the walks depend on the table budget)",
                self.min_degree,
                100.0 * self.edges as f64 / self.total_edges.max(1) as f64
            )
        } else {
            String::new()
        }
    }
}

/// Why no tables were built for a plan.
#[derive(Clone, Debug, PartialEq)]
pub enum NoTables {
    /// The graph or the plan cannot use them (reason).
    Unsupported(String),
    /// They would take more memory than allowed.
    OverBudget {
        /// Bytes they would take.
        need: u64,
        /// The budget.
        budget: u64,
    },
}

impl std::fmt::Display for NoTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoTables::Unsupported(why) => f.write_str(why),
            NoTables::OverBudget { need, budget } => {
                write!(f, "its tables would take {} MiB, over the budget of {} MiB", need >> 20, budget >> 20)
            }
        }
    }
}

/// Whether [`ProposalTables::build`] may decline tables that would not pay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableNeed {
    /// The adaptive rule chooses per step: no tables where plain eRJS proposes nearly as well.
    WhereTheyPay,
    /// Structured proposals are forced (`--sampler structured`): build them whenever possible.
    Always,
}

/// A one-term plan whose static factor's row maximum is at most this many times the row's
/// mean on more than 99% of the edges builds no tables (see [`ProposalTables::build`]).
pub const EVEN_RATIO: f64 = 2.0;

/// Label counts above which no segments are built (`(k + 1)` offsets per node).
pub const MAX_SEGMENT_LABELS: u32 = 256;

impl ProposalTables {
    /// The bytes of `terms`' tables on `g` that do not depend on how many rows have per-edge
    /// arrays, and the bytes per edge of a row that has them.
    fn sizes(g: &CsrGraph, terms: &[TermPlan]) -> Result<(u64, u64), NoTables> {
        let n = g.num_nodes() as u64;
        let (mut dense, mut per_edge) = (0u64, 0u64);
        let needs_labels = terms.iter().any(|t| t.cond == TermCond::Label);
        // A scan of every label: once.
        let k = if needs_labels { g.num_labels() as u64 } else { 0 };
        if needs_labels {
            if g.labels().is_none() {
                return Err(NoTables::Unsupported("the graph has no edge labels".into()));
            }
            if k > MAX_SEGMENT_LABELS as u64 {
                return Err(NoTables::Unsupported(format!(
                    "the graph has {k} labels; label segments are built for at most {MAX_SEGMENT_LABELS}"
                )));
            }
            per_edge += 4;
            dense += 4 * n * (k + 1);
        }
        if g.offsets().windows(2).any(|w| w[1] - w[0] > u32::MAX as u64) {
            return Err(NoTables::Unsupported("a row has 2^32 edges or more".into()));
        }
        let mut seen = Vec::new();
        for t in terms {
            if let StaticFactor::Table(i) = t.factor
                && matches!(t.cond, TermCond::All | TermCond::Label)
            {
                let label = t.cond == TermCond::Label;
                if seen.contains(&(i, label)) {
                    continue;
                }
                seen.push((i, label));
                per_edge += 12;
                dense += 8 * if label { n * k } else { n };
            }
        }
        Ok((dense, per_edge))
    }

    /// Which rows get tables for `terms` on `g` within `budget` bytes: every row if they fit,
    /// else the longest rows (all rows of a degree or none), plus an index of where each
    /// row's arrays start. Too little memory for the longest row is [`NoTables::OverBudget`].
    pub fn coverage(g: &CsrGraph, terms: &[TermPlan], budget: u64) -> Result<TableCoverage, NoTables> {
        let (dense, per_edge) = Self::sizes(g, terms)?;
        let m = g.num_edges();
        let all = dense + per_edge * m;
        if all <= budget {
            return Ok(TableCoverage { min_degree: 0, edges: m, total_edges: m, bytes: all });
        }
        let over = Err(NoTables::OverBudget { need: all, budget });
        let index = 8 * (g.num_nodes() as u64 + 1);
        if per_edge == 0 || dense + index >= budget {
            return over;
        }
        let room = (budget - dense - index) / per_edge;
        let mut degrees: Vec<u32> = g.offsets().windows(2).map(|w| (w[1] - w[0]) as u32).filter(|&d| d > 0).collect();
        degrees.par_sort_unstable_by(|a, b| b.cmp(a));
        let (mut edges, mut min_degree, mut i) = (0u64, 0u32, 0usize);
        while i < degrees.len() {
            let d = degrees[i];
            let same = degrees[i..].partition_point(|&x| x == d);
            let more = d as u64 * same as u64;
            if edges + more > room {
                break;
            }
            edges += more;
            min_degree = d;
            i += same;
        }
        if min_degree == 0 {
            return over;
        }
        Ok(TableCoverage { min_degree, edges, total_edges: m, bytes: dense + index + per_edge * edges })
    }

    /// The budget under which [`ProposalTables::coverage`] gives per-edge tables to exactly the
    /// rows of at least `min_degree` edges (or to every row, where leaving the others out
    /// would save less than the index costs): to pin a cover in tests and benchmarks.
    pub fn budget_for_min_degree(g: &CsrGraph, terms: &[TermPlan], min_degree: u32) -> Result<u64, NoTables> {
        let (dense, per_edge) = Self::sizes(g, terms)?;
        let edges: u64 = g.offsets().windows(2).map(|w| w[1] - w[0]).filter(|&d| d >= min_degree.max(1) as u64).sum();
        Ok(dense + 8 * (g.num_nodes() as u64 + 1) + per_edge * edges)
    }

    /// Builds the tables for `terms` on `g` if they fit `budget` bytes, reading static factor
    /// `i` of edge `e` as `factor(i, e)` (every value checked: finite and `>= 0`, else
    /// `Err((i, e, value))`). The memory is checked before anything is allocated.
    pub fn build(
        g: &CsrGraph,
        terms: &[TermPlan],
        factor: &(dyn Fn(usize, usize) -> f32 + Sync),
        budget: u64,
        need: TableNeed,
    ) -> Result<Result<Self, NoTables>, (usize, usize, f32)> {
        let coverage = match Self::coverage(g, terms, budget) {
            Ok(c) => c,
            Err(e) => return Ok(Err(e)),
        };
        let n = g.num_nodes();
        // One term over every row whose factor is within EVEN_RATIO of its row's mean on
        // nearly every edge: plain eRJS, bounded by the row's largest factor, needs at most that
        // many trials there, and a structured trial costs about as much (an alias entry, then
        // the edge), so the tables would not pay; on the GPU their kernel build would even slow
        // the plain steps (measured: R-MAT 20 Node2Vec on U[1,5) weights, 11.6 ms plain,
        // 14.9 ms adaptive with tables, every step eRJS). Checked before any table is built
        // (an unweighted graph's `weight()` is the flat case). A bad factor counts as skewed:
        // the build below names it.
        if let ([TermPlan { factor: StaticFactor::Table(i), cond: TermCond::All, .. }], TableNeed::WhereTheyPay) = (terms, need) {
            let skewed_edges: u64 = (0..n as u32)
                .into_par_iter()
                .map(|v| {
                    let row = g.row(v);
                    let d = row.len() as u64;
                    let (mut max, mut sum) = (0f64, 0f64);
                    for e in row {
                        let x = factor(*i as usize, e);
                        if !(x >= 0.0) || x == f32::INFINITY {
                            return d;
                        }
                        max = max.max(x as f64);
                        sum += x as f64;
                    }
                    if d as f64 * max > EVEN_RATIO * sum { d } else { 0 }
                })
                .sum();
            if skewed_edges * 100 < g.num_edges() {
                return Ok(Err(NoTables::Unsupported(format!(
                    "its static factor is within {EVEN_RATIO}x of its row's mean on more than 99% of the edges: plain eRJS proposes nearly as well"
                ))));
            }
        }
        let row_at = coverage.is_partial().then(|| {
            let mut at = Vec::with_capacity(n + 1);
            let mut acc = 0u64;
            at.push(0);
            for w in g.offsets().windows(2) {
                let d = w[1] - w[0];
                if coverage.covers(d as usize) {
                    acc += d;
                }
                at.push(acc);
            }
            at
        });
        let cover = Cover { coverage, row_at: row_at.as_deref() };
        let labels = terms.iter().any(|t| t.cond == TermCond::Label).then(|| label_segments(g, &cover));
        let factors = terms
            .iter()
            .filter_map(|t| match t.factor {
                StaticFactor::Table(i) => Some(i as usize + 1),
                StaticFactor::One => None,
            })
            .max()
            .unwrap_or(0);
        let mut rows: Vec<Option<FactorTable>> = (0..factors).map(|_| None).collect();
        let mut segments: Vec<Option<FactorTable>> = (0..factors).map(|_| None).collect();
        for t in terms {
            let StaticFactor::Table(i) = t.factor else { continue };
            let i = i as usize;
            match (t.cond, &labels) {
                (TermCond::Label, Some(seg)) if segments[i].is_none() => {
                    segments[i] = Some(factor_table(g, &cover, Some(seg), &|e| factor(i, e)).map_err(|(e, x)| (i, e, x))?);
                }
                (TermCond::All, _) if rows[i].is_none() => {
                    rows[i] = Some(factor_table(g, &cover, None, &|e| factor(i, e)).map_err(|(e, x)| (i, e, x))?);
                }
                _ => {}
            }
        }
        let multiplicity = if terms.iter().any(|t| t.cond == TermCond::PrevNeighbor) { max_multiplicity(g) } else { 1 };
        // Flat factors dropped their entries.
        let dropped = rows.iter().chain(&segments).flatten().filter(|t| t.flat).count() as u64 * 12 * coverage.edges;
        let bytes = coverage.bytes - dropped;
        Ok(Ok(ProposalTables {
            terms: terms.to_vec(),
            rows,
            segments,
            labels,
            multiplicity,
            untested: wayfarer_core::plan::accepts_untested(terms, multiplicity),
            always: wayfarer_core::plan::always_structured(terms),
            coverage: TableCoverage { bytes, ..coverage },
            row_at,
        }))
    }

    /// A structured trial's cost in plain eRJS trials, for the cost model: about 3 (it waits
    /// for a table entry, then the edge, and evaluates the envelope), 4 with label segments
    /// (their offsets and sums are two more reads per step, prefetched). Measured on R-MAT 16-18, 2 threads
    /// (`bench/results/2026-12-02-cpu-structured-proposals.md`).
    #[inline(always)]
    pub fn trial_cost(&self) -> f64 {
        if self.labels.is_some() { 4.0 } else { 3.0 }
    }

    /// A structured trial's cost in plain eRJS trials on a GPU: 2 with a row alias table (its
    /// entry is one more dependent load than eRJS's edge); 0.5 for a `has_edge(prev, dst)`
    /// mixture without one (plain eRJS must search prev's row on every trial its squeeze leaves
    /// undecided, where most of the mixture's trials need no search); 0.5 for label segments
    /// (a segment's trial always lands in the label; the few rows where plain eRJS would win,
    /// every edge in the label, cost less as structured too than as eRJS lanes diverging from
    /// the warp's structured ones); else 1. Chosen by `scripts/kernel-sweep.sh`
    /// (KNOB=WAYFARER_STRUCT_COST) on the H200 (R-MAT 20): MetaPath unweighted 0.628 ms at
    /// c = 1 (1.7% of its steps eRJS), 0.583 ms at c = 0.5 (none;
    /// `bench/results/2026-12-04-label-stats-and-lanes.md`); c = 2 keeps Node2Vec on even weights on eRJS and on Pareto(1) weights structured
    /// (`bench/results/2026-12-03-cuda-structured-proposals.md`); second-order PageRank ran
    /// 16.7 ms at c = 1 (half its steps eRJS) and 14.6 ms at c = 0.5 (every step structured,
    /// `bench/results/2026-12-03-cuda-walk-occupancy.md`).
    pub fn device_trial_cost(&self) -> f64 {
        let row_alias = self.terms.iter().any(|t| {
            matches!((t.factor, t.cond), (StaticFactor::Table(i), TermCond::All) if self.rows[i as usize].as_ref().is_some_and(|t| !t.flat))
        });
        match (row_alias, self.has_prev_neighbor_term() || self.has_label_term()) {
            (true, _) => 2.0,
            (false, true) => 0.5,
            (false, false) => 1.0,
        }
    }

    /// Whether the plan has a label-segment term.
    #[inline(always)]
    pub fn has_label_term(&self) -> bool {
        self.labels.is_some()
    }

    /// Where [`ProposalTables::step`] reads for node `cur` (label `label`): to prefetch.
    #[inline(always)]
    pub fn step_addresses(&self, cur: u32, label: u32) -> [Option<*const u8>; 2] {
        let v = cur as usize;
        let mut out = [None; 2];
        if let Some(seg) = &self.labels {
            let l = label.min(seg.k.saturating_sub(1)) as usize;
            out[0] = Some(seg.starts.as_ptr().wrapping_add(v * (seg.k as usize + 1) + l).cast());
            out[1] = self
                .segments
                .iter()
                .flatten()
                .next()
                .filter(|t| !t.ones)
                .map(|t| t.sums.as_ptr().wrapping_add(v * seg.k as usize + l).cast());
        }
        // Row sums are not prefetched: most steps of a one-term plan never read them (plain
        // eRJS wins where the weights are even), and prefetching them cost those steps 5-10%.
        out
    }

    /// Whether the plan has a `has_edge(prev, dst)` term (whose sum the walk's `Ŝ` can only
    /// guess).
    #[inline(always)]
    pub fn has_prev_neighbor_term(&self) -> bool {
        self.terms.iter().any(|t| t.cond == TermCond::PrevNeighbor)
    }

    /// Whether the adaptive rule always takes the structured proposal where tables cover the
    /// row ([`wayfarer_core::plan::always_structured`]).
    #[inline(always)]
    pub fn always_structured(&self) -> bool {
        self.always
    }

    /// Whether a candidate the terms propose is taken without an acceptance test
    /// ([`wayfarer_core::plan::accepts_untested`] on this graph).
    #[inline(always)]
    pub fn accepts_untested(&self) -> bool {
        self.untested
    }

    /// Whether [`ProposalTables::label_step`] serves the plan: one label term that the
    /// adaptive rule always takes ([`ProposalTables::always_structured`]), tables on every row
    /// at its CSR offset.
    pub(crate) fn serves_label_steps(&self) -> bool {
        self.always_structured() && self.terms[0].cond == TermCond::Label && self.row_at.is_none() && self.coverage.covers(1)
    }

    /// [`ProposalTables::step`] then [`ProposalTables::draw`]'s first trial for a plan that
    /// [`ProposalTables::serves_label_steps`], on `cur`'s row (starting at edge `row_start`),
    /// without their general dispatch: the same masses, the same words drawn, the same entry.
    #[inline(always)]
    pub(crate) fn label_step(&self, cur: u32, row_start: usize, b: &TermBounds, rng: &mut StepRng) -> LabelStep {
        let r = b.bound[0];
        if !(r >= 0.0 && r.is_finite()) {
            return LabelStep::Other;
        }
        let (Some(seg), TermPlan { factor, .. }) = (&self.labels, self.terms[0]) else { return LabelStep::Other };
        if r == 0.0 || b.label >= seg.k {
            return LabelStep::DeadEnd;
        }
        let si = cur as usize * (seg.k as usize + 1) + b.label as usize;
        let (lo, hi) = (seg.starts[si] as usize, seg.starts[si + 1] as usize);
        let table = match factor {
            StaticFactor::One => None,
            StaticFactor::Table(i) => match self.segments[i as usize].as_ref() {
                Some(t) => Some((i, t)),
                None => return LabelStep::Other,
            },
        };
        let sum = segment_sum(seg, table.map(|(_, t)| t), cur, b.label, lo, hi);
        let mass = r as f64 * sum;
        let mut s = StepTerms { mass: [0.0; MAX_TERMS], total: 0.0, bounds: *b, back: (0, 0), prev_row: (0, 0) };
        s.mass[0] = mass;
        s.total += mass;
        if !(s.total > 0.0) {
            return LabelStep::DeadEnd;
        }
        LabelStep::Drawn(s, segment_entry(table, row_start + lo, hi - lo, rng))
    }

    /// Whether [`ProposalTables::mixture_step`] serves the plan: an exact `has_edge(prev, dst)`
    /// mixture, a uniform term over the row plus the term proposed through `prev`'s row, taken
    /// untested (second-order PageRank), which the adaptive rule always takes.
    pub(crate) fn serves_mixture_steps(&self) -> bool {
        matches!(
            self.terms.as_slice(),
            [TermPlan { cond: TermCond::All, factor: StaticFactor::One, .. }, TermPlan { cond: TermCond::PrevNeighbor, .. }]
        ) && self.always_structured()
            && self.untested
            && self.coverage.covers(1)
    }

    /// [`ProposalTables::step`] then up to [`MIXTURE_INLINE_TRIALS`] of
    /// [`ProposalTables::draw`]'s trials for a plan that
    /// [`ProposalTables::serves_mixture_steps`], on `cur`'s row (`d` edges from `row_start`),
    /// without their general dispatch: the same masses, the same words drawn, the same edge.
    #[inline(always)]
    pub(crate) fn mixture_step(
        &self,
        g: &CsrGraph,
        prev: u32,
        row_start: usize,
        d: usize,
        b: &TermBounds,
        rng: &mut StepRng,
    ) -> MixtureStep {
        let (r0, r1) = (b.bound[0], b.bound[1]);
        if !(r0 >= 0.0 && r0.is_finite() && r1 >= 0.0 && r1.is_finite()) {
            return MixtureStep::Other;
        }
        let mut s = StepTerms { mass: [0.0; MAX_TERMS], total: 0.0, bounds: *b, back: (0, 0), prev_row: (0, 0) };
        s.mass[0] = r0 as f64 * d as f64;
        s.total = s.mass[0];
        if r1 != 0.0 && (prev as usize) < g.num_nodes() {
            let pr = g.row(prev);
            s.prev_row = (pr.start, pr.end);
            s.mass[1] = r1 as f64 * pr.len() as f64;
            s.total += s.mass[1];
        }
        if !(s.total > 0.0) {
            return MixtureStep::DeadEnd;
        }
        // The first term's share of the total, as `draw` picks terms.
        let (first, total) = (s.mass[0], s.total);
        #[cfg(feature = "testing")]
        let (first, total) = if BROKEN_EQUAL_TERMS.load(std::sync::atomic::Ordering::Relaxed) && first > 0.0 && s.mass[1] > 0.0 {
            (0.5, 1.0)
        } else {
            (first, total)
        };
        let targets = g.targets();
        for t in 1..=MIXTURE_INLINE_TRIALS {
            let u = rng.uniform() * total;
            if s.mass[1] == 0.0 || (first != 0.0 && u < first) {
                return MixtureStep::Drawn(s, row_start + rng.below(d as u64) as usize, t);
            }
            let (lo, hi) = s.prev_row;
            let x = targets[lo + rng.below((hi - lo) as u64) as usize];
            // No parallel edges (`untested`): the edge to x is the only one, as `draw` finds.
            if let Some(e) = g.find_in_row(row_start, row_start + d, x) {
                return MixtureStep::Drawn(s, e, t);
            }
        }
        MixtureStep::Missed(s)
    }

    /// A floor under the total mass [`ProposalTables::step`] would give on `cur`'s row of `d`
    /// edges with bounds `b`: the first term's mass when it covers the whole row (a count, or
    /// its row's sum), else 0. Computed as `step` computes that mass, and the others only add
    /// to it (`>= 0`; rounding is monotone), so `c · floor > d · B` proves the adaptive rule
    /// would choose plain eRJS without computing the other terms (`has_edge(prev, dst)`'s
    /// included).
    #[inline(always)]
    pub(crate) fn mass_floor(&self, cur: u32, d: usize, b: &TermBounds) -> f64 {
        let r = b.bound[0];
        if !(r > 0.0 && r.is_finite()) {
            return 0.0;
        }
        let sum = match self.terms.first() {
            Some(TermPlan { cond: TermCond::All, factor: StaticFactor::One, .. }) => d as f64,
            Some(TermPlan { cond: TermCond::All, factor: StaticFactor::Table(i), .. }) => {
                self.rows[*i as usize].as_ref().map_or(0.0, |t| t.sums[cur as usize])
            }
            _ => 0.0,
        };
        r as f64 * sum
    }

    /// The step's masses `M_k` for walker `(cur, prev)` with bounds `b`, or `None` if a bound
    /// is not a finite number `>= 0` (the step then takes another sampler).
    #[inline(always)]
    pub fn step(&self, g: &CsrGraph, cur: u32, prev: u32, b: &TermBounds, factor: impl Fn(usize, usize) -> f32) -> Option<StepTerms> {
        let row = g.row(cur);
        if !self.coverage.covers(row.len()) {
            return None;
        }
        let mut s = StepTerms { mass: [0.0; MAX_TERMS], total: 0.0, bounds: *b, back: (0, 0), prev_row: (0, 0) };
        let n = g.num_nodes();
        for (k, t) in self.terms.iter().enumerate() {
            let r = b.bound[k];
            if !(r >= 0.0 && r.is_finite()) {
                return None;
            }
            if r == 0.0 {
                continue;
            }
            let sum = match t.cond {
                TermCond::All => match t.factor {
                    StaticFactor::One => row.len() as f64,
                    StaticFactor::Table(i) => self.rows[i as usize].as_ref()?.sums[cur as usize],
                },
                TermCond::Label => {
                    let seg = self.labels.as_ref()?;
                    if b.label >= seg.k {
                        0.0
                    } else {
                        let table = match t.factor {
                            StaticFactor::One => None,
                            StaticFactor::Table(i) => Some(self.segments[i as usize].as_ref()?),
                        };
                        let si = cur as usize * (seg.k as usize + 1) + b.label as usize;
                        segment_sum(seg, table, cur, b.label, seg.starts[si] as usize, seg.starts[si + 1] as usize)
                    }
                }
                TermCond::Back => {
                    if (prev as usize) >= n {
                        0.0
                    } else {
                        if s.back == (0, 0) {
                            s.back = equal_range(g.targets(), row.clone(), prev);
                        }
                        match t.factor {
                            StaticFactor::One => (s.back.1 - s.back.0) as f64,
                            // There are few edges back: their factors are summed here. A bad
                            // one (negative, NaN, infinite) leaves the step to the other
                            // samplers, which report the weight.
                            StaticFactor::Table(i) => {
                                let mut sum = 0.0;
                                for e in s.back.0..s.back.1 {
                                    let x = factor(i as usize, e);
                                    if !(x >= 0.0) || x == f32::INFINITY {
                                        return None;
                                    }
                                    sum += x as f64;
                                }
                                sum
                            }
                        }
                    }
                }
                TermCond::PrevNeighbor => {
                    if (prev as usize) >= n {
                        0.0
                    } else {
                        let pr = g.row(prev);
                        s.prev_row = (pr.start, pr.end);
                        self.multiplicity as f64 * pr.len() as f64
                    }
                }
            };
            s.mass[k] = r as f64 * sum;
            s.total += s.mass[k];
        }
        Some(s)
    }

    /// The first half of a trial: the candidate edge, or the table entry that names it (to
    /// prefetch before [`ProposalTables::resolve`]), or no candidate.
    #[inline]
    pub fn draw(&self, g: &CsrGraph, cur: u32, s: &StepTerms, rng: &mut StepRng, factor: impl Fn(usize, usize) -> f32) -> Draw {
        #[cfg(feature = "testing")]
        if BROKEN_EQUAL_TERMS.load(std::sync::atomic::Ordering::Relaxed) {
            let mut s = *s;
            let live = s.mass.iter().filter(|m| **m > 0.0).count() as f64;
            for m in s.mass.iter_mut().filter(|m| **m > 0.0) {
                *m = 1.0 / live;
            }
            s.total = 1.0;
            return self.draw_from(g, cur, &s, rng, factor);
        }
        self.draw_from(g, cur, s, rng, factor)
    }

    /// The edge a pending entry names, for `cur`'s row starting at `base`.
    #[inline(always)]
    pub fn resolve(&self, p: &PendingEntry, base: usize) -> usize {
        let offset = match p.source {
            EntrySource::Row(i) => pick(self.rows[i as usize].as_ref().expect("tables for every factor").alias.entries[p.at], p.word),
            EntrySource::Segment(i) => {
                pick(self.segments[i as usize].as_ref().expect("tables for every factor").alias.entries[p.at], p.word)
            }
            EntrySource::Order => self.labels.as_ref().expect("label segments").order[p.at] as usize,
        };
        base + offset
    }

    /// The address of a pending entry (to prefetch).
    #[inline(always)]
    pub fn entry_address(&self, p: &PendingEntry) -> *const u8 {
        match p.source {
            EntrySource::Row(i) => {
                self.rows[i as usize].as_ref().map_or(std::ptr::null(), |t| t.alias.entries.as_ptr().wrapping_add(p.at).cast())
            }
            EntrySource::Segment(i) => {
                self.segments[i as usize].as_ref().map_or(std::ptr::null(), |t| t.alias.entries.as_ptr().wrapping_add(p.at).cast())
            }
            EntrySource::Order => self.labels.as_ref().map_or(std::ptr::null(), |l| l.order.as_ptr().wrapping_add(p.at).cast()),
        }
    }

    #[inline(always)]
    fn draw_from(&self, g: &CsrGraph, cur: u32, s: &StepTerms, rng: &mut StepRng, factor: impl Fn(usize, usize) -> f32) -> Draw {
        let mut k = 0;
        if self.terms.len() > 1 {
            let mut u = rng.uniform() * s.total;
            while k + 1 < self.terms.len() && (s.mass[k] == 0.0 || u >= s.mass[k]) {
                u -= s.mass[k];
                k += 1;
            }
            // Rounding may leave `u` past the last nonzero term: take the last one with mass.
            while s.mass[k] == 0.0 {
                k -= 1;
            }
        }
        let t = self.terms[k];
        let row = g.row(cur);
        // Where the row's per-edge slots start (a covered row: `step` said so).
        let at = self.row_at.as_ref().map_or(row.start, |a| a[cur as usize] as usize);
        match t.cond {
            TermCond::All => {
                let d = row.len();
                let i = rng.below(d as u64) as usize;
                match t.factor {
                    StaticFactor::One => Draw::Edge(row.start + i),
                    StaticFactor::Table(f) if self.rows[f as usize].as_ref().is_some_and(|t| t.flat) => Draw::Edge(row.start + i),
                    StaticFactor::Table(f) => Draw::Entry(PendingEntry { at: at + i, word: rng.next_u32(), source: EntrySource::Row(f) }),
                }
            }
            TermCond::Label => {
                let seg = self.labels.as_ref().expect("label segments");
                let si = cur as usize * (seg.k as usize + 1) + s.bounds.label as usize;
                let (lo, hi) = (seg.starts[si] as usize, seg.starts[si + 1] as usize);
                let table = match t.factor {
                    StaticFactor::One => None,
                    StaticFactor::Table(f) => self.segments[f as usize].as_ref().map(|t| (f, t)),
                };
                Draw::Entry(segment_entry(table, at + lo, hi - lo, rng))
            }
            TermCond::Back => match t.factor {
                StaticFactor::One => Draw::Edge(s.back.0 + rng.below((s.back.1 - s.back.0) as u64) as usize),
                StaticFactor::Table(i) => {
                    // A linear scan: the edges back are few (one on a simple graph).
                    let mut left = rng.uniform() * s.mass[k] / s.bounds.bound[k] as f64;
                    let mut last = s.back.0;
                    for e in s.back.0..s.back.1 {
                        let x = factor(i as usize, e) as f64;
                        if x > 0.0 {
                            last = e;
                            if left < x {
                                return Draw::Edge(e);
                            }
                            left -= x;
                        }
                    }
                    Draw::Edge(last)
                }
            },
            TermCond::PrevNeighbor => {
                let (lo, hi) = s.prev_row;
                let x = g.targets()[lo + rng.below((hi - lo) as u64) as usize];
                if self.multiplicity == 1 {
                    // At most one edge to x (the filter answers most absent ones).
                    return g.find_in_row(row.start, row.end, x).map_or(Draw::Missed, Draw::Edge);
                }
                let (a, b) = equal_range(g.targets(), row, x);
                match b - a {
                    0 => Draw::Missed,
                    1 => Draw::Edge(a),
                    m => Draw::Edge(a + rng.below(m as u64) as usize),
                }
            }
        }
    }

    /// Cheap bounds `lo ≤ E(e) ≤ hi` on the envelope at edge `e` of `cur`'s row (widened like
    /// it): every condition is read from the edge except `has_edge(prev, dst)`, which counts
    /// as false for `lo` and as its largest value for `hi` (no search). With the weight's own
    /// squeeze `w_lo ≤ w ≤ w_hi`, a trial whose level `u·hi` is below `w_lo` accepts and one
    /// whose `u·lo` reaches `w_hi` rejects exactly as the full test would (rounding is monotone:
    /// `E` adds a subset of `hi`'s terms and a superset of `lo`'s, in the same order).
    #[inline]
    pub fn envelope_range(&self, g: &CsrGraph, prev: u32, s: &StepTerms, e: usize, factor: impl Fn(usize, usize) -> f32) -> (f64, f64) {
        let (mut lo, mut hi) = (0.0f64, 0.0f64);
        for (k, t) in self.terms.iter().enumerate() {
            if s.mass[k] == 0.0 {
                continue;
            }
            // How many times term k counts at e: 1 or 0 when the edge says, and for
            // `has_edge(prev, dst)` 0 for `lo` and at most K·c_prev(x)/m_cur(x) <= K² for `hi`
            // (K = 1 on simple graphs).
            let (at_lo, at_hi) = match t.cond {
                TermCond::All => (1.0, 1.0),
                TermCond::Label if g.labels().map_or(0, |l| l[e]) == s.bounds.label => (1.0, 1.0),
                TermCond::Back if g.targets()[e] == prev => (1.0, 1.0),
                TermCond::Label | TermCond::Back => continue,
                TermCond::PrevNeighbor => (0.0, self.multiplicity as f64 * self.multiplicity as f64),
            };
            let f = match t.factor {
                StaticFactor::One => 1.0,
                StaticFactor::Table(i) => factor(i as usize, e) as f64,
            };
            let c = s.bounds.bound[k] as f64 * f;
            if at_lo > 0.0 {
                lo += c * at_lo;
            }
            hi += c * at_hi;
        }
        (lo * ENVELOPE_SLACK, hi * ENVELOPE_SLACK)
    }

    /// The envelope `E(e) = Σ_k R_k · s_k(e) · [c_k(e)]` at edge `e` of `cur`'s row.
    #[inline]
    pub fn envelope(&self, g: &CsrGraph, cur: u32, prev: u32, s: &StepTerms, e: usize, factor: impl Fn(usize, usize) -> f32) -> f64 {
        let mut env = 0.0;
        for (k, t) in self.terms.iter().enumerate() {
            if s.mass[k] == 0.0 {
                continue;
            }
            let r = s.bounds.bound[k] as f64;
            let holds = match t.cond {
                TermCond::All => 1.0,
                TermCond::Label => (g.labels().map_or(0, |l| l[e]) == s.bounds.label) as u32 as f64,
                TermCond::Back => (g.targets()[e] == prev) as u32 as f64,
                TermCond::PrevNeighbor => {
                    let x = g.targets()[e];
                    let (lo, hi) = s.prev_row;
                    if self.multiplicity == 1 {
                        (crate::graph::intersect::search(&g.targets()[lo..hi], x).is_some()) as u32 as f64
                    } else {
                        let (a, b) = equal_range(g.targets(), lo..hi, x);
                        let (c, d) = equal_range(g.targets(), g.row(cur), x);
                        self.multiplicity as f64 * (b - a) as f64 / (d - c).max(1) as f64
                    }
                }
            };
            if holds == 0.0 {
                continue;
            }
            let f = match t.factor {
                StaticFactor::One => 1.0,
                StaticFactor::Table(i) => factor(i as usize, e) as f64,
            };
            env += r * f * holds;
        }
        env * ENVELOPE_SLACK
    }
}

/// One term's arrays ([`ProposalTables::arrays`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct TermArrays<'a> {
    /// Its alias entries `[threshold, keep, alias]` at the edges' slots (over rows for
    /// [`TermCond::All`], in segment order for [`TermCond::Label`]); `None`: a uniform slot (the
    /// factor is 1, or constant within every row or segment).
    pub entries: Option<&'a [[u32; 3]]>,
    /// Its static factor's sum per row (`All`) or per (row, label) segment, `v * k + l`
    /// (`Label`); `None` for a factor of 1 (counts) and for the terms whose sums are per step.
    pub sums: Option<&'a [f64]>,
}

/// Everything the tables hold, as flat arrays, for a backend that uploads them (CUDA).
#[derive(Clone, Debug)]
pub struct TableArrays<'a> {
    /// Per term of the plan, in order.
    pub terms: Vec<TermArrays<'a>>,
    /// Labels with segments (0: no label term).
    pub label_k: u32,
    /// The row's edge offsets in label order, at the row's slots (empty: no label term).
    pub order: &'a [u32],
    /// `starts[v * (label_k + 1) + l]`: where label `l`'s segment of row `v` starts in `order`,
    /// relative to the row's start.
    pub starts: &'a [u32],
    /// The largest number of parallel edges between two nodes.
    pub multiplicity: u32,
    /// Rows with fewer edges have no per-edge arrays (0: every row has them).
    pub min_degree: u32,
    /// Where each row's per-edge slots start, when only some rows have them (else at the
    /// row's CSR offset).
    pub row_at: Option<&'a [u64]>,
}

impl ProposalTables {
    /// The plan the tables were built for.
    pub fn terms(&self) -> &[TermPlan] {
        &self.terms
    }

    /// The tables' arrays (see [`TableArrays`]).
    pub fn arrays(&self) -> TableArrays<'_> {
        fn of(t: &Option<FactorTable>) -> TermArrays<'_> {
            TermArrays {
                entries: t.as_ref().filter(|t| !t.flat).map(|t| t.alias.entries.as_slice()),
                sums: t.as_ref().map(|t| t.sums.as_slice()),
            }
        }
        let terms = self
            .terms
            .iter()
            .map(|t| match (t.factor, t.cond) {
                (StaticFactor::Table(i), TermCond::All) => of(&self.rows[i as usize]),
                (StaticFactor::Table(i), TermCond::Label) => of(&self.segments[i as usize]),
                _ => TermArrays::default(),
            })
            .collect();
        let (label_k, order, starts) = match &self.labels {
            Some(l) => (l.k, l.order.as_slice(), l.starts.as_slice()),
            None => (0, &[][..], &[][..]),
        };
        TableArrays {
            terms,
            label_k,
            order,
            starts,
            multiplicity: self.multiplicity,
            min_degree: self.coverage.min_degree,
            row_at: self.row_at.as_deref(),
        }
    }
}

/// A deliberately broken mixture, for the test that shows the exactness suite catches one
/// (feature `testing` only): while set, a trial picks each term with mass with equal
/// probability instead of in proportion to its mass.
#[cfg(feature = "testing")]
pub static BROKEN_EQUAL_TERMS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A deliberately broken exactness claim, for the test that shows the exactness suite catches
/// one (feature `testing` only): while set, every plan's candidates are taken untested, as if
/// the weight were its envelope ([`ProposalTables::accepts_untested`]).
#[cfg(feature = "testing")]
pub static BROKEN_UNTESTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl StepTerms {
    /// No terms (a walker's slot before its first structured step).
    pub const EMPTY: StepTerms = StepTerms {
        mass: [0.0; MAX_TERMS],
        total: 0.0,
        bounds: TermBounds { bound: [0.0; MAX_TERMS], label: 0 },
        back: (0, 0),
        prev_row: (0, 0),
    };
}

/// The factor by which the engine widens every envelope (see the module docs).
pub const ENVELOPE_SLACK: f64 = 1.0 + 1.0 / 65536.0;

/// One step's terms: their masses and what the proposals need.
#[derive(Clone, Copy, Debug)]
pub struct StepTerms {
    /// `M_k`.
    pub mass: [f64; MAX_TERMS],
    /// `M`.
    pub total: f64,
    bounds: TermBounds,
    /// The edges back to `prev` in `cur`'s row (absolute), once searched.
    back: (usize, usize),
    /// `prev`'s row.
    prev_row: (usize, usize),
}

/// An alias entry's edge (an offset within the row) for the 32-bit word drawn with its slot.
#[inline(always)]
fn pick([threshold, keep, alias]: [u32; 3], word: u32) -> usize {
    (if word < threshold { keep } else { alias }) as usize
}

/// The first half of a structured trial ([`ProposalTables::draw`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Draw {
    /// The candidate edge (an index into the graph's edge arrays).
    Edge(usize),
    /// A table entry names the candidate: prefetch it, then [`ProposalTables::resolve`].
    Entry(PendingEntry),
    /// No candidate (a neighbour of `prev` that `cur` lacks): the trial is rejected.
    Missed,
}

/// The sum of a label segment `[lo, hi)`'s static factor (`table`; `None` for a factor of 1):
/// a factor of 1, or a table of ones, sums to the segment's length.
#[inline(always)]
fn segment_sum(seg: &LabelSegments, table: Option<&FactorTable>, cur: u32, label: u32, lo: usize, hi: usize) -> f64 {
    match table {
        Some(t) if !t.ones => t.sums[cur as usize * seg.k as usize + label as usize],
        _ => (hi - lo) as f64,
    }
}

/// A trial's entry in a label segment of `len` slots from slot `first`: its order entry when
/// the factor is 1 or flat over segments, else its alias entry in static factor `i`'s table
/// (with the word that decides it).
#[inline(always)]
fn segment_entry(table: Option<(u8, &FactorTable)>, first: usize, len: usize, rng: &mut StepRng) -> PendingEntry {
    let at = first + rng.below(len as u64) as usize;
    match table {
        Some((i, t)) if !t.flat => PendingEntry { at, word: rng.next_u32(), source: EntrySource::Segment(i) },
        _ => PendingEntry { at, word: 0, source: EntrySource::Order },
    }
}

/// What [`ProposalTables::label_step`] came to.
pub(crate) enum LabelStep {
    /// The general path decides the step (a bound that is not a finite number `>= 0`).
    Other,
    /// Every weight of the step is 0.
    DeadEnd,
    /// The step's terms and its first trial's entry.
    Drawn(StepTerms, PendingEntry),
}

/// How many trials [`ProposalTables::mixture_step`] draws before it leaves the step to the
/// general path: the least trial cap (`CostModel::trial_cap`), so the cap, computed only then,
/// is never passed inline.
pub(crate) const MIXTURE_INLINE_TRIALS: u32 = 32;

/// What [`ProposalTables::mixture_step`] came to.
pub(crate) enum MixtureStep {
    /// The general path decides the step (a bound that is not a finite number `>= 0`).
    Other,
    /// Every weight of the step is 0.
    DeadEnd,
    /// The step's terms, its candidate edge (taken untested) and its trials so far.
    Drawn(StepTerms, usize, u32),
    /// The step's terms after [`MIXTURE_INLINE_TRIALS`] trials without a candidate.
    Missed(StepTerms),
}

/// A table entry a trial waits for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PendingEntry {
    /// Its position in its table.
    pub at: usize,
    /// The 32-bit word that decides between the slot and its alias.
    pub word: u32,
    /// Which table.
    pub source: EntrySource,
}

/// The table a [`PendingEntry`] is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntrySource {
    /// The row alias table of static factor `i`.
    Row(u8),
    /// The label-segment alias table of static factor `i`.
    Segment(u8),
    /// The label segments' edge order (a uniform slot of a segment).
    Order,
}

/// The keep threshold of a probability in `[0, 1]` for a 32-bit word (a slot whose alias is
/// itself is kept either way).
pub(crate) fn threshold(p: f64) -> u32 {
    (p * 4_294_967_296.0).clamp(0.0, u32::MAX as f64) as u32
}

/// The positions `[a, b)` in `range` of `targets` (sorted) equal to `x`.
#[inline]
fn equal_range(targets: &[u32], range: std::ops::Range<usize>, x: u32) -> (usize, usize) {
    let row = &targets[range.clone()];
    let a = row.partition_point(|&t| t < x);
    let b = a + row[a..].partition_point(|&t| t <= x);
    (range.start + a, range.start + b)
}

/// Which rows have per-edge arrays, and where, while the tables are built.
struct Cover<'a> {
    coverage: TableCoverage,
    row_at: Option<&'a [u64]>,
}

impl Cover<'_> {
    /// Where row `v` (CSR start `start`, `d` edges) keeps its per-edge slots, if it has them.
    fn at(&self, v: usize, start: usize, d: usize) -> Option<usize> {
        self.coverage.covers(d).then(|| self.row_at.map_or(start, |a| a[v] as usize))
    }
}

fn label_segments(g: &CsrGraph, cover: &Cover) -> LabelSegments {
    let k = g.num_labels();
    let labels = g.labels().expect("checked: the graph has labels");
    let n = g.num_nodes();
    let mut order = vec![0u32; cover.coverage.edges as usize];
    let mut starts = vec![0u32; n * (k as usize + 1)];
    let ku = k as usize + 1;
    let optr = order.as_mut_ptr() as usize;
    starts.par_chunks_mut(ku).enumerate().for_each(|(v, st)| {
        let row = g.row(v as u32);
        let mut count = vec![0u32; k as usize];
        for e in row.clone() {
            count[labels[e] as usize] += 1;
        }
        let mut acc = 0u32;
        for l in 0..k as usize {
            st[l] = acc;
            acc += count[l];
        }
        st[k as usize] = acc;
        let Some(at) = cover.at(v, row.start, row.len()) else { return };
        let mut fill: Vec<u32> = st[..k as usize].to_vec();
        for e in row.clone() {
            let l = labels[e] as usize;
            // SAFETY: rows' slots are disjoint, and each row's are written by its one task.
            unsafe { *(optr as *mut u32).add(at + fill[l] as usize) = (e - row.start) as u32 };
            fill[l] += 1;
        }
    });
    LabelSegments { k, order, starts }
}

/// A static factor's alias table over each row (`seg = None`) or each label segment.
fn factor_table(
    g: &CsrGraph,
    cover: &Cover,
    seg: Option<&LabelSegments>,
    factor: &(dyn Fn(usize) -> f32 + Sync),
) -> Result<FactorTable, (usize, f32)> {
    let n = g.num_nodes();
    let per_row = seg.map_or(1, |s| s.k as usize);
    let mut entries = vec![[0u32; 3]; cover.coverage.edges as usize];
    let mut sums = vec![0f64; n * per_row];
    let ep = entries.as_mut_ptr() as usize;
    let flat = std::sync::atomic::AtomicBool::new(true);
    let ones = std::sync::atomic::AtomicBool::new(true);
    sums.par_chunks_mut(per_row).enumerate().try_for_each_init(
        || (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()),
        |(values, prob, alias, small, large), (v, out)| {
            let row = g.row(v as u32);
            // A row without tables is never drawn from (its steps take the plain samplers).
            let Some(at) = cover.at(v, row.start, row.len()) else { return Ok(()) };
            // Slot i's edge, as an offset within the row.
            let edge_of = |i: usize| seg.map_or(i, |s| s.order[at + i] as usize);
            values.clear();
            for i in 0..row.len() {
                let e = row.start + edge_of(i);
                let x = factor(e);
                if !(x >= 0.0) || x == f32::INFINITY {
                    return Err((e, x));
                }
                values.push(x as f64);
            }
            prob.resize(row.len(), 0.0);
            alias.resize(row.len(), 0u32);
            let mut fill = |lo: usize, hi: usize| {
                if values[lo..hi].windows(2).any(|w| w[0] != w[1]) {
                    flat.store(false, std::sync::atomic::Ordering::Relaxed);
                }
                if values[lo..hi].iter().any(|&x| x != 1.0) {
                    ones.store(false, std::sync::atomic::Ordering::Relaxed);
                }
                let total = build_alias(&values[lo..hi], &mut prob[lo..hi], &mut alias[lo..hi], small, large);
                for j in lo..hi {
                    // SAFETY: rows are disjoint, and each row's entries are written by its one task.
                    unsafe {
                        *(ep as *mut [u32; 3]).add(at + j) =
                            [threshold(prob[j]), edge_of(j) as u32, edge_of(lo + alias[j] as usize) as u32];
                    }
                }
                total
            };
            match seg {
                None => out[0] = fill(0, row.len()),
                Some(s) => {
                    let st = &s.starts[v * (s.k as usize + 1)..(v + 1) * (s.k as usize + 1)];
                    for l in 0..s.k as usize {
                        out[l] = fill(st[l] as usize, st[l + 1] as usize);
                    }
                }
            }
            Ok(())
        },
    )?;
    let flat = flat.into_inner();
    if flat {
        entries = Vec::new();
    }
    Ok(FactorTable { alias: AliasTable { entries }, flat, sums, ones: ones.into_inner() })
}

fn max_multiplicity(g: &CsrGraph) -> u32 {
    // Most graphs have no repeated entries, and the loader knows it.
    if !g.has_repeated_entries() {
        return 1;
    }
    (0..g.num_nodes() as u32)
        .into_par_iter()
        .map(|v| {
            let row = &g.targets()[g.row(v)];
            let (mut best, mut run) = (0u32, 0u32);
            for (i, &t) in row.iter().enumerate() {
                run = if i > 0 && row[i - 1] == t { run + 1 } else { 1 };
                best = best.max(run);
            }
            best
        })
        .max()
        .unwrap_or(1)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_tables_reproduce_their_weights() {
        let values = [0.0, 1.0, 5.0, 0.5, 1e-3, 3.0];
        let d = values.len();
        let (mut prob, mut alias) = (vec![0.0; d], vec![0u32; d]);
        let total = build_alias(&values, &mut prob, &mut alias, &mut Vec::new(), &mut Vec::new());
        assert!((total - values.iter().sum::<f64>()).abs() < 1e-12);
        // The exact probability of each slot under the table: (1/d)·(prob_i + Σ_{j: alias_j = i} (1 − prob_j)).
        let mut p = vec![0.0; d];
        for j in 0..d {
            p[j] += prob[j] / d as f64;
            p[alias[j] as usize] += (1.0 - prob[j]) / d as f64;
        }
        for i in 0..d {
            assert!((p[i] - values[i] / total).abs() < 1e-12, "slot {i}: {} vs {}", p[i], values[i] / total);
        }
    }

    /// A bad static factor on the way back hands the step to the other samplers (which report
    /// the weight) instead of making a negative mass, which would read as a dead end.
    #[test]
    fn a_bad_back_factor_is_not_a_dead_end() {
        use crate::graph::{CsrParts, Orientation};
        let parts = CsrParts { offsets: vec![0, 2, 3], targets: vec![0, 1, 0], ..Default::default() };
        let g = CsrGraph::from_parts(parts, Orientation::Directed).unwrap();
        let terms = [TermPlan { factor: StaticFactor::Table(0), cond: TermCond::Back, exact: false }];
        let tables = ProposalTables::build(&g, &terms, &|_, _| 1.0, u64::MAX, TableNeed::Always).unwrap().unwrap();
        let b = TermBounds { bound: [1.0; MAX_TERMS], label: 0 };
        let good = tables.step(&g, 0, 1, &b, |_, _| 1.0).expect("a step with a good factor");
        assert_eq!(good.total, 1.0);
        for bad in [-1.0, f32::NAN, f32::INFINITY] {
            assert!(tables.step(&g, 0, 1, &b, |_, _| bad).is_none(), "factor {bad}");
        }
    }

    /// A label term's mass is its segment's factor sum: read from the segment starts when the
    /// factor is 1 on every edge, from the table's sums otherwise (a flat table of 2s, a
    /// skewed one); the same values either way, and only the all-ones table skips its sums.
    #[test]
    fn label_masses_are_the_segment_sums_whatever_the_factor() {
        use crate::graph::{CsrParts, Orientation};
        // Node 0: labels 0, 1, 1, 2, 1; node 1: labels 1, 1; node 2: no edges.
        let parts = CsrParts {
            offsets: vec![0, 5, 7, 7],
            targets: vec![0, 1, 1, 2, 2, 0, 2],
            labels: Some(vec![0, 1, 1, 2, 1, 1, 1]),
            ..Default::default()
        };
        let g = CsrGraph::from_parts(parts, Orientation::Directed).unwrap();
        let terms = [TermPlan { factor: StaticFactor::Table(0), cond: TermCond::Label, exact: false }];
        let skewed = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        for (name, factor, ones) in [("ones", [1.0f32; 7], true), ("twos", [2.0; 7], false), ("skewed", skewed, false)] {
            let f = move |_: usize, e: usize| factor[e];
            let tables = ProposalTables::build(&g, &terms, &f, u64::MAX, TableNeed::Always).unwrap().unwrap();
            assert_eq!(tables.segments[0].as_ref().unwrap().ones, ones, "{name}");
            assert_eq!(tables.step_addresses(0, 1)[1].is_none(), ones, "{name}: the sums are prefetched unless unread");
            for (cur, label) in [(0u32, 0u32), (0, 1), (0, 2), (0, 3), (1, 1), (1, 0), (2, 1)] {
                let b = TermBounds { bound: [1.0; MAX_TERMS], label };
                let want: f64 = g.row(cur).filter(|&e| g.labels().unwrap()[e] == label).map(|e| factor[e] as f64).sum();
                let got = tables.step(&g, cur, crate::NO_NODE, &b, f).map_or(0.0, |s| s.total);
                assert_eq!(got, want, "{name}: node {cur}, label {label}");
            }
        }
    }

    #[test]
    fn a_negative_or_nan_static_factor_is_named_at_build() {
        use crate::graph::{CsrParts, Orientation};
        let parts = CsrParts { offsets: vec![0, 3, 4], targets: vec![0, 1, 1, 0], ..Default::default() };
        let g = CsrGraph::from_parts(parts, Orientation::Directed).unwrap();
        for cond in [TermCond::All, TermCond::Back] {
            let terms = [TermPlan { factor: StaticFactor::Table(0), cond, exact: false }];
            for bad in [-0.5f32, f32::NAN, f32::INFINITY] {
                let factor = move |_: usize, e: usize| if e == 2 { bad } else { 1.0 };
                match (cond, ProposalTables::build(&g, &terms, &factor, u64::MAX, TableNeed::Always)) {
                    // Tables over rows read every edge's factor: edge 2 is named.
                    (TermCond::All, Err((i, e, x))) => assert_eq!((i, e, x.to_bits()), (0, 2, bad.to_bits())),
                    // The edges back are not tabled: the factor is read per step (see above).
                    (TermCond::Back, Ok(Ok(_))) => {}
                    (c, other) => panic!("{c:?} with factor {bad}: {:?}", other.map(|r| r.map(|t| t.coverage.bytes))),
                }
            }
        }
    }

    /// Rows of degrees 1..=6 (21 edges) with labels: under a budget for degree >= 4 only rows
    /// 3, 4 and 5 get tables, packed after each other; the others' steps are left to the plain
    /// samplers; a covered row's draws land on its own edges with its factor's probabilities;
    /// a budget below the longest row builds nothing.
    #[test]
    fn tables_cover_the_longest_rows_that_fit_the_budget() {
        use crate::graph::{CsrParts, Orientation};
        let mut parts = CsrParts { offsets: vec![0], labels: Some(Vec::new()), ..Default::default() };
        for d in 1..=6u32 {
            for j in 0..d {
                parts.targets.push(j);
                parts.labels.as_mut().unwrap().push(j % 2);
            }
            parts.offsets.push(parts.targets.len() as u64);
        }
        let g = CsrGraph::from_parts(parts, Orientation::Directed).unwrap();
        let factor = |_: usize, e: usize| 1.0 + (e % 4) as f32;
        for cond in [TermCond::All, TermCond::Label] {
            let terms = [TermPlan { factor: StaticFactor::Table(0), cond, exact: false }];
            let full = ProposalTables::coverage(&g, &terms, u64::MAX).unwrap();
            assert_eq!((full.min_degree, full.edges), (0, 21));
            let budget = ProposalTables::budget_for_min_degree(&g, &terms, 4).unwrap();
            let c = ProposalTables::coverage(&g, &terms, budget).unwrap();
            assert_eq!((c.min_degree, c.edges, c.bytes), (4, 15, budget), "{cond:?}");
            assert!(c.describe().contains("degree >= 4"));
            // One byte less: rows of degree 4 no longer fit, so only 5 and 6 do.
            let c = ProposalTables::coverage(&g, &terms, budget - 1).unwrap();
            assert_eq!((c.min_degree, c.edges), (5, 11));
            let small = ProposalTables::budget_for_min_degree(&g, &terms, 6).unwrap();
            assert!(matches!(ProposalTables::coverage(&g, &terms, small - 1), Err(NoTables::OverBudget { .. })));

            let tables = ProposalTables::build(&g, &terms, &factor, budget, TableNeed::Always).unwrap().unwrap();
            assert_eq!(tables.arrays().row_at.unwrap(), &[0, 0, 0, 0, 4, 9, 15]);
            let b = TermBounds { bound: [1.0; MAX_TERMS], label: 1 };
            for v in 0..6u32 {
                let step = tables.step(&g, v, crate::graph::NO_NODE, &b, factor);
                assert_eq!(step.is_some(), v >= 3, "row {v}");
                let Some(s) = step else { continue };
                let row = g.row(v);
                let want: Vec<f64> = row
                    .clone()
                    .map(|e| if cond == TermCond::All || g.labels().unwrap()[e] == 1 { factor(0, e) as f64 } else { 0.0 })
                    .collect();
                let total: f64 = want.iter().sum();
                assert_eq!(s.total, total);
                if total == 0.0 {
                    continue;
                }
                let mut rng = StepRng::new(7, v as u64, 0, crate::rng::Purpose::Sample);
                let mut count = vec![0u32; row.len()];
                let trials = 200_000;
                for _ in 0..trials {
                    let e = match tables.draw(&g, v, &s, &mut rng, factor) {
                        Draw::Edge(e) => e,
                        Draw::Entry(p) => tables.resolve(&p, row.start),
                        Draw::Missed => panic!("no neighbour term"),
                    };
                    assert!(row.contains(&e), "row {v}: edge {e} is not its own");
                    count[e - row.start] += 1;
                }
                for (i, &n) in count.iter().enumerate() {
                    let p = want[i] / total;
                    let sd = (p * (1.0 - p) / trials as f64).sqrt();
                    let f = n as f64 / trials as f64;
                    assert!((f - p).abs() <= 5.0 * sd + 1e-12, "{cond:?} row {v} slot {i}: {f} vs {p}");
                }
            }
        }
    }

    /// 50 rows, each with edges to nodes 0..4.
    fn fifty_rows_of_four() -> CsrGraph {
        use crate::graph::{CsrParts, Orientation};
        let mut parts = CsrParts { offsets: vec![0], ..Default::default() };
        for _ in 0..50 {
            parts.targets.extend(0..4u32);
            parts.offsets.push(parts.targets.len() as u64);
        }
        CsrGraph::from_parts(parts, Orientation::Directed).unwrap()
    }

    /// A one-term plan over even factors builds no tables for the adaptive rule (plain eRJS
    /// proposes nearly as well) but does when structured proposals are forced; one skewed row
    /// holding more than 1% of the edges is enough to build them.
    #[test]
    fn even_factors_build_tables_only_when_forced() {
        let g = fifty_rows_of_four();
        let terms = [TermPlan { factor: StaticFactor::Table(0), cond: TermCond::All, exact: false }];
        // Row maxima at 1.6x the row means.
        let even = |_: usize, e: usize| [1.0, 1.0, 1.0, 3.0][e % 4];
        let skew_first = |_: usize, e: usize| if e < 4 { [1.0, 1.0, 1.0, 30.0][e] } else { even(0, e) };
        assert!(matches!(ProposalTables::build(&g, &terms, &even, u64::MAX, TableNeed::WhereTheyPay), Ok(Err(NoTables::Unsupported(_)))));
        assert!(matches!(ProposalTables::build(&g, &terms, &even, u64::MAX, TableNeed::Always), Ok(Ok(_))));
        assert!(matches!(ProposalTables::build(&g, &terms, &skew_first, u64::MAX, TableNeed::WhereTheyPay), Ok(Ok(_))));
    }

    #[test]
    fn the_gpu_trial_cost_follows_the_plan() {
        let g = fifty_rows_of_four();
        let skew = |_: usize, e: usize| [1.0, 1.0, 1.0, 30.0][e % 4];
        let cost = |terms: &[TermPlan]| match ProposalTables::build(&g, terms, &skew, u64::MAX, TableNeed::Always) {
            Ok(Ok(t)) => t.device_trial_cost(),
            _ => panic!("tables for {terms:?}"),
        };
        let all = |factor| TermPlan { factor, cond: TermCond::All, exact: false };
        let prev = TermPlan { factor: StaticFactor::One, cond: TermCond::PrevNeighbor, exact: false };
        // Node2Vec's shape: a row alias table.
        assert_eq!(cost(&[all(StaticFactor::Table(0))]), 2.0);
        // Second-order PageRank's: a uniform term and the mixture through prev's row.
        assert_eq!(cost(&[all(StaticFactor::One), prev]), 0.5);
        // A uniform term alone.
        assert_eq!(cost(&[all(StaticFactor::One)]), 1.0);
        // MetaPath's: a label segment.
        use crate::graph::{CsrParts, Orientation};
        let labels = Some((0..g.num_edges() as u32).map(|e| e % 3).collect());
        let parts = CsrParts { offsets: g.offsets().to_vec(), targets: g.targets().to_vec(), labels, ..Default::default() };
        let labelled = CsrGraph::from_parts(parts, Orientation::Directed).unwrap();
        let label = TermPlan { factor: StaticFactor::One, cond: TermCond::Label, exact: false };
        match ProposalTables::build(&labelled, &[label], &skew, u64::MAX, TableNeed::Always) {
            Ok(Ok(t)) => assert_eq!(t.device_trial_cost(), 0.5),
            _ => panic!("label segments for a labelled graph"),
        }
    }

    #[test]
    fn equal_range_counts_parallel_edges() {
        let t = [1, 3, 3, 3, 7, 9, 9];
        assert_eq!(equal_range(&t, 0..7, 3), (1, 4));
        assert_eq!(equal_range(&t, 0..7, 4), (4, 4));
        assert_eq!(equal_range(&t, 4..7, 9), (5, 7));
        assert_eq!(equal_range(&t, 4..7, 1), (4, 4));
    }
}
