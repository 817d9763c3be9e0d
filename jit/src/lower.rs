//! IR to Cranelift IR. Expressions are lowered with memoization; a select whose arms hold an
//! expensive part (`has_edge`, a node property, …) becomes a branch so the untaken arm is not
//! evaluated, and values computed inside a branch are forgotten after it (they do not
//! dominate the merge).

mod turn;

use crate::{JitCtx, JitWalker, MAX_STATE};
use cranelift_codegen::ir::Value as CValue;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{AbiParam, Function, InstBuilder, MemFlagsData, Signature, Type, UserFuncName, types};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module};
use std::collections::HashMap;
use std::mem::offset_of;
pub(crate) use turn::{TurnPart, TurnShape, rule_probe};
use wayfarer_compiler::eval::{Evaluator, ParamValue, State, Value};
use wayfarer_compiler::ir::*;
use wayfarer_runtime::graph::{CsrGraph, NO_NODE};
use wayfarer_runtime::{Ctx, LabelStat};

// ---- helpers the compiled code calls (graph queries and libm, as the native backend) ----

unsafe fn ctx<'a>(c: *const JitCtx) -> &'a Ctx<'a> {
    // SAFETY: the caller passes the JitCtx built for this call, whose `ctx` outlives it.
    unsafe { &*((*c).ctx as *const Ctx<'a>) }
}

extern "C" fn wf_has_edge(c: *const JitCtx, u: u32, v: u32) -> u8 {
    let g = unsafe { ctx(c) }.graph;
    let n = g.num_nodes();
    ((u as usize) < n && (v as usize) < n && g.has_edge(u, v)) as u8
}
extern "C" fn wf_prop(c: *const JitCtx, i: u32, v: u32) -> f32 {
    // SAFETY: `props` holds one pointer (or null) per property, each to num_nodes floats.
    unsafe {
        let p = *(*c).props.add(i as usize);
        if p.is_null() || v as u64 >= (*c).num_nodes { 0.0 } else { *p.add(v as usize) }
    }
}
extern "C" fn wf_back_weight(c: *const JitCtx, cur: u32, prev: u32) -> f32 {
    unsafe { ctx(c) }.back_edges(cur, prev, true).0
}
extern "C" fn wf_back_count(c: *const JitCtx, cur: u32, prev: u32) -> u32 {
    unsafe { ctx(c) }.back_edges(cur, prev, true).1
}
extern "C" fn wf_label_max(c: *const JitCtx, cur: u32, l: u32) -> f32 {
    unsafe { ctx(c) }.label_query(cur, l).0
}
extern "C" fn wf_label_sum(c: *const JitCtx, cur: u32, l: u32) -> f32 {
    unsafe { ctx(c) }.label_query(cur, l).1
}
extern "C" fn wf_label_count(c: *const JitCtx, cur: u32, l: u32) -> u32 {
    unsafe { ctx(c) }.label_query(cur, l).2
}
extern "C" fn wf_expf(x: f32) -> f32 {
    x.exp()
}
extern "C" fn wf_lnf(x: f32) -> f32 {
    x.ln()
}
extern "C" fn wf_powf(x: f32, y: f32) -> f32 {
    x.powf(y)
}
extern "C" fn wf_fmodf(x: f32, y: f32) -> f32 {
    x % y
}
// Float min/max call Rust's own: how ±0 and NaN operands resolve is the platform's
// (`f32::max(0.0, -0.0)` may give either zero), and the native backend compiles these calls.
extern "C" fn wf_minf(x: f32, y: f32) -> f32 {
    x.min(y)
}
extern "C" fn wf_maxf(x: f32, y: f32) -> f32 {
    x.max(y)
}
extern "C" fn wf_mind(x: f64, y: f64) -> f64 {
    x.min(y)
}
extern "C" fn wf_maxd(x: f64, y: f64) -> f64 {
    x.max(y)
}
extern "C" fn wf_exp(x: f64) -> f64 {
    x.exp()
}
extern "C" fn wf_ln(x: f64) -> f64 {
    x.ln()
}
extern "C" fn wf_pow(x: f64, y: f64) -> f64 {
    x.powf(y)
}
extern "C" fn wf_fmod(x: f64, y: f64) -> f64 {
    x % y
}
/// The next Philox block of a stream compiled code draws from in place (the compiled eRVS).
extern "C" fn wf_refill(rng: *mut wayfarer_runtime::StepRng) {
    // SAFETY: the compiled code passes the walker's stream, in the engine's slot.
    unsafe { (*rng).refill() }
}

/// Whether Rust's float `min`/`max` return `-0` for `(+0, -0)` and for `(-0, +0)`, indexed by
/// `max * 2 + f64`: asked of the helpers the Cranelift code otherwise calls, once a process.
fn zero_order() -> [[bool; 2]; 4] {
    static ZERO_ORDER: std::sync::OnceLock<[[bool; 2]; 4]> = std::sync::OnceLock::new();
    *ZERO_ORDER.get_or_init(ask_zero_order)
}

fn ask_zero_order() -> [[bool; 2]; 4] {
    use std::hint::black_box;
    let neg32 = |v: f32| v.is_sign_negative();
    let neg64 = |v: f64| v.is_sign_negative();
    let (p32, n32, p64, n64) = (black_box(0.0f32), black_box(-0.0f32), black_box(0.0f64), black_box(-0.0f64));
    // Through opaque pointers: the helpers' own code, as compiled code would call it (inlined
    // here, LLVM may order the operands of `maxss` the other way and answer differently).
    type F32Fn = extern "C" fn(f32, f32) -> f32;
    type F64Fn = extern "C" fn(f64, f64) -> f64;
    let (minf, maxf) = (black_box(wf_minf as F32Fn), black_box(wf_maxf as F32Fn));
    let (mind, maxd) = (black_box(wf_mind as F64Fn), black_box(wf_maxd as F64Fn));
    [
        [neg32(minf(p32, n32)), neg32(minf(n32, p32))],
        [neg64(mind(p64, n64)), neg64(mind(n64, p64))],
        [neg32(maxf(p32, n32)), neg32(maxf(n32, p32))],
        [neg64(maxd(p64, n64)), neg64(maxd(n64, p64))],
    ]
}

pub(crate) fn register_helpers(jb: &mut JITBuilder) {
    let syms: [(&str, *const u8); 20] = [
        ("wf_minf", wf_minf as *const u8),
        ("wf_maxf", wf_maxf as *const u8),
        ("wf_mind", wf_mind as *const u8),
        ("wf_maxd", wf_maxd as *const u8),
        ("wf_has_edge", wf_has_edge as *const u8),
        ("wf_prop", wf_prop as *const u8),
        ("wf_back_weight", wf_back_weight as *const u8),
        ("wf_back_count", wf_back_count as *const u8),
        ("wf_label_max", wf_label_max as *const u8),
        ("wf_label_sum", wf_label_sum as *const u8),
        ("wf_label_count", wf_label_count as *const u8),
        ("wf_expf", wf_expf as *const u8),
        ("wf_lnf", wf_lnf as *const u8),
        ("wf_powf", wf_powf as *const u8),
        ("wf_fmodf", wf_fmodf as *const u8),
        ("wf_exp", wf_exp as *const u8),
        ("wf_ln", wf_ln as *const u8),
        ("wf_pow", wf_pow as *const u8),
        ("wf_fmod", wf_fmod as *const u8),
        ("wf_refill", wf_refill as *const u8),
    ];
    for (name, p) in syms {
        jb.symbol(name, p);
    }
}

fn ty(s: Scalar) -> Type {
    match s {
        Scalar::F32 => types::F32,
        Scalar::F64 => types::F64,
        Scalar::I32 | Scalar::U32 => types::I32,
        Scalar::Bool => types::I8,
    }
}

pub(crate) struct Compiler<'m> {
    module: &'m mut JITModule,
    program: &'m Program,
    values: &'m [ParamValue],
    /// A graph with no nodes: the evaluator's graph when it folds constants (which read none).
    no_graph: CsrGraph,
    param_offsets: &'m [usize],
    weighted: bool,
    fctx: FunctionBuilderContext,
    helpers: HashMap<&'static str, FuncId>,
    /// The CLIF of each function as generated (before Cranelift's optimizations), by name.
    pub(crate) clif: Vec<(String, String)>,
    /// The machine code of each function, disassembled, when asked for (`WAYFARER_DUMP`).
    pub(crate) disasm: Option<Vec<(String, String)>>,
}

struct L<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    exprs: &'a Arena<Expr>,
    types: &'a [Scalar],
    program: &'a Program,
    values: &'a [ParamValue],
    no_graph: &'a CsrGraph,
    /// Which expressions are constants for these hyperparameter values (see `constant`).
    consts: HashMap<usize, Option<Value>>,
    param_offsets: &'a [usize],
    weighted: bool,
    ctx: CValue,
    w: CValue,
    e: CValue,
    /// The routine's draws (`Expr::Draw`), absent in value functions.
    draws: Option<CValue>,
    /// The routine's draws as values, when the function drew them itself (compiled update).
    draw_values: Vec<CValue>,
    /// Float min/max in line instead of calls: everywhere but the routines (`init`, `update`),
    /// whose outputs are the walker's state. Elsewhere a value is a weight, a bound or a
    /// factor, which only steers the sampler (and a NaN is an error), and the calls cost
    /// more than the step's other work (three to five in Node2Vec's bound alone).
    inline_minmax: bool,
    memo: HashMap<usize, CValue>,
    calls: &'a mut dyn FnMut(&str, &mut Function) -> cranelift_codegen::ir::FuncRef,
    /// A node function's flag (`floats_fn`'s `node_only`): a read of the walker beyond its node
    /// stores 1 there and reads 0, and `step() == 0` is false.
    taint: Option<CValue>,
}

const PTR: Type = types::I64;

fn trusted() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// Loads: nothing a compiled function reads (graph, arrays, walker, parameters, draws) is
/// written while it runs (its outputs go to a separate buffer), so Cranelift may reuse a
/// load's value across calls. Not `can_move`: guarded loads must stay behind their guards.
fn readonly() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly()
}

impl<'m> Compiler<'m> {
    pub(crate) fn new(
        module: &'m mut JITModule,
        program: &'m Program,
        values: &'m [ParamValue],
        param_offsets: &'m [usize],
        weighted: bool,
    ) -> Self {
        let no_graph = CsrGraph::from_parts(
            wayfarer_runtime::graph::CsrParts { offsets: vec![0], ..Default::default() },
            wayfarer_runtime::graph::Orientation::Directed,
        )
        .expect("an empty graph is valid");
        Compiler {
            module,
            program,
            values,
            no_graph,
            param_offsets,
            weighted,
            fctx: FunctionBuilderContext::new(),
            helpers: HashMap::new(),
            clif: Vec::new(),
            disasm: std::env::var_os("WAYFARER_DUMP").map(|_| Vec::new()),
        }
    }

    fn define(
        &mut self,
        name: &str,
        sig: Signature,
        exprs: &Arena<Expr>,
        types_: &[Scalar],
        body: impl FnOnce(&mut L) -> Result<(), String>,
    ) -> Result<FuncId, String> {
        let id = self.module.declare_function(name, Linkage::Local, &sig).map_err(|e| e.to_string())?;
        let mut func = Function::with_name_signature(UserFuncName::user(0, id.as_u32()), sig);
        {
            let mut b = FunctionBuilder::new(&mut func, &mut self.fctx);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            b.seal_block(entry);
            let params = b.block_params(entry).to_vec();
            let module = &mut *self.module;
            let helpers = &mut self.helpers;
            let sigs: HashMap<&'static str, Signature> = HELPERS.iter().map(|n| (*n, Self::helper_sig_static(module, n))).collect();
            let mut calls = |name: &str, f: &mut Function| {
                let key = HELPERS.iter().find(|h| **h == name).expect("known helper");
                let id = *helpers
                    .entry(key)
                    .or_insert_with(|| module.declare_function(key, Linkage::Import, &sigs[key]).expect("helper declares"));
                module.declare_func_in_func(id, f)
            };
            let mut l = L {
                b: &mut b,
                exprs,
                types: types_,
                program: self.program,
                values: self.values,
                no_graph: &self.no_graph,
                consts: HashMap::new(),
                param_offsets: self.param_offsets,
                weighted: self.weighted,
                ctx: params[0],
                w: params[1],
                e: params[2],
                draws: params.get(3).copied(),
                draw_values: Vec::new(),
                inline_minmax: true,
                memo: HashMap::new(),
                calls: &mut calls,
                taint: None,
            };
            body(&mut l)?;
            b.seal_all_blocks();
            b.finalize(self.module.target_config());
        }
        self.clif.push((name.to_string(), func.display().to_string()));
        let mut ctx = self.module.make_context();
        ctx.func = func;
        ctx.set_disasm(self.disasm.is_some());
        self.module.define_function(id, &mut ctx).map_err(|e| format!("{e:?}"))?;
        if let Some(d) = &mut self.disasm {
            d.push((name.to_string(), ctx.compiled_code().and_then(|c| c.vcode.clone()).unwrap_or_default()));
        }
        Ok(id)
    }

    fn helper_sig_static(module: &JITModule, name: &str) -> Signature {
        let mut s = module.make_signature();
        let (params, ret): (&[Type], Type) = match name {
            "wf_has_edge" => (&[PTR, types::I32, types::I32], types::I8),
            "wf_prop" | "wf_back_weight" | "wf_label_max" | "wf_label_sum" => (&[PTR, types::I32, types::I32], types::F32),
            "wf_back_count" | "wf_label_count" => (&[PTR, types::I32, types::I32], types::I32),
            "wf_expf" | "wf_lnf" => (&[types::F32], types::F32),
            "wf_powf" | "wf_fmodf" | "wf_minf" | "wf_maxf" => (&[types::F32, types::F32], types::F32),
            "wf_exp" | "wf_ln" => (&[types::F64], types::F64),
            "wf_refill" => {
                s.params.push(AbiParam::new(PTR));
                return s;
            }
            _ => (&[types::F64, types::F64], types::F64),
        };
        for p in params {
            s.params.push(AbiParam::new(*p));
        }
        s.returns.push(AbiParam::new(ret));
        s
    }

    /// `fn(ctx, walker, out: *mut f32)` writing each of `roots` (f32) to `out[i]`. With
    /// `node_only` (`Walk::node_start`): computed for the walker's node past its first move,
    /// with `out[roots.len()]` set to 1 (else 0) if that read more of the walker than its node;
    /// the same lowering otherwise, so the values are the plain functions'.
    pub(crate) fn floats_fn(
        &mut self,
        name: &str,
        exprs: &Arena<Expr>,
        types_: &[Scalar],
        roots: &[Handle<Expr>],
        node_only: bool,
    ) -> Result<FuncId, String> {
        let mut sig = self.module.make_signature();
        sig.params.extend([AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(PTR)]);
        self.define(name, sig, exprs, types_, |l| {
            let out = l.e;
            l.e = l.b.ins().iconst(types::I64, 0);
            if node_only {
                let flag = l.b.ins().iadd_imm_s(out, 4 * roots.len() as i64);
                let zero = l.b.ins().iconst(types::I32, 0);
                l.b.ins().store(trusted(), zero, flag, 0);
                l.taint = Some(flag);
            }
            // Every output first, then the stores: a store between two reads of the same
            // context field or array entry keeps Cranelift from merging them (it cannot tell
            // that `out` is not the graph), so the outputs would each reload what they share.
            let mut values = Vec::with_capacity(roots.len());
            for (i, &h) in roots.iter().enumerate() {
                if l.types[h.index()] != Scalar::F32 {
                    return Err(format!("`{name}` output {i} is not an f32"));
                }
                values.push(l.lower(h)?);
            }
            for (i, v) in values.into_iter().enumerate() {
                l.b.ins().store(trusted(), v, out, 4 * i as i32);
            }
            l.b.ins().return_(&[]);
            Ok(())
        })
    }

    /// `fn(ctx, walker, edge) -> f32` computing `root` of `exprs`.
    pub(crate) fn value_fn(&mut self, name: &str, exprs: &Arena<Expr>, types_: &[Scalar], root: Handle<Expr>) -> Result<FuncId, String> {
        let mut sig = self.module.make_signature();
        sig.params.extend([AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(types::I64)]);
        sig.returns.push(AbiParam::new(types::F32));
        self.define(name, sig, exprs, types_, |l| {
            let v = l.lower(root)?;
            let v = if l.types[root.index()] == Scalar::F32 { v } else { return Err(format!("`{name}` is not an f32")) };
            l.b.ins().return_(&[v]);
            Ok(())
        })
    }

    /// `fn(ctx, walker, edge) -> u32` computing `root` (a `u32` expression: a proposal's label).
    pub(crate) fn u32_fn(&mut self, name: &str, exprs: &Arena<Expr>, types_: &[Scalar], root: Handle<Expr>) -> Result<FuncId, String> {
        let mut sig = self.module.make_signature();
        sig.params.extend([AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(types::I64)]);
        sig.returns.push(AbiParam::new(types::I32));
        self.define(name, sig, exprs, types_, |l| {
            if l.types[root.index()] != Scalar::U32 {
                return Err(format!("`{name}` is not a u32"));
            }
            let v = l.lower(root)?;
            l.b.ins().return_(&[v]);
            Ok(())
        })
    }

    /// `fn(ctx, walker, edge, out: *mut f32)` writing the weight's squeeze envelope `(lo, hi)`,
    /// or `None` if the weight has no expensive part to skip (or no envelope).
    pub(crate) fn envelope_fn(&mut self, name: &str) -> Result<Option<FuncId>, String> {
        let (exprs, types_, root) = (&self.program.exprs, &self.program.types, self.program.result);
        if !is_expensive(exprs, root) || !has_envelope(exprs, root) {
            return Ok(None);
        }
        let mut sig = self.module.make_signature();
        sig.params.extend([AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(types::I64), AbiParam::new(PTR)]);
        self.define(name, sig, exprs, types_, |l| {
            let out = l.b.block_params(l.b.current_block().expect("in the entry block"))[3];
            let (lo, hi) = l.envelope(root)?.ok_or("no envelope")?;
            l.b.ins().store(trusted(), lo, out, 0);
            l.b.ins().store(trusted(), hi, out, 4);
            l.b.ins().return_(&[]);
            Ok(())
        })
        .map(Some)
    }

    /// `fn(ctx, walker, out: *mut u64)` writing each output's bits to `out[i]`.
    pub(crate) fn routine_fn(&mut self, name: &str, r: &Routine) -> Result<FuncId, String> {
        let mut sig = self.module.make_signature();
        // (ctx, walker, out, draws): the draws are an argument, so a call needs no new image.
        sig.params.extend([AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(PTR), AbiParam::new(PTR)]);
        let init = name == "wf_init";
        self.define(name, sig, &r.exprs, &r.types, |l| {
            l.inline_minmax = false;
            // The third argument is the output array; the edge the step accessors read is the
            // one just taken (none in `init`).
            let out = l.e;
            l.e = if init {
                l.b.ins().iconst(types::I64, 0)
            } else {
                l.b.ins().load(types::I64, readonly(), l.w, offset_of!(JitWalker, last_edge) as i32)
            };
            for (i, h) in r.outputs.iter().enumerate() {
                let v = l.lower(*h)?;
                let bits = l.to_bits(v, l.types[h.index()]);
                l.b.ins().store(trusted(), bits, out, (8 * i) as i32);
            }
            l.b.ins().return_(&[]);
            Ok(())
        })
    }
}

/// Whether the envelope scheme applies: expensive parts only in select conditions.
fn has_envelope(exprs: &Arena<Expr>, h: Handle<Expr>) -> bool {
    match exprs.get(h) {
        Expr::Select { then, other, .. } => has_envelope(exprs, *then) && has_envelope(exprs, *other),
        _ => !is_expensive(exprs, h),
    }
}

const HELPERS: [&str; 20] = [
    "wf_refill",
    "wf_minf",
    "wf_maxf",
    "wf_mind",
    "wf_maxd",
    "wf_has_edge",
    "wf_prop",
    "wf_back_weight",
    "wf_back_count",
    "wf_label_max",
    "wf_label_sum",
    "wf_label_count",
    "wf_expf",
    "wf_lnf",
    "wf_powf",
    "wf_fmodf",
    "wf_exp",
    "wf_ln",
    "wf_pow",
    "wf_fmod",
];

impl L<'_, '_> {
    fn ctx_field(&mut self, t: Type, off: usize) -> CValue {
        self.b.ins().load(t, readonly(), self.ctx, off as i32)
    }

    /// `base[idx]` for a 64-bit index.
    fn load_at(&mut self, t: Type, base: CValue, idx64: CValue, size: i64) -> CValue {
        let scaled = self.b.ins().imul_imm_s(idx64, size);
        let addr = self.b.ins().iadd(base, scaled);
        self.b.ins().load(t, readonly(), addr, 0)
    }

    fn u32_to_i64(&mut self, v: CValue) -> CValue {
        self.b.ins().uextend(types::I64, v)
    }

    fn call_void(&mut self, name: &str, args: &[CValue]) {
        let f = (self.calls)(name, self.b.func);
        self.b.ins().call(f, args);
    }

    fn call(&mut self, name: &str, args: &[CValue]) -> CValue {
        let f = (self.calls)(name, self.b.func);
        let inst = self.b.ins().call(f, args);
        self.b.inst_results(inst)[0]
    }

    fn to_bits(&mut self, v: CValue, s: Scalar) -> CValue {
        match s {
            Scalar::F32 => {
                let i = self.b.ins().bitcast(types::I32, MemFlagsData::new(), v);
                self.b.ins().uextend(types::I64, i)
            }
            Scalar::F64 => self.b.ins().bitcast(types::I64, MemFlagsData::new(), v),
            Scalar::I32 | Scalar::U32 | Scalar::Bool => self.b.ins().uextend(types::I64, v),
        }
    }

    fn from_bits(&mut self, v: CValue, s: Scalar) -> CValue {
        match s {
            Scalar::F32 => {
                let i = self.b.ins().ireduce(types::I32, v);
                self.b.ins().bitcast(types::F32, MemFlagsData::new(), i)
            }
            Scalar::F64 => self.b.ins().bitcast(types::F64, MemFlagsData::new(), v),
            Scalar::I32 | Scalar::U32 => self.b.ins().ireduce(types::I32, v),
            Scalar::Bool => self.b.ins().ireduce(types::I8, v),
        }
    }

    fn zero(&mut self, s: Scalar) -> CValue {
        match s {
            Scalar::F32 => self.b.ins().f32const(0.0),
            Scalar::F64 => self.b.ins().f64const(0.0),
            Scalar::I32 | Scalar::U32 => self.b.ins().iconst(types::I32, 0),
            Scalar::Bool => self.b.ins().iconst(types::I8, 0),
        }
    }

    /// The value of `h` if it depends on hyperparameters and literals only (the walk is
    /// compiled for fixed values, so `a > 0.0` or `h_max / a` with a known `a` fold away,
    /// and a branch on a constant keeps one arm). Computed by the reference interpreter, so
    /// folding cannot change a result. A select with a constant condition is constant if its
    /// taken arm is; the interpreter evaluates only that arm.
    fn constant(&mut self, h: Handle<Expr>) -> Option<Value> {
        if let Some(c) = self.consts.get(&h.index()) {
            return *c;
        }
        let all = |l: &mut Self, xs: &[Handle<Expr>]| xs.iter().all(|&x| l.constant(x).is_some());
        let foldable = match self.exprs.get(h).clone() {
            Expr::Literal(_) | Expr::Param(_) => true,
            Expr::ParamIndex { index, .. } => all(self, &[index]),
            Expr::Unary { arg, .. } => all(self, &[arg]),
            Expr::Binary { lhs, rhs, .. } => all(self, &[lhs, rhs]),
            Expr::Cast { expr, .. } => all(self, &[expr]),
            Expr::Select { cond, then, other } => match self.constant(cond) {
                Some(c) => all(self, &[if c == Value::Bool(true) { then } else { other }]),
                None => false,
            },
            Expr::Call { func: Builtin::Degree | Builtin::HasEdge | Builtin::NodeProp(_), .. } => false,
            Expr::Call { args, .. } => all(self, &args),
            _ => false,
        };
        let v = foldable.then(|| {
            let ev = Evaluator {
                graph: self.no_graph,
                params: self.values,
                state: State { cur: NO_NODE, prev: NO_NODE, start: NO_NODE, step: 0 },
                edge: None,
                props: &[],
                fields: &[],
                draws: &[],
            };
            ev.eval(self.exprs, self.types, h)
        });
        self.consts.insert(h.index(), v);
        v
    }

    fn const_value(&mut self, v: Value) -> CValue {
        match v {
            Value::F32(x) => self.b.ins().f32const(x),
            Value::F64(x) => self.b.ins().f64const(x),
            Value::I32(x) => self.b.ins().iconst(types::I32, x as u32 as i64),
            Value::U32(x) => self.b.ins().iconst(types::I32, x as i64),
            Value::Bool(x) => self.b.ins().iconst(types::I8, x as i64),
        }
    }

    fn lower(&mut self, h: Handle<Expr>) -> Result<CValue, String> {
        if let Some(v) = self.memo.get(&h.index()) {
            return Ok(*v);
        }
        if let Some(c) = self.constant(h) {
            let v = self.const_value(c);
            self.memo.insert(h.index(), v);
            return Ok(v);
        }
        let t = self.types[h.index()];
        if let Some(flag) = self.taint {
            let v = if reads_more_than_cur(self.exprs.get(h)) {
                let one = self.b.ins().iconst(types::I32, 1);
                self.b.ins().store(trusted(), one, flag, 0);
                Some(self.zero(t))
            } else if let Some(eq) = first_step_test(self.exprs, h) {
                // Past the first move.
                Some(self.b.ins().iconst(types::I8, !eq as i64))
            } else if let Expr::Select { cond, then, other } = self.exprs.get(h).clone()
                && let Some(eq) = first_step_test(self.exprs, cond)
            {
                Some(self.lower(if eq { other } else { then })?)
            } else {
                None
            };
            if let Some(v) = v {
                self.memo.insert(h.index(), v);
                return Ok(v);
            }
        }
        let v = match self.exprs.get(h).clone() {
            Expr::Literal(Literal::Float(x, Scalar::F64)) => self.b.ins().f64const(x),
            Expr::Literal(Literal::Float(x, _)) => self.b.ins().f32const(x as f32),
            Expr::Literal(Literal::Int(x, _)) => self.b.ins().iconst(types::I32, x as u32 as i64),
            Expr::Literal(Literal::Bool(x)) => self.b.ins().iconst(types::I8, x as i64),
            Expr::Param(i) => {
                let p = self.ctx_field(PTR, offset_of!(JitCtx, params));
                self.b.ins().load(ty(t), readonly(), p, self.param_offsets[i] as i32)
            }
            Expr::ParamIndex { param, index } => {
                let (elem, n) = match self.program.params[param].ty {
                    ParamType::Array(s, n) => (s, n),
                    ParamType::Scalar(_) => return Err("indexing a scalar".into()),
                };
                let i = self.lower(index)?;
                let inside = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThan, i, n as i64);
                let zero32 = self.b.ins().iconst(types::I32, 0);
                let safe = self.b.ins().select(inside, i, zero32);
                let safe = self.u32_to_i64(safe);
                let p = self.ctx_field(PTR, offset_of!(JitCtx, params));
                let base = self.b.ins().iadd_imm_s(p, self.param_offsets[param] as i64);
                let v = self.load_at(ty(elem), base, safe, crate::scalar_size(elem) as i64);
                let z = self.zero(elem);
                self.b.ins().select(inside, v, z)
            }
            Expr::Step(f) => match f {
                StepField::Cur => self.b.ins().load(types::I32, readonly(), self.w, offset_of!(JitWalker, cur) as i32),
                StepField::Prev => self.b.ins().load(types::I32, readonly(), self.w, offset_of!(JitWalker, prev) as i32),
                StepField::Start => self.b.ins().load(types::I32, readonly(), self.w, offset_of!(JitWalker, start) as i32),
                StepField::Step => self.b.ins().load(types::I32, readonly(), self.w, offset_of!(JitWalker, step) as i32),
                StepField::Edge => self.b.ins().ireduce(types::I32, self.e),
                StepField::Dst => {
                    let base = self.ctx_field(PTR, offset_of!(JitCtx, targets));
                    self.load_at(types::I32, base, self.e, 4)
                }
                StepField::Weight => {
                    if self.weighted {
                        let base = self.ctx_field(PTR, offset_of!(JitCtx, weights));
                        self.load_at(types::F32, base, self.e, 4)
                    } else {
                        self.b.ins().f32const(1.0)
                    }
                }
                StepField::Label => {
                    let base = self.ctx_field(PTR, offset_of!(JitCtx, labels));
                    self.nullable_load(types::I32, base, 4)
                }
                StepField::Time => {
                    let base = self.ctx_field(PTR, offset_of!(JitCtx, times));
                    let raw = self.nullable_load(types::I64, base, 8);
                    self.b.ins().fcvt_from_sint(types::F64, raw)
                }
            },
            Expr::State(i) => {
                if i >= MAX_STATE {
                    return Err("too many state fields".into());
                }
                let off = offset_of!(JitWalker, state) + 8 * i;
                let raw = self.b.ins().load(types::I64, readonly(), self.w, off as i32);
                self.from_bits(raw, t)
            }
            Expr::Draw(k) if !self.draw_values.is_empty() => *self.draw_values.get(k as usize).ok_or("a draw out of range")?,
            Expr::Draw(k) => {
                let d = self.draws.ok_or("a random draw outside init / update / stop")?;
                self.b.ins().load(types::F64, readonly(), d, 8 * k as i32)
            }
            Expr::Unary { op: UnaryOp::Not, arg } => {
                let a = self.lower(arg)?;
                self.b.ins().bxor_imm_u(a, 1)
            }
            Expr::Unary { op: UnaryOp::Neg, arg } => {
                let a = self.lower(arg)?;
                if t.is_float() { self.b.ins().fneg(a) } else { self.b.ins().ineg(a) }
            }
            Expr::Binary { op, lhs, rhs } => {
                let lt = self.types[lhs.index()];
                let a = self.lower(lhs)?;
                let b = self.lower(rhs)?;
                self.binary(op, lt, a, b)
            }
            Expr::Select { cond, then, other } if self.constant(cond).is_some() => {
                let taken = if self.constant(cond) == Some(Value::Bool(true)) { then } else { other };
                self.lower(taken)?
            }
            Expr::Select { cond, then, other } => {
                let c = self.lower(cond)?;
                if is_expensive(self.exprs, then) || is_expensive(self.exprs, other) {
                    let tb = self.b.create_block();
                    let fb = self.b.create_block();
                    let merge = self.b.create_block();
                    self.b.append_block_param(merge, ty(t));
                    self.b.ins().brif(c, tb, &[], fb, &[]);
                    for (block, arm) in [(tb, then), (fb, other)] {
                        self.b.switch_to_block(block);
                        let saved = self.memo.clone();
                        let v = self.lower(arm)?;
                        self.memo = saved;
                        self.b.ins().jump(merge, &[v.into()]);
                    }
                    self.b.switch_to_block(merge);
                    self.b.block_params(merge)[0]
                } else {
                    let x = self.lower(then)?;
                    let y = self.lower(other)?;
                    self.b.ins().select(c, x, y)
                }
            }
            Expr::Cast { expr, to } => {
                let from = self.types[expr.index()];
                let x = self.lower(expr)?;
                self.cast(x, from, to)
            }
            // The walker's own node is always a node of the graph (the engine checks starts
            // and moves only to targets; the weight-range reads of `node` rely on it too): its
            // degree needs no test against the node count.
            Expr::Call { func: Builtin::Degree, args } if matches!(self.exprs.get(args[0]), Expr::Step(StepField::Cur)) => {
                let cur = self.lower(args[0])?;
                self.degree_of_node(cur)
            }
            Expr::Call { func, args } => {
                let at = self.types[args[0].index()];
                let mut a = Vec::new();
                for x in &args {
                    a.push(self.lower(*x)?);
                }
                self.builtin(func, at, &a)
            }
            Expr::Node(q) => self.node(q)?,
        };
        self.memo.insert(h.index(), v);
        Ok(v)
    }

    /// The squeeze envelope of the weight, as the native backend builds it (the same ends, so
    /// eRJS decides every trial the same way): cheap conditions are evaluated, expensive ones
    /// replaced by the min and max of both outcomes.
    fn envelope(&mut self, h: Handle<Expr>) -> Result<Option<(CValue, CValue)>, String> {
        match self.exprs.get(h).clone() {
            Expr::Select { cond, then, other } => {
                let Some((lt, ht)) = self.envelope(then)? else { return Ok(None) };
                let Some((lf, hf)) = self.envelope(other)? else { return Ok(None) };
                if is_expensive(self.exprs, cond) {
                    let lo = self.builtin(Builtin::Min, Scalar::F32, &[lt, lf]);
                    let hi = self.builtin(Builtin::Max, Scalar::F32, &[ht, hf]);
                    Ok(Some((lo, hi)))
                } else {
                    let c = self.lower(cond)?;
                    let lo = self.b.ins().select(c, lt, lf);
                    let hi = self.b.ins().select(c, ht, hf);
                    Ok(Some((lo, hi)))
                }
            }
            _ if is_expensive(self.exprs, h) => Ok(None),
            _ => {
                let v = self.lower(h)?;
                Ok(Some((v, v)))
            }
        }
    }

    /// `base[e]`, or 0 when the array is absent (null).
    fn nullable_load(&mut self, t: Type, base: CValue, size: i64) -> CValue {
        let present = self.b.ins().icmp_imm_s(IntCC::NotEqual, base, 0);
        let yes = self.b.create_block();
        let merge = self.b.create_block();
        self.b.append_block_param(merge, t);
        let z = self.b.ins().iconst(t, 0);
        self.b.ins().brif(present, yes, &[], merge, &[z.into()]);
        self.b.switch_to_block(yes);
        let e = self.e;
        let v = self.load_at(t, base, e, size);
        self.b.ins().jump(merge, &[v.into()]);
        self.b.switch_to_block(merge);
        self.b.block_params(merge)[0]
    }

    /// `1 / b` as a constant when `b` is a constant power of two whose reciprocal is a
    /// normal float (then `x / b == x * (1 / b)` for every `x`, NaN and infinities included).
    fn exact_reciprocal(&mut self, b: CValue) -> Option<CValue> {
        use cranelift_codegen::ir::{InstructionData, ValueDef};
        let ValueDef::Result(inst, _) = self.b.func.dfg.value_def(b) else { return None };
        match self.b.func.dfg.insts[inst] {
            InstructionData::UnaryIeee32 { imm, .. } => {
                let x = f32::from_bits(imm.bits());
                let r = 1.0 / x;
                (x.is_normal() && r.is_normal() && x.to_bits() & 0x007f_ffff == 0).then(|| self.b.ins().f32const(r))
            }
            InstructionData::UnaryIeee64 { imm, .. } => {
                let x = f64::from_bits(imm.bits());
                let r = 1.0 / x;
                (x.is_normal() && r.is_normal() && x.to_bits() & 0x000f_ffff_ffff_ffff == 0).then(|| self.b.ins().f64const(r))
            }
            _ => None,
        }
    }

    fn binary(&mut self, op: BinaryOp, t: Scalar, a: CValue, b: CValue) -> CValue {
        let f = t.is_float();
        let signed = t == Scalar::I32;
        match op {
            BinaryOp::And => self.b.ins().band(a, b),
            BinaryOp::Or => self.b.ins().bor(a, b),
            BinaryOp::Add if f => self.b.ins().fadd(a, b),
            BinaryOp::Sub if f => self.b.ins().fsub(a, b),
            BinaryOp::Mul if f => self.b.ins().fmul(a, b),
            BinaryOp::Div if f => match self.exact_reciprocal(b) {
                // x / 2^k is x * 2^-k exactly (both round the same real number), as LLVM
                // compiles it in the native walks; Cranelift keeps the division.
                Some(r) => self.b.ins().fmul(a, r),
                None => self.b.ins().fdiv(a, b),
            },
            BinaryOp::Rem if f => self.call(if t == Scalar::F64 { "wf_fmod" } else { "wf_fmodf" }, &[a, b]),
            BinaryOp::Add => self.b.ins().iadd(a, b),
            BinaryOp::Sub => self.b.ins().isub(a, b),
            BinaryOp::Mul => self.b.ins().imul(a, b),
            BinaryOp::Div | BinaryOp::Rem => {
                // Division by zero gives 0, and i32::MIN / -1 wraps (Rust's wrapping_div).
                let is0 = self.b.ins().icmp_imm_s(IntCC::Equal, b, 0);
                let one = self.b.ins().iconst(types::I32, 1);
                let zero = self.b.ins().iconst(types::I32, 0);
                if signed {
                    let ism1 = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
                    let bad = self.b.ins().bor(is0, ism1);
                    let safe = self.b.ins().select(bad, one, b);
                    if op == BinaryOp::Div {
                        let q = self.b.ins().sdiv(a, safe);
                        let neg = self.b.ins().ineg(a);
                        let q = self.b.ins().select(ism1, neg, q);
                        self.b.ins().select(is0, zero, q)
                    } else {
                        let r = self.b.ins().srem(a, safe);
                        self.b.ins().select(bad, zero, r)
                    }
                } else {
                    let safe = self.b.ins().select(is0, one, b);
                    let q = if op == BinaryOp::Div { self.b.ins().udiv(a, safe) } else { self.b.ins().urem(a, safe) };
                    self.b.ins().select(is0, zero, q)
                }
            }
            cmp => {
                if f {
                    let cc = match cmp {
                        BinaryOp::Eq => FloatCC::Equal,
                        BinaryOp::Ne => FloatCC::NotEqual,
                        BinaryOp::Lt => FloatCC::LessThan,
                        BinaryOp::Le => FloatCC::LessThanOrEqual,
                        BinaryOp::Gt => FloatCC::GreaterThan,
                        _ => FloatCC::GreaterThanOrEqual,
                    };
                    self.b.ins().fcmp(cc, a, b)
                } else {
                    let cc = match (cmp, signed) {
                        (BinaryOp::Eq, _) => IntCC::Equal,
                        (BinaryOp::Ne, _) => IntCC::NotEqual,
                        (BinaryOp::Lt, true) => IntCC::SignedLessThan,
                        (BinaryOp::Le, true) => IntCC::SignedLessThanOrEqual,
                        (BinaryOp::Gt, true) => IntCC::SignedGreaterThan,
                        (_, true) => IntCC::SignedGreaterThanOrEqual,
                        (BinaryOp::Lt, false) => IntCC::UnsignedLessThan,
                        (BinaryOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
                        (BinaryOp::Gt, false) => IntCC::UnsignedGreaterThan,
                        _ => IntCC::UnsignedGreaterThanOrEqual,
                    };
                    self.b.ins().icmp(cc, a, b)
                }
            }
        }
    }

    fn cast(&mut self, x: CValue, from: Scalar, to: Scalar) -> CValue {
        match (from, to) {
            (a, b) if a == b => x,
            (Scalar::F32, Scalar::F64) => self.b.ins().fpromote(types::F64, x),
            (Scalar::F64, Scalar::F32) => self.b.ins().fdemote(types::F32, x),
            // Rust `as`: saturating, NaN to 0.
            (f, Scalar::I32) if f.is_float() => self.b.ins().fcvt_to_sint_sat(types::I32, x),
            (f, Scalar::U32) if f.is_float() => self.b.ins().fcvt_to_uint_sat(types::I32, x),
            (Scalar::I32, t) if t.is_float() => self.b.ins().fcvt_from_sint(ty(t), x),
            (Scalar::U32, t) if t.is_float() => self.b.ins().fcvt_from_uint(ty(t), x),
            (Scalar::Bool, Scalar::I32 | Scalar::U32) => self.b.ins().uextend(types::I32, x),
            // i32 <-> u32: the same bits.
            _ => x,
        }
    }

    /// `x.max(y)` / `x.min(y)` in line, as Rust's own gives them here: a NaN operand yields
    /// the other; of `+0` and `-0` (equal, which the platform may order either way) whatever
    /// the helper gives, asked once (`ZERO_ORDER`); NaN payloads are not kept.
    fn float_min_max(&mut self, max: bool, f64: bool, x: CValue, y: CValue) -> CValue {
        let it = if f64 { types::I64 } else { types::I32 };
        let xn = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let yn = self.b.ins().fcmp(FloatCC::Unordered, y, y);
        // The result for (+0, -0) and for (-0, +0).
        let [pos_first, neg_first] = zero_order()[(max as usize) * 2 + f64 as usize];
        // Equal operands with different bits are only +0 and -0: where the helper gives one
        // side of a tie whichever it is (x86-64's `maxss`/`minss` lowering), one comparison
        // decides, without the zeros' bit tests.
        let tie_to = match (pos_first, neg_first) {
            (false, true) => Some(true),
            (true, false) => Some(false),
            _ => None,
        };
        if let Some(x_on_ties) = tie_to {
            let cc = match (max, x_on_ties) {
                (true, true) => FloatCC::GreaterThanOrEqual,
                (true, false) => FloatCC::GreaterThan,
                (false, true) => FloatCC::LessThanOrEqual,
                (false, false) => FloatCC::LessThan,
            };
            let keep_x = self.b.ins().fcmp(cc, x, y);
            let r = self.b.ins().select(keep_x, x, y);
            let r = self.b.ins().select(yn, x, r);
            return self.b.ins().select(xn, y, r);
        }
        let wins = self.b.ins().fcmp(if max { FloatCC::GreaterThan } else { FloatCC::LessThan }, x, y);
        let eq = self.b.ins().fcmp(FloatCC::Equal, x, y);
        let apart = self.b.ins().select(wins, x, y);
        let xi = self.b.ins().bitcast(it, MemFlagsData::new(), x);
        let yi = self.b.ins().bitcast(it, MemFlagsData::new(), y);
        let differ = self.b.ins().icmp(IntCC::NotEqual, xi, yi);
        let x_pos = self.b.ins().icmp_imm_u(IntCC::Equal, xi, 0);
        let zero = |b: &mut FunctionBuilder, neg: bool| {
            if f64 { b.ins().f64const(if neg { -0.0 } else { 0.0 }) } else { b.ins().f32const(if neg { -0.0f32 } else { 0.0 }) }
        };
        let (zp, zn) = (zero(self.b, pos_first), zero(self.b, neg_first));
        let zeros = self.b.ins().select(x_pos, zp, zn);
        let same = self.b.ins().select(differ, zeros, x);
        let r = self.b.ins().select(eq, same, apart);
        let r = self.b.ins().select(yn, x, r);
        self.b.ins().select(xn, y, r)
    }

    fn builtin(&mut self, func: Builtin, t: Scalar, a: &[CValue]) -> CValue {
        let f64 = t == Scalar::F64;
        match func {
            Builtin::Min | Builtin::Max if t.is_float() && self.inline_minmax => self.float_min_max(func == Builtin::Max, f64, a[0], a[1]),
            Builtin::Min | Builtin::Max if t.is_float() => {
                let name = match (func, f64) {
                    (Builtin::Min, false) => "wf_minf",
                    (Builtin::Max, false) => "wf_maxf",
                    (Builtin::Min, true) => "wf_mind",
                    _ => "wf_maxd",
                };
                self.call(name, &[a[0], a[1]])
            }
            Builtin::Min | Builtin::Max => {
                let signed = t == Scalar::I32;
                let cc = match (func == Builtin::Min, signed) {
                    (true, true) => IntCC::SignedLessThan,
                    (true, false) => IntCC::UnsignedLessThan,
                    (false, true) => IntCC::SignedGreaterThan,
                    (false, false) => IntCC::UnsignedGreaterThan,
                };
                let c = self.b.ins().icmp(cc, a[0], a[1]);
                self.b.ins().select(c, a[0], a[1])
            }
            Builtin::Abs if t == Scalar::I32 => self.b.ins().iabs(a[0]),
            Builtin::Abs => self.b.ins().fabs(a[0]),
            Builtin::Sqrt => self.b.ins().sqrt(a[0]),
            Builtin::Exp => self.call(if f64 { "wf_exp" } else { "wf_expf" }, &[a[0]]),
            Builtin::Ln => self.call(if f64 { "wf_ln" } else { "wf_lnf" }, &[a[0]]),
            Builtin::Powf => self.call(if f64 { "wf_pow" } else { "wf_powf" }, &[a[0], a[1]]),
            Builtin::HasEdge => {
                let ctx = self.ctx;
                self.call("wf_has_edge", &[ctx, a[0], a[1]])
            }
            Builtin::NodeProp(i) => {
                let ctx = self.ctx;
                let i = self.b.ins().iconst(types::I32, i as i64);
                self.call("wf_prop", &[ctx, i, a[0]])
            }
            Builtin::Degree => self.degree(a[0]),
        }
    }

    /// The out-degree of `v`, a node of the graph (the walker's own node), saturated to u32.
    fn degree_of_node(&mut self, v: CValue) -> CValue {
        let v64 = self.u32_to_i64(v);
        let off = self.ctx_field(PTR, offset_of!(JitCtx, offsets));
        let lo = self.load_at(types::I64, off, v64, 8);
        let next = self.b.ins().iadd_imm_s(v64, 1);
        let hi = self.load_at(types::I64, off, next, 8);
        let d = self.b.ins().isub(hi, lo);
        let cap = self.b.ins().iconst(types::I64, u32::MAX as i64);
        let d = self.b.ins().umin(d, cap);
        self.b.ins().ireduce(types::I32, d)
    }

    /// The out-degree of `v` (0 if not a node), saturated to u32.
    fn degree(&mut self, v: CValue) -> CValue {
        let n = self.ctx_field(types::I64, offset_of!(JitCtx, num_nodes));
        let v64 = self.u32_to_i64(v);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, v64, n);
        let zero32 = self.b.ins().iconst(types::I32, 0);
        let safe = self.b.ins().select(inside, v, zero32);
        let d = self.degree_of_node(safe);
        self.b.ins().select(inside, d, zero32)
    }

    fn node(&mut self, q: NodeQuery) -> Result<CValue, String> {
        let cur = self.b.ins().load(types::I32, readonly(), self.w, offset_of!(JitWalker, cur) as i32);
        let cur64 = self.u32_to_i64(cur);
        let ctx = self.ctx;
        Ok(match q {
            NodeQuery::WeightMax | NodeQuery::WeightMin | NodeQuery::WeightSum => {
                let off = match q {
                    NodeQuery::WeightMax => offset_of!(JitCtx, weight_max),
                    NodeQuery::WeightMin => offset_of!(JitCtx, weight_min),
                    _ => offset_of!(JitCtx, weight_sum),
                };
                let base = self.ctx_field(PTR, off);
                self.load_at(types::F32, base, cur64, 4)
            }
            NodeQuery::NeighborDegreeMax | NodeQuery::NeighborDegreeMin => {
                let off =
                    if q == NodeQuery::NeighborDegreeMax { offset_of!(JitCtx, nbr_degree_max) } else { offset_of!(JitCtx, nbr_degree_min) };
                let base = self.ctx_field(PTR, off);
                self.load_at(types::I32, base, cur64, 4)
            }
            NodeQuery::Degree => self.degree_of_node(cur),
            NodeQuery::BackWeight | NodeQuery::BackCount => {
                let prev = self.b.ins().load(types::I32, readonly(), self.w, offset_of!(JitWalker, prev) as i32);
                self.call(if q == NodeQuery::BackWeight { "wf_back_weight" } else { "wf_back_count" }, &[ctx, cur, prev])
            }
            NodeQuery::LabelMax(l) | NodeQuery::LabelSum(l) | NodeQuery::LabelCount(l) => {
                let lv = self.lower(l)?;
                let (name, field, t) = match q {
                    NodeQuery::LabelMax(_) => ("wf_label_max", offset_of!(LabelStat, max), types::F32),
                    NodeQuery::LabelSum(_) => ("wf_label_sum", offset_of!(LabelStat, sum), types::F32),
                    _ => ("wf_label_count", offset_of!(LabelStat, count), types::I32),
                };
                // Per-label arrays present (label_k > 0): an inlined load, 0 for labels past k.
                // Without them (too many labels) the helper answers for the whole row.
                let k = self.ctx_field(types::I64, offset_of!(JitCtx, label_k));
                let has = self.b.ins().icmp_imm_u(IntCC::NotEqual, k, 0);
                let inline = self.b.create_block();
                let helper = self.b.create_block();
                let merge = self.b.create_block();
                self.b.append_block_param(merge, t);
                self.b.ins().brif(has, inline, &[], helper, &[]);
                let saved = self.memo.clone();
                self.b.switch_to_block(inline);
                let l64 = self.u32_to_i64(lv);
                let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, l64, k);
                let zero64 = self.b.ins().iconst(types::I64, 0);
                let l_safe = self.b.ins().select(inside, l64, zero64);
                let row = self.b.ins().imul(cur64, k);
                let idx = self.b.ins().iadd(row, l_safe);
                let base = self.ctx_field(PTR, offset_of!(JitCtx, label_stats));
                let scaled = self.b.ins().imul_imm_s(idx, size_of::<LabelStat>() as i64);
                let addr = self.b.ins().iadd(base, scaled);
                let v = self.b.ins().load(t, readonly(), addr, field as i32);
                let z = if t == types::F32 { self.b.ins().f32const(0.0) } else { self.b.ins().iconst(types::I32, 0) };
                let v = self.b.ins().select(inside, v, z);
                self.b.ins().jump(merge, &[v.into()]);
                self.memo = saved.clone();
                self.b.switch_to_block(helper);
                let h = self.call(name, &[ctx, cur, lv]);
                self.b.ins().jump(merge, &[h.into()]);
                self.memo = saved;
                self.b.switch_to_block(merge);
                self.b.block_params(merge)[0]
            }
        })
    }
}
