//! `Graph.sample_neighbors` and `Graph.triangles`: GNN neighbour sampling (DGL-style blocks)
//! and exact triangle counting through the same job seams as the CLI.

use crate::errors;
use crate::graph::PyGraph;
use crate::ids;
use crate::program::{ProgramKind, PyProgram};
use crate::run::interruptible;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use wayfarer::gpu::Backend;
use wayfarer::job::sample::SampleJob;
use wayfarer::job::triangles::{EdgeMask, TriangleJob};
use wayfarer::sample::{Policy, Replacement, SampleConfig};
use wayfarer::triangles::Detail;

/// One block as arrays: `(src_nodes, num_dst, edge_src, edge_dst, edge_ids)`.
type BlockArrays<'py> = (Bound<'py, PyArray1<i64>>, usize, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);
/// One mini-batch: its seeds and its blocks, input layer first.
type BatchArrays<'py> = (Bound<'py, PyArray1<i64>>, Vec<BlockArrays<'py>>);

#[pymethods]
impl PyGraph {
    /// Samples neighbours of `seeds`, layer by layer; see `wayfarer.Graph.sample_neighbors`.
    #[pyo3(signature = (seeds, fanouts, replace, weighted, policy, params, seed, batch_size, backend, original_ids))]
    #[allow(clippy::too_many_arguments)]
    fn sample_neighbors<'py>(
        &self,
        py: Python<'py>,
        seeds: PyReadonlyArray1<'py, i64>,
        fanouts: Vec<u32>,
        replace: bool,
        weighted: bool,
        policy: Option<PyRef<'py, PyProgram>>,
        params: Vec<(String, String)>,
        seed: u64,
        batch_size: Option<usize>,
        backend: &str,
        original_ids: bool,
    ) -> PyResult<(Vec<BatchArrays<'py>>, String)> {
        let g = &*self.graph;
        let backend: Backend = backend.parse().map_err(|e: String| errors::value(format!("backend: {e}")))?;
        if original_ids {
            ids::check_fit(g)?;
        }
        let seeds = seeds.as_slice().map_err(|_| errors::value("seeds must be a contiguous 1-D array"))?;
        let seeds = ids::to_internal(g, seeds, "seeds", original_ids)?;
        if weighted && policy.is_some() {
            return Err(errors::value("weighted=True and policy=...: give one (the policy's weight replaces the edge weight)"));
        }
        if !params.is_empty() && policy.is_none() {
            return Err(errors::value(format!("parameter `{}` is for a policy; there is no policy", params[0].0)));
        }
        let weights = g.weights().is_some();
        let jit = policy.as_ref().map(|p| p.jit(ProgramKind::Sampler, "policy", &params, weights).map(|(_, jit)| jit)).transpose()?;
        let cfg = SampleConfig {
            fanouts,
            batch_size: batch_size.unwrap_or(seeds.len().max(1)),
            replacement: if replace { Replacement::With } else { Replacement::Without },
            policy: match (&jit, weighted) {
                (Some(_), _) => Policy::Custom,
                (None, true) => Policy::EdgeWeight,
                (None, false) => Policy::Uniform,
            },
            seed,
            // The backend's default (CPU: 1, GPU: 8).
            super_batch: 0,
        };
        let job = SampleJob { graph: g, seeds: &seeds, cfg, policy: jit.as_ref(), gpu: Default::default() };
        let (batches, backend_name) = interruptible(py, 0, None, |_| {
            let chosen = wayfarer::job::sample::select(backend, &job).map_err(errors::walk)?;
            let done = chosen.runner.sample(&job).map_err(errors::walk)?;
            Ok((done.batches, done.backend))
        })?;
        let map = g.id_map();
        let node_ids =
            |v: &[u32]| -> Vec<i64> { v.iter().map(|&x| if original_ids { map.original(x) as i64 } else { x as i64 }).collect() };
        let out = batches
            .into_iter()
            .map(|mb| {
                let blocks = mb
                    .blocks
                    .into_iter()
                    .map(|b| {
                        (
                            node_ids(&b.src_nodes).into_pyarray(py),
                            b.num_dst,
                            b.edge_src.iter().map(|&x| x as i64).collect::<Vec<_>>().into_pyarray(py),
                            b.edge_dst.iter().map(|&x| x as i64).collect::<Vec<_>>().into_pyarray(py),
                            b.edge_ids.iter().map(|&e| self.edge_id(e as usize) as i64).collect::<Vec<_>>().into_pyarray(py),
                        )
                    })
                    .collect();
                (node_ids(&mb.seeds).into_pyarray(py), blocks)
            })
            .collect();
        Ok((out, backend_name))
    }

    /// Counts triangles (of the symmetrized graph when it is directed); `mask` keeps only the
    /// triangles whose three edges a `#[mask]` program keeps. Returns the total, per-node
    /// counts (or `None`) and the summary.
    #[pyo3(signature = (mask, params, per_node, backend, gpus))]
    #[allow(clippy::type_complexity)]
    fn triangles<'py>(
        &self,
        py: Python<'py>,
        mask: Option<PyRef<'py, PyProgram>>,
        params: Vec<(String, String)>,
        per_node: bool,
        backend: &str,
        gpus: usize,
    ) -> PyResult<(u64, Option<Bound<'py, PyArray1<i64>>>, String)> {
        let g = &*self.graph;
        let backend: Backend = backend.parse().map_err(|e: String| errors::value(format!("backend: {e}")))?;
        if !params.is_empty() && mask.is_none() {
            return Err(errors::value(format!("parameter `{}` is for a mask; there is no mask", params[0].0)));
        }
        let compiled = mask.as_ref().map(|m| m.jit(ProgramKind::Mask, "mask", &params, g.weights().is_some())).transpose()?;
        let job = TriangleJob {
            graph: g,
            mask: compiled.as_ref().map(|(c, jit)| EdgeMask { jit, program: c }),
            detail: if per_node { Detail::PerNode } else { Detail::Total },
            gpus: wayfarer::job::Gpus { count: gpus, ..Default::default() },
            share: wayfarer::triangles::Share::WHOLE,
        };
        if backend == Backend::Wgpu {
            return Err(errors::value("backend: wgpu runs walks only; triangles run on cpu or cuda"));
        }
        let (counts, summary) = interruptible(py, 0, None, |_| {
            let chosen = wayfarer::job::triangles::select(backend, &job).map_err(errors::walk)?;
            let done = chosen.runner.count(&job).map_err(errors::walk)?;
            Ok((done.counts, done.backend))
        })?;
        let per = per_node.then(|| counts.per_node.iter().map(|&x| x as i64).collect::<Vec<_>>().into_pyarray(py));
        Ok((counts.total, per, summary))
    }
}
