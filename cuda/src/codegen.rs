//! The CUDA backend: CUDA C device functions generated from the IR, spliced after the
//! prelude (`kernels/prelude.cuh`) and before the kernel templates.
//!
//! What is emitted, for a walk `w`:
//! - `WfParams` (the hyperparameters), `WfState` (the impl form's state) and `WfWalker`;
//! - `wf_weight(g, p, w, e, x)` (`x` the edge's target, which the caller has read once for the
//!   squeeze `wf_envelope` and the weight), `wf_bound(g, p, w)` and `wf_estimate(g, p, w)`, with
//!   `WF_HAS_BOUND`, `WF_POSSIBLE_ZERO`, `WF_SUM_EXACT` and `WF_STATIC_WEIGHT` as macros;
//! - `wf_init`, `wf_update` and `wf_stop`, which draw from the same Philox streams as the CPU.
//!
//! Expressions are trees (selects become `?:`, so an untaken `has_edge` is never evaluated)
//! with the IR's semantics through the prelude's helpers: wrapping integers, division by zero
//! giving 0, saturating float-to-int casts, graph queries on non-nodes giving false / 0.

use std::fmt::Write as _;
use wayfarer_compiler::ir::*;
use wayfarer_compiler::{Scope, WalkInfo};

/// The prelude every generated file starts with.
pub const PRELUDE: &str = include_str!("../kernels/prelude.cuh");

fn c_type(s: Scalar) -> &'static str {
    match s {
        Scalar::F32 => "float",
        Scalar::F64 => "double",
        Scalar::I32 => "i32",
        Scalar::U32 => "u32",
        Scalar::Bool => "bool",
    }
}

fn float_lit(v: f64, t: Scalar) -> String {
    if t == Scalar::F64 {
        if v.is_infinite() {
            return if v > 0.0 {
                "__longlong_as_double(0x7ff0000000000000ll)".into()
            } else {
                "__longlong_as_double(0xfff0000000000000ll)".into()
            };
        }
        // `{:?}` is the shortest text that reads back to the same double.
        let s = format!("{v:?}");
        return if s.contains(['.', 'e', 'E']) { s } else { format!("{s}.0") };
    }
    let f = v as f32;
    if f.is_infinite() {
        return if f > 0.0 { "__int_as_float(0x7f800000)".into() } else { "__int_as_float(0xff800000)".into() };
    }
    let s = format!("{f:?}");
    let s = if s.contains(['.', 'e', 'E']) { s } else { format!("{s}.0") };
    format!("{s}f")
}

struct Cuda<'a> {
    exprs: &'a Arena<Expr>,
    types: &'a [Scalar],
    f: &'a Program,
    /// How the edge's target reads: `x` where the caller passes it, else a load.
    dst: &'static str,
}

impl Cuda<'_> {
    /// A squeeze envelope `(lo, hi)` of the weight, as the Rust backend builds it (the same
    /// ends, so eRJS decides every trial as the CPU does): cheap conditions are evaluated,
    /// expensive ones (`has_edge`, …) replaced by the min and max of both outcomes.
    fn envelope(&self, h: Handle<Expr>) -> Option<(String, String)> {
        match self.exprs.get(h) {
            Expr::Select { cond, then, other } => {
                let (lt, ht) = self.envelope(*then)?;
                let (lf, hf) = self.envelope(*other)?;
                if is_expensive(self.exprs, *cond) {
                    Some((format!("wf_minf({lt}, {lf})"), format!("wf_maxf({ht}, {hf})")))
                } else {
                    let c = self.e(*cond);
                    Some((format!("({c} ? {lt} : {lf})"), format!("({c} ? {ht} : {hf})")))
                }
            }
            _ if is_expensive(self.exprs, h) => None,
            _ => {
                let v = self.e(h);
                Some((v.clone(), v))
            }
        }
    }

    fn e(&self, h: Handle<Expr>) -> String {
        let ty = self.types[h.index()];
        let ty_of = |x: Handle<Expr>| self.types[x.index()];
        match self.exprs.get(h) {
            Expr::Literal(Literal::Float(v, t)) => float_lit(*v, *t),
            Expr::Literal(Literal::Int(v, Scalar::U32)) => format!("{}u", *v as u32),
            Expr::Literal(Literal::Int(v, _)) => {
                let v = *v as i32;
                if v == i32::MIN { "((i32)0x80000000u)".into() } else { format!("({v})") }
            }
            Expr::Literal(Literal::Bool(b)) => b.to_string(),
            Expr::Param(i) => format!("p.{}", self.f.params[*i].name),
            Expr::ParamIndex { param, index } => {
                format!("wf_at(p.{}, (u32)({}))", self.f.params[*param].name, self.e(*index))
            }
            Expr::Step(f) => match f {
                StepField::Cur => "w.b.cur".into(),
                StepField::Prev => "w.b.prev".into(),
                StepField::Start => "w.b.start".into(),
                StepField::Step => "w.b.step".into(),
                StepField::Dst => self.dst.into(),
                StepField::Weight => "wf_h(g, e)".into(),
                StepField::Label => "wf_label(g, e)".into(),
                StepField::Edge => "((u32)e)".into(),
                StepField::Time => "wf_time(g, e)".into(),
            },
            Expr::State(i) => format!("w.s.{}", self.f.state[*i].name),
            Expr::Draw(k) => format!("d[{k}]"),
            Expr::Unary { op: UnaryOp::Not, arg } => format!("(!{})", self.e(*arg)),
            Expr::Unary { op: UnaryOp::Neg, arg } => {
                let a = self.e(*arg);
                // `-({a})`: a negative literal operand must not make `--`.
                if ty.is_float() { format!("(-({a}))") } else { format!("wf_ineg({a})") }
            }
            Expr::Binary { op, lhs, rhs } => {
                let (a, b) = (self.e(*lhs), self.e(*rhs));
                let t = ty_of(*lhs);
                let helper = |name: &str| format!("{name}({a}, {b})");
                match (op, t) {
                    (BinaryOp::Add, Scalar::I32) => helper("wf_iadd"),
                    (BinaryOp::Sub, Scalar::I32) => helper("wf_isub"),
                    (BinaryOp::Mul, Scalar::I32) => helper("wf_imul"),
                    (BinaryOp::Div, Scalar::I32) => helper("wf_idiv"),
                    (BinaryOp::Rem, Scalar::I32) => helper("wf_irem"),
                    (BinaryOp::Div, Scalar::U32) => helper("wf_udiv"),
                    (BinaryOp::Rem, Scalar::U32) => helper("wf_urem"),
                    (BinaryOp::Rem, Scalar::F32) => helper("fmodf"),
                    (BinaryOp::Rem, Scalar::F64) => helper("fmod"),
                    // Rounded intrinsics: never contracted into an FMA, whatever the build's
                    // `--fmad` (nvcc's default is on, NVRTC here runs with it off), so a weight
                    // and its bound round as on the CPU.
                    (BinaryOp::Add, Scalar::F32) => helper("__fadd_rn"),
                    (BinaryOp::Sub, Scalar::F32) => helper("__fsub_rn"),
                    (BinaryOp::Mul, Scalar::F32) => helper("__fmul_rn"),
                    (BinaryOp::Add, Scalar::F64) => helper("__dadd_rn"),
                    (BinaryOp::Sub, Scalar::F64) => helper("__dsub_rn"),
                    (BinaryOp::Mul, Scalar::F64) => helper("__dmul_rn"),
                    _ => format!("({a} {} {b})", op.symbol()),
                }
            }
            Expr::Select { cond, then, other } => format!("({} ? {} : {})", self.e(*cond), self.e(*then), self.e(*other)),
            Expr::Cast { expr, to } => {
                let x = self.e(*expr);
                let from = ty_of(*expr);
                match (from.is_float(), to) {
                    (true, Scalar::U32) => format!("wf_f2u((double)({x}))"),
                    (true, Scalar::I32) => format!("wf_f2i((double)({x}))"),
                    _ => format!("(({})({x}))", c_type(*to)),
                }
            }
            Expr::Call { func, args } => {
                let a: Vec<String> = args.iter().map(|x| self.e(*x)).collect();
                let t = ty_of(args[0]);
                let f64 = t == Scalar::F64;
                match func {
                    Builtin::Min | Builtin::Max => {
                        let name = match (func, t) {
                            (Builtin::Min, Scalar::F32) => "wf_minf",
                            (Builtin::Max, Scalar::F32) => "wf_maxf",
                            (Builtin::Min, Scalar::F64) => "wf_mind",
                            (Builtin::Max, Scalar::F64) => "wf_maxd",
                            (Builtin::Min, Scalar::I32) => "wf_imin",
                            (Builtin::Max, Scalar::I32) => "wf_imax",
                            (Builtin::Min, _) => "wf_umin",
                            _ => "wf_umax",
                        };
                        format!("{name}({}, {})", a[0], a[1])
                    }
                    Builtin::Abs if t == Scalar::I32 => format!("wf_iabs({})", a[0]),
                    Builtin::Abs => format!("{}({})", if f64 { "fabs" } else { "fabsf" }, a[0]),
                    Builtin::Exp => format!("{}({})", if f64 { "exp" } else { "expf" }, a[0]),
                    Builtin::Ln => format!("{}({})", if f64 { "log" } else { "logf" }, a[0]),
                    Builtin::Sqrt => format!("{}({})", if f64 { "sqrt" } else { "sqrtf" }, a[0]),
                    Builtin::Powf => format!("{}({}, {})", if f64 { "pow" } else { "powf" }, a[0], a[1]),
                    Builtin::Degree => format!("wf_degree(g, {})", a[0]),
                    Builtin::HasEdge => format!("wf_has_edge(g, {}, {})", a[0], a[1]),
                    Builtin::NodeProp(i) => format!("wf_prop(g, {i}u, {})", a[0]),
                }
            }
            Expr::Node(q) => match q {
                // Read with cur's row offsets at the step's start (wf_enter).
                NodeQuery::WeightMax => "w.b.cw.x".into(),
                NodeQuery::WeightMin => "w.b.cw.y".into(),
                NodeQuery::WeightSum => "w.b.cw.z".into(),
                NodeQuery::Degree => "wf_degree(g, w.b.cur)".into(),
                NodeQuery::BackWeight => "wf_back_weight(g, w.b.cur, w.b.prev, 0)".into(),
                NodeQuery::BackCount => "wf_back_count(g, w.b.cur, w.b.prev)".into(),
                NodeQuery::LabelMax(l) => format!("wf_label_max(g, w.b.cur, {})", self.e(*l)),
                NodeQuery::LabelSum(l) => format!("wf_label_sum(g, w.b.cur, {})", self.e(*l)),
                NodeQuery::LabelCount(l) => format!("wf_label_count(g, w.b.cur, {})", self.e(*l)),
                NodeQuery::NeighborDegreeMax => "g.nbr_degree_max[w.b.cur]".into(),
                NodeQuery::NeighborDegreeMin => "g.nbr_degree_min[w.b.cur]".into(),
            },
        }
    }
}

/// The generated part of a walk's CUDA source: types, flags and device functions (no
/// prelude, no kernels). Deterministic, so golden files can pin it.
pub fn emit_device_functions(f: &Program, info: &WalkInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "// Generated by wayfarer from walk `{}`. Do not edit: regenerate with `wayfarer emit`.\n", f.name);
    // Parameters, state, walker.
    out.push_str("struct WfParams {\n");
    for p in &f.params {
        match p.ty {
            ParamType::Scalar(s) => {
                let _ = writeln!(out, "    {} {};", c_type(s), p.name);
            }
            ParamType::Array(s, n) => {
                let _ = writeln!(out, "    {} {}[{n}];", c_type(s), p.name);
            }
        }
    }
    if f.params.is_empty() {
        out.push_str("    u32 wf_unused;\n");
    }
    out.push_str("};\n\nstruct WfState {\n");
    for s in &f.state {
        let _ = writeln!(out, "    {} {};", c_type(s.ty), s.name);
    }
    if f.state.is_empty() {
        out.push_str("    u32 wf_unused;\n");
    }
    out.push_str("};\n\nstruct WfWalker {\n    WfWalkerBase b;\n    WfState s;\n};\n\n");
    let _ = writeln!(out, "#define WF_HAS_BOUND {}", info.bound.is_some() as u8);
    let _ = writeln!(out, "#define WF_BOUND_PER_KERNEL {}", (info.bound.is_some() && info.bound_scope == Scope::PerKernel) as u8);
    let _ = writeln!(out, "#define WF_POSSIBLE_ZERO {}", info.possible_zero as u8);
    let _ = writeln!(out, "#define WF_SUM_EXACT {}", info.sum_exact as u8);
    let _ = writeln!(out, "#define WF_STATIC_WEIGHT {}", f.static_weight() as u8);
    let _ = writeln!(out, "#define WF_NUM_PROPS {}u\n", f.props.len());

    let w = Cuda { exprs: &f.exprs, types: &f.types, f, dst: "x" };
    let _ = writeln!(
        out,
        "__device__ __forceinline__ float wf_weight(const WfGraph& g, const WfParams& p, const WfWalker& w, u64 e, u32 x) {{\n    (void)x;\n    return {};\n}}\n",
        w.e(f.result)
    );
    // A squeeze only pays when the weight has an expensive part to skip.
    let envelope = if is_expensive(&f.exprs, f.result) { w.envelope(f.result) } else { None };
    let _ = writeln!(out, "#define WF_HAS_ENVELOPE {}", envelope.is_some() as u8);
    let (lo, hi) = envelope.unwrap_or_else(|| ("0.0f".into(), "0.0f".into()));
    let _ = writeln!(
        out,
        "// Squeeze: lo <= weight <= hi without the expensive part (eRJS decides most trials by it).\n__device__ __forceinline__ void wf_envelope(const WfGraph& g, const WfParams& p, const WfWalker& w, u64 e, u32 x, float* lo, float* hi) {{\n    (void)g; (void)p; (void)w; (void)e; (void)x;\n    *lo = {lo};\n    *hi = {hi};\n}}\n"
    );
    let d = Cuda { exprs: &info.derived.exprs, types: &info.derived.types, f, dst: "wf_dst(g, e)" };
    let bound = info.bound.map_or("__int_as_float(0x7f800000)".to_string(), |b| d.e(b));
    let _ = writeln!(
        out,
        "// B: every weight of this step is at most this (infinite: no bound, eRVS only).\n__device__ __forceinline__ float wf_bound(const WfGraph& g, const WfParams& p, const WfWalker& w) {{\n    (void)g; (void)p; (void)w;\n    return {bound};\n}}\n"
    );
    let _ = writeln!(
        out,
        "// S: an estimate of the sum of this step's weights (cost model only).\n__device__ __forceinline__ float wf_estimate(const WfGraph& g, const WfParams& p, const WfWalker& w) {{\n    (void)g; (void)p; (void)w;\n    return {};\n}}\n",
        d.e(info.sum_estimate)
    );
    emit_plan(&mut out, f, info);
    for (name, r) in [("init", &f.init), ("update", &f.update), ("stop", &f.stop)] {
        let sig = match name {
            "stop" => "__device__ __forceinline__ bool wf_stop(const WfGraph& g, const WfParams& p, const WfWalker& w, WfRng& rng)",
            "init" => "__device__ __forceinline__ void wf_init(const WfGraph& g, const WfParams& p, WfWalker& w, WfRng& rng)",
            _ => "__device__ __forceinline__ void wf_update(const WfGraph& g, const WfParams& p, WfWalker& w, WfRng& rng)",
        };
        let _ = writeln!(out, "{sig} {{\n    (void)g; (void)p; (void)rng;");
        let Some(r) = r else {
            out.push_str(if name == "stop" { "    (void)w;\n    return false;\n}\n\n" } else { "    (void)w;\n}\n\n" });
            continue;
        };
        let c = Cuda { exprs: &r.exprs, types: &r.types, f, dst: "wf_dst(g, e)" };
        let edge = if name == "init" { "0ull" } else { "w.b.last_edge" };
        let _ = writeln!(out, "    const u64 e = {edge}; (void)e;");
        if r.draws > 0 {
            let _ = writeln!(out, "    double d[{}];\n    for (int i = 0; i < {}; ++i) d[i] = wf_uniform(rng);", r.draws, r.draws);
        }
        if name == "stop" {
            let _ = writeln!(out, "    return {};\n}}\n", c.e(r.outputs[0]));
            continue;
        }
        // Compute every result from the old values, then assign.
        let mut assigns = String::new();
        for (i, (s, h)) in f.state.iter().zip(&r.outputs).enumerate() {
            if matches!(r.exprs.get(*h), Expr::State(j) if *j == i) {
                continue;
            }
            let _ = writeln!(out, "    const {} o{i} = {};", c_type(s.ty), c.e(*h));
            let _ = writeln!(assigns, "    w.s.{} = o{i};", s.name);
        }
        if name == "update" {
            let k = f.state.len();
            for (h, field, leaf) in [(r.outputs[k], "cur", StepField::Cur), (r.outputs[k + 1], "prev", StepField::Prev)] {
                if matches!(r.exprs.get(h), Expr::Step(x) if *x == leaf) {
                    continue;
                }
                let _ = writeln!(out, "    const u32 o_{field} = {};", c.e(h));
                let _ = writeln!(assigns, "    w.b.{field} = o_{field};");
            }
        }
        let _ = writeln!(out, "{assigns}}}\n");
    }
    out
}

/// The structured proposal plan (`runtime/src/proposal.rs`, run by walk.cu): the terms'
/// conditions and static factors as constants, each static factor of an edge, each term's
/// per-step bound and the step's label. Without a plan `WF_NUM_TERMS` is 0 and walk.cu's
/// structured code folds away.
fn emit_plan(out: &mut String, f: &Program, info: &WalkInfo) {
    use wayfarer_compiler::analysis::ProposalCond;
    let plan = info.proposal.as_ref().ok();
    let terms = plan.map_or(&[][..], |p| p.terms.as_slice());
    let _ = writeln!(out, "// Structured proposals: the plan's terms (none: WF_NUM_TERMS 0).");
    let _ = writeln!(out, "#define WF_NUM_TERMS {}", terms.len());
    let has = |c: ProposalCond| terms.iter().any(|t| t.cond == c) as u8;
    let _ = writeln!(out, "#define WF_HAS_LABEL_TERM {}", has(ProposalCond::Label));
    let _ = writeln!(out, "#define WF_HAS_PREV_NEIGHBOR_TERM {}", has(ProposalCond::PrevNeighbor));
    // The adaptive rule always takes an exact term over a part of the row
    // (ProposalTables::always_structured), and an exact plan's candidates are taken untested
    // (ProposalTables::accepts_untested; walk.cu adds the graph's multiplicity).
    let always = plan.is_some_and(|p| p.always_structured());
    let _ = writeln!(out, "#define WF_ALWAYS_STRUCTURED {}", always as u8);
    let _ = writeln!(out, "#define WF_EXACT_PLAN {}", plan.is_some_and(|p| p.exact) as u8);
    let chain = |items: Vec<String>, last: &str| {
        let mut s = String::new();
        for (k, x) in items.iter().enumerate() {
            let _ = write!(s, "k == {k} ? {x} : ");
        }
        s + last
    };
    let conds = terms
        .iter()
        .map(|t| {
            match t.cond {
                ProposalCond::All => "WF_COND_ALL",
                ProposalCond::Label => "WF_COND_LABEL",
                ProposalCond::Back => "WF_COND_BACK",
                ProposalCond::PrevNeighbor => "WF_COND_PREV_NEIGHBOR",
            }
            .to_string()
        })
        .collect();
    let factors = terms.iter().map(|t| t.factor.map_or("-1".to_string(), |i| i.to_string())).collect();
    let _ = writeln!(
        out,
        "// Which edges term k concerns, and its static factor (-1: 1, a uniform proposal).\n__device__ __forceinline__ int wf_term_cond(int k) {{\n    return {};\n}}\n__device__ __forceinline__ int wf_term_factor(int k) {{\n    return {};\n}}",
        chain(conds, "WF_COND_ALL"),
        chain(factors, "-1")
    );
    let w = Cuda { exprs: &f.exprs, types: &f.types, f, dst: "wf_dst(g, e)" };
    let statics = plan.map_or(Vec::new(), |p| p.factors.iter().map(|h| w.e(*h)).collect());
    let _ = writeln!(
        out,
        "// Static factor i of edge e (reads only the edge).\n__device__ __forceinline__ float wf_term_static(const WfGraph& g, const WfParams& p, int k, u64 e) {{\n    (void)g; (void)p; (void)e;\n    return {};\n}}",
        chain(statics, "0.0f")
    );
    let d = Cuda { exprs: &info.derived.exprs, types: &info.derived.types, f, dst: "wf_dst(g, e)" };
    let bounds = terms.iter().map(|t| d.e(t.bound)).collect();
    let label = plan.and_then(|p| p.label).map_or("0u".to_string(), |l| d.e(l));
    let _ = writeln!(
        out,
        "// R_k: term k's non-static part is at most this on its edges this step.\n__device__ __forceinline__ float wf_term_bound(const WfGraph& g, const WfParams& p, const WfWalker& w, int k) {{\n    (void)g; (void)p; (void)w;\n    return {};\n}}\n// The label of the label-segment terms this step.\n__device__ __forceinline__ u32 wf_term_label(const WfGraph& g, const WfParams& p, const WfWalker& w) {{\n    (void)g; (void)p; (void)w;\n    return {label};\n}}\n",
        chain(bounds, "0.0f")
    );
}

/// Writes the walk's generated device functions to `dir/<walk>.device.cu` (`WAYFARER_DUMP`).
pub fn dump(program: &Program, info: &WalkInfo, dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(format!("{}.device.cu", program.name)), emit_device_functions(program, info))
}
