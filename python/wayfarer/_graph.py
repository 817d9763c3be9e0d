"""``wayfarer.Graph``: graphs from what Python users have, and the engine's walks, sampling and
triangle counting on them."""

import sys

import numpy as np

from . import _arrays
from . import _native
from ._sample import Block, Sample

# Node2Vec's p and q (PyG, DGL, PecanPy) are the library walk's `a` (return) and `b` (in-out).
_ALIASES = {"node2vec": {"p": "a", "q": "b"}, "node2vec-ref": {"p": "a", "q": "b"}}


def _param_text(name, value):
    """A keyword argument as the engine's `name=value` text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return value
    if _arrays.is_tensor(value) or isinstance(value, (list, tuple, np.ndarray)):
        items = _arrays.to_numpy(value, name).ravel().tolist()
        return ",".join(_param_text(name, x) for x in items)
    raise TypeError(f"parameter {name}: expected a number, a bool, a string or a list of numbers, got {type(value).__name__}")


def _params(walk, params):
    aliases = _ALIASES.get(walk, {}) if isinstance(walk, str) else {}
    out = []
    for k, v in params.items():
        k = aliases.get(k, k)
        if any(k == seen for seen, _ in out):
            raise TypeError(f"parameter {k} given twice (p/q are node2vec's a/b)")
        out.append((k, _param_text(k, v)))
    return out


def _ids_flag(ids):
    if ids not in ("original", "internal"):
        raise ValueError(f'ids={ids!r}: use "original" (the input\'s node ids) or "internal" (0..num_nodes)')
    return ids == "original"


class Graph:
    """A graph held by wayfarer's engine (CSR, rows sorted by destination).

    Build one with :meth:`from_edge_index`, :meth:`from_csr`, :meth:`from_scipy`,
    :meth:`from_networkx`, :meth:`load` or :func:`wayfarer.default_graph`. Results come back as
    numpy arrays, or as torch tensors on the input's device when the graph was built from
    tensors (or the call's own ids are a tensor).
    """

    def __init__(self, native, device=None):
        self._g = native
        self._device = device

    # ---- construction -------------------------------------------------------------------

    @classmethod
    def from_edge_index(cls, edge_index, num_nodes=None, edge_weight=None, edge_label=None, edge_time=None, undirected=False):
        """A graph from an edge index (PyG's ``edge_index``).

        Parameters
        ----------
        edge_index : array_like of int, shape (2, E)
            Sources in row 0, destinations in row 1 (numpy, torch CPU or CUDA, DLPack).
        num_nodes : int, optional
            Default: one past the largest id.
        edge_weight, edge_label, edge_time : array_like, shape (E,), optional
            Weights (finite, >= 0), integer labels, integer timestamps.
        undirected : bool
            Add every edge's reverse (a self loop once), with the same id and attributes.

        Returns
        -------
        Graph
            Parallel edges are kept. Walks and sampling report positions in ``edge_index``
            as edge ids. Bad input raises naming the array and the position.
        """
        device = _arrays.tensor_device(edge_index, edge_weight, edge_label, edge_time)
        ei = _arrays.ids(edge_index, "edge_index", ndim=2)
        if ei.shape[0] != 2:
            raise ValueError(f"edge_index: expected shape (2, E), got {ei.shape}")
        if num_nodes is not None:
            num_nodes = int(num_nodes)
            if num_nodes < 0:
                raise ValueError(f"num_nodes = {num_nodes}: must be >= 0")
        g = _native.Graph.from_coo(
            np.ascontiguousarray(ei[0]),
            np.ascontiguousarray(ei[1]),
            num_nodes,
            _arrays.weights(edge_weight, "edge_weight"),
            _arrays.integers(edge_label, "edge_label"),
            _arrays.integers(edge_time, "edge_time"),
            bool(undirected),
            ("edge_index[0, {}]", "edge_index[1, {}]"),
        )
        return cls(g, device)

    @classmethod
    def from_csr(cls, indptr, indices, edge_weight=None, edge_label=None, edge_time=None, undirected=False):
        """A graph from CSR arrays: ``indices[indptr[v]:indptr[v + 1]]`` are ``v``'s out-neighbours
        (any order). Edge ids are positions in ``indices``."""
        device = _arrays.tensor_device(indptr, indices, edge_weight)
        g = _native.Graph.from_csr(
            _arrays.ids(indptr, "indptr"),
            _arrays.ids(indices, "indices"),
            _arrays.weights(edge_weight, "edge_weight"),
            _arrays.integers(edge_label, "edge_label"),
            _arrays.integers(edge_time, "edge_time"),
            bool(undirected),
        )
        return cls(g, device)

    @classmethod
    def from_scipy(cls, matrix, weighted=None, undirected=False):
        """A graph from a scipy sparse matrix or array (row ``u``, column ``v``: an edge
        ``u -> v``). Its values are the weights when ``weighted`` (default: unless every stored
        value is 1). Edge ids are positions in the matrix's CSR form."""
        import scipy.sparse as sp

        if not sp.issparse(matrix):
            raise TypeError(f"matrix: expected a scipy sparse matrix, got {type(matrix).__name__}")
        if matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"matrix: expected a square adjacency matrix, got shape {matrix.shape}")
        m = matrix.tocsr()
        m.sort_indices()
        if weighted is None:
            weighted = m.nnz > 0 and not np.all(m.data == 1)
        w = m.data if weighted else None
        return cls.from_csr(m.indptr.astype(np.int64), m.indices.astype(np.int64), edge_weight=w, undirected=undirected)

    @classmethod
    def from_networkx(cls, G, weight="weight", label=None, time=None):
        """A graph from a networkx graph. Nodes are numbered in ``G``'s node order (``G.nodes``:
        walks return those positions; :attr:`networkx_nodes` maps them back). ``weight``,
        ``label`` and ``time`` name edge attributes (``None``: not used; a missing ``weight``
        attribute is 1). An undirected ``G`` gives an undirected graph; edge ids are positions
        in ``G.edges``."""
        nodes = list(G.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        edges = list(G.edges(data=True))
        src = np.fromiter((index[u] for u, _, _ in edges), dtype=np.int64, count=len(edges))
        dst = np.fromiter((index[v] for _, v, _ in edges), dtype=np.int64, count=len(edges))

        def column(attr, default, dtype, what):
            if attr is None:
                return None
            vals = []
            for i, (u, v, d) in enumerate(edges):
                x = d.get(attr, default)
                if x is None:
                    raise ValueError(f"G.edges[{u!r}, {v!r}] (edge {i}) has no {what} attribute {attr!r}")
                vals.append(x)
            return np.asarray(vals, dtype=dtype)

        has_weight = weight is not None and any(weight in d for _, _, d in edges)
        w = column(weight, 1.0, np.float64, "weight") if has_weight else None
        lab = column(label, None, np.int64, "label")
        tim = column(time, None, np.int64, "time")
        g = cls.from_edge_index(np.stack([src, dst]), num_nodes=len(nodes), edge_weight=w, edge_label=lab, edge_time=tim,
                                undirected=not G.is_directed())
        g.networkx_nodes = nodes
        return g

    @classmethod
    def load(cls, path):
        """Loads ``.wfg`` (wayfarer's binary format), Matrix Market (``.mtx``) or a text edge
        list, as ``wayfarer walk --graph`` does. Node ids are the file's own."""
        return cls(_native.Graph.load(str(path)))

    def save(self, path):
        """Writes the graph as ``.wfg`` (or a text edge list for any other extension)."""
        self._g.save(str(path))

    # ---- what it holds ------------------------------------------------------------------

    @property
    def num_nodes(self):
        """Nodes."""
        return self._g.num_nodes

    @property
    def num_edges(self):
        """Directed edge entries (an undirected edge counts twice, a self loop once)."""
        return self._g.num_edges

    @property
    def undirected(self):
        """Whether every edge has its reverse by construction."""
        return self._g.undirected

    @property
    def weighted(self):
        """Whether edges carry weights."""
        return self._g.weighted

    @property
    def num_labels(self):
        """One past the largest edge label (0 without labels)."""
        return self._g.num_labels

    @property
    def device_graph_budget(self):
        """Device memory in bytes the GPU sampler's copy of the graph may take.

        ``None`` (the default): the whole graph when its offsets and targets take at most 60%
        of the free device memory, else that share. A graph larger than the budget is sampled
        out of core: its offsets and longest rows on the device, the other rows read from
        page-locked host memory over the bus; the blocks are the same. Setting it makes the
        next ``device="cuda"`` sampling call upload the graph again.
        """
        return self._g.device_graph_budget

    @device_graph_budget.setter
    def device_graph_budget(self, budget):
        if budget is not None:
            if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 0:
                raise ValueError(f"device_graph_budget = {budget!r}: bytes as an int >= 0, or None")
            budget = int(budget)
        self._g.device_graph_budget = budget

    def csr(self):
        """``(indptr, indices)`` of the engine's CSR (int64)."""
        return tuple(_arrays.out(a, self._device) for a in self._g.csr())

    def edge_ids(self):
        """Per CSR entry, the input's edge id."""
        return _arrays.out(self._g.edge_ids(), self._device)

    def node_ids(self):
        """The input's id of each node (``0..n`` for graphs built from arrays)."""
        return _arrays.out(self._g.node_ids(), self._device)

    def node_density(self, walks=16, length=8, seed=1, backend="auto"):
        """Each node's neighbourhood density ``N(v)`` in [0, 1], in node order (internal ids):
        over ``walks`` anonymous walks of ``length`` steps from it, the mean share of steps
        that reached a node new to the walk (``wayfarer partition``'s metric; 1 for wide,
        tree-like neighbourhoods, small for tight clusters, 0 for isolated nodes). Computed on
        the GPU when ``backend`` picks one. :meth:`wayfarer.Block.aggregation_plan` and the
        loader's ``plans=True`` weigh it against the degree to split rows into dense and
        sparse ones."""
        if walks < 1 or length < 0:
            raise ValueError(f"walks = {walks}, length = {length}: at least one walk, of length >= 0")
        return _arrays.out(self._g.node_density(int(walks), int(length), int(seed), backend), self._device)

    def __repr__(self):
        kind = "undirected" if self.undirected else "directed"
        extra = (", weighted" if self.weighted else "") + (f", {self.num_labels} labels" if self.num_labels else "")
        return f"<wayfarer.Graph {self.num_nodes} nodes, {self.num_edges} edge entries, {kind}{extra}>"

    # ---- walks --------------------------------------------------------------------------

    def walk(self, walk="deepwalk", start=None, length=None, walks_per_node=1, seed=0, backend="auto", return_edges=False,
             ids="original", sampler="adaptive", threads=None, gpus=0, table_budget=None, progress=False, verbose=False, **params):
        """Random walks, exact, the same for a seed on any thread count, GPU or batch split.

        Parameters
        ----------
        walk : str or Program
            A library walk's name (:func:`wayfarer.walks` lists them) or a program from
            :func:`wayfarer.compile`.
        start : array_like of int, optional
            Start nodes, in the input's ids (default: every node).
        length : int, optional
            Steps per walk (default: the walk's own, 80 for most).
        walks_per_node : int
            Walks per start: all starts, then all starts again, and so on.
        seed : int
            Fixes the walks (also against the CLI's ``--seed``).
        backend : {"auto", "cpu", "cuda", "wgpu"}
            ``auto`` takes a CUDA GPU when there is one.
        return_edges : bool
            Also return the ids of the edges taken, -1 where a move took none (a restart or
            teleport). The CPU and CUDA record them as they walk; on wgpu they are read off
            the nodes, which is refused for graphs with parallel edges and walks that restart
            or teleport (pass ``backend="cpu"`` or ``"cuda"``). Refused for anonymous walks.
        ids : {"original", "internal"}
            Node ids of ``start`` and of the result: the input's, or the engine's ``0..n``.
        sampler : {"adaptive", "rejection", "reservoir"}
            The exact sampler per step: chosen by the cost model, or forced.
        threads : int, optional
            CPU threads (default: all cores). The walks do not depend on it.
        gpus : int
            GPUs (0: every visible one). The walks do not depend on it.
        table_budget : int, optional
            Bytes for structured-proposal tables (default: a quarter of free memory).
        progress : bool or callable
            A progress bar on stderr, or ``f(done, total)`` called about every 50 ms.
        verbose : bool
            Print the backend choice and the run's summary line on stderr.
        **params
            The walk's parameters (Node2Vec: ``p`` and ``q``, or ``a`` and ``b``).

        Returns
        -------
        walks : ndarray or torch.Tensor, int64, shape (num_walks, length + 1)
            Node ids, -1 after a walk ends at a dead end; a torch tensor on the input's
            device when the graph or ``start`` was a tensor.
        edges : ndarray or torch.Tensor, int64, shape (num_walks, length)
            With ``return_edges=True``: the input's id of each edge taken, -1 padded.
        """
        device = _arrays.tensor_device(start) or self._device
        original = _ids_flag(ids)
        starts = None if start is None else _arrays.ids(np.atleast_1d(_arrays.to_numpy(start, "start")), "start")
        name = walk if isinstance(walk, str) else None
        cb = _progress_callback(progress)
        walks, edges, summary, notes, warnings_ = self._g.walk(
            walk, _params(name, params), starts, None if length is None else int(length), int(walks_per_node), int(seed),
            backend, sampler, bool(return_edges), original, threads, int(gpus), table_budget, cb)
        _report(summary, notes, warnings_, verbose)
        self.last_summary = summary
        walks = _arrays.out(walks, device)
        return (walks, _arrays.out(edges, device)) if return_edges else walks

    # ---- sampling and triangles ---------------------------------------------------------

    def sample_neighbors(self, seeds, fanouts, replace=False, weighted=False, policy=None, seed=0, backend="auto",
                         ids="original", verbose=False, **params):
        """Samples neighbours layer by layer, outward from ``seeds`` (GNN mini-batching).

        Parameters
        ----------
        seeds : array_like of int
            The nodes whose neighbourhoods are sampled (input ids).
        fanouts : sequence of int
            Neighbours per node and layer, input layer first (DGL's order: the last fanout
            is taken first, from the seeds).
        replace : bool
            Sample with replacement.
        weighted : bool
            Proportionally to the edge weights (else uniformly).
        policy : Program, optional
            A compiled ``#[sampler]``: proportionally to its weight of each edge.
        seed : int
            Fixes the sample (the same blocks as ``wayfarer sample --seed``).
        backend : {"auto", "cpu", "cuda"}
            The GPU samples uniformly only; weighted and policy sampling run on the CPU.
        ids : {"original", "internal"}
            Node ids of ``seeds`` and of the blocks.
        **params
            The policy's parameters.

        Returns
        -------
        Sample
            ``.blocks`` (DGL-style, input layer first) and ``.to_pyg()``.
        """
        device = _arrays.tensor_device(seeds) or self._device
        s = _arrays.ids(np.atleast_1d(_arrays.to_numpy(seeds, "seeds")), "seeds")
        f = [int(x) for x in fanouts]
        if any(x < 0 for x in f):
            raise ValueError(f"fanouts = {f}: counts must be >= 0")
        ordinal = _resident_gpu(device, backend, weighted, policy)
        if ordinal is not None:
            samples, summary = self._sample_batches_cuda(s, f, None, bool(replace), int(seed), ordinal, _ids_flag(ids))
            _report(summary, [], [], verbose)
            return samples[0]
        batches, summary = self._g.sample_neighbors(
            s, f, bool(replace), bool(weighted), policy, _params(None, params), int(seed), None, backend, _ids_flag(ids))
        _report(summary, [], [], verbose)
        return Sample.from_native(batches[0], device)

    def _sample_batches(self, seeds, fanouts, batch_size, replace, weighted, policy, params, seed, backend, original):
        """Several mini-batches in one engine call (the super-batch classifier sees them all)."""
        batches, _ = self._g.sample_neighbors(seeds, fanouts, replace, weighted, policy, params, seed, batch_size, backend,
                                              original)
        return batches

    def _sample_batches_cuda(self, seeds, fanouts, batch_size, replace, seed, ordinal, original, plans=None, stream=None):
        """Mini-batches sampled on GPU ``ordinal`` whose blocks stay there: a list of
        :class:`Sample` of CUDA tensors, and the summary. The engine writes every array of the
        call into two tensors that torch allocates (int64, and float32 for the plans' scale) on
        ``stream`` (a ``torch.cuda.Stream``; None: the current stream), after the work queued
        there; the blocks' arrays are views of them (``Sample._buffers``). ``plans = (density,
        alpha)``: each block's aggregation plan too, built by the engine in the same call
        (``density``: a CUDA float64 tensor or None)."""
        import contextlib

        import torch

        from ._aggregate import AggregationPlan, _Rows

        device = torch.device("cuda", ordinal)
        want = None
        if plans is not None:
            density, alpha = plans
            want = (0, 0, float(alpha)) if density is None else (density.data_ptr(), len(density), float(alpha))
        buffers = []

        def alloc(n64, n32):
            # Called once by the engine, with the sizes, before it writes anything.
            with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
                at = torch.cuda.current_stream(device)
                buffers.extend([torch.empty(n64, dtype=torch.int64, device=device),
                                torch.empty(n32, dtype=torch.float32, device=device)])
            return buffers[0].data_ptr(), buffers[1].data_ptr(), at.cuda_stream

        groups, group_plans, summary = self._g.sample_neighbors_cuda(seeds, fanouts, replace, seed, batch_size, ordinal, original,
                                                                     alloc, want)
        i64, f32 = buffers
        size = batch_size or max(len(seeds), 1)
        out = []
        for g, (lo, hi, layers) in enumerate(groups):
            part = torch.as_tensor(seeds[lo:hi]).to(device)
            for b, first in enumerate(range(0, hi - lo, size)):
                # The arrays are views made on first use (Block._views): this runs on the
                # loader's thread, beside the training step, and holds the GIL.
                blocks = []
                for k, ((n, e, s, d), np_, dp, ep) in enumerate(layers):
                    d0, d1, s0, s1, e0, e1 = dp[b], dp[b + 1], np_[b], np_[b + 1], ep[b], ep[b + 1]
                    plan = None
                    if group_plans is not None:
                        f, bw, deg, inv, dense = group_plans[g][k]
                        forward = _Rows._views(i64, (f[0] + d0 + b, f[0] + d1 + b + 1), (f[1] + e0, f[1] + e1), (f[2] + d0, f[2] + d1),
                                               dense[b][0])
                        backward = _Rows._views(i64, (bw[0] + s0 + b, bw[0] + s1 + b + 1), (bw[1] + e0, bw[1] + e1),
                                                (bw[2] + s0, bw[2] + s1), dense[b][1])
                        plan = AggregationPlan(s1 - s0, d1 - d0, device, forward, backward, (i64, deg + d0, deg + d1),
                                               (f32, inv + d0, inv + d1))
                    blocks.append(Block._views(d1 - d0, i64, {"src_nodes": (n + s0, n + s1), "edge_src": (s + e0, s + e1),
                                                             "edge_dst": (d + e0, d + e1), "edge_ids": (e + e0, e + e1)}, plan))
                sample = Sample(part[first:first + size], blocks)
                sample._buffers = buffers
                out.append(sample)
        return out, summary

    def triangles(self, mask=None, per_node=False, backend="auto", gpus=0, verbose=False, **params):
        """Counts triangles exactly (a directed graph's in its symmetrized graph).

        Parameters
        ----------
        mask : Program, optional
            A compiled ``#[mask]``: only triangles whose three edges it keeps count.
        per_node : bool
            Also return each node's count.
        backend : {"auto", "cpu", "cuda"}
        gpus : int
            GPUs to split the work over (0: every visible one); the count does not depend on it.
        **params
            The mask's parameters.

        Returns
        -------
        total : int
        per_node : ndarray or torch.Tensor of int64, with ``per_node=True``
        """
        total, per, summary = self._g.triangles(mask, _params(None, params), bool(per_node), backend, int(gpus))
        _report(summary, [], [], verbose)
        return (total, _arrays.out(per, self._device)) if per_node else total


def _resident_gpu(device, backend, weighted, policy):
    """The GPU ordinal when a sample can be built and left on that GPU: a CUDA ``device``, a
    backend of ``auto`` or ``cuda``, uniform sampling and a usable GPU; else None (the engine
    samples on the host, and the blocks are copied to ``device``)."""
    if device is None or getattr(device, "type", None) != "cuda" or backend not in ("auto", "cuda") or weighted \
            or policy is not None:
        return None
    if not _native.cuda_status()[0]:
        return None
    return device.index if device.index is not None else _current_cuda_device()


def _current_cuda_device():
    import torch

    return torch.cuda.current_device()


def _progress_callback(progress):
    """``progress``: False, True (a bar on stderr: tqdm when installed) or a callable
    ``f(done, total)``."""
    if not progress:
        return None
    if callable(progress):
        return progress
    try:
        from tqdm.auto import tqdm

        bar = {}

        def update(done, total):
            if "bar" not in bar:
                bar["bar"] = tqdm(total=total, unit="walk")
            b = bar["bar"]
            b.update(done - b.n)
            if done >= total:
                b.close()

        return update
    except ImportError:

        def line(done, total):
            end = "\n" if done >= total else ""
            print(f"\rwalks {done}/{total} ({100.0 * done / max(total, 1):.0f}%)", end=end, file=sys.stderr, flush=True)

        return line


def _report(summary, notes, warnings_, verbose):
    import warnings

    for w in warnings_:
        warnings.warn(w, RuntimeWarning, stacklevel=3)
    if verbose:
        for n in notes:
            print(n, file=sys.stderr)
        print(summary, file=sys.stderr)
