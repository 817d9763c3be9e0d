#!/usr/bin/env bash
# Walks on a graph larger than the device memory budget: R-MAT (Graph500 parameters, edge
# factor 16, seed 1, uniform weights), weighted Node2Vec (a=2, b=0.5, length 80), one walker
# per node, seed 1, on one GPU, with the whole graph in device memory and with budgets that
# force out-of-core runs (the longest rows in device memory, the rest read over the bus).
# Every run must write the same walks as the in-memory run (compared byte for byte).
#   scripts/out-of-core-bench.sh [SCALE] ["BUDGETS"]     (default 22, "1G 700M 500M 420M")
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
SCALE="${1:-22}"; BUDGETS="${2:-1G 700M 500M 420M}"
WF="${WF:-.devbin/wayfarer}"
[ -x "$WF" ] || WF=target/release/wayfarer
DIR="${BENCH_DIR:-$(mktemp -d)}"
G="$DIR/rmat$SCALE-u.wfg"
[ -f "$G" ] || "$WF" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights uniform -o "$G" >&2
echo "| budget | edges in device memory | kernel ms | vs in memory | end-to-end s | walks |"
echo "|---|---|---|---|---|---|"
base=""
for b in all $BUDGETS; do
    extra=""; [ "$b" = all ] || extra="--device-memory-budget $b"
    # shellcheck disable=SC2086
    out="$("$WF" walk node2vec --graph "$G" --backend cuda --gpus 1 --length 80 --seed 1 -o "$DIR/w-$b.npy" $extra 2>&1)"
    echo "$out" | grep -E 'estimate|steps/s' >&2
    line="$(echo "$out" | grep 'steps/s' | tail -1)"
    kernel="$(echo "$line" | grep -o 'kernel [0-9.]* ms' | grep -o '[0-9.]*')"
    e2e="$(echo "$line" | grep -o 'end-to-end [0-9.]* s' | grep -o '[0-9.]*')"
    hot="$(echo "$out" | grep -o '([0-9]* of [0-9]* edges, [0-9.]*%)' | head -1 || true)"
    [ -z "$base" ] && base="$kernel"
    same="$(cmp -s "$DIR/w-all.npy" "$DIR/w-$b.npy" && echo "identical" || echo DIFFERENT)"
    echo "| $b | ${hot:-all} | $kernel | $(python3 -c "print(f'{$kernel / $base:.2f}x')") | $e2e | $same |"
    [ "$same" != DIFFERENT ]
done
