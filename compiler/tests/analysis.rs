//! Bound analysis: guard-aware bounds and estimates for the library walks, scopes, the arrays
//! the runtime must precompute, and fallbacks with their reasons.

use wayfarer_compiler::{Scope, analyze, lower_source, print};

fn run(src: &str) -> (String, String, wayfarer_compiler::WalkInfo, Vec<&'static str>) {
    let f = lower_source(src).unwrap_or_else(|e| panic!("{}", e.render(src, "t.rs")));
    let info = analyze(&f);
    let b = info.bound.map(|b| print::formula_in(&info.derived.exprs, &f.params, &f.state, b)).unwrap_or_default();
    let s = print::formula_in(&info.derived.exprs, &f.params, &f.state, info.sum_estimate);
    let arrays = info.arrays.clone();
    (b, s, info, arrays)
}

const NODE2VEC: &str = r#"
    #[walk]
    fn node2vec(s: &Step, a: f32, b: f32) -> f32 {
        if s.step() == 0 { return s.weight(); }
        if s.dst() == s.prev() { s.weight() / a }
        else if s.has_edge(s.prev(), s.dst()) { s.weight() }
        else { s.weight() / b }
    }
"#;

#[test]
fn node2vec_uses_its_branch_conditions() {
    let (b, s, info, arrays) = run(NODE2VEC);
    assert_eq!(info.paths, 4);
    assert_eq!(info.bound_scope, Scope::PerStep);
    // The first step is a plain weighted step; the return branch uses the edge back, not the row max.
    let f = lower_source(NODE2VEC).unwrap();
    let branches = wayfarer_compiler::simplify::branch_formulas(&info.derived, &f.params, &f.state, info.bound.unwrap());
    assert_eq!(branches[0], ("step() == 0u32".to_string(), "h_max(cur)".to_string()), "{branches:?}");
    assert!(b.contains("(h_back(cur, prev) / a)"), "{b}");
    // has_edge is unknown per edge: each outcome gets half of the remaining weight.
    assert!(s.contains("* 0.5f32"), "{s}");
    // The estimate skips the search for the edge back; the bound searches only when the row
    // max in its place could raise B.
    assert!(!s.contains("h_back"), "{s}");
    assert!(b.contains("(h_max(cur) / a)) } else { inf_f32 } } <= max(h_max(cur), "), "{b}");
    assert!(arrays.contains(&"max of h over N(v)") && arrays.contains(&"sum of h over N(v)"), "{arrays:?}");
}

#[test]
fn metapath_bound_and_estimate_are_exact_per_label() {
    let (b, s, info, arrays) = run(r#"
        #[walk]
        fn metapath(s: &Step, schema: [u32; 5]) -> f32 {
            if s.label() == schema[s.step() % 5] { s.weight() } else { 0.0 }
        }
    "#);
    assert!(b.contains("h_max_label(cur, schema[(step() % 5u32)])") && !b.contains("h_max(cur)"), "{b}");
    assert_eq!(s, "h_sum_label(cur, schema[(step() % 5u32)])");
    assert!(info.possible_zero);
    assert_eq!(arrays, vec!["per-label max of h over N(v)", "per-label sum of h over N(v)"]);
}

#[test]
fn deepwalk_and_constants() {
    let (b, s, info, _) = run("#[walk]\nfn deepwalk(s: &Step) -> f32 { s.weight() }\n");
    assert_eq!((b.as_str(), s.as_str()), ("h_max(cur)", "h_sum(cur)"));
    assert_eq!(info.estimate_scope, Scope::PerStep);
    let (b, _, info, _) = run("#[walk]\nfn uniform(s: &Step, c: f32) -> f32 { c * 2.0 }\n");
    assert_eq!(info.bound_scope, Scope::PerKernel, "{b}");
    assert!(info.possible_zero, "a hyperparameter can be 0");
    let (_, _, info, _) = run("#[walk]\nfn one(s: &Step) -> f32 { 1.0 }\n");
    assert!(!info.possible_zero);
}

#[test]
fn neighbor_degree_and_monotone_functions() {
    let (b, _, info, arrays) = run("#[walk]\nfn hub(s: &Step, beta: f32) -> f32 { (s.degree(s.dst()) as f32).ln().exp() * beta }\n");
    assert!(info.bound.is_some());
    assert!(b.contains("nbr_degree_max(cur)"), "{b}");
    assert!(arrays.contains(&"max neighbor degree over N(v)"), "{arrays:?}");
}

#[test]
fn what_cannot_be_bounded_falls_back_with_a_reason() {
    for (src, why) in [
        ("#[walk]\nfn w(s: &Step) -> f32 { (s.dst() % 7) as f32 }\n", "`%`"),
        ("#[walk]\nfn w(s: &Step) -> f32 { s.dst() as f32 }\n", "`dst()` is used as a number"),
        ("#[walk]\nfn w(s: &Step) -> f32 { s.weight().powf(2.0) }\n", "`powf`"),
    ] {
        let f = lower_source(src).unwrap();
        let info = analyze(&f);
        assert!(info.bound.is_none(), "{src}");
        let reason = info.fallback.unwrap();
        assert!(reason.contains(why), "{src}: {reason}");
    }
}
