//! GNN neighbour sampling whose blocks stay on the GPU: the CUDA sampler builds them in device
//! memory, kernels widen them to int64 (and map ids to the caller's), and each layer's arrays
//! cross to torch as DLPack capsules, with no copy through the host.

use crate::errors;
use crate::graph::PyGraph;
use crate::ids;
use crate::run::interruptible;
use dlpark::DlpackElement;
use dlpark::ffi::{DLDevice, DLManagedTensor};
use dlpark::metadata::Fixed;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use std::sync::Arc;
use wayfarer::gpu::{CudaDevice, CudaError, GpuSampleOptions, GpuSampler};
use wayfarer::sample::{Policy, Replacement, SampleConfig};
use wayfarer_cuda::cudarc::driver::CudaSlice;

/// The GPU sampler of one graph on one GPU, with its id maps uploaded: kept by the graph, so
/// a loader's calls upload the graph once.
pub(crate) struct GpuState {
    ordinal: usize,
    name: String,
    sampler: GpuSampler,
    /// Internal node id -> the caller's (when not the identity).
    node_map: Option<CudaSlice<u64>>,
    /// CSR position -> the caller's edge id (when not the identity).
    edge_map: Option<CudaSlice<u64>>,
}

/// A device array handed to a DLPack consumer. The consumer's stream is not known here, so
/// the memory is freed only after the device finished all its work: by default when the
/// consumer drops its last view. That happens on the training thread, holding the GIL, and
/// the synchronization stalls both threads once per group of mini-batches; with
/// `WAYFARER_DEFERRED_FREES=1` (not yet run on a GPU, so off by default) the array goes to
/// [`DEFERRED`] instead, which the next sampling call frees after a synchronization with the
/// GIL released ([`free_deferred`]); past [`MAX_DEFERRED`] arrays a release frees them at
/// once.
struct SyncedFree<T: Send + 'static>(Option<CudaSlice<T>>);

/// Whether released arrays wait for the next sampling call (`WAYFARER_DEFERRED_FREES=1`).
fn deferred_frees() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("WAYFARER_DEFERRED_FREES").is_some_and(|v| v == "1"))
}

/// Released arrays waiting for [`free_deferred`], each with its context.
type Deferred = Vec<(Arc<wayfarer_cuda::cudarc::driver::CudaContext>, Box<dyn Send>)>;
static DEFERRED: std::sync::Mutex<Deferred> = std::sync::Mutex::new(Vec::new());
/// At most this many released arrays wait (a group's arrays: a few per layer).
const MAX_DEFERRED: usize = 256;

impl<T: Send + 'static> Drop for SyncedFree<T> {
    fn drop(&mut self) {
        let Some(slice) = self.0.take() else { return };
        if !deferred_frees() {
            let _ = slice.context().synchronize();
            return;
        }
        let mut waiting = DEFERRED.lock().unwrap_or_else(|p| p.into_inner());
        waiting.push((slice.context().clone(), Box::new(slice)));
        if waiting.len() > MAX_DEFERRED {
            let all = std::mem::take(&mut *waiting);
            drop(waiting);
            free(all);
        }
    }
}

/// Frees the released arrays (see [`SyncedFree`]) once their devices finished their work.
/// Called without the GIL.
pub(crate) fn free_deferred() {
    let all = std::mem::take(&mut *DEFERRED.lock().unwrap_or_else(|p| p.into_inner()));
    free(all);
}

fn free(all: Deferred) {
    let mut synced: Vec<&Arc<wayfarer_cuda::cudarc::driver::CudaContext>> = Vec::new();
    for (ctx, _) in &all {
        if !synced.iter().any(|c| Arc::ptr_eq(c, ctx)) {
            let _ = ctx.synchronize();
            synced.push(ctx);
        }
    }
    // The arrays drop here: stream-ordered frees of memory no work uses any more.
    drop(synced);
    drop(all);
}

/// `slice[..len]` as a DLPack capsule of a 1-D CUDA tensor that owns `slice`.
pub(crate) fn capsule<T: DlpackElement + Send + 'static>(py: Python<'_>, slice: CudaSlice<T>, len: usize) -> PyResult<Bound<'_, PyAny>> {
    use wayfarer_cuda::cudarc::driver::DevicePtr;
    let ordinal = i32::try_from(slice.ordinal()).map_err(|_| errors::value("GPU ordinal out of range"))?;
    let data = {
        let stream = slice.stream().clone();
        let (p, _record) = slice.device_ptr(&stream);
        p as usize as *mut std::ffi::c_void
    };
    let len = i64::try_from(len).map_err(|_| errors::value("array too long for DLPack"))?;
    let mut init = Fixed::new([len], [1i64])
        .initialize_as::<DLManagedTensor>(Box::new(SyncedFree(Some(slice))))
        .map_err(|e| errors::value(format!("DLPack: {e}")))?;
    init.set_device(DLDevice::cuda(ordinal));
    init.set_dtype(T::DTYPE);
    init.set_data(data);
    // SAFETY: the descriptor is complete: a 1-D tensor of `len` entries of `T` at `data`, an
    // allocation of at least `len` entries (the callers' arrays) owned by the tensor's context
    // (`SyncedFree`), which frees it only when the consumer deletes the tensor.
    let managed = unsafe { init.finish() };
    managed.into_pyobject(py)
}

/// One layer of a super-batch: `(nodes, edge_ids, edge_src, edge_dst, node_ptr, dst_ptr,
/// edge_ptr)`, the arrays as DLPack capsules, the offsets per mini-batch as lists.
type LayerOut<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>, Vec<u32>, Vec<u32>, Vec<u64>);
/// One super-batch: `(first seed, end seed, layers)`, input layer first.
type GroupOut<'py> = (usize, usize, Vec<LayerOut<'py>>);
/// One layer's aggregation plans, every mini-batch's one after another (as the layer's
/// arrays): `(forward (indptr, cols, order), backward (indptr, cols, order), degree,
/// inv_degree, per mini-batch (dense forward rows, dense backward rows))` — mini-batch b's
/// indptr starts at its first row plus b (each has one more entry than rows).
type PlanOut<'py> = (
    (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>),
    (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>),
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Vec<(u64, u64)>,
);

/// The plan arrays of one layer of a super-batch, in device memory.
struct LayerPlans {
    forward: [CudaSlice<i64>; 3],
    backward: [CudaSlice<i64>; 3],
    degree: CudaSlice<i64>,
    inv_degree: CudaSlice<f32>,
    /// (rows + mini-batches, edges, rows) of the forward arrays, then of the backward ones,
    /// then the destination rows (degree, inv_degree).
    lens: [[usize; 3]; 2],
    dst: usize,
    dense: Vec<(u64, u64)>,
}

/// Builds every mini-batch's aggregation plan of layer `l` (`a`: its int64 arrays) on
/// `stream` (the sampler's), `density` = (address, entries, alpha) as
/// `wayfarer_cuda::aggregate_plan::PlanArgs` takes them.
fn layer_plans(
    aggregator: &wayfarer_cuda::aggregate::Aggregator,
    stream: &Arc<wayfarer_cuda::cudarc::driver::CudaStream>,
    l: &wayfarer::gpu::DeviceLayer,
    a: &wayfarer::gpu::DeviceLayerI64,
    density: (u64, u64, f64),
) -> Result<LayerPlans, CudaError> {
    use wayfarer_cuda::aggregate_plan::{PlanArgs, PlanRows};
    use wayfarer_cuda::cudarc::driver::DevicePtr;
    let batches = l.node_ptr.len().saturating_sub(1);
    let (dst, src, m) = (l.dst_ptr[batches] as usize, l.node_ptr[batches] as usize, l.num_edges);
    let i64s = |n: usize| -> Result<CudaSlice<i64>, CudaError> { Ok(stream.alloc_zeros::<i64>(n.max(1))?) };
    let forward = [i64s(dst + batches)?, i64s(m)?, i64s(dst)?];
    let backward = [i64s(src + batches)?, i64s(m)?, i64s(src)?];
    let degree = i64s(dst)?;
    let inv_degree = stream.alloc_zeros::<f32>(dst.max(1))?;
    let addr = |x: &CudaSlice<i64>| x.device_ptr(stream).0;
    let (f, b) = (forward.each_ref().map(addr), backward.each_ref().map(addr));
    let (deg, inv, nodes) = (addr(&degree), inv_degree.device_ptr(stream).0, addr(&a.nodes));
    let (edge_src, edge_dst) = (addr(&a.edge_src), addr(&a.edge_dst));
    let mut dense = Vec::with_capacity(batches);
    for k in 0..batches {
        let (d0, s0, e0) = (l.dst_ptr[k] as u64, l.node_ptr[k] as u64, l.edge_ptr[k]);
        let (nd, ns, ne) = (l.dst_ptr[k + 1] as u64 - d0, l.node_ptr[k + 1] as u64 - s0, l.edge_ptr[k + 1] - e0);
        // Mini-batch k's parts of the layer's arrays (8-byte entries; 4 for inv_degree).
        let args = PlanArgs {
            edge_src: edge_src + 8 * e0,
            edge_dst: edge_dst + 8 * e0,
            edges: ne,
            num_src: ns,
            num_dst: nd,
            nodes: nodes + 8 * s0,
            density: density.0,
            density_len: density.1,
            alpha: density.2,
            forward: PlanRows { indptr: f[0] + 8 * (d0 + k as u64), cols: f[1] + 8 * e0, order: f[2] + 8 * d0 },
            backward: PlanRows { indptr: b[0] + 8 * (s0 + k as u64), cols: b[1] + 8 * e0, order: b[2] + 8 * s0 },
            degree: deg + 8 * d0,
            inv_degree: inv + 4 * d0,
        };
        let c = aggregator.plan(stream.cu_stream() as u64, &args)?;
        dense.push((c.forward_dense, c.backward_dense));
    }
    Ok(LayerPlans { forward, backward, degree, inv_degree, lens: [[dst + batches, m, dst], [src + batches, m, src]], dst, dense })
}

#[pymethods]
impl PyGraph {
    /// Uniform neighbour sampling on GPU `device`, the blocks left there; see
    /// `wayfarer.Graph.sample_neighbors(..., device="cuda")`. Returns per super-batch
    /// `(first seed, end seed, layers)`, input layer first, and the summary.
    /// With `plans = (density address or 0, its entries, alpha)`, also every block's
    /// aggregation plan (`wayfarer.AggregationPlan`), built on the device in the same call.
    #[pyo3(signature = (seeds, fanouts, replace, seed, batch_size, device, original_ids, plans=None))]
    #[allow(clippy::too_many_arguments)]
    fn sample_neighbors_cuda<'py>(
        &self,
        py: Python<'py>,
        seeds: PyReadonlyArray1<'py, i64>,
        fanouts: Vec<u32>,
        replace: bool,
        seed: u64,
        batch_size: Option<usize>,
        device: usize,
        original_ids: bool,
        plans: Option<(u64, u64, f64)>,
    ) -> PyResult<(Vec<GroupOut<'py>>, Option<Vec<Vec<PlanOut<'py>>>>, String)> {
        let g = &*self.graph;
        if original_ids {
            ids::check_fit(g)?;
        }
        let seeds = seeds.as_slice().map_err(|_| errors::value("seeds must be a contiguous 1-D array"))?;
        let seeds = ids::to_internal(g, seeds, "seeds", original_ids)?;
        let cfg = SampleConfig {
            fanouts,
            batch_size: batch_size.unwrap_or(seeds.len().max(1)),
            replacement: if replace { Replacement::With } else { Replacement::Without },
            policy: Policy::Uniform,
            seed,
            super_batch: 0,
        };
        let cuda = errors::cuda;
        let state = self.gpu_state(device).map_err(cuda)?;
        let aggregator = plans.map(|_| crate::aggregate::aggregator(device)).transpose()?;
        let (blocks, converted, built) = interruptible(py, 0, None, |_| {
            free_deferred();
            let blocks = state.sampler.sample_on_device(g, &seeds, &cfg, GpuSampleOptions::default()).map_err(cuda)?;
            let node_map = if original_ids { state.node_map.as_ref() } else { None };
            let mut converted = Vec::with_capacity(blocks.super_batches.len());
            for (i, sb) in blocks.super_batches.iter().enumerate() {
                let layers = (0..sb.layers.len())
                    .map(|l| blocks.layer_i64(i, l, node_map, state.edge_map.as_ref()))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(cuda)?;
                converted.push(layers);
            }
            let mut built = Vec::new();
            if let (Some(aggregator), Some(density)) = (&aggregator, plans) {
                for (sb, layers) in blocks.super_batches.iter().zip(&converted) {
                    let per_layer = sb.layers.iter().zip(layers).map(|(l, a)| layer_plans(aggregator, blocks.stream(), l, a, density));
                    built.push(per_layer.collect::<Result<Vec<_>, _>>().map_err(cuda)?);
                }
            }
            // The arrays are complete before any consumer sees them.
            blocks.stream().synchronize().map_err(|e| cuda(e.into()))?;
            Ok((blocks, converted, built))
        })?;
        let r = &blocks.report;
        let summary = format!(
            "{} edges in {} mini-batches on {} (cuda:{}): blocks in device memory in {:.3} s (sampling kernels {:.3} s, {} super-batches)",
            blocks.num_edges(),
            blocks.num_batches(),
            state.name,
            state.ordinal,
            r.total_seconds,
            r.sample_kernel_seconds,
            r.super_batches
        ) + &r.out_of_core_note();
        let mut out = Vec::with_capacity(converted.len());
        for (sb, layers) in blocks.super_batches.iter().zip(converted) {
            let mut lo = Vec::with_capacity(layers.len());
            for (l, a) in sb.layers.iter().zip(layers) {
                lo.push((
                    capsule(py, a.nodes, l.num_nodes)?,
                    capsule(py, a.edge_ids, l.num_edges)?,
                    capsule(py, a.edge_src, l.num_edges)?,
                    capsule(py, a.edge_dst, l.num_edges)?,
                    l.node_ptr.clone(),
                    l.dst_ptr.clone(),
                    l.edge_ptr.clone(),
                ));
            }
            out.push((sb.seeds.start, sb.seeds.end, lo));
        }
        let plans_out = if plans.is_some() {
            let mut groups = Vec::with_capacity(built.len());
            for layers in built {
                let mut lo = Vec::with_capacity(layers.len());
                for p in layers {
                    let [fi, fc, fo] = p.forward;
                    let [bi, bc, bo] = p.backward;
                    let [[fl0, fl1, fl2], [bl0, bl1, bl2]] = p.lens;
                    lo.push((
                        (capsule(py, fi, fl0)?, capsule(py, fc, fl1)?, capsule(py, fo, fl2)?),
                        (capsule(py, bi, bl0)?, capsule(py, bc, bl1)?, capsule(py, bo, bl2)?),
                        capsule(py, p.degree, p.dst)?,
                        capsule(py, p.inv_degree, p.dst)?,
                        p.dense,
                    ));
                }
                groups.push(lo);
            }
            Some(groups)
        } else {
            None
        };
        Ok((out, plans_out, summary))
    }
}

impl PyGraph {
    /// The graph's GPU sampler on GPU `ordinal`, made (and the graph uploaded) on first use.
    fn gpu_state(&self, ordinal: usize) -> Result<Arc<GpuState>, CudaError> {
        let mut cached = self.gpu.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = cached.as_ref().filter(|s| s.ordinal == ordinal) {
            return Ok(s.clone());
        }
        let dev = CudaDevice::open(ordinal)?;
        let g = &*self.graph;
        // Out of core past the budget (the setter dropped any state made under another).
        let budget = *self.device_graph_budget.lock().unwrap_or_else(|p| p.into_inner());
        let sampler = GpuSampler::new(&dev, g, budget)?;
        let node_map = match g.id_map() {
            wayfarer::graph::IdMap::Identity => None,
            wayfarer::graph::IdMap::Table(t) => Some(sampler.upload_map(&t[..])?),
        };
        let edge_map = self.edge_ids.as_ref().map(|ids| sampler.upload_map(ids)).transpose()?;
        let state = Arc::new(GpuState { ordinal, name: dev.name.clone(), sampler, node_map, edge_map });
        *cached = Some(state.clone());
        Ok(state)
    }
}
