//! Compiling a walk for the GPU and running it.

use crate::layout::{self, CStruct};
use crate::{CudaDevice, CudaError, fnv64, walk_source};
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{CompileOptions, Ptx};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;
use wayfarer_compiler::WalkInfo;
use wayfarer_compiler::eval::ParamValue;
use wayfarer_compiler::ir::Program;
use wayfarer_runtime::engine::{CostModel, SHORT_ROW, SamplerStats};
use wayfarer_runtime::{CsrGraph, NodeStats, Requirements, SamplerMode, Starts, WalkError, Walks};

/// A walk compiled for one device.
pub struct CompiledWalk {
    function: CudaFunction,
    requirements: Requirements,
    props: Vec<String>,
    name: String,
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
        let source = walk_source(program, info);
        let options = vec!["-std=c++17".to_string(), "--fmad=false".to_string()];
        let arch: &'static str = Box::leak(self.arch.clone().into_boxed_str());
        let key = fnv64(&[source.as_bytes(), options.join(" ").as_bytes(), arch.as_bytes(), &self.driver_version.to_le_bytes()]);
        let dir = cache_dir();
        let _ = std::fs::create_dir_all(&dir);
        let source_path = dir.join(format!("{}-{key:016x}.cu", program.name));
        let ptx_path = dir.join(format!("{}-{key:016x}.ptx", program.name));
        let _ = std::fs::write(&source_path, &source);
        let started = Instant::now();
        let (ptx, cached) = match std::fs::read_to_string(&ptx_path) {
            Ok(text) if text.contains(".entry wf_walk") => (Ptx::from_src(text), true),
            _ => {
                let opts = CompileOptions { arch: Some(arch), options: options.clone(), ..Default::default() };
                match cudarc::nvrtc::compile_ptx_with_opts(&source, opts) {
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
        let function = module.load_function("wf_walk")?;
        Ok(CompiledWalk {
            function,
            requirements: wayfarer_compiler::analysis::requirements(info),
            props: program.props.clone(),
            name: program.name.clone(),
            source_path,
            compile_seconds,
            cached,
        })
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
    /// Seconds from the start of the upload to the walks on the host.
    pub total_seconds: f64,
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
}

/// The longest rows as bitmaps over all nodes, longest first, within a byte budget: a
/// `has_edge` on a hub is then one bit test instead of a binary search over thousands of
/// entries (a chain of dependent loads that stalls the whole warp).
struct HubBitmaps {
    slot: Vec<u32>,
    bits: Vec<u32>,
    words: usize,
    count: usize,
}

/// The ladder of `R` values the GPU profile tries.
const PROFILE_RATIOS: [f64; 7] = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0];

/// Rows shorter than this are searched: a few loads, mostly in one cache line.
pub const MIN_HUB_DEGREE: u64 = 256;

impl HubBitmaps {
    fn build(graph: &CsrGraph, budget: usize, min_degree: u64) -> Self {
        let n = graph.num_nodes();
        let words = n.div_ceil(32);
        let off = graph.offsets();
        let mut order: Vec<u32> = (0..n as u32).filter(|&v| off[v as usize + 1] - off[v as usize] >= min_degree.max(1)).collect();
        order.sort_unstable_by_key(|&v| std::cmp::Reverse(off[v as usize + 1] - off[v as usize]));
        let count = order.len().min(budget / (words * 4).max(1));
        if count == 0 {
            return HubBitmaps { slot: Vec::new(), bits: Vec::new(), words, count: 0 };
        }
        let mut slot = vec![u32::MAX; n];
        for (k, &v) in order[..count].iter().enumerate() {
            slot[v as usize] = k as u32;
        }
        let mut bits = vec![0u32; count * words];
        bits.par_chunks_mut(words).zip(order[..count].par_iter()).for_each(|(row, &v)| {
            for &t in graph.neighbors(v) {
                row[t as usize / 32] |= 1 << (t % 32);
            }
        });
        HubBitmaps { slot, bits, words, count }
    }
}

struct Uploads {
    slices_u64: Vec<CudaSlice<u64>>,
    slices_u32: Vec<CudaSlice<u32>>,
    slices_f32: Vec<CudaSlice<f32>>,
    slices_i64: Vec<CudaSlice<i64>>,
}

/// Runs `walk` with parameter `values` on `graph`.
pub fn run(
    dev: &CudaDevice,
    walk: &CompiledWalk,
    graph: &CsrGraph,
    values: &[ParamValue],
    program: &Program,
    cfg: &GpuRun,
) -> Result<(Walks, GpuReport), CudaError> {
    let started = Instant::now();
    let mut report = GpuReport::default();
    let n = graph.num_nodes();
    if n == 0 {
        return Err(WalkError::Config("the graph has no nodes".into()).into());
    }
    if graph.num_edges() > u32::MAX as u64 && graph.offsets().windows(2).any(|w| w[1] - w[0] > u32::MAX as u64) {
        return Err(WalkError::Config("a row with 2^32 or more edges is not supported on the GPU yet".into()).into());
    }
    for p in &walk.props {
        if graph.node_property(p).is_none() {
            return Err(WalkError::MissingGraphData { walk: walk.name.clone(), what: format!("node property `{p}`") }.into());
        }
    }
    let t = Instant::now();
    let stats = NodeStats::compute(graph, walk.requirements, graph.weights().is_some());
    report.precompute_seconds = t.elapsed().as_secs_f64();

    // Memory: the graph and its arrays, then as many queries per batch as fit.
    let total = cfg.starts.count(n);
    let stride = cfg.length as u64 + 1;
    let graph_bytes = graph.offsets().len() * 12
        + graph.num_edges() as usize * 4
        + graph.weights().map_or(0, |w| w.len() * 12)
        + graph.labels().map_or(0, |l| l.len() * 4)
        + graph.timestamps().map_or(0, |t| t.len() * 8)
        + (stats.weight_max.len() * 7 + stats.label_max.len() + stats.label_sum.len()) * 4
        + (stats.label_count.len() + stats.neighbor_degree_max.len() + stats.neighbor_degree_min.len()) * 4
        + walk.props.len() * n * 4;
    let per_query = (stride as usize) * 4 + 4 + if matches!(cfg.starts, Starts::Nodes(_)) { 4 } else { 0 };
    let (free, _) = dev.ctx.mem_get_info()?;
    let budget = cfg.memory_budget.unwrap_or(free / 10 * 8);
    if graph_bytes + per_query > budget {
        return Err(CudaError::OutOfMemory(format!(
            "the graph needs {:.2} GiB on the device and {:.2} GiB may be used ({:.2} GiB free); graphs larger than device memory are not supported yet",
            graph_bytes as f64 / (1u64 << 30) as f64,
            budget as f64 / (1u64 << 30) as f64,
            free as f64 / (1u64 << 30) as f64
        )));
    }
    let batch = (((budget - graph_bytes) / per_query) as u64).clamp(1, total.max(1));
    report.batches = total.div_ceil(batch) as usize;
    report.estimated_bytes = graph_bytes + batch as usize * per_query;
    if cfg.verbose {
        eprintln!(
            "gpu memory estimate: graph and per-node arrays {:.1} MiB + walks {:.1} MiB per batch ({} batch{} of up to {batch} walks) = {:.1} MiB of {:.1} MiB free on {}",
            graph_bytes as f64 / 1048576.0,
            (batch as usize * per_query) as f64 / 1048576.0,
            report.batches,
            if report.batches == 1 { "" } else { "es" },
            report.estimated_bytes as f64 / 1048576.0,
            free as f64 / 1048576.0,
            dev.name
        );
    }

    let s = &dev.stream;
    let mut up = Uploads { slices_u64: Vec::new(), slices_u32: Vec::new(), slices_f32: Vec::new(), slices_i64: Vec::new() };
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
    let offsets = upload!(slices_u64, graph.offsets());
    let targets = upload!(slices_u32, graph.targets());
    let weights = graph.weights().map_or(Ok(0), |w| -> Result<u64, CudaError> { Ok(upload!(slices_f32, w)) })?;
    // (target, weight bits) interleaved: a sampled edge's destination and weight in one load.
    let edges = match graph.weights() {
        Some(w) => {
            let packed: Vec<u32> = graph.targets().iter().zip(w).flat_map(|(&t, &x)| [t, x.to_bits()]).collect();
            upload!(slices_u32, &packed)
        }
        None => 0,
    };
    let labels = graph.labels().map_or(Ok(0), |l| -> Result<u64, CudaError> { Ok(upload!(slices_u32, l)) })?;
    let times = graph.timestamps().map_or(Ok(0), |t| -> Result<u64, CudaError> { Ok(upload!(slices_i64, t)) })?;
    let node_w: Vec<f32> =
        (0..stats.weight_max.len()).flat_map(|v| [stats.weight_max[v], stats.weight_min[v], stats.weight_sum[v], 0.0]).collect();
    let node_w = upload!(slices_f32, &node_w);
    let weight_max = upload!(slices_f32, &stats.weight_max);
    let weight_min = upload!(slices_f32, &stats.weight_min);
    let weight_sum = upload!(slices_f32, &stats.weight_sum);
    let label_max = upload!(slices_f32, &stats.label_max);
    let label_sum = upload!(slices_f32, &stats.label_sum);
    let label_count = upload!(slices_u32, &stats.label_count);
    let nbr_max = upload!(slices_u32, &stats.neighbor_degree_max);
    let nbr_min = upload!(slices_u32, &stats.neighbor_degree_min);
    let mut prop_ptrs = Vec::new();
    for p in &walk.props {
        let data = graph.node_property(p).expect("checked above");
        prop_ptrs.push(upload!(slices_f32, data));
    }
    let props = upload!(slices_u64, &prop_ptrs);
    let hubs = HubBitmaps::build(graph, cfg.hub_budget.unwrap_or(budget / 8), cfg.hub_min_degree.unwrap_or(MIN_HUB_DEGREE));
    let hub_slot = upload!(slices_u32, &hubs.slot);
    let hub_bits = upload!(slices_u32, &hubs.bits);

    let mut g = CStruct::default();
    g.u32(n as u32).u64(offsets).u64(targets).u64(edges).u64(weights).u64(labels).u64(times);
    g.u64(node_w).u64(weight_max).u64(weight_min).u64(weight_sum).u32(stats.label_k).u64(label_max).u64(label_sum).u64(label_count);
    g.u64(nbr_max).u64(nbr_min).u64(props).u64(hub_slot).u64(hub_bits).u64(hubs.words as u64);
    report.hubs = hubs.count;
    let graph_dev = s.clone_htod(&g.finish())?;
    let params_dev = s.clone_htod(&layout::params(program, values))?;

    let mode_of = |sampler: SamplerMode| match sampler {
        SamplerMode::Adaptive => Ok(0u32),
        SamplerMode::Rejection => Ok(1),
        SamplerMode::Reservoir => Ok(2),
        other => {
            Err(CudaError::from(WalkError::Config(format!("sampler {other} is a CPU reference; the GPU runs adaptive, erjs or ervs"))))
        }
    };
    let mode = mode_of(cfg.sampler)?;
    let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    let launch_cfg = LaunchConfig { grid_dim: (sms * 8, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };

    // One launch over queries `first..first+count` (global indices; `starts` holds theirs, or
    // None for one walker per node): the walks, the lengths, the counters and the seconds.
    let launch = |first: u64,
                  count: u64,
                  starts: Option<&[u32]>,
                  mode: u32,
                  cost: CostModel,
                  length: u32|
     -> Result<(Vec<u32>, Vec<u32>, Vec<u64>, f64), CudaError> {
        let stride = length as u64 + 1;
        let out = s.alloc_zeros::<u32>((count * stride) as usize)?;
        let lens = s.alloc_zeros::<u32>(count as usize)?;
        let counter = s.alloc_zeros::<u64>(1)?;
        let stats_dev = s.alloc_zeros::<u64>(8)?;
        let error = s.alloc_zeros::<u64>(5)?;
        let starts_dev = match starts {
            Some(v) => Some(s.clone_htod(v)?),
            None => None,
        };
        let mut args = CStruct::default();
        args.u64(first).u64(count).u64(cfg.seed).u32(length).u32(mode);
        args.f64(cost.ratio).f64(cost.fixed).f64(cost.ratio_short);
        args.u32(SHORT_ROW as u32).u32(starts_dev.is_none() as u32);
        args.u64(starts_dev.as_ref().map_or(0, |x| x.device_ptr(s).0));
        args.u64(out.device_ptr(s).0).u64(lens.device_ptr(s).0).u64(counter.device_ptr(s).0);
        args.u64(stats_dev.device_ptr(s).0).u64(error.device_ptr(s).0);
        let args_dev = s.clone_htod(&args.finish())?;
        let t = Instant::now();
        let mut b = s.launch_builder(&walk.function);
        b.arg(&graph_dev).arg(&params_dev).arg(&args_dev);
        // SAFETY: the argument images follow the kernel's structs (layout.rs), every pointer in
        // them is a live allocation of the right length, and the kernel bounds every index.
        unsafe { b.launch(launch_cfg) }?;
        s.synchronize()?;
        let secs = t.elapsed().as_secs_f64();
        let err = s.clone_dtoh(&error)?;
        if err[0] != 0 {
            return Err(device_error(graph, &walk.name, &err).into());
        }
        Ok((s.clone_dtoh(&out)?, s.clone_dtoh(&lens)?, s.clone_dtoh(&stats_dev)?, secs))
    };

    // The adaptive rule's R, tuned here when asked: a pilot of walkers spread over the id space
    // runs the adaptive kernel on the uploaded graph under a ladder of R values, and the fastest
    // wins. (Timing eRJS and eRVS apart and dividing misleads on a GPU: in the fused kernel an
    // eRVS step holds its whole warp, which a pure-eRVS pilot never shows.) Every R is exact;
    // R only moves time.
    let mut cost = cfg.cost;
    if cfg.profile && mode == 0 {
        let t = Instant::now();
        let pilot = (n as u64).min(1 << 16);
        let pilot_starts: Vec<u32> = (0..pilot).map(|i| ((i * n as u64) / pilot) as u32).collect();
        let length = cfg.length.clamp(1, 16);
        let mut best: Option<(f64, f64)> = None;
        // Warm caches and the module once before timing.
        launch(0, pilot, Some(&pilot_starts), 0, cfg.cost, length)?;
        for r in PROFILE_RATIOS {
            let m = CostModel { ratio: r, fixed: cfg.cost.fixed, ratio_short: r };
            let (_, _, _, secs) = launch(0, pilot, Some(&pilot_starts), 0, m, length)?;
            if best.is_none_or(|(_, b)| secs < b) {
                best = Some((r, secs));
            }
        }
        if let Some((r, _)) = best {
            cost = CostModel { ratio: r, fixed: cfg.cost.fixed, ratio_short: r };
            report.profiled = true;
        }
        report.profile_seconds = t.elapsed().as_secs_f64();
    }
    report.cost = cost;

    let mut walks = Walks {
        stride: stride as usize,
        nodes: Vec::with_capacity((total * stride) as usize),
        lengths: Vec::with_capacity(total as usize),
    };
    let mut kernel_stats = [0u64; 8];
    let mut first = 0u64;
    while first < total {
        let count = batch.min(total - first);
        let starts = match cfg.starts {
            Starts::Nodes(v) => Some(&v[first as usize..(first + count) as usize]),
            Starts::EveryNode { .. } => None,
        };
        let (out, lens, st, secs) = launch(first, count, starts, mode, cost, cfg.length)?;
        report.kernel_seconds += secs;
        for (k, v) in st.iter().enumerate() {
            kernel_stats[k] += v;
        }
        walks.nodes.extend(out);
        walks.lengths.extend(lens);
        first += count;
    }
    drop(up);
    report.walkers = total;
    report.steps = kernel_stats[6];
    report.ervs_edges = kernel_stats[7];
    report.stats = SamplerStats {
        rejection_steps: kernel_stats[0],
        reservoir_steps: kernel_stats[1] - kernel_stats[3].min(kernel_stats[1]),
        rejection_trials: kernel_stats[2],
        rejection_fallbacks: kernel_stats[3],
        dead_ends: kernel_stats[4],
        stopped: kernel_stats[5],
        ..Default::default()
    };
    report.total_seconds = started.elapsed().as_secs_f64();
    Ok((walks, report))
}

/// The walk error the kernel reported: `[code, query, step, edge, weight bits]`.
fn device_error(graph: &CsrGraph, walk: &str, err: &[u64]) -> WalkError {
    let e = err[3] as usize;
    let src = graph.offsets().partition_point(|&o| o <= e as u64).saturating_sub(1) as u32;
    let dst = graph.targets().get(e).copied().unwrap_or(u32::MAX);
    let weight = f32::from_bits(err[4] as u32);
    let step = err[2] as u32;
    match err[0] {
        2 => WalkError::BoundViolated { walk: walk.into(), weight, bound: f32::NAN, src, dst, step },
        _ => WalkError::BadWeight { walk: walk.into(), weight, src, dst, step },
    }
}
