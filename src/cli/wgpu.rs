//! Walks on the wgpu backend, for `walk --backend wgpu` (cargo feature `wgpu`).

use super::*;

/// What a walk run on the wgpu backend needs from the command line.
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))]
pub(crate) struct WgpuWalk<'a> {
    pub(crate) program: &'a wayfarer_compiler::ir::Program,
    pub(crate) info: &'a wayfarer_compiler::WalkInfo,
    pub(crate) values: &'a [wayfarer_compiler::eval::ParamValue],
    pub(crate) name: &'a str,
    pub(crate) anonymous: bool,
}

/// Runs a walk on the wgpu backend, handing each batch to `sink`.
#[cfg(feature = "wgpu")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn wgpu_walks(
    w: WgpuWalk,
    g: &CsrGraph,
    starts: &Starts,
    length: u32,
    seed: u64,
    sampler: SamplerMode,
    cost_ratio: CostRatio,
    sink: &mut dyn FnMut(wayfarer::Walks) -> Result<(), wayfarer::GraphError>,
) -> Result<(wayfarer::RunReport, String)> {
    let cost = match cost_ratio {
        CostRatio::Default => None,
        CostRatio::Cached | CostRatio::Profile => bail!("--cost-ratio profile is not available on the wgpu backend; give R,F"),
        CostRatio::Fixed(r) => Some(wayfarer::engine::CostModel::uniform(r, 0.0)),
        CostRatio::Model(m) => Some(m),
    };
    eprintln!(
        "warning: the wgpu backend samples with uniform proposals only (eRJS, eRVS); the walks follow the same \
         distribution as the CPU's, not the same walks for a seed (decisions in f32)"
    );
    let dev = wayfarer::wgpu::WgpuDevice::open()?;
    let anonymous = w.anonymous;
    let (report, rep) = wayfarer::wgpu::run_program_streaming(
        &dev,
        w.program,
        w.info,
        w.values,
        w.name,
        g,
        starts,
        length,
        seed,
        sampler,
        cost,
        &mut |batch| Ok(sink(if anonymous { batch.to_anonymous() } else { batch })?),
    )?;
    let name = format!(
        "wgpu ({}, {} {}, {} kernel, kernel {:.3} ms ({}), upload {:.3} s, end-to-end {:.3} s, {} batch{})",
        dev.name,
        dev.backend,
        dev.device_type,
        rep.kernel.map_or("plain", wayfarer::wgpu::Kernel::name),
        rep.kernel_seconds * 1e3,
        match rep.kernel_timer {
            wayfarer::wgpu::KernelTimer::Timestamps => "GPU timestamps",
            wayfarer::wgpu::KernelTimer::HostWait => "host wait",
        },
        rep.upload_seconds,
        rep.total_seconds,
        rep.batches,
        if rep.batches == 1 { "" } else { "es" }
    );
    Ok((report, name))
}

#[cfg(not(feature = "wgpu"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn wgpu_walks(
    _: WgpuWalk,
    _: &CsrGraph,
    _: &Starts,
    _: u32,
    _: u64,
    _: SamplerMode,
    _: CostRatio,
    _: &mut dyn FnMut(wayfarer::Walks) -> Result<(), wayfarer::GraphError>,
) -> Result<(wayfarer::RunReport, String)> {
    bail!("--backend wgpu: this wayfarer was built without the `wgpu` feature (cargo build --release --features wgpu)")
}
