//! The device-resident path: every mini-batch's blocks are built by kernels and stay in
//! device memory (for a GPU trainer, handed over by DLPack); [`DeviceBlocks::to_host`] copies
//! them out, cut into the same [`MiniBatch`]es as the CPU sampler's, byte for byte.

use super::layer::Gpu;
use super::{GpuSampleOptions, GpuSampleReport, LayerView, PinnedLayer, check, cut, kernel_seconds, load};
use crate::launch::{DevPtr, Launch, kernels};
use crate::{CudaDevice, CudaError};
use cudarc::driver::{CudaEvent, CudaModule, CudaSlice, CudaStream, DevicePtr, LaunchConfig};
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;
use wayfarer_runtime::CsrGraph;
use wayfarer_runtime::sample::{MiniBatch, SampleConfig, merge_seeds};

/// Mini-batches merged per super-batch on the device-resident path when the configuration
/// leaves it to the backend: its hash tables stay small (well under 1 GiB at fanouts 25,10
/// and batches of 1024), and fewer super-batches mean fewer waits for the sizes of arrays.
pub const RESIDENT_SUPER_BATCH: usize = 64;

/// One layer of a super-batch's blocks in device memory: every mini-batch's block, one after
/// another, with the per-mini-batch offsets on the host.
pub struct DeviceLayer {
    /// Source nodes (global ids) of every mini-batch's block; mini-batch b's are
    /// `node_ptr[b]..node_ptr[b + 1]`, its destination nodes first.
    pub nodes: CudaSlice<u32>,
    /// Per sampled edge: its global edge id.
    pub edge_ids: CudaSlice<u64>,
    /// Per sampled edge: its source, an index into its mini-batch's source nodes.
    pub edge_src: CudaSlice<u32>,
    /// Per sampled edge: its destination, an index into its mini-batch's destination nodes.
    pub edge_dst: CudaSlice<u32>,
    /// Offsets of each mini-batch's source nodes in `nodes` (mini-batches + 1).
    pub node_ptr: Vec<u32>,
    /// Mini-batch b has `dst_ptr[b + 1] - dst_ptr[b]` destination nodes.
    pub dst_ptr: Vec<u32>,
    /// Offsets of each mini-batch's edges in the edge arrays (mini-batches + 1).
    pub edge_ptr: Vec<u64>,
    /// Live entries of `nodes` (the allocation may be longer).
    pub num_nodes: usize,
    /// Live entries of the edge arrays.
    pub num_edges: usize,
}

/// A super-batch: consecutive mini-batches sampled together.
pub struct DeviceSuperBatch {
    /// Its seeds: `DeviceBlocks::seeds[seeds]`.
    pub seeds: Range<usize>,
    /// Its layers, input layer first (as `MiniBatch::blocks`).
    pub layers: Vec<DeviceLayer>,
}

/// Every mini-batch's blocks of one epoch, in device memory.
pub struct DeviceBlocks {
    /// The seeds, in order (`batch_size` per mini-batch, the last possibly fewer).
    pub seeds: Vec<u32>,
    /// Seeds per mini-batch.
    pub batch_size: usize,
    /// The super-batches, in order.
    pub super_batches: Vec<DeviceSuperBatch>,
    /// What the run did; `total_seconds` ends when every block is in device memory.
    pub report: GpuSampleReport,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    sms: u32,
}

/// Where [`DeviceBlocks::layer_i64_into`] writes one layer's arrays as int64: device
/// addresses of the caller's arrays (a consumer's such as torch's), on the blocks' GPU.
#[derive(Clone, Copy, Debug)]
pub struct LayerI64Out {
    /// `DeviceLayer::nodes`, widened or mapped to the caller's node ids (`num_nodes` entries).
    pub nodes: u64,
    /// `DeviceLayer::edge_ids`, as they are or mapped to the caller's edge ids (`num_edges`).
    pub edge_ids: u64,
    /// `DeviceLayer::edge_src`, widened (`num_edges`).
    pub edge_src: u64,
    /// `DeviceLayer::edge_dst`, widened (`num_edges`).
    pub edge_dst: u64,
}

/// What copying the blocks to the host took.
#[derive(Clone, Debug, Default)]
pub struct HostCopyReport {
    /// Seconds allocating the page-locked buffers.
    pub pin_seconds: f64,
    /// Seconds waiting for device-to-host copies (into page-locked buffers; each
    /// super-batch's copies run while the previous one is cut).
    pub copy_seconds: f64,
    /// Seconds cutting them into per-mini-batch blocks.
    pub cut_seconds: f64,
    /// Bytes copied.
    pub bytes: u64,
}

impl DeviceBlocks {
    /// The number of mini-batches.
    pub fn num_batches(&self) -> usize {
        self.seeds.len().div_ceil(self.batch_size)
    }

    /// Sampled edges over every layer and mini-batch.
    pub fn num_edges(&self) -> u64 {
        self.super_batches.iter().flat_map(|s| &s.layers).map(|l| l.num_edges as u64).sum()
    }

    /// The stream the arrays were written on (work on another stream must wait for it).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Makes the blocks' stream wait for the work queued so far on `raw`, a `CUstream` of
    /// the blocks' GPU (0: the legacy default stream): arrays that a consumer allocated on
    /// `raw` are then written only after the work that last used their memory.
    pub fn wait_for(&self, raw: u64) -> Result<(), CudaError> {
        self.stream.context().bind_to_thread()?;
        self.stream.join(&crate::launch::borrowed_stream(self.stream.context(), raw))?;
        Ok(())
    }

    /// Writes layer `layer` of super-batch `sb` as int64 arrays into `out`, on the blocks'
    /// stream: node ids through `node_map` (indexed by internal id) and edge ids through
    /// `edge_map` (indexed by CSR position) when given, as they are otherwise. Each map must
    /// cover every id it is indexed by (the graph's node count, its edge count), and each of
    /// `out`'s arrays must be a device allocation of this GPU with room for the layer's
    /// `num_nodes` (nodes) or `num_edges` (edge arrays) entries, which no other work uses
    /// until this stream's work is done ([`DeviceBlocks::wait_for`] orders it after the
    /// owner's).
    pub fn layer_i64_into(
        &self,
        sb: usize,
        layer: usize,
        node_map: Option<&CudaSlice<u64>>,
        edge_map: Option<&CudaSlice<u64>>,
        out: &LayerI64Out,
    ) -> Result<(), CudaError> {
        let l = &self.super_batches[sb].layers[layer];
        let s = &self.stream;
        s.context().bind_to_thread()?;
        let widen = self.module.load_function(kernels::S_TO_I64_U32.name)?;
        let widen64 = self.module.load_function(kernels::S_TO_I64_U64.name)?;
        let grid = |n: usize| {
            let blocks = (n as u64).div_ceil(256).clamp(1, self.sms as u64 * 8) as u32;
            LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
        };
        let map_ptr = |m: Option<&CudaSlice<u64>>| DevPtr(m.map_or(0, |m| m.device_ptr(s).0));
        let (n64, m64, none) = (l.num_nodes as u64, l.num_edges as u64, DevPtr(0));
        let (nodes, edge_ids, edge_src, edge_dst) = (DevPtr(out.nodes), DevPtr(out.edge_ids), DevPtr(out.edge_src), DevPtr(out.edge_dst));
        // The inputs hold at least n (nodes) and m (edges) entries, the outputs as many (the
        // caller's contract), and a map covers every id the arrays hold (checked by the
        // caller against the graph). Empty arrays launch nothing.
        if l.num_nodes > 0 {
            Launch::new(s, &widen, &kernels::S_TO_I64_U32)
                .arg(&l.nodes)
                .arg(&n64)
                .arg(&map_ptr(node_map))
                .arg(&nodes)
                .run(grid(l.num_nodes))?;
        }
        if l.num_edges > 0 {
            let m = l.num_edges;
            Launch::new(s, &widen64, &kernels::S_TO_I64_U64)
                .arg(&l.edge_ids)
                .arg(&m64)
                .arg(&map_ptr(edge_map))
                .arg(&edge_ids)
                .run(grid(m))?;
            Launch::new(s, &widen, &kernels::S_TO_I64_U32).arg(&l.edge_src).arg(&m64).arg(&none).arg(&edge_src).run(grid(m))?;
            Launch::new(s, &widen, &kernels::S_TO_I64_U32).arg(&l.edge_dst).arg(&m64).arg(&none).arg(&edge_dst).run(grid(m))?;
        }
        Ok(())
    }

    /// Copies every block to the host: the same mini-batches as the CPU sampler's. Two sets
    /// of page-locked buffers, each layer's sized once for the largest super-batch: the next
    /// super-batch is copied into one while the other is cut into mini-batches.
    pub fn to_host(&self) -> Result<(Vec<MiniBatch>, HostCopyReport), CudaError> {
        let s = &self.stream;
        s.context().bind_to_thread()?;
        let mut report = HostCopyReport::default();
        let mut out = Vec::with_capacity(self.num_batches());
        let depth = self.super_batches.first().map_or(0, |sb| sb.layers.len());
        let t = Instant::now();
        let mut sets: [Vec<PinnedLayer>; 2] = [Vec::new(), Vec::new()];
        for i in 0..depth {
            let n = self.super_batches.iter().map(|sb| sb.layers[i].num_nodes).max().unwrap_or(0);
            let m = self.super_batches.iter().map(|sb| sb.layers[i].num_edges).max().unwrap_or(0);
            sets[0].push(PinnedLayer::new(s.context(), n, m)?);
            if self.super_batches.len() > 1 {
                sets[1].push(PinnedLayer::new(s.context(), n, m)?);
            }
        }
        report.pin_seconds = t.elapsed().as_secs_f64();
        // Queues the copies of `sb` into `bufs` (page-locked: asynchronous) and returns an
        // event that completes with them.
        let copy = |sb: &DeviceSuperBatch, bufs: &mut [PinnedLayer], report: &mut HostCopyReport| -> Result<CudaEvent, CudaError> {
            for (l, buf) in sb.layers.iter().zip(bufs.iter_mut()) {
                let (n, m) = (l.num_nodes, l.num_edges);
                s.memcpy_dtoh(&l.nodes.slice(0..n), &mut buf.next.as_mut_slice()?[..n])?;
                s.memcpy_dtoh(&l.edge_ids.slice(0..m), &mut buf.eid.as_mut_slice()?[..m])?;
                s.memcpy_dtoh(&l.edge_src.slice(0..m), &mut buf.src.as_mut_slice()?[..m])?;
                s.memcpy_dtoh(&l.edge_dst.slice(0..m), &mut buf.dst.as_mut_slice()?[..m])?;
                report.bytes += 4 * n as u64 + 16 * m as u64;
            }
            Ok(s.record_event(None)?)
        };
        let [first, second] = &mut sets;
        let mut pending = match self.super_batches.first() {
            Some(sb) => Some(copy(sb, first, &mut report)?),
            None => None,
        };
        for (k, sb) in self.super_batches.iter().enumerate() {
            let t = Instant::now();
            if let Some(done) = pending.take() {
                done.synchronize()?;
            }
            report.copy_seconds += t.elapsed().as_secs_f64();
            let (cur, next) = if k % 2 == 0 { (&*first, &mut *second) } else { (&*second, &mut *first) };
            if let Some(following) = self.super_batches.get(k + 1) {
                pending = Some(copy(following, next, &mut report)?);
            }
            let t = Instant::now();
            let views: Vec<LayerView> = sb
                .layers
                .iter()
                .zip(cur)
                .map(|(l, buf)| -> Result<_, CudaError> {
                    Ok(LayerView {
                        nodes: &buf.next.as_slice()?[..l.num_nodes],
                        node_ptr: &l.node_ptr,
                        dst_ptr: &l.dst_ptr,
                        edge_ptr: &l.edge_ptr,
                        edge_ids: &buf.eid.as_slice()?[..l.num_edges],
                        edge_src: &buf.src.as_slice()?[..l.num_edges],
                        edge_dst: &buf.dst.as_slice()?[..l.num_edges],
                    })
                })
                .collect::<Result<_, _>>()?;
            out.extend(cut(&self.seeds[sb.seeds.clone()], self.batch_size, &views));
            report.cut_seconds += t.elapsed().as_secs_f64();
        }
        Ok((out, report))
    }
}

/// The sampler's kernels loaded on one GPU with a graph uploaded there, for many sampling
/// calls (a loader's mini-batch groups) without uploading the graph again.
pub struct GpuSampler {
    gpu: Gpu,
    /// The graph's size, to check later calls are given the same graph.
    shape: (usize, u64),
    loaded: GpuSampleReport,
}

impl GpuSampler {
    /// Loads the sampler on `dev` (NVRTC, cached) and uploads `graph`, within `graph_budget`
    /// bytes of device memory when given ([`GpuSampleOptions::graph_budget`]). A graph larger
    /// than that is sampled out of core: its offsets, row starts and longest rows in device
    /// memory, every row also in mapped page-locked host memory, read over the bus for the
    /// rest (the blocks are the same). It runs on a stream of its own, which does not wait for
    /// other work on the device (a trainer's, on the legacy default stream): sampling overlaps
    /// training.
    pub fn new(dev: &CudaDevice, graph: &CsrGraph, graph_budget: Option<usize>) -> Result<Self, CudaError> {
        let mut loaded = GpuSampleReport::default();
        let stream = dev.ctx.new_stream()?;
        let gpu = load(dev, &stream, graph, graph_budget, &mut loaded)?;
        Ok(GpuSampler { gpu, shape: (graph.num_nodes(), graph.num_edges()), loaded })
    }

    /// Uploads an id map for [`DeviceBlocks::layer_i64_into`] (e.g. a graph's original node ids).
    pub fn upload_map(&self, map: &[u64]) -> Result<CudaSlice<u64>, CudaError> {
        self.gpu.s.context().bind_to_thread()?;
        Ok(self.gpu.s.clone_htod(map)?)
    }

    /// Samples every mini-batch of `seeds` of `graph` (the graph given to [`Self::new`]) and
    /// leaves the blocks in device memory: the same blocks as
    /// `wayfarer_runtime::sample::sample` (uniform policy only). Fails with
    /// [`CudaError::OutOfMemory`] when the blocks do not fit.
    pub fn sample_on_device(
        &self,
        graph: &CsrGraph,
        seeds: &[u32],
        cfg: &SampleConfig,
        opts: GpuSampleOptions,
    ) -> Result<DeviceBlocks, CudaError> {
        check(graph, seeds, cfg)?;
        if (graph.num_nodes(), graph.num_edges()) != self.shape {
            return Err(CudaError::Driver(format!(
                "this GPU sampler holds a graph of {} nodes and {} edges, not the one given ({} nodes, {} edges)",
                self.shape.0,
                self.shape.1,
                graph.num_nodes(),
                graph.num_edges()
            )));
        }
        let gpu = &self.gpu;
        // The caller's thread may not be the one that opened the device (Python's workers).
        gpu.s.context().bind_to_thread()?;
        let mut report = self.loaded.clone();
        let s = &gpu.s;
        let k_super = if cfg.super_batch == 0 { RESIDENT_SUPER_BATCH } else { cfg.super_batch };
        let per_super = cfg.batch_size.saturating_mul(k_super);
        let started = Instant::now();
        let mut events = Vec::new();
        let mut super_batches = Vec::with_capacity(seeds.len().div_ceil(per_super.max(1)));
        for (sb, chunk) in seeds.chunks(per_super).enumerate() {
            report.super_batches += 1;
            let (frontier_h, batch_ptr_h) = merge_seeds(chunk.chunks(cfg.batch_size));
            let seed_frontier = s.clone_htod(&frontier_h)?;
            let seed_ptr = s.clone_htod(&batch_ptr_h)?;
            let mut layers: Vec<DeviceLayer> = Vec::with_capacity(cfg.fanouts.len());
            let mut node_ptr_dev = None;
            for (depth, &fanout) in cfg.fanouts.iter().rev().enumerate() {
                let (frontier, batch_ptr, dst_ptr) = match (layers.last(), &node_ptr_dev) {
                    (Some(l), Some(p)) => (&l.nodes, p, l.node_ptr.clone()),
                    _ => (&seed_frontier, &seed_ptr, batch_ptr_h.clone()),
                };
                let l = gpu.layer(frontier, batch_ptr, &dst_ptr, depth, fanout, (sb * k_super) as u32, cfg, opts, &mut report)?;
                events.push(l.kernel_events);
                node_ptr_dev = Some(l.node_ptr_dev);
                layers.push(DeviceLayer {
                    nodes: l.nodes,
                    edge_ids: l.edge_ids,
                    edge_src: l.edge_src,
                    edge_dst: l.edge_dst,
                    node_ptr: l.node_ptr,
                    dst_ptr,
                    edge_ptr: l.edge_ptr,
                    num_nodes: l.num_nodes,
                    num_edges: l.num_edges,
                });
            }
            layers.reverse();
            super_batches.push(DeviceSuperBatch { seeds: sb * per_super..(sb * per_super + chunk.len()), layers });
        }
        s.synchronize()?;
        report.total_seconds = started.elapsed().as_secs_f64();
        report.sample_kernel_seconds = kernel_seconds(&events)?;
        Ok(DeviceBlocks {
            seeds: seeds.to_vec(),
            batch_size: cfg.batch_size,
            super_batches,
            report,
            stream: s.clone(),
            module: gpu._module.clone(),
            sms: gpu.sms,
        })
    }
}

/// Samples every mini-batch of `seeds` on GPU `dev` and leaves the blocks in its memory
/// ([`GpuSampler::sample_on_device`], the graph uploaded for this call).
pub fn sample_on_device(
    dev: &CudaDevice,
    graph: &CsrGraph,
    seeds: &[u32],
    cfg: &SampleConfig,
    opts: GpuSampleOptions,
) -> Result<DeviceBlocks, CudaError> {
    check(graph, seeds, cfg)?;
    GpuSampler::new(dev, graph, opts.graph_budget)?.sample_on_device(graph, seeds, cfg, opts)
}
