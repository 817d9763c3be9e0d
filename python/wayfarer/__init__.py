"""wayfarer: exact graph random walks, GNN neighbour sampling and triangle counting.

The walks are written as Rust (``#[walk]``) and compiled by wayfarer's compiler; the same
engine runs the ``wayfarer`` command line, so a seed gives the same walks here and there.

    >>> import wayfarer, numpy as np
    >>> g = wayfarer.Graph.from_edge_index(np.array([[0, 1, 2], [1, 2, 0]]), undirected=True)
    >>> walks = g.walk("node2vec", length=10, p=2.0, q=0.5, seed=7)   # (3, 11) int64
"""

from . import _native
from ._aggregate import AggregationPlan, aggregate
from ._errors import CompileError
from ._graph import Graph
from ._features import FeatureStore
from ._loader import NeighborLoader
from ._sample import Block, Sample

__version__ = _native.version()

__all__ = ["Graph", "Program", "CompileError", "FeatureStore", "NeighborLoader", "Sample", "Block", "AggregationPlan", "aggregate", "compile", "cuda_available", "cuda_status", "default_graph", "walks"]

Program = _native.Program


def default_graph():
    """The embedded WordNet 3.0 graph (116,650 synsets, 377,592 pointers labelled by type)."""
    return Graph(_native.Graph.default_graph())


def compile(source, kind=None):  # noqa: A001 - the package's verb
    """Compiles a ``#[walk]``, ``#[sampler]`` or ``#[mask]`` program given as Rust source.

    Walks run with :meth:`Graph.walk` (Cranelift on the CPU, CUDA, wgpu), samplers as
    ``policy=`` of :meth:`Graph.sample_neighbors`, masks as ``mask=`` of
    :meth:`Graph.triangles`; parameters are given there as keywords. A program that does not
    compile raises :class:`CompileError` with the line, the column and rustc-style text.
    """
    return _native.compile(source, kind)


def cuda_available():
    """Whether a CUDA GPU is usable here (what ``backend="auto"`` picks); see
    :func:`cuda_status` for the reason when not."""
    return _native.cuda_status()[0]


def cuda_status():
    """``(usable, text)``: the GPU's name, or why CUDA is not usable."""
    return _native.cuda_status()


def walks():
    """The built-in walks: a dict of name -> its parameters (with defaults) and what it does."""
    return dict(_native.walks())
