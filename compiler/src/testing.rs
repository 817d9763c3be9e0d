//! Generators for property tests (feature `testing`): random graphs with awkward weights,
//! random hyperparameters, and random well-typed programs in both forms of `#[walk]`. The
//! compiler's soundness tests and the backends' equivalence tests draw from the same grammar.

use proptest::prelude::*;
use wayfarer_runtime::graph::{CsrGraph, CsrParts, Orientation};

/// Edge weights: zero, tiny, huge, ordinary and Pareto-like.
pub fn weight_value() -> impl Strategy<Value = f32> {
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

/// Hyperparameters: negative, zero, tiny and large.
pub fn param_value() -> impl Strategy<Value = f32> {
    prop_oneof![Just(0.0f32), Just(-3.0), Just(-0.5), Just(1e-3), Just(0.5), Just(2.0), Just(10.0), -5.0f32..5.0]
}

/// Small directed graphs (1 to 6 nodes, up to 24 edges, labels 0..3), with dead ends.
pub fn graph() -> impl Strategy<Value = CsrGraph> {
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

/// Leaves of random programs; `@a`, `@b` are the hyperparameters and `@x` (f32) and `@k`
/// (u32) the state fields of the impl form, spelled per form by [`spell`].
pub fn leaf() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "s.weight()",
        "@a",
        "@b",
        "@x",
        "1.5f32",
        "0.0f32",
        "0.25f32",
        "(s.degree(s.dst()) as f32)",
        "(s.degree(s.cur()) as f32)",
        "(s.step() as f32)",
    ])
    .prop_map(String::from)
}

/// A condition over the walk language.
pub fn cond(inner: BoxedStrategy<String>) -> impl Strategy<Value = String> {
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
pub fn expr() -> impl Strategy<Value = String> {
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
pub fn spell(text: &str, impl_form: bool) -> String {
    if impl_form {
        text.replace("@a", "self.a").replace("@b", "self.b").replace("@x", "st.x").replace("@k", "st.k")
    } else {
        text.replace("@a", "a").replace("@b", "b").replace("@x", "0.75f32").replace("@k", "s.step()")
    }
}

/// A random program: `#[walk] fn random(s, a, b)` or the impl form `Random` with state
/// fields `x: f32`, `k: u32`.
pub fn program(impl_form: bool) -> impl Strategy<Value = String> {
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
