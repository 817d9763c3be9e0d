#!/usr/bin/env bash
# Walks on 1..N GPUs of this host (N = all visible): R-MAT (Graph500 parameters, edge factor
# 16, seed 1, uniform weights U[1,5), 5 labels), one walker per node, seed 1: weighted Node2Vec
# (a=2, b=0.5, length 80) and weighted MetaPath (schema 0..4, length 5), adaptive sampler.
# Every GPU count must write the same walks as one GPU (compared byte for byte).
#   scripts/walk-multigpu.sh [SCALE] [WALKS]     (default 22, "node2vec metapath"; on a multi-GPU kind)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE="${1:-22}"; WALKS="${2:-node2vec metapath}"
WF="${WF:-.devbin/wayfarer}"
[ -x "$WF" ] || WF=target/release/wayfarer
# shellcheck source=scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
DIR="${BENCH_DIR:-$(mktemp -d)}"
G="$DIR/rmat$SCALE-w.wfg"
[ -f "$G" ] || "$WF" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights uniform --labels 5 -o "$G" >&2
GPUS="$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)"
echo "| walk | GPUs | steps | kernel ms | kernel speedup | end-to-end s | walks |"
echo "|---|---|---|---|---|---|---|"
for walk in $WALKS; do
    length=80; [ "$walk" = metapath ] && length=5
    base=""
    for k in $(seq 1 "$GPUS"); do
        # Warm the PTX cache and the device once, then the measured run.
        "$WF" walk "$walk" --graph "$G" --backend cuda --gpus "$k" --length "$length" --seed 1 -q -o "$DIR/$walk-$k.npy" >/dev/null 2>&1
        line="$("$WF" walk "$walk" --graph "$G" --backend cuda --gpus "$k" --length "$length" --seed 1 -o "$DIR/$walk-$k.npy" 2>&1 | grep 'steps/s' | tail -1)"
        echo "$walk $k: $line" >&2
        kernel="$(echo "$line" | grep -o 'kernel [0-9.]* ms' | grep -o '[0-9.]*')"
        e2e="$(echo "$line" | grep -o 'end-to-end [0-9.]* s' | grep -o '[0-9.]*')"
        steps="$(echo "$line" | grep -o '[0-9]* steps' | head -1 | grep -o '[0-9]*')"
        [ -z "$base" ] && base="$kernel"
        same="$(cmp -s "$DIR/$walk-1.npy" "$DIR/$walk-$k.npy" && echo "identical to 1 GPU" || echo DIFFERENT)"
        echo "| $walk (R-MAT $SCALE) | $k | $steps | $kernel | $(python3 -c "print(f'{$base / $kernel:.2f}x')") | $e2e | $same |"
        [ "$same" != DIFFERENT ]
    done
done
