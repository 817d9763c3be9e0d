//! Front end: the library walks lower to the expected IR, and every diagnostic points at the
//! offending token with a message saying what is allowed.

use wayfarer_compiler::{lower_source, print};

const NODE2VEC: &str = include_str!("../../walks/node2vec.rs");

const METAPATH: &str = include_str!("../../walks/metapath.rs");

const PPR2: &str = r#"
#[walk]
fn ppr2(s: &Step, gamma: f32) -> f32 {
    if s.prev() == NO_NODE {
        return 1.0;
    }
    let mut w = (1.0 - gamma) / s.degree(s.cur()) as f32;
    if s.has_edge(s.prev(), s.dst()) {
        w += gamma / s.degree(s.prev()) as f32;
    }
    w
}
"#;

const LOOPS: &str = r#"
#[walk]
fn smooth(s: &Step, k: [f32; 3]) -> f32 {
    let mut acc = 0.0;
    for i in 0..3 {
        acc += k[i] * (s.weight() + i as f32);
    }
    match s.label() {
        0 | 1 => acc.max(0.5),
        2 => acc.sqrt(),
        _ => { let t = acc.ln(); t.abs() },
    }
}
"#;

#[test]
fn library_walks_lower() {
    let f = lower_source(NODE2VEC).unwrap();
    let text = print::listing(&f);
    assert!(text.starts_with("walk node2vec(a: f32 = 2, b: f32 = 0.5) -> f32\n  check a > 0.0\n  check b > 0.0\n"), "{text}");
    assert!(text.contains("has_edge(") && text.contains("select"), "{text}");
    assert_eq!(print::formula(&f, f.result).matches("weight()").count(), 4, "{}", print::formula(&f, f.result));
    let m = lower_source(METAPATH).unwrap();
    assert!(print::listing(&m).contains("schema[%"), "{}", print::listing(&m));
    let p = lower_source(PPR2).unwrap();
    let formula = print::formula(&p, p.result);
    assert!(formula.contains("(prev() == NO_NODE)") && formula.contains("degree(prev())"), "{formula}");
    let l = lower_source(LOOPS).unwrap();
    let listing = print::listing(&l);
    assert_eq!(listing.matches("= k[%").count(), 3, "the loop is unrolled once, shared by the arms:\n{listing}");
}

/// Each case: source, expected message fragment, expected `line:column` of the caret.
const ERRORS: &[(&str, &str, &str)] = &[
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    let x = (s.weight();\n    x\n}\n", "this `(` is not closed", "3:13"),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    s.weight() }\n}\n", "unexpected closing delimiter `}`", "4:1"),
    ("#[walk]\nfn w(s: &Step, a: f32) -> f32 {\n    s.weight() * self.a\n}\n", "`self` exists only in walks written as an `impl`", "3:18"),
    (
        "#[walk]\nfn w(s: &Step) -> f32 {\n    let mut x = 1.0;\n    while x < 2.0 { x += 1.0; }\n    x\n}\n",
        "`while` is not part of the walk language",
        "4:5",
    ),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    s.neighbours()\n}\n", "`s` has no method `neighbours`", "3:7"),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    s.weight() + s.dst()\n}\n", "mismatched types: `f32` + `u32`", "3:5"),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    s.weight() * 2\n}\n", "expected `f32`, found an integer literal", "3:18"),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    let x = s.weight();\n}\n", "the weight is missing here", "4:1"),
    (
        "#[walk]\nfn w(s: &Step) -> f32 {\n    let x = s.weight();\n    x = 2.0;\n    x\n}\n",
        "cannot assign twice to immutable local `x`",
        "4:5",
    ),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    let f = |x: f32| x;\n    f(1.0)\n}\n", "a closure is not part of the walk language", "3:13"),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    println!(\"hi\");\n    1.0\n}\n", "macros cannot be used inside a walk", "3:5"),
    ("#[walk]\nfn w(s: &Step) -> f64 {\n    1.0\n}\n", "a walk returns its weight as `f32`", "2:19"),
    ("#[walk]\nfn w(a: f32) -> f32 {\n    a\n}\n", "a walk's first argument is the step", "2:6"),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    s.weight() * scale\n}\n", "cannot find `scale` in this walk", "3:18"),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    match s.label() { 0 => 1.0, 1 => 2.0 }\n}\n", "does not cover every value", "3:5"),
    (
        "#[walk]\nfn w(s: &Step) -> f32 {\n    let x = if s.step() == 0 { 1.0 };\n    x\n}\n",
        "an `if` used as a value needs an `else`",
        "3:13",
    ),
    ("#[walk]\nfn w(s: &Step, n: u32) -> f32 {\n    for i in 0..n { }\n    1.0\n}\n", "a `for` loop runs over a constant range", "3:14"),
    ("#[walk]\nfn w(s: &Step) -> f32 {\n    if s.weight() { 1.0 } else { 2.0 }\n}\n", "a condition must be `bool`, found `f32`", "3:8"),
    ("#[walk]\nfn w<T>(s: &Step) -> f32 {\n    1.0\n}\n", "a walk cannot be generic", "2:5"),
    ("#[walk]\nfn w(s: &Step, p: String) -> f32 {\n    1.0\n}\n", "unsupported hyperparameter type", "2:19"),
    (
        "#[walk]\nfn w(s: &Step) -> f32 {\n    s.has_edge(s.cur(), s.weight()) as u32 as f32\n}\n",
        "`has_edge` takes node ids (`u32`), found `f32`",
        "3:25",
    ),
];

#[test]
fn every_diagnostic_points_at_the_token() {
    for (src, msg, at) in ERRORS {
        let err = match lower_source(src) {
            Ok(_) => panic!("compiled without error:\n{src}"),
            Err(e) => e,
        };
        let text = err.render(src, "w.rs");
        assert!(text.contains(msg), "expected `{msg}` in:\n{text}");
        assert!(text.contains(&format!("w.rs:{at}\n")), "expected the caret at {at} for `{msg}`:\n{text}");
        assert!(text.contains('^'), "{text}");
    }
}

#[test]
fn one_error_per_mistake_not_a_cascade() {
    for (src, _, _) in ERRORS.iter().filter(|(src, _, _)| src.contains("while") || src.contains("self.a") || src.contains("(s.weight();")) {
        let err = lower_source(src).err().expect("an error");
        assert_eq!(err.0.len(), 1, "one error, not a cascade:\n{}", err.render(src, "w.rs"));
    }
}

#[test]
fn all_errors_are_reported_not_just_the_first() {
    let src =
        "#[walk]\nfn w(s: &Step, a: f32) -> f32 {\n    let x = s.nope();\n    let y = a + 1u32;\n    let z = unknown;\n    x + y + z\n}\n";
    let err = lower_source(src).unwrap_err();
    assert_eq!(err.0.len(), 3, "{}", err.render(src, "w.rs"));
}

/// Evaluates an impl-form routine's outputs in a walker state with given draws.
fn run_routine(
    f: &wayfarer_compiler::ir::Program,
    r: &wayfarer_compiler::ir::Routine,
    fields: &[wayfarer_compiler::eval::Value],
    draws: &[f64],
    params: &[wayfarer_compiler::eval::ParamValue],
) -> Vec<wayfarer_compiler::eval::Value> {
    use wayfarer_runtime::graph::{CsrGraph, CsrParts, Orientation};
    let g = CsrGraph::from_parts(
        CsrParts { offsets: vec![0, 1, 2, 2], targets: vec![1, 2], timestamps: Some(vec![5, 9]), ..Default::default() },
        Orientation::Directed,
    )
    .unwrap();
    let state = wayfarer_compiler::eval::State { cur: 1, prev: 0, start: 0, step: 1 };
    let ev = wayfarer_compiler::eval::Evaluator { graph: &g, params, state, edge: Some(0), props: &f.props, fields, draws };
    r.outputs.iter().map(|h| ev.eval(&r.exprs, &r.types, *h)).collect()
}

#[test]
fn impl_form_lowers_state_draws_and_restarts() {
    use wayfarer_compiler::eval::{ParamValue, Value};
    let f = lower_source(include_str!("../../walks/ppr.rs")).unwrap();
    assert_eq!(f.type_name, "Ppr");
    assert_eq!(f.name, "ppr");
    let update = f.update.as_ref().unwrap();
    assert_eq!(update.draws, 1);
    let alpha = [ParamValue::Scalar(Value::F32(0.25))];
    // A draw below alpha restarts: cur = start, no previous node; above, the walker stays.
    assert_eq!(run_routine(&f, update, &[], &[0.1], &alpha), vec![Value::U32(0), Value::U32(u32::MAX)]);
    assert_eq!(run_routine(&f, update, &[], &[0.9], &alpha), vec![Value::U32(1), Value::U32(0)]);

    let t = lower_source(include_str!("../../walks/temporal.rs")).unwrap();
    let init = t.init.as_ref().unwrap();
    assert_eq!(run_routine(&t, init, &[Value::F64(3.0)], &[], &[]), vec![Value::F64(f64::NEG_INFINITY)]);
    // update records the taken edge's time (edge 0: t = 5).
    let upd = t.update.as_ref().unwrap();
    assert_eq!(run_routine(&t, upd, &[Value::F64(1.0)], &[], &[])[0], Value::F64(5.0));
}

#[test]
fn impl_form_state_flows_through_branches_and_loops() {
    use wayfarer_compiler::eval::Value;
    let src = r#"
        #[walk(state(a: u32, b: f64))]
        impl Flow {
            fn get_weight(&self, s: &Step) -> f32 { s.weight() }
            fn update(&self, s: &mut Step, st: &mut FlowState, r: &mut StepRng) {
                for i in 0..3 {
                    if r.uniform() < 0.5 {
                        st.a += 1;
                    }
                }
                if st.a >= 2 {
                    st.b = 1.5;
                    return;
                }
                st.b = -1.0;
            }
        }
    "#;
    let f = lower_source(src).unwrap();
    let u = f.update.as_ref().unwrap();
    assert_eq!(u.draws, 3, "one draw per unrolled iteration");
    let st = [Value::U32(0), Value::F64(0.0)];
    let out = run_routine(&f, u, &st, &[0.1, 0.9, 0.2], &[]);
    assert_eq!(&out[..2], &[Value::U32(2), Value::F64(1.5)]);
    let out = run_routine(&f, u, &st, &[0.1, 0.9, 0.8], &[]);
    assert_eq!(&out[..2], &[Value::U32(1), Value::F64(-1.0)]);
}

#[test]
fn impl_form_diagnostics() {
    let errs = |src: &str| lower_source(src).unwrap_err().0.into_iter().map(|d| d.message).collect::<Vec<_>>().join("\n");
    let e = errs(
        r#"#[walk(state(x: u32))]
        impl W {
            fn get_weight(&self, s: &Step) -> f32 { s.weight() }
            fn update(&self, st: &mut WState) {
                let y = if st.x > 0 { st.x = 0; 1 } else { 2 };
            }
        }"#,
    );
    assert!(e.contains("cannot be assigned inside a value expression"), "{e}");
    let e = errs(
        r#"#[walk]
        impl W {
            fn get_weight(&self, s: &Step) -> f32 { s.weight() }
            fn stop(&self, s: &Step) -> f32 { 1.0 }
            fn update(&self, s: &mut Step) -> bool { s.teleport(1.0) }
        }"#,
    );
    assert!(e.contains("`stop` returns `bool`"), "{e}");
    assert!(e.contains("`update` returns nothing"), "{e}");
}
