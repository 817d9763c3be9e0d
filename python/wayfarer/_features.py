"""``wayfarer.FeatureStore``: node features for GNN mini-batches on a GPU, cached by hotness."""

import numpy as np

from . import _native


class FeatureStore:
    """A node feature matrix for mini-batch training on a GPU (GARDEN's AHFCA, static part).

    The matrix stays in page-locked host memory, mapped into the GPU's address space; the
    hottest rows, as many as ``device_budget`` holds, are copied into device memory.
    :meth:`gather` reads cached rows from the device and the others from the host over the bus
    (UVA zero-copy), in one kernel, and returns a CUDA tensor.

    Parameters
    ----------
    features : numpy.ndarray or torch.Tensor
        ``(num_nodes, dim)``, float32, float16 or bfloat16 (torch), on the host. Row ``i`` is
        node ``i``'s: gather with the ids the loader hands out (``ids="internal"``, or original
        ids that are ``0..num_nodes``).
    device_budget : int or float, optional
        Device memory for cached rows: bytes (int), or a fraction of the matrix (float in
        [0, 1]). None or 0: no cache, every row read from the host.
    dynamic : float
        The share of ``device_budget`` given to the dynamic cache: a ring of slots that admits
        each gather's missed rows after it, evicting the oldest (recent hotness that
        pre-sampling did not see). 0: a static cache only.
    device : str or torch.device
        The CUDA device (``"cuda"``, ``"cuda:1"``).

    The static cache is empty until :meth:`warm` (pre-sampling) or :meth:`cache` picks its
    rows; the dynamic one fills as gathers miss.
    """

    def __init__(self, features, device_budget=None, dynamic=0.0, device="cuda"):
        import torch

        t = torch.from_numpy(features) if isinstance(features, np.ndarray) else features
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"features: a numpy array or a torch tensor, not {type(features).__name__}")
        if t.dim() != 2:
            raise ValueError(f"features: expected a 2-D matrix (nodes, dim), got shape {tuple(t.shape)}")
        if t.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            raise TypeError(f"features: float32, float16 or bfloat16, not {t.dtype}")
        t = t.detach().cpu().contiguous()
        self.dtype, self.shape = t.dtype, tuple(t.shape)
        self.device = torch.device(device)
        if self.device.type != "cuda":
            raise ValueError(f"device = {device!r}: the feature store lives on a CUDA device")
        ordinal = self.device.index if self.device.index is not None else torch.cuda.current_device()
        self.device = torch.device("cuda", ordinal)
        row_bytes = t.shape[1] * t.element_size()
        total = row_bytes * t.shape[0]
        if device_budget is None:
            budget = 0
        elif isinstance(device_budget, float):
            if not 0.0 <= device_budget <= 1.0:
                raise ValueError(f"device_budget = {device_budget}: a fraction is within [0, 1]")
            budget = int(device_budget * total)
        else:
            budget = int(device_budget)
            if budget < 0:
                raise ValueError(f"device_budget = {device_budget}: bytes must be >= 0")
        if not 0.0 <= float(dynamic) <= 1.0:
            raise ValueError(f"dynamic = {dynamic}: a share of the budget, within [0, 1]")
        dynamic_bytes = int(budget * float(dynamic))
        raw = t.view(torch.uint8).numpy().reshape(-1) if t.numel() else np.zeros(0, dtype=np.uint8)
        self._s = _native.FeatureStore(raw, t.shape[0], row_bytes, budget - dynamic_bytes, dynamic_bytes, ordinal)

    @property
    def capacity(self):
        """Rows the static cache holds."""
        return self._s.cache_size()[0]

    @property
    def cached(self):
        """Rows now cached statically on the device."""
        return self._s.cache_size()[1]

    @property
    def dynamic_capacity(self):
        """Slots of the dynamic cache."""
        return self._s.cache_size()[2]

    def cache(self, ids):
        """Caches rows ``ids`` (distinct, hottest first; those past the budget are left out),
        replacing the cache. Returns how many are cached."""
        a = np.ascontiguousarray(np.asarray(ids.cpu() if hasattr(ids, "cpu") else ids), dtype=np.int64)
        return self._s.set_cache(a)

    def warm(self, loader, batches=None):
        """Picks the cache by pre-sampling: counts how often each node's features are read
        (each mini-batch's input nodes, ``blocks[0].src_nodes``) over ``batches`` mini-batches
        of ``loader`` (default: one epoch), then caches the most read rows, greedily by count
        (every row costs the same bytes); rows never read fill any budget left. Returns the
        access counts (a CUDA tensor)."""
        import torch

        counts = torch.zeros(self.shape[0], dtype=torch.int64, device=self.device)
        for i, b in enumerate(loader):
            if batches is not None and i >= batches:
                break
            nodes = torch.as_tensor(b.blocks[0].src_nodes).to(self.device)
            counts += torch.bincount(nodes, minlength=self.shape[0])
        # Most read first; rows never read fill what budget is left (in id order).
        order = torch.argsort(counts, descending=True, stable=True)
        self.cache(order[: self.capacity])
        return counts

    def gather(self, ids, sync=True):
        """The feature rows of ``ids`` as a ``(len(ids), dim)`` CUDA tensor of the matrix's
        dtype, ready when returned, allocated by torch on the current stream. ``ids``: a CUDA
        tensor (read in place), or any host integer array (uploaded by the store). The gather
        runs on a stream of its own; with ``sync`` it first waits for the work queued on the
        current stream (which wrote the ids, or last used the output's memory); without it
        the caller promises that work is done."""
        import torch

        cuda_ids = isinstance(ids, torch.Tensor) and ids.is_cuda and ids.device == self.device
        if cuda_ids:
            idx = ids.to(dtype=torch.int64).contiguous().view(-1)
            n = idx.numel()
        else:
            host = ids.cpu().numpy() if isinstance(ids, torch.Tensor) else np.asarray(ids)
            host = np.ascontiguousarray(host.reshape(-1), dtype=np.int64)
            n = len(host)
        out = torch.empty((n, self.shape[1]), dtype=self.dtype, device=self.device)
        after = torch.cuda.current_stream(self.device).cuda_stream if sync else 0
        if cuda_ids:
            self._s.gather_into(idx.data_ptr(), n, out.data_ptr(), after)
        else:
            self._s.gather_host_into(host, out.data_ptr(), after)
        return out

    def gather_many(self, ids, sync=True):
        """:meth:`gather` of each CUDA int64 id tensor in ``ids`` (1-D, contiguous, on the
        store's device), as views of one tensor, in one native call: the loader's thread
        gathers a group of mini-batches this way, taking the GIL once instead of per batch."""
        import torch

        for i, t in enumerate(ids):
            if not (isinstance(t, torch.Tensor) and t.is_cuda and t.device == self.device and t.dtype == torch.int64
                    and t.dim() == 1 and t.is_contiguous()):
                raise ValueError(f"ids[{i}]: a contiguous 1-D int64 tensor on {self.device}")
        lens = [t.numel() for t in ids]
        out = torch.empty((sum(lens), self.shape[1]), dtype=self.dtype, device=self.device)
        views = out.split(lens)
        after = torch.cuda.current_stream(self.device).cuda_stream if sync else 0
        self._s.gather_many_into([t.data_ptr() for t in ids], lens, [v.data_ptr() for v in views], after)
        return list(views)

    def __getitem__(self, ids):
        return self.gather(ids)

    @property
    def stats(self):
        """Gathers so far: rows, cache hits, hit rate, bytes, seconds and GB/s."""
        rows, hits, nbytes, secs = self._s.stats()
        return {"rows": rows, "hits": hits, "hit_rate": hits / rows if rows else 0.0, "bytes": nbytes, "seconds": secs,
                "gb_per_s": nbytes / secs / 1e9 if secs > 0 else 0.0}

    def reset_stats(self):
        """Clears :attr:`stats`."""
        self._s.reset_stats()
