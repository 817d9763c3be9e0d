//! One layer of one super-batch on the device: classify the frontier, sample (full nodes and
//! random nodes on two streams), then the next frontier through a hash table (dedup and
//! block-local ids), all by kernels. Both the streaming and the device-resident paths call it.

use super::{GpuSampleOptions, GpuSampleReport, RandomKernel};
use crate::CudaError;
use crate::abi::WfSampleArgs as SampleArgs;
use crate::launch::{Kernel, Launch, kernels};
use crate::split::SplitGraph;
use cudarc::driver::{CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig};
use std::collections::HashMap;
use std::sync::Arc;
use wayfarer_runtime::sample::{Replacement, SampleConfig};

/// Mirrors `WfTable`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Table {
    keys: u64,
    pos: u64,
    local: u64,
    mask: u64,
}

pub(super) const SAMPLE_KERNEL_LIST: [&Kernel; 15] = [
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
    &kernels::S_TO_I64_U32,
    &kernels::S_TO_I64_U64,
];

/// The sampler's kernels on one stream, with the graph uploaded.
pub(super) struct Gpu {
    pub(super) s: Arc<CudaStream>,
    pub(super) _module: Arc<CudaModule>,
    pub(super) f: HashMap<&'static str, CudaFunction>,
    pub(super) sms: u32,
    pub(super) scan: crate::scan::Scan,
    pub(super) offsets: CudaSlice<u64>,
    /// The whole graph's targets, or (out of core) the hot rows'.
    pub(super) targets: CudaSlice<u32>,
    /// Out of core: the split and its row starts in device memory.
    pub(super) split: Option<(SplitGraph, CudaSlice<u64>)>,
}

pub(super) fn ptr<T>(s: &CudaStream, x: &CudaSlice<T>) -> u64 {
    x.device_ptr(s).0
}

/// One layer's output, on the device, with its per-mini-batch offsets on the host.
pub(super) struct Layer {
    /// The next frontier: every mini-batch's source nodes, one after another (the
    /// destination nodes first in each).
    pub(super) nodes: CudaSlice<u32>,
    /// `nodes`' per-mini-batch offsets (k + 1), on the device for the next layer.
    pub(super) node_ptr_dev: CudaSlice<u32>,
    /// The same offsets on the host.
    pub(super) node_ptr: Vec<u32>,
    /// The edges' per-mini-batch offsets (k + 1).
    pub(super) edge_ptr: Vec<u64>,
    pub(super) edge_ids: CudaSlice<u64>,
    pub(super) edge_src: CudaSlice<u32>,
    pub(super) edge_dst: CudaSlice<u32>,
    pub(super) num_nodes: usize,
    pub(super) num_edges: usize,
    /// CUDA events around the two sampling kernels (read once the stream has finished).
    pub(super) kernel_events: (CudaEvent, CudaEvent),
}

impl Gpu {
    /// A launch of sampler kernel `k` on `stream`.
    pub(super) fn launch<'a>(&'a self, stream: &'a CudaStream, k: &'static Kernel) -> Launch<'a> {
        Launch::new(stream, &self.f[k.name], k)
    }

    pub(super) fn grid(&self, n: u64) -> LaunchConfig {
        crate::launch::striding_grid(n, self.sms)
    }

    fn alloc<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(&self, n: usize) -> Result<CudaSlice<T>, CudaError> {
        // At least one element: a zero-length allocation has no pointer to pass.
        Ok(self.s.alloc_zeros::<T>(n.max(1))?)
    }

    /// Exclusive sum of `n` u32 into `n + 1` u64.
    fn scan(&self, input: &CudaSlice<u32>, n: usize) -> Result<CudaSlice<u64>, CudaError> {
        self.scan.exclusive(&self.s, input, n)
    }

    fn last<T: DeviceRepr + Copy>(&self, x: &CudaSlice<T>, at: usize) -> Result<T, CudaError> {
        Ok(self.s.clone_dtoh(&x.slice(at..at + 1))?[0])
    }

    /// Samples `fanout` neighbours of every node of `frontier` (`k` mini-batches, mini-batch
    /// b's nodes at `batch_ptr[b]..batch_ptr[b + 1]`, `batch_ptr_h` the same on the host),
    /// layer `depth` counted from the seeds, mini-batches numbered from `first_batch`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn layer(
        &self,
        frontier: &CudaSlice<u32>,
        batch_ptr: &CudaSlice<u32>,
        batch_ptr_h: &[u32],
        depth: usize,
        fanout: u32,
        first_batch: u32,
        cfg: &SampleConfig,
        opts: GpuSampleOptions,
        report: &mut GpuSampleReport,
    ) -> Result<Layer, CudaError> {
        let s = &self.s;
        let k = batch_ptr_h.len() - 1;
        let with = cfg.replacement == Replacement::With;
        let n = batch_ptr_h[k] as usize;
        let (n32, k32, f32_) = (n as u32, k as u32, fanout);
        let with_i = with as i32;
        let flags = self.alloc::<u32>(n)?;
        let counts = self.alloc::<u32>(n)?;
        let classified = self.alloc::<u32>(n)?;
        let bound_ptr = self.alloc::<u32>(k)?;
        let full_before = self.alloc::<u32>(k + 1)?;
        // Every pointer of this layer's launches is a live allocation at least as long as the
        // kernel's bounds (n, k + 1, the table's capacity).
        self.launch(s, &kernels::S_CLASSIFY)
            .arg(frontier)
            .arg(&n32)
            .arg(&self.offsets)
            .arg(&f32_)
            .arg(&with_i)
            .arg(&flags)
            .arg(&counts)
            .run(self.grid(n as u64))?;
        let fscan = self.scan(&flags, n)?;
        let edge_ptr = self.scan(&counts, n)?;
        self.launch(s, &kernels::S_PARTITION)
            .arg(&flags)
            .arg(&fscan)
            .arg(batch_ptr)
            .arg(&k32)
            .arg(&n32)
            .arg(&classified)
            .arg(&bound_ptr)
            .arg(&full_before)
            .run(self.grid((n as u64).max(k as u64 + 1)))?;
        let full_total = self.last(&fscan, n)?;
        let m = self.last(&edge_ptr, n)? as usize;
        let random_total = n as u64 - full_total;
        report.full_nodes += full_total;
        report.random_nodes += random_total;
        let out_eid = self.alloc::<u64>(m)?;
        let out_nbr = self.alloc::<u32>(m)?;
        let out_dst = self.alloc::<u32>(m)?;
        let args = SampleArgs {
            frontier: ptr(s, frontier),
            classified: ptr(s, &classified),
            batch_ptr: ptr(s, batch_ptr),
            bound_ptr: ptr(s, &bound_ptr),
            full_before: ptr(s, &full_before),
            edge_ptr: ptr(s, &edge_ptr),
            offsets: ptr(s, &self.offsets),
            targets: ptr(s, &self.targets),
            out_eid: ptr(s, &out_eid),
            out_nbr: ptr(s, &out_nbr),
            out_dst: ptr(s, &out_dst),
            seed: cfg.seed,
            k: k32,
            n: n32,
            first_batch,
            layer: depth as u32,
            fanout,
            with_replacement: with_i,
            row_base: self.split.as_ref().map_or(0, |(_, rb)| ptr(s, rb)),
            hot_edges: self.split.as_ref().map_or(0, |(sg, _)| sg.hot_edges),
            cold_targets: self.split.as_ref().map_or(0, |(sg, _)| sg.cold.0),
        };
        let (group, dmax) = match opts.kernel {
            // Staging is capped at 32 KiB of shared memory per block (8 warps).
            RandomKernel::Grouped => {
                let group = fanout.clamp(1, 32);
                (group, opts.dmax.min(32 * 1024 / (8 * (32 / group) * 4)))
            }
            RandomKernel::WarpPerNode => (32, 0),
        };
        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = s.record_event(timing)?;
        // Full nodes on a second stream, random nodes on this one, then joined.
        let side = s.fork()?;
        let (full32, random32) = (full_total as u32, random_total as u32);
        if full_total > 0 {
            let per_warp = 32 / group as u64;
            self.launch(&side, &kernels::S_FULL).arg(&args).arg(&full32).arg(&group).run(self.grid(full_total.div_ceil(per_warp) * 32))?;
        }
        if random_total > 0 && fanout <= 32 {
            let per_warp = 32 / group;
            let mut c = self.grid(random_total.div_ceil(per_warp as u64) * 32);
            c.shared_mem_bytes = (c.block_dim.0 / 32) * per_warp * dmax * 4;
            self.launch(s, &kernels::S_RANDOM).arg(&args).arg(&random32).arg(&group).arg(&dmax).run(c)?;
        } else if random_total > 0 {
            self.launch(s, &kernels::S_RANDOM_WIDE).arg(&args).arg(&random32).run(self.grid(random_total))?;
        }
        s.join(&side)?;
        let end = s.record_event(timing)?;
        report.edges += m as u64;

        // The next frontier through the hash table.
        let ebp = self.alloc::<u64>(k + 1)?;
        let cap = ((2 * (n + m)).max(1024)).next_power_of_two();
        let keys = self.alloc::<u64>(cap)?;
        let pos = self.alloc::<u32>(cap)?;
        let local = self.alloc::<u32>(cap)?;
        let table = Table { keys: ptr(s, &keys), pos: ptr(s, &pos), local: ptr(s, &local), mask: cap as u64 - 1 };
        let newflag = self.alloc::<u32>(m)?;
        let m64 = m as u64;
        let small = LaunchConfig { grid_dim: (1, 1, 1), block_dim: ((k as u32 + 1).next_multiple_of(32), 1, 1), shared_mem_bytes: 0 };
        self.launch(s, &kernels::S_CLEAR).arg(&table).run(self.grid(cap as u64))?;
        self.launch(s, &kernels::S_EDGE_BATCHES).arg(&edge_ptr).arg(batch_ptr).arg(&k32).arg(&ebp).run(small)?;
        self.launch(s, &kernels::S_INSERT_DST).arg(frontier).arg(batch_ptr).arg(&k32).arg(&n32).arg(&table).run(self.grid(n as u64))?;
        self.launch(s, &kernels::S_INSERT_EDGES)
            .arg(&out_nbr)
            .arg(&m64)
            .arg(&ebp)
            .arg(batch_ptr)
            .arg(&k32)
            .arg(&table)
            .run(self.grid(m64))?;
        self.launch(s, &kernels::S_MARK_NEW)
            .arg(&out_nbr)
            .arg(&m64)
            .arg(&ebp)
            .arg(batch_ptr)
            .arg(&k32)
            .arg(&table)
            .arg(&newflag)
            .run(self.grid(m64))?;
        let nscan = self.scan(&newflag, m)?;
        let new_total = self.last(&nscan, m)? as usize;
        let next_n = n + new_total;
        let next_ptr = self.alloc::<u32>(k + 1)?;
        let next = self.alloc::<u32>(next_n)?;
        let edge_src = self.alloc::<u32>(m)?;
        self.launch(s, &kernels::S_NEXT_PTR).arg(batch_ptr).arg(&ebp).arg(&nscan).arg(&k32).arg(&next_ptr).run(small)?;
        self.launch(s, &kernels::S_ASSIGN)
            .arg(frontier)
            .arg(batch_ptr)
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
            .run(self.grid(n.max(m) as u64))?;
        self.launch(s, &kernels::S_EDGE_SRC).arg(&out_nbr).arg(&m64).arg(&ebp).arg(&k32).arg(&table).arg(&edge_src).run(self.grid(m64))?;
        Ok(Layer {
            node_ptr: s.clone_dtoh(&next_ptr)?,
            edge_ptr: s.clone_dtoh(&ebp)?,
            nodes: next,
            node_ptr_dev: next_ptr,
            edge_ids: out_eid,
            edge_src,
            edge_dst: out_dst,
            num_nodes: next_n,
            num_edges: m,
            kernel_events: (start, end),
        })
    }
}
