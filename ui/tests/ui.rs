//! UI tests: each `#[walk]` diagnostic, compiled for real, with its exact rustc output pinned
//! in `tests/ui/*.stderr`. Regenerate after an intended change with
//! `TRYBUILD=overwrite cargo test -p wayfarer-ui-tests` and review the diff.
//!
//! rustc's wording drifts between releases, so the pinned output is checked on the toolchain
//! it was recorded with (`PINNED_RUSTC`) and the test says so and skips on any other.
//!
//! rustc's notes also list the trait impls of every crate in the build, and the `wgpu`
//! feature brings one more (`zerocopy`, through naga's `half`): the cases live in a package of
//! their own, whose dev-dependency on wayfarer has the default features, so the pinned output
//! is the same whatever features the workspace build turns on.

const PINNED_RUSTC: &str = "rustc 1.95.";

#[test]
fn walk_diagnostics() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if !version.starts_with(PINNED_RUSTC) {
        eprintln!("skipping the UI tests: their output is pinned for {PINNED_RUSTC}x, this is {}", version.trim());
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
