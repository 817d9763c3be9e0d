//! Golden files: the Cranelift IR generated for every library walk (`walks/*.rs`), pinned in
//! `jit/tests/golden/`. After an intended change, regenerate them with
//! `WAYFARER_BLESS=1 cargo test -p wayfarer-jit --test golden` and review the diff.

use wayfarer_compiler::eval::{ParamValue, Value, zero_of};
use wayfarer_compiler::ir::ParamType;
use wayfarer_compiler::testing::{Golden, library_walks};

/// The library walks' default hyperparameters (as `wayfarer walk <name>` uses them).
fn default_value(walk: &str, param: &str, ty: ParamType) -> ParamValue {
    match (walk, param) {
        ("node2vec", "a") => ParamValue::Scalar(Value::F32(2.0)),
        ("node2vec", "b") => ParamValue::Scalar(Value::F32(0.5)),
        ("ppr2", "gamma") => ParamValue::Scalar(Value::F32(0.2)),
        ("ppr" | "ppr_stop", "alpha") => ParamValue::Scalar(Value::F32(0.15)),
        ("metapath", "schema") => ParamValue::Array((0..5).map(Value::U32).collect()),
        ("metapath", "len") => ParamValue::Scalar(Value::U32(5)),
        _ => match ty {
            ParamType::Scalar(s) => ParamValue::Scalar(zero_of(s)),
            ParamType::Array(s, n) => ParamValue::Array(vec![zero_of(s); n]),
        },
    }
}

#[test]
fn library_walks_match_their_golden_clif() {
    let mut golden = Golden::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"), "cargo test -p wayfarer-jit --test golden");
    for (_, src) in library_walks() {
        let (program, info) = wayfarer_compiler::compile_source(&src).unwrap();
        // Hyperparameters are constants of the compiled code (expressions over them fold), so
        // the files pin each walk at the CLI's default values.
        let values: Vec<ParamValue> = program.params.iter().map(|p| default_value(&program.name, &p.name, p.ty)).collect();
        let jit = wayfarer_jit::JitWalk::compile(&program, &info, &values, true).unwrap();
        let text: String = jit.clif.iter().map(|(name, f)| format!("; {name}\n{f}\n")).collect();
        golden.check(&format!("{}.clif", program.name), &text);
    }
    golden.finish();
}
