//! The launch layer: the one module of the CUDA backend that does what the compiler cannot
//! check (every `unsafe` of the crate is here). Kernel launches go through [`Launch`], which
//! checks each argument's kind against the kernel's declared parameters ([`Kernel`], pinned
//! against the `.cu` templates by a test) before it launches; page-locked allocations, the
//! mapped pointer of one, and the driver probes are here too, as are the `DeviceRepr` promises
//! of the argument structs (their layouts are checked against the C declarations in `abi`).
//!
//! What a launch still relies on and cannot check: every pointer argument is a live device
//! allocation (or mapped host memory) at least as long as the kernel indexes it, which each
//! caller states where it builds the launch.

use crate::CudaError;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchArgs, LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use std::sync::Arc;

/// One kernel parameter, as its C declaration types it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    /// Any pointer (`const u32*`, `float4*`, `const void*`).
    Ptr,
    /// `u32` (`uint32_t`).
    U32,
    /// `int`.
    I32,
    /// `u64` (`uint64_t`).
    U64,
    /// A struct passed by value, by its C name.
    Struct(&'static str),
}

/// A kernel: its name in the module and its parameters, in order.
#[derive(Debug)]
pub(crate) struct Kernel {
    /// The `extern "C"` name.
    pub name: &'static str,
    /// The parameters.
    pub params: &'static [Param],
}

macro_rules! kernels {
    ($($id:ident = $name:literal ($($p:expr),* $(,)?);)*) => {
        $(pub(crate) const $id: Kernel = Kernel { name: $name, params: &[$($p),*] };)*
        /// Every kernel the crate launches (checked against the templates by a test).
        #[cfg(test)]
        pub(crate) const ALL: &[&Kernel] = &[$(&$id),*];
    };
}

/// The kernels' signatures, one constant per kernel.
pub(crate) mod kernels {
    use super::Kernel;
    use super::Param::{I32, Ptr, Struct, U32, U64};

    kernels! {
        WALK = "wf_walk"(Struct("WfGraph"), Ptr, Struct("WfRunArgs"));
        PREP_EDGES = "wf_prep_edges"(Ptr, Ptr, Ptr, U64);
        PREP_WEIGHT_STATS = "wf_prep_weight_stats"(Ptr, Ptr, U32, Ptr, Ptr, Ptr, Ptr);
        PREP_LABEL_STATS = "wf_prep_label_stats"(Ptr, Ptr, Ptr, U32, U32, Ptr);
        PREP_NEIGHBOR_DEGREE = "wf_prep_neighbor_degree"(Ptr, Ptr, U32, Ptr, Ptr);
        PREP_HUB_BITS = "wf_prep_hub_bits"(Ptr, Ptr, Ptr, U32, Ptr, U64);
        PREP_ROW_SIGS = "wf_prep_row_sigs"(Ptr, Ptr, U32, Ptr, Ptr, Ptr, Ptr);
        PREP_TERM_FACTORS = "wf_prep_term_factors"(Ptr, Ptr, U32, Ptr, U64);
        SCAN_TILES_U32 = "wf_scan_tiles_u32"(Ptr, U64, Ptr);
        SCAN_TILES_U64 = "wf_scan_tiles_u64"(Ptr, U64, Ptr);
        SCAN_SUMS = "wf_scan_sums"(Ptr, U64, Ptr, U64);
        SCAN_APPLY_U32 = "wf_scan_apply_u32"(Ptr, U64, Ptr, Ptr);
        SCAN_APPLY_U64 = "wf_scan_apply_u64"(Ptr, U64, Ptr, Ptr);
        S_CLASSIFY = "wf_s_classify"(Ptr, U32, Ptr, U32, I32, Ptr, Ptr);
        S_PARTITION = "wf_s_partition"(Ptr, Ptr, Ptr, U32, U32, Ptr, Ptr, Ptr);
        S_FULL = "wf_s_full"(Struct("WfSampleArgs"), U32, U32);
        S_RANDOM = "wf_s_random"(Struct("WfSampleArgs"), U32, U32, U32);
        S_RANDOM_WIDE = "wf_s_random_wide"(Struct("WfSampleArgs"), U32);
        S_CLEAR = "wf_s_clear"(Struct("WfTable"));
        S_EDGE_BATCHES = "wf_s_edge_batches"(Ptr, Ptr, U32, Ptr);
        S_INSERT_DST = "wf_s_insert_dst"(Ptr, Ptr, U32, U32, Struct("WfTable"));
        S_INSERT_EDGES = "wf_s_insert_edges"(Ptr, U64, Ptr, Ptr, U32, Struct("WfTable"));
        S_MARK_NEW = "wf_s_mark_new"(Ptr, U64, Ptr, Ptr, U32, Struct("WfTable"), Ptr);
        S_NEXT_PTR = "wf_s_next_ptr"(Ptr, Ptr, Ptr, U32, Ptr);
        S_ASSIGN = "wf_s_assign"(Ptr, Ptr, U32, U32, Ptr, U64, Ptr, Ptr, Ptr, Ptr, Struct("WfTable"), Ptr);
        S_EDGE_SRC = "wf_s_edge_src"(Ptr, U64, Ptr, U32, Struct("WfTable"), Ptr);
        S_TO_I64_U32 = "wf_s_to_i64_u32"(Ptr, U64, Ptr, Ptr);
        S_TO_I64_U64 = "wf_s_to_i64_u64"(Ptr, U64, Ptr, Ptr);
        T_ORIENT_COUNT = "wf_t_orient_count"(Struct("WfTriOrient"), Ptr, Ptr);
        T_ORIENT_FILL = "wf_t_orient_fill"(Struct("WfTriOrient"), Ptr, Ptr);
        T_OWNER_COST = "wf_t_owner_cost"(Ptr, Ptr, Ptr, U64, Ptr);
        T_CUTS = "wf_t_cuts"(Ptr, U64, U32, Ptr);
        T_OWNER_COUNT = "wf_t_owner_count"(Ptr, Ptr, Ptr, U64, U64, U64, Ptr, Ptr);
        T_OWNER_FILL = "wf_t_owner_fill"(Ptr, Ptr, Ptr, U64, U64, U64, Ptr, Ptr, Ptr);
        T_UNIT_COUNT = "wf_t_unit_count"(Ptr, Ptr, U64, U64, U32, U32, Ptr, Ptr, Ptr, Ptr);
        T_UNIT_FILL = "wf_t_unit_fill"(Ptr, Ptr, U64, U64, U32, U32, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr);
        T_DEGREE = "wf_t_degree"(Ptr, Ptr, U64, Ptr);
        T_COUNT = "wf_t_count"(Struct("WfTriCount"));
        T_COUNT_LANES = "wf_t_count_lanes"(Struct("WfTriCount"));
        T_COUNT_FUSED = "wf_t_count_fused"(Struct("WfTriCount"));
        T_COUNT_LONG = "wf_t_count_long"(Struct("WfTriCount"));
        T_LONGEST_ROW = "wf_t_longest_row"(Ptr, U64, Ptr);
        T_COUNT_EDGES = "wf_t_count_edges"(Ptr, Ptr, Ptr, U64, Ptr, Ptr);
        ADAPTIVE_PROBE = "wf_adaptive_probe"(Ptr, Ptr, Ptr, Ptr, U32, Ptr);
        F_GATHER16 = "wf_f_gather16"(Ptr, U64, Ptr, U64, Ptr, Ptr, U64, Ptr, Ptr, Ptr);
        F_GATHER4 = "wf_f_gather4"(Ptr, U64, Ptr, U64, Ptr, Ptr, U64, Ptr, Ptr, Ptr);
        F_GATHER2 = "wf_f_gather2"(Ptr, U64, Ptr, U64, Ptr, Ptr, U64, Ptr, Ptr, Ptr);
        F_CLAIM = "wf_f_claim"(Ptr, U64, Ptr, U64, U64, Ptr, Ptr);
        F_ADMIT = "wf_f_admit"(Ptr, Ptr, Ptr, Ptr, U64, U64, Ptr, Ptr, Ptr, U64);
        F_ADVANCE = "wf_f_advance"(Ptr, Ptr, U64);
        A_SPARSE4 = "wf_a_sparse4"(Ptr, Ptr, Ptr, U64, Ptr, Ptr, Ptr, U64, Ptr);
        A_SPARSE1 = "wf_a_sparse1"(Ptr, Ptr, Ptr, U64, Ptr, Ptr, Ptr, U64, Ptr);
        A_DENSE4 = "wf_a_dense4"(Ptr, Ptr, Ptr, U64, Ptr, Ptr, Ptr, U64, Ptr);
        A_DENSE1 = "wf_a_dense1"(Ptr, Ptr, Ptr, U64, Ptr, Ptr, Ptr, U64, Ptr);
        AP_COUNT = "wf_ap_count"(Ptr, U64, U64, Ptr, Ptr);
        AP_PLACE = "wf_ap_place"(Ptr, U64, U64, Ptr, Ptr, Ptr);
        AP_SETTLE = "wf_ap_settle"(Ptr, Ptr, U64, Ptr, Ptr, Ptr);
        AP_WIDEN_U64 = "wf_ap_widen_u64"(Ptr, U64, Ptr);
        AP_WIDEN_U32 = "wf_ap_widen_u32"(Ptr, U64, Ptr);
        AP_INV_DEGREE = "wf_ap_inv_degree"(Ptr, U64, Ptr);
        AP_DENSITY = "wf_ap_density"(Ptr, Ptr, U64, U64, Ptr, Ptr);
        AP_SUM = "wf_ap_sum"(Ptr, U64, Ptr, U32, I32);
        AP_HYBRID = "wf_ap_hybrid"(Ptr, U64, U64, U64, Ptr, Ptr);
        AP_FLAGS = "wf_ap_flags"(Ptr, U64, Ptr, Ptr);
        AP_ORDER = "wf_ap_order"(Ptr, Ptr, U64, Ptr);
    }
}

/// A device address held as an integer (what the graph image and the argument structs hold),
/// passed where a kernel takes a pointer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct DevPtr(pub u64);

/// What a value is as a kernel argument.
pub(crate) trait KernelArg {
    /// The parameter kind it fills.
    const PARAM: Param;
}

impl<T> KernelArg for CudaSlice<T> {
    const PARAM: Param = Param::Ptr;
}
impl KernelArg for DevPtr {
    const PARAM: Param = Param::Ptr;
}
impl KernelArg for u32 {
    const PARAM: Param = Param::U32;
}
impl KernelArg for i32 {
    const PARAM: Param = Param::I32;
}
impl KernelArg for u64 {
    const PARAM: Param = Param::U64;
}
impl KernelArg for crate::abi::WfGraph {
    const PARAM: Param = Param::Struct("WfGraph");
}
impl KernelArg for crate::abi::WfRunArgs {
    const PARAM: Param = Param::Struct("WfRunArgs");
}
impl KernelArg for crate::abi::WfSampleArgs {
    const PARAM: Param = Param::Struct("WfSampleArgs");
}
impl KernelArg for crate::sample::Table {
    const PARAM: Param = Param::Struct("WfTable");
}
impl KernelArg for crate::triangles::CountArgs {
    const PARAM: Param = Param::Struct("WfTriCount");
}
impl KernelArg for crate::triangles::OrientArgs {
    const PARAM: Param = Param::Struct("WfTriOrient");
}

// SAFETY: a transparent u64.
unsafe impl DeviceRepr for DevPtr {}
// SAFETY (the argument structs): plain old data with the C layout of the kernels' structs
// (`#[repr(C)]`, checked field by field against the C declarations in `abi`'s tests).
unsafe impl DeviceRepr for crate::abi::WfSampleArgs {}
// SAFETY: as above.
unsafe impl DeviceRepr for crate::abi::WfGraph {}
// SAFETY: as above.
unsafe impl DeviceRepr for crate::abi::WfRunArgs {}
// SAFETY: as above.
unsafe impl DeviceRepr for crate::sample::Table {}
// SAFETY: as above.
unsafe impl DeviceRepr for crate::triangles::CountArgs {}
// SAFETY: as above.
unsafe impl DeviceRepr for crate::triangles::OrientArgs {}

/// One kernel launch being built: arguments are pushed in order and checked against the
/// kernel's parameters when it runs.
pub(crate) struct Launch<'a> {
    args: LaunchArgs<'a>,
    kernel: &'static Kernel,
    pushed: Vec<Param>,
}

impl<'a> Launch<'a> {
    /// A launch of `function` (loaded under `kernel.name`) on `stream`.
    pub(crate) fn new(stream: &'a CudaStream, function: &'a CudaFunction, kernel: &'static Kernel) -> Self {
        Launch { args: stream.launch_builder(function), kernel, pushed: Vec::with_capacity(kernel.params.len()) }
    }

    /// The next argument.
    pub(crate) fn arg<A: KernelArg>(mut self, a: &'a A) -> Self
    where
        LaunchArgs<'a>: PushKernelArg<&'a A>,
    {
        self.args.arg(a);
        self.pushed.push(A::PARAM);
        self
    }

    /// Launches with `cfg`, after checking the arguments against the kernel's parameters (a
    /// mismatch is a bug here, reported as an error rather than undefined behaviour).
    pub(crate) fn run(mut self, cfg: LaunchConfig) -> Result<(), CudaError> {
        if self.pushed != self.kernel.params {
            return Err(CudaError::Driver(format!(
                "internal error: kernel `{}` takes ({:?}) but was given ({:?})",
                self.kernel.name, self.kernel.params, self.pushed
            )));
        }
        // SAFETY: the arguments match the kernel's parameters in number and kind (checked
        // above; the parameter lists are pinned against the `.cu` declarations by a test, and
        // the structs' layouts against their C declarations); every pointer argument is a live
        // allocation as long as the kernel indexes it, which each caller states.
        unsafe { self.args.launch(cfg) }?;
        Ok(())
    }
}

/// A grid of 256-thread blocks striding over `n` items: one block per 256 items, at least
/// one, at most eight per multiprocessor (`sms`), as the grid-stride kernels expect.
pub(crate) fn striding_grid(n: u64, sms: u32) -> LaunchConfig {
    let blocks = n.div_ceil(256).clamp(1, sms as u64 * 8) as u32;
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
}

/// A page-locked host buffer of `n` (at least 1) `T`s with the driver's `flags`; its contents
/// are unspecified until written, and every caller writes before any read.
pub(crate) fn pinned<T: DeviceRepr>(ctx: &Arc<CudaContext>, n: usize, flags: u32) -> Result<PinnedHostSlice<T>, CudaError> {
    // SAFETY: `T: DeviceRepr` is plain data; the callers fill the buffer before reading it.
    Ok(unsafe { ctx.alloc_pinned_with_flags::<T>(n.max(1), flags) }?)
}

/// A stream that another library owns (torch's), wrapped to launch on; dropping the wrapper
/// leaves the stream alone. The caller states that `raw` is a live `CUstream` of `ctx` (or 0,
/// the legacy default stream) for as long as the wrapper is used.
pub(crate) fn borrowed_stream(ctx: &Arc<CudaContext>, raw: u64) -> Arc<CudaStream> {
    // SAFETY: the caller's promise above; work on it is ordered by its owner's stream
    // semantics, which is the point of launching there.
    unsafe { ctx.wrap_borrowed_stream(raw as usize as cudarc::driver::sys::CUstream) }
}

/// The device address of a page-locked buffer allocated with `CU_MEMHOSTALLOC_DEVICEMAP`.
pub(crate) fn mapped_address<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(buffer: &mut PinnedHostSlice<T>) -> Result<u64, CudaError> {
    use cudarc::driver::sys;
    let mut ptr: sys::CUdeviceptr = 0;
    let host = buffer.as_mut_ptr()? as *mut std::ffi::c_void;
    // SAFETY: `host` is a live DEVICEMAP allocation of the current context.
    let rc = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut ptr, host, 0) };
    if rc != sys::CUresult::CUDA_SUCCESS {
        return Err(CudaError::Driver(format!("cuMemHostGetDevicePointer: {rc:?}")));
    }
    Ok(ptr)
}

/// Whether the CUDA driver library can be loaded.
pub(crate) fn driver_present() -> bool {
    // SAFETY: only tries to load the library; never panics.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Whether the NVRTC library can be loaded.
pub(crate) fn nvrtc_present() -> bool {
    // SAFETY: as above.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// The driver's CUDA version (e.g. 13000), once the driver is loaded (0 if it does not say).
pub(crate) fn driver_version() -> i32 {
    let mut v = 0;
    // SAFETY: the driver library is loaded (checked by the caller); writes one int.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernels' parameters as the `.cu` templates declare them.
    fn declared() -> Vec<(String, Vec<Param>)> {
        let mut out = Vec::new();
        for text in [
            crate::WALK_KERNEL,
            crate::PREP_KERNELS,
            crate::sample::SAMPLE_KERNELS,
            crate::scan::SCAN_KERNELS,
            crate::triangles::TRIANGLE_KERNELS,
            crate::probe::ADAPTIVE_PROBE,
            crate::features::FEATURE_KERNELS,
            crate::aggregate::AGGREGATE_KERNELS,
            crate::aggregate_plan::PLAN_KERNELS,
        ] {
            let mut rest = text;
            while let Some(at) = rest.find("__global__ void") {
                let mut after = rest[at + "__global__ void".len()..].trim_start();
                if let Some(bounds) = after.strip_prefix("__launch_bounds__(") {
                    after = bounds[bounds.find(')').unwrap() + 1..].trim_start();
                }
                let open = after.find('(').unwrap();
                let close = after[open..].find(')').unwrap() + open;
                out.push((after[..open].trim().to_string(), params(&after[open + 1..close])));
                rest = &after[close..];
            }
        }
        out
    }

    fn params(list: &str) -> Vec<Param> {
        list.split(',')
            .map(|p| {
                let p = p.trim();
                let ty = p.rsplit_once(char::is_whitespace).map_or(p, |(t, _)| t).trim();
                if ty.contains('*') {
                    Param::Ptr
                } else {
                    match ty.trim_start_matches("const ").trim_start_matches("__grid_constant__ ") {
                        "u32" | "uint32_t" | "unsigned" => Param::U32,
                        "int" => Param::I32,
                        "u64" | "uint64_t" => Param::U64,
                        "WfSampleArgs" => Param::Struct("WfSampleArgs"),
                        "WfGraph" => Param::Struct("WfGraph"),
                        "WfRunArgs" => Param::Struct("WfRunArgs"),
                        "WfTable" => Param::Struct("WfTable"),
                        "WfTriCount" => Param::Struct("WfTriCount"),
                        "WfTriOrient" => Param::Struct("WfTriOrient"),
                        other => panic!("a kernel parameter of a type this test does not know: `{other}` in `{p}`"),
                    }
                }
            })
            .collect()
    }

    #[test]
    fn every_kernel_is_launched_with_its_declared_parameters() {
        let declared = declared();
        assert!(declared.len() >= 30, "found only {} kernels in the templates", declared.len());
        for (name, params) in &declared {
            let ours =
                kernels::ALL.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("kernel `{name}` has no signature in launch.rs"));
            assert_eq!(ours.params, params.as_slice(), "kernel `{name}`: launch.rs and the template disagree");
        }
        for k in kernels::ALL {
            assert!(declared.iter().any(|(n, _)| n == k.name), "launch.rs declares `{}`, which no template defines", k.name);
        }
    }

    #[test]
    fn a_launch_with_the_wrong_arguments_is_refused_before_it_runs() {
        // The check itself, without a device: what `run` compares.
        let pushed = [Param::Ptr, Param::U32];
        assert_ne!(kernels::PREP_EDGES.params, &pushed[..]);
        assert_eq!(<CudaSlice<u32> as KernelArg>::PARAM, Param::Ptr);
        assert_eq!(<DevPtr as KernelArg>::PARAM, Param::Ptr);
        assert_eq!(<u64 as KernelArg>::PARAM, Param::U64);
    }
}
