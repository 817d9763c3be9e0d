//! The CPU benchmark driver behind `wayfarer bench`, and graph descriptions for `info`.
//!
//! It runs the four workloads (DeepWalk, Node2Vec, MetaPath, second-order PageRank; weighted
//! and unweighted where it matters) on an R-MAT graph for each weight distribution, with
//! eRJS-only, eRVS-only and adaptive sampling, and prints a Markdown table: hardware, graph,
//! steps/s, the sampler mix, and each row's speed relative to eRVS-only on the same cell (our
//! own baseline). Only the walk itself is timed: graph generation, per-node precomputation
//! and profiling are reported separately.

mod counts;

pub use counts::{StepCounts, count_walk};

use crate::library::LibraryWalk;
use crate::{CostRatio, CsrGraph, SamplerMode, Starts, WalkConfig, graph::generate};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `wayfarer bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// R-MAT scale (Graph500 parameters, symmetrized).
    #[arg(long, default_value_t = 18)]
    pub scale: u32,
    /// R-MAT edge factor.
    #[arg(long, default_value_t = 16)]
    pub edge_factor: u32,
    /// Use this graph instead of R-MAT (weights are still generated per --weights).
    #[arg(long)]
    pub graph: Option<PathBuf>,
    /// Weight distributions, comma separated.
    #[arg(long, default_value = "uniform,pareto:1")]
    pub weights: String,
    /// Workloads, comma separated: deepwalk, deepwalk-unweighted, node2vec, node2vec-unweighted, metapath,
    /// metapath-unweighted, ppr2, ppr (the `#[walk]` library), and the hand-written references
    /// deepwalk-ref, node2vec-ref, node2vec-ref-unweighted, metapath-ref, ppr2-ref.
    #[arg(long, default_value = "deepwalk,deepwalk-unweighted,node2vec,node2vec-unweighted,metapath,metapath-unweighted,ppr2")]
    pub walks: String,
    /// Sampler policies, comma separated.
    #[arg(long, default_value = "erjs,ervs,adaptive")]
    pub samplers: String,
    /// Interleave widths to try with the adaptive sampler, comma separated: numbers or `auto`
    /// (8 on the general path, 64 on the fast paths, 32 on the lock-step eRJS path).
    #[arg(long, default_value = "auto")]
    pub interleave: String,
    /// Walkers for the scan-every-edge samplers (eRVS-only and the references), which are
    /// orders of magnitude slower on hub-heavy graphs: they run the first N queries only, and
    /// the table says so. 0 = all.
    #[arg(long, default_value_t = 4096)]
    pub slow_walkers: u64,
    /// Run only the first N walkers in every row (0 = one per node). For skewed weights,
    /// where hub rows make every sampler slow, so a table finishes in minutes.
    #[arg(long, default_value_t = 0)]
    pub walkers: u64,
    /// Walk length (MetaPath uses its schema length, 5).
    #[arg(long, default_value_t = 80)]
    pub length: u32,
    /// Edge labels generated for MetaPath.
    #[arg(long, default_value_t = 5)]
    pub labels: u32,
    /// Seed for the graph, its attributes and the walks.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the table to this Markdown file.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Compare each cell's native (macro-compiled) walk with the same walk compiled at run
    /// time by Cranelift: both run `--repeat` times, alternating; the table gives the median
    /// rates, their ratio, and whether the walks were identical.
    #[arg(long)]
    pub cranelift: bool,
    /// Runs per backend for `--cranelift` (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// The adaptive rule's cost model: `default` (the fixed model `wayfarer walk` uses, so the
    /// rows show what users get) or `profile` (measured per cell on this machine, as before
    /// 2026-12-02: the sampler choices then vary from run to run).
    #[arg(long, default_value = "default")]
    pub cost_ratio: String,
    /// Count instructions, branch mispredictions and cache misses per step instead of timing:
    /// each cell's walk runs under callgrind (valgrind's cache and branch simulators, the walk
    /// loop only), on `--count-walkers` walkers spread evenly over the nodes, one thread.
    #[arg(long, conflicts_with = "cranelift")]
    pub counts: bool,
    /// Walkers per `--counts` cell (callgrind runs some 50 times slower than the walk).
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub count_walkers: u64,
}

/// A multi-line description of a graph (what `wayfarer info` prints).
pub fn describe_graph(g: &CsrGraph, path: Option<&Path>) -> String {
    let n = g.num_nodes();
    let mut s = String::new();
    let _ = writeln!(s, "graph:        {}", path.map_or("<embedded default graph>".to_string(), |p| p.display().to_string()));
    let _ = writeln!(s, "nodes:        {n}");
    match g.orientation() {
        crate::graph::Orientation::Undirected => {
            // Each undirected edge is two directed entries, a self loop one.
            let loops = (0..n as u32).map(|v| g.neighbors(v).iter().filter(|&&t| t == v).count() as u64).sum::<u64>();
            let _ = writeln!(s, "edges:        {} undirected ({} directed entries)", (g.num_edges() + loops) / 2, g.num_edges());
        }
        _ => {
            let _ = writeln!(s, "edges:        {} directed", g.num_edges());
        }
    }
    let degs: Vec<u64> = (0..n as u32).map(|v| g.degree(v)).collect();
    let maxd = degs.iter().copied().max().unwrap_or(0);
    let mind = degs.iter().copied().min().unwrap_or(0);
    let isolated = degs.iter().filter(|&&d| d == 0).count();
    let _ = writeln!(
        s,
        "out-degree:   min {mind}, mean {:.2}, max {maxd}; {isolated} nodes without out-edges",
        g.num_edges() as f64 / n.max(1) as f64
    );
    match g.weights() {
        Some(w) => {
            let (mut lo, mut hi, mut sum, mut zeros) = (f32::INFINITY, 0f32, 0f64, 0u64);
            for &x in w {
                lo = lo.min(x);
                hi = hi.max(x);
                sum += x as f64;
                zeros += (x == 0.0) as u64;
            }
            let _ = writeln!(s, "weights:      f32, min {lo}, mean {:.4}, max {hi}, {zeros} zero", sum / w.len().max(1) as f64);
        }
        None => {
            let _ = writeln!(s, "weights:      none");
        }
    }
    match g.labels() {
        Some(_) => {
            let _ = writeln!(s, "labels:       {} distinct values (0..{})", g.num_labels(), g.num_labels());
        }
        None => {
            let _ = writeln!(s, "labels:       none");
        }
    }
    let _ = writeln!(s, "timestamps:   {}", if g.timestamps().is_some() { "yes" } else { "none" });
    let props: Vec<&str> = g.node_properties().iter().map(|p| p.name.as_str()).collect();
    let _ = writeln!(s, "node props:   {}", if props.is_empty() { "none".to_string() } else { props.join(", ") });
    let ids = match g.id_map() {
        crate::graph::IdMap::Identity => "identity (input ids are 0..n)".to_string(),
        crate::graph::IdMap::Table(_) => {
            format!("compacted from sparse input ids ({}..={})", g.id_map().original(0), g.id_map().max_original(n).unwrap_or(0))
        }
    };
    let _ = writeln!(s, "ids:          {ids}");
    let _ = writeln!(s, "memory:       {:.1} MiB", g.memory_bytes() as f64 / (1 << 20) as f64);
    s
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|s| s.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into())
}

fn git_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

struct Workload {
    key: &'static str,
    walk: &'static str,
    unweighted: bool,
}

const WORKLOADS: &[Workload] = &[
    Workload { key: "deepwalk", walk: "deepwalk", unweighted: false },
    Workload { key: "deepwalk-unweighted", walk: "deepwalk", unweighted: true },
    Workload { key: "node2vec", walk: "node2vec", unweighted: false },
    Workload { key: "node2vec-unweighted", walk: "node2vec", unweighted: true },
    Workload { key: "metapath", walk: "metapath", unweighted: false },
    Workload { key: "metapath-unweighted", walk: "metapath", unweighted: true },
    Workload { key: "ppr2", walk: "ppr2", unweighted: true },
    Workload { key: "ppr", walk: "ppr", unweighted: false },
    Workload { key: "deepwalk-ref", walk: "deepwalk-ref", unweighted: false },
    Workload { key: "node2vec-ref", walk: "node2vec-ref", unweighted: false },
    Workload { key: "node2vec-ref-unweighted", walk: "node2vec-ref", unweighted: true },
    Workload { key: "metapath-ref", walk: "metapath-ref", unweighted: false },
    Workload { key: "ppr2-ref", walk: "ppr2-ref", unweighted: true },
];

fn list(s: &str) -> Vec<String> {
    s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect()
}

/// Runs the benchmark and prints (and optionally writes) its table.
pub fn run(a: BenchArgs) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let samplers: Vec<SamplerMode> = list(&a.samplers).iter().map(|s| s.parse()).collect::<Result<_, String>>()?;
    let interleaves: Vec<usize> = list(&a.interleave)
        .iter()
        .map(|s| wayfarer_runtime::engine::parse_interleave(s).map_err(|e| format!("--interleave: {e}")))
        .collect::<Result<_, _>>()?;
    let workloads: Vec<&Workload> = list(&a.walks)
        .iter()
        .map(|k| WORKLOADS.iter().find(|w| w.key == k).ok_or_else(|| format!("unknown workload `{k}`")))
        .collect::<Result<_, _>>()?;
    let specs = list(&a.weights);
    let t = Instant::now();
    let (mut g, graph_name) = match &a.graph {
        Some(p) => (CsrGraph::load(p)?, p.display().to_string()),
        None => (
            generate::rmat(a.scale, a.edge_factor, a.seed)?,
            format!("R-MAT scale {} (Graph500 a=0.57 b=0.19 c=0.19, edge factor {}, symmetrized, deduplicated)", a.scale, a.edge_factor),
        ),
    };
    g.set_labels(Some(generate::labels(&g, generate::LabelSpec { k: a.labels }, a.seed)?))?;
    let gen_s = t.elapsed().as_secs_f64();
    let mut out = String::new();
    let _ = writeln!(out, "# CPU walk benchmark\n");
    let _ = writeln!(out, "- date: {}", chrono_like_now());
    let _ = writeln!(out, "- commit: {}", git_commit());
    let _ = writeln!(out, "- hardware: {} ({} threads)", cpu_model(), rayon::current_num_threads());
    let _ = writeln!(
        out,
        "- graph: {graph_name}: {} nodes, {} edge entries, labels U{{0..{}}} (built in {gen_s:.1} s)",
        g.num_nodes(),
        g.num_edges(),
        a.labels - 1
    );
    let _ = writeln!(
        out,
        "- walks: {}, length {} (MetaPath: schema 0..4, length 5), seed {}; eRVS-only and reference rows run the first {} walkers only (see `walkers`)",
        if a.walkers > 0 { format!("the first {} walkers (walker i starts at node i)", a.walkers) } else { "one per node".to_string() },
        a.length,
        a.seed,
        a.slow_walkers
    );
    let _ = writeln!(out, "- command: `wayfarer {}`", std::env::args().skip(1).collect::<Vec<_>>().join(" "));
    let scratch = if a.counts {
        let version = counts::valgrind_version().ok_or("--counts runs each walk under valgrind (callgrind), which is not on PATH")?;
        let _ = writeln!(
            out,
            "- counts: {version}, callgrind with its cache and branch simulators, inside the walk loop only (`run_chunk`), one thread, {} walkers spread evenly over the nodes per cell; exact and repeatable; valgrind hides AVX-512, so the Philox lanes run their AVX2 code here (bench/results/2026-12-04-label-stats-and-lanes.md derives the AVX-512 count)\n",
            a.count_walkers.min(g.num_nodes() as u64)
        );
        Some(tempfile::tempdir()?)
    } else {
        let _ = writeln!(out, "- timing: walk phase only (wall clock); `vs eRVS` = steps/s over eRVS-only steps/s on the same cell\n");
        None
    };
    if a.counts {
        let _ = writeln!(
            out,
            "| workload | weights | sampler | interleave | walkers | steps | instructions / step | D1 misses / step | LL misses / step | branch mispredicts / step |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
    } else if a.cranelift {
        let _ = writeln!(
            out,
            "| workload | weights | sampler | walkers | steps | native M steps/s (runs) | Cranelift M steps/s (runs) | Cranelift / native (medians) | identical walks | compile ms |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
    } else {
        let _ = writeln!(
            out,
            "| workload | weights | sampler | interleave | walkers | steps | seconds | M steps/s | vs eRVS | sampler mix | R, F |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|");
    }
    print!("{out}");
    for (si, spec) in specs.iter().enumerate() {
        let ws: generate::WeightSpec = spec.parse()?;
        g.set_weights(Some(generate::weights(&g, ws, a.seed + 1)))?;
        for wl in &workloads {
            if wl.unweighted && si > 0 {
                continue;
            }
            let walk = LibraryWalk::from_name(wl.walk, &[], &g, wl.unweighted)?;
            // Compiled walks read whatever weights the graph has: run the unweighted cells
            // on the graph without them (restored after the cell).
            let saved = (wl.unweighted && walk.is_compiled()).then(|| g.weights().map(|w| w.to_vec())).flatten();
            if saved.is_some() {
                g.set_weights(None)?;
            }
            let length = if wl.walk.starts_with("metapath") { walk.default_length() } else { a.length };
            let weights_col = if wl.unweighted { "-".to_string() } else { spec.clone() };
            // The fixed default, or a model profiled once per cell and reused, so the rows of one
            // cell agree.
            let model = match a.cost_ratio.as_str() {
                "default" => crate::engine::CPU_COST_MODEL,
                "profile" => {
                    let probe = WalkConfig {
                        length: 1,
                        seed: a.seed,
                        sampler: SamplerMode::Adaptive,
                        cost_ratio: CostRatio::Profile,
                        interleave: 1,
                        table_budget: None,
                        record_edges: false,
                    };
                    walk.run(&g, &Starts::Nodes(vec![0]), &probe, None)?.1.cost
                }
                other => return Err(format!("--cost-ratio {other}: use default or profile").into()),
            };
            if let Some(dir) = &scratch {
                let lines = count_cells(&a, &g, dir.path(), wl, &weights_col, &samplers, interleaves[0], length)?;
                print!("{lines}");
                out.push_str(&lines);
                if let Some(w) = saved {
                    g.set_weights(Some(w))?;
                }
                continue;
            }
            if a.cranelift {
                let lines = compare_cranelift(&a, &g, &walk, wl.key, &weights_col, &samplers, length, model)?;
                print!("{lines}");
                out.push_str(&lines);
                if let Some(w) = saved {
                    g.set_weights(Some(w))?;
                }
                continue;
            }
            let mut ervs_rate = None;
            let mut rows = Vec::new();
            for &mode in &samplers {
                let widths: &[usize] = if mode == SamplerMode::Adaptive { &interleaves } else { &interleaves[..1] };
                for &width in widths {
                    let cfg = WalkConfig {
                        length,
                        seed: a.seed,
                        sampler: mode,
                        cost_ratio: CostRatio::Model(model),
                        interleave: width,
                        table_budget: None,
                        record_edges: false,
                    };
                    let slow = !matches!(mode, SamplerMode::Adaptive | SamplerMode::Rejection);
                    let n = g.num_nodes() as u64;
                    let mut limit = if a.walkers > 0 { a.walkers.min(n) } else { n };
                    if slow && a.slow_walkers > 0 {
                        limit = limit.min(a.slow_walkers);
                    }
                    let starts = if limit < n { Starts::Nodes((0..limit as u32).collect()) } else { Starts::EveryNode { per_node: 1 } };
                    let (_, rep) = walk.run(&g, &starts, &cfg, None)?;
                    let rate = rep.steps_per_second();
                    if mode == SamplerMode::Reservoir {
                        ervs_rate = Some(rate);
                    }
                    rows.push((mode, width, rep, rate));
                }
            }
            if let Some(w) = saved {
                g.set_weights(Some(w))?;
            }
            for (mode, width, rep, rate) in rows {
                let vs = ervs_rate.map_or("-".to_string(), |e| format!("{:.2}x", rate / e));
                let line = format!(
                    "| {} | {} | {} | {} | {} | {} | {:.3} | {:.2} | {} | {} | {:.2}, {:.1}, {:.2} |\n",
                    wl.key,
                    weights_col,
                    mode,
                    width_name(width),
                    rep.walkers,
                    rep.steps,
                    rep.walk_seconds,
                    rate / 1e6,
                    vs,
                    rep.stats.mix(),
                    model.ratio,
                    model.fixed,
                    model.ratio_short
                );
                print!("{line}");
                out.push_str(&line);
            }
        }
    }
    if let Some(p) = &a.output {
        std::fs::write(p, &out)?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

/// `--counts` rows of one cell: each sampler's walk in a child under callgrind.
#[allow(clippy::too_many_arguments)]
fn count_cells(
    a: &BenchArgs,
    g: &CsrGraph,
    dir: &Path,
    wl: &Workload,
    weights_col: &str,
    samplers: &[SamplerMode],
    width: usize,
    length: u32,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    if wl.walk.ends_with("-ref") {
        return Ok(format!("| {} | {weights_col} | - | - | - | hand-written reference: not a `wayfarer walk` program | | | | |\n", wl.key));
    }
    // The cell's graph as it is now (weights of this row, or none for unweighted cells) and
    // walkers spread evenly over the nodes (low R-MAT ids are the hubs).
    let graph_path = dir.join("graph.wfg");
    g.save_wfg(&graph_path)?;
    let n = g.num_nodes() as u64;
    let walkers = a.count_walkers.min(n.max(1));
    let starts_path = dir.join("starts.txt");
    let ids: String = (0..walkers).map(|i| format!("{}\n", g.id_map().original((i * n / walkers) as u32))).collect();
    std::fs::write(&starts_path, ids)?;
    let mut lines = String::new();
    for &mode in samplers {
        let mut args: Vec<String> = vec![wl.walk.to_string(), "--graph".into(), graph_path.display().to_string()];
        args.extend(["--length".into(), length.to_string(), "--seed".into(), a.seed.to_string()]);
        args.extend(["--sampler".into(), mode.to_string(), "--interleave".into(), width_name(width)]);
        args.extend(["--starts".into(), starts_path.display().to_string()]);
        args.extend(["-o".into(), dir.join("walks.npy").display().to_string()]);
        if wl.unweighted {
            args.push("--unweighted".into());
        }
        let c = count_walk(&args, dir)?;
        lines.push_str(&format!(
            "| {} | {weights_col} | {mode} | {} | {walkers} | {} | {:.1} | {:.2} | {:.3} | {:.3} |\n",
            wl.key,
            width_name(width),
            c.steps,
            c.per_step(c.instructions),
            c.per_step(c.d1_misses),
            c.per_step(c.ll_misses),
            c.per_step(c.mispredicts)
        ));
    }
    Ok(lines)
}

/// `--cranelift` rows of one cell: the native walk and its Cranelift-compiled twin, alternating.
#[allow(clippy::too_many_arguments)]
fn compare_cranelift(
    a: &BenchArgs,
    g: &CsrGraph,
    walk: &LibraryWalk,
    key: &str,
    weights_col: &str,
    samplers: &[SamplerMode],
    length: u32,
    model: crate::engine::CostModel,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let Some((source, values)) = walk.program() else {
        return Ok(format!("| {key} | {weights_col} | - | - | - | hand-written reference: no program for Cranelift | | | | |\n"));
    };
    let (program, info) = wayfarer_compiler::compile_source(source).map_err(|d| d.render(source, key))?;
    let jit = wayfarer_jit::JitWalk::compile(&program, &info, &values, g.weights().is_some())?;
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|x, y| x.total_cmp(y));
        v[v.len() / 2]
    };
    let mut lines = String::new();
    for &mode in samplers {
        let cfg = WalkConfig {
            length,
            seed: a.seed,
            sampler: mode,
            cost_ratio: CostRatio::Model(model),
            interleave: 8,
            table_budget: None,
            record_edges: false,
        };
        let n = g.num_nodes() as u64;
        let mut limit = if a.walkers > 0 { a.walkers.min(n) } else { n };
        if !matches!(mode, SamplerMode::Adaptive | SamplerMode::Rejection) && a.slow_walkers > 0 {
            limit = limit.min(a.slow_walkers);
        }
        let starts = if limit < n { Starts::Nodes((0..limit as u32).collect()) } else { Starts::EveryNode { per_node: 1 } };
        let (mut native, mut cranelift) = (Vec::new(), Vec::new());
        let mut identical = true;
        let mut steps = 0;
        for r in 0..a.repeat.max(1) {
            let (wn, rn) = walk.run(g, &starts, &cfg, None)?;
            let (wj, rj) = crate::engine::run(&jit, g, &starts, &cfg, None)?;
            if r == 0 {
                identical = wn == wj;
            }
            steps = rn.steps;
            native.push(rn.steps_per_second() / 1e6);
            cranelift.push(rj.steps_per_second() / 1e6);
        }
        let runs = |v: &[f64]| v.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(", ");
        let (rn, rj) = (runs(&native), runs(&cranelift));
        let (mn, mj) = (median(&mut native), median(&mut cranelift));
        lines.push_str(&format!(
            "| {key} | {weights_col} | {mode} | {} | {steps} | {mn:.2} ({rn}) | {mj:.2} ({rj}) | {:.2} | {} | {:.1} |\n",
            starts.count(g.num_nodes()),
            mj / mn,
            if identical { "yes" } else { "NO" },
            jit.compile_seconds * 1e3
        ));
    }
    Ok(lines)
}

/// UTC date and time from the system clock, without a date crate.
fn chrono_like_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = secs / 86400;
    let (h, m) = ((secs % 86400) / 3600, (secs % 3600) / 60);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (mo <= 2) as i64;
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02} UTC")
}

/// An interleave width as the tables and the command line write it.
fn width_name(width: usize) -> String {
    if width == wayfarer_runtime::engine::INTERLEAVE_AUTO { "auto".into() } else { width.to_string() }
}
