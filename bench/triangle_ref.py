#!/usr/bin/env python3
"""Triangle counts of a .wfg graph by an established library, for the bench.

usage: triangle_ref.py GRAPH.wfg igraph|networkx

Builds the simple undirected graph (each node pair once, no self loops) from the CSR, then
times the library's own triangle counting: igraph's local transitivity (its C core counts
each node's triangles; total = sum of T(v) / 3), or networkx's `triangles`. Prints one line:
triangles, seconds (counting only), library version.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wfg import read_wfg  # noqa: E402


def main():
    path, lib = sys.argv[1], sys.argv[2]
    n, m, offsets, targets = read_wfg(path)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets.astype(np.int64)))
    dst = targets.astype(np.int64)
    keep = src < dst
    pairs = np.unique(np.stack([src[keep], dst[keep]], axis=1), axis=0)
    if lib == "igraph":
        import igraph

        g = igraph.Graph(n=int(n), edges=pairs.tolist(), directed=False)
        t = time.perf_counter()
        cc = np.array(g.transitivity_local_undirected(mode="zero"))
        deg = np.array(g.degree(), dtype=np.float64)
        per = np.rint(cc * deg * (deg - 1) / 2)
        total = int(per.sum()) // 3
        secs = time.perf_counter() - t
        version = f"python-igraph {igraph.__version__}"
    elif lib == "networkx":
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(int(n)))
        g.add_edges_from(pairs.tolist())
        t = time.perf_counter()
        total = sum(nx.triangles(g).values()) // 3
        secs = time.perf_counter() - t
        version = f"networkx {nx.__version__}"
    else:
        sys.exit(f"unknown library {lib}")
    print(f"{lib}: {total} triangles in {secs:.3f} s ({len(pairs) / secs / 1e6:.2f} M edges/s, {version})")


if __name__ == "__main__":
    main()
