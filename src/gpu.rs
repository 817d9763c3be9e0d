//! Running the library walks on a GPU (the CUDA backend, `wayfarer-cuda`).

use crate::library::LibraryWalk;
use crate::{CsrGraph, RunReport, SamplerMode, Starts, WalkError, Walks};
pub use wayfarer_cuda::{CudaDevice, CudaError, GpuReport};
use wayfarer_runtime::engine::CostModel;

/// Which backend a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The GPU if there is a usable one, else the CPU.
    Auto,
    /// All CPU cores.
    Cpu,
    /// The CUDA GPU (an error if there is none).
    Cuda,
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" => Ok(Backend::Cuda),
            "wgpu" => Err("--backend wgpu is not built yet; use auto, cpu or cuda".into()),
            other => Err(format!("unknown backend `{other}`: use auto, cpu or cuda")),
        }
    }
}

/// The GPU to use for `backend`: `Ok(None)` means the CPU (`Auto` without a usable GPU says
/// why in `note`); `Cuda` without one is an error.
pub fn device_for(backend: Backend) -> Result<(Option<CudaDevice>, Option<String>), CudaError> {
    match backend {
        Backend::Cpu => Ok((None, None)),
        Backend::Cuda => CudaDevice::open(0).map(|d| (Some(d), None)),
        Backend::Auto => match CudaDevice::open(0) {
            Ok(d) => Ok((Some(d), None)),
            Err(e) => Ok((None, Some(e.to_string()))),
        },
    }
}

/// The cost model the GPU uses when none is given: eRVS is a warp's job over the row, eRJS a
/// lane's, so an eRJS trial costs about as much as a few edges of eRVS.
pub const GPU_COST_MODEL: CostModel = CostModel { ratio: 4.0, fixed: 64.0, ratio_short: 4.0 };

/// Runs a library walk on the GPU.
#[allow(clippy::too_many_arguments)]
pub fn run_library_walk(
    dev: &CudaDevice,
    walk: &LibraryWalk,
    graph: &CsrGraph,
    starts: &Starts,
    length: u32,
    seed: u64,
    sampler: SamplerMode,
    cost: Option<CostModel>,
    verbose: bool,
) -> Result<(Walks, RunReport, GpuReport), CudaError> {
    let Some((source, values)) = walk.program() else {
        return Err(WalkError::Config(format!("`{}` is a hand-written CPU reference; it does not run on the GPU", walk.name())).into());
    };
    let (program, info) = wayfarer_compiler::compile_source(source).map_err(|d| CudaError::Driver(format!("{d:?}")))?;
    let compiled = dev.compile(&program, &info)?;
    // Like the CPU engine: the cost model only matters to the adaptive rule; the other policies
    // use R = 1, F = 0 (which sets eRJS's trial cap), so their walks can match the CPU's.
    let cost = if sampler == SamplerMode::Adaptive { cost.unwrap_or(GPU_COST_MODEL) } else { CostModel::uniform(1.0, 0.0) };
    let cfg =
        wayfarer_cuda::GpuRun { length, seed, sampler, cost, starts, memory_budget: None, verbose, hub_budget: None, hub_min_degree: None };
    let (mut walks, rep) = wayfarer_cuda::run(dev, &compiled, graph, &values, &program, &cfg)?;
    if walk.is_anonymous() {
        walks = walks.to_anonymous();
    }
    let report = RunReport {
        walk: walk.name().into(),
        walkers: rep.walkers,
        steps: rep.steps,
        walk_seconds: rep.kernel_seconds,
        precompute_seconds: rep.precompute_seconds,
        profile_seconds: 0.0,
        cost,
        cost_ratio_source: "gpu default",
        stats: rep.stats,
        threads: 0,
        sampler,
    };
    Ok((walks, report, rep))
}
