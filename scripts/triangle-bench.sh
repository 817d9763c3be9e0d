#!/usr/bin/env bash
# Triangle-counting benchmark: R-MAT graphs (Graph500 parameters, edge factor 16, seed 1,
# symmetrized), exact counts by wayfarer (total only, and with per-node counts) and by an
# established library in the same run: python-igraph (its C core, one thread) and networkx
# (pure Python, small graphs only), from the Python at $REF_PYTHON (default
# ~/.cache/wayfarer-dgl/bin/python; `pip install igraph networkx numpy` there).
#   scripts/triangle-bench.sh "SCALES" ROWS [OUT.md]     e.g. "14 18 20" wayfarer-cpu,igraph,networkx
# A scale may also be `wordnet`: the WordNet 3.0 pointer graph in data/ (a real graph, made
# undirected), `er`: an Erdős–Rényi graph of 2^20 nodes and expected degree 32 (flat), or
# `web`: the web-like graph of scripts/cpu-web-bench.sh (R-MAT 18, edge factor 10: 2.44M
# undirected edges, hubs of 18.6k, about the size of the issue's real web graph).
# ROWS: the GPU peers of issue 28, built by scripts/triangle-peers.sh from fetched copies
# (trust, grouptc-cuckoo, grouptc-opt, grouptc, tricore, polak, h-index: each
# its counting kernel's time, which goes in the GPU counting column), wayfarer-cpu,
# wayfarer-cuda (total only), wayfarer-cpu-per-node, wayfarer-cuda-per-node
# (with per-node counts), igraph, networkx (scales up to 16), wayfarer-cpu-mask,
# wayfarer-cuda-mask (only edges whose higher end has degree below 1000, a `#[mask]` file: on
# the GPU the mask is compiled by the CUDA backend and runs on the device), wayfarer-cpu-keep-all,
# wayfarer-cuda-keep-all (a mask that evaluates `degree(dst) > 0` and so keeps every edge: it
# must count the unmasked triangles at the unmasked speed), wayfarer-cpu-half,
# wayfarer-cuda-half (a mask keeping the edges into even ids, about half). "vs first"
# compares with the first row's time.
# Every row must find the same count (masked rows: the same masked count); the script fails
# otherwise. Prints a Markdown table; GPU rows also give the counting kernel's time and the
# orientation's plus the work lists' kernels (CUDA events, from the summary line), and the
# speed of each counting kernel relative to the first GPU row's (peers: their kernel only).
set -euo pipefail
cd "$(dirname "$0")/.."
SCALES="$1"; ROWS="$2"; OUT="${3:-}"
WF="${WF:-target/release/wayfarer}"
[ -x "$WF" ] || WF=.devbin/wayfarer
REF_PYTHON="${REF_PYTHON:-$HOME/.cache/wayfarer-dgl/bin/python}"
DIR="${BENCH_DIR:-$(mktemp -d)}"
mkdir -p "$DIR"
table="| graph | undirected edges | counter | triangles | seconds | M edges/s | vs first row | GPU counting kernels ms | counting kernels vs first GPU row | GPU orientation + work lists ms |
|---|---|---|---|---|---|---|---|---|---|"
for scale in $SCALES; do
    if [ "$scale" = wordnet ]; then
        G="$DIR/wordnet.wfg"; name="WordNet"
        if [ ! -f "$G" ]; then
            gzip -dc data/wordnet/wordnet-edges.txt.gz >"$DIR/wordnet.txt"
            "$WF" convert "$DIR/wordnet.txt" --undirected --label-col 3 -o "$G" >&2
        fi
    elif [ "$scale" = web ]; then
        G="$DIR/web.wfg"; name="web-like (R-MAT 18, edge factor 10)"
        [ -f "$G" ] || "$WF" gen rmat --scale 18 --edge-factor 10 --seed 1 -o "$G" >&2
    elif [ "$scale" = er ]; then
        G="$DIR/er20.wfg"; name="Erdős–Rényi 2^20, degree 32"
        [ -f "$G" ] || "$WF" gen er --nodes 1048576 --avg-degree 32 --seed 1 -o "$G" >&2
    else
        G="$DIR/rmat$scale.wfg"; name="R-MAT $scale"
        [ -f "$G" ] || "$WF" gen rmat --scale "$scale" --edge-factor 16 --seed 1 -o "$G" >&2
    fi
    base=""; kbase=""; want=""; want_mask=""; want_half=""
    MASK="$DIR/light.rs"
    printf '#[mask]\nfn light(s: &Step, k: u32) -> bool {\n    s.degree(s.dst()) < k\n}\n' >"$MASK"
    printf '#[mask]\nfn keep_all(s: &Step) -> bool {\n    s.degree(s.dst()) > 0\n}\n' >"$DIR/keep_all.rs"
    printf '#[mask]\nfn half(s: &Step) -> bool {\n    s.dst() %% 2 == 0\n}\n' >"$DIR/half.rs"
    # A wayfarer run's summary line; a failed run stops the script with its message.
    wf_line() {
        local out
        out="$("$WF" triangles --graph "$G" "$@" 2>&1 >/dev/null)" || { echo "$name: wayfarer triangles $*: $out" >&2; return 1; }
        echo "$out" | grep '^triangles'
    }
    for row in ${ROWS//,/ }; do
        case "$row" in
            wayfarer-cpu|wayfarer-cuda)
                line="$(wf_line --backend "${row#wayfarer-}")";;
            wayfarer-cpu-per-node|wayfarer-cuda-per-node)
                b="${row#wayfarer-}"; line="$(wf_line --backend "${b%-per-node}" --per-node "$DIR/pn.npz")";;
            wayfarer-cpu-mask|wayfarer-cuda-mask)
                b="${row#wayfarer-}"; line="$(wf_line --backend "${b%-mask}" --mask "$MASK" -p k=1000)";;
            wayfarer-cpu-keep-all|wayfarer-cuda-keep-all)
                b="${row#wayfarer-}"; line="$(wf_line --backend "${b%-keep-all}" --mask "$DIR/keep_all.rs")";;
            wayfarer-cpu-half|wayfarer-cuda-half)
                b="${row#wayfarer-}"; line="$(wf_line --backend "${b%-half}" --mask "$DIR/half.rs")";;
            trust|grouptc-cuckoo|grouptc-opt|grouptc|tricore|polak|h-index)
                line="$(scripts/triangle-peers.sh run "$row" "$G")";;
            igraph|networkx)
                if [ "$row" = networkx ] && [ "$scale" != wordnet ] && { [ "$scale" = er ] || [ "$scale" = web ] || [ "$scale" -gt 16 ]; }; then continue; fi
                line="$("$REF_PYTHON" bench/triangle_ref.py "$G" "$row" | tail -1)";;
            *) echo "unknown row $row" >&2; exit 2;;
        esac
        echo "$name $row: $line" >&2
        tri="$(echo "$line" | grep -o '[a-z-]*: [0-9]*' | head -1 | grep -o '[0-9]*$')"
        edges="$(echo "$line" | grep -o 'among [0-9]*' | grep -o '[0-9]*' || true)"
        secs="$(echo "$line" | grep -o 'in [0-9.]* s' | cut -d' ' -f2 || true)"
        rate="$(echo "$line" | grep -o '[0-9.]* M edges/s' | head -1 | cut -d' ' -f1 || true)"
        # A peer reports its counting kernel only (scripts/triangle-peers.sh).
        peer_s="$(echo "$line" | grep -o 'counting kernel [0-9.e-]* s' | cut -d' ' -f3 || true)"
        [ -z "$peer_s" ] || { secs="$peer_s"; rate="-"; }
        case "$row" in
            *-half) if [ -z "$want_half" ]; then want_half="$tri"; elif [ "$tri" != "$want_half" ]; then echo "$name: $row counts $tri, the first half-mask row $want_half" >&2; exit 1; fi;;
            *-mask) if [ -z "$want_mask" ]; then want_mask="$tri"; elif [ "$tri" != "$want_mask" ]; then echo "$name: $row counts $tri, the first masked row $want_mask" >&2; exit 1; fi;;
            *) if [ -z "$want" ]; then want="$tri"; elif [ "$tri" != "$want" ]; then echo "$name: $row counts $tri, the first row $want" >&2; exit 1; fi;;
        esac
        # A peer's time is its counting kernel's: it compares with the GPU rows' kernels
        # (the next column), not with an end-to-end time.
        ratio="-"
        if [ -z "$peer_s" ]; then
            [ -z "$base" ] && base="$secs"
            ratio="$(python3 -c "print(f'{$base / $secs:.2f}x')")"
        fi
        kms="$(echo "$line" | grep -o 'counting kernels [0-9.]* ms' | cut -d' ' -f3 || true)"
        oms="$(echo "$line" | grep -o 'orientation kernels [0-9.]* ms' | cut -d' ' -f3 || true)"
        lms="$(echo "$line" | grep -o 'work lists [0-9.]* ms' | cut -d' ' -f3 || true)"
        [ -z "$peer_s" ] || kms="$(python3 -c "print(f'{$peer_s * 1e3:.3f}')")"
        kratio="-"
        if [ -n "$kms" ]; then
            [ -z "$kbase" ] && kbase="$kms"
            kratio="$(python3 -c "print(f'{$kbase / $kms:.2f}x')")"
        fi
        prep="-"; [ -n "$oms" ] && [ -n "$lms" ] && prep="$(python3 -c "print(f'{$oms + $lms:.3f}')")"
        table+="
| $name | ${edges:--} | $row | $tri | $secs | $rate | $ratio | ${kms:--} | $kratio | $prep |"
    done
done
echo "$table"
if [ -n "$OUT" ]; then echo "$table" >>"$OUT"; fi
