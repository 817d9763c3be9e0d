//! Graph, weight and label generators, deterministic for a seed on any thread count.
//!
//! Every random choice is drawn from a Philox stream keyed by the item it concerns (the edge
//! index for R-MAT, the row for Erdős–Rényi, the edge entry for weights and labels), never by
//! the thread that happens to make it.

use super::build::{self, BuildOptions, Dedup, EdgeRecord, EdgeSource, SliceSource};
use super::{CsrGraph, IdMap};
use crate::error::GraphError;
use crate::rng::{Purpose, StepRng};
use rayon::prelude::*;

/// Graph500 R-MAT quadrant probabilities (a, b, c; d = 1 - a - b - c).
pub const GRAPH500_ABC: (f64, f64, f64) = (0.57, 0.19, 0.19);

/// Distinguishes the generator streams that share a seed.
const STREAM_EDGES: u32 = 0;
const STREAM_PERMUTE: u32 = 1;
const STREAM_WEIGHTS: u32 = 2;
const STREAM_LABELS: u32 = 3;

struct RmatSource {
    scale: u32,
    edges: u64,
    abc: (f64, f64, f64),
    seed: u64,
    perm: Vec<u32>,
}

const GEN_CHUNK: u64 = 1 << 16;

impl EdgeSource for RmatSource {
    fn num_chunks(&self) -> usize {
        self.edges.div_ceil(GEN_CHUNK) as usize
    }
    fn for_each_in_chunk(&self, chunk: usize, f: &mut dyn FnMut(EdgeRecord)) {
        let (a, b, c) = self.abc;
        let lo = chunk as u64 * GEN_CHUNK;
        for e in lo..(lo + GEN_CHUNK).min(self.edges) {
            let mut rng = StepRng::new(self.seed, e, STREAM_EDGES, Purpose::Generate);
            let (mut u, mut v) = (0u32, 0u32);
            for _ in 0..self.scale {
                let r = rng.uniform();
                let (du, dv) = if r < a {
                    (0, 0)
                } else if r < a + b {
                    (0, 1)
                } else if r < a + b + c {
                    (1, 0)
                } else {
                    (1, 1)
                };
                u = (u << 1) | du;
                v = (v << 1) | dv;
            }
            f(EdgeRecord { src: self.perm[u as usize], dst: self.perm[v as usize], ..Default::default() })
        }
    }
}

/// A seeded random permutation of `0..n` (Fisher–Yates; Graph500 permutes vertex labels so
/// that degree does not correlate with id).
fn permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    let mut rng = StepRng::new(seed, 0, STREAM_PERMUTE, Purpose::Generate);
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

/// R-MAT with Graph500 parameters: `2^scale` nodes, `edge_factor * 2^scale` generated edges,
/// symmetrized, deduplicated, without self loops, node ids randomly permuted.
pub fn rmat(scale: u32, edge_factor: u32, seed: u64) -> Result<CsrGraph, GraphError> {
    rmat_with(scale, edge_factor, GRAPH500_ABC, seed)
}

/// R-MAT with explicit quadrant probabilities.
pub fn rmat_with(scale: u32, edge_factor: u32, abc: (f64, f64, f64), seed: u64) -> Result<CsrGraph, GraphError> {
    if !(1..=31).contains(&scale) {
        return Err(GraphError::param("scale", format!("{scale} is outside 1..=31 (node ids are 32-bit)")));
    }
    if edge_factor == 0 {
        return Err(GraphError::param("edge-factor", "must be at least 1"));
    }
    let (a, b, c) = abc;
    if [a, b, c].iter().any(|p| !(0.0..=1.0).contains(p)) || a + b + c > 1.0 {
        return Err(GraphError::param("abc", "probabilities must be in [0, 1] and sum to at most 1"));
    }
    let n = 1usize << scale;
    let src = RmatSource { scale, edges: edge_factor as u64 * n as u64, abc, seed, perm: permutation(n, seed) };
    let opts = BuildOptions { symmetrize: true, dedup: Dedup::KeepFirst, drop_self_loops: true, ..Default::default() };
    build::build(n, &src, &opts, IdMap::Identity)
}

struct ErSource {
    n: u64,
    p: f64,
    seed: u64,
}

impl EdgeSource for ErSource {
    fn num_chunks(&self) -> usize {
        self.n.div_ceil(1024) as usize
    }
    fn for_each_in_chunk(&self, chunk: usize, f: &mut dyn FnMut(EdgeRecord)) {
        let lo = chunk as u64 * 1024;
        let log_q = (1.0 - self.p).ln();
        for u in lo..(lo + 1024).min(self.n) {
            let mut rng = StepRng::new(self.seed, u, STREAM_EDGES, Purpose::Generate);
            // Geometric skips over the candidates u+1..n: each is present with probability p.
            let mut v = u;
            loop {
                let skip = if self.p >= 1.0 { 0.0 } else { (rng.uniform().ln() / log_q).floor() };
                if skip >= (self.n - v - 1) as f64 {
                    break;
                }
                v += skip as u64 + 1;
                f(EdgeRecord { src: u as u32, dst: v as u32, ..Default::default() });
            }
        }
    }
}

/// Erdős–Rényi G(n, p), undirected, without self loops.
pub fn erdos_renyi(n: usize, p: f64, seed: u64) -> Result<CsrGraph, GraphError> {
    if n == 0 || n >= super::NO_NODE as usize {
        return Err(GraphError::param("nodes", format!("{n} is outside 1..{}", super::NO_NODE)));
    }
    if !(p > 0.0 && p <= 1.0) {
        return Err(GraphError::param("p", format!("{p} is not a probability in (0, 1]")));
    }
    let src = ErSource { n: n as u64, p, seed };
    let opts = BuildOptions { symmetrize: true, ..Default::default() };
    build::build(n, &src, &opts, IdMap::Identity)
}

/// Barabási–Albert preferential attachment: each new node links to `m` distinct existing
/// nodes chosen with probability proportional to degree; starts from a clique of `m + 1`.
pub fn barabasi_albert(n: usize, m: usize, seed: u64) -> Result<CsrGraph, GraphError> {
    if m == 0 {
        return Err(GraphError::param("m", "must be at least 1"));
    }
    if n <= m || n >= super::NO_NODE as usize {
        return Err(GraphError::param("nodes", format!("{n} must exceed m = {m} and be below {}", super::NO_NODE)));
    }
    let mut edges = Vec::with_capacity(n * m);
    // Every edge endpoint, so a uniform pick from it is a degree-proportional node pick.
    let mut ends: Vec<u32> = Vec::with_capacity(2 * n * m);
    for u in 0..=m as u32 {
        for v in 0..u {
            edges.push(EdgeRecord { src: u, dst: v, ..Default::default() });
            ends.extend([u, v]);
        }
    }
    let mut rng = StepRng::new(seed, 0, STREAM_EDGES, Purpose::Generate);
    let mut chosen = Vec::with_capacity(m);
    for u in (m as u32 + 1)..n as u32 {
        chosen.clear();
        while chosen.len() < m {
            let v = ends[rng.below(ends.len() as u64) as usize];
            if !chosen.contains(&v) {
                chosen.push(v);
            }
        }
        for &v in &chosen {
            edges.push(EdgeRecord { src: u, dst: v, ..Default::default() });
            ends.extend([u, v]);
        }
    }
    let opts = BuildOptions { symmetrize: true, ..Default::default() };
    build::build(n, &SliceSource(&edges), &opts, IdMap::Identity)
}

/// How to generate edge weights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WeightSpec {
    /// Uniform in `[lo, hi)`; the benchmarks' default is `[1, 5)`.
    Uniform {
        /// Inclusive lower end.
        lo: f32,
        /// Exclusive upper end.
        hi: f32,
    },
    /// Pareto-II (Lomax) with shape `alpha`, as numpy's `random.pareto(alpha)`:
    /// `U^(-1/alpha) - 1`, so weights can be arbitrarily close to 0 and very large.
    Pareto {
        /// Shape.
        alpha: f32,
    },
    /// Degree-based: the weight of `u -> v` is the degree of `v`.
    Degree,
}

impl std::str::FromStr for WeightSpec {
    type Err = String;
    /// `uniform`, `uniform:LO:HI`, `pareto:ALPHA` (or `pareto` for alpha = 1), `degree`.
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let num = |x: &str| x.parse::<f32>().map_err(|_| format!("`{x}` is not a number in weight spec `{s}`"));
        match parts.as_slice() {
            ["uniform"] => Ok(WeightSpec::Uniform { lo: 1.0, hi: 5.0 }),
            ["uniform", lo, hi] => {
                let (lo, hi) = (num(lo)?, num(hi)?);
                if !(lo >= 0.0 && hi > lo && hi.is_finite()) {
                    return Err(format!("uniform:{lo}:{hi} needs 0 <= lo < hi < inf"));
                }
                Ok(WeightSpec::Uniform { lo, hi })
            }
            ["pareto"] => Ok(WeightSpec::Pareto { alpha: 1.0 }),
            ["pareto", a] => {
                let alpha = num(a)?;
                if !(alpha > 0.0 && alpha.is_finite()) {
                    return Err(format!("pareto alpha {alpha} must be > 0"));
                }
                Ok(WeightSpec::Pareto { alpha })
            }
            ["degree"] => Ok(WeightSpec::Degree),
            _ => Err(format!("unknown weight spec `{s}`: use uniform, uniform:LO:HI, pareto:ALPHA or degree")),
        }
    }
}

/// How to generate edge labels: uniform integers in `[0, k)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelSpec {
    /// Number of distinct labels.
    pub k: u32,
}

/// Generates one weight per edge entry (the two directions of an undirected edge get
/// independent draws, as in FlexiWalker's weight files).
pub fn weights(g: &CsrGraph, spec: WeightSpec, seed: u64) -> Vec<f32> {
    let m = g.num_edges() as usize;
    let mut w = vec![0f32; m];
    let chunk = 1 << 14;
    w.par_chunks_mut(chunk).enumerate().for_each(|(c, out)| {
        let mut rng = StepRng::new(seed, c as u64, STREAM_WEIGHTS, Purpose::Generate);
        for (i, x) in out.iter_mut().enumerate() {
            let e = c * chunk + i;
            *x = match spec {
                WeightSpec::Uniform { lo, hi } => {
                    let v = lo + (hi - lo) * rng.uniform() as f32;
                    // f32 rounding can land on hi; keep the interval half-open.
                    if v >= hi { lo.max(hi.next_down()) } else { v }
                }
                WeightSpec::Pareto { alpha } => (rng.uniform().powf(-1.0 / alpha as f64) - 1.0).min(f32::MAX as f64) as f32,
                WeightSpec::Degree => g.degree(g.targets()[e]) as f32,
            };
        }
    });
    w
}

/// Generates one label per edge entry, uniform in `[0, k)`.
pub fn labels(g: &CsrGraph, spec: LabelSpec, seed: u64) -> Result<Vec<u32>, GraphError> {
    if spec.k == 0 {
        return Err(GraphError::param("labels", "the number of labels must be at least 1"));
    }
    let m = g.num_edges() as usize;
    let mut l = vec![0u32; m];
    let chunk = 1 << 14;
    l.par_chunks_mut(chunk).enumerate().for_each(|(c, out)| {
        let mut rng = StepRng::new(seed, c as u64, STREAM_LABELS, Purpose::Generate);
        for x in out.iter_mut() {
            *x = rng.below(spec.k as u64) as u32;
        }
    });
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmat_is_simple_symmetric_and_deterministic() {
        let g = rmat(10, 8, 3).unwrap();
        let h = rmat(10, 8, 3).unwrap();
        assert_eq!(g.targets(), h.targets());
        assert_eq!(g.num_nodes(), 1024);
        for v in 0..g.num_nodes() as u32 {
            let row = g.neighbors(v);
            assert!(row.windows(2).all(|w| w[0] < w[1]), "row {v} not strictly sorted");
            assert!(!row.contains(&v));
            for &u in row {
                assert!(g.has_edge(u, v));
            }
        }
        // Skewed: the max degree is far above the mean.
        let maxd = (0..1024).map(|v| g.degree(v)).max().unwrap();
        assert!(maxd as f64 > 5.0 * g.num_edges() as f64 / 1024.0);
        assert_ne!(rmat(10, 8, 4).unwrap().targets(), g.targets());
    }

    #[test]
    fn er_and_ba_have_expected_sizes() {
        let g = erdos_renyi(2000, 0.01, 1).unwrap();
        let mean = g.num_edges() as f64 / 2000.0;
        assert!((mean - 19.99).abs() < 1.5, "mean degree {mean}");
        let b = barabasi_albert(1000, 3, 1).unwrap();
        assert_eq!(b.num_edges(), 2 * (6 + 3 * (1000 - 4)));
        assert!((0..1000).all(|v| b.degree(v) >= 3));
    }

    #[test]
    fn weight_specs() {
        let g = rmat(8, 4, 1).unwrap();
        let u = weights(&g, "uniform".parse().unwrap(), 5);
        assert!(u.iter().all(|&x| (1.0..5.0).contains(&x)));
        let p = weights(&g, "pareto:1".parse().unwrap(), 5);
        assert!(p.iter().all(|&x| x > 0.0 && x.is_finite()));
        assert!(p.iter().any(|&x| x < 0.01) && p.iter().any(|&x| x > 100.0));
        let d = weights(&g, WeightSpec::Degree, 5);
        assert_eq!(d[0], g.degree(g.targets()[0]) as f32);
        assert!("pareto:-1".parse::<WeightSpec>().is_err());
        let l = labels(&g, LabelSpec { k: 5 }, 2).unwrap();
        assert!(l.iter().all(|&x| x < 5));
    }
}
