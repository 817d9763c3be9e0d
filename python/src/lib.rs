//! `wayfarer._native`: the engine behind the `wayfarer` Python package (PyO3, abi3). The
//! package's Python half (`python/wayfarer/`) converts torch tensors, scipy matrices and
//! networkx graphs, and shapes the results; everything that walks, samples or counts is here.

mod aggregate;
mod device;
mod edges;
mod errors;
mod features;
mod graph;
mod ids;
mod program;
mod run;
mod sample;
mod walk;

use pyo3::prelude::*;

/// The built-in walks: `(name, parameters and their defaults; what it does)`.
#[pyfunction]
fn walks() -> Vec<(&'static str, String)> {
    wayfarer::library::catalog()
}

/// Whether a CUDA GPU is usable (driver and NVRTC load, device 0 opens), with the reason
/// when not: what `backend="auto"` decides by.
#[pyfunction]
fn cuda_status() -> (bool, String) {
    match wayfarer::gpu::CudaDevice::open(0) {
        Ok(d) => (true, format!("{} ({})", d.name, d.arch)),
        Err(e) => (false, e.to_string()),
    }
}

/// The engine's version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The `wayfarer._native` module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<graph::PyGraph>()?;
    m.add_class::<program::PyProgram>()?;
    m.add_class::<features::PyFeatureStore>()?;
    m.add_function(wrap_pyfunction!(program::compile, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate::gather_reduce_f32, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate::gather_reduce_f64, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate::gather_reduce_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate::aggregation_plan_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate::dense_rows, m)?)?;
    m.add_function(wrap_pyfunction!(walks, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_status, m)?)?;
    Ok(())
}
