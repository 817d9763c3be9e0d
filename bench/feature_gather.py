"""Feature gathering for GNN mini-batches on a GPU: wayfarer.FeatureStore (device cache of the
hottest rows, chosen by pre-sampling, the rest read from mapped host memory) against the plain
pipeline (torch.index_select on a pinned host tensor, then a copy to the GPU).

    python bench/feature_gather.py GRAPH.wfg [--dims 128,512] [--budgets 0,0.1,0.3,1.0] [--batches 40]

The ids are real mini-batches' input nodes (NeighborLoader, fanouts 25,10, batches of 1024 on
the GPU, R-MAT's power-law access). Prints a Markdown table: GB/s of gathered features, the
hit rate, and the speedup over the plain pipeline. Features are random (their values do not
matter to the speed; each gather is checked against the plain one's once).
"""

import argparse
import time

import torch

import wayfarer


def timed(fn, batches):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for b in batches:
        fn(b)
    torch.cuda.synchronize()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph")
    ap.add_argument("--dims", default="128,512")
    ap.add_argument("--budgets", default="0,0.1,0.3,1.0")
    ap.add_argument("--dynamic", default="0,0.5", help="shares of the budget given to the dynamic cache")
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--warm-batches", type=int, default=40)
    a = ap.parse_args()
    g = wayfarer.Graph.load(a.graph)
    n = g.num_nodes
    dev = torch.device("cuda")
    seeds = torch.randperm(n, generator=torch.Generator().manual_seed(1))
    loader = wayfarer.NeighborLoader(g, seeds, [25, 10], batch_size=1024, seed=1, ids="internal", device=dev)
    batches = []
    for i, b in enumerate(loader):
        if i >= a.batches:
            break
        batches.append(b.blocks[0].src_nodes)
    rows = sum(len(b) for b in batches)
    print(f"{torch.cuda.get_device_name()}: {n} nodes, {len(batches)} mini-batches of 1024 seeds, {rows} rows "
          f"({rows / len(batches):.0f} per batch)")
    print("| nodes | dim | budget | dynamic share | static rows | dynamic slots | hit rate | wayfarer GB/s | plain GB/s | speedup |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for dim in [int(d) for d in a.dims.split(",")]:
        x = torch.empty(n, dim, dtype=torch.float32)
        x.uniform_(generator=torch.Generator().manual_seed(dim))
        pinned = x.pin_memory()
        host_batches = [b.cpu() for b in batches]
        plain = timed(lambda b: pinned.index_select(0, b).to(dev, non_blocking=True), host_batches)
        nbytes = rows * dim * 4
        for budget in [float(x) for x in a.budgets.split(",")]:
            for dynamic in [float(x) for x in a.dynamic.split(",")] if budget > 0 else [0.0]:
                fs = wayfarer.FeatureStore(x, device_budget=budget, dynamic=dynamic)
                if budget > 0:
                    fs.warm(loader, batches=a.warm_batches)
                assert torch.equal(fs.gather(batches[0]).cpu(), x[host_batches[0]])
                fs.reset_stats()
                secs = timed(fs.gather, batches)
                st = fs.stats
                print(f"| {n} | {dim} | {budget:.0%} | {dynamic:.0%} | {fs.cached} | {fs.dynamic_capacity} | {st['hit_rate']:.3f} | "
                      f"{nbytes / secs / 1e9:.1f} | {nbytes / plain / 1e9:.1f} | {plain / secs:.2f}x |", flush=True)
                del fs
        del pinned, x


if __name__ == "__main__":
    main()
