//! `.wfg`: wayfarer's versioned binary graph format, read by memory-mapping.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `\x89WFG\r\n\x1a\n` (catches text-mode and truncation mangling, as PNG's does) |
//! | 8..12 | format version (`u32`, currently 1) |
//! | 12..16 | number of sections |
//! | 16..24 | nodes (`u64`) |
//! | 24..32 | edge entries (`u64`) |
//! | 32..36 | flags: bit 0 = undirected |
//! | 36..40 | CRC-32 of every byte after the 64-byte header |
//! | 40..48 | total file length |
//! | 48..60 | reserved, zero |
//! | 60..64 | CRC-32 of bytes 0..60 |
//!
//! Then one 64-byte directory entry per section — kind `u32`, element type `u32`, byte offset
//! `u64`, element count `u64`, name (40 bytes, UTF-8, NUL-padded; node properties only) — and
//! the sections themselves, each aligned to 64 bytes so they can be used in place.
//! Sections: row offsets (`u64`, n+1), targets (`u32`, m), and optionally weights (`f32`, m),
//! labels (`u32`, m), timestamps (`i64`, m), original ids (`u64`, n), node properties (`f32`, n).
//! A loaded file is checked in full (checksums, then every CSR invariant) before use.

use super::{Buf, CsrGraph, IdMap, NodeProperty, Orientation};
use crate::error::{GraphError, Location};
use rayon::prelude::*;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// The 8-byte magic at the start of every `.wfg` file.
pub const WFG_MAGIC: [u8; 8] = *b"\x89WFG\r\n\x1a\n";
/// The format version this build writes and reads.
pub const WFG_VERSION: u32 = 1;
pub(crate) const MAX_NAME_LEN: usize = 40;
const HEADER: usize = 64;
const ENTRY: usize = 64;
const ALIGN: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
enum Kind {
    Offsets = 1,
    Targets = 2,
    Weights = 3,
    Labels = 4,
    Timestamps = 5,
    OriginalIds = 6,
    NodeProperty = 7,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
enum Elem {
    U32 = 1,
    U64 = 2,
    F32 = 3,
    I64 = 4,
}

struct Section<'a> {
    kind: Kind,
    elem: Elem,
    name: &'a str,
    bytes: &'a [u8],
    count: u64,
}

fn sections(g: &CsrGraph) -> Vec<Section<'_>> {
    let mut s = vec![
        Section {
            kind: Kind::Offsets,
            elem: Elem::U64,
            name: "",
            bytes: bytemuck::cast_slice(g.offsets()),
            count: g.offsets().len() as u64,
        },
        Section { kind: Kind::Targets, elem: Elem::U32, name: "", bytes: bytemuck::cast_slice(g.targets()), count: g.num_edges() },
    ];
    if let Some(w) = g.weights() {
        s.push(Section { kind: Kind::Weights, elem: Elem::F32, name: "", bytes: bytemuck::cast_slice(w), count: w.len() as u64 });
    }
    if let Some(l) = g.labels() {
        s.push(Section { kind: Kind::Labels, elem: Elem::U32, name: "", bytes: bytemuck::cast_slice(l), count: l.len() as u64 });
    }
    if let Some(t) = g.timestamps() {
        s.push(Section { kind: Kind::Timestamps, elem: Elem::I64, name: "", bytes: bytemuck::cast_slice(t), count: t.len() as u64 });
    }
    if let IdMap::Table(t) = &g.ids {
        s.push(Section { kind: Kind::OriginalIds, elem: Elem::U64, name: "", bytes: bytemuck::cast_slice(t), count: t.len() as u64 });
    }
    for p in &g.node_props {
        s.push(Section {
            kind: Kind::NodeProperty,
            elem: Elem::F32,
            name: &p.name,
            bytes: bytemuck::cast_slice(&p.values),
            count: p.values.len() as u64,
        });
    }
    s
}

fn align_up(x: usize) -> usize {
    x.div_ceil(ALIGN) * ALIGN
}

pub(crate) fn save(g: &CsrGraph, mut w: crate::atomic_file::AtomicFile) -> Result<(), GraphError> {
    let path = &w.path().to_path_buf();
    let secs = sections(g);
    let mut dir = Vec::with_capacity(secs.len() * ENTRY);
    let mut pos = align_up(HEADER + secs.len() * ENTRY);
    let mut placed = Vec::new();
    for s in &secs {
        dir.extend_from_slice(&(s.kind as u32).to_le_bytes());
        dir.extend_from_slice(&(s.elem as u32).to_le_bytes());
        dir.extend_from_slice(&(pos as u64).to_le_bytes());
        dir.extend_from_slice(&s.count.to_le_bytes());
        let mut name = [0u8; MAX_NAME_LEN];
        name[..s.name.len()].copy_from_slice(s.name.as_bytes());
        dir.extend_from_slice(&name);
        placed.push(pos);
        pos = align_up(pos + s.bytes.len());
    }
    let total = pos;
    // The checksum covers the directory, padding and data, in file order.
    let mut crc = crc32fast::Hasher::new();
    crc.update(&dir);
    let mut cursor = HEADER + dir.len();
    let zeros = [0u8; ALIGN];
    let mut pads = Vec::new();
    for (s, &at) in secs.iter().zip(&placed) {
        let pad = at - cursor;
        crc.update(&zeros[..pad]);
        crc.update(s.bytes);
        pads.push(pad);
        cursor = at + s.bytes.len();
    }
    let tail = total - cursor;
    crc.update(&zeros[..tail]);
    let mut header = [0u8; HEADER];
    header[0..8].copy_from_slice(&WFG_MAGIC);
    header[8..12].copy_from_slice(&WFG_VERSION.to_le_bytes());
    header[12..16].copy_from_slice(&(secs.len() as u32).to_le_bytes());
    header[16..24].copy_from_slice(&(g.num_nodes() as u64).to_le_bytes());
    header[24..32].copy_from_slice(&g.num_edges().to_le_bytes());
    let flags: u32 = (g.orientation == Orientation::Undirected) as u32;
    header[32..36].copy_from_slice(&flags.to_le_bytes());
    header[36..40].copy_from_slice(&crc.finalize().to_le_bytes());
    header[40..48].copy_from_slice(&(total as u64).to_le_bytes());
    let hcrc = crc32fast::hash(&header[..60]);
    header[60..64].copy_from_slice(&hcrc.to_le_bytes());

    // Under a temporary name until complete (see `AtomicFile`): an interrupted or failed save
    // leaves no `.wfg` behind.
    let mut write = || -> std::io::Result<()> {
        w.write_all(&header)?;
        w.write_all(&dir)?;
        for (s, pad) in secs.iter().zip(&pads) {
            w.write_all(&zeros[..*pad])?;
            w.write_all(s.bytes)?;
        }
        w.write_all(&zeros[..tail])
    };
    write().map_err(|e| GraphError::io(path, e))?;
    w.commit()
}

pub(crate) fn load(path: &Path) -> Result<CsrGraph, GraphError> {
    load_as(path, std::env::var_os("WAYFARER_MAP_GRAPH").is_none_or(|v| v != "1"))
}

/// [`load`], read into memory on huge pages where that fits when `copy`, else mapped.
fn load_as(path: &Path, copy: bool) -> Result<CsrGraph, GraphError> {
    let file = std::fs::File::open(path).map_err(|e| GraphError::io(path, e))?;
    let len = file.metadata().map_err(|e| GraphError::io(path, e))?.len();
    if len == 0 {
        return Err(GraphError::parse(path, Location::File, "the file is empty; a .wfg file starts with a 64-byte header"));
    }
    if let Some(map) = copy.then(|| read_to_huge_pages(&file, len)).transpose().map_err(|e| GraphError::io(path, e))?.flatten() {
        return parse(Arc::new(map), path);
    }
    // SAFETY: read-only mapping; see `text::read_input`.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| GraphError::io(path, e))?;
    parse(Arc::new(map), path)
}

/// The file's `len` bytes read into anonymous memory on huge pages (Linux), where that fits:
/// the steps read edges at random, and the page cache's 4 KiB pages cost a TLB miss on nearly
/// every read (DeepWalk unweighted on R-MAT 18: +25-38%,
/// `bench/results/2026-12-05-cpu-huge-pages.md`). `None` (the file is mapped instead, as
/// before): not Linux, or a file larger than half the memory available (a graph near or past
/// the memory's size is read through the page cache, out of core).
fn read_to_huge_pages(file: &std::fs::File, len: u64) -> std::io::Result<Option<memmap2::Mmap>> {
    let fits = crate::memory::available_bytes().is_some_and(|a| len <= a / 2);
    if !cfg!(target_os = "linux") || !fits {
        return Ok(None);
    }
    let mut m = memmap2::MmapMut::map_anon(len as usize)?;
    crate::memory::advise_huge_pages(m.as_ptr(), m.len());
    // In parallel: each huge page is zeroed by the kernel on its first write, then filled.
    #[cfg(unix)]
    {
        use rayon::prelude::*;
        use std::os::unix::fs::FileExt;
        const PIECE: usize = 8 << 20;
        m.par_chunks_mut(PIECE).enumerate().try_for_each(|(i, piece)| file.read_exact_at(piece, (i * PIECE) as u64))?;
    }
    #[cfg(not(unix))]
    {
        use std::io::Read;
        (&*file).read_exact(&mut m)?;
    }
    m.make_read_only().map(Some)
}

pub(crate) fn from_bytes(bytes: &[u8], name: &Path) -> Result<CsrGraph, GraphError> {
    if bytes.is_empty() {
        return Err(GraphError::parse(name, Location::File, "no data; a .wfg image starts with a 64-byte header"));
    }
    // An anonymous mapping gives page alignment, so the sections can be viewed in place.
    let mut m = memmap2::MmapMut::map_anon(bytes.len()).map_err(|e| GraphError::io(name, e))?;
    m.copy_from_slice(bytes);
    let map = m.make_read_only().map_err(|e| GraphError::io(name, e))?;
    parse(Arc::new(map), name)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn parse(map: Arc<memmap2::Mmap>, path: &Path) -> Result<CsrGraph, GraphError> {
    let err = |at: u64, msg: String| GraphError::parse(path, Location::Byte(at), msg);
    let b: &[u8] = &map;
    if b.len() < HEADER {
        return Err(err(b.len() as u64, format!("truncated: {} bytes, but the header alone has {HEADER}", b.len())));
    }
    if b[0..8] != WFG_MAGIC {
        return Err(err(0, "not a .wfg file (bad magic); convert text inputs with `wayfarer convert`".into()));
    }
    let version = u32_at(b, 8);
    if version != WFG_VERSION {
        return Err(err(8, format!("format version {version}; this build reads version {WFG_VERSION}")));
    }
    if crc32fast::hash(&b[..60]) != u32_at(b, 60) {
        return Err(err(60, "header checksum mismatch: the header is corrupt".into()));
    }
    let nsec = u32_at(b, 12) as usize;
    let n = u64_at(b, 16);
    let m = u64_at(b, 24);
    let flags = u32_at(b, 32);
    let total = u64_at(b, 40);
    if total != b.len() as u64 {
        return Err(err(
            b.len() as u64,
            format!(
                "the header says the file has {total} bytes but it has {}{}",
                b.len(),
                if (b.len() as u64) < total { " (truncated)" } else { "" }
            ),
        ));
    }
    if n >= super::NO_NODE as u64 {
        return Err(err(16, format!("{n} nodes: at most {} are supported", super::NO_NODE)));
    }
    let dir_end =
        HEADER.checked_add(nsec.checked_mul(ENTRY).ok_or_else(|| err(12, "section count overflows".into()))?).filter(|&e| e <= b.len());
    let Some(dir_end) = dir_end else {
        return Err(err(12, format!("{nsec} sections do not fit in the file")));
    };
    let mut crc = crc32fast::Hasher::new();
    for part in b[HEADER..].chunks(1 << 26) {
        crc.update(part);
    }
    if crc.finalize() != u32_at(b, 36) {
        return Err(err(HEADER as u64, "data checksum mismatch: the file is corrupt".into()));
    }

    let mut offsets = None;
    let mut targets = None;
    let mut weights = None;
    let mut labels = None;
    let mut timestamps = None;
    let mut ids = None;
    let mut props = Vec::new();
    for i in 0..nsec {
        let at = HEADER + i * ENTRY;
        let e = &b[at..at + ENTRY];
        let (kind, elem, off, count) = (u32_at(e, 0), u32_at(e, 4), u64_at(e, 8), u64_at(e, 16));
        let name_raw = &e[24..24 + MAX_NAME_LEN];
        let name_len = name_raw.iter().position(|&c| c == 0).unwrap_or(MAX_NAME_LEN);
        let (want_elem, want_count, kind) = match kind {
            1 => (Elem::U64, n + 1, Kind::Offsets),
            2 => (Elem::U32, m, Kind::Targets),
            3 => (Elem::F32, m, Kind::Weights),
            4 => (Elem::U32, m, Kind::Labels),
            5 => (Elem::I64, m, Kind::Timestamps),
            6 => (Elem::U64, n, Kind::OriginalIds),
            7 => (Elem::F32, n, Kind::NodeProperty),
            k => return Err(err(at as u64, format!("unknown section kind {k} (written by a newer wayfarer?)"))),
        };
        if elem != want_elem as u32 || count != want_count {
            return Err(err(
                at as u64,
                format!(
                    "section {kind:?} has element type {elem} and {count} elements; expected type {} and {want_count}",
                    want_elem as u32
                ),
            ));
        }
        if (off as usize) < dir_end || off % ALIGN as u64 != 0 {
            return Err(err(at as u64 + 8, format!("section {kind:?} starts at byte {off}, which is misplaced")));
        }
        let bad_range = || err(at as u64 + 8, format!("section {kind:?} ({count} elements at byte {off}) runs past the end of the file"));
        macro_rules! view {
            ($t:ty) => {
                Buf::<$t>::mapped(map.clone(), off as usize, count as usize).ok_or_else(bad_range)?
            };
        }
        let dup = |seen: bool| if seen { Err(err(at as u64, format!("section {kind:?} appears twice"))) } else { Ok(()) };
        match kind {
            Kind::Offsets => {
                dup(offsets.is_some())?;
                offsets = Some((view!(u64), off));
            }
            Kind::Targets => {
                dup(targets.is_some())?;
                targets = Some((view!(u32), off));
            }
            Kind::Weights => {
                dup(weights.is_some())?;
                weights = Some((view!(f32), off));
            }
            Kind::Labels => {
                dup(labels.is_some())?;
                labels = Some(view!(u32));
            }
            Kind::Timestamps => {
                dup(timestamps.is_some())?;
                timestamps = Some(view!(i64));
            }
            Kind::OriginalIds => {
                dup(ids.is_some())?;
                ids = Some((view!(u64), off));
            }
            Kind::NodeProperty => {
                let name =
                    std::str::from_utf8(&name_raw[..name_len]).map_err(|_| err(at as u64 + 24, "property name is not UTF-8".into()))?;
                props.push(NodeProperty { name: name.to_string(), values: view!(f32) });
            }
        }
    }
    let (offsets, off_at) = offsets.ok_or_else(|| err(12, "the row-offsets section is missing".into()))?;
    let (targets, tgt_at) = targets.ok_or_else(|| err(12, "the targets section is missing".into()))?;

    if offsets[0] != 0 || offsets[n as usize] != m {
        return Err(err(off_at, format!("row offsets must run from 0 to {m}")));
    }
    let nn = n as usize;
    let bad_offset = (0..nn).into_par_iter().find_first(|&v| offsets[v] > offsets[v + 1]);
    if let Some(v) = bad_offset {
        return Err(err(off_at + 8 * v as u64, format!("row offsets decrease at node {v}")));
    }
    // The same pass finds repeated entries (parallel edges), which triangle counting asks.
    let repeats = std::sync::atomic::AtomicBool::new(false);
    let bad_row = (0..nn).into_par_iter().find_first(|&v| {
        let r = &targets[offsets[v] as usize..offsets[v + 1] as usize];
        let strict = r.windows(2).all(|w| w[0] < w[1]);
        if !strict {
            repeats.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        r.iter().any(|&t| t as u64 >= n) || (!strict && !r.is_sorted())
    });
    if let Some(v) = bad_row {
        let r = offsets[v]..offsets[v + 1];
        return Err(err(tgt_at + 4 * r.start, format!("the row of node {v} has a target out of range or is not sorted")));
    }
    if let Some((w, w_at)) = &weights
        && let Some(e) = w.par_iter().position_first(|x| !x.is_finite() || *x < 0.0)
    {
        return Err(err(w_at + 4 * e as u64, format!("edge {e} has weight {}; weights must be finite and >= 0", w[e])));
    }
    let ids = match ids {
        None => IdMap::Identity,
        Some((t, t_at)) => {
            if let Some(i) = (1..nn).into_par_iter().find_first(|&i| t[i - 1] >= t[i]) {
                return Err(err(t_at + 8 * i as u64, "original ids must be strictly increasing".into()));
            }
            if nn > 0 && t[nn - 1] == u64::MAX {
                return Err(err(
                    t_at + 8 * (nn - 1) as u64,
                    "original id 2^64 - 1 is reserved (the padding of uint64 walk outputs)".into(),
                ));
            }
            IdMap::Table(t)
        }
    };
    Ok(CsrGraph {
        offsets,
        targets,
        weights: weights.map(|w| w.0),
        labels,
        timestamps,
        node_props: props,
        edge_filter: Default::default(),
        repeats: std::sync::OnceLock::from(repeats.into_inner()),
        ids,
        orientation: if flags & 1 == 1 { Orientation::Undirected } else { Orientation::Directed },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::CsrParts;

    fn sample() -> CsrGraph {
        let mut g = CsrGraph::from_parts(
            CsrParts {
                offsets: vec![0, 2, 3, 3],
                targets: vec![2, 1, 0],
                weights: Some(vec![1.5, 0.0, 3.0]),
                labels: Some(vec![4, 1, 0]),
                timestamps: Some(vec![10, 20, 30]),
                original_ids: Some(vec![5, 7, 1000]),
            },
            Orientation::Directed,
        )
        .unwrap();
        g.set_node_property("score", vec![0.5, 1.0, 2.0]).unwrap();
        g
    }

    #[test]
    fn round_trip_in_memory_and_file() {
        let g = sample();
        let dir = std::env::temp_dir().join(format!("wfg-rt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("g.wfg");
        g.save_wfg(&p).unwrap();
        let h = CsrGraph::load_wfg(&p).unwrap();
        assert!(h.targets.is_mapped());
        assert_eq!(h.targets(), &[1, 2, 0]);
        assert_eq!(h.weights().unwrap(), &[0.0, 1.5, 3.0]);
        assert_eq!(h.labels().unwrap(), &[1, 4, 0]);
        assert_eq!(h.timestamps().unwrap(), &[20, 10, 30]);
        assert_eq!(h.id_map().original(2), 1000);
        assert_eq!(h.node_property("score").unwrap(), &[0.5, 1.0, 2.0]);
        let bytes = std::fs::read(&p).unwrap();
        let k = CsrGraph::from_wfg_bytes(&bytes, Path::new("mem")).unwrap();
        assert_eq!(k.targets(), h.targets());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A graph read into memory (in parallel pieces of 8 MiB: this file holds several) is the
    /// mapped file's graph.
    #[test]
    fn read_and_mapped_files_give_the_same_graph() {
        let (n, per_row) = (4096u32, 1024u32);
        let offsets = (0..=n as u64).map(|u| u * per_row as u64).collect();
        let targets = (0..n).flat_map(|u| (0..per_row).map(move |k| (u + 3 * k) % n)).collect();
        let g = CsrGraph::from_parts(CsrParts { offsets, targets, ..Default::default() }, Orientation::Directed).unwrap();
        let dir = std::env::temp_dir().join(format!("wfg-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("g.wfg");
        g.save_wfg(&p).unwrap();
        assert!(std::fs::metadata(&p).unwrap().len() > 2 * (8 << 20), "too small to read in pieces");
        let (read, mapped) = (load_as(&p, true).unwrap(), load_as(&p, false).unwrap());
        assert!(read.targets() == mapped.targets() && read.offsets() == mapped.offsets());
        assert_eq!(read.targets(), g.targets());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_validation_pass_finds_repeated_entries() {
        let dir = std::env::temp_dir().join(format!("wfg-rep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (targets, repeats) in [(vec![1, 1, 2, 0], true), (vec![1, 2, 2, 0], true), (vec![1, 2, 0, 2], false)] {
            let parts = CsrParts { offsets: vec![0, 3, 4, 4], targets, ..Default::default() };
            let g = CsrGraph::from_parts(parts, crate::graph::Orientation::Directed).unwrap();
            assert_eq!(g.has_repeated_entries(), repeats, "found on first use");
            let p = dir.join("g.wfg");
            g.save_wfg(&p).unwrap();
            let h = CsrGraph::load_wfg(&p).unwrap();
            assert_eq!(h.repeats.get(), Some(&repeats), "set by the loader");
            assert_eq!(h.has_repeated_entries(), repeats);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_single_byte_corruption_and_truncation_is_an_error() {
        let g = sample();
        let dir = std::env::temp_dir().join(format!("wfg-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("g.wfg");
        g.save_wfg(&p).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            assert!(from_bytes(&b, Path::new("x.wfg")).is_err(), "flipping byte {i} went unnoticed");
        }
        for cut in [0, 1, 63, 64, 100, bytes.len() - 1] {
            let e = from_bytes(&bytes[..cut], Path::new("x.wfg")).unwrap_err().to_string();
            assert!(e.starts_with("x.wfg"), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
