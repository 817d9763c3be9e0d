#!/usr/bin/env bash
# Measurements for one device call, after scripts/gpu-build.sh here (carry .devpack and .gl):
#   MODE="check ab tri peers py spread tritest" scripts/device-measure.sh
# Each mode writes its files under $OUT (the device tool's output folder):
#   check    the whole GPU check without benchmarks (BENCH=0 scripts/gpu-check.sh)
#   ab       Node2Vec walk-kernel switches (scripts/kernel-defines-ab.sh; ABSPECS, ABREP, ABT)
#            and WAYFARER_MIN_BLOCKS 0 against 4
#   tri      R-MAT 20 triangle block-table sweep (spread, slots) and ncu per-kernel times
#   peers    the published triangle counters beside wayfarer (PG graphs, PR rows, PT limit)
#   py       repeated g.walk(backend="cuda") calls from the wheel, timed
#   spread   spread 4 against 8 on web-like, R-MAT 22 and Erdős–Rényi
#   tritest  the GPU triangle tests and default counting times on 20, web, 22
#   agg      wayfarer.aggregate: its tests with CUDA, the GraphSAGE example, bench/aggregate.py
#            on R-MAT 20 and 22 (AGGB batch sizes, default "1024 8192")
#   sage     the GraphSAGE epoch on R-MAT 22 (bench/graphsage_epoch.py), --mean for each of
#            SAGEM (default "wayfarer index_add"), for each variant of SAGEV (default "base";
#            "name=VAR=value,..." sets an environment, e.g. "old=SAGE_PKG=old new")
#   step     bench/graphsage_step_profile.py on R-MAT 22 (STEPARGS, e.g. --table): the training
#            step alone per model form, mean and Adam, its parts' host time, one mean's call;
#            again with the modules of each .devpack/NAME/py
#   gather   bench/feature_gather.py on R-MAT GATHERG (default "22 24"): FeatureStore against
#            index_select on pinned memory, dims 128/512, budgets 0/10/30/100%
#   group    the counting kernel's launches (WAYFARER_TRI_FUSE) and warp units per grab
#            (WAYFARER_TRI_WARP_GROUP) on WordNet, web-like, R-MAT 20 and Erdős–Rényi,
#            alternating, after the triangle tests; kernel knobs on R-MAT 20; ncu on WordNet
#   tasks    the counting kernel's long tasks chosen (default) against never
#            (WAYFARER_TRI_LONG_TASKS=0) on WordNet, web-like, R-MAT 20 and 22, Erdős–Rényi,
#            after the triangle tests; ncu per-kernel times on R-MAT 20
#   lanes    lane units as (owner, partner) pairs split statically (default) against units of
#            two partners (WF_T_LANE_PAIRS=0), also grabbed (WF_T_LANE_GRAB=1), and two launches,
#            on WordNet, web-like, R-MAT 20, Erdős–Rényi, after the triangle tests (each way);
#            ncu on WordNet (each way) and R-MAT 20
#   oocs     the GPU sampling tests (out of core among them) and python/tests/test_torch.py and
#            test_graph.py with CUDA, then R-MAT 22 sampled ([25,10],
#            batches of 1024) with the whole graph on the device and with graph budgets of
#            400M, 200M and 100M (out of core)
#   warps    warp units split statically at first (WF_T_WARP_STATIC=1) against grabbed (default):
#            the triangle tests each way, counting times on WordNet, web-like, R-MAT 20 and 22,
#            Erdős–Rényi, alternating, and ncu of WordNet's counting kernel each way
#   wunit    warp units of WF_T_WARP_UNIT 32/16/8/4 partners, each with and without the static
#            first round: ncu of WordNet's counting kernel, times on web-like, R-MAT 20, Erdős–Rényi
#   edges    a thread per oriented edge for small flat graphs (default) against the lists
#            (WAYFARER_TRI_EDGE_THREADS=0) and 9818c19's kernel (carry bench/scratch): triangle
#            tests, ncu on WordNet, times on four graphs
#   mb       Node2Vec unweighted on R-MAT 20 with WAYFARER_MIN_BLOCKS 0 (the default) against
#            4, three rounds alternating
#   prep24   builds the triangle peers, makes R-MAT 24 and prepares their inputs (one call)
#   peers24  R-MAT 24: wayfarer and the peers (the next call, on the same warm machine)
set -u
cd "$(dirname "$0")/.."
if [ -f .devpack/devbin.tar.xz ] && [ ! -x .devbin/wayfarer ]; then
  mkdir -p .devbin && python3 -c "import tarfile; tarfile.open('.devpack/devbin.tar.xz').extractall('.devbin')"
fi
. scripts/nvrtc-env.sh
export WAYFARER_CACHE_DIR=/tmp/wfc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
cat .devbin/commit >> "$OUT/gpu.txt"
# The path of a named graph (20, 22, web, er), made on first use.
graph() {
    local g=/tmp/$1.wfg
    if [ ! -f "$g" ]; then
        case $1 in
            web) .devbin/wayfarer gen rmat --scale 18 --edge-factor 10 --seed 1 -o "$g" -q;;
            er) .devbin/wayfarer gen er --nodes 1000000 --avg-degree 32 --seed 1 -o "$g" -q;;
            *) .devbin/wayfarer gen rmat --scale "$1" --edge-factor 16 --seed 1 -o "$g" -q;;
        esac
    fi
    echo "$g"
}
# Counting time and table size of one default (or tuned, by the environment) count.
tri_line() {
    timeout 30 .devbin/wayfarer triangles --graph "$1" --backend cuda 2>&1 | tail -1 |
        grep -o '^[0-9]* triangles\|counting kernels [0-9.]* ms\|block tables of [0-9]* slots' | tr '\n' ' '
}
G="$(graph 20)"
for m in ${MODE}; do case $m in
check)
  BENCH=0 OUT=$OUT/check timeout 330 scripts/gpu-check.sh > "$OUT/check.txt" 2>&1; echo "check rc $?" >> "$OUT/check.txt";;
ab)
  REPEATS=${ABREP:-3} SPECS="${ABSPECS:-node2vec|80|--unweighted node2vec|80|}" VARIANTS="base= keep=WF_L2_KEEP=1 pfs=WF_PF_SIG=1 pfs2=WF_PF_SIG=2 pfn=WF_PF_NEXT=1 both=WF_PF_SIG=1,WF_PF_NEXT=1" timeout ${ABT:-200} scripts/kernel-defines-ab.sh > "$OUT/ab.md" 2>&1
  echo "ab rc $?" >> "$OUT/ab.md"
  for mb in 0 4; do for r in 1 2; do
    echo "minblocks $mb round $r: $(WAYFARER_MIN_BLOCKS=$mb timeout 30 .devbin/wayfarer walk node2vec --graph $G --backend cuda --length 80 --unweighted --seed 1 -o /tmp/w.npy 2>&1 | tail -1)" >> "$OUT/minblocks.txt"
  done; done;;
tri)
  for r in 1 2 3; do for s in 4 2 8 16; do
    echo "spread $s round $r: $(WAYFARER_TRI_BLOCK_SPREAD=$s timeout 30 .devbin/wayfarer triangles --graph $G --backend cuda 2>&1 | tail -2 | tr '\n' ' ')" >> "$OUT/tri-spread.txt"
  done; done
  for r in 1 2; do for w in 2048 4096 8192; do
    echo "slots $w round $r: $(WAYFARER_TRI_BLOCK_SLOTS=$w timeout 30 .devbin/wayfarer triangles --graph $G --backend cuda 2>&1 | tail -2 | tr '\n' ' ')" >> "$OUT/tri-spread.txt"
  done; done
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum .devbin/wayfarer triangles --graph $G --backend cuda > "$OUT/ncu-tri20.txt" 2>&1
  echo "ncu rc $?" >> "$OUT/ncu-tri20.txt";;
peers)
  mkdir -p /tmp/ps && tar -xJf .devbin/peers-src.tar.xz -C /tmp/ps && scripts/triangle-peers.sh build --trust /tmp/ps/trust --grouptc /tmp/ps/grouptc > "$OUT/peers-build.log" 2>&1; echo "peers build rc $?" >> "$OUT/peers-build.log"
  BENCH_DIR=/tmp/tb WF=.devbin/wayfarer timeout ${PT:-400} scripts/triangle-bench.sh "${PG:-20 22 24}" ${PR:-wayfarer-cuda,wayfarer-cuda-keep-all,wayfarer-cuda-half,grouptc-cuckoo,grouptc-opt,tricore,trust} "$OUT/peers.md" > "$OUT/peers.log" 2>&1
  echo "peers rc $?" >> "$OUT/peers.log";;
py)
  python3 -m pip install -q --no-deps --target /tmp/py .devbin/wayfarer-*.whl
  PYTHONPATH=/tmp/py timeout 120 python3 - > "$OUT/py-walk.txt" 2>&1 <<'PY'
import time, wayfarer
g = wayfarer.Graph.load('/tmp/20.wfg')
for walk in ["deepwalk", "node2vec"]:
    for i in range(3):
        t = time.perf_counter()
        w = g.walk(walk, length=80, backend="cuda", seed=1, verbose=True)
        print(walk, i, "call seconds %.3f" % (time.perf_counter() - t), w.shape, flush=True)
PY
;;
spread)
  for gname in web 22 er; do
    for r in 1 2 3; do for sp in 4 8; do
      echo "$gname spread $sp round $r: $(WAYFARER_TRI_BLOCK_SPREAD=$sp tri_line "$(graph $gname)")" >> "$OUT/tri-spread2.txt"
    done; done
  done;;
agg)
  python3 -m pip install -q --no-deps --target /tmp/py .devbin/wayfarer-*.whl
  PYTHONPATH=/tmp/py timeout 200 python3 -m pytest -q -p no:cacheprovider python/tests/test_aggregate.py > "$OUT/agg-tests.txt" 2>&1
  echo "agg tests rc $?" >> "$OUT/agg-tests.txt"
  PYTHONPATH=/tmp/py timeout 120 python3 examples/python/graphsage.py --device cuda > "$OUT/graphsage.txt" 2>&1
  echo "graphsage rc $?" >> "$OUT/graphsage.txt"
  for gname in 20 22; do for bs in ${AGGB:-1024 8192}; do
    PYTHONPATH=/tmp/py timeout 150 python3 bench/aggregate.py "$(graph $gname)" --batch "$bs" -o "$OUT/agg-$gname-$bs.md" > "$OUT/agg-$gname-$bs.log" 2>&1
    echo "rc $?" >> "$OUT/agg-$gname-$bs.log"
  done; done;;
prep24)
  mkdir -p /tmp/ps /tmp/tb && tar -xJf .devbin/peers-src.tar.xz -C /tmp/ps && scripts/triangle-peers.sh build --trust /tmp/ps/trust --grouptc /tmp/ps/grouptc > "$OUT/peers-build.log" 2>&1; echo "peers build rc $?" >> "$OUT/peers-build.log"
  [ -f /tmp/tb/rmat24.wfg ] || .devbin/wayfarer gen rmat --scale 24 --edge-factor 16 --seed 1 -o /tmp/tb/rmat24.wfg -q
  timeout ${PT:-520} scripts/triangle-peers.sh prepare /tmp/tb/rmat24.wfg > "$OUT/prep24.log" 2>&1; echo "prepare rc $?" >> "$OUT/prep24.log";;
peers24)
  BENCH_DIR=/tmp/tb WF=.devbin/wayfarer timeout ${PT:-560} scripts/triangle-bench.sh "24" ${PR:-wayfarer-cuda,grouptc-cuckoo,grouptc-opt,tricore,trust} "$OUT/peers24.md" > "$OUT/peers24.log" 2>&1
  echo "peers24 rc $?" >> "$OUT/peers24.log";;
sage)
  python3 -m pip install -q --no-deps --upgrade --target /tmp/py .devbin/wayfarer-*.whl
  # The working tree's Python modules over the wheel's (a Python-only change needs no rebuild).
  cp python/wayfarer/*.py /tmp/py/wayfarer/
  # SAGEV: variants, each "name" or "name=VAR=value,VAR=value" (environment for that run)
  # A variant with SAGE_PKG=NAME runs the wheel and modules in .devpack/NAME/ (the wheel of
  # .devbin when it has none there): an A/B against the build before a change, copied there
  # before rebuilding, or against other Python modules only.
  for d in .devpack/*/py; do
    pkg=$(basename "$(dirname "$d")"); whl=$(ls .devpack/$pkg/wayfarer-*.whl 2>/dev/null || ls .devbin/wayfarer-*.whl)
    python3 -m pip install -q --no-deps --upgrade --target /tmp/py-$pkg $whl && cp $d/*.py /tmp/py-$pkg/wayfarer/
  done
  for v in ${SAGEV:-base}; do
    name=${v%%=*}; envs=""; [ "$name" != "$v" ] && envs=$(echo "${v#*=}" | tr ',' ' ')
    pp=/tmp/py
    for e in $envs; do case $e in SAGE_PKG=*) pp=/tmp/py-${e#SAGE_PKG=};; esac; done
    for mean in ${SAGEM:-wayfarer index_add}; do
      env $envs PYTHONPATH=$pp timeout ${SAGET:-250} python3 bench/graphsage_epoch.py "$(graph 22)" --mean "$mean" ${SAGEARGS:-} > "$OUT/sage-$name-$mean.md" 2>&1
      echo "sage $name ($envs) $mean rc $?" >> "$OUT/sage-$name-$mean.md"
    done
  done;;
step)
  python3 -m pip install -q --no-deps --upgrade --target /tmp/py .devbin/wayfarer-*.whl
  cp python/wayfarer/*.py /tmp/py/wayfarer/
  PYTHONPATH=/tmp/py timeout ${STEPT:-200} python3 bench/graphsage_step_profile.py "$(graph 22)" ${STEPARGS:-} > "$OUT/step.md" 2>&1
  echo "step rc $?" >> "$OUT/step.md"
  # The same with the modules of each .devpack/NAME/py (an A/B of Python-only changes).
  for d in .devpack/*/py; do
    [ -d "$d" ] || continue
    pkg=$(basename "$(dirname "$d")")
    rm -rf /tmp/py-$pkg && cp -r /tmp/py /tmp/py-$pkg && cp $d/*.py /tmp/py-$pkg/wayfarer/
    PYTHONPATH=/tmp/py-$pkg timeout ${STEPT:-200} python3 bench/graphsage_step_profile.py "$(graph 22)" ${STEPARGS:-} > "$OUT/step-$pkg.md" 2>&1
    echo "step $pkg rc $?" >> "$OUT/step-$pkg.md"
  done;;
gather)
  python3 -m pip install -q --no-deps --target /tmp/py .devbin/wayfarer-*.whl
  for gname in ${GATHERG:-22 24}; do
    PYTHONPATH=/tmp/py timeout ${GATHERT:-280} python3 bench/feature_gather.py "$(graph $gname)" > "$OUT/gather-$gname.md" 2>&1
    echo "gather $gname rc $?" >> "$OUT/gather-$gname.md"
  done;;
group)
  timeout 150 .devbin/gpu-tests --test-threads 1 triangle orientation > "$OUT/tritest.txt" 2>&1; echo "tritest rc $?" >> "$OUT/tritest.txt"
  # before: two launches, warp units four a grab (the counting of 67b5534); fuse0: two
  # launches, warp units per grab chosen; default: also one launch where it fits one wave
  for gname in wordnet web 20 er; do
    if [ $gname = wordnet ]; then ga=""; else ga="--graph $(graph $gname)"; fi
    for r in 1 2 3; do for v in before fuse0 default; do
      case $v in before) e="WAYFARER_TRI_FUSE=0 WAYFARER_TRI_WARP_GROUP=4";; fuse0) e="WAYFARER_TRI_FUSE=0";; *) e="";; esac
      echo "$gname $v round $r: $(env $e timeout 30 .devbin/wayfarer triangles $ga --backend cuda 2>&1 | tail -1 | grep -o '^[0-9]* triangles\|counting kernels [0-9.]* ms' | tr '\n' ' ')" >> "$OUT/tri-group.txt"
    done; done
  done
  for r in 1 2; do for task in WF_T_TASK=4 WF_T_TASK=3 WF_T_TASK=5 WF_T_WARP_UNIT=64 WF_T_BLOCK_UNIT=8192; do
    echo "20 $task round $r: $(WAYFARER_CUDA_DEFINES=$task timeout 30 .devbin/wayfarer triangles --graph $G --backend cuda 2>&1 | tail -1 | grep -o '^[0-9]* triangles\|counting kernels [0-9.]* ms' | tr '\n' ' ')" >> "$OUT/tri-group.txt"
  done; done
  if command -v ncu > /dev/null; then
    for v in before default; do
      case $v in before) e="WAYFARER_TRI_FUSE=0 WAYFARER_TRI_WARP_GROUP=4";; *) e="";; esac
      env $e timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum .devbin/wayfarer triangles --backend cuda > "$OUT/ncu-wordnet-$v.txt" 2>&1
    done
  fi;;
tasks)
  timeout 150 .devbin/gpu-tests --test-threads 1 triangle orientation > "$OUT/tritest.txt" 2>&1; echo "tritest rc $?" >> "$OUT/tritest.txt"
  for gname in wordnet web 20 22 er; do
    if [ $gname = wordnet ]; then ga=""; else ga="--graph $(graph $gname)"; fi
    for r in 1 2; do for lt in default 0; do
      if [ $lt = default ]; then e=""; else e="WAYFARER_TRI_LONG_TASKS=0"; fi
      echo "$gname long tasks $lt round $r: $(env $e timeout 30 .devbin/wayfarer triangles $ga --backend cuda 2>&1 | tail -1 | grep -o '^[0-9]* triangles\|counting kernels [0-9.]* ms' | tr '\n' ' ')" >> "$OUT/tri-tasks.txt"
    done; done
  done
  for r in 1 2; do for v in "WAYFARER_TRI_FUSE=1" "WAYFARER_TRI_FUSE=0" "WAYFARER_CUDA_DEFINES=WF_T_LANE_UNIT=1" "WAYFARER_CUDA_DEFINES=WF_T_LANE_UNIT=4"; do
    echo "wordnet $v round $r: $(env $v timeout 30 .devbin/wayfarer triangles --backend cuda 2>&1 | tail -1 | grep -o 'counting kernels [0-9.]* ms\|one launch')" >> "$OUT/tri-tasks.txt"
  done; done
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum .devbin/wayfarer triangles --graph $G --backend cuda > "$OUT/ncu-tri20.txt" 2>&1
  echo "ncu rc $?" >> "$OUT/ncu-tri20.txt"
  for v in 2 1; do
    WAYFARER_CUDA_DEFINES=WF_T_LANE_UNIT=$v timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum .devbin/wayfarer triangles --backend cuda > "$OUT/ncu-wordnet-lane$v.txt" 2>&1
  done;;
lanes)
  timeout 150 .devbin/gpu-tests --test-threads 1 triangle orientation > "$OUT/tritest.txt" 2>&1; echo "tritest rc $?" >> "$OUT/tritest.txt"
  for d in WF_T_LANE_PAIRS=0 WF_T_LANE_GRAB=1,WF_T_LANE_PAIRS=0; do
    WAYFARER_CUDA_DEFINES=$d timeout 150 .devbin/gpu-tests --test-threads 1 triangle > "$OUT/tritest-$d.txt" 2>&1; echo "tritest $d rc $?" >> "$OUT/tritest-$d.txt"
  done
  # before: units of two partners grabbed 32 at a time from one counter; units2: the same
  # split statically; default: (owner, partner) pairs split statically; fuse0: two launches
  for gname in wordnet web 20 er; do
    if [ $gname = wordnet ]; then ga=""; else ga="--graph $(graph $gname)"; fi
    for r in 1 2 3; do for v in before units2 default fuse0; do
      case $v in before) e="WAYFARER_CUDA_DEFINES=WF_T_LANE_GRAB=1,WF_T_LANE_PAIRS=0";; units2) e="WAYFARER_CUDA_DEFINES=WF_T_LANE_PAIRS=0";; fuse0) e="WAYFARER_TRI_FUSE=0";; *) e="";; esac
      echo "$gname $v round $r: $(env $e timeout 30 .devbin/wayfarer triangles $ga --backend cuda 2>&1 | tail -1 | grep -o '^[0-9]* triangles\|counting kernels [0-9.]* ms\|one launch' | tr '\n' ' ')" >> "$OUT/tri-lanes.txt"
    done; done
  done
  for d in WF_T_LANE_GRAB=0 WF_T_LANE_PAIRS=0 WF_T_LANE_GRAB=1,WF_T_LANE_PAIRS=0; do
    WAYFARER_CUDA_DEFINES=$d timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum .devbin/wayfarer triangles --backend cuda > "$OUT/ncu-wordnet-$d.txt" 2>&1
  done
  WAYFARER_TRI_FUSE=0 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum .devbin/wayfarer triangles --backend cuda > "$OUT/ncu-wordnet-fuse0.txt" 2>&1
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum .devbin/wayfarer triangles --graph $G --backend cuda > "$OUT/ncu-tri20.txt" 2>&1;;
oocs)
  timeout 240 .devbin/gpu-tests --test-threads 1 sampling > "$OUT/sampletest.txt" 2>&1; echo "sampletest rc $?" >> "$OUT/sampletest.txt"
  python3 -m pip install -q --no-deps --target /tmp/pysite .devbin/wayfarer-*.whl > "$OUT/pytorch.txt" 2>&1
  PYTHONPATH=/tmp/pysite timeout 240 python3 -m pytest -q -p no:cacheprovider -rs python/tests/test_torch.py python/tests/test_graph.py >> "$OUT/pytorch.txt" 2>&1; echo "pytest rc $?" >> "$OUT/pytorch.txt"
  g22="$(graph 22)"
  for r in 1 2; do for b in whole 400M 200M 100M; do
    if [ $b = whole ]; then ba=""; else ba="--device-graph-budget $b"; fi
    echo "r22 $b round $r: $(timeout 120 .devbin/wayfarer sample --graph $g22 --fanouts 25,10 --batch-size 1024 --backend cuda $ba 2>&1 | tail -1)" >> "$OUT/oocs.txt"
  done; done;;
warps)
  timeout 150 .devbin/gpu-tests --test-threads 1 triangle orientation > "$OUT/tritest.txt" 2>&1; echo "tritest rc $?" >> "$OUT/tritest.txt"
  WAYFARER_CUDA_DEFINES=WF_T_WARP_STATIC=1 timeout 150 .devbin/gpu-tests --test-threads 1 triangle > "$OUT/tritest-static.txt" 2>&1; echo "tritest static rc $?" >> "$OUT/tritest-static.txt"
  for gname in wordnet web 20 22 er; do
    if [ $gname = wordnet ]; then ga=""; else ga="--graph $(graph $gname)"; fi
    for r in 1 2 3; do for v in grab static; do
      if [ $v = static ]; then e="WAYFARER_CUDA_DEFINES=WF_T_WARP_STATIC=1"; else e=""; fi
      echo "$gname $v round $r: $(env $e timeout 30 .devbin/wayfarer triangles $ga --backend cuda 2>&1 | tail -1 | grep -o '^[0-9]* triangles\|counting kernels [0-9.]* ms' | tr '\n' ' ')" >> "$OUT/tri-warps.txt"
    done; done
  done
  for r in 1 2; do for v in grab static; do
    if [ $v = static ]; then e="WAYFARER_CUDA_DEFINES=WF_T_WARP_STATIC=1"; else e=""; fi
    echo "ncu wordnet $v round $r: $(env $e timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:wf_t_count .devbin/wayfarer triangles --backend cuda 2>&1 | grep -o 'us  *[0-9.]*' | tr '\n' ' ')" >> "$OUT/tri-warps.txt"
  done; done;;
wunit)
  # Warp-unit size (WF_T_WARP_UNIT partners, default 32) and the static first round: counts,
  # ncu on WordNet's counting kernel, CUDA-event times on the other graphs.
  .devbin/wayfarer triangles --backend cuda 2>&1 | tail -3 > "$OUT/wunit-summary.txt"
  for r in 1 2; do for wu in 32 16 8 4; do for st in 0 1; do
    d="WF_T_WARP_UNIT=${wu}ull,WF_T_WARP_STATIC=$st"
    echo "ncu wordnet $d round $r: $(WAYFARER_CUDA_DEFINES=$d timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:wf_t_count .devbin/wayfarer triangles --backend cuda 2>&1 | grep -o '^[0-9]* triangles\|us  *[0-9.]*' | tr '\n' ' ')" >> "$OUT/wunit.txt"
  done; done; done
  for gname in web 20 er; do for r in 1 2; do for wu in 32 16 8; do
    d="WF_T_WARP_UNIT=${wu}ull"
    echo "$gname $d round $r: $(WAYFARER_CUDA_DEFINES=$d tri_line "$(graph $gname)")" >> "$OUT/wunit.txt"
  done; done; done;;
edges)
  # A thread per oriented edge for small flat graphs (default) against the lists
  # (WAYFARER_TRI_EDGE_THREADS=0) and 9818c19's kernel (bench/scratch/old-wayfarer.xz, carried):
  # the triangle tests, ncu of WordNet's kernels, times on five graphs.
  timeout 200 .devbin/gpu-tests --test-threads 1 triangle orientation > "$OUT/tritest.txt" 2>&1; echo "tritest rc $?" >> "$OUT/tritest.txt"
  .devbin/wayfarer triangles --backend cuda 2>&1 | tail -1 > "$OUT/edges-summary.txt"
  [ -f bench/scratch/old-wayfarer.xz ] && xz -dkf bench/scratch/old-wayfarer.xz && chmod +x bench/scratch/old-wayfarer
  for r in 1 2 3 4 5; do for v in old default 0; do
    case $v in old) b=bench/scratch/old-wayfarer; e="";; 0) b=.devbin/wayfarer; e="WAYFARER_TRI_EDGE_THREADS=0";; *) b=.devbin/wayfarer; e="";; esac
    [ -x $b ] || continue
    echo "ncu wordnet $v round $r: $(env $e timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:wf_t_ $b triangles --backend cuda 2>&1 | grep -o 'wf_t_[a-z_]*\|us  *[0-9.]*' | tr '\n' ' ')" >> "$OUT/edges.txt"
  done; done
  for gname in wordnet web 20 er; do
    if [ $gname = wordnet ]; then ga=""; else ga="--graph $(graph $gname)"; fi
    for r in 1 2; do for v in default 0; do
      if [ $v = 0 ]; then e="WAYFARER_TRI_EDGE_THREADS=0"; else e=""; fi
      echo "$gname $v round $r: $(env $e timeout 30 .devbin/wayfarer triangles $ga --backend cuda 2>&1 | tail -1 | grep -o 'triangles: [0-9]*\|work lists [0-9.]* ms\|counting kernels [0-9.]* ms\|a thread per oriented edge' | tr '\n' ' ')" >> "$OUT/edges.txt"
    done; done
  done;;
mb)
  for r in 1 2 3; do for mb in 0 4; do
    echo "minblocks $mb round $r: $(WAYFARER_MIN_BLOCKS=$mb timeout 30 .devbin/wayfarer walk node2vec --graph $G --backend cuda --length 80 --unweighted --seed 1 -o /tmp/w.npy 2>&1 | tail -1)" >> "$OUT/minblocks.txt"
  done; done;;
tritest)
  timeout 120 .devbin/gpu-tests --test-threads 1 triangle orientation > "$OUT/tritest.txt" 2>&1; echo "tritest rc $?" >> "$OUT/tritest.txt"
  for gname in 20 web 22; do
    for r in 1 2 3; do
      echo "$gname default round $r: $(tri_line "$(graph $gname)")" >> "$OUT/tri-default.txt"
    done
  done;;
*) echo "unknown mode $m" >&2; exit 2;;
esac; done
