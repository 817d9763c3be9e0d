"""Exactness from Python: the joint law of a walk's first two moves, for Node2Vec (second
order: the return, in-out and triangle factors) and for a program compiled from a string,
against the probabilities computed here from the graph, by a chi-square test at ALPHA. Each
test also shows its power: a wrong parameter's law is rejected."""

import numpy as np
import pytest

import wayfarer

scipy_stats = pytest.importorskip("scipy.stats")

ALPHA = 1e-4
N = 200_000

# A hub (0) with skewed weights, a triangle (0, 1, 2), a parallel edge (0-3 twice), a zero
# weight (2-4) and a pendant (5).
EDGES = np.array([[0, 0, 0, 0, 0, 1, 2, 3, 2, 4], [1, 2, 3, 3, 4, 2, 4, 4, 5, 5]])
WEIGHTS = np.array([1.0, 8.0, 0.5, 2.0, 3.0, 1.5, 0.0, 4.0, 1.0, 2.5])


def rows():
    """(target, weight) lists per node of the undirected graph."""
    out = {}
    for (u, v), w in zip(EDGES.T, WEIGHTS):
        out.setdefault(int(u), []).append((int(v), w))
        out.setdefault(int(v), []).append((int(u), w))
    return out


def joint(second_weight):
    """P(x, y) of the first two moves from node 0: the first by weight, the second by
    second_weight(prev, cur, dst, w)."""
    r = rows()
    nbrs = lambda v: {t for t, _ in r[v]}  # noqa: E731
    p = {}
    total = sum(w for _, w in r[0])
    for x, w1 in r[0]:
        ws = [(y, second_weight(0, x, y, w, nbrs)) for y, w in r[x]]
        s = sum(w for _, w in ws)
        for y, w2 in ws:
            p[(x, y)] = p.get((x, y), 0.0) + (w1 / total) * (w2 / s)
    return p


def chi2_p(walks, p):
    keys = [k for k, v in p.items() if v > 0]
    index = {k: i for i, k in enumerate(keys)}
    counts = np.zeros(len(keys))
    for x, y in walks[:, 1:3]:
        assert (int(x), int(y)) in index, f"move {x} -> {y} has probability 0"
        counts[index[(int(x), int(y))]] += 1
    exp = np.array([p[k] for k in keys]) * len(walks)
    return scipy_stats.chisquare(counts, exp).pvalue


def node2vec_law(a, b):
    def w2(prev, cur, dst, w, nbrs):
        if dst == prev:
            return w / a
        return w if dst in nbrs(prev) else w / b

    return joint(w2)


@pytest.fixture(scope="module")
def graph():
    return wayfarer.Graph.from_edge_index(EDGES, edge_weight=WEIGHTS, undirected=True)


BACKENDS = ["cpu"] + (["cuda"] if wayfarer.cuda_available() else [])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("sampler", ["adaptive", "rejection", "reservoir"])
def test_node2vec_second_step_is_exact(graph, sampler, backend):
    walks = graph.walk("node2vec", start=np.zeros(N, dtype=np.int64), length=2, seed=5, p=2.0, q=0.5, sampler=sampler,
                       backend=backend)
    assert chi2_p(walks, node2vec_law(2.0, 0.5)) > ALPHA
    # Power: the law of other parameters is rejected.
    assert chi2_p(walks, node2vec_law(1.0, 1.0)) < ALPHA
    assert chi2_p(walks, node2vec_law(2.0, 0.8)) < ALPHA


PROGRAM = """
/// A sum of a static term and a `has_edge(prev, dst)` term.
#[walk(defaults(k = 3.0))]
fn mixed(s: &Step, k: f32) -> f32 {
    if s.step() == 0 { return s.weight(); }
    let tri = if s.has_edge(s.prev(), s.dst()) { k } else { 0.0 };
    s.weight() + tri
}
"""


def program_law(k):
    return joint(lambda prev, cur, dst, w, nbrs: w + (k if dst in nbrs(prev) else 0.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_compiled_from_a_string_is_exact(graph, backend):
    prog = wayfarer.compile(PROGRAM)
    walks = graph.walk(prog, start=np.zeros(N, dtype=np.int64), length=2, seed=8, k=3.0, backend=backend)
    assert chi2_p(walks, program_law(3.0)) > ALPHA
    assert chi2_p(walks, program_law(1.5)) < ALPHA
