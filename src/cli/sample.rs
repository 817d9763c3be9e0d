//! `sample`: GNN neighbour sampling into DGL-style blocks (`.npz`).

use super::*;

#[derive(Args)]
pub(crate) struct SampleArgs {
    /// A .wfg, .mtx or text edge list (omit for the embedded default graph).
    #[arg(long)]
    pub(crate) graph: Option<PathBuf>,
    /// Neighbors per node and layer, input layer first (DGL's order: 15,10,5 takes 5 for the
    /// seeds, then 10, then 15).
    #[arg(long, default_value = "15,10,5")]
    pub(crate) fanouts: String,
    /// Seed nodes per mini-batch.
    #[arg(long, default_value_t = 1024)]
    pub(crate) batch_size: usize,
    /// Seed nodes: a text file of node ids (one per line) or a 1-D .npy of integer ids
    /// (default: every node, in id order).
    #[arg(long)]
    pub(crate) seeds: Option<PathBuf>,
    /// Sample with replacement (default: without).
    #[arg(long)]
    pub(crate) replace: bool,
    /// Sample proportionally to the edge weights (default: uniformly).
    #[arg(long, conflicts_with = "policy")]
    pub(crate) weighted: bool,
    /// Sample proportionally to a `#[sampler]` function's weight of each edge (a `.rs` file,
    /// compiled at run time by Cranelift), e.g. `#[sampler] fn recent(s: &Step, tau: f32) ->
    /// f32 { (-(s.time() as f32) / tau).exp() }`.
    #[arg(long, value_name = "FILE.rs")]
    pub(crate) policy: Option<PathBuf>,
    /// Policy parameter `name=value` (repeatable).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub(crate) params: Vec<String>,
    /// Seed of the random draws.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Mini-batches merged into one super-batch (GARDEN's Super-batch Degree Classifier);
    /// changes only how work is grouped, never the output [default: 8 on the GPU, 1 on the
    /// CPU].
    #[arg(long)]
    pub(crate) super_batch: Option<usize>,
    /// auto (the GPU when there is a usable one and the sampling is uniform, else all CPU
    /// cores), cpu, or cuda. Both give the same blocks; weighted policies run on the CPU only.
    #[arg(long, default_value = "auto")]
    pub(crate) backend: String,
    /// GPU kernel for nodes with more edges than the fanout: grouped (GARDEN: fanout lanes per
    /// node, rows of at most --dmax edges staged in shared memory) or warp (one warp per node,
    /// no staging: the baseline of the ablation).
    #[arg(long, default_value = "grouped")]
    pub(crate) kernel: String,
    /// Grouped kernel: rows of at most this many edges are staged in shared memory.
    #[arg(long, default_value_t = wayfarer_cuda::sample::DEFAULT_DMAX)]
    pub(crate) dmax: u32,
    /// Device memory the graph may take on the GPU, e.g. 8G or 512M (default: the whole graph
    /// when it takes at most 60% of the free memory, else that share). A larger graph is
    /// sampled out of core: its offsets and longest rows in device memory, the other rows
    /// read from page-locked host memory; the blocks are the same either way.
    #[arg(long, value_name = "BYTES")]
    pub(crate) device_graph_budget: Option<String>,
    /// Output .npz (arrays b{batch}_seeds, b{batch}_l{layer}_nodes, _num_dst, _src, _dst, _eid).
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Write original (input) ids or internal ids for nodes (edge ids are CSR positions).
    #[arg(long, default_value = "original")]
    pub(crate) ids: String,
    /// No progress bar, notes or summary on stderr (warnings and errors still print).
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

pub(crate) fn cmd_sample(a: SampleArgs) -> Result<()> {
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
        // 0: the backend's default.
        super_batch: a.super_batch.unwrap_or(0),
    };
    if a.super_batch == Some(0) {
        bail!("--super-batch 0: merge at least 1 mini-batch");
    }
    let policy = match &a.policy {
        Some(path) => Some(compile_edge_program(path, wayfarer_compiler::lower_sampler_source, &a.params, &g)?.jit),
        None if !a.params.is_empty() => bail!("-p sets a --policy parameter; there is no --policy"),
        None => None,
    };
    let backend: wayfarer::gpu::Backend = a.backend.parse().map_err(|e: String| anyhow::anyhow!("--backend: {e}"))?;
    let graph_budget = a.device_graph_budget.as_deref().map(|s| super::parse_bytes("--device-graph-budget", s, false)).transpose()?;
    let kernel: wayfarer_cuda::sample::RandomKernel = a.kernel.parse().map_err(|e: String| anyhow::anyhow!("--kernel: {e}"))?;
    use wayfarer::job::sample::{SampleJob, select};
    let cfg = if policy.is_some() { SampleConfig { policy: Policy::Custom, ..cfg } } else { cfg };
    let job = SampleJob {
        graph: &g,
        seeds: &seeds,
        cfg,
        policy: policy.as_ref(),
        gpu: wayfarer_cuda::sample::GpuSampleOptions { kernel, dmax: a.dmax, graph_budget },
    };
    let chosen = select(backend, &job)?;
    if graph_budget.is_some() && chosen.runner.kind() != wayfarer::gpu::Backend::Cuda {
        eprintln!("warning: --device-graph-budget is the GPU sampler's; this run samples on the CPU, which ignores it");
    }
    if !a.quiet {
        for n in &chosen.notes {
            eprintln!("{n}");
        }
    }
    // Each mini-batch is written (or, without -o, dropped) as soon as it and the earlier ones
    // are sampled, so the run holds a window of blocks, not the epoch, and the allocator
    // reuses their memory. Writing (on this thread) overlaps the pool's sampling, so with -o
    // the run's time includes it, and the time spent writing is said apart.
    let map = g.id_map();
    let node_ids = |v: &[u32]| match ids {
        IdSpace::Internal => NpyArray::U32(v.to_vec()),
        IdSpace::Original => NpyArray::U64(v.iter().map(|&x| map.original(x)).collect()),
    };
    let out = out_file.as_ref().map(|f| f.path().to_path_buf());
    let mut npz = out_file.map(wayfarer::output::NpzWriter::new);
    let mut write_error: Option<std::io::Error> = None;
    let (mut batches, mut edges, mut arrays, mut write_secs) = (0usize, 0usize, 0usize, 0f64);
    if let Some(npz) = &mut npz {
        npz.add("fanouts", &NpyArray::U32(fanouts.clone()))?;
        arrays += 1;
    }
    let t = Instant::now();
    let sampled = chosen.runner.sample_each(&job, &mut |mb| {
        let bi = batches;
        batches += 1;
        edges += mb.blocks.iter().map(|b| b.edge_ids.len()).sum::<usize>();
        let Some(npz) = &mut npz else { return Ok(()) };
        let w = Instant::now();
        let mut entries = vec![(format!("b{bi}_seeds"), node_ids(&mb.seeds))];
        for (l, blk) in mb.blocks.into_iter().enumerate() {
            entries.push((format!("b{bi}_l{l}_nodes"), node_ids(&blk.src_nodes)));
            entries.push((format!("b{bi}_l{l}_num_dst"), NpyArray::U64(vec![blk.num_dst as u64])));
            entries.push((format!("b{bi}_l{l}_src"), NpyArray::U32(blk.edge_src)));
            entries.push((format!("b{bi}_l{l}_dst"), NpyArray::U32(blk.edge_dst)));
            entries.push((format!("b{bi}_l{l}_eid"), NpyArray::U64(blk.edge_ids)));
        }
        let written = entries.iter().try_for_each(|(name, array)| npz.add(name, array));
        arrays += entries.len();
        write_secs += w.elapsed().as_secs_f64();
        written.map_err(|e| {
            write_error = Some(e);
            wayfarer::WalkError::Config("the output could not be written".into())
        })
    });
    let secs = t.elapsed().as_secs_f64();
    if let Some(e) = write_error {
        bail!("{}: {e}", out.as_deref().unwrap_or(Path::new("")).display());
    }
    let where_ = sampled?;
    if !a.quiet {
        eprintln!(
            "sampled {batches} mini-batches of up to {} seeds, fanouts {:?} ({}, {}): {edges} edges in {secs:.3} s{} ({:.2} M edges/s, {where_})",
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
            if npz.is_some() { ", writing them as they came" } else { "" },
            edges as f64 / secs.max(1e-9) / 1e6,
        );
    }
    let (Some(npz), Some(out)) = (npz, out) else {
        if !a.quiet {
            eprintln!("(no -o given: the blocks are not written)");
        }
        return Ok(());
    };
    let w = Instant::now();
    let file = npz.finish().with_context(|| format!("{}: writing the archive's directory", out.display()))?;
    file.commit()?;
    write_secs += w.elapsed().as_secs_f64();
    if !a.quiet {
        eprintln!("wrote {} ({arrays} arrays; {write_secs:.3} s of writing on the main thread while the pool sampled)", out.display());
    }
    Ok(())
}
