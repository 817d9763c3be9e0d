//! The compiled-turn ABI: what a walk compiled to machine code (the Cranelift backend) hands
//! the CPU engine, so a rejection step runs without a call per query. The engine calls these
//! functions; the JIT implements them.

use crate::rng::StepRng;
use crate::run::SamplerStats;

/// The run's constants a [`CompiledTurn`] reads (`repr(C)`; pointers valid for the run).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TurnArgs {
    /// The walk's own data ([`CompiledTurn::new`](CompiledTurn::new)'s `image`).
    pub image: *const u8,
    /// The graph's row offsets (`n + 1` entries).
    pub offsets: *const u64,
    /// The graph's edge targets.
    pub targets: *const u32,
    /// Adaptive mode's per-row prefix sums of a static-weight walk, or null.
    pub table: *const f64,
    /// The cost model's `R` (rows longer than [`SHORT_ROW`](crate::cost::SHORT_ROW)).
    pub ratio: f64,
    /// The cost model's `F`.
    pub fixed: f64,
    /// The cost model's `R` on short rows.
    pub ratio_short: f64,
    /// 1 in eRJS mode (eRJS whenever there is a bound), 0 in adaptive mode (the cost model
    /// chooses).
    pub rejection_only: u32,
}

/// The signature of a compiled turn: `(args, slot, stats) -> code`.
pub type TurnFn = unsafe extern "C" fn(args: *const TurnArgs, slot: *mut u8, stats: *mut SamplerStats) -> u32;

/// The signature of a compiled eRVS: `(args, walker, rng, base, d) -> index`, -1 for a row
/// of zero weights, -2 for a bad weight.
pub type ReservoirFn = unsafe extern "C" fn(args: *const TurnArgs, walker: *const u8, rng: *mut StepRng, base: u64, d: u64) -> i64;

/// The signature of a compiled `update`: `(args, walker, rng)`, the walker laid out as
/// [`Walker`](crate::walk::Walker) of the walk's state type and `rng` the move's stream ([`StepRng::LAYOUT`]),
/// its first block computed.
pub type UpdateFn = unsafe extern "C" fn(args: *const TurnArgs, walker: *mut u8, rng: *mut StepRng);

/// Machine code for the engine's eRJS turns of one walk (the Cranelift backend generates it):
/// what the engine's own turn does in adaptive and eRJS mode when the step is sampled by
/// rejection, with the walk's `B`, `Ŝ`, envelope and weight inlined and the Philox stream
/// drawn in place, so that a step costs no call per query. Every other case (eRVS, the prefix
/// table, a trial cap reached, a bad weight) it hands back untouched, and the engine's own
/// turn runs it: the walks are the same either way.
#[derive(Clone, Copy, Debug)]
pub struct CompiledTurn {
    pub(crate) start: TurnFn,
    pub(crate) trial: TurnFn,
    pub(crate) image: *const u8,
    pub(crate) update: Option<(UpdateFn, u32)>,
    pub(crate) reservoir: Option<ReservoirFn>,
}

impl CompiledTurn {
    /// The walker waits for its candidate's edge data (prefetched by the engine).
    pub const PENDING: u32 = 0;
    /// The walker moved.
    pub const MOVED: u32 = 1;
    /// The walker is at a dead end.
    pub const DEAD_END: u32 = 2;
    /// Nothing was changed: the engine's own turn runs this one.
    pub const FALLBACK: u32 = 3;
    /// Nothing was changed, and the step (at its start) is eRVS's: the sampler choice the
    /// engine's own turn would make, so the engine runs eRVS (counting a reservoir step)
    /// without computing `B` and `Ŝ` again.
    pub const RESERVOIR: u32 = 4;

    /// A compiled turn calling `start` for a step's first turn (`phase.trials == 0`, the
    /// step's stream started and its first block computed by the engine) and `trial` for the
    /// others, with [`TurnArgs::image`] = `image`.
    ///
    /// # Safety
    /// Each function, given a [`TurnArgs`] of this run, a slot laid out as [`slot_layout`](crate::engine::slot_layout) says for
    /// the walk's state type, and the thread's [`SamplerStats`], must read only those, the
    /// graph's arrays and `image` (valid for the run), and must leave the slot, the walker and
    /// the counters exactly as the engine's own turn would for the same slot (returning
    /// `PENDING`, `MOVED` or `DEAD_END`), or change nothing and return `FALLBACK`; `start` may
    /// also change nothing and return `RESERVOIR` where the engine's own turn would take an
    /// eRVS step (not a prefix-table one).
    pub unsafe fn new(start: TurnFn, trial: TurnFn, image: *const u8) -> Self {
        CompiledTurn { start, trial, image, update: None, reservoir: None }
    }

    /// The same, with eRVS compiled too: the engine calls `reservoir` for its eRVS steps
    /// (in every sampler mode) instead of `sampler::reservoir_jump` over [`Walk::weight`](crate::Walk::weight).
    ///
    /// # Safety
    /// `reservoir`, given this run's [`TurnArgs`], a walker, its step's stream and the
    /// walker's row (`base`, `d`), must return what `sampler::reservoir_jump` returns for the
    /// walk's weights (the index, or -1 for `None`), drawing the same numbers from the
    /// stream, or -2 where that reports an error; it reads only those, the graph's arrays and
    /// the image.
    pub unsafe fn with_reservoir(self, reservoir: ReservoirFn) -> Self {
        CompiledTurn { reservoir: Some(reservoir), ..self }
    }

    /// The same, with the walk's `update` compiled too: the engine calls `update` after a
    /// move instead of [`Walk::update`](crate::Walk::update), having computed the first block of the move's stream
    /// when the routine takes `draws > 0` words (at most 4) from it.
    ///
    /// # Safety
    /// `update`, given this run's [`TurnArgs`], the moved walker and its move's stream, must
    /// do exactly what the walk's [`Walk::update`](crate::Walk::update) does (taking the same `draws` words from the
    /// stream and no more), reading only those, the graph's arrays and the image.
    pub unsafe fn with_update(self, update: UpdateFn, draws: u32) -> Self {
        assert!(draws <= 4, "a compiled update takes at most one Philox block");
        CompiledTurn { update: Some((update, draws)), ..self }
    }
}
