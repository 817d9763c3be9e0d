//! Triangle counting on one or several GPUs (kernels/triangles.cu).
//!
//! [`count_graph`] does everything on the device for an undirected graph: each GPU uploads the
//! CSR, orients it by (degree, id) with the edge mask compiled into the same module (the
//! `#[mask]` program lowered by the CUDA backend, as a walk's weight is), and counts its share.
//! [`count`] counts a graph the host already oriented (`wayfarer_runtime::triangles::orient`:
//! directed input, which is symmetrized there, or a mask only the CPU has).
//!
//! Counting is node-centric: each oriented edge is owned by the end with the longer row, whose
//! row becomes a hash table in shared memory (a warp's for rows up to [`WARP_ROWS`] entries, a
//! block's beyond), and the shorter row is scanned against it; the kernels' comment has the
//! details. Work is split across GPUs into contiguous ranges of owners of about equal lookups,
//! each GPU holding the whole oriented graph. Totals and per-node counts are integers summed
//! over GPUs, so the result is the same for any number of GPUs.

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
use wayfarer_runtime::triangles::{Detail, Oriented, OrientedRows, Share, TriangleCounts};
use wayfarer_runtime::{CsrGraph, WalkError};

/// The kernels, compiled after the prelude (whose `wf_lower_bound` they share with the walks'
/// `has_edge`) and the scan kernels.
pub const TRIANGLE_KERNELS: &str = include_str!("../kernels/triangles.cu");

/// The complete CUDA source of the triangle counter without a mask.
pub fn triangle_source() -> String {
    format!("{}\n{}\n{}", crate::codegen::PRELUDE, SCAN_KERNELS, TRIANGLE_KERNELS)
}

/// The complete CUDA source of the triangle counter with `mask` (a `#[mask]` program) compiled
/// in: the mask's generated functions and preprocessing kernels, then the counter.
pub fn masked_triangle_source(mask: &Program, info: &WalkInfo) -> String {
    format!("{}\n{}\n#define WF_TRI_MASK 1\n{}", crate::walk_source(mask, info), SCAN_KERNELS, TRIANGLE_KERNELS)
}

/// [`triangle_source`], or with a mask [`masked_triangle_source`], after the knobs of
/// `WAYFARER_CUDA_DEFINES` (benchmark sweeps).
fn source_for_run(mask: Option<(&Program, &WalkInfo)>) -> Result<String, CudaError> {
    let defines: String = crate::run::extra_kernel_defines()?.iter().map(|(k, v)| format!("#define {k} {v}\n")).collect();
    let body = match mask {
        None => triangle_source(),
        Some((p, i)) => masked_triangle_source(p, i),
    };
    Ok(format!("{defines}{body}"))
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

/// Rows of at most this many entries get a warp's hash table (1,024 slots, load at most 1/4);
/// longer ones a whole block's.
pub const WARP_ROWS: u32 = 256;

/// Owners with rows of at most this many entries take lane units (the kernel's register copy
/// of the row, `WF_T_LANE_ROWS`): a flat graph's rows are mostly this short, and a warp unit's
/// table and task machinery cost far more than their few lookups (WordNet's counting kernel
/// 6x slower than a thread per edge, `bench/results/2026-12-06-gpu-triangles-flat-h200.md`).
pub const LANE_ROWS: u32 = 8;

/// The most slots a block's table may take in shared memory (64 KiB); a row whose table does
/// not fit at load 1/2 (over 8,192 entries) is binary-searched instead.
pub const BLOCK_SLOTS_MAX: u32 = 16384;

/// The warps' tables together (8 warps of 1,024 slots): the block's table shares this memory,
/// so it never takes less.
const WARP_REGION_SLOTS: u32 = 8 * 1024;

/// Where the counting kernel draws the line between its paths (tests force each path on small
/// graphs; `WAYFARER_TRI_WARP_ROWS`, `WAYFARER_TRI_BLOCK_SLOTS` and `WAYFARER_TRI_BLOCK_SPREAD`
/// set them from outside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountTuning {
    /// Owners whose rows have at most this many entries (at most [`LANE_ROWS`]; 0: none) take
    /// lane units: a thread each, the row in registers, no table.
    pub lane_rows: u32,
    /// Rows of at most this many entries (at most [`WARP_ROWS`]) get a warp's table.
    pub warp_rows: u32,
    /// The most slots of a block's table (a power of two, at least 32, at most
    /// [`BLOCK_SLOTS_MAX`]); longer rows are searched.
    pub block_slots_max: u32,
    /// A block's table has at least this many slots per entry of the longest block row (a
    /// power of two in 2..=16; the load is at most its inverse), within `block_slots_max`
    /// ([`CountTuning::block_slots`]).
    pub block_spread: u32,
    /// Warp units a warp takes per counter increment (1..=[`WARP_GROUP`]), or 0: chosen per
    /// count ([`CountTuning::warp_group`]).
    pub warp_group: u32,
    /// Whether a count whose table units and lane units fit in one wave of the GPU runs them in
    /// one launch, side by side (a flat graph's few table units no longer run before its lane
    /// units, one kernel after the other). The fused kernel scans in short tasks: a count that
    /// takes long ones ([`CountTuning::long_tasks`]) runs two launches.
    pub fuse: bool,
    /// Whether the table units scan their partners' rows in tasks of `WF_T_TASK_LONG` entries
    /// rather than `WF_T_TASK`: `None` chooses per count ([`CountTuning::long_tasks`]).
    pub long_tasks: Option<bool>,
    /// Whether a count takes a thread per oriented edge, its two rows merged, with no owner,
    /// partner or unit list: `None` chooses per count ([`CountTuning::edge_threads`]).
    pub edge_threads: Option<bool>,
}

/// Slots per entry of a block's table by default: load at most 1/4.
pub const BLOCK_SPREAD: u32 = 4;

impl Default for CountTuning {
    fn default() -> Self {
        CountTuning {
            lane_rows: LANE_ROWS,
            warp_rows: WARP_ROWS,
            block_slots_max: BLOCK_SLOTS_MAX,
            block_spread: BLOCK_SPREAD,
            warp_group: 0,
            fuse: true,
            long_tasks: None,
            edge_threads: None,
        }
    }
}

impl CountTuning {
    /// The defaults, overridden by `WAYFARER_TRI_WARP_ROWS`, `WAYFARER_TRI_BLOCK_SLOTS`,
    /// `WAYFARER_TRI_BLOCK_SPREAD`, `WAYFARER_TRI_WARP_GROUP`, `WAYFARER_TRI_FUSE` and
    /// `WAYFARER_TRI_LONG_TASKS` and `WAYFARER_TRI_EDGE_THREADS` (0 or 1 each).
    pub fn from_env() -> Result<Self, CudaError> {
        let var = |name| std::env::var(name).ok();
        Self::from_settings(
            var("WAYFARER_TRI_WARP_ROWS").as_deref(),
            var("WAYFARER_TRI_BLOCK_SLOTS").as_deref(),
            var("WAYFARER_TRI_BLOCK_SPREAD").as_deref(),
            var("WAYFARER_TRI_WARP_GROUP").as_deref(),
            var("WAYFARER_TRI_FUSE").as_deref(),
            var("WAYFARER_TRI_LONG_TASKS").as_deref(),
            var("WAYFARER_TRI_EDGE_THREADS").as_deref(),
        )
    }

    /// The defaults, overridden by the settings' texts where given (errors name them).
    fn from_settings(
        warp_rows: Option<&str>,
        block_slots: Option<&str>,
        block_spread: Option<&str>,
        warp_group: Option<&str>,
        fuse: Option<&str>,
        long_tasks: Option<&str>,
        edge_threads: Option<&str>,
    ) -> Result<Self, CudaError> {
        let number = |name: &str, text: Option<&str>| -> Result<Option<u32>, CudaError> {
            let Some(text) = text else { return Ok(None) };
            let v: u64 = text.trim().parse().map_err(|_| WalkError::param(name, format!("`{text}` is not a whole number")))?;
            Ok(Some(u32::try_from(v).unwrap_or(u32::MAX)))
        };
        let mut t = CountTuning::default();
        if let Some(v) = number("WAYFARER_TRI_WARP_ROWS", warp_rows)? {
            t.warp_rows = v;
        }
        if let Some(v) = number("WAYFARER_TRI_BLOCK_SLOTS", block_slots)? {
            t.block_slots_max = v;
        }
        if let Some(v) = number("WAYFARER_TRI_BLOCK_SPREAD", block_spread)? {
            t.block_spread = v;
        }
        if let Some(v) = number("WAYFARER_TRI_WARP_GROUP", warp_group)? {
            t.warp_group = v;
        }
        let flag = |name: &str, text: Option<&str>| -> Result<Option<bool>, CudaError> {
            match number(name, text)? {
                None => Ok(None),
                Some(v @ (0 | 1)) => Ok(Some(v == 1)),
                Some(v) => Err(WalkError::param(name, format!("{v} is not 0 or 1")).into()),
            }
        };
        if let Some(v) = flag("WAYFARER_TRI_FUSE", fuse)? {
            t.fuse = v;
        }
        if let Some(v) = flag("WAYFARER_TRI_LONG_TASKS", long_tasks)? {
            t.long_tasks = Some(v);
        }
        if let Some(v) = flag("WAYFARER_TRI_EDGE_THREADS", edge_threads)? {
            t.edge_threads = Some(v);
        }
        t.check()?;
        Ok(t)
    }

    fn check(&self) -> Result<(), CudaError> {
        if self.lane_rows > LANE_ROWS {
            return Err(WalkError::param("lane_rows", format!("{} is above {LANE_ROWS}", self.lane_rows)).into());
        }
        if self.warp_rows > WARP_ROWS {
            return Err(WalkError::param("WAYFARER_TRI_WARP_ROWS", format!("{} is above {WARP_ROWS}", self.warp_rows)).into());
        }
        if !self.block_slots_max.is_power_of_two() || !(32..=BLOCK_SLOTS_MAX).contains(&self.block_slots_max) {
            return Err(WalkError::param(
                "WAYFARER_TRI_BLOCK_SLOTS",
                format!("{} is not a power of two in 32..={BLOCK_SLOTS_MAX}", self.block_slots_max),
            )
            .into());
        }
        if !self.block_spread.is_power_of_two() || !(2..=16).contains(&self.block_spread) {
            return Err(
                WalkError::param("WAYFARER_TRI_BLOCK_SPREAD", format!("{} is not a power of two in 2..=16", self.block_spread)).into()
            );
        }
        if self.warp_group > WARP_GROUP {
            return Err(WalkError::param("WAYFARER_TRI_WARP_GROUP", format!("{} is above {WARP_GROUP}", self.warp_group)).into());
        }
        Ok(())
    }

    /// The slots of a block's table for block rows of at most `longest` entries: `block_spread`
    /// slots per entry, twice that where the larger table still fits in the warps' region
    /// (the kernel reserves that shared memory whatever the block's table takes, so the lower
    /// load costs no occupancy: R-MAT 20's counting kernel 5.04 -> 4.98 ms on an H100,
    /// `bench/results/2026-12-06-gpu-triangles-h100.md`), within `block_slots_max`.
    pub fn block_slots(&self, longest: u64) -> u32 {
        let slots = (self.block_spread as u64 * longest).next_power_of_two();
        let free = (2 * self.block_spread as u64 * longest).next_power_of_two();
        let slots = if free <= WARP_REGION_SLOTS as u64 { free } else { slots };
        slots.clamp(32, self.block_slots_max as u64) as u32
    }

    /// Warp units a warp takes per counter increment when `warps` warps share `units` warp
    /// units: the tuning's, or [`WARP_GROUP`] (fewer increments) only where every warp gets
    /// several groups, else 1. A flat graph's few table units, taken four by four, ran on two
    /// warps one after another (WordNet: 8 units, 19 us against the lane kernel's 9).
    pub fn warp_group(&self, units: u64, warps: u64) -> u32 {
        match self.warp_group {
            0 if units >= WARP_GROUP as u64 * warps => WARP_GROUP,
            0 => 1,
            g => g,
        }
    }

    /// Whether a count of `edges` oriented edges takes a thread per edge: the tuning's
    /// choice, or a graph of at most [`EDGE_THREADS_EDGES`] edges whose longest row (asked of
    /// `longest_row` only then) has at most [`EDGE_THREADS_ROWS`] entries (a small flat graph,
    /// such as WordNet: 183,789 edges, rows of at most 17). There the lists' kernels and the
    /// table units' chains of dependent loads cost more than the merges: WordNet's counting
    /// kernel took 8.7-13.8 µs against this kernel's 6.8 µs on one H100
    /// (`bench/results/2026-12-07-gpu-triangles-wordnet-critical-path-h100.md`).
    pub fn edge_threads<E>(&self, edges: u64, longest_row: impl FnOnce() -> Result<u64, E>) -> Result<bool, E> {
        match self.edge_threads {
            Some(forced) => Ok(forced),
            None => Ok(edges <= EDGE_THREADS_EDGES && longest_row()? <= EDGE_THREADS_ROWS as u64),
        }
    }

    /// Whether the table units take long tasks: the tuning's choice, or where some row took
    /// block units (a power-law graph's hubs, whose partners' rows are long; a flat graph's
    /// rows of a few dozen entries would pad a fifth of each five-entry task: Erdős–Rényi +4%,
    /// R-MAT 20 -3% on an H100, `bench/results/2026-12-06-gpu-triangles-flat-fused-h100.md`).
    pub fn long_tasks(&self, block_units: u64) -> bool {
        self.long_tasks.unwrap_or(block_units > 0)
    }
}

/// What a GPU count did.
#[derive(Clone, Debug, Default)]
pub struct GpuTriangleReport {
    /// GPUs used.
    pub devices: usize,
    /// Seconds in the counting kernel of the slowest GPU (CUDA events around it).
    pub kernel_seconds: f64,
    /// Seconds uploading to the GPUs (the slowest GPU's when they upload in parallel).
    pub upload_seconds: f64,
    /// Seconds orienting (and masking) the graph on the device, the slowest GPU's (0 when the
    /// host oriented it), by the host's clock: its kernels, and what the host does between them.
    pub orient_seconds: f64,
    /// Seconds in the orientation's kernels alone (CUDA events around them: count, scan,
    /// fill), the slowest GPU's (0 when the host oriented the graph).
    pub orient_kernel_seconds: f64,
    /// Seconds in the kernels that list each owner's partners and the units of work (and split
    /// the work over GPUs), the slowest GPU's (CUDA events around them; the host reads the
    /// lists' lengths back between the kernels, so on a small graph these round trips are most
    /// of it: WordNet 0.28 ms).
    pub plan_kernel_seconds: f64,
    /// Lookups the counting kernel made (the shorter row's length summed over the oriented
    /// edges), over all GPUs; 0 where a thread per edge merged the rows (not counted there).
    pub lookups: u64,
    /// Units of work done by a warp (rows up to the tuning's `warp_rows`), over all GPUs.
    pub warp_units: u64,
    /// Units of work done by a block, over all GPUs.
    pub block_units: u64,
    /// Units of work done by a thread, over all GPUs: one (owner, partner) pair each, of owners
    /// with rows of at most the tuning's `lane_rows` entries.
    pub lane_units: u64,
    /// The longest row a block took (0: none).
    pub longest_block_row: u64,
    /// Slots of the blocks' tables; a row of more than half as many entries was searched.
    pub block_slots: u32,
    /// GPUs whose table and lane units ran in one launch side by side (a count small enough
    /// for one wave: [`CountTuning::fuse`]).
    pub fused: usize,
    /// GPUs whose table units scanned in long tasks ([`CountTuning::long_tasks`]).
    pub long_tasks: usize,
    /// GPUs that took a thread per oriented edge ([`CountTuning::edge_threads`]).
    pub edge_threads: usize,
}

impl GpuTriangleReport {
    /// Whether some row was too long for a block's table (its lookups were binary searches).
    pub fn searched_rows(&self) -> bool {
        self.longest_block_row > 0 && 2 * self.longest_block_row > self.block_slots as u64
    }

    fn merge(&mut self, r: &GpuTriangleReport) {
        self.kernel_seconds = self.kernel_seconds.max(r.kernel_seconds);
        self.upload_seconds = self.upload_seconds.max(r.upload_seconds);
        self.orient_seconds = self.orient_seconds.max(r.orient_seconds);
        self.orient_kernel_seconds = self.orient_kernel_seconds.max(r.orient_kernel_seconds);
        self.plan_kernel_seconds = self.plan_kernel_seconds.max(r.plan_kernel_seconds);
        self.lookups += r.lookups;
        self.warp_units += r.warp_units;
        self.block_units += r.block_units;
        self.lane_units += r.lane_units;
        self.longest_block_row = self.longest_block_row.max(r.longest_block_row);
        self.block_slots = self.block_slots.max(r.block_slots);
        self.fused += r.fused;
        self.long_tasks += r.long_tasks;
        self.edge_threads += r.edge_threads;
    }
}

/// The most oriented edges of a count that may take a thread per edge
/// ([`CountTuning::edge_threads`]): about one wave of threads on a large GPU.
pub const EDGE_THREADS_EDGES: u64 = 1 << 19;

/// The longest oriented row of a count that may take a thread per edge
/// ([`CountTuning::edge_threads`]): each thread's merge reads at most twice this many entries.
pub const EDGE_THREADS_ROWS: u32 = 32;

/// The most warp units a warp of the counting kernel takes per counter increment
/// (`WfTriCount::warp_group` is at most this).
pub const WARP_GROUP: u32 = 4;

/// Mirrors `WfTriCount`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct CountArgs {
    pub(crate) offsets: u64,
    pub(crate) targets: u64,
    pub(crate) poff: u64,
    pub(crate) partners: u64,
    pub(crate) warp_units: u64,
    pub(crate) warp_count: u64,
    pub(crate) block_units: u64,
    pub(crate) block_count: u64,
    pub(crate) lane_units: u64,
    pub(crate) lane_count: u64,
    pub(crate) next: u64,
    pub(crate) total: u64,
    pub(crate) per_node: u64,
    pub(crate) block_slots: u32,
    pub(crate) warp_group: u32,
    pub(crate) table_blocks: u32,
    pub(crate) _pad: u32,
}

/// An oriented graph on one device: rows, and each oriented edge's source row.
struct DeviceOriented {
    offsets: CudaSlice<u64>,
    targets: CudaSlice<u32>,
    src: CudaSlice<u32>,
    n: usize,
    kept: usize,
}

/// What one GPU counted: its total, per-node counts (empty unless asked for), the oriented
/// edges of its owners' rows (the parts' sum to all of them) and its report.
struct Counted {
    total: u64,
    per_node: Vec<u64>,
    kept: u64,
    report: GpuTriangleReport,
}

/// Counts the triangles of `o` on `devs` (one or more GPUs): the same result as
/// `wayfarer_runtime::triangles::count_oriented`.
pub fn count(devs: &[CudaDevice], o: &Oriented, detail: Detail) -> Result<(TriangleCounts, GpuTriangleReport), CudaError> {
    count_with(devs, o, detail, CountTuning::from_env()?)
}

/// [`count`] with the counting kernel's paths set by `tuning`.
pub fn count_with(
    devs: &[CudaDevice],
    o: &Oriented,
    detail: Detail,
    tuning: CountTuning,
) -> Result<(TriangleCounts, GpuTriangleReport), CudaError> {
    count_share(devs, o, detail, tuning, Share::WHOLE)
}

/// [`count_with`] for one process's `share` of a count split over processes, which its GPUs
/// split further: the total, per-node counts and kept edges are the share's (they sum over the
/// shares to the whole count's).
pub fn count_share(
    devs: &[CudaDevice],
    o: &Oriented,
    detail: Detail,
    tuning: CountTuning,
    share: Share,
) -> Result<(TriangleCounts, GpuTriangleReport), CudaError> {
    if devs.is_empty() {
        return Err(CudaError::Unavailable("no GPU given".into()));
    }
    tuning.check()?;
    let n = o.num_nodes();
    let mut src = Vec::with_capacity(o.targets.len());
    for a in 0..n as u32 {
        src.extend(std::iter::repeat_n(a, o.row(a).len()));
    }
    let parts = share.parts * devs.len();
    // One thread per GPU: each uploads the oriented graph and counts its part.
    let shares: Vec<Result<Counted, CudaError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = devs
            .iter()
            .enumerate()
            .map(|(i, dev)| {
                let (src, part) = (&src, share.part * devs.len() + i);
                scope.spawn(move || {
                    let s = &dev.stream;
                    let t_up = Instant::now();
                    let loaded = dev.load_source("triangles", &source_for_run(None)?, "wf_t_count")?;
                    let graph = DeviceOriented {
                        offsets: s.clone_htod(&o.offsets)?,
                        targets: s.clone_htod(if o.targets.is_empty() { &[0u32][..] } else { &o.targets })?,
                        src: s.clone_htod(if src.is_empty() { &[0u32][..] } else { src })?,
                        n,
                        kept: o.targets.len(),
                    };
                    let scan = Scan::load(&loaded.module)?;
                    s.synchronize()?;
                    let upload = t_up.elapsed().as_secs_f64();
                    let mut counted = count_on_device(dev, &loaded.module, &scan, &graph, part, parts, detail, tuning)?;
                    counted.report.upload_seconds = upload;
                    Ok(counted)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mut report = GpuTriangleReport { devices: devs.len(), ..Default::default() };
    let (mut total, mut kept) = (0u64, 0u64);
    let mut per_node = if detail == Detail::PerNode { vec![0u64; n] } else { Vec::new() };
    for counted in shares {
        let counted = counted?;
        total += counted.total;
        kept += counted.kept;
        for (acc, x) in per_node.iter_mut().zip(&counted.per_node) {
            *acc += x;
        }
        report.merge(&counted.report);
    }
    let mut counts = o.counts(total, per_node);
    counts.kept_edges = kept;
    Ok((counts, report))
}

/// Counts share `part` of `parts` of the oriented graph `g` on `dev` (whose `module` holds the
/// triangle kernels): the owners of a contiguous node range of about equal lookups, their
/// partner lists, units of work, then the counting kernel.
#[allow(clippy::too_many_arguments)]
fn count_on_device(
    dev: &CudaDevice,
    module: &Arc<cudarc::driver::CudaModule>,
    scan: &Scan,
    g: &DeviceOriented,
    part: usize,
    parts: usize,
    detail: Detail,
    tuning: CountTuning,
) -> Result<Counted, CudaError> {
    let s = &dev.stream;
    let f = |k: &Kernel| module.load_function(k.name);
    let grid = grid_for(dev)?;
    let (n, n64, m64) = (g.n, g.n as u64, g.kept as u64);
    let mut report = GpuTriangleReport { devices: 1, ..Default::default() };
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let plan_start = s.record_event(timing)?;
    // Every kernel below reads g's rows (n + 1 offsets, `kept` targets and sources) and writes
    // arrays allocated here with the lengths it indexes: per node n (+ 1 for scans), per owner
    // range the scans' totals.
    let longest_row = || -> Result<u64, CudaError> {
        let longest = zeros::<u32>(s, 1)?;
        let func = f(&kernels::T_LONGEST_ROW)?;
        Launch::new(s, &func, &kernels::T_LONGEST_ROW).arg(&g.offsets).arg(&n64).arg(&longest).run(grid(n64))?;
        Ok(at(s, &longest, 0)? as u64)
    };
    // A small flat graph: a thread per oriented edge, no lists (one device's whole count only).
    if parts == 1 && tuning.edge_threads(m64, longest_row)? {
        report.plan_kernel_seconds = plan_start.elapsed_ms(&s.record_event(timing)?)? as f64 / 1e3;
        report.edge_threads = 1;
        let total = zeros::<u64>(s, 1)?;
        let per_node = if detail == Detail::PerNode { Some(zeros::<u64>(s, n)?) } else { None };
        let per_node_ptr = crate::launch::DevPtr(per_node.as_ref().map_or(0, |p| dptr(s, p)));
        let func = f(&kernels::T_COUNT_EDGES)?;
        let start = s.record_event(timing)?;
        // Rows: n + 1 offsets, m targets and sources; total one counter, per_node n zeroed
        // counters or null.
        Launch::new(s, &func, &kernels::T_COUNT_EDGES)
            .arg(&g.offsets)
            .arg(&g.targets)
            .arg(&g.src)
            .arg(&m64)
            .arg(&total)
            .arg(&per_node_ptr)
            .run(grid(m64))?;
        report.kernel_seconds = start.elapsed_ms(&s.record_event(timing)?)? as f64 / 1e3;
        return Ok(Counted { total: at(s, &total, 0)?, per_node: per_node_counts(s, per_node, n)?, kept: m64, report });
    }
    let (lo, hi) = if parts == 1 {
        (0u64, n64)
    } else {
        let cost = zeros::<u64>(s, n)?;
        let func = f(&kernels::T_OWNER_COST)?;
        Launch::new(s, &func, &kernels::T_OWNER_COST).arg(&g.offsets).arg(&g.targets).arg(&g.src).arg(&m64).arg(&cost).run(grid(m64))?;
        let prefix = scan.exclusive(s, &cost, n)?;
        let cuts = zeros::<u64>(s, parts + 1)?;
        let parts32 = parts as u32;
        let func = f(&kernels::T_CUTS)?;
        let one_block = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32 * parts32.div_ceil(32), 1, 1), shared_mem_bytes: 0 };
        Launch::new(s, &func, &kernels::T_CUTS).arg(&prefix).arg(&n64).arg(&parts32).arg(&cuts).run(one_block)?;
        let cuts = s.clone_dtoh(&cuts)?;
        (cuts[part], cuts[part + 1])
    };
    // Partners per owner.
    let counts = zeros::<u32>(s, n)?;
    let lookups = zeros::<u64>(s, 1)?;
    let func = f(&kernels::T_OWNER_COUNT)?;
    // The owner kernels take the oriented edges and the owner range first.
    let owner_launch = |func, kernel| Launch::new(s, func, kernel).arg(&g.offsets).arg(&g.targets).arg(&g.src).arg(&m64).arg(&lo).arg(&hi);
    owner_launch(&func, &kernels::T_OWNER_COUNT).arg(&counts).arg(&lookups).run(grid(m64))?;
    let poff = scan.exclusive(s, &counts, n)?;
    let partner_count = at(s, &poff, n)? as usize;
    let partners = zeros::<u32>(s, partner_count)?;
    let func = f(&kernels::T_OWNER_FILL)?;
    owner_launch(&func, &kernels::T_OWNER_FILL).arg(&poff).arg(&counts).arg(&partners).run(grid(m64))?;
    drop(counts);
    // Units of work.
    let warp_units = zeros::<u32>(s, n)?;
    let block_units = zeros::<u32>(s, n)?;
    let lane_units = zeros::<u32>(s, n)?;
    let longest = zeros::<u32>(s, 1)?;
    let (lane_rows, warp_rows) = (tuning.lane_rows, tuning.warp_rows);
    // The unit kernels take the rows, the partners' offsets, the owner range and the lane and
    // warp rows' limits first.
    let unit_launch =
        |func, kernel| Launch::new(s, func, kernel).arg(&g.offsets).arg(&poff).arg(&lo).arg(&hi).arg(&lane_rows).arg(&warp_rows);
    let func = f(&kernels::T_UNIT_COUNT)?;
    unit_launch(&func, &kernels::T_UNIT_COUNT).arg(&warp_units).arg(&block_units).arg(&lane_units).arg(&longest).run(grid(hi - lo))?;
    let warp_at = scan.exclusive(s, &warp_units, n)?;
    let block_at = scan.exclusive(s, &block_units, n)?;
    let lane_at = scan.exclusive(s, &lane_units, n)?;
    drop((warp_units, block_units, lane_units));
    let (warp_count, block_count, lane_count) = (at(s, &warp_at, n)?, at(s, &block_at, n)?, at(s, &lane_at, n)?);
    let warp_list = zeros::<u64>(s, warp_count as usize)?;
    let block_list = zeros::<u64>(s, block_count as usize)?;
    let lane_list = zeros::<u64>(s, lane_count as usize)?;
    let func = f(&kernels::T_UNIT_FILL)?;
    unit_launch(&func, &kernels::T_UNIT_FILL)
        .arg(&warp_at)
        .arg(&block_at)
        .arg(&lane_at)
        .arg(&warp_list)
        .arg(&block_list)
        .arg(&lane_list)
        .arg(&partners)
        .run(grid(hi - lo))?;
    drop((warp_at, block_at, lane_at));
    let longest = at(s, &longest, 0)? as u64;
    let kept = if parts == 1 { m64 } else { at(s, &g.offsets, hi as usize)? - at(s, &g.offsets, lo as usize)? };
    report.plan_kernel_seconds = plan_start.elapsed_ms(&s.record_event(timing)?)? as f64 / 1e3;
    report.lookups = at(s, &lookups, 0)?;
    report.warp_units = warp_count;
    report.block_units = block_count;
    report.lane_units = lane_count;
    report.longest_block_row = longest;
    let block_slots = tuning.block_slots(longest);
    report.block_slots = block_slots;
    let shared = block_slots.max(WARP_REGION_SLOTS) * 4;
    let long = tuning.long_tasks(block_count);
    let table_kernel = if long { &kernels::T_COUNT_LONG } else { &kernels::T_COUNT };
    let func = f(table_kernel)?;
    func.set_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared as i32)?;
    let next = zeros::<u64>(s, 3)?;
    let total = zeros::<u64>(s, 1)?;
    let per_node = if detail == Detail::PerNode { Some(zeros::<u64>(s, n)?) } else { None };
    let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    // As many blocks as the units can keep busy (a block's eight warps take four warp units
    // each per grab), at most eight per SM: a flat graph's few table units should not pay for
    // a thousand blocks' shared memory (WordNet's table kernel 20 us for a handful of units).
    let busy = block_count + warp_count.div_ceil(32);
    let blocks = busy.clamp(1, sms as u64 * 8);
    let warp_group = tuning.warp_group(warp_count, blocks * 8);
    let table_blocks = if warp_count + block_count > 0 { blocks } else { 0 };
    report.long_tasks = usize::from(long && table_blocks > 0);
    let lane_blocks = if lane_count > 0 { lane_count.div_ceil(256).clamp(1, sms as u64 * 8) } else { 0 };
    // Both kinds of unit in one launch when the two grids together are resident at once.
    let fused = if tuning.fuse && !long && table_blocks > 0 && lane_blocks > 0 {
        let func = f(&kernels::T_COUNT_FUSED)?;
        func.set_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared as i32)?;
        let resident = func.occupancy_max_active_blocks_per_multiprocessor(256, shared as usize, None)? as u64 * sms as u64;
        (table_blocks + lane_blocks <= resident).then_some(func)
    } else {
        None
    };
    report.fused = usize::from(fused.is_some());
    // Every function looked up before the timed region: with lazy loading (CUDA's default) a
    // function is loaded when first looked up, and the host's load of the lane kernel between
    // the events left the GPU idle (WordNet's two launches: 0.050 ms, of which the kernels 0.028).
    let lanes = if fused.is_none() && lane_blocks > 0 { Some(f(&kernels::T_COUNT_LANES)?) } else { None };
    let args = CountArgs {
        offsets: dptr(s, &g.offsets),
        targets: dptr(s, &g.targets),
        poff: dptr(s, &poff),
        partners: dptr(s, &partners),
        warp_units: dptr(s, &warp_list),
        warp_count,
        block_units: dptr(s, &block_list),
        block_count,
        lane_units: dptr(s, &lane_list),
        lane_count,
        next: dptr(s, &next),
        total: dptr(s, &total),
        per_node: per_node.as_ref().map_or(0, |p| dptr(s, p)),
        block_slots,
        warp_group,
        table_blocks: table_blocks as u32,
        _pad: 0,
    };
    let start = s.record_event(timing)?;
    // The argument struct's pointers: the rows above; poff (n + 1) and partners (its total);
    // the unit lists (their counts); next (3), total (1), per_node (n) zeroed here. The kernel
    // uses `shared` bytes of dynamic shared memory, as allowed just above.
    let grid =
        |blocks: u64, shared_mem_bytes: u32| LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes };
    if let Some(fused) = fused {
        Launch::new(s, &fused, &kernels::T_COUNT_FUSED).arg(&args).run(grid(table_blocks + lane_blocks, shared))?;
    } else {
        if table_blocks > 0 {
            Launch::new(s, &func, table_kernel).arg(&args).run(grid(table_blocks, shared))?;
        }
        if let Some(lanes) = lanes {
            Launch::new(s, &lanes, &kernels::T_COUNT_LANES).arg(&args).run(grid(lane_blocks, 0))?;
        }
    }
    report.kernel_seconds = start.elapsed_ms(&s.record_event(timing)?)? as f64 / 1e3;
    Ok(Counted { total: at(s, &total, 0)?, per_node: per_node_counts(s, per_node, n)?, kept, report })
}

/// Mirrors `WfTriOrient`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct OrientArgs {
    pub(crate) offsets: u64,
    pub(crate) targets: u64,
    pub(crate) n: u64,
    pub(crate) counts: u64,
    pub(crate) out_offsets: u64,
    pub(crate) out_targets: u64,
    pub(crate) out_src: u64,
    pub(crate) bad: u64,
}

fn dptr<T>(s: &CudaStream, x: &CudaSlice<T>) -> u64 {
    x.device_ptr(s).0
}

/// At least one element: a zero-length allocation has no pointer to pass.
fn zeros<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(s: &Arc<CudaStream>, n: usize) -> Result<CudaSlice<T>, CudaError> {
    Ok(s.alloc_zeros::<T>(n.max(1))?)
}

/// The per-node counts of `n` nodes read back (none when not asked for).
fn per_node_counts(s: &Arc<CudaStream>, per_node: Option<CudaSlice<u64>>, n: usize) -> Result<Vec<u64>, CudaError> {
    let Some(p) = per_node else { return Ok(Vec::new()) };
    let mut v = s.clone_dtoh(&p)?;
    v.truncate(n);
    Ok(v)
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
struct Part {
    counted: Counted,
    degree: Vec<u64>,
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
    count_graph_with(devs, graph, mask, detail, CountTuning::from_env()?)
}

/// [`count_graph`] with the counting kernel's paths set by `tuning` (`count_graph` reads it
/// from the environment: [`CountTuning::from_env`]).
pub fn count_graph_with(
    devs: &[CudaDevice],
    graph: &CsrGraph,
    mask: Option<GpuMask>,
    detail: Detail,
    tuning: CountTuning,
) -> Result<(TriangleCounts, GpuTriangleReport), CudaError> {
    count_graph_share(devs, graph, mask, detail, tuning, Share::WHOLE)
}

/// [`count_graph_with`] for one process's `share` of a count split over processes, which its
/// GPUs split further: the total, per-node counts and kept edges are the share's (they sum
/// over the shares to the whole count's); the degrees (per-node counts only) are the whole
/// graph's in share 0 and empty in the others.
pub fn count_graph_share(
    devs: &[CudaDevice],
    graph: &CsrGraph,
    mask: Option<GpuMask>,
    detail: Detail,
    tuning: CountTuning,
    share: Share,
) -> Result<(TriangleCounts, GpuTriangleReport), CudaError> {
    if devs.is_empty() {
        return Err(CudaError::Unavailable("no GPU given".into()));
    }
    tuning.check()?;
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
    let parts = share.parts * devs.len();
    // The mask compiled for each GPU here (the IR holds spans, which stay on this thread).
    let mut compiled = Vec::with_capacity(devs.len());
    for dev in devs {
        compiled.push(match mask {
            None => None,
            Some(m) => Some(CompiledMask {
                walk: dev.compile_source(m.program, m.info, &source_for_run(Some((m.program, m.info)))?, "wf_t_orient_count")?,
                params: crate::layout::params(m.program, m.values),
                name: m.program.name.clone(),
            }),
        });
    }
    // One thread per GPU: each uploads, orients and counts on its own.
    let shares: Vec<Result<Part, CudaError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = devs
            .iter()
            .zip(&compiled)
            .enumerate()
            .map(|(i, (dev, mask))| {
                let part = share.part * devs.len() + i;
                scope.spawn(move || count_part(dev, part, parts, graph, mask.as_ref(), detail, tuning))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mut report = GpuTriangleReport { devices: devs.len(), ..Default::default() };
    let (mut total, mut kept) = (0u64, 0u64);
    let mut per_node = if detail == Detail::PerNode { vec![0u64; graph.num_nodes()] } else { Vec::new() };
    let mut degree = Vec::new();
    for part in shares {
        let part = part?;
        total += part.counted.total;
        kept += part.counted.kept;
        for (acc, x) in per_node.iter_mut().zip(&part.counted.per_node) {
            *acc += x;
        }
        if !part.degree.is_empty() {
            degree = part.degree;
        }
        report.merge(&part.counted.report);
    }
    Ok((TriangleCounts { total, per_node, degree, kept_edges: kept, symmetrized: false }, report))
}

/// GPU `part` of `parts`: upload, orient (every GPU orients the whole graph, the same way),
/// then count the triangles of its owners.
fn count_part(
    dev: &CudaDevice,
    part: usize,
    parts: usize,
    graph: &CsrGraph,
    mask: Option<&CompiledMask>,
    detail: Detail,
    tuning: CountTuning,
) -> Result<Part, CudaError> {
    let s = &dev.stream;
    let n = graph.num_nodes();
    // The module, and the graph as the kernels see it: the CSR alone, or (with a mask) every
    // array the mask reads, with its WfGraph image and parameters.
    let t_up = Instant::now();
    let (module, csr, mask_ptrs, _keep) = match mask {
        None => {
            let loaded = dev.load_source("triangles", &source_for_run(None)?, "wf_t_orient_count")?;
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
    let upload_seconds = t_up.elapsed().as_secs_f64();
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
    drop((_keep, counts));
    let orient_seconds = t_orient.elapsed().as_secs_f64();

    let oriented = DeviceOriented { offsets, targets, src, n, kept };
    let mut counted = count_on_device(dev, &module, &scan, &oriented, part, parts, detail, tuning)?;
    counted.report.upload_seconds = upload_seconds;
    counted.report.orient_seconds = orient_seconds;
    counted.report.orient_kernel_seconds = orient_kernels;
    let degree = match (detail, part) {
        (Detail::PerNode, 0) => {
            let d = zeros::<u64>(s, n)?;
            let k64 = kept as u64;
            // targets and src hold `kept` oriented edges, d one entry per node.
            let func = f(&kernels::T_DEGREE)?;
            Launch::new(s, &func, &kernels::T_DEGREE).arg(&oriented.targets).arg(&oriented.src).arg(&k64).arg(&d).run(grid(k64))?;
            let mut d = s.clone_dtoh(&d)?;
            d.truncate(n);
            d
        }
        _ => Vec::new(),
    };
    Ok(Part { counted, degree })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuning_is_checked() {
        assert!(CountTuning::default().check().is_ok());
        assert!(
            CountTuning {
                lane_rows: 0,
                warp_rows: 0,
                block_slots_max: 32,
                block_spread: 2,
                warp_group: 1,
                fuse: false,
                long_tasks: None,
                edge_threads: None
            }
            .check()
            .is_ok()
        );
        assert!(CountTuning { warp_group: WARP_GROUP + 1, ..Default::default() }.check().is_err());
        assert!(CountTuning { lane_rows: LANE_ROWS + 1, ..Default::default() }.check().is_err());
        assert!(CountTuning { warp_rows: WARP_ROWS + 1, ..Default::default() }.check().is_err());
        for slots in [0, 16, 48, 2 * BLOCK_SLOTS_MAX] {
            assert!(CountTuning { block_slots_max: slots, ..Default::default() }.check().is_err(), "{slots}");
        }
        for spread in [0, 1, 3, 32] {
            assert!(CountTuning { block_spread: spread, ..Default::default() }.check().is_err(), "{spread}");
        }
        // The settings' texts: errors name the setting.
        assert_eq!(CountTuning::from_settings(None, None, None, None, None, None, None).unwrap(), CountTuning::default());
        assert_eq!(
            CountTuning::from_settings(Some(" 4 "), Some("32"), Some("8"), Some("2"), Some("0"), Some("1"), Some("0")).unwrap(),
            CountTuning {
                warp_rows: 4,
                block_slots_max: 32,
                block_spread: 8,
                warp_group: 2,
                fuse: false,
                long_tasks: Some(true),
                edge_threads: Some(false),
                ..Default::default()
            }
        );
        let bad = |i: usize, text: &'static str| {
            let mut settings = [None; 7];
            settings[i] = Some(text);
            let [warp, slots, spread, group, fuse, long, edges] = settings;
            CountTuning::from_settings(warp, slots, spread, group, fuse, long, edges).unwrap_err().to_string()
        };
        for (i, text, name) in [
            (0, "many", "WAYFARER_TRI_WARP_ROWS"),
            (0, "300", "WAYFARER_TRI_WARP_ROWS"),
            (1, "-1", "WAYFARER_TRI_BLOCK_SLOTS"),
            (1, "48", "WAYFARER_TRI_BLOCK_SLOTS"),
            (2, "6", "WAYFARER_TRI_BLOCK_SPREAD"),
            (3, "5", "WAYFARER_TRI_WARP_GROUP"),
            (4, "2", "WAYFARER_TRI_FUSE"),
            (4, "yes", "WAYFARER_TRI_FUSE"),
            (5, "2", "WAYFARER_TRI_LONG_TASKS"),
            (6, "2", "WAYFARER_TRI_EDGE_THREADS"),
        ] {
            let e = bad(i, text);
            assert!(e.contains(name), "{name} = {text}: {e}");
        }
    }

    /// Four warp units a grab only where every warp of the grid gets several grabs; a setting
    /// wins.
    #[test]
    fn warp_groups_follow_the_units_per_warp() {
        let t = CountTuning::default();
        // WordNet: 8 warp units on one block's 8 warps; R-MAT 20: hundreds of thousands on 1,056 blocks.
        assert_eq!(t.warp_group(8, 8), 1);
        assert_eq!(t.warp_group(4 * 8448 - 1, 8448), 1);
        assert_eq!(t.warp_group(4 * 8448, 8448), WARP_GROUP);
        assert_eq!(t.warp_group(500_000, 8448), WARP_GROUP);
        assert_eq!(CountTuning { warp_group: 4, ..t }.warp_group(8, 8), 4);
        assert_eq!(CountTuning { warp_group: 2, ..t }.warp_group(500_000, 8448), 2);
    }

    /// A thread per edge for a small graph of short rows only, unless set; the longest row is
    /// asked for only where the rule needs it.
    #[test]
    fn edge_threads_for_small_flat_graphs() {
        let rule = |t: &CountTuning, edges: u64, longest: u64| t.edge_threads(edges, || Ok::<_, ()>(longest)).unwrap();
        let t = CountTuning::default();
        assert!(rule(&t, 183_789, 17), "WordNet");
        assert!(rule(&t, EDGE_THREADS_EDGES, EDGE_THREADS_ROWS as u64));
        assert!(!rule(&t, EDGE_THREADS_EDGES + 1, 17), "too many edges");
        assert!(!rule(&t, 183_789, EDGE_THREADS_ROWS as u64 + 1), "a row too long");
        assert!(!rule(&t, 15_700_000, 400), "R-MAT 20");
        assert!(rule(&CountTuning { edge_threads: Some(true), ..t }, 15_700_000, 400));
        assert!(!rule(&CountTuning { edge_threads: Some(false), ..t }, 183_789, 17));
        let unasked = || -> Result<u64, ()> { panic!("the longest row was asked for") };
        assert_eq!(t.edge_threads(EDGE_THREADS_EDGES + 1, unasked), Ok(false));
        assert_eq!(CountTuning { edge_threads: Some(true), ..t }.edge_threads(5, unasked), Ok(true));
    }

    /// Long tasks where some row took block units (a power-law graph), unless set.
    #[test]
    fn long_tasks_follow_the_block_units() {
        let t = CountTuning::default();
        assert!(!t.long_tasks(0) && t.long_tasks(1) && t.long_tasks(200_000));
        assert!(CountTuning { long_tasks: Some(true), ..t }.long_tasks(0));
        assert!(!CountTuning { long_tasks: Some(false), ..t }.long_tasks(5));
    }

    /// The block's table doubles its slots while that stays within the warps' region, and
    /// never goes past it for that, nor past the tuning's limit.
    #[test]
    fn block_tables_take_the_free_shared_memory() {
        let t = CountTuning::default();
        assert_eq!(t.block_spread, 4);
        // (longest block row, slots): the three graphs measured, then the ends.
        for (longest, slots) in [(1000, 8192), (2000, 8192), (400, 4096), (3, 32), (0, 32), (4000, 16384), (5000, 16384)] {
            assert_eq!(t.block_slots(longest), slots, "longest {longest}");
        }
        let sweep = CountTuning { block_spread: 16, ..t };
        assert_eq!(sweep.block_slots(1000), 16384, "a spread set from outside is kept past the warps' region");
        assert_eq!(CountTuning { block_slots_max: 2048, ..t }.block_slots(1000), 2048);
        for longest in 1..20_000u64 {
            let s = t.block_slots(longest) as u64;
            assert!(s.is_power_of_two() && s <= BLOCK_SLOTS_MAX as u64);
            assert!(s >= (4 * longest).min(BLOCK_SLOTS_MAX as u64), "load at most 1/4 where it fits: {longest} -> {s}");
            assert!(
                s <= (4 * longest).next_power_of_two().max(WARP_REGION_SLOTS as u64),
                "no more shared memory than before: {longest} -> {s}"
            );
        }
    }
}
