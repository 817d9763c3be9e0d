#!/usr/bin/env bash
# Everything that needs the GPU, in one call (the device tool runs it on the H200):
#   scripts/gpu-check.sh            # from the repository root; logs go to $OUT (or ./gpu-out)
# The GPU machine may have no Rust toolchain: then run scripts/gpu-build.sh here first and
# carry .devpack/ (the CLI, the GPU test binaries and the wheel, one archive that is unpacked
# into .devbin/ here) and .gl/; with cargo, this builds them itself.
# What it checks:
#   1. the device and toolchain;
#   2. the CUDA prelude's Philox streams against the CPU's pinned numbers (rng_check);
#   3. compute-sanitizer memcheck on that run and on a small walk;
#   4. every library walk's generated device code (cuda/tests/golden/*.cu) built by nvcc
#      for sm_90 with the prelude and a kernel that calls each function;
#   5. the GPU test suite (tests/gpu.rs: exactness of every GPU sampler, CPU = GPU walks), and
#      the wgpu backend's (tests/wgpu.rs) through the NVIDIA Vulkan driver (carry .gl/);
#   6. the benchmarks: walks (scripts/gpu-bench.sh) and neighbor sampling
#      (scripts/sample-bench.sh), triangle counting (scripts/triangle-bench.sh); BENCH=0
#      skips them, BENCH=sample runs the last two, BENCH=triangles the last one (with the
#      has_edge benchmark, scripts/has-edge-bench.sh), BENCH=wgpu the wgpu-vs-CUDA cells
#      (scripts/wgpu-bench.sh).
# It prints a short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -f .devpack/devbin.tar.xz ]; then
    mkdir -p .devbin
    python3 -c "import tarfile; tarfile.open('.devpack/devbin.tar.xz').extractall('.devbin')"
fi
OUT="${OUT:-gpu-out}"
mkdir -p "$OUT"
LOG="$OUT/gpu-check.log"
: >"$LOG"
declare -a ROWS
row() { ROWS+=("| $1 | $2 | $3 |"); }
run() { echo "\$ $*" >>"$LOG"; "$@" >>"$LOG" 2>&1; }

echo "== device" | tee -a "$LOG"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$LOG"
nvcc --version | tail -2 | tee -a "$LOG"
GPU="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"

BUILD="$(mktemp -d)"
echo "== rng_check" | tee -a "$LOG"
if run nvcc -O3 -arch=sm_90 -o "$BUILD/rng_check" cuda/kernels/tests/rng_check.cu && run "$BUILD/rng_check"; then
    row "Philox streams (prelude vs CPU pins)" ok "20/20 words"
else
    row "Philox streams (prelude vs CPU pins)" FAIL "see $LOG"
fi
echo "== memcheck" | tee -a "$LOG"
if command -v compute-sanitizer >/dev/null && run compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/rng_check"; then
    row "compute-sanitizer memcheck (rng_check)" ok "0 errors"
else
    row "compute-sanitizer memcheck (rng_check)" FAIL "see $LOG"
fi

echo "== generated device code" | tee -a "$LOG"
ok=0; total=0
for f in cuda/tests/golden/*.cu; do
    total=$((total + 1))
    name="$(basename "$f" .cu)"
    { cat cuda/kernels/prelude.cuh; cat "$f"; cat cuda/kernels/tests/check_kernel.cu; } >"$BUILD/$name.cu"
    if run nvcc -O3 -arch=sm_90 --fmad=false -Xptxas -v -c -o "$BUILD/$name.o" "$BUILD/$name.cu"; then ok=$((ok + 1)); fi
done
row "library walks' device code, nvcc sm_90" "$([ $ok = $total ] && echo ok || echo FAIL)" "$ok/$total built"

# shellcheck source=scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
if [ ! -x .devbin/gpu-tests ] && command -v cargo >/dev/null; then scripts/gpu-build.sh >>"$LOG" 2>&1; fi
export WAYFARER_CACHE_DIR="$BUILD/cache" WAYFARER_REQUIRE_GPU=1

echo "== GPU tests" | tee -a "$LOG"
if [ -x .devbin/gpu-tests ]; then
    if run .devbin/gpu-tests --test-threads 1; then
        row "GPU tests (exactness, CPU = GPU, batches)" ok "$(grep -o '[0-9]* passed' "$LOG" | tail -1)"
    else
        row "GPU tests (exactness, CPU = GPU, batches)" FAIL "see $LOG"
    fi
    echo "== memcheck on a walk" | tee -a "$LOG"
    run .devbin/wayfarer gen rmat --scale 10 --edge-factor 8 --seed 1 --weights pareto:1 --labels 5 -o "$BUILD/small.wfg"
    if command -v compute-sanitizer >/dev/null && run compute-sanitizer --tool memcheck --error-exitcode 9 .devbin/wayfarer walk node2vec --graph "$BUILD/small.wfg" --backend cuda --length 5 -q -o "$BUILD/small.npy"; then
        row "compute-sanitizer memcheck (node2vec walk)" ok "0 errors"
    else
        row "compute-sanitizer memcheck (node2vec walk)" FAIL "see $LOG"
    fi
else
    row "GPU tests" FAIL "no .devbin/gpu-tests: run scripts/gpu-build.sh where cargo is"
fi

# The wgpu backend through the NVIDIA Vulkan driver. The machine's image may lack the Vulkan
# loader and libglvnd (the NVIDIA ICD, libGLX_nvidia, needs libGLdispatch): carry Debian's
# libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 in .gl/ (see the device
# notes) and they are unpacked here.
echo "== wgpu (Vulkan)" | tee -a "$LOG"
if ls .gl/*.deb >/dev/null 2>&1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
if [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && [ -z "${VK_DRIVER_FILES:-}" ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
if [ -x .devbin/wgpu-tests ]; then
    if WAYFARER_REQUIRE_WGPU=1 run .devbin/wgpu-tests --test-threads 1 --nocapture; then
        row "wgpu tests on the GPU (exactness, CPU = wgpu)" ok "$(grep -o '[0-9]* passed' "$LOG" | tail -1), $(grep -o 'wgpu adapter: [^(]*' "$LOG" | head -1)"
    else
        row "wgpu tests on the GPU" FAIL "see $LOG"
    fi
else
    row "wgpu tests" FAIL "no .devbin/wgpu-tests: run scripts/gpu-build.sh where cargo is"
fi

echo "== the adaptive rule's table on every backend" | tee -a "$LOG"
if [ -x .devbin/adaptive-rule-tests ]; then
    if WAYFARER_REQUIRE_WGPU=1 run .devbin/adaptive-rule-tests --test-threads 1 --nocapture; then
        row "adaptive rule: engine, Cranelift, CUDA, WGSL agree with the table" ok "$(grep -o '[0-9]* passed' "$LOG" | tail -1)"
    else
        row "adaptive rule table" FAIL "see $LOG"
    fi
else
    row "adaptive rule table" FAIL "no .devbin/adaptive-rule-tests: run scripts/gpu-build.sh where cargo is"
fi

echo "== a broken structured mixture fails the chi-square suite (CPU and CUDA)" | tee -a "$LOG"
if [ -x .devbin/structured-broken-tests ]; then
    if run .devbin/structured-broken-tests --test-threads 1 --nocapture; then
        row "broken mixture rejected, correct one passes (CPU, CUDA)" ok "$(grep -o '[0-9]* passed' "$LOG" | tail -1)"
    else
        row "broken mixture test" FAIL "see $LOG"
    fi
else
    row "broken mixture test" FAIL "no .devbin/structured-broken-tests: run scripts/gpu-build.sh where cargo is"
fi

echo "== the Python package with torch and CUDA tensors" | tee -a "$LOG"
WHEEL="$(ls .devbin/wayfarer-*.whl 2>/dev/null | head -1)"
if [ -n "$WHEEL" ]; then
    PYSITE="$BUILD/py"
    if run python3 -m pip install -q --no-deps --target "$PYSITE" "$WHEEL" \
        && PYTHONPATH="$PYSITE" WAYFARER_CLI="$PWD/.devbin/wayfarer" run python3 -m pytest -q -p no:cacheprovider -rs python/tests; then
        row "Python package (python/tests, torch CPU + CUDA)" ok "$(grep -o '[0-9]* passed[^=]*' "$LOG" | tail -1)"
        if PYTHONPATH="$PYSITE" run python3 examples/python/graphsage.py --epochs 5; then
            row "examples/python/graphsage.py (NeighborLoader on the GPU)" ok "$(grep -o 'test accuracy [0-9.]*' "$LOG" | tail -1)"
        else
            row "examples/python/graphsage.py" FAIL "see $LOG"
        fi
    else
        row "Python package tests" FAIL "see $LOG"
    fi
else
    row "Python package tests" FAIL "no .devbin/wayfarer-*.whl: run scripts/gpu-build.sh where cargo is"
fi

echo "== wayfarer emit" | tee -a "$LOG"
# Every library walk and a user program (a has_edge mixture on Pareto weights, where a
# contracted a*b + c once broke the bound), each built with the command `emit` prints, must
# write the CLI's walks byte for byte (with --table-budget 0 where emit says so).
if [ -x .devbin/wayfarer ]; then
    E="$BUILD/emit"; mkdir -p "$E"
    cat >"$E/mix.rs" <<'WALK'
#[walk]
fn mix(s: &Step, g: f32) -> f32 {
    let h = s.weight();
    if s.step() == 0 { h } else if s.has_edge(s.prev(), s.dst()) { (1.0 - g) * h + 3.0 * g } else { (1.0 - g) * h }
}
WALK
    run .devbin/wayfarer gen rmat --scale 16 --edge-factor 16 --seed 3 --weights uniform --labels 5 -o "$E/g.wfg" -q
    run .devbin/wayfarer gen ba --nodes 300 --m 4 --seed 5 --weights pareto:1 -o "$E/p.wfg" -q
    emitted=0; failed=""
    for spec in "deepwalk|g" "node2vec|g" "metapath|g" "ppr2|g" "ppr|g" "ppr-stop|g" "anonymous|g" "$E/mix.rs -p g=0.3|p"; do
        walk="${spec%|*}"; graph="$E/${spec#*|}.wfg"; name="$(basename "${walk%% *}" .rs)"
        # shellcheck disable=SC2086
        if .devbin/wayfarer emit $walk -o "$E/$name.cu" 2>"$E/$name.emit" && cat "$E/$name.emit" >>"$LOG" \
            && cmd="$(grep -o 'build with `[^`]*`' "$E/$name.emit" | sed 's/^build with `//; s/`$//')" \
            && bin="${cmd##* -o }" \
            && (cd "$E" && run $cmd) \
            && run "$E/$bin" "$graph" "$E/$name-standalone.npy" 24 11 \
            && tables="$(grep -o -m1 -- '--table-budget 0' "$E/$name.emit" || true)" \
            && run .devbin/wayfarer walk $walk --graph "$graph" --backend cuda --length 24 --seed 11 --ids internal $tables -q -o "$E/$name-cli.npy" \
            && run python3 -c "import numpy as np, sys; a = np.load('$E/$name-standalone.npy'); b = np.load('$E/$name-cli.npy'); print('$name', a.shape, b.shape); sys.exit(0 if a.shape == b.shape and (a.astype('u8') == b.astype('u8')).all() else 1)"; then
            emitted=$((emitted + 1))
        else
            failed="$failed $name"
        fi
    done
    if [ -z "$failed" ]; then
        row "wayfarer emit: every library walk + a user program, built as printed" ok "$emitted walks equal the CLI's (length 24)"
    else
        row "wayfarer emit: built as printed, walks = CLI" FAIL "differ or failed:$failed (see $LOG)"
    fi
fi

echo "== walk kernel resources" | tee -a "$LOG"
for f in "$BUILD"/cache/ptx/node2vec-*.cu; do
    [ -e "$f" ] || continue
    nvcc -arch=sm_90 -std=c++17 --fmad=false -Xptxas -v -cubin -o "$BUILD/k.cubin" "$f" >"$BUILD/ptxas.txt" 2>&1
    cat "$BUILD/ptxas.txt" >>"$LOG"
    # The module also holds the preprocessing kernels: report the walk kernel's own line.
    regs="$(awk '/entry function .wf_walk/{f=1} f && /Used [0-9]+ registers/{print; exit}' "$BUILD/ptxas.txt" | grep -o 'Used [0-9]* registers.*')"
    row "node2vec walk kernel (ptxas)" ok "$regs"
    break
done

# BENCH=wgpu: only the wgpu-vs-CUDA cells.
if [ "${BENCH:-1}" = wgpu ] || [ "${BENCH:-1}" = 1 ]; then
    echo "== wgpu benchmark" | tee -a "$LOG"
    if BENCH_DIR="$BUILD" run scripts/wgpu-bench.sh "${WGPU_SCALE:-20}" "$OUT/wgpu-bench.md"; then
        row "wgpu vs CUDA (R-MAT ${WGPU_SCALE:-20} node2vec, metapath)" ok "$OUT/wgpu-bench.md"
    else
        row "wgpu benchmark" FAIL "see $LOG"
    fi
fi
if [ "${BENCH:-1}" != 0 ] && [ "${BENCH:-1}" != sample ] && [ "${BENCH:-1}" != triangles ] && [ "${BENCH:-1}" != wgpu ] && [ -x .devbin/wayfarer ]; then
    echo "== benchmark" | tee -a "$LOG"
    if run scripts/gpu-bench.sh "$OUT/gpu-bench.md"; then row "benchmark" ok "$OUT/gpu-bench.md"; else row "benchmark" FAIL "see $LOG"; fi
fi
# Neighbor sampling (the grouped kernel vs one warp per node vs this machine's CPU cores)
# and triangle counting (GPU vs CPU); BENCH=sample runs only these two.
if [ "${BENCH:-1}" != 0 ] && [ "${BENCH:-1}" != triangles ] && [ "${BENCH:-1}" != wgpu ] && [ -x .devbin/wayfarer ]; then
    echo "== sampling benchmark" | tee -a "$LOG"
    if BENCH_DIR="$BUILD" run scripts/sample-bench.sh "${SAMPLE_SCALE:-22}" cpu,cuda-warp,cuda-grouped "$OUT/sample-bench.md"; then
        row "sampling benchmark (R-MAT ${SAMPLE_SCALE:-22})" ok "$OUT/sample-bench.md"
    else
        row "sampling benchmark" FAIL "see $LOG"
    fi
    # Issue 27's epoch (every node of R-MAT 20, fanouts 25,10), then the feature store's
    # gathers and a GraphSAGE epoch through the Python package (needs the wheel and torch).
    if SEEDS=all FANOUTS=25,10 BENCH_DIR="$BUILD" run scripts/sample-bench.sh 20 cpu,cuda-grouped "$OUT/sample-bench.md"; then
        row "sampling benchmark (every node of R-MAT 20)" ok "$OUT/sample-bench.md"
    else
        row "sampling benchmark (every node)" FAIL "see $LOG"
    fi
    if [ -n "${PYSITE:-}" ] && [ -d "$PYSITE" ]; then
        G22="$BUILD/rmat${SAMPLE_SCALE:-22}.wfg"
        [ -f "$G22" ] || run .devbin/wayfarer gen rmat --scale "${SAMPLE_SCALE:-22}" --edge-factor 16 --seed 1 -o "$G22"
        if PYTHONPATH="$PYSITE" run python3 bench/feature_gather.py "$G22" && PYTHONPATH="$PYSITE" run python3 bench/graphsage_epoch.py "$G22"; then
            row "feature gathers and a GraphSAGE epoch (R-MAT ${SAMPLE_SCALE:-22})" ok "see $LOG"
        else
            row "feature gathers / GraphSAGE epoch" FAIL "see $LOG"
        fi
    fi
fi
if [ "${BENCH:-1}" != 0 ] && [ "${BENCH:-1}" != wgpu ] && [ -x .devbin/wayfarer ]; then
    echo "== triangle benchmark" | tee -a "$LOG"
    if BENCH_DIR="$BUILD" run scripts/triangle-bench.sh "wordnet ${TRI_SCALE:-22}" wayfarer-cpu,wayfarer-cuda,wayfarer-cpu-per-node,wayfarer-cuda-per-node,wayfarer-cpu-mask,wayfarer-cuda-mask "$OUT/triangle-bench.md" \
        && BENCH_DIR="$BUILD" run scripts/triangle-bench.sh "${TRI_BIG_SCALE:-24}" wayfarer-cuda,wayfarer-cuda-per-node,wayfarer-cuda-mask "$OUT/triangle-bench.md"; then
        row "triangle benchmark (R-MAT ${TRI_SCALE:-22}, ${TRI_BIG_SCALE:-24})" ok "$OUT/triangle-bench.md"
    else
        row "triangle benchmark" FAIL "see $LOG"
    fi
    echo "== has_edge benchmark" | tee -a "$LOG"
    if BENCH_DIR="$BUILD" run scripts/has-edge-bench.sh "${TRI_SCALE:-22}" "$OUT/has-edge-bench.md"; then
        row "has_edge: bitmaps vs binary search (node2vec, triangles)" ok "$OUT/has-edge-bench.md"
    else
        row "has_edge benchmark" FAIL "see $LOG"
    fi
fi

echo
echo "GPU: $GPU"
echo "| check | result | detail |"
echo "|---|---|---|"
printf '%s\n' "${ROWS[@]}"
printf '%s\n' "${ROWS[@]}" | grep -q FAIL && exit 1
exit 0
