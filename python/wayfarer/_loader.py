"""``wayfarer.NeighborLoader``: mini-batches of sampled neighbourhoods for a training loop."""

import queue
import threading
import time

import numpy as np

from . import _arrays
from ._graph import _ids_flag, _params, _resident_gpu
from ._sample import Sample

# Mini-batches sampled per engine call: the super-batch classifier groups their work.
_CHUNK = 8


class NeighborLoader:
    """Iterates mini-batches of ``batch_size`` seeds, each a :class:`wayfarer.Sample`.

    Every epoch shuffles the seeds (``shuffle=True``) with a generator keyed by
    ``(seed, epoch)``, and samples each group of mini-batches with a seed derived from
    ``(seed, epoch, group)``: the batches of a seed are the same on every run and machine.
    The next batches are sampled on a background thread (the engine releases the GIL) while
    the caller trains on the current one; ``prefetch`` bounds how many wait (default: one
    group of the engine's, 8 mini-batches: the thread samples a whole group per call, so a
    smaller queue runs dry while it samples the next one).

    ``device``: ``"cpu"``/None (numpy arrays, or tensors when the seeds are a tensor) or a torch
    device such as ``"cuda"`` (tensors there). On a CUDA device with uniform sampling and
    ``backend`` ``"auto"`` or ``"cuda"``, the GPU builds the blocks and they stay in its memory
    (written by the engine into tensors torch allocates, no copy through the host); otherwise
    the engine builds them on the host and they are copied to the device. Both give the same
    blocks for a seed.

    ``features``: a :class:`wayfarer.FeatureStore`; each mini-batch then carries ``x``, the
    features of its input nodes (``blocks[0].src_nodes``), gathered on the background thread
    while the caller trains on the previous batch (the sampler and the store run on streams
    of their own, so their kernels overlap the training step's).

    ``plans``: build each block's :class:`wayfarer.AggregationPlan` on the background thread
    too (on a CUDA stream of its own), so :func:`wayfarer.aggregate` finds it ready;
    ``density``: the per-node density its dense/sparse rule weighs
    (:meth:`wayfarer.Graph.node_density`, indexed by the loader's ids), or None for degree
    alone.

    ``stats``: where the last epoch's time went, in seconds of wall time on each thread (see
    :attr:`stats`).
    """

    def __init__(self, graph, seeds, fanouts, batch_size, shuffle=True, seed=0, device=None, replace=False, weighted=False,
                 policy=None, backend="auto", drop_last=False, prefetch=_CHUNK, ids="original", features=None, plans=False,
                 density=None, **params):
        if batch_size < 1:
            raise ValueError(f"batch_size = {batch_size}: at least 1")
        self.graph = graph
        self._device_given = device
        self.seeds = _arrays.ids(np.atleast_1d(_arrays.to_numpy(seeds, "seeds")), "seeds")
        self._tensor_device = _arrays.tensor_device(seeds)
        self.fanouts = [int(f) for f in fanouts]
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.seed = int(seed)
        self.replace, self.weighted, self.policy, self.backend = bool(replace), bool(weighted), policy, backend
        self.drop_last = drop_last
        self.prefetch = max(1, int(prefetch))
        self.original = _ids_flag(ids)
        self.params = _params(None, params)
        self.features = features
        self.plans = bool(plans)
        if density is not None and not plans:
            raise ValueError("density is for the aggregation plans: give plans=True with it")
        self.density = density
        self.epoch = 0
        self._stats = _Stats()

    @property
    def stats(self):
        """The current or last epoch's stages, in seconds of wall time: on the loader's thread
        ``sampling`` (engine calls, kernels included: each returns its blocks complete),
        ``converting`` (the engine's arrays into tensors and mini-batches), ``gathering``
        (features, complete when timed), ``planning`` (aggregation plans built in Python) and
        ``ahead`` (waiting with a full queue: the caller was the slower side); on the caller's
        thread ``waiting`` (for the next batch: the loader was). ``hidden`` is the loader's
        busy time that ran while the caller did other work (its busy time less the caller's
        waiting), and ``batches`` the batches handed over."""
        return self._stats.as_dict()

    def __len__(self):
        n = len(self.seeds)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _device(self):
        if self._device_given is None:
            return self._tensor_device
        import torch

        return torch.device(self._device_given)

    def _order(self, epoch):
        if not self.shuffle:
            return self.seeds
        rng = np.random.default_rng([self.seed, epoch])
        return self.seeds[rng.permutation(len(self.seeds))]

    def _groups(self, epoch, ordinal, plans=None, stream=None):
        """Each group's mini-batches: the engine's host arrays, or (``ordinal`` given) samples
        whose blocks the GPU built and keeps, in memory torch allocated on ``stream``."""
        order = self._order(epoch)
        n = len(self) * self.batch_size if self.drop_last else len(order)
        # The same groups and seeds on the host and GPU paths: the same blocks.
        step = self.batch_size * _CHUNK
        for g, lo in enumerate(range(0, n, step)):
            part = np.ascontiguousarray(order[lo:min(lo + step, n)])
            # One 64-bit seed per (seed, epoch, group), the same on every machine.
            key = int(np.random.SeedSequence([self.seed, epoch, g]).generate_state(2, dtype=np.uint32).view(np.uint64)[0])
            if ordinal is not None:
                yield self.graph._sample_batches_cuda(part, self.fanouts, self.batch_size, self.replace, key, ordinal,
                                                      self.original, plans, stream)[0]
            else:
                yield self.graph._sample_batches(part, self.fanouts, self.batch_size, self.replace, self.weighted,
                                                 self.policy, self.params, key, self.backend, self.original)

    def __iter__(self):
        epoch = self.epoch
        self.epoch += 1
        device = self._device()
        ordinal = _resident_gpu(device, self.backend, self.weighted, self.policy)
        q = queue.Queue(maxsize=self.prefetch)
        plan_stream, density = None, None
        # The features are allocated on a stream of the loader's (so torch reuses their memory
        # only after the training stream that read them finished: see record_stream below).
        gather_stream = None
        if self.features is not None:
            import torch

            gather_stream = torch.cuda.Stream(self.features.device)
        if self.plans:
            import torch

            # Host-built blocks on a CUDA device: their plans on a stream of the loader's (the
            # GPU path builds them inside its sampling call instead).
            if ordinal is None and device is not None and torch.device(device).type == "cuda":
                plan_stream = torch.cuda.Stream(torch.device(device))
            if self.density is not None:
                density = torch.as_tensor(self.density).to(device if device is not None else "cpu")
        stop = threading.Event()
        done = object()

        # GPU-built blocks live in memory torch allocates on a stream of the loader's: it is
        # reused once the streams that read it (marked at the handover) are done.
        block_stream = None
        if ordinal is not None:
            import torch

            block_stream = torch.cuda.Stream(torch.device("cuda", ordinal))
        # GPU-built blocks get their plans from the sampling call itself (no Python per block).
        native_plans = None
        if self.plans and ordinal is not None:
            import torch

            native_plans = (None if density is None else density.to(torch.float64).contiguous(), 0.5)
            # The sampler's stream reads it from the loader's thread.
            torch.cuda.current_stream(device).synchronize()

        def put(item):
            """Queues ``item`` unless the consumer has stopped (it may stop, by ``break`` or an
            exception, with the queue full: a plain blocking put would then never return)."""
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        stats = self._stats = _Stats()

        def produce():
            try:
                groups = self._groups(epoch, ordinal, native_plans, block_stream)
                while True:
                    t = time.perf_counter()
                    batches = next(groups, None)
                    stats.sampling += time.perf_counter() - t
                    if batches is None:
                        break
                    if ordinal is not None and self.features is not None and batches:
                        # GPU-built blocks: the group's features in one native call.
                        t = time.perf_counter()
                        with torch.cuda.stream(gather_stream):
                            xs = self.features.gather_many([b.blocks[0].src_nodes for b in batches], sync=False)
                        for b, x in zip(batches, xs):
                            b.x = x
                        stats.gathering += time.perf_counter() - t
                    for b in batches:
                        t = time.perf_counter()
                        if not isinstance(b, Sample):
                            b = Sample.from_native(b, device)
                        t1 = time.perf_counter()
                        stats.converting += t1 - t
                        if self.features is not None and b.x is None:
                            # On this thread, so it overlaps the caller's training step. The
                            # ids of GPU-built blocks are complete; host-built ones were copied
                            # on this thread's current stream, which the gather then waits for.
                            copied = None if ordinal is not None else torch.cuda.current_stream(self.features.device)
                            with torch.cuda.stream(gather_stream):
                                if copied is not None:
                                    gather_stream.wait_stream(copied)
                                b.x = self.features.gather(b.blocks[0].src_nodes, sync=copied is not None)
                        t2 = time.perf_counter()
                        stats.gathering += t2 - t1
                        if self.plans and native_plans is None:
                            _plan(b, plan_stream, density)
                        t3 = time.perf_counter()
                        stats.planning += t3 - t2
                        if not put(b):
                            return
                        stats.ahead += time.perf_counter() - t3
                put(done)
            except BaseException as e:  # noqa: BLE001 - handed to the consumer
                put(e)

        sampler = threading.Thread(target=produce, name="wayfarer-sampler", daemon=True)
        sampler.start()
        try:
            while True:
                t0 = time.perf_counter()
                item = q.get()
                stats.waiting += time.perf_counter() - t0
                if item is done:
                    return
                if isinstance(item, BaseException):
                    raise item
                # Device memory allocated on the loader's streams is read on the caller's: torch
                # reuses it after that work only.
                used = [] if gather_stream is None else [item.x]
                used += item._buffers or []
                if used:
                    caller = torch.cuda.current_stream(used[0].device)
                    for tensor in used:
                        tensor.record_stream(caller)
                stats.batches += 1
                yield item
        finally:
            stop.set()
            sampler.join()


def _plan(sample, stream, density):
    """Builds the aggregation plans of ``sample``'s blocks, on ``stream`` when given, complete
    when it returns (the training step's stream reads them without waiting for ``stream``)."""
    import contextlib

    import torch

    # A CUDA plan's native call writes the means' scale too and waits for its stream.
    with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
        for block in sample.blocks:
            block.aggregation_plan(density)


class _Stats:
    """Seconds per stage of one epoch (see :attr:`NeighborLoader.stats`). Each field has one
    writer thread; a reader mid-epoch sees a consistent-enough snapshot."""

    _FIELDS = ("sampling", "converting", "gathering", "planning", "ahead", "waiting")

    def __init__(self):
        for f in self._FIELDS:
            setattr(self, f, 0.0)
        self.batches = 0

    def as_dict(self):
        d = {f: getattr(self, f) for f in self._FIELDS}
        busy = d["sampling"] + d["converting"] + d["gathering"] + d["planning"]
        d["hidden"] = max(0.0, busy - d["waiting"])
        d["batches"] = self.batches
        return d
