#!/usr/bin/env python3
"""DGL's neighbor sampling on the same graph and seeds as `wayfarer sample`, for the bench.

usage: dgl_sample.py GRAPH.wfg SEEDS.txt FANOUTS BATCH_SIZE [--replace]

Reads the .wfg's CSR directly (rows are wayfarer's out-neighbors; the R-MAT graphs are
symmetrized, so they are also the in-neighbors DGL samples), builds a DGL graph in CSC form,
and runs one epoch of `dgl.dataloading.NeighborSampler(fanouts).sample_blocks` over the seed
batches in order, single process. Prints one line: edges, seconds, M edges/s, threads.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wfg import read_wfg  # noqa: E402


def main():
    path, seeds_path, fanouts, batch = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")], int(sys.argv[4])
    replace = "--replace" in sys.argv
    import dgl
    import torch

    n, m, offsets, targets = read_wfg(path)
    indptr = torch.from_numpy(offsets.astype(np.int64))
    indices = torch.from_numpy(targets.astype(np.int64))
    g = dgl.graph(("csc", (indptr, indices, torch.arange(m, dtype=torch.int64))), num_nodes=n)
    g.create_formats_()
    seeds = torch.from_numpy(np.loadtxt(seeds_path, dtype=np.int64, ndmin=1))
    sampler = dgl.dataloading.NeighborSampler(fanouts, replace=replace)
    edges = 0
    t = time.perf_counter()
    for start in range(0, len(seeds), batch):
        _, _, blocks = sampler.sample_blocks(g, seeds[start : start + batch])
        edges += sum(b.num_edges() for b in blocks)
    secs = time.perf_counter() - t
    print(f"dgl {dgl.__version__} torch {torch.__version__}: {edges} edges in {secs:.3f} s ({edges / secs / 1e6:.2f} M edges/s, {torch.get_num_threads()} threads)")


if __name__ == "__main__":
    main()
