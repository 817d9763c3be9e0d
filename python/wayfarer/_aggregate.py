"""``wayfarer.aggregate``: the sum or mean of neighbour features over a sampled block (the
aggregation step of SAGEConv and GCN), differentiable, on the CPU or a CUDA device."""

from . import _arrays, _native

_OPS = ("sum", "mean")


class _Rows:
    """One direction of a block as CSR rows, dense rows first in ``order``."""

    __slots__ = ("indptr", "cols", "order", "n_dense", "_spans")

    def __init__(self, indptr, cols, order, n_dense):
        self.indptr, self.cols, self.order, self.n_dense = indptr, cols, order, n_dense
        self._spans = None

    @classmethod
    def _views(cls, buffer, indptr, cols, order, n_dense):
        """Rows whose arrays are views of ``buffer`` at the ``(start, end)`` spans given, each
        made on first use (as :meth:`wayfarer.Block._views`)."""
        r = object.__new__(cls)
        r.n_dense, r._spans = n_dense, (buffer, {"indptr": indptr, "cols": cols, "order": order})
        return r

    def __getattr__(self, name):
        # Only for slots not set yet: a view's arrays.
        return _arrays.view_on_first_use(self, None if name == "_spans" else self._spans, name)

    def tensors(self):
        return (self.indptr, self.cols, self.order)


class AggregationPlan:
    """What :func:`aggregate` needs of a block, built once per block (by
    :meth:`wayfarer.Block.aggregation_plan`, or by the loader with ``plans=True``): its edges as
    CSR rows by destination (the forward pass) and by source (the backward pass), each with
    its rows split into dense and sparse ones by the hybrid degree-plus-density metric of
    ``wayfarer partition`` (``H = α·N/mean(N) + (1−α)·D/mean(D)`` over the rows, ``D`` a row's
    edges in the block, ``N`` its node's neighbourhood density; dense where ``H`` exceeds
    ``mean(H) + 0.5·std(H)``). Dense rows are summed by a block of eight warps each, sparse
    ones by one warp (on the CPU: split by feature columns, or one row per task).
    """

    def __init__(self, num_src, num_dst, device, forward, backward, degree, inv_degree=None):
        # ``degree`` and ``inv_degree`` (float32): tensors, or ``(buffer, start, end)``, a view
        # made on first use.
        self.num_src, self.num_dst, self.device = num_src, num_dst, device
        self.forward, self.backward = forward, backward
        self._degree = degree
        self._inv_degree, self._inv_span = {}, None
        if isinstance(inv_degree, tuple):
            self._inv_span = inv_degree
        elif inv_degree is not None:
            self._inv_degree[inv_degree.dtype] = inv_degree
        self._streams = set()

    @property
    def dense_rows(self):
        """Dense destination rows (forward) and dense source rows (backward)."""
        return self.forward.n_dense, self.backward.n_dense

    def inv_degree(self, dtype):
        """``1 / max(1, in-degree)`` of each destination row, in ``dtype``."""
        if dtype not in self._inv_degree:
            span = self._inv_span
            if span is not None and span[0].dtype == dtype:
                self._inv_degree[dtype] = span[0][span[1]:span[2]]
            else:
                if isinstance(self._degree, tuple):
                    buffer, lo, hi = self._degree
                    self._degree = buffer[lo:hi]
                self._inv_degree[dtype] = 1.0 / self._degree.clamp(min=1).to(dtype)
        return self._inv_degree[dtype]

    def _use_on(self, device, stream):
        # Built on another stream (the loader's): tell torch's allocator that ``stream`` (a raw
        # handle on ``device``) reads them, once per stream.
        if stream in self._streams:
            return
        import torch

        caller = torch.cuda.current_stream(device)
        for rows in (self.forward, self.backward):
            for t in rows.tensors():
                t.record_stream(caller)
        for t in self._inv_degree.values():
            t.record_stream(caller)
        self._streams.add(stream)


_CURRENT_RAW_STREAM = None


def _raw_stream(device):
    """The handle of torch's current stream on CUDA ``device`` (an index), without building a
    ``torch.cuda.Stream`` object per call (the training step's host time is the bound)."""
    global _CURRENT_RAW_STREAM
    if _CURRENT_RAW_STREAM is None:
        import torch

        _CURRENT_RAW_STREAM = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda d: torch.cuda.current_stream(d).cuda_stream)
    return _CURRENT_RAW_STREAM(device)


def _dense(degree, density, alpha):
    """The dense rows: ``wayfarer::partition::dense_rows`` in torch operations (float64)."""
    import torch

    n = max(len(degree), 1)
    d = degree.to(torch.float64)
    h = (1.0 - alpha) * _scaled(d, n)
    if density is not None:
        h = h + alpha * _scaled(density.to(torch.float64), n)
    mean = h.sum() / n
    tau = mean + 0.5 * torch.sqrt(((h - mean) ** 2).sum() / n)
    return h > tau


def _scaled(x, n):
    import torch

    mean = x.sum() / n
    return torch.where(mean > 0, x / torch.where(mean > 0, mean, 1.0), torch.zeros_like(x))


def _rows(key, other, rows, density, alpha):
    """CSR rows of the edges grouped by ``key`` (stable: a row keeps its edges' order)."""
    import torch

    perm = torch.argsort(key, stable=True)
    degree = torch.bincount(key, minlength=rows)
    indptr = torch.zeros(rows + 1, dtype=torch.int64, device=key.device)
    torch.cumsum(degree, 0, out=indptr[1:])
    dense = _dense(degree, density, alpha)
    order = torch.argsort((~dense).to(torch.int8), stable=True)
    return indptr, other[perm].contiguous(), order, dense, degree


def build_plan(block, density=None, alpha=0.5):
    """The :class:`AggregationPlan` of ``block``; ``density``: each node's neighbourhood
    density (:meth:`wayfarer.Graph.node_density`), indexed by the block's node ids, or None to
    classify rows by their degree alone. On a CUDA device the engine builds it in one call
    (on torch's current stream, without the GIL); on the CPU torch operations do."""
    import torch

    if not 0.0 <= float(alpha) <= 1.0:
        raise ValueError(f"alpha = {alpha}: within [0, 1]")
    src, dst = _ids(block.edge_src, "edge_src"), _ids(block.edge_dst, "edge_dst")
    nodes = _ids(block.src_nodes, "src_nodes")
    dst, nodes = dst.to(src.device), nodes.to(src.device)
    num_src, num_dst = len(nodes), int(block.num_dst)
    if len(src) != len(dst):
        raise ValueError(f"block: {len(src)} edge sources but {len(dst)} edge destinations")
    if not 0 <= num_dst <= num_src:
        raise ValueError(f"block: num_dst = {num_dst} with {num_src} source nodes")
    if density is not None:
        density = torch.as_tensor(density).to(src.device)
        if density.dim() != 1:
            raise ValueError(f"density: one value per node, got shape {tuple(density.shape)}")
    if src.is_cuda:
        return _plan_cuda(src, dst, nodes, num_dst, density, alpha)
    return _plan_torch(src, dst, nodes, num_dst, density, alpha)


def _plan_cuda(src, dst, nodes, num_dst, density, alpha):
    """The plan built by the engine's kernels (``wayfarer_cuda::aggregate_plan``): the arrays
    of :func:`_plan_torch`, in one native call that checks the ids on the device."""
    import torch

    device, m, num_src = src.device, len(src), len(nodes)
    src, dst, nodes = src.contiguous(), dst.contiguous(), nodes.contiguous()
    if density is not None:
        density = density.to(torch.float64).contiguous()

    def empty(n):
        return torch.empty(n, dtype=torch.int64, device=device)

    forward = (empty(num_dst + 1), empty(m), empty(num_dst))
    backward = (empty(num_src + 1), empty(m), empty(num_src))
    degree = empty(num_dst)
    inv = torch.empty(num_dst, dtype=torch.float32, device=device)
    ptrs = lambda ts: tuple(t.data_ptr() for t in ts)  # noqa: E731
    stream = torch.cuda.current_stream(device)
    n_f, n_b = _native.aggregation_plan_cuda(device.index, stream.cuda_stream, src.data_ptr(), dst.data_ptr(), m, num_src, num_dst,
                                             nodes.data_ptr(), 0 if density is None else density.data_ptr(),
                                             0 if density is None else len(density), float(alpha), ptrs(forward), ptrs(backward),
                                             degree.data_ptr(), inv.data_ptr())
    return AggregationPlan(num_src, num_dst, device, _Rows(*forward, n_f), _Rows(*backward, n_b), degree, inv)


def _plan_torch(src, dst, nodes, num_dst, density, alpha):
    """The plan built by torch operations (the CPU's, and the reference the CUDA one is
    tested against)."""
    import torch

    num_src = len(nodes)
    if len(src):
        lo_s, hi_s, lo_d, hi_d = torch.stack([src.min(), src.max(), dst.min(), dst.max()]).tolist()
        if lo_s < 0 or hi_s >= num_src:
            raise ValueError(f"block: edge_src holds {lo_s if lo_s < 0 else hi_s}, not an index of the {num_src} source nodes")
        if lo_d < 0 or hi_d >= num_dst:
            raise ValueError(f"block: edge_dst holds {lo_d if lo_d < 0 else hi_d}, not an index of the {num_dst} destination nodes")
    node_density = None
    if density is not None:
        if num_src:
            lo, hi = torch.stack([nodes.min(), nodes.max()]).tolist()
            if lo < 0 or hi >= len(density):
                raise ValueError(f"density: {len(density)} values, but the block has node {lo if lo < 0 else hi}")
        node_density = density[nodes]
    f_indptr, f_cols, f_order, f_dense, degree = _rows(dst, src, num_dst, None if node_density is None else node_density[:num_dst],
                                                       alpha)
    b_indptr, b_cols, b_order, b_dense, _ = _rows(src, dst, num_src, node_density, alpha)
    n_f, n_b = torch.stack([f_dense.sum(), b_dense.sum()]).tolist()
    return AggregationPlan(num_src, num_dst, src.device, _Rows(f_indptr, f_cols, f_order, int(n_f)),
                           _Rows(b_indptr, b_cols, b_order, int(n_b)), degree)


def _ids(a, name):
    import torch

    t = torch.as_tensor(a)
    if t.dim() != 1:
        raise ValueError(f"block: {name} is not 1-D (shape {tuple(t.shape)})")
    if t.dtype.is_floating_point or t.dtype == torch.bool:
        raise TypeError(f"block: {name} holds {t.dtype}, not integers")
    return t.to(torch.int64)


def _run(plan, rows, x, out_rows, row_scale, col_scale):
    """``out[r] = row_scale[r] · Σ col_scale[c] · x[c]`` over the rows of ``rows`` (one
    direction of ``plan``)."""
    import torch

    dim = x.shape[1]
    out = torch.empty((out_rows, dim), dtype=x.dtype, device=x.device)
    if dim == 0 or out_rows == 0:
        return out.zero_()
    if x.is_cuda:
        device = x.device.index
        stream = _raw_stream(device)
        plan._use_on(device, stream)
        scales = (0 if row_scale is None else row_scale.data_ptr(), 0 if col_scale is None else col_scale.data_ptr())
        _native.gather_reduce_cuda(device, stream, rows.indptr.data_ptr(), rows.cols.data_ptr(), rows.order.data_ptr(), out_rows,
                                   rows.n_dense, *scales, x.data_ptr(), dim, out.data_ptr())
    else:
        kernel = _native.gather_reduce_f32 if x.dtype == torch.float32 else _native.gather_reduce_f64
        np_ = lambda t: None if t is None else t.numpy()  # noqa: E731
        kernel(rows.indptr.numpy(), rows.cols.numpy(), rows.order[:rows.n_dense].numpy(), np_(row_scale), np_(col_scale),
               x.detach().reshape(-1).numpy(), dim, out.view(-1).numpy())
    return out


def _function():
    import torch

    class Aggregate(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, plan, op):
            ctx.plan, ctx.op, ctx.x_rows = plan, op, x.shape[0]
            scale = plan.inv_degree(x.dtype) if op == "mean" else None
            return _run(plan, plan.forward, x, plan.num_dst, scale, None)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, grad):
            plan = ctx.plan
            grad = grad.contiguous()
            scale = plan.inv_degree(grad.dtype) if ctx.op == "mean" else None
            gx = _run(plan, plan.backward, grad, plan.num_src, None, scale)
            if ctx.x_rows > plan.num_src:
                gx = torch.cat([gx, gx.new_zeros((ctx.x_rows - plan.num_src, gx.shape[1]))])
            return gx, None, None

    return Aggregate


_AGGREGATE = None


def aggregate(block, x, op="mean"):
    """The ``op`` (``"sum"`` or ``"mean"``) of each destination node's sampled neighbours'
    rows of ``x``: a ``(block.num_dst, dim)`` tensor, differentiable with respect to ``x``.

    ``x``: the features of ``block.src_nodes``, a ``(len(src_nodes), dim)`` torch tensor (more
    rows are allowed and ignored), float32 on a CUDA device, float32 or float64 on the CPU.
    A destination node without sampled neighbours gets zeros. The sums run in a fixed order,
    so the results are the same on every run, and the same bits on the CPU and the GPU.

    The block's :class:`AggregationPlan` is built on first use (degree-only classes) unless
    :meth:`wayfarer.Block.aggregation_plan` or the loader (``plans=True``) built it first.
    """
    import torch

    global _AGGREGATE
    if op not in _OPS:
        raise ValueError(f"op = {op!r}: one of {', '.join(map(repr, _OPS))}")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x: a torch tensor, not {type(x).__name__}")
    if x.dim() != 2:
        raise ValueError(f"x: a 2-D (nodes, dim) tensor, got shape {tuple(x.shape)}")
    allowed = (torch.float32,) if x.is_cuda else (torch.float32, torch.float64)
    if x.dtype not in allowed:
        where = "on a CUDA device" if x.is_cuda else "on the CPU"
        raise TypeError(f"x: {x.dtype} {where}; aggregate takes {' or '.join(map(str, allowed))} there")
    plan = block.aggregation_plan() if getattr(block, "_plan", None) is None else block._plan
    if plan.device != x.device:
        raise ValueError(f"x is on {x.device} but the block's arrays are on {plan.device}")
    if x.shape[0] < plan.num_src:
        raise ValueError(f"x: {x.shape[0]} rows, but the block has {plan.num_src} source nodes")
    if _AGGREGATE is None:
        _AGGREGATE = _function()
    return _AGGREGATE.apply(x.contiguous(), plan, op)


def dense_rows(degree, density, alpha=0.5):
    """The engine's own classification (``wayfarer::partition::dense_rows``), for tests: a
    numpy bool array."""
    import numpy as np

    return _native.dense_rows(np.ascontiguousarray(degree, dtype=np.int64), np.ascontiguousarray(density, dtype=np.float64),
                              float(alpha))
