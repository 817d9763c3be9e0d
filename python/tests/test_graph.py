"""Graphs from arrays, scipy, networkx and files; bad input is an exception naming the array and
the position."""

import numpy as np
import pytest

import wayfarer


def test_edge_index_builds_sorted_csr_and_keeps_the_input_edge_ids():
    ei = np.array([[2, 0, 0, 1], [0, 2, 1, 2]])
    g = wayfarer.Graph.from_edge_index(ei, edge_weight=np.array([4.0, 3.0, 2.0, 1.0]))
    assert (g.num_nodes, g.num_edges, g.weighted, g.undirected) == (3, 4, True, False)
    indptr, indices = g.csr()
    assert indptr.tolist() == [0, 2, 3, 4]
    assert indices.tolist() == [1, 2, 2, 0]
    # Each CSR entry names the input edge it came from, and carries that edge's weight.
    assert g.edge_ids().tolist() == [2, 1, 3, 0]
    assert g._g.edge_weights().tolist() == [2.0, 3.0, 1.0, 4.0]


def test_undirected_adds_reverses_with_the_same_edge_id_and_one_self_loop():
    g = wayfarer.Graph.from_edge_index(np.array([[0, 1], [1, 1]]), undirected=True)
    assert g.num_edges == 3  # 0->1, 1->0, 1->1 once
    _, indices = g.csr()
    assert indices.tolist() == [1, 0, 1]
    assert g.edge_ids().tolist() == [0, 0, 1]


def test_num_nodes_adds_isolated_nodes_and_is_checked():
    g = wayfarer.Graph.from_edge_index(np.array([[0], [1]]), num_nodes=5)
    assert g.num_nodes == 5
    with pytest.raises(ValueError, match=r"edge_index\[1, 0\] = 1: not below num_nodes = 1"):
        wayfarer.Graph.from_edge_index(np.array([[0], [1]]), num_nodes=1)


@pytest.mark.parametrize(
    "kwargs, error, pattern",
    [
        (dict(edge_index=np.array([[0, -3], [1, 2]])), ValueError, r"edge_index\[0, 1\] = -3: node ids must be >= 0"),
        (dict(edge_index=np.array([[0.0, 1.0], [1.0, 2.0]])), TypeError, r"edge_index: node ids must be integers, got dtype float64"),
        (dict(edge_index=np.array([0, 1, 2])), ValueError, r"edge_index: expected a 2-D array"),
        (dict(edge_index=np.zeros((3, 2), dtype=np.int64)), ValueError, r"expected shape \(2, E\)"),
        (dict(edge_index=np.array([[0, 1], [1, 2]]), edge_weight=np.array([1.0, np.nan])), ValueError,
         r"edge_weight\[1\] = nan: weights must be finite and >= 0"),
        (dict(edge_index=np.array([[0, 1], [1, 2]]), edge_weight=np.array([1.0, -2.0])), ValueError,
         r"edge_weight\[1\] = -2: weights must be finite and >= 0"),
        (dict(edge_index=np.array([[0, 1], [1, 2]]), edge_weight=np.array([1.0])), ValueError,
         r"edge_weight has 1 entries for 2 edges"),
        (dict(edge_index=np.array([[0, 1], [1, 2]]), edge_label=np.array([0, -1])), ValueError, r"edge_label\[1\] = -1"),
        (dict(edge_index=np.array([[0, 1], [1, 2]]), edge_label=np.array([0.5, 1.0])), TypeError, r"edge_label: expected integers"),
        (dict(edge_index=np.array([[0, 2**33], [1, 2]])), ValueError, r"nodes fit wayfarer's 32-bit node ids"),
    ],
)
def test_bad_input_names_the_array_and_the_position(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        wayfarer.Graph.from_edge_index(**kwargs)


def test_csr_input_is_checked():
    with pytest.raises(ValueError, match=r"indptr\[0\] = 1: it must be 0"):
        wayfarer.Graph.from_csr(np.array([1, 2]), np.array([0]))
    with pytest.raises(ValueError, match=r"indptr\[2\] = 0 < indptr\[1\] = 1"):
        wayfarer.Graph.from_csr(np.array([0, 1, 0]), np.array([0]))
    with pytest.raises(ValueError, match=r"must equal the number of indices, 2"):
        wayfarer.Graph.from_csr(np.array([0, 1]), np.array([0, 0]))
    with pytest.raises(ValueError, match=r"indices\[1\] = 7: not below num_nodes = 2"):
        wayfarer.Graph.from_csr(np.array([0, 1, 2]), np.array([1, 7]))
    g = wayfarer.Graph.from_csr(np.array([0, 2, 3]), np.array([1, 0, 0]))
    assert g.csr()[1].tolist() == [0, 1, 0]
    assert g.edge_ids().tolist() == [1, 0, 2]


def test_scipy_and_networkx_give_the_same_graph_as_the_edge_index():
    sp = pytest.importorskip("scipy.sparse")
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(3)
    ei = np.unique(rng.integers(0, 30, size=(2, 120)), axis=1)
    ei = ei[:, ei[0] != ei[1]]
    w = rng.uniform(1, 5, size=ei.shape[1])
    ref = wayfarer.Graph.from_edge_index(ei, num_nodes=30, edge_weight=w)
    m = sp.csr_matrix((w, (ei[0], ei[1])), shape=(30, 30))
    a = wayfarer.Graph.from_scipy(m)
    G = nx.DiGraph()
    G.add_nodes_from(range(30))
    G.add_weighted_edges_from(zip(ei[0].tolist(), ei[1].tolist(), w.tolist()))
    b = wayfarer.Graph.from_networkx(G)
    for g in (a, b):
        assert [x.tolist() for x in g.csr()] == [x.tolist() for x in ref.csr()]
        assert np.allclose(g._g.edge_weights(), ref._g.edge_weights())
    # Unit values are no weights; an undirected networkx graph is undirected.
    assert not wayfarer.Graph.from_scipy(sp.csr_matrix((np.ones(len(w)), (ei[0], ei[1])), shape=(30, 30))).weighted
    u = wayfarer.Graph.from_networkx(nx.path_graph(4))
    assert u.undirected and u.num_edges == 6 and not u.weighted


def test_networkx_keeps_node_names():
    nx = pytest.importorskip("networkx")
    G = nx.Graph([("a", "b"), ("b", "c")])
    g = wayfarer.Graph.from_networkx(G)
    w = g.walk("deepwalk", length=3, seed=1)
    assert set(np.unique(w).tolist()) <= {0, 1, 2}
    assert g.networkx_nodes == ["a", "b", "c"]


def test_load_and_save_round_trip_with_the_files_own_ids(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("# src dst\n10 20\n20 30\n30 10\n")
    g = wayfarer.Graph.load(p)
    assert g.node_ids().tolist() == [10, 20, 30]
    w = g.walk("deepwalk", length=4, seed=0)
    assert w[:, 0].tolist() == [10, 20, 30]
    g.save(tmp_path / "g.wfg")
    h = wayfarer.Graph.load(tmp_path / "g.wfg")
    assert np.array_equal(h.walk("deepwalk", length=4, seed=0), w)
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        wayfarer.Graph.load(tmp_path / "missing.txt")


def test_default_graph_is_wordnet():
    g = wayfarer.default_graph()
    assert (g.num_nodes, g.num_edges, g.num_labels) == (116650, 377592, 26)


def test_every_input_type_gives_the_same_graph():
    ei = [[0, 1, 2, 2], [1, 2, 0, 3]]
    ref = wayfarer.Graph.from_edge_index(np.array(ei))
    for x in (ei, tuple(map(tuple, ei)), np.array(ei, dtype=np.int32), np.array(ei, dtype=np.uint16),
              np.asfortranarray(np.array(ei)), np.array(ei)[:, ::1], np.array([[9, 9], *zip(*ei)]).T[:, 1:]):
        g = wayfarer.Graph.from_edge_index(x)
        assert [a.tolist() for a in g.csr()] == [a.tolist() for a in ref.csr()]
    # Strided views and non-native byte order are converted, not misread.
    big = np.array(ei, dtype=">i8")
    assert wayfarer.Graph.from_edge_index(big).csr()[1].tolist() == ref.csr()[1].tolist()
    w = np.arange(8, dtype=np.float64)[::2] + 1
    g = wayfarer.Graph.from_edge_index(np.array(ei), edge_weight=w)
    assert sorted(g._g.edge_weights().tolist()) == [1.0, 3.0, 5.0, 7.0]


@pytest.mark.parametrize(
    "call",
    [
        lambda: wayfarer.Graph.from_edge_index("not an array"),
        lambda: wayfarer.Graph.from_edge_index(None),
        lambda: wayfarer.Graph.from_edge_index([[0, 1], [1]]),
        lambda: wayfarer.Graph.from_edge_index([[object()], [1]]),
        lambda: wayfarer.Graph.from_edge_index(np.zeros((2, 0), dtype=np.int64), num_nodes=-1),
        lambda: wayfarer.Graph.from_edge_index([[0], [1]], edge_weight=[float("inf")]),
        lambda: wayfarer.Graph.from_edge_index([[0], [1]], edge_weight=[1e300]),
        lambda: wayfarer.Graph.from_edge_index([[0], [1]], edge_weight=[[1.0]]),
        lambda: wayfarer.Graph.from_edge_index([[0], [np.iinfo(np.uint64).max]]),
        lambda: wayfarer.Graph.from_csr([], []),
        lambda: wayfarer.Graph.from_csr([0, 2], [0]),
        lambda: wayfarer.Graph.from_scipy(np.eye(3)),
        lambda: wayfarer.Graph.load("/nonexistent/dir/graph.wfg"),
        lambda: wayfarer.default_graph().walk("no-such-walk"),
        lambda: wayfarer.default_graph().walk("node2vec", p=-1.0),
        lambda: wayfarer.default_graph().walk("node2vec", p="abc"),
        lambda: wayfarer.default_graph().walk("node2vec", start=[-1]),
        lambda: wayfarer.default_graph().walk("node2vec", start=[[1, 2]]),
        lambda: wayfarer.default_graph().walk("node2vec", backend="tpu"),
        lambda: wayfarer.default_graph().walk("node2vec", sampler="magic"),
        lambda: wayfarer.default_graph().walk("node2vec", ids="mine"),
        lambda: wayfarer.default_graph().walk(42),
        lambda: wayfarer.default_graph().sample_neighbors([0], [-1]),
        lambda: wayfarer.default_graph().sample_neighbors([0], []),
        lambda: wayfarer.default_graph().triangles(backend="wgpu"),
        lambda: wayfarer.default_graph().triangles(t=1.0),
        lambda: wayfarer.compile("#[walk]\nfn f(s: &Step) -> f32 { s.weight() ", kind=None),
        lambda: wayfarer.compile("#[walk] fn f() {}", kind="kernel"),
    ],
)
def test_bad_input_raises_and_never_crashes(call):
    with pytest.raises((ValueError, TypeError, OSError)):
        call()


def test_device_graph_budget_is_checked_and_kept():
    g = wayfarer.Graph.from_edge_index(np.array([[0, 1, 2], [1, 2, 0]]))
    assert g.device_graph_budget is None
    g.device_graph_budget = 1 << 20
    assert g.device_graph_budget == 1 << 20
    for bad in (-1, 1.5, "1G", True):
        with pytest.raises(ValueError, match="device_graph_budget"):
            g.device_graph_budget = bad
    g.device_graph_budget = None
    assert g.device_graph_budget is None
