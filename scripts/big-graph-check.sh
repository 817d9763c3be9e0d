#!/usr/bin/env bash
# More than 2^32 edge entries end to end on the GPU machine (issue 8): generates R-MAT
# scale 27, edge factor 18 (about 4.6e9 entries after symmetrizing and removing duplicates;
# ~20 GB of host memory and disk), then runs the GPU test
# `graphs_beyond_two_to_the_32_edges_walk_on_the_gpu` on it (walks from rows past entry 2^32,
# GPU = CPU, every step an edge) and a short CLI walk with its memory estimate.
#   scripts/big-graph-check.sh [SCALE] [EDGE_FACTOR]     (uses .devbin/; run on nvidia-h200)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE="${1:-27}"; EF="${2:-18}"
WF=.devbin/wayfarer
# shellcheck source=scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
DIR="${BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$DIR"
G="$DIR/rmat$SCALE-ef$EF.wfg"
time "$WF" gen rmat --scale "$SCALE" --edge-factor "$EF" --seed 1 -o "$G"
"$WF" info "$G"
WAYFARER_REQUIRE_GPU=1 WAYFARER_BIG_GRAPH="$G" .devbin/gpu-tests --exact graphs_beyond_two_to_the_32_edges_walk_on_the_gpu --nocapture
"$WF" walk deepwalk --graph "$G" --backend cuda --gpus 1 --length 5 --seed 1 -o "$DIR/w.npy" 2>&1 | tail -3
