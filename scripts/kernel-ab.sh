#!/usr/bin/env bash
# wayfarer binaries side by side on the same GPU in one call (to bisect a kernel-time change):
# each generates R-MAT scale ${SCALE:-20} (edge factor 16, U[1,5) weights, labels U{0..4},
# seed 1) in its own format, then Node2Vec (length 80) and MetaPath (length 5) run on CUDA
# with the adaptive sampler, seed 1, one query per vertex, the binaries taking turns for
# ${REPEATS:-3} rounds. Prints one row per run with the kernel time from the summary line.
#   scripts/kernel-ab.sh BIN... > ab.md
set -euo pipefail
SCALE="${SCALE:-20}"; REPEATS="${REPEATS:-3}"
TMP="$(mktemp -d)"
for i in $(seq 1 $#); do
    "${!i}" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights uniform --labels 5 -o "$TMP/$i.wfg" >/dev/null 2>&1
done
echo "| round | binary | walk | kernel ms |"
echo "|---|---|---|---|"
for round in $(seq 1 "$REPEATS"); do
    for spec in "node2vec|80" "metapath|5"; do
        IFS='|' read -r walk length <<<"$spec"
        for i in $(seq 1 $#); do
            bin="${!i}"
            line="$("$bin" walk "$walk" --graph "$TMP/$i.wfg" --backend cuda --length "$length" --sampler adaptive --seed 1 -o "$TMP/w.npy" 2>&1 | tail -1)"
            ms="$(grep -o 'kernel [0-9.]* ms' <<<"$line" | head -1 | grep -o '[0-9.]*' || echo "?")"
            echo "| $round | $(basename "$bin") | $walk | $ms |"
        done
    done
done
rm -rf "$TMP"
