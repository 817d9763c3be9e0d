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

# NVRTC (no GPU needed): the CUDA backend's generated code is compiled to PTX for sm_90 in the
# tests. Pinned to 13.0.x: newer NVRTC emits PTX that the CUDA 13.0 driver may reject.
NVRTC_DIR="${WAYFARER_NVRTC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/wayfarer-nvrtc}"
if [ ! -e "$NVRTC_DIR/nvidia/cu13/lib/libnvrtc.so.13" ]; then
    echo "== installing NVRTC 13.0.88 into $NVRTC_DIR"
    python3 -m pip install -q --disable-pip-version-check --target "$NVRTC_DIR" "nvidia-cuda-nvrtc==13.0.88"
fi
export LD_LIBRARY_PATH="$NVRTC_DIR/nvidia/cu13/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export WAYFARER_REQUIRE_NVRTC=1

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
