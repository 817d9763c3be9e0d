//! `emit` and `explain`: a walk as a standalone CUDA file or shader, and as the compiler
//! sees it.

use super::*;

/// `wayfarer explain`'s arguments.
#[derive(Args)]
pub(crate) struct ExplainArgs {
    /// A library walk (deepwalk, node2vec, metapath, ppr2, ppr, ppr-stop, temporal,
    /// anonymous) or a `.rs` file with one `#[walk]` item.
    #[arg(value_name = "WALK", required_unless_present = "program")]
    pub(crate) walk: Option<String>,
    /// A file holding one `#[walk]` item (any extension), as `walk --program`.
    #[arg(long, value_name = "FILE", conflicts_with = "walk")]
    pub(crate) program: Option<PathBuf>,
}

/// `wayfarer emit`'s arguments.
#[derive(Args)]
pub(crate) struct EmitArgs {
    /// A library walk (as `wayfarer walk` takes them, `anonymous` included) or a `.rs` file
    /// with one `#[walk]` item.
    #[arg(value_name = "WALK", required_unless_present = "program")]
    pub(crate) walk: Option<String>,
    /// A file holding one `#[walk]` item (any extension), as `walk --program`.
    #[arg(long, value_name = "FILE", conflicts_with = "walk")]
    pub(crate) program: Option<PathBuf>,
    /// Where to write the `.cu` file (or the shader, with --wgsl / --spirv).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Write the wgpu backend's shader as WGSL instead (naga's rendering of the module
    /// `--backend wgpu` runs; the parameters stay run-time values).
    #[arg(long, conflicts_with = "spirv")]
    pub(crate) wgsl: bool,
    /// Write the wgpu backend's shader as SPIR-V (Vulkan 1.1) instead.
    #[arg(long)]
    pub(crate) spirv: bool,
    /// With --wgsl / --spirv: which of the wgpu backend's walk kernels (`--backend wgpu`
    /// picks subgroup where the adapter has subgroups and the walk's state is 32-bit,
    /// else workgroup).
    #[arg(long, value_parser = ["plain", "subgroup", "workgroup"], default_value = "plain")]
    pub(crate) kernel: String,
    /// Walk parameter `name=value` (repeatable), fixed in the emitted file.
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub(crate) params: Vec<String>,
    /// The adaptive rule's `R,F` (default: the GPU default).
    #[arg(long, value_name = "R[,F]")]
    pub(crate) cost_ratio: Option<String>,
}

/// What `wayfarer emit` writes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EmitTarget {
    /// A standalone `.cu` file.
    Cuda,
    /// The wgpu backend's WGSL.
    Wgsl,
    /// The wgpu backend's SPIR-V.
    Spirv,
}

#[cfg(feature = "wgpu")]
pub(crate) fn emit_shader(
    program: &wayfarer_compiler::ir::Program,
    info: &wayfarer_compiler::WalkInfo,
    mut out: AtomicFile,
    target: EmitTarget,
    kernel: &str,
) -> Result<()> {
    let output = out.path().to_path_buf();
    let kernel = wayfarer::wgpu::Kernel::ALL.into_iter().find(|k| k.name() == kernel).context("unknown wgpu kernel")?;
    let bytes = match target {
        EmitTarget::Wgsl => wayfarer::wgpu::emit_wgsl(program, info, kernel)?.into_bytes(),
        _ => wayfarer::wgpu::emit_spirv(program, info, kernel)?.iter().flat_map(|w| w.to_le_bytes()).collect(),
    };
    std::io::Write::write_all(&mut out, &bytes).with_context(|| output.display().to_string())?;
    out.commit()?;
    eprintln!(
        "wrote {} ({} walk, the wgpu backend's {} kernel as {}; validated by naga)",
        output.display(),
        program.name,
        kernel.name(),
        if target == EmitTarget::Wgsl { "WGSL" } else { "SPIR-V" }
    );
    Ok(())
}

#[cfg(not(feature = "wgpu"))]
pub(crate) fn emit_shader(
    _: &wayfarer_compiler::ir::Program,
    _: &wayfarer_compiler::WalkInfo,
    _: AtomicFile,
    _: EmitTarget,
    _: &str,
) -> Result<()> {
    bail!("--wgsl / --spirv: this wayfarer was built without the `wgpu` feature (cargo build --release --features wgpu)")
}

/// The walk `explain` and `emit` take: a library walk by name, or a program file (a `.rs`
/// WALK or `--program FILE`, any extension).
pub(crate) struct WalkSpec {
    pub(crate) name: String,
    pub(crate) file: bool,
}

impl WalkSpec {
    fn new(walk: Option<String>, program: Option<PathBuf>) -> Self {
        match (walk, program) {
            (_, Some(p)) => WalkSpec { name: p.to_string_lossy().into_owned(), file: true },
            (Some(w), None) => WalkSpec { file: w.ends_with(".rs"), name: w },
            (None, None) => unreachable!("clap requires one of WALK and --program"),
        }
    }

    /// The library walk whose `#[walk]` program `self` runs (`anonymous` is DeepWalk, written
    /// as first-visit indices).
    fn library_program(&self) -> Option<&'static str> {
        if self.file {
            return None;
        }
        match self.name.as_str() {
            "anonymous" => Some("deepwalk"),
            n => wayfarer::walks::NAMES.iter().copied().find(|&w| w == n),
        }
    }
}

pub(crate) fn cmd_emit(a: EmitArgs) -> Result<()> {
    let target = match (a.wgsl, a.spirv) {
        (true, _) => EmitTarget::Wgsl,
        (_, true) => EmitTarget::Spirv,
        _ => EmitTarget::Cuda,
    };
    let walk = &WalkSpec::new(a.walk, a.program);
    let (output, raw_params, cost, kernel) = (&a.output, &a.params, a.cost_ratio.as_deref(), a.kernel.as_str());
    let params = parse_params(raw_params)?;
    let out_file = AtomicFile::create(output)?;
    let anonymous = !walk.file && walk.name == "anonymous";
    let (source, path, values) = match walk.library_program() {
        Some(_) => {
            // Library walks validate and default their parameters as `wayfarer walk` does; an
            // empty graph that carries every edge attribute stands in for the real one.
            let parts = wayfarer::graph::CsrParts {
                offsets: vec![0, 0],
                labels: Some(Vec::new()),
                timestamps: Some(Vec::new()),
                weights: Some(Vec::new()),
                ..Default::default()
            };
            let g = CsrGraph::from_parts(parts, wayfarer::graph::Orientation::Directed)?;
            let w = LibraryWalk::from_name(&walk.name, &params, &g, false)?;
            let (src, values) = w.program().expect("library walks have programs");
            (src.to_string(), format!("walks/{}.rs", w.name().replace('-', "_")), values)
        }
        None if walk.file => {
            let src = std::fs::read_to_string(&walk.name).with_context(|| walk.name.clone())?;
            (src, walk.name.clone(), Vec::new())
        }
        None => bail!("`{}` is neither a library walk (`wayfarer walk --list`) nor a .rs file (or --program FILE)", walk.name),
    };
    let (program, info) = match wayfarer_compiler::compile_source(&source) {
        Ok(x) => x,
        Err(d) => {
            eprint!("{}", d.render(&source, &path));
            bail!("{path}: {} error{}", d.0.len(), if d.0.len() == 1 { "" } else { "s" })
        }
    };
    if let (Some(why), true) = (&info.fallback, info.bound.is_none()) {
        eprintln!("{}", super::walk::unbounded_warning(&program.name, why, &path));
    }
    if target != EmitTarget::Cuda {
        if anonymous {
            bail!("emit anonymous --wgsl/--spirv: the shader is DeepWalk's (`emit deepwalk`); first-visit indices are made on the host");
        }
        return emit_shader(&program, &info, out_file, target, kernel);
    }
    if kernel != "plain" {
        bail!("--kernel {kernel}: --kernel picks a wgpu kernel, for --wgsl or --spirv");
    }
    let values = if walk.file { wayfarer::gpu::program_values(&program, &params)? } else { values };
    let model = match gpu_cost(cost.map(parse_cost_ratio).transpose()?.unwrap_or_default()) {
        wayfarer::gpu::GpuCost::Fixed(m) => m,
        _ => wayfarer::gpu::GPU_COST_MODEL,
    };
    let (r, f) = (model.ratio, model.fixed);
    let cu = wayfarer_cuda::standalone_source(&program, &info, &values, (r, f), anonymous);
    let mut out_file = out_file;
    std::io::Write::write_all(&mut out_file, cu.as_bytes()).with_context(|| output.display().to_string())?;
    out_file.commit()?;
    // The standalone file builds no structured-proposal tables, so a walk with a plan gives
    // the CLI's walks only with the tables off.
    let tables_off = if info.proposal.as_ref().is_ok_and(|p| !p.plan().is_empty()) { " --table-budget 0" } else { "" };
    eprintln!(
        "wrote {} ({} walk{}; build with `nvcc -O3 -arch=sm_90 {} -o {}`; its walks are `wayfarer walk --backend cuda{tables_off}`'s)",
        output.display(),
        program.name,
        if anonymous { ", written as first-visit indices" } else { "" },
        output.display(),
        program.name
    );
    if !tables_off.is_empty() {
        eprintln!(
            "note: the standalone file has no structured-proposal tables (eRJS/eRVS only): the CLI's default walks of `{}` may use them",
            program.name
        );
    }
    Ok(())
}

pub(crate) fn cmd_explain(a: ExplainArgs) -> Result<()> {
    let walk = &WalkSpec::new(a.walk, a.program);
    let (source, path) = match walk.library_program() {
        Some(name) => {
            if walk.name == "anonymous" {
                println!("anonymous: DeepWalk's program, its walks written as first-visit indices (0 1 0 2 for a b a c)\n");
            }
            (wayfarer::walks::source(name).expect("a library walk").to_string(), format!("walks/{}.rs", name.replace('-', "_")))
        }
        None if walk.file => (std::fs::read_to_string(&walk.name).with_context(|| walk.name.clone())?, walk.name.clone()),
        None => bail!(
            "`{}` is neither a library walk written in the DSL (deepwalk, node2vec, metapath, ppr2, ppr, ppr-stop, temporal, anonymous) nor a .rs file (or --program FILE)",
            walk.name
        ),
    };
    match wayfarer_compiler::compile_source(&source) {
        Ok((f, info)) => {
            println!("{}", wayfarer_compiler::print::listing(&f));
            print!("{}", wayfarer_compiler::print::analysis(&f, &info));
            Ok(())
        }
        Err(d) => {
            eprint!("{}", d.render(&source, &path));
            bail!("{path}: {} error{}", d.0.len(), if d.0.len() == 1 { "" } else { "s" })
        }
    }
}
