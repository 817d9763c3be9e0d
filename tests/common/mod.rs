//! Shared helpers for the statistical tests: small graphs with awkward weights, an exact
//! transition model written independently of the runtime, and a chi-square test.
#![allow(dead_code)]

pub mod suite;

use statrs::distribution::{ChiSquared, ContinuousCDF};
use std::collections::HashMap;
use wayfarer::graph::{CsrGraph, CsrParts, Orientation};

/// Significance of every exactness test: a correct sampler fails a given comparison with
/// probability 1e-5 (the seeds are fixed, so a passing test keeps passing).
pub const ALPHA: f64 = 1e-5;

/// A directed edge of a test graph: (src, dst, weight, label).
pub type RawEdge = (u32, u32, f32, u32);

/// The weight shapes every sampler is tested with.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    Uniform,
    Pareto1,
    SomeZero,
    Outlier,
}

pub const SHAPES: [Shape; 4] = [Shape::Uniform, Shape::Pareto1, Shape::SomeZero, Shape::Outlier];

/// A small undirected graph with triangles (so every Node2Vec branch occurs), a pendant
/// node, and a directed edge into a sink (node 6 has no out-edges: a dead end).
pub fn topology() -> Vec<(u32, u32)> {
    let undirected = [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (2, 3), (3, 4), (4, 5), (1, 5), (2, 5)];
    let mut e = Vec::new();
    for (u, v) in undirected {
        e.push((u, v));
        e.push((v, u));
    }
    e.push((5, 6));
    e.push((0, 6));
    e
}

/// Deterministic per-edge weights of a shape (independent of the runtime's generators).
pub fn shaped_edges(shape: Shape) -> Vec<RawEdge> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut uni = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    topology()
        .into_iter()
        .enumerate()
        .map(|(i, (u, v))| {
            let r = uni();
            let w = match shape {
                Shape::Uniform => 1.0 + 4.0 * r as f32,
                Shape::Pareto1 => (r.powf(-1.0) - 1.0) as f32,
                // Every third edge is 0, and so is every out-edge of node 4 (a dead end that
                // has edges).
                Shape::SomeZero => {
                    if i % 3 == 0 || u == 4 {
                        0.0
                    } else {
                        1.0 + 4.0 * r as f32
                    }
                }
                Shape::Outlier => {
                    if i == 3 {
                        1.0e4
                    } else {
                        1.0
                    }
                }
            };
            (u, v, w, (i % 3) as u32)
        })
        .collect()
}

/// Builds a CSR graph (identity ids, 7 nodes) from raw edges.
pub fn build(edges: &[RawEdge]) -> CsrGraph {
    let n = 7usize;
    let mut by_src: Vec<Vec<RawEdge>> = vec![Vec::new(); n];
    for &e in edges {
        by_src[e.0 as usize].push(e);
    }
    let mut parts = CsrParts { offsets: vec![0], weights: Some(Vec::new()), labels: Some(Vec::new()), ..Default::default() };
    for row in &by_src {
        for &(_, v, w, l) in row {
            parts.targets.push(v);
            parts.weights.as_mut().unwrap().push(w);
            parts.labels.as_mut().unwrap().push(l);
        }
        parts.offsets.push(parts.targets.len() as u64);
    }
    CsrGraph::from_parts(parts, Orientation::Directed).unwrap()
}

/// Which transition rule the exact model applies.
#[derive(Clone, Debug)]
pub enum Model {
    DeepWalk {
        weighted: bool,
    },
    Node2vec {
        a: f32,
        b: f32,
        weighted: bool,
    },
    MetaPath {
        schema: Vec<u32>,
        weighted: bool,
    },
    Ppr2 {
        gamma: f32,
        weighted: bool,
    },
    /// Any rule: the weight of edge `e` from `cur` at `step` after `prev`, given every edge.
    Custom(CustomWeight),
}

/// A test's own weight rule: `(step, prev, edge, all edges) -> weight`.
pub type CustomWeight = fn(u32, Option<u32>, &RawEdge, &[RawEdge]) -> f64;

/// Exact next-node probabilities from state (step, prev, cur), computed from the raw edge
/// list by brute force. Returns an empty map for a dead end.
pub fn exact(model: &Model, edges: &[RawEdge], step: u32, prev: Option<u32>, cur: u32) -> HashMap<u32, f64> {
    let out = |v: u32| edges.iter().filter(move |e| e.0 == v);
    let h = |e: &RawEdge, weighted: bool| if weighted { e.2 as f64 } else { 1.0 };
    let adjacent = |t: u32, u: u32| edges.iter().any(|e| e.0 == t && e.1 == u);
    let mut w: HashMap<u32, f64> = HashMap::new();
    for e in out(cur) {
        let x = match model {
            Model::DeepWalk { weighted } => h(e, *weighted),
            Model::Node2vec { a, b, weighted } => {
                let hv = h(e, *weighted);
                match prev {
                    None => hv,
                    Some(t) if e.1 == t => hv / *a as f64,
                    Some(t) if adjacent(t, e.1) => hv,
                    Some(_) => hv / *b as f64,
                }
            }
            Model::MetaPath { schema, weighted } => {
                if e.3 == schema[step as usize % schema.len()] {
                    h(e, *weighted)
                } else {
                    0.0
                }
            }
            Model::Custom(rule) => rule(step, prev, e, edges),
            Model::Ppr2 { gamma, weighted } => {
                let hv = h(e, *weighted);
                match prev {
                    None => hv,
                    Some(t) => {
                        let g = *gamma as f64;
                        let sum_v: f64 = out(cur).map(|f| h(f, *weighted)).sum();
                        let sum_t: f64 = out(t).map(|f| h(f, *weighted)).sum();
                        let first = if sum_v > 0.0 { (1.0 - g) * hv / sum_v } else { 0.0 };
                        let second: f64 = out(t)
                            .filter(|f| f.1 == e.1)
                            .take(1)
                            .map(|f| if sum_t > 0.0 { g * h(f, *weighted) / sum_t } else { 0.0 })
                            .sum();
                        first + second
                    }
                }
            }
        };
        *w.entry(e.1).or_default() += x;
    }
    let total: f64 = w.values().sum();
    if total <= 0.0 {
        return HashMap::new();
    }
    w.into_iter().filter(|(_, x)| *x > 0.0).map(|(k, x)| (k, x / total)).collect()
}

/// Pearson chi-square p-value of `counts` against `probs` (cells with expected count below
/// 5 are pooled). Panics with a message if a zero-probability cell was observed.
pub fn chi_square_p(counts: &HashMap<u32, u64>, probs: &HashMap<u32, f64>, what: &str) -> f64 {
    for (k, c) in counts {
        assert!(probs.contains_key(k) || *c == 0, "{what}: moved to {k}, which has probability 0 ({c} times)");
    }
    let total: u64 = counts.values().sum();
    let mut cells: Vec<(f64, f64)> = probs.iter().map(|(k, p)| (counts.get(k).copied().unwrap_or(0) as f64, p * total as f64)).collect();
    cells.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap());
    let mut pooled = Vec::new();
    let (mut o_acc, mut e_acc) = (0.0, 0.0);
    for (o, e) in cells {
        if e < 5.0 {
            o_acc += o;
            e_acc += e;
        } else {
            pooled.push((o, e));
        }
    }
    if e_acc > 0.0 {
        if e_acc >= 5.0 || pooled.is_empty() {
            pooled.push((o_acc, e_acc));
        } else {
            let last = pooled.first_mut().unwrap();
            last.0 += o_acc;
            last.1 += e_acc;
        }
    }
    if pooled.len() < 2 {
        return 1.0;
    }
    let stat: f64 = pooled.iter().map(|(o, e)| (o - e) * (o - e) / e).sum();
    ChiSquared::new((pooled.len() - 1) as f64).unwrap().sf(stat)
}

/// Tallies of observed transitions keyed by (step, prev, cur), from padded walks.
#[derive(Default)]
pub struct Tally {
    pub moves: HashMap<(u32, Option<u32>, u32), HashMap<u32, u64>>,
    pub ends: HashMap<(u32, Option<u32>, u32), u64>,
}

pub fn tally(walks: &wayfarer::Walks, length: u32) -> Tally {
    let mut t = Tally::default();
    for i in 0..walks.len() {
        let w = walks.walk(i);
        for s in 0..w.len() {
            let prev = if s == 0 { None } else { Some(w[s - 1]) };
            let key = (s as u32, prev, w[s]);
            if s + 1 < w.len() {
                *t.moves.entry(key).or_default().entry(w[s + 1]).or_default() += 1;
            } else if (s as u32) < length {
                *t.ends.entry(key).or_default() += 1;
            }
        }
    }
    t
}

/// Checks every tallied state against the exact model: moves only where allowed, dead ends
/// exactly where the model has no positive weight, chi-square on states with enough samples.
/// Returns the number of states tested, the largest sample count among them, and the number
/// of dead-end states confirmed.
pub fn check_tally(t: &Tally, model: &Model, edges: &[RawEdge], what: &str) -> (usize, u64, usize) {
    let mut tested = 0;
    let mut biggest = 0;
    for (&(step, prev, cur), ended) in &t.ends {
        let p = exact(model, edges, step, prev, cur);
        assert!(p.is_empty(), "{what}: walk ended at (step {step}, prev {prev:?}, cur {cur}) {ended} times, but it has moves {p:?}");
    }
    for (&(step, prev, cur), counts) in &t.moves {
        let p = exact(model, edges, step, prev, cur);
        let label = format!("{what} at (step {step}, prev {prev:?}, cur {cur})");
        assert!(!p.is_empty(), "{label}: moved from a dead end");
        let total: u64 = counts.values().sum();
        let pv = chi_square_p(counts, &p, &label);
        if total >= 1000 {
            assert!(pv > ALPHA, "{label}: chi-square p = {pv:.3e} < {ALPHA:e}; counts {counts:?}, exact {p:?}");
            tested += 1;
            biggest = biggest.max(total);
        }
    }
    (tested, biggest, t.ends.len())
}

/// A library walk's `#[walk]` program compiled at run time by the Cranelift backend, for a
/// graph with (`weighted`) or without edge weights.
pub fn cranelift_walk(walk: &wayfarer::library::LibraryWalk, weighted: bool) -> wayfarer_jit::JitWalk {
    let (source, values) = walk.program().expect("a #[walk] program");
    let (program, info) = wayfarer_compiler::compile_source(source).unwrap();
    wayfarer_jit::JitWalk::compile(&program, &info, &values, weighted).unwrap()
}

/// Evaluates `walk`'s squeeze (`Walk::weight_envelope`) on every edge of every step that
/// starts at a node of `g` with each of `prevs` before it (`NO_NODE`: the first move), and
/// asserts `lo <= weight <= hi` wherever there is one. Returns how many edges were
/// evaluated, how many had an envelope, and how many of those were a single value.
pub fn check_squeeze<W: wayfarer::Walk<State = ()>>(walk: &W, g: &CsrGraph, prevs: &[u32], what: &str) -> (usize, usize, usize) {
    let stats = wayfarer::NodeStats::compute(g, walk.requirements(), true);
    let ctx = wayfarer::Ctx::new(g, &stats);
    let (mut edges, mut enveloped, mut exact) = (0, 0, 0);
    for cur in 0..g.num_nodes() as u32 {
        for &prev in prevs {
            let mut w = wayfarer::Walker::<()>::new(cur);
            (w.prev, w.step) = (prev, (prev != wayfarer::NO_NODE) as u32);
            for e in g.row(cur) {
                edges += 1;
                let x = walk.weight(&ctx, &w, e);
                if let Some((lo, hi)) = walk.weight_envelope(&ctx, &w, e) {
                    assert!(lo <= x && x <= hi, "{what}: envelope ({lo}, {hi}) misses {x} at {cur}<-{prev}");
                    enveloped += 1;
                    exact += (lo == hi) as usize;
                }
            }
        }
    }
    (edges, enveloped, exact)
}
