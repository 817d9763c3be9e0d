#!/usr/bin/env bash
# The test command: everything a fresh clone needs, then every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    echo "cargo not found: install Rust (https://rustup.rs) first" >&2
    exit 1
fi
# rustfmt ships with rustup's default profile; install it if this toolchain lacks it.
if ! cargo fmt --version >/dev/null 2>&1; then
    rustup component add rustfmt
fi

echo "== format"
cargo fmt --all -- --check

echo "== build (all targets, warnings are errors)"
RUSTFLAGS="${RUSTFLAGS:-} -D warnings" cargo build --workspace --all-targets --locked

echo "== tests"
RUSTFLAGS="${RUSTFLAGS:-} -D warnings" cargo test --workspace --all-targets --locked

echo "== doc tests"
RUSTFLAGS="${RUSTFLAGS:-} -D warnings" cargo test --workspace --doc --locked

echo "== docs build without broken links"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

echo "all tests passed"
