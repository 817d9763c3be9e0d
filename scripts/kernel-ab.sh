#!/usr/bin/env bash
# wayfarer binaries side by side on the same GPU in one call (to bisect a kernel-time change):
# each generates R-MAT scale ${SCALE:-20} (edge factor 16, U[1,5) weights, labels U{0..4},
# seed 1) in its own format, then each walk of SPECS ("walk|length|extra args", default
# Node2Vec length 80 and MetaPath length 5) runs on CUDA with the adaptive sampler, seed 1, one
# query per vertex, the binaries taking turns for ${REPEATS:-3} rounds. Prints one row per run
# with the kernel time from the summary line and a checksum of the walks written (binaries
# that change no walk print the same checksum).
#   SPECS="node2vec|80| node2vec|80|--unweighted" scripts/kernel-ab.sh BIN... > ab.md
set -euo pipefail
SCALE="${SCALE:-20}"; REPEATS="${REPEATS:-3}"
SPECS="${SPECS:-node2vec|80| metapath|5|}"
TMP="$(mktemp -d)"
for i in $(seq 1 $#); do
    "${!i}" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights uniform --labels 5 -o "$TMP/$i.wfg" >/dev/null 2>&1
done
echo "| round | binary | walk | kernel ms | walks md5 |"
echo "|---|---|---|---|---|"
for round in $(seq 1 "$REPEATS"); do
    for spec in $SPECS; do
        IFS='|' read -r walk length extra <<<"$spec"
        for i in $(seq 1 $#); do
            bin="${!i}"
            # shellcheck disable=SC2086
            line="$("$bin" walk "$walk" --graph "$TMP/$i.wfg" --backend cuda --length "$length" --sampler adaptive --seed 1 -o "$TMP/w.npy" $extra 2>&1 | tail -1)"
            ms="$(grep -o 'kernel [0-9.]* ms' <<<"$line" | head -1 | grep -o '[0-9.]*' || echo "?")"
            sum="$(md5sum "$TMP/w.npy" 2>/dev/null | cut -c1-12 || echo "-")"
            echo "| $round | $(basename "$bin") | $walk $extra | $ms | $sum |"
        done
    done
done
rm -rf "$TMP"
