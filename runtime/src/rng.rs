//! Counter-based random numbers: Philox4x32-10 and the per-step streams built on it.
//!
//! Every random number a walk consumes is a pure function of `(seed, query, step, purpose,
//! draw index)`. Nothing depends on which thread runs a walker, how queries are batched, or
//! how many walkers a thread interleaves, which is what makes a seed reproduce the same walks
//! on 1 thread, 64 threads or (later) a GPU.
//!
//! Counter layout of one Philox block (four 32-bit words):
//!
//! | word | holds |
//! |---|---|
//! | `c0` | the draw block index within the stream (4 outputs per block) |
//! | `c1` | the step number (`u32::MAX` for walker initialisation) |
//! | `c2` | the low 32 bits of the query index |
//! | `c3` | bits 32..56 of the query index, and the [`Purpose`] in the top byte |
//!
//! The key is the 64-bit seed.

const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;

#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = (a as u64) * (b as u64);
    ((p >> 32) as u32, p as u32)
}

/// One Philox4x32 round with round key `k`.
#[inline(always)]
fn philox_round(c: [u32; 4], k: [u32; 2]) -> [u32; 4] {
    let (hi0, lo0) = mulhilo(PHILOX_M0, c[0]);
    let (hi1, lo1) = mulhilo(PHILOX_M1, c[2]);
    [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0]
}

/// The round key after `k`.
#[inline(always)]
fn bump(k: [u32; 2]) -> [u32; 2] {
    [k[0].wrapping_add(PHILOX_W0), k[1].wrapping_add(PHILOX_W1)]
}

/// Philox4x32 with `R` rounds (Salmon et al., SC'11), the generator of Random123 and cuRAND.
///
/// `philox4x32(ctr, key)` with ten rounds reproduces Random123's known-answer vectors.
#[inline(always)]
pub fn philox4x32_rounds<const R: usize>(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = ctr;
    let mut k = key;
    for _ in 0..R {
        c = philox_round(c, k);
        k = bump(k);
    }
    c
}

/// Philox4x32-10: the ten-round variant used everywhere in wayfarer. Written out round by
/// round: inside a large caller LLVM may keep the loop of [`philox4x32_rounds`] rolled (seen
/// in the Cranelift walks' engine, a third more instructions per draw).
#[inline(always)]
pub fn philox4x32(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let k0 = key;
    let k1 = bump(k0);
    let k2 = bump(k1);
    let k3 = bump(k2);
    let k4 = bump(k3);
    let k5 = bump(k4);
    let k6 = bump(k5);
    let k7 = bump(k6);
    let k8 = bump(k7);
    let k9 = bump(k8);
    let c = philox_round(ctr, k0);
    let c = philox_round(c, k1);
    let c = philox_round(c, k2);
    let c = philox_round(c, k3);
    let c = philox_round(c, k4);
    let c = philox_round(c, k5);
    let c = philox_round(c, k6);
    let c = philox_round(c, k7);
    let c = philox_round(c, k8);
    philox_round(c, k9)
}

/// Lanes of [`PhiloxLanes`]: the engine's fast paths draw the first block of sixteen walkers'
/// step streams at once.
pub const LANES: usize = 16;

/// Which vector instructions [`PhiloxLanes`] uses (checked once, when it is made).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LaneIsa {
    /// One 512-bit register per word: all sixteen lanes at once.
    Avx512,
    /// One 256-bit register per word: the lanes in two halves.
    Avx2,
    /// A portable loop the compiler vectorizes as it can.
    Portable,
}

/// Philox4x32-10 of [`LANES`] counters at a time under one seed, word-major (`c[w][lane]`):
/// the same numbers as [`philox4x32`] lane by lane, several times cheaper per block. The round
/// keys are broadcast once, and with AVX-512 (or AVX2, checked once, here) the lanes of a word
/// share a register.
pub struct PhiloxLanes {
    /// Round `r`'s key words, each repeated over the lanes: `[k0, k1]` at `2r`, `2r + 1`.
    round_keys: [[u32; LANES]; 20],
    isa: LaneIsa,
}

impl PhiloxLanes {
    /// The generator of `seed`'s streams.
    pub fn new(seed: u64) -> Self {
        let mut k = StepRng::key(seed);
        let mut round_keys = [[0u32; LANES]; 20];
        for r in 0..10 {
            round_keys[2 * r] = [k[0]; LANES];
            round_keys[2 * r + 1] = [k[1]; LANES];
            k = bump(k);
        }
        PhiloxLanes { round_keys, isa: Self::detect() }
    }

    fn detect() -> LaneIsa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                return LaneIsa::Avx512;
            }
            if std::is_x86_feature_detected!("avx2") {
                return LaneIsa::Avx2;
            }
        }
        LaneIsa::Portable
    }

    /// The blocks of sixteen counters.
    #[inline]
    pub fn blocks(&self, c: &[[u32; LANES]; 4]) -> [[u32; LANES]; 4] {
        #[cfg(target_arch = "x86_64")]
        match self.isa {
            // SAFETY: the CPU has AVX-512F (checked by `new`), the function's only requirement.
            LaneIsa::Avx512 => return unsafe { philox_lanes_avx512(c, &self.round_keys) },
            // SAFETY: the CPU has AVX2 (checked by `new`).
            LaneIsa::Avx2 => return unsafe { philox_lanes_avx2(c, &self.round_keys) },
            LaneIsa::Portable => {}
        }
        philox_lanes(c, &self.round_keys)
    }
}

/// [`philox_lanes`] in AVX-512 registers, one per word: each multiply is two `vpmuludq` (even
/// and odd lanes) whose 64-bit products are blended into the high and low words, and each
/// round's two three-way xors are one `vpternlogd` each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn philox_lanes_avx512(c: &[[u32; LANES]; 4], round_keys: &[[u32; LANES]; 20]) -> [[u32; LANES]; 4] {
    use std::arch::x86_64::*;
    // `(hi, lo)` of `a * m` on every lane, `m` broadcast.
    macro_rules! mulhilo16 {
        ($a:expr, $m:expr) => {{
            let even = _mm512_mul_epu32($a, $m);
            let odd = _mm512_mul_epu32(_mm512_srli_epi64::<32>($a), $m);
            let hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64::<32>(even), odd);
            let lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64::<32>(odd));
            (hi, lo)
        }};
    }
    // SAFETY (loads and stores): `[u32; 16]` is 64 bytes; the unaligned forms need no alignment.
    let load = |w: &[u32; LANES]| unsafe { _mm512_loadu_si512(w.as_ptr().cast()) };
    let (mut c0, mut c1, mut c2, mut c3) = (load(&c[0]), load(&c[1]), load(&c[2]), load(&c[3]));
    let (m0, m1) = (_mm512_set1_epi64(PHILOX_M0 as i64), _mm512_set1_epi64(PHILOX_M1 as i64));
    for k in round_keys.chunks_exact(2) {
        let (hi0, lo0) = mulhilo16!(c0, m0);
        let (hi1, lo1) = mulhilo16!(c2, m1);
        let (k0, k1) = (load(&k[0]), load(&k[1]));
        // 0x96: a ^ b ^ c.
        (c0, c1, c2, c3) = (_mm512_ternarylogic_epi32::<0x96>(hi1, c1, k0), lo1, _mm512_ternarylogic_epi32::<0x96>(hi0, c3, k1), lo0);
    }
    let mut out = [[0u32; LANES]; 4];
    for (w, v) in out.iter_mut().zip([c0, c1, c2, c3]) {
        // SAFETY: as the loads.
        unsafe { _mm512_storeu_si512(w.as_mut_ptr().cast(), v) };
    }
    out
}

/// [`philox_lanes`] in AVX2 registers, one per word and half of the lanes: each multiply is
/// two `vpmuludq` (even and odd lanes) whose 64-bit products are blended into the high and low
/// words (what the compiler makes of the portable loop is twice as long: it widens every lane
/// first).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn philox_lanes_avx2(c: &[[u32; LANES]; 4], round_keys: &[[u32; LANES]; 20]) -> [[u32; LANES]; 4] {
    use std::arch::x86_64::*;
    // `(hi, lo)` of `a * m` on every lane, `m` broadcast.
    macro_rules! mulhilo8 {
        ($a:expr, $m:expr) => {{
            let even = _mm256_mul_epu32($a, $m);
            let odd = _mm256_mul_epu32(_mm256_srli_epi64::<32>($a), $m);
            let hi = _mm256_blend_epi32::<0b1010_1010>(_mm256_srli_epi64::<32>(even), odd);
            let lo = _mm256_blend_epi32::<0b1010_1010>(even, _mm256_slli_epi64::<32>(odd));
            (hi, lo)
        }};
    }
    const HALF: usize = LANES / 2;
    let mut out = [[0u32; LANES]; 4];
    for h in [0, HALF] {
        // SAFETY (loads and stores): eight u32 from lane `h` of a `[u32; 16]` stay inside it;
        // the unaligned forms need no alignment.
        let load = |w: &[u32; LANES]| unsafe { _mm256_loadu_si256(w[h..h + HALF].as_ptr().cast()) };
        let (mut c0, mut c1, mut c2, mut c3) = (load(&c[0]), load(&c[1]), load(&c[2]), load(&c[3]));
        let (m0, m1) = (_mm256_set1_epi64x(PHILOX_M0 as i64), _mm256_set1_epi64x(PHILOX_M1 as i64));
        for k in round_keys.chunks_exact(2) {
            let (hi0, lo0) = mulhilo8!(c0, m0);
            let (hi1, lo1) = mulhilo8!(c2, m1);
            let (k0, k1) = (load(&k[0]), load(&k[1]));
            (c0, c1, c2, c3) = (_mm256_xor_si256(_mm256_xor_si256(hi1, c1), k0), lo1, _mm256_xor_si256(_mm256_xor_si256(hi0, c3), k1), lo0);
        }
        for (w, v) in out.iter_mut().zip([c0, c1, c2, c3]) {
            // SAFETY: as the loads.
            unsafe { _mm256_storeu_si256(w[h..h + HALF].as_mut_ptr().cast(), v) };
        }
    }
    out
}

#[inline(always)]
fn philox_lanes(c: &[[u32; LANES]; 4], round_keys: &[[u32; LANES]; 20]) -> [[u32; LANES]; 4] {
    let mut c = *c;
    for k in round_keys.chunks_exact(2) {
        let mut next = [[0u32; LANES]; 4];
        for l in 0..LANES {
            let (hi0, lo0) = mulhilo(PHILOX_M0, c[0][l]);
            let (hi1, lo1) = mulhilo(PHILOX_M1, c[2][l]);
            next[0][l] = hi1 ^ c[1][l] ^ k[0][l];
            next[1][l] = lo1;
            next[2][l] = hi0 ^ c[3][l] ^ k[1][l];
            next[3][l] = lo0;
        }
        c = next;
    }
    c
}

/// What a stream's numbers are used for. Separate purposes get disjoint streams, so the number
/// of draws the sampler happens to consume never shifts the numbers `update` or `stop` see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Purpose {
    /// Choosing the next edge.
    Sample = 0,
    /// A walk program's `update` and `stop` rules (restarts, stop probabilities).
    Update = 1,
    /// A walk program's `init`.
    Init = 2,
    /// Graph generators and weight generators.
    Generate = 3,
    /// The cost-model profiling pass.
    Profile = 4,
    /// GNN neighbor sampling (`crate::sample`).
    Neighbors = 5,
}

/// The step number used for the initialisation stream of a walker.
pub const INIT_STEP: u32 = u32::MAX;

/// A stream of random numbers keyed by `(seed, query, step, purpose)`. `repr(C)`: code
/// generated at run time draws from a stream in place ([`StepRng::LAYOUT`]).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct StepRng {
    key: [u32; 2],
    ctr: [u32; 4],
    buf: [u32; 4],
    used: u8,
}

/// Byte offsets of a [`StepRng`]'s fields: the key (two `u32`), the counter (four `u32`), the
/// block of outputs (four `u32`) and how many of them were used (`u8`; 4 means none left).
#[derive(Clone, Copy, Debug)]
pub struct StepRngLayout {
    /// `key: [u32; 2]`.
    pub key: usize,
    /// `ctr: [u32; 4]`.
    pub ctr: usize,
    /// `buf: [u32; 4]`.
    pub buf: usize,
    /// `used: u8`.
    pub used: usize,
}

impl StepRng {
    /// Where the fields are, for generated code (the Cranelift backend's compiled turn).
    pub const LAYOUT: StepRngLayout = StepRngLayout {
        key: std::mem::offset_of!(StepRng, key),
        ctr: std::mem::offset_of!(StepRng, ctr),
        buf: std::mem::offset_of!(StepRng, buf),
        used: std::mem::offset_of!(StepRng, used),
    };

    /// The stream for `query` at `step` for `purpose`, under `seed`.
    ///
    /// Queries are limited to 2^56; more walkers than that are not a practical concern.
    #[inline]
    pub fn new(seed: u64, query: u64, step: u32, purpose: Purpose) -> Self {
        debug_assert!(query < (1 << 56));
        StepRng { key: Self::key(seed), ctr: Self::first_counter(query, step, purpose), buf: [0; 4], used: 4 }
    }

    /// The counter of the stream's first block ([`StepRng::new`]'s), for [`PhiloxLanes`].
    #[inline(always)]
    pub fn first_counter(query: u64, step: u32, purpose: Purpose) -> [u32; 4] {
        [0, step, query as u32, ((query >> 32) as u32 & 0x00FF_FFFF) | ((purpose as u32) << 24)]
    }

    /// [`StepRng::new`] with its first block already computed (`block` = Philox of
    /// [`StepRng::first_counter`] under the seed): the same numbers, the block made elsewhere,
    /// eight streams at a time.
    #[inline(always)]
    pub fn with_first_block(seed: u64, query: u64, step: u32, purpose: Purpose, block: [u32; 4]) -> Self {
        let mut ctr = Self::first_counter(query, step, purpose);
        ctr[0] = 1;
        StepRng { key: [seed as u32, (seed >> 32) as u32], ctr, buf: block, used: 0 }
    }

    /// The Philox key of `seed`.
    #[inline(always)]
    pub fn key(seed: u64) -> [u32; 2] {
        [seed as u32, (seed >> 32) as u32]
    }

    /// The same stream, started at Philox block `block` instead of 0: independent draws that
    /// need no order between them (neighbor sampling gives draw `i` its own sub-stream at block
    /// `i · 16`, so GPU lanes make them in parallel and get the CPU's numbers).
    #[inline]
    pub fn new_at(seed: u64, query: u64, step: u32, purpose: Purpose, block: u32) -> Self {
        let mut r = Self::new(seed, query, step, purpose);
        r.ctr[0] = block;
        r
    }

    /// [`StepRng::new_at`] with its block `block` already computed (`first` = Philox of that
    /// block's counter under the seed, e.g. from [`PhiloxLanes`]): the same numbers.
    #[inline(always)]
    pub fn new_at_with_block(seed: u64, query: u64, step: u32, purpose: Purpose, block: u32, first: [u32; 4]) -> Self {
        let mut ctr = Self::first_counter(query, step, purpose);
        ctr[0] = block.wrapping_add(1);
        StepRng { key: Self::key(seed), ctr, buf: first, used: 0 }
    }

    /// Computes the stream's next block of four words (what [`StepRng::next_u32`] does when
    /// the block is used up; the engine does it ahead of a compiled turn, which draws only
    /// from the block at hand).
    #[inline(always)]
    pub fn refill(&mut self) {
        self.buf = philox4x32(self.ctr, self.key);
        self.ctr[0] = self.ctr[0].wrapping_add(1);
        self.used = 0;
    }

    /// Whether the block at hand is used up (the next draw computes a new one). Computing it
    /// ahead of time, by [`StepRng::refill`], then leaves the numbers drawn unchanged.
    #[inline(always)]
    pub fn block_used_up(&self) -> bool {
        self.used == 4
    }

    /// The next uniformly distributed 32-bit word.
    #[inline(always)]
    pub fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.refill();
        }
        let x = self.buf[self.used as usize];
        self.used += 1;
        x
    }

    /// The next uniformly distributed 64-bit word (two 32-bit draws, high word first).
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        (hi << 32) | self.next_u32() as u64
    }

    /// A uniform double in the open interval (0, 1), from one 32-bit draw: `(x + 0.5) / 2^32`.
    ///
    /// Never 0 or 1, so `-ln(u)` is always finite and positive.
    #[inline(always)]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u32() as f64 + 0.5) * (1.0 / 4_294_967_296.0)
    }

    /// A standard exponential variate, `-ln(u)`, always finite and > 0.
    #[inline(always)]
    pub fn exponential(&mut self) -> f64 {
        -self.uniform().ln()
    }

    /// An unbiased integer in `[0, n)` by Lemire's multiply-and-reject method
    /// ("Fast random integer generation in an interval", TOMACS 2019), never `x mod n`.
    ///
    /// # Panics
    /// Panics in debug builds if `n == 0`.
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        if n <= u32::MAX as u64 + 1 {
            if n == u32::MAX as u64 + 1 {
                return self.next_u32() as u64;
            }
            let n32 = n as u32;
            let mut m = (self.next_u32() as u64) * (n32 as u64);
            if (m as u32) < n32 {
                let threshold = n32.wrapping_neg() % n32;
                while (m as u32) < threshold {
                    m = (self.next_u32() as u64) * (n32 as u64);
                }
            }
            m >> 32
        } else {
            let mut m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) < n {
                let threshold = n.wrapping_neg() % n;
                while (m as u64) < threshold {
                    m = (self.next_u64() as u128) * (n as u128);
                }
            }
            (m >> 64) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123 `kat_vectors`, the three `philox4x32 10` lines: counter, key, expected output.
    #[test]
    fn philox_known_answers() {
        let cases: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
            ([0; 4], [0; 2], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
            ([u32::MAX; 4], [u32::MAX; 2], [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
            ([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0], [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]),
        ];
        for (ctr, key, want) in cases {
            assert_eq!(philox4x32(ctr, key), want, "ctr {ctr:08x?} key {key:08x?}");
        }
    }

    /// Sixteen streams' first blocks at once equal each stream's own, for queries past 2^32
    /// and every purpose, on every instruction set this CPU has; and the stream seeded with
    /// the block continues as the plain one.
    #[test]
    fn lane_blocks_equal_the_scalar_blocks() {
        let seed = 0x1234_5678_9abc_def0;
        let queries: [u64; LANES] =
            [0, 1, 7, 1 << 31, (1 << 32) + 5, (1 << 56) - 1, 999_999, 42, 3, 1 << 40, 77, (1 << 33) - 1, 12_345, 6, 1 << 20, 8];
        let mut ctr = [[0u32; LANES]; 4];
        for (l, &q) in queries.iter().enumerate() {
            let c = StepRng::first_counter(q, 3 + l as u32, if l % 2 == 0 { Purpose::Sample } else { Purpose::Update });
            for w in 0..4 {
                ctr[w][l] = c[w];
            }
        }
        let lanes = PhiloxLanes::new(seed);
        let blocks = lanes.blocks(&ctr);
        let portable = philox_lanes(&ctr, &lanes.round_keys);
        assert_eq!(blocks, portable, "the {:?} build and the portable one agree", lanes.isa);
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: checked just above.
                assert_eq!(unsafe { philox_lanes_avx512(&ctr, &lanes.round_keys) }, portable, "AVX-512");
            }
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: checked just above.
                assert_eq!(unsafe { philox_lanes_avx2(&ctr, &lanes.round_keys) }, portable, "AVX2");
            }
        }
        for (l, &q) in queries.iter().enumerate() {
            let purpose = if l % 2 == 0 { Purpose::Sample } else { Purpose::Update };
            let block = [blocks[0][l], blocks[1][l], blocks[2][l], blocks[3][l]];
            let mut plain = StepRng::new(seed, q, 3 + l as u32, purpose);
            let mut seeded = StepRng::with_first_block(seed, q, 3 + l as u32, purpose, block);
            let a: Vec<u32> = (0..11).map(|_| plain.next_u32()).collect();
            let b: Vec<u32> = (0..11).map(|_| seeded.next_u32()).collect();
            assert_eq!(a, b, "lane {l}");
        }
    }

    #[test]
    fn streams_are_distinct_and_repeatable() {
        let mut a = StepRng::new(7, 3, 1, Purpose::Sample);
        let mut b = StepRng::new(7, 3, 1, Purpose::Sample);
        let mut c = StepRng::new(7, 3, 1, Purpose::Update);
        let mut d = StepRng::new(7, 4, 1, Purpose::Sample);
        let xa: Vec<u32> = (0..9).map(|_| a.next_u32()).collect();
        let xb: Vec<u32> = (0..9).map(|_| b.next_u32()).collect();
        let xc: Vec<u32> = (0..9).map(|_| c.next_u32()).collect();
        let xd: Vec<u32> = (0..9).map(|_| d.next_u32()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert_ne!(xa, xd);
    }

    #[test]
    fn uniform_is_open_interval() {
        let lo = (0u32 as f64 + 0.5) / 4_294_967_296.0;
        let hi = (u32::MAX as f64 + 0.5) / 4_294_967_296.0;
        assert!(lo > 0.0 && hi < 1.0);
    }

    /// For n = 3·2^30, `x mod n` would put half of all draws below 2^30 instead of a third;
    /// Lemire's method must not.
    #[test]
    fn below_is_unbiased_where_modulo_is_not() {
        let n = 3u64 << 30;
        let mut r = StepRng::new(5, 0, 0, Purpose::Sample);
        let draws = 60_000;
        let low = (0..draws).filter(|_| r.below(n) < (1 << 30)).count() as f64;
        let p = low / draws as f64;
        // sd of the share is sqrt(2/9 / 60000) = 0.0019; allow 6 sd.
        assert!((p - 1.0 / 3.0).abs() < 0.012, "share below 2^30 = {p}");
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[r.below(7) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (9_400..10_600).contains(&c)), "{counts:?}");
    }

    #[test]
    fn below_stays_in_range_for_awkward_bounds() {
        let mut r = StepRng::new(1, 0, 0, Purpose::Sample);
        for n in [1u64, 2, 3, 7, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, u64::MAX] {
            for _ in 0..200 {
                assert!(r.below(n) < n);
            }
        }
    }

    /// The first words of one stream, pinned: `cuda/kernels/tests/rng_check.cu` checks the CUDA
    /// prelude's `wf_rng` against the same numbers on the GPU.
    #[test]
    fn step_stream_is_pinned_for_the_gpu_check() {
        let mut r = StepRng::new(7, 3, 1, Purpose::Sample);
        let words: Vec<u32> = (0..8).map(|_| r.next_u32()).collect();
        assert_eq!(words, [0xfa43867a, 0x30bcecab, 0x40122b19, 0x96bc54d0, 0x42e11c14, 0xf0b5d328, 0xc2d65c52, 0x4cdfb60d]);
    }
}
