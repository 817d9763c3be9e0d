//! Bound soundness: on random graphs (zero, tiny, huge and ordinary weights; labels), random
//! walker states and random hyperparameters (negative, zero, tiny, large), the analysis's `B`
//! is at least every weight the walk computes — evaluated by the reference interpreter.

use proptest::prelude::*;
use wayfarer_compiler::eval::{Evaluator, ParamValue, State, Value};
use wayfarer_compiler::testing::{param_value, program};
use wayfarer_compiler::{analyze, lower_source};
use wayfarer_runtime::graph::NO_NODE;
use wayfarer_runtime::testing::graph;

const PROGRAMS: &[&str] = &[
    "#[walk] fn node2vec(s: &Step, a: f32, b: f32) -> f32 {
        if s.step() == 0 { return s.weight(); }
        if s.dst() == s.prev() { s.weight() / a } else if s.has_edge(s.prev(), s.dst()) { s.weight() } else { s.weight() / b }
    }",
    "#[walk] fn metapath(s: &Step, a: f32, b: f32) -> f32 {
        let want = (s.step() % 3) as u32;
        if s.label() == want { s.weight() } else { 0.0 }
    }",
    "#[walk] fn ppr2(s: &Step, a: f32, b: f32) -> f32 {
        if s.prev() == NO_NODE { return s.weight(); }
        let mut w = a / s.degree(s.cur()) as f32;
        if s.has_edge(s.prev(), s.dst()) { w += b / (s.degree(s.prev()) as f32).max(1.0); }
        w
    }",
    "#[walk] fn affine(s: &Step, a: f32, b: f32) -> f32 { s.weight() * a - b }",
    "#[walk] fn mixed(s: &Step, a: f32, b: f32) -> f32 { (s.weight() + a).max(b) / (s.degree(s.dst()) as f32 + 1.0) }",
    "#[walk] fn edge_branch(s: &Step, a: f32, b: f32) -> f32 {
        if s.weight() > a { s.weight().sqrt() } else { (s.weight() * b).abs() }
    }",
    "#[walk] fn looped(s: &Step, a: f32, b: f32) -> f32 {
        let x = s.weight();
        let mut acc = 0.0;
        for i in 0..3 { acc += x * (i as f32 + a); }
        (acc / 8.0).exp().min(1.0e6) + b.abs()
    }",
    "#[walk] fn not_label(s: &Step, a: f32, b: f32) -> f32 {
        if s.label() != 1 { s.weight() / a } else { 2.0 * s.weight() - b }
    }",
    "#[walk] fn gap(s: &Step, a: f32, b: f32) -> f32 { (a - s.weight()).abs() + (b - s.weight() * 0.5).max(0.0) }",
    "#[walk] fn parity(s: &Step, a: f32, b: f32) -> f32 {
        match s.step() % 3 { 0 => s.weight() * a, 1 => (s.weight() - b).abs(), _ => a.min(b) + s.weight() }
    }",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn bound_is_at_least_every_weight(g in graph(), cur in any::<prop::sample::Index>(), prev in proptest::option::of(any::<prop::sample::Index>()), step in 0u32..7, a in param_value(), b in param_value()) {
        let n = g.num_nodes();
        let state = State { cur: cur.index(n) as u32, prev: prev.map_or(NO_NODE, |p| p.index(n) as u32), start: 0, step };
        let params = [ParamValue::Scalar(Value::F32(a)), ParamValue::Scalar(Value::F32(b))];
        for src in PROGRAMS {
            let f = lower_source(src).unwrap();
            let info = analyze(&f);
            let bound = info.bound.unwrap_or_else(|| panic!("no bound for {src}: {:?}", info.fallback));
            let ev = Evaluator { graph: &g, params: &params, state, edge: None, props: &f.props, fields: &[], draws: &[] };
            let bv = ev.eval(&info.derived.exprs, &info.derived.types, bound).as_f64();
            for e in g.row(state.cur) {
                let ew = Evaluator { graph: &g, params: &params, state, edge: Some(e), props: &f.props, fields: &[], draws: &[] };
                let w = ew.eval(&f.exprs, &f.types, f.result).as_f64();
                if w.is_nan() || w < 0.0 {
                    continue; // a run-time error in the engine, not a sampling decision
                }
                // A NaN bound makes the engine use eRVS for the step, which is always exact.
                prop_assert!(bv.is_nan() || bv >= w, "{}: weight {} > bound {} (edge {}, state {:?}, a={}, b={})", f.name, w, bv, e, state, a, b);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// Random programs from the language's grammar, in both forms (the impl form reads
    /// per-walker state): every one compiles, and where the analysis gives a bound it holds on
    /// random graphs, states, state fields and parameters.
    #[test]
    fn random_programs_get_sound_bounds((impl_form, src) in any::<bool>().prop_flat_map(|f| program(f).prop_map(move |s| (f, s))), g in graph(), cur in any::<prop::sample::Index>(), prev in proptest::option::of(any::<prop::sample::Index>()), step in 0u32..4, a in param_value(), b in param_value(), x in param_value(), k in 0u32..3) {
        let f = lower_source(&src).unwrap_or_else(|e| panic!("generated program does not compile:\n{src}\n{}", e.render(&src, "random.rs")));
        let info = analyze(&f);
        let Some(bound) = info.bound else { return Ok(()) };
        let n = g.num_nodes();
        let state = State { cur: cur.index(n) as u32, prev: prev.map_or(NO_NODE, |p| p.index(n) as u32), start: 0, step };
        let params = [ParamValue::Scalar(Value::F32(a)), ParamValue::Scalar(Value::F32(b))];
        let fields = if impl_form { vec![Value::F32(x), Value::U32(k)] } else { Vec::new() };
        let bv = Evaluator { graph: &g, params: &params, state, edge: None, props: &f.props, fields: &fields, draws: &[] }.eval(&info.derived.exprs, &info.derived.types, bound).as_f64();
        for e in g.row(state.cur) {
            let w = Evaluator { graph: &g, params: &params, state, edge: Some(e), props: &f.props, fields: &fields, draws: &[] }.eval(&f.exprs, &f.types, f.result).as_f64();
            if w.is_nan() || w < 0.0 {
                continue;
            }
            prop_assert!(bv.is_nan() || bv >= w, "weight {} > bound {} for\n{}\n(edge {}, state {:?}, a={}, b={}, x={}, k={})", w, bv, src, e, state, a, b, x, k);
        }
    }
}

/// Found by the random programs: `sqrt` of a negative is NaN, and `min` then returns its other
/// operand, so the bound of `min(x, y)` may not take the smaller bound when `x` may be NaN.
#[test]
fn min_with_a_nan_operand_keeps_a_sound_bound() {
    use wayfarer_runtime::graph::{CsrGraph, CsrParts, Orientation};
    let src = "#[walk] fn random(s: &Step, a: f32, b: f32) -> f32 { (((-s.weight())).sqrt()).min(s.weight()) }";
    let f = wayfarer_compiler::lower_source(src).unwrap();
    let info = wayfarer_compiler::analyze(&f);
    let g = CsrGraph::from_parts(
        CsrParts { offsets: vec![0, 2], targets: vec![0, 0], weights: Some(vec![0.0, 1e-30]), ..Default::default() },
        Orientation::Directed,
    )
    .unwrap();
    let params = [ParamValue::Scalar(Value::F32(0.0)), ParamValue::Scalar(Value::F32(0.0))];
    let state = State { cur: 0, prev: NO_NODE, start: 0, step: 0 };
    let ev = |edge| Evaluator { graph: &g, params: &params, state, edge, props: &f.props, fields: &[], draws: &[] };
    let bound = ev(None).eval(&info.derived.exprs, &info.derived.types, info.bound.expect("bounded")).as_f64();
    let weight = ev(Some(1)).eval(&f.exprs, &f.types, f.result).as_f64();
    assert!(weight > 0.0 && bound >= weight, "weight {weight} > bound {bound}");
}
