//! `wayfarer._native.Graph`: a CSR graph held by Rust, built from arrays, loaded from a file
//! or the embedded default graph. The package's `wayfarer.Graph` wraps it (conversions from
//! torch, scipy and networkx live in Python).

use crate::edges::{self, EdgeColumns};
use crate::errors;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use std::sync::Arc;
use wayfarer::graph::{CsrGraph, IdMap, Orientation};

/// A graph held by the engine.
#[pyclass(module = "wayfarer._native", name = "Graph", frozen)]
pub struct PyGraph {
    pub(crate) graph: Arc<CsrGraph>,
    /// CSR position -> the caller's edge id, for graphs built from arrays (a loaded graph's
    /// edge ids are its CSR positions).
    pub(crate) edge_ids: Option<Arc<Vec<u64>>>,
    /// The graph's GPU sampler, made on the first `device="cuda"` sampling call.
    pub(crate) gpu: std::sync::Mutex<Option<Arc<crate::device::GpuState>>>,
    /// Device memory the GPU sampler's copy of the graph may take (`None`: the automatic
    /// share); past it the graph is sampled out of core.
    pub(crate) device_graph_budget: std::sync::Mutex<Option<usize>>,
}

impl PyGraph {
    fn new(graph: CsrGraph, edge_ids: Option<Vec<u64>>) -> Self {
        PyGraph {
            graph: Arc::new(graph),
            edge_ids: edge_ids.map(Arc::new),
            gpu: Default::default(),
            device_graph_budget: Default::default(),
        }
    }

    /// The caller's id of the edge at CSR position `pos`.
    pub(crate) fn edge_id(&self, pos: usize) -> u64 {
        match &self.edge_ids {
            Some(ids) => ids[pos],
            None => pos as u64,
        }
    }
}

/// A contiguous view of an optional array.
fn slice<'a, T: numpy::Element>(a: &'a Option<PyReadonlyArray1<'_, T>>, name: &str) -> PyResult<Option<&'a [T]>> {
    a.as_ref().map(|x| x.as_slice().map_err(|_| errors::value(format!("{name} must be a contiguous 1-D array")))).transpose()
}

#[pymethods]
impl PyGraph {
    /// Builds a graph from an edge list (`src[i] -> dst[i]`); `names` says how errors name
    /// the two id arrays (`edge_index[0, {}]`).
    #[staticmethod]
    #[pyo3(signature = (src, dst, num_nodes, edge_weight, edge_label, edge_time, undirected, names))]
    #[allow(clippy::too_many_arguments)]
    fn from_coo(
        py: Python<'_>,
        src: PyReadonlyArray1<'_, i64>,
        dst: PyReadonlyArray1<'_, i64>,
        num_nodes: Option<u64>,
        edge_weight: Option<PyReadonlyArray1<'_, f32>>,
        edge_label: Option<PyReadonlyArray1<'_, i64>>,
        edge_time: Option<PyReadonlyArray1<'_, i64>>,
        undirected: bool,
        names: (String, String),
    ) -> PyResult<Self> {
        let (s, d) = (
            src.as_slice().map_err(|_| errors::value("src must be contiguous"))?,
            dst.as_slice().map_err(|_| errors::value("dst must be contiguous"))?,
        );
        let cols = EdgeColumns {
            src: (s, &names.0),
            dst: (d, &names.1),
            weight: slice(&edge_weight, "edge_weight")?,
            label: slice(&edge_label, "edge_label")?,
            time: slice(&edge_time, "edge_time")?,
        };
        let built = py.detach(|| edges::build(&cols, num_nodes, undirected))?;
        Ok(PyGraph::new(built.graph, Some(built.edge_ids)))
    }

    /// Builds a graph from CSR arrays (`indices[indptr[v] .. indptr[v + 1]]` are `v`'s
    /// neighbours, in any order).
    #[staticmethod]
    #[pyo3(signature = (indptr, indices, edge_weight, edge_label, edge_time, undirected))]
    fn from_csr(
        py: Python<'_>,
        indptr: PyReadonlyArray1<'_, i64>,
        indices: PyReadonlyArray1<'_, i64>,
        edge_weight: Option<PyReadonlyArray1<'_, f32>>,
        edge_label: Option<PyReadonlyArray1<'_, i64>>,
        edge_time: Option<PyReadonlyArray1<'_, i64>>,
        undirected: bool,
    ) -> PyResult<Self> {
        let (p, i) = (
            indptr.as_slice().map_err(|_| errors::value("indptr must be contiguous"))?,
            indices.as_slice().map_err(|_| errors::value("indices must be contiguous"))?,
        );
        let src = edges::csr_sources(p, i.len())?;
        let cols = EdgeColumns {
            src: (&src, "indptr (row of indices[{}])"),
            dst: (i, "indices[{}]"),
            weight: slice(&edge_weight, "edge_weight")?,
            label: slice(&edge_label, "edge_label")?,
            time: slice(&edge_time, "edge_time")?,
        };
        let n = (p.len() - 1) as u64;
        let built = py.detach(|| edges::build(&cols, Some(n), undirected))?;
        Ok(PyGraph::new(built.graph, Some(built.edge_ids)))
    }

    /// Loads `.wfg`, Matrix Market or a text edge list (by extension, as the CLI does).
    #[staticmethod]
    fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let g = py.detach(|| CsrGraph::load(&path)).map_err(errors::graph)?;
        Ok(PyGraph::new(g, None))
    }

    /// The embedded default graph: WordNet 3.0 (116,650 synsets, 377,592 labelled pointers).
    #[staticmethod]
    fn default_graph(py: Python<'_>) -> PyResult<Self> {
        let g = py.detach(wayfarer::default_graph).map_err(errors::graph)?;
        Ok(PyGraph::new(g, None))
    }

    /// Writes the graph as `.wfg` (or a text edge list by extension).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let g = &self.graph;
        py.detach(|| match wayfarer::graph::format_extension(&path) {
            Some("wfg") => g.save_wfg(&path),
            _ => g.save_edge_list(&path),
        })
        .map_err(errors::graph)
    }

    /// Nodes.
    #[getter]
    fn num_nodes(&self) -> usize {
        self.graph.num_nodes()
    }

    /// Directed edge entries (an undirected edge counts twice, a self loop once).
    #[getter]
    fn num_edges(&self) -> u64 {
        self.graph.num_edges()
    }

    /// Whether every edge has its reverse by construction.
    #[getter]
    fn undirected(&self) -> bool {
        self.graph.orientation() == Orientation::Undirected
    }

    /// Whether edges carry weights.
    #[getter]
    fn weighted(&self) -> bool {
        self.graph.weights().is_some()
    }

    /// Distinct labels (one past the largest), 0 without labels.
    #[getter]
    fn num_labels(&self) -> u32 {
        if self.graph.labels().is_some() { self.graph.num_labels() } else { 0 }
    }

    /// Whether edges carry timestamps.
    #[getter]
    fn timed(&self) -> bool {
        self.graph.timestamps().is_some()
    }

    /// The CSR arrays `(indptr, indices)` (int64 copies), rows sorted by destination.
    fn csr<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
        let g = &self.graph;
        let p: Vec<i64> = g.offsets().iter().map(|&x| x as i64).collect();
        let i: Vec<i64> = g.targets().iter().map(|&x| x as i64).collect();
        (p.into_pyarray(py), i.into_pyarray(py))
    }

    /// Per CSR entry, the caller's edge id (its position in the input edge list; a loaded
    /// graph's are the positions themselves).
    fn edge_ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let v: Vec<i64> = (0..self.graph.num_edges() as usize).map(|p| self.edge_id(p) as i64).collect();
        v.into_pyarray(py)
    }

    /// Per CSR entry, its weight (`None` when unweighted).
    fn edge_weights<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f32>>> {
        self.graph.weights().map(|w| w.to_vec().into_pyarray(py))
    }

    /// Per CSR entry, its label (`None` without labels).
    fn edge_labels<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<i64>>> {
        self.graph.labels().map(|l| l.iter().map(|&x| x as i64).collect::<Vec<_>>().into_pyarray(py))
    }

    /// The input's id of each node (a file's own ids; `0..n` for graphs built from arrays).
    fn node_ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let map = self.graph.id_map();
        let v: Vec<i64> = (0..self.graph.num_nodes() as u32).map(|x| map.original(x) as i64).collect();
        v.into_pyarray(py)
    }

    /// Whether node ids are `0..n` (no id table).
    #[getter]
    fn dense_ids(&self) -> bool {
        matches!(self.graph.id_map(), IdMap::Identity)
    }

    /// Device memory in bytes the GPU sampler's copy of the graph may take (`None`: the whole
    /// graph when it takes at most 60% of the free memory, else that share).
    #[getter]
    fn device_graph_budget(&self) -> Option<usize> {
        *self.device_graph_budget.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets it; the next GPU sampling call uploads the graph again within it.
    #[setter]
    fn set_device_graph_budget(&self, budget: Option<usize>) {
        *self.device_graph_budget.lock().unwrap_or_else(|p| p.into_inner()) = budget;
        *self.gpu.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Bytes the graph's arrays take.
    #[getter]
    fn memory_bytes(&self) -> u64 {
        self.graph.memory_bytes() + self.edge_ids.as_ref().map_or(0, |e| e.len() as u64 * 8)
    }
}
