//! Random programs from the walk language's grammar (both forms, state fields included): the
//! Cranelift-compiled weight, bound and estimate equal the reference interpreter's, bit for
//! bit, on random graphs, walker states, hyperparameters and state values.

use proptest::prelude::*;
use wayfarer_compiler::eval::{Evaluator, ParamValue, State, Value};
use wayfarer_compiler::testing::{param_value, program};
use wayfarer_jit::{JitState, JitWalk};
use wayfarer_runtime::graph::NO_NODE;
use wayfarer_runtime::testing::graph;
use wayfarer_runtime::{Bound, Ctx, NodeStats, Walk, Walker};

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn jit_equals_the_interpreter_on_random_programs((impl_form, src) in any::<bool>().prop_flat_map(|f| program(f).prop_map(move |s| (f, s))), g in graph(), cur in any::<prop::sample::Index>(), prev in proptest::option::of(any::<prop::sample::Index>()), step in 0u32..4, a in param_value(), b in param_value(), x in param_value(), k in 0u32..3) {
        let (program, info) = wayfarer_compiler::compile_source(&src).unwrap();
        let params = vec![ParamValue::Scalar(Value::F32(a)), ParamValue::Scalar(Value::F32(b))];
        let jit = JitWalk::compile(&program, &info, &params, true).unwrap();
        let stats = NodeStats::compute(&g, jit.requirements(), true);
        let ctx = Ctx::new(&g, &stats);
        let n = g.num_nodes();
        let state = State { cur: cur.index(n) as u32, prev: prev.map_or(NO_NODE, |p| p.index(n) as u32), start: 0, step };
        let fields = if impl_form { vec![Value::F32(x), Value::U32(k)] } else { Vec::new() };
        let mut w = Walker::<JitState>::new(state.cur);
        w.prev = state.prev;
        w.step = step;
        if impl_form {
            w.state.0[0] = x.to_bits() as u64;
            w.state.0[1] = k as u64;
        }
        let eval = |edge: Option<usize>| Evaluator { graph: &g, params: &params, state, edge, props: &program.props, fields: &fields, draws: &[] };
        for e in g.row(state.cur) {
            let Value::F32(want) = eval(Some(e)).eval(&program.exprs, &program.types, program.result) else { panic!("f32") };
            let got = jit.weight(&ctx, &w, e);
            prop_assert!(same(want, got), "weight: interpreter {} JIT {} for\n{}\n(edge {}, {:?})", want, got, src, e, state);
        }
        if let Some(bh) = info.bound {
            let Value::F32(want) = eval(None).eval(&info.derived.exprs, &info.derived.types, bh) else { panic!("f32") };
            let Bound::Max(got) = jit.bound(&ctx, &w) else { panic!("bounded") };
            prop_assert!(same(want, got), "bound: interpreter {} JIT {} for\n{}", want, got, src);
        }
        let Value::F32(want) = eval(None).eval(&info.derived.exprs, &info.derived.types, info.sum_estimate) else { panic!("f32") };
        let got = jit.sum_estimate(&ctx, &w);
        prop_assert!(same(want, got), "estimate: interpreter {} JIT {} for\n{}", want, got, src);
        // The combined per-step call gives the same B, Ŝ and dead-end verdict.
        let both = jit.step_estimates(&ctx, &w).unwrap();
        prop_assert!(same(both.estimate, got), "step_estimates Ŝ {} vs {} for\n{}", both.estimate, got, src);
        match (both.bound, jit.bound(&ctx, &w)) {
            (Bound::Max(x), Bound::Max(y)) => prop_assert!(same(x, y), "step_estimates B {} vs {} for\n{}", x, y, src),
            (x, y) => prop_assert!(x == y, "step_estimates B {:?} vs {:?}", x, y),
        }
        prop_assert!(both.dead_end == jit.dead_end(&ctx, &w));
    }
}
