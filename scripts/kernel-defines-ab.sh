#!/usr/bin/env bash
# Walk-kernel build switches side by side on the same GPU in one call: one binary, one graph
# (R-MAT scale ${SCALE:-20}, edge factor 16, U[1,5) weights, labels U{0..4}, seed 1), each
# VARIANT ("label=WF_A=1,WF_B=x ..."; "base=" is the plain build) passed as
# WAYFARER_CUDA_DEFINES, taking turns for ${REPEATS:-3} rounds over the walks of SPECS ("walk|
# length|extra args"). Prints one row per run: kernel time from the summary line and a
# checksum of the walks (a switch that changes no walk prints the same checksum).
#   VARIANTS="base= alt=WF_MY_SWITCH=1" scripts/kernel-defines-ab.sh > ab.md
set -euo pipefail
cd "$(dirname "$0")/.."
B="${BIN:-.devbin/wayfarer}"
[ -x "$B" ] || B=target/release/wayfarer
SCALE="${SCALE:-20}"; REPEATS="${REPEATS:-3}"
SPECS="${SPECS:-node2vec|80| node2vec|80|--unweighted deepwalk|80|--unweighted ppr2|80|--unweighted metapath|5|}"
VARIANTS="${VARIANTS:-base=}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
"$B" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights "${WEIGHTS:-uniform}" --labels 5 -o "$TMP/g.wfg" -q
echo "| round | variant | walk | kernel ms | walks md5 |"
echo "|---|---|---|---|---|"
for round in $(seq 1 "$REPEATS"); do
    for spec in $SPECS; do
        IFS='|' read -r walk length extra <<<"$spec"
        for v in $VARIANTS; do
            label="${v%%=*}"; defs="${v#*=}"
            # shellcheck disable=SC2086
            line="$(WAYFARER_CUDA_DEFINES="$defs" "$B" walk "$walk" --graph "$TMP/g.wfg" --backend cuda --length "$length" --sampler adaptive --seed 1 -o "$TMP/w.npy" $extra 2>&1 | tail -1)"
            ms="$(grep -o 'kernel [0-9.]* ms' <<<"$line" | head -1 | grep -o '[0-9.]*' || echo "? $line")"
            sum="$(md5sum "$TMP/w.npy" 2>/dev/null | cut -c1-12 || echo "-")"
            echo "| $round | $label | $walk $extra | $ms | $sum |"
        done
    done
done
