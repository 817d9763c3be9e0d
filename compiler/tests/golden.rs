//! Golden files: the IR listing, the analysis report and the generated CUDA device functions
//! of every library walk (`walks/*.rs`) are pinned in `compiler/tests/golden/`. After an intended change, regenerate them with
//! `WAYFARER_BLESS=1 cargo test -p wayfarer-compiler --test golden` and review the diff.

use std::path::Path;

#[test]
fn library_walks_match_their_golden_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("WAYFARER_BLESS").is_some();
    let mut walks: Vec<_> = std::fs::read_dir(root.join("../walks")).unwrap().map(|e| e.unwrap().path()).collect();
    walks.sort();
    assert!(walks.len() >= 4, "the library walks are missing");
    let mut stale = Vec::new();
    for path in walks {
        let src = std::fs::read_to_string(&path).unwrap();
        let f = wayfarer_compiler::lower_source(&src).unwrap_or_else(|e| panic!("{}", e.render(&src, &path.display().to_string())));
        let info = wayfarer_compiler::analyze(&f);
        for (ext, text) in [
            ("ir.txt", wayfarer_compiler::print::listing(&f)),
            ("analysis.txt", wayfarer_compiler::print::analysis(&f, &info)),
            ("cu", wayfarer_compiler::cuda_backend::emit_device_functions(&f, &info)),
        ] {
            let golden = root.join("tests/golden").join(format!("{}.{ext}", f.name));
            if bless {
                std::fs::write(&golden, &text).unwrap();
                continue;
            }
            match std::fs::read_to_string(&golden) {
                Ok(want) if want == text => {}
                Ok(want) => stale.push(format!("{}: differs\n--- golden\n{want}\n+++ now\n{text}", golden.display())),
                Err(_) => stale.push(format!("{}: missing", golden.display())),
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{}\n\nIf the change is intended, run `WAYFARER_BLESS=1 cargo test -p wayfarer-compiler --test golden` and commit the files.",
        stale.join("\n\n")
    );
}
