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
    /// Every `SEPARATOR_STRIDE`-th entry of the targets array (`targets[16 b]` at `b`): a long
    /// row's search bisects its separators, sixteen times fewer and few cache lines for a hot
    /// hub, then scans one line of the row ([`EdgeFilter::find`]).
    separators: Vec<u32>,
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

/// How many of `group`'s values are below `v` (its length: at most [`SEPARATOR_STRIDE`]).
/// A whole group is a fixed-length loop, which compiles to one vector compare and a count;
/// the shorter groups at a row's ends are searched.
#[inline(always)]
fn count_below(group: &[u32], v: u32) -> usize {
    match <&[u32; SEPARATOR_STRIDE]>::try_from(group) {
        Ok(whole) => whole.iter().map(|&x| (x < v) as usize).sum(),
        Err(_) => group.iter().position(|&x| x >= v).unwrap_or(group.len()),
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
        let separators = targets.iter().step_by(SEPARATOR_STRIDE).copied().collect();
        EdgeFilter { words, separators }
    }

    /// The index of the first edge `u -> v` in the row `lo..hi` of `u` (`targets` the graph's),
    /// as [`super::intersect::search`] finds it: in a long row through the separators.
    #[inline]
    pub fn find(&self, targets: &[u32], lo: usize, hi: usize, v: u32) -> Option<usize> {
        if hi - lo < SEPARATED_ROW {
            return super::intersect::search(&targets[lo..hi], v).map(|i| lo + i);
        }
        // The separators inside the row: targets[16 b] for b in b0..b1 (a sorted subsequence).
        let (b0, b1) = (lo.div_ceil(SEPARATOR_STRIDE), (hi - 1) / SEPARATOR_STRIDE + 1);
        let seps = &self.separators[b0..b1];
        // k separators lie below v: the first v is after the last of them and no later than
        // the next one (or the row's end); before the first, from the row's start.
        let k = seps.partition_point(|&x| x < v);
        // The stride's entries before the next separator, from the last one below v (or the
        // row's start): one aligned group of 16, a cache line when `targets` is 64-byte
        // aligned (the file's sections are). They are counted, not searched: one vector
        // compare and no branch on the data.
        let from = if k == 0 { lo } else { (b0 + k - 1) * SEPARATOR_STRIDE };
        let to = if b0 + k < b1 { (b0 + k) * SEPARATOR_STRIDE } else { hi };
        let i = from + count_below(&targets[from..to], v);
        if i < to {
            return (targets[i] == v).then_some(i);
        }
        // All below v: the first v can only be the next separator, already read.
        (b0 + k < b1 && seps[k] == v).then_some(to)
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
        self.words.len() * 8 + self.separators.len() * 4
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
        // 8 bits per entry of 3072, and a separator per 16 entries.
        assert_eq!(f.bytes(), 3072 + 4 * 3072 / 16);
    }

    #[test]
    fn a_search_through_the_separators_finds_what_a_plain_search_finds() {
        // Rows of many lengths (across the separated threshold), at offsets that are not
        // multiples of the stride, with repeated entries; every value in range and past it.
        let (offsets, targets) = random_rows(&[3, 127, 128, 129, 200, 1000, 4097, 17], 3000, 99);
        let f = EdgeFilter::build(&offsets, &targets);
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
