"""One GraphSAGE training epoch end to end on a GPU, wayfarer's pipeline against a plain one.

    python bench/graphsage_epoch.py GRAPH.wfg [--train 0.1] [--dim 128] [--budget 0.3]

Model: two SAGE layers (mean aggregator, hidden 256), each one linear map of [self, mean] as in
the GraphSAGE paper, trained by PyTorch's fused Adam (--model two for the two maps of PyG's and
DGL's SAGEConv, --adam foreach for the foreach Adam; both pipelines alike), fanouts 25 then 10
hops out (input layer first: [10, 25]), mini-batches of 1024 seeds, random features and labels
(the timing does not depend on them). Pipelines, each one epoch over the same training nodes
after a warm-up:

- wayfarer: NeighborLoader(device="cuda", features=FeatureStore(...), plans=True): blocks built
  on the GPU and features gathered (hottest rows cached within --budget of the features, picked
  by pre-sampling; the rest read from host memory by the GPU) on a background thread, on
  streams of their own, while the model trains on the previous batch; each block's
  aggregation plan built there too, and the model's neighbour means by wayfarer.aggregate.
- plain: NeighborLoader(backend="cpu") (all host cores), blocks copied to the GPU, features by
  torch.index_select on a pinned host tensor and a copy, neighbour means by index_add_ (the
  usual PyG/DGL-UVA-less loop).

Prints a Markdown table of seconds per stage (waiting for batches, moving blocks, gathering,
training; the GPU synchronized between stages to time them) and the epoch, then a second epoch
timed whole with no synchronization between stages (as a training loop runs), and the
speedups.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

import wayfarer

# The model of examples/python/graphsage.py (mean-aggregator SAGE layers over blocks).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "python"))
from graphsage import Sage, index_add_mean  # noqa: E402


def epoch(loader, gather, to_dev, model, opt, y, dev):
    wait = gat = move = step = 0.0
    torch.cuda.synchronize()
    start = t = time.perf_counter()
    n = 0
    for batch in loader:
        t1 = time.perf_counter()
        wait += t1 - t
        blocks = to_dev(batch.blocks)
        seeds = torch.as_tensor(batch.seeds).to(dev)
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        move += t2 - t1
        x = gather(batch, blocks)
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        gat += t3 - t2
        loss = F.cross_entropy(model(blocks, x), y[seeds])
        opt.zero_grad()
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        t = time.perf_counter()
        step += t - t3
        n += 1
    r = {"batches": n, "wait": wait, "move": move, "gather": gat, "train": step, "epoch": time.perf_counter() - start}
    r["loader"] = loader.stats
    return r


def epoch_unsynced(batches, gather, to_dev, model, opt, y, dev):
    """The same epoch with no synchronization between stages (as a training loop runs), over
    a loader or a list of batches already taken: seconds until the last step has finished."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for batch in batches:
        blocks = to_dev(batch.blocks)
        loss = F.cross_entropy(model(blocks, gather(batch, blocks)), y[torch.as_tensor(batch.seeds).to(dev)])
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def host_blocks_to(dev):
    def move(blocks):
        return [wayfarer.Block(torch.as_tensor(b.src_nodes).to(dev), b.num_dst, torch.as_tensor(b.edge_src).to(dev),
                               torch.as_tensor(b.edge_dst).to(dev), torch.as_tensor(b.edge_ids).to(dev)) for b in blocks]
    return move


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph")
    ap.add_argument("--train", type=float, default=0.1, help="fraction of the nodes trained on")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--budget", type=float, default=0.3, help="fraction of the features cached on the GPU")
    ap.add_argument("--mean", choices=["wayfarer", "index_add"], default="wayfarer",
                    help="the wayfarer pipeline's neighbour means: wayfarer.aggregate with plans built by the loader, or "
                         "index_add_ as the plain pipeline")
    ap.add_argument("--switch-interval", type=float, default=os.environ.get("BENCH_SWITCH_INTERVAL"),
                    help="sys.setswitchinterval for the run (how long a thread may hold the GIL while another waits; "
                         "default: $BENCH_SWITCH_INTERVAL, else Python's)")
    ap.add_argument("--model", choices=["two", "concat"], default="concat",
                    help="both pipelines' SAGE layers: two linear maps (self, neighbours) or one of their concatenation")
    ap.add_argument("--adam", choices=["foreach", "fused"], default="fused", help="both pipelines' Adam implementation")
    a = ap.parse_args()
    if a.switch_interval is not None:
        sys.setswitchinterval(a.switch_interval)
    dev = torch.device("cuda")
    g = wayfarer.Graph.load(a.graph)
    n = g.num_nodes
    gen = torch.Generator().manual_seed(1)
    train = torch.randperm(n, generator=gen)[: int(a.train * n)]
    x = torch.empty(n, a.dim).uniform_(generator=gen)
    y = torch.randint(0, 16, (n,), generator=gen).to(dev)
    fanouts = [10, 25]
    print(f"{torch.cuda.get_device_name()}: {n} nodes, {g.num_edges} edge entries, {len(train)} training nodes, "
          f"features {a.dim} x float32 ({x.numel() * 4 / 1e9:.2f} GB), fanouts {fanouts} (input layer first), batch 1024")
    rows = []

    # wayfarer
    torch.manual_seed(0)
    plans = a.mean == "wayfarer"
    model = Sage([a.dim, 256, 16], mean=None if plans else index_add_mean, concat=a.model == "concat").to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=0.003, fused=a.adam == "fused")
    t = time.perf_counter()
    fs = wayfarer.FeatureStore(x, device_budget=a.budget)
    fs.warm(wayfarer.NeighborLoader(g, train, fanouts, batch_size=1024, seed=2, ids="internal", device=dev), batches=50)
    setup = time.perf_counter() - t
    # The loader gathers each batch's features on its thread while the model trains.
    loader = wayfarer.NeighborLoader(g, train, fanouts, batch_size=1024, seed=1, ids="internal", device=dev, features=fs,
                                     plans=plans, density=g.node_density(backend="cuda") if plans else None)
    gather = lambda batch, blocks: batch.x  # noqa: E731
    epoch(loader, gather, lambda b: b, model, opt, y, dev)  # warm-up (compilation, caches)
    fs.reset_stats()
    r = epoch(loader, gather, lambda b: b, model, opt, y, dev)
    r["free"] = epoch_unsynced(loader, gather, lambda b: b, model, opt, y, dev)
    r["free_loader"] = loader.stats
    # The same stages one after the other: the loader's epoch alone (every batch kept), then
    # training alone on the kept batches. Their sum against the epochs above is the overlap.
    torch.cuda.synchronize()
    t = time.perf_counter()
    kept = list(loader)
    torch.cuda.synchronize()
    r["loader_alone"] = time.perf_counter() - t
    r["loader_alone_stats"] = loader.stats
    r["train_alone"] = epoch_unsynced(kept, gather, lambda b: b, model, opt, y, dev)
    del kept
    r["name"] = (f"wayfarer (GPU blocks, FeatureStore {a.budget:.0%}: hit rate {fs.stats['hit_rate']:.2f}; setup "
                 f"{setup:.1f} s; {'plans and wayfarer.aggregate' if plans else 'index_add_'})")
    rows.append(r)
    del fs

    # plain
    torch.manual_seed(0)
    model = Sage([a.dim, 256, 16], mean=index_add_mean, concat=a.model == "concat").to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=0.003, fused=a.adam == "fused")
    pinned = x.pin_memory()
    loader = wayfarer.NeighborLoader(g, train, fanouts, batch_size=1024, seed=1, ids="internal", backend="cpu")
    # The host batch's ids (numpy): no round trip through the GPU.
    gather = lambda batch, blocks: pinned.index_select(0, torch.as_tensor(batch.blocks[0].src_nodes)).to(dev)  # noqa: E731
    epoch(loader, gather, host_blocks_to(dev), model, opt, y, dev)
    r = epoch(loader, gather, host_blocks_to(dev), model, opt, y, dev)
    r["free"] = epoch_unsynced(loader, gather, host_blocks_to(dev), model, opt, y, dev)
    r["free_loader"] = loader.stats
    r["name"] = f"plain (CPU sampling, {torch.get_num_threads()} threads; index_select on pinned memory; index_add_)"
    rows.append(r)

    print("| pipeline | batches | waiting for batches s | moving blocks s | gathering s | training s | epoch s (stages timed) "
          "| epoch s (no syncs) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['name']} | {r['batches']} | {r['wait']:.3f} | {r['move']:.3f} | {r['gather']:.3f} | {r['train']:.3f} | "
              f"{r['epoch']:.3f} | {r['free']:.3f} |")
    print(f"speedup: {rows[1]['epoch'] / rows[0]['epoch']:.2f}x with the stages timed, "
          f"{rows[1]['free'] / rows[0]['free']:.2f}x without syncs")
    w = rows[0]
    serial = w["loader_alone"] + w["train_alone"]
    print()
    print("The wayfarer pipeline's stages run one after the other (the loader's epoch alone, every batch kept; then "
          "training alone on those batches), against the pipelined epoch (no syncs):")
    print()
    print("| loader alone s | of it sampling / converting / gathering | training alone s | sum s | pipelined epoch s | "
          "hidden by overlap s | pipelined over the slower stage |")
    print("|---|---|---|---|---|---|---|")
    la = w["loader_alone_stats"]
    print(f"| {w['loader_alone']:.3f} | {la['sampling']:.3f} / {la['converting']:.3f} / {la['gathering']:.3f} | "
          f"{w['train_alone']:.3f} | {serial:.3f} | {w['free']:.3f} | {serial - w['free']:.3f} | "
          f"{w['free'] / max(w['loader_alone'], w['train_alone']):.2f}x |")
    print()
    print("The loaders' own threads in the epochs above (NeighborLoader.stats, seconds): their stages ran while the "
          "training loop worked, so they add to the epoch only as the loop's waiting.")
    print()
    print("| pipeline | epoch | sampling | converting | gathering | planning | ahead (queue full) | loop waiting | hidden "
          "behind training |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for kind, key in (("timed", "loader"), ("no syncs", "free_loader")):
            s = r[key]
            print(f"| {r['name'].split(' (')[0]} | {kind} | " + " | ".join(
                f"{s[k]:.3f}" for k in ("sampling", "converting", "gathering", "planning", "ahead", "waiting", "hidden")) + " |")


if __name__ == "__main__":
    main()
