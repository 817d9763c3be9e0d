//! `gen`, `convert` and `info`: making, reading and describing graphs.

use super::*;

#[derive(Args)]
pub(crate) struct Attrs {
    /// Edge weights to generate: uniform (U[1,5)), uniform:LO:HI, pareto:ALPHA, degree.
    #[arg(long)]
    pub(crate) weights: Option<String>,
    /// Generate K uniform edge labels in [0, K).
    #[arg(long, value_name = "K")]
    pub(crate) labels: Option<u32>,
    /// Seed for the generated attributes (default: --seed).
    #[arg(long)]
    pub(crate) attr_seed: Option<u64>,
}

#[derive(Args)]
pub(crate) struct GenArgs {
    /// rmat (Graph500), ba (Barabási–Albert) or er (Erdős–Rényi).
    pub(crate) model: String,
    /// R-MAT: log2 of the node count.
    #[arg(long)]
    pub(crate) scale: Option<u32>,
    /// R-MAT: generated edges per node (before symmetrizing and deduplicating).
    #[arg(long, default_value_t = 16)]
    pub(crate) edge_factor: u32,
    /// BA / ER: number of nodes.
    #[arg(long)]
    pub(crate) nodes: Option<usize>,
    /// BA: edges attached per new node.
    #[arg(long, default_value_t = 4)]
    pub(crate) m: usize,
    /// ER: edge probability.
    #[arg(long)]
    pub(crate) p: Option<f64>,
    /// ER: expected degree (alternative to --p).
    #[arg(long)]
    pub(crate) avg_degree: Option<f64>,
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    #[command(flatten)]
    pub(crate) attrs: Attrs,
    /// Output: .wfg, or .txt (.edges, .tsv, .csv) for a text edge list.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// No summary on stderr (warnings and errors still print).
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

#[derive(Args)]
pub(crate) struct ConvertArgs {
    /// Input: a text edge list, a Matrix Market file (.mtx) or a .wfg.
    pub(crate) input: PathBuf,
    /// Output: .wfg, or .txt for a text edge list in original ids.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Add the reverse of every edge.
    #[arg(long)]
    pub(crate) undirected: bool,
    /// Column (from 1) with edge weights.
    #[arg(long)]
    pub(crate) weight_col: Option<usize>,
    /// Column (from 1) with integer edge labels.
    #[arg(long)]
    pub(crate) label_col: Option<usize>,
    /// Column (from 1) with timestamps: integers, or decimals with --time-scale.
    #[arg(long)]
    pub(crate) time_col: Option<usize>,
    /// Multiply every timestamp by this power of ten, exactly, before storing it as a 64-bit
    /// integer: `--time-scale 1000` reads seconds with up to three decimals as milliseconds.
    #[arg(long, value_name = "10^K", default_value_t = 1)]
    pub(crate) time_scale: u64,
    /// Lines to skip at the start of an edge list (a header such as `src dst weight`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) skip_header: usize,
    /// Keep one edge per (source, destination).
    #[arg(long)]
    pub(crate) dedup: bool,
    /// Drop self loops.
    #[arg(long)]
    pub(crate) drop_self_loops: bool,
    /// Add a per-node property from a file of `id value` lines (original ids; unlisted nodes
    /// get 0), as NAME=FILE; repeatable.
    #[arg(long = "node-prop", value_name = "NAME=FILE")]
    pub(crate) node_props: Vec<String>,
    /// Input format: auto (by extension), edges, mtx, wfg.
    #[arg(long, default_value = "auto")]
    pub(crate) format: String,
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    #[command(flatten)]
    pub(crate) attrs: Attrs,
    /// No notes or summary on stderr (warnings and errors still print).
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

pub(crate) fn add_attrs(g: &mut CsrGraph, a: &Attrs, seed: u64) -> Result<()> {
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
pub(crate) fn graph_output(path: &Path) -> Result<(AtomicFile, bool)> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let wfg = match ext {
        "wfg" => true,
        "txt" | "edges" | "tsv" | "csv" => false,
        _ => bail!("{}: unknown output extension; use .wfg, or .txt for a text edge list", path.display()),
    };
    Ok((AtomicFile::create(path)?, wfg))
}

pub(crate) fn save_graph(g: &CsrGraph, (file, wfg): (AtomicFile, bool)) -> Result<()> {
    if wfg {
        g.save_wfg_into(file)?
    } else {
        g.save_edge_list_into(file)?
    }
    Ok(())
}

pub(crate) fn cmd_gen(a: GenArgs) -> Result<()> {
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

pub(crate) fn cmd_convert(a: ConvertArgs) -> Result<()> {
    let t = Instant::now();
    let input_kind = wayfarer_runtime::graph::format_extension(&a.input).unwrap_or("").to_string();
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

pub(crate) fn cmd_info(path: Option<PathBuf>) -> Result<()> {
    let g = load_graph(path.as_deref(), false)?;
    print!("{}", wayfarer::bench::describe_graph(&g, path.as_deref()));
    Ok(())
}
