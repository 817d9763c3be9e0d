#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs, for a GPU machine without a Rust toolchain: the
# release CLI (with the wgpu backend) and the GPU test binaries (CUDA, wgpu, the adaptive rule, the broken mixture), stripped, in .devbin/, and the same packed in .devpack/devbin.tar.xz (carry .devpack/ and .gl/ to the GPU machine).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .devbin
# With the wgpu backend: scripts/gpu-check.sh also runs it on the GPU through Vulkan.
cargo build --release --locked --features wgpu --bin wayfarer
cp target/release/wayfarer .devbin/wayfarer
cargo test --release --locked --features wgpu --test gpu --test wgpu --test adaptive_rule --test structured_broken --no-run --message-format=json 2>/dev/null | python3 -c '
import json, shutil, sys
want = {"gpu": ".devbin/gpu-tests", "wgpu": ".devbin/wgpu-tests", "adaptive_rule": ".devbin/adaptive-rule-tests",
        "structured_broken": ".devbin/structured-broken-tests"}
for line in sys.stdin:
    m = json.loads(line)
    name = m.get("target", {}).get("name")
    if m.get("reason") == "compiler-artifact" and name in want and m.get("executable"):
        shutil.copy(m["executable"], want[name])'
strip .devbin/wayfarer .devbin/gpu-tests .devbin/wgpu-tests .devbin/adaptive-rule-tests .devbin/structured-broken-tests
git rev-parse --short=12 HEAD > .devbin/commit
# The Python wheel (gpu-check.sh installs it there and runs python/tests with torch and CUDA).
TOOLS="${WAYFARER_PY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wayfarer-python}/tools"
if [ ! -x "$TOOLS/bin/maturin" ]; then
    python3 -m venv "$TOOLS" && "$TOOLS/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.9,<2"
fi
rm -f .devbin/wayfarer-*.whl
"$TOOLS/bin/maturin" build --quiet --locked --profile ci -m python/Cargo.toml -o .devbin
# The H200's image has no Vulkan loader: gpu-check.sh unpacks these there (carry .gl/ too).
if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
    mkdir -p .gl /tmp/wf-apt-amd64/partial
    o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/wf-apt-amd64'
    apt-get $o update >/dev/null && (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2) || echo "warning: no .gl/ (the wgpu tests on the GPU need a Vulkan loader)"
fi
# The device tool carries at most 64 MiB and .devbin/ is about 95 MB: the same files go as one
# xz archive (about 30 MB), which gpu-check.sh unpacks into .devbin/ there. Carry .devpack/
# and .gl/. A peers' source pack (scripts/triangle-peers.sh pack ... .devbin/peers-src.tar.xz)
# made before this goes in too.
mkdir -p .devpack
python3 - <<'PY'
import glob, os, tarfile
names = ["wayfarer", "gpu-tests", "wgpu-tests", "adaptive-rule-tests", "structured-broken-tests", "commit"]
files = [os.path.join(".devbin", n) for n in names] + glob.glob(".devbin/wayfarer-*.whl") + glob.glob(".devbin/peers-src.tar.xz")
with tarfile.open(".devpack/devbin.tar.xz", "w:xz") as t:
    for f in files:
        t.add(f, arcname=os.path.basename(f))
PY
ls -la .devbin .devpack
