//! The one search and intersection primitive over sorted adjacency rows, shared by the walks'
//! `has_edge` (through [`CsrGraph::find_edge`](super::CsrGraph::find_edge)) and triangle
//! counting, chosen by row length: a linear scan for short rows (one or two cache lines), a
//! binary search otherwise; intersections merge rows of similar length and search the longer
//! row for each entry of the shorter when their lengths differ by more than a factor
//! [`GALLOP_RATIO`]; a row intersected with many others is marked in a bitmap
//! ([`RowMarks`]) once it is long ([`BITMAP_ROW`]).

/// Rows at most this long are scanned, not bisected.
pub const LINEAR_SEARCH: usize = 16;

/// When the longer row is more than this many times the shorter, an intersection searches
/// the longer row for each entry of the shorter instead of merging.
pub const GALLOP_RATIO: usize = 32;

/// The position of the first `v` in the sorted `row`, if any.
#[inline]
pub fn search(row: &[u32], v: u32) -> Option<usize> {
    let i =
        if row.len() <= LINEAR_SEARCH { row.iter().position(|&x| x >= v).unwrap_or(row.len()) } else { row.partition_point(|&x| x < v) };
    (i < row.len() && row[i] == v).then_some(i)
}

/// Calls `f(i, j)` for every common value `a[i] == b[j]` of two sorted rows without
/// repeated values, in increasing order.
#[inline]
pub fn intersect(a: &[u32], b: &[u32], mut f: impl FnMut(usize, usize)) {
    let (short, long, swapped) = if a.len() <= b.len() { (a, b, false) } else { (b, a, true) };
    if short.is_empty() {
        return;
    }
    // long / short > GALLOP_RATIO, without a division per call.
    if long.len() >= (GALLOP_RATIO + 1) * short.len() {
        // Each search starts after the previous hit: the values are increasing.
        let mut from = 0;
        for (i, &v) in short.iter().enumerate() {
            let rest = &long[from..];
            let k = rest.partition_point(|&x| x < v);
            if k < rest.len() && rest[k] == v {
                let j = from + k;
                if swapped {
                    f(j, i)
                } else {
                    f(i, j)
                }
                from = j + 1;
            } else {
                from += k;
            }
            if from >= long.len() {
                break;
            }
        }
        return;
    }
    // Branch-free advance: which side moves depends on data, so a branch on it mispredicts
    // about half the time.
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        if x == y {
            f(i, j);
        }
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
}

/// How many values two sorted rows without repeated values share: [`intersect`]'s choice
/// between a merge and searches, counting only (triangle totals).
#[inline]
pub fn intersect_count(a: &[u32], b: &[u32]) -> u64 {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() >= (GALLOP_RATIO + 1) * short.len() {
        let mut found = 0;
        intersect(short, long, |_, _| found += 1);
        return found;
    }
    let (mut i, mut j, mut found) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        found += (x == y) as u64;
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    found
}

/// Rows at most this long are intersected all pairs at once (AVX-512 or AVX2) instead of
/// merged, against rows at most [`SHORT_OTHER`] long: a merge of a few entries is mostly the
/// misprediction of its loop's exit.
pub const SHORT_ROW: usize = 8;

/// See [`SHORT_ROW`].
pub const SHORT_OTHER: usize = 16;

/// [`intersect_count`] of two rows that are both parts of `all` (a graph's targets): when one
/// is at most [`SHORT_ROW`] long and the other at most [`SHORT_OTHER`], every pair is compared
/// at once without a branch on the values; otherwise, or on a CPU without AVX2, a merge.
/// (AVX2 reads [`SHORT_OTHER`] entries from each row's start, so there the rows must lie at
/// least that far from `all`'s end; AVX-512's masked loads read only the rows.)
#[inline(always)]
pub fn intersect_count_within(all: &[u32], a: &[u32], b: &[u32]) -> u64 {
    intersect_count_within_or(all, a, b, intersect_count)
}

/// [`intersect_count_within`] with `merge` for the rows it does not compare all pairs of.
#[inline(always)]
pub fn intersect_count_within_or(all: &[u32], a: &[u32], b: &[u32], merge: impl FnOnce(&[u32], &[u32]) -> u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let (short, other) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        // `&`, not `&&`: each test is a branch otherwise, and the lengths vary row to row.
        if (short.len() <= SHORT_ROW) & (other.len() <= SHORT_OTHER) & !short.is_empty() {
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: AVX-512F is present; the masked loads read only the rows' entries.
                return unsafe { short_rows_common_avx512(short.as_ptr(), short.len(), other.as_ptr(), other.len()) };
            }
            let room = |r: &[u32]| {
                let (at, start) = (r.as_ptr() as usize, all.as_ptr() as usize);
                at >= start && at + SHORT_OTHER * 4 <= start + all.len() * 4
            };
            if room(short) & room(other) && std::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 is present, and SHORT_OTHER entries from each row's start lie
                // in `all`.
                return unsafe { short_rows_common_avx2(short.as_ptr(), short.len(), other.as_ptr(), other.len()) };
            }
        }
    }
    let _ = all;
    merge(a, b)
}

/// How many of `b`'s first `lb` entries occur among `a`'s first `la` (`1 <= la <= 8`,
/// `lb <= 16`; no repeats within a row). Each of b's lanes is compared with a's eight
/// entries rotated eight ways; a lane matches at most one of them, so the lanes that matched
/// are the common values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn short_rows_common_avx512(a: *const u32, la: usize, b: *const u32, lb: usize) -> u64 {
    use std::arch::x86_64::*;
    let (ka, kb) = (((1u32 << la) - 1) as __mmask16, ((1u32 << lb) - 1) as __mmask16);
    // a's lanes past its end repeat its first entry: a lane of b that matches it once
    // matches it twice, and is counted once.
    // SAFETY: the caller guarantees la >= 1 entries at `a` and lb at `b`; masked-off lanes
    // are not read.
    let (va, vb) = unsafe {
        let first = _mm512_set1_epi32(*a as i32);
        (_mm512_mask_loadu_epi32(first, ka, a.cast()), _mm512_maskz_loadu_epi32(kb, b.cast()))
    };
    let lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mut hit: __mmask16 = 0;
    for r in 0..SHORT_ROW as i32 {
        let rotated = _mm512_permutexvar_epi32(_mm512_and_si512(_mm512_add_epi32(lane, _mm512_set1_epi32(r)), _mm512_set1_epi32(7)), va);
        hit |= _mm512_mask_cmpeq_epi32_mask(kb, vb, rotated);
    }
    hit.count_ones() as u64
}

/// [`short_rows_common_avx512`] on eight lanes: sixteen entries readable from each pointer.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn short_rows_common_avx2(a: *const u32, la: usize, b: *const u32, lb: usize) -> u64 {
    use std::arch::x86_64::*;
    let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    // SAFETY: the caller guarantees sixteen readable entries at `a` and at `b`.
    let (va, b0, b1) = unsafe { (_mm256_loadu_si256(a.cast()), _mm256_loadu_si256(b.cast()), _mm256_loadu_si256(b.add(8).cast())) };
    // a's lanes past its end repeat its first entry (as above); b's lanes past its end are
    // dropped by the mask at the end.
    let va = _mm256_blendv_epi8(
        _mm256_permutevar8x32_epi32(va, _mm256_setzero_si256()),
        va,
        _mm256_cmpgt_epi32(_mm256_set1_epi32(la as i32), lane),
    );
    let (mut hit0, mut hit1) = (_mm256_cmpeq_epi32(b0, va), _mm256_cmpeq_epi32(b1, va));
    for r in 1..SHORT_ROW as i32 {
        let rotated = _mm256_permutevar8x32_epi32(va, _mm256_and_si256(_mm256_add_epi32(lane, _mm256_set1_epi32(r)), _mm256_set1_epi32(7)));
        hit0 = _mm256_or_si256(hit0, _mm256_cmpeq_epi32(b0, rotated));
        hit1 = _mm256_or_si256(hit1, _mm256_cmpeq_epi32(b1, rotated));
    }
    let bits = _mm256_movemask_ps(_mm256_castsi256_ps(hit0)) as u32 | (_mm256_movemask_ps(_mm256_castsi256_ps(hit1)) as u32) << 8;
    (bits & ((1u32 << lb) - 1)).count_ones() as u64
}

/// [`intersect_count`] merging from the rows' ends: where `a`'s values all lie above some
/// value and `b` holds many entries below it, the merge stops before reaching them (it ends
/// when either row does).
#[inline]
pub fn intersect_count_from_end(a: &[u32], b: &[u32]) -> u64 {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() >= (GALLOP_RATIO + 1) * short.len() {
        return intersect_count(a, b);
    }
    let (mut i, mut j, mut found) = (a.len(), b.len(), 0u64);
    while i > 0 && j > 0 {
        let (x, y) = (a[i - 1], b[j - 1]);
        found += (x == y) as u64;
        i -= (x >= y) as usize;
        j -= (y >= x) as usize;
    }
    found
}

/// Rows at least this long are marked in a [`RowMarks`] bitmap when intersected with many
/// other rows (triangle counting's hub rows): each test is then one bit, not a merge step.
pub const BITMAP_ROW: usize = 64;

/// One row marked in a bitmap over all nodes, for constant-time membership tests.
pub struct RowMarks {
    bits: Vec<u64>,
    nodes: usize,
}

impl RowMarks {
    /// An empty bitmap over `n` nodes (allocated at the first [`mark`](Self::mark): a worker
    /// that never meets a long row never pays for it).
    pub fn new(n: usize) -> Self {
        RowMarks { bits: Vec::new(), nodes: n }
    }

    /// Marks every node of `row`.
    pub fn mark(&mut self, row: &[u32]) {
        if self.bits.is_empty() {
            self.bits = vec![0; self.nodes.div_ceil(64)];
        }
        for &v in row {
            self.bits[v as usize >> 6] |= 1 << (v & 63);
        }
    }

    /// Clears the marks of `row` (the bitmap is empty again after the row it marked).
    pub fn clear(&mut self, row: &[u32]) {
        for &v in row {
            self.bits[v as usize >> 6] = 0;
        }
    }

    /// Whether `v` is marked.
    #[inline(always)]
    pub fn has(&self, v: u32) -> bool {
        self.bits.get(v as usize >> 6).is_some_and(|w| w >> (v & 63) & 1 == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[u32], b: &[u32]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                if x == y {
                    out.push((i, j));
                }
            }
        }
        out
    }

    #[test]
    fn search_and_intersect_agree_with_brute_force() {
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        for case in 0..400 {
            // One case in four is two short rows over few values (the all-pairs path).
            let short = case % 4 == 1;
            let la = if short { (next() % 9) as usize } else { (next() % 70) as usize };
            let lb = if short {
                (next() % 17) as usize
            } else if case % 3 == 0 {
                (next() % 4000) as usize
            } else {
                (next() % 70) as usize
            };
            let range = if short { 1 + next() % 24 } else { 1 + next() % 500 };
            let mut a: Vec<u32> = (0..la).map(|_| next() % range).collect();
            let mut b: Vec<u32> = (0..lb).map(|_| next() % range).collect();
            a.sort_unstable();
            a.dedup();
            b.sort_unstable();
            b.dedup();
            let mut got = Vec::new();
            intersect(&a, &b, |i, j| got.push((i, j)));
            assert_eq!(got, naive(&a, &b), "case {case}");
            assert_eq!(intersect_count(&a, &b), got.len() as u64, "case {case}: count");
            assert_eq!(intersect_count(&b, &a), got.len() as u64, "case {case}: count, swapped");
            assert_eq!(intersect_count_from_end(&a, &b), got.len() as u64, "case {case}: from the end");
            assert_eq!(intersect_count_from_end(&b, &a), got.len() as u64, "case {case}: from the end, swapped");
            // The same rows as parts of one array, with room after them or not.
            for pad in [0usize, 3, 16] {
                let mut all = a.clone();
                all.extend(&b);
                all.extend(std::iter::repeat_n(u32::MAX, pad));
                let (ra, rb) = all[..a.len() + b.len()].split_at(a.len());
                assert_eq!(intersect_count_within(&all, ra, rb), got.len() as u64, "case {case}: within, pad {pad}");
                assert_eq!(intersect_count_within(&all, rb, ra), got.len() as u64, "case {case}: within, swapped, pad {pad}");
            }
            // Each instruction set's kernel, whichever the dispatch picks on this CPU.
            let (short, other) = if a.len() <= b.len() { (&a, &b) } else { (&b, &a) };
            #[cfg(target_arch = "x86_64")]
            if !short.is_empty() && short.len() <= SHORT_ROW && other.len() <= SHORT_OTHER {
                let mut padded = |r: &[u32]| {
                    let mut v = r.to_vec();
                    v.resize(SHORT_OTHER, next());
                    v
                };
                let (ps, po) = (padded(short), padded(other));
                if std::is_x86_feature_detected!("avx512f") {
                    // SAFETY: checked just above; the rows are in bounds.
                    let n = unsafe { short_rows_common_avx512(short.as_ptr(), short.len(), other.as_ptr(), other.len()) };
                    assert_eq!(n, got.len() as u64, "case {case}: AVX-512");
                }
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: checked just above; both copies hold SHORT_OTHER entries.
                    let n = unsafe { short_rows_common_avx2(ps.as_ptr(), short.len(), po.as_ptr(), other.len()) };
                    assert_eq!(n, got.len() as u64, "case {case}: AVX2");
                }
            }
            let mut marks = RowMarks::new(range as usize + 2);
            marks.mark(&b);
            for v in 0..range + 2 {
                assert_eq!(search(&b, v), b.iter().position(|&x| x == v), "search {v} in a row of {}", b.len());
                assert_eq!(marks.has(v), b.contains(&v));
            }
            marks.clear(&b);
            assert!((0..range + 2).all(|v| !marks.has(v)), "cleared");
        }
    }
}
