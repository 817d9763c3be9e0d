#!/usr/bin/env bash
# The published GPU triangle counters of issue 28, built from fetched copies and run on a
# wayfarer graph, for scripts/triangle-bench.sh's peer rows. Their code stays out of this
# repository: `fetch` them (wzbxpy/TRUST, Nanqipro/GroupTC-HS-BS), then
#   scripts/triangle-peers.sh build [--trust DIR] [--grouptc DIR]
#       builds into $PEERS_BIN (default .devbin/peers) with the nvcc on the PATH (or
#       $NVCC), for sm_90 ($PEERS_ARCH). Needs a CUDA toolkit, not a GPU. TRUST's host
#       driver calls MPI: it is built against bench/peers/mpi.h, a one-process stand-in, and
#       runs as a plain process (rank 0 of 1). The harness's NVTX 2 include goes to NVTX 3
#       through bench/peers/nvToolsExt.h.
#   scripts/triangle-peers.sh pack [--trust DIR] [--grouptc DIR] OUT.tar.xz
#       packs the sources a build needs (a few MB), to carry to the GPU machine, where
#       `tar -xJf OUT.tar.xz -C D` gives D/trust and D/grouptc to build from.
#   scripts/triangle-peers.sh prepare GRAPH.wfg
#       only prepares (and caches) the peers' inputs for GRAPH.
#   scripts/triangle-peers.sh run PEER GRAPH.wfg
#       prints `PEER: T triangles, counting kernel S s` (the best of $PEERS_REPEAT runs, 3 by
#       default). PEER: trust (the authors' TRUST: their preprocessing, orientation and
#       reordering by degree, then their kernel, 1024 blocks of 1024 threads, chunk 1, as
#       their README runs it), or one of the harness's kernels: grouptc-cuckoo, grouptc-opt,
#       grouptc, tricore, polak, h-index. Each
#       reports its own timer, as its paper does: a host clock around its counting kernel
#       and its synchronisation (the harness adds its sum over the blocks' counts); their
#       inputs are prepared (and cached under $PEERS_DATA, default .devbin/peers-data) before.
#       CUDA_MODULE_LOADING=EAGER keeps the module's loading out of the first launch.
set -euo pipefail
cd "$(dirname "$0")/.."
PEERS_BIN="$(mkdir -p "${PEERS_BIN:-.devbin/peers}" && cd "${PEERS_BIN:-.devbin/peers}" && pwd)"
PEERS_DATA="$(mkdir -p "${PEERS_DATA:-.devbin/peers-data}" && cd "${PEERS_DATA:-.devbin/peers-data}" && pwd)"
PEERS_ARCH="${PEERS_ARCH:-sm_90}"
PEERS_REPEAT="${PEERS_REPEAT:-3}"
NVCC="${NVCC:-nvcc}"
WF="${WF:-target/release/wayfarer}"
[ -x "$WF" ] || WF=.devbin/wayfarer
SHIM="$PWD/bench/peers"
PY="${PEERS_PYTHON:-python3}"

die() { echo "triangle-peers: $*" >&2; exit 2; }

build_trust() {
    local src="$1"
    [ -f "$src/Without-graph-partition/TC.cu" ] || die "--trust $src: no Without-graph-partition/TC.cu (a fetched wzbxpy/TRUST?)"
    echo "building TRUST from $src" >&2
    "$NVCC" -O3 -arch="$PEERS_ARCH" -I"$SHIM" -w "$src/Without-graph-partition/TC.cu" "$src/Without-graph-partition/mpi_main.cpp" \
        -o "$PEERS_BIN/trust-tc"
    g++ -O3 -w "$src/Preprocess/fromDirectToUndirect.cpp" -o "$PEERS_BIN/trust-undirect"
    g++ -O3 -w "$src/Preprocess/preprocess_outdegree.cpp" -o "$PEERS_BIN/trust-preprocess"
    g++ -O3 "$SHIM/trust_mmio.cpp" -o "$PEERS_BIN/trust-mmio"
}

build_grouptc() {
    local src="$1" obj="$PEERS_BIN/grouptc-obj"
    [ -f "$src/src/main.cu" ] || die "--grouptc $src: no src/main.cu (a fetched Nanqipro/GroupTC-HS-BS?)"
    echo "building the GroupTC harness from $src ($(nproc) jobs)" >&2
    mkdir -p "$obj"
    # Each source file on its own (the harness's CMakeLists names one machine's paths).
    (cd "$src" && find src -name '*.cu' -o -name '*.cpp') | sort |
        xargs -P "$(nproc)" -I{} sh -c '"$0" -std=c++17 -O3 -arch="$1" --extended-lambda -w -I"$2" -I"$3/include" -I"$3/3rdparty" \
            -Xcompiler -fopenmp -c "$3/{}" -o "$4/$(echo {} | tr / _).o"' "$NVCC" "$PEERS_ARCH" "$SHIM" "$src" "$obj"
    "$NVCC" -arch="$PEERS_ARCH" "$obj"/*.o -Xcompiler -fopenmp -o "$PEERS_BIN/grouptc-main"
}

# TRUST's input, in the graph's directory under $PEERS_DATA (kept for the next run): its
# first tool's file, 1.mmio, written by bench/peers/trust_mmio.cpp straight from the .wfg
# (byte for byte what trust-undirect makes of `wayfarer convert`'s text, minutes faster at
# R-MAT 24; PEERS_TRUST_TEXT=1 takes their way), then their orientation and degree
# reordering (trust-preprocess).
trust_input() {
    local g="$1" dir="$PEERS_DATA/trust-$(basename "$1" .wfg)"
    if [ ! -f "$dir/adjacent.bin" ]; then
        mkdir -p "$dir"
        if [ "${PEERS_TRUST_TEXT:-0}" = 1 ] || [ ! -x "$PEERS_BIN/trust-mmio" ]; then
            "$WF" convert "$g" -o "$dir/edges.txt" -q
            (cd "$dir" && "$PEERS_BIN/trust-undirect" edges.txt >/dev/null)
        else
            "$PEERS_BIN/trust-mmio" "$g" "$dir/1.mmio" || die "trust-mmio on $g failed"
        fi
        (cd "$dir" && "$PEERS_BIN/trust-preprocess" >/dev/null)
        rm -f "$dir/edges.txt" "$dir/1.mmio"
        [ -f "$dir/adjacent.bin" ] || die "TRUST's preprocessing of $g wrote no adjacent.bin"
    fi
    echo "$dir"
}

run_trust() {
    local dir best="" count="" line t c
    dir="$(trust_input "$1")"
    for _ in $(seq "$PEERS_REPEAT"); do
        # `dir,vertices,edges,triangles,seconds,G edges/s`
        line="$(CUDA_MODULE_LOADING=EAGER "$PEERS_BIN/trust-tc" "$dir" 1 1024 1024 1 2>&1)" || die "TRUST on $dir failed: $(echo "$line" | tail -3)"
        line="$(echo "$line" | tail -1)"
        c="$(echo "$line" | cut -d, -f4)"; t="$(echo "$line" | cut -d, -f5 | tr -d ' ')"
        [ -n "$c" ] && [ -n "$t" ] || die "TRUST printed no count: $line"
        count="$c"
        best="$(python3 -c "print(min(float('$t'), float('${best:-inf}')))")"
    done
    echo "trust: $count triangles, counting kernel $best s"
}

# The harness's input (bench/peers/grouptc_input.py), cached under $PEERS_DATA; prints its
# parent directory.
grouptc_input() {
    local g="$1" data="$PEERS_DATA/grouptc"
    [ -f "$data/$(basename "$g" .wfg)/adjacent.bin" ] || "$PY" bench/peers/grouptc_input.py "$g" "$data/$(basename "$g" .wfg)" >&2 ||
        die "the GroupTC input of $g could not be made"
    echo "$data"
}

# The harness's input and a config naming one kernel.
run_harness() {
    local peer="$1" g="$2" name key data ini out best="" count="" t c
    name="$(basename "$g" .wfg)"
    case "$peer" in
        grouptc-cuckoo) key=GroupTC-Cuckoo;; grouptc-opt) key=GroupTC-OPT;; grouptc) key=GroupTC;;
        tricore) key=TriCore;; polak) key=Polak;; h-index) key=H-INDEX;;
        *) die "unknown peer $peer";;
    esac
    data="$(grouptc_input "$g")"
    ini="$PEERS_DATA/grouptc-$key.ini"
    {
        echo "[comm]"
        echo "dataset_file_path = $data/"
        echo "log_file_path = $PEERS_DATA/grouptc-logs/"
        echo "datasets_1 = $name"
        echo "datasets_2 ="
        echo "multi_device = false"
        echo "preprocessing_iterations = 1"
        echo "device = 0"
        echo "log_level = info"
        for k in Bisson Fox Green GroupTC GroupTC-OPT GroupTC-Cuckoo GroupTC-HASH GroupTC-HASH-V2 H-INDEX Hu Polak TC-Check TRUST TriCore; do
            if [ "$k" = "$key" ]; then echo "$k = true"; else echo "$k = false"; fi
        done
        echo "[$key]"
        echo "iteration_count = 1"
        echo "device = 0"
    } >"$ini"
    mkdir -p "$PEERS_DATA/grouptc-logs"
    for _ in $(seq "$PEERS_REPEAT"); do
        out="$(CUDA_MODULE_LOADING=EAGER "$PEERS_BIN/grouptc-main" -config="$ini" 2>&1)" || die "$key on $name failed: $(echo "$out" | tail -3)"
        c="$(echo "$out" | sed -n 's/.*Triangle count \([0-9]*\).*/\1/p' | tail -1)"
        t="$(echo "$out" | sed -n 's/.*avg kernel use \([0-9.]*\) s.*/\1/p' | tail -1)"
        [ -n "$c" ] && [ -n "$t" ] || die "$key on $name printed no count: $(echo "$out" | tail -3)"
        count="$c"
        best="$(python3 -c "print(min(float('$t'), float('${best:-inf}')))")"
    done
    echo "$peer: $count triangles, counting kernel $best s"
}

# Sets trust and grouptc from --trust DIR / --grouptc DIR, and out from the one other argument.
sources() {
    trust=""; grouptc=""; out=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --trust) trust="$2"; shift 2;;
            --grouptc) grouptc="$2"; shift 2;;
            *) [ -z "$out" ] || die "one argument too many: $1"; out="$1"; shift;;
        esac
    done
}

cmd="${1:-}"; shift || true
case "$cmd" in
    build)
        sources "$@"
        [ -z "$out" ] || die "build: unknown argument $out"
        [ -n "$trust$grouptc" ] || die "build: give --trust DIR and/or --grouptc DIR"
        command -v "$NVCC" >/dev/null || die "no $NVCC on the PATH (set NVCC)"
        [ -z "$trust" ] || build_trust "$trust"
        [ -z "$grouptc" ] || build_grouptc "$grouptc"
        ls -l "$PEERS_BIN" >&2;;
    pack)
        sources "$@"
        [ -n "$out" ] && [ -n "$trust$grouptc" ] || die "usage: pack [--trust DIR] [--grouptc DIR] OUT.tar.xz"
        stage="$(mktemp -d)"
        if [ -n "$trust" ]; then
            mkdir -p "$stage/trust" && cp -r "$trust/Without-graph-partition" "$trust/Preprocess" "$stage/trust/"
        fi
        if [ -n "$grouptc" ]; then
            mkdir -p "$stage/grouptc" && cp -r "$grouptc/src" "$grouptc/include" "$grouptc/3rdparty" "$stage/grouptc/"
        fi
        tar -cJf "$out" -C "$stage" .
        rm -rf "$stage"
        ls -l "$out" >&2;;
    run)
        [ $# -eq 2 ] || die "usage: run PEER GRAPH.wfg"
        peer="$1"; g="$2"
        case "$peer" in
            trust|grouptc-cuckoo|grouptc-opt|grouptc|tricore|polak|h-index) ;;
            *) die "unknown peer $peer (trust, grouptc-cuckoo, grouptc-opt, grouptc, tricore, polak, h-index; the harness's own TRUST reads its DCSR format, which is not prepared here: `trust` is the authors' code)";;
        esac
        [ -f "$g" ] || die "$g: no such graph"
        if [ "$peer" = trust ]; then
            [ -x "$PEERS_BIN/trust-tc" ] || die "TRUST is not built in $PEERS_BIN (run: $0 build --trust DIR)"
            run_trust "$g"
        else
            [ -x "$PEERS_BIN/grouptc-main" ] || die "the GroupTC harness is not built in $PEERS_BIN (run: $0 build --grouptc DIR)"
            run_harness "$peer" "$g"
        fi;;
    prepare)
        # Only the inputs (cached for `run`): at R-MAT 24 TRUST's preprocessing takes minutes,
        # which a device call of its own can spend while the next one measures.
        [ $# -eq 1 ] && [ -f "$1" ] || die "usage: prepare GRAPH.wfg"
        # (Assigned first: a failure inside $(...) in an echo's words would go unnoticed.)
        if [ -x "$PEERS_BIN/trust-preprocess" ]; then dir="$(trust_input "$1")"; echo "TRUST input: $dir"; fi
        data="$(grouptc_input "$1")"
        echo "GroupTC input: $data/$(basename "$1" .wfg)";;
    *) die "usage: $0 build [--trust DIR] [--grouptc DIR] | pack [--trust DIR] [--grouptc DIR] OUT.tar.xz | prepare GRAPH.wfg | run PEER GRAPH.wfg";;
esac
