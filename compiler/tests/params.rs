//! Hyperparameter defaults and checks declared in the attribute, and the one parser that
//! completes and checks `name=value` pairs against them.

use wayfarer_compiler::eval::{ParamValue, Value};
use wayfarer_compiler::ir::ParamDefault;
use wayfarer_compiler::lower_source;
use wayfarer_compiler::params::{default_values, values};

fn given(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn f32s(v: &[ParamValue]) -> Vec<f32> {
    v.iter()
        .map(|x| match x {
            ParamValue::Scalar(x) => x.as_f64() as f32,
            ParamValue::Array(xs) => xs.len() as f32,
        })
        .collect()
}

const NODE2VEC: &str = "#[walk(defaults(a = 2.0, b = 0.5), check(a > 0.0, b > 0.0))]\n\
    fn node2vec(s: &Step, a: f32, b: f32) -> f32 { if s.dst() == s.prev() { s.weight() / a } else { s.weight() / b } }\n";

#[test]
fn function_form_defaults_fill_what_is_not_given_and_checks_hold() {
    let f = lower_source(NODE2VEC).unwrap();
    assert_eq!(f.params[0].default, Some(ParamDefault::Value(ParamValue::Scalar(Value::F32(2.0)))));
    assert_eq!(f.checks.len(), 2);
    assert_eq!(f32s(&values(&f, &[]).unwrap()), [2.0, 0.5]);
    assert_eq!(f32s(&values(&f, &given(&[("b", "4")])).unwrap()), [2.0, 4.0]);
    let e = values(&f, &given(&[("a", "0")])).unwrap_err();
    assert_eq!((e.name.as_str(), e.message.as_str()), ("a", "a=0 does not meet `a > 0.0`"));
    let e = values(&f, &given(&[("b", "-1")])).unwrap_err();
    assert_eq!(e.name, "b");
    for bad in ["inf", "NaN", "-inf"] {
        let e = values(&f, &given(&[("a", bad)])).unwrap_err();
        assert!(e.message.contains("not a finite number"), "{bad}: {e}");
    }
    assert!(values(&f, &given(&[("a", "x")])).unwrap_err().message.contains("is not a f32"));
    assert!(values(&f, &given(&[("c", "1")])).unwrap_err().message.contains("no such parameter; it takes a=2 (f32), b=0.5 (f32)"));
    assert_eq!(values(&f, &given(&[("a", "1"), ("a", "2")])).unwrap_err().message, "given twice");
}

#[test]
fn impl_form_defaults_arrays_and_lengths() {
    let src = "#[walk(params(alpha: f32 = 0.15, schema: [u32; 8] = [3, 1], len: u32 = schema.len()), check(alpha <= 1.0, len >= 1))]\n\
        impl W { fn get_weight(&self, s: &Step) -> f32 { if s.label() == self.schema[0] { self.alpha } else { 1.0 } } }\n";
    let f = lower_source(src).unwrap();
    assert_eq!(f.params[2].default, Some(ParamDefault::LengthOf(1)));
    let d = default_values(&f.params).unwrap();
    assert_eq!(d[1], ParamValue::Array(vec![Value::U32(3), Value::U32(1)]));
    assert_eq!(d[2], ParamValue::Scalar(Value::U32(2)));
    // The length follows the array given; given itself, it is taken as given (what a params
    // struct's full array and its own length hand back).
    let v = values(&f, &given(&[("schema", "4,5,6")])).unwrap();
    assert_eq!(v[2], ParamValue::Scalar(Value::U32(3)));
    let v = values(&f, &given(&[("schema", "4,5,6,0,0,0,0,0"), ("len", "3")])).unwrap();
    assert_eq!(v[2], ParamValue::Scalar(Value::U32(3)));
    assert!(values(&f, &given(&[("schema", "4"), ("len", "0")])).unwrap_err().message.contains("does not meet `len >= 1`"));
    assert!(values(&f, &given(&[("schema", "1,2,3,4,5,6,7,8,9")])).unwrap_err().message.contains("9 values; `schema` holds at most 8"));
    assert!(values(&f, &given(&[("alpha", "1.5")])).unwrap_err().message.contains("does not meet `alpha <= 1.0`"));
}

#[test]
fn a_parameter_without_a_default_must_be_given() {
    let f = lower_source("#[walk]\nfn w(s: &Step, a: f32) -> f32 { s.weight() * a }\n").unwrap();
    assert!(default_values(&f.params).is_none());
    assert!(values(&f, &[]).unwrap_err().message.contains("needs a value for it (-p a=...)"));
    assert_eq!(f32s(&values(&f, &given(&[("a", "3")])).unwrap()), [3.0]);
}

/// Each bad attribute is an error at its token, with the message given.
#[test]
fn bad_defaults_and_checks_are_errors_at_their_tokens() {
    let cases: &[(&str, &str)] = &[
        ("#[walk(defaults(c = 1.0))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "no hyperparameter `c`"),
        ("#[walk(defaults(a = 1u32))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "f32"),
        ("#[walk(defaults(a = 1.0 + 2.0))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "the default of `a` is a literal"),
        ("#[walk(defaults(a = 1.0), check(a > 2.0))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "the defaults fail this check: a=1"),
        ("#[walk(check(a + 1.0))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "a check is a `bool` condition"),
        ("#[walk(check(s.weight() > 0.0))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "s"),
        ("#[walk(params(a: f32))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "declares no `params(...)`"),
        ("#[walk(defaults(n = x.len()))]\nfn w(s: &Step, n: u32) -> f32 { 1.0 }\n", "counts the values of an array"),
        ("#[walk(defaults(a = [1.0, 2.0, 3.0]))]\nfn w(s: &Step, a: [f32; 2]) -> f32 { a[0] }\n", "holds 1 to 2 values, found 3"),
        ("#[walk(defaults(a = 1.0, a = 2.0))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "two defaults"),
        ("#[walk(defaults(a = 1.0))]\nimpl W { fn get_weight(&self, s: &Step) -> f32 { 1.0 } }\n", "gives defaults in `params(...)`"),
        ("#[walk(state(x: f32 = 1.0))]\nimpl W { fn get_weight(&self, s: &Step) -> f32 { 1.0 } }\n", "state fields start at zero"),
    ];
    for (src, want) in cases {
        let err = lower_source(src).unwrap_err();
        let text = err.render(src, "w.rs");
        assert!(text.contains(want), "{src}\nwanted `{want}` in:\n{text}");
        assert!(text.contains("w.rs:1:"), "points into the attribute line:\n{text}");
    }
}

#[test]
fn every_library_walk_declares_every_default() {
    for (file, src) in wayfarer_compiler::testing::library_walks() {
        let f = lower_source(&src).unwrap_or_else(|d| panic!("{}", d.render(&src, &file)));
        let d = default_values(&f.params).unwrap_or_else(|| panic!("walks/{file}.rs: a parameter without a default"));
        assert_eq!(values(&f, &[]).unwrap(), d, "{file}: the defaults pass the checks");
        assert!(!f.doc.is_empty(), "walks/{file}.rs: documented (the help text)");
    }
}

#[test]
fn length_names_the_parameter_that_sets_the_default_walk_length() {
    let src = "#[walk(defaults(schema = [1, 2, 3], len = schema.len()), length(len))]\n\
        fn m(s: &Step, schema: [u32; 8], len: u32) -> f32 { if s.label() == schema[(s.step() % len) as usize] { 1.0 } else { 0.0 } }\n";
    let f = lower_source(src).unwrap();
    assert_eq!(f.length, Some(1));
    let d = default_values(&f.params).unwrap();
    assert_eq!(wayfarer_compiler::params::default_length(&f, &d), Some(3));
    let v = values(&f, &given(&[("schema", "4,5")])).unwrap();
    assert_eq!(wayfarer_compiler::params::default_length(&f, &v), Some(2));
    assert_eq!(wayfarer_compiler::params::default_length(&lower_source(NODE2VEC).unwrap(), &d), None);
    for (src, want) in [
        ("#[walk(length(n))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "no hyperparameter `n`"),
        ("#[walk(length(a))]\nfn w(s: &Step, a: f32) -> f32 { a }\n", "must be a `u32` hyperparameter"),
    ] {
        let text = lower_source(src).unwrap_err().render(src, "w.rs");
        assert!(text.contains(want) && text.contains("w.rs:1:"), "{text}");
    }
}
