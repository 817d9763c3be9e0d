"""Neighbour sampling and triangles from Python."""

import numpy as np
import pytest

import wayfarer
from conftest import random_graph


def graph(seed=5, weighted=False):
    ei, w = random_graph(400, 4000, seed, weighted)
    ei = np.unique(ei, axis=1)
    w = None if not weighted else np.random.default_rng(seed).uniform(1, 5, ei.shape[1])
    return wayfarer.Graph.from_edge_index(ei, edge_weight=w, undirected=True), ei


def test_blocks_are_consistent_with_the_graph():
    g, ei = graph()
    seeds = np.array([3, 17, 42, 99])
    s = g.sample_neighbors(seeds, [5, 3], seed=1)
    assert s.seeds.tolist() == seeds.tolist()
    assert len(s.blocks) == 2
    assert s.blocks[-1].dst_nodes.tolist() == seeds.tolist()
    # Blocks nest: each block's destination nodes are the next block's source nodes.
    assert s.blocks[0].dst_nodes.tolist() == s.blocks[1].src_nodes.tolist()
    for b, fan in zip(s.blocks, [5, 3]):
        src = b.src_nodes[b.edge_src]
        dst = b.dst_nodes[b.edge_dst]
        for u, v, e in zip(src, dst, b.edge_ids):
            assert {int(u), int(v)} == set(ei[:, e].tolist())
        per_dst = np.bincount(b.edge_dst, minlength=b.num_dst)
        assert per_dst.max() <= fan
        for d in range(b.num_dst):  # without replacement: no edge twice
            ids = b.edge_ids[b.edge_dst == d]
            assert len(set(ids.tolist())) == len(ids)
    pyg = s.to_pyg()
    n_id, ei_local = pyg["n_id"], pyg["edge_index"]
    assert n_id[: len(seeds)].tolist() == seeds.tolist()
    assert sum(pyg["num_sampled_nodes"]) == len(n_id)
    assert sum(pyg["num_sampled_edges"]) == ei_local.shape[1] == len(pyg["e_id"])
    for (a, b), e in zip(ei_local.T, pyg["e_id"]):
        assert {int(n_id[a]), int(n_id[b])} == set(ei[:, e].tolist())


def test_sampling_is_reproducible_and_the_same_as_the_cli(cli, tmp_path):
    g, _ = graph()
    seeds = np.arange(0, 400, 7)
    a = g.sample_neighbors(seeds, [4, 2], seed=3)
    b = g.sample_neighbors(seeds, [4, 2], seed=3)
    for x, y in zip(a.blocks, b.blocks):
        assert np.array_equal(x.edge_ids, y.edge_ids)
    g.save(tmp_path / "g.wfg")
    (tmp_path / "seeds.txt").write_text("\n".join(map(str, seeds)) + "\n")
    cli("sample", "--graph", str(tmp_path / "g.wfg"), "--seeds", str(tmp_path / "seeds.txt"), "--fanouts", "4,2",
        "--batch-size", str(len(seeds)), "--seed", "3", "--backend", "cpu", "-q", "-o", str(tmp_path / "s.npz"))
    z = np.load(tmp_path / "s.npz")
    # A loaded .wfg's edge ids are its CSR positions; map ours back through them.
    pos = {int(e): i for i, e in enumerate(g.edge_ids())}
    for l, blk in enumerate(a.blocks):
        assert z[f"b0_l{l}_nodes"].astype(np.int64).tolist() == blk.src_nodes.tolist()
        assert z[f"b0_l{l}_src"].tolist() == blk.edge_src.tolist()
        csr = g._g.edge_ids()
        assert [int(csr[p]) for p in z[f"b0_l{l}_eid"]] == blk.edge_ids.tolist()
    assert pos


def test_weighted_and_policy_sampling():
    g, _ = graph(weighted=True)
    s = g.sample_neighbors([1, 2, 3], [3], weighted=True, seed=1)
    assert s.blocks[0].num_edges <= 9
    pol = wayfarer.compile("#[sampler]\nfn by_weight(s: &Step, k: f32) -> f32 {\n    s.weight() * k\n}\n")
    t = g.sample_neighbors([1, 2, 3], [3], policy=pol, k=2.0, seed=1)
    # Proportional to weight x 2 is proportional to the weight: the same draws.
    assert np.array_equal(t.blocks[0].edge_ids, s.blocks[0].edge_ids)
    with pytest.raises(ValueError, match="give one"):
        g.sample_neighbors([1], [3], weighted=True, policy=pol)
    with pytest.raises(ValueError, match=r"seeds\[0\] = 1000"):
        g.sample_neighbors([1000], [3])


def test_loader_covers_every_seed_once_per_epoch_and_repeats_with_its_seed():
    g, _ = graph()
    seeds = np.arange(400)
    loader = wayfarer.NeighborLoader(g, seeds, [4, 2], batch_size=64, seed=9)
    assert len(loader) == 7
    first = [b.seeds.tolist() for b in loader]
    assert sorted(sum(first, [])) == seeds.tolist()
    second = [b.seeds.tolist() for b in loader]
    assert first != second  # a new shuffle each epoch
    again = wayfarer.NeighborLoader(g, seeds, [4, 2], batch_size=64, seed=9)
    for x, y in zip(again, wayfarer.NeighborLoader(g, seeds, [4, 2], batch_size=64, seed=9)):
        assert x.seeds.tolist() == y.seeds.tolist()
        assert np.array_equal(x.blocks[0].edge_ids, y.blocks[0].edge_ids)
    # Breaking out early stops the background sampler cleanly.
    for _ in wayfarer.NeighborLoader(g, seeds, [4], batch_size=8):
        break


def test_loader_stats_say_where_the_epoch_went():
    """A slow consumer: the loader runs ahead (its queue full) and the consumer hardly waits;
    the stats count every batch and time each stage."""
    import time

    g, _ = graph()
    loader = wayfarer.NeighborLoader(g, np.arange(400), [4, 2], batch_size=16, prefetch=1)
    assert loader.stats["batches"] == 0
    for _ in loader:
        time.sleep(0.01)
    s = loader.stats
    assert s["batches"] == len(loader) == 25
    assert s["sampling"] > 0 and s["converting"] > 0
    assert s["gathering"] >= 0 and s["planning"] >= 0
    # 25 sleeps of 10 ms with a queue of one: the loader waited on the consumer.
    assert s["ahead"] > 0.1
    assert s["waiting"] < s["ahead"]
    busy = s["sampling"] + s["converting"] + s["gathering"] + s["planning"]
    assert s["hidden"] == pytest.approx(max(0.0, busy - s["waiting"]))
    # A new epoch starts its own count.
    it = iter(loader)
    next(it)
    assert loader.stats["batches"] == 1
    it.close()


def test_a_loader_stopped_with_its_queue_full_at_the_epochs_end_returns():
    """The consumer leaves (``break``, or an exception in its training step) while the
    sampler's thread waits to queue the end of the epoch behind a full queue: leaving must
    not wait for that thread forever."""
    import threading
    import time

    g, _ = graph()
    left = threading.Event()

    def consume():
        loader = wayfarer.NeighborLoader(g, np.arange(16), [4], batch_size=8, prefetch=1)
        for _ in loader:
            time.sleep(0.5)  # the thread queues the last batch and waits to queue the end
            break
        left.set()

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    t.join(timeout=20)
    assert left.is_set(), "leaving the loader hung"


def test_triangles_match_networkx():
    nx = pytest.importorskip("networkx")
    G = nx.gnm_random_graph(300, 3000, seed=4)
    g = wayfarer.Graph.from_networkx(G)
    total, per = g.triangles(per_node=True)
    ref = nx.triangles(G)
    assert total == sum(ref.values()) // 3
    assert per.tolist() == [ref[v] for v in G.nodes]
    # A mask keeping every edge counts them all; one keeping none counts nothing.
    keep_all = wayfarer.compile("#[mask]\nfn all(s: &Step, t: f32) -> bool {\n    s.weight() > t\n}\n")
    assert g.triangles(mask=keep_all, t=0.0) == total
    assert g.triangles(mask=keep_all, t=2.0) == 0
