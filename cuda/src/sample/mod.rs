//! GNN neighbor sampling on the GPU: GARDEN's Super-batch Degree Classifier and grouped
//! parallel sampler (kernels/sample.cu), giving byte for byte the blocks of the CPU path
//! (`wayfarer_runtime::sample`, which defines them).
//!
//! Uniform sampling only (with or without replacement): weighted policies run on the CPU.

mod layer;
mod resident;

use crate::split::{SplitArrays, SplitGraph};
use crate::{CudaDevice, CudaError};
use cudarc::driver::{CudaContext, CudaEvent, DeviceRepr, PinnedHostSlice};
use layer::Gpu;
pub(crate) use layer::Table;
pub use resident::{
    DeviceBlocks, DeviceLayer, DeviceSuperBatch, GpuSampler, HostCopyReport, LayerI64Out, RESIDENT_SUPER_BATCH, sample_on_device,
};
use std::sync::Arc;
use std::time::Instant;
use wayfarer_runtime::sample::{Block, DEFAULT_SUPER_BATCH, MiniBatch, Policy, SampleConfig, merge_seeds};
use wayfarer_runtime::{CsrGraph, WalkError};

/// The sampling kernels, after the prelude.
pub const SAMPLE_KERNELS: &str = include_str!("../../kernels/sample.cu");

/// Default `Dmax`: rows of at most this many edges are staged in shared memory (GARDEN's
/// setting for Papers100M).
pub const DEFAULT_DMAX: u32 = 64;

/// How random nodes (more edges than the fanout) are assigned to lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandomKernel {
    /// GARDEN's grouped sampler: `fanout` lanes per node, ⌊32/fanout⌋ nodes per warp, rows of
    /// at most `Dmax` edges staged in shared memory.
    Grouped,
    /// The plain baseline: one warp per node, no staging (the ablation GARDEN reports).
    WarpPerNode,
}

impl std::str::FromStr for RandomKernel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "grouped" => Ok(RandomKernel::Grouped),
            "warp" => Ok(RandomKernel::WarpPerNode),
            x => Err(format!("unknown sampling kernel `{x}`: grouped or warp")),
        }
    }
}

/// Options of the GPU sampler (none changes the output).
#[derive(Clone, Copy, Debug)]
pub struct GpuSampleOptions {
    /// The kernel for random nodes.
    pub kernel: RandomKernel,
    /// Rows of at most this many edges are staged in shared memory (grouped kernel only).
    pub dmax: u32,
    /// Device memory the graph may take, in bytes (see [`GpuSampler::new`]); `None`: the
    /// whole graph when it takes at most [`AUTO_GRAPH_SHARE`] of the free memory, else that
    /// share. Read where the graph is uploaded ([`sample`], [`sample_on_device`],
    /// [`GpuSampler::new`]); [`GpuSampler::sample_on_device`] keeps its sampler's upload.
    pub graph_budget: Option<usize>,
}

impl Default for GpuSampleOptions {
    fn default() -> Self {
        GpuSampleOptions { kernel: RandomKernel::Grouped, dmax: DEFAULT_DMAX, graph_budget: None }
    }
}

/// The share of the device's free memory the graph may take when no budget is given (the
/// rest is the blocks' and the kernels' working memory).
pub const AUTO_GRAPH_SHARE: f64 = 0.6;

/// Where the graph's edges live on the device, for a budget of `budget` bytes (`None`: the
/// automatic one of `free` bytes free): the whole targets array (`Ok(None)`), or (out of
/// core) the longest rows' targets within `Ok(Some(hot_bytes))`, the others read from mapped
/// host memory. Offsets and (out of core) row starts always take device memory.
fn placement(graph: &CsrGraph, budget: Option<usize>, free: usize) -> Result<Option<usize>, CudaError> {
    let (n, m) = (graph.num_nodes(), graph.num_edges() as usize);
    let whole = 8 * (n + 1) + 4 * m;
    let budget = budget.unwrap_or((free as f64 * AUTO_GRAPH_SHARE) as usize);
    if whole <= budget {
        return Ok(None);
    }
    let node_side = 8 * (n + 1) + 8 * n;
    if node_side > budget {
        let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
        return Err(CudaError::OutOfMemory(format!(
            "the graph's offsets and row starts alone ({:.3} GiB) exceed the device memory the graph may take ({:.3} GiB)",
            gib(node_side),
            gib(budget)
        )));
    }
    Ok(Some(budget - node_side))
}

/// What a GPU sampling run did.
#[derive(Clone, Debug, Default)]
pub struct GpuSampleReport {
    /// Sampled edges.
    pub edges: u64,
    /// Super-batches run.
    pub super_batches: usize,
    /// Seconds in the two sampling kernels (full and random nodes), all layers.
    pub sample_kernel_seconds: f64,
    /// Seconds from the first upload to the last block on the host (graph upload excluded).
    pub total_seconds: f64,
    /// Seconds uploading the graph.
    pub upload_seconds: f64,
    /// Seconds copying each layer's arrays to the host (pageable memory).
    pub download_seconds: f64,
    /// Seconds NVRTC took (0 when cached).
    pub compile_seconds: f64,
    /// Out of core: edges in device memory, and of all (`None`: the whole graph is there).
    pub hot_edges: Option<(u64, u64)>,
    /// Full / random nodes over all layers.
    pub full_nodes: u64,
    /// Random nodes over all layers.
    pub random_nodes: u64,
}

impl GpuSampleReport {
    /// The summary's words for a graph sampled out of core ("; out of core: ..."), or nothing
    /// when the whole graph was in device memory.
    pub fn out_of_core_note(&self) -> String {
        match self.hot_edges {
            Some((hot, all)) => format!(
                "; out of core: {hot} of {all} edges ({:.1}%) in device memory, the rest read from page-locked host memory",
                100.0 * hot as f64 / all.max(1) as f64
            ),
            None => String::new(),
        }
    }
}

/// Page-locked host buffers for one layer's arrays (plain pinned memory: write-combined
/// memory, cudarc's default, is slow for the host to read).
struct PinnedLayer {
    next: PinnedHostSlice<u32>,
    eid: PinnedHostSlice<u64>,
    src: PinnedHostSlice<u32>,
    dst: PinnedHostSlice<u32>,
}

/// Plain page-locked memory; its contents are written by a copy before they are read.
fn pinned<T: DeviceRepr>(ctx: &Arc<CudaContext>, n: usize) -> Result<PinnedHostSlice<T>, CudaError> {
    crate::launch::pinned(ctx, n, 0)
}

impl PinnedLayer {
    fn new(ctx: &Arc<CudaContext>, next_n: usize, m: usize) -> Result<Self, CudaError> {
        Ok(PinnedLayer { next: pinned(ctx, next_n)?, eid: pinned(ctx, m)?, src: pinned(ctx, m)?, dst: pinned(ctx, m)? })
    }

    /// Room for `next_n` nodes and `m` edges (grown by half again when short).
    fn reserve(&mut self, ctx: &Arc<CudaContext>, next_n: usize, m: usize) -> Result<(), CudaError> {
        if self.next.len() < next_n {
            self.next = pinned(ctx, next_n + next_n / 2)?;
        }
        if self.eid.len() < m {
            let cap = m + m / 2;
            self.eid = pinned(ctx, cap)?;
            self.src = pinned(ctx, cap)?;
            self.dst = pinned(ctx, cap)?;
        }
        Ok(())
    }
}

/// One layer of a super-batch, on the host.
struct LayerHost {
    buf: PinnedLayer,
    next_n: usize,
    m: usize,
    next_ptr: Vec<u32>,
    ebp: Vec<u64>,
    /// This layer's BatchPtr (its destination nodes per sub-batch).
    batch_ptr: Vec<u32>,
}

/// The full CUDA source of the sampler.
pub fn sample_source() -> String {
    format!("{}\n{}\n{}", crate::codegen::PRELUDE, crate::scan::SCAN_KERNELS, SAMPLE_KERNELS)
}

/// Loads the sampler's module and uploads the graph on `stream` within `graph_budget` (see
/// [`GpuSampleOptions::graph_budget`]; the upload timed in `report`).
fn load(
    dev: &CudaDevice,
    stream: &Arc<cudarc::driver::CudaStream>,
    graph: &CsrGraph,
    graph_budget: Option<usize>,
    report: &mut GpuSampleReport,
) -> Result<Gpu, CudaError> {
    let loaded = dev.load_source("sample", &sample_source(), "wf_s_random")?;
    report.compile_seconds = loaded.compile_seconds;
    let mut f = std::collections::HashMap::new();
    for k in layer::SAMPLE_KERNEL_LIST {
        f.insert(k.name, loaded.module.load_function(k.name)?);
    }
    let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    let scan = crate::scan::Scan::load(&loaded.module)?;
    let s = stream;
    let t_up = Instant::now();
    let (free, _) = dev.ctx.mem_get_info()?;
    let offsets = s.clone_htod(graph.offsets())?;
    let (targets, split) = match placement(graph, graph_budget, free)? {
        None => (s.clone_htod(graph.targets())?, None),
        Some(hot_bytes) => {
            let sg = SplitGraph::new(dev, graph, hot_bytes, SplitArrays::Targets)?;
            let hot = sg.hot_arrays(graph).0;
            // At least one entry: a zero-length allocation has no pointer to pass.
            let targets = if hot.is_empty() { s.alloc_zeros::<u32>(1)? } else { s.clone_htod(&hot)? };
            let row_base = s.clone_htod(&sg.row_base)?;
            report.hot_edges = Some((sg.hot_edges, graph.num_edges()));
            (targets, Some((sg, row_base)))
        }
    };
    s.synchronize()?;
    report.upload_seconds = t_up.elapsed().as_secs_f64();
    Ok(Gpu { s: s.clone(), _module: loaded.module, f, sms, scan, offsets, targets, split })
}

/// The GPU sampler's refusals and the CPU sampler's checks of the configuration and seeds.
fn check(graph: &CsrGraph, seeds: &[u32], cfg: &SampleConfig) -> Result<(), CudaError> {
    if cfg.policy != Policy::Uniform {
        return Err(WalkError::Config(
            "weighted neighbor sampling (--weighted, --policy) runs on the CPU only; the GPU sampler is uniform".into(),
        )
        .into());
    }
    wayfarer_runtime::sample::validate(graph, seeds, cfg)?;
    Ok(())
}

/// Sums the sampling kernels' event pairs (after the stream has finished them).
fn kernel_seconds(events: &[(CudaEvent, CudaEvent)]) -> Result<f64, CudaError> {
    let mut ms = 0.0f64;
    for (a, b) in events {
        ms += a.elapsed_ms(b)? as f64;
    }
    Ok(ms / 1e3)
}

/// Samples every mini-batch of `seeds` on GPU `dev`, `cfg.super_batch` mini-batches at a time:
/// the same blocks as `wayfarer_runtime::sample::sample` (uniform policy only).
pub fn sample(
    dev: &CudaDevice,
    graph: &CsrGraph,
    seeds: &[u32],
    cfg: &SampleConfig,
    opts: GpuSampleOptions,
) -> Result<(Vec<MiniBatch>, GpuSampleReport), CudaError> {
    check(graph, seeds, cfg)?;
    let mut report = GpuSampleReport::default();
    let gpu = load(dev, &dev.stream, graph, opts.graph_budget, &mut report)?;
    let s = &gpu.s;

    let k_super = if cfg.super_batch == 0 { DEFAULT_SUPER_BATCH } else { cfg.super_batch };
    let per_super = cfg.batch_size.saturating_mul(k_super);
    let started = Instant::now();
    // Each layer's arrays come back into pinned host buffers (taken from a small pool); a
    // second thread cuts them into mini-batch blocks (mini-batches in parallel) while the GPU
    // runs the next super-batch, then hands the buffers back.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Vec<LayerHost>)>(1);
    let (back_tx, back_rx) = std::sync::mpsc::channel::<PinnedLayer>();
    let builder = move |rx: std::sync::mpsc::Receiver<(usize, Vec<LayerHost>)>| -> Result<Vec<MiniBatch>, CudaError> {
        let mut out = Vec::with_capacity(seeds.len().div_ceil(cfg.batch_size));
        for (sb, layers) in rx {
            let chunk = &seeds[sb * per_super..((sb + 1) * per_super).min(seeds.len())];
            let views: Vec<LayerView> = layers
                .iter()
                .rev()
                .map(|l| -> Result<_, CudaError> {
                    Ok(LayerView {
                        nodes: &l.buf.next.as_slice()?[..l.next_n],
                        node_ptr: &l.next_ptr,
                        dst_ptr: &l.batch_ptr,
                        edge_ptr: &l.ebp,
                        edge_ids: &l.buf.eid.as_slice()?[..l.m],
                        edge_src: &l.buf.src.as_slice()?[..l.m],
                        edge_dst: &l.buf.dst.as_slice()?[..l.m],
                    })
                })
                .collect::<Result<_, _>>()?;
            out.extend(cut(chunk, cfg.batch_size, &views));
            drop(views);
            for l in layers {
                let _ = back_tx.send(l.buf);
            }
        }
        Ok(out)
    };
    let mut pool: Vec<PinnedLayer> = Vec::new();
    let mut pinned_sets = 0usize;
    let mut events = Vec::new();
    let out = std::thread::scope(|scope| -> Result<Vec<MiniBatch>, CudaError> {
        let worker = scope.spawn(move || builder(rx));
        for (sb, chunk) in seeds.chunks(per_super).enumerate() {
            report.super_batches += 1;
            let mut layers: Vec<LayerHost> = Vec::with_capacity(cfg.fanouts.len());
            let (frontier_h, mut batch_ptr_h) = merge_seeds(chunk.chunks(cfg.batch_size));
            let mut frontier = s.clone_htod(&frontier_h)?;
            let mut batch_ptr = s.clone_htod(&batch_ptr_h)?;
            for (depth, &fanout) in cfg.fanouts.iter().rev().enumerate() {
                let l = gpu.layer(&frontier, &batch_ptr, &batch_ptr_h, depth, fanout, (sb * k_super) as u32, cfg, opts, &mut report)?;
                let (next_n, m) = (l.num_nodes, l.num_edges);
                events.push(l.kernel_events);
                // To the host (cut per mini-batch by the builder thread).
                let t = Instant::now();
                pool.extend(back_rx.try_iter());
                // Two super-batches' worth of buffers at most: one being filled, one being cut.
                if pool.is_empty() && pinned_sets >= 2 * cfg.fanouts.len() {
                    pool.push(back_rx.recv().map_err(|_| CudaError::Driver("the block builder stopped".into()))?);
                }
                let mut buf = match pool.pop() {
                    Some(b) => b,
                    None => {
                        pinned_sets += 1;
                        PinnedLayer::new(&dev.ctx, next_n, m)?
                    }
                };
                buf.reserve(&dev.ctx, next_n, m)?;
                // Exactly the live prefix (the whole buffer would read past the arrays), into
                // plain slices of the page-locked buffers: DMA copies, waited for here (cudarc
                // does not wait for copies into plain slices).
                s.memcpy_dtoh(&l.nodes.slice(0..next_n), &mut buf.next.as_mut_slice()?[..next_n])?;
                s.memcpy_dtoh(&l.edge_ids.slice(0..m), &mut buf.eid.as_mut_slice()?[..m])?;
                s.memcpy_dtoh(&l.edge_src.slice(0..m), &mut buf.src.as_mut_slice()?[..m])?;
                s.memcpy_dtoh(&l.edge_dst.slice(0..m), &mut buf.dst.as_mut_slice()?[..m])?;
                s.synchronize()?;
                report.download_seconds += t.elapsed().as_secs_f64();
                layers.push(LayerHost { buf, next_n, m, next_ptr: l.node_ptr.clone(), ebp: l.edge_ptr, batch_ptr: batch_ptr_h });
                batch_ptr_h = l.node_ptr;
                frontier = l.nodes;
                batch_ptr = l.node_ptr_dev;
            }
            if tx.send((sb, layers)).is_err() {
                break;
            }
        }
        drop(tx);
        worker.join().expect("the block builder does not panic")
    })?;
    report.sample_kernel_seconds = kernel_seconds(&events)?;
    report.total_seconds = started.elapsed().as_secs_f64();
    Ok((out, report))
}

/// One layer of a super-batch on the host: its arrays and per-mini-batch offsets.
pub(crate) struct LayerView<'a> {
    nodes: &'a [u32],
    node_ptr: &'a [u32],
    dst_ptr: &'a [u32],
    edge_ptr: &'a [u64],
    edge_ids: &'a [u64],
    edge_src: &'a [u32],
    edge_dst: &'a [u32],
}

/// A super-batch's mini-batches (seeds `chunk`, `batch_size` each) cut out of its layers
/// (input layer first), mini-batches in parallel.
fn cut(chunk: &[u32], batch_size: usize, views: &[LayerView]) -> Vec<MiniBatch> {
    use rayon::prelude::*;
    let mut mbs: Vec<MiniBatch> = chunk.chunks(batch_size).map(|x| MiniBatch { seeds: x.to_vec(), blocks: Vec::new() }).collect();
    mbs.par_iter_mut().enumerate().for_each(|(b, mb)| {
        for l in views {
            let (lo, hi) = (l.edge_ptr[b] as usize, l.edge_ptr[b + 1] as usize);
            mb.blocks.push(Block {
                src_nodes: l.nodes[l.node_ptr[b] as usize..l.node_ptr[b + 1] as usize].to_vec(),
                num_dst: (l.dst_ptr[b + 1] - l.dst_ptr[b]) as usize,
                edge_src: l.edge_src[lo..hi].to_vec(),
                edge_dst: l.edge_dst[lo..hi].to_vec(),
                edge_ids: l.edge_ids[lo..hi].to_vec(),
            });
        }
    });
    mbs
}

#[cfg(test)]
mod tests {
    use super::*;
    use wayfarer_runtime::graph::{CsrParts, Orientation};

    /// Four nodes, ten edges: 8·5 bytes of offsets, 4·10 of targets, 8·4 of row starts.
    fn graph() -> CsrGraph {
        let parts = CsrParts {
            offsets: vec![0, 4, 7, 9, 10],
            targets: vec![0, 1, 2, 3, 0, 2, 3, 1, 3, 0],
            weights: None,
            labels: None,
            timestamps: None,
            original_ids: None,
        };
        CsrGraph::from_parts(parts, Orientation::Directed).unwrap()
    }

    #[test]
    fn the_graph_is_split_only_past_its_budget() {
        let g = graph();
        // The whole graph: 40 + 40 bytes.
        assert_eq!(placement(&g, Some(80), 0).unwrap(), None);
        // Out of core: offsets and row starts (72 bytes) stay, the rest is for hot rows.
        assert_eq!(placement(&g, Some(79), 0).unwrap(), Some(7));
        assert_eq!(placement(&g, Some(72), 0).unwrap(), Some(0));
        let err = placement(&g, Some(71), 0).unwrap_err().to_string();
        assert!(err.contains("offsets and row starts alone"), "{err}");
        // No budget: a share of the free memory.
        assert_eq!(placement(&g, None, 1000).unwrap(), None);
        assert_eq!(placement(&g, None, 130).unwrap(), Some(78 - 72));
    }
}
