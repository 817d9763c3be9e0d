//! Statements: blocks in continuation style, `let`, assignments, `if`/`return` paths, `for`
//! unrolling.

use super::*;
use proc_macro2::Span;
use syn::spanned::Spanned;

impl Lowerer {
    pub(super) fn body(&mut self, block: &syn::Block) -> Outs {
        self.body_in(block, Env::default())
    }

    pub(super) fn body_in(&mut self, block: &syn::Block, env: Env) -> Outs {
        let work: Vec<Work> = block.stmts.iter().map(Work::Stmt).collect();
        let end = block.brace_token.span.close();
        let hint = self.result_type();
        self.seq(&work, env, end, false, hint)
    }

    /// The type of the function's value, if it has one.
    pub(super) fn result_type(&self) -> Option<Scalar> {
        match self.mode {
            Mode::Weight => Some(Scalar::F32),
            Mode::Stop => Some(Scalar::Bool),
            Mode::Init | Mode::Update => None,
        }
    }

    /// The results of an `init` / `update` path: the state fields, then (update) cur and prev.
    pub(super) fn effects(&self, env: &Env) -> Vec<Handle<Expr>> {
        let mut out: Vec<Handle<Expr>> =
            self.state.iter().map(|f| env.0[env.find(&format!("{STATE}{}", f.name)).expect("seeded")].value).collect();
        if self.mode == Mode::Update {
            out.push(env.0[env.find(NEW_CUR).expect("seeded")].value);
            out.push(env.0[env.find(NEW_PREV).expect("seeded")].value);
        }
        out
    }

    /// Lowers a sequence of statements to the value it produces. `value_block`: inside a
    /// value-position block, where `return` is not allowed.
    pub(super) fn seq(&mut self, work: &[Work], mut env: Env, end: Span, value_block: bool, hint: Option<Scalar>) -> Outs {
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
        match self.mode {
            _ if value_block => self.err_help(end, "this block has no value", "end it with an expression"),
            Mode::Init | Mode::Update => return Ok(self.effects(&env)),
            Mode::Weight => self.err_help(end, "the weight is missing here", "end the function with an `f32` expression, or `return` one"),
            Mode::Stop => self.err_help(end, "the decision is missing here", "end `stop` with a `bool` expression, or `return` one"),
        }
        Err(())
    }

    /// A statement-position expression. Returns `Some(value)` if it ends the path.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn stmt_expr(
        &mut self,
        e: &syn::Expr,
        tail: bool,
        rest: &[Work],
        env: &mut Env,
        end: Span,
        value_block: bool,
        hint: Option<Scalar>,
    ) -> Option<Outs> {
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
                Some(match (&r.expr, self.mode.effects()) {
                    (None, true) => Ok(self.effects(env)),
                    (Some(v), true) => {
                        self.err_help(v.span(), format!("`{}` returns nothing", self.mode.name()), "write `return;`");
                        Err(())
                    }
                    (Some(v), false) => self.expr(v, env, self.result_type()).map(|v| vec![v]),
                    (None, false) if self.mode == Mode::Stop => {
                        self.err(r.span(), "`return` needs the decision, e.g. `return false;`");
                        Err(())
                    }
                    (None, false) => {
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
                let t = self.seq(&then, env.branch(value_block), end, value_block, hint);
                let f = self.seq(&other, env.branch(value_block), end, value_block, hint);
                let (Ok(cond), Ok(t), Ok(f)) = (cond, t, f) else { return Some(Err(())) };
                let mut out = Vec::with_capacity(t.len());
                for (a, b) in t.into_iter().zip(f) {
                    match self.select(cond, a, b, x.span()) {
                        Ok(v) => out.push(v),
                        Err(()) => return Some(Err(())),
                    }
                }
                Some(Ok(out))
            }
            syn::Expr::Block(b) if b.label.is_none() => {
                let mut w: Vec<Work> = b.block.stmts.iter().map(Work::Stmt).collect();
                w.push(Work::Exit(env.0.len()));
                w.extend(rest.iter().map(clone_work));
                Some(self.seq(&w, env.branch(value_block), end, value_block, hint))
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
                Some(self.seq(&w, env.branch(value_block), end, value_block, hint))
            }
            syn::Expr::Assign(a) => {
                self.assign(&a.left, None, &a.right, env, a.span());
                None
            }
            syn::Expr::Binary(b) if compound(&b.op).is_some() => {
                self.assign(&b.left, compound(&b.op), &b.right, env, b.span());
                None
            }
            syn::Expr::MethodCall(m) if self.is_move(m) => {
                self.move_walker(m, env);
                None
            }
            _ if tail && self.mode.effects() && !value_block => {
                self.err_help(
                    e.span(),
                    format!("`{}` returns nothing, but this is a value", self.mode.name()),
                    "assign it to a state field, or end it with `;` if it is not needed",
                );
                None
            }
            _ if tail => {
                let v = self.expr(e, env, hint).map(|v| vec![v]);
                // An expression already reported (`while`, a macro, …) is not also a value
                // that "ends the walk".
                if !only_exits && v.is_ok() {
                    self.err_help(e.span(), "this value ends the walk, but statements follow it", "end it with `;` or move it last");
                }
                Some(v)
            }
            _ => {
                self.err_help(
                    e.span(),
                    "this statement has no effect",
                    "a walk's statements are `let`, assignments to `let mut` locals and state fields, `if`, `for` and `return`",
                );
                None
            }
        }
    }

    pub(super) fn local(&mut self, local: &syn::Local, env: &mut Env) {
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

    pub(super) fn assign(&mut self, left: &syn::Expr, op: Option<BinaryOp>, right: &syn::Expr, env: &mut Env, span: Span) {
        if let syn::Expr::Field(fe) = left {
            let Some(key) = self.state_key(fe) else { return };
            if !self.mode.effects() {
                self.err_help(
                    left.span(),
                    format!("`{}` cannot change the walker's state", self.mode.name()),
                    "state changes belong in `update` (or `init`)",
                );
                return;
            }
            return self.assign_binding(&key, left, op, right, env, span);
        }
        let syn::Expr::Path(p) = left else {
            self.err(left.span(), "only `let mut` locals and state fields can be assigned");
            return;
        };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            self.err(left.span(), "only `let mut` locals and state fields can be assigned");
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
        self.assign_binding(&name, left, op, right, env, span)
    }

    /// Assigns binding `key` (a `let mut` local or a state field).
    pub(super) fn assign_binding(
        &mut self,
        key: &str,
        left: &syn::Expr,
        op: Option<BinaryOp>,
        right: &syn::Expr,
        env: &mut Env,
        span: Span,
    ) {
        let idx = env.find(key).expect("the caller checked");
        let name = key.strip_prefix(STATE).unwrap_or(key);
        if idx < self.value_floor {
            self.err_help(
                left.span(),
                format!("`{name}` cannot be assigned inside a value expression"),
                "the assignment would be lost; use an `if` statement instead of an `if` value",
            );
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
}
