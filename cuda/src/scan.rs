//! Exclusive prefix sums on the device (kernels/scan.cu), for every module that includes it.

use crate::CudaError;
use crate::launch::{Kernel, Launch, kernels};
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig};
use std::sync::Arc;

/// The scan kernels' source, compiled after the prelude into the modules that use it.
pub const SCAN_KERNELS: &str = include_str!("../kernels/scan.cu");

/// The element types the scan reads.
pub(crate) trait ScanInput: cudarc::driver::DeviceRepr {
    /// The tile-sum and apply kernels for this type, with their signatures.
    fn kernels(scan: &Scan) -> [(&CudaFunction, &'static Kernel); 2];
}

impl ScanInput for u32 {
    fn kernels(scan: &Scan) -> [(&CudaFunction, &'static Kernel); 2] {
        [(&scan.tiles_u32, &kernels::SCAN_TILES_U32), (&scan.apply_u32, &kernels::SCAN_APPLY_U32)]
    }
}

impl ScanInput for u64 {
    fn kernels(scan: &Scan) -> [(&CudaFunction, &'static Kernel); 2] {
        [(&scan.tiles_u64, &kernels::SCAN_TILES_U64), (&scan.apply_u64, &kernels::SCAN_APPLY_U64)]
    }
}

/// The scan kernels of one loaded module.
pub(crate) struct Scan {
    tiles_u32: CudaFunction,
    tiles_u64: CudaFunction,
    apply_u32: CudaFunction,
    apply_u64: CudaFunction,
    sums: CudaFunction,
}

impl Scan {
    pub(crate) fn load(module: &Arc<CudaModule>) -> Result<Self, CudaError> {
        Ok(Scan {
            tiles_u32: module.load_function(kernels::SCAN_TILES_U32.name)?,
            tiles_u64: module.load_function(kernels::SCAN_TILES_U64.name)?,
            apply_u32: module.load_function(kernels::SCAN_APPLY_U32.name)?,
            apply_u64: module.load_function(kernels::SCAN_APPLY_U64.name)?,
            sums: module.load_function(kernels::SCAN_SUMS.name)?,
        })
    }

    /// The exclusive sums of the first `n` entries of `input`: `n + 1` values, the last the
    /// total.
    pub(crate) fn exclusive<T: ScanInput>(&self, s: &Arc<CudaStream>, input: &CudaSlice<T>, n: usize) -> Result<CudaSlice<u64>, CudaError> {
        let [(tiles_fn, tiles_k), (apply_fn, apply_k)] = T::kernels(self);
        let tiles = n.div_ceil(1024).max(1);
        let sums = s.alloc_zeros::<u64>(tiles)?;
        let out = s.alloc_zeros::<u64>(n + 1)?;
        let (n64, t64) = (n as u64, tiles as u64);
        let tile_cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        // `input` holds at least n entries, `sums` one per tile, `out` n + 1; the tile size
        // (1024) is a multiple of the block size, as the kernels assume.
        Launch::new(s, tiles_fn, tiles_k).arg(input).arg(&n64).arg(&sums).run(tile_cfg)?;
        let one_block = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
        Launch::new(s, &self.sums, &kernels::SCAN_SUMS).arg(&sums).arg(&t64).arg(&out).arg(&n64).run(one_block)?;
        Launch::new(s, apply_fn, apply_k).arg(input).arg(&n64).arg(&sums).arg(&out).run(tile_cfg)?;
        Ok(out)
    }
}
