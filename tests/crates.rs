//! Every crate with a version can be published: the files its library includes at compile
//! time (`include_str!`, `include_bytes!`) lie inside its own directory, so the packaged crate
//! builds on its own (`cargo package` in CI checks the rest). The compiler and the proc macro
//! build without the runtime.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_crate_includes_only_its_own_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = [".", "core", "runtime", "compiler", "macros", "cuda", "jit", "wgpu"];
    let mut outside = Vec::new();
    let mut seen = 0;
    for c in crates {
        let dir = root.join(c).canonicalize().unwrap();
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for m in ["include_str!(\"", "include_bytes!(\""] {
                for (at, _) in text.match_indices(m) {
                    let rest = &text[at + m.len()..];
                    let rel = &rest[..rest.find('"').unwrap()];
                    seen += 1;
                    let target = f.parent().unwrap().join(rel);
                    // The library's macro paths (`concat!("../walks/", $file)`) name a directory.
                    let resolved = target.canonicalize().or_else(|_| target.parent().unwrap().canonicalize());
                    match resolved {
                        Ok(t) if t.starts_with(&dir) => {}
                        Ok(t) => outside.push(format!("{}: includes {}", f.display(), t.display())),
                        Err(e) => outside.push(format!("{}: `{rel}` does not resolve: {e}", f.display())),
                    }
                }
            }
        }
    }
    assert!(seen >= 10, "the scan found only {seen} includes");
    assert!(outside.is_empty(), "files included from outside their crate (not in its published package):\n{}", outside.join("\n"));
}

/// The `[dependencies]` table of a crate's manifest, one line per entry.
fn dependencies(krate: &str) -> Vec<String> {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(krate).join("Cargo.toml")).unwrap();
    let mut in_deps = false;
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps && !line.is_empty() && !line.starts_with('#') {
            out.push(line.split(['=', '.', ' ']).next().unwrap().to_string());
        }
    }
    out
}

#[test]
fn the_compiler_and_the_macro_do_not_depend_on_the_runtime() {
    let compiler = dependencies("compiler");
    assert!(compiler.contains(&"syn".to_string()) && compiler.contains(&"wayfarer-core".to_string()), "parsed {compiler:?}");
    for krate in ["compiler", "macros", "core"] {
        let deps = dependencies(krate);
        for heavy in ["wayfarer-runtime", "rayon", "memmap2"] {
            assert!(!deps.iter().any(|d| d == heavy), "{krate} depends on {heavy}: {deps:?}");
        }
    }
}

#[test]
fn compiled_programs_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    // The IR keeps its own spans, not the proc macro's, so programs compiled at run time can
    // be shared by a thread pool or held by Python objects.
    send_sync::<wayfarer_compiler::ir::Program>();
    send_sync::<wayfarer_compiler::analysis::WalkInfo>();
}
