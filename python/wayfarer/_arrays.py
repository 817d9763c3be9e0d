"""Array conversions at the boundary: numpy arrays, torch tensors (CPU or CUDA), any DLPack
producer (CuPy, JAX, ...) and anything ``numpy.asarray`` takes come in as contiguous numpy
arrays of the engine's dtypes, checked by name; results go back as numpy arrays, or as torch
tensors on the caller's device (through DLPack: no copy on the CPU)."""

import numpy as np


def is_tensor(x):
    """Whether ``x`` is a torch tensor (without importing torch)."""
    return type(x).__module__.startswith("torch") and hasattr(x, "device") and hasattr(x, "detach")


def tensor_device(*xs):
    """The device of the first torch tensor among ``xs``, or None."""
    for x in xs:
        if is_tensor(x):
            return x.device
    return None


def to_numpy(x, name):
    """``x`` as a numpy array: host memory is shared through DLPack; device memory (a CUDA
    tensor, a CuPy array) is copied to the host, where the engine builds graphs."""
    if isinstance(x, np.ndarray):
        return x
    if is_tensor(x):
        x = x.detach()
        if x.device.type != "cpu":
            x = x.cpu()
        return np.from_dlpack(x.contiguous())
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        kind = int(x.__dlpack_device__()[0])
        if kind in (1, 3):  # kDLCPU, kDLCUDAHost
            return np.from_dlpack(x)
        if hasattr(x, "get"):  # CuPy
            return np.asarray(x.get())
    try:
        return np.asarray(x)
    except Exception as e:  # noqa: BLE001 - any conversion failure is the caller's input
        raise TypeError(f"{name}: cannot be read as an array ({e})") from None


def ids(x, name, ndim=1):
    """Integer ids as a contiguous int64 array; other dtypes are a TypeError naming ``name``."""
    a = to_numpy(x, name)
    if a.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array, got shape {a.shape}")
    if a.dtype == np.bool_ or a.dtype.kind not in "iu":
        if a.size == 0 and a.dtype.kind == "f":
            a = a.astype(np.int64)
        else:
            raise TypeError(f"{name}: node ids must be integers, got dtype {a.dtype}")
    if a.dtype == np.uint64 and a.size and a.max() > np.iinfo(np.int64).max:
        i = int(np.argmax(a > np.iinfo(np.int64).max))
        raise ValueError(f"{name}[{i}] = {a[i]}: too large for a node id")
    return np.ascontiguousarray(a, dtype=np.int64)


def _vector(x, name):
    a = to_numpy(x, name)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {a.shape}")
    return a


def weights(x, name):
    """Edge weights as a contiguous float32 array (finite and >= 0 is checked by the engine)."""
    if x is None:
        return None
    a = _vector(x, name)
    if a.dtype.kind not in "fiu" or a.dtype == np.bool_:
        raise TypeError(f"{name}: weights must be numbers, got dtype {a.dtype}")
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{name}[{i}] = {a[i]}: weights must be finite and >= 0")
        big = np.abs(a) > np.finfo(np.float32).max
        if big.any():
            i = int(np.argmax(big))
            raise ValueError(f"{name}[{i}] = {a[i]}: beyond float32's range")
    return np.ascontiguousarray(a, dtype=np.float32)


def integers(x, name):
    """Integer edge attributes (labels, timestamps) as a contiguous int64 array."""
    if x is None:
        return None
    a = _vector(x, name)
    if a.dtype == np.bool_ or a.dtype.kind not in "iu":
        raise TypeError(f"{name}: expected integers, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.int64)


def out(a, device):
    """A result array as the caller's kind: numpy, or a torch tensor on ``device``."""
    if a is None or device is None:
        return a
    import torch

    t = torch.from_dlpack(a)
    return t if device.type == "cpu" else t.to(device, non_blocking=False)


def view_on_first_use(obj, spans, name):
    """The ``__getattr__`` of objects whose arrays are views made on first use (the GPU
    loader's blocks and plans): ``spans`` is ``(buffer, {name: (start, end)})`` or None; the
    view of ``name`` is made, kept on ``obj`` and returned, or AttributeError for another name."""
    if spans is not None and name in spans[1]:
        lo, hi = spans[1][name]
        v = spans[0][lo:hi]
        setattr(obj, name, v)
        return v
    raise AttributeError(f"'{type(obj).__name__}' object has no attribute '{name}'")
