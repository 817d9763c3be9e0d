//! Golden files: the Cranelift IR generated for every library walk (`walks/*.rs`), pinned in
//! `jit/tests/golden/`. After an intended change, regenerate them with
//! `WAYFARER_BLESS=1 cargo test -p wayfarer-jit --test golden` and review the diff.

use std::path::Path;
use wayfarer_compiler::eval::{ParamValue, Value, zero_of};
use wayfarer_compiler::ir::ParamType;

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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("WAYFARER_BLESS").is_some();
    let mut walks: Vec<_> = std::fs::read_dir(root.join("../walks")).unwrap().map(|e| e.unwrap().path()).collect();
    walks.sort();
    assert!(walks.len() >= 7, "the library walks are missing");
    let mut stale = Vec::new();
    for path in walks {
        let src = std::fs::read_to_string(&path).unwrap();
        let (program, info) = wayfarer_compiler::compile_source(&src).unwrap();
        // Hyperparameters are constants of the compiled code (expressions over them fold), so
        // the files pin each walk at the CLI's default values.
        let values: Vec<ParamValue> = program.params.iter().map(|p| default_value(&program.name, &p.name, p.ty)).collect();
        let jit = wayfarer_jit::JitWalk::compile(&program, &info, &values, true).unwrap();
        let text: String = jit.clif.iter().map(|(name, f)| format!("; {name}\n{f}\n")).collect();
        let golden = root.join("tests/golden").join(format!("{}.clif", program.name));
        if bless {
            std::fs::write(&golden, &text).unwrap();
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(want) if want == text => {}
            Ok(_) => stale.push(format!("{}: differs", golden.display())),
            Err(_) => stale.push(format!("{}: missing", golden.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "{}\n\nIf the change is intended, run `WAYFARER_BLESS=1 cargo test -p wayfarer-jit --test golden` and commit the files.",
        stale.join("\n")
    );
}
