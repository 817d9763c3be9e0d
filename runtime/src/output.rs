//! Writing walks: `.npy` (padded matrix) and text (one walk per line, what word2vec reads).

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
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
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
    let format = OutputFormat::for_path(path)?;
    let file = std::fs::File::create(path).map_err(|e| GraphError::io(path, e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let res = match format {
        OutputFormat::Npy => write_npy(walks, graph, ids, &mut w),
        OutputFormat::Text => write_text(walks, graph, ids, &mut w),
    };
    res.and_then(|_| w.flush()).map_err(|e| GraphError::io(path, e))
}

/// Writes the `.npy` form to any writer.
pub fn write_npy(walks: &Walks, graph: &CsrGraph, ids: IdSpace, w: &mut impl Write) -> std::io::Result<()> {
    let map = graph.id_map();
    let wide = ids == IdSpace::Original && map.max_original(graph.num_nodes()).is_some_and(|m| m >= NO_NODE as u64);
    let (rows, cols) = (walks.len(), walks.stride);
    if wide {
        w.write_all(&npy_header("<u8", rows, cols))?;
        let mut buf = Vec::with_capacity(cols * 8);
        for row in walks.nodes.chunks(cols.max(1)) {
            buf.clear();
            for &v in row {
                let x = if v == NO_NODE { NPY_SENTINEL_U64 } else { map.original(v) };
                buf.extend_from_slice(&x.to_le_bytes());
            }
            w.write_all(&buf)?;
        }
    } else {
        w.write_all(&npy_header("<u4", rows, cols))?;
        if ids == IdSpace::Internal || matches!(map, crate::graph::IdMap::Identity) {
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
}
