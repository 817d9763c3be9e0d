//! The `wayfarer` command line: generate, convert and inspect graphs; run walks; benchmark.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

mod cli;
mod procs;
use cli::emit::{EmitArgs, ExplainArgs};
use cli::graph::{ConvertArgs, GenArgs};
use cli::partition::PartitionArgs;
use cli::sample::SampleArgs;
use cli::triangles::TrianglesArgs;
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
    Explain(ExplainArgs),
    /// Write a walk as one standalone CUDA file with a `main` (loads a .wfg, runs the walk,
    /// writes .npy) that `nvcc -arch=sm_90 walk.cu` builds on its own.
    Emit(EmitArgs),
    /// Run the CPU benchmark (see bench/README.md).
    Bench(wayfarer::bench::BenchArgs),
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
    wayfarer::runtime::memory::keep_freed_memory();
    let cli = Cli::parse();
    // Only `walk` and `triangles` split their work over MPI processes; any other command
    // started by an MPI launcher would run N times over.
    if !matches!(cli.cmd, Cmd::Walk(_) | Cmd::Triangles(_)) && procs::launched_size().is_some_and(|n| n > 1) {
        eprintln!("error: only `wayfarer walk` and `wayfarer triangles` run across MPI processes; run this command once, without mpirun");
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
        Cmd::Gen(a) => cli::graph::cmd_gen(a),
        Cmd::Convert(a) => cli::graph::cmd_convert(a),
        Cmd::Info { graph } => cli::graph::cmd_info(graph),
        Cmd::Walk(a) => Procs::init().and_then(|p| cli::walk::cmd_walk(a, &p)),
        Cmd::Sample(a) => cli::sample::cmd_sample(a),
        Cmd::Triangles(a) => Procs::init().and_then(|p| cli::triangles::cmd_triangles(a, &p)),
        Cmd::Partition(a) => cli::partition::cmd_partition(a),
        Cmd::Explain(a) => cli::emit::cmd_explain(a),
        Cmd::Emit(a) => cli::emit::cmd_emit(a),
        Cmd::Bench(a) => wayfarer::bench::run(a).map_err(|e| anyhow::anyhow!(e)),
    };
    if let Err(e) = r {
        eprintln!("error: {}", error_chain(&e));
        if e.to_string().starts_with("unknown walk") {
            eprintln!("built-in walks:");
            for (n, p) in wayfarer::library::catalog() {
                eprintln!("  {n:10} {p}");
            }
        }
        std::process::exit(1);
    }
}
