//! The engine's fast paths (`runtime/src/fast_path.rs`).
//!
//! Uniform rows: taken exactly when every row's steps are eRJS accepting its first candidate,
//! and giving the general path's walks. The general path is reached on the same rows by adding
//! one node whose row is not uniform and that no other node reaches: the walks from the other
//! nodes must not change.
//!
//! Lock-step eRJS: taken by walks without move hooks under adaptive and eRJS when the run has
//! no tables; the general path's walks and sampler counts exactly (compared with every fast
//! path switched off, feature `testing`: a process-wide switch, so every test here holds
//! [`SWITCH`]), eRVS picks and eRJS->eRVS fallbacks included.
//!
//! Lock-step structured: taken by the same walks under adaptive and structured when the run
//! built structured-proposal tables; the general path's walks and sampler counts exactly,
//! for label segments (MetaPath, weighted and not), has_edge mixtures (second-order PageRank)
//! and static-weight tables (Node2Vec on Pareto weights), natively and through Cranelift.
//!
//! Alias rows: taken by adaptive static-weight walks without move hooks; the same walks
//! natively and through Cranelift, at any thread count and interleave width; zero weights never
//! taken, weightless rows dead ends, bad weights an error naming the edge. (Their transition
//! probabilities are checked by the chi-square suite, `exactness.rs`, and a broken table fails
//! it, `structured_broken.rs`.)

mod common;

/// The fast-path switch is process-wide: one test holds it at a time.
static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn hold() -> std::sync::MutexGuard<'static, ()> {
    SWITCH.lock().unwrap_or_else(|e| e.into_inner())
}

use common::cranelift_walk;
use wayfarer::fast_path::FastPathReport;
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
    let _held = hold();
    let (g, h) = graphs();
    let starts = Starts::Nodes((0..g.num_nodes() as u32).collect());
    let native = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    let jit = cranelift_walk(&native, false);
    let jit_weighted = cranelift_walk(&native, true);
    for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection] {
        for interleave in [1, 8] {
            let cfg = WalkConfig {
                length: 20,
                seed: 7,
                sampler,
                cost_ratio: CostRatio::Default,
                interleave,
                table_budget: None,
                record_edges: false,
            };
            let what = format!("{sampler}, interleave {interleave}");
            let (fast, rf) = native.run(&g, &starts, &cfg, None).unwrap();
            assert!(rf.fast_path == FastPathReport::UniformRows, "{what}: an unweighted DeepWalk did not take the fast path");
            assert!(rf.summary("cpu").contains("uniform rows"), "{what}: the summary does not say so");
            assert_eq!(rf.stats.rejection_steps, rf.steps, "{what}: its steps count as eRJS's");
            // One row that is not uniform keeps the whole run off the uniform path (on another).
            let (other, ro) = native.run(&h, &starts, &cfg, None).unwrap();
            assert!(ro.fast_path != FastPathReport::UniformRows, "{what}: one non-uniform row must keep the run off the uniform path");
            if sampler == SamplerMode::Rejection {
                assert_eq!(fast, other, "{what}: lock-step eRJS on the other rows");
            }
            let (general, rg) = fast_paths_off(|| native.run(&h, &starts, &cfg, None).unwrap());
            assert!(rg.fast_path == FastPathReport::None, "{what}: the switch");
            assert!(fast.steps() > 1000, "{what}: too few steps to mean anything");
            assert_eq!(fast, general, "{what}: the fast path's walks differ from the general path's");
            assert_eq!(rf.stats.rejection_steps, rg.stats.rejection_steps, "{what}");
            // Cranelift: the same fast path, the same walks.
            let (fast_jit, rj) = wayfarer::engine::run(&jit, &g, &starts, &cfg, None).unwrap();
            assert!(rj.fast_path == FastPathReport::UniformRows && !rj.compiled_turns, "{what}: Cranelift");
            assert_eq!(fast, fast_jit, "{what}: Cranelift's fast path");
            let (general_jit, rgj) = fast_paths_off(|| wayfarer::engine::run(&jit_weighted, &h, &starts, &cfg, None).unwrap());
            assert!(rgj.fast_path == FastPathReport::None, "{what}: Cranelift's general path");
            assert_eq!(fast, general_jit, "{what}: Cranelift's general path");
        }
    }
}

/// Walks that stop at a dead end anywhere (partway through a 64-byte output line or a chunk),
/// of lengths around a line's sixteen words, at every interleave width, give the general path's
/// walks word for word on the uniform path (the graph: R-MAT's edges from lower to higher ids
/// only, so every walk ends at a dead end, after 0 to many moves).
#[test]
fn uniform_rows_write_every_word_of_walks_that_end_anywhere() {
    let _held = hold();
    let (g, _) = graphs();
    let (mut offsets, mut targets) = (vec![0u64], Vec::new());
    for u in 0..g.num_nodes() as u32 {
        targets.extend(g.targets()[g.row(u)].iter().copied().filter(|&v| v > u));
        offsets.push(targets.len() as u64);
    }
    let dag = CsrGraph::from_parts(CsrParts { offsets, targets, ..Default::default() }, Orientation::Directed).unwrap();
    let starts = Starts::Nodes((0..dag.num_nodes() as u32).chain(0..dag.num_nodes() as u32 / 3).collect());
    let native = LibraryWalk::from_name("deepwalk", &[], &dag, false).unwrap();
    for length in [5, 15, 16, 17, 37] {
        for interleave in [1, 8, 64] {
            let cfg = WalkConfig { length, seed: 11, interleave, ..Default::default() };
            let (fast, rf) = native.run(&dag, &starts, &cfg, None).unwrap();
            assert!(rf.fast_path == FastPathReport::UniformRows, "length {length}: not the fast path");
            let (general, _) = fast_paths_off(|| native.run(&dag, &starts, &cfg, None).unwrap());
            assert_eq!(fast, general, "length {length}, interleave {interleave}");
            let ended_early = (0..fast.len()).filter(|&i| (3..=length as usize).contains(&fast.walk(i).len())).count();
            assert!(ended_early > 100 && rf.stats.dead_ends > 100, "length {length}: {ended_early} walks ended partway");
        }
    }
}

#[test]
fn rows_that_are_not_provably_first_trial_keep_the_uniform_path_off() {
    let _held = hold();
    let (g, _) = graphs();
    let starts = Starts::EveryNode { per_node: 1 };
    let cfg = |sampler| WalkConfig {
        length: 5,
        seed: 1,
        sampler,
        cost_ratio: CostRatio::Default,
        interleave: 8,
        table_budget: None,
        record_edges: false,
    };
    let deepwalk = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    // Samplers other than eRJS and adaptive never take it.
    for sampler in [SamplerMode::Reservoir, SamplerMode::Table] {
        let (_, r) = deepwalk.run(&g, &starts, &cfg(sampler), None).unwrap();
        assert_eq!(r.fast_path, FastPathReport::None, "{sampler}");
    }
    // Structured takes the lock-step path with its tables, not the uniform one.
    let (_, r) = deepwalk.run(&g, &starts, &cfg(SamplerMode::Structured), None).unwrap();
    assert_eq!(r.fast_path, FastPathReport::LockStepStructured);
    // Walks whose weight reads the walker (Node2Vec) or whose rows are skewed do not.
    let node2vec = LibraryWalk::from_name("node2vec", &[], &g, false).unwrap();
    let fast_path = node2vec.run(&g, &starts, &cfg(SamplerMode::Adaptive), None).unwrap().1.fast_path;
    assert!(matches!(fast_path, FastPathReport::LockStepRejection { .. }), "{fast_path:?}");
    let mut skewed = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    skewed.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse().unwrap(), 3))).unwrap();
    let weighted = LibraryWalk::from_name("deepwalk", &[], &skewed, false).unwrap();
    assert!(matches!(
        weighted.run(&skewed, &starts, &cfg(SamplerMode::Adaptive), None).unwrap().1.fast_path,
        FastPathReport::AliasRows { .. }
    ));
}

/// R-MAT 11 with Pareto(1) weights, a tenth of them 0, plus node `n` whose row (to 0 and 1)
/// weighs nothing and node `n + 1` whose row goes to `n`.
fn skewed_with_weightless_row() -> CsrGraph {
    let g = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    let n = g.num_nodes() as u32;
    let mut weights = wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 3);
    for (i, w) in weights.iter_mut().enumerate() {
        if i % 10 == 3 {
            *w = 0.0;
        }
    }
    let mut offsets = g.offsets().to_vec();
    let mut targets = g.targets().to_vec();
    targets.extend([0, 1, n]);
    weights.extend([0.0, 0.0, 1.0]);
    offsets.push(targets.len() as u64 - 1);
    offsets.push(targets.len() as u64);
    let parts = CsrParts { offsets, targets, weights: Some(weights), ..Default::default() };
    CsrGraph::from_parts(parts, Orientation::Directed).unwrap()
}

#[test]
fn static_weights_take_the_alias_path_with_the_same_walks_everywhere() {
    let _held = hold();
    let g = skewed_with_weightless_row();
    let n = g.num_nodes() as u32;
    let starts = Starts::EveryNode { per_node: 4 };
    let native = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    let jit = cranelift_walk(&native, true);
    let cfg = |interleave| WalkConfig { length: 12, seed: 3, interleave, ..Default::default() };
    let (walks, r) = native.run(&g, &starts, &cfg(0), None).unwrap();
    assert!(matches!(r.fast_path, FastPathReport::AliasRows { .. }), "{:?}", r.fast_path);
    assert!(r.summary("cpu").contains("alias rows"), "the summary does not say so");
    assert_eq!(r.stats.alias_steps, r.steps, "every step is one alias draw: {:?}", r.stats);
    assert!(walks.steps() > 40_000, "too few steps to mean anything");
    // Every move follows an edge of positive weight; the weightless row ends its walks.
    let w = g.weights().unwrap();
    let mut ended_at_weightless = 0;
    for i in 0..walks.len() {
        let walk = walks.walk(i);
        for pair in walk.windows(2) {
            let row = g.row(pair[0]);
            assert!(row.clone().any(|e| g.targets()[e] == pair[1] && w[e] > 0.0), "walk {i} took {pair:?}");
        }
        if walk.len() < 13 && *walk.last().unwrap() == n - 2 {
            ended_at_weightless += 1;
        }
    }
    assert!(ended_at_weightless >= 2, "the walks from the weightless row did not end there");
    // The same walks at any width, thread count and through Cranelift.
    for interleave in [1, 8, 13] {
        assert_eq!(native.run(&g, &starts, &cfg(interleave), None).unwrap().0, walks, "interleave {interleave}");
    }
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    assert_eq!(one.install(|| native.run(&g, &starts, &cfg(0), None).unwrap().0), walks, "one thread");
    let (jit_walks, rj) = wayfarer::engine::run(&jit, &g, &starts, &cfg(0), None).unwrap();
    assert!(matches!(rj.fast_path, FastPathReport::AliasRows { .. }) && !rj.compiled_turns, "Cranelift: {:?}", rj.fast_path);
    assert_eq!(jit_walks, walks, "Cranelift's alias path");
}

#[test]
fn the_alias_path_needs_adaptive_a_budget_and_good_weights() {
    let _held = hold();
    let g = skewed_with_weightless_row();
    let starts = Starts::EveryNode { per_node: 1 };
    let deepwalk = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    for sampler in [SamplerMode::Rejection, SamplerMode::Reservoir, SamplerMode::Structured, SamplerMode::Table] {
        let cfg = WalkConfig { length: 4, seed: 1, sampler, ..Default::default() };
        let fast = deepwalk.run(&g, &starts, &cfg, None).unwrap().1.fast_path;
        assert!(!matches!(fast, FastPathReport::AliasRows { .. }), "{sampler}");
    }
    // A budget below the tables' 16 bytes per edge keeps the alias path off: the structured
    // tables fit it, and the lock-step path takes them.
    let small = WalkConfig { length: 4, seed: 1, table_budget: Some(16 * g.num_edges() - 1), ..Default::default() };
    assert_eq!(deepwalk.run(&g, &starts, &small, None).unwrap().1.fast_path, FastPathReport::LockStepStructured);
    // A walk with move hooks (PPR's stop rule) keeps it too.
    let ppr = LibraryWalk::from_name("ppr", &[], &g, false).unwrap();
    let cfg = WalkConfig { length: 4, seed: 1, ..Default::default() };
    assert_eq!(ppr.run(&g, &starts, &cfg, None).unwrap().1.fast_path, FastPathReport::None);
    // A static weight that is negative anywhere is an error naming its edge, before any walk.
    let source = "#[walk]\nfn below_two(s: &Step) -> f32 { s.weight() - 2.0 }\n";
    let (program, info) = wayfarer_compiler::compile_source(source).unwrap();
    let shifted = wayfarer_jit::JitWalk::compile(&program, &info, &[], true).unwrap();
    let err = wayfarer::engine::run(&shifted, &g, &starts, &cfg, None).unwrap_err().to_string();
    assert!(err.contains("below_two") && err.contains(" -> "), "{err}");
}

/// Runs `f` with every fast path off.
fn fast_paths_off<T>(f: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering;
    wayfarer::fast_path::FAST_PATHS_OFF.store(true, Ordering::Relaxed);
    let out = f();
    wayfarer::fast_path::FAST_PATHS_OFF.store(false, Ordering::Relaxed);
    out
}

#[test]
fn lock_step_rejection_gives_the_general_paths_walks_and_counts() {
    let _held = hold();
    let g = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    let mut pareto = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    pareto.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 3))).unwrap();
    let mut uniform = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    uniform.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse().unwrap(), 4))).unwrap();
    let starts = Starts::EveryNode { per_node: 2 };
    let (mut ervs, mut fallbacks) = (0, 0);
    for (graph, what) in [(&g, "unweighted"), (&uniform, "U[1,5)"), (&pareto, "Pareto(1)")] {
        let node2vec = LibraryWalk::from_name("node2vec", &[], graph, false).unwrap();
        let jit = cranelift_walk(&node2vec, graph.weights().is_some());
        for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection] {
            for interleave in [0, 1, 8] {
                // No tables: a budget of 0 keeps Pareto's structured tables off.
                let cfg = WalkConfig { length: 10, seed: 9, sampler, interleave, table_budget: Some(0), ..Default::default() };
                let what = format!("{what} {sampler} interleave {interleave}");
                let (fast, rf) = node2vec.run(graph, &starts, &cfg, None).unwrap();
                // Node2Vec's openings past the first move depend on the node alone at a=2, b=0.5.
                assert!(
                    matches!(rf.fast_path, FastPathReport::LockStepRejection { node_starts, shared_opening } if node_starts > 0 || shared_opening),
                    "{what}: {:?}",
                    rf.fast_path
                );
                assert!(rf.summary("cpu").contains("lock-step eRJS"), "{what}: the summary does not say so");
                let (slow, rs) = fast_paths_off(|| node2vec.run(graph, &starts, &cfg, None).unwrap());
                assert_eq!(rs.fast_path, FastPathReport::None, "{what}: the switch");
                assert!(fast.steps() > 20_000, "{what}: too few steps to mean anything");
                assert_eq!(fast, slow, "{what}: the lock-step walks differ from the general path's");
                assert_eq!(rf.stats, rs.stats, "{what}: the sampler counts differ");
                (ervs, fallbacks) = (ervs + rf.stats.reservoir_steps, fallbacks + rf.stats.rejection_fallbacks);
                // Cranelift: the same path, the same walks as its compiled turns.
                let (fast_jit, rj) = wayfarer::engine::run(&jit, graph, &starts, &cfg, None).unwrap();
                assert!(
                    matches!(rj.fast_path, FastPathReport::LockStepRejection { node_starts, shared_opening } if node_starts > 0 || shared_opening),
                    "{what}: Cranelift: {:?}",
                    rj.fast_path
                );
                assert!(!rj.compiled_turns, "{what}: Cranelift");
                let (slow_jit, _) = fast_paths_off(|| wayfarer::engine::run(&jit, graph, &starts, &cfg, None).unwrap());
                assert_eq!(fast_jit, slow_jit, "{what}: Cranelift's lock-step walks differ from its compiled turns'");
            }
        }
    }
    assert!(ervs > 0, "no step started on eRVS: the test misses that branch");
    assert!(fallbacks > 0, "no eRJS->eRVS fallback: the test misses that branch");
    // Walks with move hooks (PPR's stop rule) and runs with tables keep the general path.
    let ppr = LibraryWalk::from_name("ppr", &[], &g, false).unwrap();
    let cfg = WalkConfig { length: 4, seed: 1, ..Default::default() };
    assert_eq!(ppr.run(&g, &starts, &cfg, None).unwrap().1.fast_path, FastPathReport::None);
    let node2vec = LibraryWalk::from_name("node2vec", &[], &pareto, false).unwrap();
    let (_, r) = node2vec.run(&pareto, &starts, &cfg, None).unwrap();
    assert!(
        matches!(r.proposal, wayfarer::engine::ProposalReport::Built { .. }) && r.fast_path == FastPathReport::LockStepStructured,
        "{:?}",
        r.fast_path
    );
}

/// Runs `f` with the per-node openings switched as `off` and `broken` say.
fn with_node_starts<T>(off: bool, broken: bool, f: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering;
    use wayfarer::fast_path::node_starts::{BROKEN_NODE_STARTS, NODE_STARTS_OFF};
    // Switched back when `f` returns or panics: the next test finds them off.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            (NODE_STARTS_OFF.store(false, Ordering::Relaxed), BROKEN_NODE_STARTS.store(false, Ordering::Relaxed));
        }
    }
    let _reset = Reset;
    (NODE_STARTS_OFF.store(off, Ordering::Relaxed), BROKEN_NODE_STARTS.store(broken, Ordering::Relaxed));
    f()
}

/// Per-node openings (Node2Vec's bound and estimate past the first move read only the node):
/// the walks and sampler counts of the same path without them and of the general path, on
/// rows of U[1,5) weights, skewed Pareto(1) rows (some open on eRVS) and rows whose weights are
/// all 0 (dead ends by their bound); only those where the bound reads the edge back to `prev`
/// on the others (a = 0.3); natively and through Cranelift; and a table whose bounds are halved gives other walks, so the comparison would
/// catch a wrong one.
#[test]
fn node_openings_give_the_walks_of_every_step_computing_its_own() {
    let _held = hold();
    let g = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    let with_zero_rows = |spec: &str| {
        let mut w = wayfarer::graph::generate::weights(&g, spec.parse().unwrap(), 4);
        for v in (0..g.num_nodes() as u32).filter(|v| v % 7 == 0) {
            w[g.row(v)].fill(0.0);
        }
        let mut h = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
        h.set_weights(Some(w)).unwrap();
        h
    };
    let (uniform, pareto) = (with_zero_rows("uniform"), with_zero_rows("pareto:1"));
    let starts = Starts::EveryNode { per_node: 2 };
    let return_heavy = vec![("a".to_string(), "0.3".to_string()), ("b".to_string(), "4".to_string())];
    let mut ervs = 0;
    for (graph, what) in [(&g, "unweighted"), (&uniform, "U[1,5) with zero rows"), (&pareto, "Pareto(1) with zero rows")] {
        // At a = 0.3 the bound reads the edge back to `prev` unless the row's weights are all
        // 0: only the zero rows are tabulated (as dead ends).
        for (params, tabulated) in [(&[][..], true), (&return_heavy[..], what != "unweighted")] {
            let node2vec = LibraryWalk::from_name("node2vec", params, graph, false).unwrap();
            let jit = cranelift_walk(&node2vec, graph.weights().is_some());
            for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection] {
                let cfg = WalkConfig { length: 12, seed: 5, sampler, table_budget: Some(0), ..Default::default() };
                let what = format!("{what}, {params:?}, {sampler}");
                let (with, rw) = node2vec.run(graph, &starts, &cfg, None).unwrap();
                let FastPathReport::LockStepRejection { node_starts, shared_opening } = rw.fast_path else {
                    panic!("{what}: {:?}", rw.fast_path)
                };
                assert_eq!(node_starts > 0 || shared_opening, tabulated, "{what}: table of {node_starts} bytes");
                // Unweighted at a = 2, b = 0.5 every row opens on eRJS under the one bound: no
                // table is kept; the zero rows' dead ends make the others keep one.
                assert_eq!(shared_opening, what.starts_with("unweighted") && params.is_empty(), "{what}: one opening for all");
                assert_eq!(shared_opening, node_starts == 0 && tabulated, "{what}: a table kept beside the shared opening");
                let (without, ro) = with_node_starts(true, false, || node2vec.run(graph, &starts, &cfg, None).unwrap());
                assert_eq!(ro.fast_path, FastPathReport::LockStepRejection { node_starts: 0, shared_opening: false }, "{what}: the switch");
                let (general, rg) = fast_paths_off(|| node2vec.run(graph, &starts, &cfg, None).unwrap());
                assert!(with.steps() > 10_000, "{what}: too few steps to mean anything");
                assert!(with == without && with == general, "{what}: the walks differ");
                assert!(rw.stats == ro.stats && rw.stats == rg.stats, "{what}: the sampler counts differ");
                // Cranelift: its own `node_start`, the same tables and walks.
                let (jit_with, rj) = wayfarer::engine::run(&jit, graph, &starts, &cfg, None).unwrap();
                let (jit_without, _) = with_node_starts(true, false, || wayfarer::engine::run(&jit, graph, &starts, &cfg, None).unwrap());
                assert_eq!(rj.fast_path, rw.fast_path, "{what}: Cranelift's table");
                assert!(jit_with == with && jit_without == with, "{what}: Cranelift's walks differ");
                assert!(rw.stats.dead_ends > 100 || what.starts_with("unweighted"), "{what}: no dead end");
                ervs += rw.stats.reservoir_steps;
                if params.is_empty() {
                    // The engine checks each weight against its bound: halved bounds are met
                    // by a weight above them (an error naming the edge) or, short of that, by
                    // other walks.
                    match with_node_starts(false, true, || node2vec.run(graph, &starts, &cfg, None)) {
                        Err(e) => assert!(e.to_string().contains("bound"), "{what}: {e}"),
                        Ok((broken, _)) => assert!(broken != general, "{what}: halved bounds gave the same walks"),
                    }
                }
            }
        }
    }
    assert!(ervs > 0, "no step opened on eRVS: the test misses that branch");
}

/// R-MAT scale 11 (edge factor 8) with labels U{0..4}.
fn labelled_rmat() -> CsrGraph {
    let mut g = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 5 }, 6).unwrap())).unwrap();
    g
}

#[test]
fn lock_step_structured_gives_the_general_paths_walks_and_counts() {
    let _held = hold();
    let (g, mut pareto) = (labelled_rmat(), labelled_rmat());
    pareto.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 3))).unwrap();
    let starts = Starts::EveryNode { per_node: 2 };
    let gamma = vec![("gamma".to_string(), "0.2".to_string())];
    let cases: [(&str, &[(String, String)], &CsrGraph, &str); 5] = [
        ("metapath", &[], &g, "unweighted"),
        ("metapath", &[], &pareto, "Pareto(1)"),
        ("ppr2", &gamma, &g, "unweighted"),
        ("ppr2", &gamma, &pareto, "Pareto(1)"),
        ("node2vec", &[], &pareto, "Pareto(1)"),
    ];
    let mut seen = wayfarer::engine::SamplerStats::default();
    for (name, params, graph, weights) in cases {
        let walk = LibraryWalk::from_name(name, params, graph, false).unwrap();
        let jit = cranelift_walk(&walk, graph.weights().is_some());
        for sampler in [SamplerMode::Adaptive, SamplerMode::Structured] {
            for interleave in [0, 1, 8] {
                let cfg = WalkConfig { length: 10, seed: 9, sampler, interleave, ..Default::default() };
                let what = format!("{name} {weights} {sampler} interleave {interleave}");
                let (fast, rf) = walk.run(graph, &starts, &cfg, None).unwrap();
                assert!(matches!(rf.proposal, wayfarer::engine::ProposalReport::Built { .. }), "{what}: {:?}", rf.proposal);
                assert_eq!(rf.fast_path, FastPathReport::LockStepStructured, "{what}");
                assert!(rf.summary("cpu").contains("lock-step structured"), "{what}: the summary does not say so");
                let (slow, rs) = fast_paths_off(|| walk.run(graph, &starts, &cfg, None).unwrap());
                assert_eq!(rs.fast_path, FastPathReport::None, "{what}: the switch");
                assert!(fast.steps() > 5_000, "{what}: too few steps to mean anything");
                assert!(fast == slow, "{what}: the lock-step walks differ from the general path's");
                assert_eq!(rf.stats, rs.stats, "{what}: the sampler counts differ");
                seen.add(&rf.stats);
                let (fast_jit, rj) = wayfarer::engine::run(&jit, graph, &starts, &cfg, None).unwrap();
                assert_eq!(rj.fast_path, FastPathReport::LockStepStructured, "{what}: Cranelift");
                let (slow_jit, _) = fast_paths_off(|| wayfarer::engine::run(&jit, graph, &starts, &cfg, None).unwrap());
                assert!(fast_jit == slow_jit, "{what}: Cranelift's lock-step walks differ from its general path's");
                assert!(fast == fast_jit, "{what}: Cranelift's walks differ from the native walk's");
            }
        }
    }
    // Every branch of a structured step ran: first-trial accepts, rejections, eRJS steps of
    // the adaptive rule, and dead ends of empty label segments.
    assert!(seen.structured_steps > 0 && seen.structured_trials > seen.structured_steps, "{seen:?}");
    assert!(seen.rejection_steps > 0 && seen.dead_ends > 0, "{seen:?}");
}

/// MetaPath's plan is exact (its weight is its label term's envelope, so its candidates are
/// taken untested): under adaptive every step with tables takes the label's segment, on the
/// lock-step path (whose step start is then inline) and on the general path alike, so the
/// adaptive walks are the structured sampler's, weighted or not.
#[test]
fn exact_label_plans_always_take_their_segments_under_adaptive() {
    let _held = hold();
    let (g, mut weighted) = (labelled_rmat(), labelled_rmat());
    weighted.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse().unwrap(), 3))).unwrap();
    let starts = Starts::EveryNode { per_node: 2 };
    for (graph, weights) in [(&g, "unweighted"), (&weighted, "U[1,5)")] {
        let walk = LibraryWalk::from_name("metapath", &[], graph, false).unwrap();
        for fast in [true, false] {
            let run = |sampler| {
                let cfg = WalkConfig { length: 10, seed: 9, sampler, ..Default::default() };
                if fast {
                    walk.run(graph, &starts, &cfg, None).unwrap()
                } else {
                    fast_paths_off(|| walk.run(graph, &starts, &cfg, None).unwrap())
                }
            };
            let what = format!("metapath {weights}, fast paths {fast}");
            let ((adaptive, ra), (structured, _)) = (run(SamplerMode::Adaptive), run(SamplerMode::Structured));
            let s = ra.stats;
            assert!(s.structured_steps > 1_000 && s.dead_ends > 0, "{what}: {s:?}");
            assert_eq!((s.rejection_steps, s.reservoir_steps), (0, 0), "{what}: adaptive took another sampler");
            assert!(adaptive == structured, "{what}: the adaptive walks differ from the structured sampler's");
        }
    }
}
