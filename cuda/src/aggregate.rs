//! Neighbour aggregation of sampled blocks on the GPU (the sum or mean step of SAGEConv/GCN),
//! launched on a stream the caller owns (torch's current stream, from the Python package), so
//! it orders with the training step's kernels without a synchronization. Two kernels, for the
//! two classes of rows that the caller chose by the partitioning seed's hybrid
//! metric: a sparse row's edges summed in order by one warp, a dense row's as eight partial
//! sums (in one warp's registers, or one per warp of a block for long rows;
//! `kernels/aggregate.cu`). Both are the CPU's orders (`wayfarer_runtime::aggregate`), so the
//! results are the same bits.

use crate::aggregate_plan::{PLAN_KERNELS, PlanKernels};
use crate::launch::{DevPtr, Kernel, Launch, borrowed_stream, kernels};
use crate::{CudaDevice, CudaError};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, LaunchConfig};
use std::sync::Arc;

/// The aggregation kernels, after the prelude.
pub const AGGREGATE_KERNELS: &str = include_str!("../kernels/aggregate.cu");

/// Device addresses and sizes of one aggregation: `out[r] = row_scale[r] · Σ col_scale[c] ·
/// x[c]` over the columns `c = cols[indptr[r]..indptr[r + 1]]` of each row `r` in `rows`,
/// whose first `dense` entries are the dense rows.
#[derive(Clone, Copy, Debug, Default)]
pub struct AggregateArgs {
    /// `int64[out rows + 1]`.
    pub indptr: u64,
    /// `int64[indptr[last]]`, each a row of `x`.
    pub cols: u64,
    /// `int64[rows]`: the output rows to compute, dense ones first, each at most once.
    pub rows: u64,
    /// How many entries `rows` has.
    pub n_rows: u64,
    /// How many of them are dense.
    pub dense: u64,
    /// `float32[out rows]` or 0 (1 everywhere).
    pub row_scale: u64,
    /// `float32[x rows]` or 0.
    pub col_scale: u64,
    /// `float32[x rows × dim]`, row-major.
    pub x: u64,
    /// Features per row.
    pub dim: u64,
    /// `float32[out rows × dim]`, row-major; rows not in `rows` are left as they are.
    pub out: u64,
}

/// The loaded kernels of one GPU: the aggregation's, and those that build its plans
/// ([`crate::aggregate_plan`]).
pub struct Aggregator {
    pub(crate) ctx: Arc<CudaContext>,
    _module: Arc<CudaModule>,
    /// `[sparse, dense]`, each with its signature, for float4 words, then for float words.
    functions: [[(CudaFunction, &'static Kernel); 2]; 2],
    pub(crate) plan: PlanKernels,
    pub(crate) sms: u32,
}

impl Aggregator {
    /// Compiles (or loads from the PTX cache) the kernels for `dev`.
    pub fn new(dev: &CudaDevice) -> Result<Self, CudaError> {
        let source = format!("{}\n{}\n{}\n{}", crate::codegen::PRELUDE, AGGREGATE_KERNELS, crate::scan::SCAN_KERNELS, PLAN_KERNELS);
        let loaded = dev.load_source("aggregate", &source, kernels::A_DENSE1.name)?;
        let f = |k: &'static Kernel| loaded.module.load_function(k.name).map(|f| (f, k));
        let functions = [[f(&kernels::A_SPARSE4)?, f(&kernels::A_DENSE4)?], [f(&kernels::A_SPARSE1)?, f(&kernels::A_DENSE1)?]];
        let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let plan = PlanKernels::load(&loaded.module)?;
        Ok(Aggregator { ctx: dev.ctx.clone(), _module: loaded.module, functions, plan, sms })
    }

    /// Enqueues the aggregation `a` on `stream` (a `CUstream` of this GPU's primary context,
    /// alive until the kernels ran; 0 is the legacy default stream) and returns without
    /// waiting. Every address must be a live device allocation of the size
    /// [`AggregateArgs`] states, holding what it states (the caller built and checked the
    /// CSR; the kernels do not check it).
    pub fn launch(&self, stream: u64, a: &AggregateArgs) -> Result<(), CudaError> {
        if a.dense > a.n_rows {
            return Err(CudaError::Driver(format!("internal error: {} dense rows of {}", a.dense, a.n_rows)));
        }
        self.ctx.bind_to_thread()?;
        let s = borrowed_stream(&self.ctx, stream);
        let aligned = |p: u64| p.is_multiple_of(16);
        let wide = a.dim.is_multiple_of(4) && aligned(a.x) && aligned(a.out);
        let ([sparse, dense], words) = if wide { (&self.functions[0], a.dim / 4) } else { (&self.functions[1], a.dim) };
        // The addresses are the caller's (see above); `rows` has n_rows entries, the dense
        // ones first, so the sparse kernel's list starts `dense` entries in. Eight entries
        // per block of eight warps.
        for (n, list, (function, kernel)) in [(a.dense, a.rows, dense), (a.n_rows - a.dense, a.rows + 8 * a.dense, sparse)] {
            if n == 0 {
                continue;
            }
            let blocks = n.div_ceil(8).clamp(1, self.sms as u64 * 16) as u32;
            let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
            Launch::new(&s, function, kernel)
                .arg(&DevPtr(a.indptr))
                .arg(&DevPtr(a.cols))
                .arg(&DevPtr(list))
                .arg(&n)
                .arg(&DevPtr(a.row_scale))
                .arg(&DevPtr(a.col_scale))
                .arg(&DevPtr(a.x))
                .arg(&words)
                .arg(&DevPtr(a.out))
                .run(cfg)?;
        }
        Ok(())
    }
}
