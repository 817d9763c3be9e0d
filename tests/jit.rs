//! The Cranelift backend (`wayfarer-jit`): walks compiled at run time give the same walks as
//! the macro-compiled (native) ones for a seed, with every sampler, and compute the same
//! values as the reference interpreter, bit for bit, on the IR's corner cases.

mod common;

use common::*;
use wayfarer::library::LibraryWalk;
use wayfarer::{CostRatio, SamplerMode, Starts, Walk, WalkConfig, Walker};
use wayfarer_compiler::eval::{Evaluator, ParamValue, State, Value};
use wayfarer_jit::{EngineTurns, JitState, JitWalk};

fn graph() -> wayfarer::CsrGraph {
    let mut g = wayfarer::graph::generate::rmat(11, 8, 5).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 6))).unwrap();
    g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 5 }, 7).unwrap())).unwrap();
    g
}

#[test]
fn jit_walks_equal_native_walks_for_every_library_walk_and_sampler() {
    let g = graph();
    for name in ["deepwalk", "node2vec", "metapath", "ppr2", "ppr", "ppr-stop"] {
        let walk = LibraryWalk::from_name(name, &[], &g, false).unwrap();
        let jit = cranelift_walk(&walk, true);
        for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection, SamplerMode::Reservoir] {
            let cfg = WalkConfig {
                length: 12,
                seed: 42,
                sampler,
                cost_ratio: CostRatio::Fixed(3.0),
                interleave: 8,
                table_budget: None,
                record_edges: false,
            };
            let s = Starts::EveryNode { per_node: 2 };
            let (native, rn) = walk.run(&g, &s, &cfg, None).unwrap();
            let (jitted, rj) = wayfarer::engine::run(&jit, &g, &s, &cfg, None).unwrap();
            let (native, jitted) = if walk.is_anonymous() { (native, jitted.to_anonymous()) } else { (native, jitted) };
            assert!(native.steps() > 0, "{name}");
            assert_eq!(native, jitted, "{name} {sampler}: the Cranelift walks differ from the native ones");
            assert_eq!(rn.stats, rj.stats, "{name} {sampler}: the samplers' counts differ");
            // With structured-proposal tables (every library walk here has a plan) the engine's
            // own turns run the adaptive rule; on a fast path (walks without hooks) the engine's
            // lock-step loops call the compiled weight (`tests/fast_paths.rs` compares them
            // with the compiled turns).
            let tables = matches!(rj.proposal, wayfarer::engine::ProposalReport::Built { .. });
            let kind = |f: &wayfarer::fast_path::FastPathReport| std::mem::discriminant(f);
            assert_eq!(kind(&rn.fast_path), kind(&rj.fast_path), "{name} {sampler}: the fast path");
            let compiled = (sampler == SamplerMode::Rejection || (sampler == SamplerMode::Adaptive && !tables))
                && rj.fast_path == wayfarer::fast_path::FastPathReport::None;
            assert_eq!(rj.compiled_turns, compiled, "{name} {sampler}: compiled turns used");
            assert!(!rn.compiled_turns);
        }
        // The engine's own turn over the compiled queries gives them too.
        let generic = jit.with_engine_turns(EngineTurns::Generic);
        let cfg = WalkConfig {
            length: 12,
            seed: 42,
            sampler: SamplerMode::Adaptive,
            cost_ratio: CostRatio::Fixed(3.0),
            interleave: 8,
            table_budget: None,
            record_edges: false,
        };
        let s = Starts::EveryNode { per_node: 2 };
        let (native, _) = walk.run(&g, &s, &cfg, None).unwrap();
        let (jitted, rg) = wayfarer::engine::run(&generic, &g, &s, &cfg, None).unwrap();
        assert!(!rg.compiled_turns);
        let jitted = if walk.is_anonymous() { jitted.to_anonymous() } else { jitted };
        assert_eq!(native, jitted, "{name}: the generic-turn Cranelift walks differ from the native ones");
    }
}

/// A walk whose `update` takes several draws and sets several state fields, and whose `stop`
/// draws after it from the same stream: the compiled turn's in-place `update` must draw and
/// write exactly as the engine's call through `Walk::update` does.
mod drift {
    use wayfarer::prelude::*;

    #[walk(params(restart: f32, damp: f64), state(two_back: u32, moves: u32, mass: f64))]
    impl Drift {
        fn init(&self, st: &mut DriftState) {
            st.two_back = NO_NODE;
            st.mass = 1.0;
        }

        fn get_weight(&self, s: &Step, st: &DriftState) -> f32 {
            if s.dst() == st.two_back { 0.25 * s.weight() } else { s.weight() + (st.mass as f32) * 0.01 }
        }

        fn update(&self, s: &mut Step, st: &mut DriftState, rng: &mut StepRng) {
            st.two_back = s.prev();
            st.moves += 1;
            let a = rng.uniform();
            let b = rng.uniform();
            st.mass = st.mass * self.damp + a;
            if b < self.restart as f64 {
                s.restart();
                st.two_back = NO_NODE;
            }
        }

        fn stop(&self, _s: &Step, st: &DriftState, rng: &mut StepRng) -> bool {
            st.moves > 3 && rng.uniform() < 0.05
        }
    }
}

#[test]
fn jit_update_with_draws_and_state_equals_native() {
    let g = graph();
    let walk = drift::Drift { restart: 0.2, damp: 0.5 };
    let src = walk.source().unwrap();
    let (program, info) = wayfarer_compiler::compile_source(src.source).unwrap();
    let values = wayfarer::gpu::program_values(&program, &src.params).unwrap();
    let jit = JitWalk::compile(&program, &info, &values, true).unwrap();
    for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection, SamplerMode::Reservoir] {
        let cfg = WalkConfig {
            length: 16,
            seed: 9,
            sampler,
            cost_ratio: CostRatio::Fixed(3.0),
            interleave: 8,
            table_budget: None,
            record_edges: false,
        };
        let s = Starts::EveryNode { per_node: 2 };
        let (native, rn) = wayfarer::engine::run(&walk, &g, &s, &cfg, None).unwrap();
        let (jitted, rj) = wayfarer::engine::run(&jit, &g, &s, &cfg, None).unwrap();
        assert!(rn.stats.stopped > 0 && native.steps() > 0, "{sampler}: the walk must move and stop");
        assert_eq!(native, jitted, "{sampler}: the Cranelift walks differ from the native ones");
        assert_eq!(rn.stats, rj.stats, "{sampler}: the samplers' counts differ");
    }
}

/// More labels than get per-label arrays (64): label queries fall back to whole-row
/// aggregates (the Cranelift code's helper path instead of its inlined loads).
#[test]
fn jit_metapath_equals_native_without_per_label_arrays() {
    let mut g = graph();
    g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 70 }, 9).unwrap())).unwrap();
    let walk = LibraryWalk::from_name("metapath", &[("schema".into(), "3,0,69,7".into())], &g, false).unwrap();
    let jit = cranelift_walk(&walk, true);
    for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection] {
        let cfg = WalkConfig {
            length: 8,
            seed: 5,
            sampler,
            cost_ratio: CostRatio::Fixed(3.0),
            interleave: 8,
            table_budget: None,
            record_edges: false,
        };
        let s = Starts::EveryNode { per_node: 4 };
        let (native, _) = walk.run(&g, &s, &cfg, None).unwrap();
        let (jitted, _) = wayfarer::engine::run(&jit, &g, &s, &cfg, None).unwrap();
        assert!(native.steps() > 0);
        assert_eq!(native, jitted, "{sampler}");
    }
}

#[test]
fn jit_runs_stateful_programs_from_source() {
    // A temporal walk on a graph with timestamps, through the JIT only.
    let mut g = graph();
    let times: Vec<i64> = (0..g.num_edges() as i64).map(|i| (i * 7919) % 101).collect();
    let parts = wayfarer::graph::CsrParts {
        offsets: g.offsets().to_vec(),
        targets: g.targets().to_vec(),
        weights: g.weights().map(|w| w.to_vec()),
        timestamps: Some(times.clone()),
        ..Default::default()
    };
    g = wayfarer::CsrGraph::from_parts(parts, wayfarer::graph::Orientation::Directed).unwrap();
    let walk = LibraryWalk::from_name("temporal", &[], &g, false).unwrap();
    let jit = cranelift_walk(&walk, true);
    let cfg = WalkConfig {
        length: 10,
        seed: 3,
        sampler: SamplerMode::Adaptive,
        cost_ratio: CostRatio::Fixed(2.0),
        interleave: 8,
        table_budget: None,
        record_edges: false,
    };
    let s = Starts::EveryNode { per_node: 1 };
    let (native, _) = walk.run(&g, &s, &cfg, None).unwrap();
    let (jitted, _) = wayfarer::engine::run(&jit, &g, &s, &cfg, None).unwrap();
    assert_eq!(native, jitted);
    // Timestamps strictly increase along every walk.
    for i in 0..jitted.len() {
        let w = jitted.walk(i);
        let mut last = i64::MIN;
        for pair in w.windows(2) {
            let e = g.find_edge(pair[0], pair[1]).unwrap();
            let t = (e..g.row(pair[0]).end).filter(|&e| g.targets()[e] == pair[1]).map(|e| times[e]).filter(|&t| t > last).min().unwrap();
            last = t;
        }
    }
}

/// Every corner of the IR's semantics, compared with the interpreter bit for bit.
const CORNERS: &str = r#"
#[walk]
fn corners(s: &Step, a: f32, k: i32, u: u32, arr: [u32; 3]) -> f32 {
    let q = k / 0 + k % 0 + (k / -1);                 // division by zero gives 0; MIN / -1 wraps
    let r = (u / 0 + u % 0 + u % 7) as f32;
    let c = (a * 1.0e30) as u32 + (a - 1.0e9) as u32 + (-a) as i32 as u32;   // saturating casts
    let m = a.min(0.0 / 0.0).max(-1.5) + (0.0 / 0.0).max(a);               // NaN operands are ignored
    let p0 = s.weight() * 0.0;                                               // +0 and -0, known only at run time
    let n0 = s.weight() * -0.0;
    let z = if 1.0 / p0.max(n0) > 0.0 { 0.25 } else { 0.0 } + if 1.0 / n0.max(p0) > 0.0 { 0.125 } else { 0.0 }
        + if 1.0 / p0.min(n0) > 0.0 { 0.0625 } else { 0.0 } + if 1.0 / n0.min(p0) > 0.0 { 0.03125 } else { 0.0 };
    let v = (s.weight() * 1.0e-38 / 8.0) * 1.0e38 + s.weight() / 0.25 + s.weight() / 3.0;  // subnormal quotients
    let v = v + if s.weight() * 3.0e38 / 0.5 > 1.0e38 { 1.0 } else { 0.0 };               // an infinite one
    let i = arr[(s.step() % 5) as usize] as f32;                             // out of range reads 0
    let d = s.degree(NO_NODE) as f32 + s.degree(s.dst()) as f32;
    let h = if s.has_edge(s.prev(), s.dst()) { 2.0 } else { 0.5 };
    let e = (a.abs() + 1.0).ln() + (a * 0.01).exp() + (s.weight() + 1.0).sqrt() + (s.weight() + 1.0).powf(0.3);
    let l = if s.label() == 2 { 3.0 } else { 1.0 };
    let f = (s.time() as f32) * 0.0 + (q as f32) * 0.001 + r + (c as f32) * 1.0e-9;
    (m + z + v + i + d + h + e + l + f).abs()
}
"#;

#[test]
fn jit_values_match_the_interpreter_bit_for_bit() {
    let (program, info) = wayfarer_compiler::compile_source(CORNERS).unwrap();
    let edges = shaped_edges(Shape::Uniform);
    let g = build(&edges);
    for (a, k) in [(2.5f32, i32::MIN), (-3.0, 7), (f32::NAN, -1), (1e20, 0)] {
        let values = vec![
            ParamValue::Scalar(Value::F32(a)),
            ParamValue::Scalar(Value::I32(k)),
            ParamValue::Scalar(Value::U32(11)),
            ParamValue::Array(vec![Value::U32(4), Value::U32(9), Value::U32(2)]),
        ];
        let jit = JitWalk::compile(&program, &info, &values, true).unwrap();
        let stats = wayfarer::NodeStats::compute(&g, jit.requirements(), true);
        let ctx = wayfarer::Ctx::new(&g, &stats);
        for cur in 0..g.num_nodes() as u32 {
            for prev in [wayfarer::NO_NODE, 0, 2, 5] {
                for step in 0..6 {
                    let mut w = Walker::<JitState>::new(cur);
                    w.prev = prev;
                    w.step = step;
                    for e in g.row(cur) {
                        let state = State { cur, prev, start: cur, step };
                        let want =
                            Evaluator { graph: &g, params: &values, state, edge: Some(e), props: &program.props, fields: &[], draws: &[] }
                                .eval(&program.exprs, &program.types, program.result);
                        let got = jit.weight(&ctx, &w, e);
                        let Value::F32(want) = want else { panic!("f32 weight") };
                        assert!(
                            want.to_bits() == got.to_bits() || (want.is_nan() && got.is_nan()),
                            "a={a} k={k} cur={cur} prev={prev} step={step} edge={e}: interpreter {want}, JIT {got}"
                        );
                    }
                }
            }
        }
    }
}

/// Compiled code is cached within the process: the same program, values and weightedness
/// compile once and share the machine code; different values compile anew.
#[test]
fn the_process_cache_compiles_a_program_once() {
    let g = graph();
    let walk = LibraryWalk::from_name("node2vec", &[], &g, false).unwrap();
    let (source, values) = walk.program().unwrap();
    let (program, info) = wayfarer_compiler::compile_source(source).unwrap();
    let (a, hit_a) = JitWalk::compile_cached(&program, &info, &values, true).unwrap();
    let (b, hit_b) = JitWalk::compile_cached(&program, &info, &values, true).unwrap();
    assert!(!hit_a && hit_b && std::sync::Arc::ptr_eq(&a, &b));
    let other = LibraryWalk::from_name("node2vec", &[("a".into(), "0.25".into())], &g, false).unwrap();
    let (_, other_values) = other.program().unwrap();
    let (c, hit_c) = JitWalk::compile_cached(&program, &info, &other_values, true).unwrap();
    assert!(!hit_c && !std::sync::Arc::ptr_eq(&a, &c));
    let (d, _) = JitWalk::compile_cached(&program, &info, &values, false).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&a, &d), "weighted and unweighted code differ");
    // The shared code walks like a fresh compile.
    let cfg = WalkConfig {
        length: 10,
        seed: 3,
        sampler: SamplerMode::Adaptive,
        cost_ratio: CostRatio::Fixed(2.0),
        interleave: 4,
        table_budget: None,
        record_edges: false,
    };
    let s = Starts::EveryNode { per_node: 1 };
    let (wa, _) = wayfarer::engine::run(&*b, &g, &s, &cfg, None).unwrap();
    let (wn, _) = walk.run(&g, &s, &cfg, None).unwrap();
    assert_eq!(wa, wn);
}
