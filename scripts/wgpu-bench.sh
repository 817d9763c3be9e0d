#!/usr/bin/env bash
# The wgpu backend against CUDA on the CUDA benchmark's Node2Vec and MetaPath cells: R-MAT
# scale ${1:-20} (Graph500, edge factor 16, seed 1, weights U[1,5), labels U{0..4}), one walker
# per vertex, seed 1, adaptive sampler; Node2Vec (a=2, b=0.5) length 80, MetaPath (schema
# 0..4) length 5, weighted and unweighted, and Node2Vec length 20 with eRVS at every step.
# Each cell runs twice per backend (the first warms the PTX cache and the Vulkan pipeline
# cache) and the second is reported. Writes a markdown table to $2 (and stdout).
#   scripts/wgpu-bench.sh [SCALE] [OUT.md]     (uses .devbin/wayfarer; a GPU with Vulkan and CUDA)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE="${1:-20}"; OUTMD="${2:-wgpu-bench.md}"
WF="${WF:-.devbin/wayfarer}"
[ -x "$WF" ] || WF=target/release/wayfarer
DIR="${BENCH_DIR:-$(mktemp -d)}"
G="$DIR/rmat$SCALE-wl.wfg"
[ -f "$G" ] || "$WF" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights uniform --labels 5 -o "$G" >&2
field() { echo "$1" | grep -o "$2 [0-9.]* $3" | head -1 | grep -o '[0-9.]*' | head -1; }
{
    echo "| walk | weights | backend | device | steps | kernel ms | M steps/s | end-to-end s | wgpu / CUDA (kernel) |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for spec in "node2vec|80|" "node2vec|80|--unweighted" "metapath|5|" "metapath|5|--unweighted" "node2vec|20|--sampler ervs"; do
        IFS='|' read -r walk length extra <<<"$spec"
        cuda=""
        # wgpu: the kernel chosen for the adapter (subgroup where it has subgroups), then the
        # plain one (one invocation per walker, eRVS alone) and the workgroup one (eRVS of
        # long rows shared through workgroup memory).
        for run in cuda wgpu wgpu-plain wgpu-workgroup; do
            backend="${run%%-*}"
            kernel_env=(); case "$run" in wgpu-*) kernel_env=("WAYFARER_WGPU_KERNEL=${run#wgpu-}") ;; esac
            # shellcheck disable=SC2086
            env "${kernel_env[@]}" "$WF" walk "$walk" --graph "$G" --backend "$backend" --length "$length" --seed 1 -q -o "$DIR/w.npy" $extra >/dev/null 2>&1
            # shellcheck disable=SC2086
            line="$(env "${kernel_env[@]}" "$WF" walk "$walk" --graph "$G" --backend "$backend" --length "$length" --seed 1 -o "$DIR/w.npy" $extra 2>&1 | tail -1)"
            echo "$walk $run $extra: $line" >&2
            kernel="$(field "$line" kernel ms)"
            e2e="$(field "$line" end-to-end s)"
            steps="$(echo "$line" | grep -o '[0-9]* steps' | head -1 | grep -o '[0-9]*')"
            dev="$(echo "$line" | sed -n "s/.*backend $backend (\([^,]*\),.*/\1/p")"
            [ "$backend" = wgpu ] && dev="$dev, $(echo "$line" | grep -o '[a-z]* kernel,' | head -1 | tr -d ,)"
            rate="$(python3 -c "print(f'{$steps / ($kernel / 1e3) / 1e6:.0f}')")"
            if [ "$backend" = cuda ]; then cuda="$kernel"; ratio="1.00x"; else ratio="$(python3 -c "print(f'{$kernel / $cuda:.2f}x')")"; fi
            weights='U[1,5)'; case "$extra" in *--unweighted*) weights=unweighted ;; esac
            name="$walk"; case "$extra" in *ervs*) name="$walk (eRVS every step)" ;; esac
            echo "| $name | $weights | $run | $dev | $steps | $kernel | $rate | $e2e | $ratio |"
        done
    done
} | tee "$OUTMD"
