//! Writing walks: `.npy` (padded matrix) and text (one walk per line, what word2vec reads).

pub use crate::atomic_file::AtomicFile;
use crate::error::GraphError;
use crate::graph::{CsrGraph, NO_NODE};
pub use crate::npy::{NpyArray, NpzWriter, write_npz, write_npz_into};
use crate::run::Walks;
use std::io::Write;
use std::path::Path;

/// Which ids to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IdSpace {
    /// The input's own ids (as in the edge list the graph came from).
    #[default]
    Original,
    /// wayfarer's compact internal ids `0..n`.
    Internal,
}

/// The padding value of `.npy` outputs when they are `uint32` (internal ids, or original ids
/// below 2^32 - 1): `4294967295`, i.e. [`NO_NODE`].
pub const NPY_SENTINEL_U32: u32 = NO_NODE;
/// The padding value of `uint64` `.npy` outputs (original ids that need 64 bits).
pub const NPY_SENTINEL_U64: u64 = u64::MAX;

/// The output format, chosen from a file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// `.npy`: a `(walks, length + 1)` matrix padded with the sentinel.
    Npy,
    /// `.txt`: one walk per line, space-separated; early-ended walks are simply shorter.
    Text,
}

impl OutputFormat {
    /// The format for a path, by extension.
    pub fn for_path(path: &Path) -> Result<Self, GraphError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("npy") => Ok(OutputFormat::Npy),
            Some("txt") | Some("walks") => Ok(OutputFormat::Text),
            _ => Err(GraphError::param("output", format!("{}: unknown extension; use .npy or .txt", path.display()))),
        }
    }
}

/// Writes walks to `path` in the format its extension names.
pub fn write_walks(walks: &Walks, graph: &CsrGraph, ids: IdSpace, path: &Path) -> Result<(), GraphError> {
    let mut w = WalkWriter::create(path, graph, ids, walks.len(), walks.stride)?;
    w.write(walks)?;
    w.finish()
}

/// Writes walks to a file batch by batch, in order, so outputs larger than memory never exist
/// whole (the GPU streams its batches here). The shape is fixed up front: the `.npy` header
/// needs it, and [`WalkWriter::finish`] checks that exactly that many walks arrived.
pub struct WalkWriter<'g> {
    w: AtomicFile,
    path: std::path::PathBuf,
    graph: &'g CsrGraph,
    ids: IdSpace,
    /// The `.npy` body's state; `None` for text.
    npy: Option<NpyBody>,
    rows: usize,
    stride: usize,
    written: usize,
}

impl<'g> WalkWriter<'g> {
    /// Creates `path` for `rows` walks of `stride` slots (length + 1) and writes the header.
    /// The walks go to a temporary file beside it, renamed to `path` by [`WalkWriter::finish`]
    /// (see [`AtomicFile`]): an interrupted or failed run leaves no file that looks complete.
    pub fn create(path: &Path, graph: &'g CsrGraph, ids: IdSpace, rows: usize, stride: usize) -> Result<Self, GraphError> {
        Self::create_in(AtomicFile::create(path)?, graph, ids, rows, stride)
    }

    /// [`WalkWriter::create`] into a file created earlier (before the work, so a bad path
    /// fails at once). A `.npy` larger than the free space of its file system is an error here,
    /// before any walk is made.
    pub fn create_in(mut w: AtomicFile, graph: &'g CsrGraph, ids: IdSpace, rows: usize, stride: usize) -> Result<Self, GraphError> {
        let path = w.path().to_path_buf();
        let format = OutputFormat::for_path(&path)?;
        let wide = format == OutputFormat::Npy
            && ids == IdSpace::Original
            && graph.id_map().max_original(graph.num_nodes()).is_some_and(|m| m >= NO_NODE as u64);
        if format == OutputFormat::Npy {
            let bytes = rows as u128 * stride as u128 * if wide { 8 } else { 4 };
            if let Some(free) = w.free_space()
                && bytes > free as u128
            {
                return Err(GraphError::param(
                    "output",
                    format!(
                        "{}: {rows} walks of {stride} nodes take {}, and its file system has {} free",
                        path.display(),
                        crate::memory::human(bytes),
                        crate::memory::human(free as u128)
                    ),
                ));
            }
        }
        let npy = match format {
            OutputFormat::Npy => Some(NpyBody::begin(&mut w, wide, rows, stride).map_err(|e| GraphError::io(&path, e))?),
            OutputFormat::Text => None,
        };
        Ok(WalkWriter { w, path, graph, ids, npy, rows, stride, written: 0 })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The walks the file is declared to hold.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Appends the next walks.
    pub fn write(&mut self, walks: &Walks) -> Result<(), GraphError> {
        if walks.stride != self.stride || self.written + walks.len() > self.rows {
            return Err(GraphError::param(
                "output",
                format!(
                    "{}: {} walks of {} slots do not fit the declared {} x {} ({} written)",
                    self.path.display(),
                    walks.len(),
                    walks.stride,
                    self.rows,
                    self.stride,
                    self.written
                ),
            ));
        }
        let res = match &mut self.npy {
            Some(body) => body.rows(walks, self.graph, self.ids, &mut self.w),
            None => write_text(walks, self.graph, self.ids, &mut self.w),
        };
        res.map_err(|e| GraphError::io(&self.path, e))?;
        self.written += walks.len();
        Ok(())
    }

    /// Flushes the file and renames it into place; an error (and no file) if fewer walks than
    /// declared were written.
    pub fn finish(self) -> Result<(), GraphError> {
        if self.written != self.rows {
            return Err(GraphError::param(
                "output",
                format!("{}: {} of the declared {} walks were written", self.path.display(), self.written, self.rows),
            ));
        }
        if let Some(body) = self.npy {
            body.finish().map_err(|e| GraphError::io(&self.path, e))?;
        }
        self.w.commit()
    }
}

/// Writes the `.npy` form to any writer.
pub fn write_npy(walks: &Walks, graph: &CsrGraph, ids: IdSpace, w: &mut impl Write) -> std::io::Result<()> {
    let wide = ids == IdSpace::Original && graph.id_map().max_original(graph.num_nodes()).is_some_and(|m| m >= NO_NODE as u64);
    let mut body = NpyBody::begin(w, wide, walks.len(), walks.stride)?;
    body.rows(walks, graph, ids, w)?;
    body.finish()
}

/// A walk matrix's `.npy` body: `uint64` ids when wide, else `uint32`, little-endian. npyz
/// writes the header; the rows are written in bulk (npyz's writer takes one element per call,
/// about 50 instructions each: a tenth of a second per 10^8 ids).
struct NpyBody {
    wide: bool,
    expected: u64,
    written: u64,
}

impl NpyBody {
    /// Writes the header of a `rows x stride` matrix to `w`.
    fn begin(w: &mut impl Write, wide: bool, rows: usize, stride: usize) -> std::io::Result<Self> {
        let shape = [rows as u64, stride as u64];
        let h = if wide { crate::npy::header::<u64>(&shape)? } else { crate::npy::header::<u32>(&shape)? };
        w.write_all(&h)?;
        Ok(NpyBody { wide, expected: rows as u64 * stride as u64, written: 0 })
    }

    /// Appends `walks`, padding with the sentinel of the width.
    fn rows(&mut self, walks: &Walks, graph: &CsrGraph, ids: IdSpace, w: &mut impl Write) -> std::io::Result<()> {
        let map = graph.id_map();
        let internal = ids == IdSpace::Internal || matches!(map, crate::graph::IdMap::Identity);
        const CHUNK: usize = 1 << 16;
        let mut buf: Vec<u8> = Vec::with_capacity(CHUNK * if self.wide { 8 } else { 4 });
        for chunk in walks.nodes.chunks(CHUNK) {
            buf.clear();
            if self.wide {
                for &v in chunk {
                    let x = if v == NO_NODE { NPY_SENTINEL_U64 } else { map.original(v) };
                    buf.extend_from_slice(&x.to_le_bytes());
                }
            } else if internal {
                // Internal ids are the values themselves, padding included (NO_NODE is the sentinel).
                for &v in chunk {
                    buf.extend_from_slice(&v.to_le_bytes());
                }
            } else {
                for &v in chunk {
                    let x = if v == NO_NODE { NPY_SENTINEL_U32 } else { map.original(v) as u32 };
                    buf.extend_from_slice(&x.to_le_bytes());
                }
            }
            w.write_all(&buf)?;
        }
        self.written += walks.nodes.len() as u64;
        Ok(())
    }

    /// Checks that the declared shape was filled.
    fn finish(self) -> std::io::Result<()> {
        if self.written != self.expected {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} of the declared {} ids were written", self.written, self.expected),
            ));
        }
        Ok(())
    }
}

/// Writes the text form to any writer.
pub fn write_text(walks: &Walks, graph: &CsrGraph, ids: IdSpace, w: &mut impl Write) -> std::io::Result<()> {
    let map = graph.id_map();
    let mut line = String::with_capacity(walks.stride * 8);
    for i in 0..walks.len() {
        line.clear();
        for (k, &v) in walks.walk(i).iter().enumerate() {
            if k > 0 {
                line.push(' ');
            }
            let x = if ids == IdSpace::Internal { v as u64 } else { map.original(v) };
            line.push_str(&x.to_string());
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// A per-node output (`triangles --per-node`, `partition -o`), created before the work. So
/// that no one reads a value at the wrong node, a `.npz` holds two arrays, `ids` (the nodes'
/// original ids, uint64) and `values`, in internal order; a `.npy` holds the values alone and is
/// accepted only when position `i` is node `i` (the graph's ids are exactly `0..n`).
pub struct PerNodeFile {
    file: AtomicFile,
    npz: bool,
}

impl PerNodeFile {
    /// Creates the output for `graph`'s nodes; `flag` names the option in errors.
    pub fn create(path: &Path, graph: &CsrGraph, flag: &str) -> Result<Self, GraphError> {
        let npz = match path.extension().and_then(|e| e.to_str()) {
            Some("npz") => true,
            Some("npy") => false,
            _ => return Err(GraphError::param(flag, format!("{}: per-node outputs are .npz (ids and values) or .npy", path.display()))),
        };
        if !npz && !graph.id_map().is_identity() {
            return Err(GraphError::param(
                flag,
                format!(
                    "{}: this graph's node ids are not 0..{} (its input had gaps or other ids), so a .npy indexed by position \
                     would not be indexed by node id; write a .npz, which holds `ids` and `values`",
                    path.display(),
                    graph.num_nodes()
                ),
            ));
        }
        Ok(PerNodeFile { file: AtomicFile::create(path)?, npz })
    }

    /// Writes one value per node (internal order) and commits the file.
    pub fn write(self, graph: &CsrGraph, values: NpyArray) -> Result<(), GraphError> {
        if self.npz {
            let map = graph.id_map();
            let ids = NpyArray::U64((0..graph.num_nodes() as u32).map(|v| map.original(v)).collect());
            write_npz_into(self.file, &[("ids".into(), ids), ("values".into(), values)])
        } else {
            values.write_into(self.file)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_batches_give_the_same_file_as_one_write() {
        let parts = crate::graph::CsrParts { offsets: vec![0, 1, 2, 2], targets: vec![1, 0], ..Default::default() };
        let g = CsrGraph::from_parts(parts, crate::graph::Orientation::Directed).unwrap();
        let walks =
            Walks { stride: 3, nodes: vec![0, 1, 0, 1, 0, 1, 2, NO_NODE, NO_NODE, 0, 1, 0], lengths: vec![3, 3, 1, 3], edges: Vec::new() };
        let dir = std::env::temp_dir().join(format!("wayfarer-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for ext in ["npy", "txt"] {
            let whole = dir.join(format!("whole.{ext}"));
            let parts = dir.join(format!("parts.{ext}"));
            write_walks(&walks, &g, IdSpace::Internal, &whole).unwrap();
            let mut w = WalkWriter::create(&parts, &g, IdSpace::Internal, 4, 3).unwrap();
            for (a, b) in [(0, 1), (1, 3), (3, 4)] {
                let batch = Walks {
                    stride: 3,
                    nodes: walks.nodes[a * 3..b * 3].to_vec(),
                    lengths: walks.lengths[a..b].to_vec(),
                    edges: Vec::new(),
                };
                w.write(&batch).unwrap();
            }
            w.finish().unwrap();
            assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&parts).unwrap(), "{ext}");
            // Too few, too many, or the wrong shape is an error naming the file.
            let mut short = WalkWriter::create(&parts, &g, IdSpace::Internal, 5, 3).unwrap();
            short.write(&walks).unwrap();
            assert!(short.finish().unwrap_err().to_string().contains("4 of the declared 5"));
            let mut over = WalkWriter::create(&parts, &g, IdSpace::Internal, 3, 3).unwrap();
            assert!(over.write(&walks).unwrap_err().to_string().contains("parts."));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
