#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs, for a GPU machine without a Rust toolchain: the
# release CLI and the GPU test binary, stripped, in .devbin/ (carry it to the GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .devbin
cargo build --release --locked --bin wayfarer
cp target/release/wayfarer .devbin/wayfarer
bin="$(cargo test --release --locked --test gpu --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "gpu" and m.get("executable"):
        print(m["executable"])')"
cp "$bin" .devbin/gpu-tests
strip .devbin/wayfarer .devbin/gpu-tests
git rev-parse --short=12 HEAD > .devbin/commit
ls -la .devbin
