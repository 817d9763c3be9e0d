#!/usr/bin/env python3
"""Writes a wayfarer .wfg graph in the input format of the GroupTC comparison harness
(Nanqipro/GroupTC-HS-BS): a directory with `begin.bin` (uint64 row offsets, n + 1),
`source.bin` and `adjacent.bin` (uint32, one entry per undirected edge, listed once as
(u, v) with u < v, sorted by u then v). Self loops and repeated edges are dropped; the
harness orients the edges itself, by degree, on the GPU.

usage: grouptc_input.py GRAPH.wfg OUT_DIR
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from wfg import read_wfg  # noqa: E402


def main():
    path, out = sys.argv[1], sys.argv[2]
    n, _, offsets, targets = read_wfg(path)
    src = np.repeat(np.arange(n, dtype=np.uint32), np.diff(offsets).astype(np.int64))
    dst = targets.astype(np.uint32)
    # Each undirected edge once, as (low, high); a directed input is symmetrized by this.
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    keep = lo != hi
    key = np.unique((lo[keep].astype(np.uint64) << np.uint64(32)) | hi[keep].astype(np.uint64))
    source = (key >> np.uint64(32)).astype(np.uint32)
    adjacent = (key & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    begin = np.zeros(n + 1, dtype=np.uint64)
    np.cumsum(np.bincount(source, minlength=n), out=begin[1:])
    os.makedirs(out, exist_ok=True)
    begin.tofile(os.path.join(out, "begin.bin"))
    source.tofile(os.path.join(out, "source.bin"))
    adjacent.tofile(os.path.join(out, "adjacent.bin"))
    print(f"{out}: {n} nodes, {len(adjacent)} undirected edges")


if __name__ == "__main__":
    main()
