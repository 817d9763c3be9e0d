//! `wayfarer._native.FeatureStore`: a node feature matrix in mapped page-locked host memory
//! with a device cache of hot rows (the CUDA backend's `FeatureStore`); gathers write into
//! device arrays the package's `wayfarer.FeatureStore` allocated with torch.

use crate::errors;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use std::sync::Mutex;
use wayfarer::gpu::{CudaDevice, CudaError};
use wayfarer_cuda::features::FeatureStore;

/// The engine's feature store.
#[pyclass(module = "wayfarer._native", name = "FeatureStore", frozen)]
pub struct PyFeatureStore {
    store: Mutex<FeatureStore>,
}

#[pymethods]
impl PyFeatureStore {
    /// `data`: the matrix's bytes, row-major, `rows` rows of `row_bytes`; `device_budget`:
    /// bytes of statically cached rows on GPU `device`; `dynamic_budget`: bytes of the
    /// dynamic ring.
    #[new]
    fn new(
        py: Python<'_>,
        data: PyReadonlyArray1<'_, u8>,
        rows: usize,
        row_bytes: usize,
        device_budget: usize,
        dynamic_budget: usize,
        device: usize,
    ) -> PyResult<Self> {
        let data = data.as_slice().map_err(|_| errors::value("features must be contiguous"))?;
        let store = py
            .detach(|| -> Result<FeatureStore, CudaError> {
                let dev = CudaDevice::open(device)?;
                FeatureStore::new(&dev, data, rows, row_bytes, device_budget, dynamic_budget)
            })
            .map_err(errors::cuda)?;
        Ok(PyFeatureStore { store: Mutex::new(store) })
    }

    /// Caches `hot` (distinct row ids, hottest first) up to the budget; returns how many.
    fn set_cache(&self, py: Python<'_>, hot: PyReadonlyArray1<'_, i64>) -> PyResult<usize> {
        let hot = hot.as_slice().map_err(|_| errors::value("ids must be a contiguous 1-D array"))?;
        let ids: Vec<u32> = hot
            .iter()
            .enumerate()
            .map(|(i, &x)| u32::try_from(x).map_err(|_| errors::value(format!("ids[{i}] = {x}: not a row"))))
            .collect::<PyResult<_>>()?;
        py.detach(|| self.store.lock().unwrap_or_else(|p| p.into_inner()).set_cache(&ids)).map_err(errors::cuda)
    }

    /// Gathers the rows of `n` int64 ids at device address `ids` into the caller's device
    /// array at `out` (`n * row_bytes` bytes), after the work queued on the caller's stream
    /// `stream` (0: none): torch's tensors, with no capsule to free.
    fn gather_into(&self, py: Python<'_>, ids: u64, n: usize, out: u64, stream: u64) -> PyResult<()> {
        py.detach(|| self.store.lock().unwrap_or_else(|p| p.into_inner()).gather_into(ids, n, out, stream)).map_err(errors::cuda)
    }

    /// [`Self::gather_into`] for several id arrays, in one call (the GIL taken once): the
    /// rows of the `ns[i]` int64 ids at `ids[i]` into `outs[i]`, in order, after the work
    /// queued on `stream`.
    fn gather_many_into(&self, py: Python<'_>, ids: Vec<u64>, ns: Vec<usize>, outs: Vec<u64>, stream: u64) -> PyResult<()> {
        if ids.len() != ns.len() || ids.len() != outs.len() {
            return Err(errors::value(format!("gather_many_into: {} id arrays, {} lengths, {} outputs", ids.len(), ns.len(), outs.len())));
        }
        py.detach(|| {
            let store = self.store.lock().unwrap_or_else(|p| p.into_inner());
            for (i, ((&at, &n), &out)) in ids.iter().zip(&ns).zip(&outs).enumerate() {
                store.gather_into(at, n, out, if i == 0 { stream } else { 0 }).map_err(|e| (i, e))?;
            }
            Ok(())
        })
        .map_err(|(i, e)| match e {
            // A bad id: which array held it, then what the store says of it.
            wayfarer::gpu::CudaError::Walk(w) => errors::value(format!("array {i}: {w}")),
            other => errors::cuda(other),
        })
    }

    /// [`Self::gather_into`] with host int64 ids (uploaded on the store's own stream).
    fn gather_host_into(&self, py: Python<'_>, ids: PyReadonlyArray1<'_, i64>, out: u64, stream: u64) -> PyResult<()> {
        let ids = ids.as_slice().map_err(|_| errors::value("ids must be a contiguous 1-D array"))?;
        py.detach(|| self.store.lock().unwrap_or_else(|p| p.into_inner()).gather_host_into(ids, out, stream)).map_err(errors::cuda)
    }

    /// `(rows gathered, cache hits, bytes gathered, seconds)` so far.
    fn stats(&self) -> (u64, u64, u64, f64) {
        let s = self.store.lock().unwrap_or_else(|p| p.into_inner()).stats();
        (s.rows, s.hits, s.bytes, s.seconds)
    }

    /// Clears the statistics.
    fn reset_stats(&self) {
        self.store.lock().unwrap_or_else(|p| p.into_inner()).reset_stats();
    }

    /// `(rows the static budget holds, rows cached statically, slots of the dynamic ring)`.
    fn cache_size(&self) -> (usize, usize, usize) {
        let s = self.store.lock().unwrap_or_else(|p| p.into_inner());
        (s.cache_capacity(), s.cached_rows(), s.dynamic_capacity())
    }
}
