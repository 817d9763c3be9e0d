//! A sampled block's aggregation plan built on the GPU (`kernels/aggregate_plan.cu`), on a
//! stream the caller owns: the block's edges as CSR rows by destination (forward) and by
//! source (backward), each row in edge order, and each direction's rows ordered dense first by
//! `wayfarer::partition::dense_rows`'s rule. The same arrays as the Python package's torch
//! construction, without its host round trips and per-operation Python cost: one call, which
//! the package makes with the GIL released.

use crate::CudaError;
use crate::aggregate::Aggregator;
use crate::launch::{DevPtr, Kernel, Launch, borrowed_stream, kernels, striding_grid as grid};
use crate::scan::Scan;
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, LaunchConfig};
use std::sync::Arc;
use wayfarer_runtime::WalkError;

/// The plan kernels' source, compiled after the prelude and the scan kernels.
pub const PLAN_KERNELS: &str = include_str!("../kernels/aggregate_plan.cu");

/// Device addresses and sizes of one plan. The edge and node arrays are the block's (int64);
/// the outputs are allocated by the caller at the sizes stated and written here.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlanArgs {
    /// `int64[edges]`: each edge's source, an index into the block's source nodes.
    pub edge_src: u64,
    /// `int64[edges]`: each edge's destination, an index into its destination nodes.
    pub edge_dst: u64,
    /// The block's edges.
    pub edges: u64,
    /// Source nodes (the destination nodes are the first `num_dst` of them).
    pub num_src: u64,
    /// Destination nodes.
    pub num_dst: u64,
    /// `int64[num_src]`: the block's node ids, indexing `density` (read only with a density).
    pub nodes: u64,
    /// `float64[density_len]`: each node's neighbourhood density, or 0 (classes by degree).
    pub density: u64,
    /// Entries of `density`.
    pub density_len: u64,
    /// The hybrid metric's weight on density, in [0, 1].
    pub alpha: f64,
    /// Outputs of the forward direction (rows: destination nodes).
    pub forward: PlanRows,
    /// Outputs of the backward direction (rows: source nodes).
    pub backward: PlanRows,
    /// `int64[num_dst]`: each destination's edges in the block.
    pub degree: u64,
    /// `float32[num_dst]`: `1 / max(1, degree)` (a mean's scale), or 0 not to write it.
    pub inv_degree: u64,
}

/// One direction's outputs: `indptr` `int64[rows + 1]`, `cols` `int64[edges]` (the other
/// end of each edge, rows in edge order), `order` `int64[rows]` (dense rows, then sparse,
/// each ascending).
#[derive(Clone, Copy, Debug, Default)]
pub struct PlanRows {
    /// `int64[rows + 1]`.
    pub indptr: u64,
    /// `int64[edges]`.
    pub cols: u64,
    /// `int64[rows]`.
    pub order: u64,
}

/// The dense rows of each direction, first in their `order`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanCounts {
    /// Dense destination rows.
    pub forward_dense: u64,
    /// Dense source rows.
    pub backward_dense: u64,
}

/// The plan kernels of one loaded module.
pub(crate) struct PlanKernels {
    functions: Vec<(CudaFunction, &'static Kernel)>,
    scan: Scan,
}

const PLAN: [&Kernel; 11] = [
    &kernels::AP_COUNT,
    &kernels::AP_PLACE,
    &kernels::AP_SETTLE,
    &kernels::AP_WIDEN_U64,
    &kernels::AP_WIDEN_U32,
    &kernels::AP_INV_DEGREE,
    &kernels::AP_DENSITY,
    &kernels::AP_SUM,
    &kernels::AP_HYBRID,
    &kernels::AP_FLAGS,
    &kernels::AP_ORDER,
];

impl PlanKernels {
    pub(crate) fn load(module: &Arc<CudaModule>) -> Result<Self, CudaError> {
        let functions = PLAN.iter().map(|k| Ok((module.load_function(k.name)?, *k))).collect::<Result<_, CudaError>>()?;
        Ok(PlanKernels { functions, scan: Scan::load(module)? })
    }

    fn launch<'a>(&'a self, s: &'a CudaStream, kernel: &'static Kernel) -> Launch<'a> {
        let (f, k) = self.functions.iter().find(|(_, k)| k.name == kernel.name).expect("every plan kernel is loaded");
        Launch::new(s, f, k)
    }
}

impl Aggregator {
    /// Builds the plan `a` on `stream` (a `CUstream` of this GPU's primary context, alive
    /// during the call) and waits for it. Every address must be a live device allocation of
    /// the size [`PlanArgs`] states. Ids outside the block (an edge end, or a node outside
    /// `density`) are refused by name after the kernels ran; the outputs are then unspecified.
    pub fn plan(&self, stream: u64, a: &PlanArgs) -> Result<PlanCounts, CudaError> {
        if a.edges > u32::MAX as u64 {
            return Err(WalkError::param("block", format!("{} edges: at most {} per block", a.edges, u32::MAX)).into());
        }
        if a.num_dst > a.num_src {
            return Err(WalkError::param("block", format!("num_dst = {} with {} source nodes", a.num_dst, a.num_src)).into());
        }
        if !(0.0..=1.0).contains(&a.alpha) {
            return Err(WalkError::param("alpha", format!("{}: within [0, 1]", a.alpha)).into());
        }
        self.ctx.bind_to_thread()?;
        let s = borrowed_stream(&self.ctx, stream);
        let k = &self.plan;
        // What the host reads back, in one copy: the min and max of edge_src, edge_dst and the
        // nodes (as i64 bits), then each direction's dense rows.
        let (lo, hi) = (i64::MAX as u64, i64::MIN as u64);
        let mut info = s.clone_htod(&[lo, hi, lo, hi, lo, hi, 0, 0])?;
        let at = info.device_ptr(&s).0;
        let forward = self.rows(&s, a, a.edge_dst, a.edge_src, a.num_dst, &a.forward, at + 16)?;
        let backward = self.rows(&s, a, a.edge_src, a.edge_dst, a.num_src, &a.backward, at)?;
        if a.num_dst > 0 {
            // `degree` holds num_dst entries, the counts as many.
            let g = grid(a.num_dst, self.sms);
            k.launch(&s, &kernels::AP_WIDEN_U32).arg(&forward).arg(&a.num_dst).arg(&DevPtr(a.degree)).run(g)?;
            if a.inv_degree != 0 {
                // As many entries as `degree`.
                k.launch(&s, &kernels::AP_INV_DEGREE).arg(&forward).arg(&a.num_dst).arg(&DevPtr(a.inv_degree)).run(g)?;
            }
        }
        let forward_dense = self.classify(&s, a, &forward, a.num_dst, a.forward.order, at + 32)?;
        let backward_dense = self.classify(&s, a, &backward, a.num_src, a.backward.order, at + 32)?;
        let (nd, ns) = (a.num_dst as usize, a.num_src as usize);
        s.memcpy_dtod(&forward_dense.slice(nd..nd + 1), &mut info.slice_mut(6..7))?;
        s.memcpy_dtod(&backward_dense.slice(ns..ns + 1), &mut info.slice_mut(7..8))?;
        let info = s.clone_dtoh(&info)?;
        s.synchronize()?;
        let r = |i: usize| [info[i] as i64, info[i + 1] as i64];
        let (ranges, dense) = ([r(0), r(2), r(4)], [info[6], info[7]]);
        let bad = |what: &str, range: &[i64], len: u64| {
            let v = if range[0] < 0 { range[0] } else { range[1] };
            (a.edges > 0 && (range[0] < 0 || range[1] as u64 >= len)).then(|| (what.to_string(), v, len))
        };
        if let Some((what, v, len)) = bad("edge_src", &ranges[0], a.num_src) {
            return Err(WalkError::param("block", format!("{what} holds {v}, not an index of the {len} source nodes")).into());
        }
        if let Some((what, v, len)) = bad("edge_dst", &ranges[1], a.num_dst) {
            return Err(WalkError::param("block", format!("{what} holds {v}, not an index of the {len} destination nodes")).into());
        }
        if a.density != 0 && a.num_src > 0 {
            let r = &ranges[2];
            if r[0] < 0 || r[1] as u64 >= a.density_len {
                let v = if r[0] < 0 { r[0] } else { r[1] };
                return Err(WalkError::param("density", format!("{} values, but the block has node {v}", a.density_len)).into());
            }
        }
        Ok(PlanCounts { forward_dense: dense[0], backward_dense: dense[1] })
    }

    /// One direction's CSR (`key` the rows' end of each edge, `other` the columns) into `out`;
    /// returns its rows' counts (for the classification); the keys' min and max go to the two
    /// i64 at device address `range`.
    fn rows(
        &self,
        s: &Arc<CudaStream>,
        a: &PlanArgs,
        key: u64,
        other: u64,
        rows: u64,
        out: &PlanRows,
        range: u64,
    ) -> Result<CudaSlice<u32>, CudaError> {
        let k = &self.plan;
        let m = a.edges;
        let counts = s.alloc_zeros::<u32>(rows.max(1) as usize)?;
        if m > 0 {
            // `key` holds m entries; counts has `rows`, and keys outside 0..rows are skipped.
            k.launch(s, &kernels::AP_COUNT).arg(&DevPtr(key)).arg(&m).arg(&rows).arg(&counts).arg(&DevPtr(range)).run(grid(m, self.sms))?;
        }
        let start = k.scan.exclusive(s, &counts, rows as usize)?;
        // `start` has rows + 1 entries, as `indptr`.
        k.launch(s, &kernels::AP_WIDEN_U64).arg(&start).arg(&(rows + 1)).arg(&DevPtr(out.indptr)).run(grid(rows + 1, self.sms))?;
        if m > 0 {
            let fill = s.alloc_zeros::<u32>(rows.max(1) as usize)?;
            let perm = s.alloc_zeros::<u32>(m as usize)?;
            // Keys outside 0..rows are skipped; the others index `start` (rows + 1) and `fill`
            // (rows). `perm` and `cols` hold m entries, the placed ones at most that.
            k.launch(s, &kernels::AP_PLACE)
                .arg(&DevPtr(key))
                .arg(&m)
                .arg(&rows)
                .arg(&start)
                .arg(&fill)
                .arg(&perm)
                .run(grid(m, self.sms))?;
            k.launch(s, &kernels::AP_SETTLE)
                .arg(&DevPtr(key))
                .arg(&perm)
                .arg(&rows)
                .arg(&start)
                .arg(&DevPtr(other))
                .arg(&DevPtr(out.cols))
                .run(grid(m, self.sms))?;
        }
        Ok(counts)
    }

    /// Orders one direction's `rows` rows dense first into `order`; returns the flags'
    /// exclusive sums (`rows + 1`, the last the dense rows).
    fn classify(
        &self,
        s: &Arc<CudaStream>,
        a: &PlanArgs,
        counts: &CudaSlice<u32>,
        rows: u64,
        order: u64,
        node_range: u64,
    ) -> Result<CudaSlice<u64>, CudaError> {
        let k = &self.plan;
        let n = rows.max(1) as usize;
        let h = s.alloc_zeros::<f64>(n)?;
        let sums = s.alloc_zeros::<f64>(3)?;
        let flags = s.alloc_zeros::<u32>(n)?;
        if rows > 0 {
            let g = grid(rows, self.sms);
            // `nodes` holds num_src >= rows entries; a node outside density's len reads 0 and
            // is refused by `plan`.
            k.launch(s, &kernels::AP_DENSITY)
                .arg(&DevPtr(if a.density != 0 { a.nodes } else { 0 }))
                .arg(&DevPtr(a.density))
                .arg(&a.density_len)
                .arg(&rows)
                .arg(&h)
                .arg(&DevPtr(node_range))
                .run(g)?;
            let one_block = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
            k.launch(s, &kernels::AP_SUM).arg(&h).arg(&rows).arg(&sums).arg(&0u32).arg(&0i32).run(one_block)?;
            let alpha = a.alpha.to_bits();
            k.launch(s, &kernels::AP_HYBRID).arg(counts).arg(&rows).arg(&a.edges).arg(&alpha).arg(&sums).arg(&h).run(g)?;
            k.launch(s, &kernels::AP_SUM).arg(&h).arg(&rows).arg(&sums).arg(&1u32).arg(&0i32).run(one_block)?;
            k.launch(s, &kernels::AP_SUM).arg(&h).arg(&rows).arg(&sums).arg(&2u32).arg(&1i32).run(one_block)?;
            k.launch(s, &kernels::AP_FLAGS).arg(&h).arg(&rows).arg(&sums).arg(&flags).run(g)?;
        }
        let pos = k.scan.exclusive(s, &flags, rows as usize)?;
        if rows > 0 {
            // `pos` has rows + 1 entries; `order` rows, each written once.
            k.launch(s, &kernels::AP_ORDER).arg(&flags).arg(&pos).arg(&rows).arg(&DevPtr(order)).run(grid(rows, self.sms))?;
        }
        Ok(pos)
    }
}
