//! Bound soundness: on random graphs (zero, tiny, huge and ordinary weights; labels), random
//! walker states and random hyperparameters (negative, zero, tiny, large), the analysis's `B`
//! is at least every weight the walk computes — evaluated by the reference interpreter.

use proptest::prelude::*;
use wayfarer_compiler::eval::{Evaluator, ParamValue, State, Value};
use wayfarer_compiler::{analyze, lower_source};
use wayfarer_runtime::graph::{CsrGraph, CsrParts, NO_NODE, Orientation};

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

fn weight_value() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(0.0f32),
        Just(1e-30),
        Just(0.5),
        Just(1.0),
        Just(3.0),
        Just(1e6),
        0.0f32..5.0,
        (0.001f64..1.0).prop_map(|u| (u.powf(-1.0) - 1.0) as f32)
    ]
}

fn param_value() -> impl Strategy<Value = f32> {
    prop_oneof![Just(0.0f32), Just(-3.0), Just(-0.5), Just(1e-3), Just(0.5), Just(2.0), Just(10.0), -5.0f32..5.0]
}

fn graph() -> impl Strategy<Value = CsrGraph> {
    (1usize..7).prop_flat_map(|n| {
        proptest::collection::vec((0..n as u32, 0..n as u32, weight_value(), 0u32..3), 0..24).prop_map(move |edges| {
            let mut rows: Vec<Vec<(u32, f32, u32)>> = vec![Vec::new(); n];
            for (u, v, w, l) in edges {
                rows[u as usize].push((v, w, l));
            }
            let mut p = CsrParts { offsets: vec![0], weights: Some(Vec::new()), labels: Some(Vec::new()), ..Default::default() };
            for r in rows {
                for (v, w, l) in r {
                    p.targets.push(v);
                    p.weights.as_mut().unwrap().push(w);
                    p.labels.as_mut().unwrap().push(l);
                }
                p.offsets.push(p.targets.len() as u64);
            }
            CsrGraph::from_parts(p, Orientation::Directed).unwrap()
        })
    })
}

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

/// Leaves of random programs; `@a`, `@b` are the hyperparameters and `@x` (f32) and `@k`
/// (u32) the state fields of the impl form, spelled per form by [`spell`].
fn leaf() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "s.weight()",
        "@a",
        "@b",
        "@x",
        "1.5",
        "0.0",
        "0.25",
        "(s.degree(s.dst()) as f32)",
        "(s.degree(s.cur()) as f32)",
        "(s.step() as f32)",
    ])
    .prop_map(String::from)
}

fn cond(inner: BoxedStrategy<String>) -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "s.dst() == s.prev()",
            "s.dst() != s.prev()",
            "s.has_edge(s.prev(), s.dst())",
            "s.label() == 1",
            "s.label() != 2",
            "s.step() == 0",
            "s.prev() == NO_NODE",
            "s.weight() > @a",
            "@k == 0",
            "@x < s.weight()",
        ])
        .prop_map(String::from),
        (inner.clone(), inner).prop_map(|(x, y)| format!("{x} < {y}")),
    ]
}

/// Random well-typed `f32` expressions over the walk language.
fn expr() -> impl Strategy<Value = String> {
    leaf().prop_recursive(4, 24, 3, |inner| {
        let inner = inner.boxed();
        prop_oneof![
            (inner.clone(), prop::sample::select(vec!["abs", "sqrt", "exp"])).prop_map(|(x, f)| format!("({x}).{f}()")),
            inner.clone().prop_map(|x| format!("(-{x})")),
            (inner.clone(), inner.clone(), prop::sample::select(vec!["+", "-", "*", "/"])).prop_map(|(x, y, op)| format!("({x} {op} {y})")),
            (inner.clone(), inner.clone(), prop::sample::select(vec!["min", "max"])).prop_map(|(x, y, f)| format!("({x}).{f}({y})")),
            (cond(inner.clone()), inner.clone(), inner.clone()).prop_map(|(c, x, y)| format!("(if {c} {{ {x} }} else {{ {y} }})")),
        ]
    })
}

/// Spells the placeholders for the function form (`a`, `b`; no state, so `@x` is a constant
/// and `@k` the step) or the impl form (`self.a`, `st.x`, …).
fn spell(text: &str, impl_form: bool) -> String {
    if impl_form {
        text.replace("@a", "self.a").replace("@b", "self.b").replace("@x", "st.x").replace("@k", "st.k")
    } else {
        text.replace("@a", "a").replace("@b", "b").replace("@x", "0.75").replace("@k", "s.step()")
    }
}

fn program(impl_form: bool) -> impl Strategy<Value = String> {
    (expr(), proptest::option::of((cond(expr().boxed()), expr()))).prop_map(move |(body, early)| {
        let body = match early {
            None => body,
            Some((c, e)) => format!("if {c} {{ return {e}; }} {body}"),
        };
        let body = spell(&body, impl_form);
        if impl_form {
            format!(
                "#[walk(params(a: f32, b: f32), state(x: f32, k: u32))] impl Random {{ fn get_weight(&self, s: &Step, st: &RandomState) -> f32 {{ {body} }} }}"
            )
        } else {
            format!("#[walk] fn random(s: &Step, a: f32, b: f32) -> f32 {{ {body} }}")
        }
    })
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
