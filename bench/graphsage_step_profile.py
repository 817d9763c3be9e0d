"""The GraphSAGE training step alone, without the loader running beside it: per-step wall,
host-issue and CUDA-event time, and torch.profiler's kernel time and launches per step, for
each model form (two linear maps per layer, or one on the concatenation as in the GraphSAGE
paper), neighbour mean (wayfarer.aggregate or index_add_) and Adam (foreach or fused): what
bounds bench/graphsage_epoch.py's training stage. Then the host time of each part of the
step, and of one wayfarer.aggregate call against one index_add_ mean.

    python bench/graphsage_step_profile.py GRAPH.wfg [--table]

The batches (61 of 1,024 seeds, fanouts 10,25 input layer first, 128 random features, a
FeatureStore at 30%, plans built by the loader) are taken first; then each variant trains
10 of them to warm up and is timed on the other 51.
"""

import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

import wayfarer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "python"))
from graphsage import Sage, index_add_mean  # noqa: E402


def main():
    g = wayfarer.Graph.load(sys.argv[1])
    table = "--table" in sys.argv
    dev = torch.device("cuda")
    n = g.num_nodes
    gen = torch.Generator().manual_seed(1)
    train = torch.randperm(n, generator=gen)[: int(0.1 * n)]
    x = torch.empty(n, 128).uniform_(generator=gen)
    y = torch.randint(0, 16, (n,), generator=gen).to(dev)
    fs = wayfarer.FeatureStore(x, device_budget=0.3)
    loader = wayfarer.NeighborLoader(g, train, [10, 25], batch_size=1024, seed=1, ids="internal", device=dev, features=fs,
                                     plans=True, density=g.node_density(backend="cuda"))
    batches = []
    for i, b in enumerate(loader):
        batches.append(b)
        if i == 60:
            break
    timed = batches[10:]
    k = len(timed)
    print(f"{torch.cuda.get_device_name()}: {k} timed steps of {len(batches)} batches; torch {torch.__version__}")
    print()
    print("| model | mean | Adam | wall ms/step | host issue ms/step | event span ms/step | kernels ms/step | launches/step |")
    print("|---|---|---|---|---|---|---|---|")
    for form in ("two", "concat"):
        for name, mean in (("wayfarer", None), ("index_add", index_add_mean)):
            for fused in (False, True):
                torch.manual_seed(0)
                model = Sage([128, 256, 16], mean=mean, concat=form == "concat").to(dev)
                opt = torch.optim.Adam(model.parameters(), lr=0.003, fused=fused)

                def step(b):
                    loss = F.cross_entropy(model(b.blocks, b.x), y[torch.as_tensor(b.seeds).to(dev)])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()

                for b in batches[:10]:
                    step(b)
                torch.cuda.synchronize()
                t = time.perf_counter()
                cpu = 0.0
                ev = []
                for b in timed:
                    a0 = time.perf_counter()
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    step(b)
                    e1.record()
                    cpu += time.perf_counter() - a0
                    ev.append((e0, e1))
                torch.cuda.synchronize()
                wall = time.perf_counter() - t
                span = sum(a.elapsed_time(b) for a, b in ev) / 1e3
                acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
                with torch.profiler.profile(activities=acts) as p:
                    for b in timed[:20]:
                        step(b)
                    torch.cuda.synchronize()
                ka = p.key_averages()
                kern = sum(e.self_device_time_total for e in ka) / 20 / 1e3
                launches = sum(e.count for e in ka if e.device_type == torch.autograd.DeviceType.CUDA) / 20
                print(f"| {form} | {name} | {'fused' if fused else 'foreach'} | {wall / k * 1e3:.3f} | {cpu / k * 1e3:.3f} | "
                      f"{span / k * 1e3:.3f} | {kern:.3f} | {launches:.0f} |")
                if table and form == "two" and not fused:
                    print(ka.table(sort_by="count", row_limit=40))
    parts(batches, timed, y, dev)
    calls(timed, dev)


def parts(batches, timed, y, dev):
    """Host time of each part of the step (no synchronization: what the Python thread spends
    issuing it), for the default model with each mean."""
    print()
    print("Host time of each part of the step (two linear maps, foreach Adam), ms per step:")
    print()
    print("| mean | forward | loss | zero_grad | backward | optimizer | sum |")
    print("|---|---|---|---|---|---|---|")
    for name, mean in (("wayfarer", None), ("index_add", index_add_mean)):
        torch.manual_seed(0)
        model = Sage([128, 256, 16], mean=mean).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=0.003)
        acc = [0.0] * 5
        for i, b in enumerate(batches):
            t0 = time.perf_counter()
            out = model(b.blocks, b.x)
            t1 = time.perf_counter()
            loss = F.cross_entropy(out, y[torch.as_tensor(b.seeds).to(dev)])
            t2 = time.perf_counter()
            opt.zero_grad()
            t3 = time.perf_counter()
            loss.backward()
            t4 = time.perf_counter()
            opt.step()
            t5 = time.perf_counter()
            if i >= 10:
                for j, d in enumerate((t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
                    acc[j] += d
        torch.cuda.synchronize()
        ms = [a / len(timed) * 1e3 for a in acc]
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in ms) + f" | {sum(ms):.3f} |")


def calls(timed, dev):
    """Host time of one neighbour mean of the input block (128 features), with autograd
    recording (the training step's case) and without."""
    print()
    print("One neighbour mean of the input block, host time per call (µs), 2,000 calls:")
    print()
    print("| mean | grad recorded | no_grad |")
    print("|---|---|---|")
    for name, mean in (("wayfarer.aggregate", lambda b, h: wayfarer.aggregate(b, h, "mean")), ("index_add_", index_add_mean)):
        row = []
        for grad in (True, False):
            b = timed[0].blocks[0]
            h = timed[0].x.detach().requires_grad_(grad)
            with torch.set_grad_enabled(grad):
                for _ in range(50):
                    mean(b, h)
                torch.cuda.synchronize()
                t = time.perf_counter()
                for _ in range(2000):
                    mean(b, h)
                row.append((time.perf_counter() - t) / 2000 * 1e6)
            torch.cuda.synchronize()
        print(f"| {name} | {row[0]:.1f} | {row[1]:.1f} |")


if __name__ == "__main__":
    main()
