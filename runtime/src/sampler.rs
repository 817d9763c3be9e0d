//! Exact samplers over one node's candidates.
//!
//! Each sampler draws index `i` of `0..d` with probability `w(i) / Σ w`, or returns `None` if
//! every weight is 0. `w` is evaluated lazily and may be expensive (Node2Vec's adjacency
//! test), so the samplers differ in how many weights they evaluate and how many random numbers
//! they draw:
//!
//! | sampler | weights evaluated | random draws | needs |
//! |---|---|---|---|
//! | [`rejection`] (eRJS) | ~`d·B/S` | 2 per trial | a bound `B >= max w` |
//! | [`reservoir_jump`] (eRVS) | `d`, once each | ~2 per key change, `O(log d)` expected | nothing |
//! | [`inverse_transform`] | `d` | 1 | a prefix-sum buffer |
//! | [`prefix_table`] | 0 (precomputed) | 1 | static weights, per-row prefix sums |
//! | [`reservoir_prefix`] (FlowWalker) | `d` | 1 per positive weight | nothing |
//!
//! The last two are references for tests and ablations.

use crate::rng::StepRng;

/// A weight that breaks the contract, found while sampling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SampleError {
    /// `w(index)` was negative, NaN or infinite.
    BadWeight {
        /// Candidate index.
        index: usize,
        /// The weight.
        weight: f32,
    },
    /// `w(index)` exceeded the bound given to rejection sampling.
    BoundViolated {
        /// Candidate index.
        index: usize,
        /// The weight.
        weight: f32,
    },
}

#[inline(always)]
fn checked(index: usize, w: f32) -> Result<f32, SampleError> {
    // `!(w >= 0)` also catches NaN.
    if !(w >= 0.0) || w == f32::INFINITY {
        return Err(SampleError::BadWeight { index, weight: w });
    }
    Ok(w)
}

/// The result of a bounded run of rejection trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectionOutcome {
    /// Candidate accepted after `trials` trials.
    Accepted {
        /// The accepted index.
        index: usize,
        /// Trials used (including the accepting one).
        trials: u32,
    },
    /// No acceptance within the trial cap.
    GaveUp {
        /// Trials used.
        trials: u32,
    },
}

/// eRJS: propose `i` uniformly (Lemire), accept with probability `w(i) / B`.
///
/// Stops after `max_trials` rejections so a loose bound or an all-zero row cannot loop for
/// long. Giving up is exact to recover from: conditioned on `k` rejections, the next accepted
/// proposal still has the target distribution, so the caller may finish the step with any
/// other exact sampler (the engine uses eRVS, which also detects all-zero rows).
///
/// `envelope(i)`, if it returns `Some((lo, hi))` with `lo <= w(i) <= hi`, is a squeeze: the
/// trial is decided without evaluating `w(i)` when the uniform level falls outside `[lo, hi)`.
/// The decision is the same as with `w(i)`, so the squeeze changes the cost, not the result.
#[inline]
pub fn rejection(
    d: usize,
    bound: f32,
    max_trials: u32,
    rng: &mut StepRng,
    mut envelope: impl FnMut(usize) -> Option<(f32, f32)>,
    mut w: impl FnMut(usize) -> f32,
) -> Result<RejectionOutcome, SampleError> {
    for t in 1..=max_trials {
        let (i, y) = rejection_propose(d, bound, rng);
        if rejection_decide(i, y, bound, &mut envelope, &mut w)? {
            return Ok(RejectionOutcome::Accepted { index: i, trials: t });
        }
    }
    Ok(RejectionOutcome::GaveUp { trials: max_trials })
}

/// One eRJS proposal: a uniform candidate `i` in `0..d` and a uniform level `y` in `(0, B)`.
/// Split from [`rejection_decide`] so an engine can prefetch candidate `i`'s edge data and
/// serve other walkers while it arrives.
#[inline(always)]
pub fn rejection_propose(d: usize, bound: f32, rng: &mut StepRng) -> (usize, f64) {
    let i = rng.below(d as u64) as usize;
    (i, rng.uniform() * bound as f64)
}

/// Decides one eRJS trial: accept iff `y < w(i)`, deciding by the envelope alone when it can.
#[inline(always)]
pub fn rejection_decide(
    i: usize,
    y: f64,
    bound: f32,
    mut envelope: impl FnMut(usize) -> Option<(f32, f32)>,
    mut w: impl FnMut(usize) -> f32,
) -> Result<bool, SampleError> {
    if let Some((lo, hi)) = envelope(i) {
        if y < lo as f64 && lo <= bound {
            return Ok(true);
        }
        if y >= hi as f64 {
            return Ok(false);
        }
    }
    let wi = checked(i, w(i))?;
    if wi > bound {
        return Err(SampleError::BoundViolated { index: i, weight: wi });
    }
    Ok(y < wi as f64)
}

/// eRVS: exponential-key reservoir sampling with jumps (Efraimidis–Spirakis A-ExpJ).
///
/// Item `i` gets key `E_i / w_i` (`E_i ~ Exp(1)`); the smallest key wins, which selects `i`
/// with probability `w_i / Σ w`. Instead of drawing a key per item, the sampler draws how much
/// weight to skip before the next item that beats the current best key `g` (exponential with
/// rate `g`), and gives that item a key drawn conditioned to beat `g`. Each weight is read
/// once; the expected number of random draws is logarithmic in `d`.
#[inline]
pub fn reservoir_jump(d: usize, rng: &mut StepRng, mut w: impl FnMut(usize) -> f32) -> Result<Option<usize>, SampleError> {
    let mut i = 0;
    let (mut g, mut sel) = loop {
        if i == d {
            return Ok(None);
        }
        let wi = checked(i, w(i))?;
        if wi > 0.0 {
            break (rng.exponential() / wi as f64, i);
        }
        i += 1;
    };
    let mut skip = rng.exponential() / g;
    for j in i + 1..d {
        let wj = checked(j, w(j))? as f64;
        skip -= wj;
        if skip <= 0.0 && wj > 0.0 {
            // Key of item j conditioned on beating g: E_j < g·w_j, i.e. u in (e^{-g w_j}, 1).
            let t = (-g * wj).exp();
            let u = t + rng.uniform() * (1.0 - t);
            g = -u.ln() / wj;
            sel = j;
            skip = rng.exponential() / g;
        }
    }
    Ok(Some(sel))
}

/// A key and an item, ordered by key (then item): the heap of A-ExpJ keeps the largest on top.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Keyed(f64, usize);

impl Eq for Keyed {}

impl PartialOrd for Keyed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Keyed {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// eRVS for `k` items without replacement: the `k` smallest keys `E_i / w_i` (successive
/// sampling proportional to `w`, what GNN samplers call weighted sampling without
/// replacement), found with the same A-ExpJ jumps as [`reservoir_jump`] and a heap of the `k`
/// best: once `k` items hold keys, the next item to beat the largest of them (`T`) is found by
/// skipping weight `X ~ Exp(T)` (memoryless), and its key is drawn conditioned on beating `T`.
/// Exact like drawing every key, with O(k log(d/k)) draws; weight 0 is never taken. Returns
/// the chosen indices ascending (all positive-weight ones when there are at most `k`).
/// The weights must be finite and non-negative (checked by the caller).
pub fn reservoir_top_k(w: &[f32], k: usize, rng: &mut StepRng) -> Vec<usize> {
    let mut heap: std::collections::BinaryHeap<Keyed> = std::collections::BinaryHeap::with_capacity(k + 1);
    let mut skip = f64::INFINITY;
    for (i, &x) in w.iter().enumerate() {
        if x <= 0.0 || k == 0 {
            continue;
        }
        let x = x as f64;
        if heap.len() < k {
            heap.push(Keyed(rng.exponential() / x, i));
            if heap.len() == k {
                skip = rng.exponential() / heap.peek().expect("k > 0").0;
            }
            continue;
        }
        skip -= x;
        if skip <= 0.0 {
            let t = heap.peek().expect("k > 0").0;
            // E conditioned on E < t·x: -log1p(-V (1 - e^{-t x})), V ~ U(0, 1).
            let key = -(-rng.uniform() * -(-t * x).exp_m1()).ln_1p() / x;
            heap.pop();
            heap.push(Keyed(key, i));
            skip = rng.exponential() / heap.peek().expect("k > 0").0;
        }
    }
    let mut idx: Vec<usize> = heap.into_iter().map(|Keyed(_, i)| i).collect();
    idx.sort_unstable();
    idx
}

/// Reference: inverse transform over a prefix sum (accumulated in f64).
pub fn inverse_transform(
    d: usize,
    rng: &mut StepRng,
    prefix: &mut Vec<f64>,
    mut w: impl FnMut(usize) -> f32,
) -> Result<Option<usize>, SampleError> {
    prefix.clear();
    let mut s = 0f64;
    for i in 0..d {
        s += checked(i, w(i))? as f64;
        prefix.push(s);
    }
    if s <= 0.0 {
        return Ok(None);
    }
    let x = rng.uniform() * s;
    let i = prefix.partition_point(|&p| p <= x);
    // x < s because u < 1 and f64 has room for it, so i < d; the min is belt and braces.
    Ok(Some(i.min(d - 1)))
}

/// Inverse transform over a row's precomputed inclusive prefix sums (static-weight walks):
/// one random number and a binary search. `None` if the row's total weight is 0.
#[inline]
pub fn prefix_table(row: &[f64], rng: &mut StepRng) -> Option<usize> {
    let total = *row.last()?;
    if total <= 0.0 {
        return None;
    }
    let x = rng.uniform() * total;
    Some(row.partition_point(|&p| p <= x).min(row.len() - 1))
}

/// Reference: FlowWalker-style weighted reservoir (A-Chao), one draw per positive weight:
/// item `i` replaces the reservoir with probability `w_i / W_i`, `W_i` the running sum.
pub fn reservoir_prefix(d: usize, rng: &mut StepRng, mut w: impl FnMut(usize) -> f32) -> Result<Option<usize>, SampleError> {
    let mut total = 0f64;
    let mut sel = None;
    for i in 0..d {
        let wi = checked(i, w(i))? as f64;
        if wi > 0.0 {
            total += wi;
            if rng.uniform() * total < wi {
                sel = Some(i);
            }
        }
    }
    Ok(sel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    #[test]
    fn all_zero_rows_are_dead_ends() {
        let mut rng = StepRng::new(1, 0, 0, Purpose::Sample);
        let zero = |_| 0.0;
        assert_eq!(reservoir_jump(5, &mut rng, zero).unwrap(), None);
        assert_eq!(reservoir_prefix(5, &mut rng, zero).unwrap(), None);
        assert_eq!(inverse_transform(5, &mut rng, &mut Vec::new(), zero).unwrap(), None);
        assert_eq!(rejection(5, 1.0, 40, &mut rng, |_| None, zero).unwrap(), RejectionOutcome::GaveUp { trials: 40 });
    }

    #[test]
    fn bad_weights_and_bounds_are_reported() {
        let mut rng = StepRng::new(1, 0, 0, Purpose::Sample);
        let nan = |i| if i == 2 { f32::NAN } else { 1.0 };
        assert!(matches!(reservoir_jump(4, &mut rng, nan), Err(SampleError::BadWeight { index: 2, .. })));
        assert!(matches!(reservoir_jump(3, &mut rng, |_| -1.0), Err(SampleError::BadWeight { index: 0, .. })));
        assert!(matches!(rejection(3, 1.0, 100, &mut rng, |_| None, |_| 2.0), Err(SampleError::BoundViolated { .. })));
    }

    #[test]
    fn single_positive_item_always_wins() {
        for q in 0..200 {
            let mut rng = StepRng::new(9, q, 0, Purpose::Sample);
            let w = |i| if i == 7 { 0.001 } else { 0.0 };
            assert_eq!(reservoir_jump(20, &mut rng, w).unwrap(), Some(7));
            assert_eq!(reservoir_prefix(20, &mut rng, w).unwrap(), Some(7));
            assert_eq!(inverse_transform(20, &mut rng, &mut Vec::new(), w).unwrap(), Some(7));
        }
    }
}
