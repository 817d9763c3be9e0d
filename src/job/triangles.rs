//! Triangle counting through the same seam as walks: a [`TriangleJob`], the
//! [`TriangleRunner`] trait (CPU, CUDA) and [`select`] with the one device rule.

use super::{Device, Gpus, Selected, choose, gpus_name};
use crate::gpu::{Backend, CudaDevice, CudaError};
use crate::triangles::{Detail, Share, TriangleCounts};
use crate::{CsrGraph, WalkError};

/// An edge mask (`#[mask]`), as the CPU runs it (compiled by Cranelift) and as the GPU does
/// (its IR, analysis and parameter values).
pub struct EdgeMask<'a> {
    /// The compiled mask for the CPU.
    pub jit: &'a wayfarer_jit::JitWalk,
    /// Its program, for CUDA.
    pub program: &'a super::CompiledProgram,
}

/// One triangle count.
pub struct TriangleJob<'a> {
    /// The graph (a directed one is counted in its symmetrized graph).
    pub graph: &'a CsrGraph,
    /// Count only triangles whose three edges the mask keeps.
    pub mask: Option<EdgeMask<'a>>,
    /// The total only, or per-node counts too.
    pub detail: Detail,
    /// GPU: which devices (the work is split over them by estimated cost).
    pub gpus: Gpus,
    /// The part of the count this process does (`Share::WHOLE` alone; under `mpirun`, its
    /// rank's): the counts found are that part's, summed over the processes by the caller.
    pub share: Share,
}

/// What a count found and where it ran, in words.
pub struct TriangleReport {
    /// The counts.
    pub counts: TriangleCounts,
    /// The backend and its timings, for the summary line.
    pub backend: String,
    /// The GPU's own report (kernel times, lookups, units of work), when CUDA counted.
    pub gpu: Option<crate::gpu::GpuTriangleReport>,
}

/// A backend that counts triangles.
pub trait TriangleRunner {
    /// `cpu` or `cuda`.
    fn kind(&self) -> Backend;
    /// Counts `job`'s triangles.
    fn count(&self, job: &TriangleJob) -> Result<TriangleReport, WalkError>;
}

/// The backend for `job` by the one device rule (`wgpu` is an error: it runs walks only).
pub fn select(kind: Backend, job: &TriangleJob) -> Result<Selected<dyn TriangleRunner>, WalkError> {
    let (device, notes) = choose(kind, Ok(()), &job.gpus, "triangles")?;
    let runner: Box<dyn TriangleRunner> = match device {
        Device::Cpu => Box::new(CpuTriangles),
        Device::Cuda(devices) => Box::new(CudaTriangles { devices }),
    };
    Ok(Selected { runner, notes, warnings: Vec::new() })
}

/// All CPU cores: orientation by (degree, id), merge / binary search / hub bitmaps.
pub struct CpuTriangles;

impl TriangleRunner for CpuTriangles {
    fn kind(&self) -> Backend {
        Backend::Cpu
    }

    fn count(&self, job: &TriangleJob) -> Result<TriangleReport, WalkError> {
        let t = std::time::Instant::now();
        let plan = match &job.mask {
            Some(m) => crate::triangles::Plan::Built(crate::triangles::orient_with(job.graph, m.jit)?),
            None => crate::triangles::plan(job.graph, None),
        };
        let orient_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = std::time::Instant::now();
        let counts = plan.count_share(job.detail, job.share);
        let count_ms = t.elapsed().as_secs_f64() * 1e3;
        let backend = format!(
            "cpu, {} threads; orientation {orient_ms:.3} ms ({}), counting {count_ms:.3} ms: {}",
            rayon::current_num_threads(),
            plan.describe(),
            rates(&counts, count_ms / 1e3)
        );
        Ok(TriangleReport { counts, backend, gpu: None })
    }
}

/// The counting's rates: oriented edges and triangles per second of counting.
fn rates(counts: &crate::triangles::TriangleCounts, secs: f64) -> String {
    let per = |x: u64| x as f64 / secs.max(1e-9) / 1e6;
    format!("{:.2} M edges/s, {:.2} M triangles/s", per(counts.kept_edges), per(counts.total))
}

/// One or more CUDA GPUs.
pub struct CudaTriangles {
    devices: Vec<CudaDevice>,
}

impl CudaTriangles {
    /// A counter on these GPUs (the work is split over them; the counts are the same for any
    /// number). [`select`] opens them by the device rule; this is for callers that hold
    /// devices already.
    pub fn new(devices: Vec<CudaDevice>) -> Result<Self, WalkError> {
        if devices.is_empty() {
            return Err(WalkError::param("gpus", "a CUDA triangle counter needs at least one GPU"));
        }
        Ok(CudaTriangles { devices })
    }
}

impl TriangleRunner for CudaTriangles {
    fn kind(&self) -> Backend {
        Backend::Cuda
    }

    fn count(&self, job: &TriangleJob) -> Result<TriangleReport, WalkError> {
        // Undirected graphs are oriented (and masked) on the device; directed ones are
        // symmetrized and oriented on the host (the mask then runs on the CPU).
        let on_host = job.graph.orientation() == crate::graph::Orientation::Directed;
        let both = job.mask.as_ref().map(|m| {
            let c = m.program;
            (m.jit, wayfarer_cuda::triangles::GpuMask { program: &c.program, info: &c.info, values: &c.values })
        });
        let (counts, r) = crate::gpu::count_triangles_with(&self.devices, job.graph, both, job.detail, job.share).map_err(|e| match e {
            CudaError::Walk(w) => w,
            other => WalkError::Config(other.to_string()),
        })?;
        let masked = job.mask.is_some();
        let backend = format!(
            "{} (upload {:.3} s; orientation kernels {:.3} ms ({:.3} ms with the host's work), work lists {:.3} ms, counting kernels {:.3} ms: {}; {} lookups in {} lane, {} warp and {} block units, block tables of {} slots{}{}; {})",
            gpus_name(&self.devices),
            r.upload_seconds,
            r.orient_kernel_seconds * 1e3,
            r.orient_seconds * 1e3,
            r.plan_kernel_seconds * 1e3,
            r.kernel_seconds * 1e3,
            rates(&counts, r.kernel_seconds),
            r.lookups,
            r.lane_units,
            r.warp_units,
            r.block_units,
            r.block_slots,
            if r.searched_rows() { format!(", rows up to {} entries searched", r.longest_block_row) } else { String::new() },
            if r.fused > 0 {
                ", table and lane units in one launch"
            } else if r.edge_threads > 0 {
                ", a thread per oriented edge, rows merged (a small graph of short rows: no lists, lookups not counted)"
            } else {
                ""
            },
            if on_host {
                format!("directed input: symmetrized and oriented{} on the CPU", if masked { ", mask evaluated" } else { "" })
            } else {
                format!("oriented{} on the GPU", if masked { " and masked" } else { "" })
            }
        );
        Ok(TriangleReport { counts, backend, gpu: Some(r) })
    }
}
