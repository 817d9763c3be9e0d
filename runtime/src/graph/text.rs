//! Text loaders: SNAP-style edge lists and Matrix Market coordinate files.
//!
//! Both are parsed in parallel over newline-aligned chunks of a memory-mapped file, in three
//! passes: (1) validate every line and collect the distinct node ids, (2) count degrees,
//! (3) scatter edges into the CSR (see `build`). Nothing edge-sized is held besides the CSR
//! itself. Every error names the file and the 1-based line.

use super::build::{self, BuildOptions, Dedup, EdgeRecord, EdgeSource};
use super::{Buf, CsrGraph, IdMap};
use crate::error::{GraphError, Location};
use rayon::prelude::*;
use std::path::Path;
use std::sync::Mutex;

/// Options for reading a text edge list. Columns count from 1; the source and destination
/// are columns 1 and 2. Fields are separated by whitespace and/or commas; lines starting
/// with `#` or `%` are comments.
#[derive(Clone, Debug, Default)]
pub struct EdgeListOptions {
    /// Add the reverse of every edge.
    pub undirected: bool,
    /// Column holding an `f32` weight (finite, >= 0).
    pub weight_col: Option<usize>,
    /// Column holding an integer label.
    pub label_col: Option<usize>,
    /// Column holding a timestamp: an integer, or a decimal number that becomes one after
    /// multiplying by `time_scale`.
    pub time_col: Option<usize>,
    /// A power of ten every timestamp is multiplied by, exactly (on the decimal text, not in
    /// floating point): `1000` reads seconds with up to three decimals as milliseconds.
    /// `0` and `1` leave timestamps as they are.
    pub time_scale: u64,
    /// Parallel-edge policy.
    pub dedup: Dedup,
    /// Drop self loops.
    pub drop_self_loops: bool,
    /// Lines at the start to skip (a header such as `src dst weight`).
    pub skip_header: usize,
}

/// The header of a Matrix Market file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatrixMarketInfo {
    /// `real`, `integer` or `pattern`.
    pub field: String,
    /// `general` or `symmetric`.
    pub symmetry: String,
    /// Rows (= columns = nodes).
    pub rows: u64,
    /// Stored entries.
    pub entries: u64,
}

#[derive(Clone, Copy)]
struct Columns {
    weight: Option<usize>,
    label: Option<usize>,
    time: Option<usize>,
    /// Decimal digits the timestamps are shifted left by (log10 of the time scale).
    time_shift: u32,
    need: usize,
}

impl Columns {
    fn new(weight: Option<usize>, label: Option<usize>, time: Option<usize>) -> Self {
        let need = [Some(2), weight, label, time].into_iter().flatten().max().unwrap_or(2);
        Columns { weight, label, time, time_shift: 0, need }
    }
}

/// The number of decimal digits a time scale shifts by: `1000` → 3. Anything but a power of
/// ten is an error, because only those scale decimal text exactly.
pub fn time_scale_digits(scale: u64) -> Result<u32, GraphError> {
    if scale <= 1 {
        return Ok(0);
    }
    let digits = scale.ilog10();
    if 10u64.pow(digits) != scale {
        return Err(GraphError::Invalid(format!(
            "--time-scale {scale} is not a power of ten (1, 10, 100, 1000, ...): only those scale decimal timestamps exactly"
        )));
    }
    Ok(digits)
}

#[derive(Clone, Copy)]
enum IdPolicy {
    /// Ids are arbitrary u64 values, compacted to 0..n in increasing order.
    Compact,
    /// Ids are 1..=n (Matrix Market).
    OneBased(u64),
}

struct Fields<'a> {
    raw: [&'a [u8]; 8],
    count: usize,
}

fn split_fields(line: &[u8], need: usize) -> Fields<'_> {
    let mut raw: [&[u8]; 8] = [&[]; 8];
    let mut count = 0;
    let mut i = 0;
    let is_sep = |b: u8| b == b' ' || b == b'\t' || b == b',' || b == b'\r';
    while i < line.len() && count < need.min(8) {
        while i < line.len() && is_sep(line[i]) {
            i += 1;
        }
        if i == line.len() {
            break;
        }
        let start = i;
        while i < line.len() && !is_sep(line[i]) {
            i += 1;
        }
        raw[count] = &line[start..i];
        count += 1;
    }
    Fields { raw, count }
}

fn show(field: &[u8]) -> String {
    let s = String::from_utf8_lossy(field);
    if s.len() > 40 { format!("{}…", &s[..s.char_indices().nth(40).map_or(s.len(), |c| c.0)]) } else { s.into_owned() }
}

fn parse_id(field: &[u8], what: &str) -> Result<u64, String> {
    if field.is_empty() || !field.iter().all(u8::is_ascii_digit) {
        return Err(format!("{what}: expected a non-negative integer node id, found `{}`", show(field)));
    }
    let mut v: u64 = 0;
    for &b in field {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add((b - b'0') as u64))
            .ok_or_else(|| format!("{what}: node id `{}` does not fit in 64 bits", show(field)))?;
    }
    if v == u64::MAX {
        // The padding of uint64 walk outputs (`.npy`): a node with this id could not be told
        // from the end of a walk.
        return Err(format!(
            "{what}: node id {v} (2^64 - 1) is reserved: it pads early-ended walks in uint64 outputs; ids are 0 ..= 2^64 - 2"
        ));
    }
    Ok(v)
}

fn parse_weight(field: &[u8], col: usize) -> Result<f32, String> {
    let s = std::str::from_utf8(field).map_err(|_| format!("column {col}: weight is not valid UTF-8"))?;
    let w: f32 = s.parse().map_err(|_| format!("column {col}: expected a number (edge weight), found `{}`", show(field)))?;
    if w.is_nan() {
        return Err(format!("column {col}: weight is NaN; weights must be finite and >= 0"));
    }
    if w.is_infinite() {
        return Err(format!("column {col}: weight `{}` is infinite or outside the f32 range", show(field)));
    }
    if w < 0.0 {
        return Err(format!("column {col}: weight {w} is negative; weights must be >= 0"));
    }
    Ok(w)
}

/// A timestamp: an integer or a decimal number (`12`, `1.7e9`, `1699999999.125`), times
/// `10^shift`, computed exactly on the digits. The result must be an integer within i64:
/// timestamps are stored as 64-bit integers (nanosecond Unix times fit; an f64 would round
/// them), so a value with more decimals than the scale keeps is an error that names the scale
/// that would keep them.
fn parse_time(field: &[u8], col: usize, shift: u32) -> Result<i64, String> {
    let bad = || format!("column {col}: expected a timestamp (an integer or a decimal number), found `{}`", show(field));
    let (negative, rest) = match field.first() {
        Some(b'-') => (true, &field[1..]),
        Some(b'+') => (false, &field[1..]),
        _ => (false, field),
    };
    let (mantissa, exponent) = match rest.iter().position(|&b| b == b'e' || b == b'E') {
        Some(i) => {
            let e = std::str::from_utf8(&rest[i + 1..]).ok().and_then(|s| s.parse::<i32>().ok()).ok_or_else(bad)?;
            (&rest[..i], e)
        }
        None => (rest, 0),
    };
    let (int_digits, frac_digits) = match mantissa.iter().position(|&b| b == b'.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, &mantissa[..0]),
    };
    if int_digits.is_empty() && frac_digits.is_empty() || !int_digits.iter().chain(frac_digits).all(u8::is_ascii_digit) {
        return Err(bad());
    }
    // value = digits · 10^(exponent + shift − fraction length)
    let digits = || int_digits.iter().chain(frac_digits).map(|&b| b - b'0');
    let power = exponent as i64 + shift as i64 - frac_digits.len() as i64;
    let total = int_digits.len() + frac_digits.len();
    let cut = if power < 0 { total.saturating_sub(power.unsigned_abs() as usize) } else { total };
    let (keep, dropped) = (digits().take(cut), digits().skip(cut));
    if dropped.into_iter().any(|d| d != 0) {
        // The decimals the value has, rounded up to a unit people use (ms, µs, ns).
        let decimals = ((frac_digits.len() as i64 - exponent as i64).max(1) + 2) / 3 * 3;
        let needed = 10u64.checked_pow(decimals as u32).map_or("a larger power of ten".to_string(), |p| p.to_string());
        return Err(format!(
            "column {col}: timestamp `{}` has a fraction{}; timestamps are stored as 64-bit integers: pass --time-scale {needed} (e.g. seconds to {}) to keep it",
            show(field),
            if shift > 0 { format!(" after --time-scale 1e{shift}") } else { String::new() },
            match decimals {
                3 => "milliseconds",
                6 => "microseconds",
                _ => "nanoseconds",
            },
        ));
    }
    let overflow = || format!("column {col}: timestamp `{}` (scaled by 1e{shift}) is outside the 64-bit integer range", show(field));
    let mut value: i128 = 0;
    for d in keep {
        value = value.checked_mul(10).and_then(|v| v.checked_add(d as i128)).filter(|v| *v <= i64::MAX as i128 + 1).ok_or_else(overflow)?;
    }
    if value != 0 {
        for _ in 0..power.max(0) {
            value = value.checked_mul(10).filter(|v| *v <= i64::MAX as i128 + 1).ok_or_else(overflow)?;
        }
    }
    let value = if negative { -value } else { value };
    i64::try_from(value).map_err(|_| overflow())
}

fn parse_int<T: std::str::FromStr>(field: &[u8], col: usize, what: &str) -> Result<T, String> {
    std::str::from_utf8(field)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("column {col}: expected an integer {what} in range, found `{}`", show(field)))
}

struct Parsed {
    src: u64,
    dst: u64,
    weight: f32,
    label: u32,
    time: i64,
}

/// Parses one line; `Ok(None)` for blank lines and comments.
fn parse_line(line: &[u8], cols: &Columns) -> Result<Option<Parsed>, String> {
    let first = line.iter().position(|b| !b" \t\r".contains(b));
    let Some(first) = first else { return Ok(None) };
    if line[first] == b'#' || line[first] == b'%' {
        return Ok(None);
    }
    let f = split_fields(line, cols.need);
    if f.count == 0 {
        return Ok(None);
    }
    if f.count < cols.need {
        return Err(format!(
            "found {} field{}, need at least {} (source, destination{})",
            f.count,
            if f.count == 1 { "" } else { "s" },
            cols.need,
            if cols.need > 2 { " and the attribute columns" } else { "" }
        ));
    }
    let src = parse_id(f.raw[0], "column 1 (source)")?;
    let dst = parse_id(f.raw[1], "column 2 (destination)")?;
    let weight = match cols.weight {
        Some(c) => parse_weight(f.raw[c - 1], c)?,
        None => 1.0,
    };
    let label = match cols.label {
        Some(c) => parse_int::<u32>(f.raw[c - 1], c, "label")?,
        None => 0,
    };
    let time = match cols.time {
        Some(c) => parse_time(f.raw[c - 1], c, cols.time_shift)?,
        None => 0,
    };
    Ok(Some(Parsed { src, dst, weight, label, time }))
}

/// Splits `data` into chunks that end just after a newline (or at the end).
fn chunk_ranges(data: &[u8]) -> Vec<std::ops::Range<usize>> {
    let target = (data.len() / (rayon::current_num_threads() * 16)).clamp(1 << 16, 8 << 20);
    let mut out = Vec::new();
    let mut start = 0;
    while start < data.len() {
        let mut end = (start + target).min(data.len());
        if end < data.len() {
            end = match data[end..].iter().position(|&b| b == b'\n') {
                Some(p) => end + p + 1,
                None => data.len(),
            };
        }
        out.push(start..end);
        start = end;
    }
    out
}

fn lines(chunk: &[u8]) -> impl Iterator<Item = &[u8]> {
    chunk.strip_suffix(b"\n").unwrap_or(chunk).split(|&b| b == b'\n')
}

struct Scan {
    ids: Vec<u64>,
    edges: u64,
    max_id: u64,
}

fn merge_sorted(a: Vec<u64>, b: Vec<u64>) -> Vec<u64> {
    if a.is_empty() {
        return b;
    }
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Pass 1: validates every line, counts edges and (for `Compact`) collects distinct ids.
fn scan(
    body: &[u8],
    chunks: &[std::ops::Range<usize>],
    cols: &Columns,
    policy: IdPolicy,
    path: &Path,
    first_line: u64,
) -> Result<Scan, GraphError> {
    let line_counts: Vec<u64> = chunks.par_iter().map(|r| body[r.clone()].iter().filter(|&&b| b == b'\n').count() as u64).collect();
    let first_error: Mutex<Option<(usize, u64, String)>> = Mutex::new(None);
    let collect_ids = matches!(policy, IdPolicy::Compact);
    let result = chunks
        .par_iter()
        .enumerate()
        .map(|(k, r)| {
            let mut ids = Vec::new();
            let mut edges = 0u64;
            let mut max_id = 0u64;
            for (ln, line) in lines(&body[r.clone()]).enumerate() {
                let res = parse_line(line, cols).and_then(|p| {
                    if let (Some(p), IdPolicy::OneBased(n)) = (&p, policy) {
                        for (id, col) in [(p.src, 1), (p.dst, 2)] {
                            if id == 0 || id > n {
                                return Err(format!("column {col}: index {id} is outside 1..={n} declared by the size line"));
                            }
                        }
                    }
                    Ok(p)
                });
                match res {
                    Ok(Some(p)) => {
                        edges += 1;
                        max_id = max_id.max(p.src).max(p.dst);
                        if collect_ids {
                            ids.push(p.src);
                            ids.push(p.dst);
                            if ids.len() >= 1 << 20 {
                                ids.sort_unstable();
                                ids.dedup();
                            }
                        }
                    }
                    Ok(None) => {}
                    Err(msg) => {
                        let mut e = first_error.lock().unwrap();
                        if e.as_ref().is_none_or(|(ek, el, _)| (k, ln as u64) < (*ek, *el)) {
                            *e = Some((k, ln as u64, msg));
                        }
                        break;
                    }
                }
            }
            ids.sort_unstable();
            ids.dedup();
            Scan { ids, edges, max_id }
        })
        .reduce(
            || Scan { ids: Vec::new(), edges: 0, max_id: 0 },
            |a, b| Scan { ids: merge_sorted(a.ids, b.ids), edges: a.edges + b.edges, max_id: a.max_id.max(b.max_id) },
        );
    if let Some((k, ln, msg)) = first_error.into_inner().unwrap() {
        let line = first_line + line_counts[..k].iter().sum::<u64>() + ln + 1;
        return Err(GraphError::parse(path, Location::Line(line), msg));
    }
    Ok(result)
}

enum Lookup {
    Identity,
    OneBased,
    Dense { table: Vec<u32>, min: u64 },
    Search(Vec<u64>),
}

impl Lookup {
    #[inline]
    fn get(&self, id: u64) -> u32 {
        match self {
            Lookup::Identity => id as u32,
            Lookup::OneBased => (id - 1) as u32,
            Lookup::Dense { table, min } => table[(id - min) as usize],
            Lookup::Search(ids) => ids.binary_search(&id).map(|i| i as u32).unwrap_or(u32::MAX),
        }
    }
}

struct TextSource<'a> {
    body: &'a [u8],
    chunks: Vec<std::ops::Range<usize>>,
    cols: Columns,
    lookup: Lookup,
}

impl EdgeSource for TextSource<'_> {
    fn num_chunks(&self) -> usize {
        self.chunks.len()
    }
    fn for_each_in_chunk(&self, chunk: usize, f: &mut dyn FnMut(EdgeRecord)) {
        for line in lines(&self.body[self.chunks[chunk].clone()]) {
            // Every line was validated by the scan pass.
            if let Ok(Some(p)) = parse_line(line, &self.cols) {
                f(EdgeRecord { src: self.lookup.get(p.src), dst: self.lookup.get(p.dst), weight: p.weight, label: p.label, time: p.time })
            }
        }
    }
}

/// A text input's bytes: the file mapped, or decompressed when it is gzip-compressed.
enum Input {
    Mapped(memmap2::Mmap),
    Decompressed(Vec<u8>),
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Decompressed(v) => v,
        }
    }
}

/// Maps `path`, or decompresses it when it starts with the gzip magic bytes (whatever its
/// name): `None` for an empty file.
fn read_input(path: &Path) -> Result<Option<Input>, GraphError> {
    let file = std::fs::File::open(path).map_err(|e| GraphError::io(path, e))?;
    let len = file.metadata().map_err(|e| GraphError::io(path, e))?.len();
    if len == 0 {
        return Ok(None);
    }
    // SAFETY: the mapping is read-only; like every mmap-based reader we assume the file is
    // not truncated by another process while we read it.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| GraphError::io(path, e))?;
    if !map.starts_with(&[0x1f, 0x8b]) {
        return Ok(Some(Input::Mapped(map)));
    }
    let mut data = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&map[..]), &mut data)
        .map_err(|e| GraphError::parse(path, Location::File, format!("gzip-compressed, but it does not decompress: {e}")))?;
    Ok(if data.is_empty() { None } else { Some(Input::Decompressed(data)) })
}

pub(crate) fn load_edge_list(path: &Path, opts: &EdgeListOptions) -> Result<CsrGraph, GraphError> {
    match read_input(path)? {
        None => Err(GraphError::parse(path, Location::File, "the file is empty: expected lines `source destination`")),
        Some(data) => parse_edge_list(&data, path, opts),
    }
}

/// A parse error on line 1 whose first field is a word, not an id, most likely a header line:
/// say how to skip it.
fn header_hint(e: GraphError, opts: &EdgeListOptions) -> GraphError {
    match e {
        GraphError::Parse { path, location: Location::Line(1), message }
            if opts.skip_header == 0 && message.contains("expected a non-negative integer node id") =>
        {
            let message = format!("{message}; if line 1 is a header, skip it with `wayfarer convert --skip-header 1` (or start it with #)");
            GraphError::Parse { path, location: Location::Line(1), message }
        }
        other => other,
    }
}
/// The first line of an edge list written by wayfarer.
const HEADER_PREFIX: &str = "# wayfarer edge list:";
/// The comment lines after it that list the nodes without edges.
const ISOLATED_PREFIX: &str = "# isolated:";

/// The options a wayfarer-written header gives (`columns=`), for input read without options of
/// its own, and whether the graph was undirected (its file lists both directions of every edge).
fn header_options(data: &[u8], opts: &EdgeListOptions) -> Option<(EdgeListOptions, bool)> {
    let plain = !opts.undirected && opts.weight_col.is_none() && opts.label_col.is_none() && opts.time_col.is_none();
    let first = data.split(|&b| b == b'\n').next()?;
    let rest = std::str::from_utf8(first).ok()?.strip_prefix(HEADER_PREFIX)?;
    if !plain {
        return None;
    }
    let mut o = EdgeListOptions { dedup: opts.dedup, drop_self_loops: opts.drop_self_loops, ..Default::default() };
    let mut undirected = false;
    for word in rest.split_whitespace() {
        match word.split_once('=') {
            Some(("undirected", v)) => undirected = v == "true",
            Some(("columns", v)) => {
                for (i, c) in v.split(',').enumerate() {
                    match c {
                        "weight" => o.weight_col = Some(i + 1),
                        "label" => o.label_col = Some(i + 1),
                        "timestamp" => o.time_col = Some(i + 1),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Some((o, undirected))
}

pub(crate) fn parse_edge_list(data: &[u8], path: &Path, opts: &EdgeListOptions) -> Result<CsrGraph, GraphError> {
    let from_header = header_options(data, opts);
    let opts = from_header.as_ref().map_or(opts, |h| &h.0);
    for (name, col) in [("weight-col", opts.weight_col), ("label-col", opts.label_col), ("time-col", opts.time_col)] {
        if let Some(c) = col
            && !(3..=8).contains(&c)
        {
            return Err(GraphError::param(
                name,
                format!("column {c} is not usable: attribute columns are 3 to 8 (1 and 2 are the endpoints)"),
            ));
        }
    }
    let mut cols = Columns::new(opts.weight_col, opts.label_col, opts.time_col);
    cols.time_shift = time_scale_digits(opts.time_scale)?;
    // Skipped header lines: the body starts after them, and lines keep their numbers.
    let mut skip = 0usize;
    for _ in 0..opts.skip_header {
        match data[skip..].iter().position(|&b| b == b'\n') {
            Some(i) => skip += i + 1,
            None => skip = data.len(),
        }
    }
    let data = &data[skip..];
    let chunks = chunk_ranges(data);
    let scan = scan(data, &chunks, &cols, IdPolicy::Compact, path, opts.skip_header as u64).map_err(|e| header_hint(e, opts))?;
    if scan.edges == 0 {
        return Err(GraphError::parse(
            path,
            Location::File,
            "no edges found: expected lines `source destination` (comments start with # or %)",
        ));
    }
    let mut ids = scan.ids;
    if from_header.is_some() {
        // Nodes without edges, listed by the writer so the node set survives the round trip.
        let mut isolated: Vec<u64> = Vec::new();
        for line in data.split(|&b| b == b'\n').take_while(|l| l.first() == Some(&b'#')) {
            if let Some(list) = std::str::from_utf8(line).ok().and_then(|l| l.strip_prefix(ISOLATED_PREFIX)) {
                for id in list.split_whitespace() {
                    isolated.push(
                        id.parse().map_err(|_| {
                            GraphError::parse(path, Location::File, format!("`{id}` in the isolated-node list is not an id"))
                        })?,
                    );
                }
            }
        }
        if !isolated.is_empty() {
            ids.extend(isolated);
            ids.sort_unstable();
            ids.dedup();
        }
    }
    if ids.len() >= super::NO_NODE as usize {
        return Err(GraphError::parse(
            path,
            Location::File,
            format!("{} distinct node ids: at most {} are supported", ids.len(), super::NO_NODE),
        ));
    }
    let n = ids.len();
    let (lookup, idmap) = if ids[0] == 0 && ids[n - 1] == n as u64 - 1 {
        (Lookup::Identity, IdMap::Identity)
    } else {
        let (min, span) = (ids[0], ids[n - 1] - ids[0]);
        let lookup = if span < 4 * n as u64 + (1 << 20) {
            let mut table = vec![u32::MAX; span as usize + 1];
            for (i, &id) in ids.iter().enumerate() {
                table[(id - min) as usize] = i as u32;
            }
            Lookup::Dense { table, min }
        } else {
            Lookup::Search(ids.clone())
        };
        (lookup, IdMap::Table(Buf::owned(ids)))
    };
    let source = TextSource { body: data, chunks, cols, lookup };
    let bopts = BuildOptions {
        symmetrize: opts.undirected,
        dedup: opts.dedup,
        drop_self_loops: opts.drop_self_loops,
        weights: opts.weight_col.is_some(),
        labels: opts.label_col.is_some(),
        timestamps: opts.time_col.is_some(),
    };
    let mut g = build::build(n, &source, &bopts, idmap)?;
    if from_header.is_some_and(|h| h.1) {
        // Both directions are in the file already: the graph is undirected as written.
        g.orientation = super::Orientation::Undirected;
    }
    Ok(g)
}

pub(crate) fn load_matrix_market(path: &Path) -> Result<CsrGraph, GraphError> {
    match read_input(path)? {
        None => Err(GraphError::parse(path, Location::File, "the file is empty: expected a `%%MatrixMarket` header")),
        Some(data) => parse_matrix_market(&data, path),
    }
}

/// Reads the header and size line; returns the info and where the entries start.
fn mm_header(data: &[u8], path: &Path) -> Result<(MatrixMarketInfo, usize, u64), GraphError> {
    let err = |line: u64, msg: String| GraphError::parse(path, Location::Line(line), msg);
    let mut pos = 0;
    let mut line_no = 0u64;
    let next_line = |pos: &mut usize| -> Option<&[u8]> {
        if *pos >= data.len() {
            return None;
        }
        let end = data[*pos..].iter().position(|&b| b == b'\n').map_or(data.len(), |p| *pos + p);
        let l = &data[*pos..end];
        *pos = end + 1;
        Some(l)
    };
    let header = next_line(&mut pos).unwrap_or(&[]);
    line_no += 1;
    let header_s = String::from_utf8_lossy(header).to_ascii_lowercase();
    let words: Vec<&str> = header_s.split_whitespace().collect();
    if words.first() != Some(&"%%matrixmarket") {
        return Err(err(1, "expected the header `%%MatrixMarket matrix coordinate <field> <symmetry>`".into()));
    }
    if words.len() != 5 || words[1] != "matrix" || words[2] != "coordinate" {
        return Err(err(1, format!("unsupported header `{}`: only `matrix coordinate` files hold graphs", header_s.trim())));
    }
    let field = words[3];
    if !["real", "double", "integer", "pattern"].contains(&field) {
        return Err(err(1, format!("unsupported field `{field}`: use real, integer or pattern")));
    }
    let symmetry = words[4];
    if !["general", "symmetric"].contains(&symmetry) {
        return Err(err(
            1,
            format!(
                "unsupported symmetry `{symmetry}`: use general or symmetric (skew and hermitian matrices have negative or complex weights)"
            ),
        ));
    }
    loop {
        let Some(l) = next_line(&mut pos) else {
            return Err(err(line_no, "missing the size line `rows columns entries`".into()));
        };
        line_no += 1;
        let t = String::from_utf8_lossy(l);
        let t = t.trim();
        if t.is_empty() || t.starts_with('%') {
            continue;
        }
        let nums: Vec<&str> = t.split_whitespace().collect();
        let parsed: Vec<Option<u64>> = nums.iter().map(|s| s.parse().ok()).collect();
        if nums.len() != 3 || parsed.iter().any(Option::is_none) {
            return Err(err(line_no, format!("expected the size line `rows columns entries`, found `{}`", show(t.as_bytes()))));
        }
        let (rows, cols, entries) = (parsed[0].unwrap(), parsed[1].unwrap(), parsed[2].unwrap());
        if rows != cols {
            return Err(err(line_no, format!("the matrix is {rows} x {cols}; a graph's adjacency matrix is square")));
        }
        if rows >= super::NO_NODE as u64 {
            return Err(err(line_no, format!("{rows} nodes: at most {} are supported", super::NO_NODE)));
        }
        let info = MatrixMarketInfo { field: field.to_string(), symmetry: symmetry.to_string(), rows, entries };
        return Ok((info, pos.min(data.len()), line_no));
    }
}

pub(crate) fn parse_matrix_market(data: &[u8], path: &Path) -> Result<CsrGraph, GraphError> {
    if data.is_empty() {
        return Err(GraphError::parse(path, Location::File, "the file is empty: expected a `%%MatrixMarket` header"));
    }
    let (info, body_start, size_line) = mm_header(data, path)?;
    let body = &data[body_start..];
    let weighted = info.field != "pattern";
    let cols = Columns::new(weighted.then_some(3), None, None);
    let chunks = chunk_ranges(body);
    let scan = scan(body, &chunks, &cols, IdPolicy::OneBased(info.rows), path, size_line)?;
    if scan.edges != info.entries {
        return Err(GraphError::parse(
            path,
            Location::Line(size_line),
            format!(
                "the size line declares {} entries but the file holds {}{}",
                info.entries,
                scan.edges,
                if scan.edges < info.entries { " (truncated?)" } else { "" }
            ),
        ));
    }
    let n = info.rows as usize;
    let source = TextSource { body, chunks, cols, lookup: Lookup::OneBased };
    let bopts = BuildOptions { symmetrize: info.symmetry == "symmetric", weights: weighted, ..Default::default() };
    let ids = IdMap::Table(Buf::owned((1..=n as u64).collect()));
    build::build(n, &source, &bopts, ids)
}

/// Writes `g` as a text edge list in original ids: `source target [weight] [label]
/// [timestamp]`, the attribute columns present in the graph, in that order (named in a
/// leading `#` comment). Rows are formatted in parallel and written in order.
pub(crate) fn save_edge_list(g: &CsrGraph, mut out: crate::atomic_file::AtomicFile) -> Result<(), GraphError> {
    use std::io::Write;
    let path = &out.path().to_path_buf();
    let mut cols = vec!["source", "target"];
    if g.weights().is_some() {
        cols.push("weight");
    }
    if g.labels().is_some() {
        cols.push("label");
    }
    if g.timestamps().is_some() {
        cols.push("timestamp");
    }
    // The header says what the columns are and whether the graph is undirected, so reading the
    // file back (`CsrGraph::load`, `wayfarer convert`) needs no options and gets the same graph.
    let undirected = g.orientation() == super::Orientation::Undirected;
    let header = format!(
        "{HEADER_PREFIX} nodes={} undirected={undirected} columns={}\n# {}\n",
        g.num_nodes(),
        cols.join(","),
        if undirected {
            "undirected: both directions of every edge are listed (their attributes may differ); read it as directed entries"
        } else {
            "one line per directed edge"
        }
    );
    let chunks = build::row_chunks(g.offsets(), 1 << 16);
    let isolated: Vec<u64> = (0..g.num_nodes() as u32).filter(|&v| g.degree(v) == 0).map(|v| g.id_map().original(v)).collect();
    let write = |out: &mut crate::atomic_file::AtomicFile| -> std::io::Result<()> {
        out.write_all(header.as_bytes())?;
        for chunk in isolated.chunks(32) {
            let ids: Vec<String> = chunk.iter().map(u64::to_string).collect();
            writeln!(out, "{ISOLATED_PREFIX} {}", ids.join(" "))?;
        }
        for group in chunks.chunks(rayon::current_num_threads() * 4) {
            let texts: Vec<Vec<u8>> = group
                .par_iter()
                .map(|nodes| {
                    let mut s = Vec::new();
                    for v in nodes.clone() {
                        let src = g.id_map().original(v as u32);
                        for e in g.row(v as u32) {
                            let _ = write!(s, "{src} {}", g.id_map().original(g.targets()[e]));
                            if let Some(w) = g.weights() {
                                let _ = write!(s, " {}", w[e]);
                            }
                            if let Some(l) = g.labels() {
                                let _ = write!(s, " {}", l[e]);
                            }
                            if let Some(t) = g.timestamps() {
                                let _ = write!(s, " {}", t[e]);
                            }
                            s.push(b'\n');
                        }
                    }
                    s
                })
                .collect();
            for t in texts {
                out.write_all(&t)?;
            }
        }
        out.flush()
    };
    write(&mut out).map_err(|e| GraphError::io(path, e))?;
    out.commit()
}

/// Reads a per-node property from a text file of `id value` lines (original ids; `#` and `%`
/// comments). Nodes the file does not mention get `default`. Returns the values and how many
/// nodes the file set.
pub(crate) fn read_node_property(g: &CsrGraph, path: &Path, default: f32) -> Result<(Vec<f32>, usize), GraphError> {
    let data = std::fs::read(path).map_err(|e| GraphError::io(path, e))?;
    let n = g.num_nodes();
    let mut values = vec![default; n];
    let mut seen = vec![false; n];
    let mut set = 0;
    for (ln, line) in lines(&data).enumerate() {
        let err = |msg: String| GraphError::parse(path, Location::Line(ln as u64 + 1), msg);
        let first = line.iter().position(|b| !b" \t\r".contains(b));
        let Some(first) = first else { continue };
        if line[first] == b'#' || line[first] == b'%' {
            continue;
        }
        let f = split_fields(line, 2);
        if f.count < 2 {
            return Err(err("expected `node value`".into()));
        }
        let id = parse_id(f.raw[0], "column 1 (node)").map_err(err)?;
        let s = std::str::from_utf8(f.raw[1]).unwrap_or("");
        let v: f32 = s.parse().map_err(|_| err(format!("column 2: expected a number, found `{}`", show(f.raw[1]))))?;
        if !v.is_finite() {
            return Err(err(format!("column 2: value `{}` is not finite", show(f.raw[1]))));
        }
        let Some(i) = g.id_map().internal(id, n) else {
            return Err(err(format!("node {id} is not in the graph")));
        };
        if std::mem::replace(&mut seen[i as usize], true) {
            return Err(err(format!("node {id} is given twice")));
        }
        values[i as usize] = v;
        set += 1;
    }
    Ok((values, set))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_scale_exactly_on_the_decimal_text() {
        let t = |s: &str, shift| parse_time(s.as_bytes(), 5, shift);
        assert_eq!(t("12", 0), Ok(12));
        assert_eq!(t("-12", 0), Ok(-12));
        assert_eq!(t("1.7e9", 0), Ok(1_700_000_000));
        assert_eq!(t("1700000001.000", 0), Ok(1_700_000_001));
        assert_eq!(t("1.5", 3), Ok(1500));
        assert_eq!(t("0.3", 1), Ok(3));
        assert_eq!(t("1699999999.123", 3), Ok(1_699_999_999_123));
        // Nanosecond Unix times are exact (an f64 would round them).
        assert_eq!(t("1699999999.123456789", 9), Ok(1_699_999_999_123_456_789));
        assert_eq!(t("9223372036854775807", 0), Ok(i64::MAX));
        assert_eq!(t("-9223372036854775808", 0), Ok(i64::MIN));
        assert_eq!(t("1.25e-1", 3), Ok(125));
        assert!(t("1.25e-1", 2).is_err());
        let e = t("1.25", 1).unwrap_err();
        assert!(e.contains("has a fraction after --time-scale 1e1") && e.contains("--time-scale 1000"), "{e}");
        assert!(t("1.5", 0).unwrap_err().contains("--time-scale 1000 (e.g. seconds to milliseconds)"));
        assert!(t("1.0000005", 0).unwrap_err().contains("--time-scale 1000000000 (e.g. seconds to nanoseconds)"));
        assert!(t("9223372036854775808", 0).unwrap_err().contains("outside the 64-bit"));
        assert!(t("9.3e18", 0).unwrap_err().contains("outside the 64-bit"));
        for bad in ["", ".", "1.2.3", "1e", "abc", "1,5", "--1", "0x10", "inf", "NaN"] {
            assert!(t(bad, 0).unwrap_err().contains("expected a timestamp"), "{bad}");
        }
        assert!(matches!(time_scale_digits(1000), Ok(3)) && matches!(time_scale_digits(1), Ok(0)));
        assert!(time_scale_digits(1500).is_err());
    }

    fn parse(s: &str, opts: &EdgeListOptions) -> Result<CsrGraph, GraphError> {
        parse_edge_list(s.as_bytes(), Path::new("t.txt"), opts)
    }

    #[test]
    fn compacts_sparse_ids_and_keeps_them() {
        let g = parse("# comment\n10 30\n30,20\n% other\n\n20\t10\n", &EdgeListOptions::default()).unwrap();
        assert_eq!(g.num_nodes(), 3);
        assert_eq!(g.num_edges(), 3);
        assert_eq!(g.id_map().original(0), 10);
        assert_eq!(g.id_map().original(2), 30);
        assert_eq!(g.neighbors(0), &[2]);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("0 1\n1 2\n2 x\n", &EdgeListOptions::default()).unwrap_err().to_string();
        assert!(e.starts_with("t.txt:3: column 2"), "{e}");
        let opts = EdgeListOptions { weight_col: Some(3), ..Default::default() };
        let e = parse("0 1 1.0\n1 2 -3\n", &opts).unwrap_err().to_string();
        assert!(e.contains("t.txt:2:") && e.contains("negative"), "{e}");
        let e = parse("0 1 nan\n", &opts).unwrap_err().to_string();
        assert!(e.contains("NaN"), "{e}");
        let e = parse("0 1 1e60\n", &opts).unwrap_err().to_string();
        assert!(e.contains("infinite"), "{e}");
        let e = parse("0 99999999999999999999\n", &EdgeListOptions::default()).unwrap_err().to_string();
        assert!(e.contains("64 bits"), "{e}");
        let e = parse("# only comments\n", &EdgeListOptions::default()).unwrap_err().to_string();
        assert!(e.contains("no edges"), "{e}");
        let e = parse("5\n", &EdgeListOptions::default()).unwrap_err().to_string();
        assert!(e.contains("t.txt:1:") && e.contains("1 field"), "{e}");
    }

    #[test]
    fn matrix_market_symmetric_and_truncated() {
        let mm = "%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 2\n2 1 0.5\n3 3 2.0\n";
        let g = parse_matrix_market(mm.as_bytes(), Path::new("m.mtx")).unwrap();
        assert_eq!(g.num_edges(), 3);
        assert_eq!(g.neighbors(0), &[1]);
        assert_eq!(g.id_map().original(0), 1);
        let cut = "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n";
        let e = parse_matrix_market(cut.as_bytes(), Path::new("m.mtx")).unwrap_err().to_string();
        assert!(e.contains("m.mtx:2:") && e.contains("truncated"), "{e}");
        let bad = "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 4\n";
        let e = parse_matrix_market(bad.as_bytes(), Path::new("m.mtx")).unwrap_err().to_string();
        assert!(e.contains("m.mtx:3:") && e.contains("outside 1..=3"), "{e}");
    }
}
