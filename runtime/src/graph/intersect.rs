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
            let la = (next() % 70) as usize;
            let lb = if case % 3 == 0 { (next() % 4000) as usize } else { (next() % 70) as usize };
            let range = 1 + next() % 500;
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
