"""``wayfarer.aggregate``: the engine's sums against numpy (always), and with torch (on the
GPU machine, scripts/gpu-check.sh): against ``index_add_``, ``gradcheck``, the CPU against
the GPU bit for bit, and the torch classification against the engine's."""

import numpy as np
import pytest

import wayfarer
from wayfarer import _native
from wayfarer._aggregate import dense_rows


def _csr(rng, rows, x_rows, hub=60):
    """Random CSR rows: some empty, one hub, repeated columns."""
    degree = rng.integers(0, 6, size=rows)
    degree[rows // 2] = hub
    degree[::7] = 0
    indptr = np.concatenate([[0], np.cumsum(degree)]).astype(np.int64)
    cols = rng.integers(0, x_rows, size=indptr[-1]).astype(np.int64)
    return indptr, cols


def _reference(indptr, cols, x, row=None, col=None):
    rows = len(indptr) - 1
    seg = np.repeat(np.arange(rows), np.diff(indptr))
    vals = x[cols] * (col[cols][:, None] if col is not None else 1.0)
    out = np.zeros((rows, x.shape[1]), dtype=np.float64)
    np.add.at(out, seg, vals)
    return out * (row[:, None] if row is not None else 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [1, 13, 128])
def test_both_paths_sum_what_numpy_sums(dtype, dim):
    rng = np.random.default_rng(dim)
    indptr, cols = _csr(rng, 50, 40)
    x = rng.standard_normal((40, dim)).astype(dtype)
    row = rng.uniform(0.1, 2, 50).astype(dtype)
    col = rng.uniform(0.1, 2, 40).astype(dtype)
    kernel = _native.gather_reduce_f32 if dtype == np.float32 else _native.gather_reduce_f64
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for scales in [(None, None), (row, col)]:
        want = _reference(indptr, cols, x.astype(np.float64), *[s if s is None else s.astype(np.float64) for s in scales])
        for dense in [[], [25], [0, 25, 49, 3]]:
            out = np.full(50 * dim, np.nan, dtype=dtype)
            kernel(indptr, cols, np.array(dense, dtype=np.int64), scales[0], scales[1], x.reshape(-1), dim, out)
            np.testing.assert_allclose(out.reshape(50, dim), want, rtol=tol, atol=tol)


def test_bad_csr_is_named():
    indptr = np.array([0, 2, 3], dtype=np.int64)
    cols = np.array([0, 5, 1], dtype=np.int64)
    out = np.zeros(4, dtype=np.float32)
    x = np.ones(8, dtype=np.float32)
    with pytest.raises(ValueError, match=r"cols\[1\] = 5: not a row of the 4 input rows"):
        _native.gather_reduce_f32(indptr, cols, np.zeros(0, dtype=np.int64), None, None, x, 2, out)
    with pytest.raises(ValueError, match=r"dense\[0\] = 2"):
        _native.gather_reduce_f32(indptr, np.array([0, 1, 1], dtype=np.int64), np.array([2], dtype=np.int64), None, None, x, 2,
                                  out)


def test_the_dense_rule_weighs_degree_and_density():
    degree = np.array([1, 2, 2, 3, 40, 2, 1, 2])
    flat = np.full(8, 0.5)
    assert dense_rows(degree, flat, 0.5).tolist() == [d == 40 for d in degree]
    # Density alone: the node whose walks keep finding new nodes is dense, whatever its degree.
    density = np.array([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.95, 0.1])
    assert dense_rows(degree, density, 1.0).tolist() == [i == 6 for i in range(8)]


# ---- with torch -----------------------------------------------------------------------------

torch = pytest.importorskip("torch")
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _undirected_wordnet():
    g = wayfarer.default_graph()
    indptr, indices = g.csr()
    src = np.repeat(np.arange(g.num_nodes), np.diff(indptr))
    return wayfarer.Graph.from_edge_index(np.stack([src, indices]), num_nodes=g.num_nodes, undirected=True)


@pytest.fixture(scope="module")
def sample():
    g = _undirected_wordnet()
    seeds = np.random.default_rng(3).choice(g.num_nodes, 700, replace=False)
    return g, g.sample_neighbors(seeds, [10, 25], seed=5, ids="internal")


def _index_add(block, x, op):
    src = torch.as_tensor(block.edge_src, device=x.device)
    dst = torch.as_tensor(block.edge_dst, device=x.device)
    out = torch.zeros((block.num_dst, x.shape[1]), dtype=x.dtype, device=x.device).index_add_(0, dst, x[src])
    if op == "mean":
        out = out / torch.bincount(dst, minlength=block.num_dst).clamp(min=1).unsqueeze(1).to(x.dtype)
    return out


def _on(block, device):
    t = lambda a: torch.as_tensor(a).to(device)  # noqa: E731
    return wayfarer.Block(t(block.src_nodes), block.num_dst, t(block.edge_src), t(block.edge_dst), t(block.edge_ids))


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("device", DEVICES)
def test_aggregate_equals_index_add_and_its_gradient(sample, op, device):
    g, s = sample
    density = g.node_density(walks=4, length=6, seed=2, backend="cpu")
    for block in s.blocks:
        b = _on(block, device)
        plan = b.aggregation_plan(density)
        assert plan.dense_rows[0] > 0, "the sampled block has no dense rows: the dense path is not tested"
        x = torch.randn((len(b.src_nodes), 24), dtype=torch.float32, device=device, requires_grad=True)
        out = wayfarer.aggregate(b, x, op)
        want = _index_add(b, x, op)
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
        g_out = torch.randn_like(out)
        (gx,) = torch.autograd.grad(out, x, g_out)
        (gw,) = torch.autograd.grad(want, x, g_out)
        torch.testing.assert_close(gx, gw, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_blocks_and_plans_of_views_made_on_first_use_equal_their_arrays(sample, device):
    """The GPU loader hands over blocks whose arrays (and plans') are views of one buffer,
    made when first read: the same arrays, the same sums and gradients."""
    from wayfarer._aggregate import AggregationPlan, _Rows

    _, s = sample
    for block in s.blocks:
        b = _on(block, device)
        plan = b.aggregation_plan()
        named = {"src_nodes": b.src_nodes, "edge_src": b.edge_src, "edge_dst": b.edge_dst, "edge_ids": b.edge_ids}
        rows = {"f": plan.forward.tensors(), "b": plan.backward.tensors()}
        degree = torch.bincount(b.edge_dst, minlength=b.num_dst)
        parts = list(named.values()) + list(rows["f"]) + list(rows["b"]) + [degree]
        starts = np.concatenate([[0], np.cumsum([len(t) for t in parts])]).tolist()
        buffer = torch.cat(parts)
        span = lambda i: (starts[i], starts[i + 1])  # noqa: E731
        inv = (1.0 / degree.clamp(min=1).to(torch.float32))
        forward = _Rows._views(buffer, span(4), span(5), span(6), plan.forward.n_dense)
        backward = _Rows._views(buffer, span(7), span(8), span(9), plan.backward.n_dense)
        lazy_plan = AggregationPlan(plan.num_src, plan.num_dst, plan.device, forward, backward, (buffer, *span(10)),
                                    (inv, 0, len(inv)))
        v = wayfarer.Block._views(b.num_dst, buffer, {k: span(i) for i, k in enumerate(named)}, lazy_plan)
        assert "src_nodes" not in v.__dict__, "made before it was read"
        for k, t in named.items():
            assert torch.equal(getattr(v, k), t), k
        assert "src_nodes" in v.__dict__
        for got, want in zip(forward.tensors() + backward.tensors(), rows["f"] + rows["b"]):
            assert torch.equal(got, want)
        assert torch.equal(lazy_plan.inv_degree(torch.float32), plan.inv_degree(torch.float32))
        # Another dtype is computed from the degree span.
        if device == "cpu":
            assert torch.allclose(lazy_plan.inv_degree(torch.float64), plan.inv_degree(torch.float64))
        with pytest.raises(AttributeError, match="no attribute 'nodes'"):
            v.nodes
        x = torch.randn((len(b.src_nodes), 8), dtype=torch.float32, device=device, requires_grad=True)
        for op in ("sum", "mean"):
            out = wayfarer.aggregate(v, x, op)
            torch.testing.assert_close(out, wayfarer.aggregate(b, x, op), rtol=0, atol=0)
            g_out = torch.randn_like(out)
            (gv,) = torch.autograd.grad(out, x, g_out)
            (gb,) = torch.autograd.grad(wayfarer.aggregate(b, x, op), x, g_out)
            torch.testing.assert_close(gv, gb, rtol=0, atol=0)


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_gradcheck(op):
    rng = np.random.default_rng(11)
    src = torch.from_numpy(rng.integers(0, 30, 120))
    dst = torch.from_numpy(np.concatenate([np.full(40, 3), rng.integers(0, 12, 80)]))
    b = wayfarer.Block(torch.arange(30), 12, src, dst, torch.arange(120))
    b.aggregation_plan()
    assert b._plan.dense_rows[0] >= 1
    x = torch.randn((30, 5), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: wayfarer.aggregate(b, x, op), (x,))


def test_the_torch_classification_is_the_engines(sample):
    g, s = sample
    density = g.node_density(walks=4, length=6, seed=2, backend="cpu")
    for block in s.blocks:
        b = _on(block, "cpu")
        plan = b.aggregation_plan(density, alpha=0.5)
        degree = torch.bincount(b.edge_dst, minlength=b.num_dst).numpy()
        want = dense_rows(degree, density[b.dst_nodes.numpy()], 0.5)
        assert plan.dense_rows[0] == int(want.sum())
        assert sorted(plan.forward.order[: plan.forward.n_dense].tolist()) == np.flatnonzero(want).tolist()


@pytest.mark.skipif("cuda" not in DEVICES, reason="no CUDA device")
@pytest.mark.parametrize("dim", [13, 128, 512])
def test_the_gpu_gives_the_cpus_bits(sample, dim):
    _, s = sample
    for op in ["sum", "mean"]:
        for block in s.blocks:
            x = torch.randn((len(block.src_nodes), dim), dtype=torch.float32, requires_grad=True)
            cpu = wayfarer.aggregate(_on(block, "cpu"), x, op)
            xg = x.detach().cuda().requires_grad_()
            gpu = wayfarer.aggregate(_on(block, "cuda"), xg, op)
            assert torch.equal(cpu, gpu.cpu())
            g_out = torch.randn_like(cpu)
            (gc,) = torch.autograd.grad(cpu, x, g_out)
            (gg,) = torch.autograd.grad(gpu, xg, g_out.cuda())
            assert torch.equal(gc, gg.cpu())


@pytest.mark.parametrize("device", DEVICES)
def test_the_loader_builds_the_plans(device):
    g = _undirected_wordnet()
    density = g.node_density(walks=2, length=4, seed=1, backend="cpu")
    loader = wayfarer.NeighborLoader(g, np.arange(3000), [5, 10], batch_size=1000, device=device, ids="internal", plans=True,
                                     density=density)
    from wayfarer._aggregate import _ids, _plan_torch

    density_dev = torch.as_tensor(density, device=device)
    for batch in loader:
        for b in batch.blocks:
            assert b._plan is not None and b._plan.device.type == device
            x = torch.randn((len(b.src_nodes), 8), device=device)
            torch.testing.assert_close(wayfarer.aggregate(b, x), _index_add(b, x, "mean"), rtol=1e-5, atol=1e-5)
            # On the GPU the sampling call built the plans: the arrays torch builds, per block.
            want = _plan_torch(_ids(b.edge_src, ""), _ids(b.edge_dst, ""), _ids(b.src_nodes, ""), b.num_dst, density_dev, 0.5)
            got = b._plan
            assert (got.num_src, got.num_dst, got.dense_rows) == (want.num_src, want.num_dst, want.dense_rows)
            for name in ("forward", "backward"):
                for a, w in zip(getattr(got, name).tensors(), getattr(want, name).tensors()):
                    assert torch.equal(a, w), name
            assert torch.equal(got.inv_degree(torch.float32), want.inv_degree(torch.float32))


def _shuffled_block(rng, num_src=3000, num_dst=900, m=20000):
    """A block the sampler would not make: edges in random order, repeated (src, dst) pairs,
    empty rows both ways, and one source in over 2,000 destination rows."""
    src = rng.integers(0, num_src, m)
    src[rng.random(m) < 0.12] = 17
    dst = rng.integers(0, num_dst - 40, m)
    src[:50], dst[:50] = 5, 3
    t = torch.from_numpy
    return wayfarer.Block(t(rng.permutation(num_src)), num_dst, t(src), t(dst), t(np.arange(m)))


@pytest.mark.skipif("cuda" not in DEVICES, reason="no CUDA device")
def test_the_engines_cuda_plan_is_the_torch_plan(sample):
    """The plan built by the engine's kernels holds the arrays torch's operations build: each
    row's edges in edge order, the same dense rows first (with and without densities)."""
    from wayfarer._aggregate import _ids, _plan_cuda, _plan_torch

    g, s = sample
    density = torch.as_tensor(g.node_density(walks=4, length=6, seed=2, backend="cpu")).cuda()
    rng = np.random.default_rng(4)
    big = _shuffled_block(rng)
    big_density = torch.rand(3000, dtype=torch.float64, generator=torch.Generator().manual_seed(1)).cuda()
    cases = [(b, d, a) for b in s.blocks for d in (None, density) for a in (0.5, 0.2)] + [(big, None, 0.5), (big, big_density, 0.7)]
    for block, dens, alpha in cases:
        b = _on(block, "cuda")
        args = (_ids(b.edge_src, "edge_src"), _ids(b.edge_dst, "edge_dst"), _ids(b.src_nodes, "src_nodes"), b.num_dst, dens, alpha)
        got, want = _plan_cuda(*args), _plan_torch(*args)
        assert got.dense_rows == want.dense_rows
        assert 0 < want.dense_rows[0] and 0 < want.dense_rows[1]
        for name in ("forward", "backward"):
            for a, w in zip(getattr(got, name).tensors(), getattr(want, name).tensors()):
                assert torch.equal(a, w), name
        assert torch.equal(got._degree, want._degree)
        assert torch.equal(got._inv_degree[torch.float32], want.inv_degree(torch.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_input_is_refused_with_its_name(device):
    t = lambda a: torch.tensor(a, device=device)  # noqa: E731
    b = wayfarer.Block(torch.arange(4, device=device), 2, t([0, 5]), t([0, 1]), t([0, 1]))
    with pytest.raises(ValueError, match="edge_src holds 5, not an index of the 4 source nodes"):
        b.aggregation_plan()
    b = wayfarer.Block(torch.arange(4, device=device), 2, t([0, 1]), t([-1, 1]), t([0, 1]))
    with pytest.raises(ValueError, match="edge_dst holds -1, not an index of the 2 destination nodes"):
        b.aggregation_plan()
    ok = wayfarer.Block(torch.arange(4, device=device), 2, t([0, 3]), t([0, 1]), t([0, 1]))
    with pytest.raises(ValueError, match="x: 3 rows, but the block has 4 source nodes"):
        wayfarer.aggregate(ok, torch.zeros(3, 2, device=device))
    with pytest.raises(ValueError, match="op = 'max'"):
        wayfarer.aggregate(ok, torch.zeros(4, 2, device=device), op="max")
    with pytest.raises(TypeError, match="torch.float16"):
        wayfarer.aggregate(ok, torch.zeros(4, 2, dtype=torch.float16, device=device))
    with pytest.raises(ValueError, match="3 values, but the block has node 3"):
        ok.aggregation_plan(np.zeros(3))
