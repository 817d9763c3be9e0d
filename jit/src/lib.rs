//! # wayfarer-jit
//!
//! The Cranelift backend: a walk's IR (`get_weight`, the bound `B`, the estimate `Ŝ`, and the
//! impl form's `init` / `update` / `stop`) lowered to Cranelift IR and JIT-compiled, so walks
//! written at run time (`wayfarer walk my_walk.rs`) run in the same CPU engine as the
//! macro-compiled ones: same samplers, same Philox streams, same walks for a seed.
//!
//! Semantics are the IR's (see `wayfarer_compiler::eval`): wrapping integers, division by zero
//! giving 0, saturating float-to-int casts, graph queries on non-nodes giving false / 0.
//! Transcendental functions call the same Rust functions the native backend compiles to, so
//! the two backends compute bit-identical weights.

#![warn(missing_docs)]

mod lower;

use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use std::time::Instant;
use wayfarer_compiler::WalkInfo;
use wayfarer_compiler::eval::{ParamValue, Value};
use wayfarer_compiler::ir::{Form, ParamType, Program, Scalar};
use wayfarer_runtime::graph::CsrGraph;
use wayfarer_runtime::{Bound, BoundScope, Ctx, Requirements, StepRng, Walk, WalkError, Walker};

/// State fields a JIT-compiled walk may have.
pub const MAX_STATE: usize = 16;

/// What can go wrong compiling a walk with Cranelift.
#[derive(Debug, thiserror::Error)]
pub enum JitError {
    /// Cranelift rejected the generated code (a bug in the lowering).
    #[error("Cranelift failed on walk `{walk}`: {message}")]
    Codegen {
        /// The walk.
        walk: String,
        /// Cranelift's message.
        message: String,
    },
    /// The program is outside what this backend supports.
    #[error("walk `{walk}`: {message}")]
    Unsupported {
        /// The walk.
        walk: String,
        /// Why.
        message: String,
    },
}

/// The per-walker state of a JIT-compiled walk: each field's bits in one slot.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JitState(pub [u64; MAX_STATE]);

/// The walker as compiled code reads it: the engine's own walker, read in place.
pub(crate) type JitWalker = Walker<JitState>;

/// The graph, arrays and parameters as compiled code reads them (raw pointers into the
/// caller's graph and stats, valid for one call, or for one run when prepared).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct JitCtx {
    pub offsets: *const u64,
    pub targets: *const u32,
    pub weights: *const f32,
    pub labels: *const u32,
    pub times: *const i64,
    pub num_nodes: u64,
    pub weight_max: *const f32,
    pub weight_min: *const f32,
    pub weight_sum: *const f32,
    pub nbr_degree_max: *const u32,
    pub nbr_degree_min: *const u32,
    /// Labels with per-label arrays (0: none; label queries then call a helper).
    pub label_k: u64,
    /// `NodeStats::labels`: one [`wayfarer_runtime::LabelStat`] per (node, label).
    pub label_stats: *const wayfarer_runtime::LabelStat,
    pub params: *const u8,
    /// For the helpers written in Rust.
    pub ctx: *const Ctx<'static>,
    pub props: *const *const f32,
}

/// What [`Walk::prepare`] keeps for one run: the pointer image (built once instead of at
/// every call) and the context the Rust helpers read.
struct JitPrepared {
    graph: *const CsrGraph,
    stats: *const wayfarer_runtime::NodeStats,
    // `jc.ctx` points here; `jc.props` into `props`. Both live as long as the box.
    helper_ctx: Ctx<'static>,
    props: Vec<*const f32>,
    jc: JitCtx,
}

// SAFETY: the pointers refer to the run's graph and arrays, which are shared read-only by all
// threads for the run's duration (the box lives in the engine's run and is dropped with it).
unsafe impl Send for JitPrepared {}
unsafe impl Sync for JitPrepared {}

/// Draws a routine may take without a heap allocation.
const STACK_DRAWS: usize = 16;

type ValueFn = unsafe extern "C" fn(*const JitCtx, *const JitWalker, u64) -> f32;
type U32Fn = unsafe extern "C" fn(*const JitCtx, *const JitWalker, u64) -> u32;
type RoutineFn = unsafe extern "C" fn(*const JitCtx, *const JitWalker, *mut u64, *const f64);
type PairFn = unsafe extern "C" fn(*const JitCtx, *const JitWalker, *mut f32);
use wayfarer_runtime::engine::{CompiledTurn, ReservoirFn, TurnFn, UpdateFn};
type EnvelopeFn = unsafe extern "C" fn(*const JitCtx, *const JitWalker, u64, *mut f32);

/// How the CPU engine samples a JIT-compiled walk's steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineTurns {
    /// Through the walk's compiled turns, `update` and eRVS (`wf_turn_start`, `wf_turn_trial`,
    /// `wf_turn_update`, `wf_reservoir`): a step makes one call per turn, with the weight, `B`
    /// and `Ŝ` inlined. The default (`WAYFARER_JIT_TURN=0` turns it off for a run).
    Compiled,
    /// Through the engine's own turn, calling the compiled `B`, `Ŝ` and weight once per query
    /// (the same walks, slower; for comparison and tests).
    Generic,
}

/// A JIT module for this machine, with the helpers compiled code may call.
fn native_module() -> Result<JITModule, String> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(|e| e.to_string())?;
    flags.set("is_pic", "false").map_err(|e| e.to_string())?;
    flags.set("use_colocated_libcalls", "false").map_err(|e| e.to_string())?;
    let isa = cranelift_native::builder()?.finish(settings::Flags::new(flags)).map_err(|e| e.to_string())?;
    let mut jb = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    lower::register_helpers(&mut jb);
    Ok(JITModule::new(jb))
}

/// The adaptive rule as the compiled turns decide it (the same Cranelift helpers), for the
/// cases of `wayfarer_runtime::cost::ADAPTIVE_RULE_CASES`: `(d, B, Ŝ)` under `model` to (eRVS,
/// trial cap).
pub fn adaptive_rule_probe(model: wayfarer_runtime::engine::CostModel, cases: &[(u32, f32, f32)]) -> Result<Vec<(bool, u32)>, JitError> {
    let err = |message: String| JitError::Codegen { walk: "the adaptive-rule probe".into(), message };
    let mut module = native_module().map_err(err)?;
    let id = lower::rule_probe(&mut module).map_err(err)?;
    module.finalize_definitions().map_err(|e| err(e.to_string()))?;
    type ProbeFn = unsafe extern "C" fn(*const wayfarer_runtime::engine::TurnArgs, u64, f32, f32) -> u64;
    // SAFETY: `rule_probe` defines exactly this signature.
    let probe = unsafe { std::mem::transmute::<*const u8, ProbeFn>(module.get_finalized_function(id)) };
    let args = wayfarer_runtime::engine::TurnArgs {
        image: std::ptr::null(),
        offsets: std::ptr::null(),
        targets: std::ptr::null(),
        table: std::ptr::null(),
        ratio: model.ratio,
        fixed: model.fixed,
        ratio_short: model.ratio_short,
        rejection_only: 0,
    };
    let out = cases
        .iter()
        .map(|&(d, bound, estimate)| {
            // SAFETY: the probe reads only the cost model's fields of `args`.
            let r = unsafe { probe(&args, d as u64, bound, estimate) };
            (r >> 32 != 0, r as u32)
        })
        .collect();
    // SAFETY: no pointer into the module outlives this call.
    unsafe { module.free_memory() };
    Ok(out)
}

/// A walk compiled by Cranelift, ready for the CPU engine.
pub struct JitWalk {
    /// Unique per compiled walk: the owner tag of its prepared data.
    id: u64,
    name: String,
    program_form: Form,
    state_types: Vec<Scalar>,
    params: Vec<u8>,
    props: Vec<String>,
    requirements: Requirements,
    weighted: bool,
    has_bound: bool,
    bound_scope: BoundScope,
    possible_zero: bool,
    sum_exact: bool,
    static_weight: bool,
    reads_time: bool,
    reads_label: bool,
    draws: [u32; 3],
    /// Outputs each routine writes (init, update, stop).
    outputs: [usize; 3],
    weight: ValueFn,
    bound: ValueFn,
    estimate: ValueFn,
    bound_estimate: PairFn,
    /// `B` and `Ŝ` for the walker's node past its first move, and whether they read more
    /// (`Walk::node_start`; none without a bound).
    node_start: Option<PairFn>,
    envelope: Option<EnvelopeFn>,
    /// The engine's eRJS turns (a step's start, a pending trial), compiled for this walk.
    turn: (TurnFn, TurnFn),
    /// `update` applied in place, drawing from the move's stream itself.
    turn_update: Option<UpdateFn>,
    /// eRVS with the weight inlined.
    reservoir: ReservoirFn,
    init: Option<RoutineFn>,
    update: Option<RoutineFn>,
    stop: Option<RoutineFn>,
    /// How the engine samples this walk's steps.
    engine_turns: EngineTurns,
    /// The structured proposal plan and its compiled parts: each static factor, each term's
    /// per-step bound, the label.
    proposal: Vec<wayfarer_runtime::proposal::TermPlan>,
    factors: Vec<ValueFn>,
    /// Writes every term's bound, `out[k]` for term `k` (at most `MAX_TERMS`).
    term_bounds: Option<PairFn>,
    term_label: Option<U32Fn>,
    /// [`Walk::fingerprint`]: a hash of the program's IR, its parameter values and weightedness.
    fingerprint: u64,
    /// Seconds Cranelift took.
    pub compile_seconds: f64,
    /// The Cranelift IR of each function, as generated (what the golden files pin).
    pub clif: Vec<(String, String)>,
    // Keeps the machine code alive.
    _module: JITModule,
}

// SAFETY: the compiled functions are pure code reading only their arguments; the module is
// never mutated after finalization.
unsafe impl Sync for JitWalk {}
unsafe impl Send for JitWalk {}

/// Lays the hyperparameters out as `lower` reads them: each scalar at a multiple of its size,
/// arrays contiguous.
pub(crate) fn param_offsets(program: &Program) -> (Vec<usize>, usize) {
    let mut off = 0usize;
    let mut out = Vec::new();
    for p in &program.params {
        let (size, count) = match p.ty {
            ParamType::Scalar(s) => (scalar_size(s), 1),
            ParamType::Array(s, n) => (scalar_size(s), n),
        };
        off = off.div_ceil(size) * size;
        out.push(off);
        off += size * count;
    }
    (out, off)
}

pub(crate) fn scalar_size(s: Scalar) -> usize {
    match s {
        Scalar::F64 => 8,
        Scalar::Bool => 1,
        _ => 4,
    }
}

fn write_value(buf: &mut [u8], at: usize, v: Value) {
    match v {
        Value::F32(x) => buf[at..at + 4].copy_from_slice(&x.to_le_bytes()),
        Value::F64(x) => buf[at..at + 8].copy_from_slice(&x.to_le_bytes()),
        Value::I32(x) => buf[at..at + 4].copy_from_slice(&x.to_le_bytes()),
        Value::U32(x) => buf[at..at + 4].copy_from_slice(&x.to_le_bytes()),
        Value::Bool(b) => buf[at] = b as u8,
    }
}

impl JitWalk {
    /// Compiles `program` (analyzed as `info`) with hyperparameter `values`, for graphs with
    /// (`weighted`) or without edge weights.
    pub fn compile(program: &Program, info: &WalkInfo, values: &[ParamValue], weighted: bool) -> Result<Self, JitError> {
        let started = Instant::now();
        if program.state.len() > MAX_STATE {
            return Err(JitError::Unsupported {
                walk: program.name.clone(),
                message: format!("{} state fields; the Cranelift backend holds at most {MAX_STATE}", program.state.len()),
            });
        }
        let (offsets, size) = param_offsets(program);
        let mut params = vec![0u8; size.max(8)];
        for ((p, v), &at) in program.params.iter().zip(values).zip(&offsets) {
            match (p.ty, v) {
                (ParamType::Scalar(_), ParamValue::Scalar(x)) => write_value(&mut params, at, *x),
                (ParamType::Array(t, _), ParamValue::Array(xs)) => {
                    for (i, x) in xs.iter().enumerate() {
                        write_value(&mut params, at + i * scalar_size(t), *x);
                    }
                }
                _ => {
                    return Err(JitError::Unsupported {
                        walk: program.name.clone(),
                        message: format!("parameter `{}` has the wrong shape", p.name),
                    });
                }
            }
        }
        let err = |e: String| JitError::Codegen { walk: program.name.clone(), message: e };
        let mut module = native_module().map_err(err)?;
        let mut c = lower::Compiler::new(&mut module, program, values, &offsets, weighted);
        let weight = c.value_fn("wf_weight", &program.exprs, &program.types, program.result).map_err(err)?;
        let bound_h = info.bound.unwrap_or(info.sum_estimate);
        let bound = c.value_fn("wf_bound", &info.derived.exprs, &info.derived.types, bound_h).map_err(err)?;
        let estimate = c.value_fn("wf_estimate", &info.derived.exprs, &info.derived.types, info.sum_estimate).map_err(err)?;
        let bound_estimate = c
            .floats_fn("wf_bound_estimate", &info.derived.exprs, &info.derived.types, &[bound_h, info.sum_estimate], false)
            .map_err(err)?;
        let node_start = match info.bound {
            Some(b) => {
                Some(c.floats_fn("wf_node_start", &info.derived.exprs, &info.derived.types, &[b, info.sum_estimate], true).map_err(err)?)
            }
            None => None,
        };
        let envelope = c.envelope_fn("wf_envelope").map_err(err)?;
        // The structured proposal's static factors, per-step bounds and label.
        let (mut factor_ids, mut term_bounds_id, mut label_id) = (Vec::new(), None, None);
        if let Ok(p) = &info.proposal {
            for (i, h) in p.factors.iter().enumerate() {
                factor_ids.push(c.value_fn(&format!("wf_factor{i}"), &program.exprs, &program.types, *h).map_err(err)?);
            }
            // Every term's bound in one function: one call a step, the walker's loads shared.
            let bounds: Vec<_> = p.terms.iter().map(|t| t.bound).collect();
            if bounds.len() > wayfarer_runtime::proposal::MAX_TERMS {
                return Err(err(format!(
                    "{} terms, over the {} a structured proposal has",
                    bounds.len(),
                    wayfarer_runtime::proposal::MAX_TERMS
                )));
            }
            if !bounds.is_empty() {
                term_bounds_id =
                    Some(c.floats_fn("wf_term_bounds", &info.derived.exprs, &info.derived.types, &bounds, false).map_err(err)?);
            }
            if let Some(l) = p.label {
                label_id = Some(c.u32_fn("wf_term_label", &info.derived.exprs, &info.derived.types, l).map_err(err)?);
            }
        }
        let shape = lower::TurnShape {
            has_bound: info.bound.is_some(),
            possible_zero: info.possible_zero,
            sum_exact: info.sum_exact,
            envelope: envelope.is_some(),
        };
        let turn_start = c.turn_fn("wf_turn_start", info, &shape, lower::TurnPart::Start).map_err(err)?;
        let turn_trial = c.turn_fn("wf_turn_trial", info, &shape, lower::TurnPart::Trial).map_err(err)?;
        let reservoir = c.reservoir_fn("wf_reservoir").map_err(err)?;
        let turn_update = match &program.update {
            Some(r) => c.update_fn("wf_turn_update", r, program.state.len()).map_err(err)?,
            None => None,
        };
        let mut routines = [None, None, None];
        for (k, (name, r)) in
            [("wf_init", &program.init), ("wf_update", &program.update), ("wf_stop", &program.stop)].into_iter().enumerate()
        {
            if let Some(r) = r {
                routines[k] = Some(c.routine_fn(name, r).map_err(err)?);
            }
        }
        let clif = std::mem::take(&mut c.clif);
        if let (Some(dir), Some(disasm)) = (std::env::var_os("WAYFARER_DUMP"), c.disasm.take()) {
            // A dump that cannot be written must not fail the compilation.
            let join = |fs: &[(String, String)]| fs.iter().map(|(n, t)| format!(";; {n}\n{t}\n")).collect::<String>();
            let dir = std::path::Path::new(&dir);
            let _ = std::fs::create_dir_all(dir)
                .and_then(|_| std::fs::write(dir.join(format!("{}.clif", program.name)), join(&clif)))
                .and_then(|_| std::fs::write(dir.join(format!("{}.jit.s", program.name)), join(&disasm)));
        }
        drop(c);
        module.finalize_definitions().map_err(|e| err(e.to_string()))?;
        let get = |id| module.get_finalized_function(id);
        // SAFETY: each id was defined above with exactly the signature of the pointer type.
        let (weight, bound, estimate) = unsafe {
            (
                std::mem::transmute::<*const u8, ValueFn>(get(weight)),
                std::mem::transmute::<*const u8, ValueFn>(get(bound)),
                std::mem::transmute::<*const u8, ValueFn>(get(estimate)),
            )
        };
        let routine = |id: Option<cranelift_module::FuncId>| {
            id.map(|id| unsafe { std::mem::transmute::<*const u8, RoutineFn>(module.get_finalized_function(id)) })
        };
        let (init, update, stop) = (routine(routines[0]), routine(routines[1]), routine(routines[2]));
        // SAFETY: defined above with exactly this signature.
        let bound_estimate = unsafe { std::mem::transmute::<*const u8, PairFn>(module.get_finalized_function(bound_estimate)) };
        // SAFETY: defined above with exactly this signature (its `out` holds three words).
        let node_start = node_start.map(|id| unsafe { std::mem::transmute::<*const u8, PairFn>(module.get_finalized_function(id)) });
        // SAFETY: defined above with exactly this signature.
        let envelope = envelope.map(|id| unsafe { std::mem::transmute::<*const u8, EnvelopeFn>(module.get_finalized_function(id)) });
        // SAFETY: defined above with exactly this signature.
        let turn = unsafe {
            (
                std::mem::transmute::<*const u8, TurnFn>(module.get_finalized_function(turn_start)),
                std::mem::transmute::<*const u8, TurnFn>(module.get_finalized_function(turn_trial)),
            )
        };
        // SAFETY: defined above with exactly this signature.
        let reservoir = unsafe { std::mem::transmute::<*const u8, ReservoirFn>(module.get_finalized_function(reservoir)) };
        // SAFETY: defined above with exactly this signature.
        let turn_update = turn_update.map(|id| unsafe { std::mem::transmute::<*const u8, UpdateFn>(module.get_finalized_function(id)) });
        // SAFETY: defined above with exactly these signatures.
        let factors: Vec<ValueFn> = factor_ids
            .into_iter()
            .map(|id| unsafe { std::mem::transmute::<*const u8, ValueFn>(module.get_finalized_function(id)) })
            .collect();
        // SAFETY: as above.
        let term_bounds = term_bounds_id.map(|id| unsafe { std::mem::transmute::<*const u8, PairFn>(module.get_finalized_function(id)) });
        // SAFETY: as above.
        let term_label = label_id.map(|id| unsafe { std::mem::transmute::<*const u8, U32Fn>(module.get_finalized_function(id)) });
        let proposal = info.proposal.as_ref().map_or_else(|_| Vec::new(), |p| p.plan());
        use wayfarer_compiler::ir::StepField;
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Ok(JitWalk {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            name: program.name.clone(),
            program_form: program.form,
            state_types: program.state.iter().map(|s| s.ty).collect(),
            params,
            props: program.props.clone(),
            requirements: wayfarer_compiler::analysis::requirements(info),
            weighted,
            has_bound: info.bound.is_some(),
            bound_scope: match (info.bound, info.bound_scope) {
                (None, _) => BoundScope::None,
                (Some(_), wayfarer_compiler::Scope::PerKernel) => BoundScope::PerKernel,
                (Some(_), wayfarer_compiler::Scope::PerStep) => BoundScope::PerStep,
            },
            possible_zero: info.possible_zero,
            sum_exact: info.sum_exact,
            static_weight: program.static_weight(),
            reads_time: program.reads(StepField::Time),
            reads_label: program.reads(StepField::Label),
            draws: [&program.init, &program.update, &program.stop].map(|r| r.as_ref().map_or(0, |r| r.draws)),
            outputs: [&program.init, &program.update, &program.stop].map(|r| r.as_ref().map_or(0, |r| r.outputs.len())),
            weight,
            bound,
            estimate,
            bound_estimate,
            node_start,
            envelope,
            turn,
            turn_update,
            reservoir,
            init,
            update,
            stop,
            engine_turns: EngineTurns::Compiled,
            proposal,
            factors,
            term_bounds,
            term_label,
            fingerprint: wayfarer_runtime::hash::fnv64(&[
                &wayfarer_compiler::print::fingerprint(program).to_le_bytes(),
                format!("{values:?}|{weighted}").as_bytes(),
            ]),
            compile_seconds: started.elapsed().as_secs_f64(),
            clif,
            _module: module,
        })
    }

    /// [`JitWalk::compile`], cached for the life of the process: the same program (its IR,
    /// analysis, hyperparameter values and weightedness) compiles once; later calls share the
    /// machine code (`compile_seconds` then reports the first compile).
    pub fn compile_cached(
        program: &Program,
        info: &WalkInfo,
        values: &[ParamValue],
        weighted: bool,
    ) -> Result<(std::sync::Arc<Self>, bool), JitError> {
        use std::collections::HashMap;
        use std::sync::{Arc, Mutex, OnceLock};
        static CACHE: OnceLock<Mutex<HashMap<String, Arc<JitWalk>>>> = OnceLock::new();
        let key = format!("{program:?}|{info:?}|{values:?}|{weighted}");
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok((hit.clone(), true));
        }
        let walk = Arc::new(Self::compile(program, info, values, weighted)?);
        cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, walk.clone());
        Ok((walk, false))
    }

    /// The same walk, run by the engine as `turns` says.
    pub fn with_engine_turns(mut self, turns: EngineTurns) -> Self {
        self.engine_turns = turns;
        self
    }

    /// The form the walk was written in.
    pub fn form(&self) -> Form {
        self.program_form
    }

    fn jit_ctx(&self, ctx: &Ctx, props: &[*const f32]) -> JitCtx {
        let g = ctx.graph;
        let ptr = |v: &[f32]| if v.is_empty() { std::ptr::null() } else { v.as_ptr() };
        let uptr = |v: &[u32]| if v.is_empty() { std::ptr::null() } else { v.as_ptr() };
        JitCtx {
            offsets: g.offsets().as_ptr(),
            targets: g.targets().as_ptr(),
            weights: if self.weighted { g.weights().map_or(std::ptr::null(), |w| w.as_ptr()) } else { std::ptr::null() },
            labels: g.labels().map_or(std::ptr::null(), |l| l.as_ptr()),
            times: g.timestamps().map_or(std::ptr::null(), |t| t.as_ptr()),
            num_nodes: g.num_nodes() as u64,
            weight_max: ptr(&ctx.stats.weight_max),
            weight_min: ptr(&ctx.stats.weight_min),
            weight_sum: ptr(&ctx.stats.weight_sum),
            nbr_degree_max: uptr(&ctx.stats.neighbor_degree_max),
            nbr_degree_min: uptr(&ctx.stats.neighbor_degree_min),
            label_k: if ctx.stats.labels.is_empty() { 0 } else { ctx.stats.label_k as u64 },
            label_stats: if ctx.stats.labels.is_empty() { std::ptr::null() } else { ctx.stats.labels.as_ptr() },
            params: self.params.as_ptr(),
            ctx: (ctx as *const Ctx).cast(),
            props: props.as_ptr(),
        }
    }

    fn props<'c>(&self, ctx: &Ctx<'c>) -> Vec<*const f32> {
        self.props.iter().map(|p| ctx.graph.node_property(p).map_or(std::ptr::null(), |v| v.as_ptr())).collect()
    }

    /// This walk's prepared image for `ctx`, if the engine prepared one (for this walk, this
    /// graph and these arrays).
    #[inline(always)]
    fn prepared<'c>(&self, ctx: &Ctx<'c>) -> Option<&'c JitCtx> {
        let p = ctx.prepared?;
        if p.owner != self.id {
            return None;
        }
        // SAFETY: only this walk's `prepare` makes a `Prepared` with its id, always holding a
        // `JitPrepared` (ids are unique per JitWalk: a global counter).
        let jp = unsafe { &*(p.data.as_ref() as *const (dyn std::any::Any + Send + Sync) as *const JitPrepared) };
        (std::ptr::eq(jp.graph, ctx.graph) && std::ptr::eq(jp.stats, ctx.stats)).then_some(&jp.jc)
    }

    /// Calls `f` with the pointer image of `ctx` (prepared, or built for this call).
    #[inline(always)]
    fn with_jit_ctx<R>(&self, ctx: &Ctx, f: impl FnOnce(&JitCtx) -> R) -> R {
        match self.prepared(ctx) {
            Some(jc) => f(jc),
            None => self.unprepared(ctx, f),
        }
    }

    /// The image built for one call (a context the engine did not prepare: tests, tools).
    #[cold]
    #[inline(never)]
    fn unprepared<R>(&self, ctx: &Ctx, f: impl FnOnce(&JitCtx) -> R) -> R {
        let props = if self.props.is_empty() { Vec::new() } else { self.props(ctx) };
        f(&self.jit_ctx(ctx, &props))
    }

    #[inline(always)]
    fn call_value(&self, f: ValueFn, ctx: &Ctx, w: &Walker<JitState>, e: u64) -> f32 {
        // SAFETY: the image points into `ctx`'s live graph and arrays; the compiled code reads
        // only in-bounds entries (edge `e` of the walker's row, nodes checked against
        // num_nodes) and the walker in place (`Walker` is `repr(C)`).
        self.with_jit_ctx(ctx, |jc| unsafe { f(jc, w, e) })
    }

    /// Runs routine `k`, which writes the new state fields followed by cur and prev into `out`.
    // Inlined, with the outputs in the caller's frame: returning them by value cost a memcpy
    // of the whole buffer per call (~30 instructions of a PPR step).
    #[inline(always)]
    fn call_routine(&self, k: usize, f: RoutineFn, ctx: &Ctx, w: &Walker<JitState>, rng: &mut StepRng, out: &mut RoutineOut) {
        use std::mem::MaybeUninit;
        let n = self.draws[k] as usize;
        // Neither array is zeroed first: every draw is written here and the routine writes
        // every output (state fields, then cur and prev); zeroing them cost ~5% of a PPR step.
        let mut stack = [MaybeUninit::<f64>::uninit(); STACK_DRAWS];
        let heap: Vec<f64>;
        let draws: *const f64 = if n <= STACK_DRAWS {
            for d in &mut stack[..n] {
                d.write(rng.uniform());
            }
            stack.as_ptr().cast()
        } else {
            heap = (0..n).map(|_| rng.uniform()).collect();
            heap.as_ptr()
        };
        out.written = self.outputs[k];
        // SAFETY: as in `call_value`; `out` has room for every output the routine writes
        // (at most MAX_STATE fields, then cur and prev), and the routine reads only its `n`
        // draws, all written above.
        self.with_jit_ctx(ctx, |jc| unsafe { f(jc, w, out.bits.as_mut_ptr().cast(), draws) });
    }

    fn apply_state(&self, w: &mut Walker<JitState>, out: &RoutineOut) {
        for i in 0..self.state_types.len() {
            w.state.0[i] = out.get(i);
        }
    }
}

/// A routine's outputs, as the compiled code wrote them.
struct RoutineOut {
    bits: [std::mem::MaybeUninit<u64>; MAX_STATE + 2],
    /// How many leading entries the routine writes.
    written: usize,
}

impl RoutineOut {
    /// A buffer for a routine to write (nothing is zeroed: the routine writes what is read).
    #[inline(always)]
    fn new() -> Self {
        RoutineOut { bits: [std::mem::MaybeUninit::uninit(); MAX_STATE + 2], written: 0 }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> u64 {
        assert!(i < self.written);
        // SAFETY: the routine writes its first `written` outputs on every path (checked above).
        unsafe { self.bits[i].assume_init() }
    }
}

impl Walk for JitWalk {
    type State = JitState;

    fn name(&self) -> &str {
        &self.name
    }
    fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
    fn requirements(&self) -> Requirements {
        self.requirements
    }
    fn weighted(&self) -> bool {
        self.weighted
    }
    fn check(&self, graph: &CsrGraph) -> Result<(), WalkError> {
        let missing = |what: &str| Err(WalkError::MissingGraphData { walk: self.name.clone(), what: what.into() });
        if self.reads_time && graph.timestamps().is_none() {
            return missing("edge timestamps");
        }
        if self.reads_label && graph.labels().is_none() {
            return missing("edge labels");
        }
        for p in &self.props {
            if graph.node_property(p).is_none() {
                return missing(&format!("node property `{p}`"));
            }
        }
        Ok(())
    }
    fn prepare(&self, ctx: &Ctx) -> Option<wayfarer_runtime::Prepared> {
        // SAFETY (lifetime): the box lives in the engine's run, which borrows the graph and
        // arrays for longer; `prepared` checks the graph, arrays and walk before every use.
        let helper_ctx: Ctx<'static> = unsafe { std::mem::transmute::<Ctx<'_>, Ctx<'static>>(Ctx::new(ctx.graph, ctx.stats)) };
        let props = self.props(ctx);
        let mut p = Box::new(JitPrepared { graph: ctx.graph, stats: ctx.stats, helper_ctx, props, jc: self.jit_ctx(ctx, &[]) });
        p.jc.ctx = (&p.helper_ctx as *const Ctx<'static>).cast();
        p.jc.props = p.props.as_ptr();
        Some(wayfarer_runtime::Prepared { owner: self.id, data: p })
    }
    fn compiled_turn(&self, ctx: &Ctx) -> Option<CompiledTurn> {
        if self.engine_turns == EngineTurns::Generic || std::env::var_os("WAYFARER_JIT_TURN").is_some_and(|v| v == "0") {
            return None;
        }
        let jc = self.prepared(ctx)?;
        // SAFETY: `wf_turn_start` and `wf_turn_trial` are generated for this walk's state type
        // from the engine's slot layout (`lower/turn.rs` follows the engine's turn step by step
        // and hands every other case back untouched); the image is this run's prepared pointer
        // image, which lives as long as the run's context.
        // SAFETY (eRVS): `wf_reservoir` is `sampler::reservoir_jump` with `wf_weight`'s lowering
        // inlined, drawing through the same stream functions.
        let turn = unsafe { CompiledTurn::new(self.turn.0, self.turn.1, (jc as *const JitCtx).cast()).with_reservoir(self.reservoir) };
        // SAFETY: `wf_turn_update` is the `update` routine lowered as `wf_update` is, with
        // its draws taken from the move's stream in the order `call_routine` takes them.
        Some(match self.turn_update {
            Some(u) => unsafe { turn.with_update(u, self.draws[1]) },
            None => turn,
        })
    }
    fn init(&self, ctx: &Ctx, w: &mut Walker<JitState>, rng: &mut StepRng) {
        if let Some(f) = self.init {
            let mut out = RoutineOut::new();
            self.call_routine(0, f, ctx, w, rng, &mut out);
            self.apply_state(w, &out);
        }
    }
    #[inline(always)]
    fn weight(&self, ctx: &Ctx, w: &Walker<JitState>, e: usize) -> f32 {
        self.call_value(self.weight, ctx, w, e as u64)
    }
    #[inline(always)]
    fn weight_envelope(&self, ctx: &Ctx, w: &Walker<JitState>, e: usize) -> Option<(f32, f32)> {
        let f = self.envelope?;
        let mut out = [0f32; 2];
        // SAFETY: as in `call_value`; `out` holds the two floats the function writes.
        self.with_jit_ctx(ctx, |jc| unsafe { f(jc, w, e as u64, out.as_mut_ptr()) });
        Some((out[0], out[1]))
    }
    #[inline(always)]
    fn bound(&self, ctx: &Ctx, w: &Walker<JitState>) -> Bound {
        if self.has_bound { Bound::Max(self.call_value(self.bound, ctx, w, 0)) } else { Bound::Unknown }
    }
    fn bound_scope(&self) -> BoundScope {
        self.bound_scope
    }
    #[inline(always)]
    fn sum_estimate(&self, ctx: &Ctx, w: &Walker<JitState>) -> f32 {
        self.call_value(self.estimate, ctx, w, 0)
    }
    fn possible_zero(&self) -> bool {
        self.possible_zero
    }
    fn static_weight(&self) -> bool {
        self.static_weight
    }
    fn proposal(&self) -> Vec<wayfarer_runtime::proposal::TermPlan> {
        self.proposal.clone()
    }
    #[inline(always)]
    fn term_static(&self, ctx: &Ctx, factor: usize, e: usize) -> f32 {
        // The factor reads only the edge: any walker will do.
        self.call_value(self.factors[factor], ctx, &Walker::new(0), e as u64)
    }
    #[inline(always)]
    fn term_bounds(&self, ctx: &Ctx, w: &Walker<JitState>, out: &mut wayfarer_runtime::proposal::TermBounds) {
        // One look-up of the prepared image and one call for every term (this runs at each
        // structured step).
        self.with_jit_ctx(ctx, |jc| {
            if let Some(f) = self.term_bounds {
                // SAFETY: as in `call_value`; the function writes one float per term, and
                // `compile` refused more terms than `out.bound` holds.
                unsafe { f(jc, w, out.bound.as_mut_ptr()) };
            }
            if let Some(f) = self.term_label {
                // SAFETY: as in `call_value`.
                out.label = unsafe { f(jc, w, 0) };
            }
        })
    }
    #[inline(always)]
    fn step_estimates(&self, ctx: &Ctx, w: &Walker<JitState>) -> Option<wayfarer_runtime::StepEstimates> {
        let mut out = [0f32; 2];
        // SAFETY: as in `call_value`; `out` holds the two floats the function writes.
        self.with_jit_ctx(ctx, |jc| unsafe { (self.bound_estimate)(jc, w, out.as_mut_ptr()) });
        Some(wayfarer_runtime::StepEstimates {
            bound: if self.has_bound { Bound::Max(out[0]) } else { Bound::Unknown },
            estimate: out[1],
            dead_end: self.sum_exact.then_some(out[1] <= 0.0),
        })
    }
    fn node_start(&self, ctx: &Ctx, w: &Walker<JitState>) -> Option<wayfarer_runtime::StepEstimates> {
        let f = self.node_start?;
        let mut out = [0f32; 3];
        // SAFETY: as in `call_value`; `out` holds the two floats and the flag the function writes.
        self.with_jit_ctx(ctx, |jc| unsafe { f(jc, w, out.as_mut_ptr()) });
        (out[2].to_bits() == 0).then(|| wayfarer_runtime::StepEstimates {
            bound: Bound::Max(out[0]),
            estimate: out[1],
            dead_end: self.sum_exact.then_some(out[1] <= 0.0),
        })
    }
    #[inline(always)]
    fn dead_end(&self, ctx: &Ctx, w: &Walker<JitState>) -> Option<bool> {
        self.sum_exact.then(|| self.sum_estimate(ctx, w) <= 0.0)
    }
    fn has_move_hooks(&self) -> bool {
        self.update.is_some() || self.stop.is_some()
    }
    #[inline]
    fn update(&self, ctx: &Ctx, w: &mut Walker<JitState>, rng: &mut StepRng) {
        if let Some(f) = self.update {
            let mut out = RoutineOut::new();
            self.call_routine(1, f, ctx, w, rng, &mut out);
            self.apply_state(w, &out);
            let k = self.state_types.len();
            let (cur, prev) = (out.get(k) as u32, out.get(k + 1) as u32);
            w.cur = cur;
            w.prev = prev;
        }
    }
    #[inline]
    fn stop(&self, ctx: &Ctx, w: &Walker<JitState>, rng: &mut StepRng) -> bool {
        match self.stop {
            Some(f) => {
                let mut out = RoutineOut::new();
                self.call_routine(2, f, ctx, w, rng, &mut out);
                out.get(0) != 0
            }
            None => false,
        }
    }
}
