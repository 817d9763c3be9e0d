#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs, for a GPU machine without a Rust toolchain: the
# release CLI (with the wgpu backend) and the GPU test binaries (CUDA, wgpu), stripped, in .devbin/ (carry it to the GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .devbin
# With the wgpu backend: scripts/gpu-check.sh also runs it on the GPU through Vulkan.
cargo build --release --locked --features wgpu --bin wayfarer
cp target/release/wayfarer .devbin/wayfarer
cargo test --release --locked --features wgpu --test gpu --test wgpu --no-run --message-format=json 2>/dev/null | python3 -c '
import json, shutil, sys
want = {"gpu": ".devbin/gpu-tests", "wgpu": ".devbin/wgpu-tests"}
for line in sys.stdin:
    m = json.loads(line)
    name = m.get("target", {}).get("name")
    if m.get("reason") == "compiler-artifact" and name in want and m.get("executable"):
        shutil.copy(m["executable"], want[name])'
strip .devbin/wayfarer .devbin/gpu-tests .devbin/wgpu-tests
git rev-parse --short=12 HEAD > .devbin/commit
ls -la .devbin
