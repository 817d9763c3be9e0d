//! The adaptive rule of the walk kernel, run alone: `wf_prefers_reservoir` and `wf_trial_cap`
//! cut out of `kernels/walk.cu` as they are, with the `WfRunArgs` struct they read, evaluated
//! on the device for a table of cases, so the rule the GPU decides with is pinned by the same
//! table as the CPU's, Cranelift's and wgpu's (`wayfarer_runtime::cost::ADAPTIVE_RULE_CASES`).

use crate::abi::WfRunArgs;
use crate::launch::{Launch, kernels};
use crate::{CudaDevice, CudaError};
use cudarc::driver::LaunchConfig;
use wayfarer_runtime::engine::{CostModel, SHORT_ROW};

/// The probe kernel (`kernels/tests/adaptive_probe.cu`).
pub const ADAPTIVE_PROBE: &str = include_str!("../kernels/tests/adaptive_probe.cu");

/// The item of the walk template that starts with `head`, through its closing brace.
fn item<'a>(source: &'a str, head: &str) -> Result<&'a str, CudaError> {
    wayfarer_compiler::template::braced_item(source, head).ok_or_else(|| CudaError::Unavailable(format!("kernels/walk.cu has no `{head}`")))
}

/// The probe's complete source: the prelude, the walk kernel's rule and its argument struct,
/// the probe kernel.
pub fn probe_source() -> Result<String, CudaError> {
    let w = crate::WALK_KERNEL;
    Ok(format!(
        "{}\n{};\n{}\n{}\n{ADAPTIVE_PROBE}",
        crate::codegen::PRELUDE,
        item(w, "struct WfRunArgs {")?,
        item(w, "__device__ __forceinline__ bool wf_prefers_reservoir(")?,
        item(w, "__device__ __forceinline__ u32 wf_trial_cap(")?,
    ))
}

impl CudaDevice {
    /// The walk kernel's adaptive rule on this GPU for `(d, B, Ŝ)` cases under `model`: (eRVS,
    /// trial cap) per case.
    pub fn adaptive_rule_probe(&self, model: CostModel, cases: &[(u32, f32, f32)]) -> Result<Vec<(bool, u32)>, CudaError> {
        if cases.is_empty() {
            return Ok(Vec::new());
        }
        let loaded = self.load_source("adaptive-probe", &probe_source()?, kernels::ADAPTIVE_PROBE.name)?;
        let f = loaded.module.load_function(kernels::ADAPTIVE_PROBE.name)?;
        let s = &self.stream;
        let args = WfRunArgs {
            ratio: model.ratio,
            fixed: model.fixed,
            ratio_short: model.ratio_short,
            short_row: SHORT_ROW as u32,
            ..Default::default()
        };
        let args = s.clone_htod(bytemuck::bytes_of(&args))?;
        let d = s.clone_htod(&cases.iter().map(|c| c.0).collect::<Vec<u32>>())?;
        let bound = s.clone_htod(&cases.iter().map(|c| c.1).collect::<Vec<f32>>())?;
        let estimate = s.clone_htod(&cases.iter().map(|c| c.2).collect::<Vec<f32>>())?;
        let n = cases.len() as u32;
        let answers = s.alloc_zeros::<u32>(2 * cases.len())?;
        // Every array holds n entries, `answers` 2n.
        Launch::new(s, &f, &kernels::ADAPTIVE_PROBE)
            .arg(&args)
            .arg(&d)
            .arg(&bound)
            .arg(&estimate)
            .arg(&n)
            .arg(&answers)
            .run(LaunchConfig { grid_dim: (n.div_ceil(128), 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 })?;
        let out = s.clone_dtoh(&answers)?;
        Ok(out.chunks(2).map(|a| (a[0] != 0, a[1])).collect())
    }
}
