#!/usr/bin/env bash
# The GPU's has_edge primitive (cuda/kernels/prelude.cuh: wf_lower_bound, and bitmaps for hub
# rows) measured where it is used: Node2Vec walks (has_edge(prev, dst) in every weight), with
# the hub-row bitmaps (default) and without them (binary search only). (Triangle counting has
# its own hash tables in shared memory: scripts/triangle-bench.sh.)
#   scripts/has-edge-bench.sh SCALE [OUT.md]      (uses .devbin/wayfarer or target/release/wayfarer)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
SCALE="$1"; OUT="${2:-}"
WF="${WF:-target/release/wayfarer}"
[ -x "$WF" ] || WF=.devbin/wayfarer
DIR="${BENCH_DIR:-$(mktemp -d)}"
G="$DIR/rmat$SCALE-uniform.wfg"
[ -f "$G" ] || "$WF" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights uniform -o "$G" >&2
table="| workload (R-MAT $SCALE) | has_edge | kernel ms | result |
|---|---|---|---|"
for mode in bitmaps binary; do
    budget=""; [ "$mode" = binary ] && budget=0
    # Node2Vec, weighted and unweighted, length 80, one walker per node, adaptive sampler.
    for extra in "" "--unweighted"; do
        # shellcheck disable=SC2086
        line="$(WAYFARER_HUB_BUDGET=$budget "$WF" walk node2vec --graph "$G" --backend cuda --length 80 --seed 1 -o "$DIR/w.npy" $extra 2>&1 | grep 'steps/s' | tail -1)"
        kernel="$(echo "$line" | grep -o 'kernel [0-9.]* ms' | head -1 | grep -o '[0-9.]*' || echo '?')"
        sum="$(python3 -c "import numpy as np; print(int(np.load('$DIR/w.npy').astype(np.uint64).sum()))" 2>/dev/null || echo '-')"
        echo "node2vec $extra $mode: $line" >&2
        table+="
| node2vec${extra:+ unweighted} | $mode | $kernel | walks checksum $sum |"
    done
done
echo "$table"
if [ -n "$OUT" ]; then echo "$table" >>"$OUT"; fi
