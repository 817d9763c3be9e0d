//! The subcommands of the `wayfarer` command line, one module each, and what they share:
//! loading a graph, parsing parameters, ids and cost models, start and seed files, progress.

pub(crate) mod emit;
pub(crate) mod graph;
pub(crate) mod partition;
pub(crate) mod sample;
pub(crate) mod triangles;
pub(crate) mod walk;

pub(crate) use anyhow::{Context, Result, bail};
pub(crate) use clap::Args;
pub(crate) use std::path::{Path, PathBuf};
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
pub(crate) use std::time::{Duration, Instant};
pub(crate) use wayfarer::graph::{Dedup, EdgeListOptions, LabelSpec, WeightSpec, generate};
pub(crate) use wayfarer::job::gpu_cost;
pub(crate) use wayfarer::library::LibraryWalk;
pub(crate) use wayfarer::output::{AtomicFile, IdSpace, PerNodeFile};
pub(crate) use wayfarer::{CostRatio, CsrGraph};

/// `1234`, `64K`, `512M`, `2G` (powers of 1024), the value of option `flag`; 0 only where
/// `zero_ok`.
pub(crate) fn parse_bytes(flag: &str, s: &str, zero_ok: bool) -> Result<usize> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => bail!("{flag} {s}: use bytes or a K, M, G or T suffix"),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let v: f64 = num.trim().parse().map_err(|_| anyhow::anyhow!("{flag} {s}: not a size"))?;
    if !v.is_finite() {
        bail!("{flag} {s}: not a finite size");
    }
    if v < 0.0 || (v == 0.0 && !zero_ok) {
        bail!("{flag} {s}: must be {}", if zero_ok { "0 or more" } else { "positive" });
    }
    if mult == 1 && v.fract() != 0.0 {
        bail!("{flag} {s}: not a whole number of bytes");
    }
    // A fraction of a unit is rounded down to whole bytes (`1.5K` is 1536).
    let bytes = (v * mult as f64).floor();
    if bytes >= usize::MAX as f64 {
        bail!("{flag} {s}: more bytes than this machine can address");
    }
    if bytes == 0.0 && !zero_ok {
        bail!("{flag} {s}: must be at least one byte");
    }
    Ok(bytes as usize)
}

pub(crate) fn load_graph(path: Option<&Path>, quiet: bool) -> Result<CsrGraph> {
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

pub(crate) fn parse_params(raw: &[String]) -> Result<Vec<(String, String)>> {
    raw.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => bail!("-p {s}: expected NAME=VALUE, e.g. -p a=2"),
        })
        .collect()
}

/// Shows a progress bar on stderr once a run has taken more than a second.
pub(crate) fn with_progress<T>(total: u64, quiet: bool, counter: &AtomicU64, f: impl FnOnce() -> T) -> T {
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
        let r = f();
        finished.store(true, Ordering::Relaxed);
        r
    })
}

/// Reads start nodes (original ids, one per line) and maps them to internal ids.
pub(crate) fn read_starts(g: &CsrGraph, path: &Path) -> Result<Vec<u32>> {
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
pub(crate) fn read_seeds(g: &CsrGraph, path: &Path) -> Result<Vec<u32>> {
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

/// A `#[sampler]` or `#[mask]` file, lowered, analyzed, its parameters set and JIT-compiled.
pub(crate) struct EdgeProgram {
    pub(crate) compiled: wayfarer::job::CompiledProgram,
    pub(crate) jit: wayfarer_jit::JitWalk,
}

/// A `#[sampler]` or `#[mask]` file (`lower` is the compiler's entry for it) with its `-p`
/// parameters, JIT-compiled; compile errors are printed with their carets.
pub(crate) fn compile_edge_program(
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
    Ok(EdgeProgram { compiled: wayfarer::job::CompiledProgram { program, info, values }, jit })
}

/// `--cost-ratio R[,F[,R_SHORT]]` or `profile`.
pub(crate) fn parse_cost_ratio(s: &str) -> Result<CostRatio> {
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

/// `--ids original|internal`.
pub(crate) fn parse_ids(s: &str) -> Result<IdSpace> {
    match s {
        "original" => Ok(IdSpace::Original),
        "internal" => Ok(IdSpace::Internal),
        x => bail!("--ids {x}: use original or internal"),
    }
}

/// Commands other than `walk` run on the CPU or CUDA only.
pub(crate) fn not_wgpu(backend: wayfarer::gpu::Backend, command: &str) -> Result<()> {
    if backend == wayfarer::gpu::Backend::Wgpu {
        bail!("--backend wgpu runs walks only; `wayfarer {command}` runs on cpu or cuda");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_parse_with_suffixes_and_bad_ones_are_refused() {
        assert_eq!(parse_bytes("--x", "1234", false).unwrap(), 1234);
        assert_eq!(parse_bytes("--x", " 64K ", false).unwrap(), 64 << 10);
        assert_eq!(parse_bytes("--x", "1.5k", false).unwrap(), 1536);
        assert_eq!(parse_bytes("--x", "2G", false).unwrap(), 2 << 30);
        assert_eq!(parse_bytes("--x", "0", true).unwrap(), 0);
        for (bad, why) in [
            ("0", "positive"),
            ("-1", "positive"),
            ("0.5", "whole number"),
            ("0.0001K", "at least one byte"),
            ("1e30T", "address"),
            ("12Q", "suffix"),
            ("lots", "suffix"),
            ("1.2.3", "not a size"),
            ("K", "not a size"),
            ("NaN", "suffix"),
            ("1e400", "finite"),
        ] {
            let e = parse_bytes("--x", bad, false).unwrap_err().to_string();
            assert!(e.starts_with("--x ") && e.contains(why), "{bad}: {e}");
        }
    }
}
