//! The engine's uniform-row fast path (`runtime/src/uniform.rs`): it is taken exactly when every
//! row's steps are eRJS accepting its first candidate, and it gives the general path's walks.
//!
//! The general path is reached on the same rows by adding one node whose row is not uniform and
//! that no other node reaches: the walks from the other nodes must not change.

mod common;

use common::cranelift_walk;
use wayfarer::graph::{CsrParts, Orientation};
use wayfarer::library::LibraryWalk;
use wayfarer::{CostRatio, CsrGraph, SamplerMode, Starts, WalkConfig};

/// An R-MAT graph without weights, and the same graph with weights 1 plus node `n` (its row:
/// weights 2 and 1, to nodes 0 and 1), which no edge reaches.
fn graphs() -> (CsrGraph, CsrGraph) {
    let g = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    let n = g.num_nodes() as u32;
    let mut offsets = g.offsets().to_vec();
    let mut targets = g.targets().to_vec();
    let mut weights = vec![1.0f32; targets.len()];
    targets.extend([0, 1]);
    weights.extend([2.0, 1.0]);
    offsets.push(targets.len() as u64);
    let parts = CsrParts { offsets, targets, weights: Some(weights), ..Default::default() };
    let h = CsrGraph::from_parts(parts, Orientation::Directed).unwrap();
    assert_eq!(h.num_nodes() as u32, n + 1);
    (g, h)
}

#[test]
fn uniform_rows_take_the_fast_path_and_give_the_general_paths_walks() {
    let (g, h) = graphs();
    let starts = Starts::Nodes((0..g.num_nodes() as u32).collect());
    let native = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    let jit = cranelift_walk(&native, false);
    let jit_weighted = cranelift_walk(&native, true);
    for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection] {
        for interleave in [1, 8] {
            let cfg = WalkConfig { length: 20, seed: 7, sampler, cost_ratio: CostRatio::Default, interleave, table_budget: None };
            let what = format!("{sampler}, interleave {interleave}");
            let (fast, rf) = native.run(&g, &starts, &cfg, None).unwrap();
            assert!(rf.uniform_rows, "{what}: an unweighted DeepWalk did not take the fast path");
            assert!(rf.summary("cpu").contains("uniform rows"), "{what}: the summary does not say so");
            assert_eq!(rf.stats.rejection_steps, rf.steps, "{what}: its steps count as eRJS's");
            let (general, rg) = native.run(&h, &starts, &cfg, None).unwrap();
            assert!(!rg.uniform_rows, "{what}: one non-uniform row must keep the whole run on the general path");
            assert!(fast.steps() > 1000, "{what}: too few steps to mean anything");
            assert_eq!(fast, general, "{what}: the fast path's walks differ from the general path's");
            assert_eq!(rf.stats.rejection_steps, rg.stats.rejection_steps, "{what}");
            // Cranelift: the same fast path, the same walks.
            let (fast_jit, rj) = wayfarer::engine::run(&jit, &g, &starts, &cfg, None).unwrap();
            assert!(rj.uniform_rows && !rj.compiled_turns, "{what}: Cranelift");
            assert_eq!(fast, fast_jit, "{what}: Cranelift's fast path");
            let (general_jit, rgj) = wayfarer::engine::run(&jit_weighted, &h, &starts, &cfg, None).unwrap();
            assert!(!rgj.uniform_rows, "{what}: Cranelift's general path");
            assert_eq!(fast, general_jit, "{what}: Cranelift's general path");
        }
    }
}

#[test]
fn rows_that_are_not_provably_first_trial_keep_the_general_path() {
    let (g, _) = graphs();
    let starts = Starts::EveryNode { per_node: 1 };
    let cfg = |sampler| WalkConfig { length: 5, seed: 1, sampler, cost_ratio: CostRatio::Default, interleave: 8, table_budget: None };
    let deepwalk = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    // Samplers other than eRJS and adaptive never take it.
    for sampler in [SamplerMode::Reservoir, SamplerMode::Structured, SamplerMode::Table] {
        let (_, r) = deepwalk.run(&g, &starts, &cfg(sampler), None).unwrap();
        assert!(!r.uniform_rows, "{sampler}");
    }
    // Walks whose weight reads the walker (Node2Vec) or whose rows are skewed do not.
    let node2vec = LibraryWalk::from_name("node2vec", &[], &g, false).unwrap();
    assert!(!node2vec.run(&g, &starts, &cfg(SamplerMode::Adaptive), None).unwrap().1.uniform_rows);
    let mut skewed = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    skewed.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse().unwrap(), 3))).unwrap();
    let weighted = LibraryWalk::from_name("deepwalk", &[], &skewed, false).unwrap();
    assert!(!weighted.run(&skewed, &starts, &cfg(SamplerMode::Adaptive), None).unwrap().1.uniform_rows);
}
