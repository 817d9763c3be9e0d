//! The adaptive rule of the walk template, run alone: `wf_prefers_reservoir` and
//! `wf_trial_cap` cut out of `kernels/walk.wgsl` as they are, with the `WfArgs` struct they
//! read, and evaluated on the device for a table of cases, so the rule this backend decides
//! with is pinned by the same table as the CPU's, Cranelift's and CUDA's
//! (`wayfarer_runtime::cost::ADAPTIVE_RULE_CASES`).

use crate::{WgpuDevice, WgpuError, read_back, words_of};
use wayfarer_runtime::engine::{CostModel, SHORT_ROW};
use wgpu::util::DeviceExt;

/// The item of the walk template that starts with `head`, through its closing brace.
fn item<'a>(source: &'a str, head: &str) -> Result<&'a str, WgpuError> {
    wayfarer_compiler::template::braced_item(source, head)
        .ok_or_else(|| WgpuError::Unavailable(format!("kernels/walk.wgsl has no `{head}`")))
}

/// The probe shader: the template's rule, one invocation per case.
fn probe_source() -> Result<String, WgpuError> {
    let t = crate::lower::TEMPLATE;
    Ok(format!(
        "{}\n@group(0) @binding(0) var<uniform> args: WfArgs;\n\
         @group(0) @binding(1) var<storage, read> cases: array<vec4<u32>>;\n\
         @group(0) @binding(2) var<storage, read_write> answers: array<vec2<u32>>;\n{}\n{}\n\
         @compute @workgroup_size(64)\n\
         fn probe(@builtin(global_invocation_id) id: vec3<u32>) {{\n\
             if (id.x >= arrayLength(&cases)) {{ return; }}\n\
             let c = cases[id.x];\n\
             let reservoir = wf_prefers_reservoir(c.x, bitcast<f32>(c.y), bitcast<f32>(c.z));\n\
             answers[id.x] = vec2<u32>(select(0u, 1u, reservoir), wf_trial_cap(c.x));\n\
         }}\n",
        item(t, "struct WfArgs")?,
        item(t, "fn wf_prefers_reservoir(")?,
        item(t, "fn wf_trial_cap(")?,
    ))
}

impl WgpuDevice {
    /// The template's adaptive rule on this device for `(d, B, Ŝ)` cases under `model`: (eRVS,
    /// trial cap) per case, decided in `f32` as the walk kernels decide.
    pub fn adaptive_rule_probe(&self, model: CostModel, cases: &[(u32, f32, f32)]) -> Result<Vec<(bool, u32)>, WgpuError> {
        if cases.is_empty() {
            return Ok(Vec::new());
        }
        let d = &self.device;
        let src = probe_source()?;
        let naga_module = naga::front::wgsl::parse_str(&src)
            .map_err(|e| WgpuError::Device(format!("the adaptive-rule probe does not parse: {}", e.emit_to_string(&src))))?;
        let scope = d.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = d.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("adaptive rule probe"),
            source: wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(naga_module)),
        });
        let pipeline = d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("adaptive rule probe"),
            layout: None,
            module: &module,
            entry_point: Some("probe"),
            compilation_options: Default::default(),
            cache: None,
        });
        // WfArgs: the cost model's words in place, the rest unread.
        let mut args = [0u32; 24];
        args[8] = (model.ratio as f32).to_bits();
        args[9] = (model.fixed as f32).to_bits();
        args[10] = (model.ratio_short as f32).to_bits();
        args[11] = SHORT_ROW as u32;
        let words: Vec<u32> = cases.iter().flat_map(|&(d, b, s)| [d, b.to_bits(), s.to_bits(), 0]).collect();
        let b_args = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("probe args"),
            contents: words_of(&args),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let b_cases = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("probe cases"),
            contents: words_of(&words),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let size = cases.len() as u64 * 8;
        let b_out = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("probe answers"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let b_read = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("probe readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let layout = pipeline.get_bind_group_layout(0);
        let group = d.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("probe"),
            layout: &layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: b_args.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: b_cases.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: b_out.as_entire_binding() },
            ],
        });
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("probe") });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("probe"), timestamp_writes: None });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups((cases.len() as u32).div_ceil(64), 1, 1);
        }
        enc.copy_buffer_to_buffer(&b_out, 0, &b_read, 0, size);
        self.queue.submit([enc.finish()]);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(WgpuError::Device(format!("the adaptive-rule probe: {e}")));
        }
        let out = read_back(d, &b_read)?;
        Ok(out.chunks(2).map(|a| (a[0] != 0, a[1])).collect())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_probe_cuts_the_rule_out_of_the_template() {
        let src = super::probe_source().unwrap();
        assert!(src.contains("fn wf_prefers_reservoir(d: u32, bound: f32, estimate: f32) -> bool {"), "{src}");
        assert!(src.contains("fn wf_trial_cap(d: u32) -> u32 {"), "{src}");
        naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{}\n{src}", e.emit_to_string(&src)));
    }
}
