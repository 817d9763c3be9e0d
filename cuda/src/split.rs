//! Graphs larger than device memory: the longest rows' edges in device memory, every edge
//! also in mapped, page-locked host memory, read over the bus for the other rows. Out-of-core
//! walks ([`crate::run`]) and neighbour sampling ([`crate::sample`]) share it: a row's edges
//! start at its *virtual* index `row_base[v]`, below `hot_edges` in the device arrays, at
//! `hot_edges + offsets[v]` in the host arrays otherwise (see `kernels/prelude.cuh`).

use crate::{CudaDevice, CudaError};
use cudarc::driver::{DeviceRepr, PinnedHostSlice};
use wayfarer_runtime::{CsrGraph, NO_EDGE};

/// Which of a graph's edge arrays the kernels read, so which a split holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SplitArrays {
    /// Targets only (neighbour sampling).
    Targets,
    /// Targets, and weights, labels and timestamps where the graph has them (walks).
    All,
}

impl SplitArrays {
    /// Bytes per edge the split keeps for `graph`.
    fn entry_bytes(self, graph: &CsrGraph) -> usize {
        match self {
            SplitArrays::Targets => 4,
            SplitArrays::All => edge_entry_bytes(graph),
        }
    }
}

/// Bytes per edge entry the kernels read: target, and weight, label, timestamp if present.
pub(crate) fn edge_entry_bytes(graph: &CsrGraph) -> usize {
    4 + graph.weights().map_or(0, |_| 4) + graph.labels().map_or(0, |_| 4) + graph.timestamps().map_or(0, |_| 8)
}

/// A graph split between device memory (hot rows) and mapped host memory (all edges).
pub(crate) struct SplitGraph {
    /// Which arrays it splits.
    arrays: SplitArrays,
    /// Hot rows in the order their edges sit in device memory (by degree, longest first).
    pub(crate) hot_rows: Vec<u32>,
    /// Edge entries in device memory.
    pub(crate) hot_edges: u64,
    /// Per node: the virtual index of its first edge (see kernels/prelude.cuh).
    pub(crate) row_base: Vec<u64>,
    /// Device pointers of the hot arrays (targets, weights, labels, timestamps) and row_base,
    /// set by whoever uploads [`Self::hot_arrays`].
    pub(crate) hot_ptrs: (u64, u64, u64, u64, u64),
    /// Device-visible pointers of the whole arrays in host memory (0 where absent or not
    /// split).
    pub(crate) cold: (u64, u64, u64, u64),
    _pinned: (PinnedHostSlice<u32>, Option<PinnedHostSlice<f32>>, Option<PinnedHostSlice<u32>>, Option<PinnedHostSlice<i64>>),
}

/// A page-locked, device-mapped copy of `data` and the pointer kernels use for it.
pub(crate) fn mapped_copy<T: DeviceRepr + cudarc::driver::ValidAsZeroBits + Copy + Send + Sync>(
    dev: &CudaDevice,
    data: &[T],
) -> Result<(PinnedHostSlice<T>, u64), CudaError> {
    use cudarc::driver::sys;
    // Filled below before any kernel reads it.
    let mut pinned = crate::launch::pinned::<T>(&dev.ctx, data.len(), sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE)?;
    {
        use rayon::prelude::*;
        let out = pinned.as_mut_slice()?;
        out[..data.len()].par_chunks_mut(1 << 20).zip(data.par_chunks(1 << 20)).for_each(|(o, d)| o.copy_from_slice(d));
    }
    let ptr = crate::launch::mapped_address(&mut pinned)?;
    Ok((pinned, ptr))
}

impl SplitGraph {
    /// Picks the hot rows (longest first) within `hot_bytes` and maps the whole arrays.
    pub(crate) fn new(dev: &CudaDevice, graph: &CsrGraph, hot_bytes: usize, arrays: SplitArrays) -> Result<Self, CudaError> {
        let n = graph.num_nodes();
        let off = graph.offsets();
        let per_edge = arrays.entry_bytes(graph) as u64;
        let mut order: Vec<u32> = (0..n as u32).filter(|&v| off[v as usize + 1] > off[v as usize]).collect();
        order.sort_unstable_by_key(|&v| (std::cmp::Reverse(off[v as usize + 1] - off[v as usize]), v));
        let mut hot_rows = Vec::new();
        let mut hot_edges = 0u64;
        for v in order {
            let d = off[v as usize + 1] - off[v as usize];
            if (hot_edges + d) * per_edge > hot_bytes as u64 {
                break;
            }
            hot_rows.push(v);
            hot_edges += d;
        }
        let mut row_base: Vec<u64> = off[..n].iter().map(|&o| hot_edges + o).collect();
        let mut at = 0u64;
        for &v in &hot_rows {
            row_base[v as usize] = at;
            at += off[v as usize + 1] - off[v as usize];
        }
        let (t, tp) = mapped_copy(dev, graph.targets())?;
        let all = arrays == SplitArrays::All;
        let w = graph.weights().filter(|_| all).map(|w| mapped_copy(dev, w)).transpose()?;
        let l = graph.labels().filter(|_| all).map(|l| mapped_copy(dev, l)).transpose()?;
        let ts = graph.timestamps().filter(|_| all).map(|x| mapped_copy(dev, x)).transpose()?;
        let cold = (tp, w.as_ref().map_or(0, |x| x.1), l.as_ref().map_or(0, |x| x.1), ts.as_ref().map_or(0, |x| x.1));
        Ok(SplitGraph {
            arrays,
            hot_rows,
            hot_edges,
            row_base,
            hot_ptrs: (0, 0, 0, 0, 0),
            cold,
            _pinned: (t, w.map(|x| x.0), l.map(|x| x.0), ts.map(|x| x.0)),
        })
    }

    /// The hot rows' targets, and their weights, labels and timestamps when it splits every
    /// array (empty otherwise), concatenated in `hot_rows` order.
    #[allow(clippy::type_complexity)]
    pub(crate) fn hot_arrays(&self, graph: &CsrGraph) -> (Vec<u32>, Vec<f32>, Vec<u32>, Vec<i64>) {
        fn gather<T: Copy>(rows: &[u32], graph: &CsrGraph, data: Option<&[T]>) -> Vec<T> {
            let Some(data) = data else { return Vec::new() };
            let mut out = Vec::new();
            for &v in rows {
                out.extend_from_slice(&data[graph.row(v)]);
            }
            out
        }
        let all = self.arrays == SplitArrays::All;
        (
            gather(&self.hot_rows, graph, Some(graph.targets())),
            gather(&self.hot_rows, graph, graph.weights().filter(|_| all)),
            gather(&self.hot_rows, graph, graph.labels().filter(|_| all)),
            gather(&self.hot_rows, graph, graph.timestamps().filter(|_| all)),
        )
    }

    /// Every entry of `edges` (virtual edges, or [`NO_EDGE`]) as the graph's edge index: the
    /// hot rows' starts summed once, each edge found by a binary search.
    pub(crate) fn original_edges(&self, graph: &CsrGraph, edges: &mut [u64]) {
        use rayon::prelude::*;
        let mut starts = Vec::with_capacity(self.hot_rows.len() + 1);
        let mut at = 0u64;
        for &v in &self.hot_rows {
            starts.push(at);
            at += graph.degree(v);
        }
        edges.par_iter_mut().with_min_len(1 << 14).for_each(|e| {
            if *e == NO_EDGE {
                return;
            }
            *e = if *e >= self.hot_edges {
                *e - self.hot_edges
            } else {
                let row = starts.partition_point(|&s| s <= *e) - 1;
                graph.offsets()[self.hot_rows[row] as usize] + (*e - starts[row])
            };
        });
    }

    /// The graph's edge index of virtual edge `e`.
    pub(crate) fn original_edge(&self, graph: &CsrGraph, e: u64) -> u64 {
        if e >= self.hot_edges {
            return e - self.hot_edges;
        }
        // Hot rows sit in `hot_rows` order; find the one holding e.
        let mut at = 0u64;
        for &v in &self.hot_rows {
            let d = graph.degree(v);
            if e < at + d {
                return graph.offsets()[v as usize] + (e - at);
            }
            at += d;
        }
        e
    }
}
