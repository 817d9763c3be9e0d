#!/usr/bin/env bash
# The GPU benchmark of the CUDA issue: R-MAT scale ${SCALE:-20} (Graph500 parameters, edge
# factor 16, labels U{0..4}), one query per vertex; Node2Vec (a=2, b=0.5) weighted and
# unweighted, length 80; MetaPath schema 0..4 weighted and unweighted, length 5; second-order
# PageRank (gamma 0.2), length 80; weights uniform U[1,5), Pareto alpha = 1, 2, 4 and the
# target's degree; samplers eRJS-only, eRVS-only, structured proposals forced and adaptive
# (SAMPLERS overrides the list, WEIGHTS the weights). Writes a markdown table to $1.
#   scripts/gpu-bench.sh out.md      (uses .devbin/wayfarer, or target/release/wayfarer)
set -euo pipefail
cd "$(dirname "$0")/.."
OUTMD="${1:-gpu-bench.md}"
BIN=.devbin/wayfarer
[ -x "$BIN" ] || BIN=target/release/wayfarer
SCALE="${SCALE:-20}"
TMP="$(mktemp -d)"
RAW="$TMP/raw.txt"
: >"$RAW"
for weights in ${WEIGHTS:-uniform pareto:1 pareto:2 pareto:4 degree}; do
    "$BIN" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights "$weights" --labels 5 -o "$TMP/g.wfg" -q 2>/dev/null || \
        "$BIN" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights "$weights" --labels 5 -o "$TMP/g.wfg"
    for spec in "node2vec|80|" "node2vec-unweighted|80|--unweighted" "metapath|5|" "metapath-unweighted|5|--unweighted" "ppr2|80|--unweighted"; do
        IFS='|' read -r key length extra <<<"$spec"
        walk="${key%-unweighted}"
        # Unweighted cells do not depend on the weights: run them once.
        if [ -n "$extra" ] && [ "$weights" != uniform ]; then continue; fi
        for sampler in ${SAMPLERS:-erjs ervs structured adaptive}; do
            # shellcheck disable=SC2086
            line="$("$BIN" walk "$walk" --graph "$TMP/g.wfg" --backend cuda --length "$length" --sampler "$sampler" --seed 1 -o "$TMP/w.npy" $extra 2>&1 | tail -1)"
            echo "$key|$([ -n "$extra" ] && echo - || echo "$weights")|$sampler|$line" >>"$RAW"
        done
    done
done
# SWEEP=1: the adaptive rule under several cost ratios R (F = 64), to choose the GPU default.
if [ "${SWEEP:-0}" = 1 ]; then
    for weights in uniform pareto:1; do
        "$BIN" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights "$weights" --labels 5 -o "$TMP/g.wfg" >/dev/null 2>&1
        for spec in "node2vec|80|" "metapath|5|" "ppr2|80|--unweighted"; do
            IFS='|' read -r walk length extra <<<"$spec"
            if [ -n "$extra" ] && [ "$weights" != uniform ]; then continue; fi
            for r in 1 2 4 8 16; do
                # shellcheck disable=SC2086
                line="$("$BIN" walk "$walk" --graph "$TMP/g.wfg" --backend cuda --length "$length" --sampler adaptive --cost-ratio "$r,64" --seed 1 -o "$TMP/w.npy" $extra 2>&1 | tail -1)"
                echo "$walk (R=$r)|$([ -n "$extra" ] && echo - || echo "$weights")|adaptive|$line" >>"$RAW"
            done
        done
    done
fi
# TUNED=1: the adaptive rule with R tuned on this device and graph (--cost-ratio profile: a
# pilot after a burn-in walk tries a ladder of R; cached per graph; the profile's time is in
# the end-to-end column, not the kernel's). The default is the fixed R = 4, F = 64.
if [ "${TUNED:-0}" = 1 ]; then
    for weights in uniform pareto:1 pareto:2 pareto:4; do
        "$BIN" gen rmat --scale "$SCALE" --edge-factor 16 --seed 1 --weights "$weights" --labels 5 -o "$TMP/g.wfg" >/dev/null 2>&1
        for spec in "node2vec|80|" "metapath|5|" "ppr2|80|--unweighted"; do
            IFS='|' read -r walk length extra <<<"$spec"
            if [ -n "$extra" ] && [ "$weights" != uniform ]; then continue; fi
            # shellcheck disable=SC2086
            line="$("$BIN" walk "$walk" --graph "$TMP/g.wfg" --backend cuda --length "$length" --sampler adaptive --cost-ratio profile --seed 1 -o "$TMP/w.npy" $extra 2>&1 | tail -1)"
            echo "$walk (tuned)|$([ -n "$extra" ] && echo - || echo "$weights")|adaptive|$line" >>"$RAW"
        done
    done
fi
python3 - "$RAW" "$OUTMD" "$SCALE" <<'PY'
import re, sys, subprocess
raw, out, scale = sys.argv[1], sys.argv[2], sys.argv[3]
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
rows = []
for line in open(raw):
    key, weights, sampler, summary = line.rstrip("\n").split("|", 3)
    m = re.search(r"(\d+) walkers, (\d+) steps in .*kernel ([\d.]+) ms, end-to-end ([\d.]+) s, preprocessing ([\d.]+) ms, R profile [\d.]+ ms, writing ([\d.]+) s.*?\[(.*?)\]", summary)
    if not m:
        rows.append(f"| {key} | {weights} | {sampler} | error: {summary[:120]} | | | | | | | | |")
        continue
    walkers, steps, kernel, e2e, prep, write, mix = m.groups()
    rv = re.search(r"R = ([\d.]+)", summary)
    if sampler == "adaptive" and rv:
        mix = f"{mix} (R={float(rv.group(1)):g})"
    rate = int(steps) / (float(kernel) / 1e3) / 1e6
    t = re.search(r"proposal tables ([\d.]+) MiB in ([\d.]+) s", summary)
    tables = f"{float(t.group(1)):.0f} MiB, {float(t.group(2))*1000:.0f} ms" if t else "-"
    rows.append(f"| {key} | {weights} | {sampler} | {walkers} | {steps} | {float(kernel):.2f} | {float(e2e)*1000:.1f} | {float(prep):.1f} | {float(write)*1000:.1f} | {rate:.1f} | {tables} | {mix} |")
with open(out, "w") as f:
    f.write(f"# GPU walk benchmark\n\n- GPU: {gpu}\n- graph: R-MAT scale {scale} (Graph500 a=0.57 b=0.19 c=0.19, edge factor 16), labels U{{0..4}}, one query per vertex, seed 1\n")
    f.write("- kernel ms: the walk kernels (all batches), launch to completion; end-to-end ms: upload, preprocessing kernels, walk kernels, download and writing the .npy (streamed); prep ms: the preprocessing kernels; write ms: writing the .npy\n\n")
    f.write("- tables: the structured proposals' tables (memory, and the time to compute the factors on the device, build the tables on the host and upload them; part of end-to-end)\n\n")
    f.write("| workload | weights | sampler | walkers | steps | kernel ms | end-to-end ms | prep ms | write ms | M steps/s (kernel) | tables | sampler mix |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    f.write("\n".join(rows) + "\n")
print(open(out).read())
PY
