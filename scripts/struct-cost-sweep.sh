#!/usr/bin/env bash
# The GPU adaptive rule under several structured-trial costs c (WAYFARER_STRUCT_COST, in plain
# eRJS trials): kernel time and sampler mix of Node2Vec, MetaPath (weighted and not) and
# second-order PageRank on R-MAT ${SCALE:-20}, uniform and Pareto(1) weights, to choose the
# default. Prints markdown rows.   scripts/struct-cost-sweep.sh   (uses .devbin/wayfarer)
set -euo pipefail
cd "$(dirname "$0")/.."
B=.devbin/wayfarer
[ -x "$B" ] || B=target/release/wayfarer
TMP="$(mktemp -d)"
echo "| walk | weights | c | kernel | sampler mix |"
echo "|---|---|---|---|---|"
for wt in uniform pareto:1; do
    "$B" gen rmat --scale "${SCALE:-20}" --edge-factor 16 --seed 1 --weights "$wt" --labels 5 -o "$TMP/g.wfg" -q
    for spec in "node2vec|80|" "metapath|5|" "metapath|5|--unweighted" "ppr2|80|--unweighted"; do
        IFS='|' read -r w len extra <<<"$spec"
        if [ -n "$extra" ] && [ "$wt" != uniform ]; then continue; fi
        for c in ${COSTS:-1 1.5 2 3}; do
            # shellcheck disable=SC2086
            line="$(WAYFARER_STRUCT_COST=$c "$B" walk "$w" --graph "$TMP/g.wfg" --backend cuda --length "$len" --seed 1 -o "$TMP/w.npy" $extra 2>&1 | tail -1)"
            k="$(echo "$line" | grep -o 'kernel [0-9.]* ms' || true)"
            mix="$(echo "$line" | grep -o 'sampler adaptive \[[^]]*\]' || true)"
            echo "| $w $extra | $wt | $c | $k | $mix |"
        done
    done
done
rm -rf "$TMP"
