"""Sampled neighbourhoods: DGL-style blocks and PyG's ``n_id`` / ``e_id`` / ``edge_index``."""

from dataclasses import dataclass, field

import numpy as np

from . import _arrays


@dataclass
class Block:
    """One layer's message-flow graph (DGL's block).

    ``src_nodes``: node ids, the first ``num_dst`` being the destination nodes;
    ``edge_src`` / ``edge_dst``: each sampled edge's ends as indices into ``src_nodes`` and
    into the destination nodes; ``edge_ids``: the input's edge ids.
    """

    src_nodes: object
    num_dst: int
    edge_src: object
    edge_dst: object
    edge_ids: object
    _plan: object = field(default=None, repr=False, compare=False)

    @classmethod
    def _views(cls, num_dst, buffer, spans, plan=None):
        """A block whose arrays are views of ``buffer`` at ``spans`` (``name: (start, end)``),
        each made on first use: the loader's thread hands over GPU-built blocks without
        making them, so it holds the GIL less while the training step runs."""
        b = object.__new__(cls)
        b.num_dst, b._plan, b._spans = num_dst, plan, (buffer, spans)
        return b

    def __getattr__(self, name):
        # Only for names not set yet: a view block's arrays (see _views).
        return _arrays.view_on_first_use(self, self.__dict__.get("_spans"), name)

    def aggregation_plan(self, density=None, alpha=0.5):
        """Builds (and keeps) this block's :class:`wayfarer.AggregationPlan`, which
        :func:`wayfarer.aggregate` uses: its rows split into dense and sparse ones by the
        hybrid metric of ``wayfarer partition`` with weight ``alpha`` on ``density`` (each
        node's neighbourhood density, :meth:`wayfarer.Graph.node_density`, indexed by this
        block's node ids; None: by degree alone). Its arrays live on the block's device."""
        from ._aggregate import build_plan

        self._plan = build_plan(self, density, alpha)
        return self._plan

    @property
    def dst_nodes(self):
        """The destination nodes (a prefix of ``src_nodes``)."""
        return self.src_nodes[: self.num_dst]

    @property
    def num_edges(self):
        """Sampled edges."""
        return len(self.edge_ids)


@dataclass
class Sample:
    """A sampled neighbourhood of ``seeds``: one :class:`Block` per layer, input layer first
    (the last block's destination nodes are the seeds)."""

    seeds: object
    blocks: list
    #: The input nodes' features, when the loader was given a feature store.
    x: object = None
    # The device tensors the blocks' arrays are views of (GPU-built blocks), which the loader
    # marks used on the caller's stream when it hands the batch over.
    _buffers: object = field(default=None, repr=False, compare=False)

    @classmethod
    def from_native(cls, batch, device=None):
        seeds, blocks = batch
        out = lambda a: _arrays.out(a, device)  # noqa: E731
        return cls(out(seeds), [Block(out(s), int(n), out(es), out(ed), out(ei)) for s, n, es, ed, ei in blocks])

    def to_pyg(self):
        """PyG's form (``NeighborLoader``'s ``Data`` fields): a dict of ``n_id`` (every node,
        seeds first, then each hop's new nodes), ``e_id``, ``edge_index`` (``[neighbour,
        node]`` rows, indices into ``n_id``), ``num_sampled_nodes`` and ``num_sampled_edges``
        (per hop, seeds first)."""
        hops = self.blocks[::-1]
        like = self.blocks[0].src_nodes
        torch = None
        if _arrays.is_tensor(like):
            import torch
        cat = (lambda xs: torch.cat(list(xs))) if torch else (lambda xs: np.concatenate(list(xs)))
        # Blocks nest: each block's source nodes start with the next block's (DGL's rule), so
        # local indices of every block are positions in the input layer's source nodes.
        n_id = self.blocks[0].src_nodes
        num_nodes = [hops[0].num_dst]
        prev = hops[0].num_dst
        for b in hops:
            num_nodes.append(len(b.src_nodes) - prev)
            prev = len(b.src_nodes)
        src = cat(b.edge_src for b in hops)
        dst = cat(b.edge_dst for b in hops)
        edge_index = torch.stack([src, dst]) if torch else np.stack([src, dst])
        return {
            "n_id": n_id,
            "e_id": cat(b.edge_ids for b in hops),
            "edge_index": edge_index,
            "num_sampled_nodes": num_nodes,
            "num_sampled_edges": [b.num_edges for b in hops],
        }
