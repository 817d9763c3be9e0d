//! Running the library walks on a GPU (the CUDA backend, `wayfarer-cuda`).

use crate::library::LibraryWalk;
use crate::{CsrGraph, RunReport, SamplerMode, Starts, WalkError, Walks};
use wayfarer_compiler::eval::ParamValue;
/// GNN neighbor sampling on the GPU (uniform; the same blocks as [`crate::sample::sample`]).
pub use wayfarer_cuda::sample::{
    DeviceBlocks, DeviceLayer, GpuSampleOptions, GpuSampleReport, GpuSampler, HostCopyReport, LayerI64Out, RandomKernel,
    sample as sample_neighbors, sample_on_device as sample_neighbors_on_device,
};
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
    /// A GPU through wgpu (Vulkan, Metal, DX12; cargo feature `wgpu`).
    Wgpu,
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Backend::Auto),
            "cpu" => Ok(Backend::Cpu),
            "cuda" => Ok(Backend::Cuda),
            "wgpu" => Ok(Backend::Wgpu),
            other => Err(format!("unknown backend `{other}`: use auto, cpu, cuda or wgpu")),
        }
    }
}

/// Where the GPU's adaptive rule gets its cost model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GpuCost {
    /// [`GPU_COST_MODEL`].
    Default,
    /// This model.
    Fixed(CostModel),
    /// Tuned on a pilot on this device for this walk and graph (a burn-in walk, then a ladder
    /// of `R` on a pilot that fills the grid; the fastest wins), then cached per device, walk
    /// and graph (`--cost-ratio profile`). Opt-in: on R-MAT 20 it won up to 26% on some cells
    /// (2nd-order PageRank, Node2Vec on Pareto(1) weights) and lost 10–40% on others, the
    /// pick varies from run to run (so would the walks), and the first run pays 0.5–2 s
    /// (`bench/results/2026-11-30-gpu-rmat20-jumps-prep.md`).
    Tuned,
}

/// The cost model the GPU uses when none is given: eRVS is a warp's job over the row, eRJS a
/// lane's, so an eRJS trial costs about as much as a few edges of eRVS.
pub const GPU_COST_MODEL: CostModel = CostModel { ratio: 4.0, fixed: 64.0, ratio_short: 4.0 };

/// Hyperparameter values for `program` from `name=value` pairs (see
/// [`wayfarer_compiler::params::values`]: declared types, defaults and checks).
pub fn program_values(program: &wayfarer_compiler::ir::Program, pairs: &[(String, String)]) -> Result<Vec<ParamValue>, WalkError> {
    wayfarer_compiler::params::values(program, pairs).map_err(|e| WalkError::Parameter { name: e.name, message: e.message })
}

/// Compiles `source` (one `#[walk]` item) for the GPU; a compile error renders the compiler's
/// diagnostics against `path`.
pub fn compile_program(source: &str, path: &str) -> Result<(wayfarer_compiler::ir::Program, wayfarer_compiler::WalkInfo), WalkError> {
    wayfarer_compiler::compile_source(source)
        .map_err(|d| WalkError::Config(format!("{path}: the walk does not compile:\n{}", d.render(source, path))))
}

/// Runs a compiled program on one or more GPUs (`devs`; with several, each holds the graph and
/// runs the walkers whose start node hashes to it, and the walks are the same as on one),
/// handing the walks to `sink` in query order, in batches of at most
/// `host_batch_bytes` of output.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_program_streaming(
    devs: &[CudaDevice],
    program: &wayfarer_compiler::ir::Program,
    info: &wayfarer_compiler::WalkInfo,
    values: &[ParamValue],
    name: &str,
    graph: &CsrGraph,
    starts: &Starts,
    length: u32,
    seed: u64,
    sampler: SamplerMode,
    cost: GpuCost,
    verbose: bool,
    memory_budget: Option<usize>,
    table_budget: Option<u64>,
    record_edges: bool,
    host_batch_bytes: usize,
    sink: &mut dyn FnMut(Walks) -> Result<(), CudaError>,
) -> Result<(RunReport, GpuReport), CudaError> {
    check_graph(program, graph)?;
    let Some(dev) = devs.first() else {
        return Err(CudaError::Unavailable("no GPU given".into()));
    };
    let compiled = devs.iter().map(|d| d.compile(program, info)).collect::<Result<Vec<_>, _>>()?;
    // Like the CPU engine: the cost model only matters to the adaptive rule; the other policies
    // use R = 1, F = 0 (which sets eRJS's trial cap), so their walks can match the CPU's.
    // Without a given model the adaptive rule's R is measured on this device for this walk and
    // graph, once, and cached like the CPU's.
    let key = cost_key(dev, program, values, graph);
    let adaptive = sampler == SamplerMode::Adaptive;
    let cached = if adaptive && cost == GpuCost::Tuned { cached_cost(&key) } else { None };
    let (cost_model, profile) = match (adaptive, cost, cached) {
        (false, _, _) => (CostModel::uniform(1.0, 0.0), false),
        (true, GpuCost::Fixed(c), _) => (c, false),
        (true, GpuCost::Default, _) => (GPU_COST_MODEL, false),
        (true, GpuCost::Tuned, Some(c)) => (c, false),
        (true, GpuCost::Tuned, None) => (GPU_COST_MODEL, true),
    };
    let cost_arg = cost;
    let cost = cost_model;
    let cfg = wayfarer_cuda::GpuRun {
        length,
        seed,
        sampler,
        cost,
        starts,
        memory_budget,
        verbose,
        // WAYFARER_HUB_BUDGET=bytes (0: no bitmaps, has_edge always searches): for benchmarks.
        hub_budget: std::env::var("WAYFARER_HUB_BUDGET").ok().and_then(|v| v.trim().parse().ok()),
        // WAYFARER_HUB_MIN_DEGREE=d: rows at least this long may become bitmaps (for sweeps).
        hub_min_degree: std::env::var("WAYFARER_HUB_MIN_DEGREE").ok().and_then(|v| v.trim().parse().ok()),
        profile,
        table_budget,
        record_edges,
    };
    let gpus: Vec<_> = devs.iter().zip(&compiled).collect();
    let rep = wayfarer_cuda::run_multi_streaming(&gpus, graph, values, program, &cfg, host_batch_bytes, sink)?;
    let source = if rep.profiled {
        store_cost(&key, rep.cost);
        "tuned"
    } else if cached.is_some() {
        "cached"
    } else if !adaptive {
        "unused"
    } else if matches!(cost_arg, GpuCost::Fixed(_)) {
        "fixed"
    } else {
        "gpu default"
    };
    let cost = rep.cost;
    let report = RunReport {
        walk: name.into(),
        walkers: rep.walkers,
        steps: rep.steps,
        walk_seconds: rep.kernel_seconds,
        precompute_seconds: rep.precompute_seconds,
        profile_seconds: rep.profile_seconds,
        cost,
        cost_ratio_source: source,
        stats: rep.stats,
        threads: 0,
        sampler,
        compiled_turns: false,
        fast_path: Default::default(),
        proposal: rep.proposal.clone(),
        edge_filter_bytes: 0,
    };
    Ok((report, rep))
}

fn cost_cache_file() -> Option<std::path::PathBuf> {
    wayfarer_runtime::engine::cost_cache_path().map(|p| p.with_file_name("gpu-cost-ratio.tsv"))
}

/// What the measured R depends on: the device and driver, the compiled walk (a hash of its IR)
/// and its parameter values, and the graph's contents ([`CsrGraph::fingerprint`]).
fn cost_key(dev: &CudaDevice, program: &wayfarer_compiler::ir::Program, values: &[ParamValue], graph: &CsrGraph) -> String {
    let program_hash =
        wayfarer_runtime::hash::fnv64(&[&wayfarer_compiler::print::fingerprint(program).to_le_bytes(), format!("{values:?}").as_bytes()]);
    format!(
        "gpu2|{}|{}|{}|program {program_hash:016x}|graph {:016x}",
        dev.name.replace(['|', '\t'], " "),
        dev.driver_version,
        program.name,
        graph.fingerprint()
    )
}

fn cached_cost(key: &str) -> Option<CostModel> {
    let text = std::fs::read_to_string(cost_cache_file()?).ok()?;
    text.lines().rev().find_map(|line| {
        let mut f = line.split('\t');
        if f.next()? != key {
            return None;
        }
        let r: f64 = f.next()?.parse().ok()?;
        let fixed: f64 = f.next()?.parse().ok()?;
        (r > 0.0 && r.is_finite() && fixed >= 0.0).then_some(CostModel { ratio: r, fixed, ratio_short: r })
    })
}

fn store_cost(key: &str, m: CostModel) {
    use std::io::Write;
    let Some(path) = cost_cache_file() else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // A cache that cannot be written only costs a profile next time.
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(f, "{key}\t{}\t{}", m.ratio, m.fixed);
    }
}

/// The edge data a program reads must be in the graph (as the CPU's generated `check` does).
pub(crate) fn check_graph(program: &wayfarer_compiler::ir::Program, graph: &CsrGraph) -> Result<(), WalkError> {
    use wayfarer_compiler::ir::StepField;
    let reads = |f: StepField| program.reads(f);
    let missing = |what: &str| Err(WalkError::MissingGraphData { walk: program.name.clone(), what: what.into() });
    if reads(StepField::Time) && graph.timestamps().is_none() {
        return missing("edge timestamps");
    }
    if reads(StepField::Label) && graph.labels().is_none() {
        return missing("edge labels");
    }
    Ok(())
}

/// Runs a library walk on one or more GPUs (see [`run_program_streaming`] for several), handing the walks to `sink` in query order, in
/// batches of at most `host_batch_bytes` of output.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_library_walk_streaming(
    devs: &[CudaDevice],
    walk: &LibraryWalk,
    graph: &CsrGraph,
    starts: &Starts,
    length: u32,
    seed: u64,
    sampler: SamplerMode,
    cost: GpuCost,
    verbose: bool,
    memory_budget: Option<usize>,
    table_budget: Option<u64>,
    host_batch_bytes: usize,
    sink: &mut dyn FnMut(Walks) -> Result<(), CudaError>,
) -> Result<(RunReport, GpuReport), CudaError> {
    let Some((source, values)) = walk.program() else {
        return Err(WalkError::Config(format!("`{}` is a hand-written CPU reference; it does not run on the GPU", walk.name())).into());
    };
    let (program, info) = compile_program(source, walk.name())?;
    let anonymous = walk.is_anonymous();
    let mut convert = |batch: Walks| sink(if anonymous { batch.to_anonymous() } else { batch });
    run_program_streaming(
        devs,
        &program,
        &info,
        &values,
        walk.name(),
        graph,
        starts,
        length,
        seed,
        sampler,
        cost,
        verbose,
        memory_budget,
        table_budget,
        false,
        host_batch_bytes,
        &mut convert,
    )
}

/// What the GPU triangle counter did (kernel, upload and orientation seconds, edges per kernel).
pub use wayfarer_cuda::triangles::GpuTriangleReport;

/// Counts triangles on `devs` (one or more GPUs), keeping only edges the mask keeps: the same
/// counts as [`crate::triangles::count_with`] / [`crate::triangles::count_masked`] on the CPU.
/// The mask comes twice: as a CPU walk (it checks the graph, and
/// masks directed input, which is oriented on the host) and lowered for the GPU (it masks
/// undirected input on the device). Whether the host oriented the graph is
/// `GpuTriangleReport::orient_seconds == 0`.
pub(crate) fn count_triangles_with<W: crate::Walk>(
    devs: &[CudaDevice],
    graph: &CsrGraph,
    mask: Option<(&W, wayfarer_cuda::triangles::GpuMask)>,
    detail: crate::triangles::Detail,
    share: crate::triangles::Share,
) -> Result<(crate::triangles::TriangleCounts, GpuTriangleReport), CudaError> {
    use crate::triangles;
    use wayfarer_cuda::triangles::CountTuning;
    if graph.orientation() == crate::graph::Orientation::Directed {
        let oriented = match mask {
            Some((m, _)) => triangles::orient_with(graph, m)?,
            None => triangles::orient(graph, None),
        };
        return wayfarer_cuda::triangles::count_share(devs, &oriented, detail, CountTuning::from_env()?, share);
    }
    if let Some((m, _)) = mask {
        m.check(graph)?;
    }
    wayfarer_cuda::triangles::count_graph_share(devs, graph, mask.map(|(_, g)| g), detail, CountTuning::from_env()?, share)
}
