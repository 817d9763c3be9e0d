//! # wayfarer-cuda
//!
//! The CUDA backend: a walk's IR is lowered to CUDA C by [`codegen`], spliced between the
//! prelude and the kernel templates (this crate's `kernels/`), compiled by NVRTC for
//! the device's own architecture (PTX cached on disk), and run through cudarc on a persistent
//! grid. Nothing CUDA is needed to build: the driver and NVRTC are loaded at run time, and
//! their absence is a [`CudaError::Unavailable`], never a panic.

#![warn(missing_docs)]
// Every `unsafe` of this crate is in `launch`, the one layer that launches kernels.
#![deny(unsafe_code)]

mod abi;
pub mod aggregate;
pub mod aggregate_plan;
pub mod codegen;
pub mod features;
#[allow(unsafe_code)]
mod launch;
mod layout;
pub mod probe;
mod run;
pub mod sample;
mod scan;
mod split;
pub mod triangles;

pub use run::{
    CompiledWalk, GpuReport, GpuRun, MIN_HUB_DEGREE, PER_QUERY_EXTRA, gpu_of_start, node_stats_on_device, run, run_multi_streaming,
    run_streaming,
};

/// A deliberately broken row signature, for the test that shows the exactness suite catches
/// one (feature `testing` only): while set, walk kernels test the bit of `x + 1` for node `x`,
/// so `has_edge` answers false for edges whose own bit is set but whose neighbour's is not.
#[cfg(feature = "testing")]
pub static BROKEN_ROW_SIGNATURES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The CUDA driver crate the backend runs on (for callers that hold its device arrays).
pub use cudarc;
use cudarc::driver::{CudaContext, CudaStream};
use std::path::PathBuf;
use std::sync::Arc;

/// What can go wrong on the CUDA backend.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// No usable GPU or CUDA library.
    #[error("the CUDA backend is unavailable: {0}")]
    Unavailable(String),
    /// NVRTC rejected the generated source.
    #[error("NVRTC failed to compile the generated CUDA source {source_path} (options: {options}):\n{log}")]
    Compile {
        /// Where the generated source was written.
        source_path: PathBuf,
        /// The NVRTC options.
        options: String,
        /// NVRTC's log.
        log: String,
    },
    /// The device ran out of memory.
    #[error("out of GPU memory: {0}")]
    OutOfMemory(String),
    /// A CUDA driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(String),
    /// The walk broke its contract on the GPU (a bad weight, an exceeded bound).
    #[error(transparent)]
    Walk(#[from] wayfarer_runtime::WalkError),
    /// Writing the walks failed (streamed output).
    #[error(transparent)]
    Output(#[from] wayfarer_runtime::GraphError),
    /// An environment setting of the backend is malformed.
    #[error("{name}: {why}")]
    Setting {
        /// The environment variable.
        name: &'static str,
        /// What is wrong with its value.
        why: String,
    },
}

impl From<cudarc::driver::DriverError> for CudaError {
    fn from(e: cudarc::driver::DriverError) -> Self {
        let text = format!("{e:?}");
        if text.contains("OUT_OF_MEMORY") { CudaError::OutOfMemory(text) } else { CudaError::Driver(text) }
    }
}

/// One GPU, ready to run walks.
pub struct CudaDevice {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    /// The device's name (e.g. "NVIDIA H200").
    pub name: String,
    /// Its architecture for NVRTC (e.g. "sm_90").
    pub arch: String,
    /// Total device memory in bytes.
    pub memory: usize,
    /// The driver's CUDA version (e.g. 13000).
    pub driver_version: i32,
}

impl CudaDevice {
    /// The device's stream (the one its work runs on), for callers that hold device arrays
    /// (e.g. to upload ids for [`features::FeatureStore::gather`]).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Whether the CUDA driver and NVRTC libraries can be loaded (cheap; never panics).
    pub fn libraries_present() -> bool {
        launch::driver_present() && launch::nvrtc_present()
    }

    /// How many GPUs are visible (0 without the driver or NVRTC).
    pub fn count() -> usize {
        if !Self::libraries_present() {
            return 0;
        }
        CudaContext::device_count().map_or(0, |c| c.max(0) as usize)
    }

    /// Opens GPU `ordinal`. Without a driver, NVRTC or a device this is
    /// [`CudaError::Unavailable`] (cudarc would panic if called without the libraries).
    pub fn open(ordinal: usize) -> Result<Self, CudaError> {
        if !launch::driver_present() {
            return Err(CudaError::Unavailable("the CUDA driver library (libcuda.so) cannot be loaded: no NVIDIA driver here".into()));
        }
        if !launch::nvrtc_present() {
            return Err(CudaError::Unavailable(
                "NVRTC (libnvrtc.so.13) cannot be loaded: install the CUDA toolkit or `pip install nvidia-cuda-nvrtc==13.0.88` and add its nvidia/cu13/lib to LD_LIBRARY_PATH".into(),
            ));
        }
        let count = CudaContext::device_count().map_err(|e| CudaError::Unavailable(format!("{e:?}")))?;
        if count <= 0 || ordinal >= count as usize {
            return Err(CudaError::Unavailable(format!("GPU {ordinal} requested, {count} present")));
        }
        let ctx = CudaContext::new(ordinal)?;
        let stream = ctx.default_stream();
        let name = ctx.name()?;
        use cudarc::driver::sys::CUdevice_attribute as A;
        let major = ctx.attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = ctx.attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let memory = ctx.total_mem()?;
        let driver_version = launch::driver_version();
        Ok(CudaDevice { ctx, stream, name, arch: format!("sm_{major}{minor}"), memory, driver_version })
    }
}

/// FNV-1a, 64 bits: the PTX cache key (not a security boundary, only a file name).
pub(crate) fn fnv64(parts: &[&[u8]]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The kernel template (after the prelude and the generated functions).
pub const WALK_KERNEL: &str = include_str!("../kernels/walk.cu");

/// The preprocessing kernels (per-node arrays, packed edges, hub bitmaps), after the walk kernel.
pub const PREP_KERNELS: &str = include_str!("../kernels/prep.cu");

/// The complete CUDA source of a walk: prelude, generated device functions, walk kernel,
/// preprocessing kernels.
pub fn walk_source(program: &wayfarer_compiler::ir::Program, info: &wayfarer_compiler::WalkInfo) -> String {
    if let Some(dir) = std::env::var_os("WAYFARER_DUMP") {
        // A dump that cannot be written must not fail the run.
        let _ = codegen::dump(program, info, std::path::Path::new(&dir));
    }
    format!("{}\n{}\n{}\n{}", crate::codegen::PRELUDE, crate::codegen::emit_device_functions(program, info), WALK_KERNEL, PREP_KERNELS)
}

/// The host program appended by [`standalone_source`].
pub const STANDALONE_MAIN: &str = include_str!("../kernels/standalone_main.cu");

/// What `wayfarer emit` writes: the walk's complete CUDA source with a `main` that loads a
/// `.wfg`, runs the walk and writes `.npy`, built by `nvcc -arch=sm_90 walk.cu` on its own.
/// `values` fixes the hyperparameters; `cost` is the adaptive rule's `(R, F)`.
pub fn standalone_source(
    program: &wayfarer_compiler::ir::Program,
    info: &wayfarer_compiler::WalkInfo,
    values: &[wayfarer_compiler::eval::ParamValue],
    cost: (f64, f64),
    anonymous: bool,
) -> String {
    use wayfarer_compiler::eval::{ParamValue, Value};
    use wayfarer_compiler::ir::StepField;
    let lit = |v: &Value| match v {
        Value::F32(x) => format!("{:?}f", x),
        Value::F64(x) => format!("{:?}", x),
        Value::I32(x) => format!("({x})"),
        Value::U32(x) => format!("{x}u"),
        Value::Bool(b) => b.to_string(),
    };
    let mut init: Vec<String> = values
        .iter()
        .map(|v| match v {
            ParamValue::Scalar(x) => lit(x),
            ParamValue::Array(xs) => format!("{{{}}}", xs.iter().map(lit).collect::<Vec<_>>().join(", ")),
        })
        .collect();
    if init.is_empty() {
        init.push("0u".into());
    }
    let req = wayfarer_compiler::analysis::requirements(info);
    let reads = |f: StepField| program.reads(f);
    let names: Vec<String> = program.props.iter().map(|p| format!("{p:?}")).collect();
    format!(
        "// wayfarer emit: the `{name}` walk as one CUDA file. Build: nvcc -O3 -arch=sm_90 {name}.cu -o {name} (any --fmad: the walk's arithmetic is rounded intrinsics)\n\
         // Run:   ./{name} graph.wfg walks.npy [length] [seed] [walks_per_node] [adaptive|erjs|ervs]\n\n\
         {source}\n\
         #define WF_WALK_NAME \"{name}\"\n\
         #define WF_PARAMS {{{params}}}\n\
         #define WF_COST_R {r:?}\n\
         #define WF_COST_F {f:?}\n\
         #define WF_NEEDS_WEIGHT_STATS {ws}\n\
         #define WF_NEEDS_LABEL_STATS {ls}\n\
         #define WF_NEEDS_NEIGHBOR_DEGREE {nd}\n\
         #define WF_NEEDS_LABELS {labels}\n\
         #define WF_NEEDS_TIMES {times}\n\
         #define WF_ANONYMOUS {anon}\n\
         static const char* WF_PROP_NAMES[{np}] = {{{prop_names}}};\n\n\
         {main}",
        name = program.name,
        source = walk_source(program, info),
        params = init.join(", "),
        r = cost.0,
        f = cost.1,
        ws = req.weight_stats as u8,
        ls = req.label_stats as u8,
        nd = req.neighbor_degree as u8,
        labels = reads(StepField::Label) as u8,
        times = reads(StepField::Time) as u8,
        anon = anonymous as u8,
        np = names.len().max(1),
        prop_names = if names.is_empty() { "\"\"".to_string() } else { names.join(", ") },
        main = STANDALONE_MAIN,
    )
}
