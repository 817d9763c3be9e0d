//! Triangle counting on one or several GPUs (kernels/triangles.cu) over the oriented, masked
//! graph the host builds (`wayfarer_runtime::triangles::orient`; a mask is evaluated there, on
//! the CPU, before the upload).
//!
//! Oriented edges are split across GPUs into contiguous ranges of equal estimated work (the
//! two rows' lengths per edge), each GPU holding the whole oriented graph; within a GPU an
//! edge whose rows are short goes to the thread-per-edge kernel, one with a long row to the
//! warp-per-edge kernel. Totals and per-node counts are integers summed over GPUs, so the
//! result is the same for any number of GPUs.

use crate::{CudaDevice, CudaError};
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use std::time::Instant;
use wayfarer_runtime::triangles::{Detail, Oriented, TriangleCounts};

/// The kernels, compiled after the prelude (whose `wf_lower_bound` they share with the walks'
/// `has_edge`).
pub const TRIANGLE_KERNELS: &str = include_str!("../../kernels/triangles.cu");

/// The complete CUDA source of the triangle counter.
pub fn triangle_source() -> String {
    format!("{}\n{}", wayfarer_compiler::cuda_backend::PRELUDE, TRIANGLE_KERNELS)
}

/// An edge whose two rows hold more than this many entries together is counted by a warp.
pub const WARP_EDGE: u64 = 96;

/// What a GPU count did.
#[derive(Clone, Debug, Default)]
pub struct GpuTriangleReport {
    /// GPUs used.
    pub devices: usize,
    /// Seconds in the counting kernels of the slowest GPU (CUDA events around its launches;
    /// all GPUs start together, after every upload).
    pub kernel_seconds: f64,
    /// Seconds uploading the oriented graph and the edge lists to every GPU.
    pub upload_seconds: f64,
    /// Oriented edges counted by a warp each.
    pub warp_edges: u64,
    /// Oriented edges counted by a thread each.
    pub thread_edges: u64,
}

/// Mirrors `WfTri`.
#[repr(C)]
#[derive(Clone, Copy)]
struct TriArgs {
    offsets: u64,
    targets: u64,
    src: u64,
    edges: u64,
    count: u64,
    total: u64,
    per_node: u64,
}

// SAFETY: plain old data with the C layout of the kernel's struct.
unsafe impl DeviceRepr for TriArgs {}

/// The estimated cost of counting edge `a → b` with rows of `la` and `lb` entries: a merge
/// (`la + lb`) for the thread kernel; for the warp kernel, the shorter row in 32-lane rounds of
/// binary searches over the longer one.
pub fn edge_cost(la: u64, lb: u64) -> u64 {
    if la + lb <= WARP_EDGE {
        1 + la + lb
    } else {
        let (short, long) = (la.min(lb), la.max(lb));
        // Each round: 32 searches in parallel, ~log2(long) dependent loads each.
        8 * (1 + short.div_ceil(32)) * (64 - long.leading_zeros() as u64)
    }
}

/// Contiguous ranges of oriented edges with about equal estimated cost ([`edge_cost`]) each
/// (`parts` of them, covering every edge once).
pub fn split_by_work(o: &Oriented, parts: usize) -> Vec<std::ops::Range<usize>> {
    let m = o.targets.len();
    let len = |v: u32| o.offsets[v as usize + 1] - o.offsets[v as usize];
    let mut work = Vec::with_capacity(m + 1);
    let mut acc = 0u64;
    work.push(0);
    for a in 0..o.num_nodes() as u32 {
        for &b in o.row(a) {
            acc += edge_cost(len(a), len(b));
            work.push(acc);
        }
    }
    let parts = parts.max(1);
    let mut cuts = vec![0usize];
    for p in 1..parts {
        let goal = acc * p as u64 / parts as u64;
        cuts.push(work.partition_point(|&w| w < goal).clamp(*cuts.last().expect("non-empty"), m));
    }
    cuts.push(m);
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// Counts the triangles of `o` on `devs` (one or more GPUs): the same result as
/// `wayfarer_runtime::triangles::count_oriented`.
pub fn count(devs: &[CudaDevice], o: &Oriented, detail: Detail) -> Result<(TriangleCounts, GpuTriangleReport), CudaError> {
    if devs.is_empty() {
        return Err(CudaError::Unavailable("no GPU given".into()));
    }
    let mut report = GpuTriangleReport { devices: devs.len(), ..Default::default() };
    let n = o.num_nodes();
    let mut src = Vec::with_capacity(o.targets.len());
    for a in 0..n as u32 {
        src.extend(std::iter::repeat_n(a, o.row(a).len()));
    }
    let len = |v: u32| o.offsets[v as usize + 1] - o.offsets[v as usize];
    let ranges = split_by_work(o, devs.len());
    struct OnDevice {
        bufs: (CudaSlice<u64>, CudaSlice<u32>, CudaSlice<u32>, CudaSlice<u64>, CudaSlice<u64>),
        total: CudaSlice<u64>,
        per_node: Option<CudaSlice<u64>>,
    }
    let mut functions = Vec::with_capacity(devs.len());
    for dev in devs {
        let loaded = dev.load_source("triangles", &triangle_source(), "wf_t_edges_warp")?;
        functions.push((loaded.module.load_function("wf_t_edges")?, loaded.module.load_function("wf_t_edges_warp")?));
    }
    // Every GPU's share is classified (in parallel) and uploaded before any launch, so the
    // GPUs start together; each is timed by its own events.
    use rayon::prelude::*;
    let shares: Vec<(Vec<u64>, Vec<u64>)> = ranges
        .iter()
        .map(|range| {
            range.clone().into_par_iter().map(|e| e as u64).partition(|&e| len(src[e as usize]) + len(o.targets[e as usize]) <= WARP_EDGE)
        })
        .collect();
    let t_up = Instant::now();
    let mut launched = Vec::with_capacity(devs.len());
    for (dev, (light, heavy)) in devs.iter().zip(&shares) {
        let s = &dev.stream;
        report.thread_edges += light.len() as u64;
        report.warp_edges += heavy.len() as u64;
        let offsets = s.clone_htod(&o.offsets)?;
        let targets = s.clone_htod(if o.targets.is_empty() { &[0u32][..] } else { &o.targets })?;
        let src_d = s.clone_htod(if src.is_empty() { &[0u32][..] } else { &src })?;
        let light_d = s.clone_htod(if light.is_empty() { &[0u64][..] } else { light })?;
        let heavy_d = s.clone_htod(if heavy.is_empty() { &[0u64][..] } else { heavy })?;
        let total = s.alloc_zeros::<u64>(1)?;
        let per_node = if detail == Detail::PerNode { Some(s.alloc_zeros::<u64>(n.max(1))?) } else { None };
        launched.push(OnDevice { bufs: (offsets, targets, src_d, light_d, heavy_d), total, per_node });
    }
    for dev in devs {
        dev.stream.synchronize()?;
    }
    report.upload_seconds = t_up.elapsed().as_secs_f64();
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut events = Vec::with_capacity(devs.len());
    for (((dev, (light, heavy)), l), (thread_fn, warp_fn)) in devs.iter().zip(&shares).zip(&launched).zip(&functions) {
        let s = &dev.stream;
        let (offsets, targets, src_d, light_d, heavy_d) = &l.bufs;
        let base = TriArgs {
            offsets: offsets.device_ptr(s).0,
            targets: targets.device_ptr(s).0,
            src: src_d.device_ptr(s).0,
            edges: 0,
            count: 0,
            total: l.total.device_ptr(s).0,
            per_node: l.per_node.as_ref().map_or(0, |p| p.device_ptr(s).0),
        };
        let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u64;
        let grid = |threads: u64| LaunchConfig {
            grid_dim: (threads.div_ceil(256).clamp(1, sms * 16) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let light_args = TriArgs { edges: light_d.device_ptr(s).0, count: light.len() as u64, ..base };
        let heavy_args = TriArgs { edges: heavy_d.device_ptr(s).0, count: heavy.len() as u64, ..base };
        let start = s.record_event(timing)?;
        // SAFETY: every pointer in the argument structs is a live allocation on this device
        // of the length the kernels index (edges < count, rows within offsets, nodes < n).
        unsafe {
            if !light.is_empty() {
                let mut b = s.launch_builder(thread_fn);
                b.arg(&light_args);
                b.launch(grid(light.len() as u64))?;
            }
            if !heavy.is_empty() {
                let mut b = s.launch_builder(warp_fn);
                b.arg(&heavy_args);
                b.launch(grid(heavy.len() as u64 * 32))?;
            }
        }
        events.push((start, s.record_event(timing)?));
    }
    for (start, end) in &events {
        report.kernel_seconds = report.kernel_seconds.max(start.elapsed_ms(end)? as f64 / 1e3);
    }
    let mut total = 0u64;
    let mut per_node = if detail == Detail::PerNode { vec![0u64; n] } else { Vec::new() };
    for (dev, l) in devs.iter().zip(&launched) {
        total += dev.stream.clone_dtoh(&l.total)?[0];
        if let Some(p) = &l.per_node {
            for (acc, x) in per_node.iter_mut().zip(dev.stream.clone_dtoh(p)?) {
                *acc += x;
            }
        }
    }
    Ok((o.counts(total, per_node), report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_splits_cover_every_edge_once_with_balanced_cost() {
        let g = wayfarer_runtime::graph::generate::rmat(12, 16, 1).unwrap();
        let o = wayfarer_runtime::triangles::orient(&g, None);
        let len = |v: u32| o.offsets[v as usize + 1] - o.offsets[v as usize];
        let mut src = Vec::new();
        for a in 0..o.num_nodes() as u32 {
            src.extend(std::iter::repeat_n(a, o.row(a).len()));
        }
        let cost = |r: &std::ops::Range<usize>| r.clone().map(|e| edge_cost(len(src[e]), len(o.targets[e]))).sum::<u64>();
        let total = cost(&(0..o.targets.len()));
        for parts in [1, 2, 3, 4, 8] {
            let ranges = split_by_work(&o, parts);
            assert_eq!(ranges.len(), parts);
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges.last().unwrap().end, o.targets.len());
            for w in ranges.windows(2) {
                assert_eq!(w[0].end, w[1].start, "contiguous");
            }
            let biggest = ranges.iter().map(cost).max().unwrap();
            let max_edge = (0..o.targets.len()).map(|e| edge_cost(len(src[e]), len(o.targets[e]))).max().unwrap();
            assert!(biggest <= total / parts as u64 + max_edge, "{parts} parts: {biggest} of {total}");
        }
    }
}
