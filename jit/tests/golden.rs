//! Golden files: the Cranelift IR generated for every library walk (`walks/*.rs`), pinned in
//! `jit/tests/golden/`. After an intended change, regenerate them with
//! `WAYFARER_BLESS=1 cargo test -p wayfarer-jit --test golden` and review the diff.

use wayfarer_compiler::testing::{Golden, library_walks};

#[test]
fn library_walks_match_their_golden_clif() {
    let mut golden = Golden::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"), "cargo test -p wayfarer-jit --test golden");
    for (_, src) in library_walks() {
        let (program, info) = wayfarer_compiler::compile_source(&src).unwrap();
        // Hyperparameters are constants of the compiled code (expressions over them fold), so
        // the files pin each walk at the defaults its file declares (what `wayfarer walk <name>`
        // runs).
        let values = wayfarer_compiler::params::default_values(&program.params).expect("library walks declare every default");
        let jit = wayfarer_jit::JitWalk::compile(&program, &info, &values, true).unwrap();
        let text: String = jit.clif.iter().map(|(name, f)| format!("; {name}\n{f}\n")).collect();
        golden.check(&format!("{}.clif", program.name), &text);
    }
    golden.finish();
}
