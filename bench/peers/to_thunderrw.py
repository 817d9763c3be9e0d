#!/usr/bin/env python3
"""Write a wayfarer text edge list (`wayfarer convert G.wfg -o G.txt`) as ThunderRW's CSR input.

ThunderRW (Xtra-Computing/ThunderRW) reads a folder holding
  b_degree.bin       u32 element size (4), i32 node count, i64 entry count, i32 degree per node
  b_adj.bin          i32 destination per entry, rows in node order, sorted within a row
  b_edge_weight.bin  f64 weight per entry (when the list has a weight column)
  b_edge_label.bin   i32 label per entry (when the list has a label column)
The entries are kept exactly as wayfarer stores them (both directions of an undirected edge, in
row order), so both systems walk the same graph with the same weights and labels.

Usage: to_thunderrw.py EDGES.txt OUT_DIR      (standard library only)
"""
import os
import struct
import sys
from array import array


def main(src, out):
    nodes = None
    columns = ["source", "target"]
    deg = None
    adj, weight, label = array("i"), array("d"), array("i")
    last = (-1, -1)
    with open(src) as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("#"):
                for field in line[1:].split():
                    if field.startswith("nodes="):
                        nodes = int(field[6:])
                    elif field.startswith("columns="):
                        columns = field[8:].split(",")
                continue
            if deg is None:
                if nodes is None:
                    sys.exit(f"{src}: no `# ... nodes=N` header: write it with `wayfarer convert G.wfg -o G.txt`")
                deg = array("i", bytes(4 * nodes))
            parts = line.split()
            s, d = int(parts[0]), int(parts[1])
            if (s, d) < last:
                sys.exit(f"{src}:{lineno}: entries are not in row order (wayfarer writes them sorted)")
            last = (s, d)
            deg[s] += 1
            adj.append(d)
            if "weight" in columns:
                weight.append(float(parts[columns.index("weight")]))
            if "label" in columns:
                label.append(int(parts[columns.index("label")]))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "b_degree.bin"), "wb") as f:
        f.write(struct.pack("<Iiq", 4, nodes, len(adj)))
        deg.tofile(f)
    with open(os.path.join(out, "b_adj.bin"), "wb") as f:
        adj.tofile(f)
    if len(weight):
        with open(os.path.join(out, "b_edge_weight.bin"), "wb") as f:
            weight.tofile(f)
    if len(label):
        with open(os.path.join(out, "b_edge_label.bin"), "wb") as f:
            label.tofile(f)
    print(f"{out}: {nodes} nodes, {len(adj)} entries, weights {'yes' if len(weight) else 'no'}, labels {'yes' if len(label) else 'no'}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
