//! The exactness suite catches a wrong acceptance ratio in structured eRJS: with the
//! runtime's deliberately broken mixture switched on (feature `testing`: each term picked
//! with equal probability instead of by its mass, so each edge's acceptance `w / E` no longer
//! matches how often it is proposed), the chi-square test used by `structured.rs` and
//! `exactness.rs` must reject second-order PageRank's and the mixture walk's transitions.
//! A file of its own: the switch is process-wide.

mod common;

use common::*;
use std::sync::atomic::Ordering;
use wayfarer::{SamplerMode, Starts, WalkConfig};

/// The smallest chi-square p-value over the states with at least 1000 samples.
fn min_p(walks: &wayfarer::Walks, model: &Model, edges: &[RawEdge]) -> f64 {
    let t = tally(walks, 3);
    let mut least = 1.0f64;
    for (&(step, prev, cur), counts) in &t.moves {
        let p = exact(model, edges, step, prev, cur);
        if counts.values().sum::<u64>() >= 1000 && !p.is_empty() {
            least = least.min(chi_square_p(counts, &p, "broken"));
        }
    }
    least
}

/// A runner on the first GPU, or None (the test then says so and passes) without one;
/// `WAYFARER_REQUIRE_GPU=1` makes a missing GPU a failure, as in `gpu.rs`.
fn cuda_runner(what: &str) -> Option<wayfarer::job::CudaRunner> {
    match wayfarer::gpu::CudaDevice::open(0) {
        Ok(dev) => Some(wayfarer::job::CudaRunner::new(vec![dev]).unwrap()),
        Err(e) => {
            assert!(std::env::var_os("WAYFARER_REQUIRE_GPU").is_none(), "WAYFARER_REQUIRE_GPU is set but: {e}");
            eprintln!("skipping the CUDA {what} test: {e}");
            None
        }
    }
}

/// The switch is process-wide: one test holds it at a time.
static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_broken_mixture_fails_the_chi_square_suite() {
    let edges = shaped_edges(Shape::Uniform);
    let g = build(&edges);
    let starts = Starts::Nodes([0u32, 5, 2].iter().flat_map(|&v| std::iter::repeat_n(v, 60_000)).collect());
    let cfg = WalkConfig { length: 3, seed: 11, sampler: SamplerMode::Structured, ..Default::default() };
    let walk = wayfarer::walks::Ppr2 { gamma: 0.2 };
    let model = Model::Ppr2 { gamma: 0.2, weighted: false };
    let run = || wayfarer::engine::run(&walk, &g, &starts, &cfg, None).unwrap();
    let _held = SWITCH.lock().unwrap_or_else(|e| e.into_inner());

    let (good, report) = run();
    assert!(report.stats.structured_steps > 100_000, "{:?}", report.stats);
    let p = min_p(&good, &model, &edges);
    assert!(p > ALPHA, "the correct mixture fails: p = {p:e}");

    wayfarer::proposal::BROKEN_EQUAL_TERMS.store(true, Ordering::Relaxed);
    let (bad, _) = run();
    wayfarer::proposal::BROKEN_EQUAL_TERMS.store(false, Ordering::Relaxed);
    let p = min_p(&bad, &model, &edges);
    assert!(p < ALPHA, "the broken mixture passed the suite: smallest p = {p:e}");
}

/// A wrong exactness claim: with every plan's candidates taken untested (feature `testing`),
/// weighted Node2Vec's structured trials draw edges by `h` alone, ignoring the return and
/// in-out factors, and the chi-square test must reject its transitions (second-order
/// PageRank's plan is exact: its candidates pass untested in the test above and in
/// `structured.rs`).
#[test]
fn a_wrong_exactness_claim_fails_the_chi_square_suite() {
    let edges = shaped_edges(Shape::Pareto1);
    let g = build(&edges);
    let starts = Starts::Nodes([0u32, 5, 2].iter().flat_map(|&v| std::iter::repeat_n(v, 60_000)).collect());
    let cfg = WalkConfig { length: 3, seed: 19, sampler: SamplerMode::Structured, ..Default::default() };
    let params = [("a".to_string(), "2".to_string()), ("b".to_string(), "0.5".to_string())];
    let walk = wayfarer::library::LibraryWalk::from_name("node2vec", &params, &g, false).unwrap();
    let model = Model::Node2vec { a: 2.0, b: 0.5, weighted: true };
    let run = || walk.run(&g, &starts, &cfg, None).unwrap();
    let _held = SWITCH.lock().unwrap_or_else(|e| e.into_inner());

    let (good, report) = run();
    assert!(report.stats.structured_steps > 100_000, "{:?}", report.stats);
    let p = min_p(&good, &model, &edges);
    assert!(p > ALPHA, "node2vec's tested trials fail: p = {p:e}");

    wayfarer::proposal::BROKEN_UNTESTED.store(true, Ordering::Relaxed);
    let (bad, _) = run();
    wayfarer::proposal::BROKEN_UNTESTED.store(false, Ordering::Relaxed);
    let p = min_p(&bad, &model, &edges);
    assert!(p < ALPHA, "node2vec's candidates taken untested passed the suite: smallest p = {p:e}");
}

/// The same on CUDA: the switch compiles a kernel whose structured trials pick terms equally
/// (`WF_BROKEN_EQUAL_TERMS`). Without a GPU this says so and passes (`WAYFARER_REQUIRE_GPU=1`
/// makes a missing GPU a failure, as in `gpu.rs`).
#[test]
fn a_broken_mixture_fails_the_chi_square_suite_on_cuda() {
    use wayfarer::job::{JobWalk, WalkJob};
    let Some(runner) = cuda_runner("broken-mixture") else { return };
    let edges = shaped_edges(Shape::Uniform);
    let mut g = build(&edges);
    g.set_weights(None).unwrap();
    let walk = wayfarer::library::LibraryWalk::from_name("ppr2", &[("gamma".to_string(), "0.2".to_string())], &g, false).unwrap();
    let model = Model::Ppr2 { gamma: 0.2, weighted: false };
    let run = || {
        let mut job = WalkJob::new(&g, JobWalk::library(&walk));
        job.starts = Starts::Nodes([0u32, 5, 2].iter().flat_map(|&v| std::iter::repeat_n(v, 60_000)).collect());
        job.length = 3;
        job.seed = 11;
        job.sampler = SamplerMode::Structured;
        common::suite::run_job(&runner, &job).unwrap()
    };
    let _held = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    let (good, report) = run();
    assert!(report.report.stats.structured_steps > 100_000, "{:?}", report.report.stats);
    let p = min_p(&good, &model, &edges);
    assert!(p > ALPHA, "CUDA: the correct mixture fails: p = {p:e}");

    wayfarer::proposal::BROKEN_EQUAL_TERMS.store(true, Ordering::Relaxed);
    let (bad, _) = run();
    wayfarer::proposal::BROKEN_EQUAL_TERMS.store(false, Ordering::Relaxed);
    let p = min_p(&bad, &model, &edges);
    assert!(p < ALPHA, "CUDA: the broken mixture passed the suite: smallest p = {p:e}");
}

/// The same for the CPU's alias fast path: with every alias threshold halved (feature
/// `testing`), a slot keeps its own edge half as often as its weight says, and the chi-square
/// test must reject weighted DeepWalk's transitions on skewed weights.
#[test]
fn a_broken_alias_table_fails_the_chi_square_suite() {
    let edges = shaped_edges(Shape::Uniform);
    let g = build(&edges);
    let starts = Starts::Nodes([0u32, 2, 3].iter().flat_map(|&v| std::iter::repeat_n(v, 60_000)).collect());
    let cfg = WalkConfig { length: 3, seed: 17, ..Default::default() };
    let walk = wayfarer::library::LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    let model = Model::DeepWalk { weighted: true };
    let run = || walk.run(&g, &starts, &cfg, None).unwrap();
    let _held = SWITCH.lock().unwrap_or_else(|e| e.into_inner());

    let (good, report) = run();
    assert!(matches!(report.fast_path, wayfarer::fast_path::FastPathReport::AliasRows { .. }), "{:?}", report.fast_path);
    assert!(report.stats.alias_steps > 100_000, "{:?}", report.stats);
    let p = min_p(&good, &model, &edges);
    assert!(p > ALPHA, "the correct alias tables fail: p = {p:e}");

    wayfarer::fast_path::BROKEN_ALIAS.store(true, Ordering::Relaxed);
    let (bad, _) = run();
    wayfarer::fast_path::BROKEN_ALIAS.store(false, Ordering::Relaxed);
    let p = min_p(&bad, &model, &edges);
    assert!(p < ALPHA, "the broken alias tables passed the suite: smallest p = {p:e}");
}

/// CUDA's row signatures (`has_edge` answered false without a search when a node's bit is
/// clear): with the testing switch, kernels test the wrong bit, `has_edge(prev, x)` misses
/// triangle edges, and the chi-square test must reject Node2Vec's second-order transitions
/// (while the correct build passes). Without a GPU this says so and passes.
#[test]
fn a_broken_row_signature_fails_the_chi_square_suite_on_cuda() {
    use wayfarer::job::{JobWalk, WalkJob};
    let Some(runner) = cuda_runner("broken-signature") else { return };
    let edges = shaped_edges(Shape::Uniform);
    let mut g = build(&edges);
    g.set_weights(None).unwrap();
    let params = [("a".to_string(), "2".to_string()), ("b".to_string(), "0.5".to_string())];
    let walk = wayfarer::library::LibraryWalk::from_name("node2vec", &params, &g, false).unwrap();
    let model = Model::Node2vec { a: 2.0, b: 0.5, weighted: false };
    let run = || {
        let mut job = WalkJob::new(&g, JobWalk::library(&walk));
        job.starts = Starts::Nodes([0u32, 5, 2].iter().flat_map(|&v| std::iter::repeat_n(v, 60_000)).collect());
        job.length = 3;
        job.seed = 13;
        common::suite::run_job(&runner, &job).unwrap()
    };
    let _held = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    let (good, _) = run();
    let p = min_p(&good, &model, &edges);
    assert!(p > ALPHA, "CUDA: node2vec with row signatures fails: p = {p:e}");

    wayfarer_cuda::BROKEN_ROW_SIGNATURES.store(true, Ordering::Relaxed);
    let (bad, _) = run();
    wayfarer_cuda::BROKEN_ROW_SIGNATURES.store(false, Ordering::Relaxed);
    let p = min_p(&bad, &model, &edges);
    assert!(p < ALPHA, "CUDA: the broken row signatures passed the suite: smallest p = {p:e}");
}
