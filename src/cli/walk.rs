//! `wayfarer walk`: library walks and program files through one path, on every backend, with
//! one output behaviour (streamed to `-o`, or a preview).

use crate::procs::Procs;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;
use wayfarer::gpu::Backend;
use wayfarer::library::LibraryWalk;
use wayfarer::output::{AtomicFile, IdSpace, WalkWriter};
use wayfarer::{CostRatio, CsrGraph, GraphError, SamplerMode, Starts, WalkError, Walks};

#[derive(Args)]
pub(crate) struct WalkArgs {
    /// A built-in walk (`#[walk]` programs in walks/): deepwalk, node2vec, metapath, ppr2,
    /// ppr, ppr-stop, temporal, anonymous; a hand-written reference: deepwalk-ref,
    /// node2vec-ref, metapath-ref, ppr2-ref; or a `.rs` file holding one `#[walk]` item
    /// (compiled at run time: CUDA on the GPU, Cranelift on the CPU).
    #[arg(value_name = "WALK")]
    pub(crate) name: Option<String>,
    /// A file holding one `#[walk]` item, compiled at run time (Cranelift on the CPU, CUDA on
    /// the GPU): the same as giving a `.rs` file as WALK, whatever the file's extension.
    #[arg(long, value_name = "FILE", conflicts_with = "name")]
    pub(crate) program: Option<PathBuf>,
    /// List the library walks with their parameters and defaults.
    #[arg(long)]
    pub(crate) list: bool,
    /// The walk given: `name`, or `program`'s path (set by `cmd_walk`, which also says what
    /// to give when neither is).
    #[arg(skip)]
    pub(crate) walk: String,
    /// The graph (.wfg, .mtx or edge list); omit for the embedded WordNet graph.
    #[arg(long)]
    pub(crate) graph: Option<PathBuf>,
    /// Steps per walk (a walk holds length + 1 nodes). Default 80 (metapath: schema length).
    #[arg(long)]
    pub(crate) length: Option<u32>,
    /// Walk parameter `name=value` (repeatable), e.g. -p a=2 -p b=0.5, -p schema=0,1,2.
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub(crate) params: Vec<String>,
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Output: .npy (a walks x (length + 1) matrix of uint32, or uint64 where an original id
    /// needs it, padded after early-ended walks with the dtype's maximum, 4294967295 or
    /// 2^64 - 1, which no node id can be) or .txt (one walk per line). Written under a
    /// temporary name and renamed when complete. Without -o the first walks are printed.
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Walkers per node (one query per node per round).
    #[arg(long, default_value_t = 1)]
    pub(crate) walks_per_node: u32,
    /// Start one walker per listed node instead of one per node: a text file with an original
    /// node id per line (`#` comments) or a .npy of integer ids (e.g. `wayfarer partition
    /// --order`).
    #[arg(long, value_name = "FILE", conflicts_with = "walks_per_node")]
    pub(crate) starts: Option<PathBuf>,
    /// Ignore the graph's edge weights.
    #[arg(long)]
    pub(crate) unweighted: bool,
    /// The sampler on every step, for ablations: adaptive (the cost model picks per step),
    /// erjs (uniform proposals), structured (proposals from the walk's terms; CPU and CUDA),
    /// ervs, table (direct draws from prefix sums of static weights; CPU only), its
    /// (reference), prefix-reservoir (reference).
    #[arg(long, default_value = "adaptive")]
    pub(crate) sampler: String,
    /// The adaptive rule's cost model: `R`, `R,F` or `R,F,R_short` (trial/edge cost ratio,
    /// eRVS fixed cost in edges, the ratio on rows of at most 64 edges; all are printed by
    /// every run). Default: fixed (CPU R = 2, F = 8, R_short = 1; GPU R = 4, F = 64), so a seed
    /// gives the same walks on any machine. `profile` measures it on this machine (the CPU: a
    /// timing pass; the GPU: a pilot after a burn-in walk), cached per program and parameters,
    /// graph and device: faster on some walks, but the walks then depend on the machine.
    #[arg(long, value_name = "R[,F[,R_SHORT]]|profile")]
    pub(crate) cost_ratio: Option<String>,
    /// Write original (input) ids or internal ids.
    #[arg(long, default_value = "original")]
    pub(crate) ids: String,
    /// Walkers each thread advances in turn, prefetching each one's next edge while serving
    /// the others (1 = one walker at a time; the walks are the same either way). auto: 8 on
    /// the general path, 64 on the one-draw fast paths (uniform and alias rows) and the
    /// structured lock-step path, 32 on the lock-step eRJS path.
    #[arg(long, default_value = "auto", value_parser = wayfarer::engine::parse_interleave)]
    pub(crate) interleave: usize,
    /// auto (the GPU when there is a usable one, else all CPU cores), cpu, or cuda.
    #[arg(long, default_value = "auto")]
    pub(crate) backend: String,
    /// GPUs to run on (0 = every visible GPU): each holds the graph and runs the walkers whose
    /// start node hashes to it; the walks are the same for any count.
    #[arg(long, default_value_t = 0)]
    pub(crate) gpus: usize,
    /// Device memory the GPU run may use, e.g. 2G or 512M (default: 80% of what is free). A
    /// graph that does not fit runs out of core: its longest rows in device memory, the rest
    /// read from page-locked host memory (the memory estimate says which); the walks are the
    /// same either way.
    #[arg(long, value_name = "BYTES")]
    pub(crate) device_memory_budget: Option<String>,
    /// Host memory the structured-proposal tables may take, e.g. 512M (default:
    /// WAYFARER_TABLE_BUDGET, else a quarter of the memory available; 0 turns them off). The
    /// longest rows get tables first; the summary says which rows have them. Which rows do
    /// decides the samplers, so set it to reproduce walks on another machine.
    #[arg(long, value_name = "BYTES")]
    pub(crate) table_budget: Option<String>,
    /// No progress bar, notes or summary on stderr (warnings and errors still print).
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// Walks printed when no `-o` is given.
const PREVIEW_WALKS: usize = 5;

/// Where a run's walks go, the same for every walk and backend: streamed to the output file
/// (created before the work), or without `-o` the first few kept for the preview.
pub(crate) enum WalkSink<'g> {
    /// `-o FILE`.
    File(WalkWriter<'g>),
    /// No `-o`: the first walks.
    Preview(Walks),
}

impl<'g> WalkSink<'g> {
    /// A sink for `rows` walks of `stride` slots: into `file` if given.
    pub(crate) fn new(file: Option<AtomicFile>, g: &'g CsrGraph, ids: IdSpace, rows: u64, stride: usize) -> Result<Self> {
        Ok(match file {
            Some(f) => {
                let rows = usize::try_from(rows).map_err(|_| anyhow::anyhow!("{rows} walks do not fit an output file"))?;
                WalkSink::File(WalkWriter::create_in(f, g, ids, rows, stride)?)
            }
            None => WalkSink::Preview(Walks { stride, nodes: Vec::new(), lengths: Vec::new(), edges: Vec::new() }),
        })
    }

    /// Takes the next batch of walks, in query order.
    pub(crate) fn take(&mut self, batch: Walks) -> Result<(), GraphError> {
        match self {
            WalkSink::File(w) => w.write(&batch),
            WalkSink::Preview(kept) => {
                let room = PREVIEW_WALKS.saturating_sub(kept.len()).min(batch.len());
                if room > 0 {
                    kept.nodes.extend_from_slice(&batch.nodes[..room * batch.stride]);
                    kept.lengths.extend_from_slice(&batch.lengths[..room]);
                }
                Ok(())
            }
        }
    }

    /// Commits the file (and says so) or prints the preview.
    pub(crate) fn finish(self, g: &CsrGraph, ids: IdSpace, quiet: bool) -> Result<()> {
        match self {
            WalkSink::File(w) => {
                let (path, rows) = (w.path().to_path_buf(), w.rows());
                w.finish()?;
                if !quiet {
                    eprintln!("wrote {} ({rows} walks)", path.display());
                }
            }
            WalkSink::Preview(walks) => {
                println!(
                    "first walks ({} ids; -o walks.txt or walks.npy writes them all):",
                    if ids == IdSpace::Original { "original" } else { "internal" }
                );
                let mut out = Vec::new();
                wayfarer::output::write_text(&walks, g, ids, &mut out)?;
                print!("{}", String::from_utf8_lossy(&out));
            }
        }
        Ok(())
    }
}

/// The walk to run: a library walk (native code on the CPU) or a `#[walk]` program compiled at
/// run time (Cranelift on the CPU). Both run on every backend through [`run_walk_command`].
enum Chosen {
    Library(LibraryWalk),
    Program(Compiled),
}

use wayfarer::job::CompiledProgram as Compiled;

impl Chosen {
    fn name(&self) -> &str {
        match self {
            Chosen::Library(w) => w.name(),
            Chosen::Program(c) => &c.program.name,
        }
    }

    fn anonymous(&self) -> bool {
        matches!(self, Chosen::Library(w) if w.is_anonymous())
    }

    fn default_length(&self) -> u32 {
        match self {
            Chosen::Library(w) => w.default_length(),
            Chosen::Program(c) => wayfarer_compiler::params::default_length(&c.program, &c.values).unwrap_or(80),
        }
    }
}

/// Compiles a program file; diagnostics are printed rustc-style, and a walk the analysis
/// cannot bound gets the macro's warning.
fn compile_program_file(path: &str, params: &[(String, String)]) -> Result<Chosen> {
    let source = std::fs::read_to_string(path).with_context(|| path.to_string())?;
    let (program, info) = match wayfarer_compiler::compile_source(&source) {
        Ok(x) => x,
        Err(d) => {
            eprint!("{}", d.render(&source, path));
            bail!("{path}: {} error{}", d.0.len(), if d.0.len() == 1 { "" } else { "s" })
        }
    };
    if let (None, Some(why)) = (&info.bound, &info.fallback) {
        eprintln!("{}", unbounded_warning(&program.name, why, path));
    }
    let values = wayfarer::gpu::program_values(&program, params)?;
    Ok(Chosen::Program(Compiled { program, info, values }))
}

/// The warning for a walk without a weight bound (the macro gives the same at compile time).
pub(crate) fn unbounded_warning(name: &str, why: &str, path: &str) -> String {
    format!(
        "warning: walk `{name}` has no weight bound, so it runs with reservoir sampling (eRVS) only, reading \
         every edge of every row it visits (often ~100x slower than rejection sampling on graphs with hubs): {why}\n  \
         = help: `wayfarer explain {path}` shows the analysis; a weight the analysis can bound enables eRJS"
    )
}

pub(crate) fn cmd_walk(mut a: WalkArgs, procs: &Procs) -> Result<()> {
    if a.list {
        for (name, params) in wayfarer::library::catalog() {
            println!("{name:14} {params}");
        }
        return Ok(());
    }
    a.walk = match (a.name.take(), &a.program) {
        (_, Some(p)) => p.to_string_lossy().into_owned(),
        (Some(n), None) => n,
        (None, None) => bail!("no walk given: name a library walk (`wayfarer walk --list`), give a .rs file, or --program FILE"),
    };
    // Under mpirun each process writes its shard; rank 0 then writes the manifest.
    let whole_output = a.output.clone();
    if procs.sharded() {
        let Some(o) = &a.output else {
            bail!("under mpirun, -o is needed: each of the {} processes writes its shard of the walks", procs.size)
        };
        a.output = Some(crate::procs::shard_path(o, procs.rank));
    }
    let (walk, length, queries) = run_walk_command(&a, procs)?;
    if let (Some(out), true) = (&whole_output, procs.sharded()) {
        procs.barrier();
        if procs.rank == 0 {
            let info = crate::procs::RunInfo { walk: &walk, seed: a.seed, length, queries };
            let path = crate::procs::write_manifest(out, procs.size, &info)?;
            if !a.quiet {
                eprintln!("wrote {} ({} shards, {queries} walks)", path.display(), procs.size);
            }
        }
    }
    Ok(())
}

/// The summary line, with the rank when the run is split over processes.
fn summary_line(report: &wayfarer::RunReport, backend: &str, procs: &Procs) -> String {
    if procs.sharded() { format!("rank {}/{}: {}", procs.rank, procs.size, report.summary(backend)) } else { report.summary(backend) }
}

/// Runs `wayfarer walk` (this process's shard under mpirun), a library walk or a program file,
/// on the chosen backend; returns the walk's name, its length and the whole run's query count.
fn run_walk_command(a: &WalkArgs, procs: &Procs) -> Result<(String, u32, u64)> {
    // Checked whatever the backend, so a bad size is an error on the CPU too.
    let memory_budget = a.device_memory_budget.as_deref().map(|s| super::parse_bytes("--device-memory-budget", s, false)).transpose()?;
    let table_budget = a.table_budget.as_deref().map(|s| super::parse_bytes("--table-budget", s, true)).transpose()?;
    let backend: Backend = a.backend.parse().map_err(|e: String| anyhow::anyhow!("--backend: {e}"))?;
    let sampler: SamplerMode = a.sampler.parse().map_err(|e: String| anyhow::anyhow!("--sampler: {e}"))?;
    let ids = super::parse_ids(&a.ids)?;
    let cost_ratio = match &a.cost_ratio {
        None => CostRatio::Default,
        Some(s) => super::parse_cost_ratio(s)?,
    };
    // The output is created before anything else, so a bad path fails at once.
    let out_file = match &a.output {
        Some(o) => {
            wayfarer::output::OutputFormat::for_path(o)?;
            Some(AtomicFile::create(o)?)
        }
        None => None,
    };
    let params = super::parse_params(&a.params)?;
    // A program is compiled before the graph is loaded: its errors come at once.
    let program_file = (a.program.is_some() || a.walk.ends_with(".rs")).then(|| compile_program_file(&a.walk, &params)).transpose()?;
    let mut g = super::load_graph(a.graph.as_deref(), a.quiet)?;
    let chosen = match program_file {
        Some(p) => p,
        None => Chosen::Library(LibraryWalk::from_name(&a.walk, &params, &g, a.unweighted)?),
    };
    // Anonymous walks hold first-visit indices, not node ids: never map them.
    let ids = if chosen.anonymous() { IdSpace::Internal } else { ids };
    // `#[walk]` programs read the weights whenever the graph has them; the hand-written
    // references take --unweighted as a parameter instead.
    if a.unweighted && !matches!(&chosen, Chosen::Library(w) if !w.is_compiled()) {
        g.set_weights(None)?;
    }
    let length = a.length.unwrap_or_else(|| chosen.default_length());
    let starts = match &a.starts {
        Some(p) => Starts::Nodes(super::read_seeds(&g, p)?),
        None => Starts::EveryNode { per_node: a.walks_per_node },
    };
    starts.validate(g.num_nodes())?;
    let queries = starts.count(g.num_nodes());
    let starts = if procs.sharded() { starts.shard(procs.rank, procs.size, g.num_nodes()) } else { starts };
    let total = starts.count(g.num_nodes());
    let stride = length as usize + 1;
    let mut sink = WalkSink::new(out_file, &g, ids, total, stride)?;
    let walk = match &chosen {
        Chosen::Library(w) => wayfarer::job::JobWalk::library(w),
        Chosen::Program(c) => wayfarer::job::JobWalk::program(c),
    };
    let progress = std::sync::atomic::AtomicU64::new(0);
    let mut job = wayfarer::job::WalkJob::new(&g, walk);
    job.length = length;
    job.starts = starts;
    job.seed = a.seed;
    job.sampler = sampler;
    job.cost_ratio = cost_ratio;
    job.interleave = a.interleave;
    job.table_budget = table_budget.map(|b| b as u64);
    job.gpus = wayfarer::job::Gpus { count: a.gpus, only: procs.sharded().then_some(procs.local_rank), memory_budget };
    job.progress = Some(&progress);
    job.verbose = !a.quiet;
    let chosen_backend = wayfarer::job::select(backend, &job)?;
    for w in &chosen_backend.warnings {
        eprintln!("{w}");
    }
    if !a.quiet {
        for n in &chosen_backend.notes {
            eprintln!("{n}");
        }
    }
    let runner = &chosen_backend.runner;
    if procs.sharded() {
        if runner.kind() != Backend::Cpu && cost_ratio.is_measured() {
            bail!(
                "--cost-ratio profile under mpirun: each process would tune its own R and the shards would not match one run; give R,F (or leave the GPU default)"
            );
        }
        // Rank 0's cost model for every process: a run of no walkers resolves it.
        if runner.kind() == Backend::Cpu {
            let real_starts = std::mem::replace(&mut job.starts, Starts::Nodes(Vec::new()));
            let mut cfg = job.cpu_config();
            procs.agree_on_cost(&mut cfg, |_| Ok(runner.run(&job, &mut |_| Ok(()))?.report.cost))?;
            job.starts = real_starts;
            job.cost_ratio = cfg.cost_ratio;
        }
    }
    let done = super::with_progress(total, a.quiet || runner.kind() != Backend::Cpu, &progress, || {
        runner.run(&job, &mut |b| sink.take(b).map_err(|e| WalkError::Config(e.to_string())))
    })?;
    let (report, backend_name) = (done.report, done.backend);
    sink.finish(&g, ids, a.quiet)?;
    if !a.quiet {
        eprintln!("{}", summary_line(&report, &backend_name, procs));
    }
    Ok((chosen.name().to_string(), length, queries))
}
