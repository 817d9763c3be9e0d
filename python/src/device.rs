//! GNN neighbour sampling whose blocks stay on the GPU: the CUDA sampler builds them in device
//! memory, and kernels widen them to int64 (mapping ids to the caller's) straight into arrays
//! that torch allocated, with no copy through the host.
//!
//! The consumer allocates because it knows its streams: torch's caching allocator reuses the
//! memory once the streams that used it are done, with no synchronization. Arrays of our own
//! handed over by DLPack had to be freed after a synchronization of the whole device (the
//! consumer's stream is not known when it drops them), which stalled the training thread once
//! per group of mini-batches.

use crate::errors;
use crate::graph::PyGraph;
use crate::ids;
use crate::run::interruptible;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use std::sync::Arc;
use wayfarer::gpu::{CudaDevice, CudaError, GpuSampleOptions, GpuSampler, LayerI64Out};
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

/// Entries of the caller's two flat arrays (int64 and float32) that one call fills, handed out
/// in order.
#[derive(Default)]
struct Layout {
    i64s: usize,
    f32s: usize,
}

impl Layout {
    /// The offset of `n` more int64 entries.
    fn i64s(&mut self, n: usize) -> usize {
        let at = self.i64s;
        self.i64s += n;
        at
    }
    /// The offset of `n` more float32 entries.
    fn f32s(&mut self, n: usize) -> usize {
        let at = self.f32s;
        self.f32s += n;
        at
    }
}

/// One layer of a super-batch: the offsets of `(nodes, edge_ids, edge_src, edge_dst)` in the
/// int64 array, then `node_ptr`, `dst_ptr` and `edge_ptr` per mini-batch.
type LayerOut = ((usize, usize, usize, usize), Vec<u32>, Vec<u32>, Vec<u64>);
/// One super-batch: `(first seed, end seed, layers)`, input layer first.
type GroupOut = (usize, usize, Vec<LayerOut>);

/// One layer's aggregation plans, every mini-batch's one after another (as the layer's
/// arrays): the int64 offsets of `(forward (indptr, cols, order), backward (indptr, cols,
/// order), degree)`, the float32 offset of `inv_degree`, and per mini-batch `(dense forward
/// rows, dense backward rows)`. Mini-batch b's indptr starts at its first row plus b (each has
/// one more entry than rows).
type PlanOut = ((usize, usize, usize), (usize, usize, usize), usize, usize, Vec<(u64, u64)>);

/// Where one layer's plan arrays go in the caller's arrays (entry offsets).
struct PlanAt {
    forward: [usize; 3],
    backward: [usize; 3],
    degree: usize,
    inv_degree: usize,
}

impl PlanAt {
    /// Places the plan arrays of layer `l` (every mini-batch's) in `layout`.
    fn place(l: &wayfarer::gpu::DeviceLayer, layout: &mut Layout) -> PlanAt {
        let batches = l.node_ptr.len().saturating_sub(1);
        let (dst, src, m) = (l.dst_ptr[batches] as usize, l.node_ptr[batches] as usize, l.num_edges);
        PlanAt {
            forward: [layout.i64s(dst + batches), layout.i64s(m), layout.i64s(dst)],
            backward: [layout.i64s(src + batches), layout.i64s(m), layout.i64s(src)],
            degree: layout.i64s(dst),
            inv_degree: layout.f32s(dst),
        }
    }
}

/// Builds every mini-batch's aggregation plan of layer `l` on `stream` (the sampler's) into
/// the caller's arrays at `i64s` and `f32s` (device addresses), where `at` places them;
/// `nodes`, `edge_src`, `edge_dst`: the layer's int64 arrays' addresses; `density` =
/// (address, entries, alpha) as `wayfarer_cuda::aggregate_plan::PlanArgs` takes them.
/// Returns the dense rows per mini-batch.
#[allow(clippy::too_many_arguments)]
fn layer_plans(
    aggregator: &wayfarer_cuda::aggregate::Aggregator,
    stream: &Arc<wayfarer_cuda::cudarc::driver::CudaStream>,
    l: &wayfarer::gpu::DeviceLayer,
    (nodes, edge_src, edge_dst): (u64, u64, u64),
    at: &PlanAt,
    (i64s, f32s): (u64, u64),
    density: (u64, u64, f64),
) -> Result<Vec<(u64, u64)>, CudaError> {
    use wayfarer_cuda::aggregate_plan::{PlanArgs, PlanRows};
    let batches = l.node_ptr.len().saturating_sub(1);
    let addr = |offset: usize| i64s + 8 * offset as u64;
    let (f, b) = (at.forward.map(addr), at.backward.map(addr));
    let (deg, inv) = (addr(at.degree), f32s + 4 * at.inv_degree as u64);
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
    Ok(dense)
}

#[pymethods]
impl PyGraph {
    /// Uniform neighbour sampling on GPU `device`, the blocks left there; see
    /// `wayfarer.Graph.sample_neighbors(..., device="cuda")`. Once the blocks are sampled,
    /// `alloc(int64 entries, float32 entries)` is called and returns `(int64 array address,
    /// float32 array address, stream)`: two device arrays of the caller's, of at least as many
    /// entries (and at least one) on this GPU, allocated for work on CUDA stream `stream`
    /// (0: the legacy default), whose queued work is done before they are written. Returns per
    /// super-batch `(first seed, end seed, layers)`, input layer first, with the arrays'
    /// offsets in the int64 array, and the summary. With `plans = (density address or 0, its
    /// entries, alpha)`, also every block's aggregation plan (`wayfarer.AggregationPlan`),
    /// built on the device in the same call.
    #[pyo3(signature = (seeds, fanouts, replace, seed, batch_size, device, original_ids, alloc, plans=None))]
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
        alloc: Bound<'py, PyAny>,
        plans: Option<(u64, u64, f64)>,
    ) -> PyResult<(Vec<GroupOut>, Option<Vec<Vec<PlanOut>>>, String)> {
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
        let blocks =
            interruptible(py, 0, None, |_| state.sampler.sample_on_device(g, &seeds, &cfg, GpuSampleOptions::default()).map_err(cuda))?;
        // Where every array goes in the caller's two arrays.
        let mut layout = Layout::default();
        let mut out = Vec::with_capacity(blocks.super_batches.len());
        let mut plan_at = Vec::new();
        for sb in &blocks.super_batches {
            let mut layers = Vec::with_capacity(sb.layers.len());
            let mut at = Vec::new();
            for l in &sb.layers {
                let (n, m) = (l.num_nodes, l.num_edges);
                let offsets = (layout.i64s(n), layout.i64s(m), layout.i64s(m), layout.i64s(m));
                layers.push((offsets, l.node_ptr.clone(), l.dst_ptr.clone(), l.edge_ptr.clone()));
                if plans.is_some() {
                    at.push(PlanAt::place(l, &mut layout));
                }
            }
            out.push((sb.seeds.start, sb.seeds.end, layers));
            plan_at.push(at);
        }
        let (i64s, f32s, after): (u64, u64, u64) = alloc.call1((layout.i64s.max(1), layout.f32s.max(1)))?.extract()?;
        if i64s == 0 || f32s == 0 {
            return Err(errors::value("alloc returned a null device address"));
        }
        let built = interruptible(py, 0, None, |_| {
            blocks.wait_for(after).map_err(cuda)?;
            let node_map = if original_ids { state.node_map.as_ref() } else { None };
            let addr = |offset: usize| i64s + 8 * offset as u64;
            let mut built = Vec::new();
            for (i, (sb, (_, _, layers))) in blocks.super_batches.iter().zip(&out).enumerate() {
                let mut dense = Vec::new();
                for (l, (layer, ((n, ei, es, ed), ..))) in sb.layers.iter().zip(layers).enumerate() {
                    let to = LayerI64Out { nodes: addr(*n), edge_ids: addr(*ei), edge_src: addr(*es), edge_dst: addr(*ed) };
                    blocks.layer_i64_into(i, l, node_map, state.edge_map.as_ref(), &to).map_err(cuda)?;
                    if let (Some(aggregator), Some(density)) = (&aggregator, plans) {
                        let arrays = (to.nodes, to.edge_src, to.edge_dst);
                        dense.push(
                            layer_plans(aggregator, blocks.stream(), layer, arrays, &plan_at[i][l], (i64s, f32s), density).map_err(cuda)?,
                        );
                    }
                }
                built.push(dense);
            }
            // The arrays are complete before any consumer sees them.
            blocks.stream().synchronize().map_err(|e| cuda(e.into()))?;
            Ok(built)
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
        let plans_out = plans.map(|_| {
            plan_at
                .into_iter()
                .zip(built)
                .map(|(at, dense)| {
                    at.into_iter()
                        .zip(dense)
                        .map(|(a, d)| {
                            let [fi, fc, fo] = a.forward;
                            let [bi, bc, bo] = a.backward;
                            ((fi, fc, fo), (bi, bc, bo), a.degree, a.inv_degree, d)
                        })
                        .collect()
                })
                .collect()
        });
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
