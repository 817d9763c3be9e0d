#!/usr/bin/env bash
# One GPU walk-kernel knob under several values: kernel time and sampler mix of DeepWalk,
# Node2Vec and MetaPath (weighted and not) and second-order PageRank on R-MAT ${SCALE:-20},
# uniform and Pareto(1) weights, to choose a default. Prints markdown rows.
#   KNOB=WAYFARER_STRUCT_COST VALUES="1 1.5 2 3" scripts/kernel-sweep.sh   (a structured trial's cost)
#   KNOB=WAYFARER_MIN_BLOCKS VALUES="2 3 4" scripts/kernel-sweep.sh        (blocks per multiprocessor)
# SAMPLERS (default "adaptive"), WEIGHTS (default "uniform pareto:1") and WALKS (default
# "deepwalk node2vec node2vec-unweighted metapath metapath-unweighted ppr2") narrow the cells.
# Uses .devbin/wayfarer (or target/release/wayfarer).
set -euo pipefail
cd "$(dirname "$0")/.."
B=.devbin/wayfarer
[ -x "$B" ] || B=target/release/wayfarer
KNOB="${KNOB:-WAYFARER_STRUCT_COST}"
VALUES="${VALUES:-1 1.5 2 3}"
TMP="$(mktemp -d)"
echo "| walk | weights | sampler | $KNOB | kernel | sampler mix |"
echo "|---|---|---|---|---|---|"
for wt in ${WEIGHTS:-uniform pareto:1}; do
    "$B" gen rmat --scale "${SCALE:-20}" --edge-factor 16 --seed 1 --weights "$wt" --labels 5 -o "$TMP/g.wfg" -q
    for spec in "deepwalk|80|" "node2vec|80|" "node2vec|80|--unweighted" "metapath|5|" "metapath|5|--unweighted" "ppr2|80|--unweighted"; do
        IFS='|' read -r w len extra <<<"$spec"
        key="$w${extra:+-unweighted}"
        [ "$w" = ppr2 ] && key=ppr2
        case " ${WALKS:-deepwalk node2vec node2vec-unweighted metapath metapath-unweighted ppr2} " in *" $key "*) ;; *) continue ;; esac
        if [ -n "$extra" ] && [ "$wt" != uniform ]; then continue; fi
        for sampler in ${SAMPLERS:-adaptive}; do
            for v in $VALUES; do
                # shellcheck disable=SC2086
                line="$(env "$KNOB=$v" "$B" walk "$w" --graph "$TMP/g.wfg" --backend cuda --length "$len" --sampler "$sampler" --seed 1 -o "$TMP/w.npy" $extra 2>&1 | tail -1)"
                k="$(echo "$line" | grep -o 'kernel [0-9.]* ms' || echo "$line")"
                mix="$(echo "$line" | grep -o 'sampler [a-zA-Z]* \[[^]]*\]' || true)"
                echo "| $w $extra | $wt | $sampler | $v | $k | $mix |"
            done
        done
    done
done
rm -rf "$TMP"
