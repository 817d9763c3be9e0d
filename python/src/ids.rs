//! Node and edge ids across the boundary: the caller's node ids (a file's own ids, `0..n`
//! for graphs built from arrays) in and out, and the ids of the edges walks take.

use crate::errors;
use crate::graph::PyGraph;
use pyo3::PyResult;
use rayon::prelude::*;
use wayfarer::graph::CsrGraph;
use wayfarer::{NO_EDGE, NO_NODE};

/// An error unless every original node id fits an int64.
pub fn check_fit(g: &CsrGraph) -> PyResult<()> {
    match g.id_map().max_original(g.num_nodes()) {
        Some(m) if m > i64::MAX as u64 => {
            Err(errors::value(format!("node id {m} does not fit an int64; pass ids=\"internal\" for wayfarer's ids 0..n")))
        }
        _ => Ok(()),
    }
}

/// The caller's node ids `ids` (named `name` in errors) as internal ids.
pub fn to_internal(g: &CsrGraph, ids: &[i64], name: &str, original: bool) -> PyResult<Vec<u32>> {
    let n = g.num_nodes();
    let map = g.id_map();
    ids.iter()
        .enumerate()
        .map(|(i, &v)| {
            let found = if v < 0 {
                None
            } else if original {
                map.internal(v as u64, n)
            } else {
                (v < n as i64).then_some(v as u32)
            };
            found.ok_or_else(|| {
                let space = if original { "node of the graph" } else { "internal id (0 <= id < num_nodes)" };
                errors::value(format!("{name}[{i}] = {v}: not a {space}"))
            })
        })
        .collect()
}

/// An error if the graph has parallel edges: then a walk's node sequence does not say which
/// of them it took.
pub fn check_simple(g: &CsrGraph) -> PyResult<()> {
    let parallel = (0..g.num_nodes() as u32).into_par_iter().find_first(|&v| g.neighbors(v).windows(2).any(|w| w[0] == w[1]));
    if let Some(v) = parallel {
        let d = g.neighbors(v).windows(2).find(|w| w[0] == w[1]).map_or(0, |w| w[0]);
        let map = g.id_map();
        return Err(errors::value(format!(
            "return_edges=True: the graph has parallel edges (e.g. {} -> {}), so a walk's nodes do not say which edge it took; \
             build the graph without them",
            map.original(v),
            map.original(d)
        )));
    }
    Ok(())
}

/// The caller's ids of the edges the engine recorded (`-1` where a move took none, and past a
/// walk's end).
pub fn edges_recorded(g: &PyGraph, edges: &[u64]) -> Vec<i64> {
    edges.par_iter().map(|&e| if e == NO_EDGE { -1 } else { g.edge_id(e as usize) as i64 }).collect()
}

/// The caller's id of the edge behind each step of each walk (`-1` past a walk's end):
/// `(walks, stride - 1)` values, row-major. Needs a graph without parallel edges
/// ([`check_simple`]); a step between nodes without an edge (a restart) is `-1`.
pub fn edges_taken(g: &PyGraph, nodes: &[u32], stride: usize) -> PyResult<Vec<i64>> {
    let csr = &*g.graph;
    let steps = stride - 1;
    let mut out = vec![-1i64; nodes.len() / stride * steps];
    if steps == 0 {
        return Ok(out);
    }
    out.par_chunks_mut(steps).zip(nodes.par_chunks(stride)).for_each(|(row, walk)| {
        for (slot, pair) in row.iter_mut().zip(walk.windows(2)) {
            if pair[1] == NO_NODE {
                break;
            }
            if let Some(pos) = csr.find_edge(pair[0], pair[1]) {
                *slot = g.edge_id(pos) as i64;
            }
        }
    });
    Ok(out)
}
