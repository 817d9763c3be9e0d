//! wayfarer IR → `naga::Module`.
//!
//! The kernel template (`kernels/walk.wgsl`: bindings, Philox, graph queries, the samplers
//! and the walk loop) is parsed by naga once; the walk's own functions are then built as naga
//! IR directly from wayfarer's IR and replace the bodies of the template's hook functions
//! (`wf_weight`, `wf_bound`, `wf_estimate`, `wf_init`, `wf_update`, `wf_stop`, ...). The
//! walk's state becomes private variables added to the module. No WGSL text is generated
//! from the walk; the WGSL and SPIR-V that come out are naga's writers' rendering of the
//! whole module.
//!
//! Semantics follow the IR's, as the CUDA backend does: wrapping integers, division by zero
//! giving 0, saturating float-to-int casts, graph queries on non-nodes giving false / 0.
//! Two differences from the CPU and CUDA, both from what portable shaders offer: `f64`
//! values exist (device feature `SHADER_F64`, needed only by walks that use them) but `exp`,
//! `ln` and `powf` of an `f64` are computed in `f32`; and the samplers decide in `f32`.

use naga::{
    AddressSpace, BinaryOperator, Block, Expression, Function, GlobalVariable, Handle, LocalVariable, MathFunction, Module, Range,
    ScalarKind, Span, Statement, Type, TypeInner, UnaryOperator,
};
use std::collections::HashMap;
use wayfarer_compiler::analysis::WalkInfo;
use wayfarer_compiler::ir::{self as ir, Arena, BinaryOp, Builtin, Expr, Literal, NodeQuery, ParamType, Program, Scalar, StepField};

/// The kernel template every walk module starts from.
pub const TEMPLATE: &str = include_str!("../kernels/walk.wgsl");

/// The subgroup kernel, appended to [`TEMPLATE`] for [`Kernel::Subgroup`].
pub const SUBGROUP_TEMPLATE: &str = include_str!("../kernels/walk_subgroup.wgsl");

/// The workgroup kernel, appended to [`TEMPLATE`] for [`Kernel::Workgroup`].
pub const WORKGROUP_TEMPLATE: &str = include_str!("../kernels/walk_workgroup.wgsl");

/// Which walk kernel a module holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// One invocation per walker, eRVS by the invocation alone (any adapter).
    Plain,
    /// eRVS steps served by the whole subgroup (adapters with subgroup operations; walks
    /// without `f64` or `bool` state).
    Subgroup,
    /// eRVS steps over rows of 64 edges or more served by the whole workgroup through
    /// workgroup memory (any adapter, any walk).
    Workgroup,
}

impl Kernel {
    /// Every kernel.
    pub const ALL: [Kernel; 3] = [Kernel::Plain, Kernel::Subgroup, Kernel::Workgroup];

    /// The kernel's name, as `WAYFARER_WGPU_KERNEL` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Plain => "plain",
            Kernel::Subgroup => "subgroup",
            Kernel::Workgroup => "workgroup",
        }
    }

    /// The module's entry point.
    pub fn entry_point(self) -> &'static str {
        match self {
            Kernel::Plain => "wf_walk",
            Kernel::Subgroup => "wf_walk_subgroup",
            Kernel::Workgroup => "wf_walk_workgroup",
        }
    }

    /// Whether `program` can use this kernel (subgroup shuffles carry 32-bit state only).
    pub fn supports(self, program: &Program) -> bool {
        self != Kernel::Subgroup || program.state.iter().all(|s| matches!(s.ty, Scalar::F32 | Scalar::I32 | Scalar::U32))
    }
}

/// A walk lowered to a validated naga module.
pub struct Lowered {
    /// The module: the template with the walk's functions.
    pub module: Module,
    /// naga's validation info (needed by the writers).
    pub info: naga::valid::ModuleInfo,
    /// Whether the module uses `f64` (the device must have `SHADER_F64`).
    pub uses_f64: bool,
    /// The kernel it holds.
    pub kernel: Kernel,
}

/// Errors of lowering: a bug in the template or the lowering, never the user's (the front end
/// has checked the walk).
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    /// The template does not parse.
    #[error("kernels/walk.wgsl does not parse: {0}")]
    Template(String),
    /// The module does not validate.
    #[error("the generated module for walk `{walk}` does not validate: {message}")]
    Invalid {
        /// The walk.
        walk: String,
        /// naga's error, with its chain.
        message: String,
    },
    /// A writer failed.
    #[error("writing the module as {what}: {message}")]
    Write {
        /// WGSL or SPIR-V.
        what: &'static str,
        /// The writer's error.
        message: String,
    },
}

/// How many 32-bit words a hyperparameter value of type `t` takes in the params buffer
/// (`f64` as three `f32` words whose sum is the value).
pub fn param_words(t: Scalar) -> u32 {
    if t == Scalar::F64 { 3 } else { 1 }
}

/// The word offset of every hyperparameter in the params buffer.
pub fn param_offsets(program: &Program) -> Vec<u32> {
    let mut at = 0;
    program
        .params
        .iter()
        .map(|p| {
            let o = at;
            at += match p.ty {
                ParamType::Scalar(t) => param_words(t),
                ParamType::Array(t, n) => param_words(t) * n as u32,
            };
            o
        })
        .collect()
}

/// Splits an f64 into three f32 whose f64 sum is exactly `x` (24 significant bits each cover
/// the 53 of an f64); what the shader reads for f64 parameters and edge times. `None` when no
/// such split exists: `x` beyond the f32 range (about 3.4e38) or too close to 0 for the low
/// parts (below about 1e-30 in magnitude, zero excepted).
pub fn split_f64(x: f64) -> Option<[f32; 3]> {
    let a = x as f32;
    let r = x - a as f64;
    let b = r as f32;
    let c = (r - b as f64) as f32;
    let ok = a.is_finite() && (a as f64 + b as f64) + c as f64 == x;
    ok.then_some([a, b, c])
}

fn uses_f64(program: &Program, info: &WalkInfo) -> bool {
    let mut types: Vec<&[Scalar]> = vec![&program.types, &info.derived.types];
    types.extend([&program.init, &program.update, &program.stop].into_iter().flatten().map(|r| r.types.as_slice()));
    types.iter().any(|t| t.contains(&Scalar::F64))
        || program.state.iter().any(|s| s.ty == Scalar::F64)
        || [&program.init, &program.update, &program.stop].into_iter().flatten().any(|r| r.draws > 0)
}

/// Lowers `program` into the kernel template and validates the result.
pub fn lower(program: &Program, info: &WalkInfo) -> Result<Lowered, LowerError> {
    lower_for(program, info, Kernel::Plain)
}

/// Lowers `program` into the template of `kernel` (which must support it) and validates it.
pub fn lower_for(program: &Program, info: &WalkInfo, kernel: Kernel) -> Result<Lowered, LowerError> {
    assert!(kernel.supports(program), "{kernel:?} cannot run walk `{}`", program.name);
    let text = match kernel {
        Kernel::Plain => TEMPLATE.to_string(),
        // naga 30 takes the subgroup builtins without `enable subgroups;` (and refuses it).
        Kernel::Subgroup => format!("{TEMPLATE}\n{SUBGROUP_TEMPLATE}"),
        Kernel::Workgroup => format!("{TEMPLATE}\n{WORKGROUP_TEMPLATE}"),
    };
    let mut module = naga::front::wgsl::parse_str(&text).map_err(|e| LowerError::Template(e.emit_to_string(&text)))?;
    let f64_used = uses_f64(program, info);
    let types = Types::new(&mut module, f64_used);
    let fns: HashMap<String, Handle<Function>> = module.functions.iter().filter_map(|(h, f)| f.name.clone().map(|n| (n, h))).collect();
    let mut globals: HashMap<String, Handle<GlobalVariable>> =
        module.global_variables.iter().filter_map(|(h, g)| g.name.clone().map(|n| (n, h))).collect();
    // The walk's state: one private variable per field.
    let mut state = Vec::new();
    for s in &program.state {
        let name = format!("wf_state_{}", s.name);
        let h = module.global_variables.append(
            GlobalVariable {
                name: Some(name.clone()),
                space: AddressSpace::Private,
                binding: None,
                ty: types.of(s.ty),
                init: None,
                memory_decorations: Default::default(),
            },
            Span::UNDEFINED,
        );
        globals.insert(name, h);
        state.push(h);
    }
    // The shared kernels' saved copies (their eRVS evaluates weights as another walker), and
    // the workgroup kernel's published states (one slot per invocation).
    let mut saved = Vec::new();
    let mut published = Vec::new();
    if kernel != Kernel::Plain {
        for s in &program.state {
            saved.push(module.global_variables.append(
                GlobalVariable {
                    name: Some(format!("wf_saved_{}", s.name)),
                    space: AddressSpace::Private,
                    binding: None,
                    ty: types.of(s.ty),
                    init: None,
                    memory_decorations: Default::default(),
                },
                Span::UNDEFINED,
            ));
        }
    }
    if kernel == Kernel::Workgroup {
        for s in &program.state {
            let ty = types.slots(&mut module, s.ty);
            published.push(module.global_variables.append(
                GlobalVariable {
                    name: Some(format!("wf_wg_state_{}", s.name)),
                    space: AddressSpace::WorkGroup,
                    binding: None,
                    ty,
                    init: None,
                    memory_decorations: Default::default(),
                },
                Span::UNDEFINED,
            ));
        }
    }
    let env = Env { program, types: &types, fns: &fns, globals: &globals, state: &state, params: param_offsets(program) };

    let flags = info.possible_zero as u32 | (info.sum_exact as u32) << 1;
    let mut bodies: Vec<(&str, Function)> = Vec::new();
    {
        let mut b = env.builder();
        let v = b.push(Expression::Literal(naga::Literal::U32(flags)));
        b.ret(Some(v));
        bodies.push(("wf_flags", b.finish()));
    }
    {
        let mut b = env.builder();
        let e = b.push(Expression::FunctionArgument(0));
        let mut l = b.lowering(&program.exprs, &program.types, Edge::Value(e));
        let v = l.value(program.result, Scalar::F32);
        b.ret(Some(v));
        bodies.push(("wf_weight", b.finish()));
    }
    for (name, root) in [("wf_bound", info.bound), ("wf_estimate", Some(info.sum_estimate))] {
        let mut b = env.builder();
        let v = match root {
            Some(h) => {
                let mut l = b.lowering(&info.derived.exprs, &info.derived.types, Edge::Literal(0));
                l.value(h, Scalar::F32)
            }
            None => b.infinity(Scalar::F32),
        };
        b.ret(Some(v));
        bodies.push((name, b.finish()));
    }
    {
        let mut b = env.builder();
        for (s, &g) in program.state.iter().zip(&state) {
            let zero = b.push(Expression::ZeroValue(types.of(s.ty)));
            let p = b.push(Expression::GlobalVariable(g));
            b.body.push(Statement::Store { pointer: p, value: zero }, Span::UNDEFINED);
        }
        bodies.push(("wf_reset_state", b.finish()));
    }
    for (name, routine) in [("wf_init", &program.init), ("wf_update", &program.update), ("wf_stop", &program.stop)] {
        let mut b = env.builder();
        let Some(r) = routine else {
            if name == "wf_stop" {
                let f = b.push(Expression::Literal(naga::Literal::Bool(false)));
                b.ret(Some(f));
            }
            bodies.push((name, b.finish()));
            continue;
        };
        let edge = if name == "wf_init" { Edge::Literal(0) } else { Edge::Global("wf_edge") };
        let draws = b.draws(r.draws);
        let mut l = b.lowering(&r.exprs, &r.types, edge);
        l.draws = draws;
        if name == "wf_stop" {
            let v = l.value(r.outputs[0], Scalar::Bool);
            b.ret(Some(v));
            bodies.push((name, b.finish()));
            continue;
        }
        // Every result from the old values first, then the stores.
        let mut stores = Vec::new();
        for (i, (s, h)) in program.state.iter().zip(&r.outputs).enumerate() {
            if matches!(r.exprs.get(*h), Expr::State(j) if *j == i) {
                continue;
            }
            let v = l.value(*h, s.ty);
            stores.push((state[i], v));
        }
        if name == "wf_update" {
            let k = program.state.len();
            for (h, global, leaf) in [(r.outputs[k], "wf_cur", StepField::Cur), (r.outputs[k + 1], "wf_prev", StepField::Prev)] {
                if matches!(r.exprs.get(h), Expr::Step(x) if *x == leaf) {
                    continue;
                }
                let v = l.value(h, Scalar::U32);
                stores.push((globals[global], v));
            }
        }
        for (g, v) in stores {
            let p = b.push(Expression::GlobalVariable(g));
            b.body.push(Statement::Store { pointer: p, value: v }, Span::UNDEFINED);
        }
        bodies.push((name, b.finish()));
    }
    if kernel != Kernel::Plain {
        for (name, from_saved) in [("wf_state_save", false), ("wf_state_restore", true)] {
            let mut b = env.builder();
            for (&st, &sv) in state.iter().zip(&saved) {
                let (from, to) = if from_saved { (sv, st) } else { (st, sv) };
                let p = b.push(Expression::GlobalVariable(from));
                let v = b.push(Expression::Load { pointer: p });
                let q = b.push(Expression::GlobalVariable(to));
                b.body.push(Statement::Store { pointer: q, value: v }, Span::UNDEFINED);
            }
            bodies.push((name, b.finish()));
        }
    }
    if kernel == Kernel::Workgroup {
        // Publish into slot `slot` / adopt from slot `src`: state[i] <-> wf_wg_state_i[slot].
        for (name, publish) in [("wf_state_publish", true), ("wf_state_adopt", false)] {
            let mut b = env.builder();
            let slot = b.push(Expression::FunctionArgument(0));
            for (&st, &pb) in state.iter().zip(&published) {
                let own = b.push(Expression::GlobalVariable(st));
                let array = b.push(Expression::GlobalVariable(pb));
                let shared = b.push(Expression::Access { base: array, index: slot });
                let (from, to) = if publish { (own, shared) } else { (shared, own) };
                let v = b.push(Expression::Load { pointer: from });
                b.body.push(Statement::Store { pointer: to, value: v }, Span::UNDEFINED);
            }
            bodies.push((name, b.finish()));
        }
    }
    if kernel == Kernel::Subgroup {
        let mut b = env.builder();
        let src = b.push(Expression::FunctionArgument(0));
        for (s, &st) in program.state.iter().zip(&state) {
            let p = b.push(Expression::GlobalVariable(st));
            let v = b.push(Expression::Load { pointer: p });
            let r = b.f.expressions.append(Expression::SubgroupOperationResult { ty: types.of(s.ty) }, Span::UNDEFINED);
            b.body.push(Statement::SubgroupGather { mode: naga::GatherMode::Shuffle(src), argument: v, result: r }, Span::UNDEFINED);
            b.body.push(Statement::Store { pointer: p, value: r }, Span::UNDEFINED);
        }
        bodies.push(("wf_state_adopt", b.finish()));
    }
    for (name, f) in bodies {
        let h = fns[name];
        let slot = module.functions.get_mut(h);
        slot.local_variables = f.local_variables;
        slot.expressions = f.expressions;
        slot.named_expressions = f.named_expressions;
        slot.body = f.body;
    }
    let mut caps = if f64_used { naga::valid::Capabilities::FLOAT64 } else { naga::valid::Capabilities::empty() };
    if kernel == Kernel::Subgroup {
        caps |= naga::valid::Capabilities::SUBGROUP;
    }
    let mut validator = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps);
    if kernel == Kernel::Subgroup {
        use naga::valid::SubgroupOperationSet as Ops;
        validator
            .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
            .subgroup_operations(Ops::BASIC | Ops::VOTE | Ops::BALLOT | Ops::SHUFFLE | Ops::ARITHMETIC);
    }
    let info = validator
        .validate(&module)
        .map_err(|e| LowerError::Invalid { walk: program.name.clone(), message: format!("{:?}", e.into_inner()) })?;
    Ok(Lowered { module, info, uses_f64: f64_used, kernel })
}

impl Lowered {
    /// The module as WGSL text (for `wayfarer emit --wgsl` and the golden files).
    pub fn wgsl(&self) -> Result<String, LowerError> {
        naga::back::wgsl::write_string(&self.module, &self.info, naga::back::wgsl::WriterFlags::empty())
            .map_err(|e| LowerError::Write { what: "WGSL", message: e.to_string() })
    }

    /// The module as SPIR-V words (Vulkan 1.1).
    pub fn spirv(&self) -> Result<Vec<u32>, LowerError> {
        let opts = naga::back::spv::Options { lang_version: (1, 1), ..Default::default() };
        naga::back::spv::write_vec(&self.module, &self.info, &opts, None)
            .map_err(|e| LowerError::Write { what: "SPIR-V", message: e.to_string() })
    }
}

/// Type handles of the scalars.
struct Types {
    f32: Handle<Type>,
    f64: Handle<Type>,
    i32: Handle<Type>,
    u32: Handle<Type>,
    bool: Handle<Type>,
}

impl Types {
    /// `f64` only when the walk uses it: the type alone needs the FLOAT64 capability.
    fn new(m: &mut Module, f64: bool) -> Self {
        let mut t = |s: naga::Scalar| m.types.insert(Type { name: None, inner: TypeInner::Scalar(s) }, Span::UNDEFINED);
        Types {
            f32: t(naga::Scalar::F32),
            f64: t(if f64 { naga::Scalar::F64 } else { naga::Scalar::F32 }),
            i32: t(naga::Scalar::I32),
            u32: t(naga::Scalar::U32),
            bool: t(naga::Scalar::BOOL),
        }
    }
    fn of(&self, s: Scalar) -> Handle<Type> {
        match s {
            Scalar::F32 => self.f32,
            Scalar::F64 => self.f64,
            Scalar::I32 => self.i32,
            Scalar::U32 => self.u32,
            Scalar::Bool => self.bool,
        }
    }
    /// `array<T, 64>`: one slot per invocation of a workgroup (the kernels' `WG`).
    fn slots(&self, m: &mut Module, s: Scalar) -> Handle<Type> {
        let base = self.of(s);
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(m.to_ctx()).expect("the template's types lay out");
        let stride = layouter[base].to_stride();
        let size = naga::ArraySize::Constant(std::num::NonZeroU32::new(64).unwrap());
        m.types.insert(Type { name: None, inner: TypeInner::Array { base, size, stride } }, Span::UNDEFINED)
    }
}

struct Env<'a> {
    program: &'a Program,
    types: &'a Types,
    fns: &'a HashMap<String, Handle<Function>>,
    globals: &'a HashMap<String, Handle<GlobalVariable>>,
    state: &'a [Handle<GlobalVariable>],
    params: Vec<u32>,
}

impl<'a> Env<'a> {
    fn builder(&'a self) -> Builder<'a> {
        Builder { env: self, f: Function::default(), body: Block::new() }
    }
}

/// Builds one function body: expressions appended in order, each emitted where it is made
/// (calls are statements of their own).
struct Builder<'a> {
    env: &'a Env<'a>,
    f: Function,
    body: Block,
}

/// Where a function's candidate edge comes from.
#[derive(Clone, Copy)]
enum Edge {
    Value(Handle<Expression>),
    Literal(u32),
    Global(&'static str),
}

impl<'a> Builder<'a> {
    fn push(&mut self, e: Expression) -> Handle<Expression> {
        let pre = e.needs_pre_emit();
        let h = self.f.expressions.append(e, Span::UNDEFINED);
        if !pre {
            self.body.push(Statement::Emit(Range::new_from_bounds(h, h)), Span::UNDEFINED);
        }
        h
    }

    fn call(&mut self, name: &str, args: Vec<Handle<Expression>>) -> Handle<Expression> {
        let function = *self.env.fns.get(name).unwrap_or_else(|| panic!("template function `{name}` is missing"));
        let r = self.f.expressions.append(Expression::CallResult(function), Span::UNDEFINED);
        self.body.push(Statement::Call { function, arguments: args, result: Some(r) }, Span::UNDEFINED);
        r
    }

    fn ret(&mut self, value: Option<Handle<Expression>>) {
        self.body.push(Statement::Return { value }, Span::UNDEFINED);
    }

    fn finish(mut self) -> Function {
        self.f.body = self.body;
        self.f
    }

    fn lit(&mut self, l: naga::Literal) -> Handle<Expression> {
        self.push(Expression::Literal(l))
    }

    fn u32(&mut self, v: u32) -> Handle<Expression> {
        self.lit(naga::Literal::U32(v))
    }

    fn load_global(&mut self, name: &str) -> Handle<Expression> {
        let g = self.env.globals[name];
        let p = self.push(Expression::GlobalVariable(g));
        self.push(Expression::Load { pointer: p })
    }

    fn binary(&mut self, op: BinaryOperator, left: Handle<Expression>, right: Handle<Expression>) -> Handle<Expression> {
        self.push(Expression::Binary { op, left, right })
    }

    fn select(&mut self, condition: Handle<Expression>, accept: Handle<Expression>, reject: Handle<Expression>) -> Handle<Expression> {
        self.push(Expression::Select { condition, accept, reject })
    }

    fn math(&mut self, fun: MathFunction, arg: Handle<Expression>, arg1: Option<Handle<Expression>>) -> Handle<Expression> {
        self.push(Expression::Math { fun, arg, arg1, arg2: None, arg3: None })
    }

    fn convert(&mut self, expr: Handle<Expression>, kind: ScalarKind, width: Option<u8>) -> Handle<Expression> {
        self.push(Expression::As { expr, kind, convert: width })
    }

    /// A float literal of type `t` (infinities and NaN through a bit pattern: naga literals
    /// must be finite).
    fn float(&mut self, v: f64, t: Scalar) -> Handle<Expression> {
        if v.is_finite() {
            return if t == Scalar::F64 { self.lit(naga::Literal::F64(v)) } else { self.lit(naga::Literal::F32(v as f32)) };
        }
        let bits = self.u32((v as f32).to_bits());
        let f = self.convert(bits, ScalarKind::Float, None);
        if t == Scalar::F64 { self.convert(f, ScalarKind::Float, Some(8)) } else { f }
    }

    fn infinity(&mut self, t: Scalar) -> Handle<Expression> {
        self.float(f64::INFINITY, t)
    }

    fn zero(&mut self, t: Scalar) -> Handle<Expression> {
        match t {
            Scalar::F32 | Scalar::F64 => self.float(0.0, t),
            Scalar::I32 => self.lit(naga::Literal::I32(0)),
            Scalar::U32 => self.u32(0),
            Scalar::Bool => self.lit(naga::Literal::Bool(false)),
        }
    }

    fn int_lit(&mut self, v: i64, t: Scalar) -> Handle<Expression> {
        match t {
            Scalar::I32 => self.lit(naga::Literal::I32(v as i32)),
            _ => self.u32(v as u32),
        }
    }

    /// `k` uniform draws in (0, 1) as f64 from the hook stream, into local variables, as the
    /// CPU makes them: `(x + 0.5) / 2^32`.
    fn draws(&mut self, k: u32) -> Vec<Handle<Expression>> {
        (0..k)
            .map(|i| {
                let var = self
                    .f
                    .local_variables
                    .append(LocalVariable { name: Some(format!("draw{i}")), ty: self.env.types.f64, init: None }, Span::UNDEFINED);
                let x = self.call("wf_hook_u32", vec![]);
                let xf = self.convert(x, ScalarKind::Float, Some(8));
                let half = self.lit(naga::Literal::F64(0.5));
                let s = self.binary(BinaryOperator::Add, xf, half);
                let scale = self.lit(naga::Literal::F64(1.0 / 4_294_967_296.0));
                let u = self.binary(BinaryOperator::Multiply, s, scale);
                let p = self.push(Expression::LocalVariable(var));
                self.body.push(Statement::Store { pointer: p, value: u }, Span::UNDEFINED);
                p
            })
            .collect()
    }

    fn lowering<'b>(&'b mut self, exprs: &'b Arena<Expr>, types: &'b [Scalar], edge: Edge) -> Lowering<'b, 'a> {
        Lowering { b: self, exprs, types, edge, done: HashMap::new(), draws: Vec::new() }
    }
}

/// Lowers one IR arena's expressions into a builder's function, each IR expression once.
struct Lowering<'b, 'a> {
    b: &'b mut Builder<'a>,
    exprs: &'b Arena<Expr>,
    types: &'b [Scalar],
    edge: Edge,
    done: HashMap<usize, Handle<Expression>>,
    /// Pointers to the draw locals (routines only).
    draws: Vec<Handle<Expression>>,
}

impl Lowering<'_, '_> {
    /// `h` as a value of type `want`.
    fn value(&mut self, h: ir::Handle<Expr>, want: Scalar) -> Handle<Expression> {
        let v = self.expr(h);
        let have = self.types[h.index()];
        self.coerce(v, have, want)
    }

    fn coerce(&mut self, v: Handle<Expression>, from: Scalar, to: Scalar) -> Handle<Expression> {
        if from == to {
            return v;
        }
        let b = &mut *self.b;
        match (from, to) {
            (Scalar::Bool, t) => {
                let one = match t {
                    Scalar::F32 | Scalar::F64 => b.float(1.0, t),
                    _ => b.int_lit(1, t),
                };
                let zero = b.zero(t);
                b.select(v, one, zero)
            }
            (f, Scalar::Bool) => {
                let zero = b.zero(f);
                b.binary(BinaryOperator::NotEqual, v, zero)
            }
            (f, t) if f.is_float() && t.is_float() => b.convert(v, ScalarKind::Float, Some(if t == Scalar::F64 { 8 } else { 4 })),
            (f, t) if f.is_int() && t.is_float() => b.convert(v, ScalarKind::Float, Some(if t == Scalar::F64 { 8 } else { 4 })),
            (Scalar::I32, Scalar::U32) => b.convert(v, ScalarKind::Uint, None),
            (Scalar::U32, Scalar::I32) => b.convert(v, ScalarKind::Sint, None),
            (f, Scalar::U32) => {
                // Saturating, NaN and negatives to 0 (Rust's `as`).
                let zero_f = b.zero(f);
                let positive = b.binary(BinaryOperator::Greater, v, zero_f);
                let top = b.float(4294967295.0, f);
                let big = b.binary(BinaryOperator::GreaterEqual, v, top);
                let plain = b.convert(v, ScalarKind::Uint, Some(4));
                let zero = b.u32(0);
                let max = b.u32(u32::MAX);
                let low = b.select(positive, plain, zero);
                b.select(big, max, low)
            }
            (f, _) => {
                // f -> i32: saturating, NaN to 0.
                let top = b.float(2147483647.0, f);
                let bottom = b.float(-2147483648.0, f);
                let plain = b.convert(v, ScalarKind::Sint, Some(4));
                let max = b.lit(naga::Literal::I32(i32::MAX));
                let min = b.lit(naga::Literal::I32(i32::MIN));
                let zero = b.lit(naga::Literal::I32(0));
                let big = b.binary(BinaryOperator::GreaterEqual, v, top);
                let small = b.binary(BinaryOperator::LessEqual, v, bottom);
                let nan = b.binary(BinaryOperator::NotEqual, v, v);
                let x = b.select(big, max, plain);
                let x = b.select(small, min, x);
                b.select(nan, zero, x)
            }
        }
    }

    fn edge(&mut self) -> Handle<Expression> {
        match self.edge {
            Edge::Value(h) => h,
            Edge::Literal(v) => self.b.u32(v),
            Edge::Global(name) => self.b.load_global(name),
        }
    }

    /// A hyperparameter word `at` (a u32 expression) read as type `t`.
    fn param_word(&mut self, at: Handle<Expression>, t: Scalar) -> Handle<Expression> {
        let b = &mut *self.b;
        let w = b.call("wf_param", vec![at]);
        match t {
            Scalar::U32 => w,
            Scalar::I32 => b.convert(w, ScalarKind::Sint, None),
            Scalar::F32 => b.convert(w, ScalarKind::Float, None),
            Scalar::Bool => {
                let zero = b.u32(0);
                b.binary(BinaryOperator::NotEqual, w, zero)
            }
            Scalar::F64 => {
                let mut sum = None;
                for k in 0..3 {
                    let word = if k == 0 {
                        w
                    } else {
                        let kk = b.u32(k);
                        let a = b.binary(BinaryOperator::Add, at, kk);
                        b.call("wf_param", vec![a])
                    };
                    let f = b.convert(word, ScalarKind::Float, None);
                    let d = b.convert(f, ScalarKind::Float, Some(8));
                    sum = Some(match sum {
                        None => d,
                        Some(s) => b.binary(BinaryOperator::Add, s, d),
                    });
                }
                sum.unwrap()
            }
        }
    }

    fn step_global(&mut self, f: StepField) -> Handle<Expression> {
        let name = match f {
            StepField::Cur => "wf_cur",
            StepField::Prev => "wf_prev",
            StepField::Start => "wf_start",
            _ => "wf_step",
        };
        self.b.load_global(name)
    }

    /// Lowers `h` to its natural naga value; its IR type is `self.types[h]`.
    fn expr(&mut self, h: ir::Handle<Expr>) -> Handle<Expression> {
        if let Some(&v) = self.done.get(&h.index()) {
            return v;
        }
        let ty = self.types[h.index()];
        let v = match self.exprs.get(h).clone() {
            Expr::Literal(Literal::Float(v, t)) => self.b.float(v, t),
            Expr::Literal(Literal::Int(v, t)) => self.b.int_lit(v, t),
            Expr::Literal(Literal::Bool(v)) => self.b.lit(naga::Literal::Bool(v)),
            Expr::Param(i) => {
                let at = self.b.u32(self.b.env.params[i]);
                self.param_word(at, ty)
            }
            Expr::ParamIndex { param, index } => {
                let ParamType::Array(t, n) = self.b.env.program.params[param].ty else { unreachable!("indexing a scalar parameter") };
                let idx = self.value(index, Scalar::U32);
                let b = &mut *self.b;
                let n_lit = b.u32(n as u32);
                let inside = b.binary(BinaryOperator::Less, idx, n_lit);
                let last = b.u32(n.saturating_sub(1) as u32);
                let clamped = b.math(MathFunction::Min, idx, Some(last));
                let width = b.u32(param_words(t));
                let off = b.binary(BinaryOperator::Multiply, clamped, width);
                let base = b.u32(b.env.params[param]);
                let at = b.binary(BinaryOperator::Add, base, off);
                let v = self.param_word(at, t);
                let b = &mut *self.b;
                let zero = b.zero(t);
                b.select(inside, v, zero)
            }
            Expr::Step(f) => match f {
                StepField::Cur | StepField::Prev | StepField::Start | StepField::Step => self.step_global(f),
                StepField::Edge => self.edge(),
                StepField::Dst => {
                    let e = self.edge();
                    self.b.call("wf_dst", vec![e])
                }
                StepField::Weight => {
                    let e = self.edge();
                    self.b.call("wf_h", vec![e])
                }
                StepField::Label => {
                    let e = self.edge();
                    self.b.call("wf_label", vec![e])
                }
                StepField::Time => {
                    let e = self.edge();
                    let b = &mut *self.b;
                    let mut sum = None;
                    for k in 0..3 {
                        let kk = b.u32(k);
                        let part = b.call("wf_time_part", vec![e, kk]);
                        let d = b.convert(part, ScalarKind::Float, Some(8));
                        sum = Some(match sum {
                            None => d,
                            Some(s) => b.binary(BinaryOperator::Add, s, d),
                        });
                    }
                    sum.unwrap()
                }
            },
            Expr::State(i) => {
                let g = self.b.env.state[i];
                let p = self.b.push(Expression::GlobalVariable(g));
                self.b.push(Expression::Load { pointer: p })
            }
            Expr::Draw(k) => {
                let p = self.draws[k as usize];
                self.b.push(Expression::Load { pointer: p })
            }
            Expr::Unary { op, arg } => {
                let a = self.value(arg, ty);
                match op {
                    ir::UnaryOp::Not => self.b.push(Expression::Unary { op: UnaryOperator::LogicalNot, expr: a }),
                    ir::UnaryOp::Neg if ty.is_float() => self.b.push(Expression::Unary { op: UnaryOperator::Negate, expr: a }),
                    ir::UnaryOp::Neg => {
                        // Wrapping: 0 - a.
                        let z = self.b.zero(ty);
                        self.b.binary(BinaryOperator::Subtract, z, a)
                    }
                }
            }
            Expr::Binary { op, lhs, rhs } => {
                let t = self.types[lhs.index()];
                let rt = if op == BinaryOp::And || op == BinaryOp::Or { Scalar::Bool } else { t };
                let a = self.value(lhs, rt);
                let c = self.value(rhs, rt);
                self.binary(op, a, c, rt)
            }
            Expr::Select { cond, then, other } if ir::is_expensive(self.exprs, then) || ir::is_expensive(self.exprs, other) => {
                // A branch with a row search or a random read: an `if`, so only the taken side
                // runs (a `select` evaluates both).
                let c = self.value(cond, Scalar::Bool);
                let var =
                    self.b.f.local_variables.append(LocalVariable { name: None, ty: self.b.env.types.of(ty), init: None }, Span::UNDEFINED);
                let ptr = self.b.push(Expression::LocalVariable(var));
                let outer = std::mem::take(&mut self.b.body);
                let known = self.done.clone();
                let branch = |l: &mut Self, h: ir::Handle<Expr>| {
                    let v = l.value(h, ty);
                    l.b.body.push(Statement::Store { pointer: ptr, value: v }, Span::UNDEFINED);
                    // What a branch computed does not dominate what follows it.
                    l.done = known.clone();
                    std::mem::take(&mut l.b.body)
                };
                let accept = branch(self, then);
                let reject = branch(self, other);
                self.b.body = outer;
                self.b.body.push(Statement::If { condition: c, accept, reject }, Span::UNDEFINED);
                self.b.push(Expression::Load { pointer: ptr })
            }
            Expr::Select { cond, then, other } => {
                let c = self.value(cond, Scalar::Bool);
                let a = self.value(then, ty);
                let r = self.value(other, ty);
                self.b.select(c, a, r)
            }
            Expr::Cast { expr, to } => {
                let v = self.expr(expr);
                let from = self.types[expr.index()];
                self.coerce(v, from, to)
            }
            Expr::Call { func, args } => self.call(func, &args, ty),
            Expr::Node(q) => self.node(q, ty),
        };
        self.done.insert(h.index(), v);
        v
    }

    fn binary(&mut self, op: BinaryOp, a: Handle<Expression>, c: Handle<Expression>, t: Scalar) -> Handle<Expression> {
        let b = &mut *self.b;
        let simple = |op| match op {
            BinaryOp::Add => BinaryOperator::Add,
            BinaryOp::Sub => BinaryOperator::Subtract,
            BinaryOp::Mul => BinaryOperator::Multiply,
            BinaryOp::Div => BinaryOperator::Divide,
            BinaryOp::Rem => BinaryOperator::Modulo,
            BinaryOp::Eq => BinaryOperator::Equal,
            BinaryOp::Ne => BinaryOperator::NotEqual,
            BinaryOp::Lt => BinaryOperator::Less,
            BinaryOp::Le => BinaryOperator::LessEqual,
            BinaryOp::Gt => BinaryOperator::Greater,
            BinaryOp::Ge => BinaryOperator::GreaterEqual,
            BinaryOp::And => BinaryOperator::LogicalAnd,
            BinaryOp::Or => BinaryOperator::LogicalOr,
        };
        match (op, t) {
            (BinaryOp::Div | BinaryOp::Rem, Scalar::I32 | Scalar::U32) => {
                // Division by zero gives 0; i32::MIN / -1 wraps (a / -1 = 0 - a, a % -1 = 0).
                let zero = b.zero(t);
                let by_zero = b.binary(BinaryOperator::Equal, c, zero);
                let special = if t == Scalar::I32 {
                    let m1 = b.lit(naga::Literal::I32(-1));
                    let by_m1 = b.binary(BinaryOperator::Equal, c, m1);
                    Some((by_m1, b.binary(BinaryOperator::LogicalOr, by_zero, by_m1)))
                } else {
                    None
                };
                let avoid = special.map_or(by_zero, |s| s.1);
                let one = b.int_lit(1, t);
                let safe = b.select(avoid, one, c);
                let q = b.binary(simple(op), a, safe);
                let q = match (special, op) {
                    (Some((by_m1, _)), BinaryOp::Div) => {
                        let neg = b.binary(BinaryOperator::Subtract, zero, a);
                        b.select(by_m1, neg, q)
                    }
                    (Some((by_m1, _)), _) => b.select(by_m1, zero, q),
                    _ => q,
                };
                b.select(by_zero, zero, q)
            }
            _ => b.binary(simple(op), a, c),
        }
    }

    fn call(&mut self, func: Builtin, args: &[ir::Handle<Expr>], ty: Scalar) -> Handle<Expression> {
        let arg_t = self.types[args[0].index()];
        match func {
            Builtin::Min | Builtin::Max => {
                let a = self.value(args[0], ty);
                let c = self.value(args[1], ty);
                let f = if func == Builtin::Min { MathFunction::Min } else { MathFunction::Max };
                self.b.math(f, a, Some(c))
            }
            Builtin::Abs => {
                let a = self.value(args[0], ty);
                if ty == Scalar::I32 {
                    // Wrapping: abs(i32::MIN) = i32::MIN.
                    let b = &mut *self.b;
                    let zero = b.zero(ty);
                    let neg = b.binary(BinaryOperator::Subtract, zero, a);
                    let lt = b.binary(BinaryOperator::Less, a, zero);
                    b.select(lt, neg, a)
                } else {
                    self.b.math(MathFunction::Abs, a, None)
                }
            }
            Builtin::Sqrt => {
                let a = self.value(args[0], ty);
                self.b.math(MathFunction::Sqrt, a, None)
            }
            Builtin::Exp | Builtin::Ln | Builtin::Powf => {
                let f = match func {
                    Builtin::Exp => MathFunction::Exp,
                    Builtin::Ln => MathFunction::Log,
                    _ => MathFunction::Pow,
                };
                // SPIR-V's extended instructions have no 64-bit exp/log/pow: computed in f32.
                let a = self.value(args[0], Scalar::F32);
                let c = if func == Builtin::Powf { Some(self.value(args[1], Scalar::F32)) } else { None };
                let r = self.b.math(f, a, c);
                self.coerce(r, Scalar::F32, ty)
            }
            Builtin::Degree => {
                let v = self.value(args[0], Scalar::U32);
                let d = self.b.call("wf_degree", vec![v]);
                self.coerce(d, Scalar::U32, ty)
            }
            Builtin::HasEdge => {
                let u = self.value(args[0], Scalar::U32);
                let v = self.value(args[1], Scalar::U32);
                self.b.call("wf_has_edge", vec![u, v])
            }
            Builtin::NodeProp(i) => {
                let _ = arg_t;
                let v = self.value(args[0], Scalar::U32);
                let p = self.b.u32(i as u32);
                let x = self.b.call("wf_prop", vec![p, v]);
                self.coerce(x, Scalar::F32, ty)
            }
        }
    }

    fn node(&mut self, q: NodeQuery, ty: Scalar) -> Handle<Expression> {
        let cur = self.b.load_global("wf_cur");
        let (v, natural) = match q {
            NodeQuery::WeightMax => (self.b.call("wf_wmax", vec![cur]), Scalar::F32),
            NodeQuery::WeightMin => (self.b.call("wf_wmin", vec![cur]), Scalar::F32),
            NodeQuery::WeightSum => (self.b.call("wf_wsum", vec![cur]), Scalar::F32),
            NodeQuery::Degree => (self.b.call("wf_degree", vec![cur]), Scalar::U32),
            NodeQuery::BackWeight | NodeQuery::BackCount => {
                let prev = self.b.load_global("wf_prev");
                if q == NodeQuery::BackWeight {
                    (self.b.call("wf_back_weight", vec![cur, prev]), Scalar::F32)
                } else {
                    (self.b.call("wf_back_count", vec![cur, prev]), Scalar::U32)
                }
            }
            NodeQuery::LabelMax(l) | NodeQuery::LabelSum(l) | NodeQuery::LabelCount(l) => {
                let l = self.value(l, Scalar::U32);
                match q {
                    NodeQuery::LabelMax(_) => (self.b.call("wf_label_max", vec![cur, l]), Scalar::F32),
                    NodeQuery::LabelSum(_) => (self.b.call("wf_label_sum", vec![cur, l]), Scalar::F32),
                    _ => (self.b.call("wf_label_count", vec![cur, l]), Scalar::U32),
                }
            }
            NodeQuery::NeighborDegreeMax => (self.b.call("wf_nbr_degree_max", vec![cur]), Scalar::U32),
            NodeQuery::NeighborDegreeMin => (self.b.call("wf_nbr_degree_min", vec![cur]), Scalar::U32),
        };
        self.coerce(v, natural, ty)
    }
}
