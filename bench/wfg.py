"""Reads a wayfarer .wfg graph's CSR with numpy (for the Python reference benchmarks)."""
import struct

import numpy as np


def read_wfg(path):
    buf = open(path, "rb").read()
    assert buf[:8] == b"\x89WFG\r\n\x1a\n", f"{path}: not a .wfg"
    sections = struct.unpack_from("<I", buf, 12)[0]
    n, m = struct.unpack_from("<QQ", buf, 16)
    dtypes = {1: np.uint32, 2: np.uint64, 3: np.float32, 4: np.int64}
    out = {}
    for i in range(sections):
        kind, elem, off, count = struct.unpack_from("<IIQQ", buf, 64 + 64 * i)
        out[kind] = np.frombuffer(buf, dtype=dtypes[elem], count=count, offset=off)
    return n, m, out[1], out[2]
