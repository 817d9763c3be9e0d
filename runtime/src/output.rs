//! Writing walks: `.npy` (padded matrix) and text (one walk per line, what word2vec reads).

pub use crate::atomic_file::AtomicFile;
use crate::engine::Walks;
use crate::error::GraphError;
use crate::graph::{CsrGraph, NO_NODE};
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

fn npy_header(descr: &str, rows: usize, cols: usize) -> Vec<u8> {
    npy_header_shape(descr, &format!("({rows}, {cols})"))
}

/// The `.npy` header for `shape` as Python writes it (`(n,)`, `(rows, cols)`), padded to 64.
fn npy_header_shape(descr: &str, shape: &str) -> Vec<u8> {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = 10 + dict.len() + 1;
    let total = unpadded.div_ceil(64) * 64;
    let mut h = Vec::with_capacity(total);
    h.extend_from_slice(b"\x93NUMPY\x01\x00");
    h.extend_from_slice(&((total - 10) as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h.resize(total - 1, b' ');
    h.push(b'\n');
    h
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
    format: OutputFormat,
    w: AtomicFile,
    path: std::path::PathBuf,
    graph: &'g CsrGraph,
    ids: IdSpace,
    wide: bool,
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
            w.write_all(&npy_header(if wide { "<u8" } else { "<u4" }, rows, stride)).map_err(|e| GraphError::io(&path, e))?;
        }
        Ok(WalkWriter { format, w, path, graph, ids, wide, rows, stride, written: 0 })
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
        let res = match self.format {
            OutputFormat::Npy => npy_rows(walks, self.graph, self.ids, self.wide, &mut self.w),
            OutputFormat::Text => write_text(walks, self.graph, self.ids, &mut self.w),
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
        self.w.commit()
    }
}

/// Writes the `.npy` form to any writer.
pub fn write_npy(walks: &Walks, graph: &CsrGraph, ids: IdSpace, w: &mut impl Write) -> std::io::Result<()> {
    let wide = ids == IdSpace::Original && graph.id_map().max_original(graph.num_nodes()).is_some_and(|m| m >= NO_NODE as u64);
    w.write_all(&npy_header(if wide { "<u8" } else { "<u4" }, walks.len(), walks.stride))?;
    npy_rows(walks, graph, ids, wide, w)
}

/// The `.npy` body: `uint64` ids when `wide`, else `uint32`.
fn npy_rows(walks: &Walks, graph: &CsrGraph, ids: IdSpace, wide: bool, w: &mut impl Write) -> std::io::Result<()> {
    let map = graph.id_map();
    let cols = walks.stride;
    if wide {
        let mut buf = Vec::with_capacity(cols * 8);
        for row in walks.nodes.chunks(cols.max(1)) {
            buf.clear();
            for &v in row {
                let x = if v == NO_NODE { NPY_SENTINEL_U64 } else { map.original(v) };
                buf.extend_from_slice(&x.to_le_bytes());
            }
            w.write_all(&buf)?;
        }
    } else if ids == IdSpace::Internal || matches!(map, crate::graph::IdMap::Identity) {
        for chunk in walks.nodes.chunks(1 << 16) {
            let mut buf = Vec::with_capacity(chunk.len() * 4);
            for &v in chunk {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            w.write_all(&buf)?;
        }
    } else {
        let mut buf = Vec::with_capacity(cols * 4);
        for row in walks.nodes.chunks(cols.max(1)) {
            buf.clear();
            for &v in row {
                let x = if v == NO_NODE { NPY_SENTINEL_U32 } else { map.original(v) as u32 };
                buf.extend_from_slice(&x.to_le_bytes());
            }
            w.write_all(&buf)?;
        }
    }
    Ok(())
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

/// A 1-D array for an `.npz` file.
#[derive(Clone, Debug, PartialEq)]
pub enum NpyArray {
    /// `uint8`.
    U8(Vec<u8>),
    /// `uint32`.
    U32(Vec<u32>),
    /// `uint64`.
    U64(Vec<u64>),
    /// `float64`.
    F64(Vec<f64>),
}

impl NpyArray {
    /// The array as a complete `.npy` file.
    pub fn npy(&self) -> Vec<u8> {
        let (descr, len) = match self {
            NpyArray::U8(v) => ("|u1", v.len()),
            NpyArray::U32(v) => ("<u4", v.len()),
            NpyArray::U64(v) => ("<u8", v.len()),
            NpyArray::F64(v) => ("<f8", v.len()),
        };
        let mut b = npy_header_shape(descr, &format!("({len},)"));
        b.reserve(len * 8);
        match self {
            NpyArray::U8(v) => b.extend_from_slice(v),
            NpyArray::U32(v) => v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes())),
            NpyArray::U64(v) => v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes())),
            NpyArray::F64(v) => v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes())),
        }
        b
    }

    /// Writes the array as a `.npy` file.
    pub fn write(&self, path: &Path) -> Result<(), GraphError> {
        self.write_into(AtomicFile::create(path)?)
    }

    /// Writes the array as a `.npy` file into `out` (created before the work) and commits it.
    pub fn write_into(&self, mut out: AtomicFile) -> Result<(), GraphError> {
        out.write_all(&self.npy()).map_err(|e| GraphError::io(out.path(), e))?;
        out.commit()
    }
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

/// Writes named 1-D arrays as an `.npz` (an uncompressed zip of `.npy` files, what
/// `numpy.savez` writes and `numpy.load` reads). Zip limits apply: each array under 4 GiB,
/// fewer than 65,535 arrays; beyond them this is an error, not a corrupt file.
pub fn write_npz(path: &Path, arrays: &[(String, NpyArray)]) -> Result<(), GraphError> {
    write_npz_into(AtomicFile::create(path)?, arrays)
}

/// [`write_npz`] into `out` (created before the work), committed when complete.
pub fn write_npz_into(mut w: AtomicFile, arrays: &[(String, NpyArray)]) -> Result<(), GraphError> {
    let path = &w.path().to_path_buf();
    let too_big = |what: String| GraphError::param("output", format!("{}: {what}", path.display()));
    if arrays.len() >= 0xFFFF {
        return Err(too_big(format!("{} arrays do not fit one .npz (at most 65,534): use larger batches", arrays.len())));
    }
    let mut central = Vec::new();
    let mut offset = 0u64;
    let io = |e| GraphError::io(path, e);
    for (name, array) in arrays {
        let data = array.npy();
        let fname = format!("{name}.npy");
        if data.len() as u64 >= u32::MAX as u64 || offset >= u32::MAX as u64 {
            return Err(too_big(format!("`{name}` does not fit a .npz without zip64 (4 GiB)")));
        }
        let crc = crc32fast::hash(&data);
        let mut local = Vec::with_capacity(30 + fname.len());
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        for x in [20u16, 0, 0, 0, 0x21] {
            local.extend_from_slice(&x.to_le_bytes());
        }
        for x in [crc, data.len() as u32, data.len() as u32] {
            local.extend_from_slice(&x.to_le_bytes());
        }
        local.extend_from_slice(&(fname.len() as u16).to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes());
        local.extend_from_slice(fname.as_bytes());
        w.write_all(&local).map_err(io)?;
        w.write_all(&data).map_err(io)?;
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        for x in [20u16, 20, 0, 0, 0, 0x21] {
            central.extend_from_slice(&x.to_le_bytes());
        }
        for x in [crc, data.len() as u32, data.len() as u32] {
            central.extend_from_slice(&x.to_le_bytes());
        }
        for x in [fname.len() as u16, 0, 0, 0, 0] {
            central.extend_from_slice(&x.to_le_bytes());
        }
        central.extend_from_slice(&0u32.to_le_bytes());
        central.extend_from_slice(&(offset as u32).to_le_bytes());
        central.extend_from_slice(fname.as_bytes());
        offset += (local.len() + data.len()) as u64;
    }
    if offset + central.len() as u64 >= u32::MAX as u64 {
        return Err(too_big("the .npz exceeds 4 GiB (zip64 is not written): use fewer batches per file".into()));
    }
    w.write_all(&central).map_err(io)?;
    let mut end = Vec::with_capacity(22);
    end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    for x in [0u16, 0, arrays.len() as u16, arrays.len() as u16] {
        end.extend_from_slice(&x.to_le_bytes());
    }
    end.extend_from_slice(&(central.len() as u32).to_le_bytes());
    end.extend_from_slice(&(offset as u32).to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    w.write_all(&end).map_err(io)?;
    w.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_aligned_and_parseable() {
        let h = npy_header("<u4", 3, 81);
        assert_eq!(h.len() % 64, 0);
        assert_eq!(&h[..6], b"\x93NUMPY");
        let s = std::str::from_utf8(&h[10..]).unwrap();
        assert!(s.contains("'shape': (3, 81)") && s.ends_with('\n'));
    }

    #[test]
    fn streamed_batches_give_the_same_file_as_one_write() {
        let parts = crate::graph::CsrParts { offsets: vec![0, 1, 2, 2], targets: vec![1, 0], ..Default::default() };
        let g = CsrGraph::from_parts(parts, crate::graph::Orientation::Directed).unwrap();
        let walks = Walks { stride: 3, nodes: vec![0, 1, 0, 1, 0, 1, 2, NO_NODE, NO_NODE, 0, 1, 0], lengths: vec![3, 3, 1, 3] };
        let dir = std::env::temp_dir().join(format!("wayfarer-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for ext in ["npy", "txt"] {
            let whole = dir.join(format!("whole.{ext}"));
            let parts = dir.join(format!("parts.{ext}"));
            write_walks(&walks, &g, IdSpace::Internal, &whole).unwrap();
            let mut w = WalkWriter::create(&parts, &g, IdSpace::Internal, 4, 3).unwrap();
            for (a, b) in [(0, 1), (1, 3), (3, 4)] {
                let batch = Walks { stride: 3, nodes: walks.nodes[a * 3..b * 3].to_vec(), lengths: walks.lengths[a..b].to_vec() };
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
