//! Compiling a walk for the GPU and running it.

use crate::abi::{WfGraph, WfRunArgs};
use crate::launch::{DevPtr, Launch, kernels};
use crate::layout;
use crate::split::{SplitArrays, SplitGraph, edge_entry_bytes, mapped_copy};
use crate::{CudaDevice, CudaError, fnv64, walk_source};
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PinnedHostSlice};
use cudarc::nvrtc::{CompileOptions, Ptx};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use wayfarer_compiler::WalkInfo;
use wayfarer_compiler::eval::ParamValue;
use wayfarer_compiler::ir::Program;
use wayfarer_runtime::engine::{CostModel, ProposalReport, SHORT_ROW, SamplerStats};
use wayfarer_runtime::proposal::{NoTables, ProposalTables, TableCoverage, TableNeed, TermPlan};
use wayfarer_runtime::walk::MAX_LABEL_STATS;
use wayfarer_runtime::{CsrGraph, NO_EDGE, Requirements, SamplerMode, Starts, WalkError, Walks};

/// A walk compiled for one device.
pub struct CompiledWalk {
    function: CudaFunction,
    module: Arc<CudaModule>,
    /// The generated source (the out-of-core build is compiled from it when needed).
    source: String,
    requirements: Requirements,
    props: Vec<String>,
    name: String,
    /// The walk's structured proposal plan (empty: none).
    plan: Vec<TermPlan>,
    /// The generated source, as written for inspection.
    pub source_path: PathBuf,
    /// Seconds NVRTC took (0 when the PTX came from the cache).
    pub compile_seconds: f64,
    /// Whether the PTX came from the on-disk cache.
    pub cached: bool,
}

fn cache_dir() -> PathBuf {
    wayfarer_runtime::engine::cost_cache_path()
        .and_then(|p| p.parent().map(|d| d.to_path_buf()))
        .unwrap_or_else(std::env::temp_dir)
        .join("ptx")
}

impl CudaDevice {
    /// Compiles `program` for this device: NVRTC for its architecture, cached on disk by the
    /// source, the options and the driver version.
    pub fn compile(&self, program: &Program, info: &WalkInfo) -> Result<CompiledWalk, CudaError> {
        self.compile_source(program, info, &walk_source(program, info), "wf_walk")
    }

    /// Compiles a module built around `program`'s generated functions (`source`, which
    /// includes [`walk_source`] and so the preprocessing kernels); `entry` is its main kernel.
    pub(crate) fn compile_source(&self, program: &Program, info: &WalkInfo, source: &str, entry: &str) -> Result<CompiledWalk, CudaError> {
        let loaded = self.load_source(&program.name, source, entry)?;
        let function = loaded.module.load_function(entry)?;
        Ok(CompiledWalk {
            function,
            module: loaded.module,
            source: source.to_string(),
            requirements: wayfarer_compiler::analysis::requirements(info),
            props: program.props.clone(),
            name: program.name.clone(),
            plan: info.proposal.as_ref().map_or_else(|_| Vec::new(), |p| p.plan()),
            source_path: loaded.source_path,
            compile_seconds: loaded.compile_seconds,
            cached: loaded.cached,
        })
    }

    /// NVRTC for this device's architecture, the PTX cached on disk by the source, the options
    /// and the driver version; `entry` is a kernel the PTX must define.
    pub(crate) fn load_source(&self, name: &str, source: &str, entry: &str) -> Result<LoadedModule, CudaError> {
        let mut options = vec!["-std=c++17".to_string(), "--fmad=false".to_string()];
        // WAYFARER_NVRTC_LINEINFO=1: line tables in the code, for a profiler's source view.
        if std::env::var_os("WAYFARER_NVRTC_LINEINFO").is_some_and(|v| v == "1") {
            options.push("-lineinfo".to_string());
        }
        let arch: &'static str = Box::leak(self.arch.clone().into_boxed_str());
        let key = fnv64(&[source.as_bytes(), options.join(" ").as_bytes(), arch.as_bytes(), &self.driver_version.to_le_bytes()]);
        let dir = cache_dir();
        let _ = std::fs::create_dir_all(&dir);
        let source_path = dir.join(format!("{name}-{key:016x}.cu"));
        let ptx_path = dir.join(format!("{name}-{key:016x}.ptx"));
        let _ = std::fs::write(&source_path, source);
        let started = Instant::now();
        let (ptx, cached) = match std::fs::read_to_string(&ptx_path) {
            Ok(text) if text.contains(&format!(".entry {entry}")) => (Ptx::from_src(text), true),
            _ => {
                let opts = CompileOptions { arch: Some(arch), options: options.clone(), ..Default::default() };
                match cudarc::nvrtc::compile_ptx_with_opts(source, opts) {
                    Ok(ptx) => {
                        let _ = std::fs::write(&ptx_path, ptx.to_src());
                        (ptx, false)
                    }
                    Err(e) => {
                        let log = match &e {
                            cudarc::nvrtc::CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
                            other => format!("{other:?}"),
                        };
                        return Err(CudaError::Compile { source_path, options: format!("-arch={arch} {}", options.join(" ")), log });
                    }
                }
            }
        };
        let compile_seconds = if cached { 0.0 } else { started.elapsed().as_secs_f64() };
        let module = self.ctx.load_module(ptx)?;
        Ok(LoadedModule { module, source_path, compile_seconds, cached })
    }
}

/// A compiled and loaded module.
pub(crate) struct LoadedModule {
    pub(crate) module: Arc<CudaModule>,
    pub(crate) source_path: PathBuf,
    pub(crate) compile_seconds: f64,
    pub(crate) cached: bool,
}

impl CompiledWalk {
    /// One of the kernels of the walk's module (e.g. the preprocessing kernels of kernels/prep.cu).
    pub(crate) fn prep(&self, name: &str) -> Result<CudaFunction, CudaError> {
        Ok(self.module.load_function(name)?)
    }

    /// The loaded module.
    pub(crate) fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }
}

/// How to run a walk on the GPU.
#[derive(Clone, Debug)]
pub struct GpuRun<'a> {
    /// Steps per walk.
    pub length: u32,
    /// The seed.
    pub seed: u64,
    /// Sampler policy: adaptive, eRJS (eRVS only as the trial-cap fallback) or eRVS.
    pub sampler: SamplerMode,
    /// The cost model of the adaptive rule.
    pub cost: CostModel,
    /// Where walkers start.
    pub starts: &'a Starts,
    /// Device memory the run may use (`None`: 80% of what is free).
    pub memory_budget: Option<usize>,
    /// Print the memory estimate before launching.
    pub verbose: bool,
    /// Device memory for hub bitmaps (`None`: an eighth of the budget; `Some(0)`: none).
    pub hub_budget: Option<usize>,
    /// Rows at least this long may become bitmaps (`None`: [`MIN_HUB_DEGREE`]).
    pub hub_min_degree: Option<u64>,
    /// Tune the adaptive rule's `R` on a pilot before the run (`cost.fixed` is kept).
    pub profile: bool,
    /// Host bytes the structured-proposal tables may take (`None`: see
    /// [`wayfarer_runtime::engine::table_budget`]); independent of the device budget.
    pub table_budget: Option<u64>,
    /// Record the edge behind each move ([`Walks::edges`]), as the CPU engines do.
    pub record_edges: bool,
}

/// What a GPU run did.
#[derive(Clone, Debug, Default)]
pub struct GpuReport {
    /// Walkers run.
    pub walkers: u64,
    /// Moves made.
    pub steps: u64,
    /// Seconds in the walk kernels (launch to completion, all batches).
    pub kernel_seconds: f64,
    /// Seconds from the start of the upload to the walks on the host (or, streamed, written).
    pub total_seconds: f64,
    /// Seconds the sink took with the batches (writing them, when streamed to a file).
    pub output_seconds: f64,
    /// Seconds computing the per-node arrays (on the host).
    pub precompute_seconds: f64,
    /// Batches the queries were split into to fit device memory.
    pub batches: usize,
    /// Device bytes the run was estimated to need.
    pub estimated_bytes: usize,
    /// Sampler counters.
    pub stats: SamplerStats,
    /// Rows kept as bitmaps for `has_edge`.
    pub hubs: usize,
    /// Edges read by eRVS steps (for the cost model's profile).
    pub ervs_edges: u64,
    /// The cost model the run used.
    pub cost: CostModel,
    /// Whether `cost` was measured by this run's pilot.
    pub profiled: bool,
    /// Seconds the pilot took.
    pub profile_seconds: f64,
    /// Out of core (the graph larger than the memory budget): edge entries held in device
    /// memory, and in all; `None` when the whole graph was on the device.
    pub hot_edges: Option<(u64, u64)>,
    /// What the run did about the walk's structured proposal plan (tables built, or why not).
    pub proposal: ProposalReport,
}

/// The walk kernel's counters (`WF_STAT_*` in kernels/walk.cu).
const NUM_STATS: usize = 11;

/// Which rows become bitmaps over all nodes for `has_edge`: the longest, longest first, within
/// a byte budget. A `has_edge` on a hub is then one bit test instead of a binary search over
/// thousands of entries (a chain of dependent loads that stalls the whole warp). The bits
/// themselves are set on the device (`wf_prep_hub_bits`).
struct HubPlan {
    /// Per node: its bitmap's index, or `u32::MAX` (empty when there are no hubs).
    slot: Vec<u32>,
    /// The hub rows, in bitmap order.
    nodes: Vec<u32>,
    /// 32-bit words per bitmap.
    words: usize,
}

/// The ladder of `R` values the GPU profile tries.
const PROFILE_RATIOS: [f64; 7] = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0];

/// Rows shorter than this are searched: a few loads, mostly in one cache line.
pub const MIN_HUB_DEGREE: u64 = 256;

impl HubPlan {
    fn choose(graph: &CsrGraph, budget: usize, min_degree: u64) -> Self {
        let n = graph.num_nodes();
        let words = n.div_ceil(32);
        let off = graph.offsets();
        let mut order: Vec<u32> = (0..n as u32).filter(|&v| off[v as usize + 1] - off[v as usize] >= min_degree.max(1)).collect();
        order.sort_unstable_by_key(|&v| (std::cmp::Reverse(off[v as usize + 1] - off[v as usize]), v));
        order.truncate(budget / (words * 4).max(1));
        if order.is_empty() {
            return HubPlan { slot: Vec::new(), nodes: Vec::new(), words };
        }
        let mut slot = vec![u32::MAX; n];
        for (k, &v) in order.iter().enumerate() {
            slot[v as usize] = k as u32;
        }
        HubPlan { slot, nodes: order, words }
    }
}

struct Uploads {
    slices_u64: Vec<CudaSlice<u64>>,
    slices_f64: Vec<CudaSlice<f64>>,
    /// Structured-proposal tables kept in mapped host memory (out of core, or too large).
    pinned_u32: Vec<PinnedHostSlice<u32>>,
    pinned_f64: Vec<PinnedHostSlice<f64>>,
    pinned_u64: Vec<PinnedHostSlice<u64>>,
    slices_u32: Vec<CudaSlice<u32>>,
    slices_f32: Vec<CudaSlice<f32>>,
    slices_i64: Vec<CudaSlice<i64>>,
}

/// Runs `walk` with parameter `values` on `graph`, and returns all walks in query order.
pub fn run(
    dev: &CudaDevice,
    walk: &CompiledWalk,
    graph: &CsrGraph,
    values: &[ParamValue],
    program: &Program,
    cfg: &GpuRun,
) -> Result<(Walks, GpuReport), CudaError> {
    let total = cfg.starts.count(graph.num_nodes());
    let stride = cfg.length as usize + 1;
    let mut walks = Walks {
        stride,
        nodes: Vec::with_capacity(total as usize * stride),
        lengths: Vec::with_capacity(total as usize),
        edges: Vec::new(),
    };
    let report = run_streaming(dev, walk, graph, values, program, cfg, usize::MAX, &mut |batch| {
        walks.append(batch);
        Ok(())
    })?;
    Ok((walks, report))
}

/// Runs `walk` like [`run`], handing the walks to `sink` batch by batch in query order, each
/// batch at most `host_batch_bytes` of output (and what fits on the device): outputs larger
/// than either memory go straight to disk.
#[allow(clippy::too_many_arguments)]
pub fn run_streaming(
    dev: &CudaDevice,
    walk: &CompiledWalk,
    graph: &CsrGraph,
    values: &[ParamValue],
    program: &Program,
    cfg: &GpuRun,
    host_batch_bytes: usize,
    sink: &mut dyn FnMut(Walks) -> Result<(), CudaError>,
) -> Result<GpuReport, CudaError> {
    run_multi_streaming(&[(dev, walk)], graph, values, program, cfg, host_batch_bytes, sink)
}

/// The GPU that runs the walkers starting at `start` when `gpus` share a run: a hash of the
/// node, so each GPU gets an even share of start nodes wherever the heavy ones sit.
pub fn gpu_of_start(start: u32, gpus: usize) -> usize {
    let mut z = (start as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z as u128 * gpus as u128) >> 64) as usize
}

/// Runs `walk` on several GPUs of this host (each `(device, the walk compiled for it)`): the
/// graph replicated on each, every batch's queries split by [`gpu_of_start`] of their start
/// node, the GPUs running their shares at the same time (a host thread each), the walks
/// merged back into query order before `sink` sees them. A walk depends only on the seed and
/// its query's index, so the output is the same for any number of GPUs.
#[allow(clippy::too_many_arguments)]
pub fn run_multi_streaming(
    gpus: &[(&CudaDevice, &CompiledWalk)],
    graph: &CsrGraph,
    values: &[ParamValue],
    program: &Program,
    cfg: &GpuRun,
    host_batch_bytes: usize,
    sink: &mut dyn FnMut(Walks) -> Result<(), CudaError>,
) -> Result<GpuReport, CudaError> {
    let started = Instant::now();
    let mut report = GpuReport::default();
    let n = graph.num_nodes();
    if gpus.is_empty() {
        return Err(CudaError::Unavailable("no GPU given".into()));
    }
    if n == 0 {
        return Err(WalkError::Config("the graph has no nodes".into()).into());
    }
    if graph.num_edges() > u32::MAX as u64 && graph.offsets().windows(2).any(|w| w[1] - w[0] > u32::MAX as u64) {
        return Err(WalkError::Config("a row with 2^32 or more edges is not supported on the GPU yet".into()).into());
    }
    let walk0 = gpus[0].1;
    for p in &walk0.props {
        if graph.node_property(p).is_none() {
            return Err(WalkError::MissingGraphData { walk: walk0.name.clone(), what: format!("node property `{p}`") }.into());
        }
    }
    cfg.starts.validate(n)?;
    let total = cfg.starts.count(n);
    let stride = cfg.length as u64 + 1;
    let edge_bytes = if cfg.record_edges { (stride as usize - 1) * 8 } else { 0 };
    let host_batch = (host_batch_bytes / (stride as usize * 4 + 4 + edge_bytes)).max(1) as u64;

    // Every GPU: its memory plan and its copy of the graph, prepared at the same time.
    let params = layout::params(program, values);
    let params = &params;
    let shares = gpus.len() > 1;
    let runs: Vec<Result<DeviceRun, CudaError>> = std::thread::scope(|scope| {
        let handles: Vec<_> =
            gpus.iter().map(|&(dev, walk)| scope.spawn(move || DeviceRun::new(dev, walk, graph, params, cfg, shares))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let runs: Vec<DeviceRun> = runs.into_iter().collect::<Result<_, _>>()?;
    // A host batch: what the host may hold, and what the GPUs hold together (a GPU whose hashed
    // share outgrows its memory runs it in several launches).
    let device_batch: u64 = runs.iter().map(|r| r.capacity).min().unwrap_or(1) * runs.len() as u64;
    let batch = host_batch.min(device_batch).clamp(1, total.max(1));
    report.batches = total.div_ceil(batch) as usize;
    report.estimated_bytes = runs[0].graph_bytes + batch.div_ceil(runs.len() as u64).min(runs[0].capacity) as usize * runs[0].per_query;
    if cfg.verbose {
        let r = &runs[0];
        let mode = match &r.prepared.split {
            None => String::new(),
            Some(sg) => format!(
                "; the graph does not fit: out of core, the {} longest rows ({} of {} edges, {:.1}%) in device memory, the rest read from page-locked host memory over the bus",
                sg.hot_rows.len(),
                sg.hot_edges,
                graph.num_edges(),
                100.0 * sg.hot_edges as f64 / graph.num_edges().max(1) as f64
            ),
        };
        eprintln!(
            "gpu memory estimate: graph and per-node arrays {:.1} MiB + walks {:.1} MiB per batch ({} batch{} of up to {batch} walks{}) = {:.1} MiB of {:.1} MiB free on {}{mode}",
            r.graph_bytes as f64 / 1048576.0,
            (report.estimated_bytes - r.graph_bytes) as f64 / 1048576.0,
            report.batches,
            if report.batches == 1 { "" } else { "es" },
            if runs.len() > 1 { format!(", split over {} GPUs", runs.len()) } else { String::new() },
            report.estimated_bytes as f64 / 1048576.0,
            r.free as f64 / 1048576.0,
            r.dev.name
        );
    }
    report.precompute_seconds = runs.iter().map(|r| r.prepared.seconds).fold(0.0, f64::max);
    report.hot_edges = runs[0].prepared.split.as_ref().map(|sg| (sg.hot_edges, graph.num_edges()));
    report.hubs = runs[0].prepared.hubs;
    report.proposal = runs[0].proposal.clone();
    let mode = match cfg.sampler {
        SamplerMode::Adaptive => 0u32,
        SamplerMode::Rejection => 1,
        SamplerMode::Reservoir => 2,
        SamplerMode::Structured => 3,
        other => {
            return Err(CudaError::from(WalkError::Config(format!(
                "sampler {other} runs on the CPU only (table draws from the CPU's prefix tables; its and prefix-reservoir are references); the GPU runs adaptive, erjs, ervs or structured (which draws a static-weight walk straight from alias tables)"
            ))));
        }
    };

    // The adaptive rule's R, tuned here when asked (on the first GPU; every GPU then uses it,
    // so the walks do not depend on the GPU count): a pilot that fills the grid (after a
    // burn-in) runs the adaptive kernel on the uploaded graph under a ladder of R values, and
    // the fastest wins. (Timing eRJS and eRVS apart and dividing misleads on a GPU: in the
    // fused kernel an eRVS step holds its whole warp, which a pure-eRVS pilot never shows.)
    // Every R is exact; R only moves time.
    let mut cost = cfg.cost;
    if cfg.profile && mode == 0 {
        let t = Instant::now();
        let r0 = &runs[0];
        // As many walkers as the grid has lanes (at least): a smaller pilot leaves lanes idle,
        // which flatters eRVS (a warp serving one walker costs little when its lanes had
        // nothing else to do) and picks too large an R.
        let lanes = r0.launch_cfg.grid_dim.0 as u64 * r0.launch_cfg.block_dim.0 as u64;
        let pilot = (n as u64).min(lanes.max(1 << 16));
        let spread: Vec<u32> = (0..pilot).map(|i| ((i * n as u64) / pilot) as u32).collect();
        // Burn-in: long walks spend their time where a walk leads (hubs, degree-biased), not
        // on uniformly chosen nodes, so the pilot starts where 16 eRJS steps from an even
        // spread ended.
        const BURN_IN: u32 = 16;
        let burn = r0.launch(0, pilot, Some(&spread), None, 1, CostModel::uniform(1.0, 0.0), BURN_IN, false)?;
        let pilot_starts: Vec<u32> =
            (0..pilot as usize).map(|i| burn.out[i * (BURN_IN as usize + 1) + burn.lens[i].max(1) as usize - 1]).collect();
        let length = cfg.length.clamp(1, 16);
        let mut best: Option<(f64, f64)> = None;
        // Warm caches and the module once before timing.
        r0.launch(0, pilot, Some(&pilot_starts), None, 0, cfg.cost, length, false)?;
        // Two rounds over the ladder, each R scored by its faster run: short walks make pilots
        // of a fraction of a millisecond, where one timing is mostly noise. (Eight-step pilots
        // misjudged Node2Vec on skewed weights; three rounds cost up to 2 s on R-MAT 20.)
        let mut fastest = [f64::INFINITY; PROFILE_RATIOS.len()];
        for _ in 0..2 {
            for (k, r) in PROFILE_RATIOS.into_iter().enumerate() {
                let m = CostModel { ratio: r, fixed: cfg.cost.fixed, ratio_short: r };
                let secs = r0.launch(0, pilot, Some(&pilot_starts), None, 0, m, length, false)?.seconds;
                fastest[k] = fastest[k].min(secs);
            }
        }
        for (k, r) in PROFILE_RATIOS.into_iter().enumerate() {
            if best.is_none_or(|(_, b)| fastest[k] < b) {
                best = Some((r, fastest[k]));
            }
        }
        if let Some((r, _)) = best {
            cost = CostModel { ratio: r, fixed: cfg.cost.fixed, ratio_short: r };
            report.profiled = true;
        }
        report.profile_seconds = t.elapsed().as_secs_f64();
    }
    report.cost = cost;

    let mut kernel_stats = [0u64; NUM_STATS];
    let mut first = 0u64;
    let k = runs.len();
    // A shard (one process's part of a run) keeps its queries' global indices and starts.
    let (whole, offset) = cfg.starts.whole();
    while first < total {
        let count = batch.min(total - first);
        let global = offset + first;
        let starts = match whole {
            Starts::Nodes(v) => Some(&v[global as usize..(global + count) as usize]),
            _ => None,
        };
        let walks = if k == 1 {
            let r = runs[0].launch(global, count, starts, None, mode, cost, cfg.length, cfg.record_edges)?;
            report.kernel_seconds += r.seconds;
            for (i, v) in r.stats.iter().enumerate() {
                kernel_stats[i] += v;
            }
            Walks { stride: stride as usize, nodes: r.out, lengths: r.lens, edges: r.edges }
        } else {
            // Each query to the GPU of its start node; the shares run at the same time.
            let start_of = |q: u64| match starts {
                Some(v) => v[(q - global) as usize],
                None => (q % n as u64) as u32,
            };
            let mut ids: Vec<Vec<u64>> = vec![Vec::with_capacity((count as usize / k) * 9 / 8); k];
            for q in global..global + count {
                ids[gpu_of_start(start_of(q), k)].push(q);
            }
            let shares: Vec<Result<(Launched, f64), CudaError>> = std::thread::scope(|scope| {
                let handles: Vec<_> = runs
                    .iter()
                    .zip(&ids)
                    .map(|(run, mine)| {
                        scope.spawn(move || -> Result<(Launched, f64), CudaError> {
                            let mut all = Launched::default();
                            let mut secs = 0.0;
                            for chunk in mine.chunks(run.capacity.max(1) as usize) {
                                let st: Option<Vec<u32>> = starts.map(|_| chunk.iter().map(|&q| start_of(q)).collect());
                                let r = run.launch(
                                    0,
                                    chunk.len() as u64,
                                    st.as_deref(),
                                    Some(chunk),
                                    mode,
                                    cost,
                                    cfg.length,
                                    cfg.record_edges,
                                )?;
                                secs += r.seconds;
                                all.absorb(r);
                            }
                            Ok((all, secs))
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
            });
            let mut walks = Walks {
                stride: stride as usize,
                nodes: vec![0u32; (count * stride) as usize],
                lengths: vec![0u32; count as usize],
                edges: if cfg.record_edges { vec![NO_EDGE; (count * (stride - 1)) as usize] } else { Vec::new() },
            };
            let mut slowest = 0.0f64;
            for (share, mine) in shares.into_iter().zip(&ids) {
                let (r, secs) = share?;
                slowest = slowest.max(secs);
                for (i, v) in r.stats.iter().enumerate() {
                    kernel_stats[i] += v;
                }
                scatter_rows(&mut walks, &r, mine, global);
            }
            report.kernel_seconds += slowest;
            walks
        };
        let t = Instant::now();
        sink(walks)?;
        report.output_seconds += t.elapsed().as_secs_f64();
        first += count;
    }
    drop(runs);
    report.walkers = total;
    report.steps = kernel_stats[6];
    report.ervs_edges = kernel_stats[7];
    report.stats = SamplerStats {
        rejection_steps: kernel_stats[0],
        // eRVS counts the steps it finished for eRJS and structured trials too.
        reservoir_steps: kernel_stats[1] - (kernel_stats[3] + kernel_stats[10]).min(kernel_stats[1]),
        rejection_trials: kernel_stats[2],
        rejection_fallbacks: kernel_stats[3],
        dead_ends: kernel_stats[4],
        stopped: kernel_stats[5],
        structured_steps: kernel_stats[8],
        structured_trials: kernel_stats[9],
        structured_fallbacks: kernel_stats[10],
        ..Default::default()
    };
    report.total_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Puts a GPU's share (`ids[i]`'s walk is row `i` of `r`) into the batch `walks` starting at
/// query `first`, in parallel: each batch row looks up which share row fills it (every query
/// is in exactly one share, once). Recorded edges follow their walks.
fn scatter_rows(walks: &mut Walks, r: &Launched, ids: &[u64], first: u64) {
    use rayon::prelude::*;
    const NONE: u32 = u32::MAX;
    let stride = walks.stride;
    let mut source = vec![NONE; walks.lengths.len()];
    for (i, &q) in ids.iter().enumerate() {
        let at = (q - first) as usize;
        assert!(at < source.len() && source[at] == NONE, "query {q} outside the batch or twice in a share");
        source[at] = i as u32;
    }
    walks.nodes.par_chunks_mut(stride).zip(walks.lengths.par_iter_mut()).zip(source.par_iter()).with_min_len(4096).for_each(
        |((row, len), &i)| {
            if i != NONE {
                let i = i as usize;
                row.copy_from_slice(&r.out[i * stride..(i + 1) * stride]);
                *len = r.lens[i];
            }
        },
    );
    let moves = stride - 1;
    if !walks.edges.is_empty() && moves > 0 {
        walks.edges.par_chunks_mut(moves).zip(source.par_iter()).with_min_len(4096).for_each(|(row, &i)| {
            if i != NONE {
                let i = i as usize;
                row.copy_from_slice(&r.edges[i * moves..(i + 1) * moves]);
            }
        });
    }
}

/// What one launch brought back.
#[derive(Default)]
struct Launched {
    out: Vec<u32>,
    lens: Vec<u32>,
    /// The recorded edges (graph edge indices), when asked for.
    edges: Vec<u64>,
    stats: Vec<u64>,
    seconds: f64,
}

impl Launched {
    /// Appends another launch of the same share.
    fn absorb(&mut self, other: Launched) {
        self.out.extend(other.out);
        self.lens.extend(other.lens);
        self.edges.extend(other.edges);
        if self.stats.is_empty() {
            self.stats = other.stats;
        } else {
            for (a, b) in self.stats.iter_mut().zip(other.stats) {
                *a += b;
            }
        }
        self.seconds += other.seconds;
    }
}

/// Device bytes per query besides its walk: its length, start node and query id.
pub const PER_QUERY_EXTRA: usize = 4 + 4 + 8;

/// One GPU's part of a run: its copy of the graph and the launch configuration.
struct DeviceRun<'a> {
    dev: &'a CudaDevice,
    walk: &'a CompiledWalk,
    /// The walk kernel: the walk's own, or its out-of-core build.
    function: CudaFunction,
    /// With several GPUs, the same kernel built to run a share of a batch (`WF_QUERY_IDS`:
    /// global query ids read from a list); one GPU's build has no such indirection.
    share_function: Option<CudaFunction>,
    _variants: Vec<Arc<CudaModule>>,
    graph: &'a CsrGraph,
    seed: u64,
    prepared: Prepared,
    /// The graph image the walk kernel takes by value.
    graph_arg: WfGraph,
    params_dev: CudaSlice<u8>,
    launch_cfg: LaunchConfig,
    /// Queries one launch may hold (device memory).
    capacity: u64,
    graph_bytes: usize,
    per_query: usize,
    free: usize,
    /// What was done about the walk's structured proposal plan.
    proposal: ProposalReport,
    /// A structured trial's cost in eRJS trials (the adaptive rule).
    struct_cost: f64,
}

impl<'a> DeviceRun<'a> {
    fn new(
        dev: &'a CudaDevice,
        walk: &'a CompiledWalk,
        graph: &'a CsrGraph,
        params: &[u8],
        cfg: &GpuRun,
        shares: bool,
    ) -> Result<Self, CudaError> {
        let n = graph.num_nodes();
        let m = graph.num_edges() as usize;
        let req = walk.requirements;
        let label_k = stats_label_k(graph, req);
        // Memory: the graph and its arrays, then as many queries per launch as fit.
        let total = cfg.starts.count(n);
        let stride = cfg.length as u64 + 1;
        let node_arrays =
            if req.weight_stats { n * 7 * 4 } else { 0 } + label_k as usize * n * 16 + if req.neighbor_degree { n * 8 } else { 0 };
        // Row signatures (walks that call has_edge, in core only).
        let sig_bytes = if req.edge_queries { n * SIG_WORDS * 4 + WideRows::bytes_at_most(graph) } else { 0 };
        let graph_bytes = graph.offsets().len() * 12
            + m * 4
            + graph.weights().map_or(0, |w| w.len() * 12)
            + graph.labels().map_or(0, |l| l.len() * 4)
            + graph.timestamps().map_or(0, |t| t.len() * 8)
            + node_arrays
            + walk.props.len() * n * 4
            + sig_bytes;
        // Walk rows, lengths, a start and a query id per query.
        let per_query = (stride as usize) * 4 + PER_QUERY_EXTRA + if cfg.record_edges { (stride as usize - 1) * 8 } else { 0 };
        let (free, _) = dev.ctx.mem_get_info()?;
        let budget = cfg.memory_budget.unwrap_or(free / 10 * 8);
        // The edge arrays (with the packed target-weight pairs of weighted graphs).
        let edge_bytes = m * edge_entry_bytes(graph) + graph.weights().map_or(0, |_| m * 8);
        let node_bytes = graph_bytes - edge_bytes;
        let (residency, device_graph_bytes) = if graph_bytes + per_query <= budget {
            (Residency::Device, graph_bytes)
        } else {
            // Out of core: offsets, row starts and per-node arrays stay; of what is left, the
            // walkers take up to half (64 Ki of them at most), the longest rows the rest.
            let fixed = node_bytes - sig_bytes + n * 8;
            let avail = budget.saturating_sub(fixed);
            if avail < 2 * per_query {
                return Err(CudaError::OutOfMemory(format!(
                    "{}: the per-node arrays alone ({:.3} GiB) leave no room for walkers in {:.3} GiB",
                    dev.name,
                    fixed as f64 / (1u64 << 30) as f64,
                    budget as f64 / (1u64 << 30) as f64
                )));
            }
            let walkers = (total.clamp(1, 1 << 16) as usize * per_query).min(avail / 2);
            (Residency::Split { hot_bytes: avail - walkers }, budget - walkers)
        };
        // Structured proposals: their tables, when the policy uses the walk's plan and they fit
        // the table budget, which is the CPU's (they are built on the host; a quarter of the
        // host memory available unless WAYFARER_TABLE_BUDGET says otherwise): in device memory
        // when they fit next to the graph, else (and out of core) in mapped host memory. So
        // whether a run has tables does not depend on the device memory budget, nor its walks.
        let tables = if walk.plan.is_empty() || !matches!(cfg.sampler, SamplerMode::Adaptive | SamplerMode::Structured) {
            None
        } else {
            let table_budget = wayfarer_runtime::engine::table_budget(cfg.table_budget)?;
            Some(match ProposalTables::coverage(graph, &walk.plan, table_budget) {
                _ if table_budget == 0 => Err("a table budget of 0 turns structured proposals off".into()),
                Err(why) => Err(why.to_string()),
                Ok(c) => Ok((
                    c.bytes as usize,
                    residency == Residency::Device && device_graph_bytes + c.bytes as usize + per_query <= budget,
                    table_budget,
                )),
            })
        };
        let device_graph_bytes = match tables {
            Some(Ok((need, true, _))) => device_graph_bytes + need,
            _ => device_graph_bytes,
        };
        let capacity = (((budget - device_graph_bytes.min(budget)) / per_query) as u64).clamp(1, total.max(1));
        // Out of core, the bitmaps would take from the hot rows: none unless asked for.
        let hub_budget = match residency {
            Residency::Device => cfg.hub_budget.unwrap_or(budget / 8),
            Residency::Split { .. } => cfg.hub_budget.unwrap_or(0),
        };
        let mut prepared = prepare(dev, walk, graph, hub_budget, cfg.hub_min_degree.unwrap_or(MIN_HUB_DEGREE), residency)?;
        // The kernel's builds: out of core (WF_OUT_OF_CORE) and/or a share of a split batch
        // (WF_QUERY_IDS); the walk's own module is the in-memory, one-GPU build.
        let s = &dev.stream;
        let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let launch_cfg = LaunchConfig { grid_dim: (sms * 8, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        // The image before the tables, for the factor kernel (the walk kernel takes its own by value).
        let graph_dev = s.clone_htod(&prepared.image)?;
        let params_dev = s.clone_htod(params)?;
        let (mut proposal, mut struct_cost) = (ProposalReport::None, 3.0);
        match tables {
            None => {}
            Some(Err(why)) => proposal = ProposalReport::Skipped(why),
            Some(Ok((_, on_device, table_budget))) => {
                let t = Instant::now();
                let need = if cfg.sampler == SamplerMode::Structured { TableNeed::Always } else { TableNeed::WhereTheyPay };
                match build_tables(dev, walk, graph, &graph_dev, &params_dev, &mut prepared, on_device, table_budget, need, launch_cfg)? {
                    Ok((cost, coverage)) => {
                        // WAYFARER_STRUCT_COST=c overrides a structured trial's cost in eRJS trials
                        // (for benchmark sweeps; the walks depend on it).
                        struct_cost = std::env::var("WAYFARER_STRUCT_COST").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(cost);
                        proposal = ProposalReport::Built { seconds: t.elapsed().as_secs_f64(), coverage };
                    }
                    Err(why) => proposal = ProposalReport::Skipped(why.to_string()),
                }
            }
        }
        // The kernel's builds: with structured proposals (WF_STRUCTURED, when tables were
        // built), out of core (WF_OUT_OF_CORE), a share of a split batch (WF_QUERY_IDS); the
        // walk's own module is the plain in-memory, one-GPU build.
        let structured = matches!(proposal, ProposalReport::Built { .. });
        let out_of_core = matches!(residency, Residency::Split { .. });
        // The deliberately broken mixture (feature `testing`, for the test that shows the
        // exactness suite catches it): a build whose structured trials pick terms equally.
        #[cfg(feature = "testing")]
        let broken = wayfarer_runtime::proposal::BROKEN_EQUAL_TERMS.load(std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(feature = "testing"))]
        let broken = false;
        // And a broken row signature (the same feature): a build testing the wrong bit.
        #[cfg(feature = "testing")]
        let broken_signatures = crate::BROKEN_ROW_SIGNATURES.load(std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(feature = "testing"))]
        let broken_signatures = false;
        // WAYFARER_MIN_BLOCKS=n overrides the walk kernel's blocks per multiprocessor (its
        // register cap; for benchmark sweeps, the walks do not depend on it). Short walks take
        // two (more registers, fewer warps): measured faster for 5-step MetaPath, while every
        // 80-step walk prefers the kernel's default of three
        // (bench/results/2026-12-03-cuda-walk-occupancy.md).
        let min_blocks: Option<u32> = std::env::var("WAYFARER_MIN_BLOCKS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .filter(|&n| (1..=8).contains(&n))
            .or((cfg.length <= SHORT_WALK_LENGTH).then_some(2));
        // WAYFARER_CUDA_DEFINES="NAME=VALUE,..." adds defines to the walk kernel's builds (for
        // benchmark sweeps of the kernel's compile-time knobs, e.g. WF_MIN_BLOCKS=4).
        let extra_defines = extra_kernel_defines()?;
        let mut variants = Vec::new();
        let mut build = |query_ids: bool| -> Result<CudaFunction, CudaError> {
            let flags = [
                (structured, "WF_STRUCTURED", "structured"),
                (structured && broken, "WF_BROKEN_EQUAL_TERMS", "broken"),
                (broken_signatures, "WF_BROKEN_ROW_SIGNATURES", "broken-signatures"),
                (out_of_core, "WF_OUT_OF_CORE", "out-of-core"),
                (query_ids, "WF_QUERY_IDS", "shares"),
            ];
            let on: Vec<_> = flags.iter().filter(|f| f.0).collect();
            if on.is_empty() && min_blocks.is_none() && extra_defines.is_empty() {
                return Ok(walk.function.clone());
            }
            let mut defines: String = on.iter().map(|f| format!("#define {} 1\n", f.1)).collect();
            let mut tag = on.iter().map(|f| f.2).collect::<Vec<_>>().join("-");
            for (name, value) in &extra_defines {
                defines.push_str(&format!("#define {name} {value}\n"));
                tag.push_str(&format!("-{name}{value}"));
            }
            if let Some(n) = min_blocks {
                defines.push_str(&format!("#define WF_MIN_BLOCKS {n}\n"));
                tag.push_str(&format!("-b{n}"));
            }
            let loaded = dev.load_source(&format!("{}-{tag}", walk.name), &format!("{defines}{}", walk.source), kernels::WALK.name)?;
            let f = loaded.module.load_function(kernels::WALK.name)?;
            variants.push(loaded.module);
            Ok(f)
        };
        let function = build(false)?;
        let graph_arg: WfGraph = bytemuck::pod_read_unaligned(&prepared.image);
        let share_function = if shares { Some(build(true)?) } else { None };
        Ok(DeviceRun {
            dev,
            walk,
            function,
            share_function,
            _variants: variants,
            graph,
            seed: cfg.seed,
            prepared,
            graph_arg,
            params_dev,
            launch_cfg,
            capacity,
            graph_bytes: device_graph_bytes,
            per_query,
            free,
            proposal,
            struct_cost,
        })
    }

    /// One launch over `count` queries: global queries `first..first + count`, or `ids` when
    /// given; `starts` holds their start nodes (None: one walker per node, start = query mod n).
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        first: u64,
        count: u64,
        starts: Option<&[u32]>,
        ids: Option<&[u64]>,
        mode: u32,
        cost: CostModel,
        length: u32,
        record_edges: bool,
    ) -> Result<Launched, CudaError> {
        let s = &self.dev.stream;
        let stride = length as u64 + 1;
        let out = s.alloc_zeros::<u32>(((count * stride) as usize).max(1))?;
        let edges_dev = if record_edges { Some(s.alloc_zeros::<u64>(((count * length as u64) as usize).max(1))?) } else { None };
        let lens = s.alloc_zeros::<u32>((count as usize).max(1))?;
        let counter = s.alloc_zeros::<u64>(1)?;
        let stats_dev = s.alloc_zeros::<u64>(NUM_STATS)?;
        let error = s.alloc_zeros::<u64>(5)?;
        let starts_dev = match starts {
            Some(v) if !v.is_empty() => Some(s.clone_htod(v)?),
            _ => None,
        };
        let ids_dev = match ids {
            Some(v) if !v.is_empty() => Some(s.clone_htod(v)?),
            _ => None,
        };
        let args = WfRunArgs {
            first_query: first,
            num_queries: count,
            seed: self.seed,
            length,
            mode,
            ratio: cost.ratio,
            fixed: cost.fixed,
            ratio_short: cost.ratio_short,
            short_row: SHORT_ROW as u32,
            per_node_starts: starts.is_none() as u32,
            starts: starts_dev.as_ref().map_or(0, |x| x.device_ptr(s).0),
            out: out.device_ptr(s).0,
            lens: lens.device_ptr(s).0,
            counter: counter.device_ptr(s).0,
            stats: stats_dev.device_ptr(s).0,
            error: error.device_ptr(s).0,
            query_ids: ids_dev.as_ref().map_or(0, |x| x.device_ptr(s).0),
            struct_cost: self.struct_cost,
            out_edges: edges_dev.as_ref().map_or(0, |x| x.device_ptr(s).0),
        };
        let t = Instant::now();
        if count > 0 {
            // The argument images follow the kernel's structs (abi.rs), every pointer in them is
            // a live allocation of the right length, and the kernel bounds every index.
            let function = match (ids.is_some(), &self.share_function) {
                (false, _) => &self.function,
                (true, Some(f)) => f,
                (true, None) => return Err(CudaError::Driver("internal error: a share's launch on a one-GPU kernel build".into())),
            };
            Launch::new(s, function, &kernels::WALK).arg(&self.graph_arg).arg(&self.params_dev).arg(&args).run(self.launch_cfg)?;
        }
        s.synchronize()?;
        let seconds = t.elapsed().as_secs_f64();
        let err = s.clone_dtoh(&error)?;
        if err[0] != 0 {
            // Out of core, the kernels' edge indices are virtual.
            let edge = self.prepared.split.as_ref().map_or(err[3], |sg| sg.original_edge(self.graph, err[3]));
            let (weight, bound) = (f32::from_bits(err[4] as u32), f32::from_bits((err[4] >> 32) as u32));
            return Err(WalkError::from_device_report(self.graph, &self.walk.name, err[0], err[2], edge, weight, bound).into());
        }
        let mut out = s.clone_dtoh(&out)?;
        out.truncate((count * stride) as usize);
        let mut lens = s.clone_dtoh(&lens)?;
        lens.truncate(count as usize);
        let edges = match &edges_dev {
            Some(d) => {
                let mut e = s.clone_dtoh(d)?;
                e.truncate((count * length as u64) as usize);
                // Out of core, the kernels' edge indices are virtual.
                if let Some(sg) = &self.prepared.split {
                    sg.original_edges(self.graph, &mut e);
                }
                e
            }
            None => Vec::new(),
        };
        Ok(Launched { out, lens, edges, stats: s.clone_dtoh(&stats_dev)?, seconds })
    }
}

/// Where a walk's graph lives on the device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Residency {
    /// Everything in device memory.
    Device,
    /// Larger than device memory: the longest rows whose edges fit in `hot_bytes` in device
    /// memory, every edge also in mapped page-locked host memory, read over the bus for the
    /// other rows.
    Split { hot_bytes: usize },
}

/// `WAYFARER_CUDA_DEFINES="WF_NAME=VALUE,..."`: compile-time knobs of the walk kernel (and of
/// the triangle kernels) for benchmark sweeps. Names must be `WF_` identifiers and values plain tokens, so nothing else
/// can be spliced into the source.
pub(crate) fn extra_kernel_defines() -> Result<Vec<(String, String)>, CudaError> {
    const VAR: &str = "WAYFARER_CUDA_DEFINES";
    let Ok(text) = std::env::var(VAR) else { return Ok(Vec::new()) };
    parse_kernel_defines(&text).map_err(|why| CudaError::Setting { name: VAR, why })
}

fn parse_kernel_defines(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, value) = item.split_once('=').unwrap_or((item, "1"));
        let (name, value) = (name.trim(), value.trim());
        let ident = name.starts_with("WF_") && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            return Err(format!("`{name}` is not a WF_ identifier (in `{item}`)"));
        }
        if value.is_empty() || !value.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_') {
            return Err(format!("`{value}` is not a plain token (in `{item}`)"));
        }
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

/// Words per mid-length row of the wide signatures (WF_WIDE_WORDS in `kernels/prelude.cuh`).
const WIDE_WORDS: usize = 64;

/// Rows at least this long that are not hubs get a wide signature (`WAYFARER_WIDE_MIN_DEGREE`
/// overrides it for sweeps; 0: none).
const WIDE_MIN_DEGREE: u64 = 32;

/// The mid-length rows with wide signatures: per node its slot (or `u32::MAX`; empty when
/// there are none) and their count.
#[derive(Default)]
struct WideRows {
    slot: Vec<u32>,
    count: usize,
}

impl WideRows {
    /// Every row of at least [`WIDE_MIN_DEGREE`] entries without a hub bitmap (`hub_slot`:
    /// per node, or empty when there are no hubs).
    fn choose(graph: &CsrGraph, hub_slot: &[u32]) -> Self {
        let min = wide_min_degree();
        if min == 0 {
            return WideRows::default();
        }
        let off = graph.offsets();
        let mut slot = vec![u32::MAX; graph.num_nodes()];
        let mut count = 0usize;
        for (v, s) in slot.iter_mut().enumerate() {
            let hub = hub_slot.get(v).is_some_and(|&h| h != u32::MAX);
            if !hub && off[v + 1] - off[v] >= min {
                *s = count as u32;
                count += 1;
            }
        }
        if count == 0 {
            return WideRows::default();
        }
        WideRows { slot, count }
    }

    /// Device bytes for a graph's wide signatures at most (hubs not subtracted).
    fn bytes_at_most(graph: &CsrGraph) -> usize {
        let min = wide_min_degree();
        if min == 0 {
            return 0;
        }
        let off = graph.offsets();
        let rows = off.windows(2).filter(|w| w[1] - w[0] >= min).count();
        if rows == 0 { 0 } else { rows * WIDE_WORDS * 4 + graph.num_nodes() * 4 }
    }
}

fn wide_min_degree() -> u64 {
    std::env::var("WAYFARER_WIDE_MIN_DEGREE").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(WIDE_MIN_DEGREE)
}

/// Walks of at most this many steps get the two-blocks-per-multiprocessor build.
const SHORT_WALK_LENGTH: u32 = 8;

/// Words per node of the row signatures (WF_SIG_WORDS in `kernels/prelude.cuh`).
const SIG_WORDS: usize = 8;

/// The graph on the device: uploads, the arrays the preprocessing kernels computed, and the
/// `WfGraph` image that points at them.
pub(crate) struct Prepared {
    up: Uploads,
    /// Out of core: the hot rows and the host arrays.
    split: Option<SplitGraph>,
    /// The `WfGraph` struct's bytes.
    pub(crate) image: Vec<u8>,
    /// Device pointers of the CSR offsets and targets.
    pub(crate) csr: (u64, u64),
    hubs: usize,
    seconds: f64,
    /// Device pointers of weight max, min, sum, the label stats (4 floats per entry), neighbor degree max, min.
    stats: [u64; 6],
}

/// Labels with per-label arrays (0: none, or too many; see [`MAX_LABEL_STATS`]).
fn stats_label_k(graph: &CsrGraph, req: Requirements) -> u32 {
    match graph.labels() {
        Some(_) if req.label_stats && graph.num_labels() <= MAX_LABEL_STATS => graph.num_labels(),
        _ => 0,
    }
}

/// A table's element type: where [`put_table`] keeps its copy (on the device or in mapped host
/// memory) so that it lives as long as the run.
trait TableElem: DeviceRepr + cudarc::driver::ValidAsZeroBits + Copy + Send + Sync + Unpin + 'static {
    fn keep_on_device(up: &mut Uploads, slice: CudaSlice<Self>);
    fn keep_mapped(up: &mut Uploads, pinned: PinnedHostSlice<Self>);
}

macro_rules! table_elem {
    ($t:ty, $dev:ident, $host:ident) => {
        impl TableElem for $t {
            fn keep_on_device(up: &mut Uploads, slice: CudaSlice<Self>) {
                up.$dev.push(slice);
            }
            fn keep_mapped(up: &mut Uploads, pinned: PinnedHostSlice<Self>) {
                up.$host.push(pinned);
            }
        }
    };
}
table_elem!(u32, slices_u32, pinned_u32);
table_elem!(u64, slices_u64, pinned_u64);
table_elem!(f64, slices_f64, pinned_f64);

/// Copies one proposal table to the device (or maps it from pinned host memory) and returns
/// the address the kernel reads it at.
fn put_table<T: TableElem>(dev: &CudaDevice, up: &mut Uploads, on_device: bool, data: &[T]) -> Result<u64, CudaError> {
    if on_device {
        let slice = dev.stream.clone_htod(data)?;
        let ptr = slice.device_ptr(&dev.stream).0;
        T::keep_on_device(up, slice);
        Ok(ptr)
    } else {
        let (pinned, ptr) = mapped_copy(dev, data)?;
        T::keep_mapped(up, pinned);
        Ok(ptr)
    }
}

/// The structured proposals' tables on the device: each static factor computed by the walk's
/// own code on the device (`wf_prep_term_factors`), the tables built from those values on the
/// host exactly as the CPU builds them, uploaded, and pointed at from `prepared`'s graph image.
/// The tables go to device memory, or (`on_device` false) to mapped host memory. Returns a
/// structured trial's cost in eRJS trials and the rows the tables cover, or why none were built;
/// a negative, NaN or infinite factor is an error naming its edge.
fn build_tables(
    dev: &CudaDevice,
    walk: &CompiledWalk,
    graph: &CsrGraph,
    graph_dev: &CudaSlice<u8>,
    params_dev: &CudaSlice<u8>,
    prepared: &mut Prepared,
    on_device: bool,
    budget: u64,
    need: TableNeed,
    grid: LaunchConfig,
) -> Result<Result<(f64, TableCoverage), NoTables>, CudaError> {
    use wayfarer_runtime::proposal::StaticFactor;
    let s = &dev.stream;
    let m = graph.num_edges() as usize;
    let factors = walk.plan.iter().filter_map(|t| if let StaticFactor::Table(i) = t.factor { Some(i as usize + 1) } else { None }).max();
    let mut values: Vec<Vec<f32>> = Vec::new();
    if m > 0 {
        let k = &kernels::PREP_TERM_FACTORS;
        let f = walk.prep(k.name)?;
        // The factor kernel is the in-memory build: out of core it reads the whole edge arrays
        // in mapped host memory, by their CSR positions.
        let whole = match &prepared.split {
            None => None,
            Some(sg) => {
                let mut g: WfGraph = bytemuck::pod_read_unaligned(&prepared.image);
                (g.targets, g.weights, g.labels, g.timestamps) = sg.cold;
                (g.edges, g.row_base, g.hot_edges) = (0, 0, 0);
                (g.cold_targets, g.cold_weights, g.cold_labels, g.cold_times) = (0, 0, 0, 0);
                Some(s.clone_htod(bytemuck::bytes_of(&g))?)
            }
        };
        for i in 0..factors.unwrap_or(0) {
            let out = s.alloc_zeros::<f32>(m)?;
            // The graph image is the walk's (or its whole-array copy), the parameters its own;
            // out holds m floats.
            Launch::new(s, &f, k)
                .arg(whole.as_ref().unwrap_or(graph_dev))
                .arg(params_dev)
                .arg(&(i as u32))
                .arg(&out)
                .arg(&(m as u64))
                .run(grid)?;
            values.push(s.clone_dtoh(&out)?);
        }
    }
    let factor = |i: usize, e: usize| values[i][e];
    let tables = match ProposalTables::build(graph, &walk.plan, &factor, budget, need) {
        Err((_, e, x)) => return Err(wayfarer_runtime::engine::bad_static_factor(&walk.name, graph, e, x).into()),
        Ok(Err(why)) => return Ok(Err(why)),
        Ok(Ok(t)) => t,
    };
    drop(values);
    let arrays = tables.arrays();
    let mut g: WfGraph = bytemuck::pod_read_unaligned(&prepared.image);
    let up = &mut prepared.up;
    let mut entries = [0u64; 4];
    for (k, t) in arrays.terms.iter().enumerate() {
        if let Some(en) = t.entries {
            entries[k] = put_table(dev, up, on_device, bytemuck::cast_slice::<[u32; 3], u32>(en))?;
        }
    }
    if arrays.label_k > 0 {
        g.seg_order = put_table(dev, up, on_device, arrays.order)?;
        g.seg_starts = put_table(dev, up, on_device, arrays.starts)?;
    }
    let mut sums = [0u64; 4];
    for (k, t) in arrays.terms.iter().enumerate() {
        if let Some(x) = t.sums {
            sums[k] = put_table(dev, up, on_device, x)?;
        }
    }
    if let Some(at) = arrays.row_at {
        g.table_at = put_table(dev, up, on_device, at)?;
    }
    g.table_min_degree = arrays.min_degree;
    [g.term_entries0, g.term_entries1, g.term_entries2, g.term_entries3] = entries;
    [g.term_sums0, g.term_sums1, g.term_sums2, g.term_sums3] = sums;
    g.seg_k = arrays.label_k;
    g.multiplicity = arrays.multiplicity;
    g.has_tables = 1;
    prepared.image = bytemuck::bytes_of(&g).to_vec();
    s.synchronize()?;
    Ok(Ok((tables.device_trial_cost(), tables.coverage)))
}

/// Uploads `graph` and computes, on the device, what `walk` reads besides it.
pub(crate) fn prepare(
    dev: &CudaDevice,
    walk: &CompiledWalk,
    graph: &CsrGraph,
    hub_budget: usize,
    hub_min_degree: u64,
    residency: Residency,
) -> Result<Prepared, CudaError> {
    let s = &dev.stream;
    let n = graph.num_nodes();
    let m = graph.num_edges() as usize;
    let req = walk.requirements;
    let weighted = graph.weights().is_some();
    let label_k = stats_label_k(graph, req);
    let mut up = Uploads {
        slices_u64: Vec::new(),
        slices_f64: Vec::new(),
        pinned_u32: Vec::new(),
        pinned_f64: Vec::new(),
        pinned_u64: Vec::new(),
        slices_u32: Vec::new(),
        slices_f32: Vec::new(),
        slices_i64: Vec::new(),
    };
    macro_rules! upload {
        ($vec:ident, $data:expr) => {{
            let d: &[_] = $data;
            if d.is_empty() {
                0u64
            } else {
                let slice = s.clone_htod(d)?;
                let ptr = slice.device_ptr(s).0;
                up.$vec.push(slice);
                ptr
            }
        }};
    }
    // Zeroed device arrays for the preprocessing kernels to fill.
    macro_rules! zeroed {
        ($vec:ident, $len:expr) => {{
            let len: usize = $len;
            if len == 0 {
                0u64
            } else {
                let slice = s.alloc_zeros(len)?;
                let ptr = slice.device_ptr(s).0;
                up.$vec.push(slice);
                ptr
            }
        }};
    }
    let offsets = upload!(slices_u64, graph.offsets());
    // Where the kernels read the edges: device copies of the whole arrays, or (out of core)
    // device copies of the hot rows with the whole arrays in mapped host memory.
    let mut split: Option<SplitGraph> = None;
    let (targets, weights, labels, times) = match residency {
        Residency::Device => (
            upload!(slices_u32, graph.targets()),
            graph.weights().map_or(Ok(0), |w| -> Result<u64, CudaError> { Ok(upload!(slices_f32, w)) })?,
            graph.labels().map_or(Ok(0), |l| -> Result<u64, CudaError> { Ok(upload!(slices_u32, l)) })?,
            graph.timestamps().map_or(Ok(0), |t| -> Result<u64, CudaError> { Ok(upload!(slices_i64, t)) })?,
        ),
        Residency::Split { hot_bytes } => {
            let mut sg = SplitGraph::new(dev, graph, hot_bytes, SplitArrays::All)?;
            let hot = sg.hot_arrays(graph);
            sg.hot_ptrs = (
                upload!(slices_u32, &hot.0),
                upload!(slices_f32, &hot.1),
                upload!(slices_u32, &hot.2),
                upload!(slices_i64, &hot.3),
                upload!(slices_u64, &sg.row_base),
            );
            let cold = sg.cold;
            split = Some(sg);
            // The preprocessing kernels read the whole graph from host memory, once.
            cold
        }
    };
    let mut prop_ptrs = Vec::new();
    for p in &walk.props {
        let data = graph.node_property(p).expect("checked above");
        prop_ptrs.push(upload!(slices_f32, data));
    }
    let props = upload!(slices_u64, &prop_ptrs);

    // The per-node arrays, packed edges and hub bitmaps, computed on the device.
    s.synchronize()?;
    let t = Instant::now();
    let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    let grid = LaunchConfig { grid_dim: (sms * 8, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let n32 = n as u32;
    let packed = weighted && split.is_none();
    let edges = if packed { zeroed!(slices_u32, 2 * m) } else { 0 };
    if packed {
        let k = &kernels::PREP_EDGES;
        let f = walk.prep(k.name)?;
        // targets and weights hold m entries, edges 2m words.
        Launch::new(s, &f, k).arg(&DevPtr(targets)).arg(&DevPtr(weights)).arg(&DevPtr(edges)).arg(&(m as u64)).run(grid)?;
    }
    let (node_w, weight_max, weight_min, weight_sum) = if req.weight_stats {
        let ptrs = (zeroed!(slices_f32, 4 * n), zeroed!(slices_f32, n), zeroed!(slices_f32, n), zeroed!(slices_f32, n));
        let k = &kernels::PREP_WEIGHT_STATS;
        let f = walk.prep(k.name)?;
        // offsets has n + 1 entries, weights (or null) m, the outputs n (node_w 4n).
        Launch::new(s, &f, k)
            .arg(&DevPtr(offsets))
            .arg(&DevPtr(weights))
            .arg(&n32)
            .arg(&DevPtr(ptrs.0))
            .arg(&DevPtr(ptrs.1))
            .arg(&DevPtr(ptrs.2))
            .arg(&DevPtr(ptrs.3))
            .run(grid)?;
        ptrs
    } else {
        (0, 0, 0, 0)
    };
    let kn = label_k as usize * n;
    // (max, sum, count bits, 0) per entry.
    let label_stats = zeroed!(slices_f32, 4 * kn);
    if label_k > 0 {
        let k = &kernels::PREP_LABEL_STATS;
        let f = walk.prep(k.name)?;
        // labels hold m entries below label_k; the output n * label_k entries of 16 bytes.
        Launch::new(s, &f, k)
            .arg(&DevPtr(offsets))
            .arg(&DevPtr(weights))
            .arg(&DevPtr(labels))
            .arg(&n32)
            .arg(&label_k)
            .arg(&DevPtr(label_stats))
            .run(grid)?;
    }
    let (nbr_max, nbr_min) = if req.neighbor_degree {
        let ptrs = (zeroed!(slices_u32, n), zeroed!(slices_u32, n));
        let k = &kernels::PREP_NEIGHBOR_DEGREE;
        let f = walk.prep(k.name)?;
        // Every target is a node (checked when the graph was built); the outputs hold n.
        Launch::new(s, &f, k).arg(&DevPtr(offsets)).arg(&DevPtr(targets)).arg(&n32).arg(&DevPtr(ptrs.0)).arg(&DevPtr(ptrs.1)).run(grid)?;
        ptrs
    } else {
        (0, 0)
    };
    let hubs = HubPlan::choose(graph, hub_budget, hub_min_degree);
    let hub_slot = upload!(slices_u32, &hubs.slot);
    let hub_nodes = upload!(slices_u32, &hubs.nodes);
    let hub_bits = zeroed!(slices_u32, hubs.nodes.len() * hubs.words);
    if !hubs.nodes.is_empty() {
        let k = &kernels::PREP_HUB_BITS;
        let f = walk.prep(k.name)?;
        let (count, words) = (hubs.nodes.len() as u32, hubs.words as u64);
        // hub_bits holds count * words zeroed words; targets are nodes.
        Launch::new(s, &f, k)
            .arg(&DevPtr(offsets))
            .arg(&DevPtr(targets))
            .arg(&DevPtr(hub_nodes))
            .arg(&count)
            .arg(&DevPtr(hub_bits))
            .arg(&words)
            .run(LaunchConfig { grid_dim: (count.min(sms * 8), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 })?;
    }
    // Row signatures for walks that call has_edge, in core (WAYFARER_ROW_SIGNATURES=0: none,
    // for comparisons).
    let signatures =
        walk.requirements.edge_queries && split.is_none() && std::env::var("WAYFARER_ROW_SIGNATURES").map_or(true, |v| v.trim() != "0");
    let row_sig = if signatures { zeroed!(slices_u32, n * SIG_WORDS) } else { 0 };
    let wide = if signatures { WideRows::choose(graph, &hubs.slot) } else { WideRows::default() };
    let wide_slot = upload!(slices_u32, &wide.slot);
    let wide_sig = zeroed!(slices_u32, wide.count * WIDE_WORDS);
    if signatures {
        let k = &kernels::PREP_ROW_SIGS;
        let f = walk.prep(k.name)?;
        // offsets has n + 1 entries, targets are nodes, hub_slot and wide_slot n entries (or
        // null), row_sig n * SIG_WORDS zeroed words, wide_sig WIDE_WORDS per wide slot.
        Launch::new(s, &f, k)
            .arg(&DevPtr(offsets))
            .arg(&DevPtr(targets))
            .arg(&n32)
            .arg(&DevPtr(hub_slot))
            .arg(&DevPtr(wide_slot))
            .arg(&DevPtr(row_sig))
            .arg(&DevPtr(wide_sig))
            .run(grid)?;
    }
    s.synchronize()?;
    let seconds = t.elapsed().as_secs_f64();

    // Out of core, the kernels' edge arrays are the hot rows'; the whole arrays are the cold ones.
    let (k_targets, k_weights, k_labels, k_times, row_base) = match &split {
        None => (targets, weights, labels, times, 0),
        Some(sg) => sg.hot_ptrs,
    };
    let (hot_edges, cold) = match &split {
        None => (0, (0, 0, 0, 0)),
        Some(sg) => (sg.hot_edges, sg.cold),
    };
    let g = WfGraph {
        num_nodes: n as u32,
        offsets,
        targets: k_targets,
        edges,
        weights: k_weights,
        labels: k_labels,
        timestamps: k_times,
        node_w,
        weight_max,
        weight_min,
        weight_sum,
        label_k,
        label_stats,
        nbr_degree_max: nbr_max,
        nbr_degree_min: nbr_min,
        node_props: props,
        hub_slot,
        hub_bits,
        hub_words: hubs.words as u64,
        row_base,
        hot_edges,
        cold_targets: cold.0,
        cold_weights: cold.1,
        cold_labels: cold.2,
        cold_times: cold.3,
        row_sig,
        wide_sig,
        ..WfGraph::default()
    };
    Ok(Prepared {
        up,
        image: bytemuck::bytes_of(&g).to_vec(),
        csr: (offsets, targets),
        split,
        hubs: hubs.nodes.len(),
        seconds,
        stats: [weight_max, weight_min, weight_sum, label_stats, nbr_max, nbr_min],
    })
}

/// The per-node arrays `walk` needs, computed by the device's preprocessing kernels and read
/// back (for tests: they must equal [`wayfarer_runtime::NodeStats::compute`] bit for bit).
pub fn node_stats_on_device(dev: &CudaDevice, walk: &CompiledWalk, graph: &CsrGraph) -> Result<wayfarer_runtime::NodeStats, CudaError> {
    let prepared = prepare(dev, walk, graph, 0, MIN_HUB_DEGREE, Residency::Device)?;
    let s = &dev.stream;
    let n = graph.num_nodes();
    let kn = stats_label_k(graph, walk.requirements) as usize * n;
    let find_f32 = |ptr: u64, len: usize| -> Result<Vec<f32>, CudaError> {
        if ptr == 0 {
            return Ok(Vec::new());
        }
        let slice = prepared.up.slices_f32.iter().find(|x| x.device_ptr(s).0 == ptr).expect("an uploaded array");
        Ok(s.clone_dtoh(&slice.slice(..len))?)
    };
    let find_u32 = |ptr: u64, len: usize| -> Result<Vec<u32>, CudaError> {
        if ptr == 0 {
            return Ok(Vec::new());
        }
        let slice = prepared.up.slices_u32.iter().find(|x| x.device_ptr(s).0 == ptr).expect("an uploaded array");
        Ok(s.clone_dtoh(&slice.slice(..len))?)
    };
    let st = prepared.stats;
    Ok(wayfarer_runtime::NodeStats {
        weight_max: find_f32(st[0], n)?,
        weight_second: Vec::new(),
        weight_sum: find_f32(st[2], n)?,
        label_k: stats_label_k(graph, walk.requirements),
        labels: find_f32(st[3], 4 * kn)?
            .chunks_exact(4)
            .map(|e| wayfarer_runtime::LabelStat { max: e[0], sum: e[1], count: e[2].to_bits() })
            .collect(),
        weight_min: find_f32(st[1], n)?,
        neighbor_degree_max: find_u32(st[4], n)?,
        neighbor_degree_min: find_u32(st[5], n)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_signature_words_match_the_prelude() {
        assert!(crate::codegen::PRELUDE.contains(&format!("#define WF_SIG_WORDS {SIG_WORDS}\n")));
        assert!(crate::codegen::PRELUDE.contains(&format!("#define WF_WIDE_WORDS {WIDE_WORDS}\n")));
    }

    #[test]
    fn kernel_defines_are_wf_names_and_plain_tokens() {
        let ok = parse_kernel_defines(" WF_PREFETCH_LINES=4, WF_X ,WF_Y=0.5").unwrap();
        assert_eq!(ok, [("WF_PREFETCH_LINES", "4"), ("WF_X", "1"), ("WF_Y", "0.5")].map(|(a, b)| (a.to_string(), b.to_string())));
        assert!(parse_kernel_defines("").unwrap().is_empty());
        for bad in ["PREFETCH=4", "WF_A=4\n#include <x>", "WF_A=", "WF_A B=1", "WF_A=(1)"] {
            let err = parse_kernel_defines(bad).unwrap_err();
            assert!(err.contains("in `"), "{bad}: {err}");
        }
    }

    #[test]
    fn start_nodes_hash_evenly_over_gpus() {
        for gpus in [1usize, 2, 3, 4, 8] {
            let mut count = vec![0u64; gpus];
            // Contiguous ids (R-MAT's hubs sit at low ids) and strided ones.
            for v in (0..200_000u32).chain((0..50_000u32).map(|i| i * 64)) {
                let g = gpu_of_start(v, gpus);
                assert!(g < gpus);
                count[g] += 1;
            }
            let even = 250_000 / gpus as u64;
            for c in count {
                assert!(c.abs_diff(even) * 100 < even, "{gpus} GPUs: {c} of an even {even}");
            }
        }
    }
}
