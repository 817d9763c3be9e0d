#!/usr/bin/env bash
# The CPU benchmark of issue 25 on a web-like graph: heavy-tailed degrees with hubs in the tens
# of thousands, about the size of the web graph the issue's ThunderRW numbers come from (325k
# nodes, 2.7M undirected edges, hubs of 18k). Graph500 R-MAT scale 18 with edge factor 10 gives
# 262k ids (157k with edges), 2.44M undirected edges and a largest row of 18.6k: cache-resident
# here. MEMORY_BOUND=1 adds R-MAT 22 (memory-bound on this machine). Prints and writes the
# timing table (2 threads, one walker per node) and, with COUNTS=1, the per-step counts.
#   scripts/cpu-web-bench.sh OUT.md        (uses target/release/wayfarer; build it first)
# Peers (ThunderRW, GAP) are not run by this script yet: see the issue's notes.
set -euo pipefail
cd "$(dirname "$0")/.."
OUTMD="${1:-cpu-web-bench.md}"
B=target/release/wayfarer
[ -x "$B" ] || { echo "build first: cargo build --release" >&2; exit 1; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
WALKS="${WALKS:-deepwalk,deepwalk-unweighted,node2vec,node2vec-unweighted,metapath-unweighted}"
: >"$OUTMD"
graphs=("18 10 web-like")
[ "${MEMORY_BOUND:-0}" = 1 ] && graphs+=("22 16 memory-bound")
for spec in "${graphs[@]}"; do
    read -r scale ef what <<<"$spec"
    "$B" gen rmat --scale "$scale" --edge-factor "$ef" --seed 1 --labels 5 -o "$TMP/g.wfg" -q
    echo "## R-MAT scale $scale, edge factor $ef ($what)" | tee -a "$OUTMD"
    "$B" info "$TMP/g.wfg" | sed 's/^/    /' | tee -a "$OUTMD"
    "$B" --threads 2 bench --graph "$TMP/g.wfg" --weights uniform --walks "$WALKS" --samplers adaptive -o "$TMP/t.md" >/dev/null
    tee -a "$OUTMD" <"$TMP/t.md"
    if [ "${COUNTS:-0}" = 1 ]; then
        "$B" bench --graph "$TMP/g.wfg" --weights uniform --walks "$WALKS" --samplers adaptive --counts -o "$TMP/c.md" >/dev/null
        tee -a "$OUTMD" <"$TMP/c.md"
    fi
done
