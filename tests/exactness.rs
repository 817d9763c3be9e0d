//! Exactness: for every sampler and every workload, on small graphs with uniform, Pareto(1),
//! partly-zero and one-huge-outlier weights, the engine's next-step frequencies must match
//! transition probabilities computed independently here (chi-square, significance
//! `common::ALPHA`), walks must end exactly at dead ends, and never move along a
//! zero-weight edge. The library walks are checked as the macro compiles them (native), as the
//! Cranelift backend compiles them at run time, and against the hand-written references.

mod common;

use common::*;
use wayfarer::library::LibraryWalk;
use wayfarer::reference::{DeepWalk, MetaPath, Node2vec, Ppr2, Weighting};
use wayfarer::walks as dsl;
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

fn starts() -> Starts {
    let mut v = vec![0u32; PER_START];
    v.extend(std::iter::repeat_n(5u32, PER_START));
    v.extend(std::iter::repeat_n(2u32, PER_START / 4));
    Starts::Nodes(v)
}

/// Where a walk comes from: the library's `#[walk]` programs read the weights of the graph
/// they run on (so their unweighted variant runs on the graph without weights); the
/// hand-written references take a [`Weighting`]. The Cranelift ones read the graph's weights
/// like the macro-compiled ones, and must sample through their compiled turns.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    Compiled,
    Cranelift,
    Reference,
}

/// A library walk compiled by the Cranelift backend for the weighted or the unweighted graph.
fn cranelift(walk: LibraryWalk) -> impl Fn(Weighting) -> wayfarer_jit::JitWalk {
    move |w| cranelift_walk(&walk, matches!(w, Weighting::Weighted))
}

fn check<W: Walk>(source: Source, make: impl Fn(Weighting) -> W, model: impl Fn(bool) -> Model, weighted_variants: &[bool], length: u32) {
    for shape in SHAPES {
        let edges = shaped_edges(shape);
        let weighted_graph = build(&edges);
        let mut unweighted_graph = build(&edges);
        unweighted_graph.set_weights(None).unwrap();
        for &weighted in weighted_variants {
            let g = if source != Source::Reference && !weighted { &unweighted_graph } else { &weighted_graph };
            let walk = make(if weighted { Weighting::Weighted } else { Weighting::Unweighted });
            let m = model(weighted);
            for (k, mode) in MODES.into_iter().enumerate() {
                let cfg = WalkConfig {
                    length,
                    seed: 1000 + k as u64,
                    sampler: mode,
                    cost_ratio: CostRatio::Fixed(1.0),
                    interleave: 1 + 7 * (k % 2),
                };
                let (walks, report) = wayfarer::engine::run(&walk, g, &starts(), &cfg, None).unwrap();
                let what = format!("{} {shape:?} weighted={weighted} {mode}", walk.name());
                let t = tally(&walks, length);
                let (tested, biggest, dead_ends) = check_tally(&t, &m, &edges, &what);
                assert!(
                    tested + dead_ends >= 3 && (biggest >= PER_START as u64 / 2 || dead_ends > 0),
                    "{what}: too few states checked ({tested} sampled, max {biggest} samples, {dead_ends} dead ends)"
                );
                if source == Source::Cranelift {
                    // With structured-proposal tables the engine's own turns run the steps.
                    let tables = matches!(report.proposal, wayfarer::engine::ProposalReport::Built { .. });
                    let turns = mode == SamplerMode::Rejection || (mode == SamplerMode::Adaptive && !tables);
                    assert_eq!(report.compiled_turns, turns, "{what}: compiled turns used");
                }
                if mode == SamplerMode::Rejection && !t.moves.is_empty() {
                    assert!(report.stats.rejection_steps > 0, "{what}: eRJS never ran");
                }
                if walk.static_weight() && mode == SamplerMode::Adaptive && weighted && matches!(shape, Shape::Pareto1 | Shape::Outlier) {
                    let tables = report.stats.table_steps + report.stats.structured_steps;
                    assert!(tables > 0, "{what}: neither the prefix table nor the alias table ran: {:?}", report.stats);
                }
                if mode == SamplerMode::Structured && !walk.proposal().is_empty() && weighted && !matches!(shape, Shape::Outlier) {
                    let built = matches!(report.proposal, wayfarer::engine::ProposalReport::Built { .. });
                    assert!(built, "{what}: the proposal plan's tables were not built: {:?}", report.proposal);
                }
                if mode == SamplerMode::Structured
                    && matches!(report.proposal, wayfarer::engine::ProposalReport::Built { .. })
                    && !t.moves.is_empty()
                {
                    assert!(report.stats.structured_steps > 0, "{what}: the proposal plan never ran: {:?}", report.stats);
                }
            }
        }
    }
}

// The library walks (walks/*.rs, compiled by #[walk]).

#[test]
fn deepwalk_is_exact() {
    check(Source::Compiled, |_| dsl::Deepwalk, |weighted| Model::DeepWalk { weighted }, &[true, false], 3);
}

#[test]
fn node2vec_is_exact() {
    let n2v = |a, b| move |_| dsl::Node2vec { a, b };
    check(Source::Compiled, n2v(2.0, 0.5), |weighted| Model::Node2vec { a: 2.0, b: 0.5, weighted }, &[true, false], 3);
    // A return-heavy setting exercises the bound's `u == prev` branch.
    check(Source::Compiled, n2v(0.25, 4.0), |weighted| Model::Node2vec { a: 0.25, b: 4.0, weighted }, &[true], 3);
}

#[test]
fn metapath_is_exact() {
    for schema in [vec![0, 1, 2], vec![2, 1, 0], vec![1]] {
        let m = dsl::Metapath::new(&schema).unwrap();
        check(Source::Compiled, |_| m.clone(), |weighted| Model::MetaPath { schema: schema.clone(), weighted }, &[true, false], 3);
    }
}

#[test]
fn ppr2_is_exact() {
    // The DSL's second-order PageRank is the unweighted one (it reads degrees, not weights).
    for gamma in [0.2, 0.9] {
        check(Source::Compiled, |_| dsl::Ppr2 { gamma }, |weighted| Model::Ppr2 { gamma, weighted }, &[false], 3);
    }
}

// The same programs compiled at run time by the Cranelift backend (`wayfarer walk --program`).

#[test]
fn cranelift_deepwalk_is_exact() {
    check(Source::Cranelift, cranelift(LibraryWalk::native(dsl::Deepwalk)), |weighted| Model::DeepWalk { weighted }, &[true, false], 3);
}

#[test]
fn cranelift_node2vec_is_exact() {
    for (a, b) in [(2.0, 0.5), (0.25, 4.0)] {
        let walk = cranelift(LibraryWalk::native(dsl::Node2vec { a, b }));
        check(Source::Cranelift, walk, |weighted| Model::Node2vec { a, b, weighted }, &[true, false], 3);
    }
}

#[test]
fn cranelift_metapath_is_exact() {
    for schema in [vec![0, 1, 2], vec![1]] {
        let walk = cranelift(LibraryWalk::native(dsl::Metapath::new(&schema).unwrap()));
        check(Source::Cranelift, walk, |weighted| Model::MetaPath { schema: schema.clone(), weighted }, &[true, false], 3);
    }
}

#[test]
fn cranelift_ppr2_is_exact() {
    let walk = cranelift(LibraryWalk::native(dsl::Ppr2 { gamma: 0.2 }));
    check(Source::Cranelift, walk, |weighted| Model::Ppr2 { gamma: 0.2, weighted }, &[false], 3);
}

// The hand-written references (`*-ref`), held to the same standard.

#[test]
fn reference_deepwalk_is_exact() {
    check(Source::Reference, |w| DeepWalk { weighting: w }, |weighted| Model::DeepWalk { weighted }, &[true, false], 3);
}

#[test]
fn reference_node2vec_is_exact() {
    check(
        Source::Reference,
        |w| Node2vec::new(2.0, 0.5, w).unwrap(),
        |weighted| Model::Node2vec { a: 2.0, b: 0.5, weighted },
        &[true, false],
        3,
    );
}

#[test]
fn reference_metapath_is_exact() {
    let schema = vec![0, 1, 2];
    check(
        Source::Reference,
        |w| MetaPath::new(schema.clone(), w).unwrap(),
        |weighted| Model::MetaPath { schema: schema.clone(), weighted },
        &[true],
        3,
    );
}

#[test]
fn reference_ppr2_is_exact() {
    check(Source::Reference, |w| Ppr2::new(0.2, w).unwrap(), |weighted| Model::Ppr2 { gamma: 0.2, weighted }, &[true, false], 3);
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
        let cfg = WalkConfig { length: 2, seed: 5, sampler: SamplerMode::Rejection, cost_ratio: CostRatio::Fixed(1.0), interleave: 1 };
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
    let cfg = WalkConfig { length: 5, seed: 1, sampler: SamplerMode::Rejection, cost_ratio: CostRatio::Fixed(1.0), interleave: 1 };
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
    let cfg = WalkConfig { length: 20, seed: 3, sampler: SamplerMode::Adaptive, cost_ratio: CostRatio::Fixed(2.0), interleave: 1 };
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
