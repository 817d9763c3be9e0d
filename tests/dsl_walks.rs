//! `#[walk]` walks, written as a user would, compiled by the macro to native code and run by
//! the engine: their next-step frequencies must match the exact transition probabilities
//! (the same independent model and chi-square test as `exactness.rs`), with every sampler.

mod common;

use common::*;
use wayfarer::prelude::*;
use wayfarer::{Bound, WalkConfig};

// The library's compiled walks (walks/*.rs, expanded by #[walk] inside wayfarer).
use wayfarer::walks::{Deepwalk, Metapath, Node2vec};

#[walk]
fn second_order_pr(s: &Step, gamma: f32) -> f32 {
    if s.prev() == NO_NODE {
        return s.weight();
    }
    let mut w = (1.0 - gamma) / s.degree(s.cur()) as f32;
    if s.has_edge(s.prev(), s.dst()) {
        w += gamma / s.degree(s.prev()) as f32;
    }
    w
}

const MODES: [SamplerMode; 4] = [SamplerMode::Adaptive, SamplerMode::Rejection, SamplerMode::Structured, SamplerMode::Reservoir];

fn starts() -> Starts {
    let mut v = vec![0u32; 60_000];
    v.extend(std::iter::repeat_n(5u32, 60_000));
    Starts::Nodes(v)
}

fn check<W: Walk>(walk: &W, model: &Model) {
    for shape in SHAPES {
        let edges = shaped_edges(shape);
        let g = build(&edges);
        for (k, mode) in MODES.into_iter().enumerate() {
            let cfg = WalkConfig {
                length: 3,
                seed: 77 + k as u64,
                sampler: mode,
                cost_ratio: CostRatio::Fixed(1.0),
                interleave: 8,
                table_budget: None,
                record_edges: false,
            };
            let (walks, report) = wayfarer::engine::run(walk, &g, &starts(), &cfg, None).unwrap();
            let t = tally(&walks, 3);
            check_tally(&t, model, &edges, &format!("#[walk] {} {shape:?} {mode}", walk.name()));
            if mode == SamplerMode::Rejection && !t.moves.is_empty() {
                assert!(report.stats.rejection_steps > 0, "the compiled bound let eRJS run");
            }
            if mode == SamplerMode::Structured
                && matches!(report.proposal, wayfarer::engine::ProposalReport::Built { .. })
                && !t.moves.is_empty()
            {
                assert!(report.stats.structured_steps > 0, "the walk's proposal plan ran: {:?}", report.stats);
            }
        }
    }
}

#[test]
fn dsl_node2vec_is_exact() {
    check(&Node2vec { a: 2.0, b: 0.5 }, &Model::Node2vec { a: 2.0, b: 0.5, weighted: true });
    check(&Node2vec { a: 0.25, b: 4.0 }, &Model::Node2vec { a: 0.25, b: 4.0, weighted: true });
}

#[test]
fn dsl_metapath_is_exact() {
    check(&Metapath::new(&[0, 1, 2, 0, 1]).unwrap(), &Model::MetaPath { schema: vec![0, 1, 2, 0, 1], weighted: true });
}

#[test]
fn dsl_deepwalk_is_exact() {
    check(&Deepwalk, &Model::DeepWalk { weighted: true });
}

#[test]
fn dsl_second_order_pagerank_is_exact() {
    // Unweighted second-order PageRank: the DSL version computes degrees itself.
    let walk = SecondOrderPr { gamma: 0.2 };
    for shape in [Shape::Uniform] {
        let edges: Vec<RawEdge> = shaped_edges(shape).into_iter().map(|(u, v, _, l)| (u, v, 1.0, l)).collect();
        let g = build(&edges);
        for mode in MODES {
            let cfg = WalkConfig {
                length: 3,
                seed: 5,
                sampler: mode,
                cost_ratio: CostRatio::Fixed(1.0),
                interleave: 8,
                table_budget: None,
                record_edges: false,
            };
            let (walks, _) = wayfarer::engine::run(&walk, &g, &starts(), &cfg, None).unwrap();
            check_tally(&tally(&walks, 3), &Model::Ppr2 { gamma: 0.2, weighted: false }, &edges, &format!("#[walk] ppr2 {mode}"));
        }
    }
}

#[test]
fn the_function_itself_is_plain_rust_and_the_bound_is_compiled() {
    let g = build(&shaped_edges(Shape::Uniform));
    let stats = wayfarer::NodeStats::compute(&g, Node2vec { a: 2.0, b: 0.5 }.requirements(), true);
    let ctx = wayfarer::Ctx::new(&g, &stats);
    let mut w = wayfarer::Walker::<()>::new(0);
    let e = g.row(0).start;
    // Called directly, the user's function and the compiled weight agree.
    let walk = Node2vec { a: 2.0, b: 0.5 };
    assert_eq!(wayfarer::walks::node2vec::node2vec(&Step::new(ctx, &w, e), 2.0, 0.5), walk.weight(&ctx, &w, e));
    w.prev = 1;
    w.step = 1;
    for e in g.row(0) {
        let wt = walk.weight(&ctx, &w, e);
        assert_eq!(wayfarer::walks::node2vec::node2vec(&Step::new(ctx, &w, e), 2.0, 0.5), wt);
        match walk.bound(&ctx, &w) {
            Bound::Max(b) => assert!(b >= wt),
            Bound::Unknown => panic!("node2vec must be bounded"),
        }
    }
}

#[test]
fn compiled_squeeze_and_dead_end_tests_are_exact() {
    let g = build(&shaped_edges(Shape::Pareto1));
    let walk = Node2vec { a: 0.25, b: 4.0 };
    let prevs: Vec<u32> = (0..g.num_nodes() as u32).chain([NO_NODE]).collect();
    let (_, enveloped, _) = check_squeeze(&walk, &g, &prevs, "node2vec a=0.25 b=4");
    assert!(enveloped > 0, "node2vec's has_edge branch should get a compiled squeeze");
    // MetaPath's estimate is an exact per-label sum, so dead ends are found in O(1).
    let mp = Metapath::new(&[0, 1, 2, 0, 1]).unwrap();
    let stats = wayfarer::NodeStats::compute(&g, mp.requirements(), true);
    let ctx = wayfarer::Ctx::new(&g, &stats);
    for cur in 0..g.num_nodes() as u32 {
        for step in 0..3 {
            let mut w = wayfarer::Walker::<()>::new(cur);
            w.step = step;
            let any = g.row(cur).any(|e| mp.weight(&ctx, &w, e) > 0.0);
            assert_eq!(mp.dead_end(&ctx, &w), Some(!any), "node {cur} step {step}");
        }
    }
}

/// Weights from a node property of the candidate: not boundable yet, so the walk runs eRVS
/// only (and says so: the macro warns, which `ui/tests/ui/ervs_only_warning.rs` pins), and is
/// still exact.
#[allow(deprecated)]
mod scored_walk {
    use wayfarer::prelude::*;
    #[walk]
    pub fn scored(s: &Step, bias: f32) -> f32 {
        s.node_prop("score", s.dst()) + bias * s.node_prop("score", s.cur())
    }
}
use scored_walk::Scored;

#[test]
fn node_properties_are_read_and_unbounded_walks_fall_back_to_ervs() {
    use std::collections::HashMap;
    let edges = shaped_edges(Shape::Uniform);
    let mut g = build(&edges);
    let score = vec![1.0f32, 0.0, 2.0, 3.0, 0.5, 4.0, 0.0];
    g.set_node_property("score", score.clone()).unwrap();
    let walk = Scored { bias: 0.5 };
    assert_eq!(walk.bound_scope(), wayfarer::BoundScope::None);
    let cfg = WalkConfig {
        length: 1,
        seed: 9,
        sampler: SamplerMode::Adaptive,
        cost_ratio: CostRatio::Fixed(1.0),
        interleave: 8,
        table_budget: None,
        record_edges: false,
    };
    let (walks, report) = wayfarer::engine::run(&walk, &g, &Starts::Nodes(vec![0; 100_000]), &cfg, None).unwrap();
    assert_eq!(report.stats.rejection_steps, 0, "no bound, no eRJS");
    let mut counts: HashMap<u32, u64> = HashMap::new();
    for i in 0..walks.len() {
        if let [_, next] = walks.walk(i) {
            *counts.entry(*next).or_default() += 1;
        }
    }
    let targets: Vec<u32> = edges.iter().filter(|e| e.0 == 0).map(|e| e.1).collect();
    let total: f64 = targets.iter().map(|&t| (score[t as usize] + 0.5 * score[0]) as f64).sum();
    let exact: HashMap<u32, f64> = targets.iter().map(|&t| (t, (score[t as usize] + 0.5 * score[0]) as f64 / total)).collect();
    assert!(chi_square_p(&counts, &exact, "scored") > ALPHA, "{counts:?} vs {exact:?}");
}

/// Defaults and checks declared in the attribute reach the generated struct: `Default`, the
/// values conversions the registry uses, and `Walk::check` before a run.
#[test]
fn declared_defaults_and_checks_reach_the_generated_struct() {
    use wayfarer::{FromParams, ParamValue, Value};
    assert_eq!(Node2vec::default(), Node2vec { a: 2.0, b: 0.5 });
    assert_eq!(wayfarer::walks::Ppr::default().alpha, 0.15);
    let m = Metapath::default();
    assert_eq!((&m.schema[..6], m.len), (&[0, 1, 2, 3, 4, 0][..], 5));
    let values = Node2vec { a: 3.0, b: 0.25 }.to_params();
    assert_eq!(values, vec![ParamValue::Scalar(Value::F32(3.0)), ParamValue::Scalar(Value::F32(0.25))]);
    assert_eq!(Node2vec::from_params(&values).unwrap(), Node2vec { a: 3.0, b: 0.25 });
    assert!(Node2vec::from_params(&values[..1]).is_err(), "a value short");
    assert!(Node2vec::from_params(&[ParamValue::Scalar(Value::U32(1)), values[1].clone()]).is_err(), "a value of another type");
    let short = Metapath::from_params(&[ParamValue::Array(vec![Value::U32(7)]), ParamValue::Scalar(Value::U32(1))]).unwrap();
    assert_eq!((short.schema[0], short.schema[1], short.len), (7, 0, 1));

    let g = wayfarer::default_graph().unwrap();
    let Err(err) = Node2vec { a: 0.0, b: 0.5 }.on(&g).length(3).run() else { panic!("a = 0 ran") };
    assert!(err.to_string().contains("a=0 does not meet `a > 0.0`"), "{err}");
    let Err(err) = wayfarer::walks::Ppr { alpha: 1.5 }.on(&g).length(3).run() else { panic!("alpha = 1.5 ran") };
    assert!(err.to_string().contains("alpha"), "{err}");
    assert!(Node2vec::default().on(&g).length(3).starts(Starts::Nodes(vec![0])).run().is_ok());
}
