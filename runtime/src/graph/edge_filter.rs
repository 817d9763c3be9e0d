//! Per-row bitsets that answer most absent `has_edge(u, v)` without searching `u`'s row.
//!
//! Row `u`'s bits are `BITS_PER_ENTRY * offsets[u] .. BITS_PER_ENTRY * offsets[u + 1]` of one
//! array, so finding them needs only the row's offsets, which the search needs too and a walk
//! has usually just read (the previous step's row). Entry `v` sets the bit a multiplicative
//! hash of `v` maps into the row's range (multiply-shift: any range size). A clear bit proves
//! `u -> v` absent; a set one leaves the answer to the binary search, so `has_edge` answers
//! exactly as before and walks do not change. Node2Vec on a power-law graph spent 60% of its
//! CPU time in that search (perf, R-MAT 18), and most of its queries are absent edges.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bits per row entry: about 1 - e^(-1/8), 12% of a row's bits are set.
const BITS_PER_ENTRY: u64 = 8;

/// The filters of every row.
pub struct EdgeFilter {
    /// `BITS_PER_ENTRY` bits per edge entry, row by row (rows share boundary words, so they
    /// are set with atomic ORs; reads are plain loads on the usual targets).
    words: Vec<AtomicU64>,
    /// Levels of separators over the targets array: level 0 holds every
    /// `SEPARATOR_STRIDE`-th entry of the targets (`targets[16 j]` at `j`), level `L` every
    /// 16th key of level `L - 1` (`targets[16^(L+1) j]`), up to a level of at most
    /// [`TOP_KEYS`] keys. A long row's search counts keys from the level where the row has
    /// at most `TOP_KEYS` of them down to the targets, one aligned group of 16 (a cache line)
    /// a level ([`EdgeFilter::find`]): a few lines, mostly cached for a hot hub, instead of a
    /// bisection's chain of dependent reads.
    levels: Vec<Level>,
}

/// At most this many of a row's keys are counted at the level its search starts from.
const TOP_KEYS: usize = 32;

/// Sixteen keys, aligned as a cache line: a level's groups of 16 are counted with one vector
/// compare and one line read.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u32; SEPARATOR_STRIDE]);

/// One level of separators: its keys in 64-byte aligned storage.
struct Level {
    lines: Vec<Line>,
    len: usize,
}

impl Level {
    fn new(keys: impl ExactSizeIterator<Item = u32>) -> Level {
        let len = keys.len();
        let mut lines = vec![Line([0; SEPARATOR_STRIDE]); len.div_ceil(SEPARATOR_STRIDE)];
        for (i, k) in keys.enumerate() {
            lines[i / SEPARATOR_STRIDE].0[i % SEPARATOR_STRIDE] = k;
        }
        Level { lines, len }
    }

    #[inline(always)]
    fn keys(&self) -> &[u32] {
        // SAFETY: `Line` is `repr(C)` around `[u32; 16]`, 64 bytes with no padding, so the lines
        // are `16 * lines.len() >= len` consecutive initialized u32s.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const u32, self.len) }
    }
}

/// The targets between two separators.
const SEPARATOR_STRIDE: usize = 16;

/// Rows shorter than this are searched directly (their own few lines).
const SEPARATED_ROW: usize = 128;

impl std::fmt::Debug for EdgeFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EdgeFilter({} bytes)", self.bytes())
    }
}

/// The bit standing for `v` in a row whose bits start at `base` and number `bits` (> 0). The
/// product is 128-bit: a row of 2^29 entries or more has 2^32 bits or more.
#[inline(always)]
fn bit_of(v: u32, base: u64, bits: u64) -> u64 {
    let hash = (v.wrapping_add(1)).wrapping_mul(0x9E37_79B1) as u128;
    base + ((hash * bits as u128) >> 32) as u64
}

/// How many of `group`'s values (sorted) are below `v`: a level's group of 16, a partial one at
/// a row's end, or a row's top keys (at most [`TOP_KEYS`] + 1).
/// A whole group is a fixed-length loop, which compiles to one vector compare and a count;
/// the shorter groups at a row's ends and a row's top keys are counted the same way, in a loop.
#[inline(always)]
fn count_below(group: &[u32], v: u32) -> usize {
    match <&[u32; SEPARATOR_STRIDE]>::try_from(group) {
        Ok(whole) => whole.iter().map(|&x| (x < v) as usize).sum(),
        // Counted too: a search's early exit was a mispredicted branch per call (perf, R-MAT 20).
        Err(_) => group.iter().map(|&x| (x < v) as usize).sum(),
    }
}

impl EdgeFilter {
    /// Builds the filters of the rows of a CSR graph.
    pub fn build(offsets: &[u64], targets: &[u32]) -> Self {
        use rayon::prelude::*;
        let bits = targets.len() as u64 * BITS_PER_ENTRY;
        // Read at random by the steps: on huge pages.
        let words = crate::memory::huge_page_vec(bits.div_ceil(64) as usize, || AtomicU64::new(0));
        super::build::row_chunks(offsets, 1 << 16).into_par_iter().for_each(|rows| {
            for u in rows {
                let (lo, hi) = (offsets[u], offsets[u + 1]);
                let (base, n) = (lo * BITS_PER_ENTRY, (hi - lo) * BITS_PER_ENTRY);
                for &v in &targets[lo as usize..hi as usize] {
                    let b = bit_of(v, base, n);
                    words[(b / 64) as usize].fetch_or(1 << (b % 64), Ordering::Relaxed);
                }
            }
        });
        let mut levels = vec![Level::new(targets.iter().step_by(SEPARATOR_STRIDE).copied())];
        while levels.last().is_some_and(|l| l.len > TOP_KEYS) {
            let next = Level::new(levels.last().unwrap().keys().iter().step_by(SEPARATOR_STRIDE).copied());
            levels.push(next);
        }
        EdgeFilter { words, levels }
    }

    /// The index of the first edge `u -> v` in the row `lo..hi` of `u` (`targets` the graph's),
    /// as [`super::intersect::search`] finds it: in a long row through the separator levels.
    #[inline]
    pub fn find(&self, targets: &[u32], lo: usize, hi: usize, v: u32) -> Option<usize> {
        if hi - lo < SEPARATED_ROW {
            return super::intersect::search(&targets[lo..hi], v).map(|i| lo + i);
        }
        // The level where the row holds at most TOP_KEYS keys (positions that are multiples of
        // `stride` in lo..hi).
        let (mut level, mut stride) = (0, SEPARATOR_STRIDE);
        while level + 1 < self.levels.len() && hi - lo > TOP_KEYS * stride {
            (level, stride) = (level + 1, stride * SEPARATOR_STRIDE);
        }
        // The first v lies in from..=to: after the last key below v (or from the row's start)
        // and no later than the next key (`to_key`, read), or the row's end.
        let (mut from, mut to, mut to_key) = (lo, hi, 0);
        loop {
            let keys = self.levels[level].keys();
            let (j0, j1) = (from.div_ceil(stride), to.div_ceil(stride));
            // Below the top, from..to spans one key of the level above: the 16 keys here
            // are one aligned group (whole, where neither end is the row's).
            let k = count_below(&keys[j0..j1], v);
            if k > 0 {
                from = (j0 + k - 1) * stride;
            }
            if j0 + k < j1 {
                (to, to_key) = ((j0 + k) * stride, keys[j0 + k]);
            }
            if level == 0 {
                break;
            }
            (level, stride) = (level - 1, stride / SEPARATOR_STRIDE);
        }
        // At most 16 entries of the row: one aligned group (a cache line when `targets` is
        // 64-byte aligned, as the file's sections are), counted.
        let i = from + count_below(&targets[from..to], v);
        if i < to {
            return (targets[i] == v).then_some(i);
        }
        // All below v: the first v can only be the next key, already read.
        (to < hi && to_key == v).then_some(to)
    }

    /// Whether `u -> v` may be an edge (false: it is not), for the row `lo..hi` of `u` (its
    /// offsets).
    #[inline(always)]
    pub fn may_have(&self, lo: u64, hi: u64, v: u32) -> bool {
        if lo == hi {
            return false;
        }
        let b = bit_of(v, lo * BITS_PER_ENTRY, (hi - lo) * BITS_PER_ENTRY);
        self.words[(b / 64) as usize].load(Ordering::Relaxed) >> (b % 64) & 1 == 1
    }

    /// Prefetches the word [`EdgeFilter::may_have`] reads for the same arguments.
    #[inline(always)]
    pub fn prefetch(&self, lo: u64, hi: u64, v: u32) {
        if lo < hi {
            let b = bit_of(v, lo * BITS_PER_ENTRY, (hi - lo) * BITS_PER_ENTRY);
            crate::engine::prefetch(self.words.as_ptr().wrapping_add((b / 64) as usize));
        }
    }

    /// Memory held, in bytes.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8 + self.levels.iter().map(|l| l.lines.len() * size_of::<Line>()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorted rows of the given lengths over `0..range` (xorshift from `seed`, repeats kept),
    /// as CSR offsets and targets.
    fn random_rows(lengths: &[u32], range: u64, seed: u64) -> (Vec<u64>, Vec<u32>) {
        let (mut offsets, mut targets, mut x) = (vec![0u64], Vec::new(), seed);
        for &d in lengths {
            let mut row: Vec<u32> = (0..d)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % range) as u32
                })
                .collect();
            row.sort_unstable();
            targets.extend(row);
            offsets.push(targets.len() as u64);
        }
        (offsets, targets)
    }

    #[test]
    fn every_edge_passes_and_most_absent_ones_do_not() {
        // Rows of 0, 1, 7, 64 and 3000 entries over 10,000 nodes (3072 entries).
        let (offsets, targets) = random_rows(&[0, 1, 7, 64, 3000], 10_000, 12345);
        let f = EdgeFilter::build(&offsets, &targets);
        for u in 0..5usize {
            let (lo, hi) = (offsets[u], offsets[u + 1]);
            let row = &targets[lo as usize..hi as usize];
            for &v in row {
                assert!(f.may_have(lo, hi, v), "row {u} lost {v}");
            }
            if row.len() < 7 {
                continue; // too few bits for a rate
            }
            let absent: Vec<u32> = (0..10_000).filter(|v| row.binary_search(v).is_err()).collect();
            let passed = absent.iter().filter(|&&v| f.may_have(lo, hi, v)).count();
            // At most 1/8 of the bits are set: allow 1/5 of the absent nodes through.
            assert!(passed * 5 <= absent.len(), "row {u}: {passed} of {} absent nodes passed", absent.len());
        }
        assert!(!f.may_have(0, 0, 5), "an empty row has no edges");
        // 8 bits per entry of 3072; a separator per 16 entries (192: 12 lines), and one per
        // 16 of those (12: one line).
        assert_eq!(f.bytes(), 3072 + 12 * 64 + 64);
    }

    #[test]
    fn a_search_through_the_separators_finds_what_a_plain_search_finds() {
        // Rows of many lengths (across the separated threshold), at offsets that are not
        // multiples of the stride, with repeated entries; every value in range and past it.
        // Rows past 32 * 16^L entries start from level L: 20,000 and 150,000 from levels 2
        // and 3 (the longest over few values, so runs of repeats cross the keys).
        let (offsets, targets) = random_rows(&[3, 127, 128, 129, 200, 513, 1000, 4097, 17, 20_000, 9000, 150_000, 31], 3000, 99);
        let f = EdgeFilter::build(&offsets, &targets);
        assert_eq!(f.levels.len(), 4, "levels of {} entries", targets.len());
        for u in 0..offsets.len() - 1 {
            let (lo, hi) = (offsets[u] as usize, offsets[u + 1] as usize);
            for v in 0..3010 {
                let want = crate::graph::intersect::search(&targets[lo..hi], v).map(|i| lo + i);
                assert_eq!(f.find(&targets, lo, hi, v), want, "row {u} ({} entries), value {v}", hi - lo);
            }
        }
    }

    #[test]
    fn has_edge_answers_the_same_with_the_filter() {
        use crate::graph::{CsrGraph, CsrParts, Orientation};
        // A hub (node 0) to every third node, and a few short rows with a repeated entry.
        let n = 300u32;
        let mut offsets = vec![0u64];
        let mut targets = Vec::new();
        for u in 0..n {
            let row: Vec<u32> = if u == 0 { (0..n).step_by(3).collect() } else { vec![(u * 7) % n, (u * 7) % n, (u * 13 + 1) % n] };
            let mut row = row;
            row.sort_unstable();
            targets.extend(row);
            offsets.push(targets.len() as u64);
        }
        let g = CsrGraph::from_parts(CsrParts { offsets, targets, ..Default::default() }, Orientation::Directed).unwrap();
        let before: Vec<bool> = (0..n).flat_map(|u| (0..n).map(move |v| (u, v))).map(|(u, v)| g.has_edge(u, v)).collect();
        assert_eq!(g.edge_filter_bytes(), 0);
        g.prepare_edge_filter();
        assert!(g.edge_filter_bytes() > 0);
        let after: Vec<bool> = (0..n).flat_map(|u| (0..n).map(move |v| (u, v))).map(|(u, v)| g.has_edge(u, v)).collect();
        assert_eq!(before, after);
        assert_eq!(after.iter().filter(|&&x| x).count(), 100 + 299 * 2 - (0..n).filter(|u| (u * 7) % n == (u * 13 + 1) % n).count());
    }
}
