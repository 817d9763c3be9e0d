//! Building a CSR from a stream of edges without ever holding an edge list.
//!
//! Sources (text files, generators) can replay their edges chunk by chunk, deterministically.
//! The builder replays them twice: once to count degrees, once to scatter each edge straight
//! into its final slot. Peak memory is the final CSR plus one counter per node, whatever the
//! input size; the price is parsing (or generating) twice, which parallelises perfectly.
//! Scattering with atomic cursors leaves rows in a scheduling-dependent order, so every row
//! is then sorted by a total key (destination, weight, label, timestamp): the result is the
//! same on any thread count.

use super::{Buf, CsrGraph, IdMap, Orientation};
use crate::error::GraphError;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// One edge as produced by a source. Unused attributes are ignored by the builder.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EdgeRecord {
    /// Source node (internal id).
    pub src: u32,
    /// Destination node (internal id).
    pub dst: u32,
    /// Weight (used if the build has weights).
    pub weight: f32,
    /// Label (used if the build has labels).
    pub label: u32,
    /// Timestamp (used if the build has timestamps).
    pub time: i64,
}

/// What to do with parallel edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dedup {
    /// Keep every parallel edge (a multigraph).
    #[default]
    Keep,
    /// Keep one edge per (source, destination): the first in sorted order, i.e. the one
    /// with the smallest weight, then label, then timestamp.
    KeepFirst,
}

/// How to build a graph from a source.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Add the reverse of every edge (a self loop is added once).
    pub symmetrize: bool,
    /// Parallel-edge policy.
    pub dedup: Dedup,
    /// Drop edges `v -> v`.
    pub drop_self_loops: bool,
    /// Keep the sources' weights.
    pub weights: bool,
    /// Keep the sources' labels.
    pub labels: bool,
    /// Keep the sources' timestamps.
    pub timestamps: bool,
}

/// A source of edges that can be replayed chunk by chunk, identically each time.
pub(crate) trait EdgeSource: Sync {
    fn num_chunks(&self) -> usize;
    fn for_each_in_chunk(&self, chunk: usize, f: &mut dyn FnMut(EdgeRecord));
}

/// A raw pointer that may be shared across threads because every writer touches disjoint
/// elements (guaranteed by the caller's indexing).
#[derive(Clone, Copy)]
struct SharedPtr<T>(*mut T);
// SAFETY: used only for writes to provably disjoint indices (atomic cursors or disjoint rows).
unsafe impl<T> Send for SharedPtr<T> {}
unsafe impl<T> Sync for SharedPtr<T> {}
impl<T> SharedPtr<T> {
    /// # Safety
    /// `i` is in bounds and no other thread accesses element `i` concurrently.
    #[inline(always)]
    unsafe fn write(self, i: usize, v: T) {
        unsafe { self.0.add(i).write(v) }
    }
    /// # Safety
    /// The range is in bounds and no other thread accesses it concurrently.
    #[inline(always)]
    unsafe fn slice<'a>(self, r: std::ops::Range<usize>) -> &'a mut [T] {
        unsafe { std::slice::from_raw_parts_mut(self.0.add(r.start), r.len()) }
    }
}

struct Arrays {
    targets: Vec<u32>,
    weights: Option<Vec<f32>>,
    labels: Option<Vec<u32>>,
    times: Option<Vec<i64>>,
}

pub(crate) fn build<S: EdgeSource>(num_nodes: usize, source: &S, opts: &BuildOptions, ids: IdMap) -> Result<CsrGraph, GraphError> {
    let n = num_nodes;
    let keep = |e: &EdgeRecord| !(opts.drop_self_loops && e.src == e.dst);
    let degree: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    (0..source.num_chunks()).into_par_iter().for_each(|c| {
        source.for_each_in_chunk(c, &mut |e| {
            if keep(&e) {
                degree[e.src as usize].fetch_add(1, Ordering::Relaxed);
                if opts.symmetrize && e.src != e.dst {
                    degree[e.dst as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    });
    let mut offsets = Vec::with_capacity(n + 1);
    let mut total = 0u64;
    offsets.push(0);
    for d in &degree {
        total += d.load(Ordering::Relaxed);
        offsets.push(total);
    }
    let m = total as usize;
    for (c, o) in degree.iter().zip(&offsets) {
        c.store(*o, Ordering::Relaxed);
    }
    let cursor = degree;
    let mut arr = Arrays {
        targets: vec![0u32; m],
        weights: opts.weights.then(|| vec![0f32; m]),
        labels: opts.labels.then(|| vec![0u32; m]),
        times: opts.timestamps.then(|| vec![0i64; m]),
    };
    {
        let t = SharedPtr(arr.targets.as_mut_ptr());
        let w = arr.weights.as_mut().map(|v| SharedPtr(v.as_mut_ptr()));
        let l = arr.labels.as_mut().map(|v| SharedPtr(v.as_mut_ptr()));
        let ts = arr.times.as_mut().map(|v| SharedPtr(v.as_mut_ptr()));
        let put = |src: u32, dst: u32, e: &EdgeRecord| {
            let pos = cursor[src as usize].fetch_add(1, Ordering::Relaxed) as usize;
            // Replaying a source must give the same edges; a source that does not would
            // overflow its row, which we refuse to turn into memory corruption.
            assert!(pos < offsets[src as usize + 1] as usize, "edge source is not deterministic");
            // SAFETY: each cursor hands out every slot of its row exactly once.
            unsafe {
                t.write(pos, dst);
                if let Some(w) = w {
                    w.write(pos, e.weight);
                }
                if let Some(l) = l {
                    l.write(pos, e.label);
                }
                if let Some(ts) = ts {
                    ts.write(pos, e.time);
                }
            }
        };
        (0..source.num_chunks()).into_par_iter().for_each(|c| {
            source.for_each_in_chunk(c, &mut |e| {
                if keep(&e) {
                    put(e.src, e.dst, &e);
                    if opts.symmetrize && e.src != e.dst {
                        put(e.dst, e.src, &e);
                    }
                }
            })
        });
    }
    drop(cursor);
    sort_rows(&offsets, &mut arr);
    let (offsets, arr) = match opts.dedup {
        Dedup::Keep => (offsets, arr),
        Dedup::KeepFirst => dedup_rows(&offsets, arr),
    };
    Ok(CsrGraph {
        offsets: Buf::owned(offsets),
        targets: Buf::owned(arr.targets),
        weights: arr.weights.map(Buf::owned),
        labels: arr.labels.map(Buf::owned),
        timestamps: arr.times.map(Buf::owned),
        node_props: Vec::new(),
        ids,
        orientation: if opts.symmetrize { Orientation::Undirected } else { Orientation::Directed },
        edge_filter: Default::default(),
        repeats: match opts.dedup {
            Dedup::KeepFirst => std::sync::OnceLock::from(false),
            Dedup::Keep => Default::default(),
        },
    })
}

/// Splits nodes into chunks holding roughly equal numbers of edges, for parallel row work.
pub(crate) fn row_chunks(offsets: &[u64], target_edges: u64) -> Vec<std::ops::Range<usize>> {
    let n = offsets.len() - 1;
    let mut chunks = Vec::new();
    let mut start = 0;
    while start < n {
        let goal = offsets[start] + target_edges.max(1);
        let mut end = offsets.partition_point(|&o| o < goal).clamp(start + 1, n);
        end = end.max(start + 1).min(n);
        chunks.push(start..end);
        start = end;
    }
    chunks
}

fn sort_rows(offsets: &[u64], arr: &mut Arrays) {
    let t = SharedPtr(arr.targets.as_mut_ptr());
    let w = arr.weights.as_mut().map(|v| SharedPtr(v.as_mut_ptr()));
    let l = arr.labels.as_mut().map(|v| SharedPtr(v.as_mut_ptr()));
    let ts = arr.times.as_mut().map(|v| SharedPtr(v.as_mut_ptr()));
    let attrs = w.is_some() || l.is_some() || ts.is_some();
    row_chunks(offsets, 1 << 16).into_par_iter().for_each(|nodes| {
        let mut scratch: Vec<(u32, u32, u32, i64)> = Vec::new();
        for v in nodes {
            let r = offsets[v] as usize..offsets[v + 1] as usize;
            // SAFETY: rows are disjoint and each row belongs to exactly one chunk.
            let tr = unsafe { t.slice(r.clone()) };
            if !attrs {
                if !tr.is_sorted() {
                    tr.sort_unstable();
                }
                continue;
            }
            let mut wr = w.map(|p| unsafe { p.slice(r.clone()) });
            let mut lr = l.map(|p| unsafe { p.slice(r.clone()) });
            let mut sr = ts.map(|p| unsafe { p.slice(r.clone()) });
            scratch.clear();
            scratch.extend((0..r.len()).map(|i| {
                (tr[i], wr.as_ref().map_or(0, |x| x[i].to_bits()), lr.as_ref().map_or(0, |x| x[i]), sr.as_ref().map_or(0, |x| x[i]))
            }));
            if scratch.is_sorted() {
                continue;
            }
            // Weights are finite and >= 0, so their bit patterns order like the values.
            scratch.sort_unstable();
            for (i, &(d, wb, lb, tb)) in scratch.iter().enumerate() {
                tr[i] = d;
                if let Some(x) = wr.as_mut() {
                    x[i] = f32::from_bits(wb);
                }
                if let Some(x) = lr.as_mut() {
                    x[i] = lb;
                }
                if let Some(x) = sr.as_mut() {
                    x[i] = tb;
                }
            }
        }
    });
}

fn dedup_rows(offsets: &[u64], arr: Arrays) -> (Vec<u64>, Arrays) {
    let n = offsets.len() - 1;
    let kept: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|v| {
            let row = &arr.targets[offsets[v] as usize..offsets[v + 1] as usize];
            row.iter().enumerate().filter(|&(i, &d)| i == 0 || row[i - 1] != d).count() as u64
        })
        .collect();
    let mut new_off = Vec::with_capacity(n + 1);
    let mut total = 0u64;
    new_off.push(0);
    for k in &kept {
        total += k;
        new_off.push(total);
    }
    let m = total as usize;
    let mut out = Arrays {
        targets: vec![0; m],
        weights: arr.weights.as_ref().map(|_| vec![0.0; m]),
        labels: arr.labels.as_ref().map(|_| vec![0; m]),
        times: arr.times.as_ref().map(|_| vec![0; m]),
    };
    let t = SharedPtr(out.targets.as_mut_ptr());
    let w = out.weights.as_mut().map(|v| SharedPtr(v.as_mut_ptr()));
    let l = out.labels.as_mut().map(|v| SharedPtr(v.as_mut_ptr()));
    let ts = out.times.as_mut().map(|v| SharedPtr(v.as_mut_ptr()));
    row_chunks(offsets, 1 << 16).into_par_iter().for_each(|nodes| {
        for v in nodes {
            let mut pos = new_off[v] as usize;
            let (a, b) = (offsets[v] as usize, offsets[v + 1] as usize);
            for i in a..b {
                if i > a && arr.targets[i - 1] == arr.targets[i] {
                    continue;
                }
                // SAFETY: output rows are disjoint; `pos` stays inside row v by construction.
                unsafe {
                    t.write(pos, arr.targets[i]);
                    if let (Some(p), Some(x)) = (w, &arr.weights) {
                        p.write(pos, x[i]);
                    }
                    if let (Some(p), Some(x)) = (l, &arr.labels) {
                        p.write(pos, x[i]);
                    }
                    if let (Some(p), Some(x)) = (ts, &arr.times) {
                        p.write(pos, x[i]);
                    }
                }
                pos += 1;
            }
        }
    });
    (new_off, out)
}

/// Sorts the rows of a graph whose arrays are owned (from `CsrGraph::from_parts`).
pub(crate) fn sort_rows_owned(g: &mut CsrGraph) {
    let take_u32 = |b: &mut Buf<u32>| std::mem::replace(b, Buf::owned(Vec::new())).to_vec();
    let mut arr = Arrays {
        targets: take_u32(&mut g.targets),
        weights: g.weights.take().map(|b| b.to_vec()),
        labels: g.labels.take().map(|b| b.to_vec()),
        times: g.timestamps.take().map(|b| b.to_vec()),
    };
    sort_rows(&g.offsets, &mut arr);
    g.targets = Buf::owned(arr.targets);
    g.weights = arr.weights.map(Buf::owned);
    g.labels = arr.labels.map(Buf::owned);
    g.timestamps = arr.times.map(Buf::owned);
}

/// An in-memory edge list as a source (for tests and small inputs).
pub(crate) struct SliceSource<'a>(pub &'a [EdgeRecord]);

impl EdgeSource for SliceSource<'_> {
    fn num_chunks(&self) -> usize {
        self.0.len().div_ceil(1 << 16)
    }
    fn for_each_in_chunk(&self, chunk: usize, f: &mut dyn FnMut(EdgeRecord)) {
        let lo = chunk << 16;
        let hi = (lo + (1 << 16)).min(self.0.len());
        self.0[lo..hi].iter().for_each(|e| f(*e));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(src: u32, dst: u32, weight: f32) -> EdgeRecord {
        EdgeRecord { src, dst, weight, ..Default::default() }
    }

    #[test]
    fn builds_sorted_symmetric_dedup() {
        let edges = [e(0, 2, 1.0), e(0, 1, 2.0), e(2, 1, 3.0), e(0, 2, 0.5), e(1, 1, 9.0)];
        let opts = BuildOptions { symmetrize: true, dedup: Dedup::KeepFirst, drop_self_loops: true, weights: true, ..Default::default() };
        let g = build(3, &SliceSource(&edges), &opts, IdMap::Identity).unwrap();
        assert_eq!(g.offsets(), &[0, 2, 4, 6]);
        assert_eq!(g.targets(), &[1, 2, 0, 2, 0, 1]);
        // The parallel 0-2 edges keep the smaller weight.
        assert_eq!(g.weights().unwrap(), &[2.0, 0.5, 2.0, 3.0, 0.5, 3.0]);
    }

    #[test]
    fn row_chunks_cover_all_nodes() {
        let offsets = [0u64, 5, 5, 100, 101, 300];
        let chunks = row_chunks(&offsets, 10);
        let covered: Vec<usize> = chunks.iter().flat_map(|c| c.clone()).collect();
        assert_eq!(covered, (0..5).collect::<Vec<_>>());
    }
}
