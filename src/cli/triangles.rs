//! `triangles`: exact triangle counts, per node and masked.

use super::*;

#[derive(Args)]
pub(crate) struct TrianglesArgs {
    /// A .wfg, .mtx or text edge list (omit for the embedded default graph); directed input
    /// is symmetrized (each pair of nodes counts once).
    #[arg(long)]
    pub(crate) graph: Option<PathBuf>,
    /// Count only triangles whose three edges a `#[mask]` function keeps (a `.rs` file,
    /// compiled at run time: Cranelift on the CPU, NVRTC on the GPU), e.g. `#[mask] fn heavy(s: &Step, t: f32) -> bool {
    /// s.weight() > t }`.
    #[arg(long, value_name = "FILE.rs")]
    pub(crate) mask: Option<PathBuf>,
    /// Mask parameter `name=value` (repeatable).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub(crate) params: Vec<String>,
    /// Write each node's triangle count (uint64) to this .npz (`ids`, `values`: the input's node
    /// ids), or to a .npy indexed by node id when the ids are 0..n.
    #[arg(long)]
    pub(crate) per_node: Option<PathBuf>,
    /// Write each node's local clustering coefficient (float64) to this .npz (`ids`, `values`), or
    /// to a .npy indexed by node id when the ids are 0..n.
    #[arg(long)]
    pub(crate) clustering: Option<PathBuf>,
    /// auto (the GPU when there is a usable one, else all CPU cores), cpu, or cuda. On the GPU
    /// an undirected graph is oriented and masked on the device (the mask compiled by the CUDA
    /// backend); a directed one is symmetrized and oriented on the CPU first.
    #[arg(long, default_value = "auto")]
    pub(crate) backend: String,
    /// GPUs to split the edges over (--backend cuda/auto; 0 = every visible GPU).
    #[arg(long, default_value_t = 0)]
    pub(crate) gpus: usize,
    /// Count this many times in this process (the graph loaded and the mask compiled once),
    /// printing each trial's time and then the average, median and fastest, the way GAP's
    /// `-n` does; the totals must agree. The outputs hold the last trial's counts.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub(crate) trials: u32,
    /// No progress bar, notes or summary on stderr (warnings and errors still print; the total
    /// still goes to stdout).
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

/// Counts the triangles; under `mpirun`, each process counts its rank's share of the rows (on
/// the GPU of its local rank, or the CPU), the shares are summed, and rank 0 prints and writes
/// the outputs (the counts are the same for any number of processes).
pub(crate) fn cmd_triangles(a: TrianglesArgs, procs: &crate::procs::Procs) -> Result<()> {
    use wayfarer::output::NpyArray;
    let backend = a.backend.parse::<wayfarer::gpu::Backend>().map_err(|e| anyhow::anyhow!("--backend: {e}"))?;
    let g = load_graph(a.graph.as_deref(), a.quiet)?;
    // Created before the count, so a bad path fails at once.
    let writer = procs.rank == 0;
    let per_node_file = a.per_node.as_deref().filter(|_| writer).map(|p| PerNodeFile::create(p, &g, "per-node")).transpose()?;
    let clustering_file = a.clustering.as_deref().filter(|_| writer).map(|p| PerNodeFile::create(p, &g, "clustering")).transpose()?;
    let mask = match &a.mask {
        Some(path) => Some(compile_edge_program(path, wayfarer_compiler::lower_mask_source, &a.params, &g)?),
        None if !a.params.is_empty() => bail!("-p sets a --mask parameter; there is no --mask"),
        None => None,
    };
    use wayfarer::triangles::Detail;
    let detail = if a.per_node.is_some() || a.clustering.is_some() { Detail::PerNode } else { Detail::Total };
    use wayfarer::job::triangles::{EdgeMask, TriangleJob, select};
    let job = TriangleJob {
        graph: &g,
        mask: mask.as_ref().map(|m| EdgeMask { jit: &m.jit, program: &m.compiled }),
        detail,
        gpus: wayfarer::job::Gpus { count: a.gpus, only: procs.sharded().then_some(procs.local_rank), ..Default::default() },
        share: wayfarer::triangles::Share::new(procs.rank, procs.size)?,
    };
    let chosen = select(backend, &job)?;
    if !a.quiet {
        for n in &chosen.notes {
            eprintln!("{n}");
        }
    }
    let mut trial_secs = Vec::with_capacity(a.trials as usize);
    let mut last: Option<wayfarer::job::triangles::TriangleReport> = None;
    for trial in 1..=a.trials {
        let t = Instant::now();
        let done = chosen.runner.count(&job)?;
        let secs = t.elapsed().as_secs_f64();
        if let Some(before) = last.as_ref().filter(|b| b.counts.total != done.counts.total) {
            bail!(
                "--trials: trial {trial} counted {} triangles where the one before counted {} (a bug: please report it)",
                done.counts.total,
                before.counts.total
            );
        }
        if a.trials > 1 && !a.quiet && writer {
            eprintln!("trial {trial}: {secs:.6} s ({})", done.backend);
        }
        trial_secs.push(secs);
        last = Some(done);
    }
    let done = last.expect("at least one trial");
    let (mut counts, mut where_) = (done.counts, done.backend);
    let t = Instant::now();
    if procs.sharded() {
        // The shares' sums: the total and kept edges, then the per-node counts (the degrees
        // are the whole graph's on rank 0 already).
        let mut sums = [counts.total, counts.kept_edges];
        procs.sum_u64(&mut sums);
        [counts.total, counts.kept_edges] = sums;
        procs.sum_u64(&mut counts.per_node);
        where_ = format!("{} processes; rank 0: {where_}", procs.size);
    }
    let secs = trial_secs.last().copied().unwrap_or(0.0) + t.elapsed().as_secs_f64();
    if !writer {
        return Ok(());
    }
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
    if a.trials > 1 && !a.quiet {
        let mut sorted = trial_secs.clone();
        sorted.sort_by(f64::total_cmp);
        let average = trial_secs.iter().sum::<f64>() / trial_secs.len() as f64;
        eprintln!(
            "trials: {}; average {average:.6} s, median {:.6} s, fastest {:.6} s (each the whole count: orientation and counting, or upload and kernels)",
            trial_secs.len(),
            sorted[sorted.len() / 2],
            sorted[0]
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
