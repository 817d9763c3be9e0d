//! Generators for property tests (feature `testing`): random hyperparameters and random
//! well-typed programs in both forms of `#[walk]` (random graphs are the runtime's
//! `testing::graph`). The compiler's soundness tests and the backends' equivalence tests draw
//! from the same grammar.

use proptest::prelude::*;

/// Hyperparameters: negative, zero, tiny and large.
pub fn param_value() -> impl Strategy<Value = f32> {
    prop_oneof![Just(0.0f32), Just(-3.0), Just(-0.5), Just(1e-3), Just(0.5), Just(2.0), Just(10.0), -5.0f32..5.0]
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

/// One golden-file harness for every stage (IR, analysis, CUDA, Cranelift IR, WGSL): each
/// stage's test calls [`Golden::check`] per file and [`Golden::finish`] last. With
/// `WAYFARER_BLESS=1` the files are (re)written instead of compared.
pub struct Golden {
    dir: std::path::PathBuf,
    bless: bool,
    command: &'static str,
    stale: Vec<String>,
}

impl Golden {
    /// Golden files in `dir`; `command` is the test command that regenerates them.
    pub fn new(dir: impl Into<std::path::PathBuf>, command: &'static str) -> Self {
        Golden { dir: dir.into(), bless: std::env::var_os("WAYFARER_BLESS").is_some(), command, stale: Vec::new() }
    }

    /// Compares `text` with the golden file `name` (or writes it when blessing).
    pub fn check(&mut self, name: &str, text: &str) {
        let path = self.dir.join(name);
        if self.bless {
            std::fs::create_dir_all(&self.dir).expect("the golden directory");
            std::fs::write(&path, text).expect("the golden file");
            return;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == text => {}
            Ok(want) => self.stale.push(format!("{}: differs\n--- golden\n{want}\n+++ now\n{text}", path.display())),
            Err(_) => self.stale.push(format!("{}: missing", path.display())),
        }
    }

    /// Fails with every stale file and the command that regenerates them.
    pub fn finish(self) {
        assert!(
            self.stale.is_empty(),
            "{}\n\nIf the change is intended, run `WAYFARER_BLESS=1 {}` and review and commit the files.",
            self.stale.join("\n\n"),
            self.command
        );
    }
}

/// The library walks (`walks/*.rs`) as `(file stem, source)`, sorted by name.
pub fn library_walks() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../walks");
    let mut v: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("the walks/ directory")
        .map(|e| e.expect("a walks/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).expect("a walk's source")))
        .collect();
    v.sort();
    assert!(v.len() >= 7, "the library walks are missing from {}", dir.display());
    v
}
