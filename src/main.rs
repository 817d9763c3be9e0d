//! The `wayfarer` command line: generate, convert and inspect graphs; run walks; benchmark.

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wayfarer::graph::{Dedup, EdgeListOptions, LabelSpec, WeightSpec, generate};
use wayfarer::library::{LibraryWalk, WALKS};
use wayfarer::output::{AtomicFile, IdSpace, PerNodeFile};
use wayfarer::{CostRatio, CsrGraph, SamplerMode, Starts};

mod cli;
mod procs;
use cli::walk::WalkArgs;
use procs::Procs;

#[derive(Parser)]
#[command(name = "wayfarer", version, about = "Exact graph random walks on every core", long_about = None)]
struct Cli {
    /// Worker threads (default: all cores).
    #[arg(long, global = true)]
    threads: Option<usize>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate a synthetic graph.
    Gen(GenArgs),
    /// Convert a text edge list or Matrix Market file to .wfg.
    Convert(ConvertArgs),
    /// Describe a graph.
    Info {
        /// A .wfg, .mtx or text edge list (omit for the embedded default graph).
        graph: Option<PathBuf>,
    },
    /// Run a walk.
    Walk(WalkArgs),
    /// GNN neighbor sampling: DGL-style blocks per mini-batch and layer, written as .npz.
    Sample(SampleArgs),
    /// Count triangles (exact): the total, per-node counts and local clustering coefficients,
    /// optionally among the edges a `#[mask]` function keeps
    Triangles(TrianglesArgs),
    /// Workload-aware partitioning: degree + anonymous-walk density (the hybrid metric),
    /// balanced contiguous blocks, dense/sparse classes, and the imbalance of naive,
    /// degree-only and hybrid partitions
    Partition(PartitionArgs),
    /// Show a walk's IR, its bound analysis (B, Ŝ, arrays, fallbacks) as the compiler sees it.
    Explain {
        /// A library walk (deepwalk, node2vec, metapath, ppr2, ppr, ppr-stop, temporal,
        /// anonymous) or a `.rs` file with one `#[walk]` item.
        #[arg(value_name = "WALK", required_unless_present = "program")]
        walk: Option<String>,
        /// A file holding one `#[walk]` item (any extension), as `walk --program`.
        #[arg(long, value_name = "FILE", conflicts_with = "walk")]
        program: Option<PathBuf>,
    },
    /// Write a walk as one standalone CUDA file with a `main` (loads a .wfg, runs the walk,
    /// writes .npy) that `nvcc -arch=sm_90 walk.cu` builds on its own.
    Emit {
        /// A library walk (as `wayfarer walk` takes them, `anonymous` included) or a `.rs` file
        /// with one `#[walk]` item.
        #[arg(value_name = "WALK", required_unless_present = "program")]
        walk: Option<String>,
        /// A file holding one `#[walk]` item (any extension), as `walk --program`.
        #[arg(long, value_name = "FILE", conflicts_with = "walk")]
        program: Option<PathBuf>,
        /// Where to write the `.cu` file (or the shader, with --wgsl / --spirv).
        #[arg(short, long)]
        output: PathBuf,
        /// Write the wgpu backend's shader as WGSL instead (naga's rendering of the module
        /// `--backend wgpu` runs; the parameters stay run-time values).
        #[arg(long, conflicts_with = "spirv")]
        wgsl: bool,
        /// Write the wgpu backend's shader as SPIR-V (Vulkan 1.1) instead.
        #[arg(long)]
        spirv: bool,
        /// With --wgsl / --spirv: which of the wgpu backend's walk kernels (`--backend wgpu`
        /// picks subgroup where the adapter has subgroups and the walk's state is 32-bit,
        /// else workgroup).
        #[arg(long, value_parser = ["plain", "subgroup", "workgroup"], default_value = "plain")]
        kernel: String,
        /// Walk parameter `name=value` (repeatable), fixed in the emitted file.
        #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// The adaptive rule's `R,F` (default: the GPU default).
        #[arg(long, value_name = "R[,F]")]
        cost_ratio: Option<String>,
    },
    /// Run the CPU benchmark (see bench/README.md).
    Bench(wayfarer::bench::BenchArgs),
}

#[derive(Args)]
struct Attrs {
    /// Edge weights to generate: uniform (U[1,5)), uniform:LO:HI, pareto:ALPHA, degree.
    #[arg(long)]
    weights: Option<String>,
    /// Generate K uniform edge labels in [0, K).
    #[arg(long, value_name = "K")]
    labels: Option<u32>,
    /// Seed for the generated attributes (default: --seed).
    #[arg(long)]
    attr_seed: Option<u64>,
}

#[derive(Args)]
struct GenArgs {
    /// rmat (Graph500), ba (Barabási–Albert) or er (Erdős–Rényi).
    model: String,
    /// R-MAT: log2 of the node count.
    #[arg(long)]
    scale: Option<u32>,
    /// R-MAT: generated edges per node (before symmetrizing and deduplicating).
    #[arg(long, default_value_t = 16)]
    edge_factor: u32,
    /// BA / ER: number of nodes.
    #[arg(long)]
    nodes: Option<usize>,
    /// BA: edges attached per new node.
    #[arg(long, default_value_t = 4)]
    m: usize,
    /// ER: edge probability.
    #[arg(long)]
    p: Option<f64>,
    /// ER: expected degree (alternative to --p).
    #[arg(long)]
    avg_degree: Option<f64>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    attrs: Attrs,
    /// Output: .wfg, or .txt (.edges, .tsv, .csv) for a text edge list.
    #[arg(short, long)]
    output: PathBuf,
    /// No summary on stderr (warnings and errors still print).
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct SampleArgs {
    /// A .wfg, .mtx or text edge list (omit for the embedded default graph).
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Neighbors per node and layer, input layer first (DGL's order: 15,10,5 takes 5 for the
    /// seeds, then 10, then 15).
    #[arg(long, default_value = "15,10,5")]
    fanouts: String,
    /// Seed nodes per mini-batch.
    #[arg(long, default_value_t = 1024)]
    batch_size: usize,
    /// Seed nodes: a text file of node ids (one per line) or a 1-D .npy of integer ids
    /// (default: every node, in id order).
    #[arg(long)]
    seeds: Option<PathBuf>,
    /// Sample with replacement (default: without).
    #[arg(long)]
    replace: bool,
    /// Sample proportionally to the edge weights (default: uniformly).
    #[arg(long, conflicts_with = "policy")]
    weighted: bool,
    /// Sample proportionally to a `#[sampler]` function's weight of each edge (a `.rs` file,
    /// compiled at run time by Cranelift), e.g. `#[sampler] fn recent(s: &Step, tau: f32) ->
    /// f32 { (-(s.time() as f32) / tau).exp() }`.
    #[arg(long, value_name = "FILE.rs")]
    policy: Option<PathBuf>,
    /// Policy parameter `name=value` (repeatable).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Seed of the random draws.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Mini-batches merged into one super-batch (GARDEN's Super-batch Degree Classifier);
    /// changes only how work is grouped, never the output.
    #[arg(long, default_value_t = wayfarer::runtime::sample::DEFAULT_SUPER_BATCH)]
    super_batch: usize,
    /// auto (the GPU when there is a usable one and the sampling is uniform, else all CPU
    /// cores), cpu, or cuda. Both give the same blocks; weighted policies run on the CPU only.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// GPU kernel for nodes with more edges than the fanout: grouped (GARDEN: fanout lanes per
    /// node, rows of at most --dmax edges staged in shared memory) or warp (one warp per node,
    /// no staging: the baseline of the ablation).
    #[arg(long, default_value = "grouped")]
    kernel: String,
    /// Grouped kernel: rows of at most this many edges are staged in shared memory.
    #[arg(long, default_value_t = wayfarer_cuda::sample::DEFAULT_DMAX)]
    dmax: u32,
    /// Output .npz (arrays b{batch}_seeds, b{batch}_l{layer}_nodes, _num_dst, _src, _dst, _eid).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Write original (input) ids or internal ids for nodes (edge ids are CSR positions).
    #[arg(long, default_value = "original")]
    ids: String,
    /// No progress bar, notes or summary on stderr (warnings and errors still print).
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct PartitionArgs {
    /// A .wfg, .mtx or text edge list (omit for the embedded default graph).
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Blocks to cut.
    #[arg(long)]
    blocks: usize,
    /// Weight of the neighborhood density in H = alpha·N + (1 − alpha)·D (each scaled to mean 1).
    #[arg(long, default_value_t = 0.5)]
    alpha: f64,
    /// Anonymous walks per node for the density.
    #[arg(short = 'k', long = "walks", default_value_t = 16)]
    walks: u32,
    /// Their length in steps.
    #[arg(short = 'd', long = "length", default_value_t = 8)]
    length: u32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the density walks run: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Write each node's block (uint32, by internal node id) of the hybrid partition to this .npy.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Write each block's class (uint8: 1 dense, 0 sparse) to this .npy.
    #[arg(long)]
    classes: Option<PathBuf>,
    /// Write the nodes (original ids, uint64) in the order of `--order-by` to this .npy, e.g.
    /// as `wayfarer walk --starts` to run walkers grouped by predicted work.
    #[arg(long)]
    order: Option<PathBuf>,
    /// The order `--order` writes: hybrid (ascending H), degree, or id.
    #[arg(long, default_value = "hybrid")]
    order_by: String,
    /// No progress bar, notes, summary or report on stderr (warnings and errors still print).
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct TrianglesArgs {
    /// A .wfg, .mtx or text edge list (omit for the embedded default graph); directed input
    /// is symmetrized (each pair of nodes counts once).
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Count only triangles whose three edges a `#[mask]` function keeps (a `.rs` file,
    /// compiled at run time: Cranelift on the CPU, NVRTC on the GPU), e.g. `#[mask] fn heavy(s: &Step, t: f32) -> bool {
    /// s.weight() > t }`.
    #[arg(long, value_name = "FILE.rs")]
    mask: Option<PathBuf>,
    /// Mask parameter `name=value` (repeatable).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Write each node's triangle count (uint64, by internal node id) to this .npy.
    #[arg(long)]
    per_node: Option<PathBuf>,
    /// Write each node's local clustering coefficient (float64, by internal node id) to this .npy.
    #[arg(long)]
    clustering: Option<PathBuf>,
    /// auto (the GPU when there is a usable one, else all CPU cores), cpu, or cuda. On the GPU
    /// an undirected graph is oriented and masked on the device (the mask compiled by the CUDA
    /// backend); a directed one is symmetrized and oriented on the CPU first.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// GPUs to split the edges over (--backend cuda/auto; 0 = every visible GPU).
    #[arg(long, default_value_t = 0)]
    gpus: usize,
    /// No progress bar, notes or summary on stderr (warnings and errors still print; the total
    /// still goes to stdout).
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct ConvertArgs {
    /// Input: a text edge list, a Matrix Market file (.mtx) or a .wfg.
    input: PathBuf,
    /// Output: .wfg, or .txt for a text edge list in original ids.
    #[arg(short, long)]
    output: PathBuf,
    /// Add the reverse of every edge.
    #[arg(long)]
    undirected: bool,
    /// Column (from 1) with edge weights.
    #[arg(long)]
    weight_col: Option<usize>,
    /// Column (from 1) with integer edge labels.
    #[arg(long)]
    label_col: Option<usize>,
    /// Column (from 1) with timestamps: integers, or decimals with --time-scale.
    #[arg(long)]
    time_col: Option<usize>,
    /// Multiply every timestamp by this power of ten, exactly, before storing it as a 64-bit
    /// integer: `--time-scale 1000` reads seconds with up to three decimals as milliseconds.
    #[arg(long, value_name = "10^K", default_value_t = 1)]
    time_scale: u64,
    /// Lines to skip at the start of an edge list (a header such as `src dst weight`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    skip_header: usize,
    /// Keep one edge per (source, destination).
    #[arg(long)]
    dedup: bool,
    /// Drop self loops.
    #[arg(long)]
    drop_self_loops: bool,
    /// Add a per-node property from a file of `id value` lines (original ids; unlisted nodes
    /// get 0), as NAME=FILE; repeatable.
    #[arg(long = "node-prop", value_name = "NAME=FILE")]
    node_props: Vec<String>,
    /// Input format: auto (by extension), edges, mtx, wfg.
    #[arg(long, default_value = "auto")]
    format: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    attrs: Attrs,
    /// No notes or summary on stderr (warnings and errors still print).
    #[arg(short, long)]
    quiet: bool,
}

/// `first` and the next GPUs up to `wanted` of them (0: every visible one); under mpirun, the
/// one GPU of this process's local rank.
fn open_gpus(first: wayfarer::gpu::CudaDevice, wanted: usize, procs: &Procs) -> Result<Vec<wayfarer::gpu::CudaDevice>> {
    let visible = wayfarer::gpu::CudaDevice::count();
    if procs.sharded() {
        if wanted > 1 {
            bail!("--gpus {wanted} under mpirun: each process uses one GPU (local rank mod the visible GPUs)");
        }
        let mine = procs.local_rank % visible.max(1);
        return Ok(vec![if mine == 0 { first } else { wayfarer::gpu::CudaDevice::open(mine)? }]);
    }
    let wanted = if wanted == 0 { visible.max(1) } else { wanted };
    if wanted > visible.max(1) {
        bail!("--gpus {wanted}: {visible} GPU(s) visible");
    }
    let mut devs = vec![first];
    for i in 1..wanted {
        devs.push(wayfarer::gpu::CudaDevice::open(i)?);
    }
    Ok(devs)
}

/// `1234`, `64K`, `512M`, `2G` (powers of 1024).
fn parse_bytes(s: &str) -> Result<usize> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => bail!("--device-memory-budget {s}: use bytes or a K, M, G or T suffix"),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let v: f64 = num.trim().parse().map_err(|_| anyhow::anyhow!("--device-memory-budget {s}: not a size"))?;
    if !(v > 0.0) || !v.is_finite() {
        bail!("--device-memory-budget {s}: must be positive");
    }
    Ok((v * mult as f64) as usize)
}

/// "NAME" or "N x NAME".
fn gpus_name(devs: &[wayfarer::gpu::CudaDevice]) -> String {
    if devs.len() == 1 { devs[0].name.clone() } else { format!("{} x {}", devs.len(), devs[0].name) }
}

fn load_graph(path: Option<&Path>, quiet: bool) -> Result<CsrGraph> {
    let t = Instant::now();
    let g = match path {
        Some(p) => CsrGraph::load(p)?,
        None => {
            if !quiet {
                eprintln!("no --graph given: using the embedded {}", wayfarer::DEFAULT_GRAPH_NAME);
            }
            wayfarer::default_graph()?
        }
    };
    if !quiet && t.elapsed() > Duration::from_millis(500) {
        eprintln!("loaded {} nodes, {} edges in {:.2} s", g.num_nodes(), g.num_edges(), t.elapsed().as_secs_f64());
    }
    Ok(g)
}

fn add_attrs(g: &mut CsrGraph, a: &Attrs, seed: u64) -> Result<()> {
    let seed = a.attr_seed.unwrap_or(seed);
    if let Some(spec) = &a.weights {
        let spec: WeightSpec = spec.parse().map_err(|e: String| anyhow::anyhow!("--weights: {e}"))?;
        let w = generate::weights(g, spec, seed);
        g.set_weights(Some(w))?;
    }
    if let Some(k) = a.labels {
        let l = generate::labels(g, LabelSpec { k }, seed)?;
        g.set_labels(Some(l))?;
    }
    Ok(())
}

/// A graph output by extension: `.wfg`, or a text edge list (`.txt`, `.edges`, `.tsv`, `.csv`),
/// created before the work.
fn graph_output(path: &Path) -> Result<(AtomicFile, bool)> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let wfg = match ext {
        "wfg" => true,
        "txt" | "edges" | "tsv" | "csv" => false,
        _ => bail!("{}: unknown output extension; use .wfg, or .txt for a text edge list", path.display()),
    };
    Ok((AtomicFile::create(path)?, wfg))
}

fn save_graph(g: &CsrGraph, (file, wfg): (AtomicFile, bool)) -> Result<()> {
    if wfg {
        g.save_wfg_into(file)?
    } else {
        g.save_edge_list_into(file)?
    }
    Ok(())
}

fn cmd_gen(a: GenArgs) -> Result<()> {
    let t = Instant::now();
    let out = graph_output(&a.output)?;
    let mut g = match a.model.as_str() {
        "rmat" => {
            let scale = a.scale.context("rmat needs --scale")?;
            generate::rmat(scale, a.edge_factor, a.seed)?
        }
        "ba" => generate::barabasi_albert(a.nodes.context("ba needs --nodes")?, a.m, a.seed)?,
        "er" => {
            let n = a.nodes.context("er needs --nodes")?;
            let p = match (a.p, a.avg_degree) {
                (Some(p), None) => p,
                (None, Some(d)) => d / (n.max(2) - 1) as f64,
                _ => bail!("er needs exactly one of --p and --avg-degree"),
            };
            generate::erdos_renyi(n, p, a.seed)?
        }
        other => bail!("unknown model `{other}`: use rmat, ba or er"),
    };
    add_attrs(&mut g, &a.attrs, a.seed)?;
    save_graph(&g, out)?;
    if a.quiet {
        return Ok(());
    }
    eprintln!(
        "{}: {} nodes, {} edges ({} model, seed {}) in {:.2} s",
        a.output.display(),
        g.num_nodes(),
        g.num_edges(),
        a.model,
        a.seed,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn cmd_convert(a: ConvertArgs) -> Result<()> {
    let t = Instant::now();
    let ext = |p: &Path| p.extension().and_then(|e| e.to_str()).unwrap_or("").to_string();
    let input_kind = ext(&a.input);
    let out = graph_output(&a.output)?;
    let format = match a.format.as_str() {
        "auto" if input_kind == "mtx" => "mtx",
        "auto" if input_kind == "wfg" => "wfg",
        "auto" | "edges" => "edges",
        "mtx" => "mtx",
        "wfg" => "wfg",
        f => bail!("unknown --format `{f}`: use auto, edges, mtx or wfg"),
    };
    let mtx = format == "mtx";
    let mut g = if format == "wfg" {
        if a.undirected || a.weight_col.is_some() || a.label_col.is_some() || a.time_col.is_some() || a.dedup || a.drop_self_loops {
            bail!("a .wfg input is already built; --undirected, --dedup, --drop-self-loops and the column options apply to edge lists");
        }
        CsrGraph::load_wfg(&a.input)?
    } else if mtx {
        if a.undirected || a.weight_col.is_some() || a.label_col.is_some() || a.time_col.is_some() {
            bail!("Matrix Market files declare their own symmetry and values; --undirected and the column options apply to edge lists");
        }
        CsrGraph::load_matrix_market(&a.input)?
    } else {
        let opts = EdgeListOptions {
            undirected: a.undirected,
            weight_col: a.weight_col,
            label_col: a.label_col,
            time_col: a.time_col,
            time_scale: a.time_scale,
            dedup: if a.dedup { Dedup::KeepFirst } else { Dedup::Keep },
            drop_self_loops: a.drop_self_loops,
            skip_header: a.skip_header,
        };
        CsrGraph::load_edge_list(&a.input, &opts)?
    };
    add_attrs(&mut g, &a.attrs, a.seed)?;
    for spec in &a.node_props {
        let Some((name, file)) = spec.split_once('=') else { bail!("--node-prop {spec}: expected NAME=FILE") };
        let set = g.load_node_property(name, file, 0.0)?;
        if !a.quiet {
            eprintln!("node property `{name}`: {set} of {} nodes set from {file}", g.num_nodes());
        }
    }
    if !out.1 && !g.node_properties().is_empty() {
        let names: Vec<&str> = g.node_properties().iter().map(|p| p.name.as_str()).collect();
        eprintln!("warning: a text edge list has no place for node properties ({}); write a .wfg to keep them", names.join(", "));
    }
    save_graph(&g, out)?;
    if a.quiet {
        return Ok(());
    }
    eprintln!("{}: {} nodes, {} edges in {:.2} s", a.output.display(), g.num_nodes(), g.num_edges(), t.elapsed().as_secs_f64());
    Ok(())
}

fn cmd_info(path: Option<PathBuf>) -> Result<()> {
    let g = load_graph(path.as_deref(), false)?;
    print!("{}", wayfarer::bench::describe_graph(&g, path.as_deref()));
    Ok(())
}

fn parse_params(raw: &[String]) -> Result<Vec<(String, String)>> {
    raw.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => bail!("-p {s}: expected NAME=VALUE, e.g. -p a=2"),
        })
        .collect()
}

/// Shows a progress bar on stderr once a run has taken more than a second.
fn with_progress<T>(total: u64, quiet: bool, f: impl FnOnce(&AtomicU64) -> T) -> T {
    let counter = AtomicU64::new(0);
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        if !quiet {
            s.spawn(|| {
                let start = Instant::now();
                let mut bar: Option<indicatif::ProgressBar> = None;
                while !finished.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    if bar.is_none() && start.elapsed() > Duration::from_secs(1) {
                        let b = indicatif::ProgressBar::new(total);
                        b.set_style(
                            indicatif::ProgressStyle::with_template(
                                "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} walkers ({per_sec}, eta {eta})",
                            )
                            .unwrap(),
                        );
                        bar = Some(b);
                    }
                    if let Some(b) = &bar {
                        b.set_position(counter.load(Ordering::Relaxed));
                    }
                }
                if let Some(b) = bar {
                    b.finish_and_clear();
                }
            });
        }
        let r = f(&counter);
        finished.store(true, Ordering::Relaxed);
        r
    })
}

/// Reads start nodes (original ids, one per line) and maps them to internal ids.
fn read_starts(g: &CsrGraph, path: &Path) -> Result<Vec<u32>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let id: u64 = t.parse().map_err(|_| anyhow::anyhow!("{}:{}: expected a node id, found `{t}`", path.display(), i + 1))?;
        let Some(node) = g.id_map().internal(id, g.num_nodes()) else {
            bail!("{}:{}: node {id} is not in the graph", path.display(), i + 1);
        };
        v.push(node);
    }
    if v.is_empty() {
        bail!("{}: no start nodes", path.display());
    }
    Ok(v)
}

/// Seed nodes from a text file (one id per line) or a 1-D `.npy` of integer ids, mapped to
/// internal ids.
fn read_seeds(g: &CsrGraph, path: &Path) -> Result<Vec<u32>> {
    if path.extension().and_then(|e| e.to_str()) != Some("npy") {
        return read_starts(g, path);
    }
    let bad = |why: &str| anyhow::anyhow!("{}: {why}", path.display());
    let ids = wayfarer::runtime::npy::read_int_npy(path)?;
    let mut v = Vec::with_capacity(ids.len());
    for (i, &id) in ids.iter().enumerate() {
        let node = u64::try_from(id).ok().and_then(|id| g.id_map().internal(id, g.num_nodes()));
        v.push(node.ok_or_else(|| bad(&format!("entry {i}: node {id} is not in the graph")))?);
    }
    if v.is_empty() {
        return Err(bad("no nodes listed"));
    }
    Ok(v)
}

fn cmd_sample(a: SampleArgs) -> Result<()> {
    use wayfarer::output::NpyArray;
    use wayfarer::runtime::sample::{Policy, Replacement, SampleConfig};
    let ids = parse_ids(&a.ids)?;
    if let Some(o) = &a.output {
        if o.extension().and_then(|e| e.to_str()) != Some("npz") {
            bail!("{}: the output is a .npz", o.display());
        }
    }
    // Created before the work, so a bad path fails at once.
    let out_file = a.output.as_deref().map(AtomicFile::create).transpose()?;
    let fanouts: Vec<u32> = a
        .fanouts
        .split(',')
        .map(|x| x.trim().parse::<u32>().map_err(|_| anyhow::anyhow!("--fanouts {}: `{x}` is not a count", a.fanouts)))
        .collect::<Result<_>>()?;
    let g = load_graph(a.graph.as_deref(), a.quiet)?;
    let seeds: Vec<u32> = match &a.seeds {
        Some(p) => read_seeds(&g, p)?,
        None => (0..g.num_nodes() as u32).collect(),
    };
    let cfg = SampleConfig {
        fanouts: fanouts.clone(),
        batch_size: a.batch_size,
        replacement: if a.replace { Replacement::With } else { Replacement::Without },
        policy: if a.weighted { Policy::EdgeWeight } else { Policy::Uniform },
        seed: a.seed,
        super_batch: a.super_batch,
    };
    if a.super_batch == 0 {
        bail!("--super-batch 0: merge at least 1 mini-batch");
    }
    let policy = match &a.policy {
        Some(path) => Some(compile_edge_program(path, wayfarer_compiler::lower_sampler_source, &a.params, &g)?.jit),
        None if !a.params.is_empty() => bail!("-p sets a --policy parameter; there is no --policy"),
        None => None,
    };
    let backend: wayfarer::gpu::Backend = a.backend.parse().map_err(|e: String| anyhow::anyhow!("--backend: {e}"))?;
    not_wgpu(backend, "sample")?;
    let kernel: wayfarer_cuda::sample::RandomKernel = a.kernel.parse().map_err(|e: String| anyhow::anyhow!("--kernel: {e}"))?;
    let uniform = policy.is_none() && !a.weighted;
    if backend == wayfarer::gpu::Backend::Cuda && !uniform {
        bail!("--backend cuda: weighted sampling (--weighted, --policy) runs on the CPU only; use --backend cpu");
    }
    let (device, note) = if uniform || backend == wayfarer::gpu::Backend::Cpu { wayfarer::gpu::device_for(backend)? } else { (None, None) };
    if let (Some(why), false) = (&note, a.quiet) {
        eprintln!("no GPU ({why}): sampling on the CPU");
    }
    let t = Instant::now();
    let mut where_ = format!("cpu, {} threads", rayon::current_num_threads());
    let batches = match (&policy, &device) {
        (Some(jit), _) => wayfarer::sample::sample_with(&g, &seeds, &cfg, jit)?,
        (None, Some(dev)) => {
            let opts = wayfarer_cuda::sample::GpuSampleOptions { kernel, dmax: a.dmax };
            let (b, r) = wayfarer_cuda::sample::sample(dev, &g, &seeds, &cfg, opts)?;
            where_ = format!(
                "{} ({:?} kernel; sampling kernels {:.3} s, downloads {:.3} s, {} super-batches, graph upload {:.3} s)",
                dev.name, kernel, r.sample_kernel_seconds, r.download_seconds, r.super_batches, r.upload_seconds
            );
            b
        }
        (None, None) => wayfarer::runtime::sample::sample(&g, &seeds, &cfg)?,
    };
    let secs = t.elapsed().as_secs_f64();
    let edges: usize = batches.iter().flat_map(|b| &b.blocks).map(|b| b.edge_ids.len()).sum();
    if !a.quiet {
        eprintln!(
            "sampled {} mini-batches of up to {} seeds, fanouts {:?} ({}, {}): {edges} edges in {secs:.3} s ({:.2} M edges/s, {where_})",
            batches.len(),
            a.batch_size,
            fanouts,
            if a.replace { "with replacement" } else { "without replacement" },
            if a.policy.is_some() {
                "policy"
            } else if a.weighted {
                "weighted"
            } else {
                "uniform"
            },
            edges as f64 / secs.max(1e-9) / 1e6,
        );
    }
    let Some(out_file) = out_file else {
        if !a.quiet {
            eprintln!("(no -o given: the blocks are not written)");
        }
        return Ok(());
    };
    let out = out_file.path().to_path_buf();
    let map = g.id_map();
    let node_ids = |v: &[u32]| match ids {
        IdSpace::Internal => NpyArray::U32(v.to_vec()),
        IdSpace::Original => NpyArray::U64(v.iter().map(|&x| map.original(x)).collect()),
    };
    let mut arrays = vec![("fanouts".to_string(), NpyArray::U32(fanouts))];
    // Moved, not copied: the blocks are the run's largest allocation.
    for (bi, mb) in batches.into_iter().enumerate() {
        arrays.push((format!("b{bi}_seeds"), node_ids(&mb.seeds)));
        for (l, blk) in mb.blocks.into_iter().enumerate() {
            arrays.push((format!("b{bi}_l{l}_nodes"), node_ids(&blk.src_nodes)));
            arrays.push((format!("b{bi}_l{l}_num_dst"), NpyArray::U64(vec![blk.num_dst as u64])));
            arrays.push((format!("b{bi}_l{l}_src"), NpyArray::U32(blk.edge_src)));
            arrays.push((format!("b{bi}_l{l}_dst"), NpyArray::U32(blk.edge_dst)));
            arrays.push((format!("b{bi}_l{l}_eid"), NpyArray::U64(blk.edge_ids)));
        }
    }
    wayfarer::output::write_npz_into(out_file, &arrays)?;
    if !a.quiet {
        eprintln!("wrote {} ({} arrays)", out.display(), arrays.len());
    }
    Ok(())
}

/// A `#[sampler]` or `#[mask]` file, lowered, analyzed, its parameters set and JIT-compiled.
struct EdgeProgram {
    program: wayfarer_compiler::ir::Program,
    info: wayfarer_compiler::WalkInfo,
    values: Vec<wayfarer_compiler::eval::ParamValue>,
    jit: wayfarer_jit::JitWalk,
}

/// A `#[sampler]` or `#[mask]` file (`lower` is the compiler's entry for it) with its `-p`
/// parameters, JIT-compiled; compile errors are printed with their carets.
fn compile_edge_program(
    path: &std::path::Path,
    lower: fn(&str) -> Result<wayfarer_compiler::ir::Program, wayfarer_compiler::Diagnostics>,
    params: &[String],
    g: &wayfarer::graph::CsrGraph,
) -> Result<EdgeProgram> {
    let source = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let shown = path.display().to_string();
    let program = match lower(&source) {
        Ok(p) => p,
        Err(d) => {
            eprint!("{}", d.render(&source, &shown));
            bail!("{shown}: {} error{}", d.0.len(), if d.0.len() == 1 { "" } else { "s" })
        }
    };
    let info = wayfarer_compiler::analyze(&program);
    let values = wayfarer::gpu::program_values(&program, &parse_params(params)?)?;
    let jit = wayfarer_jit::JitWalk::compile(&program, &info, &values, g.weights().is_some())?;
    Ok(EdgeProgram { program, info, values, jit })
}

fn cmd_triangles(a: TrianglesArgs) -> Result<()> {
    use wayfarer::output::NpyArray;
    let backend = a.backend.parse::<wayfarer::gpu::Backend>().map_err(|e| anyhow::anyhow!("--backend: {e}"))?;
    not_wgpu(backend, "triangles")?;
    let g = load_graph(a.graph.as_deref(), a.quiet)?;
    // Created before the count, so a bad path fails at once.
    let per_node_file = a.per_node.as_deref().map(|p| PerNodeFile::create(p, &g, "per-node")).transpose()?;
    let clustering_file = a.clustering.as_deref().map(|p| PerNodeFile::create(p, &g, "clustering")).transpose()?;
    let mask = match &a.mask {
        Some(path) => Some(compile_edge_program(path, wayfarer_compiler::lower_mask_source, &a.params, &g)?),
        None if !a.params.is_empty() => bail!("-p sets a --mask parameter; there is no --mask"),
        None => None,
    };
    use wayfarer::triangles::Detail;
    let detail = if a.per_node.is_some() || a.clustering.is_some() { Detail::PerNode } else { Detail::Total };
    let (first, note) = wayfarer::gpu::device_for(backend)?;
    if let (Some(why), false) = (&note, a.quiet) {
        eprintln!("no GPU ({why}): counting on the CPU");
    }
    let t = Instant::now();
    let mut where_ = format!("cpu, {} threads", rayon::current_num_threads());
    let counts = match first {
        None => match &mask {
            Some(m) => wayfarer::triangles::count_with(&g, &m.jit, detail)?,
            None => wayfarer::triangles::count_masked(&g, None, detail),
        },
        Some(first) => {
            let devs = open_gpus(first, a.gpus, &Procs::single())?;
            // Undirected graphs are oriented (and masked) on the device; directed ones are
            // symmetrized and oriented on the host (the mask then runs on the CPU).
            let on_host = g.orientation() == wayfarer::graph::Orientation::Directed;
            let both = mask
                .as_ref()
                .map(|m| (&m.jit, wayfarer_cuda::triangles::GpuMask { program: &m.program, info: &m.info, values: &m.values }));
            let (counts, r) = wayfarer::gpu::count_triangles_with(&devs, &g, both, detail)?;
            where_ = format!(
                "{} x {} (upload {:.3} s, orientation {:.3} s, kernels {:.3} s; {} edges by warps, {} by threads, {} rows as bitmaps; {})",
                devs.len(),
                devs[0].name,
                r.upload_seconds,
                r.orient_seconds,
                r.kernel_seconds,
                r.warp_edges,
                r.thread_edges,
                r.hub_rows,
                if on_host {
                    format!("directed input: symmetrized and oriented{} on the CPU", if mask.is_some() { ", mask evaluated" } else { "" })
                } else {
                    format!("oriented{} on the GPU", if mask.is_some() { " and masked" } else { "" })
                }
            );
            counts
        }
    };
    let secs = t.elapsed().as_secs_f64();
    println!("{}", counts.total);
    if !a.quiet {
        if counts.symmetrized {
            eprintln!("note: the graph is directed; triangles are counted in its symmetrized (undirected) graph");
        }
        eprintln!(
            "triangles: {} among {} {}undirected edges, in {secs:.3} s ({:.2} M edges/s, {where_})",
            counts.total,
            counts.kept_edges,
            if mask.is_some() { "kept " } else { "" },
            counts.kept_edges as f64 / secs.max(1e-9) / 1e6,
        );
    }
    if let Some(f) = per_node_file {
        f.write(&g, NpyArray::U64(counts.per_node.clone()))?;
    }
    if let Some(f) = clustering_file {
        f.write(&g, NpyArray::F64(counts.clustering()))?;
    }
    Ok(())
}

fn cmd_partition(a: PartitionArgs) -> Result<()> {
    use wayfarer::output::NpyArray;
    use wayfarer::partition::{PartitionConfig, Scheme, balance, metrics, partition};
    if a.blocks == 0 {
        bail!("--blocks must be at least 1");
    }
    for p in [&a.classes, &a.order].into_iter().flatten() {
        if p.extension().and_then(|e| e.to_str()) != Some("npy") {
            bail!("{}: --classes and --order are .npy files", p.display());
        }
    }
    let order_by = match a.order_by.as_str() {
        "hybrid" => Scheme::Hybrid,
        "degree" => Scheme::Degree,
        "id" => Scheme::Naive,
        x => bail!("--order-by {x}: use hybrid, degree or id"),
    };
    let backend = a.backend.parse::<wayfarer::gpu::Backend>().map_err(|e| anyhow::anyhow!("--backend: {e}"))?;
    not_wgpu(backend, "partition")?;
    let g = load_graph(a.graph.as_deref(), a.quiet)?;
    if a.blocks > g.num_nodes() {
        bail!("--blocks {}: the graph has {} nodes", a.blocks, g.num_nodes());
    }
    // Created before the work, so a bad path fails at once.
    let block_file = a.output.as_deref().map(|p| PerNodeFile::create(p, &g, "output")).transpose()?;
    let classes_file = a.classes.as_deref().map(AtomicFile::create).transpose()?;
    let order_file = a.order.as_deref().map(AtomicFile::create).transpose()?;
    let cfg = PartitionConfig { blocks: a.blocks, alpha: a.alpha, walks: a.walks, length: a.length, seed: a.seed };
    let t = Instant::now();
    let m = metrics(&g, &cfg, backend)?;
    let metric_secs = t.elapsed().as_secs_f64();
    let hybrid = partition(&m, a.blocks, Scheme::Hybrid);
    if !a.quiet {
        let dense = hybrid.dense.iter().filter(|&&d| d).count();
        eprintln!(
            "metric: {} nodes, k = {} anonymous walks of d = {} steps each, alpha = {} ({:.3} s); tau = mu_H + 0.5 sigma_H = {:.4}: {dense} dense and {} sparse blocks",
            g.num_nodes(),
            a.walks,
            a.length,
            a.alpha,
            metric_secs,
            hybrid.threshold,
            a.blocks - dense
        );
        eprintln!(
            "| partition ({} blocks) | imbalance max/avg, work H | imbalance, work degree + 1 | sum of within-block Var(H) |",
            a.blocks
        );
        eprintln!("|---|---|---|---|");
        for scheme in [Scheme::Naive, Scheme::Degree, Scheme::Hybrid] {
            let p = if scheme == Scheme::Hybrid { hybrid.clone() } else { partition(&m, a.blocks, scheme) };
            let b = balance(&m, &p, scheme);
            eprintln!("| {} | {:.3} | {:.3} | {:.3} |", scheme.name(), b.imbalance_hybrid, b.imbalance_degree, b.within_block_variance);
        }
    }
    if let Some(f) = block_file {
        f.write(&g, NpyArray::U32(hybrid.block.clone()))?;
    }
    if let Some(f) = classes_file {
        NpyArray::U8(hybrid.dense.iter().map(|&d| d as u8).collect()).write_into(f)?;
    }
    if let Some(f) = order_file {
        let map = g.id_map();
        NpyArray::U64(wayfarer::partition::order(&m, order_by).iter().map(|&v| map.original(v)).collect()).write_into(f)?;
    }
    Ok(())
}

/// `--cost-ratio R[,F[,R_SHORT]]` or `profile`.
fn parse_cost_ratio(s: &str) -> Result<CostRatio> {
    if s == "profile" {
        // Measured once per (program, parameters, graph, machine), then cached.
        return Ok(CostRatio::Cached);
    }
    let nums: Vec<f64> = s
        .split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("--cost-ratio {s}: expected R, R,F or R,F,R_short"))?;
    Ok(match nums.as_slice() {
        [r] => CostRatio::Fixed(*r),
        [r, f] => CostRatio::Model(wayfarer::engine::CostModel::uniform(*r, *f)),
        [r, f, rs] => CostRatio::Model(wayfarer::engine::CostModel { ratio: *r, fixed: *f, ratio_short: *rs }),
        _ => bail!("--cost-ratio {s}: expected R, R,F or R,F,R_short"),
    })
}

/// The GPU's cost model for `--cost-ratio` (absent: the GPU default, the same on every device,
/// so a seed gives the same walks anywhere; `profile` tunes R here).
fn gpu_cost(c: CostRatio) -> wayfarer::gpu::GpuCost {
    match c {
        CostRatio::Default => wayfarer::gpu::GpuCost::Default,
        CostRatio::Cached | CostRatio::Profile => wayfarer::gpu::GpuCost::Tuned,
        CostRatio::Fixed(r) => wayfarer::gpu::GpuCost::Fixed(wayfarer::engine::CostModel::uniform(r, 0.0)),
        CostRatio::Model(m) => wayfarer::gpu::GpuCost::Fixed(m),
    }
}

/// `--ids original|internal`.
fn parse_ids(s: &str) -> Result<IdSpace> {
    match s {
        "original" => Ok(IdSpace::Original),
        "internal" => Ok(IdSpace::Internal),
        x => bail!("--ids {x}: use original or internal"),
    }
}

/// What a walk run on the wgpu backend needs from the command line.
#[cfg_attr(not(feature = "wgpu"), allow(dead_code))]
struct WgpuWalk<'a> {
    program: &'a wayfarer_compiler::ir::Program,
    info: &'a wayfarer_compiler::WalkInfo,
    values: &'a [wayfarer_compiler::eval::ParamValue],
    name: &'a str,
    anonymous: bool,
}

/// Runs a walk on the wgpu backend, handing each batch to `sink`.
#[cfg(feature = "wgpu")]
#[allow(clippy::too_many_arguments)]
fn wgpu_walks(
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
fn wgpu_walks(
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

/// Commands other than `walk` run on the CPU or CUDA only.
fn not_wgpu(backend: wayfarer::gpu::Backend, command: &str) -> Result<()> {
    if backend == wayfarer::gpu::Backend::Wgpu {
        bail!("--backend wgpu runs walks only; `wayfarer {command}` runs on cpu or cuda");
    }
    Ok(())
}

/// What `wayfarer emit` writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EmitTarget {
    /// A standalone `.cu` file.
    Cuda,
    /// The wgpu backend's WGSL.
    Wgsl,
    /// The wgpu backend's SPIR-V.
    Spirv,
}

#[cfg(feature = "wgpu")]
fn emit_shader(
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
fn emit_shader(_: &wayfarer_compiler::ir::Program, _: &wayfarer_compiler::WalkInfo, _: AtomicFile, _: EmitTarget, _: &str) -> Result<()> {
    bail!("--wgsl / --spirv: this wayfarer was built without the `wgpu` feature (cargo build --release --features wgpu)")
}

/// The walk `explain` and `emit` take: a library walk by name, or a program file (a `.rs`
/// WALK or `--program FILE`, any extension).
struct WalkSpec {
    name: String,
    file: bool,
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
            n => WALKS.iter().map(|w| w.0).find(|&w| w == n && wayfarer::walks::source(w).is_some()),
        }
    }
}

fn cmd_emit(walk: &WalkSpec, output: &Path, raw_params: &[String], cost: Option<&str>, target: EmitTarget, kernel: &str) -> Result<()> {
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
            let name = walk.name.as_str();
            let w = LibraryWalk::from_name(name, &params, &g, false).or_else(|e| match e {
                // Label checks against the stand-in graph are not meaningful here.
                wayfarer::WalkError::Parameter { ref name, .. } if name == "schema" => {
                    LibraryWalk::from_name(&walk.name, &params, &g, false)
                }
                other => Err(other),
            })?;
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
        eprintln!("{}", cli::walk::unbounded_warning(&program.name, why, &path));
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
    eprintln!(
        "wrote {} ({} walk{}; build with `nvcc -O3 -arch=sm_90 {} -o {}`)",
        output.display(),
        program.name,
        if anonymous { ", written as first-visit indices" } else { "" },
        output.display(),
        program.name
    );
    Ok(())
}

fn cmd_explain(walk: &WalkSpec) -> Result<()> {
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

/// The error and its causes, `: `-separated, leaving out a cause whose text its parent
/// already shows (our error types print their I/O source inline).
fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.ends_with(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}

fn main() {
    let cli = Cli::parse();
    // Only `walk` splits its work over MPI processes; any other command started by an MPI
    // launcher would run N times over.
    if !matches!(cli.cmd, Cmd::Walk(_)) && procs::launched_size().is_some_and(|n| n > 1) {
        eprintln!("error: only `wayfarer walk` runs across MPI processes; run this command once, without mpirun");
        std::process::exit(2);
    }
    if let Some(t) = cli.threads {
        if t == 0 {
            eprintln!("error: --threads must be at least 1");
            std::process::exit(2);
        }
        rayon::ThreadPoolBuilder::new().num_threads(t).build_global().expect("the thread pool is configured once, here");
    }
    // An interrupted run leaves no output that looks complete: every output is written under a
    // temporary name, removed here before exiting.
    let _ = ctrlc::set_handler(|| {
        let removed = wayfarer::runtime::atomic_file::remove_unfinished();
        let what: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
        if what.is_empty() {
            eprintln!("\ninterrupted");
        } else {
            eprintln!("\ninterrupted: {} not written (the unfinished file was removed)", what.join(", "));
        }
        std::process::exit(130);
    });
    let r = match cli.cmd {
        Cmd::Gen(a) => cmd_gen(a),
        Cmd::Convert(a) => cmd_convert(a),
        Cmd::Info { graph } => cmd_info(graph),
        Cmd::Walk(a) => Procs::init().and_then(|p| cli::walk::cmd_walk(a, &p)),
        Cmd::Sample(a) => cmd_sample(a),
        Cmd::Triangles(a) => cmd_triangles(a),
        Cmd::Partition(a) => cmd_partition(a),
        Cmd::Explain { walk, program } => cmd_explain(&WalkSpec::new(walk, program)),
        Cmd::Emit { walk, program, output, params, cost_ratio, wgsl, spirv, kernel } => {
            let target = match (wgsl, spirv) {
                (true, _) => EmitTarget::Wgsl,
                (_, true) => EmitTarget::Spirv,
                _ => EmitTarget::Cuda,
            };
            cmd_emit(&WalkSpec::new(walk, program), &output, &params, cost_ratio.as_deref(), target, &kernel)
        }
        Cmd::Bench(a) => wayfarer::bench::run(a).map_err(|e| anyhow::anyhow!(e)),
    };
    if let Err(e) = r {
        eprintln!("error: {}", error_chain(&e));
        if e.to_string().starts_with("unknown walk") {
            eprintln!("built-in walks:");
            for (n, p) in WALKS {
                eprintln!("  {n:10} {p}");
            }
        }
        std::process::exit(1);
    }
}
