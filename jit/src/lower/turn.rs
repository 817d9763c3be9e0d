//! The engine's turns as compiled functions (see `wayfarer_runtime::engine::CompiledTurn`):
//! at a step's start (`wf_turn_start`), `B` and `Ŝ`, the dead-end test, the sampler choice,
//! a prefix-table step or the first eRJS proposal; at a pending trial (`wf_turn_trial`), the
//! envelope and the weight, then the move or the next proposal; eRVS with the weight inlined
//! (`wf_reservoir`); the `update` routine applied in place (`wf_turn_update`). Random numbers
//! are drawn in place from the walker's Philox stream, so a step of a JIT-compiled walk makes
//! one call per turn instead of one per query, and nothing the engine keeps in registers is
//! lost to calls into compiled code.
//!
//! What a turn hands back, having written nothing: an eRVS step at a step's start
//! (`RESERVOIR`: the engine calls `wf_reservoir` without computing `B` and `Ŝ` again); and,
//! for the engine's own turn to run (`FALLBACK`), a trial cap reached, a bad weight or a broken
//! bound (the engine's own turn reports it), a proposal needing a second Philox block, a walk
//! without a bound, rows of 2^32 edges or more.

use super::{PTR, trusted};
use crate::{JitState, JitWalker};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{AbiParam, InstBuilder, types};
use cranelift_codegen::ir::{Block, Value as CValue};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::{FuncId, Module};
use std::mem::offset_of;
use wayfarer_compiler::WalkInfo;
use wayfarer_compiler::ir::Scalar;
use wayfarer_runtime::StepRng;
use wayfarer_runtime::engine::{CompiledTurn, SamplerStats, SlotLayout, TABLE_TRIALS, TurnArgs, slot_layout};

/// Which turns a compiled turn function takes: a step's first (`phase.trials == 0`), or a
/// pending trial's. Two functions, so that a trial's (the hot one) saves no registers for
/// the calls a step's start may make (graph-query helpers in `B` or `Ŝ`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurnPart {
    Start,
    Trial,
}

/// Facts of the walk the turn is specialized for (run-time flags of the engine's turn).
pub(crate) struct TurnShape {
    pub has_bound: bool,
    pub possible_zero: bool,
    pub sum_exact: bool,
    pub envelope: bool,
}

fn i32c(b: &mut FunctionBuilder, x: u32) -> CValue {
    b.ins().iconst(types::I32, x as i64)
}

/// The walker's sampling stream, in its slot: the engine starts it (and computes its first
/// block) before a step's first turn; the compiled code draws only from the block at hand,
/// threading the count of used words through its blocks and storing it with the phase, and
/// hands the turn back (`fallback`, nothing written) when a draw would need a new block: the
/// ten Philox rounds inline would cost every call of the turn a save and restore of the
/// callee-saved registers.
#[derive(Clone, Copy)]
struct Rng {
    slot: CValue,
    at: usize,
    /// Where to go when the block is used up (`None`: the caller knows it is not).
    fallback: Option<Block>,
}

impl Rng {
    fn off(&self, field: usize) -> i32 {
        (self.at + field) as i32
    }

    /// How many words of the block are used.
    fn used(&self, b: &mut FunctionBuilder) -> CValue {
        b.ins().load(types::I8, trusted(), self.slot, self.off(StepRng::LAYOUT.used))
    }

    fn store_used(&self, b: &mut FunctionBuilder, used: CValue) {
        b.ins().store(trusted(), used, self.slot, self.off(StepRng::LAYOUT.used));
    }

    /// `StepRng::next_u32` within the block: `(word, used + 1)`.
    fn next_u32(&self, b: &mut FunctionBuilder, used: CValue) -> (CValue, CValue) {
        if let Some(fallback) = self.fallback {
            let take = b.create_block();
            let empty = b.ins().icmp_imm_u(IntCC::Equal, used, 4);
            b.ins().brif(empty, fallback, &[], take, &[]);
            b.switch_to_block(take);
        }
        let idx = b.ins().uextend(types::I64, used);
        let scaled = b.ins().ishl_imm_u(idx, 2);
        let addr = b.ins().iadd(self.slot, scaled);
        let x = b.ins().load(types::I32, trusted(), addr, self.off(StepRng::LAYOUT.buf));
        (x, b.ins().iadd_imm_u(used, 1))
    }

    /// `StepRng::uniform`: `(x + 0.5) / 2^32`.
    fn uniform(&self, b: &mut FunctionBuilder, used: CValue) -> (CValue, CValue) {
        let (x, used) = self.next_u32(b, used);
        (word_to_uniform(b, x), used)
    }

    /// `StepRng::below(n)` for `0 < n < 2^32` (`n` an i32): Lemire's multiply-and-reject.
    fn below(&self, b: &mut FunctionBuilder, n: CValue, used: CValue) -> (CValue, CValue) {
        let n64 = b.ins().uextend(types::I64, n);
        let product = |b: &mut FunctionBuilder, used: CValue| {
            let (x, used) = self.next_u32(b, used);
            let x = b.ins().uextend(types::I64, x);
            (b.ins().imul(x, n64), used)
        };
        let (m, used) = product(b, used);
        let lo = b.ins().ireduce(types::I32, m);
        let small = b.ins().icmp(IntCC::UnsignedLessThan, lo, n);
        let check = b.create_block();
        let redraw = b.create_block();
        let done = b.create_block();
        for blk in [check, done] {
            b.append_block_param(blk, types::I64);
            b.append_block_param(blk, types::I8);
        }
        b.append_block_param(redraw, types::I8);
        b.set_cold_block(check);
        b.set_cold_block(redraw);
        b.ins().brif(small, check, &[m.into(), used.into()], done, &[m.into(), used.into()]);

        // Rejection zone: threshold = (2^32 - n) mod n.
        b.switch_to_block(check);
        let (m, used) = (b.block_params(check)[0], b.block_params(check)[1]);
        let lo = b.ins().ireduce(types::I32, m);
        let neg = b.ins().ineg(n);
        let threshold = b.ins().urem(neg, n);
        let again = b.ins().icmp(IntCC::UnsignedLessThan, lo, threshold);
        b.ins().brif(again, redraw, &[used.into()], done, &[m.into(), used.into()]);

        b.switch_to_block(redraw);
        let used = b.block_params(redraw)[0];
        let (m, used) = product(b, used);
        b.ins().jump(check, &[m.into(), used.into()]);

        b.switch_to_block(done);
        let (m, used) = (b.block_params(done)[0], b.block_params(done)[1]);
        (b.ins().ushr_imm_u(m, 32), used)
    }
}

/// `StepRng::uniform` of a drawn word `x`: `(x + 0.5) / 2^32`.
fn word_to_uniform(b: &mut FunctionBuilder, x: CValue) -> CValue {
    let f = b.ins().fcvt_from_uint(types::F64, x);
    let half = b.ins().f64const(0.5);
    let f = b.ins().fadd(f, half);
    let scale = b.ins().f64const(1.0 / 4_294_967_296.0);
    b.ins().fmul(f, scale)
}

fn ret(b: &mut FunctionBuilder, code: u32) {
    let v = i32c(b, code);
    b.ins().return_(&[v]);
}

/// Fills `blk` with a return of `code` (once the block being built is terminated).
fn returning(b: &mut FunctionBuilder, blk: Block, code: u32) {
    b.switch_to_block(blk);
    ret(b, code);
}

/// The walker's move along edge `e` from `cur`: `prev = cur`, `cur = targets[e]`,
/// `last_edge = e`, `step += 1`.
fn move_along(b: &mut FunctionBuilder, args: CValue, w: CValue, cur: CValue, e: CValue) {
    let targets = b.ins().load(PTR, trusted(), args, offset_of!(TurnArgs, targets) as i32);
    let at = b.ins().ishl_imm_u(e, 2);
    let at = b.ins().iadd(targets, at);
    let next = b.ins().load(types::I32, trusted(), at, 0);
    b.ins().store(trusted(), cur, w, offset_of!(JitWalker, prev) as i32);
    b.ins().store(trusted(), next, w, offset_of!(JitWalker, cur) as i32);
    b.ins().store(trusted(), e, w, offset_of!(JitWalker, last_edge) as i32);
    let step = b.ins().load(types::I32, trusted(), w, offset_of!(JitWalker, step) as i32);
    let step = b.ins().iadd_imm_u(step, 1);
    b.ins().store(trusted(), step, w, offset_of!(JitWalker, step) as i32);
}

/// `CostModel::trial_cap(d)`: `(2 (d + F) / max(R, 1e-3)).clamp(32, 1e9) as u32` (`dd` is `d`
/// as f64).
fn trial_cap(b: &mut FunctionBuilder, args: CValue, d: CValue, dd: CValue) -> CValue {
    let fixed = b.ins().load(types::F64, trusted(), args, offset_of!(TurnArgs, fixed) as i32);
    let r = ratio_for(b, args, d);
    let floor = b.ins().f64const(1e-3);
    let r = b.ins().fmax(r, floor);
    let x = b.ins().fadd(dd, fixed);
    let two = b.ins().f64const(2.0);
    let x = b.ins().fmul(two, x);
    let x = b.ins().fdiv(x, r);
    let lo = b.ins().f64const(32.0);
    let hi = b.ins().f64const(1e9);
    let x = b.ins().fmax(x, lo);
    let x = b.ins().fmin(x, hi);
    b.ins().fcvt_to_uint_sat(types::I32, x)
}

/// `CostModel::prefers_reservoir(d, B, Ŝ)`: `R·d·B > Ŝ·(d + F)` in f64 (`dd` is `d` as f64,
/// `b64` and `est64` are `B` and `Ŝ` promoted).
fn prefers_reservoir(b: &mut FunctionBuilder, args: CValue, d: CValue, dd: CValue, b64: CValue, est64: CValue) -> CValue {
    let r = ratio_for(b, args, d);
    let fixed = b.ins().load(types::F64, trusted(), args, offset_of!(TurnArgs, fixed) as i32);
    let lhs = b.ins().fmul(r, dd);
    let lhs = b.ins().fmul(lhs, b64);
    let dpf = b.ins().fadd(dd, fixed);
    let rhs = b.ins().fmul(est64, dpf);
    b.ins().fcmp(FloatCC::GreaterThan, lhs, rhs)
}

/// `fn(args: *const TurnArgs, d: u64, bound: f32, estimate: f32) -> u64`: the adaptive rule
/// alone, built by the helpers the turns use (eRVS in bit 32, the trial cap in the low 32
/// bits), so one table of cases pins this copy of the rule (`wayfarer_runtime::cost::ADAPTIVE_RULE_CASES`).
pub(crate) fn rule_probe(module: &mut cranelift_jit::JITModule) -> Result<FuncId, String> {
    use cranelift_codegen::ir::{Function, UserFuncName};
    let mut sig = module.make_signature();
    sig.params.extend([AbiParam::new(PTR), AbiParam::new(types::I64), AbiParam::new(types::F32), AbiParam::new(types::F32)]);
    sig.returns.push(AbiParam::new(types::I64));
    let id = module.declare_function("wf_rule_probe", cranelift_module::Linkage::Local, &sig).map_err(|e| e.to_string())?;
    let mut func = Function::with_name_signature(UserFuncName::user(0, id.as_u32()), sig);
    let mut fctx = cranelift_frontend::FunctionBuilderContext::new();
    let target = module.target_config();
    {
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let p = b.block_params(entry).to_vec();
        let (args, d, bound, estimate) = (p[0], p[1], p[2], p[3]);
        // As in the turn: `d` converted as a signed count, `B` and `Ŝ` promoted.
        let dd = b.ins().fcvt_from_sint(types::F64, d);
        let b64 = b.ins().fpromote(types::F64, bound);
        let est64 = b.ins().fpromote(types::F64, estimate);
        let reservoir = prefers_reservoir(&mut b, args, d, dd, b64, est64);
        let cap = trial_cap(&mut b, args, d, dd);
        let reservoir = b.ins().uextend(types::I64, reservoir);
        let reservoir = b.ins().ishl_imm_u(reservoir, 32);
        let cap = b.ins().uextend(types::I64, cap);
        let out = b.ins().bor(reservoir, cap);
        b.ins().return_(&[out]);
        b.finalize(target);
    }
    let mut ctx = cranelift_codegen::Context::for_function(func);
    module.define_function(id, &mut ctx).map_err(|e| e.to_string())?;
    Ok(id)
}

/// `CostModel::ratio_for(d)` from the turn's arguments.
fn ratio_for(b: &mut FunctionBuilder, args: CValue, d: CValue) -> CValue {
    let short = b.ins().icmp_imm_u(IntCC::UnsignedLessThanOrEqual, d, wayfarer_runtime::engine::SHORT_ROW as i64);
    let long_r = b.ins().load(types::F64, trusted(), args, offset_of!(TurnArgs, ratio) as i32);
    let short_r = b.ins().load(types::F64, trusted(), args, offset_of!(TurnArgs, ratio_short) as i32);
    b.ins().select(short, short_r, long_r)
}

impl super::Compiler<'_> {
    /// `fn(args: *const TurnArgs, slot: *mut u8, stats: *mut SamplerStats) -> u32`: the walk's
    /// compiled eRJS turn (module docs).
    pub(crate) fn turn_fn(&mut self, name: &str, info: &WalkInfo, shape: &TurnShape, part: TurnPart) -> Result<FuncId, String> {
        let mut sig = self.module.make_signature();
        sig.params.extend([AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(PTR)]);
        sig.returns.push(AbiParam::new(types::I32));
        let lay: SlotLayout = slot_layout::<JitState>();
        let bound_h = info.bound.unwrap_or(info.sum_estimate);
        let estimate_h = info.sum_estimate;
        for h in [bound_h, estimate_h] {
            if info.derived.types[h.index()] != Scalar::F32 {
                return Err(format!("`{name}`: B or Ŝ is not an f32"));
            }
        }
        self.define(name, sig, &info.derived.exprs, &info.derived.types, |l| {
            let entry = l.b.current_block().expect("in the entry block");
            let params = l.b.block_params(entry).to_vec();
            let (args, slot, stats) = (params[0], params[1], params[2]);
            l.ctx = l.b.ins().load(PTR, trusted(), args, offset_of!(TurnArgs, image) as i32);
            l.w = l.b.ins().iadd_imm_u(slot, lay.walker as i64);
            let fallback = l.b.create_block();
            l.b.set_cold_block(fallback);
            let rng = Rng { slot, at: lay.rng, fallback: Some(fallback) };
            let w = l.w;
            let cur = l.b.ins().load(types::I32, trusted(), w, offset_of!(JitWalker, cur) as i32);
            let cur64 = l.b.ins().uextend(types::I64, cur);
            let offsets = l.b.ins().load(PTR, trusted(), args, offset_of!(TurnArgs, offsets) as i32);
            let at = l.b.ins().ishl_imm_u(cur64, 3);
            let at = l.b.ins().iadd(offsets, at);
            let base = l.b.ins().load(types::I64, trusted(), at, 0);
            let end = l.b.ins().load(types::I64, trusted(), at, 8);
            let d = l.b.ins().isub(end, base);
            let trials = l.b.ins().load(types::I32, trusted(), slot, lay.phase_trials as i32);

            let dead_end = l.b.create_block();
            let start = l.b.create_block();
            let trial = l.b.create_block();
            // propose(trials, bound, cap): draw candidate and level, store the phase, pend.
            let propose = l.b.create_block();
            l.b.append_block_param(propose, types::I32);
            l.b.append_block_param(propose, types::F32);
            l.b.append_block_param(propose, types::I32);
            l.b.ins().jump(if part == TurnPart::Start { start } else { trial }, &[]);

            // ---- a step's start ----
            if part == TurnPart::Start {
                l.b.switch_to_block(start);
                let has_edges = l.b.create_block();
                l.b.ins().brif(d, has_edges, &[], dead_end, &[]);
                l.b.switch_to_block(has_edges);
                let fits = l.b.create_block();
                let huge = l.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, d, u32::MAX as i64);
                l.b.ins().brif(huge, fallback, &[], fits, &[]);
                l.b.switch_to_block(fits);
                l.e = l.b.ins().iconst(types::I64, 0);
                let bound = l.lower(bound_h)?;
                let estimate = l.lower(estimate_h)?;
                if shape.possible_zero && shape.sum_exact {
                    let live = l.b.create_block();
                    let zero = l.b.ins().f32const(0.0);
                    let dead = l.b.ins().fcmp(FloatCC::LessThanOrEqual, estimate, zero);
                    l.b.ins().brif(dead, dead_end, &[], live, &[]);
                    l.b.switch_to_block(live);
                }
                if !shape.has_bound {
                    // eRVS (or the prefix table): the engine's own turn.
                    l.b.ins().jump(fallback, &[]);
                } else {
                    // d < 2^32 here: exact as a signed conversion (one instruction).
                    let dd = l.b.ins().fcvt_from_sint(types::F64, d);
                    let b64 = l.b.ins().fpromote(types::F64, bound);
                    let est64 = l.b.ins().fpromote(types::F64, estimate);
                    // The prefix table (adaptive mode, static weights): skewed rows use it.
                    let table = l.b.ins().load(PTR, trusted(), args, offset_of!(TurnArgs, table) as i32);
                    let check_table = l.b.create_block();
                    let choose = l.b.create_block();
                    l.b.ins().brif(table, check_table, &[], choose, &[]);
                    l.b.switch_to_block(check_table);
                    // f32::max(Ŝ, MIN_POSITIVE): MIN_POSITIVE when Ŝ is NaN.
                    let minpos = l.b.ins().f32const(f32::MIN_POSITIVE);
                    let above = l.b.ins().fcmp(FloatCC::GreaterThan, estimate, minpos);
                    let s = l.b.ins().select(above, estimate, minpos);
                    let s = l.b.ins().fpromote(types::F64, s);
                    let db = l.b.ins().fmul(dd, b64);
                    let expected = l.b.ins().fdiv(db, s);
                    let limit = l.b.ins().f64const(TABLE_TRIALS);
                    let few = l.b.ins().fcmp(FloatCC::LessThan, expected, limit);
                    let table_step = l.b.create_block();
                    l.b.ins().brif(few, choose, &[], table_step, &[]);

                    // sampler::prefix_table: one uniform, a binary search of the row's sums.
                    l.b.switch_to_block(table_step);
                    let counted_at = offset_of!(SamplerStats, table_steps) as i32;
                    let n = l.b.ins().load(types::I64, trusted(), stats, counted_at);
                    let n = l.b.ins().iadd_imm_u(n, 1);
                    l.b.ins().store(trusted(), n, stats, counted_at);
                    let row = l.b.ins().ishl_imm_u(base, 3);
                    let row = l.b.ins().iadd(table, row);
                    let last = l.b.ins().ishl_imm_u(d, 3);
                    let last = l.b.ins().iadd(row, last);
                    let total = l.b.ins().load(types::F64, trusted(), last, -8);
                    let f0 = l.b.ins().f64const(0.0);
                    let empty = l.b.ins().fcmp(FloatCC::LessThanOrEqual, total, f0);
                    let search = l.b.create_block();
                    l.b.ins().brif(empty, dead_end, &[], search, &[]);
                    l.b.switch_to_block(search);
                    // The step's first draw: the block the engine computed is unused.
                    let fresh = Rng { fallback: None, ..rng };
                    let used = fresh.used(l.b);
                    let (u, used) = fresh.uniform(l.b, used);
                    fresh.store_used(l.b, used);
                    let x = l.b.ins().fmul(u, total);
                    // The first index whose sum exceeds x (sums never decrease: unique).
                    let head = l.b.create_block();
                    let probe = l.b.create_block();
                    let found = l.b.create_block();
                    l.b.append_block_param(head, types::I64);
                    l.b.append_block_param(head, types::I64);
                    let z = l.b.ins().iconst(types::I64, 0);
                    l.b.ins().jump(head, &[z.into(), d.into()]);
                    l.b.switch_to_block(head);
                    let (lo, hi) = (l.b.block_params(head)[0], l.b.block_params(head)[1]);
                    let open = l.b.ins().icmp(IntCC::UnsignedLessThan, lo, hi);
                    l.b.ins().brif(open, probe, &[], found, &[]);
                    l.b.switch_to_block(probe);
                    let span = l.b.ins().isub(hi, lo);
                    let half = l.b.ins().ushr_imm_u(span, 1);
                    let mid = l.b.ins().iadd(lo, half);
                    let at = l.b.ins().ishl_imm_u(mid, 3);
                    let at = l.b.ins().iadd(row, at);
                    let p = l.b.ins().load(types::F64, trusted(), at, 0);
                    let le = l.b.ins().fcmp(FloatCC::LessThanOrEqual, p, x);
                    let mid1 = l.b.ins().iadd_imm_u(mid, 1);
                    let lo2 = l.b.ins().select(le, mid1, lo);
                    let hi2 = l.b.ins().select(le, hi, mid);
                    l.b.ins().jump(head, &[lo2.into(), hi2.into()]);
                    l.b.switch_to_block(found);
                    let d1 = l.b.ins().iadd_imm_s(d, -1);
                    let past = l.b.ins().icmp(IntCC::UnsignedGreaterThan, lo, d1);
                    let i = l.b.ins().select(past, d1, lo);
                    let e = l.b.ins().iadd(base, i);
                    move_along(l.b, args, w, cur, e);
                    ret(l.b, CompiledTurn::MOVED);

                    l.b.switch_to_block(choose);
                    let zero = l.b.ins().f32const(0.0);
                    let inf = l.b.ins().f32const(f32::INFINITY);
                    let positive = l.b.ins().fcmp(FloatCC::GreaterThan, bound, zero);
                    let finite = l.b.ins().fcmp(FloatCC::LessThan, bound, inf);
                    let usable = l.b.ins().band(positive, finite);
                    let erjs_or_not = l.b.create_block();
                    let not_usable = l.b.create_block();
                    l.b.ins().brif(usable, erjs_or_not, &[], not_usable, &[]);
                    // Every weight <= B <= 0: a dead end; a NaN or infinite B: eRVS.
                    let reservoir_step = l.b.create_block();
                    l.b.switch_to_block(not_usable);
                    let nonpositive = l.b.ins().fcmp(FloatCC::LessThanOrEqual, bound, zero);
                    l.b.ins().brif(nonpositive, dead_end, &[], reservoir_step, &[]);
                    returning(l.b, reservoir_step, CompiledTurn::RESERVOIR);

                    l.b.switch_to_block(erjs_or_not);
                    let one = i32c(l.b, 1);
                    // The trial cap is computed at the step's first rejection.
                    let cap = i32c(l.b, 0);
                    let only = l.b.ins().load(types::I32, trusted(), args, offset_of!(TurnArgs, rejection_only) as i32);
                    let cost = l.b.create_block();
                    l.b.ins().brif(only, propose, &[one.into(), bound.into(), cap.into()], cost, &[]);
                    l.b.switch_to_block(cost);
                    let reservoir = prefers_reservoir(l.b, args, d, dd, b64, est64);
                    l.b.ins().brif(reservoir, reservoir_step, &[], propose, &[one.into(), bound.into(), cap.into()]);
                }
            }

            // ---- a pending trial ----
            if part == TurnPart::Trial {
                l.b.switch_to_block(trial);
                let program = l.program;
                l.exprs = &program.exprs;
                l.types = &program.types;
                l.memo.clear();
                l.consts.clear();
                let index = l.b.ins().load(types::I64, trusted(), slot, lay.phase_index as i32);
                let level = l.b.ins().load(types::F64, trusted(), slot, lay.phase_level as i32);
                let bound = l.b.ins().load(types::F32, trusted(), slot, lay.phase_bound as i32);
                let e = l.b.ins().iadd(base, index);
                l.e = e;
                let accept = l.b.create_block();
                let reject = l.b.create_block();
                let weigh = l.b.create_block();
                if shape.envelope {
                    let (lo, hi) = l.envelope(program.result)?.ok_or("no envelope")?;
                    let lo64 = l.b.ins().fpromote(types::F64, lo);
                    let hi64 = l.b.ins().fpromote(types::F64, hi);
                    let below_lo = l.b.ins().fcmp(FloatCC::LessThan, level, lo64);
                    let lo_in = l.b.ins().fcmp(FloatCC::LessThanOrEqual, lo, bound);
                    let sure = l.b.ins().band(below_lo, lo_in);
                    let not_sure = l.b.create_block();
                    l.b.ins().brif(sure, accept, &[], not_sure, &[]);
                    l.b.switch_to_block(not_sure);
                    let above_hi = l.b.ins().fcmp(FloatCC::GreaterThanOrEqual, level, hi64);
                    l.b.ins().brif(above_hi, reject, &[], weigh, &[]);
                } else {
                    l.b.ins().jump(weigh, &[]);
                }
                l.b.switch_to_block(weigh);
                let wi = l.lower(program.result)?;
                if l.types[program.result.index()] != Scalar::F32 {
                    return Err(format!("`{name}`: the weight is not an f32"));
                }
                // sampler::checked and the bound check: a bad weight goes to the engine's turn,
                // which reports it.
                let zero = l.b.ins().f32const(0.0);
                let inf = l.b.ins().f32const(f32::INFINITY);
                let nonneg = l.b.ins().fcmp(FloatCC::GreaterThanOrEqual, wi, zero);
                let not_inf = l.b.ins().fcmp(FloatCC::NotEqual, wi, inf);
                let in_bound = l.b.ins().fcmp(FloatCC::LessThanOrEqual, wi, bound);
                let good = l.b.ins().band(nonneg, not_inf);
                let good = l.b.ins().band(good, in_bound);
                let decide = l.b.create_block();
                l.b.ins().brif(good, decide, &[], fallback, &[]);
                l.b.switch_to_block(decide);
                let wi64 = l.b.ins().fpromote(types::F64, wi);
                let yes = l.b.ins().fcmp(FloatCC::LessThan, level, wi64);
                l.b.ins().brif(yes, accept, &[], reject, &[]);

                // Accepted: count, move, back to a step's start.
                l.b.switch_to_block(accept);
                let steps_at = offset_of!(SamplerStats, rejection_steps) as i32;
                let trials_at = offset_of!(SamplerStats, rejection_trials) as i32;
                let n = l.b.ins().load(types::I64, trusted(), stats, steps_at);
                let n = l.b.ins().iadd_imm_u(n, 1);
                l.b.ins().store(trusted(), n, stats, steps_at);
                let t = l.b.ins().load(types::I64, trusted(), stats, trials_at);
                let t64 = l.b.ins().uextend(types::I64, trials);
                let t = l.b.ins().iadd(t, t64);
                l.b.ins().store(trusted(), t, stats, trials_at);
                move_along(l.b, args, w, cur, e);
                let zero32 = i32c(l.b, 0);
                l.b.ins().store(trusted(), zero32, slot, lay.phase_trials as i32);
                ret(l.b, CompiledTurn::MOVED);

                // Rejected: out of trials (the engine's turn finishes with eRVS), or propose again.
                l.b.switch_to_block(reject);
                let cap = l.b.ins().load(types::I32, trusted(), slot, lay.phase_cap as i32);
                let first = l.b.create_block();
                let counted = l.b.create_block();
                l.b.append_block_param(counted, types::I32);
                l.b.ins().brif(cap, counted, &[cap.into()], first, &[]);
                l.b.switch_to_block(first);
                // d < 2^32 (the start turn checked): exact as a signed conversion.
                let dd = l.b.ins().fcvt_from_sint(types::F64, d);
                let computed = trial_cap(l.b, args, d, dd);
                l.b.ins().jump(counted, &[computed.into()]);
                l.b.switch_to_block(counted);
                let cap = l.b.block_params(counted)[0];
                let spent = l.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, trials, cap);
                let more = l.b.ins().iadd_imm_u(trials, 1);
                l.b.ins().brif(spent, fallback, &[], propose, &[more.into(), bound.into(), cap.into()]);
            }

            // ---- propose(trials, bound) ----
            l.b.switch_to_block(propose);
            let pp = l.b.block_params(propose).to_vec();
            let (t, bound, cap) = (pp[0], pp[1], pp[2]);
            let n32 = l.b.ins().ireduce(types::I32, d);
            let used = rng.used(l.b);
            let (index, used) = rng.below(l.b, n32, used);
            let (u, used) = rng.uniform(l.b, used);
            let b64 = l.b.ins().fpromote(types::F64, bound);
            let level = l.b.ins().fmul(u, b64);
            l.b.ins().store(trusted(), index, slot, lay.phase_index as i32);
            l.b.ins().store(trusted(), level, slot, lay.phase_level as i32);
            l.b.ins().store(trusted(), bound, slot, lay.phase_bound as i32);
            l.b.ins().store(trusted(), t, slot, lay.phase_trials as i32);
            l.b.ins().store(trusted(), cap, slot, lay.phase_cap as i32);
            rng.store_used(l.b, used);
            ret(l.b, CompiledTurn::PENDING);
            returning(l.b, fallback, CompiledTurn::FALLBACK);
            returning(l.b, dead_end, CompiledTurn::DEAD_END);
            Ok(())
        })
    }
}

/// Draws an `update` routine may take in the compiled version: one Philox block, computed by
/// the engine before the call.
const MAX_COMPILED_DRAWS: u32 = 4;

impl super::Compiler<'_> {
    /// `fn(args: *const TurnArgs, walker: *mut u8, rng: *mut StepRng)`: the walk's `update`
    /// routine applied in place, as the engine's call through `Walk::update` does it: the
    /// routine's draws taken first from the move's stream (from its first block, which the
    /// engine computed; `stop` then continues the stream), the new state fields, `cur` and
    /// `prev` computed from the old walker, then written to it.
    /// `None` when the routine takes more than `MAX_COMPILED_DRAWS` draws.
    pub(crate) fn update_fn(&mut self, name: &str, r: &wayfarer_compiler::ir::Routine, state: usize) -> Result<Option<FuncId>, String> {
        if r.draws > MAX_COMPILED_DRAWS || r.outputs.len() != state + 2 {
            return Ok(None);
        }
        let mut sig = self.module.make_signature();
        sig.params.extend([AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(PTR)]);
        self.define(name, sig, &r.exprs, &r.types, |l| {
            let entry = l.b.current_block().expect("in the entry block");
            let params = l.b.block_params(entry).to_vec();
            let (args, walker, rng_at) = (params[0], params[1], params[2]);
            l.ctx = l.b.ins().load(PTR, trusted(), args, offset_of!(TurnArgs, image) as i32);
            l.w = walker;
            // The engine computed the stream's first block, and there are at most four draws.
            let rng = Rng { slot: rng_at, at: 0, fallback: None };
            let mut used = rng.used(l.b);
            l.draws = None;
            for _ in 0..r.draws {
                let (u, next) = rng.uniform(l.b, used);
                l.draw_values.push(u);
                used = next;
            }
            rng.store_used(l.b, used);
            l.e = l.b.ins().load(types::I64, trusted(), walker, offset_of!(JitWalker, last_edge) as i32);
            let mut bits = Vec::new();
            for h in &r.outputs {
                let v = l.lower(*h)?;
                bits.push(l.to_bits(v, l.types[h.index()]));
            }
            // Every output is computed before the first store: the routine reads the old walker.
            for (i, v) in bits[..state].iter().enumerate() {
                l.b.ins().store(trusted(), *v, walker, (offset_of!(JitWalker, state) + 8 * i) as i32);
            }
            for (v, field) in bits[state..].iter().zip([offset_of!(JitWalker, cur), offset_of!(JitWalker, prev)]) {
                let v32 = l.b.ins().ireduce(types::I32, *v);
                l.b.ins().store(trusted(), v32, walker, field as i32);
            }
            l.b.ins().return_(&[]);
            Ok(())
        })
        .map(Some)
    }
}

impl super::Compiler<'_> {
    /// `fn(args: *const TurnArgs, walker: *const u8, rng: *mut StepRng, base: u64, d: u64) -> i64`:
    /// `sampler::reservoir_jump` over edges `base..base + d` with the weight inlined: the
    /// chosen index, -1 when every weight is 0, or -2 on a weight that is negative, NaN or
    /// infinite (the engine then runs its own eRVS from the stream as it was, to report it).
    /// Its draws refill the stream out of line (`wf_refill`): they are few per step.
    pub(crate) fn reservoir_fn(&mut self, name: &str) -> Result<FuncId, String> {
        let mut sig = self.module.make_signature();
        sig.params.extend([PTR, PTR, PTR, types::I64, types::I64].map(AbiParam::new));
        sig.returns.push(AbiParam::new(types::I64));
        let (exprs, types_, root) = (&self.program.exprs, &self.program.types, self.program.result);
        if types_[root.index()] != Scalar::F32 {
            return Err(format!("`{name}`: the weight is not an f32"));
        }
        self.define(name, sig, exprs, types_, |l| {
            let entry = l.b.current_block().expect("in the entry block");
            let params = l.b.block_params(entry).to_vec();
            let (args, walker, rng_at, base, d) = (params[0], params[1], params[2], params[3], params[4]);
            l.ctx = l.b.ins().load(PTR, trusted(), args, offset_of!(TurnArgs, image) as i32);
            l.w = walker;
            let lay = StepRng::LAYOUT;
            // One uniform, refilling the block when it is used up (memory-based: draws are rare).
            let uniform = |l: &mut super::L| {
                let used = l.b.ins().load(types::I8, trusted(), rng_at, lay.used as i32);
                let empty = l.b.ins().icmp_imm_u(IntCC::Equal, used, 4);
                let refill = l.b.create_block();
                let take = l.b.create_block();
                l.b.append_block_param(take, types::I8);
                l.b.ins().brif(empty, refill, &[], take, &[used.into()]);
                l.b.switch_to_block(refill);
                l.call_void("wf_refill", &[rng_at]);
                let z = l.b.ins().iconst(types::I8, 0);
                l.b.ins().jump(take, &[z.into()]);
                l.b.switch_to_block(take);
                let used = l.b.block_params(take)[0];
                let idx = l.b.ins().uextend(types::I64, used);
                let scaled = l.b.ins().ishl_imm_u(idx, 2);
                let addr = l.b.ins().iadd(rng_at, scaled);
                let x = l.b.ins().load(types::I32, trusted(), addr, lay.buf as i32);
                let used = l.b.ins().iadd_imm_u(used, 1);
                l.b.ins().store(trusted(), used, rng_at, lay.used as i32);
                word_to_uniform(l.b, x)
            };
            // -ln(uniform())
            let exponential = |l: &mut super::L| {
                let u = uniform(l);
                let ln = l.call("wf_ln", &[u]);
                l.b.ins().fneg(ln)
            };

            // What the weight computes from the walker alone (not the edge), cheaply, is
            // computed once, before the loop: Cranelift does not move loads out of loops.
            hoist(l, root)?;
            let hoisted = l.memo.clone();

            // head(j, found, g, sel, skip)
            let head = l.b.create_block();
            let body = l.b.create_block();
            let exit = l.b.create_block();
            let bad = l.b.create_block();
            l.b.set_cold_block(bad);
            let loop_params = [types::I64, types::I8, types::F64, types::I64, types::F64];
            for t in loop_params {
                l.b.append_block_param(head, t);
            }
            l.b.append_block_param(exit, types::I8);
            l.b.append_block_param(exit, types::I64);
            let zero64 = l.b.ins().iconst(types::I64, 0);
            let no = l.b.ins().iconst(types::I8, 0);
            let f0 = l.b.ins().f64const(0.0);
            l.b.ins().jump(head, &[zero64.into(), no.into(), f0.into(), zero64.into(), f0.into()]);

            l.b.switch_to_block(head);
            let hp = l.b.block_params(head).to_vec();
            let (j, found, g, sel, skip) = (hp[0], hp[1], hp[2], hp[3], hp[4]);
            let end = l.b.ins().icmp(IntCC::Equal, j, d);
            l.b.ins().brif(end, exit, &[found.into(), sel.into()], body, &[]);

            l.b.switch_to_block(body);
            l.memo = hoisted;
            l.e = l.b.ins().iadd(base, j);
            let wj = l.lower(root)?;
            // sampler::checked: `!(w >= 0) || w == inf` is an error.
            let zero = l.b.ins().f32const(0.0);
            let inf = l.b.ins().f32const(f32::INFINITY);
            let nonneg = l.b.ins().fcmp(FloatCC::GreaterThanOrEqual, wj, zero);
            let not_inf = l.b.ins().fcmp(FloatCC::NotEqual, wj, inf);
            let good = l.b.ins().band(nonneg, not_inf);
            let checked = l.b.create_block();
            l.b.ins().brif(good, checked, &[], bad, &[]);
            l.b.switch_to_block(checked);
            let positive = l.b.ins().fcmp(FloatCC::GreaterThan, wj, zero);
            let w64 = l.b.ins().fpromote(types::F64, wj);
            let j1 = l.b.ins().iadd_imm_u(j, 1);
            let yes = l.b.ins().iconst(types::I8, 1);
            let first = l.b.create_block();
            let later = l.b.create_block();
            l.b.ins().brif(found, later, &[], first, &[]);

            // Before the first positive weight: it takes the reservoir with key E / w.
            l.b.switch_to_block(first);
            let take_first = l.b.create_block();
            l.b.ins().brif(positive, take_first, &[], head, &[j1.into(), no.into(), g.into(), sel.into(), skip.into()]);
            l.b.switch_to_block(take_first);
            let e1 = exponential(l);
            let g1 = l.b.ins().fdiv(e1, w64);
            let e2 = exponential(l);
            let skip1 = l.b.ins().fdiv(e2, g1);
            l.b.ins().jump(head, &[j1.into(), yes.into(), g1.into(), j.into(), skip1.into()]);

            // After it: skip weight; the item where the skip runs out beats the key.
            l.b.switch_to_block(later);
            let skip2 = l.b.ins().fsub(skip, w64);
            let f0 = l.b.ins().f64const(0.0);
            let out = l.b.ins().fcmp(FloatCC::LessThanOrEqual, skip2, f0);
            let hit = l.b.ins().band(out, positive);
            let replace = l.b.create_block();
            l.b.ins().brif(hit, replace, &[], head, &[j1.into(), yes.into(), g.into(), sel.into(), skip2.into()]);
            l.b.switch_to_block(replace);
            // t = exp(-g w); u = t + U (1 - t); g = -ln(u) / w; skip = E / g.
            let ng = l.b.ins().fneg(g);
            let x = l.b.ins().fmul(ng, w64);
            let t = l.call("wf_exp", &[x]);
            let u = uniform(l);
            let one = l.b.ins().f64const(1.0);
            let rest = l.b.ins().fsub(one, t);
            let ur = l.b.ins().fmul(u, rest);
            let u = l.b.ins().fadd(t, ur);
            let ln = l.call("wf_ln", &[u]);
            let nln = l.b.ins().fneg(ln);
            let g2 = l.b.ins().fdiv(nln, w64);
            let e3 = exponential(l);
            let skip3 = l.b.ins().fdiv(e3, g2);
            l.b.ins().jump(head, &[j1.into(), yes.into(), g2.into(), j.into(), skip3.into()]);

            l.b.switch_to_block(exit);
            let (found, sel) = (l.b.block_params(exit)[0], l.b.block_params(exit)[1]);
            let none = l.b.ins().iconst(types::I64, -1);
            let r = l.b.ins().select(found, sel, none);
            l.b.ins().return_(&[r]);

            l.b.switch_to_block(bad);
            let err = l.b.ins().iconst(types::I64, -2);
            l.b.ins().return_(&[err]);
            Ok(())
        })
    }
}

/// Lowers (into the current block) the largest parts of `h` that read neither the candidate
/// edge nor anything expensive: they are the same for every edge of a row.
fn hoist(l: &mut super::L, h: wayfarer_compiler::ir::Handle<wayfarer_compiler::ir::Expr>) -> Result<(), String> {
    use wayfarer_compiler::ir::{is_expensive, reads_edge};
    if !reads_edge(l.exprs, h) && !is_expensive(l.exprs, h) {
        l.lower(h)?;
        return Ok(());
    }
    for op in l.exprs.get(h).operands() {
        hoist(l, op)?;
    }
    Ok(())
}
