//! Graphs from arrays: an edge list (COO) or CSR arrays as numpy hands them over, checked
//! entry by entry (errors name the array and the position), built into wayfarer's CSR with
//! each CSR entry's input edge id kept, so walks and samples can report the caller's edge ids.

use crate::errors::value;
use pyo3::PyResult;
use rayon::prelude::*;
use wayfarer::NO_NODE;
use wayfarer::graph::{CsrGraph, CsrParts, Orientation};

/// An edge list's columns, as the caller passed them (any attribute may be absent).
pub struct EdgeColumns<'a> {
    /// Sources, with how errors name an entry (`edge_index[0, {}]`).
    pub src: (&'a [i64], &'a str),
    /// Destinations.
    pub dst: (&'a [i64], &'a str),
    /// Weights (finite, >= 0).
    pub weight: Option<&'a [f32]>,
    /// Labels (0 ..= 2^32 - 2).
    pub label: Option<&'a [i64]>,
    /// Timestamps.
    pub time: Option<&'a [i64]>,
}

/// A built graph and, per CSR entry, the id of the input edge it came from.
pub struct Built {
    /// The graph.
    pub graph: CsrGraph,
    /// CSR position -> input edge id.
    pub edge_ids: Vec<u64>,
}

/// `name[i]` with `{}` replaced by the position.
fn at(name: &str, i: usize) -> String {
    name.replace("{}", &i.to_string())
}

/// Checks the columns and returns the node count (given, or one past the largest id).
fn check(c: &EdgeColumns, num_nodes: Option<u64>) -> PyResult<usize> {
    let m = c.src.0.len();
    let lengths = [
        (c.dst.1, Some(c.dst.0.len())),
        ("edge_weight", c.weight.map(<[f32]>::len)),
        ("edge_label", c.label.map(<[i64]>::len)),
        ("edge_time", c.time.map(<[i64]>::len)),
    ];
    for (name, len) in lengths {
        if let Some(len) = len
            && len != m
        {
            let name = name.split('[').next().unwrap_or(name);
            return Err(value(format!("{name} has {len} entries for {m} edges")));
        }
    }
    if let Some(n) = num_nodes
        && n > NO_NODE as u64
    {
        return Err(value(format!("num_nodes = {n}: at most {NO_NODE} nodes fit wayfarer's 32-bit node ids")));
    }
    let mut max = -1i64;
    for (ids, name) in [c.src, c.dst] {
        if let Some(i) = ids.iter().position(|&v| v < 0) {
            return Err(value(format!("{} = {}: node ids must be >= 0", at(name, i), ids[i])));
        }
        if let Some(n) = num_nodes
            && let Some(i) = ids.iter().position(|&v| v as u64 >= n)
        {
            return Err(value(format!("{} = {}: not below num_nodes = {n}", at(name, i), ids[i])));
        }
        max = max.max(ids.par_iter().copied().max().unwrap_or(-1));
    }
    let n = match num_nodes {
        Some(n) => n as usize,
        None => (max + 1) as usize,
    };
    if n > NO_NODE as usize {
        return Err(value(format!("node id {max}: at most {NO_NODE} nodes fit wayfarer's 32-bit node ids")));
    }
    if let Some(w) = c.weight
        && let Some(i) = w.iter().position(|x| !x.is_finite() || *x < 0.0)
    {
        return Err(value(format!("edge_weight[{i}] = {}: weights must be finite and >= 0", w[i])));
    }
    if let Some(l) = c.label
        && let Some(i) = l.iter().position(|&x| x < 0 || x >= u32::MAX as i64)
    {
        return Err(value(format!("edge_label[{i}] = {}: labels must be in 0 ..= {}", l[i], u32::MAX - 1)));
    }
    Ok(n)
}

/// Builds the graph: with `undirected`, every edge `u -> v` also gives `v -> u` (a self loop
/// once), both carrying the input edge's id and attributes. Parallel edges are kept. Rows are
/// sorted by destination (then weight, label, time, input id), as wayfarer's loaders sort them.
pub fn build(c: &EdgeColumns, num_nodes: Option<u64>, undirected: bool) -> PyResult<Built> {
    let n = check(c, num_nodes)?;
    let m = c.src.0.len();
    let (src, dst) = (c.src.0, c.dst.0);
    // Entries: the input edges, then the reverses of the non-loops.
    let reversed: Vec<u64> = if undirected { (0..m as u64).filter(|&e| src[e as usize] != dst[e as usize]).collect() } else { Vec::new() };
    let total = m
        .checked_add(reversed.len())
        .filter(|&t| (t as u128) * 24 < isize::MAX as u128)
        .ok_or_else(|| value(format!("{m} edges: too many to hold")))?;
    let entry = |k: usize| -> (u32, u32, u64) {
        if k < m {
            (src[k] as u32, dst[k] as u32, k as u64)
        } else {
            let e = reversed[k - m] as usize;
            (dst[e] as u32, src[e] as u32, e as u64)
        }
    };
    // Counting sort by source, then each row sorted by (destination, attributes, id).
    let mut offsets = vec![0u64; n + 1];
    for k in 0..total {
        offsets[entry(k).0 as usize + 1] += 1;
    }
    for v in 0..n {
        offsets[v + 1] += offsets[v];
    }
    let mut next: Vec<u64> = offsets[..n].to_vec();
    let mut order = vec![0u64; total];
    for k in 0..total {
        let s = entry(k).0 as usize;
        order[next[s] as usize] = k as u64;
        next[s] += 1;
    }
    drop(next);
    let key = |k: u64| {
        let (_, d, e) = entry(k as usize);
        let e_ = e as usize;
        (d, c.weight.map_or(0, |w| w[e_].to_bits()), c.label.map_or(0, |l| l[e_] as u32), c.time.map_or(0, |t| t[e_]), e)
    };
    let mut rows: Vec<&mut [u64]> = Vec::with_capacity(n);
    let mut rest = order.as_mut_slice();
    for v in 0..n {
        let (row, tail) = rest.split_at_mut((offsets[v + 1] - offsets[v]) as usize);
        rows.push(row);
        rest = tail;
    }
    rows.into_par_iter().for_each(|row| {
        if row.len() > 1 {
            row.sort_unstable_by_key(|&k| key(k));
        }
    });
    let edge_ids: Vec<u64> = order.par_iter().map(|&k| entry(k as usize).2).collect();
    let targets: Vec<u32> = order.par_iter().map(|&k| entry(k as usize).1).collect();
    let weights = c.weight.map(|w| edge_ids.par_iter().map(|&e| w[e as usize]).collect());
    let labels = c.label.map(|l| edge_ids.par_iter().map(|&e| l[e as usize] as u32).collect());
    let timestamps = c.time.map(|t| edge_ids.par_iter().map(|&e| t[e as usize]).collect());
    drop(order);
    let parts = CsrParts { offsets, targets, weights, labels, timestamps, original_ids: None };
    let orientation = if undirected { Orientation::Undirected } else { Orientation::Directed };
    let graph = CsrGraph::from_parts(parts, orientation).map_err(crate::errors::graph)?;
    Ok(Built { graph, edge_ids })
}

/// CSR arrays as a `src` column: checks `indptr` (starts at 0, never decreases, ends at the
/// number of `indices`) and expands it.
pub fn csr_sources(indptr: &[i64], num_indices: usize) -> PyResult<Vec<i64>> {
    let Some(&last) = indptr.last() else {
        return Err(value("indptr is empty: it has num_nodes + 1 entries"));
    };
    if indptr[0] != 0 {
        return Err(value(format!("indptr[0] = {}: it must be 0", indptr[0])));
    }
    if let Some(i) = indptr.windows(2).position(|w| w[1] < w[0]) {
        return Err(value(format!("indptr[{}] = {} < indptr[{i}] = {}: indptr must not decrease", i + 1, indptr[i + 1], indptr[i])));
    }
    if last as u64 != num_indices as u64 {
        return Err(value(format!("indptr[{}] = {last}: it must equal the number of indices, {num_indices}", indptr.len() - 1)));
    }
    let mut src = Vec::with_capacity(num_indices);
    for (v, w) in indptr.windows(2).enumerate() {
        src.extend(std::iter::repeat_n(v as i64, (w[1] - w[0]) as usize));
    }
    Ok(src)
}
