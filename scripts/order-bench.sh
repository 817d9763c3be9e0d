#!/usr/bin/env bash
# Does ordering walk queries by predicted work help the GPU walk kernel? R-MAT (Graph500
# parameters, edge factor 16, seed 1, uniform weights), one weighted Node2Vec walker (length
# 80) per node, seed 1, the same start nodes in three orders written by `wayfarer partition
# --order`: node id, degree, and the hybrid metric (degree + anonymous-walk density). The
# walks differ between orders (a query's streams follow its index), so only times compare.
#   scripts/order-bench.sh [SCALE]      (default 22; uses .devbin/wayfarer or target/release)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE="${1:-22}"
WF="${WF:-.devbin/wayfarer}"
[ -x "$WF" ] || WF=target/release/wayfarer
# shellcheck source=scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
DIR="${BENCH_DIR:-$(mktemp -d)}"
G="$DIR/rmat$SCALE-u.wfg"
[ -f "$G" ] || "$WF" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights uniform -o "$G" >&2
echo "| start order (R-MAT $SCALE, node2vec) | kernel ms (run 1) | kernel ms (run 2) | vs id order |"
echo "|---|---|---|---|"
base=""
for by in id degree hybrid; do
    "$WF" partition --graph "$G" --blocks 1024 --backend cuda --order "$DIR/order-$by.npy" --order-by "$by" 2>&1 | tail -4 >&2
    times=""
    for run in 1 2; do
        line="$("$WF" walk node2vec --graph "$G" --backend cuda --gpus 1 --length 80 --seed 1 --starts "$DIR/order-$by.npy" -o "$DIR/w.npy" 2>&1 | grep 'steps/s' | tail -1)"
        echo "$by $run: $line" >&2
        times="$times $(echo "$line" | grep -o 'kernel [0-9.]* ms' | grep -o '[0-9.]*')"
    done
    set -- $times
    best="$(python3 -c "print(min($1, $2))")"
    [ -z "$base" ] && base="$best"
    echo "| $by | $1 | $2 | $(python3 -c "print(f'{$base / $best:.2f}x')") |"
done
