"""The GraphSAGE training step alone, without the loader running beside it: per-step wall,
host-issue and CUDA-event time, and torch.profiler's kernel time and launches per step, for
wayfarer.aggregate and index_add_ means, with and without fused Adam (what bounds
bench/graphsage_epoch.py's training stage).

    python bench/graphsage_step_profile.py GRAPH.wfg

The batches (61 of 1,024 seeds, fanouts 10,25 input layer first, 128 random features, a
FeatureStore at 30%, plans built by the loader) are taken first; then each variant trains
10 of them to warm up and is timed on the other 51.
"""

import sys, time
from pathlib import Path
import torch, torch.nn.functional as F
import wayfarer
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "python"))
from graphsage import Sage, index_add_mean
g = wayfarer.Graph.load(sys.argv[1])
dev = torch.device("cuda")
n = g.num_nodes
gen = torch.Generator().manual_seed(1)
train = torch.randperm(n, generator=gen)[: int(0.1 * n)]
x = torch.empty(n, 128).uniform_(generator=gen)
y = torch.randint(0, 16, (n,), generator=gen).to(dev)
fs = wayfarer.FeatureStore(x, device_budget=0.3)
loader = wayfarer.NeighborLoader(g, train, [10, 25], batch_size=1024, seed=1, ids="internal", device=dev, features=fs, plans=True,
                                 density=g.node_density(backend="cuda"))
batches = []
for i, b in enumerate(loader):
    batches.append(b)
    if i == 60: break
for name, mean in [("wayfarer", None), ("index_add", index_add_mean)]:
  for fused in [False, True]:
    torch.manual_seed(0)
    model = Sage([128, 256, 16], mean=mean).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=0.003, fused=fused)
    def step(b):
        loss = F.cross_entropy(model(b.blocks, b.x), y[torch.as_tensor(b.seeds).to(dev)])
        opt.zero_grad(); loss.backward(); opt.step()
    for b in batches[:10]: step(b)
    torch.cuda.synchronize()
    t = time.perf_counter(); cpu = 0.0
    ev = []
    for b in batches[10:]:
        a0 = time.perf_counter(); e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
        e0.record(); step(b); e1.record(); cpu += time.perf_counter() - a0; ev.append((e0, e1))
    torch.cuda.synchronize()
    wall = time.perf_counter() - t
    gpu = sum(a.elapsed_time(b) for a, b in ev) / 1e3
    k = len(batches) - 10
    print(f"{name} fused={fused}: per step wall {wall/k*1e3:.3f} ms, host issue {cpu/k*1e3:.3f} ms, event span {gpu/k*1e3:.3f} ms")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as p:
        for b in batches[10:30]: step(b)
        torch.cuda.synchronize()
    ka = p.key_averages()
    tot_cuda = sum(e.self_device_time_total for e in ka) / 20 / 1e3
    print(f"  kernels per step (self device time) {tot_cuda:.3f} ms; launches/step {sum(e.count for e in ka if e.device_type == torch.autograd.DeviceType.CUDA)/20:.0f}")
    if not fused:
        print(ka.table(sort_by="self_device_time_total", row_limit=12))
