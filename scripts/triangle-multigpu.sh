#!/usr/bin/env bash
# Triangle counting on 1..N GPUs of this host (N = all visible): the same R-MAT graph, the same
# totals and per-node counts (compared byte for byte), and the time of each.
#   scripts/triangle-multigpu.sh [SCALE]      (default 24; run on a multi-GPU device kind)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE="${1:-24}"
WF="${WF:-.devbin/wayfarer}"
[ -x "$WF" ] || WF=target/release/wayfarer
# shellcheck source=scripts/nvrtc-env.sh
. scripts/nvrtc-env.sh
DIR="$(mktemp -d)"
"$WF" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 -o "$DIR/g.wfg" >&2
GPUS="$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)"
echo "| graph | GPUs | triangles | seconds | counting kernels ms | per-node counts |"
echo "|---|---|---|---|---|---|"
for k in $(seq 1 "$GPUS"); do
    line="$("$WF" triangles --graph "$DIR/g.wfg" --backend cuda --gpus "$k" --per-node "$DIR/pn$k.npy" 2>&1 >/dev/null | grep '^triangles')"
    echo "$line" >&2
    same="$(cmp -s "$DIR/pn1.npy" "$DIR/pn$k.npy" && echo "identical to 1 GPU" || echo DIFFERENT)"
    echo "| R-MAT $SCALE | $k | $(echo "$line" | grep -o 'triangles: [0-9]*' | cut -d' ' -f2) | $(echo "$line" | grep -o 'in [0-9.]* s' | cut -d' ' -f2) | $(echo "$line" | grep -o 'counting kernels [0-9.]* ms' | cut -d' ' -f3) | $same |"
    [ "$same" != DIFFERENT ]
done
