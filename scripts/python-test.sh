#!/usr/bin/env bash
# The Python package's tests: builds the wheel (maturin), installs it into a fresh virtual
# environment with numpy, scipy, networkx, pytest and torch, and runs python/tests. Called by
# scripts/test.sh; runs alone too. torch comes from PyPI (its Linux wheel carries CUDA
# libraries, about 3 GB, kept in the pip cache below); without a GPU its tests run on the CPU
# and the CUDA ones skip (scripts/gpu-check.sh runs them on the GPU machine).
#
#   WAYFARER_PY_PROFILE   cargo profile of the wheel (default `ci`: opt-level 1, quick to build;
#                         `release` is what `pip install ./python` builds)
#   WAYFARER_PY_CACHE     where the build tools and the test dependencies are kept between runs
#                         (default ~/.cache/wayfarer-python)
#   WAYFARER_PY_TORCH     0: leave torch out (its tests skip)
set -euo pipefail
cd "$(dirname "$0")/.."

PROFILE="${WAYFARER_PY_PROFILE:-ci}"
CACHE="${WAYFARER_PY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wayfarer-python}"
TOOLS="$CACHE/tools"
PY="${PYTHON:-python3}"

# The build tool, in its own environment (kept between runs).
if [ ! -x "$TOOLS/bin/maturin" ]; then
    echo "== installing maturin into $TOOLS"
    "$PY" -m venv "$TOOLS"
    "$TOOLS/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.9,<2"
fi

echo "== format and lints of the extension"
cargo fmt --manifest-path python/Cargo.toml -- --check

echo "== building the wheel (profile $PROFILE, warnings are errors)"
WHEELS="$(mktemp -d)"
VENV="$(mktemp -d)"
trap 'rm -rf "$WHEELS" "$VENV"' EXIT
# Locked: the extension's own lock file (python/Cargo.lock) pins pyo3, numpy and the rest.
RUSTFLAGS="${RUSTFLAGS:-} -D warnings" "$TOOLS/bin/maturin" build --quiet --locked --profile "$PROFILE" -m python/Cargo.toml -o "$WHEELS" \
    --interpreter "$(command -v "$PY")"

echo "== installing it into a fresh virtual environment"
"$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install -q --disable-pip-version-check --cache-dir "$CACHE/pip")
"${PIP[@]}" "numpy" "scipy" "networkx" "pytest"
if [ "${WAYFARER_PY_TORCH:-1}" != 0 ]; then
    echo "== installing torch (PyPI, cached in $CACHE/pip)"
    "${PIP[@]}" "torch>=2.4"
fi
"${PIP[@]}" --no-deps "$WHEELS"/wayfarer-*.whl

# The CLI of this checkout, for the tests that compare the package's walks with the CLI's.
CLI="${WAYFARER_CLI:-${CARGO_TARGET_DIR:-target}/debug/wayfarer}"
if [ ! -x "$CLI" ]; then
    echo "== building the CLI for the comparisons"
    cargo build --quiet --locked --bin wayfarer
fi

echo "== python tests"
WAYFARER_CLI="$(realpath "$CLI")" "$VENV/bin/python" -m pytest -q -p no:cacheprovider python/tests
