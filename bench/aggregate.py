"""Neighbour aggregation of sampled blocks: ``wayfarer.aggregate`` against torch's own ways on
the same blocks and the same GPU (issue 27, point 5).

    python bench/aggregate.py GRAPH.wfg [--dims 128,512] [--batch 1024] [--fanouts 25,10] [-o OUT.md]

The blocks are one mini-batch of the graph's GPU sampler (``ids="internal"``, input layer
first), its rows classified by the hybrid metric with the graph's node density. Per block
and feature dim, the median of CUDA-event times over repeats of:

- ``wayfarer``: ``wayfarer.aggregate(block, x, "mean")`` (the plan built beforehand, as the
  loader does on its background thread); ``all-sparse`` / ``all-dense``: the same kernels
  with every row in one class (the ablation of the dense/sparse split);
- ``index_add_``: ``zeros.index_add_(0, dst, x[src]) / deg`` (PyG's and the GraphSAGE
  example's way);
- ``scatter_reduce``: ``zeros.scatter_reduce_(0, dst, x[src], "mean", include_self=False)``;
- ``sparse.mm``: a CSR tensor of the block (values ``1/deg``) times ``x`` (cuSPARSE), built
  beforehand.

Each is timed forward only and forward plus backward (the gradient of ``x``). Every result
is checked against ``index_add_`` first. The ratio column is the torch way's time over
wayfarer's. A second table times building each block's plan: the engine's kernels in one
native call (what CUDA blocks get) against the same arrays from torch operations.
"""

import argparse
import copy
import statistics
import sys
import time

import numpy as np
import torch

import wayfarer
from wayfarer._aggregate import _ids, _plan_cuda, _plan_torch, _Rows


def timed(fn, reps, cuda):
    """Median ms of ``fn`` (CUDA events on a GPU, the wall clock on the CPU); NaN where torch
    cannot run it (a pass it does not support)."""
    try:
        fn()
    except RuntimeError as e:
        print(f"  not timed: {str(e).splitlines()[0]}", file=sys.stderr)
        return float("nan")
    times = []
    for _ in range(reps):
        if cuda:
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        else:
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def variants(block, dim):
    """name -> (forward function of x), all on the block's device."""
    plan = block._plan
    src, dst = block.edge_src, block.edge_dst
    deg = torch.bincount(dst, minlength=block.num_dst).clamp(min=1).unsqueeze(1).float()
    idx = dst.unsqueeze(1).expand(-1, dim)
    f = plan.forward
    csr = torch.sparse_csr_tensor(f.indptr, f.cols, plan.inv_degree(torch.float32)[torch.repeat_interleave(
        torch.arange(block.num_dst, device=dst.device), torch.diff(f.indptr))], size=(block.num_dst, len(block.src_nodes)))

    def with_classes(dense_f, dense_b):
        b = copy.copy(block)
        p = copy.copy(plan)
        p.forward = _Rows(*plan.forward.tensors(), dense_f)
        p.backward = _Rows(*plan.backward.tensors(), dense_b)
        b._plan = p
        return lambda x: wayfarer.aggregate(b, x, "mean")

    return {
        "wayfarer": lambda x: wayfarer.aggregate(block, x, "mean"),
        "all-sparse": with_classes(0, 0),
        "all-dense": with_classes(block.num_dst, len(block.src_nodes)),
        "index_add_": lambda x: torch.zeros((block.num_dst, dim), device=x.device).index_add_(0, dst, x[src]) / deg,
        "scatter_reduce": lambda x: torch.zeros((block.num_dst, dim), device=x.device).scatter_reduce_(
            0, idx, x[src], "mean", include_self=False),
        "sparse.mm": lambda x: csr @ x,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph")
    ap.add_argument("--dims", default="128,512")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--fanouts", default="25,10", help="input layer first, as the loader's blocks are")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--device", default="cuda", help="cpu: a smoke test of this script where there is no GPU")
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    backend = "cuda" if cuda else "cpu"
    g = wayfarer.Graph.load(a.graph)
    density = torch.as_tensor(g.node_density(backend=backend), device=dev)
    seeds = torch.as_tensor(np.random.default_rng(1).choice(g.num_nodes, a.batch, replace=False), device=dev)
    sample = g.sample_neighbors(seeds, [int(f) for f in a.fanouts.split(",")], seed=1, ids="internal", backend=backend)
    name = torch.cuda.get_device_name() if cuda else "CPU"
    lines = [f"# wayfarer.aggregate on {name}", "",
             f"graph {a.graph}: {g.num_nodes} nodes, {g.num_edges} edge entries; batch {a.batch}, fanouts [{a.fanouts}]; "
             f"median of {a.reps} CUDA-event timings, ms; ratio = the torch way / wayfarer", ""]
    lines += ["| block | dst rows | src rows | edges | dense rows (fwd/bwd) | dim | pass | " +
              " | ".join(["wayfarer", "all-sparse", "all-dense", "index_add_", "scatter_reduce", "sparse.mm"]) +
              " | index_add_ ratio | scatter_reduce ratio | sparse.mm ratio |",
              "|" + "---|" * 16]
    plan_lines = ["", "Building each block's plan (wall ms, median of the reps; each ends with its row counts on the host):", "",
                  "| block | edges | engine (one native call) | torch operations | ratio |", "|---|---|---|---|---|"]
    for i, block in enumerate(sample.blocks):
        block.aggregation_plan(density)
        args = (_ids(block.edge_src, "edge_src"), _ids(block.edge_dst, "edge_dst"), _ids(block.src_nodes, "src_nodes"),
                block.num_dst, density, 0.5)
        built = {}
        for name, fn in [("engine", _plan_cuda), ("torch", _plan_torch)] if cuda else [("torch", _plan_torch)]:
            times = []
            for _ in range(a.reps):
                t = time.perf_counter()
                fn(*args)
                times.append((time.perf_counter() - t) * 1e3)
            built[name] = statistics.median(times)
        engine = built.get("engine", float("nan"))
        plan_lines.append(f"| {i} | {block.num_edges} | {engine:.3f} | {built['torch']:.3f} | {built['torch'] / engine:.2f}x |")
        print(plan_lines[-1], flush=True)
        for dim in [int(d) for d in a.dims.split(",")]:
            x = torch.randn((len(block.src_nodes), dim), device=dev, requires_grad=True)
            fns = variants(block, dim)
            want = fns["index_add_"](x)
            for name, fn in fns.items():
                torch.testing.assert_close(fn(x), want, rtol=1e-4, atol=1e-5, msg=lambda m: f"{name}: {m}")
            grad = torch.randn_like(want)
            for pass_ in ["forward", "forward+backward"]:
                ms = {}
                for name, fn in fns.items():
                    if pass_ == "forward":
                        with torch.no_grad():
                            ms[name] = timed(lambda: fn(x), a.reps, cuda)
                    else:
                        ms[name] = timed(lambda: torch.autograd.grad(fn(x), x, grad), a.reps, cuda)
                ratio = [ms[k] / ms["wayfarer"] for k in ("index_add_", "scatter_reduce", "sparse.mm")]
                lines.append(f"| {i} | {block.num_dst} | {len(block.src_nodes)} | {block.num_edges} | "
                             f"{block._plan.dense_rows[0]}/{block._plan.dense_rows[1]} | {dim} | {pass_} | " +
                             " | ".join(f"{ms[k]:.4f}" for k in fns) + " | " + " | ".join(f"{r:.2f}x" for r in ratio) + " |")
                print(lines[-1], flush=True)
    text = "\n".join(lines + plan_lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
