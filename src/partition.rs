//! Workload-aware partitioning with a dual metric (the GCN partitioning paper in
//! `shared/seeds/001`): a node's work is predicted by `H(v) = α·N(v) + (1−α)·D(v)`, with `D` its
//! degree and `N` its neighborhood density measured by `k` anonymous random walks of length
//! `d` (our own `anonymous` walk, on the CPU or the GPU). Nodes sorted by `H` and cut into
//! contiguous blocks of equal total `H` get blocks of similar nodes and similar work; blocks
//! whose mean `H` exceeds `τ = μ_H + 0.5 σ_H` are the dense class, the rest sparse.
//!
//! Choices the paper leaves open, made here:
//! - `N(v)` is the mean, over `v`'s `k` walks, of the fraction of steps that reached a node
//!   not seen before on that walk: `(distinct nodes − 1) / d`, read off the anonymous walk as
//!   its largest first-visit index over `d`. It is 1 where walks keep finding new nodes (a wide,
//!   tree-like neighborhood whose aggregation touches much memory) and small where they circle
//!   in a small dense cluster; 0 for isolated nodes. Walks follow the edge weights if the
//!   graph has them (uniform otherwise).
//! - `N` and `D` are each scaled to mean 1 over the nodes before mixing, so `α` weighs
//!   comparable quantities and `H` has mean 1.
//! - Blocks are cut where the prefix of the sorted metric reaches equal shares of its total
//!   (not at equal node counts), which is what bounds the block imbalance.

use crate::gpu::{Backend, CudaDevice, GpuCost};
use crate::library::LibraryWalk;
use crate::{CsrGraph, SamplerMode, Starts, WalkConfig, WalkError, Walks};
use rayon::prelude::*;

/// How to compute the metric and the blocks.
#[derive(Clone, Debug)]
pub struct PartitionConfig {
    /// Blocks to cut.
    pub blocks: usize,
    /// Weight of the density in the hybrid metric (0: degree only, 1: density only).
    pub alpha: f64,
    /// Anonymous walks per node (`k`).
    pub walks: u32,
    /// Their length in steps (`d`).
    pub length: u32,
    /// Seed of the walks.
    pub seed: u64,
}

impl Default for PartitionConfig {
    fn default() -> Self {
        PartitionConfig { blocks: 64, alpha: 0.5, walks: 16, length: 8, seed: 1 }
    }
}

/// The per-node metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeMetrics {
    /// `D(v)`: out-degree.
    pub degree: Vec<u64>,
    /// `N(v)`: neighborhood density in [0, 1] (see the module docs).
    pub density: Vec<f64>,
    /// `H(v) = α·N(v)/mean(N) + (1−α)·D(v)/mean(D)`.
    pub hybrid: Vec<f64>,
}

/// A partitioning scheme compared in the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Node-id order, equal node counts per block.
    Naive,
    /// Sorted by degree, cut at equal mass of degree + 1.
    Degree,
    /// Sorted by the hybrid metric, cut at equal hybrid mass.
    Hybrid,
}

impl Scheme {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Naive => "naive (id order, equal counts)",
            Scheme::Degree => "degree-only (sorted, equal degree+1 mass)",
            Scheme::Hybrid => "hybrid (sorted, equal H mass)",
        }
    }
}

/// A partition: a block per node, and each block's class.
#[derive(Clone, Debug)]
pub struct Partition {
    /// `block[v]`: the block of node `v`.
    pub block: Vec<u32>,
    /// Per block: whether it is dense (mean `H` above `τ`).
    pub dense: Vec<bool>,
    /// `τ = μ_H + 0.5 σ_H`.
    pub threshold: f64,
}

/// How balanced a partition is.
#[derive(Clone, Debug)]
pub struct Balance {
    /// The scheme.
    pub scheme: Scheme,
    /// max / mean block workload, the workload of a node being `H(v)`.
    pub imbalance_hybrid: f64,
    /// max / mean block workload, the workload of a node being `D(v) + 1`.
    pub imbalance_degree: f64,
    /// The paper's objective: the sum over blocks of the variance of `H` inside the block.
    pub within_block_variance: f64,
}

/// One anonymous walk's share of `N(v)`: its distinct nodes beyond the start, per step.
fn density_term(walk: &[u32], d: u32) -> f64 {
    if d == 0 {
        return 0.0;
    }
    let distinct = walk.iter().copied().max().map_or(1, |m| m as u64 + 1);
    (distinct - 1) as f64 / d as f64
}

/// `N(v)` for every node: `k` anonymous walks of `d` steps from each (eRJS), on the GPU `dev`
/// when given, else on the CPU.
pub fn density(g: &CsrGraph, k: u32, d: u32, seed: u64, dev: Option<&CudaDevice>) -> Result<Vec<f64>, WalkError> {
    if k == 0 {
        return Err(WalkError::param("walks (-k)", "must be at least 1"));
    }
    let walk = LibraryWalk::from_name("anonymous", &[], g, false)?;
    let starts = Starts::EveryNode { per_node: k };
    let n = g.num_nodes();
    // The walks stream through in query order (walk j of node v is query j·n + v), so memory
    // stays bounded whatever k, and each node's terms are summed in the order of j.
    let mut sum = vec![0.0f64; n];
    let mut query = 0u64;
    let mut add = |b: Walks| {
        for w in b.iter() {
            sum[(query % n as u64) as usize] += density_term(w, d);
            query += 1;
        }
    };
    const BATCH_BYTES: usize = 256 << 20;
    match dev {
        Some(dev) => {
            crate::gpu::run_library_walk_streaming(
                std::slice::from_ref(dev),
                &walk,
                g,
                &starts,
                d,
                seed,
                SamplerMode::Rejection,
                GpuCost::Default,
                false,
                None,
                None,
                BATCH_BYTES,
                &mut |b| {
                    add(b);
                    Ok(())
                },
            )
            .map_err(|e| WalkError::Config(e.to_string()))?;
        }
        None => {
            let cfg = WalkConfig {
                length: d,
                seed,
                sampler: SamplerMode::Rejection,
                cost_ratio: crate::CostRatio::Fixed(1.0),
                interleave: 8,
                table_budget: None,
                record_edges: false,
            };
            walk.run_streaming(g, &starts, &cfg, None, BATCH_BYTES as u64, &mut |b| {
                add(b);
                Ok(())
            })?;
        }
    }
    Ok(sum.into_iter().map(|s| s / k as f64).collect())
}

/// The hybrid metric from degrees and densities (each scaled to mean 1).
pub fn hybrid(degree: &[u64], density: &[f64], alpha: f64) -> Vec<f64> {
    let n = degree.len().max(1) as f64;
    let mean_d = degree.iter().sum::<u64>() as f64 / n;
    let mean_n = density.iter().sum::<f64>() / n;
    let scale = |x: f64, mean: f64| if mean > 0.0 { x / mean } else { 0.0 };
    degree.iter().zip(density).map(|(&d, &nv)| alpha * scale(nv, mean_n) + (1.0 - alpha) * scale(d as f64, mean_d)).collect()
}

/// `τ = μ_H + 0.5 σ_H`: a block (or, for aggregation, a row) whose `H` exceeds it is dense.
pub fn dense_threshold(hybrid: &[f64]) -> f64 {
    let n = hybrid.len().max(1) as f64;
    let mean = hybrid.iter().sum::<f64>() / n;
    let var = hybrid.iter().map(|h| (h - mean) * (h - mean)).sum::<f64>() / n;
    mean + 0.5 * var.sqrt()
}

/// The dense rows of an aggregation: rows (a sampled block's destination nodes) of `degree`
/// edges in the block whose nodes have neighbourhood density `density` (`N(v)`, see the
/// module docs; all 0 when not measured) are dense where their hybrid metric, over these
/// rows, exceeds [`dense_threshold`]. The Python package's `wayfarer.aggregate` classifies
/// by this rule (with torch operations on the block's device; a test compares the two).
pub fn dense_rows(degree: &[u64], density: &[f64], alpha: f64) -> Vec<bool> {
    let h = hybrid(degree, density, alpha);
    let tau = dense_threshold(&h);
    h.iter().map(|&x| x > tau).collect()
}

/// Degrees, densities and the hybrid metric of every node.
pub fn metrics(g: &CsrGraph, cfg: &PartitionConfig, backend: Backend) -> Result<NodeMetrics, WalkError> {
    if !(0.0..=1.0).contains(&cfg.alpha) {
        return Err(WalkError::param("alpha", format!("{} is outside [0, 1]", cfg.alpha)));
    }
    // The one device rule of every job (`auto`: the GPU when one is usable).
    let gpus = crate::job::Gpus { count: 1, ..Default::default() };
    let dev = match crate::job::choose(backend, Ok(()), &gpus, "partition")?.0 {
        crate::job::Device::Cuda(mut devs) => Some(devs.remove(0)),
        crate::job::Device::Cpu => None,
    };
    let degree: Vec<u64> = (0..g.num_nodes() as u32).map(|v| g.degree(v)).collect();
    let density = density(g, cfg.walks, cfg.length, cfg.seed, dev.as_ref())?;
    let hybrid = hybrid(&degree, &density, cfg.alpha);
    Ok(NodeMetrics { degree, density, hybrid })
}

/// Cuts `order` (nodes) into `blocks` contiguous runs of about equal total `weight`: a node
/// goes to the block its prefix midpoint falls in. Returns the block of every node.
pub fn contiguous_blocks(order: &[u32], weight: &[f64], blocks: usize) -> Vec<u32> {
    let blocks = blocks.max(1);
    let total: f64 = order.iter().map(|&v| weight[v as usize]).sum();
    let mut block = vec![0u32; weight.len()];
    let mut before = 0.0;
    for (i, &v) in order.iter().enumerate() {
        let w = weight[v as usize];
        let b = if total > 0.0 { (((before + w / 2.0) / total) * blocks as f64) as usize } else { i * blocks / order.len().max(1) };
        block[v as usize] = b.min(blocks - 1) as u32;
        before += w;
    }
    block
}

/// The nodes in `scheme`'s order: by id, by degree, or by the hybrid metric (ascending; ties
/// by id).
pub fn order(m: &NodeMetrics, scheme: Scheme) -> Vec<u32> {
    let mut order: Vec<u32> = (0..m.degree.len() as u32).collect();
    match scheme {
        Scheme::Naive => {}
        Scheme::Degree => order.par_sort_by_key(|&v| (m.degree[v as usize], v)),
        Scheme::Hybrid => order.par_sort_by(|&a, &b| m.hybrid[a as usize].total_cmp(&m.hybrid[b as usize]).then(a.cmp(&b))),
    }
    order
}

/// The partition of `scheme` with the dense/sparse class of every block.
pub fn partition(m: &NodeMetrics, blocks: usize, scheme: Scheme) -> Partition {
    let n = m.degree.len();
    let block = match scheme {
        Scheme::Naive => (0..n).map(|v| (v * blocks.max(1) / n.max(1)) as u32).collect(),
        Scheme::Degree => {
            let w: Vec<f64> = m.degree.iter().map(|&d| d as f64 + 1.0).collect();
            contiguous_blocks(&order(m, scheme), &w, blocks)
        }
        Scheme::Hybrid => contiguous_blocks(&order(m, scheme), &m.hybrid, blocks),
    };
    let threshold = dense_threshold(&m.hybrid);
    let (sum, count) = block_sums(&block, &m.hybrid, blocks);
    let dense = sum.iter().zip(&count).map(|(&s, &c)| c > 0 && s / c as f64 > threshold).collect();
    Partition { block, dense, threshold }
}

fn block_sums(block: &[u32], w: &[f64], blocks: usize) -> (Vec<f64>, Vec<u64>) {
    let mut sum = vec![0.0; blocks.max(1)];
    let mut count = vec![0u64; blocks.max(1)];
    for (v, &b) in block.iter().enumerate() {
        sum[b as usize] += w[v];
        count[b as usize] += 1;
    }
    (sum, count)
}

/// max / mean of the blocks' total `w`.
pub fn imbalance(block: &[u32], w: &[f64], blocks: usize) -> f64 {
    let (sum, _) = block_sums(block, w, blocks);
    let mean = sum.iter().sum::<f64>() / sum.len() as f64;
    let max = sum.iter().copied().fold(0.0, f64::max);
    if mean > 0.0 { max / mean } else { 1.0 }
}

/// How balanced `p` is (see [`Balance`]).
pub fn balance(m: &NodeMetrics, p: &Partition, scheme: Scheme) -> Balance {
    let blocks = p.dense.len();
    let degree_work: Vec<f64> = m.degree.iter().map(|&d| d as f64 + 1.0).collect();
    let (sum, count) = block_sums(&p.block, &m.hybrid, blocks);
    let mut sq = vec![0.0; blocks];
    for (v, &b) in p.block.iter().enumerate() {
        let mean = sum[b as usize] / count[b as usize] as f64;
        sq[b as usize] += (m.hybrid[v] - mean).powi(2);
    }
    let within = sq.iter().zip(&count).map(|(&s, &c)| if c > 0 { s / c as f64 } else { 0.0 }).sum();
    Balance {
        scheme,
        imbalance_hybrid: imbalance(&p.block, &m.hybrid, blocks),
        imbalance_degree: imbalance(&p.block, &degree_work, blocks),
        within_block_variance: within,
    }
}
