"""torch tensors in, torch tensors out (on the input's device). CPU tensors in CI
(scripts/python-test.sh installs torch); CUDA tensors too on the GPU machine
(scripts/gpu-check.sh). Skipped where torch is not installed."""

import numpy as np
import pytest

import wayfarer

torch = pytest.importorskip("torch")

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_tensors_in_tensors_out_on_the_same_device(device):
    rng = np.random.default_rng(1)
    ei = rng.integers(0, 100, size=(2, 800))
    w = rng.uniform(1, 5, 800)
    g_np = wayfarer.Graph.from_edge_index(ei, edge_weight=w, undirected=True)
    g_t = wayfarer.Graph.from_edge_index(torch.from_numpy(ei).to(device), edge_weight=torch.from_numpy(w).to(device),
                                         undirected=True)
    walks = g_t.walk("node2vec", length=10, seed=3, p=2.0, q=0.5)
    assert isinstance(walks, torch.Tensor) and walks.dtype == torch.int64 and walks.device.type == device
    assert np.array_equal(walks.cpu().numpy(), g_np.walk("node2vec", length=10, seed=3))
    # Tensor starts give tensors even on a graph built from numpy.
    w2 = g_np.walk("deepwalk", start=torch.tensor([1, 2, 3], device=device), length=4, seed=1)
    assert isinstance(w2, torch.Tensor) and w2.device.type == device
    s = g_t.sample_neighbors(torch.tensor([1, 2, 3], device=device), [4, 2], seed=1)
    pyg = s.to_pyg()
    assert pyg["edge_index"].device.type == device and pyg["n_id"][:3].tolist() == [1, 2, 3]
    total, per = g_t.triangles(per_node=True)
    assert per.device.type == device and int(per.sum()) == 3 * total


@pytest.mark.skipif("cuda" not in DEVICES, reason="no CUDA device")
def test_loader_hands_cuda_tensors_and_the_gpu_walks_equal_the_cpu_walks():
    g = wayfarer.default_graph()
    start = g.node_ids()[:5000]
    cpu = g.walk("node2vec", start=start, length=20, seed=4, backend="cpu", sampler="rejection")
    gpu = g.walk("node2vec", start=start, length=20, seed=4, backend="cuda", sampler="rejection")
    assert np.array_equal(cpu, gpu)
    loader = wayfarer.NeighborLoader(g, start, [10, 5], batch_size=512, device="cuda", backend="cuda")
    n = 0
    for b in loader:
        assert b.blocks[0].edge_ids.device.type == "cuda"
        n += len(b.seeds)
    assert n == len(start)


@pytest.mark.skipif("cuda" not in DEVICES, reason="no CUDA device")
def test_gpu_built_blocks_live_in_torchs_memory_and_outlive_later_batches():
    """The engine writes GPU-built blocks into tensors torch allocates: torch counts them,
    a batch kept alive is not overwritten while later batches reuse freed memory, and every
    byte goes back to torch's pool when the batches are gone."""
    g = wayfarer.default_graph()
    seeds = g.node_ids()[:8192]
    loader = wayfarer.NeighborLoader(g, seeds, [10, 5], batch_size=256, seed=3, device="cuda", plans=True)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    it = iter(loader)
    kept = next(it)
    assert torch.cuda.memory_allocated() > base
    copies = [[t.clone() for t in (b.src_nodes, b.edge_ids, b.edge_src, b.edge_dst)] for b in kept.blocks]
    plan = kept.blocks[0]._plan
    plan_copy = [t.clone() for t in plan.forward.tensors() + plan.backward.tensors()]
    # The rest of this epoch and a whole other one, while `kept` lives.
    for last in it:
        pass
    for b in loader:
        assert b.blocks[0].src_nodes.is_cuda
    torch.cuda.synchronize()
    for b, c in zip(kept.blocks, copies):
        for x, y in zip((b.src_nodes, b.edge_ids, b.edge_src, b.edge_dst), c):
            assert torch.equal(x, y)
    for x, y in zip(plan.forward.tensors() + plan.backward.tensors(), plan_copy):
        assert torch.equal(x, y)
    # (The loops' variables too: `x` is a view of the kept batch's buffer, `c` holds clones.)
    del kept, it, plan, copies, plan_copy, b, last, c, x, y
    # Memory read on other streams (record_stream) goes back to the pool once their work is
    # done, as the allocator finds when it next looks: empty_cache makes it look now.
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() == base


@pytest.mark.skipif("cuda" not in DEVICES, reason="no CUDA device")
def test_gpu_built_blocks_stay_on_the_gpu_and_equal_the_host_path(tmp_path, capsys):
    # Graphs whose edge ids (an edge list's input order) or node ids (a text file's sparse
    # ids, compacted) are not the engine's: the GPU maps them on the device.
    rng = np.random.default_rng(5)
    n, m = 3000, 40000
    src, dst = rng.integers(0, n, m) * 7 + 11, rng.integers(0, n, m) * 7 + 11
    path = tmp_path / "sparse.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(src, dst)))
    for g in (wayfarer.Graph.from_edge_index(np.stack([src, dst]), undirected=True), wayfarer.Graph.load(str(path))):
        _check_gpu_built_blocks(g, rng, capsys)


def _check_gpu_built_blocks(g, rng, capsys):
    seeds = g.node_ids()[rng.permutation(g.num_nodes)[:2500]]
    for replace in (False, True):
        host = wayfarer.NeighborLoader(g, seeds, [15, 10, 5], batch_size=256, seed=9, replace=replace, backend="cpu")
        gpu = wayfarer.NeighborLoader(g, seeds, [15, 10, 5], batch_size=256, seed=9, replace=replace, device="cuda")
        pairs = list(zip(host, gpu))
        assert len(pairs) == len(host)
        for a, b in pairs:
            assert np.array_equal(a.seeds, b.seeds.cpu().numpy())
            for x, y in zip(a.blocks, b.blocks):
                assert y.edge_ids.device.type == "cuda" and y.edge_ids.dtype == torch.int64
                assert x.num_dst == y.num_dst
                for name in ("src_nodes", "edge_src", "edge_dst", "edge_ids"):
                    assert np.array_equal(getattr(x, name), getattr(y, name).cpu().numpy()), name
        # Views of one tensor per group of mini-batches (written there, not copied per batch).
        first, second = pairs[0][1].blocks[0].edge_ids, pairs[1][1].blocks[0].edge_ids
        assert first.untyped_storage().data_ptr() == second.untyped_storage().data_ptr()
    # Graph.sample_neighbors with CUDA seeds takes the same path.
    s = g.sample_neighbors(torch.as_tensor(seeds[:300], device="cuda"), [10, 5], seed=3)
    h = g.sample_neighbors(seeds[:300], [10, 5], seed=3, backend="cpu")
    assert s.blocks[1].src_nodes.is_cuda
    assert all(np.array_equal(x.edge_ids, y.edge_ids.cpu().numpy()) for x, y in zip(h.blocks, s.blocks))
    # Out of core: the offsets and row starts on the device with a tenth of the targets.
    g.device_graph_budget = 16 * g.num_nodes + 8 + 4 * g.num_edges // 10
    try:
        capsys.readouterr()
        s = g.sample_neighbors(torch.as_tensor(seeds[:300], device="cuda"), [10, 5], seed=3, verbose=True)
        assert "out of core" in capsys.readouterr().err
        assert all(np.array_equal(x.edge_ids, y.edge_ids.cpu().numpy()) for x, y in zip(h.blocks, s.blocks))
        assert all(np.array_equal(x.src_nodes, y.src_nodes.cpu().numpy()) for x, y in zip(h.blocks, s.blocks))
    finally:
        g.device_graph_budget = None


@pytest.mark.skipif("cuda" not in DEVICES, reason="no CUDA device")
def test_feature_store_gathers_exact_rows_and_warms_its_cache():
    g = wayfarer.default_graph()
    n = g.num_nodes
    for dtype, dim in ((torch.float32, 37), (torch.float16, 33), (torch.bfloat16, 64)):
        x = torch.randn(n, dim).to(dtype)
        for budget in (None, 0.3, 1.0):
            fs = wayfarer.FeatureStore(x, device_budget=budget)
            ids = torch.randint(0, n, (5000,), device="cuda")
            assert torch.equal(fs.gather(ids).cpu(), x[ids.cpu()]), (dtype, budget)
            assert fs.stats["hits"] == 0  # nothing cached yet
            if budget:
                fs.cache(torch.arange(fs.capacity))
                got = fs[ids]
                assert got.dtype == dtype and got.device.type == "cuda"
                assert torch.equal(got.cpu(), x[ids.cpu()])
                assert fs.stats["hits"] == int((ids < fs.capacity).sum())
    # The output is torch's: ids written on another stream are waited for (sync=True), no
    # ids give an empty tensor, host ids work too.
    fs = wayfarer.FeatureStore(x, device_budget=0.3)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)  # the ids arrive late on this stream
        late = torch.arange(n - 1, n - 3001, -1, device="cuda")
        got = fs.gather(late)
    assert torch.equal(got.cpu(), x[late.cpu()])
    assert fs.gather(torch.empty(0, dtype=torch.int64, device="cuda")).shape == (0, x.shape[1])
    assert torch.equal(fs.gather(np.array([3, 1, 3])).cpu(), x[[3, 1, 3]])
    # Pre-sampling picks the most read rows: the hit rate beats a cache of arbitrary rows.
    x = torch.randn(n, 16)
    loader = wayfarer.NeighborLoader(g, np.arange(4096), [10, 5], batch_size=512, ids="internal", device="cuda")
    fs = wayfarer.FeatureStore(x, device_budget=0.1)
    counts = fs.warm(loader, batches=4)
    assert fs.cached == fs.capacity and int((counts > 0).sum()) > 0
    for b in loader:
        assert torch.equal(fs.gather(b.blocks[0].src_nodes).cpu(), x[b.blocks[0].src_nodes.cpu()])
    warm_rate = fs.stats["hit_rate"]
    # Gathered by the loader on its thread: each batch carries its input nodes' features, on
    # the GPU path and on the host path alike.
    for dev_loader in (wayfarer.NeighborLoader(g, np.arange(2048), [10, 5], batch_size=512, ids="internal",
                                               device="cuda", features=fs),
                       wayfarer.NeighborLoader(g, np.arange(2048), [10, 5], batch_size=512, ids="internal",
                                               device="cuda", features=fs, backend="cpu")):
        for b in dev_loader:
            assert b.x.is_cuda and torch.equal(b.x.cpu(), x[torch.as_tensor(b.blocks[0].src_nodes).cpu()])
    cold = wayfarer.FeatureStore(x, device_budget=0.1)
    cold.cache(torch.arange(n - cold.capacity, n))
    for b in loader:
        cold.gather(b.blocks[0].src_nodes)
    assert warm_rate > cold.stats["hit_rate"], (warm_rate, cold.stats)
    # A dynamic share of the budget: exact rows, and repeated misses become hits.
    dyn = wayfarer.FeatureStore(x, device_budget=0.1, dynamic=0.5)
    assert dyn.dynamic_capacity > 0 and dyn.capacity + dyn.dynamic_capacity <= int(0.1 * n) + 1
    dyn.warm(loader, batches=2)
    for _ in range(2):
        for b in loader:
            assert torch.equal(dyn.gather(b.blocks[0].src_nodes).cpu(), x[b.blocks[0].src_nodes.cpu()])
    assert dyn.stats["hits"] > 0
    with pytest.raises(ValueError, match=r"ids\[1\]"):
        fs.gather(torch.tensor([0, n], device="cuda"))
    # Several id arrays in one call (the GPU loader's groups): views of one tensor, exact,
    # empty arrays included; a bad id or a host array is refused by name.
    parts = [torch.randint(0, n, (k,), device="cuda") for k in (700, 0, 1, 2500)]
    got = fs.gather_many(parts)
    assert [t.shape[0] for t in got] == [700, 0, 1, 2500]
    assert got[0].untyped_storage().data_ptr() == got[3].untyped_storage().data_ptr()
    for t, ids in zip(got, parts):
        assert torch.equal(t.cpu(), x[ids.cpu()])
    with pytest.raises(ValueError, match=r"array 1: .*ids\[1\] is not a row"):
        fs.gather_many([parts[0], torch.tensor([0, n], device="cuda")])
    with pytest.raises(ValueError, match=r"ids\[0\]: a contiguous 1-D int64 tensor"):
        fs.gather_many([torch.tensor([0, 1])])
    with pytest.raises(TypeError):
        wayfarer.FeatureStore(torch.zeros(5, 3, dtype=torch.int32))


def test_dlpack_producers_and_zero_copy_results():
    # A CPU tensor's memory is read in place; results come back through DLPack.
    ei = torch.tensor([[0, 1, 2], [1, 2, 0]])
    g = wayfarer.Graph.from_edge_index(ei, undirected=True)
    w = g.walk("deepwalk", length=3, seed=1)
    assert isinstance(w, torch.Tensor) and w.shape == (3, 4)
    # Any DLPack producer on the GPU: CuPy, where installed.
    cupy = pytest.importorskip("cupy")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    gc = wayfarer.Graph.from_edge_index(cupy.asarray(ei.numpy()), undirected=True)
    assert np.array_equal(gc.walk("deepwalk", length=3, seed=1), w.numpy())
