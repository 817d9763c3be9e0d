//! The one-draw fast paths: uniform rows and alias rows (see [`super`]).

use super::{Chunk, DEAD_ROW};
use crate::rng::{LANES, PhiloxLanes, Purpose, StepRng};
use crate::run::SamplerStats;
use crate::walk::{Walk, Walker};

/// A lane with no walker.
const IDLE: usize = usize::MAX;
/// A lane whose walker met a dead end this round.
const DEAD: usize = usize::MAX;

/// Sixteen walkers under way, one per lane, word-major where the generator reads them: each
/// lane's step-stream counter (`ctr[word][lane]`: the step, the query's low word, its high
/// bits with the purpose), its node, where its next node goes in the output (or [`IDLE`]),
/// its query and row, and its pending edge (or alias slot) with the word against the slot's
/// threshold. Fixed-size arrays: the lane loops carry no bounds checks.
#[derive(Clone)]
struct Group {
    ctr: [[u32; LANES]; 4],
    cur: [u32; LANES],
    at: [usize; LANES],
    query: [u64; LANES],
    row: [usize; LANES],
    pending: [usize; LANES],
    slot: [u32; LANES],
    word: [u32; LANES],
    /// Alias rows: the pending edge's target, read from its entry.
    next: [u32; LANES],
}

impl Group {
    const IDLE: Group = Group {
        ctr: [[0; LANES]; 4],
        cur: [0; LANES],
        at: [IDLE; LANES],
        query: [0; LANES],
        row: [0; LANES],
        pending: [DEAD; LANES],
        slot: [0; LANES],
        word: [0; LANES],
        next: [0; LANES],
    };

    /// Puts walker `w` (query `query`, output row `row`) in lane `l`.
    fn fill<S>(&mut self, l: usize, w: &Walker<S>, query: u64, row: usize, stride: usize) {
        let c = StepRng::first_counter(query, w.step, Purpose::Sample);
        for (word, x) in self.ctr.iter_mut().zip(c) {
            word[l] = x;
        }
        self.cur[l] = w.cur;
        self.at[l] = row * stride + 1;
        self.query[l] = query;
        self.row[l] = row;
    }
}

/// [`super::run_chunk`] for uniform rows (`ALIAS` false) or alias rows (`entries`), with the
/// graph's row offsets `offsets` (its own or a 32-bit copy), recording
/// each move's edge in `edges` when `RECORD` (a constant: the loop without it is untouched): the fast
/// paths' width of walkers in lock step, each in a lane of its own until its walk ends. A round
/// draws every lane's candidate (sixteen streams' first blocks at once) and prefetches it,
/// resolves alias entries (prefetching the targets), then moves every lane (prefetching its
/// new row's offsets): between a prefetch and its use the other lanes' work goes by.
pub(super) fn lock_step<W: Walk, O: Copy + Into<u64>, const ALIAS: bool, const RECORD: bool>(
    offsets: &[O],
    entries: &[[u32; 4]],
    chunk: &Chunk<W>,
    out: &mut [u32],
    lens: &mut [u32],
    edges: &mut [u64],
) -> SamplerStats {
    let (cfg, seed) = (chunk.cfg, chunk.seed);
    let g = chunk.ctx.graph;
    let targets = g.targets();
    debug_assert_eq!(offsets.len(), g.offsets().len());
    let stride = cfg.length as usize + 1;
    let philox = PhiloxLanes::new(seed);
    let width = cfg.fast_path_interleave();
    let mut groups = vec![Group::IDLE; width.div_ceil(LANES)];
    let mut st = SamplerStats::default();
    let mut next = 0usize;
    // The next walker into lane `l` of `group`, if any is left.
    // The walker is made in `made` (the lanes keep only its node, step and query).
    let mut made = Walker::new(0);
    let mut admit = |group: &mut Group, l: usize, next: &mut usize, out: &mut [u32], lens: &mut [u32]| -> bool {
        match chunk.next_walker(next, out, lens, &mut made) {
            Some((query, row)) => group.fill(l, &made, query, row, stride),
            None => group.at[l] = IDLE,
        }
        group.at[l] != IDLE
    };
    let mut active = 0;
    for i in 0..width {
        active += admit(&mut groups[i / LANES], i % LANES, &mut next, out, lens) as usize;
    }
    while active > 0 {
        // Draw: eight step streams' first blocks at once.
        for gr in groups.iter_mut() {
            let blocks = philox.blocks(&gr.ctr);
            // Idle lanes draw too (their node is still a node: the last walker's, or 0 when
            // the lane never had one, and some lane has a walker, so the graph has nodes);
            // the move skips them. Testing for them here cost two instructions a step.
            for l in 0..LANES {
                let v = gr.cur[l] as usize;
                debug_assert!(v + 1 < offsets.len());
                // SAFETY: a walker's node is a node of the graph (a start is checked against
                // the node count before the run, a move goes to a target, and targets are below
                // it: `CsrGraph`'s invariant), and `offsets` has one entry per node and one more.
                let (base, end) = unsafe { ((*offsets.get_unchecked(v)).into() as usize, (*offsets.get_unchecked(v + 1)).into() as usize) };
                if base == end {
                    gr.pending[l] = DEAD;
                    continue;
                }
                // With 32-bit offsets the length is 32-bit too, and the compiler, told so,
                // drops the `d <= u32::MAX` test below (rows lie in order: `base <= end`).
                let d = if size_of::<O>() == 4 { (end as u32).wrapping_sub(base as u32) as u64 } else { (end - base) as u64 };
                // `below(d)` on the block's first word, then the next word: Lemire's product is
                // accepted at once unless its low half is below `d` (then `below` itself
                // decides, on the stream seeded with this block: the same numbers).
                let m = blocks[0][l] as u64 * d;
                let (slot, word) = if d <= u32::MAX as u64 && (m as u32 as u64) >= d {
                    ((m >> 32) as usize, blocks[1][l])
                } else {
                    let block = [blocks[0][l], blocks[1][l], blocks[2][l], blocks[3][l]];
                    let mut rng = StepRng::with_first_block(seed, gr.query[l], gr.ctr[1][l], Purpose::Sample, block);
                    (rng.below(d) as usize, rng.next_u32())
                };
                gr.pending[l] = base + slot;
                if ALIAS {
                    crate::engine::prefetch(entries.as_ptr().wrapping_add(base + slot));
                    gr.slot[l] = slot as u32;
                    gr.word[l] = word;
                } else {
                    // eRJS's first draw of the step; its level (the second) never matters.
                    crate::engine::prefetch(targets.as_ptr().wrapping_add(base + slot));
                }
            }
        }
        // Resolve the alias entries to edges.
        if ALIAS {
            for gr in groups.iter_mut() {
                for l in 0..LANES {
                    let at = gr.pending[l];
                    if gr.at[l] == IDLE || at == DEAD {
                        continue;
                    }
                    let [threshold, other, target, other_target] = entries[at];
                    gr.pending[l] = if other == DEAD_ROW {
                        DEAD
                    } else {
                        let slot = gr.slot[l];
                        let keep = gr.word[l] < threshold;
                        let v = if keep { target } else { other_target };
                        gr.next[l] = v;
                        // The target came with the entry: its row is next.
                        crate::engine::prefetch(offsets.as_ptr().wrapping_add(v as usize));
                        at - slot as usize + if keep { slot } else { other } as usize
                    };
                }
            }
        }
        // Move; a lane whose walk ends takes the next walker.
        for gr in groups.iter_mut() {
            for l in 0..LANES {
                let at = gr.at[l];
                if at == IDLE {
                    continue;
                }
                let e = gr.pending[l];
                let ended = if e == DEAD {
                    st.dead_ends += 1;
                    true
                } else {
                    debug_assert!(e < targets.len() && at < out.len());
                    // SAFETY: `e` is `base + slot` with `slot` below the row's length, and a
                    // graph's rows lie within its targets (`CsrGraph`'s invariant, checked when it
                    // is made); `at` is a slot of this walker's output row, inside `out`
                    // (`Chunk::next_walker` hands out rows of `out`, `stride` slots each, and
                    // a walk ends after `length` moves).
                    let v = if ALIAS { gr.next[l] } else { unsafe { *targets.get_unchecked(e) } };
                    gr.cur[l] = v;
                    unsafe { *out.get_unchecked_mut(at) = v };
                    if RECORD {
                        // Slot `at` of row r is move `at - r * stride - 1` of it.
                        edges[at - gr.row[l] - 1] = e as u64;
                    }
                    gr.at[l] = at + 1;
                    gr.ctr[1][l] += 1;
                    let ended = gr.ctr[1][l] >= cfg.length;
                    if !ended && !ALIAS {
                        crate::engine::prefetch(offsets.as_ptr().wrapping_add(v as usize));
                    }
                    ended
                };
                if ended {
                    let row = gr.row[l];
                    lens[row] = (gr.at[l] - row * stride) as u32;
                    if !admit(gr, l, &mut next, out, lens) {
                        active -= 1;
                    }
                }
            }
        }
    }
    // Every move was one draw: eRJS's first trial, or one alias draw.
    let moves: u64 = lens.iter().map(|&l| l as u64 - 1).sum();
    if ALIAS {
        st.alias_steps = moves;
    } else {
        st.rejection_steps = moves;
        st.rejection_trials = moves;
    }
    st
}
