//! `partition`: workload-aware partitions (degree + anonymous-walk density).

use super::*;

#[derive(Args)]
pub(crate) struct PartitionArgs {
    /// A .wfg, .mtx or text edge list (omit for the embedded default graph).
    #[arg(long)]
    pub(crate) graph: Option<PathBuf>,
    /// Blocks to cut.
    #[arg(long)]
    pub(crate) blocks: usize,
    /// Weight of the neighborhood density in H = alpha·N + (1 − alpha)·D (each scaled to mean 1).
    #[arg(long, default_value_t = 0.5)]
    pub(crate) alpha: f64,
    /// Anonymous walks per node for the density.
    #[arg(short = 'k', long = "walks", default_value_t = 16)]
    pub(crate) walks: u32,
    /// Their length in steps.
    #[arg(short = 'd', long = "length", default_value_t = 8)]
    pub(crate) length: u32,
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Where the density walks run: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub(crate) backend: String,
    /// Write each node's block (uint32, by internal node id) of the hybrid partition to this .npy.
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Write each block's class (uint8: 1 dense, 0 sparse) to this .npy.
    #[arg(long)]
    pub(crate) classes: Option<PathBuf>,
    /// Write the nodes (original ids, uint64) in the order of `--order-by` to this .npy, e.g.
    /// as `wayfarer walk --starts` to run walkers grouped by predicted work.
    #[arg(long)]
    pub(crate) order: Option<PathBuf>,
    /// The order `--order` writes: hybrid (ascending H), degree, or id.
    #[arg(long, default_value = "hybrid")]
    pub(crate) order_by: String,
    /// No progress bar, notes, summary or report on stderr (warnings and errors still print).
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

pub(crate) fn cmd_partition(a: PartitionArgs) -> Result<()> {
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
