#!/usr/bin/env bash
# Issue 25's peers side by side on this machine: ThunderRW (Xtra-Computing/ThunderRW) walks and
# GAP (sbeamer/gapbs) `tc` against wayfarer on the same graphs, same thread count, alternating
# runs, medians reported. The peers' code stays out of this repository: pass the paths of
# fetched copies; a peer whose path is not given (or not there) is skipped and the table says so.
#   scripts/cpu-peers-bench.sh [--thunderrw DIR] [--gap DIR] [OUT.md]
# Env: THREADS (2), REPEAT (3), TC_TRIALS (16), SCALE/EF (18/10: the web-like R-MAT of cpu-web-bench.sh),
#      PEERS_BUILD (where the peers are built; default target/peers).
# Walk rows (M steps/s, the walk phase only: ThunderRW's "Walking time", wayfarer's summary):
#   DeepWalk unweighted   ThunderRW -em 0 (uniform)           wayfarer walk deepwalk --unweighted
#   DeepWalk weighted     ThunderRW -em 1 -sm 2 (alias; its preprocessing excluded)
#   Node2Vec unweighted   ThunderRW node2vec (max-weight rejection), p=2 q=0.5 as a=2 b=0.5
#   Node2Vec weighted     bench/peers/thunderrw/node2vec_weighted.cpp (ours, on its API)
#   MetaPath unweighted   ThunderRW -em 2 -sm 1 (inverse transform), schema 0..4, length 5
# Triangles: GAP `tc` (average of TC_TRIALS trials in one process, GAP's default 16; degree
# relabelling inside, as GAP decides) against `wayfarer triangles` (orientation and counting; the
# summary splits them), both ways: TC_TRIALS trials in one process averaged (`--trials`, GAP's
# method; on this VM a process's first count also waits about 0.1-0.5 ms for the sleeping worker
# threads, which a few trials do not amortize on a 1 ms graph), and the median of REPEAT fresh
# processes (the first count's caches cold, which GAP's average mostly hides), on the R-MAT
# and on WordNet made undirected (GAP's -s), so neither side times a symmetrization.
# A fetched snapshot has no .git: write its commit to DIR/COMMIT to have it in the table.
set -euo pipefail
cd "$(dirname "$0")/.."
TRW=""; GAP=""; OUTMD=""
while [ $# -gt 0 ]; do
    case "$1" in
        --thunderrw) TRW="$2"; shift 2;;
        --gap) GAP="$2"; shift 2;;
        -h|--help) sed -n 2,17p "$0"; exit 0;;
        *) OUTMD="$1"; shift;;
    esac
done
OUTMD="${OUTMD:-cpu-peers-bench.md}"
THREADS="${THREADS:-2}"; REPEAT="${REPEAT:-3}"; SCALE="${SCALE:-18}"; EF="${EF:-10}"; TC_TRIALS="${TC_TRIALS:-16}"
B=target/release/wayfarer
[ -x "$B" ] || { echo "build first: cargo build --release" >&2; exit 1; }
BUILD="${PEERS_BUILD:-target/peers}"
mkdir -p "$BUILD"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
: >"$OUTMD"   # opened before the work starts

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else printf "%.4g\n", (a[NR/2]+a[NR/2+1])/2}'; }

# --- build the peers (once per source tree) -----------------------------------------------------
trw_bin=""
if [ -n "$TRW" ] && [ -f "$TRW/random_walk/creeper.h" ]; then
    trw_bin="$BUILD/thunderrw"
    mkdir -p "$trw_bin"
    S="$TRW/dependency/SFMT-src-1.5.1"
    flags=(-std=c++11 -O3 -fopenmp -march=native -DUSE_LOG -DTIME_RESULTS -DSFMT_MEXP=19937 -DHAVE_SSE2=1
           -I"$TRW" -I"$S" -I"$TRW/random_walk")
    common=("$TRW/random_walk/walker_generator.cpp" "$S/SFMT.c" "$TRW/util/graph/graph.cpp" "$TRW/util/log/log.cpp" "$TRW/util/io/io.cpp")
    for app in deepwalk node2vec metapath; do
        [ -x "$trw_bin/$app" ] || g++ "${flags[@]}" -o "$trw_bin/$app" "${common[@]}" "$TRW/random_walk/apps/$app.cpp"
    done
    [ -x "$trw_bin/node2vec_weighted" ] || g++ "${flags[@]}" -o "$trw_bin/node2vec_weighted" "${common[@]}" bench/peers/thunderrw/node2vec_weighted.cpp
    trw_commit="$( (git -C "$TRW" rev-parse --short=12 HEAD 2>/dev/null) || cat "$TRW/COMMIT" 2>/dev/null || echo "commit unknown")"
elif [ -n "$TRW" ]; then
    echo "ThunderRW not found at $TRW (no random_walk/creeper.h): skipping it" >&2
fi
gap_bin=""
if [ -n "$GAP" ] && [ -f "$GAP/src/tc.cc" ]; then
    gap_bin="$BUILD/gap"
    mkdir -p "$gap_bin"
    [ -x "$gap_bin/tc" ] || g++ -std=c++11 -O3 -Wall -fopenmp -o "$gap_bin/tc" "$GAP/src/tc.cc"
    gap_commit="$( (git -C "$GAP" rev-parse --short=12 HEAD 2>/dev/null) || cat "$GAP/COMMIT" 2>/dev/null || echo "commit unknown")"
elif [ -n "$GAP" ]; then
    echo "GAP not found at $GAP (no src/tc.cc): skipping it" >&2
fi

# --- the graphs ----------------------------------------------------------------------------------
"$B" gen rmat --scale "$SCALE" --edge-factor "$EF" --seed 1 --labels 5 --weights uniform -o "$TMP/g.wfg" -q
"$B" convert "$TMP/g.wfg" -o "$TMP/g.txt" -q
[ -n "$trw_bin" ] && python3 bench/peers/to_thunderrw.py "$TMP/g.txt" "$TMP/trw" >&2
# GAP reads `u v` lines; wayfarer's list already holds both directions, -s only marks it undirected.
[ -n "$gap_bin" ] && grep -v '^#' "$TMP/g.txt" | awk '{print $1, $2}' >"$TMP/g.el"

{
    echo "# CPU peers side by side: ThunderRW and GAP against wayfarer"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- wayfarer commit: $(git rev-parse --short=12 HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
    echo "- hardware: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $THREADS threads, $(nproc) cores"
    if [ -n "$trw_bin" ]; then echo "- ThunderRW: $TRW ($trw_commit), g++ -O3 -march=native"; else echo "- ThunderRW: not run (no --thunderrw DIR)"; fi
    if [ -n "$gap_bin" ]; then echo "- GAP: $GAP ($gap_commit), g++ -O3"; else echo "- GAP: not run (no --gap DIR)"; fi
    echo "- graph: R-MAT scale $SCALE, edge factor $EF, seed 1, weights U[1,5), labels U{0..4}; $("$B" info "$TMP/g.wfg" | sed -n 's/^edges: *//p')"
    echo "- runs: $REPEAT per cell, alternating peer and wayfarer; medians; command: \`scripts/cpu-peers-bench.sh${TRW:+ --thunderrw DIR}${GAP:+ --gap DIR}\` (THREADS=$THREADS REPEAT=$REPEAT TC_TRIALS=$TC_TRIALS SCALE=$SCALE EF=$EF)"
    echo
    echo "| walk | ThunderRW M steps/s | wayfarer M steps/s | wayfarer / ThunderRW |"
    echo "|---|---|---|---|"
} >>"$OUTMD"

trw_rate() { # app args... -> M steps/s from ThunderRW's "Throughput (steps per second)" summary line
    # Only the run's summary, "(func: compute)": each thread also prints its own throughput,
    # from functions whose names end in "compute" too (uniform_compute, ...). Matching those
    # as well put per-thread rates among the run's and the median picked one of them (before
    # 2026-12-05 20:20 UTC every ThunderRW figure in bench/results was one thread's, about
    # half the run's at 2 threads). Exactly one line per run, or the run fails here.
    local app="$1"; shift
    local lines
    lines="$("$trw_bin/$app" -f "$TMP/trw" -n "$THREADS" "$@" 2>&1 | grep -F '(func: compute)' | grep 'Throughput' | sed 's/.*: //')"
    [ "$(wc -l <<<"$lines")" = 1 ] && [ -n "$lines" ] || { echo "ThunderRW $app printed no single run throughput: $lines" >&2; return 1; }
    awk '{printf "%.3f\n", $1 / 1e6}' <<<"$lines"
}
wf_rate() { # walk args... -> M steps/s from `wayfarer walk`'s summary
    "$B" --threads "$THREADS" walk "$@" --graph "$TMP/g.wfg" --seed 1 -o "$TMP/w.npy" 2>&1 | grep -o '([0-9.]* M steps/s)' | tr -d '(' | cut -d' ' -f1
}
row() { # name, ThunderRW command (or "-"), wayfarer walk args
    local name="$1" trw_cmd="$2"; shift 2
    local t="$TMP/t.$RANDOM" w="$TMP/w.$RANDOM"
    for _ in $(seq "$REPEAT"); do
        if [ -n "$trw_bin" ] && [ "$trw_cmd" != "-" ]; then
            # shellcheck disable=SC2086
            trw_rate $trw_cmd >>"$t"
        fi
        wf_rate "$@" >>"$w"
    done
    local tm wm ratio="-"
    tm="$(median <"$t" 2>/dev/null || echo -)"; [ -s "$t" ] || tm="-"
    wm="$(median <"$w")"
    [ "$tm" != "-" ] && ratio="$(awk -v a="$wm" -v b="$tm" 'BEGIN {printf "%.2fx", a / b}')"
    echo "| $name | $tm | $wm | $ratio |" | tee -a "$OUTMD"
}
row "DeepWalk, unweighted" "deepwalk -em 0" deepwalk --unweighted
row "DeepWalk, weighted U[1,5)" "deepwalk -ew -em 1 -sm 2" deepwalk
row "Node2Vec a=2 b=0.5, unweighted" "node2vec" node2vec --unweighted
row "Node2Vec a=2 b=0.5, weighted" "node2vec_weighted -ew" node2vec
row "MetaPath 0..4, unweighted" "metapath -el -s 0,1,2,3,4 -l 5" metapath --unweighted -p schema=0,1,2,3,4

# --- triangles -----------------------------------------------------------------------------------
{
    echo
    echo "| triangles | GAP tc s | wayfarer s, in one process | GAP / wayfarer | wayfarer s, a fresh process each | GAP / wayfarer |"
    echo "|---|---|---|---|---|---|"
} >>"$OUTMD"
# Seconds from the summary's "orientation X ms, counting Y ms" (finer than its total).
wf_secs() { sed -n 's/.*orientation \([0-9.]*\) ms.*, counting \([0-9.]*\) ms.*/\1 \2/p' | awk '{printf "%.5f\n", ($1 + $2) / 1e3}'; }
wf_tc() { "$B" --threads "$THREADS" triangles "$@" 2>&1 | wf_secs; }
# GAP's way: TC_TRIALS trials in one process, their average (wayfarer's --trials, each trial's line).
wf_tc_trials() {
    "$B" --threads "$THREADS" triangles --trials "$TC_TRIALS" "$@" 2>&1 | grep '^trial [0-9]*:' | wf_secs |
        awk '{s += $1; n++} END {if (n) printf "%.5f\n", s / n}'
}
gap_tc() { OMP_NUM_THREADS="$THREADS" "$gap_bin/tc" -f "$1" -s -n "$TC_TRIALS" 2>&1 | sed -n 's/^Average Time: *//p' | tr -d ' '; }
tc_row() { # name, edge list for GAP (or ""), wayfarer args
    local name="$1" el="$2"; shift 2
    local g="-" w="$TMP/tw.$RANDOM"
    [ -n "$gap_bin" ] && [ -n "$el" ] && g="$(gap_tc "$el")"
    local wt
    wt="$(wf_tc_trials "$@")"
    for _ in $(seq "$REPEAT"); do wf_tc "$@" >>"$w"; done
    local wm ratio="-" fresh_ratio="-"
    wm="$(median <"$w")"
    [ "$g" != "-" ] && ratio="$(awk -v a="$g" -v b="$wt" 'BEGIN {printf "%.2fx", a / b}')"
    [ "$g" != "-" ] && fresh_ratio="$(awk -v a="$g" -v b="$wm" 'BEGIN {printf "%.2fx", a / b}')"
    echo "| $name | $g | $wt | $ratio | $wm | $fresh_ratio |" | tee -a "$OUTMD"
}
tc_row "R-MAT $SCALE, edge factor $EF" "$TMP/g.el" --graph "$TMP/g.wfg"
# WordNet: GAP needs dense ids, so the embedded graph goes through a .wfg and out as internal ids.
wn_el=""
if [ -n "$gap_bin" ]; then
    "$B" convert data/wordnet/wordnet-edges.txt.gz --label-col 3 -o "$TMP/wn.wfg" -q
    "$B" convert "$TMP/wn.wfg" -o "$TMP/wn.txt" -q
    python3 - "$TMP/wn.txt" "$TMP/wn.el" <<'PY'
import sys
ids = {}
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        if line.startswith("#"):
            continue
        s, d = line.split()[:2]
        out.write(f"{ids.setdefault(s, len(ids))} {ids.setdefault(d, len(ids))}\n")
PY
    wn_el="$TMP/wn.el"
fi
"$B" convert data/wordnet/wordnet-edges.txt.gz --label-col 3 --undirected --dedup -o "$TMP/wnu.wfg" -q
tc_row "WordNet (undirected, deduplicated)" "$wn_el" --graph "$TMP/wnu.wfg"
echo >>"$OUTMD"
echo "wrote $OUTMD" >&2
