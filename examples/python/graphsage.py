"""GraphSAGE trained from wayfarer's NeighborLoader (plain torch, no PyG needed).

Task: WordNet's synsets, the embedded default graph; predict each synset's part of speech
(noun, verb, adjective, adverb) from its neighbourhood. A node's input features are only its
counts of outgoing pointers by type and its degree: the model must aggregate neighbours to do
better than those. Two SAGE layers (mean aggregator, hidden 256), fanouts [10, 25] (input
layer first), mini-batches of 1024 seeds on the GPU when there is one. The neighbour means
are `wayfarer.aggregate`'s: its rows split into dense and sparse ones by the partitioning
metric (degree and neighbourhood density), with plans built by the loader's background thread.

    pip install ./python torch
    python examples/python/graphsage.py [--epochs 5 --device cuda]

Prints the loss per epoch with the time spent waiting for batches and training, and the
test accuracy; exits with an error if the loss did not fall.
"""

import argparse
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import wayfarer


def index_add_mean(b, h):
    """The neighbour mean the plain torch way (PyG's scatter): gather, index_add_, divide."""
    agg = torch.zeros((b.num_dst, h.shape[1]), dtype=h.dtype, device=h.device).index_add_(0, b.edge_dst, h[b.edge_src])
    return agg / torch.bincount(b.edge_dst, minlength=b.num_dst).clamp(min=1).unsqueeze(1)


class Sage(torch.nn.Module):
    """Mean-aggregator GraphSAGE layers over wayfarer blocks (input layer first); `mean(block,
    h)` aggregates (default `wayfarer.aggregate`; `index_add_mean` for the plain torch way).
    `concat`: one linear map of `[h_self, mean]` per layer, as in the GraphSAGE paper (the same
    function as the two maps of PyG's and DGL's SAGEConv, in fewer kernel launches)."""

    def __init__(self, dims, mean=None, concat=False):
        super().__init__()
        self.concat = concat
        if concat:
            self.lin = torch.nn.ModuleList(torch.nn.Linear(2 * a, b) for a, b in zip(dims, dims[1:]))
        else:
            self.self_ = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(dims, dims[1:]))
            self.neigh = torch.nn.ModuleList(torch.nn.Linear(a, b, bias=False) for a, b in zip(dims, dims[1:]))
        self.mean = mean or (lambda b, h: wayfarer.aggregate(b, h, "mean"))

    def forward(self, blocks, x):
        h = x  # features of blocks[0].src_nodes
        for i, b in enumerate(blocks):
            dst = h[: b.num_dst]
            if self.concat:
                h = self.lin[i](torch.cat([dst, self.mean(b, h)], 1))
            else:
                h = self.self_[i](dst) + self.neigh[i](self.mean(b, h))
            if i + 1 < len(blocks):
                h = F.relu(h)
        return h


def features(g):
    """Per node: log counts of its out-edges by label, and log degree (float32, standardized)."""
    indptr, _ = g.csr()
    labels = g._g.edge_labels()
    src = np.repeat(np.arange(g.num_nodes), np.diff(indptr))
    counts = np.zeros((g.num_nodes, g.num_labels), dtype=np.float32)
    np.add.at(counts, (src, labels), 1.0)
    x = np.concatenate([np.log1p(counts), np.log1p(np.diff(indptr)).astype(np.float32)[:, None]], axis=1)
    return (x - x.mean(0)) / (x.std(0) + 1e-6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--fanouts", default="10,25", help="input layer first")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    dev = torch.device(a.device)
    fanouts = [int(f) for f in a.fanouts.split(",")]

    g = wayfarer.default_graph()
    # Undirected for message passing: both directions of every pointer.
    indptr, indices = g.csr()
    src = np.repeat(np.arange(g.num_nodes), np.diff(indptr))
    ug = wayfarer.Graph.from_edge_index(np.stack([src, indices]), num_nodes=g.num_nodes, undirected=True)
    x = torch.from_numpy(features(g)).to(dev)
    y = torch.from_numpy(g.node_ids() // 100_000_000 - 1).to(dev)
    perm = np.random.default_rng(a.seed).permutation(g.num_nodes)
    train, test = perm[: int(0.6 * len(perm))], perm[int(0.8 * len(perm)):]
    print(f"{g.num_nodes} nodes, {ug.num_edges} edge entries, {x.shape[1]} features, 4 classes; device {dev}, "
          f"backend {'cuda' if wayfarer.cuda_available() else 'cpu'} sampling; fanouts {fanouts}")

    model = Sage([x.shape[1], a.hidden, 4], concat=True).to(dev)
    # Fused Adam: one kernel per step for all parameters on a GPU (PyTorch has it on the CPU too).
    opt = torch.optim.Adam(model.parameters(), lr=0.003, fused=True)
    density = ug.node_density(seed=a.seed)  # the dense/sparse rule's N(v), once per graph
    loader = wayfarer.NeighborLoader(ug, train, fanouts, batch_size=a.batch_size, seed=a.seed, device=dev, ids="internal",
                                     plans=True, density=density)
    losses = []
    for epoch in range(a.epochs):
        model.train()
        total, n, wait, step = 0.0, 0, 0.0, 0.0
        t = time.perf_counter()
        for batch in loader:
            t1 = time.perf_counter()
            wait += t1 - t
            out = model(batch.blocks, x[batch.blocks[0].src_nodes])
            loss = F.cross_entropy(out, y[batch.seeds])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(batch.seeds)
            n += len(batch.seeds)
            t = time.perf_counter()
            step += t - t1
        losses.append(total / n)
        print(f"epoch {epoch}: loss {losses[-1]:.4f} (waiting for batches {wait:.2f} s, training {step:.2f} s)", flush=True)

    model.eval()
    correct = 0
    with torch.no_grad():
        for batch in wayfarer.NeighborLoader(ug, test, fanouts, batch_size=4096, shuffle=False, device=dev, ids="internal",
                                             plans=True, density=density):
            pred = model(batch.blocks, x[batch.blocks[0].src_nodes]).argmax(1)
            correct += int((pred == y[batch.seeds]).sum())
    base = float(torch.bincount(y).max()) / len(y)
    print(f"test accuracy {correct / len(test):.3f} (majority class {base:.3f})")
    if not losses[-1] < losses[0]:
        sys.exit(f"the loss did not fall: {losses}")


if __name__ == "__main__":
    main()
