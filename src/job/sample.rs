//! GNN neighbour sampling through the same seam as walks: a [`SampleJob`], the
//! [`SampleRunner`] trait (CPU, CUDA) and [`select`] with the one device rule.

use super::{Device, Gpus, Selected, choose};
use crate::gpu::{Backend, CudaDevice, CudaError};
use crate::sample::{MiniBatch, Policy, SampleConfig};
use crate::{CsrGraph, WalkError};
use wayfarer_cuda::sample::GpuSampleOptions;

/// One sampling run: every mini-batch of `seeds`.
pub struct SampleJob<'a> {
    /// The graph (a node's neighbours are its row: its out-edges).
    pub graph: &'a CsrGraph,
    /// Seed nodes (internal ids), in mini-batches of `cfg.batch_size`.
    pub seeds: &'a [u32],
    /// Fanouts, batch size, replacement, policy, seed, super-batch size.
    pub cfg: SampleConfig,
    /// A compiled `#[sampler]` policy (CPU only), with `cfg.policy` = [`Policy::Custom`].
    pub policy: Option<&'a wayfarer_jit::JitWalk>,
    /// The GPU's kernel options.
    pub gpu: GpuSampleOptions,
}

/// The blocks and where they were made, in words.
pub struct SampleReport {
    /// One entry per mini-batch, in order.
    pub batches: Vec<MiniBatch>,
    /// The backend and its timings, for the summary line.
    pub backend: String,
}

/// A mini-batch consumer: it gets every mini-batch in order, once.
pub type BatchSink<'s> = dyn FnMut(MiniBatch) -> Result<(), WalkError> + 's;

/// A backend that samples neighbours.
pub trait SampleRunner {
    /// `cpu` or `cuda`.
    fn kind(&self) -> Backend;
    /// Samples every mini-batch of `job`, handing each to `sink` in order as soon as it is
    /// ready (the CPU holds only a window of them at a time), and returns the backend and its
    /// timings, for the summary line.
    fn sample_each(&self, job: &SampleJob, sink: &mut BatchSink) -> Result<String, WalkError>;
    /// Samples every mini-batch of `job` into one list. The list holds the epoch, so the
    /// memory check is the epoch's ([`crate::sample::check_memory`]), not a window's.
    fn sample(&self, job: &SampleJob) -> Result<SampleReport, WalkError> {
        crate::sample::check_memory(job.graph, job.seeds.len(), &job.cfg)?;
        let mut batches = Vec::new();
        let backend = self.sample_each(job, &mut |mb| {
            batches.push(mb);
            Ok(())
        })?;
        Ok(SampleReport { batches, backend })
    }
}

/// The backend for `job` by the one device rule: the GPU samples uniformly only, so a
/// weighted or policy job is the CPU's under `auto` and an error under `cuda`.
pub fn select(kind: Backend, job: &SampleJob) -> Result<Selected<dyn SampleRunner>, WalkError> {
    let gpu_code = if job.policy.is_none() && job.cfg.policy == Policy::Uniform {
        Ok(())
    } else {
        Err(WalkError::param("backend", "cuda: weighted sampling (--weighted, --policy) runs on the CPU only; use --backend cpu"))
    };
    let (device, notes) = choose(kind, gpu_code, &Gpus { count: 1, ..Default::default() }, "sample")?;
    let runner: Box<dyn SampleRunner> = match device {
        Device::Cpu => Box::new(CpuSampler),
        Device::Cuda(mut devices) => Box::new(CudaSampler { device: devices.remove(0) }),
    };
    Ok(Selected { runner, notes, warnings: Vec::new() })
}

/// All CPU cores: uniform, edge-weight or policy sampling.
pub struct CpuSampler;

impl SampleRunner for CpuSampler {
    fn kind(&self) -> Backend {
        Backend::Cpu
    }

    fn sample_each(&self, job: &SampleJob, sink: &mut BatchSink) -> Result<String, WalkError> {
        match job.policy {
            Some(p) => crate::sample::sample_each_with(job.graph, job.seeds, &job.cfg, p, sink)?,
            None => crate::sample::sample_each(job.graph, job.seeds, &job.cfg, None, sink)?,
        }
        Ok(format!("cpu, {} threads", rayon::current_num_threads()))
    }
}

/// One CUDA GPU: the super-batch classifier, copy kernel and random kernel (uniform only).
pub struct CudaSampler {
    device: CudaDevice,
}

impl SampleRunner for CudaSampler {
    fn kind(&self) -> Backend {
        Backend::Cuda
    }

    fn sample_each(&self, job: &SampleJob, sink: &mut BatchSink) -> Result<String, WalkError> {
        let walk_error = |e| match e {
            CudaError::Walk(w) => w,
            other => WalkError::Config(other.to_string()),
        };
        // The epoch's blocks are built in device memory, then copied out; when they do not fit
        // there, the streaming path copies each super-batch out as it is done.
        match wayfarer_cuda::sample::sample_on_device(&self.device, job.graph, job.seeds, &job.cfg, job.gpu) {
            Ok(blocks) => {
                let r = &blocks.report;
                let on_device = r.total_seconds;
                let (batches, copy) = blocks.to_host().map_err(walk_error)?;
                let backend = format!(
                    "{} ({:?} kernel; blocks in device memory in {:.3} s: sampling kernels {:.3} s, {} super-batches; then to the host: page-locking {:.3} s, copies {:.3} s ({:.2} GB), cutting {:.3} s; graph upload {:.3} s)",
                    self.device.name,
                    job.gpu.kernel,
                    on_device,
                    r.sample_kernel_seconds,
                    r.super_batches,
                    copy.pin_seconds,
                    copy.copy_seconds,
                    copy.bytes as f64 / 1e9,
                    copy.cut_seconds,
                    r.upload_seconds
                ) + &r.out_of_core_note();
                batches.into_iter().try_for_each(sink)?;
                Ok(backend)
            }
            Err(CudaError::OutOfMemory(why)) => {
                let (batches, r) =
                    wayfarer_cuda::sample::sample(&self.device, job.graph, job.seeds, &job.cfg, job.gpu).map_err(walk_error)?;
                let backend = format!(
                    "{} ({:?} kernel; the epoch's blocks did not fit in device memory ({why}): streamed to the host per super-batch; sampling kernels {:.3} s, downloads {:.3} s, {} super-batches, graph upload {:.3} s)",
                    self.device.name, job.gpu.kernel, r.sample_kernel_seconds, r.download_seconds, r.super_batches, r.upload_seconds
                ) + &r.out_of_core_note();
                batches.into_iter().try_for_each(sink)?;
                Ok(backend)
            }
            Err(e) => Err(walk_error(e)),
        }
    }
}
