//! Exclusive prefix sums on the device (kernels/scan.cu), for every module that includes it.

use crate::CudaError;
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// The scan kernels' source, compiled after the prelude into the modules that use it.
pub const SCAN_KERNELS: &str = include_str!("../kernels/scan.cu");

/// The element types the scan reads.
pub(crate) trait ScanInput: cudarc::driver::DeviceRepr {
    /// The tile-sum and apply kernels for this type.
    fn kernels(scan: &Scan) -> (&CudaFunction, &CudaFunction);
}

impl ScanInput for u32 {
    fn kernels(scan: &Scan) -> (&CudaFunction, &CudaFunction) {
        (&scan.tiles_u32, &scan.apply_u32)
    }
}

impl ScanInput for u64 {
    fn kernels(scan: &Scan) -> (&CudaFunction, &CudaFunction) {
        (&scan.tiles_u64, &scan.apply_u64)
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
            tiles_u32: module.load_function("wf_scan_tiles_u32")?,
            tiles_u64: module.load_function("wf_scan_tiles_u64")?,
            apply_u32: module.load_function("wf_scan_apply_u32")?,
            apply_u64: module.load_function("wf_scan_apply_u64")?,
            sums: module.load_function("wf_scan_sums")?,
        })
    }

    /// The exclusive sums of the first `n` entries of `input`: `n + 1` values, the last the
    /// total.
    pub(crate) fn exclusive<T: ScanInput>(&self, s: &Arc<CudaStream>, input: &CudaSlice<T>, n: usize) -> Result<CudaSlice<u64>, CudaError> {
        let (tiles_fn, apply_fn) = T::kernels(self);
        let tiles = n.div_ceil(1024).max(1);
        let sums = s.alloc_zeros::<u64>(tiles)?;
        let out = s.alloc_zeros::<u64>(n + 1)?;
        let (n64, t64) = (n as u64, tiles as u64);
        let tile_cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: `input` holds at least n entries, `sums` one per tile, `out` n + 1; the tile
        // size (1024) is a multiple of the block size, as the kernels assume.
        unsafe {
            let mut b = s.launch_builder(tiles_fn);
            b.arg(input).arg(&n64).arg(&sums);
            b.launch(tile_cfg)?;
            let mut b = s.launch_builder(&self.sums);
            b.arg(&sums).arg(&t64).arg(&out).arg(&n64);
            b.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 })?;
            let mut b = s.launch_builder(apply_fn);
            b.arg(input).arg(&n64).arg(&sums).arg(&out);
            b.launch(tile_cfg)?;
        }
        Ok(out)
    }
}
