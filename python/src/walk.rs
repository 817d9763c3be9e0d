//! `Graph.walk`: a library walk by name or a compiled `#[walk]` program, through the same job
//! seam as the CLI (so the same seed gives the same walks), into an int64 matrix padded with
//! -1, optionally with the ids of the edges taken.

use crate::errors;
use crate::graph::PyGraph;
use crate::ids;
use crate::program::{ProgramKind, PyProgram};
use crate::run::{Control, interruptible};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use rayon::prelude::*;
use wayfarer::gpu::Backend;
use wayfarer::job::{CompiledProgram, JobWalk, WalkJob};
use wayfarer::library::LibraryWalk;
use wayfarer::{CostRatio, NO_NODE, SamplerMode, Starts, WalkError, Walks};

/// The walk to run.
enum Chosen {
    Library(LibraryWalk),
    Program(CompiledProgram),
}

/// What a walk run hands back to Python.
type WalkOutput<'py> = (Bound<'py, PyArray2<i64>>, Option<Bound<'py, PyArray2<i64>>>, String, Vec<String>, Vec<String>);

/// Output slots are written per batch as they arrive: ids mapped, padding -1.
struct Collect<'g> {
    out: Vec<i64>,
    graph: &'g PyGraph,
    original: bool,
    nodes: Vec<u32>,
    keep_nodes: bool,
    /// The engine's record of each move's edge (CPU runs with `return_edges`).
    edges: Vec<u64>,
}

impl Collect<'_> {
    fn take(&mut self, batch: Walks) {
        let map = self.graph.graph.id_map();
        let original = self.original;
        let at = self.out.len();
        // Reserved for every walk before the run: this never reallocates.
        self.out.resize(at + batch.nodes.len(), -1);
        // In parallel: at GPU speeds, mapping ids on one thread costs more than the walks.
        self.out[at..].par_chunks_mut(1 << 16).zip(batch.nodes.par_chunks(1 << 16)).for_each(|(dst, src)| {
            for (d, &v) in dst.iter_mut().zip(src) {
                *d = match v {
                    NO_NODE => -1,
                    v if original => map.original(v) as i64,
                    v => v as i64,
                };
            }
        });
        if self.keep_nodes {
            self.nodes.extend_from_slice(&batch.nodes);
        }
        self.edges.extend_from_slice(&batch.edges);
    }
}

#[pymethods]
impl PyGraph {
    /// Runs a walk; see `wayfarer.Graph.walk` for the arguments.
    #[pyo3(signature = (walk, params, start, length, walks_per_node, seed, backend, sampler, return_edges, original_ids, threads, gpus, table_budget, progress))]
    #[allow(clippy::too_many_arguments)]
    fn walk<'py>(
        &self,
        py: Python<'py>,
        walk: &Bound<'py, PyAny>,
        params: Vec<(String, String)>,
        start: Option<PyReadonlyArray1<'py, i64>>,
        length: Option<u32>,
        walks_per_node: u32,
        seed: u64,
        backend: &str,
        sampler: &str,
        return_edges: bool,
        original_ids: bool,
        threads: Option<usize>,
        gpus: usize,
        table_budget: Option<u64>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<WalkOutput<'py>> {
        let g = &*self.graph;
        let backend: Backend = backend.parse().map_err(|e: String| errors::value(format!("backend: {e}")))?;
        let sampler: SamplerMode = sampler.parse().map_err(|e: String| errors::value(format!("sampler: {e}")))?;
        let chosen = if let Ok(name) = walk.extract::<String>() {
            Chosen::Library(LibraryWalk::from_name(&name, &params, g, false).map_err(|e| errors::value(e.to_string()))?)
        } else if let Ok(p) = walk.cast::<PyProgram>() {
            let p = p.get();
            p.expect(ProgramKind::Walk, "walk")?;
            Chosen::Program(p.with_values(&params)?)
        } else {
            return Err(errors::value("walk: give a library walk's name (wayfarer.walks()) or a program from wayfarer.compile"));
        };
        let anonymous = matches!(&chosen, Chosen::Library(w) if w.is_anonymous());
        let original = original_ids && !anonymous;
        if original {
            ids::check_fit(g)?;
        }
        let length = match length {
            Some(l) => l,
            None => match &chosen {
                Chosen::Library(w) => w.default_length(),
                Chosen::Program(c) => wayfarer_compiler::params::default_length(&c.program, &c.values).unwrap_or(80),
            },
        };
        if walks_per_node == 0 {
            return Err(errors::value("walks_per_node = 0: at least 1"));
        }
        let starts = match &start {
            None => Starts::EveryNode { per_node: walks_per_node },
            Some(s) => {
                let s = s.as_slice().map_err(|_| errors::value("start must be a contiguous 1-D array"))?;
                let nodes = ids::to_internal(g, s, "start", original_ids)?;
                let mut all = Vec::new();
                all.try_reserve_exact(nodes.len() * walks_per_node as usize)
                    .map_err(|_| errors::value("start x walks_per_node: too many walks"))?;
                for _ in 0..walks_per_node {
                    all.extend_from_slice(&nodes);
                }
                Starts::Nodes(all)
            }
        };
        let rows = starts.count(g.num_nodes());
        let stride = length as u64 + 1;
        let slots = rows.checked_mul(stride).filter(|&s| s.checked_mul(8).is_some_and(|b| b <= isize::MAX as u64));
        let Some(slots) = slots else {
            return Err(errors::value(format!("{rows} walks of {stride} slots do not fit in memory")));
        };
        let mut out = Vec::new();
        out.try_reserve_exact(slots as usize)
            .map_err(|_| pyo3::exceptions::PyMemoryError::new_err(format!("{rows} walks of {stride} slots need {} bytes", slots * 8)))?;
        if return_edges && anonymous {
            return Err(errors::value(
                "return_edges=True: anonymous walks hold first-visit indices, not nodes, so their edges are not defined",
            ));
        }
        // On the CPU the engine records the edge behind each move. A GPU run's edges are read
        // off its node sequence instead, which needs every move to follow an edge (a restart
        // or teleport does not: checked on the source text, where a false alarm only refuses)
        // and no parallel edges.
        let moves_without_edges = return_edges && {
            let source: Option<String> = match &chosen {
                Chosen::Library(w) => w.program().map(|(src, _)| src.to_string()),
                Chosen::Program(_) => walk.cast::<PyProgram>().ok().map(|p| p.get().source.clone()),
            };
            source.is_some_and(|src| src.contains("restart(") || src.contains("teleport("))
        };
        let mut collect = Collect { out, graph: self, original, nodes: Vec::new(), keep_nodes: false, edges: Vec::new() };
        let run = |control: &Control| -> PyResult<(String, Vec<String>, Vec<String>)> {
            let walk = match &chosen {
                Chosen::Library(w) => JobWalk::library(w),
                Chosen::Program(c) => JobWalk::program(c),
            };
            let mut job = WalkJob::new(g, walk);
            job.length = length;
            job.starts = starts;
            job.seed = seed;
            job.sampler = sampler;
            job.cost_ratio = CostRatio::Default;
            job.table_budget = table_budget;
            job.threads = threads;
            job.gpus = wayfarer::job::Gpus { count: gpus, ..Default::default() };
            job.progress = Some(&control.done);
            let selected = wayfarer::job::select(backend, &job).map_err(errors::walk)?;
            // The CPU and CUDA record each move's edge; wgpu's are read off the walks' nodes.
            if return_edges && matches!(selected.runner.kind(), Backend::Cpu | Backend::Cuda) {
                let moves = rows.saturating_mul(length as u64);
                collect.edges.try_reserve_exact(moves as usize).map_err(|_| {
                    pyo3::exceptions::PyMemoryError::new_err(format!(
                        "return_edges=True: {rows} walks of {length} moves need {} bytes",
                        moves.saturating_mul(8)
                    ))
                })?;
                job.record_edges = true;
            } else if return_edges {
                if moves_without_edges {
                    return Err(errors::value(
                        "return_edges=True on wgpu: this walk restarts or teleports (moves without an edge), which only the CPU \
                         and CUDA record; pass backend=\"cpu\" or \"cuda\"",
                    ));
                }
                ids::check_simple(g)?;
                collect.keep_nodes = true;
            }
            // On the CPU, small batches: an interrupt stops the run within one of them. A GPU
            // finishes a batch in milliseconds, and each costs a launch and a download.
            if selected.runner.kind() == Backend::Cpu {
                job.batch_bytes = 64 << 20;
            }
            let done = selected
                .runner
                .run(&job, &mut |batch| {
                    if control.cancelled() {
                        return Err(WalkError::Config("interrupted".into()));
                    }
                    collect.take(batch);
                    Ok(())
                })
                .map_err(errors::walk)?;
            Ok((done.report.summary(&done.backend), selected.notes, selected.warnings))
        };
        let (summary, notes, warnings) = interruptible(py, rows, progress.as_ref(), run)?;
        debug_assert_eq!(collect.out.len() as u64, slots);
        let edges = match (return_edges, collect.keep_nodes) {
            (false, _) => None,
            (true, false) => Some(ids::edges_recorded(self, &collect.edges)),
            (true, true) => Some(ids::edges_taken(self, &collect.nodes, stride as usize)?),
        };
        let walks = Array2::from_shape_vec((rows as usize, stride as usize), collect.out).map_err(|e| errors::value(e.to_string()))?;
        let edges = edges
            .map(|e| Array2::from_shape_vec((rows as usize, length as usize), e).map(|a| a.into_pyarray(py)))
            .transpose()
            .map_err(|e| errors::value(e.to_string()))?;
        Ok((walks.into_pyarray(py), edges, summary, notes, warnings))
    }
}
