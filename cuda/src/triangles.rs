//! Triangle counting on one or several GPUs (kernels/triangles.cu).
//!
//! [`count_graph`] does everything on the device for an undirected graph: each GPU uploads the
//! CSR, orients it by (degree, id) with the edge mask compiled into the same module (the
//! `#[mask]` program lowered by the CUDA backend, as a walk's weight is), and counts its share.
//! [`count`] counts a graph the host already oriented (`wayfarer_runtime::triangles::orient`:
//! directed input, which is symmetrized there, or a mask only the CPU has).
//!
//! Work is split across GPUs into contiguous ranges of equal estimated work ([`edge_cost`]),
//! each GPU holding the whole oriented graph; within a GPU an edge whose rows are short goes to
//! the thread-per-edge kernel, one with a long row to the warp-per-edge kernel. Totals and
//! per-node counts are integers summed over GPUs, so the result is the same for any number of
//! GPUs.

use crate::launch::{DevPtr, Kernel, Launch, kernels};
use crate::scan::{SCAN_KERNELS, Scan};
use crate::{CudaDevice, CudaError};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig};
use std::sync::Arc;
use std::time::Instant;
use wayfarer_compiler::WalkInfo;
use wayfarer_compiler::eval::ParamValue;
use wayfarer_compiler::ir::Program;
use wayfarer_runtime::graph::Orientation;
use wayfarer_runtime::triangles::{Detail, Oriented, OrientedRows, TriangleCounts};
use wayfarer_runtime::{CsrGraph, WalkError};

/// The kernels, compiled after the prelude (whose `wf_lower_bound` they share with the walks'
/// `has_edge`) and the scan kernels.
pub const TRIANGLE_KERNELS: &str = include_str!("../kernels/triangles.cu");

/// The complete CUDA source of the triangle counter without a mask.
pub fn triangle_source() -> String {
    format!("{}\n{}\n#define WF_T_WARP_EDGE {WARP_EDGE}ull\n{}", crate::codegen::PRELUDE, SCAN_KERNELS, TRIANGLE_KERNELS)
}

/// The complete CUDA source of the triangle counter with `mask` (a `#[mask]` program) compiled
/// in: the mask's generated functions and preprocessing kernels, then the counter.
pub fn masked_triangle_source(mask: &Program, info: &WalkInfo) -> String {
    format!(
        "{}\n{}\n#define WF_TRI_MASK 1\n#define WF_T_WARP_EDGE {WARP_EDGE}ull\n{}",
        crate::walk_source(mask, info),
        SCAN_KERNELS,
        TRIANGLE_KERNELS
    )
}

/// An edge mask for [`count_graph`]: a `#[mask]` program (`wayfarer_compiler::lower_mask_source`
/// or a `#[mask]` item's IR), its analysis and its parameter values.
#[derive(Clone, Copy)]
pub struct GpuMask<'a> {
    /// The mask's IR.
    pub program: &'a Program,
    /// Its analysis.
    pub info: &'a WalkInfo,
    /// Its parameters' values.
    pub values: &'a [ParamValue],
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
    /// Seconds uploading to the GPUs (the slowest GPU's when they upload in parallel).
    pub upload_seconds: f64,
    /// Seconds orienting (and masking) the graph on the device, the slowest GPU's (0 when the
    /// host oriented it), by the host's clock: its kernels, and what the host does between them.
    pub orient_seconds: f64,
    /// Seconds in the orientation's kernels alone (CUDA events around them: count, scan, fill,
    /// hub bitmaps), the slowest GPU's (0 when the host oriented the graph).
    pub orient_kernel_seconds: f64,
    /// Oriented edges counted by a warp each.
    pub warp_edges: u64,
    /// Oriented edges counted by a thread each.
    pub thread_edges: u64,
    /// Oriented rows held as bitmaps (per GPU).
    pub hub_rows: usize,
}

/// Oriented rows at least this long may become bitmaps (`WAYFARER_TRI_HUB_MIN` overrides).
pub const TRI_HUB_MIN: u64 = 1024;

/// The oriented rows to hold as bitmaps of `words` words each: the longest ones of at least
/// `min_len` entries, as many as `budget` bytes hold, longest first.
pub fn choose_hub_rows(lengths: &[u32], words: usize, budget: usize, min_len: u64) -> Vec<u32> {
    let mut order: Vec<u32> = (0..lengths.len() as u32).filter(|&v| lengths[v as usize] as u64 >= min_len.max(1)).collect();
    order.sort_unstable_by_key(|&v| (std::cmp::Reverse(lengths[v as usize]), v));
    order.truncate(budget / (words * 4).max(1));
    order
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Mirrors `WfTri`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct TriArgs {
    offsets: u64,
    targets: u64,
    src: u64,
    edges: u64,
    count: u64,
    total: u64,
    per_node: u64,
    hub_slot: u64,
    hub_bits: u64,
    hub_words: u64,
}

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
        functions.push(dev.load_source("triangles", &triangle_source(), "wf_t_edges_warp")?.module);
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
    for (((dev, (light, heavy)), l), module) in devs.iter().zip(&shares).zip(&launched).zip(&functions) {
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
            hub_slot: 0,
            hub_bits: 0,
            hub_words: 0,
        };
        let grid = grid_for(dev)?;
        let start = s.record_event(timing)?;
        launch_counting(s, module, base, (light_d, light.len()), (heavy_d, heavy.len()), &grid)?;
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

/// Mirrors `WfTriOrient`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct OrientArgs {
    offsets: u64,
    targets: u64,
    n: u64,
    counts: u64,
    out_offsets: u64,
    out_targets: u64,
    out_src: u64,
    bad: u64,
}

fn dptr<T>(s: &CudaStream, x: &CudaSlice<T>) -> u64 {
    x.device_ptr(s).0
}

/// At least one element: a zero-length allocation has no pointer to pass.
fn zeros<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(s: &Arc<CudaStream>, n: usize) -> Result<CudaSlice<T>, CudaError> {
    Ok(s.alloc_zeros::<T>(n.max(1))?)
}

fn at<T: DeviceRepr + Copy + Default>(s: &Arc<CudaStream>, x: &CudaSlice<T>, i: usize) -> Result<T, CudaError> {
    Ok(s.clone_dtoh(&x.slice(i..i + 1))?[0])
}

/// A mask compiled into one GPU's triangle module.
struct CompiledMask {
    walk: crate::CompiledWalk,
    params: Vec<u8>,
    name: String,
}

/// What one GPU of [`count_graph`] found.
struct Share {
    total: u64,
    per_node: Vec<u64>,
    degree: Vec<u64>,
    kept: u64,
    report: GpuTriangleReport,
}

/// Counts the triangles of the undirected `graph` on `devs`, orienting it and applying `mask`
/// on the device: the same result as `wayfarer_runtime::triangles::count_masked` with the
/// mask's CPU version. Directed input is an error here (the host symmetrizes it: orient with
/// `wayfarer_runtime::triangles::orient`, then [`count`]).
pub fn count_graph(
    devs: &[CudaDevice],
    graph: &CsrGraph,
    mask: Option<GpuMask>,
    detail: Detail,
) -> Result<(TriangleCounts, GpuTriangleReport), CudaError> {
    let hubs = HubRows {
        budget: env_number("WAYFARER_TRI_HUB_BUDGET").map(|b| b as usize),
        min_len: env_number("WAYFARER_TRI_HUB_MIN").unwrap_or(TRI_HUB_MIN),
    };
    count_graph_with(devs, graph, mask, detail, hubs)
}

/// Which oriented rows [`count_graph_with`] holds as bitmaps.
#[derive(Clone, Copy, Debug)]
pub struct HubRows {
    /// Device memory for the bitmaps (`None`: an eighth of what is free; 0: no bitmaps).
    pub budget: Option<usize>,
    /// Rows at least this long may become bitmaps.
    pub min_len: u64,
}

/// [`count_graph`] with the bitmap rows chosen by `hubs` (`count_graph` reads them from
/// `WAYFARER_TRI_HUB_BUDGET` and `WAYFARER_TRI_HUB_MIN`, defaulting to an eighth of free
/// memory and [`TRI_HUB_MIN`]).
pub fn count_graph_with(
    devs: &[CudaDevice],
    graph: &CsrGraph,
    mask: Option<GpuMask>,
    detail: Detail,
    hubs: HubRows,
) -> Result<(TriangleCounts, GpuTriangleReport), CudaError> {
    if devs.is_empty() {
        return Err(CudaError::Unavailable("no GPU given".into()));
    }
    if graph.orientation() == Orientation::Directed {
        return Err(WalkError::Config(
            "the GPU orients undirected graphs only: symmetrize a directed graph on the host (triangles::orient) and use triangles::count"
                .into(),
        )
        .into());
    }
    if let Some(m) = mask {
        for p in &m.program.props {
            if graph.node_property(p).is_none() {
                return Err(WalkError::MissingGraphData { walk: m.program.name.clone(), what: format!("node property `{p}`") }.into());
            }
        }
    }
    let parts = devs.len();
    // The mask compiled for each GPU here (the IR holds spans, which stay on this thread).
    let mut compiled = Vec::with_capacity(parts);
    for dev in devs {
        compiled.push(match mask {
            None => None,
            Some(m) => Some(CompiledMask {
                walk: dev.compile_source(m.program, m.info, &masked_triangle_source(m.program, m.info), "wf_t_orient_count")?,
                params: crate::layout::params(m.program, m.values),
                name: m.program.name.clone(),
            }),
        });
    }
    // One thread per GPU: each uploads, orients and counts on its own.
    let shares: Vec<Result<Share, CudaError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = devs
            .iter()
            .zip(&compiled)
            .enumerate()
            .map(|(i, (dev, mask))| scope.spawn(move || count_share(dev, i, parts, graph, mask.as_ref(), detail, hubs)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mut report = GpuTriangleReport { devices: parts, ..Default::default() };
    let mut total = 0u64;
    let mut per_node = if detail == Detail::PerNode { vec![0u64; graph.num_nodes()] } else { Vec::new() };
    let (mut degree, mut kept) = (Vec::new(), 0);
    for (i, share) in shares.into_iter().enumerate() {
        let share = share?;
        total += share.total;
        for (acc, x) in per_node.iter_mut().zip(&share.per_node) {
            *acc += x;
        }
        if i == 0 {
            degree = share.degree;
            kept = share.kept;
        }
        let r = share.report;
        report.kernel_seconds = report.kernel_seconds.max(r.kernel_seconds);
        report.upload_seconds = report.upload_seconds.max(r.upload_seconds);
        report.orient_seconds = report.orient_seconds.max(r.orient_seconds);
        report.orient_kernel_seconds = report.orient_kernel_seconds.max(r.orient_kernel_seconds);
        report.warp_edges += r.warp_edges;
        report.thread_edges += r.thread_edges;
        report.hub_rows = r.hub_rows;
    }
    Ok((TriangleCounts { total, per_node, degree, kept_edges: kept, symmetrized: false }, report))
}

/// GPU `part` of `parts`: upload, orient (every GPU orients the whole graph, the same way),
/// then count the oriented edges of its node range.
fn count_share(
    dev: &CudaDevice,
    part: usize,
    parts: usize,
    graph: &CsrGraph,
    mask: Option<&CompiledMask>,
    detail: Detail,
    hubs: HubRows,
) -> Result<Share, CudaError> {
    let s = &dev.stream;
    let n = graph.num_nodes();
    let mut report = GpuTriangleReport { devices: 1, ..Default::default() };
    // The module, and the graph as the kernels see it: the CSR alone, or (with a mask) every
    // array the mask reads, with its WfGraph image and parameters.
    let t_up = Instant::now();
    let (module, csr, mask_ptrs, _keep) = match mask {
        None => {
            let loaded = dev.load_source("triangles", &triangle_source(), "wf_t_orient_count")?;
            let offsets = s.clone_htod(graph.offsets())?;
            let targets = s.clone_htod(if graph.targets().is_empty() { &[0u32][..] } else { graph.targets() })?;
            let csr = (dptr(s, &offsets), dptr(s, &targets));
            (loaded.module, csr, (0u64, 0u64), (Some((offsets, targets)), None))
        }
        Some(m) => {
            let prepared = crate::run::prepare(dev, &m.walk, graph, 0, crate::MIN_HUB_DEGREE, crate::run::Residency::Device)?;
            let image = s.clone_htod(&prepared.image)?;
            let params = s.clone_htod(&m.params)?;
            let ptrs = (dptr(s, &image), dptr(s, &params));
            (m.walk.module().clone(), prepared.csr, ptrs, (None, Some((prepared, image, params))))
        }
    };
    let f = |k: &Kernel| module.load_function(k.name);
    let scan = Scan::load(&module)?;
    s.synchronize()?;
    report.upload_seconds = t_up.elapsed().as_secs_f64();
    let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u64;
    let grid = grid_for(dev)?;

    // Orientation: count, scan, fill.
    let t_orient = Instant::now();
    let counts = zeros::<u32>(s, n)?;
    let bad = zeros::<u64>(s, 4)?;
    let mut args = OrientArgs {
        offsets: csr.0,
        targets: csr.1,
        n: n as u64,
        counts: dptr(s, &counts),
        out_offsets: 0,
        out_targets: 0,
        out_src: 0,
        bad: dptr(s, &bad),
    };
    let (count_fn, fill_fn) = (f(&kernels::T_ORIENT_COUNT)?, f(&kernels::T_ORIENT_FILL)?);
    let (gp, pp) = (DevPtr(mask_ptrs.0), DevPtr(mask_ptrs.1));
    // The CSR pointers are live uploads of the graph's n + 1 offsets and its targets; counts
    // holds n entries, bad 4; gp/pp are this module's WfGraph image and WfParams (or 0 when no
    // mask is compiled in, and then unread).
    // The orientation's kernels are timed by events around them (the host's clock also counts
    // its allocations and copies in between).
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut orient_kernels = 0.0f64;
    let ev = s.record_event(timing)?;
    Launch::new(s, &count_fn, &kernels::T_ORIENT_COUNT).arg(&args).arg(&gp).arg(&pp).run(grid(n as u64 * 32))?;
    let offsets = scan.exclusive(s, &counts, n)?;
    orient_kernels += ev.elapsed_ms(&s.record_event(timing)?)? as f64 / 1e3;
    let kept = at(s, &offsets, n)? as usize;
    if let Some(m) = mask {
        let b = s.clone_dtoh(&bad)?;
        if b[0] > 0 {
            return Err(WalkError::BadWeight {
                walk: m.name.clone(),
                weight: f32::from_bits(b[3] as u32),
                src: graph.id_map().original(b[1] as u32),
                dst: graph.id_map().original(graph.targets()[b[2] as usize]),
                step: 0,
            }
            .into());
        }
    }
    let targets = zeros::<u32>(s, kept)?;
    let src = zeros::<u32>(s, kept)?;
    args.out_offsets = dptr(s, &offsets);
    args.out_targets = dptr(s, &targets);
    args.out_src = dptr(s, &src);
    // As above; the outputs hold `kept` entries, the scan's total.
    let ev = s.record_event(timing)?;
    Launch::new(s, &fill_fn, &kernels::T_ORIENT_FILL).arg(&args).arg(&gp).arg(&pp).run(grid(n as u64 * 32))?;
    orient_kernels += ev.elapsed_ms(&s.record_event(timing)?)? as f64 / 1e3;
    s.synchronize()?;
    drop(_keep);
    // The longest oriented rows as bitmaps.
    let words = n.div_ceil(32);
    let budget = match hubs.budget {
        Some(b) => b,
        None => dev.ctx.mem_get_info()?.0 / 8,
    };
    let hub_rows = if budget >= words * 4 && kept > 0 {
        choose_hub_rows(&s.clone_dtoh(&counts)?[..n], words, budget, hubs.min_len)
    } else {
        Vec::new()
    };
    drop(counts);
    let hub_slot = zeros::<u32>(s, if hub_rows.is_empty() { 0 } else { n })?;
    let hub_bits = zeros::<u32>(s, hub_rows.len() * words)?;
    if !hub_rows.is_empty() {
        let hubs = s.clone_htod(&hub_rows)?;
        let (count, words64) = (hub_rows.len() as u32, words as u64);
        let func = f(&kernels::T_HUB_BITS)?;
        // hub_bits holds count * words zeroed words, hub_slot n entries; the hubs are nodes
        // whose oriented rows are in offsets/targets.
        let ev = s.record_event(timing)?;
        Launch::new(s, &func, &kernels::T_HUB_BITS)
            .arg(&offsets)
            .arg(&targets)
            .arg(&hubs)
            .arg(&count)
            .arg(&hub_bits)
            .arg(&words64)
            .arg(&hub_slot)
            .run(LaunchConfig { grid_dim: (count.min(sms as u32 * 8), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 })?;
        orient_kernels += ev.elapsed_ms(&s.record_event(timing)?)? as f64 / 1e3;
        s.synchronize()?;
    }
    report.hub_rows = hub_rows.len();
    report.orient_seconds = t_orient.elapsed().as_secs_f64();
    report.orient_kernel_seconds = orient_kernels;

    // This GPU's node range, by the prefix of the rows' estimated work (every GPU computes the
    // same prefix, so the ranges tile the nodes).
    let (first_edge, last_edge) = if parts == 1 {
        (0, kept)
    } else {
        let cost = zeros::<u64>(s, n)?;
        let cuts = zeros::<u64>(s, parts + 1)?;
        let (n64, parts32) = (n as u64, parts as u32);
        // The oriented rows are the arrays just filled; cost holds n entries, cuts parts + 1,
        // the prefix n + 1.
        let func = f(&kernels::T_ROW_COST)?;
        Launch::new(s, &func, &kernels::T_ROW_COST).arg(&offsets).arg(&targets).arg(&n64).arg(&cost).run(grid(n64 * 32))?;
        let prefix = scan.exclusive(s, &cost, n)?;
        let func = f(&kernels::T_CUTS)?;
        let one_block = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32 * (parts as u32).div_ceil(32), 1, 1), shared_mem_bytes: 0 };
        Launch::new(s, &func, &kernels::T_CUTS).arg(&prefix).arg(&n64).arg(&parts32).arg(&cuts).run(one_block)?;
        drop(prefix);
        let cuts = s.clone_dtoh(&cuts)?;
        (at(s, &offsets, cuts[part] as usize)? as usize, at(s, &offsets, cuts[part + 1] as usize)? as usize)
    };
    let mine = last_edge - first_edge;

    // The two kernels' edge lists, then the counting kernels.
    let heavy = zeros::<u32>(s, mine)?;
    let (first64, mine64) = (first_edge as u64, mine as u64);
    // heavy holds `mine` entries; edges first_edge.. first_edge + mine are oriented edges.
    let func = f(&kernels::T_CLASSIFY)?;
    Launch::new(s, &func, &kernels::T_CLASSIFY)
        .arg(&offsets)
        .arg(&targets)
        .arg(&src)
        .arg(&first64)
        .arg(&mine64)
        .arg(&heavy)
        .run(grid(mine64))?;
    let rank = scan.exclusive(s, &heavy, mine)?;
    let heavy_count = at(s, &rank, mine)? as usize;
    let light_count = mine - heavy_count;
    let light_list = zeros::<u64>(s, light_count)?;
    let heavy_list = zeros::<u64>(s, heavy_count)?;
    // rank holds mine + 1 entries; the lists hold the light and heavy counts.
    let func = f(&kernels::T_SCATTER)?;
    Launch::new(s, &func, &kernels::T_SCATTER)
        .arg(&heavy)
        .arg(&rank)
        .arg(&first64)
        .arg(&mine64)
        .arg(&light_list)
        .arg(&heavy_list)
        .run(grid(mine64))?;
    drop((heavy, rank));
    report.thread_edges = light_count as u64;
    report.warp_edges = heavy_count as u64;
    let total = zeros::<u64>(s, 1)?;
    let per_node = if detail == Detail::PerNode { Some(zeros::<u64>(s, n)?) } else { None };
    let base = TriArgs {
        offsets: dptr(s, &offsets),
        targets: dptr(s, &targets),
        src: dptr(s, &src),
        edges: 0,
        count: 0,
        total: dptr(s, &total),
        per_node: per_node.as_ref().map_or(0, |p| dptr(s, p)),
        hub_slot: if hub_rows.is_empty() { 0 } else { dptr(s, &hub_slot) },
        hub_bits: dptr(s, &hub_bits),
        hub_words: words as u64,
    };
    let start = s.record_event(timing)?;
    launch_counting(s, &module, base, (&light_list, light_count), (&heavy_list, heavy_count), &grid)?;
    let end = s.record_event(timing)?;
    report.kernel_seconds = start.elapsed_ms(&end)? as f64 / 1e3;
    let degree = match (&per_node, part) {
        (Some(_), 0) => {
            let d = zeros::<u64>(s, n)?;
            let k64 = kept as u64;
            // targets and src hold `kept` oriented edges, d one entry per node.
            let func = f(&kernels::T_DEGREE)?;
            Launch::new(s, &func, &kernels::T_DEGREE).arg(&targets).arg(&src).arg(&k64).arg(&d).run(grid(k64))?;
            let mut d = s.clone_dtoh(&d)?;
            d.truncate(n);
            d
        }
        _ => Vec::new(),
    };
    let per_node = match per_node {
        Some(p) => {
            let mut v = s.clone_dtoh(&p)?;
            v.truncate(n);
            v
        }
        None => Vec::new(),
    };
    Ok(Share { total: at(s, &total, 0)?, per_node, degree, kept: kept as u64, report })
}

/// Launch configurations of 256-thread blocks for `threads` threads, grid-strided beyond 16
/// blocks per multiprocessor of `dev`.
fn grid_for(dev: &CudaDevice) -> Result<impl Fn(u64) -> LaunchConfig, CudaError> {
    let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u64;
    Ok(move |threads: u64| LaunchConfig {
        grid_dim: (threads.div_ceil(256).clamp(1, sms * 16) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// Launches the thread-per-edge kernel over `light` and the warp-per-edge kernel over `heavy`.
fn launch_counting(
    s: &Arc<CudaStream>,
    module: &Arc<cudarc::driver::CudaModule>,
    base: TriArgs,
    light: (&CudaSlice<u64>, usize),
    heavy: (&CudaSlice<u64>, usize),
    grid: &dyn Fn(u64) -> LaunchConfig,
) -> Result<(), CudaError> {
    let light_args = TriArgs { edges: dptr(s, light.0), count: light.1 as u64, ..base };
    let heavy_args = TriArgs { edges: dptr(s, heavy.0), count: heavy.1 as u64, ..base };
    let (thread_fn, warp_fn) = (module.load_function(kernels::T_EDGES.name)?, module.load_function(kernels::T_EDGES_WARP.name)?);
    // Every pointer in the argument structs is a live allocation on this device of the length
    // the kernels index (edges < count, rows within offsets, nodes < n).
    if light.1 > 0 {
        Launch::new(s, &thread_fn, &kernels::T_EDGES).arg(&light_args).run(grid(light.1 as u64))?;
    }
    if heavy.1 > 0 {
        Launch::new(s, &warp_fn, &kernels::T_EDGES_WARP).arg(&heavy_args).run(grid(heavy.1 as u64 * 32))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_rows_are_the_longest_within_the_budget() {
        let lengths = [5u32, 900, 40, 900, 3000, 511, 512];
        // Rows >= 512, longest first (ties by id), as many as 3 bitmaps of 10 words fit.
        assert_eq!(choose_hub_rows(&lengths, 10, 3 * 40, 512), vec![4, 1, 3]);
        assert_eq!(choose_hub_rows(&lengths, 10, 10 * 40, 512), vec![4, 1, 3, 6]);
        assert_eq!(choose_hub_rows(&lengths, 10, 39, 512), Vec::<u32>::new());
        assert_eq!(choose_hub_rows(&lengths, 10, 1000, 10_000), Vec::<u32>::new());
    }

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
