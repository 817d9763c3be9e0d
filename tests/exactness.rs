//! Exactness on the CPU: the one exactness suite (`common::suite`) instantiated for the
//! engine's native code and for the same programs compiled by Cranelift, every sampler
//! including structured proposals; the hand-written references held to the same standard; and
//! the fallbacks and errors of walks whose bounds are loose or wrong. Next-step frequencies
//! must match transition probabilities computed independently (chi-square, significance
//! `common::ALPHA`), walks must end exactly at dead ends, and never move along a zero-weight
//! edge.

mod common;

use common::suite::{Target, check_library_walks, check_walk};
use common::*;
use wayfarer::job::{CpuRunner, JobWalk};
use wayfarer::reference::{DeepWalk, MetaPath, Node2vec, Ppr2, Weighting};
use wayfarer::{Bound, BoundScope, CostRatio, Ctx, SamplerMode, Starts, Walk, WalkConfig, Walker};

const MODES: [SamplerMode; 6] = [
    SamplerMode::Adaptive,
    SamplerMode::Rejection,
    SamplerMode::Structured,
    SamplerMode::Reservoir,
    SamplerMode::InverseTransform,
    SamplerMode::ReservoirPrefix,
];

/// Walkers per start node: enough that a 2% shift of probability between two next nodes is
/// rejected (see `chi_square_detects_a_two_percent_bias`).
const PER_START: usize = 60_000;

fn cpu(program: bool) -> Target<'static> {
    Target {
        label: if program { "cranelift" } else { "cpu" }.to_string(),
        runner: &CpuRunner,
        program,
        modes: &MODES,
        cost_ratio: CostRatio::Fixed(1.0),
        per_start: PER_START,
        partial_tables: false,
    }
}

fn starts() -> Starts {
    common::suite::suite_starts(PER_START)
}

/// The library walks as the macro compiles them (native code).
#[test]
fn library_walks_are_exact() {
    check_library_walks(&cpu(false));
}

/// The same programs compiled at run time by the Cranelift backend (`wayfarer walk --program`),
/// sampling through their compiled turns.
#[test]
fn cranelift_library_walks_are_exact() {
    check_library_walks(&cpu(true));
}

/// Tables for the longest row alone (a table budget too small for the rest): steps on that
/// row take the structured proposals, the others eRJS, and every next step is still exact.
#[test]
fn library_walks_are_exact_with_tables_for_the_longest_rows_only() {
    for program in [false, true] {
        let target = Target { modes: &[SamplerMode::Structured, SamplerMode::Adaptive], partial_tables: true, ..cpu(program) };
        check_library_walks(&target);
    }
}

/// `--sampler table` draws every step from the prefix table of a static-weight walk (DeepWalk,
/// weighted and not) exactly, natively and through Cranelift; a walk whose weight reads the
/// walker is a clear error naming the option.
#[test]
fn forced_table_draws_are_exact_for_static_weights() {
    for program in [false, true] {
        let target = Target { modes: &[SamplerMode::Table], ..cpu(program) };
        for shape in SHAPES {
            let edges = shaped_edges(shape);
            for weighted in [true, false] {
                let mut g = build(&edges);
                if !weighted {
                    g.set_weights(None).unwrap();
                }
                let walk = wayfarer::library::LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
                let make = || {
                    let mut w = JobWalk::library(&walk);
                    if program {
                        w.native = None;
                    }
                    w
                };
                let what = format!("deepwalk {shape:?} weighted={weighted}");
                let reports = check_walk(&target, &make, &Model::DeepWalk { weighted }, &edges, &g, &what, 3, 1000, None);
                let stats = &reports[0].1.stats;
                assert!(stats.table_steps > 0 && stats.rejection_steps + stats.reservoir_steps == 0, "{what}: {stats:?}");
            }
        }
    }
    let g = build(&shaped_edges(Shape::Uniform));
    let walk = wayfarer::library::LibraryWalk::from_name("node2vec", &[], &g, false).unwrap();
    let mut job = wayfarer::job::WalkJob::new(&g, JobWalk::library(&walk));
    job.sampler = SamplerMode::Table;
    let Err(err) = common::suite::run_job(&CpuRunner, &job) else { panic!("node2vec ran with --sampler table") };
    let err = err.to_string();
    assert!(err.contains("--sampler") && err.contains("structured"), "{err}");
}

/// The hand-written references (`*-ref`), held to the same standard on the weighted graph.
fn check_reference<W: Walk>(make: impl Fn(Weighting) -> W, model: impl Fn(bool) -> Model, weightings: &[bool]) {
    let target = cpu(false);
    for shape in SHAPES {
        let edges = shaped_edges(shape);
        let g = build(&edges);
        for &weighted in weightings {
            let walk = make(if weighted { Weighting::Weighted } else { Weighting::Unweighted });
            let what = format!("{} {shape:?} weighted={weighted}", walk.name());
            check_walk(&target, &|| JobWalk::native(&walk), &model(weighted), &edges, &g, &what, 3, 1000, None);
        }
    }
}

#[test]
fn reference_deepwalk_is_exact() {
    check_reference(|w| DeepWalk { weighting: w }, |weighted| Model::DeepWalk { weighted }, &[true, false]);
}

#[test]
fn reference_node2vec_is_exact() {
    check_reference(|w| Node2vec::new(2.0, 0.5, w).unwrap(), |weighted| Model::Node2vec { a: 2.0, b: 0.5, weighted }, &[true, false]);
}

/// Node2Vec's squeeze (the back edge's weight exact, the others between `h` and `h / b`)
/// holds on every edge of every step, for returns cheaper and dearer than the other moves.
#[test]
fn reference_node2vec_envelope_holds_on_every_edge() {
    for shape in SHAPES {
        let g = build(&shaped_edges(shape));
        for (a, b) in [(2.0, 0.5), (0.25, 4.0), (1.0, 1.0), (0.5, 0.5)] {
            for weighting in [Weighting::Weighted, Weighting::Unweighted] {
                let walk = Node2vec::new(a, b, weighting).unwrap();
                let prevs: Vec<u32> = (0..g.num_nodes() as u32).collect();
                let what = format!("{shape:?} a={a} b={b} {weighting:?}");
                let (edges, enveloped, exact) = check_squeeze(&walk, &g, &prevs, &what);
                assert_eq!(enveloped, edges, "{what}: node2vec has a squeeze past its start");
                assert!(exact > 0, "{shape:?}: no back edge got its exact weight");
            }
        }
    }
}

#[test]
fn reference_node2vec_is_exact_when_returns_dominate() {
    check_reference(|w| Node2vec::new(0.25, 4.0, w).unwrap(), |weighted| Model::Node2vec { a: 0.25, b: 4.0, weighted }, &[true, false]);
}

#[test]
fn reference_metapath_is_exact() {
    let schema = vec![0, 1, 2];
    check_reference(
        |w| MetaPath::new(schema.clone(), w).unwrap(),
        |weighted| Model::MetaPath { schema: schema.clone(), weighted },
        &[true],
    );
}

#[test]
fn reference_ppr2_is_exact() {
    check_reference(|w| Ppr2::new(0.2, w).unwrap(), |weighted| Model::Ppr2 { gamma: 0.2, weighted }, &[true, false]);
}

/// A user-defined walk whose bound is 100x too loose: eRJS mostly runs out of trials and
/// eRVS finishes the step. The result must still be exact.
struct LooseBound;

impl Walk for LooseBound {
    type State = ();
    fn name(&self) -> &str {
        "loose-bound"
    }
    fn requirements(&self) -> wayfarer::Requirements {
        wayfarer::Requirements { weight_stats: true, ..Default::default() }
    }
    fn weighted(&self) -> bool {
        true
    }
    fn weight(&self, ctx: &Ctx, _w: &Walker<()>, e: usize) -> f32 {
        ctx.graph.weights().unwrap()[e]
    }
    fn bound(&self, ctx: &Ctx, w: &Walker<()>) -> Bound {
        Bound::Max(100.0 * ctx.stats.weight_max[w.cur as usize])
    }
    fn bound_scope(&self) -> BoundScope {
        BoundScope::PerStep
    }
    fn sum_estimate(&self, ctx: &Ctx, w: &Walker<()>) -> f32 {
        ctx.stats.weight_sum[w.cur as usize]
    }
    fn possible_zero(&self) -> bool {
        true
    }
}

#[test]
fn rejection_that_runs_out_of_trials_is_still_exact() {
    for shape in SHAPES {
        let edges = shaped_edges(shape);
        let g = build(&edges);
        let cfg = WalkConfig {
            length: 2,
            seed: 5,
            sampler: SamplerMode::Rejection,
            cost_ratio: CostRatio::Fixed(1.0),
            interleave: 1,
            table_budget: None,
            record_edges: false,
        };
        let (walks, report) = wayfarer::engine::run(&LooseBound, &g, &starts(), &cfg, None).unwrap();
        assert!(report.stats.rejection_fallbacks > 1000, "{shape:?}: the fallback path was not exercised: {:?}", report.stats);
        let t = tally(&walks, 2);
        check_tally(&t, &Model::DeepWalk { weighted: true }, &edges, &format!("loose bound {shape:?}"));
    }
}

/// A walk whose bound is too small must be caught, not silently sampled with bias.
struct WrongBound;

impl Walk for WrongBound {
    type State = ();
    fn name(&self) -> &str {
        "wrong-bound"
    }
    fn weight(&self, ctx: &Ctx, _w: &Walker<()>, e: usize) -> f32 {
        ctx.graph.weights().unwrap()[e]
    }
    fn bound(&self, _ctx: &Ctx, _w: &Walker<()>) -> Bound {
        Bound::Max(1.0)
    }
    fn bound_scope(&self) -> BoundScope {
        BoundScope::PerKernel
    }
    fn sum_estimate(&self, _ctx: &Ctx, _w: &Walker<()>) -> f32 {
        1e9
    }
    fn possible_zero(&self) -> bool {
        false
    }
}

#[test]
fn an_unsound_bound_is_an_error() {
    let g = build(&shaped_edges(Shape::Uniform));
    let cfg = WalkConfig {
        length: 5,
        seed: 1,
        sampler: SamplerMode::Rejection,
        cost_ratio: CostRatio::Fixed(1.0),
        interleave: 1,
        table_budget: None,
        record_edges: false,
    };
    let err = wayfarer::engine::run(&WrongBound, &g, &Starts::EveryNode { per_node: 50 }, &cfg, None).unwrap_err();
    assert!(err.to_string().contains("exceeds the declared bound"), "{err}");
}

#[test]
fn adaptive_mixes_samplers_on_skewed_weights() {
    let g = {
        let mut g = wayfarer::graph::generate::rmat(12, 8, 3).unwrap();
        let w = wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 4);
        g.set_weights(Some(w)).unwrap();
        g
    };
    let walk = Node2vec::new(2.0, 0.5, Weighting::Weighted).unwrap();
    let cfg = WalkConfig {
        length: 20,
        seed: 3,
        sampler: SamplerMode::Adaptive,
        cost_ratio: CostRatio::Fixed(2.0),
        interleave: 1,
        table_budget: None,
        record_edges: false,
    };
    let (_, rep) = wayfarer::engine::run(&walk, &g, &Starts::EveryNode { per_node: 1 }, &cfg, None).unwrap();
    assert!(rep.stats.rejection_steps > 1000 && rep.stats.reservoir_steps > 1000, "{:?}", rep.stats);
}

/// The test has the power it claims: a next-step distribution with 2% of probability moved
/// from one node to another is rejected at `ALPHA` with the sample sizes used above.
#[test]
fn chi_square_detects_a_two_percent_bias() {
    use std::collections::HashMap;
    let exact: HashMap<u32, f64> = [(0, 0.4), (1, 0.3), (2, 0.2), (3, 0.1)].into_iter().collect();
    let mut biased = exact.clone();
    *biased.get_mut(&0).unwrap() += 0.02;
    *biased.get_mut(&3).unwrap() -= 0.02;
    let n = PER_START as u64 / 2;
    let mut rejected = 0;
    for trial in 0..20 {
        let mut rng = wayfarer::rng::StepRng::new(trial, 0, 0, wayfarer::rng::Purpose::Sample);
        let mut counts: HashMap<u32, u64> = HashMap::new();
        for _ in 0..n {
            let u = rng.uniform();
            let mut acc = 0.0;
            let mut pick = 3;
            for k in 0..4 {
                acc += biased[&k];
                if u < acc {
                    pick = k;
                    break;
                }
            }
            *counts.entry(pick).or_default() += 1;
        }
        if chi_square_p(&counts, &exact, "bias") < ALPHA {
            rejected += 1;
        }
    }
    assert!(rejected >= 19, "a 2% bias was rejected in only {rejected} of 20 trials");
}
