//! The uniform-rows path's output, a 64-byte line at a time: a lane gathers its walk's words of
//! one line of the output and writes the line with non-temporal stores once it is full, so the
//! line is never read in first (a scattered 4-byte store per step read in every line it
//! touched: on the R-MAT 18 web-like graph, 2 threads, DeepWalk unweighted went from 152 to
//! 170-183 M steps/s, `bench/results/2026-12-05-cpu-output-lines.md`; one thread lost 3-4%, and
//! the alias rows' path, whose steps take longer, gained nothing at 2 threads). Lines the walk shares
//! with another walk (its row's first and last), and the words held when it ends, are stored
//! word by word. Other targets than x86_64 store each word as it comes.

/// Whether the uniform-rows path gathers output lines (x86_64: SSE2's non-temporal stores, which
/// every x86_64 CPU has).
pub(super) const GATHERED: bool = cfg!(target_arch = "x86_64");

/// Words in a line.
const WORDS: usize = 16;

/// A lane's words of one output line: slot `k` holds the word at word address `16 m + k`.
#[derive(Clone, Copy)]
#[repr(align(64))]
pub(super) struct OutLine([u32; WORDS]);

impl OutLine {
    pub(super) const EMPTY: OutLine = OutLine([0; WORDS]);

    /// The slot of `out[at]` in its line.
    #[inline(always)]
    fn slot(out: &[u32], at: usize) -> usize {
        ((out.as_ptr() as usize >> 2) + at) % WORDS
    }

    /// Holds `v` for `out[at]`; writes the line out when `at` is its last word or `last` (the
    /// walk's last word), from `first` (the walk's first word this lane writes) at the earliest.
    #[inline(always)]
    pub(super) fn put(&mut self, out: &mut [u32], at: usize, v: u32, first: usize, last: bool) {
        let slot = Self::slot(out, at);
        self.0[slot] = v;
        if slot == WORDS - 1 || last {
            self.flush(out, at, slot, first);
        }
    }

    /// Writes the words still held when a walk stops early (a dead end) after `out[last]`,
    /// from `first` at the earliest: none if the line went out with `last` or nothing was put.
    #[inline(always)]
    pub(super) fn finish(&self, out: &mut [u32], last: usize, first: usize) {
        let slot = Self::slot(out, last);
        if last >= first && slot != WORDS - 1 {
            self.flush(out, last, slot, first);
        }
    }

    /// Writes the held words of the line whose word `out[last]` (at `slot`) was the last put,
    /// from `first` at the earliest: the whole line with non-temporal stores when it is the
    /// walk's alone and full, else word by word.
    #[inline(always)]
    fn flush(&self, out: &mut [u32], last: usize, slot: usize, first: usize) {
        if slot == WORDS - 1 && last + 1 >= WORDS + first {
            let line = &mut out[last + 1 - WORDS..=last];
            store_line(line.try_into().expect("a line is 16 words"), &self.0);
        } else {
            let start = last.saturating_sub(slot).max(first);
            for (k, o) in out[start..=last].iter_mut().enumerate() {
                *o = self.0[slot + start + k - last];
            }
        }
    }

    /// Makes this thread's non-temporal stores visible before the chunk is handed back: they
    /// are weakly ordered, and the join that follows orders only ordinary stores.
    #[inline(always)]
    pub(super) fn fence() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a store fence has no operands and no preconditions.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        }
    }
}

/// `dst = src`, `dst` a 64-byte aligned line of the output (its word address a multiple of
/// 16), with non-temporal stores on x86_64.
#[inline(always)]
fn store_line(dst: &mut [u32; WORDS], src: &[u32; WORDS]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_stream_si128};
        assert_eq!(dst.as_ptr() as usize % 64, 0, "an output line is 64-byte aligned");
        let (d, s) = (dst.as_mut_ptr() as *mut __m128i, src.as_ptr() as *const __m128i);
        // SAFETY: both are 64 bytes, `dst` 64-byte aligned (checked) and `src` an `OutLine`'s
        // words (`repr(align(64))`), so each 16-byte part is aligned as the instructions need;
        // SSE2 is part of x86_64.
        unsafe {
            for k in 0..4 {
                _mm_stream_si128(d.add(k), _mm_load_si128(s.add(k)));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every word put reaches `out`, nothing else is written, for every alignment of the slice,
    /// walk start and walk end, full lines included.
    #[test]
    fn put_words_land_and_nothing_else() {
        let mut backing = vec![u32::MAX; 256 + 16];
        for shift in 0..16 {
            for first in 1..40 {
                for len in 1..60 {
                    backing.fill(u32::MAX);
                    let out = &mut backing[shift..shift + 200];
                    let mut line = OutLine::EMPTY;
                    for at in first..first + len {
                        line.put(out, at, at as u32, first, at + 1 == first + len);
                    }
                    OutLine::fence();
                    for (i, &w) in out.iter().enumerate() {
                        let want = if (first..first + len).contains(&i) { i as u32 } else { u32::MAX };
                        assert_eq!(w, want, "shift {shift} first {first} len {len} word {i}");
                    }
                }
            }
        }
    }

    /// A walk that stops before its last word (a dead end) writes what it holds, wherever the
    /// line ends; a walk that put nothing writes nothing.
    #[test]
    fn flush_after_a_dead_end() {
        let mut out = vec![0u32; 64];
        let mut line = OutLine::EMPTY;
        for at in 3..10 {
            line.put(&mut out, at, 7, 3, false);
        }
        line.finish(&mut out, 9, 3);
        assert!(out[3..10].iter().all(|&w| w == 7), "{out:?}");
        assert!(out[..3].iter().chain(&out[10..]).all(|&w| w == 0));
        for shift in 0..16 {
            let mut out = vec![0u32; 64];
            let out = &mut out[shift..];
            let mut line = OutLine::EMPTY;
            for at in 5..5 + shift + 3 {
                line.put(out, at, 9, 5, false);
            }
            line.finish(out, 5 + shift + 2, 5);
            assert!(out[5..5 + shift + 3].iter().all(|&w| w == 9), "shift {shift}: {out:?}");
            // Nothing put: nothing written.
            let mut other = vec![0u32; 16];
            OutLine([1; WORDS]).finish(&mut other, 4, 5);
            assert!(other.iter().all(|&w| w == 0));
        }
    }
}
