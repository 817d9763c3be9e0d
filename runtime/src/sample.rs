//! GNN neighbor sampling (GraphSAGE-style), the CPU path: for each mini-batch of seed nodes
//! and each layer, up to `fanout` neighbors of every node in the layer's frontier, returned as
//! DGL-style blocks (message-flow graphs).
//!
//! Semantics, per mini-batch (seeds in the given order, split into batches of `batch_size`):
//! - The last block's destination nodes are the batch's seeds (deduplicated, first occurrence
//!   first). Going from the output layer towards the input, each block samples the neighbors
//!   of its destination nodes (the rows of the CSR: out-neighbors, which are the in-neighbors
//!   of an undirected or symmetrized graph); its source nodes are its destination nodes first,
//!   then every newly reached node in order of first appearance; the next block (one layer
//!   closer to the input) has those source nodes as its destination nodes. So every block's
//!   destination set is contained in its source set, as DGL's `to_block` guarantees.
//! - Edges are recorded as `(source, destination)` in block-local ids (an index into the
//!   block's source list, and into its destination list), with their global edge ids; the
//!   sampled neighbor is the source, the node whose row was sampled the destination.
//! - Without replacement, a node with `degree <= fanout` keeps every edge (a *full* node);
//!   otherwise a uniformly random `fanout`-subset of its edges (Floyd's algorithm). With
//!   replacement, `fanout` independent uniform draws (none for a node without edges).
//! - Weighted (edge weights or a policy): without replacement, the `fanout` smallest keys
//!   `E/w` (`E ~ Exp(1)`; successive sampling proportional to `w`, as eRVS's keys, found with
//!   A-ExpJ jumps; weight 0 is never taken); with replacement, `fanout` independent draws
//!   proportional to `w`.
//! - Reproducible: every node's draws come from its own stream keyed by `(seed, batch, layer,
//!   node)`, so the output does not depend on the thread count.

use crate::error::WalkError;
use crate::graph::CsrGraph;
use crate::rng::{PhiloxLanes, Purpose, StepRng};
use rayon::prelude::*;
use std::collections::HashMap;

mod draws;
mod local_ids;

pub use draws::BLOCKS_PER_DRAW;
use draws::{uniform_count, uniform_row};
use local_ids::{LocalIds, LocalTable};

/// Whether a node's neighbors are drawn with or without replacement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Replacement {
    /// A uniformly random subset (every neighbor at most once).
    #[default]
    Without,
    /// Independent draws (a neighbor may repeat).
    With,
}

/// How likely each edge is to be sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// Every edge alike.
    #[default]
    Uniform,
    /// Proportional to the graph's edge weights.
    EdgeWeight,
    /// Proportional to a policy's weight of each edge (a compiled `#[sampler]` function):
    /// pass it to [`sample_by`].
    Custom,
}

/// A sampling policy's weight of edge `e` (an index into the CSR's edge arrays) of node `v`'s
/// row. It must be finite and non-negative; 0 means never.
pub type EdgeWeightFn<'a> = &'a (dyn Fn(u32, usize) -> f32 + Sync);

/// Options of one sampling run.
#[derive(Clone, Debug)]
pub struct SampleConfig {
    /// Neighbors per node, per layer, from the input layer to the output layer (DGL's order:
    /// `[15, 10, 5]` samples 5 for the seeds, then 10, then 15).
    pub fanouts: Vec<u32>,
    /// Seeds per mini-batch.
    pub batch_size: usize,
    /// With or without replacement.
    pub replacement: Replacement,
    /// Uniform or weighted.
    pub policy: Policy,
    /// The seed of every random draw.
    pub seed: u64,
    /// Mini-batches merged into one super-batch (GARDEN's Super-batch Degree Classifier;
    /// 0 = the backend's default: [`CPU_SUPER_BATCH`] on the CPU, [`DEFAULT_SUPER_BATCH`] on
    /// the GPU). Only how the work is grouped: the output is the same for any value.
    pub super_batch: usize,
}

/// Mini-batches per super-batch by default on the GPU (GARDEN uses 6 to 10): larger launches.
pub const DEFAULT_SUPER_BATCH: usize = 8;

/// Mini-batches per super-batch by default on the CPU: one. Merging buys the CPU no larger
/// launch, only fewer, uneven tasks and a larger working set (R-MAT 18, fanouts 25,10, 26
/// mini-batches on 2 threads: 0.039 s at 1, 0.059 s at 8; `bench/results/`).
pub const CPU_SUPER_BATCH: usize = 1;

/// One layer's message-flow graph.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Block {
    /// Global ids of the source nodes; the first `num_dst` are the destination nodes.
    pub src_nodes: Vec<u32>,
    /// How many of `src_nodes` are destination nodes.
    pub num_dst: usize,
    /// Per sampled edge: its source, an index into `src_nodes`.
    pub edge_src: Vec<u32>,
    /// Per sampled edge: its destination, an index into the destination nodes.
    pub edge_dst: Vec<u32>,
    /// Per sampled edge: its global edge id (index into the CSR's edge arrays).
    pub edge_ids: Vec<u64>,
}

impl Block {
    /// The destination nodes' global ids.
    pub fn dst_nodes(&self) -> &[u32] {
        &self.src_nodes[..self.num_dst]
    }
}

/// One mini-batch: its seeds and one block per layer, from the input layer to the output.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MiniBatch {
    /// The seed nodes, as given.
    pub seeds: Vec<u32>,
    /// Blocks, input layer first (the last block's destination nodes are the seeds).
    pub blocks: Vec<Block>,
}

/// Checks the configuration and the seeds against the graph (every sampler, CPU or GPU).
pub fn validate(g: &CsrGraph, seeds: &[u32], cfg: &SampleConfig) -> Result<(), WalkError> {
    validate_holding(g, seeds, cfg, seeds.len())
}

/// [`validate`] for a run that holds the blocks of at most `held` seeds at a time (a
/// streaming run hands each window of mini-batches on before sampling more): the memory check
/// is for those.
fn validate_holding(g: &CsrGraph, seeds: &[u32], cfg: &SampleConfig, held: usize) -> Result<(), WalkError> {
    if cfg.fanouts.is_empty() {
        return Err(WalkError::param("fanouts", "give at least one layer, e.g. 15,10,5"));
    }
    if let Some(f) = cfg.fanouts.iter().find(|&&f| f == 0) {
        return Err(WalkError::param("fanouts", format!("a fanout of {f} samples nothing; use at least 1")));
    }
    if cfg.batch_size == 0 {
        return Err(WalkError::param("batch-size", "must be at least 1"));
    }
    if seeds.len().div_ceil(cfg.batch_size) >= 1 << 24 {
        return Err(WalkError::param("batch-size", "more than 2^24 mini-batches: use larger batches"));
    }
    let n = g.num_nodes() as u64;
    if let Some(&bad) = seeds.iter().find(|&&s| s as u64 >= n) {
        return Err(WalkError::BadStart { node: bad as u64, num_nodes: n as usize });
    }
    check_memory(g, held.min(seeds.len()), cfg)?;
    if cfg.policy == Policy::EdgeWeight {
        let Some(w) = g.weights() else {
            return Err(WalkError::Config("the weighted policy needs edge weights, which the graph does not have".into()));
        };
        if let Some(i) = w.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(WalkError::Config(format!("edge {i} has weight {}: weights must be finite and non-negative", w[i])));
        }
    }
    Ok(())
}

/// Whether the blocks of `held` seeds' mini-batches fit in the memory left ([`max_output`]):
/// what a caller that keeps more than a stream's window (the whole epoch, say) checks first.
pub fn check_memory(g: &CsrGraph, held: usize, cfg: &SampleConfig) -> Result<(), WalkError> {
    let (edges, bytes) = max_output(g, held, cfg);
    crate::memory::check(&format!("the sampled blocks (at most {edges} edges for these seeds and fanouts)"), bytes)
        .map_err(|e| WalkError::Config(format!("{e}: sample fewer seeds per run, or smaller fanouts or batches")))
}

/// The sampled edges of `v`'s row (global edge ids), for layer `layer` of batch `batch`.
#[allow(clippy::too_many_arguments)]
fn sample_row(
    lanes: &PhiloxLanes,
    g: &CsrGraph,
    v: u32,
    fanout: u32,
    cfg: &SampleConfig,
    policy: Option<EdgeWeightFn>,
    batch: usize,
    layer: u32,
    buf: &mut Vec<f32>,
    out: &mut Vec<u64>,
) -> Result<(), WalkError> {
    let row = g.row(v);
    let d = row.len() as u64;
    let k = fanout as u64;
    if d == 0 {
        return Ok(());
    }
    // The row's weights, for the weighted policies.
    let w: &[f32] = match cfg.policy {
        Policy::Uniform => &[],
        Policy::EdgeWeight => &g.weights().expect("validated")[row.clone()],
        Policy::Custom => {
            let f = policy.expect("validated");
            buf.clear();
            for e in row.clone() {
                let x = f(v, e);
                if !(x.is_finite() && x >= 0.0) {
                    return Err(WalkError::BadWeight {
                        walk: "sampling policy".into(),
                        weight: x,
                        src: g.id_map().original(v),
                        dst: g.id_map().original(g.targets()[e]),
                        step: layer,
                    });
                }
                buf.push(x);
            }
            buf
        }
    };
    let query = ((batch as u64) << 32) | v as u64;
    let mut rng = StepRng::new(cfg.seed, query, layer, Purpose::Neighbors);
    let base = row.start as u64;
    match (cfg.policy, cfg.replacement) {
        (Policy::Uniform, replacement) => {
            let start = out.len();
            out.resize(start + uniform_count(d, fanout, replacement) as usize, 0);
            uniform_row(lanes, cfg.seed, query, layer, row, replacement, &mut out[start..]);
        }
        (Policy::EdgeWeight | Policy::Custom, Replacement::Without) => {
            out.extend(crate::sampler::reservoir_top_k(w, k as usize, &mut rng).into_iter().map(|i| base + i as u64));
        }
        (Policy::EdgeWeight | Policy::Custom, Replacement::With) => {
            let mut prefix = Vec::with_capacity(w.len());
            let mut s = 0f64;
            for &x in w {
                s += x as f64;
                prefix.push(s);
            }
            if s > 0.0 {
                for _ in 0..k {
                    let x = rng.uniform() * s;
                    let i = prefix.partition_point(|&p| p <= x).min(w.len() - 1);
                    out.push(base + i as u64);
                }
            }
        }
    }
    Ok(())
}

/// Samples the blocks of one mini-batch (`batch` is its index, which keys its random streams),
/// node by node: the definition the super-batch pipeline ([`sample_by`]) and the GPU sampler
/// are tested against.
pub fn reference_batch(
    g: &CsrGraph,
    seeds: &[u32],
    cfg: &SampleConfig,
    policy: Option<EdgeWeightFn>,
    batch: usize,
) -> Result<MiniBatch, WalkError> {
    validate(g, seeds, cfg)?;
    let targets = g.targets();
    let mut frontier: Vec<u32> = Vec::new();
    let mut seen: std::collections::HashSet<u32> = std::collections::HashSet::new();
    for &s in seeds {
        if seen.insert(s) {
            frontier.push(s);
        }
    }
    let mut blocks = Vec::with_capacity(cfg.fanouts.len());
    let mut edges = Vec::new();
    let mut buf = Vec::new();
    let lanes = PhiloxLanes::new(cfg.seed);
    // Output layer first; reversed at the end.
    for (depth, &fanout) in cfg.fanouts.iter().rev().enumerate() {
        let mut block = Block { src_nodes: frontier.clone(), num_dst: frontier.len(), ..Default::default() };
        let mut local: HashMap<u32, u32> = frontier.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
        for (di, &v) in frontier.iter().enumerate() {
            edges.clear();
            sample_row(&lanes, g, v, fanout, cfg, policy, batch, depth as u32, &mut buf, &mut edges)?;
            for &e in &edges {
                let u = targets[e as usize];
                let next = block.src_nodes.len() as u32;
                let li = *local.entry(u).or_insert_with(|| {
                    block.src_nodes.push(u);
                    next
                });
                block.edge_src.push(li);
                block.edge_dst.push(di as u32);
                block.edge_ids.push(e);
            }
        }
        frontier = block.src_nodes.clone();
        blocks.push(block);
    }
    blocks.reverse();
    Ok(MiniBatch { seeds: seeds.to_vec(), blocks })
}

/// One layer of a super-batch as the Super-batch Degree Classifier lays it out (GARDEN
/// Algorithm 1): the same arrays on the CPU and the GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LayerPlan {
    /// MergeTensor: every sub-batch's destination nodes, concatenated (distinct within a
    /// sub-batch; a node in two mini-batches is sampled once for each, from each one's own
    /// streams, so mini-batches stay independent and the output does not depend on how many
    /// are merged).
    pub frontier: Vec<u32>,
    /// BatchPtr: sub-batch `b` holds `frontier[batch_ptr[b]..batch_ptr[b + 1]]`.
    pub batch_ptr: Vec<u32>,
    /// DegreeFlag: 1 for a *full* node (no random choice: without replacement, degree <=
    /// fanout, so every edge is taken; with replacement, no edge at all), else 0 (*random*).
    pub flags: Vec<u8>,
    /// UniqueClassify: frontier indices, each sub-batch's full nodes first, then its random
    /// nodes, each class in frontier order.
    pub classified: Vec<u32>,
    /// BoundPtr: where sub-batch `b`'s random nodes start in `classified` (its full nodes
    /// are `classified[batch_ptr[b]..bound_ptr[b]]`).
    pub bound_ptr: Vec<u32>,
    /// Per frontier node: where its row starts in the CSR's edge arrays, and its degree. Read
    /// once here, where the scattered loads of many nodes overlap, so that the sampling loop
    /// (whose per-node work hides only a few of them) reads them in order.
    pub rows: Vec<(u64, u64)>,
}

/// Exclusive prefix sum with the total appended (`n + 1` entries).
pub fn exclusive_sum<T: Copy + Into<u64>>(xs: &[T]) -> Vec<u64> {
    let mut out = Vec::with_capacity(xs.len() + 1);
    let mut acc = 0u64;
    for &x in xs {
        out.push(acc);
        acc += x.into();
    }
    out.push(acc);
    out
}

/// Whether a node of degree `d` is a full node for `fanout`.
#[inline]
pub fn is_full(d: u64, fanout: u32, replacement: Replacement) -> bool {
    match replacement {
        Replacement::Without => d <= fanout as u64,
        Replacement::With => d == 0,
    }
}

/// The classifier: flags, one exclusive prefix sum, and each node's place computed from it
/// (no counters shared between nodes, so no atomics on the GPU).
pub fn classify(g: &CsrGraph, frontier: Vec<u32>, batch_ptr: Vec<u32>, fanout: u32, replacement: Replacement) -> LayerPlan {
    let rows: Vec<(u64, u64)> = frontier
        .iter()
        .map(|&v| {
            let row = g.row(v);
            (row.start as u64, row.len() as u64)
        })
        .collect();
    let flags: Vec<u8> = rows.iter().map(|&(_, d)| is_full(d, fanout, replacement) as u8).collect();
    let scan = exclusive_sum(&flags);
    let k = batch_ptr.len() - 1;
    let bound_ptr: Vec<u32> =
        (0..k).map(|b| batch_ptr[b] + (scan[batch_ptr[b + 1] as usize] - scan[batch_ptr[b] as usize]) as u32).collect();
    let mut classified = vec![0u32; frontier.len()];
    for b in 0..k {
        let start = batch_ptr[b] as usize;
        for tid in start..batch_ptr[b + 1] as usize {
            let pos = (scan[tid] - scan[start]) as usize;
            let at = if flags[tid] == 1 { start + pos } else { bound_ptr[b] as usize + (tid - start - pos) };
            classified[at] = tid as u32;
        }
    }
    LayerPlan { frontier, batch_ptr, flags, classified, bound_ptr, rows }
}

/// One layer's sampled edges, in frontier order: node `i`'s are
/// `edge_ids[edge_ptr[i]..edge_ptr[i + 1]]` (ascending within the node without replacement, in
/// draw order with).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LayerEdges {
    /// Exclusive prefix sum of the per-node counts (`frontier.len() + 1` entries).
    pub edge_ptr: Vec<u64>,
    /// Global edge ids.
    pub edge_ids: Vec<u64>,
    /// Per edge: its target, the sampled neighbor (read while the edge's row is at hand).
    pub neighbors: Vec<u32>,
}

/// The edges of one super-batch layer: full nodes copied, random nodes sampled (in
/// `classified` order, as the GPU's two kernels take them). Uniform draws know each node's
/// count from its degree, so they are written in place; weighted ones go through a scratch
/// list.
fn sample_layer(
    g: &CsrGraph,
    plan: &LayerPlan,
    fanout: u32,
    cfg: &SampleConfig,
    policy: Option<EdgeWeightFn>,
    first_batch: usize,
    layer: u32,
) -> Result<LayerEdges, WalkError> {
    let targets = g.targets();
    let lanes = PhiloxLanes::new(cfg.seed);
    if cfg.policy == Policy::Uniform {
        let counts: Vec<u64> = plan.rows.iter().map(|&(_, d)| uniform_count(d, fanout, cfg.replacement)).collect();
        let edge_ptr = exclusive_sum(&counts);
        let total = edge_ptr[plan.frontier.len()] as usize;
        let mut edge_ids = vec![0u64; total];
        let mut neighbors = vec![0u32; total];
        // A node's sampled targets are scattered over its row: they are fetched as soon as
        // its edges are drawn and read GATHER_LAG nodes later, so that the misses of several
        // nodes overlap the draws of the next ones.
        let mut pending = [(0usize, 0usize); GATHER_LAG];
        let mut drawn = 0usize;
        let gather = |(lo, hi): (usize, usize), neighbors: &mut [u32], edge_ids: &[u64]| {
            for (n, &e) in neighbors[lo..hi].iter_mut().zip(&edge_ids[lo..hi]) {
                *n = targets[e as usize];
            }
        };
        for_each_classified(g, plan, first_batch, |tid, v, row, batch| {
            let (lo, hi) = (edge_ptr[tid] as usize, edge_ptr[tid + 1] as usize);
            let query = ((batch as u64) << 32) | v as u64;
            uniform_row(&lanes, cfg.seed, query, layer, row, cfg.replacement, &mut edge_ids[lo..hi]);
            for &e in &edge_ids[lo..hi] {
                crate::engine::prefetch(targets.as_ptr().wrapping_add(e as usize));
            }
            let slot = &mut pending[drawn % GATHER_LAG];
            if drawn >= GATHER_LAG {
                gather(*slot, &mut neighbors, &edge_ids);
            }
            *slot = (lo, hi);
            drawn += 1;
            Ok(())
        })?;
        for i in drawn.saturating_sub(GATHER_LAG)..drawn {
            gather(pending[i % GATHER_LAG], &mut neighbors, &edge_ids);
        }
        return Ok(LayerEdges { edge_ptr, edge_ids, neighbors });
    }
    let mut spans = vec![(0usize, 0usize); plan.frontier.len()];
    let mut scratch: Vec<u64> = Vec::new();
    let mut buf = Vec::new();
    for_each_classified(g, plan, first_batch, |tid, v, _, batch| {
        let start = scratch.len();
        sample_row(&lanes, g, v, fanout, cfg, policy, batch, layer, &mut buf, &mut scratch)?;
        spans[tid] = (start, scratch.len() - start);
        Ok(())
    })?;
    let counts: Vec<u64> = spans.iter().map(|s| s.1 as u64).collect();
    let edge_ptr = exclusive_sum(&counts);
    let mut edge_ids = vec![0u64; scratch.len()];
    for (i, &(start, len)) in spans.iter().enumerate() {
        let at = edge_ptr[i] as usize;
        edge_ids[at..at + len].copy_from_slice(&scratch[start..start + len]);
    }
    let neighbors = edge_ids.iter().map(|&e| targets[e as usize]).collect();
    Ok(LayerEdges { edge_ptr, edge_ids, neighbors })
}

/// Calls `f(frontier index, node, its row, mini-batch number)` for each node of a layer in
/// `classified` order. A full node's row is copied whole: its first targets are fetched a few
/// nodes ahead (a random node's picks are fetched as they are drawn).
fn for_each_classified(
    g: &CsrGraph,
    plan: &LayerPlan,
    first_batch: usize,
    mut f: impl FnMut(usize, u32, std::ops::Range<usize>, usize) -> Result<(), WalkError>,
) -> Result<(), WalkError> {
    let targets = g.targets();
    for b in 0..plan.batch_ptr.len() - 1 {
        for at in plan.batch_ptr[b] as usize..plan.batch_ptr[b + 1] as usize {
            if let Some(&ahead) = plan.classified.get(at + ROW_PREFETCH) {
                if plan.flags[ahead as usize] == 1 {
                    crate::engine::prefetch(targets.as_ptr().wrapping_add(plan.rows[ahead as usize].0 as usize));
                }
            }
            let tid = plan.classified[at] as usize;
            let (start, d) = plan.rows[tid];
            f(tid, plan.frontier[tid], start as usize..(start + d) as usize, first_batch + b)?;
        }
    }
    Ok(())
}

/// How many nodes ahead [`sample_layer`] prefetches a full node's row.
const ROW_PREFETCH: usize = 8;

/// How many nodes after drawing its edges [`sample_layer`] reads their targets.
const GATHER_LAG: usize = 8;

/// The next layer's frontier and each sampled edge's source (local id) from the hash table of
/// every sub-batch: a node's local id is its first appearance among the sub-batch's
/// destination nodes, then its sampled edges in order.
pub fn next_frontier(g: &CsrGraph, plan: &LayerPlan, edges: &LayerEdges) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let nodes = g.num_nodes();
    let k = plan.batch_ptr.len() - 1;
    let mut frontier = Vec::with_capacity(plan.frontier.len() + edges.edge_ids.len());
    let mut batch_ptr = vec![0u32];
    let mut edge_src = vec![0u32; edges.edge_ids.len()];
    // One table per thread, kept between calls: a fresh one per layer cost its zeroing and
    // page faults (megabytes for a wide last layer), more than the lookups.
    thread_local! {
        static LOCAL: std::cell::RefCell<LocalIds> = std::cell::RefCell::new(LocalIds::default());
    }
    LOCAL.with_borrow_mut(|local| {
        for b in 0..k {
            let (lo, hi) = (plan.batch_ptr[b] as usize, plan.batch_ptr[b + 1] as usize);
            let (elo, ehi) = (edges.edge_ptr[lo] as usize, edges.edge_ptr[hi] as usize);
            let dst = &plan.frontier[lo..hi];
            let (neighbors, src) = (&edges.neighbors[elo..ehi], &mut edge_src[elo..ehi]);
            let len = LocalIds::hashed_len(dst.len() + neighbors.len());
            if len < nodes {
                local.hashed(len).number(dst, neighbors, &mut frontier, src);
            } else {
                local.per_node(nodes).number(dst, neighbors, &mut frontier, src);
            }
            batch_ptr.push(frontier.len() as u32);
        }
    });
    (frontier, batch_ptr, edge_src)
}

/// The seeds of each sub-batch, deduplicated (first occurrence first), as a super-batch's
/// first frontier.
pub fn merge_seeds<'s>(batches: impl Iterator<Item = &'s [u32]>) -> (Vec<u32>, Vec<u32>) {
    let mut frontier = Vec::new();
    let mut batch_ptr = vec![0u32];
    let mut seen = std::collections::HashSet::new();
    for seeds in batches {
        seen.clear();
        frontier.extend(seeds.iter().copied().filter(|&s| seen.insert(s)));
        batch_ptr.push(frontier.len() as u32);
    }
    (frontier, batch_ptr)
}

/// Cuts one super-batch layer into per-mini-batch blocks (moved, not copied, when the
/// super-batch is one mini-batch).
pub fn split_blocks(plan: &LayerPlan, edges: LayerEdges, next: &[u32], next_ptr: &[u32], edge_src: Vec<u32>) -> Vec<Block> {
    let k = plan.batch_ptr.len() - 1;
    let edge_dst = |lo: usize, hi: usize| {
        let mut dst = Vec::with_capacity((edges.edge_ptr[hi] - edges.edge_ptr[lo]) as usize);
        for i in lo..hi {
            dst.extend(std::iter::repeat_n((i - lo) as u32, (edges.edge_ptr[i + 1] - edges.edge_ptr[i]) as usize));
        }
        dst
    };
    if k == 1 {
        return vec![Block {
            src_nodes: next.to_vec(),
            num_dst: plan.frontier.len(),
            edge_dst: edge_dst(0, plan.frontier.len()),
            edge_src,
            edge_ids: edges.edge_ids,
        }];
    }
    (0..k)
        .map(|b| {
            let (lo, hi) = (plan.batch_ptr[b] as usize, plan.batch_ptr[b + 1] as usize);
            let (elo, ehi) = (edges.edge_ptr[lo] as usize, edges.edge_ptr[hi] as usize);
            Block {
                src_nodes: next[next_ptr[b] as usize..next_ptr[b + 1] as usize].to_vec(),
                num_dst: hi - lo,
                edge_src: edge_src[elo..ehi].to_vec(),
                edge_dst: edge_dst(lo, hi),
                edge_ids: edges.edge_ids[elo..ehi].to_vec(),
            }
        })
        .collect()
}

/// Samples one super-batch: `batches` are its mini-batches' seeds, the first of them batch
/// number `first_batch`.
fn sample_super_batch(
    g: &CsrGraph,
    batches: &[&[u32]],
    cfg: &SampleConfig,
    policy: Option<EdgeWeightFn>,
    first_batch: usize,
) -> Result<Vec<MiniBatch>, WalkError> {
    let (mut frontier, mut batch_ptr) = merge_seeds(batches.iter().copied());
    let mut out: Vec<MiniBatch> = batches.iter().map(|s| MiniBatch { seeds: s.to_vec(), blocks: Vec::new() }).collect();
    for (depth, &fanout) in cfg.fanouts.iter().rev().enumerate() {
        let plan = classify(g, frontier, batch_ptr, fanout, cfg.replacement);
        let edges = sample_layer(g, &plan, fanout, cfg, policy, first_batch, depth as u32)?;
        let (next, next_ptr, edge_src) = next_frontier(g, &plan, &edges);
        for (mb, block) in out.iter_mut().zip(split_blocks(&plan, edges, &next, &next_ptr, edge_src)) {
            mb.blocks.push(block);
        }
        frontier = next;
        batch_ptr = next_ptr;
    }
    for mb in &mut out {
        mb.blocks.reverse();
    }
    Ok(out)
}

/// The most edges every mini-batch of `seeds` together can sample, and the bytes their blocks
/// then take: per layer, a batch's destination nodes (at most the graph's nodes) times the
/// fanout (at most the graph's edges when sampling without replacement). Checked against
/// the memory left before anything is sampled.
pub fn max_output(g: &CsrGraph, num_seeds: usize, cfg: &SampleConfig) -> (u128, u128) {
    let (n, m) = (g.num_nodes() as u128, g.num_edges() as u128);
    let batch = |size: usize| {
        let (mut dst, mut edges, mut nodes) = (size as u128, 0u128, 0u128);
        for &f in &cfg.fanouts {
            let mut layer = dst.saturating_mul(f as u128);
            if cfg.replacement == Replacement::Without {
                layer = layer.min(m);
            }
            edges = edges.saturating_add(layer);
            // A block lists its destination nodes, then the new sources.
            let next = dst.saturating_add(layer).min(n.max(dst));
            nodes = nodes.saturating_add(next);
            dst = next;
        }
        (edges, nodes)
    };
    let full = (num_seeds / cfg.batch_size.max(1)) as u128;
    let (fe, fnodes) = batch(cfg.batch_size);
    let (le, lnodes) = batch(num_seeds % cfg.batch_size.max(1));
    let edges = fe.saturating_mul(full).saturating_add(le);
    let nodes = fnodes.saturating_mul(full).saturating_add(lnodes);
    // An edge is a source and a destination position (u32 each) and an edge id (u64); a node
    // an id (u32), and each may be written out as a u64 id.
    (edges, edges.saturating_mul(16 + 8).saturating_add(nodes.saturating_mul(4 + 8)))
}

/// Samples every mini-batch of `seeds` (batches of `cfg.batch_size`, in order), in parallel;
/// the result does not depend on the thread count.
pub fn sample(g: &CsrGraph, seeds: &[u32], cfg: &SampleConfig) -> Result<Vec<MiniBatch>, WalkError> {
    sample_by(g, seeds, cfg, None)
}

/// [`sample`] with a policy's weights ([`Policy::Custom`]): `policy(v, e)` weighs edge `e` of
/// node `v`'s row. A negative, NaN or infinite weight is an error naming the edge.
///
/// Mini-batches are processed `cfg.super_batch` at a time through the Super-batch Degree
/// Classifier ([`classify`]), super-batches in parallel ([`sample_each`], collected: the
/// memory check is the epoch's).
pub fn sample_by(g: &CsrGraph, seeds: &[u32], cfg: &SampleConfig, policy: Option<EdgeWeightFn>) -> Result<Vec<MiniBatch>, WalkError> {
    check_memory(g, seeds.len(), cfg)?;
    let mut out = Vec::new();
    sample_each(g, seeds, cfg, policy, |mb| {
        out.push(mb);
        Ok(())
    })?;
    Ok(out)
}

/// [`sample_by`], handing each mini-batch to `sink` in order as soon as it and every earlier
/// one are done, instead of returning the epoch: at most [`STREAM_WINDOW`] super-batches per
/// thread are sampled or waiting at a time, so memory is bounded by that window, and blocks
/// the sink has dropped are reused by the allocator for the next ones. `sink` runs on the
/// calling thread while the pool samples further ahead. The mini-batches are the same as
/// [`sample_by`]'s. An error (the sampler's or the sink's) stops the run: super-batches not
/// yet begun are skipped.
pub fn sample_each(
    g: &CsrGraph,
    seeds: &[u32],
    cfg: &SampleConfig,
    policy: Option<EdgeWeightFn>,
    mut sink: impl FnMut(MiniBatch) -> Result<(), WalkError>,
) -> Result<(), WalkError> {
    let (k, per_super) = super_batches(cfg);
    let window = STREAM_WINDOW * rayon::current_num_threads().max(1);
    validate_holding(g, seeds, cfg, window.saturating_mul(per_super))?;
    check_policy(cfg, policy)?;
    let chunks: Vec<&[u32]> = seeds.chunks(per_super).collect();
    if rayon::current_thread_index().is_some() {
        // On one of the pool's own threads, waiting for the pool could wait for this very
        // thread: sample window by window instead.
        for (w, group) in chunks.chunks(window).enumerate() {
            let done: Vec<Vec<MiniBatch>> = group
                .par_iter()
                .enumerate()
                .map(|(i, chunk)| sample_chunk(g, chunk, cfg, policy, (w * window + i) * k))
                .collect::<Result<_, _>>()?;
            done.into_iter().flatten().try_for_each(&mut sink)?;
        }
        return Ok(());
    }
    let stop = std::sync::atomic::AtomicBool::new(false);
    // A super-batch's result, or the payload of its panic (a policy's, say): the panic is
    // sent on and resumed here, so the caller never waits for a result that will not come.
    type Sent = (usize, std::thread::Result<Result<Vec<MiniBatch>, WalkError>>);
    let (tx, rx) = std::sync::mpsc::channel::<Sent>();
    rayon::in_place_scope(|scope| {
        let spawn = |sb: usize| {
            let (tx, stop, chunk) = (tx.clone(), &stop, chunks[sb]);
            scope.spawn(move |_| {
                if !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sample_chunk(g, chunk, cfg, policy, sb * k)));
                    // The receiver outlives the scope: a send fails only after an error
                    // stopped the run, when nobody waits for the result.
                    let _ = tx.send((sb, done));
                }
            });
        };
        let mut spawned = chunks.len().min(window);
        (0..spawned).for_each(spawn);
        let mut ready: std::collections::BTreeMap<usize, Vec<MiniBatch>> = Default::default();
        let mut next = 0;
        let result = (|| {
            while next < chunks.len() {
                let (sb, done) = rx.recv().expect("every spawned super-batch sends its result");
                let done = done.unwrap_or_else(|panic| {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    std::panic::resume_unwind(panic)
                });
                ready.insert(sb, done?);
                while let Some(batches) = ready.remove(&next) {
                    batches.into_iter().try_for_each(&mut sink)?;
                    next += 1;
                    if spawned < chunks.len() {
                        spawn(spawned);
                        spawned += 1;
                    }
                }
            }
            Ok(())
        })();
        if result.is_err() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        result
    })
}

/// Super-batches per thread that [`sample_each`] keeps sampled or in flight ahead of its sink.
pub const STREAM_WINDOW: usize = 4;

/// The mini-batches per super-batch, and the seeds that makes.
fn super_batches(cfg: &SampleConfig) -> (usize, usize) {
    let k = if cfg.super_batch == 0 { CPU_SUPER_BATCH } else { cfg.super_batch };
    (k, cfg.batch_size.saturating_mul(k))
}

fn check_policy(cfg: &SampleConfig, policy: Option<EdgeWeightFn>) -> Result<(), WalkError> {
    if (cfg.policy == Policy::Custom) != policy.is_some() {
        return Err(WalkError::Config("Policy::Custom goes with a policy function, and only it".into()));
    }
    Ok(())
}

/// One super-batch's seeds (`chunk`), cut into its mini-batches, the first numbered
/// `first_batch`.
fn sample_chunk(
    g: &CsrGraph,
    chunk: &[u32],
    cfg: &SampleConfig,
    policy: Option<EdgeWeightFn>,
    first_batch: usize,
) -> Result<Vec<MiniBatch>, WalkError> {
    let batches: Vec<&[u32]> = chunk.chunks(cfg.batch_size).collect();
    sample_super_batch(g, &batches, cfg, policy, first_batch)
}

/// [`sample`] with a compiled policy (a `#[sampler]` function, or any walk whose weight reads
/// no walker history): `policy.weight` of each edge, for a walker standing on the node being
/// sampled (step 0, no previous node).
pub fn sample_with<W: crate::Walk>(g: &CsrGraph, seeds: &[u32], cfg: &SampleConfig, policy: &W) -> Result<Vec<MiniBatch>, WalkError> {
    let cfg = SampleConfig { policy: Policy::Custom, ..cfg.clone() };
    crate::walk::with_edge_weight(g, policy, |weight| sample_by(g, seeds, &cfg, Some(weight)))?
}

/// [`sample_each`] with a compiled policy, as [`sample_with`].
pub fn sample_each_with<W: crate::Walk>(
    g: &CsrGraph,
    seeds: &[u32],
    cfg: &SampleConfig,
    policy: &W,
    sink: impl FnMut(MiniBatch) -> Result<(), WalkError>,
) -> Result<(), WalkError> {
    let cfg = SampleConfig { policy: Policy::Custom, ..cfg.clone() };
    crate::walk::with_edge_weight(g, policy, |weight| sample_each(g, seeds, &cfg, Some(weight), sink))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{CsrParts, Orientation};

    fn star(d: u32, weights: Option<Vec<f32>>) -> CsrGraph {
        // Node 0 -> 1..=d, each leaf -> 0.
        let mut p = CsrParts { offsets: vec![0], ..Default::default() };
        p.targets.extend(1..=d);
        p.offsets.push(d as u64);
        for _ in 1..=d {
            p.targets.push(0);
            p.offsets.push(p.targets.len() as u64);
        }
        p.weights = weights.map(|w| {
            let mut all = w;
            all.extend(std::iter::repeat_n(1.0, d as usize));
            all
        });
        CsrGraph::from_parts(p, Orientation::Directed).unwrap()
    }

    fn cfg(fanouts: &[u32], replacement: Replacement, policy: Policy) -> SampleConfig {
        SampleConfig { fanouts: fanouts.to_vec(), batch_size: 1, replacement, policy, seed: 9, super_batch: 0 }
    }

    #[test]
    fn full_nodes_keep_every_edge_and_blocks_nest() {
        let g = star(3, None);
        let out = sample(&g, &[0, 2], &SampleConfig { batch_size: 2, ..cfg(&[5, 5], Replacement::Without, Policy::Uniform) }).unwrap();
        let b = &out[0].blocks;
        assert_eq!(b.len(), 2);
        // Output block: dst = seeds {0, 2}; 0 has 3 edges (all kept), 2 has one (to 0).
        assert_eq!(b[1].dst_nodes(), &[0, 2]);
        assert_eq!(b[1].edge_ids.len(), 4);
        // The next block's dst are the output block's src.
        assert_eq!(b[0].dst_nodes(), &b[1].src_nodes[..]);
        for blk in b {
            for ((&s, &d), &e) in blk.edge_src.iter().zip(&blk.edge_dst).zip(&blk.edge_ids) {
                let (dst, src) = (blk.src_nodes[d as usize], blk.src_nodes[s as usize]);
                assert!(g.row(dst).contains(&(e as usize)), "edge {e} is not in {dst}'s row");
                assert_eq!(g.targets()[e as usize], src);
            }
        }
    }

    #[test]
    fn bad_configurations_are_errors() {
        let g = star(3, None);
        assert!(sample(&g, &[0], &cfg(&[], Replacement::Without, Policy::Uniform)).is_err());
        assert!(sample(&g, &[0], &cfg(&[0], Replacement::Without, Policy::Uniform)).is_err());
        assert!(sample(&g, &[9], &cfg(&[1], Replacement::Without, Policy::Uniform)).is_err());
        assert!(sample(&g, &[0], &cfg(&[1], Replacement::Without, Policy::EdgeWeight)).unwrap_err().to_string().contains("weights"));
    }
}
