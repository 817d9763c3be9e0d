//! The native backend: Rust tokens implementing the runtime's `Walk` trait, emitted by the
//! `#[walk]` macro and compiled by rustc with the user's crate.
//!
//! Expressions are emitted as trees (selects become lazy `if`s, so a `has_edge` in an untaken
//! branch is never evaluated) with the IR's semantics: wrapping integer arithmetic, integer
//! division by zero giving 0, graph queries on non-nodes giving false / 0, out-of-range array
//! indices reading 0.

use crate::analysis::{Scope, WalkInfo};
use crate::ir::*;
use proc_macro2::{Ident, Literal as Lit, Span, TokenStream};
use quote::{format_ident, quote};

mod params;

/// `node2vec` -> `Node2vec`, `deep_walk` -> `DeepWalk`.
pub fn struct_name(fn_name: &str) -> String {
    fn_name
        .split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

fn scalar_ty(s: Scalar) -> TokenStream {
    match s {
        Scalar::F32 => quote!(f32),
        Scalar::F64 => quote!(f64),
        Scalar::I32 => quote!(i32),
        Scalar::U32 => quote!(u32),
        Scalar::Bool => quote!(bool),
    }
}

fn zero(s: Scalar) -> TokenStream {
    match s {
        Scalar::F32 => quote!(0.0f32),
        Scalar::F64 => quote!(0.0f64),
        Scalar::I32 => quote!(0i32),
        Scalar::U32 => quote!(0u32),
        Scalar::Bool => quote!(false),
    }
}

struct Emitter<'a> {
    exprs: &'a Arena<Expr>,
    types: &'a [Scalar],
    params: &'a [Param],
    props: &'a [String],
    state: &'a [StateField],
    /// For `Walk::node_start`: every read of the walker other than `cur` sets the generated
    /// code's `__tainted` (and reads a zero), and `step() == 0` is false.
    node_only: bool,
}

impl Emitter<'_> {
    fn expensive(&self, h: Handle<Expr>) -> bool {
        is_expensive(self.exprs, h)
    }

    /// A squeeze envelope `(lo, hi)` of the weight: the select tree is walked with cheap
    /// conditions evaluated and expensive ones (`has_edge`, …) replaced by the min and max of
    /// both outcomes. Each end is one of the values the weight can take, computed the same
    /// way, so `lo <= weight <= hi` holds exactly. `None` if an expensive call sits outside
    /// the select tree (in arithmetic), where this simple scheme does not apply.
    fn envelope(&self, h: Handle<Expr>) -> Option<(TokenStream, TokenStream)> {
        match self.exprs.get(h) {
            Expr::Select { cond, then, other } => {
                let (lt, ht) = self.envelope(*then)?;
                let (lf, hf) = self.envelope(*other)?;
                if self.expensive(*cond) {
                    Some((quote!((#lt).min(#lf)), quote!((#ht).max(#hf))))
                } else {
                    let c = self.e(*cond);
                    Some((quote!((if #c { #lt } else { #lf })), quote!((if #c { #ht } else { #hf }))))
                }
            }
            _ if self.expensive(h) => None,
            _ => {
                let v = self.e(h);
                Some((v.clone(), v))
            }
        }
    }

    fn e(&self, h: Handle<Expr>) -> TokenStream {
        let ty = self.types[h.index()];
        if self.node_only {
            let tainted = |ty: Scalar| {
                let z = zero(ty);
                quote!({ __tainted = true; #z })
            };
            if reads_more_than_cur(self.exprs.get(h)) {
                return tainted(ty);
            }
            if let Some(eq) = first_step_test(self.exprs, h) {
                // Past the first move.
                let v = !eq;
                return quote!(#v);
            }
        }
        match self.exprs.get(h) {
            Expr::Literal(Literal::Float(v, t)) => {
                let inf = v.is_infinite();
                match (t, inf, *v < 0.0) {
                    (Scalar::F64, true, false) => quote!(f64::INFINITY),
                    (Scalar::F64, true, true) => quote!(f64::NEG_INFINITY),
                    (_, true, false) => quote!(f32::INFINITY),
                    (_, true, true) => quote!(f32::NEG_INFINITY),
                    (Scalar::F64, false, _) => {
                        let l = Lit::f64_suffixed(*v);
                        quote!(#l)
                    }
                    _ => {
                        let l = Lit::f32_suffixed(*v as f32);
                        quote!(#l)
                    }
                }
            }
            Expr::Literal(Literal::Int(v, Scalar::U32)) => {
                let l = Lit::u32_suffixed(*v as u32);
                quote!(#l)
            }
            Expr::Literal(Literal::Int(v, _)) => {
                let l = Lit::i32_suffixed(*v as i32);
                quote!(#l)
            }
            Expr::Literal(Literal::Bool(b)) => quote!(#b),
            Expr::Param(i) => {
                let n = format_ident!("{}", self.params[*i].name);
                quote!(self.#n)
            }
            Expr::ParamIndex { param, index } => {
                let n = format_ident!("{}", self.params[*param].name);
                let i = self.e(*index);
                let z = zero(ty);
                quote!(self.#n.get((#i) as usize).copied().unwrap_or(#z))
            }
            Expr::State(i) => {
                let n = format_ident!("{}", self.state[*i].name);
                quote!(__w.state.#n)
            }
            Expr::Draw(k) => {
                let k = *k as usize;
                quote!(__d[#k])
            }
            Expr::Step(f) => match f {
                StepField::Cur => quote!(__w.cur),
                StepField::Prev => quote!(__w.prev),
                StepField::Start => quote!(__w.start),
                StepField::Step => quote!(__w.step),
                StepField::Dst => quote!(__g.targets()[__e]),
                StepField::Weight => quote!(__g.weights().map_or(1.0f32, |__x| __x[__e])),
                StepField::Label => quote!(__g.labels().map_or(0u32, |__x| __x[__e])),
                StepField::Edge => quote!((__e as u32)),
                StepField::Time => quote!(__g.timestamps().map_or(0.0f64, |__x| __x[__e] as f64)),
            },
            Expr::Unary { op: UnaryOp::Not, arg } => {
                let a = self.e(*arg);
                quote!((!(#a)))
            }
            Expr::Unary { op: UnaryOp::Neg, arg } => {
                let a = self.e(*arg);
                if ty.is_float() { quote!((-(#a))) } else { quote!((#a).wrapping_neg()) }
            }
            Expr::Binary { op, lhs, rhs } => {
                let (a, b) = (self.e(*lhs), self.e(*rhs));
                let int = self.types[lhs.index()].is_int();
                match op {
                    BinaryOp::And => quote!(((#a) && (#b))),
                    BinaryOp::Or => quote!(((#a) || (#b))),
                    BinaryOp::Eq => quote!(((#a) == (#b))),
                    BinaryOp::Ne => quote!(((#a) != (#b))),
                    BinaryOp::Lt => quote!(((#a) < (#b))),
                    BinaryOp::Le => quote!(((#a) <= (#b))),
                    BinaryOp::Gt => quote!(((#a) > (#b))),
                    BinaryOp::Ge => quote!(((#a) >= (#b))),
                    BinaryOp::Add if int => quote!((#a).wrapping_add(#b)),
                    BinaryOp::Sub if int => quote!((#a).wrapping_sub(#b)),
                    BinaryOp::Mul if int => quote!((#a).wrapping_mul(#b)),
                    BinaryOp::Div if int => quote!({ let (__x, __y) = (#a, #b); if __y == 0 { 0 } else { __x.wrapping_div(__y) } }),
                    BinaryOp::Rem if int => quote!({ let (__x, __y) = (#a, #b); if __y == 0 { 0 } else { __x.wrapping_rem(__y) } }),
                    BinaryOp::Add => quote!(((#a) + (#b))),
                    BinaryOp::Sub => quote!(((#a) - (#b))),
                    BinaryOp::Mul => quote!(((#a) * (#b))),
                    BinaryOp::Div => quote!(((#a) / (#b))),
                    BinaryOp::Rem => quote!(((#a) % (#b))),
                }
            }
            Expr::Select { cond, then, other } => {
                let (c, t, f) = (self.e(*cond), self.e(*then), self.e(*other));
                quote!((if #c { #t } else { #f }))
            }
            Expr::Cast { expr, to } => {
                let x = self.e(*expr);
                let t = scalar_ty(*to);
                quote!(((#x) as #t))
            }
            Expr::Call { func, args } => {
                let a: Vec<TokenStream> = args.iter().map(|x| self.e(*x)).collect();
                match func {
                    Builtin::Min => {
                        let (x, y) = (&a[0], &a[1]);
                        quote!((#x).min(#y))
                    }
                    Builtin::Max => {
                        let (x, y) = (&a[0], &a[1]);
                        quote!((#x).max(#y))
                    }
                    Builtin::Abs if ty == Scalar::I32 => {
                        let x = &a[0];
                        quote!((#x).wrapping_abs())
                    }
                    Builtin::Abs | Builtin::Exp | Builtin::Ln | Builtin::Sqrt => {
                        let m = Ident::new(func.name(), Span::call_site());
                        let x = &a[0];
                        quote!((#x).#m())
                    }
                    Builtin::Powf => {
                        let (x, y) = (&a[0], &a[1]);
                        quote!((#x).powf(#y))
                    }
                    Builtin::Degree => {
                        let v = &a[0];
                        quote!(__g.walk_degree(#v))
                    }
                    Builtin::NodeProp(i) => {
                        let name = &self.props[*i as usize];
                        let v = &a[0];
                        quote!(__g.node_property(#name).and_then(|__p| __p.get((#v) as usize).copied()).unwrap_or(0.0f32))
                    }
                    Builtin::HasEdge => {
                        let (u, v) = (&a[0], &a[1]);
                        quote!({ let (__u, __v): (u32, u32) = (#u, #v); let __n = __g.num_nodes(); (__u as usize) < __n && (__v as usize) < __n && __g.has_edge(__u, __v) })
                    }
                }
            }
            Expr::Node(q) => match q {
                NodeQuery::WeightMax => quote!(__ctx.stats.weight_max[__w.cur as usize]),
                NodeQuery::WeightMin => quote!(__ctx.stats.weight_min[__w.cur as usize]),
                NodeQuery::WeightSum => quote!(__ctx.stats.weight_sum[__w.cur as usize]),
                NodeQuery::Degree => quote!((__g.degree(__w.cur).min(u32::MAX as u64) as u32)),
                NodeQuery::BackWeight => quote!(__ctx.back_edges(__w.cur, __w.prev, true).0),
                NodeQuery::BackCount => quote!(__ctx.back_edges(__w.cur, __w.prev, true).1),
                NodeQuery::LabelMax(l) => {
                    let l = self.e(*l);
                    quote!(__ctx.label_query(__w.cur, #l).0)
                }
                NodeQuery::LabelSum(l) => {
                    let l = self.e(*l);
                    quote!(__ctx.label_query(__w.cur, #l).1)
                }
                NodeQuery::LabelCount(l) => {
                    let l = self.e(*l);
                    quote!(__ctx.label_query(__w.cur, #l).2)
                }
                NodeQuery::NeighborDegreeMax => quote!(__ctx.stats.neighbor_degree_max[__w.cur as usize]),
                NodeQuery::NeighborDegreeMin => quote!(__ctx.stats.neighbor_degree_min[__w.cur as usize]),
            },
        }
    }
}

/// Emits the params struct and its `Walk` impl. `rt` is the path of the runtime crate as the
/// user's crate sees it (e.g. `::wayfarer::runtime`); `vis` the struct's visibility.
/// `source` is the item's text as the macro saw it (attribute included), returned by the
/// generated `Walk::source` so the GPU backend can compile the walk at run time.
pub fn emit(
    f: &Program,
    info: &WalkInfo,
    rt: &TokenStream,
    vis: &TokenStream,
    docs: &[syn::Attribute],
    source: Option<&str>,
) -> TokenStream {
    let name = format_ident!("{}", f.type_name);
    let walk_name = &f.name;
    let state_name = format_ident!("{}State", f.type_name);
    let st = if f.form == Form::Impl { quote!(#state_name) } else { quote!(()) };
    let fields: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| {
            let n = format_ident!("{}", p.name);
            let t = match p.ty {
                ParamType::Scalar(s) => scalar_ty(s),
                ParamType::Array(s, len) => {
                    let s = scalar_ty(s);
                    quote!([#s; #len])
                }
            };
            let doc = format!("Hyperparameter `{}`.", p.name);
            quote!(#[doc = #doc] #vis #n: #t)
        })
        .collect();
    let we = Emitter { exprs: &f.exprs, types: &f.types, params: &f.params, props: &f.props, state: &f.state, node_only: false };
    let weight = we.e(f.result);
    // A squeeze only pays when the weight has an expensive part to skip.
    let envelope = match we.expensive(f.result).then(|| we.envelope(f.result)).flatten() {
        Some((lo, hi)) => quote! {
            #[inline(always)]
            fn weight_envelope(&self, __ctx: &#rt::Ctx, __w: &#rt::Walker<#st>, __e: usize) -> Option<(f32, f32)> {
                let __g = __ctx.graph;
                let _ = (__g, __w, __e);
                Some((#lo, #hi))
            }
        },
        None => quote!(),
    };
    // An exact O(1) dead-end test when the estimate is an exact sum of weights.
    let dead_end = if info.sum_exact {
        quote! {
            #[inline(always)]
            fn dead_end(&self, __ctx: &#rt::Ctx, __w: &#rt::Walker<#st>) -> Option<bool> {
                Some(self.sum_estimate(__ctx, __w) <= 0.0)
            }
        }
    } else {
        quote!()
    };
    let d = Emitter {
        exprs: &info.derived.exprs,
        types: &info.derived.types,
        params: &f.params,
        props: &f.props,
        state: &f.state,
        node_only: false,
    };
    let bound = match info.bound {
        Some(b) => {
            let b = d.e(b);
            quote!(#rt::Bound::Max(#b))
        }
        None => quote!(#rt::Bound::Unknown),
    };
    let node_start = node_start(info, &Emitter { node_only: true, ..d }, rt, &st);
    let scope = match (info.bound, info.bound_scope) {
        (None, _) => quote!(#rt::BoundScope::None),
        (Some(_), Scope::PerKernel) => quote!(#rt::BoundScope::PerKernel),
        (Some(_), Scope::PerStep) => quote!(#rt::BoundScope::PerStep),
    };
    let estimate = d.e(info.sum_estimate);
    let proposal = proposal_methods(info, &we, &d, rt, &st);
    let crate::analysis::Requirements { weight_stats, label_stats, neighbor_degree, edge_queries } = crate::analysis::requirements(info);
    let possible_zero = info.possible_zero;
    let static_weight = f.static_weight();
    let doc = format!("Parameters of the `{walk_name}` walk (generated by `#[walk]`).");
    let def = if fields.is_empty() { quote!(#vis struct #name;) } else { quote!(#vis struct #name { #(#fields),* }) };
    let routines = routines(f, rt, &st);
    // Without update or stop the engine makes no Update stream per move.
    let has_move_hooks = f.update.is_some() || f.stop.is_some();
    let check = check(f, rt);
    let conversions = params::conversions(f, rt, &name);
    let source_fn = match source {
        None => quote!(),
        Some(text) => {
            let pairs = f.params.iter().map(|p| {
                let n = format_ident!("{}", p.name);
                let name = &p.name;
                match p.ty {
                    ParamType::Scalar(_) => quote!((#name.to_string(), format!("{:?}", self.#n))),
                    ParamType::Array(..) => {
                        quote!((#name.to_string(), self.#n.iter().map(|__x| format!("{:?}", __x)).collect::<Vec<_>>().join(",")))
                    }
                }
            });
            quote! {
                fn source(&self) -> Option<#rt::WalkSource> {
                    Some(#rt::WalkSource { source: #text, params: vec![#(#pairs),*] })
                }
            }
        }
    };
    let state_def = if f.form == Form::Impl {
        let fields = f.state.iter().map(|s| {
            let n = format_ident!("{}", s.name);
            let t = scalar_ty(s.ty);
            let doc = format!("State field `{}`.", s.name);
            quote!(#[doc = #doc] pub #n: #t)
        });
        let doc = format!("Per-walker state of the `{walk_name}` walk (generated by `#[walk]`).");
        quote! {
            #[doc = #doc]
            #[derive(Clone, Copy, Debug, Default, PartialEq)]
            #vis struct #state_name { #(#fields),* }
        }
    } else {
        quote!()
    };
    quote! {
        #state_def

        #[doc = #doc]
        #(#docs)*
        #[derive(Clone, Debug, PartialEq)]
        #def

        #[allow(unused_parens, unused_braces, clippy::all)]
        impl #rt::Walk for #name {
            type State = #st;
            fn name(&self) -> &str { #walk_name }
            fn requirements(&self) -> #rt::Requirements {
                #rt::Requirements {
                    weight_stats: #weight_stats,
                    label_stats: #label_stats,
                    neighbor_degree: #neighbor_degree,
                    edge_queries: #edge_queries,
                }
            }
            fn weighted(&self) -> bool { true }
            #[inline(always)]
            fn weight(&self, __ctx: &#rt::Ctx, __w: &#rt::Walker<#st>, __e: usize) -> f32 {
                let __g = __ctx.graph;
                let _ = (__g, __w, __e);
                #weight
            }
            #[inline(always)]
            fn bound(&self, __ctx: &#rt::Ctx, __w: &#rt::Walker<#st>) -> #rt::Bound {
                let __g = __ctx.graph;
                let _ = (__g, __w);
                #bound
            }
            fn bound_scope(&self) -> #rt::BoundScope { #scope }
            #[inline(always)]
            fn sum_estimate(&self, __ctx: &#rt::Ctx, __w: &#rt::Walker<#st>) -> f32 {
                let __g = __ctx.graph;
                let _ = (__g, __w);
                #estimate
            }
            #node_start
            fn possible_zero(&self) -> bool { #possible_zero }
            fn static_weight(&self) -> bool { #static_weight }
            fn has_move_hooks(&self) -> bool { #has_move_hooks }
            #envelope
            #dead_end
            #proposal
            #routines
            #check
            #source_fn
        }

        #conversions
    }
}

/// `Walk::node_start` for a walk with a bound: `B`, `Ŝ` and the dead-end verdict computed by
/// `d` (an emitter in node mode) unless that read more of the walker than its node.
fn node_start(info: &WalkInfo, d: &Emitter, rt: &TokenStream, st: &TokenStream) -> TokenStream {
    let Some(b) = info.bound else { return quote!() };
    let (b, estimate) = (d.e(b), d.e(info.sum_estimate));
    let dead_end = if info.sum_exact { quote!(Some(__estimate <= 0.0)) } else { quote!(None) };
    quote! {
        #[inline]
        #[allow(unused_mut, unused_assignments)]
        fn node_start(&self, __ctx: &#rt::Ctx, __w: &#rt::Walker<#st>) -> Option<#rt::StepEstimates> {
            let __g = __ctx.graph;
            let _ = (__g, __w);
            let mut __tainted = false;
            let __bound = #b;
            let __estimate = #estimate;
            if __tainted {
                return None;
            }
            Some(#rt::StepEstimates { bound: #rt::Bound::Max(__bound), estimate: __estimate, dead_end: #dead_end })
        }
    }
}

/// `Walk::proposal`, `term_static` and `term_bounds` for a walk with a proposal plan.
fn proposal_methods(info: &WalkInfo, we: &Emitter, d: &Emitter, rt: &TokenStream, st: &TokenStream) -> TokenStream {
    let Ok(p) = &info.proposal else { return quote!() };
    let terms = p.terms.iter().map(|t| {
        let factor = match t.factor {
            None => quote!(#rt::proposal::StaticFactor::One),
            Some(i) => {
                let i = i as u8;
                quote!(#rt::proposal::StaticFactor::Table(#i))
            }
        };
        let cond = match t.cond {
            crate::analysis::ProposalCond::All => quote!(#rt::proposal::TermCond::All),
            crate::analysis::ProposalCond::Label => quote!(#rt::proposal::TermCond::Label),
            crate::analysis::ProposalCond::Back => quote!(#rt::proposal::TermCond::Back),
            crate::analysis::ProposalCond::PrevNeighbor => quote!(#rt::proposal::TermCond::PrevNeighbor),
        };
        let exact = p.exact;
        quote!(#rt::proposal::TermPlan { factor: #factor, cond: #cond, exact: #exact })
    });
    let arms = p.factors.iter().enumerate().map(|(i, h)| {
        let v = we.e(*h);
        quote!(#i => #v,)
    });
    let bounds = p.terms.iter().enumerate().map(|(k, t)| {
        let b = d.e(t.bound);
        quote!(__out.bound[#k] = #b;)
    });
    let label = p.label.map(|l| {
        let l = d.e(l);
        quote!(__out.label = (#l) as u32;)
    });
    quote! {
        fn proposal(&self) -> Vec<#rt::proposal::TermPlan> {
            vec![#(#terms),*]
        }
        #[inline(always)]
        fn term_static(&self, __ctx: &#rt::Ctx, __factor: usize, __e: usize) -> f32 {
            let __g = __ctx.graph;
            let _ = (__g, __e);
            match __factor {
                #(#arms)*
                _ => 1.0f32,
            }
        }
        #[inline(always)]
        fn term_bounds(&self, __ctx: &#rt::Ctx, __w: &#rt::Walker<#st>, __out: &mut #rt::proposal::TermBounds) {
            let __g = __ctx.graph;
            let _ = (__g, __w);
            #(#bounds)*
            #label
        }
    }
}

/// `Walk::check`: the graph must carry the edge data the program reads (timestamps, labels)
/// and its node properties; otherwise every read would silently be 0.
fn check(f: &Program, rt: &TokenStream) -> TokenStream {
    let reads = |field: StepField| f.reads(field);
    let walk_name = &f.name;
    let mut body = params::checks(f, rt);
    if reads(StepField::Time) {
        body.extend(quote! {
            if __g.timestamps().is_none() {
                return Err(#rt::WalkError::MissingGraphData { walk: #walk_name.into(), what: "edge timestamps".into() });
            }
        });
    }
    if reads(StepField::Label) {
        body.extend(quote! {
            if __g.labels().is_none() {
                return Err(#rt::WalkError::MissingGraphData { walk: #walk_name.into(), what: "edge labels".into() });
            }
        });
    }
    for p in &f.props {
        let what = format!("node property `{p}`");
        body.extend(quote! {
            if __g.node_property(#p).is_none() {
                return Err(#rt::WalkError::MissingGraphData { walk: #walk_name.into(), what: #what.into() });
            }
        });
    }
    if body.is_empty() {
        return quote!();
    }
    quote! {
        fn check(&self, __g: &#rt::CsrGraph) -> Result<(), #rt::WalkError> {
            #body
            Ok(())
        }
    }
}

/// The `init`, `update` and `stop` methods of an impl-form walk. Draws are taken up front, in
/// index order, so each call consumes the same count whatever path it takes.
fn routines(f: &Program, rt: &TokenStream, st: &TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    for (which, r) in [("init", &f.init), ("update", &f.update), ("stop", &f.stop)] {
        let Some(r) = r else { continue };
        let em = Emitter { exprs: &r.exprs, types: &r.types, params: &f.params, props: &f.props, state: &f.state, node_only: false };
        let n = r.draws as usize;
        let draws = if n == 0 { quote!() } else { quote!(let __d: [f64; #n] = ::core::array::from_fn(|_| __rng.uniform());) };
        let edge = if which == "init" { quote!(let __e = 0usize;) } else { quote!(let __e = __w.last_edge as usize;) };
        let prelude = quote! {
            let __g = __ctx.graph;
            #edge
            #draws
            let _ = (&__g, &__e, &__rng, &__w);
        };
        match which {
            "stop" => {
                let v = em.e(r.outputs[0]);
                out.extend(quote! {
                    #[inline(always)]
                    fn stop(&self, __ctx: &#rt::Ctx, __w: &#rt::Walker<#st>, __rng: &mut #rt::StepRng) -> bool {
                        #prelude
                        #v
                    }
                });
            }
            _ => {
                let mut compute = TokenStream::new();
                let mut assign = TokenStream::new();
                for (i, (s, h)) in f.state.iter().zip(&r.outputs).enumerate() {
                    // A field passed through unchanged needs no code.
                    if matches!(r.exprs.get(*h), Expr::State(j) if *j == i) {
                        continue;
                    }
                    let (tmp, field, v) = (format_ident!("__o{}", i), format_ident!("{}", s.name), em.e(*h));
                    compute.extend(quote!(let #tmp = #v;));
                    assign.extend(quote!(__w.state.#field = #tmp;));
                }
                if which == "update" {
                    let k = f.state.len();
                    for (h, field, leaf) in [(r.outputs[k], quote!(cur), StepField::Cur), (r.outputs[k + 1], quote!(prev), StepField::Prev)]
                    {
                        if matches!(r.exprs.get(h), Expr::Step(x) if *x == leaf) {
                            continue;
                        }
                        let (tmp, v) = (format_ident!("__o_{}", field.to_string()), em.e(h));
                        compute.extend(quote!(let #tmp = #v;));
                        assign.extend(quote!(__w.#field = #tmp;));
                    }
                }
                let m = format_ident!("{}", which);
                out.extend(quote! {
                    #[inline(always)]
                    fn #m(&self, __ctx: &#rt::Ctx, __w: &mut #rt::Walker<#st>, __rng: &mut #rt::StepRng) {
                        #prelude
                        #compute
                        #assign
                    }
                });
            }
        }
    }
    out
}
