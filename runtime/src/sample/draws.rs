//! Uniform draws of a row's edges: each draw on its own Philox sub-stream (so GPU lanes make
//! them in parallel and get the CPU's numbers), Floyd's subsets without replacement.

use super::Replacement;
use crate::rng::{LANES, PhiloxLanes, Purpose, StepRng};

/// Philox blocks reserved for each uniform draw (Lemire's rejection rarely needs a second
/// word, never 64).
pub const BLOCKS_PER_DRAW: u32 = 16;

/// The stream of uniform draw `i` of a node: its own sub-stream, so the draws of one node can
/// be made in parallel (GPU lanes) and still equal the CPU's ([`for_each_below`] makes them).
#[cfg(test)]
fn draw_rng(seed: u64, query: u64, layer: u32, i: u32) -> StepRng {
    StepRng::new_at(seed, query, layer, Purpose::Neighbors, i * BLOCKS_PER_DRAW)
}

/// Floyd's algorithm: a uniformly random `picks.len()`-subset of `0..d`, ascending. Iteration
/// `i` draws `t` uniform in `[0, j]` for `j = d - k + i` (draw `i`'s own stream) and takes `t`,
/// or `j` if `t` was taken already; every subset has probability `1 / C(d, k)`. The first
/// block of each draw's stream is computed sixteen draws at a time ([`PhiloxLanes`]).
fn floyd(lanes: &PhiloxLanes, seed: u64, query: u64, layer: u32, d: u64, picks: &mut [u64]) {
    let k = picks.len() as u64;
    // Draw i is uniform in [0, j], j = d - k + i.
    let bound = |i: usize| d - k + i as u64 + 1;
    if d <= 64 {
        // One word of bits, held in a register; `j` is above every earlier pick, so its bit
        // is always free.
        let mut word = 0u64;
        for_each_below(lanes, seed, query, layer, k as usize, bound, |i, t| {
            let j = d - k + i as u64;
            let pick = if word >> t & 1 != 0 { j } else { t };
            word |= 1 << pick;
        });
        read_out(&[word], picks, 1);
        return;
    }
    if d <= FLOYD_BITMAP_MAX as u64 {
        // Rows up to a few thousand entries (nearly all): the picks as bits of a bitmap on
        // the stack, a test and a set per draw, read out in order at the end. `used` has a
        // bit per word that holds a pick, so the read-out visits those only (a hub's picks
        // are a few bits in many words).
        let mut bits = [0u64; FLOYD_BITMAP_MAX / 64];
        let words = &mut bits[..(d as usize).div_ceil(64)];
        let mut used = 0u64;
        for_each_below(lanes, seed, query, layer, k as usize, bound, |i, t| {
            let j = d - k + i as u64;
            let taken = words[t as usize / 64] >> (t % 64) & 1 != 0;
            let pick = if taken { j } else { t };
            words[pick as usize / 64] |= 1 << (pick % 64);
            used |= 1 << (pick / 64);
        });
        read_out(words, picks, used);
        return;
    }
    for_each_below(lanes, seed, query, layer, k as usize, bound, |i, t| {
        let j = d - k + i as u64;
        // Branch-free (a fold, not `contains`): t is taken about k / d of the time, which no
        // predictor learns.
        let taken = picks[..i].iter().fold(false, |any, &p| any | (p == t));
        picks[i] = if taken { j } else { t };
    });
    sort_distinct(picks);
}

/// Writes the set bits of `words` (those of the words marked in `used`) to `picks`, ascending.
#[inline(always)]
fn read_out(words: &[u64], picks: &mut [u64], mut used: u64) {
    let mut n = 0;
    while used != 0 {
        let w = used.trailing_zeros() as usize;
        used &= used - 1;
        let mut x = words[w];
        while x != 0 {
            picks[n] = (w * 64) as u64 + x.trailing_zeros() as u64;
            n += 1;
            x &= x - 1;
        }
    }
}

/// Rows up to this many entries keep Floyd's picks in a bitmap ([`floyd`]).
const FLOYD_BITMAP_MAX: usize = 4096;

/// Fanouts up to this many picks are sorted by rank ([`sort_distinct`]).
const RANK_SORT_MAX: usize = 32;

/// Sorts distinct values ascending. Up to [`RANK_SORT_MAX`] of them, each goes straight to its
/// rank (how many are smaller): k² comparisons without a branch, where an insertion sort of
/// random picks mispredicted about once per element and took most of a row's sampling time.
#[inline]
fn sort_distinct(xs: &mut [u64]) {
    if xs.len() > RANK_SORT_MAX {
        xs.sort_unstable();
        return;
    }
    let mut out = [0u64; RANK_SORT_MAX];
    for &x in xs.iter() {
        let rank = xs.iter().fold(0usize, |r, &y| r + (y < x) as usize);
        out[rank] = x;
    }
    xs.copy_from_slice(&out[..xs.len()]);
}

/// Calls `f(i, t)` for draws `i` in `0..count`, in order, with `t` uniform in
/// `[0, bound(i))` from draw `i`'s own stream ([`draw_rng`]; `StepRng::below`, Lemire's
/// method). The streams' first blocks are computed sixteen at a time, and a draw whose first
/// word is accepted (nearly all) reads nothing else; the others continue on the stream.
#[inline(always)]
fn for_each_below(
    lanes: &PhiloxLanes,
    seed: u64,
    query: u64,
    layer: u32,
    count: usize,
    bound: impl Fn(usize) -> u64,
    mut f: impl FnMut(usize, u64),
) {
    let first = StepRng::first_counter(query, layer, Purpose::Neighbors);
    let mut ctr = [[0u32; LANES]; 4];
    for (w, word) in ctr.iter_mut().enumerate().skip(1) {
        *word = [first[w]; LANES];
    }
    for at in (0..count).step_by(LANES) {
        for (lane, c) in ctr[0].iter_mut().enumerate() {
            *c = ((at + lane) as u32).wrapping_mul(BLOCKS_PER_DRAW);
        }
        let blocks = lanes.blocks(&ctr);
        for i in at..(at + LANES).min(count) {
            let lane = i - at;
            let n = bound(i);
            // Lemire: the product's low word at least n is never rejected.
            let m = blocks[0][lane] as u64 * n.min(u32::MAX as u64);
            let t = if n <= u32::MAX as u64 && m as u32 as u64 >= n {
                m >> 32
            } else {
                let block = [blocks[0][lane], blocks[1][lane], blocks[2][lane], blocks[3][lane]];
                StepRng::new_at_with_block(seed, query, layer, Purpose::Neighbors, ctr[0][lane], block).below(n)
            };
            f(i, t);
        }
    }
}

/// How many edges a uniform draw of `fanout` takes from a row of `d`.
#[inline(always)]
pub(super) fn uniform_count(d: u64, fanout: u32, replacement: Replacement) -> u64 {
    match replacement {
        Replacement::Without => d.min(fanout as u64),
        Replacement::With if d == 0 => 0,
        Replacement::With => fanout as u64,
    }
}

/// A uniform draw from `row` (global edge ids) into `out`, [`uniform_count`] entries long:
/// the whole row, Floyd's subset, or independent draws.
#[inline(always)]
pub(super) fn uniform_row(
    lanes: &PhiloxLanes,
    seed: u64,
    query: u64,
    layer: u32,
    row: std::ops::Range<usize>,
    replacement: Replacement,
    out: &mut [u64],
) {
    let (base, d, k) = (row.start as u64, row.len() as u64, out.len());
    match replacement {
        Replacement::Without if d <= k as u64 => {
            for (x, e) in out.iter_mut().zip(base..) {
                *x = e;
            }
        }
        Replacement::Without => {
            floyd(lanes, seed, query, layer, d, out);
            for x in out.iter_mut() {
                *x += base;
            }
        }
        Replacement::With => for_each_below(lanes, seed, query, layer, k, |_| d, |i, t| out[i] = base + t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_made_sixteen_at_a_time_are_each_draws_own_stream() {
        let lanes = PhiloxLanes::new(0xDEAD_BEEF_1234);
        // Bounds where Lemire rejects often (3 * 2^30: a quarter of first words), past 32
        // bits, exactly 2^32, and small.
        let bounds = [3u64 << 30, (1 << 40) + 7, 1 << 32, 5, u32::MAX as u64, 1];
        for (query, layer, count) in [(7u64, 0u32, 1usize), ((3 << 32) | 12, 1, 16), (99, 2, 40), (5, 3, 300)] {
            let mut seen = 0;
            let bound = |i: usize| bounds[i % bounds.len()];
            for_each_below(&lanes, 0xDEAD_BEEF_1234, query, layer, count, bound, |i, t| {
                assert_eq!(i, seen);
                seen += 1;
                let want = draw_rng(0xDEAD_BEEF_1234, query, layer, i as u32).below(bound(i));
                assert_eq!(t, want, "draw {i} of query {query}");
            });
            assert_eq!(seen, count);
        }
    }

    /// Floyd's algorithm as written in the textbook: what [`floyd`]'s bitmap, rank-sort and
    /// plain-sort paths must all give, draw for draw.
    fn floyd_by_the_book(seed: u64, query: u64, layer: u32, d: u64, k: usize) -> Vec<u64> {
        let mut picks: Vec<u64> = Vec::new();
        for i in 0..k {
            let j = d - k as u64 + i as u64;
            let t = draw_rng(seed, query, layer, i as u32).below(j + 1);
            picks.push(if picks.contains(&t) { j } else { t });
        }
        picks.sort_unstable();
        picks
    }

    #[test]
    fn floyd_equals_the_book_on_every_path() {
        let lanes = PhiloxLanes::new(77);
        // Bitmaps of one and several words, the largest bitmap and past it (rank sort), and
        // fanouts past the rank sort's.
        for d in [2u64, 3, 17, 63, 64, 65, 130, 1000, 4095, 4096, 4097, 20_000] {
            for k in [1usize, 2, 5, 15, 25, 32, 33, 40] {
                if k as u64 >= d {
                    continue;
                }
                for query in [1u64, (5 << 32) | 9, 1234] {
                    let mut picks = vec![0u64; k];
                    floyd(&lanes, 77, query, 2, d, &mut picks);
                    assert_eq!(picks, floyd_by_the_book(77, query, 2, d, k), "{k} of {d}, query {query}");
                }
            }
        }
    }

    #[test]
    fn rank_sort_equals_a_sort() {
        let mut rng = StepRng::new(5, 0, 0, Purpose::Neighbors);
        for len in 0..=RANK_SORT_MAX + 3 {
            for _ in 0..20 {
                let mut xs: Vec<u64> = Vec::new();
                while xs.len() < len {
                    let x = rng.below(3 * len as u64 + 1) << (rng.below(2) * 40);
                    if !xs.contains(&x) {
                        xs.push(x);
                    }
                }
                let mut want = xs.clone();
                want.sort_unstable();
                sort_distinct(&mut xs);
                assert_eq!(xs, want, "{len} values");
            }
        }
    }
}
