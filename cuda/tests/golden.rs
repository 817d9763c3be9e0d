//! Golden files: the CUDA device functions generated for every library walk (`walks/*.rs`),
//! pinned in `cuda/tests/golden/` (`scripts/gpu-check.sh` builds each with nvcc). After an
//! intended change, regenerate them with `WAYFARER_BLESS=1 cargo test -p wayfarer-cuda --test
//! golden` and review the diff.

use wayfarer_compiler::testing::{Golden, library_walks};

#[test]
fn library_walks_match_their_golden_cuda() {
    let mut golden = Golden::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"), "cargo test -p wayfarer-cuda --test golden");
    for (file, src) in library_walks() {
        let f = wayfarer_compiler::lower_source(&src).unwrap_or_else(|e| panic!("{}", e.render(&src, &file)));
        let info = wayfarer_compiler::analyze(&f);
        golden.check(&format!("{}.cu", f.name), &wayfarer_cuda::codegen::emit_device_functions(&f, &info));
    }
    golden.finish();
}
