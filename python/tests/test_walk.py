"""Walks from Python: shapes, padding, ids, seeds, the same walks as the CLI, exact
transition probabilities, edges, programs compiled from strings, interrupts and the GIL."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import wayfarer
from conftest import random_graph

ALPHA = 1e-4  # significance of the chi-square tests below


def test_shape_padding_and_dead_ends():
    # 0 -> 1 -> 2, and 2 has no out-edges: every walk ends there.
    g = wayfarer.Graph.from_edge_index(np.array([[0, 1], [1, 2]]))
    w = g.walk("deepwalk", length=4, seed=0)
    assert w.dtype == np.int64 and w.shape == (3, 5)
    assert w.tolist() == [[0, 1, 2, -1, -1], [1, 2, -1, -1, -1], [2, -1, -1, -1, -1]]
    w, e = g.walk("deepwalk", length=4, seed=0, return_edges=True)
    assert e.shape == (3, 4)
    assert e.tolist() == [[0, 1, -1, -1], [1, -1, -1, -1], [-1, -1, -1, -1]]


def test_start_and_walks_per_node_order():
    ei, _ = random_graph(50, 400, 1)
    g = wayfarer.Graph.from_edge_index(ei, undirected=True)
    w = g.walk("deepwalk", start=[3, 7], walks_per_node=3, length=5, seed=1)
    assert w[:, 0].tolist() == [3, 7, 3, 7, 3, 7]
    every = g.walk("deepwalk", walks_per_node=2, length=5, seed=1)
    assert every[:, 0].tolist() == list(range(50)) * 2
    with pytest.raises(ValueError, match=r"start\[1\] = 99: not a node of the graph"):
        g.walk("deepwalk", start=[1, 99])
    with pytest.raises(ValueError, match="walks_per_node = 0"):
        g.walk("deepwalk", walks_per_node=0)


def test_a_seed_fixes_the_walks_whatever_the_thread_count():
    ei, w = random_graph(300, 3000, 2, weighted=True)
    g = wayfarer.Graph.from_edge_index(ei, edge_weight=w, undirected=True)
    a = g.walk("node2vec", length=20, seed=5, threads=1)
    b = g.walk("node2vec", length=20, seed=5, threads=2)
    c = g.walk("node2vec", length=20, seed=6, threads=2)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    # p and q are node2vec's a and b.
    assert np.array_equal(g.walk("node2vec", length=20, seed=5, p=1.5, q=0.7), g.walk("node2vec", length=20, seed=5, a=1.5, b=0.7))
    with pytest.raises(TypeError, match="given twice"):
        g.walk("node2vec", p=1.0, a=1.0)


def test_the_same_walks_as_the_cli(cli, tmp_path):
    ei, w = random_graph(200, 1500, 4, weighted=True)
    labels = np.random.default_rng(4).integers(0, 5, ei.shape[1])
    g = wayfarer.Graph.from_edge_index(ei, edge_weight=w, edge_label=labels, undirected=True)
    g.save(tmp_path / "g.wfg")
    for name, extra in [("node2vec", ["-p", "a=1.5", "-p", "b=0.25"]), ("metapath", []), ("ppr", [])]:
        out = tmp_path / f"{name}.npy"
        cli("walk", name, "--graph", str(tmp_path / "g.wfg"), "--length", "12", "--seed", "9", "--backend", "cpu",
            "-q", "-o", str(out), *extra)
        ref = np.load(out).astype(np.int64)
        ref[ref == np.iinfo(np.uint32).max] = -1
        kw = {"p": 1.5, "q": 0.25} if name == "node2vec" else {}
        mine = g.walk(name, length=12, seed=9, backend="cpu", **kw)
        assert np.array_equal(mine, ref), name


def test_one_step_follows_the_weights_exactly():
    # A hub with skewed weights given in shuffled order, a zero weight and a parallel edge:
    # the weights must follow their edges through the CSR sort.
    scipy_stats = pytest.importorskip("scipy.stats")
    targets = np.array([5, 1, 4, 2, 3, 1])
    weights = np.array([0.5, 8.0, 0.0, 2.0, 1.0, 4.0])
    g = wayfarer.Graph.from_edge_index(np.stack([np.zeros(6, dtype=np.int64), targets]), num_nodes=6, edge_weight=weights)
    n = 60000
    w = g.walk("deepwalk", start=np.zeros(n, dtype=np.int64), length=1, seed=11)
    counts = np.bincount(w[:, 1], minlength=6)[1:]
    expected_w = np.array([8.0 + 4.0, 2.0, 1.0, 0.0, 0.5])  # nodes 1..5
    assert counts[3] == 0  # node 4's only edge weighs 0
    keep = expected_w > 0
    exp = expected_w[keep] / expected_w.sum() * n
    _, p = scipy_stats.chisquare(counts[keep], exp)
    assert p > ALPHA, (counts, exp)
    # The test has the power to see a binding that loses the weights' alignment: uniform
    # weights, or two nodes' weights swapped, are rejected.
    for wrong in (np.where(keep, 1.0, 0.0), expected_w[[1, 0, 2, 3, 4]]):
        _, p_wrong = scipy_stats.chisquare(counts[keep], wrong[keep] / wrong[keep].sum() * n)
        assert p_wrong < ALPHA


def test_edges_taken_are_the_input_edges_between_the_nodes():
    ei, _ = random_graph(100, 600, 7)
    ei = np.unique(np.sort(ei, axis=0), axis=1)  # each undirected pair once
    ei = ei[:, ei[0] != ei[1]]
    g = wayfarer.Graph.from_edge_index(ei, undirected=True)
    w, e = g.walk("node2vec", length=10, seed=3, return_edges=True)
    for row, erow in zip(w, e):
        for t in range(10):
            if row[t + 1] < 0:
                assert erow[t] == -1
                continue
            u, v = ei[:, erow[t]]
            assert {int(u), int(v)} == {int(row[t]), int(row[t + 1])}


# The CPU and CUDA record the edge behind each move (wgpu reads edges off the nodes, and so
# refuses parallel edges and restarts); the CUDA case runs on the GPU machine (gpu-check.sh).
@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_the_cpu_and_cuda_record_parallel_edges_and_restarts(backend):
    if backend == "cuda" and not wayfarer.cuda_available():
        pytest.skip("no CUDA GPU")
    # Node 0 -> 1 twice (weights 1 and 3), 1 -> 0: which parallel edge a move took follows
    # the weights (0.25 for the first; 20,000 moves give a standard error of 0.003).
    multi = wayfarer.Graph.from_edge_index(np.array([[0, 0, 1], [1, 1, 0]]), edge_weight=np.array([1.0, 3.0, 1.0], dtype=np.float32))
    w, e = multi.walk("deepwalk", start=np.zeros(20_000, dtype=np.int64), length=1, seed=5, backend=backend, return_edges=True)
    assert set(np.unique(e[:, 0]).tolist()) == {0, 1}
    assert abs(np.mean(e[:, 0] == 0) - 0.25) < 0.02
    # A restart moves without an edge: -1 there, and only there.
    ei, _ = random_graph(100, 600, 7)
    g = wayfarer.Graph.from_edge_index(ei, undirected=True)
    w, e = g.walk("ppr", length=10, seed=3, backend=backend, return_edges=True, alpha=0.3)
    restarts = 0
    for row, erow in zip(w, e):
        for t in range(10):
            if row[t + 1] < 0:
                assert erow[t] == -1
            elif erow[t] == -1:
                assert row[t + 1] == row[0]
                restarts += 1
            else:
                assert {int(ei[0, erow[t]]), int(ei[1, erow[t]])} == {int(row[t]), int(row[t + 1])}
    assert restarts > 50


def test_compiled_programs_run_and_report_errors_with_their_place():
    p = wayfarer.compile(
        "#[walk(defaults(k = 2.0))]\n"
        "fn lazy(s: &Step, k: f32) -> f32 {\n"
        "    if s.dst() == s.cur() { k } else { 1.0 }\n"
        "}\n"
    )
    assert (p.name, p.kind, p.params) == ("lazy", "walk", ["k"])
    assert "weight" in p.explain() or "bound" in p.explain()
    g = wayfarer.Graph.from_edge_index(np.array([[0, 0, 1], [0, 1, 0]]))
    w = g.walk(p, length=6, seed=2, k=3.0)
    assert w.shape == (2, 7)
    with pytest.raises(ValueError, match="parameter `nope`"):
        g.walk(p, nope=1.0)
    with pytest.raises(wayfarer.CompileError) as err:
        wayfarer.compile("#[walk]\nfn bad(s: &Step) -> f32 {\n    s.nope()\n}\n")
    e = err.value
    assert (e.line, e.column) == (3, 7)
    assert "`s` has no method `nope`" in e.message
    assert "--> <string>:3:7" in str(e) and "^^^^" in str(e)
    with pytest.raises(ValueError, match="no #\\[walk\\]"):
        wayfarer.compile("fn f() {}")
    mask = wayfarer.compile("#[mask]\nfn keep(s: &Step) -> bool {\n    s.weight() > 1.0\n}\n")
    with pytest.raises(ValueError, match="is a #\\[mask\\] program"):
        g.walk(mask)


def test_every_library_walk_runs():
    g = wayfarer.default_graph()
    start = g.node_ids()[:200]
    for name in wayfarer.walks():
        if name == "temporal":
            continue  # needs timestamps: WordNet has none
        w = g.walk(name, start=start, length=5, seed=1)
        assert w.shape == (200, 6), name
    with pytest.raises(ValueError, match="timestamps|time"):
        g.walk("temporal", start=start, length=5)


def test_progress_and_the_gil():
    g = wayfarer.default_graph()
    seen = []
    ticks = [0]
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    try:
        w = g.walk("node2vec", length=40, seed=1, progress=lambda d, n: seen.append((d, n)))
    finally:
        stop.set()
        t.join()
    assert seen and seen[-1] == (g.num_nodes, g.num_nodes)
    # Another Python thread ran while the engine walked (the GIL was released).
    assert ticks[0] > 20
    assert w.shape == (g.num_nodes, 41)


def test_ctrl_c_stops_a_long_walk():
    g = wayfarer.default_graph()
    # Python's own handler, whatever this process inherited: a job a shell starts in the
    # background (`cmd &` without job control) begins with SIGINT ignored, and Python then
    # installs none, so the signal would be dropped (as it should be there) and the walk run on.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        t0 = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            g.walk("node2vec", length=4000, seed=1)
        assert time.monotonic() - t0 < 20
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
