#!/usr/bin/env bash
# Node2Vec embeddings of WordNet from Python, wayfarer's walks vs PecanPy's on the same graph,
# p and q (examples/python/node2vec_embeddings.py --pecanpy): time per stage and the
# part-of-speech accuracy of each. Builds the wheel (release), installs it with gensim,
# scikit-learn and PecanPy in a fresh virtual environment, and writes a results table.
#   scripts/python-embeddings-bench.sh [OUT.md] [-- extra arguments of the example]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-bench/results/$(date +%F)-python-node2vec-embeddings.md}"
shift || true
[ "${1:-}" = "--" ] && shift
CACHE="${WAYFARER_PY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wayfarer-python}"
TOOLS="$CACHE/tools"
if [ ! -x "$TOOLS/bin/maturin" ]; then
    python3 -m venv "$TOOLS" && "$TOOLS/bin/python" -m pip install -q "maturin>=1.9,<2"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$TOOLS/bin/maturin" build --quiet --locked --release -m python/Cargo.toml -o "$WORK/wheels"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --cache-dir "$CACHE/pip" gensim scikit-learn pecanpy "$WORK"/wheels/wayfarer-*.whl
LOG="$WORK/run.log"
"$WORK/venv/bin/python" examples/python/node2vec_embeddings.py --pecanpy "$@" | tee "$LOG"
{
    echo "# Node2Vec embeddings of WordNet from Python: wayfarer vs PecanPy"
    echo
    echo "- date: $(date -u '+%F %H:%M UTC'), commit $(git rev-parse --short=12 HEAD)"
    echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ {print $2}') GiB"
    echo "- versions: $("$WORK/venv/bin/python" -c 'import wayfarer, gensim, sklearn, pecanpy, numpy; print("wayfarer", wayfarer.__version__, "gensim", gensim.__version__, "scikit-learn", sklearn.__version__, "pecanpy", getattr(pecanpy, "__version__", "?"), "numpy", numpy.__version__)')"
    echo "- command: \`scripts/python-embeddings-bench.sh $OUT -- $*\`"
    echo
    echo '```'
    cat "$LOG"
    echo '```'
} >"$OUT"
echo "wrote $OUT"
