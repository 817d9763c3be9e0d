//! Rust errors as Python exceptions: bad input and bad parameters are `ValueError`, files
//! `OSError`, a walk program that does not compile `wayfarer.CompileError` (line, column and
//! the rustc-style text), a run interrupted or failing `RuntimeError`.

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use wayfarer::{GraphError, WalkError};
use wayfarer_compiler::Diagnostics;

/// A graph error: files are `OSError` (`FileNotFoundError` when missing), the rest `ValueError`.
pub fn graph(e: GraphError) -> PyErr {
    match &e {
        GraphError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(e.to_string()),
        GraphError::Io { .. } => PyOSError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// A walk error: parameters, starts and missing graph data are `ValueError`; a failing
/// program or backend is `RuntimeError`.
pub fn walk(e: WalkError) -> PyErr {
    match &e {
        WalkError::Parameter { .. } | WalkError::MissingGraphData { .. } | WalkError::BadStart { .. } => {
            PyValueError::new_err(e.to_string())
        }
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

/// A CUDA backend error: the engine's own errors as [`walk`] maps them, the rest (driver,
/// memory, compilation) `RuntimeError`.
pub fn cuda(e: wayfarer::gpu::CudaError) -> PyErr {
    match e {
        wayfarer::gpu::CudaError::Walk(w) => walk(w),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// `ValueError(message)`.
pub fn value(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// `wayfarer.CompileError` for the compiler's diagnostics on `source` (named `path` in the
/// text): the message is every error rendered rustc-style; `.errors` lists
/// `(line, column, message, help)` with the line from 1 and the column from 1.
pub fn compile(py: Python<'_>, d: &Diagnostics, source: &str, path: &str) -> PyErr {
    let rendered: String = d.0.iter().map(|x| x.render(source, path)).collect();
    let errors: Vec<(usize, usize, String, Option<String>)> =
        d.0.iter()
            .map(|x| {
                let (line, column) = match x.at {
                    Some((l, c, _)) => (l, c),
                    None => {
                        let s = x.span.start();
                        (s.line, s.column)
                    }
                };
                (line, column + 1, x.message.clone(), x.help.clone())
            })
            .collect();
    let class = py.import("wayfarer._errors").and_then(|m| m.getattr("CompileError"));
    match (class, PyList::new(py, errors)) {
        (Ok(class), Ok(list)) => PyErr::from_value(match class.call1((rendered.clone(), list)) {
            Ok(v) => v,
            Err(e) => return e,
        }),
        // The package's Python half is missing (the extension imported alone).
        _ => PyValueError::new_err(rendered),
    }
}
