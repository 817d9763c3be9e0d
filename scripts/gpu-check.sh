#!/usr/bin/env bash
# Everything that needs the GPU, in one call (the device tool runs it on the H200):
#   scripts/gpu-check.sh            # from the repository root; logs go to $OUT (or ./gpu-out)
# What it checks today (the CUDA backend is being built; see the README's feature matrix):
#   1. the device and toolchain;
#   2. the CUDA prelude's Philox streams against the CPU's pinned numbers (rng_check);
#   3. compute-sanitizer memcheck on that run;
#   4. every library walk's generated device code (compiler/tests/golden/*.cu) built by nvcc
#      for sm_90 with the prelude and a kernel that calls each function.
# It prints a short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
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
if run nvcc -O3 -arch=sm_90 -o "$BUILD/rng_check" kernels/tests/rng_check.cu && run "$BUILD/rng_check"; then
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
CHECK='extern "C" __global__ void wf_check(WfGraph g, const WfParams* p, WfWalker* ws, float* out, u64 seed) {
    WfWalker w = ws[threadIdx.x];
    WfRng rng = wf_rng(seed, threadIdx.x, 0u, WF_INIT);
    wf_init(g, *p, w, rng);
    out[3 * threadIdx.x] = wf_weight(g, *p, w, g.offsets[w.b.cur]);
    out[3 * threadIdx.x + 1] = wf_bound(g, *p, w) + wf_estimate(g, *p, w);
    wf_update(g, *p, w, rng);
    out[3 * threadIdx.x + 2] = wf_stop(g, *p, w, rng) ? 1.0f : 0.0f;
    ws[threadIdx.x] = w;
}'
ok=0; total=0
for f in compiler/tests/golden/*.cu; do
    total=$((total + 1))
    name="$(basename "$f" .cu)"
    { cat kernels/prelude.cuh; cat "$f"; echo "$CHECK"; } >"$BUILD/$name.cu"
    if run nvcc -O3 -arch=sm_90 --fmad=false -Xptxas -v -c -o "$BUILD/$name.o" "$BUILD/$name.cu"; then ok=$((ok + 1)); fi
done
row "library walks' device code, nvcc sm_90" "$([ $ok = $total ] && echo ok || echo FAIL)" "$ok/$total built"

echo
echo "GPU: $GPU"
echo "| check | result | detail |"
echo "|---|---|---|"
printf '%s\n' "${ROWS[@]}"
printf '%s\n' "${ROWS[@]}" | grep -q FAIL && exit 1
exit 0
