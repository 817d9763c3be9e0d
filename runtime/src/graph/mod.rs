//! Graphs: a CSR store with sorted adjacency, its loaders, writers and generators.
//!
//! A [`CsrGraph`] has `u64` row offsets and `u32` node ids. Every adjacency row is sorted by
//! destination (ties broken by weight, label and timestamp), and the optional per-edge arrays
//! (weights, labels, timestamps) are permuted along with it, so a binary search over a row is
//! always a correct adjacency test. Original node ids from the input are kept in an [`IdMap`],
//! so outputs can be written in the user's ids.

pub(crate) mod build;
pub mod edge_filter;
pub mod generate;
pub mod intersect;
mod text;
mod wfg;

pub use build::{BuildOptions, Dedup, EdgeRecord};
pub use generate::{LabelSpec, WeightSpec};
pub use text::{EdgeListOptions, MatrixMarketInfo};
pub use wfg::{WFG_MAGIC, WFG_VERSION};

use crate::error::GraphError;
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

pub use wayfarer_core::NO_NODE;

/// A read-only array that is either owned or a view into a memory-mapped `.wfg` file.
///
/// Its start and length are kept beside the storage, so reading it costs no test of which
/// storage it is (walks read `offsets` several times a step: the test was a fifth of a
/// second-order PageRank step's instructions).
pub struct Buf<T: bytemuck::Pod> {
    inner: BufInner<T>,
    ptr: *const T,
    len: usize,
}

// SAFETY: a Buf only reads through `ptr`, which points into storage the Buf owns (a Vec's heap
// buffer, or an Arc'd read-only mapping) and that is itself Send and Sync.
unsafe impl<T: bytemuck::Pod + Send> Send for Buf<T> {}
unsafe impl<T: bytemuck::Pod + Sync> Sync for Buf<T> {}

/// The storage a [`Buf`]'s pointer reads: held, never read through here.
enum BufInner<T> {
    Owned(#[allow(dead_code)] Vec<T>),
    Mapped(#[allow(dead_code)] Arc<memmap2::Mmap>),
}

impl<T: bytemuck::Pod> Buf<T> {
    /// An owned buffer.
    pub fn owned(v: Vec<T>) -> Self {
        // The Vec's heap buffer does not move when the Vec does, and is never changed.
        let (ptr, len) = (v.as_ptr(), v.len());
        Buf { inner: BufInner::Owned(v), ptr, len }
    }

    /// A view of `len` elements at `byte_offset` of a mapping; `None` if out of range or
    /// misaligned.
    pub(crate) fn mapped(map: Arc<memmap2::Mmap>, byte_offset: usize, len: usize) -> Option<Self> {
        let size = std::mem::size_of::<T>();
        let end = byte_offset.checked_add(len.checked_mul(size)?)?;
        if end > map.len() || (map.as_ptr() as usize + byte_offset) % std::mem::align_of::<T>() != 0 {
            return None;
        }
        // SAFETY: the range was just checked to lie inside the mapping, aligned for T.
        let ptr = unsafe { map.as_ptr().add(byte_offset) } as *const T;
        Some(Buf { inner: BufInner::Mapped(map), ptr, len })
    }

    /// Whether the data lives in a memory-mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.inner, BufInner::Mapped(_))
    }
}

impl<T: bytemuck::Pod> Deref for Buf<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` and `len` describe the storage `inner` owns: an owned Vec's buffer, or
        // a range of the mapping that `mapped` checked lies inside it and is aligned for T. T is
        // Pod, so any bytes are a valid T; the storage is read-only and lives as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: bytemuck::Pod + std::fmt::Debug> std::fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buf(len={}, mapped={})", self.len(), self.is_mapped())
    }
}

/// How internal node ids relate to the ids of the input.
#[derive(Debug)]
pub enum IdMap {
    /// Internal id `i` is original id `i`.
    Identity,
    /// Internal id `i` is original id `table[i]`; the table is strictly increasing, so the
    /// compaction keeps the input's id order.
    Table(Buf<u64>),
}

impl IdMap {
    /// Whether internal id `i` is original id `i` for every node.
    pub fn is_identity(&self) -> bool {
        match self {
            IdMap::Identity => true,
            IdMap::Table(t) => t.iter().enumerate().all(|(i, &id)| id == i as u64),
        }
    }

    /// The original id of internal node `v`.
    #[inline]
    pub fn original(&self, v: u32) -> u64 {
        match self {
            IdMap::Identity => v as u64,
            IdMap::Table(t) => t[v as usize],
        }
    }

    /// The internal id of an original id, if that node exists.
    pub fn internal(&self, original: u64, num_nodes: usize) -> Option<u32> {
        match self {
            IdMap::Identity => (original < num_nodes as u64).then_some(original as u32),
            IdMap::Table(t) => t.binary_search(&original).ok().map(|i| i as u32),
        }
    }

    /// The largest original id, if there are nodes.
    pub fn max_original(&self, num_nodes: usize) -> Option<u64> {
        match self {
            IdMap::Identity => num_nodes.checked_sub(1).map(|x| x as u64),
            IdMap::Table(t) => t.last().copied(),
        }
    }
}

/// Whether a graph's edges come in both directions by construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orientation {
    /// Edges are as given.
    Directed,
    /// Every edge `u -> v` has its reverse `v -> u` (the graph was symmetrized).
    Undirected,
}

/// A per-node `f32` property with a name (e.g. a timestamp or a score that walks can read).
#[derive(Debug)]
pub struct NodeProperty {
    /// The property's name.
    pub name: String,
    /// One value per node.
    pub values: Buf<f32>,
}

/// A graph in compressed sparse row form. See the [module docs](self).
#[derive(Debug)]
pub struct CsrGraph {
    pub(crate) offsets: Buf<u64>,
    pub(crate) targets: Buf<u32>,
    pub(crate) weights: Option<Buf<f32>>,
    pub(crate) labels: Option<Buf<u32>>,
    pub(crate) timestamps: Option<Buf<i64>>,
    pub(crate) node_props: Vec<NodeProperty>,
    pub(crate) ids: IdMap,
    pub(crate) orientation: Orientation,
    /// Per-row filters for `has_edge`, built on request ([`CsrGraph::prepare_edge_filter`]).
    pub(crate) edge_filter: std::sync::OnceLock<edge_filter::EdgeFilter>,
    /// Whether some row holds an entry twice (parallel edges): set by the loaders' validation
    /// pass where they have one, else found on first use ([`CsrGraph::has_repeated_entries`]).
    pub(crate) repeats: std::sync::OnceLock<bool>,
}

/// The arrays of a CSR graph, for building one by hand with [`CsrGraph::from_parts`].
#[derive(Debug, Default)]
pub struct CsrParts {
    /// Row offsets, `num_nodes + 1` entries, non-decreasing, starting at 0.
    pub offsets: Vec<u64>,
    /// Edge destinations.
    pub targets: Vec<u32>,
    /// Optional edge weights (finite, >= 0).
    pub weights: Option<Vec<f32>>,
    /// Optional integer edge labels.
    pub labels: Option<Vec<u32>>,
    /// Optional edge timestamps.
    pub timestamps: Option<Vec<i64>>,
    /// Optional original ids (strictly increasing), one per node.
    pub original_ids: Option<Vec<u64>>,
}

impl CsrGraph {
    /// Builds a graph from raw arrays. Rows need not be sorted: they are sorted here, with
    /// the edge arrays carried along. Errors name the first broken invariant.
    pub fn from_parts(parts: CsrParts, orientation: Orientation) -> Result<Self, GraphError> {
        let n = parts.offsets.len().checked_sub(1).ok_or_else(|| GraphError::Invalid("offsets is empty".into()))?;
        let m = parts.targets.len();
        if parts.offsets[0] != 0 || parts.offsets[n] != m as u64 {
            return Err(GraphError::Invalid(format!("offsets must start at 0 and end at the edge count {m}")));
        }
        if let Some(i) = parts.offsets.windows(2).position(|w| w[0] > w[1]) {
            return Err(GraphError::Invalid(format!("offsets decrease at node {i}")));
        }
        if n >= NO_NODE as usize {
            return Err(GraphError::Invalid(format!("{n} nodes: at most {} are supported", NO_NODE)));
        }
        if let Some(e) = parts.targets.iter().position(|&t| t as usize >= n) {
            return Err(GraphError::Invalid(format!("edge {e} points to node {} of {n}", parts.targets[e])));
        }
        for (name, len) in [
            ("weights", parts.weights.as_ref().map(Vec::len)),
            ("labels", parts.labels.as_ref().map(Vec::len)),
            ("timestamps", parts.timestamps.as_ref().map(Vec::len)),
        ] {
            if let Some(len) = len
                && len != m
            {
                return Err(GraphError::Invalid(format!("{name} has {len} entries for {m} edges")));
            }
        }
        if let Some(w) = &parts.weights
            && let Some(e) = w.iter().position(|x| !x.is_finite() || *x < 0.0)
        {
            return Err(GraphError::Invalid(format!("edge {e} has weight {}: weights must be finite and >= 0", w[e])));
        }
        let ids = match parts.original_ids {
            None => IdMap::Identity,
            Some(t) => {
                if t.len() != n || t.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(GraphError::Invalid("original ids must be strictly increasing, one per node".into()));
                }
                if t.last() == Some(&u64::MAX) {
                    return Err(GraphError::Invalid(
                        "original id 2^64 - 1 is reserved: it pads early-ended walks in uint64 outputs".into(),
                    ));
                }
                IdMap::Table(Buf::owned(t))
            }
        };
        let mut g = CsrGraph {
            offsets: Buf::owned(parts.offsets),
            targets: Buf::owned(parts.targets),
            weights: parts.weights.map(Buf::owned),
            labels: parts.labels.map(Buf::owned),
            timestamps: parts.timestamps.map(Buf::owned),
            node_props: Vec::new(),
            ids,
            orientation,
            edge_filter: Default::default(),
            repeats: Default::default(),
        };
        build::sort_rows_owned(&mut g);
        Ok(g)
    }

    /// Number of nodes.
    #[inline(always)]
    pub fn num_nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of directed edge entries (an undirected edge counts twice).
    #[inline(always)]
    pub fn num_edges(&self) -> u64 {
        self.targets.len() as u64
    }

    /// Row offsets (`num_nodes + 1` entries).
    #[inline(always)]
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Edge destinations, row by row, each row sorted.
    #[inline(always)]
    pub fn targets(&self) -> &[u32] {
        &self.targets
    }

    /// Edge weights, if the graph has them.
    #[inline(always)]
    pub fn weights(&self) -> Option<&[f32]> {
        self.weights.as_deref()
    }

    /// Integer edge labels, if the graph has them.
    #[inline(always)]
    pub fn labels(&self) -> Option<&[u32]> {
        self.labels.as_deref()
    }

    /// Edge timestamps, if the graph has them.
    #[inline(always)]
    pub fn timestamps(&self) -> Option<&[i64]> {
        self.timestamps.as_deref()
    }

    /// Per-node properties.
    pub fn node_properties(&self) -> &[NodeProperty] {
        &self.node_props
    }

    /// A node property by name.
    pub fn node_property(&self, name: &str) -> Option<&[f32]> {
        self.node_props.iter().find(|p| p.name == name).map(|p| &*p.values)
    }

    /// Adds (or replaces) a per-node property.
    pub fn set_node_property(&mut self, name: &str, values: Vec<f32>) -> Result<(), GraphError> {
        if values.len() != self.num_nodes() {
            return Err(GraphError::param(name, format!("{} values for {} nodes", values.len(), self.num_nodes())));
        }
        if name.is_empty() || name.len() > wfg::MAX_NAME_LEN {
            return Err(GraphError::param(name, format!("a property name has 1 to {} bytes", wfg::MAX_NAME_LEN)));
        }
        self.node_props.retain(|p| p.name != name);
        self.node_props.push(NodeProperty { name: name.to_string(), values: Buf::owned(values) });
        Ok(())
    }

    /// Reads a per-node property from a text file of `id value` lines in original ids and adds
    /// it under `name`; nodes the file does not list get `default`. Returns how many nodes the
    /// file set.
    pub fn load_node_property(&mut self, name: &str, path: impl AsRef<Path>, default: f32) -> Result<usize, GraphError> {
        let (values, set) = text::read_node_property(self, path.as_ref(), default)?;
        self.set_node_property(name, values)?;
        Ok(set)
    }

    /// Replaces (or removes) the edge weights. Weights must be finite and >= 0.
    pub fn set_weights(&mut self, weights: Option<Vec<f32>>) -> Result<(), GraphError> {
        if let Some(w) = &weights {
            if w.len() as u64 != self.num_edges() {
                return Err(GraphError::Invalid(format!("{} weights for {} edges", w.len(), self.num_edges())));
            }
            if let Some(e) = w.iter().position(|x| !x.is_finite() || *x < 0.0) {
                return Err(GraphError::Invalid(format!("weight {} of edge {e} is not finite and >= 0", w[e])));
            }
        }
        self.weights = weights.map(Buf::owned);
        Ok(())
    }

    /// Replaces (or removes) the edge labels.
    pub fn set_labels(&mut self, labels: Option<Vec<u32>>) -> Result<(), GraphError> {
        if let Some(l) = &labels
            && l.len() as u64 != self.num_edges()
        {
            return Err(GraphError::Invalid(format!("{} labels for {} edges", l.len(), self.num_edges())));
        }
        self.labels = labels.map(Buf::owned);
        Ok(())
    }

    /// Replaces (or removes) the edge timestamps.
    pub fn set_timestamps(&mut self, timestamps: Option<Vec<i64>>) -> Result<(), GraphError> {
        if let Some(t) = &timestamps
            && t.len() as u64 != self.num_edges()
        {
            return Err(GraphError::Invalid(format!("{} timestamps for {} edges", t.len(), self.num_edges())));
        }
        self.timestamps = timestamps.map(Buf::owned);
        Ok(())
    }

    /// How internal ids map to the input's ids.
    pub fn id_map(&self) -> &IdMap {
        &self.ids
    }

    /// Whether the graph was symmetrized.
    pub fn orientation(&self) -> Orientation {
        self.orientation
    }

    /// Out-degree of `v`.
    #[inline(always)]
    pub fn degree(&self, v: u32) -> u64 {
        let v = v as usize;
        self.offsets[v + 1] - self.offsets[v]
    }

    /// The degree a walk's `degree(v)` reads: `v`'s out-degree saturated to `u32`, and 0 when
    /// `v` is not a node (`NO_NODE`, say). One bounds check for both ends of the row.
    #[inline(always)]
    pub fn walk_degree(&self, v: u32) -> u32 {
        match self.offsets.get(v as usize..v as usize + 2) {
            Some(&[a, b]) => (b - a).min(u32::MAX as u64) as u32,
            _ => 0,
        }
    }

    /// The edge index range of `v`'s row.
    #[inline(always)]
    pub fn row(&self, v: u32) -> std::ops::Range<usize> {
        let v = v as usize;
        self.offsets[v] as usize..self.offsets[v + 1] as usize
    }

    /// The sorted neighbors of `v`.
    #[inline(always)]
    pub fn neighbors(&self, v: u32) -> &[u32] {
        &self.targets[self.row(v)]
    }

    /// The index of the first edge `u -> v`, if there is one ([`intersect::search`] on the
    /// sorted row: the primitive triangle counting shares).
    #[inline]
    pub fn find_edge(&self, u: u32, v: u32) -> Option<usize> {
        let r = self.row(u);
        intersect::search(&self.targets[r.clone()], v).map(|i| r.start + i)
    }

    /// The index of the first edge to `v` in the row `lo..hi` (a node's whole row), as
    /// [`CsrGraph::find_edge`] finds it; with the edge filter built, most absent edges are
    /// answered without searching the row.
    #[inline]
    pub fn find_in_row(&self, lo: usize, hi: usize, v: u32) -> Option<usize> {
        if let Some(f) = self.edge_filter.get() {
            return if f.may_have(lo as u64, hi as u64, v) { f.find(&self.targets, lo, hi, v) } else { None };
        }
        intersect::search(&self.targets[lo..hi], v).map(|i| lo + i)
    }

    /// Whether there is an edge `u -> v` (`u` must be a node). With the edge filter built,
    /// most absent edges are answered without searching `u`'s row.
    #[inline]
    pub fn has_edge(&self, u: u32, v: u32) -> bool {
        if let Some(f) = self.edge_filter.get() {
            let (lo, hi) = (self.offsets[u as usize], self.offsets[u as usize + 1]);
            return f.may_have(lo, hi, v) && f.find(&self.targets, lo as usize, hi as usize, v).is_some();
        }
        self.find_edge(u, v).is_some()
    }

    /// Prefetches what `has_edge(u, v)` reads first (the filter's word), for loops that know
    /// their queries a little ahead. A hint: nothing happens without filters or for a `u`
    /// that is not a node.
    #[inline]
    pub fn prefetch_has_edge(&self, u: u32, v: u32) {
        if let (Some(f), Some(r)) = (self.edge_filter.get(), self.offsets.get(u as usize..u as usize + 2)) {
            f.prefetch(r[0], r[1], v);
        }
    }

    /// Builds the per-row edge filters that [`CsrGraph::has_edge`] consults (once; later
    /// calls return at once). The runtimes call it before walks that call `has_edge`. Memory:
    /// about one byte per edge ([`CsrGraph::edge_filter_bytes`]).
    pub fn prepare_edge_filter(&self) {
        self.edge_filter.get_or_init(|| edge_filter::EdgeFilter::build(&self.offsets, &self.targets));
    }

    /// Whether some row holds the same target twice (parallel edges). Found once, by the
    /// loader's validation pass or by a pass over the rows on the first call.
    pub fn has_repeated_entries(&self) -> bool {
        *self.repeats.get_or_init(|| {
            use rayon::prelude::*;
            let (off, tg) = (&self.offsets, &self.targets);
            (0..self.num_nodes())
                .into_par_iter()
                .with_min_len(1024)
                .any(|v| tg[off[v] as usize..off[v + 1] as usize].windows(2).any(|w| w[0] == w[1]))
        })
    }

    /// The edge filters' memory in bytes (0 before [`CsrGraph::prepare_edge_filter`]).
    pub fn edge_filter_bytes(&self) -> usize {
        self.edge_filter.get().map_or(0, |f| f.bytes())
    }

    /// The largest label + 1, or 0 without labels.
    pub fn num_labels(&self) -> u32 {
        self.labels().map(|l| l.iter().copied().max().map_or(0, |m| m + 1)).unwrap_or(0)
    }

    /// Loads a graph, choosing the format by extension: `.wfg` (memory-mapped), `.mtx`
    /// (Matrix Market), anything else a text edge list with default options. Text input may be
    /// gzip-compressed (`.mtx.gz`, `.txt.gz`).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, GraphError> {
        let path = path.as_ref();
        if path.is_dir() {
            return Err(GraphError::Parameter {
                name: "graph".into(),
                message: format!("{}: is a directory; give a .wfg, .mtx or text edge list file", path.display()),
            });
        }
        match format_extension(path) {
            Some("wfg") => Self::load_wfg(path),
            Some("mtx") => Self::load_matrix_market(path),
            _ => Self::load_edge_list(path, &EdgeListOptions::default()),
        }
    }

    /// Loads a `.wfg` file, memory-mapped, verifying its checksum and invariants.
    pub fn load_wfg(path: impl AsRef<Path>) -> Result<Self, GraphError> {
        wfg::load(path.as_ref())
    }

    /// Reads a `.wfg` image from memory (used for the embedded default graph).
    pub fn from_wfg_bytes(bytes: &[u8], name: &Path) -> Result<Self, GraphError> {
        wfg::from_bytes(bytes, name)
    }

    /// Writes the graph as `.wfg`.
    pub fn save_wfg(&self, path: impl AsRef<Path>) -> Result<(), GraphError> {
        wfg::save(self, crate::atomic_file::AtomicFile::create(path.as_ref())?)
    }
    /// [`CsrGraph::save_wfg`] into a file created earlier (before the work that made the graph).
    pub fn save_wfg_into(&self, file: crate::atomic_file::AtomicFile) -> Result<(), GraphError> {
        wfg::save(self, file)
    }

    /// Writes the graph as a text edge list in original ids (`source target [weight] [label]
    /// [timestamp]`), which [`CsrGraph::load_edge_list`] reads back.
    pub fn save_edge_list(&self, path: impl AsRef<Path>) -> Result<(), GraphError> {
        text::save_edge_list(self, crate::atomic_file::AtomicFile::create(path.as_ref())?)
    }
    /// [`CsrGraph::save_edge_list`] into a file created earlier.
    pub fn save_edge_list_into(&self, file: crate::atomic_file::AtomicFile) -> Result<(), GraphError> {
        text::save_edge_list(self, file)
    }

    /// Loads a SNAP-style text edge list.
    pub fn load_edge_list(path: impl AsRef<Path>, opts: &EdgeListOptions) -> Result<Self, GraphError> {
        text::load_edge_list(path.as_ref(), opts)
    }

    /// Parses a text edge list held in memory; `name` is used in error messages.
    pub fn parse_edge_list(data: &[u8], name: &Path, opts: &EdgeListOptions) -> Result<Self, GraphError> {
        text::parse_edge_list(data, name, opts)
    }

    /// Loads a Matrix Market coordinate file.
    pub fn load_matrix_market(path: impl AsRef<Path>) -> Result<Self, GraphError> {
        text::load_matrix_market(path.as_ref())
    }

    /// Parses a Matrix Market file held in memory.
    pub fn parse_matrix_market(data: &[u8], name: &Path) -> Result<Self, GraphError> {
        text::parse_matrix_market(data, name)
    }

    /// Builds a graph of `num_nodes` nodes (ids `0..num_nodes`) from edges in memory, with the
    /// same options as the loaders (symmetrize, parallel edges, self loops, which attributes to
    /// keep). Ids out of range and bad weights are errors naming the edge.
    pub fn from_edges(num_nodes: usize, edges: &[EdgeRecord], opts: &BuildOptions) -> Result<Self, GraphError> {
        if num_nodes > NO_NODE as usize {
            return Err(GraphError::Invalid(format!("{num_nodes} nodes: at most {} fit 32-bit node ids", NO_NODE)));
        }
        for (i, e) in edges.iter().enumerate() {
            if e.src as usize >= num_nodes || e.dst as usize >= num_nodes {
                return Err(GraphError::Invalid(format!("edge {i} ({} -> {}) names a node outside 0..{num_nodes}", e.src, e.dst)));
            }
            if opts.weights && !(e.weight.is_finite() && e.weight >= 0.0) {
                return Err(GraphError::Invalid(format!("edge {i} has weight {}: weights must be finite and >= 0", e.weight)));
            }
        }
        build::build(num_nodes, &build::SliceSource(edges), opts, IdMap::Identity)
    }

    /// A hash of the graph's contents (structure, weights, labels, timestamps, node properties
    /// and original ids): what a cache of measurements on this graph is keyed by. Reads every
    /// array once (CRC-32 at memory speed).
    pub fn fingerprint(&self) -> u64 {
        let mut h = crate::hash::Fnv64::default();
        h.write(b"csr1").write(&(self.num_nodes() as u64).to_le_bytes());
        h.write_bulk(bytemuck::cast_slice(self.offsets())).write_bulk(bytemuck::cast_slice(self.targets()));
        let opt = |h: &mut crate::hash::Fnv64, tag: &[u8], bytes: Option<&[u8]>| {
            h.write(tag);
            if let Some(b) = bytes {
                h.write_bulk(b);
            }
        };
        opt(&mut h, b"w", self.weights().map(bytemuck::cast_slice));
        opt(&mut h, b"l", self.labels().map(bytemuck::cast_slice));
        opt(&mut h, b"t", self.timestamps().map(bytemuck::cast_slice));
        for p in &self.node_props {
            h.write(p.name.as_bytes()).write_bulk(bytemuck::cast_slice(&p.values));
        }
        match &self.ids {
            IdMap::Table(t) => h.write(b"ids").write_bulk(bytemuck::cast_slice(t)),
            IdMap::Identity => h.write(b"identity"),
        };
        h.finish()
    }

    /// Approximate bytes held by the graph's arrays.
    pub fn memory_bytes(&self) -> u64 {
        let m = self.num_edges();
        let n = self.num_nodes() as u64;
        8 * (n + 1)
            + 4 * m
            + self.weights.as_ref().map_or(0, |_| 4 * m)
            + self.labels.as_ref().map_or(0, |_| 4 * m)
            + self.timestamps.as_ref().map_or(0, |_| 8 * m)
            + self.node_props.len() as u64 * 4 * n
            + if matches!(self.ids, IdMap::Table(_)) { 8 * n } else { 0 }
    }
}

/// The reference interpreter's view of the graph (`wayfarer-compiler`'s `eval`).
impl wayfarer_core::GraphView for CsrGraph {
    fn num_nodes(&self) -> usize {
        CsrGraph::num_nodes(self)
    }
    fn row(&self, v: u32) -> std::ops::Range<usize> {
        CsrGraph::row(self, v)
    }
    fn degree(&self, v: u32) -> u64 {
        CsrGraph::degree(self, v)
    }
    fn targets(&self) -> &[u32] {
        CsrGraph::targets(self)
    }
    fn weights(&self) -> Option<&[f32]> {
        CsrGraph::weights(self)
    }
    fn labels(&self) -> Option<&[u32]> {
        CsrGraph::labels(self)
    }
    fn timestamps(&self) -> Option<&[i64]> {
        CsrGraph::timestamps(self)
    }
    fn node_property(&self, name: &str) -> Option<&[f32]> {
        CsrGraph::node_property(self, name)
    }
    fn has_edge(&self, u: u32, v: u32) -> bool {
        CsrGraph::has_edge(self, u, v)
    }
}

/// The extension that names a graph file's format, looking through a trailing `.gz`
/// (`graph.mtx.gz` is a Matrix Market file).
pub fn format_extension(path: &Path) -> Option<&str> {
    let ext = path.extension()?.to_str()?;
    if ext.eq_ignore_ascii_case("gz") {
        return Path::new(path.file_stem()?).extension()?.to_str();
    }
    Some(ext)
}
