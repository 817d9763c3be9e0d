//! A node feature matrix for GNN mini-batches (GARDEN's AHFCA): the matrix in page-locked host
//! memory mapped into the GPU's address space, its hottest rows copied into a device cache
//! within a memory budget, and per-mini-batch gathers that read cached rows from device memory
//! and the rest from the host over the bus (UVA zero-copy), by one kernel.
//!
//! The cache has two parts. The static part holds the rows the caller names
//! ([`FeatureStore::set_cache`]; the Python package picks them by pre-sampling a few epochs'
//! mini-batches and counting accesses). The dynamic part, when given a budget, is a ring of
//! slots that admits each gather's missed rows after it, evicting the oldest: it follows
//! recent hotness that pre-sampling did not see. Both are kernels on the store's stream, so a
//! gather never sees a half-written row.

use crate::launch::{DevPtr, Kernel, Launch, kernels, mapped_address, pinned};
use crate::{CudaDevice, CudaError};
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PinnedHostSlice};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The gathering kernels, after the prelude.
pub const FEATURE_KERNELS: &str = include_str!("../kernels/features.cu");

/// What gathers have done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GatherStats {
    /// Rows gathered.
    pub rows: u64,
    /// Of them, read from the device cache.
    pub hits: u64,
    /// Bytes written to the gathered outputs.
    pub bytes: u64,
    /// Seconds in the gathers (kernel and its wait), summed.
    pub seconds: f64,
}

impl GatherStats {
    /// Cached rows over rows gathered (0 when none).
    pub fn hit_rate(&self) -> f64 {
        if self.rows == 0 { 0.0 } else { self.hits as f64 / self.rows as f64 }
    }

    /// Gathered bytes per second, in GB/s.
    pub fn gb_per_s(&self) -> f64 {
        if self.seconds > 0.0 { self.bytes as f64 / self.seconds / 1e9 } else { 0.0 }
    }
}

/// The dynamic ring's state on the device and its kernels.
struct Dynamic {
    claim: CudaFunction,
    admit: CudaFunction,
    advance: CudaFunction,
    /// Per ring slot, the row in it (-1: none).
    owner: CudaSlice<i32>,
    /// A gather's claimed rows (at most the ring's size).
    list: CudaSlice<u32>,
    /// How many rows the last gather claimed.
    claimed: CudaSlice<u64>,
    /// The ring's oldest slot.
    head: CudaSlice<u64>,
}

/// A feature matrix of `rows` rows of `row_bytes` bytes, held in mapped page-locked host
/// memory, with a device cache of some of its rows.
pub struct FeatureStore {
    stream: Arc<CudaStream>,
    _module: Arc<CudaModule>,
    gather: CudaFunction,
    kernel: &'static Kernel,
    sms: u32,
    /// Kept alive: the kernels read it through `host_addr`.
    _host: PinnedHostSlice<u8>,
    host_addr: u64,
    rows: usize,
    row_bytes: usize,
    /// Bytes per word of the kernel (16, 4 or 2).
    word: usize,
    budget_rows: usize,
    /// Slots of the dynamic ring, after the static ones.
    dynamic_rows: usize,
    cache: CudaSlice<u8>,
    slot_of: CudaSlice<i32>,
    cached: usize,
    dynamic: Option<Dynamic>,
    stats: [AtomicU64; 3],
    nanos: AtomicU64,
}

impl FeatureStore {
    /// Copies `data` (`rows` rows of `row_bytes` bytes, row-major) into mapped page-locked
    /// memory of GPU `dev`, with room for `device_budget` bytes of statically cached rows on
    /// the device (none until [`Self::set_cache`]) and `dynamic_budget` bytes of the dynamic
    /// ring (0: none). `row_bytes` must be even (float16 and wider).
    pub fn new(
        dev: &CudaDevice,
        data: &[u8],
        rows: usize,
        row_bytes: usize,
        device_budget: usize,
        dynamic_budget: usize,
    ) -> Result<Self, CudaError> {
        let bad = |why: String| CudaError::Walk(wayfarer_runtime::WalkError::param("features", why));
        if row_bytes == 0 || !row_bytes.is_multiple_of(2) {
            return Err(bad(format!("a row of {row_bytes} bytes: rows must be a non-zero, even number of bytes")));
        }
        if rows.checked_mul(row_bytes) != Some(data.len()) {
            return Err(bad(format!("{} bytes are not {rows} rows of {row_bytes} bytes", data.len())));
        }
        if rows > i32::MAX as usize {
            return Err(bad(format!("{rows} rows: at most 2^31 - 1")));
        }
        let word = [16usize, 4, 2].into_iter().find(|w| row_bytes.is_multiple_of(*w)).expect("row_bytes is even");
        let (name, kernel) = match word {
            16 => ("wf_f_gather16", &kernels::F_GATHER16),
            4 => ("wf_f_gather4", &kernels::F_GATHER4),
            _ => ("wf_f_gather2", &kernels::F_GATHER2),
        };
        let source = format!("{}\n{}", crate::codegen::PRELUDE, FEATURE_KERNELS);
        let loaded = dev.load_source("features", &source, "wf_f_gather4")?;
        let gather = loaded.module.load_function(name)?;
        let sms = dev.ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let flags = cudarc::driver::sys::CU_MEMHOSTALLOC_DEVICEMAP | cudarc::driver::sys::CU_MEMHOSTALLOC_PORTABLE;
        let mut host = pinned::<u8>(&dev.ctx, data.len(), flags)?;
        host.as_mut_slice()?[..data.len()].copy_from_slice(data);
        let host_addr = mapped_address(&mut host)?;
        // A stream of its own, not the legacy default one: gathers overlap other work (a
        // trainer's on the default stream).
        let s = dev.ctx.new_stream()?;
        let budget_rows = (device_budget / row_bytes).min(rows);
        let dynamic_rows = (dynamic_budget / row_bytes).min(rows - budget_rows);
        let cache = s.alloc_zeros::<u8>(((budget_rows + dynamic_rows) * row_bytes).max(1))?;
        let slot_of = s.clone_htod(&vec![-1i32; rows.max(1)])?;
        let dynamic = if dynamic_rows > 0 {
            Some(Dynamic {
                claim: loaded.module.load_function(kernels::F_CLAIM.name)?,
                admit: loaded.module.load_function(kernels::F_ADMIT.name)?,
                advance: loaded.module.load_function(kernels::F_ADVANCE.name)?,
                owner: s.clone_htod(&vec![-1i32; dynamic_rows])?,
                list: s.alloc_zeros::<u32>(dynamic_rows)?,
                claimed: s.alloc_zeros::<u64>(1)?,
                head: s.alloc_zeros::<u64>(1)?,
            })
        } else {
            None
        };
        Ok(FeatureStore {
            stream: s,
            _module: loaded.module,
            gather,
            kernel,
            sms,
            _host: host,
            host_addr,
            rows,
            row_bytes,
            word,
            budget_rows,
            dynamic_rows,
            cache,
            slot_of,
            cached: 0,
            dynamic,
            stats: Default::default(),
            nanos: AtomicU64::new(0),
        })
    }

    /// Rows of the matrix.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Bytes per row.
    pub fn row_bytes(&self) -> usize {
        self.row_bytes
    }

    /// Rows the device budget holds.
    pub fn cache_capacity(&self) -> usize {
        self.budget_rows
    }

    /// Rows now cached statically.
    pub fn cached_rows(&self) -> usize {
        self.cached
    }

    /// Slots of the dynamic ring.
    pub fn dynamic_capacity(&self) -> usize {
        self.dynamic_rows
    }

    /// Caches `hot` (distinct row ids, hottest first; those past the budget are left out) on
    /// the device, replacing the static cache and emptying the dynamic ring; returns how many
    /// are cached.
    pub fn set_cache(&mut self, hot: &[u32]) -> Result<usize, CudaError> {
        let s = self.stream.clone();
        s.context().bind_to_thread()?;
        let take = hot.len().min(self.budget_rows);
        let mut slot_of = vec![-1i32; self.rows.max(1)];
        let mut ids = Vec::with_capacity(take);
        for &r in &hot[..take] {
            let r = r as usize;
            if r >= self.rows {
                return Err(CudaError::Walk(wayfarer_runtime::WalkError::param("cache", format!("row {r} of {} rows", self.rows))));
            }
            if slot_of[r] >= 0 {
                return Err(CudaError::Walk(wayfarer_runtime::WalkError::param("cache", format!("row {r} is given twice"))));
            }
            slot_of[r] = ids.len() as i32;
            ids.push(r as i64);
        }
        // The cache is filled by the gather kernel itself, reading every row from the host
        // (the old slots are cleared first, so no row comes from a stale cache).
        self.slot_of = s.clone_htod(&vec![-1i32; self.rows.max(1)])?;
        self.cached = 0;
        if take > 0 {
            let ids_dev = s.clone_htod(&ids)?;
            let counters = s.alloc_zeros::<u64>(2)?;
            self.launch_gather(&DevPtr(address(&s, &ids_dev)), take, &DevPtr(address(&s, &self.cache)), &counters)?;
        }
        self.slot_of = s.clone_htod(&slot_of)?;
        self.cached = take;
        if let Some(d) = &mut self.dynamic {
            d.owner = s.clone_htod(&vec![-1i32; self.dynamic_rows])?;
            d.claimed = s.alloc_zeros::<u64>(1)?;
            d.head = s.alloc_zeros::<u64>(1)?;
        }
        s.synchronize()?;
        Ok(take)
    }

    /// Gathers the rows of `n` int64 ids at device address `ids` into a new device array of
    /// `n * row_bytes` bytes, ready when this returns (the stream is synchronized). The ids
    /// must be in device memory of this GPU, written before the call (the caller's stream
    /// finished), and stay alive during it. An id outside `0..rows` is an error naming its
    /// position.
    pub fn gather(&self, ids: u64, n: usize) -> Result<CudaSlice<u8>, CudaError> {
        let s = &self.stream;
        s.context().bind_to_thread()?;
        let out = s.alloc_zeros::<u8>((n * self.row_bytes).max(1))?;
        self.gather_to(ids, n, address(s, &out))?;
        Ok(out)
    }

    /// [`Self::gather`] into the caller's device array at `out` (`n * row_bytes` bytes, on
    /// this GPU), written after the work queued so far on `after` (a `CUstream` of this GPU's
    /// primary context, such as the one `out` was allocated on, or 0 for none): so an
    /// allocator's array (torch's) needs no handover. Ready when this returns.
    pub fn gather_into(&self, ids: u64, n: usize, out: u64, after: u64) -> Result<(), CudaError> {
        let s = &self.stream;
        s.context().bind_to_thread()?;
        if after != 0 {
            s.join(&crate::launch::borrowed_stream(s.context(), after))?;
        }
        self.gather_to(ids, n, out)
    }

    /// Gathers into `out` (`n * row_bytes` bytes) and synchronizes the store's stream.
    fn gather_to(&self, ids: u64, n: usize, out: u64) -> Result<(), CudaError> {
        let s = &self.stream;
        let t = Instant::now();
        let counters = s.alloc_zeros::<u64>(2)?;
        self.launch_gather(&DevPtr(ids), n, &DevPtr(out), &counters)?;
        if let Some(d) = &self.dynamic {
            self.admit_misses(d, &DevPtr(ids), n)?;
        }
        let counters = s.clone_dtoh(&counters)?;
        if counters[1] != 0 {
            return Err(CudaError::Walk(wayfarer_runtime::WalkError::param(
                "ids",
                format!("ids[{}] is not a row of the {} rows", counters[1] - 1, self.rows),
            )));
        }
        self.stats[0].fetch_add(n as u64, Ordering::Relaxed);
        self.stats[1].fetch_add(counters[0], Ordering::Relaxed);
        self.stats[2].fetch_add((n * self.row_bytes) as u64, Ordering::Relaxed);
        self.nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Gathers the rows of `ids` (on the host; uploaded on the store's stream) into the
    /// caller's array: see [`Self::gather_into`].
    pub fn gather_host_into(&self, ids: &[i64], out: u64, after: u64) -> Result<(), CudaError> {
        let s = &self.stream;
        s.context().bind_to_thread()?;
        let dev_ids = s.clone_htod(ids)?;
        self.gather_into(address(s, &dev_ids), ids.len(), out, after)
    }

    /// The gathers so far.
    pub fn stats(&self) -> GatherStats {
        GatherStats {
            rows: self.stats[0].load(Ordering::Relaxed),
            hits: self.stats[1].load(Ordering::Relaxed),
            bytes: self.stats[2].load(Ordering::Relaxed),
            seconds: self.nanos.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }

    /// Clears the statistics.
    pub fn reset_stats(&self) {
        for s in &self.stats {
            s.store(0, Ordering::Relaxed);
        }
        self.nanos.store(0, Ordering::Relaxed);
    }

    /// Admits the rows of the last gather's ids that missed into the dynamic ring (after the
    /// gather on the same stream, so it read the cache as it was).
    fn admit_misses(&self, d: &Dynamic, ids: &DevPtr, n: usize) -> Result<(), CudaError> {
        let s = &self.stream;
        let (n64, rows, slots) = (n as u64, self.rows as u64, self.dynamic_rows as u64);
        let blocks = |threads: u64| (threads.div_ceil(256)).clamp(1, self.sms as u64 * 8) as u32;
        let cfg = |threads: u64| LaunchConfig { grid_dim: (blocks(threads), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        // `ids` holds n int64 (the gather's contract); `slot_of` `rows` entries; `list` and
        // `owner` `slots` entries (claims past `slots` are given back, admits stop there); the
        // cache holds `budget_rows + slots` rows and the mapped host memory `rows`.
        Launch::new(s, &d.claim, &kernels::F_CLAIM)
            .arg(ids)
            .arg(&n64)
            .arg(&self.slot_of)
            .arg(&rows)
            .arg(&slots)
            .arg(&d.claimed)
            .arg(&d.list)
            .run(cfg(n64))?;
        let (first, row_bytes) = (self.budget_rows as u64, self.row_bytes as u64);
        Launch::new(s, &d.admit, &kernels::F_ADMIT)
            .arg(&d.claimed)
            .arg(&d.list)
            .arg(&self.slot_of)
            .arg(&d.owner)
            .arg(&slots)
            .arg(&first)
            .arg(&d.head)
            .arg(&self.cache)
            .arg(&DevPtr(self.host_addr))
            .arg(&row_bytes)
            .run(cfg(slots.min(n64) * 32))?;
        Launch::new(s, &d.advance, &kernels::F_ADVANCE).arg(&d.claimed).arg(&d.head).arg(&slots).run(LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        })
    }

    /// Gathers `n` rows by the ids at `ids` into `out`; `counters` (two u64, zeroed) receive
    /// the cache hits and the first bad id's position + 1.
    fn launch_gather(&self, ids: &DevPtr, n: usize, out: &DevPtr, counters: &CudaSlice<u64>) -> Result<(), CudaError> {
        let s = &self.stream;
        let warps_per_block = 8u64;
        let blocks = (n as u64).div_ceil(warps_per_block).clamp(1, self.sms as u64 * 16) as u32;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (32 * warps_per_block as u32, 1, 1), shared_mem_bytes: 0 };
        let (n64, rows, words) = (n as u64, self.rows as u64, (self.row_bytes / self.word) as u64);
        let bad = DevPtr(address(s, counters) + 8);
        // `ids` holds n int64 (the caller's contract), `out` n rows; `slot_of` has `rows`
        // entries, the cache `budget_rows` rows (slots are below it), the mapped host memory
        // `rows` rows; the counters two u64.
        Launch::new(s, &self.gather, self.kernel)
            .arg(ids)
            .arg(&n64)
            .arg(&self.slot_of)
            .arg(&rows)
            .arg(&self.cache)
            .arg(&DevPtr(self.host_addr))
            .arg(&words)
            .arg(out)
            .arg(counters)
            .arg(&bad)
            .run(cfg)
    }
}

/// The device address of `x`.
fn address<T>(s: &CudaStream, x: &CudaSlice<T>) -> u64 {
    x.device_ptr(s).0
}
