//! The edge behind each move (`WalkConfig::record_edges`, `Walks::edges`), on every CPU path:
//! the uniform-row and alias fast paths, lock-step eRJS, the general engine, Cranelift's
//! compiled turns; on graphs with parallel edges, and for walks that restart.
//!
//! Each recorded edge must lead from the walk's node to its next node; a move without an edge
//! (a restart) records `NO_EDGE`, and only there; recording must not change the walks. Which
//! of two parallel edges a walk took is checked against their weights by a chi-square test
//! (p > 1e-4): recording the first of them, or any fixed one, fails it.

mod common;

use common::{chi_square_p, cranelift_walk};
use std::collections::HashMap;
use wayfarer::graph::{CsrParts, Orientation};
use wayfarer::library::LibraryWalk;
use wayfarer::{CostRatio, CsrGraph, NO_EDGE, SamplerMode, Starts, WalkConfig, Walks};

/// A multigraph: an R-MAT graph whose every fourth row repeats its first edge with another
/// weight, weights 1..=4 by position.
fn multigraph() -> CsrGraph {
    let g = wayfarer::graph::generate::rmat(10, 8, 3).unwrap();
    let (mut offsets, mut targets, mut weights) = (vec![0u64], Vec::new(), Vec::new());
    for v in 0..g.num_nodes() as u32 {
        let row = g.neighbors(v);
        for (i, &t) in row.iter().enumerate() {
            targets.push(t);
            weights.push(1.0 + (i % 4) as f32);
            if i == 0 && v % 4 == 0 {
                targets.push(t);
                weights.push(3.0);
            }
        }
        offsets.push(targets.len() as u64);
    }
    CsrGraph::from_parts(CsrParts { offsets, targets, weights: Some(weights), ..Default::default() }, Orientation::Directed).unwrap()
}

fn cfg(sampler: SamplerMode, record_edges: bool) -> WalkConfig {
    WalkConfig { length: 12, seed: 11, sampler, cost_ratio: CostRatio::Default, interleave: 8, table_budget: None, record_edges }
}

/// Every recorded edge leads from the walk's node to the next; `NO_EDGE` exactly where the
/// next node is the start and the walk may restart. Returns the moves without an edge.
fn check(g: &CsrGraph, walks: &Walks, restarts: bool, what: &str) -> u64 {
    assert_eq!(walks.edges.len(), walks.len() * (walks.stride - 1), "{what}: one slot per move");
    let mut without = 0;
    for i in 0..walks.len() {
        let (nodes, edges) = (walks.walk(i), walks.walk_edges(i));
        assert_eq!(edges.len(), nodes.len() - 1, "{what}: walk {i}");
        for (j, &e) in edges.iter().enumerate() {
            if e == NO_EDGE {
                assert!(restarts, "{what}: walk {i} move {j} took no edge");
                assert_eq!(nodes[j + 1], nodes[0], "{what}: walk {i} move {j}: a move without an edge goes to the start");
                without += 1;
                continue;
            }
            assert!(g.row(nodes[j]).contains(&(e as usize)), "{what}: walk {i} move {j}: edge {e} is not in {}'s row", nodes[j]);
            assert_eq!(g.targets()[e as usize], nodes[j + 1], "{what}: walk {i} move {j}: edge {e} leads elsewhere");
        }
        let steps = walks.stride - 1;
        assert!(walks.edges[i * steps + edges.len()..(i + 1) * steps].iter().all(|&e| e == NO_EDGE), "{what}: past walk {i}'s end");
    }
    without
}

#[test]
fn each_path_records_the_edge_behind_each_move() {
    let g = multigraph();
    let starts = Starts::EveryNode { per_node: 2 };
    for (name, params, weighted) in [
        ("deepwalk", vec![], false),
        ("deepwalk", vec![], true),
        ("node2vec", vec![("a".to_string(), "2".to_string()), ("b".to_string(), "0.5".to_string())], true),
        ("ppr", vec![("alpha".to_string(), "0.3".to_string())], true),
    ] {
        let walk = LibraryWalk::from_name(name, &params, &g, weighted).unwrap();
        let restarts = name == "ppr";
        for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection, SamplerMode::Reservoir] {
            let what = format!("{name} (weighted {weighted}), {sampler}");
            let (plain, _) = walk.run(&g, &starts, &cfg(sampler, false), None).unwrap();
            assert!(plain.edges.is_empty(), "{what}: edges only when asked for");
            let (walks, report) = walk.run(&g, &starts, &cfg(sampler, true), None).unwrap();
            assert_eq!(walks.nodes, plain.nodes, "{what} ({:?}): recording changed the walks", report.fast_path);
            let without = check(&g, &walks, restarts, &format!("{what} ({:?})", report.fast_path));
            if restarts {
                assert!(without > 100, "{what}: {without} restarts recorded");
            }
            // The same walk compiled at run time: its compiled turns keep the edge too.
            let jit = cranelift_walk(&walk, weighted);
            let (jit_plain, _) = wayfarer::engine::run(&jit, &g, &starts, &cfg(sampler, false), None).unwrap();
            let (jit_walks, rj) = wayfarer::engine::run(&jit, &g, &starts, &cfg(sampler, true), None).unwrap();
            assert_eq!(jit_walks.nodes, jit_plain.nodes, "{what}: recording changed Cranelift's walks");
            check(&g, &jit_walks, restarts, &format!("{what}, Cranelift ({:?}, compiled turns {})", rj.fast_path, rj.compiled_turns));
        }
    }
}

/// Node 0's row: three edges to node 1 (weights 1, 3 and 0) and one to node 2 (weight 2), in
/// the graph's order; nodes 1 and 2 lead back to 0.
fn parallel_edges() -> CsrGraph {
    let parts = CsrParts {
        offsets: vec![0, 4, 5, 6],
        targets: vec![1, 1, 1, 2, 0, 0],
        weights: Some(vec![1.0, 3.0, 0.0, 2.0, 1.0, 1.0]),
        ..Default::default()
    };
    CsrGraph::from_parts(parts, Orientation::Directed).unwrap()
}

#[test]
fn parallel_edges_are_taken_in_proportion_to_their_weights() {
    let g = parallel_edges();
    let starts = Starts::Nodes(vec![0; 60_000]);
    // The graph keeps parallel edges in an order of its own: the probabilities follow each
    // edge's weight, wherever it is stored.
    let w = g.weights().unwrap();
    let probs: HashMap<u32, f64> = g.row(0).filter(|&e| w[e] > 0.0).map(|e| (e as u32, w[e] as f64 / 6.0)).collect();
    assert_eq!(probs.len(), 3);
    for (name, params) in [("deepwalk", vec![]), ("node2vec", vec![("a".to_string(), "1".to_string()), ("b".to_string(), "1".to_string())])]
    {
        let walk = LibraryWalk::from_name(name, &params, &g, true).unwrap();
        for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection, SamplerMode::Reservoir] {
            let what = format!("{name}, {sampler}");
            let (walks, _) = walk.run(&g, &starts, &WalkConfig { length: 1, ..cfg(sampler, true) }, None).unwrap();
            let mut counts: HashMap<u32, u64> = HashMap::new();
            for i in 0..walks.len() {
                *counts.entry(walks.walk_edges(i)[0] as u32).or_default() += 1;
            }
            let p = chi_square_p(&counts, &probs, &what);
            assert!(p > 1e-4, "{what}: edges {counts:?}, chi-square p = {p}");
        }
    }
}

#[test]
fn wgpu_refuses_to_record_edges_and_auto_runs_them() {
    let g = parallel_edges();
    let walk = LibraryWalk::from_name("deepwalk", &[], &g, true).unwrap();
    let mut job = wayfarer::job::WalkJob::new(&g, wayfarer::job::JobWalk::library(&walk));
    job.record_edges = true;
    let err = wayfarer::job::select(wayfarer::gpu::Backend::Wgpu, &job).err().expect("refused").to_string();
    assert!(err.contains("CPU and CUDA"), "{err}");
    // `auto` runs it where it can: the CPU, or CUDA (which records them too; tests/gpu.rs).
    let chosen = wayfarer::job::select(wayfarer::gpu::Backend::Auto, &job).unwrap();
    assert_ne!(chosen.runner.kind(), wayfarer::gpu::Backend::Wgpu);
}
