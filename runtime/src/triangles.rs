//! Exact triangle counting by edge orientation (masked-edge enumeration), the CPU path.
//!
//! Nodes are ranked by (degree, id). Every undirected edge `{u, v}` (self loops and parallel
//! edges ignored) is kept once, oriented from its lower-ranked end to its higher-ranked end,
//! if the mask keeps it; a triangle is counted when its three oriented edges are all kept,
//! once, at its lowest-ranked node `a` with edges `a → b` and `a → w`: `w ∈ out(a) ∩ out(b)`.
//! The orientation bounds every oriented row by O(√m), which is what makes enumeration fast
//! on skewed graphs.
//!
//! The mask sees the edge as stored in the CSR row of the lower-ranked end (for a directed
//! graph, whose edges are symmetrized here: the first of its one or two stored directions in
//! CSR order). Per-node counts and local clustering coefficients are those of the kept
//! edges' graph: `c(v) = 2 T(v) / (d(v) (d(v) - 1))`, `d(v)` the kept distinct neighbors.

mod list;

use crate::error::WalkError;
use crate::graph::intersect::{
    BITMAP_ROW, RowMarks, intersect, intersect_count_from_end, intersect_count_within, intersect_count_within_or,
};
use crate::graph::{CsrGraph, Orientation};
use crate::sample::exclusive_sum;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// A mask's decision for edge `e` (an index into the CSR's edge arrays) of node `u`'s row.
pub type KeepFn<'a> = &'a (dyn Fn(u32, usize) -> bool + Sync);

/// Whether per-node counts are wanted (they cost an atomic add per triangle corner).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// The total only (`per_node` comes back empty).
    Total,
    /// The total, per-node counts and degrees.
    PerNode,
}

/// What triangle counting found.
#[derive(Clone, Debug, PartialEq)]
pub struct TriangleCounts {
    /// Triangles in the graph of kept edges.
    pub total: u64,
    /// Per node: the triangles it belongs to (they sum to 3 × `total`); empty when only the
    /// total was asked for ([`Detail::Total`]).
    pub per_node: Vec<u64>,
    /// Per node: its kept distinct neighbors.
    pub degree: Vec<u64>,
    /// Oriented edges kept (undirected edges passing the mask).
    pub kept_edges: u64,
    /// Whether the input was directed and was symmetrized first.
    pub symmetrized: bool,
}

impl TriangleCounts {
    /// Local clustering coefficients: `2 T(v) / (d(v) (d(v) - 1))`, 0 where `d(v) < 2` (empty
    /// after [`Detail::Total`]).
    pub fn clustering(&self) -> Vec<f64> {
        self.per_node
            .iter()
            .zip(&self.degree)
            .map(|(&t, &d)| if d < 2 { 0.0 } else { 2.0 * t as f64 / (d as f64 * (d as f64 - 1.0)) })
            .collect()
    }
}

/// The oriented, masked graph every counter works on: node `a`'s kept edges to higher-ranked
/// nodes are `targets[offsets[a]..offsets[a + 1]]`, ascending.
#[derive(Clone, Debug)]
pub struct Oriented {
    /// Row offsets (`n + 1`).
    pub offsets: Vec<u64>,
    /// Row entries.
    pub targets: Vec<u32>,
    /// Whether the input was directed and was symmetrized.
    pub symmetrized: bool,
}

/// What the CPU counter reads: node `a`'s oriented row, ascending, without repeats.
pub trait OrientedRows: Sync {
    /// Nodes.
    fn num_nodes(&self) -> usize;
    /// Node `a`'s oriented row.
    fn row(&self, a: u32) -> &[u32];
    /// The array every row is a part of.
    fn entries(&self) -> &[u32];
    /// Oriented edges.
    fn num_edges(&self) -> u64;
    /// Whether the input was directed and was symmetrized.
    fn symmetrized(&self) -> bool;
    /// The part of `a`'s row `ra` that can hold the third node of a triangle whose second is
    /// `ra[i]`: the whole row unless the rows' order is the orientation's (see [`IdOrder`]).
    #[inline(always)]
    fn third_candidates<'r>(&self, ra: &'r [u32], _i: usize) -> &'r [u32] {
        ra
    }

    /// The row that `b`'s oriented row is merged as against [`third_candidates`](Self::third_candidates):
    /// anything holding it whose other entries cannot meet the candidates.
    #[inline(always)]
    fn merge_row(&self, b: u32) -> &[u32] {
        self.row(b)
    }

    /// The triangles whose lowest-ranked node is `a`, and `a`'s oriented edges (the count's
    /// work for one row: `a`'s row marked in `marks` when long, else intersections).
    #[inline(always)]
    fn count_row(&self, a: u32, marks: &mut RowMarks) -> (u64, u64) {
        let ra = self.row(a);
        let found = if ra.len() >= BITMAP_ROW {
            count_marked(self, ra, marks)
        } else if ra.len() >= 2 {
            // See `for_each_triangle`.
            let mut found = 0;
            for (i, &b) in ra.iter().enumerate() {
                let rest = self.third_candidates(ra, i);
                if !rest.is_empty() {
                    found += intersect_count_within(self.entries(), rest, self.merge_row(b));
                }
            }
            found
        } else {
            0
        };
        (found, ra.len() as u64)
    }

    /// Lists in `todo` (at least `rows.len()` long) the rows of `rows` that may close a
    /// triangle at their node, and returns how many, with the oriented edges of the others:
    /// a cheap test without a branch on the rows' contents, so that a count skips the rows
    /// that cannot (most rows of a sparse, tree-like graph) without mispredicting on each.
    /// Conservative: any row that might is listed.
    #[inline(always)]
    fn list_rows(&self, rows: std::ops::Range<usize>, todo: &mut [u32]) -> (usize, u64) {
        for (slot, a) in todo.iter_mut().zip(rows.clone()) {
            *slot = a as u32;
        }
        (rows.len(), 0)
    }

    /// The counts' record for a total and per-node counts found on this graph (any backend).
    fn counts(&self, total: u64, per_node: Vec<u64>) -> TriangleCounts {
        self.counts_of(total, per_node, self.num_edges())
    }

    /// [`counts`](Self::counts) with the oriented edges already counted.
    fn counts_of(&self, total: u64, per_node: Vec<u64>, edges: u64) -> TriangleCounts {
        let mut degree = Vec::new();
        if !per_node.is_empty() {
            degree = vec![0u64; self.num_nodes()];
            for a in 0..self.num_nodes() as u32 {
                for &b in self.row(a) {
                    degree[a as usize] += 1;
                    degree[b as usize] += 1;
                }
            }
        }
        TriangleCounts { total, per_node, degree, kept_edges: edges, symmetrized: self.symmetrized() }
    }
}

impl OrientedRows for Oriented {
    fn num_nodes(&self) -> usize {
        self.offsets.len() - 1
    }
    #[inline]
    fn row(&self, a: u32) -> &[u32] {
        &self.targets[self.offsets[a as usize] as usize..self.offsets[a as usize + 1] as usize]
    }
    fn entries(&self) -> &[u32] {
        &self.targets
    }
    fn num_edges(&self) -> u64 {
        self.targets.len() as u64
    }
    fn symmetrized(&self) -> bool {
        self.symmetrized
    }
}

/// A simple undirected graph oriented by id in place: node `a`'s oriented row is the part of
/// its own sorted row above `a` (or below it), so nothing is copied and nothing is computed
/// before counting: the row's cut is found when the row is read. Chosen by [`plan`] when that
/// order costs about what (degree, id) order does, where building the latter would cost more
/// than it saves.
pub struct IdOrder<'g> {
    offsets: &'g [u64],
    targets: &'g [u32],
    upward: bool,
}

impl<'g> IdOrder<'g> {
    #[inline(always)]
    fn full_row(&self, a: u32) -> &'g [u32] {
        &self.targets[self.offsets[a as usize] as usize..self.offsets[a as usize + 1] as usize]
    }

    /// [`OrientedRows::list_rows`] in one direction: groups of eight rows at once where the CPU
    /// can ([`list::groups`]), the rest one by one ([`list::rows`]).
    #[inline(always)]
    fn list_rows_in<const UP: bool>(&self, rows: std::ops::Range<usize>, todo: &mut [u32]) -> (usize, u64) {
        let off = &self.offsets[rows.start..=rows.end];
        let todo = &mut todo[..rows.len()];
        let done = list::groups::<UP>(off, self.targets, rows.start as u32, todo).unwrap_or((0, 0, 0));
        list::rows::<UP>(off, self.targets, rows.start as u32, todo, done)
    }
}

impl OrientedRows for IdOrder<'_> {
    fn num_nodes(&self) -> usize {
        self.offsets.len() - 1
    }
    /// The part of `a`'s row above `a` (upward) or below it (downward); `a` itself (a self
    /// loop) is in neither.
    #[inline(always)]
    fn row(&self, a: u32) -> &[u32] {
        let r = self.full_row(a);
        if self.upward { &r[r.partition_point(|&x| x <= a)..] } else { &r[..r.partition_point(|&x| x < a)] }
    }
    fn entries(&self) -> &[u32] {
        self.targets
    }
    /// A pass over the rows ([`count_oriented`] counts them as it goes instead).
    fn num_edges(&self) -> u64 {
        (0..self.num_nodes() as u32).into_par_iter().with_min_len(1024).map(|a| self.row(a).len() as u64).sum()
    }
    fn symmetrized(&self) -> bool {
        false
    }
    /// Upward, `b = ra[i]`'s oriented row holds only nodes above `b`, which in `ra` come after
    /// it (downward, below it and before it): the third node is searched there only, and the
    /// last (first) entry of a row needs no search at all.
    #[inline(always)]
    fn third_candidates<'r>(&self, ra: &'r [u32], i: usize) -> &'r [u32] {
        if self.upward { &ra[i + 1..] } else { &ra[..i] }
    }
    /// Rows shorter than a bitmap's are read from their own end up to `a` (downward: from the
    /// start, upward: from the end), so no cut is ever searched: per row that search cost
    /// as much as the row's intersections on a flat graph.
    #[inline(always)]
    fn count_row(&self, a: u32, marks: &mut RowMarks) -> (u64, u64) {
        let r = self.full_row(a);
        if r.len() >= BITMAP_ROW {
            let ra = self.row(a);
            if ra.len() >= BITMAP_ROW {
                return (count_marked(self, ra, marks), ra.len() as u64);
            }
        }
        let mut found = 0;
        if self.upward {
            // b = r[i] > a; the third node is above b: after it in r, and in b's row from
            // its end down to b (a merge from the rows' ends stops there).
            let mut i = r.len();
            while i > 0 && r[i - 1] > a {
                i -= 1;
                if i + 1 < r.len() {
                    found += intersect_count_within_or(self.targets, &r[i + 1..], self.full_row(r[i]), intersect_count_from_end);
                }
            }
            (found, (r.len() - i) as u64)
        } else {
            // b = r[i] < a; the third node is below b: before it in r, and in b's row from
            // its start (a merge stops when the candidates end).
            if r.len() < 2 || r[1] >= a {
                // Not a listed row (`list_rows` lists only rows with two entries below a).
                return (0, (!r.is_empty() && r[0] < a) as u64);
            }
            // The first search outside the loop: most listed rows have two entries below `a`,
            // so the loop's first test is then its last, and predicted.
            found += intersect_count_within(self.targets, &r[..1], self.full_row(r[1]));
            let mut i = 2;
            while i < r.len() && r[i] < a {
                found += intersect_count_within(self.targets, &r[..i], self.full_row(r[i]));
                i += 1;
            }
            (found, i as u64)
        }
    }
    /// A triangle at `a` needs two entries of its oriented part: downward its row's second
    /// entry below `a`, upward its second-to-last above. Otherwise the oriented part is the
    /// first (last) entry if that one is below (above) `a`.
    #[inline(always)]
    fn list_rows(&self, rows: std::ops::Range<usize>, todo: &mut [u32]) -> (usize, u64) {
        if self.upward { self.list_rows_in::<true>(rows, todo) } else { self.list_rows_in::<false>(rows, todo) }
    }
    /// Downward, the candidates are all below `b`, so `b`'s whole row can stand for its
    /// oriented part in a merge, which stops at the candidates' end: no cut to find.
    #[inline(always)]
    fn merge_row(&self, b: u32) -> &[u32] {
        if self.upward { self.row(b) } else { self.full_row(b) }
    }
}

/// How the CPU counter orients a graph (see [`plan`]).
pub enum Plan<'g> {
    /// The graph's own rows in id order.
    InPlace(IdOrder<'g>),
    /// A copy oriented by (degree, id).
    Built(Oriented),
}

impl Plan<'_> {
    /// Counts the triangles (see [`count_oriented`]).
    pub fn count(&self, detail: Detail) -> TriangleCounts {
        self.count_share(detail, Share::WHOLE)
    }

    /// Counts the triangles found at `share`'s rows (see [`count_oriented_share`]).
    pub fn count_share(&self, detail: Detail, share: Share) -> TriangleCounts {
        match self {
            Plan::InPlace(o) => count_oriented_share(o, detail, share),
            Plan::Built(o) => count_oriented_share(o, detail, share),
        }
    }

    /// The orientation in words, for summaries.
    pub fn describe(&self) -> &'static str {
        match self {
            Plan::InPlace(_) => "id order in place",
            Plan::Built(_) => "(degree, id) order",
        }
    }
}

/// Chooses the orientation. Counting costs about `sum over oriented edges a -> b of deg(a)`
/// merge steps (`a`'s row is met once per edge out of it and once per edge into it), which
/// (degree, id) order minimizes: `sum over edges of min(deg u, deg v)`. Id order, up or down,
/// needs no copy, only a cut per row; it is taken when its extra merge steps cost less than
/// the copy would, for an undirected graph without repeated edges and without a mask. Hubs
/// among low ids make the upward order dear and the downward one cheap, and the other way
/// round.
pub fn plan<'g>(g: &'g CsrGraph, keep: Option<KeepFn>) -> Plan<'g> {
    if keep.is_none() && g.orientation() == Orientation::Undirected {
        if let Some(o) = id_order_if_cheap(g) {
            return Plan::InPlace(o);
        }
    }
    Plan::Built(orient(g, keep))
}

/// [`plan`]'s choice reads every row at least this long (they decide the costs on skewed
/// graphs) and one in [`COST_SAMPLE`] of the others (the choice only decides speed; both
/// orders count exactly).
const COST_EXACT_DEGREE: u64 = 64;

/// See [`COST_EXACT_DEGREE`]: one in this many short rows at least, and no more than
/// [`COST_SAMPLE_ROWS`] of them in all (each a cache miss: on WordNet 7,300 sampled rows were
/// most of the plan's 0.1 ms).
const COST_SAMPLE: usize = 16;

/// See [`COST_SAMPLE`].
const COST_SAMPLE_ROWS: usize = 2048;

/// What copying one stored entry into the (degree, id) orientation costs, in merge steps of
/// the count. Measured on WordNet (2 threads): a merge step 0.13 ns, the copy 4.6 ns per entry
/// (both passes with their rank loads); a count's time is mostly its random row reads, which
/// both orders pay alike (`bench/results/2026-12-04-cpu-triangles-small.md`).
const COPY_STEPS_PER_ENTRY: u64 = 16;

fn id_order_if_cheap(g: &CsrGraph) -> Option<IdOrder<'_>> {
    // In place needs rows without repeats (the copy skips them): the loader knows.
    if g.has_repeated_entries() {
        return None;
    }
    let off = g.offsets();
    let tg = g.targets();
    let row = |u: usize| &tg[off[u] as usize..off[u + 1] as usize];
    // Both id orders' costs, then (only if the copy alone does not already cost more) the
    // least cost (sum over edges of the lower degree, a random read per edge), from a
    // stratified sample of rows: no pass over the entries (on a small graph that pass cost
    // as much as the count).
    let cut = |u: usize| {
        let r = row(u);
        let above = r.partition_point(|&x| x <= u as u32);
        let below = above - (above > 0 && r[above - 1] == u as u32) as usize;
        (r, above, below)
    };
    let sides = |u: usize, scale: u64| {
        let (r, above, below) = cut(u);
        let cost = |part: usize| (r.len() as u64).saturating_mul(part as u64).saturating_mul(scale);
        (cost(r.len() - above), cost(below))
    };
    let (up, down) = sampled_rows(off, |u, scale| sides(u, scale), |x, y| (x.0.saturating_add(y.0), x.1.saturating_add(y.1)));
    let copy = COPY_STEPS_PER_ENTRY.saturating_mul(tg.len() as u64);
    if up.min(down) > copy {
        let least = sampled_rows(
            off,
            |u, scale| {
                let (r, above, _) = cut(u);
                let du = r.len() as u64;
                r[above..].iter().map(|&v| du.min(off[v as usize + 1] - off[v as usize])).sum::<u64>().saturating_mul(scale)
            },
            u64::saturating_add,
        );
        if up.min(down) > least.saturating_add(copy) {
            return None;
        }
    }
    Some(IdOrder { offsets: off, targets: tg, upward: up <= down })
}

/// Sums `f(u, scale)` over a stratified sample of the rows of `off`: every row at least
/// [`COST_EXACT_DEGREE`] long (scale 1) and every k-th other row (scale k: k at least
/// [`COST_SAMPLE`], larger on graphs of more than [`COST_SAMPLE_ROWS`] times as many nodes).
/// Per block of rows, the sampled short rows are a strided loop and the long rows a scan of
/// the offsets whose test is almost never taken (one loop testing both mispredicted on the
/// sample's pattern).
fn sampled_rows<T: Send + Default>(off: &[u64], f: impl Fn(usize, u64) -> T + Sync, add: impl Fn(T, T) -> T + Sync + Send) -> T {
    const BLOCK: usize = 4096;
    let n = off.len() - 1;
    let stride = (n / COST_SAMPLE_ROWS).clamp(COST_SAMPLE, BLOCK);
    (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|c| {
            let rows = c * BLOCK..n.min((c + 1) * BLOCK);
            let mut sum = T::default();
            for u in rows.clone().step_by(stride) {
                if off[u + 1] - off[u] < COST_EXACT_DEGREE {
                    sum = add(sum, f(u, stride as u64));
                }
            }
            for u in rows {
                if off[u + 1] - off[u] >= COST_EXACT_DEGREE {
                    sum = add(sum, f(u, 1));
                }
            }
            sum
        })
        .reduce(T::default, &add)
}

/// Orients `g`'s edges by (degree, id), keeping an edge only if `keep` says so (see the
/// module docs).
pub fn orient(g: &CsrGraph, keep: Option<KeepFn>) -> Oriented {
    let n = g.num_nodes();
    let off = g.offsets();
    let tg = g.targets();
    let directed = g.orientation() == Orientation::Directed;
    // Rank by (undirected degree, id) as one key per node (out + in degree for directed
    // input; any total order is exact, this one bounds the work). Undirected, the key is
    // computed from the graph's own offsets ([`rank_key`]): no array of n keys to allocate
    // (fresh pages cost more than the two loads on small graphs).
    let rank: Vec<u64> = if directed {
        let mut rank: Vec<u64> = (0..n as u32).map(|v| rank_key(off, v)).collect();
        for &t in tg {
            rank[t as usize] = rank[t as usize].saturating_add(1 << 32);
        }
        rank
    } else {
        Vec::new()
    };
    let key = |v: u32| if directed { rank[v as usize] } else { rank_key(off, v) };
    let below = |u: u32, v: u32| key(u) < key(v);
    let kept = |u: u32, e: usize| keep.is_none_or(|k| k(u, e));
    if !directed {
        // Two passes over the rows (count, then fill disjoint slices); the mask runs once per
        // edge, its decisions kept in between.
        let flags: Option<Vec<u8>> = keep.map(|k| {
            let mut f = vec![0u8; tg.len()];
            f.par_chunks_mut(1 << 16).enumerate().for_each(|(c, out)| {
                let first = c << 16;
                // Rows are found by edge: the mask needs the row's node.
                let mut u = off.partition_point(|&o| o <= first as u64) as u32 - 1;
                for (i, x) in out.iter_mut().enumerate() {
                    let e = first + i;
                    while off[u as usize + 1] as usize <= e {
                        u += 1;
                    }
                    let v = tg[e];
                    *x = (v != u && below(u, v) && k(u, e)) as u8;
                }
            });
            f
        });
        // Generic (not a closure over `dyn FnMut`): both passes inline their per-entry work.
        fn each(u: u32, off: &[u64], tg: &[u32], flags: Option<&[u8]>, f: impl FnMut(u32, bool)) {
            let (lo, hi) = (off[u as usize] as usize, off[u as usize + 1] as usize);
            let row = &tg[lo..hi];
            let ku = rank_key(off, u);
            match flags {
                None => kept_entries(row, |v| rank_key(off, v) > ku, f),
                Some(flags) => {
                    let mut k = flags[lo..hi].iter();
                    kept_entries(row, |_| k.next() == Some(&1), f)
                }
            }
        }
        // Row lengths in place of the offsets, then their running sum.
        let mut offsets = vec![0u64; n + 1];
        offsets[1..].par_iter_mut().enumerate().with_min_len(256).for_each(|(u, len)| {
            each(u as u32, off, tg, flags.as_deref(), |_, keep| *len += keep as u64);
        });
        for u in 0..n {
            offsets[u + 1] += offsets[u];
        }
        let mut targets = vec![0u32; offsets[n] as usize];
        // Disjoint output per block of rows (a slice per row would cost a vector of n slices).
        const ROWS: usize = 512;
        let mut blocks: Vec<(usize, &mut [u32])> = Vec::with_capacity(n.div_ceil(ROWS));
        let mut rest: &mut [u32] = &mut targets;
        for first in (0..n).step_by(ROWS) {
            let last = (first + ROWS).min(n);
            let (head, tail) = rest.split_at_mut((offsets[last] - offsets[first]) as usize);
            blocks.push((first, head));
            rest = tail;
        }
        blocks.into_par_iter().for_each(|(first, out)| {
            let mut i = 0;
            for u in first..(first + ROWS).min(n) {
                each(u as u32, off, tg, flags.as_deref(), |v, keep| {
                    if keep {
                        out[i] = v;
                        i += 1;
                    }
                });
            }
        });
        return Oriented { offsets, targets, symmetrized: false };
    }
    let rows: Vec<Vec<u32>> = {
        // Each stored edge, by its lower-ranked end; the first stored direction decides.
        let mut pairs: Vec<(u32, u32, usize)> = (0..n as u32)
            .into_par_iter()
            .flat_map_iter(|u| {
                g.row(u).filter_map(move |e| {
                    let v = tg[e];
                    (v != u).then(|| if below(u, v) { (u, v, e) } else { (v, u, e) })
                })
            })
            .collect();
        pairs.par_sort_unstable();
        pairs.dedup_by_key(|p| (p.0, p.1));
        let mut rows = vec![Vec::new(); n];
        for (a, b, e) in pairs {
            // The mask sees the edge in the row it is stored in.
            let from = if g.row(a).contains(&e) { a } else { b };
            if kept(from, e) {
                rows[a as usize].push(b);
            }
        }
        rows
    };
    let lens: Vec<u64> = rows.iter().map(|r| r.len() as u64).collect();
    Oriented { offsets: exclusive_sum(&lens), targets: rows.into_iter().flatten().collect(), symmetrized: directed }
}

/// Node `v`'s (degree, id) rank as one key, from the row offsets `off`: one comparison per
/// test.
#[inline(always)]
fn rank_key(off: &[u64], v: u32) -> u64 {
    ((off[v as usize + 1] - off[v as usize]).min(u32::MAX as u64) << 32) | v as u64
}

/// Calls `f(v, kept)` for each entry `v` of a sorted row, in order: kept is whether it is the
/// first copy of `v` and `above(v)` says so (asked once per entry, in order). Branch-free:
/// `last` starts unlike the row's first entry.
#[inline(always)]
fn kept_entries(row: &[u32], mut above: impl FnMut(u32) -> bool, mut f: impl FnMut(u32, bool)) {
    let mut last = row.first().map_or(0, |&x| x ^ 1);
    for &v in row {
        let keep = above(v) & (v != last);
        f(v, keep);
        last = v;
    }
}

/// The triangles closed by `a`'s long oriented row `ra`: marked in `marks`, each `b`'s row
/// tested against it (the counting form of [`for_each_triangle`]'s bitmap branch).
#[inline]
fn count_marked<O: OrientedRows + ?Sized>(o: &O, ra: &[u32], marks: &mut RowMarks) -> u64 {
    marks.mark(ra);
    let found = ra.iter().map(|&b| o.row(b).iter().map(|&w| marks.has(w) as u64).sum::<u64>()).sum();
    marks.clear(ra);
    found
}

/// Calls `f(b, w)` for every triangle whose lowest-ranked node is `a` (edges `a → b`, `a → w`,
/// `b → w`): a long row of `a` is marked in a bitmap and each `b`'s row tested against it;
/// a short one is intersected with each `b`'s row. Returns the length of `a`'s oriented row.
#[inline]
fn for_each_triangle<O: OrientedRows + ?Sized>(o: &O, a: u32, marks: &mut RowMarks, mut f: impl FnMut(u32, u32)) -> usize {
    let ra = o.row(a);
    if ra.len() >= BITMAP_ROW {
        marks.mark(ra);
        for &b in ra {
            for &w in o.row(b) {
                if marks.has(w) {
                    f(b, w);
                }
            }
        }
        marks.clear(ra);
    } else if ra.len() >= 2 {
        // A row of one entry closes no triangle at `a` (it needs two oriented edges).
        for (i, &b) in ra.iter().enumerate() {
            let rest = o.third_candidates(ra, i);
            if !rest.is_empty() {
                intersect(rest, o.merge_row(b), |k, _| f(b, rest[k]));
            }
        }
    }
    ra.len()
}

/// Counts the triangles of `g` (symmetrized first if directed), all edges kept, with per-node
/// counts.
pub fn count(g: &CsrGraph) -> TriangleCounts {
    count_masked(g, None, Detail::PerNode)
}

/// Counts the triangles whose three edges `keep` keeps (see the module docs for which stored
/// copy of an edge the mask sees).
pub fn count_masked(g: &CsrGraph, keep: Option<KeepFn>, detail: Detail) -> TriangleCounts {
    plan(g, keep).count(detail)
}

/// Rows per task of [`count_oriented`]'s total count.
const COUNT_CHUNK: usize = 1024;

/// One process's part of a count split over several (`mpirun -np N wayfarer triangles`): part
/// `part` of `parts` contiguous ranges of rows of about equal estimated work. Each triangle is
/// found at one row, so the parts' totals, per-node counts and kept edges sum to the whole
/// count's, for any number of parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// Which part (0-based).
    pub part: usize,
    /// Of how many.
    pub parts: usize,
}

impl Share {
    /// The whole count.
    pub const WHOLE: Share = Share { part: 0, parts: 1 };

    /// Part `part` of `parts` (an error unless `part < parts`).
    pub fn new(part: usize, parts: usize) -> Result<Share, WalkError> {
        if part >= parts {
            return Err(WalkError::param("share", format!("part {part} of {parts} does not exist")));
        }
        Ok(Share { part, parts })
    }

    /// The rows of `o` this part counts: cut where the prefix of the rows' estimated merge
    /// work (each oriented edge a -> b: both rows' lengths) crosses `part / parts` of the
    /// total, the same on every process.
    pub fn rows<O: OrientedRows>(&self, o: &O) -> std::ops::Range<usize> {
        let n = o.num_nodes();
        if self.parts <= 1 {
            return 0..n;
        }
        let len = |v: u32| o.row(v).len() as u64;
        let work: Vec<u64> = (0..n as u32).into_par_iter().map(|a| o.row(a).iter().map(|&b| len(a) + len(b) + 1).sum()).collect();
        let total: u64 = work.iter().sum();
        let cut = |p: usize| {
            if p == 0 {
                return 0;
            }
            if p >= self.parts {
                return n;
            }
            let goal = (total as u128 * p as u128 / self.parts as u128) as u64;
            let mut acc = 0u64;
            work.iter()
                .position(|&w| {
                    acc += w;
                    acc > goal
                })
                .unwrap_or(n)
        };
        cut(self.part)..cut(self.part + 1)
    }
}

/// [`count_masked`] on an already oriented graph.
pub fn count_oriented<O: OrientedRows>(o: &O, detail: Detail) -> TriangleCounts {
    count_oriented_share(o, detail, Share::WHOLE)
}

/// [`count_oriented`] at `share`'s rows only: its total, per-node counts and kept edges are
/// that part's (they sum over the parts to the whole count's); the degrees are the whole
/// graph's.
pub fn count_oriented_share<O: OrientedRows>(o: &O, detail: Detail, share: Share) -> TriangleCounts {
    let n = o.num_nodes();
    let rows = share.rows(o);
    if detail == Detail::Total {
        // for_each_triangle's work, counting only; the oriented edges are counted as the
        // rows are read.
        // Rows in chunks with a plain inner loop: a call per row cost as much as a short
        // row's work.
        let (total, edges) = (0..rows.len().div_ceil(COUNT_CHUNK))
            .into_par_iter()
            .map_init(
                || (RowMarks::new(n), vec![0u32; COUNT_CHUNK]),
                |(marks, todo), c| {
                    // First the rows that may close a triangle, listed without a branch on
                    // each; the others' edges counted as they are passed.
                    let chunk = rows.start + c * COUNT_CHUNK..rows.end.min(rows.start + (c + 1) * COUNT_CHUNK);
                    let (n, edges) = o.list_rows(chunk, todo);
                    let mut sum = (0, edges);
                    for &a in &todo[..n] {
                        let (found, edges) = o.count_row(a, marks);
                        sum = (sum.0 + found, sum.1 + edges);
                    }
                    sum
                },
            )
            .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
        return o.counts_of(total, Vec::new(), edges);
    }
    let per_node: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let (total, edges) = (rows.start as u32..rows.end as u32)
        .into_par_iter()
        .with_min_len(64)
        .map_init(
            || RowMarks::new(n),
            |marks, a| {
                let mut here = 0u64;
                // `b` changes rarely between calls: its adds are batched.
                let (mut last_b, mut at_b) = (u32::MAX, 0u64);
                let edges = for_each_triangle(o, a, marks, |b, w| {
                    here += 1;
                    if b != last_b {
                        if at_b > 0 {
                            per_node[last_b as usize].fetch_add(at_b, Ordering::Relaxed);
                        }
                        (last_b, at_b) = (b, 0);
                    }
                    at_b += 1;
                    per_node[w as usize].fetch_add(1, Ordering::Relaxed);
                });
                if at_b > 0 {
                    per_node[last_b as usize].fetch_add(at_b, Ordering::Relaxed);
                }
                if here > 0 {
                    per_node[a as usize].fetch_add(here, Ordering::Relaxed);
                }
                (here, edges as u64)
            },
        )
        .reduce(|| (0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
    o.counts_of(total, per_node.into_iter().map(AtomicU64::into_inner).collect(), edges)
}

/// [`count_masked`] with a compiled mask (a `#[mask]` function, or any walk whose weight reads
/// no walker history): an edge is kept when the mask's weight is positive. A NaN or negative
/// weight is an error naming the edge.
pub fn count_with<W: crate::Walk>(g: &CsrGraph, mask: &W, detail: Detail) -> Result<TriangleCounts, WalkError> {
    Ok(count_oriented(&orient_with(g, mask)?, detail))
}

/// [`orient`] with a compiled mask (see [`count_with`]).
pub fn orient_with<W: crate::Walk>(g: &CsrGraph, mask: &W) -> Result<Oriented, WalkError> {
    let bad: std::sync::Mutex<Option<WalkError>> = std::sync::Mutex::new(None);
    let o = crate::walk::with_edge_weight(g, mask, |weight| {
        let keep = |u: u32, e: usize| {
            let x = weight(u, e);
            if !(x >= 0.0) {
                let mut slot = bad.lock().unwrap_or_else(|p| p.into_inner());
                let (src, dst) = (g.id_map().original(u), g.id_map().original(g.targets()[e]));
                slot.get_or_insert(WalkError::BadWeight { walk: mask.name().into(), weight: x, src, dst, step: 0 });
            }
            x > 0.0
        };
        orient(g, Some(&keep))
    })?;
    match bad.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(o),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::CsrParts;

    fn undirected(n: u32, edges: &[(u32, u32)]) -> CsrGraph {
        let mut rows = vec![Vec::new(); n as usize];
        for &(u, v) in edges {
            rows[u as usize].push(v);
            rows[v as usize].push(u);
        }
        let mut p = CsrParts { offsets: vec![0], ..Default::default() };
        for r in &mut rows {
            r.sort_unstable();
            p.targets.extend(r.iter());
            p.offsets.push(p.targets.len() as u64);
        }
        CsrGraph::from_parts(p, Orientation::Undirected).unwrap()
    }

    /// A graph with `n` nodes and about `m` random undirected edges (ids from a xorshift), a
    /// hub at `hub` joined to every `hub_every`-th node when given.
    fn random_graph(n: u32, m: usize, seed: u64, hub: Option<(u32, u32)>) -> CsrGraph {
        let mut x = seed | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut edges = std::collections::BTreeSet::new();
        while edges.len() < m {
            let (u, v) = ((next() % n as u64) as u32, (next() % n as u64) as u32);
            if u != v {
                edges.insert((u.min(v), u.max(v)));
            }
        }
        if let Some((h, every)) = hub {
            for v in (0..n).step_by(every as usize).filter(|&v| v != h) {
                edges.insert((h.min(v), h.max(v)));
            }
        }
        undirected(n, &edges.into_iter().collect::<Vec<_>>())
    }

    #[test]
    fn id_order_in_place_counts_what_the_built_orientation_counts() {
        for seed in 1..6 {
            let g = random_graph(300, 1500, seed, None);
            let Plan::InPlace(view) = plan(&g, None) else { panic!("a flat graph is counted in place") };
            for detail in [Detail::Total, Detail::PerNode] {
                let want = count_oriented(&orient(&g, None), detail);
                assert_eq!(count_oriented(&view, detail), want, "seed {seed}");
            }
            assert_eq!(view.num_edges(), 1500);
        }
    }

    /// `g` with a self loop on every `every`th node (an entry in its own row).
    fn with_self_loops(g: &CsrGraph, every: u32) -> CsrGraph {
        let mut p = CsrParts { offsets: vec![0], ..Default::default() };
        for u in 0..g.num_nodes() as u32 {
            let mut row = g.neighbors(u).to_vec();
            if u % every == 0 {
                row.push(u);
                row.sort_unstable();
            }
            p.targets.extend(row);
            p.offsets.push(p.targets.len() as u64);
        }
        CsrGraph::from_parts(p, Orientation::Undirected).unwrap()
    }

    #[test]
    fn both_id_orders_skip_only_rows_that_close_nothing() {
        // Sparse graphs (most rows of 0 to 2 entries, where `may_close` skips rows) with a hub
        // at a low and at a high id, self loops on some rows: both directions count what the
        // copy counts, with the same oriented edges.
        for (seed, hub) in [(1, None), (2, Some((3, 5))), (3, Some((596, 4)))] {
            let looped = with_self_loops(&random_graph(600, 700, seed, hub), 11);
            let want = count_oriented(&orient(&looped, None), Detail::Total);
            assert!(want.total > 0, "seed {seed}: the graph has triangles to miss");
            for upward in [false, true] {
                let view = IdOrder { offsets: looped.offsets(), targets: looped.targets(), upward };
                assert_eq!(count_oriented(&view, Detail::Total), want, "seed {seed}, upward {upward}");
            }
        }
    }

    #[test]
    fn id_order_in_place_skips_self_loops() {
        // Every seventh node gets a self loop (one entry in its row): in place is still taken
        // and counts what the copy counts, with the same edges.
        let g = random_graph(400, 2400, 3, Some((399, 2)));
        let looped = with_self_loops(&g, 7);
        let plan = plan(&looped, None);
        assert!(matches!(plan, Plan::InPlace(_)));
        for detail in [Detail::Total, Detail::PerNode] {
            let want = count_oriented(&orient(&looped, None), detail);
            assert_eq!(plan.count(detail), want, "{detail:?}");
            assert_eq!(want, count_oriented(&orient(&g, None), detail), "the loops close no triangle");
        }
    }

    #[test]
    fn the_plan_builds_a_copy_where_id_order_costs_more() {
        // A hub at id 0 joined to every node: upward id order points all its edges out of it,
        // downward order all into it (its row below it is empty).
        let g = random_graph(2000, 4000, 7, Some((0, 1)));
        let p = plan(&g, None);
        assert!(matches!(&p, Plan::InPlace(o) if o.row(0).is_empty()), "downward");
        for detail in [Detail::Total, Detail::PerNode] {
            assert_eq!(p.count(detail), count_oriented(&orient(&g, None), detail), "downward, {detail:?}");
        }
        // At the highest id: upward.
        let g = random_graph(2000, 4000, 7, Some((1999, 1)));
        let p = plan(&g, None);
        assert!(matches!(&p, Plan::InPlace(o) if o.row(1999).is_empty() && o.row(0).first() > Some(&0)), "upward");
        for detail in [Detail::Total, Detail::PerNode] {
            assert_eq!(p.count(detail), count_oriented(&orient(&g, None), detail), "upward, {detail:?}");
        }
        // Hubs at both ends: neither id order is cheap.
        let mut edges: Vec<(u32, u32)> =
            (0..2000u32).flat_map(|u| g.neighbors(u).iter().filter(move |&&v| u < v).map(move |&v| (u, v))).collect();
        edges.extend((1..2000).map(|v| (0, v)));
        edges.sort_unstable();
        edges.dedup();
        let two = undirected(2000, &edges);
        assert!(matches!(plan(&two, None), Plan::Built(_)));
        assert_eq!(plan(&two, None).count(Detail::Total).total, count_oriented(&orient(&two, None), Detail::Total).total);
        // Repeated edges and masks are left to the copy, which skips repeats and asks the mask.
        let p = CsrParts { offsets: vec![0, 2, 4], targets: vec![1, 1, 0, 0], ..Default::default() };
        let multi = CsrGraph::from_parts(p, Orientation::Undirected).unwrap();
        assert!(matches!(plan(&multi, None), Plan::Built(_)));
        let g = random_graph(300, 1500, 1, None);
        let keep_all = |_: u32, _: usize| true;
        assert!(matches!(plan(&g, Some(&keep_all)), Plan::Built(_)));
    }

    #[test]
    fn classic_small_graphs() {
        // K4: 4 triangles, every node in 3, clustering 1.
        let k4 = undirected(4, &[(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]);
        let c = count(&k4);
        assert_eq!(c.total, 4);
        assert_eq!(c.per_node, vec![3; 4]);
        assert_eq!(c.clustering(), vec![1.0; 4]);
        // A 5-cycle has none; a bowtie (two triangles sharing node 2) has 2.
        assert_eq!(count(&undirected(5, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)])).total, 0);
        let bowtie = count(&undirected(5, &[(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (2, 4)]));
        assert_eq!(bowtie.total, 2);
        assert_eq!(bowtie.per_node, vec![1, 1, 2, 1, 1]);
        assert_eq!(bowtie.clustering()[2], 2.0 * 2.0 / (4.0 * 3.0));
    }
}
