//! Structured proposals ([`wayfarer::proposal`]): walks whose weight the compiler splits into
//! a static factor, label segments, edges back or a `has_edge(prev, dst)` term, sampled by
//! structured eRJS, must match the exact transition probabilities (the independent model and
//! chi-square test of `exactness.rs`) on the skewed / zero / outlier graphs, on a hub graph
//! with parallel edges, and for programs written only here.

mod common;

use common::*;
use wayfarer::graph::{CsrGraph, CsrParts, Orientation};
use wayfarer::prelude::*;
use wayfarer::proposal::{StaticFactor, TermCond, TermPlan};
use wayfarer::{WalkConfig, Walks};

/// A static term plus a `has_edge(prev, dst)` term.
#[walk(defaults(g = 0.5))]
fn mixture(s: &Step, g: f32) -> f32 {
    if s.prev() == NO_NODE {
        return s.weight();
    }
    let mut w = s.weight() * 2.0;
    if s.has_edge(s.prev(), s.dst()) {
        w += g;
    }
    w
}

/// An exact mixture: `h` plus `g` on the edges to neighbours of `prev`, so its candidates are
/// taken untested on graphs without parallel edges.
#[walk(defaults(g = 0.5))]
fn mixture_exact(s: &Step, g: f32) -> f32 {
    let mut w = s.weight();
    if s.has_edge(s.prev(), s.dst()) {
        w += g;
    }
    w
}

/// Exact too: the `has_edge(prev, dst)` part only from the third step on (a walker guard
/// around both sides of the edge guard).
#[walk(defaults(g = 0.5))]
fn mixture_late(s: &Step, g: f32) -> f32 {
    let mut w = s.weight();
    if s.step() > 1 {
        if s.has_edge(s.prev(), s.dst()) {
            w += g;
        }
    }
    w
}

/// Exact in truth, but not as the analysis sees it: the walker guard sits inside the edge
/// guard, so no group of paths covers every edge on its own.
#[walk(defaults(g = 0.5))]
fn mixture_inner(s: &Step, g: f32) -> f32 {
    let mut w = s.weight();
    if s.has_edge(s.prev(), s.dst()) {
        if s.step() > 1 {
            w += g;
        }
    }
    w
}

/// A label-conditional term whose label changes with the step.
#[walk]
fn label_by_step(s: &Step) -> f32 {
    if s.label() == s.step() % 3 { s.weight() } else { 0.0 }
}

/// A static factor that is not the edge weight: the target's degree, favoured on the way back.
#[walk(defaults(r = 4.0))]
fn degree_biased(s: &Step, r: f32) -> f32 {
    let k = s.degree(s.dst()) as f32 + 1.0;
    if s.dst() == s.prev() { k * r } else { k }
}

/// Only the way back: every walk ends at its start (no previous node).
#[walk]
fn homesick(s: &Step) -> f32 {
    if s.dst() == s.prev() { s.weight() } else { 0.0 }
}

fn mixture_rule(_step: u32, prev: Option<u32>, e: &RawEdge, edges: &[RawEdge]) -> f64 {
    match prev {
        None => e.2 as f64,
        Some(t) => 2.0 * e.2 as f64 + if edges.iter().any(|f| f.0 == t && f.1 == e.1) { 0.5 } else { 0.0 },
    }
}

fn label_rule(step: u32, _prev: Option<u32>, e: &RawEdge, _edges: &[RawEdge]) -> f64 {
    if e.3 == step % 3 { e.2 as f64 } else { 0.0 }
}

fn degree_rule(_step: u32, prev: Option<u32>, e: &RawEdge, edges: &[RawEdge]) -> f64 {
    let k = edges.iter().filter(|f| f.0 == e.1).count() as f64 + 1.0;
    if Some(e.1) == prev { 4.0 * k } else { k }
}

fn mixture_exact_rule(_step: u32, prev: Option<u32>, e: &RawEdge, edges: &[RawEdge]) -> f64 {
    let near = prev.is_some_and(|t| edges.iter().any(|f| f.0 == t && f.1 == e.1));
    e.2 as f64 + if near { 0.5 } else { 0.0 }
}

fn mixture_late_rule(step: u32, prev: Option<u32>, e: &RawEdge, edges: &[RawEdge]) -> f64 {
    if step > 1 { mixture_exact_rule(step, prev, e, edges) } else { e.2 as f64 }
}

fn ppr2_rule(_step: u32, prev: Option<u32>, e: &RawEdge, edges: &[RawEdge]) -> f64 {
    let Some(t) = prev else { return 1.0 };
    let deg = |v: u32| edges.iter().filter(|f| f.0 == v).count() as f64;
    let mut w = 0.8 / deg(e.0);
    if edges.iter().any(|f| f.0 == t && f.1 == e.1) {
        w += 0.2 / deg(t);
    }
    w
}

fn modes() -> [SamplerMode; 2] {
    [SamplerMode::Structured, SamplerMode::Adaptive]
}

/// Runs `walk` from `starts` under each mode and checks every state against `rule`; returns
/// the reports.
fn check<W: Walk>(walk: &W, g: &CsrGraph, edges: &[RawEdge], starts: &Starts, rule: CustomWeight, what: &str) -> Vec<wayfarer::RunReport> {
    let mut reports = Vec::new();
    for (k, mode) in modes().into_iter().enumerate() {
        let cfg = WalkConfig {
            length: 3,
            seed: 500 + k as u64,
            sampler: mode,
            cost_ratio: CostRatio::Fixed(1.0),
            interleave: 4,
            table_budget: None,
            record_edges: false,
        };
        let (walks, report) = wayfarer::engine::run(walk, g, starts, &cfg, None).unwrap();
        let t = tally(&walks, 3);
        let (tested, _, dead) = check_tally(&t, &Model::Custom(rule), edges, &format!("{what} {mode}"));
        assert!(tested + dead >= 2, "{what} {mode}: too few states checked");
        reports.push(report);
    }
    reports
}

fn starts(nodes: &[u32]) -> Starts {
    Starts::Nodes(nodes.iter().flat_map(|&v| std::iter::repeat_n(v, 60_000)).collect())
}

#[test]
fn the_compiler_finds_each_plan() {
    // Inexact: the weight is below its term's envelope somewhere.
    let f = |t, c| TermPlan { factor: t, cond: c, exact: false };
    // Exact: the weight is its term's envelope (up to the widening) on its edges, 0 elsewhere.
    let x = |t, c| TermPlan { factor: t, cond: c, exact: true };
    assert_eq!(Mixture { g: 0.5 }.proposal(), vec![f(StaticFactor::Table(0), TermCond::All), f(StaticFactor::One, TermCond::PrevNeighbor)]);
    assert_eq!(LabelByStep.proposal(), vec![x(StaticFactor::Table(0), TermCond::Label)]);
    assert_eq!(DegreeBiased { r: 4.0 }.proposal(), vec![f(StaticFactor::Table(0), TermCond::All)]);
    assert_eq!(Homesick.proposal(), vec![x(StaticFactor::Table(0), TermCond::Back)]);
    use wayfarer::walks as lib;
    assert_eq!(lib::Node2vec { a: 2.0, b: 0.5 }.proposal(), vec![f(StaticFactor::Table(0), TermCond::All)]);
    // Exact mixtures: the weight is the sum of its terms on every edge.
    assert_eq!(
        lib::Ppr2 { gamma: 0.2 }.proposal(),
        vec![x(StaticFactor::One, TermCond::All), x(StaticFactor::One, TermCond::PrevNeighbor)]
    );
    assert_eq!(
        MixtureExact { g: 0.5 }.proposal(),
        vec![x(StaticFactor::Table(0), TermCond::All), x(StaticFactor::One, TermCond::PrevNeighbor)]
    );
    assert_eq!(
        MixtureLate { g: 0.5 }.proposal(),
        vec![x(StaticFactor::Table(0), TermCond::All), x(StaticFactor::One, TermCond::PrevNeighbor)]
    );
    // Not exact: a factor 2 on the static part (a scaled residual), and a walker guard inside
    // the edge guard.
    assert_eq!(
        MixtureInner { g: 0.5 }.proposal(),
        vec![f(StaticFactor::Table(0), TermCond::All), f(StaticFactor::One, TermCond::PrevNeighbor)]
    );
    assert_eq!(lib::Metapath::new(&[0, 1]).unwrap().proposal(), vec![x(StaticFactor::Table(0), TermCond::Label)]);
    assert_eq!(lib::Deepwalk.proposal(), vec![x(StaticFactor::Table(0), TermCond::All)]);
    // Label plans that are not exact: another edge guard, a second nonzero path, a walker
    // guard, a residual that is not one constant.
    assert_eq!(LabelHeavyOnly.proposal(), vec![f(StaticFactor::Table(0), TermCond::Label)]);
    assert_eq!(LabelOrFirst.proposal(), vec![f(StaticFactor::Table(0), TermCond::All)]);
    assert_eq!(LabelLater.proposal(), vec![f(StaticFactor::Table(0), TermCond::Label)]);
    assert_eq!(LabelScaled { c: 2.0 }.proposal(), vec![f(StaticFactor::Table(0), TermCond::Label)]);
    // A constant weight on a label's edges is exact (a uniform draw from the segment).
    assert_eq!(LabelFlat.proposal(), vec![x(StaticFactor::One, TermCond::Label)]);
}

/// Not exact: only the label's heavy edges weigh anything.
#[walk]
fn label_heavy_only(s: &Step) -> f32 {
    if s.label() == 1 { if s.weight() > 2.0 { s.weight() } else { 0.0 } } else { 0.0 }
}

/// Not exact: two nonzero paths (every edge at the first step, then only label 1).
#[walk]
fn label_or_first(s: &Step) -> f32 {
    if s.step() == 0 {
        s.weight()
    } else if s.label() == 1 {
        s.weight()
    } else {
        0.0
    }
}

/// Not exact: a walker guard on the label's path (nothing at the first step).
#[walk]
fn label_later(s: &Step) -> f32 {
    if s.step() > 0 { if s.label() == 1 { s.weight() } else { 0.0 } } else { 0.0 }
}

/// Not exact as the analysis sees it: a residual that is a parameter times the factor.
#[walk(defaults(c = 2.0))]
fn label_scaled(s: &Step, c: f32) -> f32 {
    if s.label() == 1 { s.weight() * c } else { 0.0 }
}

/// Exact: a constant on label 1's edges.
#[walk]
fn label_flat(s: &Step) -> f32 {
    if s.label() == 1 { 3.0 } else { 0.0 }
}

#[test]
fn unseen_programs_are_exact_on_every_weight_shape() {
    for shape in SHAPES {
        let edges = shaped_edges(shape);
        let g = build(&edges);
        let s = starts(&[0, 5, 2]);
        for r in check(&Mixture { g: 0.5 }, &g, &edges, &s, mixture_rule, &format!("mixture {shape:?}")) {
            if r.sampler == SamplerMode::Structured {
                assert!(r.stats.structured_steps > 0, "{shape:?}: {:?}", r.stats);
            }
        }
        // Exact mixtures: always structured under adaptive too, their candidates untested.
        for r in check(&MixtureExact { g: 0.5 }, &g, &edges, &s, mixture_exact_rule, &format!("mixture_exact {shape:?}"))
            .into_iter()
            .chain(check(&MixtureLate { g: 0.5 }, &g, &edges, &s, mixture_late_rule, &format!("mixture_late {shape:?}")))
            .chain(check(&wayfarer::walks::Ppr2 { gamma: 0.2 }, &g, &edges, &s, ppr2_rule, &format!("ppr2 {shape:?}")))
        {
            assert!(r.stats.structured_steps > 0 && r.stats.rejection_steps == 0, "{shape:?} {}: {:?}", r.sampler, r.stats);
        }
        check(&LabelByStep, &g, &edges, &s, label_rule, &format!("label_by_step {shape:?}"));
        check(&DegreeBiased { r: 4.0 }, &g, &edges, &s, degree_rule, &format!("degree_biased {shape:?}"));
        // Every walk ends where it starts: the envelope's mass is 0 there.
        let (walks, rep) = wayfarer::engine::run(
            &Homesick,
            &g,
            &starts(&[0, 1]),
            &WalkConfig { length: 3, sampler: SamplerMode::Structured, ..Default::default() },
            None,
        )
        .unwrap();
        assert!(walks.lengths.iter().all(|&l| l == 1), "homesick walks moved");
        assert_eq!(rep.stats.dead_ends, walks.len() as u64);
    }
}

/// A hub with 30 spokes, a ring through the spokes, and parallel edges (0→5 three times, 5→0
/// twice, 0→7 twice, 3→5 twice): rows with repeated destinations on both sides of a
/// `has_edge(prev, dst)` proposal.
fn hub_graph() -> (CsrGraph, Vec<RawEdge>) {
    let mut e: Vec<RawEdge> = Vec::new();
    let mut state = 7u64;
    let mut w = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let u = ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        (u.powf(-1.0) - 1.0) as f32 // Pareto(1)
    };
    for v in 1..=30u32 {
        e.push((0, v, w(), v % 3));
        e.push((v, 0, w(), v % 2));
        let next = if v == 30 { 1 } else { v + 1 };
        e.push((v, next, w(), 1));
        e.push((next, v, w(), 2));
    }
    for (u, v, times) in [(0, 5, 2), (5, 0, 1), (0, 7, 1), (3, 5, 2)] {
        for _ in 0..times {
            e.push((u, v, w(), 0));
        }
    }
    e.sort_by_key(|x| (x.0, x.1));
    let n = 31;
    let mut parts = CsrParts { offsets: vec![0], weights: Some(Vec::new()), labels: Some(Vec::new()), ..Default::default() };
    for v in 0..n {
        for x in e.iter().filter(|x| x.0 == v) {
            parts.targets.push(x.1);
            parts.weights.as_mut().unwrap().push(x.2);
            parts.labels.as_mut().unwrap().push(x.3);
        }
        parts.offsets.push(parts.targets.len() as u64);
    }
    (CsrGraph::from_parts(parts, Orientation::Directed).unwrap(), e)
}

#[test]
fn parallel_edges_and_hubs_are_exact() {
    let (g, edges) = hub_graph();
    let s = starts(&[5, 3, 1]);
    check(&Mixture { g: 0.5 }, &g, &edges, &s, mixture_rule, "mixture on the hub graph");
    check(&wayfarer::walks::Ppr2 { gamma: 0.2 }, &g, &edges, &s, ppr2_rule, "ppr2 on the hub graph");
    check(&MixtureExact { g: 0.5 }, &g, &edges, &s, mixture_exact_rule, "mixture_exact on the hub graph");
    check(&LabelByStep, &g, &edges, &s, label_rule, "label_by_step on the hub graph");
    check(&DegreeBiased { r: 4.0 }, &g, &edges, &s, degree_rule, "degree_biased on the hub graph");
}

/// Second-order PageRank's mixture needs at most 1 / (1 − γ) trials per step on a simple
/// graph, whatever the degrees.
#[test]
fn ppr2_takes_few_trials() {
    let g = wayfarer::graph::generate::rmat(12, 8, 3).unwrap();
    for gamma in [0.2f32, 0.5] {
        let cfg = WalkConfig { length: 20, seed: 3, sampler: SamplerMode::Structured, ..Default::default() };
        let (_, rep) = wayfarer::engine::run(&wayfarer::walks::Ppr2 { gamma }, &g, &Starts::EveryNode { per_node: 1 }, &cfg, None).unwrap();
        let per_step = rep.stats.structured_trials as f64 / rep.stats.structured_steps.max(1) as f64;
        // The multiplicity of R-MAT's parallel edges widens the envelope a little.
        assert!(per_step < 1.5 / (1.0 - gamma as f64), "gamma {gamma}: {per_step:.3} trials per step ({:?})", rep.stats);
        assert!(rep.stats.structured_steps > 10_000, "{:?}", rep.stats);
    }
}

/// Node2Vec over an alias table of Pareto(1) weights: the acceptance is at least
/// min/max of its factors (0.25 at a = 2, b = 0.5), whatever the weights.
#[test]
fn node2vec_acceptance_does_not_depend_on_the_weights() {
    let mut g = wayfarer::graph::generate::rmat(12, 8, 3).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 4))).unwrap();
    let cfg = WalkConfig { length: 20, seed: 3, sampler: SamplerMode::Structured, ..Default::default() };
    let (_, rep) =
        wayfarer::engine::run(&wayfarer::walks::Node2vec { a: 2.0, b: 0.5 }, &g, &Starts::EveryNode { per_node: 1 }, &cfg, None).unwrap();
    let per_step = rep.stats.structured_trials as f64 / rep.stats.structured_steps.max(1) as f64;
    assert!(per_step <= 4.0, "{per_step:.3} trials per step: {:?}", rep.stats);
    assert_eq!(rep.stats.structured_fallbacks, 0);
}

/// The same walks for a seed at any thread count and batch split, with the tables.
#[test]
fn structured_walks_do_not_depend_on_threads() {
    let mut g = wayfarer::graph::generate::rmat(10, 8, 5).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 6))).unwrap();
    let walk = wayfarer::walks::Node2vec { a: 2.0, b: 0.5 };
    let run = |threads: usize, interleave: usize| -> Walks {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let cfg = WalkConfig { length: 10, seed: 9, interleave, ..Default::default() };
        pool.install(|| wayfarer::engine::run(&walk, &g, &Starts::EveryNode { per_node: 2 }, &cfg, None).unwrap().0)
    };
    let a = run(1, 1);
    assert_eq!(a, run(2, 8));
    assert_eq!(a, run(3, 3));
}

/// A table budget too small for the tables: the run proposes uniformly and says why.
#[test]
fn tables_over_budget_are_skipped_and_reported() {
    let dir = std::env::temp_dir().join(format!("wayfarer-structured-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let graph = dir.join("g.wfg");
    let bin = env!("CARGO_BIN_EXE_wayfarer");
    let made = std::process::Command::new(bin)
        .args(["gen", "rmat", "--scale", "10", "--edge-factor", "8", "--weights", "pareto:1", "-o"])
        .arg(&graph)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let run_with = |budget: &str, sampler: &str| {
        let out = std::process::Command::new(bin)
            .args(["walk", "deepwalk", "--backend", "cpu", "--length", "5", "--sampler", sampler, "--graph"])
            .arg(&graph)
            .env("WAYFARER_TABLE_BUDGET", budget)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{err}");
        err
    };
    let bad = std::process::Command::new(bin)
        .args(["walk", "deepwalk", "--backend", "cpu", "--length", "5", "--graph"])
        .arg(&graph)
        .env("WAYFARER_TABLE_BUDGET", "lots")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && err.contains("WAYFARER_TABLE_BUDGET") && err.contains("lots"), "{err}");
    let run = |budget: &str| run_with(budget, "structured");
    let small = run("1000");
    assert!(small.contains("no proposal tables") && small.contains("over the budget"), "{small}");
    let large = run("100000000");
    assert!(large.contains("proposal tables") && large.contains("structured"), "{large}");
    // Adaptive: the alias fast path's tables answer to the same budget.
    let small = run_with("1000", "adaptive");
    assert!(!small.contains("alias rows") && small.contains("over the budget"), "{small}");
    let large = run_with("100000000", "adaptive");
    assert!(large.contains("alias rows") && large.contains("alias table 100.0%"), "{large}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same unseen programs compiled at run time by the Cranelift backend: its compiled
/// factors, bounds and label drive the same proposals (`--sampler structured`).
#[test]
fn cranelift_compiled_plans_are_exact() {
    let programs: [(&str, CustomWeight); 3] = [
        (
            "#[walk(defaults(g = 0.5))]\nfn mixture(s: &Step, g: f32) -> f32 {\n    if s.prev() == NO_NODE { return s.weight(); }\n    let mut w = s.weight() * 2.0;\n    if s.has_edge(s.prev(), s.dst()) { w += g; }\n    w\n}\n",
            mixture_rule,
        ),
        ("#[walk]\nfn label_by_step(s: &Step) -> f32 {\n    if s.label() == s.step() % 3 { s.weight() } else { 0.0 }\n}\n", label_rule),
        (
            "#[walk(defaults(r = 4.0))]\nfn degree_biased(s: &Step, r: f32) -> f32 {\n    let k = s.degree(s.dst()) as f32 + 1.0;\n    if s.dst() == s.prev() { k * r } else { k }\n}\n",
            degree_rule,
        ),
    ];
    let hub_edges = hub_graph().1;
    for (source, rule) in programs {
        let (program, info) = wayfarer_compiler::compile_source(source).unwrap();
        let values = wayfarer_compiler::params::values(&program, &[]).unwrap();
        let walk = wayfarer_jit::JitWalk::compile(&program, &info, &values, true).unwrap();
        assert!(!walk.proposal().is_empty(), "{}: no plan", program.name);
        for (g, edges, what) in
            [(build(&shaped_edges(Shape::Pareto1)), shaped_edges(Shape::Pareto1), "pareto"), (hub_graph().0, hub_edges.clone(), "hub")]
        {
            let s = starts(&[5, 3, 1]);
            let cfg = WalkConfig {
                length: 3,
                seed: 41,
                sampler: SamplerMode::Structured,
                cost_ratio: CostRatio::Fixed(1.0),
                interleave: 2,
                table_budget: None,
                record_edges: false,
            };
            let (walks, report) = wayfarer::engine::run(&walk, &g, &s, &cfg, None).unwrap();
            assert!(report.stats.structured_steps > 0, "{}: {:?}", program.name, report.stats);
            let t = tally(&walks, 3);
            check_tally(&t, &Model::Custom(rule), &edges, &format!("cranelift {} on {what}", program.name));
        }
    }
}

/// A static factor that goes negative on some edges (a weight below 2): the table build reads
/// every edge's factor before any walk moves and stops with the walk's bad-weight error,
/// naming the edge, not a table sampled with a negative mass.
#[walk]
fn dip(s: &Step) -> f32 {
    s.weight() - 2.0
}

#[test]
fn a_negative_static_factor_is_a_clear_error_before_walking() {
    let mut g = wayfarer::graph::generate::rmat(8, 8, 3).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse().unwrap(), 4))).unwrap();
    let walk = Dip;
    assert!(!walk.proposal().is_empty(), "the compiler plans a table for `weight() - 2`");
    let cfg = WalkConfig { length: 5, seed: 1, sampler: SamplerMode::Structured, ..Default::default() };
    let err = wayfarer::engine::run(&walk, &g, &Starts::EveryNode { per_node: 1 }, &cfg, None).unwrap_err().to_string();
    assert!(err.contains("dip") && err.contains("returned weight -"), "{err}");
    assert!(err.contains("step 0"), "reported at the table build, before any step: {err}");
}
