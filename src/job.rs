//! One seam for running a walk: a [`WalkJob`] value says everything about the run, every
//! backend implements [`Runner`] (run a job, streaming its walks to a sink in query order,
//! returning one [`JobReport`]), and [`select`] picks the backend (`auto`, `cpu`, `cuda`,
//! `wgpu`) with one set of messages. The builder ([`crate::WalkExt::on`]), the CLI's library
//! walks and its program files all build a job and go through here.

use crate::gpu::{self, Backend, CudaDevice, CudaError, GpuCost};
use crate::{CostRatio, CsrGraph, RunReport, SamplerMode, Starts, Walk, WalkConfig, WalkError, Walks, engine};
use std::sync::atomic::AtomicU64;
use wayfarer_compiler::WalkInfo;
use wayfarer_compiler::eval::ParamValue;
use wayfarer_compiler::ir::Program;

pub mod sample;
pub mod triangles;

/// A `#[walk]` program as wayfarer's compiler built it, with its parameter values: what the
/// backends that compile walks themselves (Cranelift, CUDA, wgpu) take.
pub struct CompiledProgram {
    /// The IR.
    pub program: Program,
    /// Its analysis (bounds, arrays, fallbacks).
    pub info: WalkInfo,
    /// The parameter values, in declaration order.
    pub values: Vec<ParamValue>,
}

impl CompiledProgram {
    /// Compiles `source` (one `#[walk]` item; `name` labels errors) with `name=value` pairs.
    pub fn from_source(source: &str, name: &str, params: &[(String, String)]) -> Result<Self, WalkError> {
        let (program, info) = gpu::compile_program(source, name)?;
        let values = gpu::program_values(&program, params)?;
        Ok(CompiledProgram { program, info, values })
    }
}

/// Native code for the CPU engine: any [`Walk`] (the macro's code, a hand-written reference)
/// and the library's walks by name. One dynamic call per run; the engine is monomorphized
/// behind it.
pub trait CpuWalk: Sync {
    /// Runs on the CPU, handing batches of about `batch_bytes` of walks to `sink`.
    fn run_cpu(
        &self,
        graph: &CsrGraph,
        starts: &Starts,
        cfg: &WalkConfig,
        progress: Option<&AtomicU64>,
        batch_bytes: u64,
        sink: &mut dyn FnMut(Walks) -> Result<(), WalkError>,
    ) -> Result<RunReport, WalkError>;
}

impl<W: Walk> CpuWalk for W {
    fn run_cpu(
        &self,
        graph: &CsrGraph,
        starts: &Starts,
        cfg: &WalkConfig,
        progress: Option<&AtomicU64>,
        batch_bytes: u64,
        sink: &mut dyn FnMut(Walks) -> Result<(), WalkError>,
    ) -> Result<RunReport, WalkError> {
        engine::run_streaming(self, graph, starts, cfg, progress, batch_bytes, sink)
    }
}

impl CpuWalk for crate::library::LibraryWalk {
    fn run_cpu(
        &self,
        graph: &CsrGraph,
        starts: &Starts,
        cfg: &WalkConfig,
        progress: Option<&AtomicU64>,
        batch_bytes: u64,
        sink: &mut dyn FnMut(Walks) -> Result<(), WalkError>,
    ) -> Result<RunReport, WalkError> {
        self.run_streaming(graph, starts, cfg, progress, batch_bytes, sink)
    }
}

/// Where a job's program comes from, for the backends that compile walks.
pub enum ProgramSource<'a> {
    /// None: a hand-written walk, which runs on the CPU only.
    None,
    /// Compiled when a backend needs it (a library walk's source: the CPU runs native code
    /// and never pays for it).
    Lazy(Box<dyn Fn() -> Result<CompiledProgram, WalkError> + Sync + 'a>),
    /// Compiled already (a program file).
    Ready(&'a CompiledProgram),
}

/// The walk a job runs.
pub struct JobWalk<'a> {
    /// Its name (messages, caches).
    pub name: String,
    /// Native CPU code, if any (else the CPU compiles the program with Cranelift).
    pub native: Option<&'a dyn CpuWalk>,
    /// The program, for CUDA, wgpu and Cranelift.
    pub program: ProgramSource<'a>,
    /// Whether the output is written as first-visit indices (`anonymous`): native code does
    /// that itself; the compiled backends' walks are converted.
    pub anonymous: bool,
}

impl<'a> JobWalk<'a> {
    /// A [`Walk`]: its native code, and its `#[walk]` source if it has one.
    pub fn native<W: Walk>(walk: &'a W) -> Self {
        let program = match walk.source() {
            Some(src) => ProgramSource::Lazy(Box::new(move || CompiledProgram::from_source(src.source, walk.name(), &src.params))),
            None => ProgramSource::None,
        };
        JobWalk { name: walk.name().to_string(), native: Some(walk), program, anonymous: false }
    }

    /// A library walk by name.
    pub fn library(walk: &'a crate::library::LibraryWalk) -> Self {
        let program = match walk.program() {
            Some((source, values)) => ProgramSource::Lazy(Box::new(move || {
                let (program, info) = gpu::compile_program(source, walk.name())?;
                Ok(CompiledProgram { program, info, values: values.clone() })
            })),
            None => ProgramSource::None,
        };
        JobWalk { name: walk.name().to_string(), native: Some(walk), program, anonymous: walk.is_anonymous() }
    }

    /// A program compiled at run time (a program file): Cranelift on the CPU.
    pub fn program(program: &'a CompiledProgram) -> Self {
        JobWalk { name: program.program.name.clone(), native: None, program: ProgramSource::Ready(program), anonymous: false }
    }

    /// Whether the walk has a program (else it runs on the CPU only).
    pub fn has_program(&self) -> bool {
        !matches!(self.program, ProgramSource::None)
    }

    fn hand_written(&self, backend: &str) -> WalkError {
        WalkError::Config(format!("walk `{}` is written by hand, not with #[walk]: it runs on the CPU only, not on {backend}", self.name))
    }

    /// The program, compiled if it is not yet.
    fn compiled(&self, backend: &str) -> Result<Got<'_>, WalkError> {
        match &self.program {
            ProgramSource::None => Err(self.hand_written(backend)),
            ProgramSource::Lazy(f) => Ok(Got::Owned(f()?)),
            ProgramSource::Ready(p) => Ok(Got::Borrowed(p)),
        }
    }
}

/// A program compiled for this run or borrowed from the job.
enum Got<'a> {
    Owned(CompiledProgram),
    Borrowed(&'a CompiledProgram),
}

impl std::ops::Deref for Got<'_> {
    type Target = CompiledProgram;
    fn deref(&self) -> &CompiledProgram {
        match self {
            Got::Owned(p) => p,
            Got::Borrowed(p) => p,
        }
    }
}

/// Which GPUs a job may use.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gpus {
    /// How many (0: every visible one). The walks are the same for any count.
    pub count: usize,
    /// Use only the GPU at this index, modulo the visible ones (one process per GPU under
    /// mpirun: its local rank).
    pub only: Option<usize>,
    /// Device memory the run may use (default: 80% of what is free); beyond it the graph runs
    /// out of core. The walks are the same either way.
    pub memory_budget: Option<usize>,
}

/// Everything about one walk run, whichever backend runs it.
pub struct WalkJob<'a> {
    /// The graph.
    pub graph: &'a CsrGraph,
    /// The walk.
    pub walk: JobWalk<'a>,
    /// Steps per walk.
    pub length: u32,
    /// Which walkers run.
    pub starts: Starts,
    /// The seed.
    pub seed: u64,
    /// The sampler policy.
    pub sampler: SamplerMode,
    /// Where the adaptive rule's cost model comes from.
    pub cost_ratio: CostRatio,
    /// CPU: walkers each thread advances in turn (0: auto, see [`crate::engine::WalkConfig`]).
    pub interleave: usize,
    /// CPU and CUDA: bytes the structured-proposal tables may take (`None`: see
    /// [`crate::engine::table_budget`]).
    pub table_budget: Option<u64>,
    /// CPU: worker threads (default: rayon's global pool).
    pub threads: Option<usize>,
    /// GPU: which devices.
    pub gpus: Gpus,
    /// A counter advanced by finished walkers (CPU).
    pub progress: Option<&'a AtomicU64>,
    /// Backends print their notes (memory estimates, tuning) on stderr.
    pub verbose: bool,
    /// The most walk output handed to the sink at once.
    pub batch_bytes: usize,
    /// Record the edge behind each move ([`Walks::edges`](crate::Walks)): the CPU and CUDA
    /// backends do; wgpu refuses it.
    pub record_edges: bool,
}

impl<'a> WalkJob<'a> {
    /// A job with the defaults: one walker per node, 80 steps, seed 0, the adaptive sampler
    /// with the fixed default cost model, batches of at most 1 GiB.
    pub fn new(graph: &'a CsrGraph, walk: JobWalk<'a>) -> Self {
        let cfg = WalkConfig::default();
        WalkJob {
            graph,
            walk,
            length: cfg.length,
            starts: Starts::EveryNode { per_node: 1 },
            seed: cfg.seed,
            sampler: cfg.sampler,
            cost_ratio: cfg.cost_ratio,
            interleave: cfg.interleave,
            table_budget: cfg.table_budget,
            threads: None,
            gpus: Gpus::default(),
            progress: None,
            verbose: false,
            batch_bytes: DEFAULT_BATCH_BYTES,
            record_edges: false,
        }
    }

    /// The CPU engine's configuration of this job.
    pub fn cpu_config(&self) -> WalkConfig {
        WalkConfig {
            length: self.length,
            seed: self.seed,
            sampler: self.sampler,
            cost_ratio: self.cost_ratio,
            interleave: self.interleave,
            table_budget: self.table_budget,
            record_edges: self.record_edges,
        }
    }
}

/// The most walk output a run hands over at once, by default: larger outputs stream to the
/// sink batch by batch (on every backend), and a CLI run without `-o` keeps only the preview.
pub const DEFAULT_BATCH_BYTES: usize = 1 << 30;

/// What a job did: the engine's report and where it ran, in words (`cpu`, `cuda (NAME,
/// kernel 1.2 ms, ...)`).
pub struct JobReport {
    /// Samplers, steps, cost model.
    pub report: RunReport,
    /// The backend and its timings, for the summary line.
    pub backend: String,
    /// What only this backend measures (kernel times, batches, device memory).
    pub detail: BackendDetail,
}

impl JobReport {
    /// The CUDA backend's own report, when CUDA ran the job.
    pub fn cuda(&self) -> Option<&gpu::GpuReport> {
        match &self.detail {
            BackendDetail::Cuda(r) => Some(r),
            _ => None,
        }
    }
}

/// The part of a [`JobReport`] that only one backend has.
#[derive(Debug)]
pub enum BackendDetail {
    /// The CPU: everything is in [`RunReport`].
    Cpu,
    /// CUDA: kernel and transfer times, batches, hub rows, out-of-core edges.
    Cuda(gpu::GpuReport),
    /// wgpu: the kernel, its timer, upload and kernel times.
    #[cfg(feature = "wgpu")]
    Wgpu(crate::wgpu::WgpuReport),
}

/// A sink for a job's walks, in query order.
pub type WalkSink<'s> = dyn FnMut(Walks) -> Result<(), WalkError> + 's;

/// A backend that runs walk jobs.
pub trait Runner {
    /// `cpu`, `cuda` or `wgpu`.
    fn kind(&self) -> Backend;
    /// Runs `job`, handing its walks to `sink` in query order.
    fn run(&self, job: &WalkJob, sink: &mut WalkSink) -> Result<JobReport, WalkError>;
}

/// The backend [`select`] (or [`triangles::select`], [`sample::select`]) chose, with what to
/// tell the user about the choice.
pub struct Selected<R: ?Sized = dyn Runner> {
    /// The backend.
    pub runner: Box<R>,
    /// Notes (`backend auto: running on the CPU (no CUDA driver)`), for stderr unless quiet.
    pub notes: Vec<String>,
    /// Warnings, printed even when quiet.
    pub warnings: Vec<String>,
}

/// Picks the backend for `job`: `Auto` takes the CUDA GPU when one is usable and the walk has a
/// program, else the CPU; `Cuda` and `Wgpu` are errors when the device or the program is
/// missing.
pub fn select(kind: Backend, job: &WalkJob) -> Result<Selected, WalkError> {
    let mut warnings = Vec::new();
    if kind == Backend::Wgpu {
        if job.record_edges {
            return Err(WalkError::param(
                "backend",
                "wgpu: recording each move's edge runs on the CPU and CUDA backends only; use one of them",
            ));
        }
        if !job.walk.has_program() {
            return Err(job.walk.hand_written("wgpu"));
        }
        warnings.push(
            "warning: the wgpu backend samples with uniform proposals only (eRJS, eRVS); the walks follow the same \
             distribution as the CPU's, not the same walks for a seed (decisions in f32)"
                .to_string(),
        );
        return Ok(Selected { runner: wgpu_runner()?, notes: Vec::new(), warnings });
    }
    let gpu_code = if job.walk.has_program() { Ok(()) } else { Err(job.walk.hand_written("CUDA")) };
    let (device, notes) = choose(kind, gpu_code, &job.gpus, "walk")?;
    let runner: Box<dyn Runner> = match device {
        Device::Cpu => Box::new(CpuRunner),
        Device::Cuda(devices) => Box::new(CudaRunner { devices }),
    };
    Ok(Selected { runner, notes, warnings })
}

/// Where [`choose`] puts a job.
pub(crate) enum Device {
    /// All CPU cores.
    Cpu,
    /// These CUDA GPUs.
    Cuda(Vec<CudaDevice>),
}

/// The one device rule for every kind of job (walks, sampling, triangles): `Cpu` is the CPU;
/// `Cuda` the GPUs `gpus` names, an error without one or when the job cannot run there
/// (`gpu_code` says why); `Auto` the GPU when the job can run there and one is usable, else
/// the CPU, with a note that says which. `Wgpu` is for walks only: an error here. `what`
/// names the command in messages.
pub(crate) fn choose(kind: Backend, gpu_code: Result<(), WalkError>, gpus: &Gpus, what: &str) -> Result<(Device, Vec<String>), WalkError> {
    let cuda_error = |e: CudaError| match e {
        CudaError::Walk(w) => w,
        other => WalkError::Config(other.to_string()),
    };
    let mut notes = Vec::new();
    let device = match kind {
        Backend::Cpu => Device::Cpu,
        Backend::Wgpu => {
            return Err(WalkError::param("backend", format!("wgpu runs walks only; `wayfarer {what}` runs on cpu or cuda")));
        }
        Backend::Cuda => {
            gpu_code?;
            Device::Cuda(open_cuda(gpus).map_err(cuda_error)?)
        }
        Backend::Auto if gpu_code.is_err() => Device::Cpu,
        Backend::Auto => match open_cuda(gpus) {
            Ok(devices) => {
                notes.push(format!("backend auto: running on the GPU ({}, {})", gpus_name(&devices), devices[0].arch));
                Device::Cuda(devices)
            }
            Err(e) => {
                notes.push(format!("backend auto: running on the CPU ({e})"));
                Device::Cpu
            }
        },
    };
    Ok((device, notes))
}

/// The CUDA devices `gpus` names: GPU 0 and the next ones up to the count (0: all), or the
/// one GPU of an MPI process.
fn open_cuda(gpus: &Gpus) -> Result<Vec<CudaDevice>, CudaError> {
    let first = CudaDevice::open(0)?;
    let visible = CudaDevice::count().max(1);
    if let Some(i) = gpus.only {
        if gpus.count > 1 {
            return Err(
                WalkError::param("gpus", format!("{}: each process uses one GPU (local rank mod the visible GPUs)", gpus.count)).into()
            );
        }
        let mine = i % visible;
        return Ok(vec![if mine == 0 { first } else { CudaDevice::open(mine)? }]);
    }
    let wanted = if gpus.count == 0 { visible } else { gpus.count };
    if wanted > visible {
        return Err(WalkError::param("gpus", format!("{wanted}: {visible} GPU(s) visible")).into());
    }
    let mut devs = vec![first];
    for i in 1..wanted {
        devs.push(CudaDevice::open(i)?);
    }
    Ok(devs)
}

/// "NAME" or "N x NAME".
pub fn gpus_name(devs: &[CudaDevice]) -> String {
    if devs.len() == 1 { devs[0].name.clone() } else { format!("{} x {}", devs.len(), devs[0].name) }
}

/// All CPU cores: the walk's native code, or its program compiled by Cranelift.
pub struct CpuRunner;

impl Runner for CpuRunner {
    fn kind(&self) -> Backend {
        Backend::Cpu
    }

    fn run(&self, job: &WalkJob, sink: &mut WalkSink) -> Result<JobReport, WalkError> {
        let cfg = job.cpu_config();
        let batch = job.batch_bytes as u64;
        // The program is compiled here, once, before the run moves to a pool; only the native
        // code and the graph go with it.
        let jit = match job.walk.native {
            Some(_) => None,
            None => {
                let c = job.walk.compiled("the CPU")?;
                let (jit, _) = wayfarer_jit::JitWalk::compile_cached(&c.program, &c.info, &c.values, job.graph.weights().is_some())
                    .map_err(|e| WalkError::Config(e.to_string()))?;
                Some(jit)
            }
        };
        let native: &dyn CpuWalk = match (&jit, job.walk.native) {
            (Some(jit), _) => &**jit,
            (None, Some(native)) => native,
            (None, None) => unreachable!("a walk without native code is compiled above"),
        };
        let (graph, starts, progress) = (job.graph, &job.starts, job.progress);
        let go = |sink: &mut WalkSink| native.run_cpu(graph, starts, &cfg, progress, batch, sink);
        let report = match job.threads {
            None => go(sink)?,
            Some(0) => return Err(WalkError::param("threads", "must be at least 1")),
            Some(n) => {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| WalkError::Config(format!("a pool of {n} threads: {e}")))?;
                // The run moves to a pool of its own; its batches come back over a channel, in
                // order, to the sink on this thread (which need not be `Send`).
                let (tx, rx) = std::sync::mpsc::sync_channel::<Walks>(1);
                std::thread::scope(|s| {
                    let worker = s.spawn(move || {
                        pool.install(|| go(&mut |b| tx.send(b).map_err(|_| WalkError::Config("the output stopped taking walks".into()))))
                    });
                    let mut taken = Ok(());
                    for batch in rx {
                        taken = sink(batch);
                        if taken.is_err() {
                            break;
                        }
                    }
                    let ran = worker.join().unwrap_or_else(|_| Err(WalkError::Config("the walk's worker thread panicked".into())));
                    taken.and(ran)
                })?
            }
        };
        let backend = match &jit {
            None => "cpu".to_string(),
            Some(jit) => format!(
                "cpu (cranelift, compiled in {:.1} ms, {} turns)",
                jit.compile_seconds * 1e3,
                if report.compiled_turns { "compiled" } else { "generic" }
            ),
        };
        Ok(JobReport { report, backend, detail: BackendDetail::Cpu })
    }
}

/// One or more CUDA GPUs: the walk's program compiled by NVRTC.
pub struct CudaRunner {
    devices: Vec<CudaDevice>,
}

impl CudaRunner {
    /// A runner on these GPUs (the walks are the same for any number of them). [`select`]
    /// opens them by the device rule; this is for callers that hold devices already.
    pub fn new(devices: Vec<CudaDevice>) -> Result<Self, WalkError> {
        if devices.is_empty() {
            return Err(WalkError::param("gpus", "a CUDA runner needs at least one GPU"));
        }
        Ok(CudaRunner { devices })
    }

    /// The devices it runs on.
    pub fn devices(&self) -> &[CudaDevice] {
        &self.devices
    }
}

/// The GPU's cost model for a job's `CostRatio` (`Default`: the GPU's own fixed default).
pub fn gpu_cost(c: CostRatio) -> GpuCost {
    match c {
        CostRatio::Default => GpuCost::Default,
        CostRatio::Cached | CostRatio::Profile => GpuCost::Tuned,
        CostRatio::Fixed(r) => GpuCost::Fixed(engine::CostModel::uniform(r, 0.0)),
        CostRatio::Model(m) => GpuCost::Fixed(m),
    }
}

impl Runner for CudaRunner {
    fn kind(&self) -> Backend {
        Backend::Cuda
    }

    fn run(&self, job: &WalkJob, sink: &mut WalkSink) -> Result<JobReport, WalkError> {
        let c = job.walk.compiled("CUDA")?;
        let anonymous = job.walk.anonymous;
        let (report, rep) = gpu::run_program_streaming(
            &self.devices,
            &c.program,
            &c.info,
            &c.values,
            &job.walk.name,
            job.graph,
            &job.starts,
            job.length,
            job.seed,
            job.sampler,
            gpu_cost(job.cost_ratio),
            job.verbose,
            job.gpus.memory_budget,
            job.table_budget,
            job.record_edges,
            job.batch_bytes,
            &mut |batch| Ok(sink(if anonymous { batch.to_anonymous() } else { batch })?),
        )
        .map_err(|e| match e {
            CudaError::Walk(w) => w,
            other => WalkError::Config(other.to_string()),
        })?;
        let backend = format!(
            "cuda ({}, kernel {:.3} ms, end-to-end {:.3} s, preprocessing {:.1} ms, R profile {:.1} ms, writing {:.3} s, {} batch{})",
            gpus_name(&self.devices),
            rep.kernel_seconds * 1e3,
            rep.total_seconds,
            rep.precompute_seconds * 1e3,
            rep.profile_seconds * 1e3,
            rep.output_seconds,
            rep.batches,
            if rep.batches == 1 { "" } else { "es" }
        );
        Ok(JobReport { report, backend, detail: BackendDetail::Cuda(rep) })
    }
}

#[cfg(feature = "wgpu")]
fn wgpu_runner() -> Result<Box<dyn Runner>, WalkError> {
    let device = crate::wgpu::WgpuDevice::open().map_err(wgpu_error)?;
    Ok(Box::new(WgpuRunner { device }))
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_runner() -> Result<Box<dyn Runner>, WalkError> {
    Err(WalkError::Config(
        "--backend wgpu: this wayfarer was built without the `wgpu` feature (cargo build --release --features wgpu)".into(),
    ))
}

#[cfg(feature = "wgpu")]
fn wgpu_error(e: crate::wgpu::WgpuError) -> WalkError {
    match e {
        crate::wgpu::WgpuError::Walk(w) => w,
        other => WalkError::Config(other.to_string()),
    }
}

/// A GPU through wgpu (Vulkan, Metal, DX12): the walk's program lowered through naga.
#[cfg(feature = "wgpu")]
pub struct WgpuRunner {
    device: crate::wgpu::WgpuDevice,
}

#[cfg(feature = "wgpu")]
impl WgpuRunner {
    /// A runner on an adapter opened already.
    pub fn new(device: crate::wgpu::WgpuDevice) -> Self {
        WgpuRunner { device }
    }

    /// Its adapter (to pick the kernel it builds, for instance).
    pub fn device(&self) -> &crate::wgpu::WgpuDevice {
        &self.device
    }
}

#[cfg(feature = "wgpu")]
impl Runner for WgpuRunner {
    fn kind(&self) -> Backend {
        Backend::Wgpu
    }

    fn run(&self, job: &WalkJob, sink: &mut WalkSink) -> Result<JobReport, WalkError> {
        use crate::wgpu::{Kernel, KernelTimer};
        let cost = match job.cost_ratio {
            CostRatio::Default => None,
            CostRatio::Cached | CostRatio::Profile => {
                return Err(WalkError::param("cost-ratio", "profile is not available on the wgpu backend; give R,F"));
            }
            CostRatio::Fixed(r) => Some(engine::CostModel::uniform(r, 0.0)),
            CostRatio::Model(m) => Some(m),
        };
        let c = job.walk.compiled("wgpu")?;
        let anonymous = job.walk.anonymous;
        let dev = &self.device;
        let (report, rep) = crate::wgpu::run_program_streaming(
            dev,
            &c.program,
            &c.info,
            &c.values,
            &job.walk.name,
            job.graph,
            &job.starts,
            job.length,
            job.seed,
            job.sampler,
            cost,
            &mut |batch| sink(if anonymous { batch.to_anonymous() } else { batch }).map_err(crate::wgpu::WgpuError::Walk),
        )
        .map_err(wgpu_error)?;
        let backend = format!(
            "wgpu ({}, {} {}, {} kernel, kernel {:.3} ms ({}), upload {:.3} s, end-to-end {:.3} s, {} batch{})",
            dev.name,
            dev.backend,
            dev.device_type,
            rep.kernel.map_or("plain", Kernel::name),
            rep.kernel_seconds * 1e3,
            match rep.kernel_timer {
                KernelTimer::Timestamps => "GPU timestamps",
                KernelTimer::HostWait => "host wait",
            },
            rep.upload_seconds,
            rep.total_seconds,
            rep.batches,
            if rep.batches == 1 { "" } else { "es" }
        );
        Ok(JobReport { report, backend, detail: BackendDetail::Wgpu(rep) })
    }
}
