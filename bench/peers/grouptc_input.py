#!/usr/bin/env python3
"""Writes a wayfarer .wfg graph in the input format of the GroupTC comparison harness
(Nanqipro/GroupTC-HS-BS): a directory with `begin.bin` (uint64 row offsets, n + 1),
`source.bin` and `adjacent.bin` (uint32, one entry per undirected edge, listed once as
(u, v) with u < v, sorted by u then v). Self loops and repeated edges are dropped; the
harness orients the edges itself, by degree, on the GPU.

usage: grouptc_input.py GRAPH.wfg OUT_DIR   (GROUPTC_INPUT_SORT=1: always the general sort)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from wfg import read_wfg  # noqa: E402


def pair_sums(lo, hi):
    """Two 64-bit hash sums over the pairs (lo, hi): equal multisets give equal sums."""
    sums = []
    for mul in (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xD6E8FEB86659FD93)):
        x = (lo.astype(np.uint64) << np.uint64(32)) | hi.astype(np.uint64)
        x *= mul
        x ^= x >> np.uint64(29)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        sums.append(int(x.sum(dtype=np.uint64)))
    return sums


def main():
    path, out = sys.argv[1], sys.argv[2]
    n, _, offsets, targets = read_wfg(path)
    src = np.repeat(np.arange(n, dtype=np.uint32), np.diff(offsets).astype(np.int64))
    dst = targets.astype(np.uint32)
    # Each undirected edge once, as (low, high). A symmetric graph with sorted rows (what
    # wayfarer writes) lists its upper entries already in (low, high) order, and the lower
    # entries are the same pairs: then only repeats are dropped, in one pass instead of a sort
    # of every entry (a minute at R-MAT 24). Anything else is symmetrized by a sort.
    up, down = dst > src, dst < src
    lo_up, hi_up = src[up], dst[up]
    step = np.diff(dst.astype(np.int64))
    sorted_rows = bool(np.all((step >= 0) | (np.diff(src) > 0)))
    del step
    if os.environ.get("GROUPTC_INPUT_SORT") != "1" and sorted_rows and up.sum() == down.sum() and pair_sums(lo_up, hi_up) == pair_sums(dst[down], src[down]):
        fresh = np.ones(len(lo_up), dtype=bool)
        fresh[1:] = (lo_up[1:] != lo_up[:-1]) | (hi_up[1:] != hi_up[:-1])
        source, adjacent = lo_up[fresh], hi_up[fresh]
    else:
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
