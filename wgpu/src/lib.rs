//! The portable GPU backend of wayfarer: walks lowered to a `naga::Module` (see [`lower`]),
//! validated by naga, run through wgpu on Vulkan, Metal or DX12 (and on a CPU through Mesa's
//! lavapipe, which is how CI runs it).
//!
//! One invocation runs one walker; samplers and walk loop are `kernels/walk.wgsl`. What
//! differs from the CUDA backend, loudly:
//! - decisions are made in `f32`, so walks match the CPU's in distribution (tested by
//!   chi-square), not walk for walk;
//! - eRVS is one invocation's sequential pass over the row (with jumps), not a warp's;
//! - graphs are limited to `2^32 - 1` edge entries and to the adapter's largest storage
//!   binding; queries per run to `2^32 - 1`; walks that use `f64` need `SHADER_F64`.

pub mod lower;
mod probe;

use std::time::Instant;
use wayfarer_compiler::analysis::WalkInfo;
use wayfarer_compiler::eval::{ParamValue, Value};
use wayfarer_compiler::ir::{ParamType, Program, Scalar};
use wayfarer_runtime::engine::{CostModel, SHORT_ROW, SamplerStats};
use wayfarer_runtime::{CsrGraph, NodeStats, Requirements, SamplerMode, Starts, WalkError, Walks};
use wgpu::util::DeviceExt;

pub use lower::{Kernel, LowerError, Lowered};

/// Bindings of the walk kernel (group 0; see kernels/walk.wgsl).
const NUM_BINDINGS: u32 = 12;

/// Errors of the wgpu backend.
#[derive(Debug, thiserror::Error)]
pub enum WgpuError {
    /// No adapter, or none that can run walks.
    #[error("the wgpu backend is unavailable: {0}")]
    Unavailable(String),
    /// Lowering or writing the shader failed (a wayfarer bug).
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// The device reported an error.
    #[error("wgpu device error: {0}")]
    Device(String),
    /// The run does not fit the backend's limits.
    #[error("{0}")]
    TooLarge(String),
    /// The walk or its inputs are wrong.
    #[error(transparent)]
    Walk(#[from] WalkError),
    /// Writing the walks failed.
    #[error(transparent)]
    Output(#[from] wayfarer_runtime::GraphError),
}

/// A wgpu adapter with a device and queue.
pub struct WgpuDevice {
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// The adapter's name (e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`, `NVIDIA H200`).
    pub name: String,
    /// The graphics API wgpu drives it through (Vulkan, Metal, Dx12).
    pub backend: String,
    /// Discrete, integrated, CPU, ...
    pub device_type: String,
    f64: bool,
    subgroups: bool,
    /// Whether the device writes timestamps around compute passes (the kernel timer).
    timestamps: bool,
    limits: wgpu::Limits,
    /// The kernel [`WgpuDevice::compile`] builds (`None`: the best one the adapter and walk allow).
    kernel: std::cell::Cell<Option<Kernel>>,
    /// The workgroup kernel's threshold: eRVS over rows of this many edges or more is shared.
    shared_row: std::cell::Cell<u32>,
}

/// Rows of at least this many edges get the whole workgroup for an eRVS step in the
/// workgroup kernel (one item per invocation and more: below it, most invocations would idle).
pub const DEFAULT_SHARED_ROW: u32 = 64;

impl WgpuDevice {
    /// Opens the first high-performance adapter on Vulkan, Metal or DX12; with
    /// `WAYFARER_WGPU_ADAPTER=text`, the first whose name contains `text`.
    pub fn open() -> Result<Self, WgpuError> {
        let kernel = match std::env::var("WAYFARER_WGPU_KERNEL") {
            Ok(name) => Some(Kernel::ALL.into_iter().find(|k| k.name() == name).ok_or_else(|| {
                WgpuError::Unavailable(format!("WAYFARER_WGPU_KERNEL={name}: the wgpu kernels are plain, subgroup and workgroup"))
            })?),
            Err(_) => None,
        };
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::PRIMARY,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapter = match std::env::var("WAYFARER_WGPU_ADAPTER") {
            Ok(want) => {
                let all = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
                let names: Vec<String> = all.iter().map(|a| a.get_info().name).collect();
                all.into_iter().find(|a| a.get_info().name.contains(&want)).ok_or_else(|| {
                    WgpuError::Unavailable(format!("no adapter named like `{want}` (WAYFARER_WGPU_ADAPTER); found {names:?}"))
                })?
            }
            Err(_) => pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            }))
            .map_err(|e| {
                WgpuError::Unavailable(format!(
                    "{e} (no Vulkan, Metal or DX12 adapter; on Linux without a GPU, Mesa's lavapipe: apt-get install mesa-vulkan-drivers libvulkan1)"
                ))
            })?,
        };
        let info = adapter.get_info();
        let f64 = adapter.features().contains(wgpu::Features::SHADER_F64);
        let subgroups = adapter.features().contains(wgpu::Features::SUBGROUP);
        let mut required_features = wgpu::Features::empty();
        if f64 {
            required_features |= wgpu::Features::SHADER_F64;
        }
        if subgroups {
            required_features |= wgpu::Features::SUBGROUP;
        }
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        if timestamps {
            required_features |= wgpu::Features::TIMESTAMP_QUERY;
        }
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("wayfarer"),
            required_features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| WgpuError::Unavailable(format!("{}: {e}", info.name)))?;
        Ok(WgpuDevice {
            device,
            queue,
            name: info.name,
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            f64,
            subgroups,
            timestamps,
            limits,
            kernel: std::cell::Cell::new(kernel),
            shared_row: std::cell::Cell::new(DEFAULT_SHARED_ROW),
        })
    }

    /// Whether the adapter has subgroup operations (the [`Kernel::Subgroup`] kernel).
    pub fn has_subgroups(&self) -> bool {
        self.subgroups
    }

    /// Makes [`WgpuDevice::compile`] build `kernel` (`None`: the best one the adapter and
    /// walk allow; `WAYFARER_WGPU_KERNEL=plain|subgroup|workgroup` sets it when the device is opened).
    pub fn set_kernel(&self, kernel: Option<Kernel>) {
        self.kernel.set(kernel);
    }

    /// Sets the workgroup kernel's threshold: an eRVS step over a row of at least `edges` edges
    /// is served by the whole workgroup, a shorter one by its own invocation (default
    /// [`DEFAULT_SHARED_ROW`]). Walks are exact either way; the value changes which walks a
    /// seed gives, and the speed.
    pub fn set_shared_row(&self, edges: u32) {
        self.shared_row.set(edges);
    }

    /// The kernel `compile` builds for `program`.
    pub fn kernel_for(&self, program: &Program) -> Result<Kernel, WgpuError> {
        match self.kernel.get() {
            Some(Kernel::Subgroup) if !self.subgroups => {
                Err(WgpuError::Unavailable(format!("{} has no subgroup operations (the subgroup kernel)", self.name)))
            }
            Some(Kernel::Subgroup) if !Kernel::Subgroup.supports(program) => Err(WgpuError::Unavailable(format!(
                "walk `{}` keeps f64 or bool state, which the subgroup kernel cannot shuffle",
                program.name
            ))),
            Some(k) => Ok(k),
            None if self.subgroups && Kernel::Subgroup.supports(program) => Ok(Kernel::Subgroup),
            None => Ok(Kernel::Workgroup),
        }
    }

    /// Lowers `program` and builds its compute pipeline.
    pub fn compile(&self, program: &Program, info: &WalkInfo) -> Result<CompiledWalk, WgpuError> {
        let t0 = Instant::now();
        let kernel = self.kernel_for(program)?;
        let lowered = lower::lower_for(program, info, kernel)?;
        if lowered.uses_f64 && !self.f64 {
            return Err(WgpuError::Unavailable(format!(
                "walk `{}` computes with f64 (draws, times or f64 values) and {} has no SHADER_F64",
                program.name, self.name
            )));
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&program.name),
            source: wgpu::ShaderSource::Naga(std::borrow::Cow::Owned(lowered.module.clone())),
        });
        // An explicit layout: the automatic one leaves out bindings the walk never reads.
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        };
        let entries: Vec<wgpu::BindGroupLayoutEntry> = (0..NUM_BINDINGS)
            .map(|b| match b {
                8 => entry(b, wgpu::BufferBindingType::Uniform),
                10 | 11 => entry(b, wgpu::BufferBindingType::Storage { read_only: false }),
                _ => entry(b, wgpu::BufferBindingType::Storage { read_only: true }),
            })
            .collect();
        let bind_layout =
            self.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some("wayfarer walk"), entries: &entries });
        let layout = self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("wayfarer walk"),
            bind_group_layouts: &[Some(&bind_layout)],
            immediate_size: 0,
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&program.name),
            layout: Some(&layout),
            module: &module,
            entry_point: Some(kernel.entry_point()),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(WgpuError::Device(format!("building the pipeline of `{}`: {e}", program.name)));
        }
        Ok(CompiledWalk {
            kernel,
            pipeline,
            bind_layout,
            requirements: wayfarer_compiler::analysis::requirements(info),
            props: program.props.clone(),
            name: program.name.clone(),
            compile_seconds: t0.elapsed().as_secs_f64(),
        })
    }
}

/// A walk's compute pipeline on one device.
pub struct CompiledWalk {
    /// The kernel it runs.
    pub kernel: Kernel,
    pipeline: wgpu::ComputePipeline,
    bind_layout: wgpu::BindGroupLayout,
    requirements: Requirements,
    props: Vec<String>,
    name: String,
    /// Seconds to lower, validate and build the pipeline.
    pub compile_seconds: f64,
}

/// How to run a walk.
#[derive(Clone, Debug)]
pub struct WgpuRun<'a> {
    /// Steps per walk.
    pub length: u32,
    /// The seed.
    pub seed: u64,
    /// Sampler policy.
    pub sampler: SamplerMode,
    /// The adaptive rule's cost model.
    pub cost: CostModel,
    /// Where walkers start.
    pub starts: &'a Starts,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct WgpuReport {
    /// Walkers run.
    pub walkers: u64,
    /// Moves made.
    pub steps: u64,
    /// Seconds the walk kernels ran (all batches): the GPU's timestamps around the compute
    /// pass where the adapter writes them (`kernel_timer`), else from submitting a batch's
    /// pass to the queue's going idle.
    pub kernel_seconds: f64,
    /// How `kernel_seconds` was measured.
    pub kernel_timer: KernelTimer,
    /// Seconds copying the graph and per-node arrays to the device (before the first batch).
    pub upload_seconds: f64,
    /// Seconds in all (uploads, per-node arrays, kernels, readback, the sink).
    pub total_seconds: f64,
    /// Seconds computing the per-node arrays (on the host).
    pub precompute_seconds: f64,
    /// Batches the queries were split into (output buffer limits).
    pub batches: usize,
    /// Sampler counters.
    pub stats: SamplerStats,
    /// The kernel that ran.
    pub kernel: Option<Kernel>,
}

/// How a [`WgpuReport`]'s kernel time was measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KernelTimer {
    /// GPU timestamps written at the start and end of the compute pass.
    #[default]
    Timestamps,
    /// Host time from submitting the pass to the queue's going idle (adapters without
    /// timestamp queries): includes submission and wake-up latency.
    HostWait,
}

/// The hyperparameter words (see [`lower::param_offsets`]).
fn param_words(program: &Program, values: &[ParamValue]) -> Result<Vec<u32>, WgpuError> {
    let mut out = Vec::new();
    let mut unrepresentable = None;
    let mut push = |v: Value, t: Scalar| match (t, v) {
        (Scalar::F64, v) => match lower::split_f64(v.as_f64()) {
            Some(parts) => out.extend(parts.map(f32::to_bits)),
            None => unrepresentable = Some(v.as_f64()),
        },
        (Scalar::F32, v) => out.push((v.as_f64() as f32).to_bits()),
        (Scalar::I32, Value::I32(x)) => out.push(x as u32),
        (Scalar::U32, Value::U32(x)) => out.push(x),
        (Scalar::Bool, Value::Bool(b)) => out.push(b as u32),
        (t, v) => unreachable!("parameter value {v:?} does not have type {t:?}"),
    };
    for (p, v) in program.params.iter().zip(values) {
        match (p.ty, v) {
            (ParamType::Scalar(t), ParamValue::Scalar(x)) => push(*x, t),
            (ParamType::Array(t, n), ParamValue::Array(xs)) => {
                for i in 0..n {
                    push(xs.get(i).copied().unwrap_or_else(|| wayfarer_compiler::eval::zero_of(t)), t);
                }
            }
            _ => unreachable!("parameter shape checked by the caller"),
        }
    }
    if let Some(x) = unrepresentable {
        return Err(WalkError::Config(format!(
            "walk `{}`: the f64 parameter value {x} is outside what the wgpu backend carries exactly (|x| from about 1e-30 to 3.4e38, or 0)",
            program.name
        ))
        .into());
    }
    if out.is_empty() {
        out.push(0);
    }
    Ok(out)
}

fn words_of<T: bytemuck::Pod>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// Runs `walk` with parameter `values` on `graph`, handing the walks to `sink` in query
/// order, batch by batch.
pub fn run_streaming(
    dev: &WgpuDevice,
    walk: &CompiledWalk,
    graph: &CsrGraph,
    values: &[ParamValue],
    program: &Program,
    cfg: &WgpuRun,
    sink: &mut dyn FnMut(Walks) -> Result<(), WgpuError>,
) -> Result<WgpuReport, WgpuError> {
    let t0 = Instant::now();
    let n = graph.num_nodes();
    let m = graph.num_edges();
    if m >= u32::MAX as u64 || n as u64 >= u32::MAX as u64 {
        return Err(WgpuError::TooLarge(format!(
            "the wgpu backend indexes edges with 32 bits: {m} edge entries are too many (use --backend cuda or cpu)"
        )));
    }
    let total = cfg.starts.count(n);
    if total >= u32::MAX as u64 {
        return Err(WgpuError::TooLarge(format!("{total} walkers: the wgpu backend runs fewer than 2^32 per call")));
    }
    let (first_query, per_node, explicit): (u64, bool, &[u32]) = match cfg.starts {
        Starts::EveryNode { .. } => (0, true, &[]),
        Starts::Nodes(v) => (0, false, v.as_slice()),
        Starts::Shard { of, first, count } => match of.as_ref() {
            Starts::Nodes(v) => (0, false, &v[*first as usize..(*first + *count) as usize]),
            _ => (*first, true, &[]),
        },
    };
    if first_query + total >= u32::MAX as u64 {
        return Err(WgpuError::TooLarge("query indices beyond 2^32: the wgpu backend cannot run this shard".into()));
    }
    if n == 0 && per_node && total > 0 {
        return Err(WalkError::Config("the graph has no nodes".into()).into());
    }

    // Per-node arrays on the host (the CPU engine's, so bounds agree).
    let tp = Instant::now();
    let weighted = graph.weights().is_some();
    let stats = NodeStats::compute(graph, walk.requirements, weighted);
    let mut node_f32: Vec<f32> = Vec::new();
    let mut node_u32: Vec<u32> = Vec::new();
    let nf = |v: &Vec<f32>| if v.is_empty() { vec![0.0; n] } else { v.clone() };
    node_f32.extend(nf(&stats.weight_max));
    let nf_wmin = node_f32.len() as u32;
    node_f32.extend(nf(&stats.weight_min));
    let nf_wsum = node_f32.len() as u32;
    node_f32.extend(nf(&stats.weight_sum));
    let nf_label_max = node_f32.len() as u32;
    node_f32.extend(stats.labels.iter().map(|l| l.max));
    let nf_label_sum = node_f32.len() as u32;
    node_f32.extend(stats.labels.iter().map(|l| l.sum));
    let nf_props = node_f32.len() as u32;
    for name in &walk.props {
        match graph.node_property(name) {
            Some(p) => node_f32.extend_from_slice(p),
            None => node_f32.extend(std::iter::repeat_n(0.0, n)),
        }
    }
    node_f32.push(0.0);
    let nu = |v: &Vec<u32>| if v.is_empty() { vec![0; n] } else { v.clone() };
    node_u32.extend(nu(&stats.neighbor_degree_max));
    let nu_nbr_min = node_u32.len() as u32;
    node_u32.extend(nu(&stats.neighbor_degree_min));
    let nu_label_count = node_u32.len() as u32;
    node_u32.extend(stats.labels.iter().map(|l| l.count));
    node_u32.push(0);
    let offsets: Vec<u32> = graph.offsets().iter().map(|&o| o as u32).collect();
    let times: Vec<f32> = match graph.timestamps() {
        Some(t) if program.reads(wayfarer_compiler::ir::StepField::Time) => {
            // i64 times are integers below 2^63: always within the split's range.
            t.iter().flat_map(|&x| lower::split_f64(x as f64).unwrap_or([x as f32, 0.0, 0.0])).collect()
        }
        _ => vec![0.0; 3],
    };
    let precompute_seconds = tp.elapsed().as_secs_f64();

    let max_binding = dev.limits.max_storage_buffer_binding_size as u64;
    let big = |what: &str, bytes: u64| -> Result<(), WgpuError> {
        if bytes > max_binding {
            return Err(WgpuError::TooLarge(format!(
                "{what} take {bytes} bytes, more than {} allows in one storage binding ({max_binding} bytes)",
                dev.name
            )));
        }
        Ok(())
    };
    big("the graph's targets", m * 4)?;
    big("the per-node arrays", node_f32.len() as u64 * 4)?;
    big("the edge times", times.len() as u64 * 4)?;
    let d = &dev.device;
    let scope = d.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let storage = |label: &str, bytes: &[u8]| {
        let pad;
        let contents = if bytes.len() < 4 {
            pad = [0u8; 4];
            &pad[..]
        } else {
            bytes
        };
        d.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage: wgpu::BufferUsages::STORAGE })
    };
    let b_offsets = storage("offsets", words_of(&offsets));
    let b_targets = storage("targets", words_of(graph.targets()));
    let b_weights = storage("weights", graph.weights().map_or(&[0u8; 4][..], |w| words_of(w)));
    let b_labels = storage("labels", graph.labels().map_or(&[0u8; 4][..], |l| words_of(l)));
    let b_times = storage("times", words_of(&times));
    let b_nf = storage("node_f32", words_of(&node_f32));
    let b_nu = storage("node_u32", words_of(&node_u32));
    let b_params = storage("params", words_of(&param_words(program, values)?));
    drop((offsets, node_f32, node_u32, times));

    let stride = cfg.length as u64 + 1;
    // A batch's walks and lengths must fit one storage binding and one buffer.
    let max_out = max_binding.min(dev.limits.max_buffer_size) / 4;
    let batch = ((max_out / (stride + 1)).max(1)).min(total.max(1));
    if stride + 1 > max_out {
        return Err(WgpuError::TooLarge(format!("walks of length {} do not fit one storage binding", cfg.length)));
    }
    let (mode, cost) = match cfg.sampler {
        SamplerMode::Adaptive => (0u32, cfg.cost),
        SamplerMode::Rejection => (1, CostModel::default()),
        SamplerMode::Reservoir => (2, CostModel::default()),
        other => {
            return Err(WalkError::Config(format!("the wgpu backend runs the adaptive, eRJS and eRVS samplers, not {other}")).into());
        }
    };
    let mut report = WgpuReport { walkers: total, precompute_seconds, kernel: Some(walk.kernel), ..Default::default() };
    let counters_len = 8 + 64 * 8;
    let b_counters = d.create_buffer(&wgpu::BufferDescriptor {
        label: Some("counters"),
        size: counters_len * 4,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let b_counters_read = d.create_buffer(&wgpu::BufferDescriptor {
        label: Some("counters readback"),
        size: counters_len * 4,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(WgpuError::Device(format!("uploading the graph to {}: {e}", dev.name)));
    }
    // The uploads above are queued writes: finish them here, so that the first batch's kernel
    // time is the kernel's.
    let tu = Instant::now();
    dev.queue.submit([]);
    d.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| WgpuError::Device(e.to_string()))?;
    report.upload_seconds = tu.elapsed().as_secs_f64();
    report.kernel_timer = if dev.timestamps { KernelTimer::Timestamps } else { KernelTimer::HostWait };
    let timer = dev.timestamps.then(|| {
        let set = d.create_query_set(&wgpu::QuerySetDescriptor { label: Some("walk timer"), ty: wgpu::QueryType::Timestamp, count: 2 });
        let resolve = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("walk timer resolve"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("walk timer readback"),
            size: 16,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        (set, resolve, read)
    });
    let mut done = 0u64;
    while done < total {
        let count = batch.min(total - done);
        let out_words = count * (stride + 1);
        let args: [u32; 24] = [
            n as u32,
            count as u32,
            (first_query + done) as u32,
            cfg.length,
            cfg.seed as u32,
            (cfg.seed >> 32) as u32,
            mode,
            per_node as u32,
            (cost.ratio as f32).to_bits(),
            (cost.fixed as f32).to_bits(),
            (cost.ratio_short as f32).to_bits(),
            SHORT_ROW as u32,
            weighted as u32,
            graph.labels().is_some() as u32,
            stats.label_k,
            nf_wmin,
            nf_wsum,
            nf_label_max,
            nf_label_sum,
            nf_props,
            nu_nbr_min,
            nu_label_count,
            dev.shared_row.get(),
            0,
        ];
        let scope = d.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = d.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let b_args = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("args"),
            contents: words_of(&args),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let starts_slice = if per_node { &[0u32][..] } else { &explicit[done as usize..(done + count) as usize] };
        let b_starts = storage("starts", words_of(starts_slice));
        let b_out = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("walks"),
            size: out_words * 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let b_read = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("walks readback"),
            size: out_words * 4,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let entries: Vec<wgpu::BindGroupEntry> =
            [&b_offsets, &b_targets, &b_weights, &b_labels, &b_times, &b_nf, &b_nu, &b_params, &b_args, &b_starts, &b_out, &b_counters]
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
                .collect();
        let group = d.create_bind_group(&wgpu::BindGroupDescriptor { label: Some("walk"), layout: &walk.bind_layout, entries: &entries });
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("walk") });
        enc.clear_buffer(&b_counters, 0, None);
        {
            let timestamp_writes = timer.as_ref().map(|(set, _, _)| wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            });
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("walk"), timestamp_writes });
            pass.set_pipeline(&walk.pipeline);
            pass.set_bind_group(0, &group, &[]);
            let groups = count.div_ceil(64).min(dev.limits.max_compute_workgroups_per_dimension as u64).max(1);
            pass.dispatch_workgroups(groups as u32, 1, 1);
        }
        let mut enc = match &timer {
            // The pass's timestamps, resolved and copied with the results.
            Some((set, resolve, read)) => {
                enc.resolve_query_set(set, 0..2, resolve, 0);
                enc.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
                enc
            }
            // Without them, the pass alone, timed from submit to idle; then the copies.
            None => {
                let tk = Instant::now();
                dev.queue.submit([enc.finish()]);
                d.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| WgpuError::Device(e.to_string()))?;
                report.kernel_seconds += tk.elapsed().as_secs_f64();
                d.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("walk readback") })
            }
        };
        enc.copy_buffer_to_buffer(&b_out, 0, &b_read, 0, out_words * 4);
        enc.copy_buffer_to_buffer(&b_counters, 0, &b_counters_read, 0, counters_len * 4);
        dev.queue.submit([enc.finish()]);
        if let Some((_, _, read)) = &timer {
            let t = read_back(d, read)?;
            let ticks = (u64::from(t[3]) << 32 | u64::from(t[2])).saturating_sub(u64::from(t[1]) << 32 | u64::from(t[0]));
            report.kernel_seconds += ticks as f64 * f64::from(dev.queue.get_timestamp_period()) * 1e-9;
        }
        if let Some(e) = pollster::block_on(oom.pop()) {
            return Err(WgpuError::Device(format!("{}: {e}", dev.name)));
        }
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(WgpuError::Device(format!("running `{}` on {}: {e}", walk.name, dev.name)));
        }
        let out = read_back(d, &b_read)?;
        let counters = read_back(d, &b_counters_read)?;
        let at = (count * stride) as usize;
        // Every query the kernel ran has a length of at least 1: a 0 is one it never reached.
        if counters[0] == 3 || out[at..].contains(&0) {
            return Err(WgpuError::Device(format!(
                "{} ended walk loops early (at query {}, step {}) without an error of its own; \
                 Mesa's llvmpipe / lavapipe stops a shader's loops after 65,535 iterations in all: \
                 run shorter walks there, or on a GPU",
                dev.name,
                if counters[0] == 3 {
                    u64::from(counters[1])
                } else {
                    first_query + done + out[at..].iter().position(|&l| l == 0).unwrap_or(0) as u64
                },
                counters[2]
            )));
        }
        if counters[0] != 0 {
            let (code, step, edge) = (counters[0].into(), counters[2].into(), counters[3].into());
            let (weight, bound) = (f32::from_bits(counters[4]), f32::from_bits(counters[5]));
            return Err(WalkError::from_device_report(graph, &walk.name, code, step, edge, weight, bound).into());
        }
        let mut c = [0u64; 8];
        for slot in counters[8..].chunks(8) {
            for (k, x) in slot.iter().enumerate() {
                c[k] += *x as u64;
            }
        }
        report.stats.rejection_steps += c[0];
        report.stats.reservoir_steps += c[1];
        report.stats.rejection_trials += c[2];
        report.stats.rejection_fallbacks += c[3];
        report.stats.dead_ends += c[4];
        report.stats.stopped += c[5];
        report.steps += c[6];
        let walks = Walks { stride: stride as usize, nodes: out[..at].to_vec(), lengths: out[at..].to_vec(), edges: Vec::new() };
        sink(walks)?;
        report.batches += 1;
        done += count;
    }
    report.total_seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

fn read_back(d: &wgpu::Device, b: &wgpu::Buffer) -> Result<Vec<u32>, WgpuError> {
    let slice = b.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    d.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| WgpuError::Device(e.to_string()))?;
    rx.recv().map_err(|e| WgpuError::Device(e.to_string()))?.map_err(|e| WgpuError::Device(format!("reading results back: {e}")))?;
    let v = {
        let view = slice.get_mapped_range().map_err(|e| WgpuError::Device(e.to_string()))?;
        bytemuck::cast_slice::<u8, u32>(&view).to_vec()
    };
    b.unmap();
    Ok(v)
}
