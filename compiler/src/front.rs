//! The front end: a `#[walk]` function (syn AST) to the IR, with type checking.
//!
//! Statements are lowered in continuation style: an `if` whose branches fall through lowers
//! both branches followed by the rest of the block, and joins them with a `Select`; `return`
//! ends its path. Mutable locals are SSA values rebound per path; `for` over a constant range
//! is unrolled. The result is one pure expression DAG per walk. Every error is collected with
//! the span of the offending token; lowering carries on after an error where it can.

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::*;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// Unrolled `for` iterations allowed per loop.
pub const MAX_UNROLL: u64 = 256;
/// IR nodes allowed per walk (branches duplicate the statements that follow them).
pub const MAX_NODES: usize = 200_000;

const ALLOWED: &str = "the walk language has `let`, `if`/`else`, `match` on integers, `for i in 0..N` with a constant N, \
arithmetic and comparisons on f32/f64/i32/u32/bool, `as` casts, min/max/abs/exp/ln/sqrt/powf, the step's accessors, \
`has_edge`, `degree` and `node_prop`";

/// Lowers a `#[walk] fn name(s: &Step, params...) -> f32 { ... }` to a [`WeightFunction`].
pub fn lower_weight_fn(item: &syn::ItemFn) -> Result<WeightFunction, Diagnostics> {
    let mut l = Lowerer {
        props: Vec::new(),
        leaves: Default::default(),
        exprs: Arena::default(),
        types: Vec::new(),
        params: Vec::new(),
        step: String::new(),
        diags: Vec::new(),
    };
    l.signature(&item.sig);
    let result = l.body(&item.block);
    if let Ok(r) = result
        && l.diags.is_empty()
        && l.types[r.index()] != Scalar::F32
    {
        let t = l.types[r.index()];
        l.diags.push(
            Diagnostic::error(l.exprs.span(r), format!("the weight must be an `f32`, found `{}`", t.name()))
                .help("convert it with `as f32`"),
        );
    }
    match result {
        Ok(result) if l.diags.is_empty() => Ok(WeightFunction {
            name: item.sig.ident.to_string(),
            params: l.params,
            exprs: l.exprs,
            types: l.types,
            result,
            props: l.props,
            span: item.span(),
        }),
        _ => {
            if l.diags.is_empty() {
                l.diags.push(Diagnostic::error(item.sig.ident.span(), "the walk could not be compiled"));
            }
            Err(Diagnostics(l.diags))
        }
    }
}

/// Parses Rust source text holding one `#[walk]` function and lowers it.
pub fn lower_source(source: &str) -> Result<WeightFunction, Diagnostics> {
    let file = syn::parse_file(source).map_err(|e| Diagnostics(vec![Diagnostic::error(e.span(), e.to_string())]))?;
    let mut fns = file.items.iter().filter_map(|i| match i {
        syn::Item::Fn(f) if f.attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "walk")) => Some(f),
        _ => None,
    });
    match (fns.next(), fns.next()) {
        (Some(f), None) => lower_weight_fn(f),
        (None, _) => Err(Diagnostics(vec![Diagnostic::error(Span::call_site(), "no `#[walk]` function in this file")])),
        (Some(_), Some(second)) => {
            Err(Diagnostics(vec![Diagnostic::error(second.sig.ident.span(), "a file holds one `#[walk]` function; this is a second one")]))
        }
    }
}

type Lowered = Result<Handle<Expr>, ()>;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Leaf {
    Step(StepField),
    Param(usize),
}

#[derive(Clone)]
struct Binding {
    name: String,
    value: Handle<Expr>,
    mutable: bool,
}

/// Local bindings of one control-flow path, innermost last.
#[derive(Clone, Default)]
struct Env(Vec<Binding>);

impl Env {
    fn find(&self, name: &str) -> Option<usize> {
        self.0.iter().rposition(|b| b.name == name)
    }
}

enum Work<'a> {
    Stmt(&'a syn::Stmt),
    /// An `else if` (or any statement-position expression without a following semicolon).
    Expr(&'a syn::Expr),
    /// Bind a loop variable.
    Bind(String, Handle<Expr>),
    /// Leave a block: drop bindings above this depth.
    Exit(usize),
}

struct Lowerer {
    props: Vec<String>,
    /// Leaves (step accessors, scalar parameters) are shared: one node each.
    leaves: std::collections::HashMap<Leaf, Handle<Expr>>,
    exprs: Arena<Expr>,
    types: Vec<Scalar>,
    params: Vec<Param>,
    step: String,
    diags: Vec<Diagnostic>,
}

fn scalar_of(ty: &syn::Type) -> Option<Scalar> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => match p.path.segments[0].ident.to_string().as_str() {
            "f32" => Some(Scalar::F32),
            "f64" => Some(Scalar::F64),
            "i32" => Some(Scalar::I32),
            "u32" => Some(Scalar::U32),
            "bool" => Some(Scalar::Bool),
            _ => None,
        },
        syn::Type::Paren(p) => scalar_of(&p.elem),
        _ => None,
    }
}

fn is_usize(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.is_ident("usize"))
}

fn is_literal(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(_) => true,
        syn::Expr::Paren(p) => is_literal(&p.expr),
        syn::Expr::Group(g) => is_literal(&g.expr),
        syn::Expr::Unary(u) => matches!(u.op, syn::UnOp::Neg(_)) && is_literal(&u.expr),
        _ => false,
    }
}

fn expr_kind(e: &syn::Expr) -> &'static str {
    match e {
        syn::Expr::Array(_) => "an array expression",
        syn::Expr::Async(_) => "`async`",
        syn::Expr::Await(_) => "`.await`",
        syn::Expr::Break(_) => "`break`",
        syn::Expr::Closure(_) => "a closure",
        syn::Expr::Continue(_) => "`continue`",
        syn::Expr::Field(_) => "a field access",
        syn::Expr::Loop(_) => "`loop`",
        syn::Expr::Macro(_) => "a macro call",
        syn::Expr::Range(_) => "a range outside `for`",
        syn::Expr::Reference(_) => "a reference",
        syn::Expr::Repeat(_) => "an array repeat expression",
        syn::Expr::Struct(_) => "a struct literal",
        syn::Expr::Try(_) => "the `?` operator",
        syn::Expr::Tuple(_) => "a tuple",
        syn::Expr::Unsafe(_) => "`unsafe`",
        syn::Expr::While(_) => "`while`",
        syn::Expr::Let(_) => "`if let` / `let` in a condition",
        syn::Expr::Call(_) => "a function call",
        _ => "this expression",
    }
}

impl Lowerer {
    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }
    fn err_help(&mut self, span: Span, msg: impl Into<String>, help: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg).help(help));
    }

    fn push(&mut self, e: Expr, ty: Scalar, span: Span) -> Lowered {
        let leaf = match e {
            Expr::Step(f) => Some(Leaf::Step(f)),
            Expr::Param(i) => Some(Leaf::Param(i)),
            _ => None,
        };
        if let Some(l) = leaf
            && let Some(&h) = self.leaves.get(&l)
        {
            return Ok(h);
        }
        let h = self.push_new(e, ty, span)?;
        if let Some(l) = leaf {
            self.leaves.insert(l, h);
        }
        Ok(h)
    }

    fn push_new(&mut self, e: Expr, ty: Scalar, span: Span) -> Lowered {
        if self.exprs.len() >= MAX_NODES {
            self.err_help(
                span,
                "this walk is too large once its branches are expanded",
                "move statements that follow an `if` into its branches, or simplify",
            );
            return Err(());
        }
        let h = self.exprs.append(e, span);
        self.types.push(ty);
        Ok(h)
    }

    fn ty(&self, h: Handle<Expr>) -> Scalar {
        self.types[h.index()]
    }

    fn signature(&mut self, sig: &syn::Signature) {
        if let Some(c) = &sig.constness {
            self.err(c.span(), "a walk cannot be `const`");
        }
        if let Some(a) = &sig.asyncness {
            self.err(a.span(), "a walk cannot be `async`");
        }
        if let Some(u) = &sig.unsafety {
            self.err(u.span(), "a walk cannot be `unsafe`");
        }
        if let Some(a) = &sig.abi {
            self.err(a.span(), "a walk cannot have an ABI");
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            self.err_help(
                sig.generics.span(),
                "a walk cannot be generic",
                "give hyperparameters concrete types: f32, f64, i32, u32, bool or [T; N]",
            );
        }
        if let Some(v) = &sig.variadic {
            self.err(v.span(), "a walk cannot be variadic");
        }
        let mut inputs = sig.inputs.iter();
        match inputs.next() {
            Some(syn::FnArg::Typed(pt)) if matches!(&*pt.ty, syn::Type::Reference(r) if matches!(&*r.elem, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Step"))) => {
                match &*pt.pat {
                    syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => self.step = pi.ident.to_string(),
                    other => self.err(other.span(), "name the step argument with a plain identifier, e.g. `s: &Step`"),
                }
            }
            Some(other) => self.err_help(other.span(), "a walk's first argument is the step", "start the signature with `s: &Step`"),
            None => {
                self.err_help(sig.paren_token.span.join(), "a walk's first argument is the step", "write `fn name(s: &Step, ...) -> f32`")
            }
        }
        for arg in inputs {
            let syn::FnArg::Typed(pt) = arg else {
                self.err(arg.span(), "a walk is a free function: `self` is not allowed");
                continue;
            };
            let name = match &*pt.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => pi.ident.to_string(),
                other => {
                    self.err(other.span(), "name each hyperparameter with a plain identifier");
                    continue;
                }
            };
            let ty = match &*pt.ty {
                syn::Type::Array(a) => {
                    let n = match &a.len {
                        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse::<usize>().ok(),
                        _ => None,
                    };
                    match (scalar_of(&a.elem), n) {
                        (Some(s), Some(n)) if (1..=4096).contains(&n) => ParamType::Array(s, n),
                        (None, _) => {
                            self.err(a.elem.span(), "array hyperparameters hold f32, f64, i32, u32 or bool");
                            continue;
                        }
                        _ => {
                            self.err(a.len.span(), "an array hyperparameter needs a literal length from 1 to 4096");
                            continue;
                        }
                    }
                }
                t => match scalar_of(t) {
                    Some(s) => ParamType::Scalar(s),
                    None => {
                        self.err_help(
                            t.span(),
                            "unsupported hyperparameter type",
                            "use f32, f64, i32, u32, bool or a fixed-size array [T; N]",
                        );
                        continue;
                    }
                },
            };
            if name == self.step || self.params.iter().any(|p| p.name == name) {
                self.err(pt.pat.span(), format!("`{name}` is declared twice"));
                continue;
            }
            self.params.push(Param { name, ty });
        }
        match &sig.output {
            syn::ReturnType::Type(_, t) if scalar_of(t) == Some(Scalar::F32) => {}
            syn::ReturnType::Type(_, t) => self.err_help(t.span(), "a walk returns its weight as `f32`", "write `-> f32`"),
            syn::ReturnType::Default => {
                self.err_help(sig.ident.span(), "a walk returns its weight as `f32`", "add `-> f32` to the signature")
            }
        }
    }

    fn body(&mut self, block: &syn::Block) -> Lowered {
        let work: Vec<Work> = block.stmts.iter().map(Work::Stmt).collect();
        let end = block.brace_token.span.close();
        self.seq(&work, Env::default(), end, false, Some(Scalar::F32))
    }

    /// Lowers a sequence of statements to the value it produces. `value_block`: inside a
    /// value-position block, where `return` is not allowed.
    fn seq(&mut self, work: &[Work], mut env: Env, end: Span, value_block: bool, hint: Option<Scalar>) -> Lowered {
        let mut i = 0;
        while i < work.len() {
            let rest = &work[i + 1..];
            match &work[i] {
                Work::Exit(depth) => env.0.truncate(*depth),
                Work::Bind(name, h) => env.0.push(Binding { name: name.clone(), value: *h, mutable: false }),
                Work::Stmt(syn::Stmt::Local(local)) => self.local(local, &mut env),
                Work::Stmt(syn::Stmt::Item(item)) => {
                    self.err(item.span(), "items (`fn`, `struct`, `use`, …) cannot be declared inside a walk");
                }
                Work::Stmt(syn::Stmt::Macro(m)) => {
                    self.err_help(
                        m.span(),
                        "macros cannot be used inside a walk",
                        "walk code also runs on GPUs; there is no printing or panicking",
                    );
                }
                Work::Stmt(syn::Stmt::Expr(e, semi)) => {
                    if let Some(v) = self.stmt_expr(e, semi.is_none(), rest, &mut env, end, value_block, hint) {
                        return v;
                    }
                }
                Work::Expr(e) => {
                    if let Some(v) = self.stmt_expr(e, true, rest, &mut env, end, value_block, hint) {
                        return v;
                    }
                }
            }
            i += 1;
        }
        self.err_help(end, "the weight is missing here", "end the function with an `f32` expression, or `return` one");
        Err(())
    }

    /// A statement-position expression. Returns `Some(value)` if it ends the path.
    #[allow(clippy::too_many_arguments)]
    fn stmt_expr(
        &mut self,
        e: &syn::Expr,
        tail: bool,
        rest: &[Work],
        env: &mut Env,
        end: Span,
        value_block: bool,
        hint: Option<Scalar>,
    ) -> Option<Lowered> {
        let only_exits = rest.iter().all(|w| matches!(w, Work::Exit(_)));
        match e {
            syn::Expr::Return(r) => {
                if value_block {
                    self.err_help(
                        r.span(),
                        "`return` inside a value expression",
                        "use `if`/`else` at the statement level of the walk to return early",
                    );
                    return Some(Err(()));
                }
                Some(match &r.expr {
                    Some(v) => self.expr(v, env, Some(Scalar::F32)),
                    None => {
                        self.err(r.span(), "`return` needs the weight, e.g. `return 0.0;`");
                        Err(())
                    }
                })
            }
            syn::Expr::If(x) => {
                let cond = self.cond(&x.cond, env);
                let depth = env.0.len();
                let mut then: Vec<Work> = x.then_branch.stmts.iter().map(Work::Stmt).collect();
                then.push(Work::Exit(depth));
                then.extend(rest.iter().map(clone_work));
                let mut other: Vec<Work> = Vec::new();
                match &x.else_branch {
                    Some((_, b)) => match &**b {
                        syn::Expr::Block(bl) => {
                            other.extend(bl.block.stmts.iter().map(Work::Stmt));
                            other.push(Work::Exit(depth));
                        }
                        e => other.push(Work::Expr(e)),
                    },
                    None => {}
                }
                other.extend(rest.iter().map(clone_work));
                let t = self.seq(&then, env.clone(), end, value_block, hint);
                let f = self.seq(&other, env.clone(), end, value_block, hint);
                let (Ok(cond), Ok(t), Ok(f)) = (cond, t, f) else { return Some(Err(())) };
                Some(self.select(cond, t, f, x.span()))
            }
            syn::Expr::Block(b) if b.label.is_none() => {
                let mut w: Vec<Work> = b.block.stmts.iter().map(Work::Stmt).collect();
                w.push(Work::Exit(env.0.len()));
                w.extend(rest.iter().map(clone_work));
                Some(self.seq(&w, env.clone(), end, value_block, hint))
            }
            syn::Expr::ForLoop(f) => {
                let (var, range) = match (&*f.pat, &*f.expr) {
                    (syn::Pat::Ident(pi), syn::Expr::Range(r)) => (pi.ident.to_string(), r),
                    _ => {
                        self.err_help(
                            f.for_token.span(),
                            "a `for` loop runs over a constant range",
                            "write `for i in 0..N` with integer literals",
                        );
                        return Some(Err(()));
                    }
                };
                let bound = |e: &Option<Box<syn::Expr>>| match e.as_deref() {
                    Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. })) => i.base10_parse::<i64>().ok(),
                    _ => None,
                };
                let (Some(lo), Some(hi)) = (bound(&range.start), bound(&range.end)) else {
                    self.err_help(
                        range.span(),
                        "a `for` loop runs over a constant range",
                        "write the bounds as integer literals, e.g. `0..4`",
                    );
                    return Some(Err(()));
                };
                let hi = if matches!(range.limits, syn::RangeLimits::Closed(_)) { hi + 1 } else { hi };
                if hi - lo > MAX_UNROLL as i64 {
                    self.err(range.span(), format!("this loop runs {} times; at most {MAX_UNROLL} iterations are allowed", hi - lo));
                    return Some(Err(()));
                }
                let ty = if lo < 0 { Scalar::I32 } else { Scalar::U32 };
                let mut w = Vec::new();
                for k in lo.max(0).min(hi)..hi.max(lo) {
                    let Ok(h) = self.push(Expr::Literal(Literal::Int(k, ty)), ty, f.pat.span()) else { return Some(Err(())) };
                    w.push(Work::Bind(var.clone(), h));
                    w.extend(f.body.stmts.iter().map(Work::Stmt));
                    w.push(Work::Exit(env.0.len()));
                }
                w.extend(rest.iter().map(clone_work));
                Some(self.seq(&w, env.clone(), end, value_block, hint))
            }
            syn::Expr::Assign(a) => {
                self.assign(&a.left, None, &a.right, env, a.span());
                None
            }
            syn::Expr::Binary(b) if compound(&b.op).is_some() => {
                self.assign(&b.left, compound(&b.op), &b.right, env, b.span());
                None
            }
            _ if tail => {
                let v = self.expr(e, env, hint);
                if !only_exits {
                    self.err_help(e.span(), "this value ends the walk, but statements follow it", "end it with `;` or move it last");
                }
                Some(v)
            }
            _ => {
                self.err_help(
                    e.span(),
                    "this statement has no effect",
                    "a walk's statements are `let`, assignments to `let mut` locals, `if`, `for` and `return`",
                );
                None
            }
        }
    }

    fn local(&mut self, local: &syn::Local, env: &mut Env) {
        let (name, mutable, ty) = match &local.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => (pi.ident.to_string(), pi.mutability.is_some(), None),
            syn::Pat::Type(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => match scalar_of(&pt.ty) {
                    Some(s) => (pi.ident.to_string(), pi.mutability.is_some(), Some(s)),
                    None => {
                        self.err(pt.ty.span(), "locals are f32, f64, i32, u32 or bool");
                        return;
                    }
                },
                other => {
                    self.err(other.span(), "bind one local per `let`, e.g. `let x = ...;`");
                    return;
                }
            },
            other => {
                self.err(other.span(), "bind one local per `let`, e.g. `let x = ...;`");
                return;
            }
        };
        let Some(init) = &local.init else {
            self.err_help(local.span(), format!("`{name}` needs a value"), format!("write `let {name} = <value>;`"));
            return;
        };
        if let Some((_, d)) = &init.diverge {
            self.err(d.span(), "`let ... else` is not part of the walk language");
        }
        if name == self.step || self.params.iter().any(|p| p.name == name) {
            self.err(local.pat.span(), format!("`{name}` shadows the step or a hyperparameter; choose another name"));
            return;
        }
        match self.expr(&init.expr, env, ty) {
            Ok(v) => {
                if let Some(t) = ty
                    && self.ty(v) != t
                {
                    let found = self.ty(v).name();
                    self.err_help(
                        init.expr.span(),
                        format!("expected `{}`, found `{found}`", t.name()),
                        format!("convert with `as {}`", t.name()),
                    );
                }
                env.0.push(Binding { name, value: v, mutable });
            }
            Err(()) => {
                // Bind a placeholder so later uses do not report a second, confusing error.
                if let Ok(p) = self.push(Expr::Literal(Literal::Float(0.0, Scalar::F32)), ty.unwrap_or(Scalar::F32), local.span()) {
                    env.0.push(Binding { name, value: p, mutable });
                }
            }
        }
    }

    fn assign(&mut self, left: &syn::Expr, op: Option<BinaryOp>, right: &syn::Expr, env: &mut Env, span: Span) {
        let syn::Expr::Path(p) = left else {
            self.err(left.span(), "only `let mut` locals can be assigned");
            return;
        };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            self.err(left.span(), "only `let mut` locals can be assigned");
            return;
        };
        let Some(idx) = env.find(&name) else {
            if self.params.iter().any(|q| q.name == name) || name == self.step {
                self.err_help(
                    left.span(),
                    format!("cannot assign to `{name}`"),
                    "hyperparameters and the step are read-only; copy into a `let mut` local",
                );
            } else {
                self.err(left.span(), format!("cannot find `{name}` in this walk"));
            }
            return;
        };
        if !env.0[idx].mutable {
            self.err_help(left.span(), format!("cannot assign twice to immutable local `{name}`"), format!("declare it `let mut {name}`"));
            return;
        }
        let old = env.0[idx].value;
        let t = self.ty(old);
        let Ok(r) = self.expr(right, env, Some(t)) else { return };
        let value = match op {
            None => r,
            Some(op) => match self.binary_typed(op, old, r, span) {
                Ok(v) => v,
                Err(()) => return,
            },
        };
        if self.ty(value) != t {
            let found = self.ty(value).name();
            self.err(right.span(), format!("`{name}` is `{}`, but this is `{found}`", t.name()));
            return;
        }
        env.0[idx].value = value;
    }

    fn cond(&mut self, e: &syn::Expr, env: &Env) -> Lowered {
        let c = self.expr(e, env, Some(Scalar::Bool))?;
        if self.ty(c) != Scalar::Bool {
            let t = self.ty(c).name();
            self.err(e.span(), format!("a condition must be `bool`, found `{t}`"));
            return Err(());
        }
        Ok(c)
    }

    fn select(&mut self, cond: Handle<Expr>, then: Handle<Expr>, other: Handle<Expr>, span: Span) -> Lowered {
        let (a, b) = (self.ty(then), self.ty(other));
        if a != b {
            self.err_help(span, format!("the branches have different types: `{}` and `{}`", a.name(), b.name()), "convert one with `as`");
            return Err(());
        }
        if then == other {
            return Ok(then);
        }
        self.push(Expr::Select { cond, then, other }, a, span)
    }

    fn literal(&mut self, lit: &syn::Lit, hint: Option<Scalar>, span: Span, negate: bool) -> Lowered {
        match lit {
            syn::Lit::Float(f) => {
                let ty = match f.suffix() {
                    "f32" => Scalar::F32,
                    "f64" => Scalar::F64,
                    "" => match hint {
                        Some(h) if h.is_float() => h,
                        Some(h) if h.is_int() => {
                            self.err(span, format!("expected `{}`, found a float literal", h.name()));
                            return Err(());
                        }
                        _ => Scalar::F32,
                    },
                    s => {
                        self.err(span, format!("unknown literal suffix `{s}`"));
                        return Err(());
                    }
                };
                let v: f64 = f.base10_parse().map_err(|_| self.err(span, "invalid float literal"))?;
                let v = if negate { -v } else { v };
                if ty == Scalar::F32 && v.is_finite() && (v as f32).is_infinite() {
                    self.err(span, "this literal overflows `f32`");
                    return Err(());
                }
                self.push(Expr::Literal(Literal::Float(v, ty)), ty, span)
            }
            syn::Lit::Int(i) => {
                let ty = match i.suffix() {
                    "u32" => Scalar::U32,
                    "i32" => Scalar::I32,
                    "f32" => Scalar::F32,
                    "f64" => Scalar::F64,
                    "" => match hint {
                        Some(h) if h.is_int() => h,
                        Some(h) if h.is_float() => {
                            self.err_help(
                                span,
                                format!("expected `{}`, found an integer literal", h.name()),
                                format!("write `{}.0`", i.base10_digits()),
                            );
                            return Err(());
                        }
                        _ => Scalar::I32,
                    },
                    s => {
                        self.err_help(span, format!("unsupported integer type `{s}`"), "walk integers are i32 or u32");
                        return Err(());
                    }
                };
                let v: i64 = i.base10_parse().map_err(|_| self.err(span, "integer literal out of range"))?;
                let v = if negate { -v } else { v };
                if ty.is_float() {
                    return self.push(Expr::Literal(Literal::Float(v as f64, ty)), ty, span);
                }
                let ok = match ty {
                    Scalar::U32 => (0..=u32::MAX as i64).contains(&v),
                    _ => (i32::MIN as i64..=i32::MAX as i64).contains(&v),
                };
                if !ok {
                    self.err(span, format!("literal {v} does not fit in `{}`", ty.name()));
                    return Err(());
                }
                self.push(Expr::Literal(Literal::Int(v, ty)), ty, span)
            }
            syn::Lit::Bool(b) => self.push(Expr::Literal(Literal::Bool(b.value)), Scalar::Bool, span),
            _ => {
                self.err(span, "only number and bool literals are part of the walk language");
                Err(())
            }
        }
    }

    fn expr(&mut self, e: &syn::Expr, env: &Env, hint: Option<Scalar>) -> Lowered {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.literal(&l.lit, hint, span, false),
            syn::Expr::Paren(p) => self.expr(&p.expr, env, hint),
            syn::Expr::Group(g) => self.expr(&g.expr, env, hint),
            syn::Expr::Path(p) => self.path(p, env),
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => {
                    if let syn::Expr::Lit(l) = &*u.expr {
                        if hint == Some(Scalar::U32) || (hint.is_none() && matches!(l.lit, syn::Lit::Int(ref i) if i.suffix() == "u32")) {
                            self.err(span, "a `u32` cannot be negative");
                            return Err(());
                        }
                        return self.literal(&l.lit, hint, span, true);
                    }
                    let a = self.expr(&u.expr, env, hint)?;
                    let t = self.ty(a);
                    if !(t.is_float() || t == Scalar::I32) {
                        self.err(span, format!("cannot negate a `{}`", t.name()));
                        return Err(());
                    }
                    self.push(Expr::Unary { op: UnaryOp::Neg, arg: a }, t, span)
                }
                syn::UnOp::Not(_) => {
                    let a = self.expr(&u.expr, env, Some(Scalar::Bool))?;
                    if self.ty(a) != Scalar::Bool {
                        let t = self.ty(a).name();
                        self.err_help(
                            span,
                            format!("`!` applies to `bool`, found `{t}`"),
                            "bitwise operators are not part of the walk language",
                        );
                        return Err(());
                    }
                    self.push(Expr::Unary { op: UnaryOp::Not, arg: a }, Scalar::Bool, span)
                }
                _ => {
                    self.err_help(span, "dereferencing is not part of the walk language", "values in a walk are plain numbers");
                    Err(())
                }
            },
            syn::Expr::Binary(b) => {
                let Some(op) = binop(&b.op) else {
                    if compound(&b.op).is_some() {
                        self.err_help(b.op.span(), "an assignment cannot be used as a value", "write it as its own statement");
                    } else {
                        self.err_help(b.op.span(), "bitwise and shift operators are not part of the walk language", ALLOWED);
                    }
                    return Err(());
                };
                if matches!(op, BinaryOp::And | BinaryOp::Or) {
                    let l = self.cond(&b.left, env);
                    let r = self.cond(&b.right, env);
                    let (l, r) = (l?, r?);
                    return self.push(Expr::Binary { op, lhs: l, rhs: r }, Scalar::Bool, span);
                }
                let arith_hint = if op.is_comparison() { None } else { hint };
                let (l, r) = if is_literal(&b.left) && !is_literal(&b.right) {
                    let r = self.expr(&b.right, env, arith_hint);
                    let rt = r.map(|r| self.ty(r)).ok();
                    (self.expr(&b.left, env, rt.or(arith_hint)), r)
                } else {
                    let l = self.expr(&b.left, env, arith_hint);
                    let lt = l.map(|l| self.ty(l)).ok();
                    (l, self.expr(&b.right, env, lt.or(arith_hint)))
                };
                self.binary_typed(op, l?, r?, span)
            }
            syn::Expr::MethodCall(m) => self.method(m, env, hint),
            syn::Expr::Cast(c) => {
                let to = match scalar_of(&c.ty) {
                    Some(Scalar::Bool) => {
                        self.err(c.ty.span(), "casting to `bool` is not allowed; compare instead, e.g. `x != 0`");
                        return Err(());
                    }
                    Some(t) => t,
                    // `as usize` is how Rust indexes arrays; in the IR an index is a u32.
                    None if is_usize(&c.ty) => Scalar::U32,
                    None => {
                        self.err(c.ty.span(), "casts go to f32, f64, i32 or u32");
                        return Err(());
                    }
                };
                let v = self.expr(&c.expr, env, None)?;
                if self.ty(v) == to {
                    return Ok(v);
                }
                self.push(Expr::Cast { expr: v, to }, to, span)
            }
            syn::Expr::Index(ix) => {
                let syn::Expr::Path(p) = &*ix.expr else {
                    self.err(ix.expr.span(), "only array hyperparameters can be indexed");
                    return Err(());
                };
                let name = p.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                let Some((param, ParamType::Array(elem, _))) =
                    self.params.iter().enumerate().find(|(_, q)| q.name == name).map(|(i, q)| (i, q.ty))
                else {
                    self.err(ix.expr.span(), format!("`{name}` is not an array hyperparameter"));
                    return Err(());
                };
                let index = self.expr(&ix.index, env, Some(Scalar::U32))?;
                if !self.ty(index).is_int() {
                    let t = self.ty(index).name();
                    self.err(ix.index.span(), format!("an index must be an integer, found `{t}`"));
                    return Err(());
                }
                self.push(Expr::ParamIndex { param, index }, elem, span)
            }
            syn::Expr::If(x) => {
                let Some((_, other)) = &x.else_branch else {
                    self.err_help(span, "an `if` used as a value needs an `else`", "add `else { ... }`");
                    return Err(());
                };
                let cond = self.cond(&x.cond, env);
                let t = self.value_block(&x.then_branch.stmts, x.then_branch.brace_token.span.close(), env, hint);
                let t_hint = t.map(|t| self.ty(t)).ok().or(hint);
                let f = self.expr(other, env, t_hint);
                self.select(cond?, t?, f?, span)
            }
            syn::Expr::Block(b) if b.label.is_none() => self.value_block(&b.block.stmts, b.block.brace_token.span.close(), env, hint),
            syn::Expr::Match(m) => self.match_expr(m, env, hint),
            syn::Expr::Return(_) => {
                self.err_help(
                    span,
                    "`return` inside a value expression",
                    "use `if`/`else` at the statement level of the walk to return early",
                );
                Err(())
            }
            syn::Expr::Call(c) => {
                let name = match &*c.func {
                    syn::Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
                    _ => String::new(),
                };
                self.err_help(
                    span,
                    format!("function calls are not part of the walk language (`{name}`)"),
                    format!("use methods: `x.min(y)`, `x.exp()`, `{}.has_edge(u, v)`, …", self.step),
                );
                Err(())
            }
            other => {
                let kind = expr_kind(other);
                self.err_help(span, format!("{kind} is not part of the walk language"), ALLOWED);
                Err(())
            }
        }
    }

    fn value_block(&mut self, stmts: &[syn::Stmt], end: Span, env: &Env, hint: Option<Scalar>) -> Lowered {
        let work: Vec<Work> = stmts.iter().map(Work::Stmt).collect();
        self.seq(&work, env.clone(), end, true, hint)
    }

    fn match_expr(&mut self, m: &syn::ExprMatch, env: &Env, hint: Option<Scalar>) -> Lowered {
        let scrut = self.expr(&m.expr, env, Some(Scalar::U32))?;
        let st = self.ty(scrut);
        if !st.is_int() {
            self.err(m.expr.span(), format!("`match` works on integers, found `{}`", st.name()));
            return Err(());
        }
        let mut arms = Vec::new();
        let mut default = None;
        for (k, arm) in m.arms.iter().enumerate() {
            if let Some((i, _)) = &arm.guard {
                self.err_help(i.span(), "match guards are not part of the walk language", "use `if` inside the arm");
                return Err(());
            }
            let mut values = Vec::new();
            let pats: Vec<&syn::Pat> = match &arm.pat {
                syn::Pat::Or(o) => o.cases.iter().collect(),
                p => vec![p],
            };
            let mut wild = false;
            for p in pats {
                match p {
                    syn::Pat::Wild(_) => wild = true,
                    syn::Pat::Lit(l) => match self.literal(&l.lit, Some(st), l.span(), false) {
                        Ok(h) => values.push(h),
                        Err(()) => return Err(()),
                    },
                    other => {
                        self.err_help(
                            other.span(),
                            "match arms are integer literals, `a | b`, or `_`",
                            "ranges and bindings are not supported",
                        );
                        return Err(());
                    }
                }
            }
            let body = self.expr(&arm.body, env, hint)?;
            if wild {
                if k + 1 != m.arms.len() {
                    self.err(arm.pat.span(), "`_` must be the last arm");
                    return Err(());
                }
                default = Some(body);
            } else {
                arms.push((values, body, arm.span()));
            }
        }
        let Some(mut acc) = default else {
            self.err_help(m.span(), "this `match` does not cover every value", "add a last arm `_ => ...`");
            return Err(());
        };
        for (values, body, span) in arms.into_iter().rev() {
            let mut cond: Option<Handle<Expr>> = None;
            for v in values {
                let eq = self.push(Expr::Binary { op: BinaryOp::Eq, lhs: scrut, rhs: v }, Scalar::Bool, span)?;
                cond = Some(match cond {
                    None => eq,
                    Some(c) => self.push(Expr::Binary { op: BinaryOp::Or, lhs: c, rhs: eq }, Scalar::Bool, span)?,
                });
            }
            acc = self.select(cond.expect("an arm has a pattern"), body, acc, span)?;
        }
        Ok(acc)
    }

    fn binary_typed(&mut self, op: BinaryOp, l: Handle<Expr>, r: Handle<Expr>, span: Span) -> Lowered {
        let (a, b) = (self.ty(l), self.ty(r));
        if a != b {
            self.err_help(
                span,
                format!("mismatched types: `{}` {} `{}`", a.name(), op.symbol(), b.name()),
                "convert one side with `as`, e.g. `x as f32`",
            );
            return Err(());
        }
        if op.is_comparison() {
            if a == Scalar::Bool && !matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
                self.err(span, "`bool` values can only be compared with == and !=");
                return Err(());
            }
            return self.push(Expr::Binary { op, lhs: l, rhs: r }, Scalar::Bool, span);
        }
        if a == Scalar::Bool {
            self.err_help(span, format!("`{}` does not apply to `bool`", op.symbol()), "use && and || for conditions");
            return Err(());
        }
        self.push(Expr::Binary { op, lhs: l, rhs: r }, a, span)
    }

    fn path(&mut self, p: &syn::ExprPath, env: &Env) -> Lowered {
        let span = p.span();
        let Some(ident) = p.path.get_ident() else {
            self.err_help(span, "paths are not part of the walk language", "refer to locals, hyperparameters or `NO_NODE`");
            return Err(());
        };
        let name = ident.to_string();
        if let Some(i) = env.find(&name) {
            return Ok(env.0[i].value);
        }
        if let Some((i, q)) = self.params.iter().enumerate().find(|(_, q)| q.name == name) {
            return match q.ty {
                ParamType::Scalar(t) => self.push(Expr::Param(i), t, span),
                ParamType::Array(..) => {
                    self.err_help(span, format!("`{name}` is an array"), format!("index it: `{name}[i]`"));
                    Err(())
                }
            };
        }
        if name == "NO_NODE" {
            return self.push(Expr::Literal(Literal::Int(u32::MAX as i64, Scalar::U32)), Scalar::U32, span);
        }
        if name == self.step {
            self.err_help(
                span,
                format!("`{name}` is the step, not a value"),
                format!("read it with an accessor: `{name}.weight()`, `{name}.dst()`, `{name}.prev()`, …"),
            );
            return Err(());
        }
        self.err(span, format!("cannot find `{name}` in this walk"));
        Err(())
    }

    fn method(&mut self, m: &syn::ExprMethodCall, env: &Env, hint: Option<Scalar>) -> Lowered {
        let span = m.span();
        let name = m.method.to_string();
        if m.turbofish.is_some() {
            self.err(m.method.span(), "generic method calls are not part of the walk language");
            return Err(());
        }
        let on_step = matches!(&*m.receiver, syn::Expr::Path(p) if p.path.is_ident(&self.step));
        if on_step {
            if let Some(f) = StepField::ALL.iter().copied().find(|f| f.signature().0 == name) {
                if !m.args.is_empty() {
                    self.err(m.args.span(), format!("`{}.{name}()` takes no arguments", self.step));
                    return Err(());
                }
                return self.push(Expr::Step(f), f.signature().1, span);
            }
            if name == "node_prop" {
                return self.node_prop(m, env);
            }
            let (func, arity) = match name.as_str() {
                "has_edge" => (Builtin::HasEdge, 2),
                "degree" => (Builtin::Degree, 1),
                _ => {
                    let accessors: Vec<&str> = StepField::ALL.iter().map(|f| f.signature().0).collect();
                    self.err_help(
                        m.method.span(),
                        format!("`{}` has no method `{name}`", self.step),
                        format!("the step has {}(), has_edge(u, v), degree(v) and node_prop(\"name\", v)", accessors.join("(), ")),
                    );
                    return Err(());
                }
            };
            if m.args.len() != arity {
                self.err(m.method.span(), format!("`{name}` takes {arity} argument{}", if arity == 1 { "" } else { "s" }));
                return Err(());
            }
            let mut args = Vec::new();
            for a in &m.args {
                let h = self.expr(a, env, Some(Scalar::U32))?;
                if self.ty(h) != Scalar::U32 {
                    let t = self.ty(h).name();
                    self.err_help(
                        a.span(),
                        format!("`{name}` takes node ids (`u32`), found `{t}`"),
                        "node ids come from cur(), prev(), start() or dst()",
                    );
                    return Err(());
                }
                args.push(h);
            }
            let ty = if func == Builtin::HasEdge { Scalar::Bool } else { Scalar::U32 };
            return self.push(Expr::Call { func, args }, ty, span);
        }
        let (func, arity) = match name.as_str() {
            "min" => (Builtin::Min, 1),
            "max" => (Builtin::Max, 1),
            "abs" => (Builtin::Abs, 0),
            "exp" => (Builtin::Exp, 0),
            "ln" => (Builtin::Ln, 0),
            "sqrt" => (Builtin::Sqrt, 0),
            "powf" => (Builtin::Powf, 1),
            _ => {
                self.err_help(m.method.span(), format!("unknown method `{name}`"), "numbers have min, max, abs, exp, ln, sqrt and powf");
                return Err(());
            }
        };
        if m.args.len() != arity {
            self.err(m.method.span(), format!("`{name}` takes {arity} argument{}", if arity == 1 { "" } else { "s" }));
            return Err(());
        }
        let recv = if is_literal(&m.receiver) && arity == 1 {
            let a = self.expr(&m.args[0], env, hint)?;
            let t = self.ty(a);
            let r = self.expr(&m.receiver, env, Some(t))?;
            return self.builtin(func, vec![r, a], span);
        } else {
            self.expr(&m.receiver, env, hint)?
        };
        let t = self.ty(recv);
        let mut args = vec![recv];
        for a in &m.args {
            args.push(self.expr(a, env, Some(t))?);
        }
        self.builtin(func, args, span)
    }

    fn node_prop(&mut self, m: &syn::ExprMethodCall, env: &Env) -> Lowered {
        let span = m.span();
        let name = match m.args.first() {
            Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })) if m.args.len() == 2 => s.value(),
            _ => {
                self.err_help(m.method.span(), "`node_prop` takes a property name and a node", "write `s.node_prop(\"score\", s.dst())`");
                return Err(());
            }
        };
        let node = self.expr(&m.args[1], env, Some(Scalar::U32))?;
        if self.ty(node) != Scalar::U32 {
            let t = self.ty(node).name();
            self.err(m.args[1].span(), format!("`node_prop` takes a node id (`u32`), found `{t}`"));
            return Err(());
        }
        let i = match self.props.iter().position(|p| *p == name) {
            Some(i) => i,
            None => {
                self.props.push(name);
                self.props.len() - 1
            }
        };
        self.push(Expr::Call { func: Builtin::NodeProp(i as u16), args: vec![node] }, Scalar::F32, span)
    }

    fn builtin(&mut self, func: Builtin, args: Vec<Handle<Expr>>, span: Span) -> Lowered {
        let t = self.ty(args[0]);
        if let Some(&b) = args.get(1)
            && self.ty(b) != t
        {
            let bt = self.ty(b).name();
            self.err_help(
                span,
                format!("`{}` needs two values of one type, found `{}` and `{bt}`", func.name(), t.name()),
                "convert one with `as`",
            );
            return Err(());
        }
        let ok = match func {
            Builtin::Min | Builtin::Max => t != Scalar::Bool,
            Builtin::Abs => t.is_float() || t == Scalar::I32,
            _ => t.is_float(),
        };
        if !ok {
            self.err(span, format!("`{}` does not apply to `{}`", func.name(), t.name()));
            return Err(());
        }
        self.push(Expr::Call { func, args }, t, span)
    }
}

fn clone_work<'a>(w: &Work<'a>) -> Work<'a> {
    match w {
        Work::Stmt(s) => Work::Stmt(s),
        Work::Expr(e) => Work::Expr(e),
        Work::Bind(n, h) => Work::Bind(n.clone(), *h),
        Work::Exit(d) => Work::Exit(*d),
    }
}

fn binop(op: &syn::BinOp) -> Option<BinaryOp> {
    Some(match op {
        syn::BinOp::Add(_) => BinaryOp::Add,
        syn::BinOp::Sub(_) => BinaryOp::Sub,
        syn::BinOp::Mul(_) => BinaryOp::Mul,
        syn::BinOp::Div(_) => BinaryOp::Div,
        syn::BinOp::Rem(_) => BinaryOp::Rem,
        syn::BinOp::Eq(_) => BinaryOp::Eq,
        syn::BinOp::Ne(_) => BinaryOp::Ne,
        syn::BinOp::Lt(_) => BinaryOp::Lt,
        syn::BinOp::Le(_) => BinaryOp::Le,
        syn::BinOp::Gt(_) => BinaryOp::Gt,
        syn::BinOp::Ge(_) => BinaryOp::Ge,
        syn::BinOp::And(_) => BinaryOp::And,
        syn::BinOp::Or(_) => BinaryOp::Or,
        _ => return None,
    })
}

fn compound(op: &syn::BinOp) -> Option<BinaryOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinaryOp::Add,
        syn::BinOp::SubAssign(_) => BinaryOp::Sub,
        syn::BinOp::MulAssign(_) => BinaryOp::Mul,
        syn::BinOp::DivAssign(_) => BinaryOp::Div,
        syn::BinOp::RemAssign(_) => BinaryOp::Rem,
        _ => return None,
    })
}
