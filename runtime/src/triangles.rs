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

use crate::error::WalkError;
use crate::graph::intersect::{BITMAP_ROW, RowMarks, intersect};
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

impl Oriented {
    /// Node `a`'s oriented row.
    pub fn row(&self, a: u32) -> &[u32] {
        &self.targets[self.offsets[a as usize] as usize..self.offsets[a as usize + 1] as usize]
    }

    /// Nodes.
    pub fn num_nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The counts' record for a total and per-node counts found on this graph (any backend).
    pub fn counts(&self, total: u64, per_node: Vec<u64>) -> TriangleCounts {
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
        TriangleCounts { total, per_node, degree, kept_edges: self.targets.len() as u64, symmetrized: self.symmetrized }
    }
}

/// Orients `g`'s edges by (degree, id), keeping an edge only if `keep` says so (see the
/// module docs).
pub fn orient(g: &CsrGraph, keep: Option<KeepFn>) -> Oriented {
    let n = g.num_nodes();
    let off = g.offsets();
    let tg = g.targets();
    let directed = g.orientation() == Orientation::Directed;
    // Rank by the undirected degree (out + in for directed input; any total order is exact,
    // this one bounds the work).
    let mut degree: Vec<u64> = (0..n).map(|v| off[v + 1] - off[v]).collect();
    if directed {
        for &t in tg {
            degree[t as usize] += 1;
        }
    }
    let below = |u: u32, v: u32| (degree[u as usize], u) < (degree[v as usize], v);
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
        let take = |u: u32, e: usize, v: u32| match &flags {
            Some(f) => f[e] == 1,
            None => v != u && below(u, v),
        };
        let each = |u: u32, f: &mut dyn FnMut(u32)| {
            let mut last = None;
            for e in g.row(u) {
                let v = tg[e];
                if last == Some(v) {
                    continue;
                }
                last = Some(v);
                if v != u && take(u, e, v) {
                    f(v);
                }
            }
        };
        let counts: Vec<u64> = (0..n as u32)
            .into_par_iter()
            .map(|u| {
                let mut c = 0u64;
                each(u, &mut |_| c += 1);
                c
            })
            .collect();
        let offsets = exclusive_sum(&counts);
        let mut targets = vec![0u32; offsets[n] as usize];
        let mut slices: Vec<&mut [u32]> = Vec::with_capacity(n);
        let mut rest: &mut [u32] = &mut targets;
        for &c in &counts {
            let (head, tail) = rest.split_at_mut(c as usize);
            slices.push(head);
            rest = tail;
        }
        slices.into_par_iter().enumerate().for_each(|(u, out)| {
            let mut i = 0;
            each(u as u32, &mut |v| {
                out[i] = v;
                i += 1;
            });
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

/// Calls `f(b, w)` for every triangle whose lowest-ranked node is `a` (edges `a → b`, `a → w`,
/// `b → w`): a long row of `a` is marked in a bitmap and each `b`'s row tested against it;
/// a short one is intersected with each `b`'s row.
#[inline]
fn for_each_triangle(o: &Oriented, a: u32, marks: &mut RowMarks, mut f: impl FnMut(u32, u32)) {
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
    } else {
        for &b in ra {
            let rb = o.row(b);
            intersect(ra, rb, |i, _| f(b, ra[i]));
        }
    }
}

/// Counts the triangles of `g` (symmetrized first if directed), all edges kept, with per-node
/// counts.
pub fn count(g: &CsrGraph) -> TriangleCounts {
    count_masked(g, None, Detail::PerNode)
}

/// Counts the triangles whose three edges `keep` keeps (see the module docs for which stored
/// copy of an edge the mask sees).
pub fn count_masked(g: &CsrGraph, keep: Option<KeepFn>, detail: Detail) -> TriangleCounts {
    count_oriented(&orient(g, keep), detail)
}

/// [`count_masked`] on an already oriented graph.
pub fn count_oriented(o: &Oriented, detail: Detail) -> TriangleCounts {
    let n = o.num_nodes();
    if detail == Detail::Total {
        let total = (0..n as u32)
            .into_par_iter()
            .with_min_len(64)
            .map_init(
                || RowMarks::new(n),
                |marks, a| {
                    let mut found = 0u64;
                    for_each_triangle(o, a, marks, |_, _| found += 1);
                    found
                },
            )
            .sum();
        return o.counts(total, Vec::new());
    }
    let per_node: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let total: u64 = (0..n as u32)
        .into_par_iter()
        .with_min_len(64)
        .map_init(
            || RowMarks::new(n),
            |marks, a| {
                let mut here = 0u64;
                // `b` changes rarely between calls: its adds are batched.
                let (mut last_b, mut at_b) = (u32::MAX, 0u64);
                for_each_triangle(o, a, marks, |b, w| {
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
                here
            },
        )
        .sum();
    o.counts(total, per_node.into_iter().map(AtomicU64::into_inner).collect())
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
