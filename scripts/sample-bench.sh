#!/usr/bin/env bash
# GNN neighbor-sampling benchmark: one epoch over a 10% random seed set (Python's
# random.seed(1); random.sample), or over every node with SEEDS=all (issue 27's epoch), batch
# size 1024, fanouts 15,10,5 and 25,10 ($FANOUTS, space separated), uniform without
# replacement, on R-MAT (Graph500 parameters, edge factor 16, seed 1, symmetrized).
#   scripts/sample-bench.sh SCALE ROWS [OUT.md]
# The GPU rows build every block in device memory, then copy them out: "on device s" is the
# epoch until the last block is in device memory (what a GPU trainer waits for), "to host s"
# the page-locked buffers, the copies and the cutting into per-mini-batch arrays after it;
# "epoch s" is the whole call.
# ROWS, comma separated: cuda-grouped, cuda-warp (the GPU kernels), cpu (all cores), dgl (DGL's
# NeighborSampler from the Python at $DGL_PYTHON, default ~/.cache/wayfarer-dgl/bin/python; when
# that is absent, the script makes that venv with DGL 2.1.0 and the torch it supports from PyPI).
# Prints a Markdown table (and appends it to OUT.md when given).
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE="$1"; ROWS="$2"; OUT="${3:-}"
WF="${WF:-target/release/wayfarer}"
[ -x "$WF" ] || WF=.devbin/wayfarer
DGL_PYTHON="${DGL_PYTHON:-$HOME/.cache/wayfarer-dgl/bin/python}"
DIR="${BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$DIR"
if [[ ",$ROWS," == *",dgl,"* ]] && [ ! -x "$DGL_PYTHON" ]; then
    # DGL 2.1.0's wheel carries graphbolt for torch 2.0.0-2.2.1, and graphbolt needs torchdata's
    # datapipes (0.7.1 pairs with torch 2.1.1) and pandas. Kept in the cache between runs.
    venv="$(dirname "$(dirname "$DGL_PYTHON")")"
    echo "installing DGL 2.1.0 into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "dgl==2.1.0" "torch==2.1.1" "torchdata==0.7.1" "numpy<2" pandas pydantic pyyaml >&2
fi
G="$DIR/rmat$SCALE.wfg"
[ -f "$G" ] || "$WF" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 -o "$G" >&2
SEEDS="${SEEDS:-10%}"
if [ "$SEEDS" = all ]; then
    python3 -c "print('\n'.join(map(str, range(1 << $SCALE))))" >"$DIR/seeds.txt"
else
    python3 -c "
import random
random.seed(1)
n = 1 << $SCALE
print('\n'.join(map(str, random.sample(range(n), n // 10))))" >"$DIR/seeds.txt"
fi
table="| graph | seeds | fanouts | sampler | edges | epoch s | M edges/s | on device s | to host s | sampling kernels s | vs cpu (epoch) | vs cpu (on device) |
|---|---|---|---|---|---|---|---|---|---|---|---|"
for fanouts in ${FANOUTS:-15,10,5 25,10}; do
    cpu_secs=""
    for row in ${ROWS//,/ }; do
        case "$row" in
            cuda-grouped|cuda-warp)
                line="$("$WF" sample --graph "$G" --seeds "$DIR/seeds.txt" --fanouts "$fanouts" --batch-size 1024 --seed 1 --backend cuda --kernel "${row#cuda-}" 2>&1 | grep '^sampled')";;
            cpu)
                line="$("$WF" sample --graph "$G" --seeds "$DIR/seeds.txt" --fanouts "$fanouts" --batch-size 1024 --seed 1 --backend cpu 2>&1 | grep '^sampled')";;
            dgl)
                line="$(OMP_NUM_THREADS=$(nproc) "$DGL_PYTHON" bench/dgl_sample.py "$G" "$DIR/seeds.txt" "$fanouts" 1024 2>&1 | tail -1)";;
            *) echo "unknown row $row" >&2; exit 2;;
        esac
        echo "$row $fanouts: $line" >&2
        edges="$(echo "$line" | grep -o '[0-9]* edges in' | cut -d' ' -f1)"
        secs="$(echo "$line" | grep -o 'edges in [0-9.]* s' | cut -d' ' -f3)"
        rate="$(echo "$line" | grep -o '[0-9.]* M edges/s' | cut -d' ' -f1)"
        kern="$(echo "$line" | grep -o 'sampling kernels [0-9.]* s' | cut -d' ' -f3 || true)"
        dev="$(echo "$line" | grep -o 'blocks in device memory in [0-9.]* s' | cut -d' ' -f6 || true)"
        pinning="$(echo "$line" | grep -o 'page-locking [0-9.]* s' | cut -d' ' -f2 || true)"
        copies="$(echo "$line" | grep -o 'copies [0-9.]* s' | cut -d' ' -f2 || true)"
        cutting="$(echo "$line" | grep -o 'cutting [0-9.]* s' | cut -d' ' -f2 || true)"
        host=""; [ -n "$copies" ] && [ -n "$cutting" ] && host="$(python3 -c "print(f'{${pinning:-0} + $copies + $cutting:.3f}')")"
        [ "$row" = cpu ] && cpu_secs="$secs"
        ratio=""; dratio=""
        if [ -n "$cpu_secs" ] && [ -n "$secs" ]; then ratio="$(python3 -c "print(f'{$cpu_secs / $secs:.2f}x')")"; fi
        if [ -n "$cpu_secs" ] && [ -n "$dev" ]; then dratio="$(python3 -c "print(f'{$cpu_secs / $dev:.2f}x')")"; fi
        table+="
| R-MAT $SCALE | $SEEDS | $fanouts | $row | $edges | $secs | $rate | ${dev:--} | ${host:--} | ${kern:--} | ${ratio:--} | ${dratio:--} |"
    done
done
echo "$table"
if [ -n "$OUT" ]; then echo "$table" >>"$OUT"; fi
