//! Running walks through the portable GPU backend (`wayfarer-wgpu`: naga + wgpu, on Vulkan,
//! Metal or DX12; cargo feature `wgpu`).
//!
//! What differs from the CUDA backend is listed in [`wayfarer_wgpu`]: decisions in `f32` (the
//! same distribution, not the same walks as the CPU for a seed), one invocation per walker
//! (eRVS included), at most `2^32 - 1` edge entries.

use crate::{CsrGraph, RunReport, SamplerMode, Starts, Walks};
use wayfarer_compiler::eval::ParamValue;
use wayfarer_runtime::engine::CostModel;
pub use wayfarer_wgpu::{CompiledWalk, DEFAULT_SHARED_ROW, Kernel, KernelTimer, WgpuDevice, WgpuError, WgpuReport, WgpuRun};

/// The cost model the wgpu backend's adaptive rule uses when none is given: the CUDA
/// default's ratio (an eRJS trial against an edge of eRVS) with a smaller fixed cost, since
/// eRVS here is one invocation's pass with no warp to gather.
pub const WGPU_COST_MODEL: CostModel = CostModel { ratio: 4.0, fixed: 8.0, ratio_short: 4.0 };

/// Runs a compiled program, handing the walks to `sink` in query order, batch by batch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_program_streaming(
    dev: &WgpuDevice,
    program: &wayfarer_compiler::ir::Program,
    info: &wayfarer_compiler::WalkInfo,
    values: &[ParamValue],
    name: &str,
    graph: &CsrGraph,
    starts: &Starts,
    length: u32,
    seed: u64,
    sampler: SamplerMode,
    cost: Option<CostModel>,
    sink: &mut dyn FnMut(Walks) -> Result<(), WgpuError>,
) -> Result<(RunReport, WgpuReport), WgpuError> {
    crate::gpu::check_graph(program, graph)?;
    let compiled = dev.compile(program, info)?;
    let adaptive = sampler == SamplerMode::Adaptive;
    let cost = if adaptive { cost.unwrap_or(WGPU_COST_MODEL) } else { CostModel::uniform(1.0, 0.0) };
    let cfg = WgpuRun { length, seed, sampler, cost, starts };
    let rep = wayfarer_wgpu::run_streaming(dev, &compiled, graph, values, program, &cfg, sink)?;
    let report = RunReport {
        walk: name.into(),
        walkers: rep.walkers,
        steps: rep.steps,
        walk_seconds: rep.kernel_seconds,
        precompute_seconds: rep.precompute_seconds,
        profile_seconds: 0.0,
        cost,
        cost_ratio_source: if adaptive { "wgpu default" } else { "unused" },
        stats: rep.stats.clone(),
        threads: 0,
        sampler,
        compiled_turns: false,
        fast_path: Default::default(),
        proposal: unstructured_report(info),
        edge_filter_bytes: 0,
    };
    Ok((report, rep))
}

/// The walk's shader as WGSL (naga's rendering of the module the backend runs).
pub fn emit_wgsl(
    program: &wayfarer_compiler::ir::Program,
    info: &wayfarer_compiler::WalkInfo,
    kernel: Kernel,
) -> Result<String, WgpuError> {
    Ok(lower_kernel(program, info, kernel)?.wgsl()?)
}

fn lower_kernel(
    program: &wayfarer_compiler::ir::Program,
    info: &wayfarer_compiler::WalkInfo,
    kernel: Kernel,
) -> Result<wayfarer_wgpu::Lowered, WgpuError> {
    if !kernel.supports(program) {
        return Err(WgpuError::Unavailable(format!(
            "walk `{}` keeps f64 or bool state, which the {} kernel cannot shuffle",
            program.name,
            kernel.name()
        )));
    }
    Ok(wayfarer_wgpu::lower::lower_for(program, info, kernel)?)
}

/// The walk's shader as SPIR-V words.
pub fn emit_spirv(
    program: &wayfarer_compiler::ir::Program,
    info: &wayfarer_compiler::WalkInfo,
    kernel: Kernel,
) -> Result<Vec<u32>, WgpuError> {
    Ok(lower_kernel(program, info, kernel)?.spirv()?)
}

/// What the wgpu backend says about a walk's structured proposal plan: it has none of its own,
/// so a walk with a plan proposes uniformly there (said in every summary).
fn unstructured_report(info: &wayfarer_compiler::WalkInfo) -> wayfarer_runtime::engine::ProposalReport {
    match &info.proposal {
        Ok(_) => wayfarer_runtime::engine::ProposalReport::Skipped(
            "the wgpu backend proposes uniformly: structured proposals run on the CPU and CUDA only".into(),
        ),
        Err(_) => wayfarer_runtime::engine::ProposalReport::None,
    }
}
