# Type stubs of the public API (the implementation is in the .py files and the _native extension).
from collections.abc import Callable, Iterator, Sequence
from os import PathLike
from typing import Any, Literal, Union, overload

import numpy as np
import numpy.typing as npt

ArrayLike = Any  # numpy arrays, torch tensors (CPU or CUDA), DLPack producers, sequences
Ids = Literal["original", "internal"]
BackendName = Literal["auto", "cpu", "cuda", "wgpu"]
SamplerName = Literal["adaptive", "rejection", "erjs", "reservoir", "ervs"]
Result = Any  # numpy.ndarray, or torch.Tensor on the input's device

__version__: str

class CompileError(ValueError):
    errors: list[tuple[int, int, str, str | None]]
    line: int
    column: int
    message: str
    help: str | None

class Program:
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> Literal["walk", "sampler", "mask"]: ...
    @property
    def params(self) -> list[str]: ...
    @property
    def source(self) -> str: ...
    def explain(self) -> str: ...

class Block:
    src_nodes: Result
    num_dst: int
    edge_src: Result
    edge_dst: Result
    edge_ids: Result
    def aggregation_plan(self, density: ArrayLike | None = None, alpha: float = 0.5) -> AggregationPlan: ...
    @property
    def dst_nodes(self) -> Result: ...
    @property
    def num_edges(self) -> int: ...

class AggregationPlan:
    num_src: int
    num_dst: int
    device: Any
    @property
    def dense_rows(self) -> tuple[int, int]: ...
    def inv_degree(self, dtype: Any) -> Any: ...

class Sample:
    seeds: Result
    blocks: list[Block]
    x: Any
    def to_pyg(self) -> dict[str, Any]: ...

class Graph:
    networkx_nodes: list[Any]
    last_summary: str
    @classmethod
    def from_edge_index(
        cls,
        edge_index: ArrayLike,
        num_nodes: int | None = None,
        edge_weight: ArrayLike | None = None,
        edge_label: ArrayLike | None = None,
        edge_time: ArrayLike | None = None,
        undirected: bool = False,
    ) -> Graph: ...
    @classmethod
    def from_csr(
        cls,
        indptr: ArrayLike,
        indices: ArrayLike,
        edge_weight: ArrayLike | None = None,
        edge_label: ArrayLike | None = None,
        edge_time: ArrayLike | None = None,
        undirected: bool = False,
    ) -> Graph: ...
    @classmethod
    def from_scipy(cls, matrix: Any, weighted: bool | None = None, undirected: bool = False) -> Graph: ...
    @classmethod
    def from_networkx(cls, G: Any, weight: str | None = "weight", label: str | None = None, time: str | None = None) -> Graph: ...
    @classmethod
    def load(cls, path: Union[str, PathLike[str]]) -> Graph: ...
    def save(self, path: Union[str, PathLike[str]]) -> None: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def num_edges(self) -> int: ...
    @property
    def undirected(self) -> bool: ...
    @property
    def weighted(self) -> bool: ...
    @property
    def num_labels(self) -> int: ...
    def csr(self) -> tuple[Result, Result]: ...
    def edge_ids(self) -> Result: ...
    def node_ids(self) -> Result: ...
    def node_density(self, walks: int = 16, length: int = 8, seed: int = 1, backend: BackendName = "auto") -> Any: ...
    @overload
    def walk(
        self,
        walk: str | Program = "deepwalk",
        start: ArrayLike | None = None,
        length: int | None = None,
        walks_per_node: int = 1,
        seed: int = 0,
        backend: BackendName = "auto",
        return_edges: Literal[False] = False,
        ids: Ids = "original",
        sampler: SamplerName = "adaptive",
        threads: int | None = None,
        gpus: int = 0,
        table_budget: int | None = None,
        progress: bool | Callable[[int, int], None] = False,
        verbose: bool = False,
        **params: Any,
    ) -> Result: ...
    @overload
    def walk(
        self,
        walk: str | Program = "deepwalk",
        start: ArrayLike | None = None,
        length: int | None = None,
        walks_per_node: int = 1,
        seed: int = 0,
        backend: BackendName = "auto",
        *,
        return_edges: Literal[True],
        ids: Ids = "original",
        sampler: SamplerName = "adaptive",
        threads: int | None = None,
        gpus: int = 0,
        table_budget: int | None = None,
        progress: bool | Callable[[int, int], None] = False,
        verbose: bool = False,
        **params: Any,
    ) -> tuple[Result, Result]: ...
    def sample_neighbors(
        self,
        seeds: ArrayLike,
        fanouts: Sequence[int],
        replace: bool = False,
        weighted: bool = False,
        policy: Program | None = None,
        seed: int = 0,
        backend: BackendName = "auto",
        ids: Ids = "original",
        verbose: bool = False,
        **params: Any,
    ) -> Sample: ...
    @overload
    def triangles(
        self, mask: Program | None = None, per_node: Literal[False] = False, backend: BackendName = "auto", gpus: int = 0,
        verbose: bool = False, **params: Any
    ) -> int: ...
    @overload
    def triangles(
        self, mask: Program | None = None, *, per_node: Literal[True], backend: BackendName = "auto", gpus: int = 0,
        verbose: bool = False, **params: Any
    ) -> tuple[int, Result]: ...

class NeighborLoader:
    epoch: int
    def __init__(
        self,
        graph: Graph,
        seeds: ArrayLike,
        fanouts: Sequence[int],
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        device: Any = None,
        replace: bool = False,
        weighted: bool = False,
        policy: Program | None = None,
        backend: BackendName = "auto",
        drop_last: bool = False,
        prefetch: int = 8,
        ids: Ids = "original",
        features: FeatureStore | None = None,
        plans: bool = False,
        density: ArrayLike | None = None,
        **params: Any,
    ) -> None: ...
    @property
    def stats(self) -> dict[str, float]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Sample]: ...

class FeatureStore:
    dtype: Any
    shape: tuple[int, int]
    device: Any
    def __init__(self, features: Any, device_budget: int | float | None = None, dynamic: float = 0.0, device: Any = "cuda") -> None: ...
    @property
    def capacity(self) -> int: ...
    @property
    def cached(self) -> int: ...
    @property
    def dynamic_capacity(self) -> int: ...
    def cache(self, ids: ArrayLike) -> int: ...
    def warm(self, loader: NeighborLoader, batches: int | None = None) -> Any: ...
    def gather(self, ids: ArrayLike, sync: bool = True) -> Any: ...
    def gather_many(self, ids: Sequence[Any], sync: bool = True) -> list[Any]: ...
    def __getitem__(self, ids: ArrayLike) -> Any: ...
    @property
    def stats(self) -> dict[str, float]: ...
    def reset_stats(self) -> None: ...

def compile(source: str, kind: Literal["walk", "sampler", "mask"] | None = None) -> Program: ...
def default_graph() -> Graph: ...
def aggregate(block: Block, x: Any, op: Literal["sum", "mean"] = "mean") -> Any: ...
def walks() -> dict[str, str]: ...
def cuda_available() -> bool: ...
def cuda_status() -> tuple[bool, str]: ...
