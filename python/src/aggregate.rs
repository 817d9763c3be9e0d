//! `wayfarer.aggregate`'s engine: the sum/mean of neighbour features over a sampled block's
//! CSR, on the CPU (numpy views of torch's CPU tensors) or on a GPU (device addresses of
//! torch's CUDA tensors, launched on torch's current stream), with the dense/sparse row rule
//! of `wayfarer partition`; and the node density that rule weighs.

use crate::errors;
use crate::graph::PyGraph;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, OnceLock};
use wayfarer::aggregate::{Feature, RowsCsr, Scales, gather_reduce};
use wayfarer::gpu::Backend;
use wayfarer_cuda::aggregate::{AggregateArgs, Aggregator};
use wayfarer_cuda::aggregate_plan::{PlanArgs, PlanRows};

fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, name: &str) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| errors::value(format!("{name} must be a contiguous 1-D array")))
}

#[allow(clippy::too_many_arguments)]
fn cpu<T: Feature + numpy::Element>(
    py: Python<'_>,
    indptr: PyReadonlyArray1<'_, i64>,
    cols: PyReadonlyArray1<'_, i64>,
    dense: PyReadonlyArray1<'_, i64>,
    row_scale: Option<PyReadonlyArray1<'_, T>>,
    col_scale: Option<PyReadonlyArray1<'_, T>>,
    x: PyReadonlyArray1<'_, T>,
    dim: usize,
    mut out: PyReadwriteArray1<'_, T>,
) -> PyResult<()> {
    let (indptr, cols, dense, x) = (slice(&indptr, "indptr")?, slice(&cols, "cols")?, slice(&dense, "dense")?, slice(&x, "x")?);
    let row = row_scale.as_ref().map(|s| slice(s, "row_scale")).transpose()?;
    let col = col_scale.as_ref().map(|s| slice(s, "col_scale")).transpose()?;
    let out = out.as_slice_mut().map_err(|_| errors::value("out must be a contiguous 1-D array"))?;
    py.detach(|| gather_reduce(&RowsCsr { indptr, cols }, Scales { row, col }, dense, x, dim, out)).map_err(errors::walk)
}

/// The CPU entry point of one float type (pyo3 functions cannot be generic).
macro_rules! cpu_entry {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (indptr, cols, dense, row_scale, col_scale, x, dim, out))]
        #[allow(clippy::too_many_arguments)]
        pub fn $name(
            py: Python<'_>,
            indptr: PyReadonlyArray1<'_, i64>,
            cols: PyReadonlyArray1<'_, i64>,
            dense: PyReadonlyArray1<'_, i64>,
            row_scale: Option<PyReadonlyArray1<'_, $t>>,
            col_scale: Option<PyReadonlyArray1<'_, $t>>,
            x: PyReadonlyArray1<'_, $t>,
            dim: usize,
            out: PyReadwriteArray1<'_, $t>,
        ) -> PyResult<()> {
            cpu(py, indptr, cols, dense, row_scale, col_scale, x, dim, out)
        }
    };
}

cpu_entry!(
    /// `out[r] = row_scale[r] · Σ col_scale[c] · x[c]` over each row's columns, float32: the
    /// rows in `dense` by the dense path. Checks its input and names what is wrong.
    gather_reduce_f32,
    f32
);
cpu_entry!(
    /// [`gather_reduce_f32`] in float64 (what `torch.autograd.gradcheck` checks with).
    gather_reduce_f64,
    f64
);

/// Each GPU's loaded kernels, loaded on first use.
pub(crate) fn aggregator(device: usize) -> PyResult<Arc<Aggregator>> {
    static LOADED: OnceLock<Mutex<Vec<Option<Arc<Aggregator>>>>> = OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if loaded.len() <= device {
        loaded.resize(device + 1, None);
    }
    if let Some(a) = &loaded[device] {
        return Ok(a.clone());
    }
    let dev = wayfarer::gpu::CudaDevice::open(device).map_err(errors::cuda)?;
    let a = Arc::new(Aggregator::new(&dev).map_err(errors::cuda)?);
    loaded[device] = Some(a.clone());
    Ok(a)
}

/// Enqueues the aggregation on GPU `device`'s stream `stream` (torch's current one), float32,
/// at the given device addresses (the package built and checked the CSR: see
/// `wayfarer_cuda::aggregate::AggregateArgs`); `rows` lists `n_rows` output rows, the first
/// `dense` of them dense. Returns without waiting.
#[pyfunction]
#[pyo3(signature = (device, stream, indptr, cols, rows, n_rows, dense, row_scale, col_scale, x, dim, out))]
#[allow(clippy::too_many_arguments)]
pub fn gather_reduce_cuda(
    device: usize,
    stream: u64,
    indptr: u64,
    cols: u64,
    rows: u64,
    n_rows: u64,
    dense: u64,
    row_scale: u64,
    col_scale: u64,
    x: u64,
    dim: u64,
    out: u64,
) -> PyResult<()> {
    let args = AggregateArgs { indptr, cols, rows, n_rows, dense, row_scale, col_scale, x, dim, out };
    aggregator(device)?.launch(stream, &args).map_err(errors::cuda)
}

/// Builds a block's aggregation plan on GPU `device`, on its stream `stream`, and waits for it
/// with the GIL released (`wayfarer_cuda::aggregate_plan`): the block's int64 edge ends and
/// node ids, the graph's float64 densities (or 0), and the output arrays the package
/// allocated, as device addresses; `forward` and `backward` are each `(indptr, cols, order)`,
/// `inv_degree` float32 (or 0).
/// Returns the dense rows of each direction. Ids outside the block are a `ValueError`.
#[pyfunction]
#[pyo3(signature = (device, stream, edge_src, edge_dst, edges, num_src, num_dst, nodes, density, density_len, alpha, forward, backward, degree, inv_degree))]
#[allow(clippy::too_many_arguments)]
pub fn aggregation_plan_cuda(
    py: Python<'_>,
    device: usize,
    stream: u64,
    edge_src: u64,
    edge_dst: u64,
    edges: u64,
    num_src: u64,
    num_dst: u64,
    nodes: u64,
    density: u64,
    density_len: u64,
    alpha: f64,
    forward: (u64, u64, u64),
    backward: (u64, u64, u64),
    degree: u64,
    inv_degree: u64,
) -> PyResult<(u64, u64)> {
    let rows = |(indptr, cols, order): (u64, u64, u64)| PlanRows { indptr, cols, order };
    let args = PlanArgs {
        edge_src,
        edge_dst,
        edges,
        num_src,
        num_dst,
        nodes,
        density,
        density_len,
        alpha,
        forward: rows(forward),
        backward: rows(backward),
        degree,
        inv_degree,
    };
    let aggregator = aggregator(device)?;
    let counts = py.detach(|| aggregator.plan(stream, &args)).map_err(errors::cuda)?;
    Ok((counts.forward_dense, counts.backward_dense))
}

/// The dense rows among rows of `degree` edges whose nodes have density `density`:
/// `wayfarer::partition::dense_rows`.
#[pyfunction]
pub fn dense_rows<'py>(
    py: Python<'py>,
    degree: PyReadonlyArray1<'py, i64>,
    density: PyReadonlyArray1<'py, f64>,
    alpha: f64,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    let (degree, density) = (slice(&degree, "degree")?, slice(&density, "density")?);
    if degree.len() != density.len() {
        return Err(errors::value(format!("{} degrees and {} densities", degree.len(), density.len())));
    }
    let degree: Vec<u64> = degree.iter().map(|&d| d.max(0) as u64).collect();
    Ok(wayfarer::partition::dense_rows(&degree, density, alpha).into_pyarray(py))
}

#[pymethods]
impl PyGraph {
    /// `N(v)` of every node (internal order): `walks` anonymous walks of `length` steps from
    /// each, on `backend`'s device (`wayfarer::partition::density`).
    #[pyo3(signature = (walks, length, seed, backend))]
    fn node_density<'py>(&self, py: Python<'py>, walks: u32, length: u32, seed: u64, backend: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let backend: Backend = backend.parse().map_err(|e: String| errors::value(format!("backend: {e}")))?;
        let g = &*self.graph;
        let cfg = wayfarer::partition::PartitionConfig { walks, length, seed, ..Default::default() };
        let metrics = py.detach(|| wayfarer::partition::metrics(g, &cfg, backend)).map_err(errors::walk)?;
        let density = metrics.density;
        Ok(density.into_pyarray(py))
    }
}
