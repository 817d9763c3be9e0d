//! Listing the rows of an id-ordered graph that may close a triangle ([`super::IdOrder`]'s
//! `list_rows`), eight rows at a time with AVX-512: on a sparse graph the pass over every row
//! is a tenth of the count, and the scalar pass spends about five cycles a row.

/// Lists, as `IdOrder::list_rows_in::<UP>` does, the rows `first ..` of `off` (one more
/// offset than rows, at most `todo.len()` rows) in whole groups of eight, if this CPU has
/// AVX-512F and VL. Returns the rows done (a multiple of eight), the rows listed in `todo`,
/// and the oriented edges of the rows done but not listed; `None` without AVX-512, with an
/// empty `targets` or fewer than eight rows, and the caller lists every row itself.
#[inline(always)]
pub(super) fn groups<const UP: bool>(off: &[u64], targets: &[u32], first: u32, todo: &mut [u32]) -> Option<(usize, usize, u64)> {
    #[cfg(target_arch = "x86_64")]
    {
        let rows = (off.len() - 1).min(todo.len());
        if !targets.is_empty() && rows >= 8 && std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl") {
            // SAFETY: AVX-512F and VL are present; the groups read off[..=rows] and gathered
            // indices are clamped to targets' last entry; todo holds `rows` entries.
            return Some(unsafe { groups_avx512::<UP>(off, targets, first, todo, rows / 8) });
        }
    }
    let _ = (off, targets, first, todo);
    None
}

/// See [`groups`]: `groups` groups of eight rows. Per group, the rows' lengths from their
/// offsets, the two entries next to each row's cut gathered (clamped as the scalar pass's
/// reads are), both compared with the rows' own ids, and the listed rows' ids compressed
/// into `todo`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl")]
unsafe fn groups_avx512<const UP: bool>(off: &[u64], targets: &[u32], first: u32, todo: &mut [u32], groups: usize) -> (usize, usize, u64) {
    use std::arch::x86_64::*;
    let last = _mm512_set1_epi64((targets.len() - 1) as i64);
    let (one, two) = (_mm512_set1_epi64(1), _mm512_set1_epi64(2));
    let mut ids = _mm256_add_epi32(_mm256_set1_epi32(first as i32), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    let eight = _mm256_set1_epi32(8);
    let (mut listed, mut edges) = (0usize, 0u64);
    for g in 0..groups {
        // SAFETY (the whole block): rows 8g .. 8g + 8 are within the caller's rows, so
        // offsets 8g ..= 8g + 8 are in `off`; the gathers' indices are at most targets' last;
        // `listed` <= 8g, so the compressed store's (at most eight) ids fit in todo[..8g + 8].
        unsafe {
            let lo = _mm512_loadu_si512(off.as_ptr().add(8 * g).cast());
            let hi = _mm512_loadu_si512(off.as_ptr().add(8 * g + 1).cast());
            let len = _mm512_sub_epi64(hi, lo);
            let (at2, at1) = if UP { (_mm512_sub_epi64(hi, two), _mm512_sub_epi64(hi, one)) } else { (_mm512_add_epi64(lo, one), lo) };
            // A row too short wraps (upward) or runs past the end: clamped, then masked by
            // the length test below, as the scalar pass's `at`.
            let (at2, at1) = (_mm512_min_epu64(at2, last), _mm512_min_epu64(at1, last));
            let v2 = _mm512_i64gather_epi32::<4>(at2, targets.as_ptr().cast());
            let v1 = _mm512_i64gather_epi32::<4>(at1, targets.as_ptr().cast());
            let (c2, c1) = if UP {
                (_mm256_cmpgt_epu32_mask(v2, ids), _mm256_cmpgt_epu32_mask(v1, ids))
            } else {
                (_mm256_cmplt_epu32_mask(v2, ids), _mm256_cmplt_epu32_mask(v1, ids))
            };
            let listed_here = _mm512_cmpge_epu64_mask(len, two) & c2;
            let one_edge = _mm512_cmpge_epu64_mask(len, one) & c1 & !listed_here;
            _mm256_mask_compressstoreu_epi32(todo.as_mut_ptr().add(listed).cast(), listed_here, ids);
            listed += listed_here.count_ones() as usize;
            edges += one_edge.count_ones() as u64;
        }
        ids = _mm256_add_epi32(ids, eight);
    }
    (8 * groups, listed, edges)
}

/// Lists the rows `first + done.0 ..` of `off` one by one, continuing from `done` (rows done,
/// listed, edges): each row's end is the next one's start, and its two entries next to the
/// cut are clamped reads masked by the row's length (`&`, not `&&`: a short-circuit would be
/// a branch on it). Returns the rows listed in all and the oriented edges of the others.
#[inline(always)]
pub(super) fn rows<const UP: bool>(off: &[u64], targets: &[u32], first: u32, todo: &mut [u32], done: (usize, usize, u64)) -> (usize, u64) {
    let (start, mut listed, mut edges) = done;
    let Some(last) = targets.len().checked_sub(1) else { return (0, 0) };
    let at = |i: usize| targets[i.min(last)];
    let mut lo = off[start] as usize;
    for (k, &hi) in off[start + 1..].iter().enumerate() {
        let k = start + k;
        let (a, hi) = (first + k as u32, hi as usize);
        let len = hi - lo;
        let (two, one) = if UP {
            ((len >= 2) & (at(hi.wrapping_sub(2)) > a), (len >= 1) & (at(hi.wrapping_sub(1)) > a))
        } else {
            ((len >= 2) & (at(lo + 1) < a), (len >= 1) & (at(lo) < a))
        };
        todo[listed.min(k)] = a;
        listed += two as usize;
        edges += (one & !two) as u64;
        lo = hi;
    }
    (listed, edges)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of random lengths (empty ones, self loops and the targets' very end included)
    /// listed by groups of eight and the rest one by one, against every row one by one; both
    /// directions, several starting rows and lengths not a multiple of eight.
    #[test]
    fn groups_list_what_the_rows_list() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        for case in 0..200 {
            let n = 1 + next(300) as usize;
            let first = next(5) as u32 * 1000;
            let mut off = vec![0u64];
            let mut targets = Vec::new();
            for k in 0..n {
                let len = [0, 1, 2, 3, next(12)][next(5) as usize];
                let a = first as u64 + k as u64;
                let mut row: Vec<u32> = (0..len).map(|_| (a + next(40)).saturating_sub(20) as u32).collect();
                row.sort_unstable();
                row.dedup();
                targets.extend(row);
                off.push(targets.len() as u64);
            }
            for up in [false, true] {
                let (mut a, mut b) = (vec![u32::MAX; n], vec![u32::MAX; n]);
                let (whole, grouped) = if up {
                    let g = groups::<true>(&off, &targets, first, &mut b).unwrap_or((0, 0, 0));
                    (rows::<true>(&off, &targets, first, &mut a, (0, 0, 0)), rows::<true>(&off, &targets, first, &mut b, g))
                } else {
                    let g = groups::<false>(&off, &targets, first, &mut b).unwrap_or((0, 0, 0));
                    (rows::<false>(&off, &targets, first, &mut a, (0, 0, 0)), rows::<false>(&off, &targets, first, &mut b, g))
                };
                assert_eq!(whole, grouped, "case {case}, upward {up}");
                assert_eq!(a[..whole.0], b[..whole.0], "case {case}, upward {up}");
            }
        }
    }
}
