//! Golden files: the IR listing and the analysis report of every library walk (`walks/*.rs`),
//! pinned in `compiler/tests/golden/` (the backends pin their own code the same way). After an
//! intended change, regenerate them with `WAYFARER_BLESS=1 cargo test -p wayfarer-compiler
//! --test golden` and review the diff.

use wayfarer_compiler::testing::{Golden, library_walks};

#[test]
fn library_walks_match_their_golden_files() {
    let mut golden = Golden::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"), "cargo test -p wayfarer-compiler --test golden");
    for (file, src) in library_walks() {
        let f = wayfarer_compiler::lower_source(&src).unwrap_or_else(|e| panic!("{}", e.render(&src, &file)));
        let info = wayfarer_compiler::analyze(&f);
        golden.check(&format!("{}.ir.txt", f.name), &wayfarer_compiler::print::listing(&f));
        golden.check(&format!("{}.analysis.txt", f.name), &wayfarer_compiler::print::analysis(&f, &info));
    }
    golden.finish();
}
