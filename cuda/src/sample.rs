//! GNN neighbor sampling on the GPU: GARDEN's Super-batch Degree Classifier and grouped
//! parallel sampler (kernels/sample.cu), giving byte for byte the blocks of the CPU path
//! (`wayfarer_runtime::sample`, which defines them).
//!
//! Uniform sampling only (with or without replacement): weighted policies run on the CPU.

use crate::launch::{Kernel, Launch, kernels};
use crate::{CudaDevice, CudaError};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PinnedHostSlice};
use std::sync::Arc;
use std::time::Instant;
use wayfarer_runtime::sample::{Block, DEFAULT_SUPER_BATCH, MiniBatch, Policy, Replacement, SampleConfig, merge_seeds};
use wayfarer_runtime::{CsrGraph, WalkError};

/// The sampling kernels, after the prelude.
pub const SAMPLE_KERNELS: &str = include_str!("../kernels/sample.cu");

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
}

impl Default for GpuSampleOptions {
    fn default() -> Self {
        GpuSampleOptions { kernel: RandomKernel::Grouped, dmax: DEFAULT_DMAX }
    }
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
    /// Full / random nodes over all layers.
    pub full_nodes: u64,
    /// Random nodes over all layers.
    pub random_nodes: u64,
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

use crate::abi::WfSampleArgs as SampleArgs;

/// Mirrors `WfTable`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Table {
    keys: u64,
    pos: u64,
    local: u64,
    mask: u64,
}

struct Kernels {
    _module: Arc<CudaModule>,
    f: std::collections::HashMap<&'static str, CudaFunction>,
}

const SAMPLE_KERNEL_LIST: [&Kernel; 13] = [
    &kernels::S_CLASSIFY,
    &kernels::S_PARTITION,
    &kernels::S_FULL,
    &kernels::S_RANDOM,
    &kernels::S_RANDOM_WIDE,
    &kernels::S_INSERT_DST,
    &kernels::S_EDGE_BATCHES,
    &kernels::S_INSERT_EDGES,
    &kernels::S_MARK_NEW,
    &kernels::S_NEXT_PTR,
    &kernels::S_ASSIGN,
    &kernels::S_EDGE_SRC,
    &kernels::S_CLEAR,
];

/// The full CUDA source of the sampler.
pub fn sample_source() -> String {
    format!("{}\n{}\n{}", crate::codegen::PRELUDE, crate::scan::SCAN_KERNELS, SAMPLE_KERNELS)
}

struct Gpu<'a> {
    s: &'a Arc<CudaStream>,
    k: Kernels,
    sms: u32,
    scan: crate::scan::Scan,
}

fn ptr<T>(s: &CudaStream, x: &CudaSlice<T>) -> u64 {
    x.device_ptr(s).0
}

impl Gpu<'_> {
    /// A launch of sampler kernel `k` on `stream`.
    fn launch<'a>(&'a self, stream: &'a CudaStream, k: &'static Kernel) -> Launch<'a> {
        Launch::new(stream, &self.k.f[k.name], k)
    }

    fn grid(&self, n: u64) -> LaunchConfig {
        let blocks = n.div_ceil(256).clamp(1, self.sms as u64 * 8) as u32;
        LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
    }

    fn alloc<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(&self, n: usize) -> Result<CudaSlice<T>, CudaError> {
        // At least one element: a zero-length allocation has no pointer to pass.
        Ok(self.s.alloc_zeros::<T>(n.max(1))?)
    }

    /// Exclusive sum of `n` u32 into `n + 1` u64.
    fn scan(&self, input: &CudaSlice<u32>, n: usize) -> Result<CudaSlice<u64>, CudaError> {
        self.scan.exclusive(self.s, input, n)
    }

    fn last<T: DeviceRepr + Copy>(&self, x: &CudaSlice<T>, at: usize) -> Result<T, CudaError> {
        Ok(self.s.clone_dtoh(&x.slice(at..at + 1))?[0])
    }
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
    if cfg.policy != Policy::Uniform {
        return Err(WalkError::Config(
            "weighted neighbor sampling (--weighted, --policy) runs on the CPU only; the GPU sampler is uniform".into(),
        )
        .into());
    }
    wayfarer_runtime::sample::validate(graph, seeds, cfg)?;
    let mut report = GpuSampleReport::default();
    let loaded = dev.load_source("sample", &sample_source(), "wf_s_random")?;
    report.compile_seconds = loaded.compile_seconds;
    let mut f = std::collections::HashMap::new();
    for k in SAMPLE_KERNEL_LIST {
        f.insert(k.name, loaded.module.load_function(k.name)?);
    }
    let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    let scan = crate::scan::Scan::load(&loaded.module)?;
    let gpu = Gpu { s: &dev.stream, k: Kernels { _module: loaded.module, f }, sms, scan };
    let s = gpu.s;
    let t_up = Instant::now();
    let offsets = s.clone_htod(graph.offsets())?;
    let targets = s.clone_htod(graph.targets())?;
    s.synchronize()?;
    report.upload_seconds = t_up.elapsed().as_secs_f64();

    let k_super = if cfg.super_batch == 0 { DEFAULT_SUPER_BATCH } else { cfg.super_batch };
    let per_super = cfg.batch_size.saturating_mul(k_super);
    let with = cfg.replacement == Replacement::With;
    let started = Instant::now();
    // Each layer's arrays come back into pinned host buffers (taken from a small pool); a
    // second thread cuts them into mini-batch blocks (mini-batches in parallel) while the GPU
    // runs the next super-batch, then hands the buffers back.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Vec<LayerHost>)>(1);
    let (back_tx, back_rx) = std::sync::mpsc::channel::<PinnedLayer>();
    let builder = move |rx: std::sync::mpsc::Receiver<(usize, Vec<LayerHost>)>| -> Result<Vec<MiniBatch>, CudaError> {
        use rayon::prelude::*;
        let mut out = Vec::with_capacity(seeds.len().div_ceil(cfg.batch_size));
        for (sb, layers) in rx {
            let chunk = &seeds[sb * per_super..((sb + 1) * per_super).min(seeds.len())];
            let mut mbs: Vec<MiniBatch> =
                chunk.chunks(cfg.batch_size).map(|x| MiniBatch { seeds: x.to_vec(), blocks: Vec::new() }).collect();
            let views: Vec<(&LayerHost, &[u32], &[u64], &[u32], &[u32])> = layers
                .iter()
                .rev()
                .map(|l| -> Result<_, CudaError> {
                    Ok((
                        l,
                        &l.buf.next.as_slice()?[..l.next_n],
                        &l.buf.eid.as_slice()?[..l.m],
                        &l.buf.src.as_slice()?[..l.m],
                        &l.buf.dst.as_slice()?[..l.m],
                    ))
                })
                .collect::<Result<_, _>>()?;
            mbs.par_iter_mut().enumerate().for_each(|(b, mb)| {
                for &(l, next, eid, src, dst) in &views {
                    let (lo, hi) = (l.ebp[b] as usize, l.ebp[b + 1] as usize);
                    mb.blocks.push(Block {
                        src_nodes: next[l.next_ptr[b] as usize..l.next_ptr[b + 1] as usize].to_vec(),
                        num_dst: (l.batch_ptr[b + 1] - l.batch_ptr[b]) as usize,
                        edge_src: src[lo..hi].to_vec(),
                        edge_dst: dst[lo..hi].to_vec(),
                        edge_ids: eid[lo..hi].to_vec(),
                    });
                }
            });
            drop(views);
            out.extend(mbs);
            for l in layers {
                let _ = back_tx.send(l.buf);
            }
        }
        Ok(out)
    };
    let mut pool: Vec<PinnedLayer> = Vec::new();
    let mut pinned_sets = 0usize;
    let out = std::thread::scope(|scope| -> Result<Vec<MiniBatch>, CudaError> {
        let worker = scope.spawn(move || builder(rx));
        for (sb, chunk) in seeds.chunks(per_super).enumerate() {
            report.super_batches += 1;
            let batches: Vec<&[u32]> = chunk.chunks(cfg.batch_size).collect();
            let k = batches.len();
            let mut layers: Vec<LayerHost> = Vec::with_capacity(cfg.fanouts.len());
            let (frontier_h, batch_ptr_h) = merge_seeds(batches.iter().copied());
            let mut batch_ptr_h = batch_ptr_h;
            let mut frontier = s.clone_htod(&frontier_h)?;
            let mut batch_ptr = s.clone_htod(&batch_ptr_h)?;
            for (depth, &fanout) in cfg.fanouts.iter().rev().enumerate() {
                let n = batch_ptr_h[k] as usize;
                let (n32, k32, f32_) = (n as u32, k as u32, fanout);
                let with_i = with as i32;
                let flags = gpu.alloc::<u32>(n)?;
                let counts = gpu.alloc::<u32>(n)?;
                let classified = gpu.alloc::<u32>(n)?;
                let bound_ptr = gpu.alloc::<u32>(k)?;
                let full_before = gpu.alloc::<u32>(k + 1)?;
                // Every pointer of this layer's launches is a live allocation at least as long
                // as the kernel's bounds (n, k + 1, the table's capacity).
                gpu.launch(s, &kernels::S_CLASSIFY)
                    .arg(&frontier)
                    .arg(&n32)
                    .arg(&offsets)
                    .arg(&f32_)
                    .arg(&with_i)
                    .arg(&flags)
                    .arg(&counts)
                    .run(gpu.grid(n as u64))?;
                let fscan = gpu.scan(&flags, n)?;
                let edge_ptr = gpu.scan(&counts, n)?;
                gpu.launch(s, &kernels::S_PARTITION)
                    .arg(&flags)
                    .arg(&fscan)
                    .arg(&batch_ptr)
                    .arg(&k32)
                    .arg(&n32)
                    .arg(&classified)
                    .arg(&bound_ptr)
                    .arg(&full_before)
                    .run(gpu.grid((n as u64).max(k as u64 + 1)))?;
                let full_total = gpu.last(&fscan, n)?;
                let m = gpu.last(&edge_ptr, n)? as usize;
                let random_total = n as u64 - full_total;
                report.full_nodes += full_total;
                report.random_nodes += random_total;
                let out_eid = gpu.alloc::<u64>(m)?;
                let out_nbr = gpu.alloc::<u32>(m)?;
                let out_dst = gpu.alloc::<u32>(m)?;
                let args = SampleArgs {
                    frontier: ptr(s, &frontier),
                    classified: ptr(s, &classified),
                    batch_ptr: ptr(s, &batch_ptr),
                    bound_ptr: ptr(s, &bound_ptr),
                    full_before: ptr(s, &full_before),
                    edge_ptr: ptr(s, &edge_ptr),
                    offsets: ptr(s, &offsets),
                    targets: ptr(s, &targets),
                    out_eid: ptr(s, &out_eid),
                    out_nbr: ptr(s, &out_nbr),
                    out_dst: ptr(s, &out_dst),
                    seed: cfg.seed,
                    k: k32,
                    n: n32,
                    first_batch: (sb * k_super) as u32,
                    layer: depth as u32,
                    fanout,
                    with_replacement: with_i,
                };
                let (group, dmax) = match opts.kernel {
                    // Staging is capped at 32 KiB of shared memory per block (8 warps).
                    RandomKernel::Grouped => {
                        let group = fanout.clamp(1, 32);
                        (group, opts.dmax.min(32 * 1024 / (8 * (32 / group) * 4)))
                    }
                    RandomKernel::WarpPerNode => (32, 0),
                };
                s.synchronize()?;
                let t = Instant::now();
                // Full nodes on a second stream, random nodes on this one, then joined.
                let side = s.fork()?;
                let (full32, random32) = (full_total as u32, random_total as u32);
                if full_total > 0 {
                    let per_warp = 32 / group as u64;
                    gpu.launch(&side, &kernels::S_FULL)
                        .arg(&args)
                        .arg(&full32)
                        .arg(&group)
                        .run(gpu.grid(full_total.div_ceil(per_warp) * 32))?;
                }
                if random_total > 0 && fanout <= 32 {
                    let per_warp = 32 / group;
                    let mut c = gpu.grid(random_total.div_ceil(per_warp as u64) * 32);
                    c.shared_mem_bytes = (c.block_dim.0 / 32) * per_warp * dmax * 4;
                    gpu.launch(s, &kernels::S_RANDOM).arg(&args).arg(&random32).arg(&group).arg(&dmax).run(c)?;
                } else if random_total > 0 {
                    gpu.launch(s, &kernels::S_RANDOM_WIDE).arg(&args).arg(&random32).run(gpu.grid(random_total))?;
                }
                s.join(&side)?;
                s.synchronize()?;
                report.sample_kernel_seconds += t.elapsed().as_secs_f64();
                report.edges += m as u64;

                // The next frontier through the hash table.
                let ebp = gpu.alloc::<u64>(k + 1)?;
                let cap = ((2 * (n + m)).max(1024)).next_power_of_two();
                let keys = gpu.alloc::<u64>(cap)?;
                let pos = gpu.alloc::<u32>(cap)?;
                let local = gpu.alloc::<u32>(cap)?;
                let table = Table { keys: ptr(s, &keys), pos: ptr(s, &pos), local: ptr(s, &local), mask: cap as u64 - 1 };
                let newflag = gpu.alloc::<u32>(m)?;
                let m64 = m as u64;
                let small =
                    LaunchConfig { grid_dim: (1, 1, 1), block_dim: ((k as u32 + 1).next_multiple_of(32), 1, 1), shared_mem_bytes: 0 };
                gpu.launch(s, &kernels::S_CLEAR).arg(&table).run(gpu.grid(cap as u64))?;
                gpu.launch(s, &kernels::S_EDGE_BATCHES).arg(&edge_ptr).arg(&batch_ptr).arg(&k32).arg(&ebp).run(small)?;
                gpu.launch(s, &kernels::S_INSERT_DST)
                    .arg(&frontier)
                    .arg(&batch_ptr)
                    .arg(&k32)
                    .arg(&n32)
                    .arg(&table)
                    .run(gpu.grid(n as u64))?;
                gpu.launch(s, &kernels::S_INSERT_EDGES)
                    .arg(&out_nbr)
                    .arg(&m64)
                    .arg(&ebp)
                    .arg(&batch_ptr)
                    .arg(&k32)
                    .arg(&table)
                    .run(gpu.grid(m64))?;
                gpu.launch(s, &kernels::S_MARK_NEW)
                    .arg(&out_nbr)
                    .arg(&m64)
                    .arg(&ebp)
                    .arg(&batch_ptr)
                    .arg(&k32)
                    .arg(&table)
                    .arg(&newflag)
                    .run(gpu.grid(m64))?;
                let nscan = gpu.scan(&newflag, m)?;
                let new_total = gpu.last(&nscan, m)? as usize;
                let next_n = n + new_total;
                let next_ptr = gpu.alloc::<u32>(k + 1)?;
                let next = gpu.alloc::<u32>(next_n)?;
                let edge_src = gpu.alloc::<u32>(m)?;
                gpu.launch(s, &kernels::S_NEXT_PTR).arg(&batch_ptr).arg(&ebp).arg(&nscan).arg(&k32).arg(&next_ptr).run(small)?;
                gpu.launch(s, &kernels::S_ASSIGN)
                    .arg(&frontier)
                    .arg(&batch_ptr)
                    .arg(&k32)
                    .arg(&n32)
                    .arg(&out_nbr)
                    .arg(&m64)
                    .arg(&ebp)
                    .arg(&nscan)
                    .arg(&newflag)
                    .arg(&next_ptr)
                    .arg(&table)
                    .arg(&next)
                    .run(gpu.grid(n.max(m) as u64))?;
                gpu.launch(s, &kernels::S_EDGE_SRC)
                    .arg(&out_nbr)
                    .arg(&m64)
                    .arg(&ebp)
                    .arg(&k32)
                    .arg(&table)
                    .arg(&edge_src)
                    .run(gpu.grid(m64))?;
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
                s.memcpy_dtoh(&next.slice(0..next_n), &mut buf.next.as_mut_slice()?[..next_n])?;
                s.memcpy_dtoh(&out_eid.slice(0..m), &mut buf.eid.as_mut_slice()?[..m])?;
                s.memcpy_dtoh(&edge_src.slice(0..m), &mut buf.src.as_mut_slice()?[..m])?;
                s.memcpy_dtoh(&out_dst.slice(0..m), &mut buf.dst.as_mut_slice()?[..m])?;
                s.synchronize()?;
                layers.push(LayerHost {
                    buf,
                    next_n,
                    m,
                    next_ptr: s.clone_dtoh(&next_ptr)?,
                    ebp: s.clone_dtoh(&ebp)?,
                    batch_ptr: batch_ptr_h.clone(),
                });
                report.download_seconds += t.elapsed().as_secs_f64();
                batch_ptr_h = layers.last().expect("pushed").next_ptr.clone();
                frontier = next;
                batch_ptr = next_ptr;
            }
            if tx.send((sb, layers)).is_err() {
                break;
            }
        }
        drop(tx);
        worker.join().expect("the block builder does not panic")
    })?;
    report.total_seconds = started.elapsed().as_secs_f64();
    Ok((out, report))
}
