//! Expressions: literals, operators, conditions, `match`, paths and fields, type checking.

use super::*;
use proc_macro2::Span;
use syn::spanned::Spanned;

impl Lowerer {
    pub(super) fn cond(&mut self, e: &syn::Expr, env: &Env) -> Lowered {
        let c = self.expr(e, env, Some(Scalar::Bool))?;
        if self.ty(c) != Scalar::Bool {
            let t = self.ty(c).name();
            self.err(e.span(), format!("a condition must be `bool`, found `{t}`"));
            return Err(());
        }
        Ok(c)
    }

    pub(super) fn select(&mut self, cond: Handle<Expr>, then: Handle<Expr>, other: Handle<Expr>, span: Span) -> Lowered {
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

    pub(super) fn literal(&mut self, lit: &syn::Lit, hint: Option<Scalar>, span: Span, negate: bool) -> Lowered {
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

    pub(super) fn expr(&mut self, e: &syn::Expr, env: &Env, hint: Option<Scalar>) -> Lowered {
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
            syn::Expr::Field(fe) => self.field(fe, env),
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
                let name = match &*ix.expr {
                    syn::Expr::Path(p) if !self.impl_form => p.path.get_ident().map(|i| i.to_string()).unwrap_or_default(),
                    syn::Expr::Field(fe) if self.impl_form && is_self(&fe.base) => member_name(&fe.member),
                    _ => {
                        let how = if self.impl_form { "`self.name[i]`" } else { "`name[i]`" };
                        self.err_help(ix.expr.span(), "only array hyperparameters can be indexed", format!("write {how}"));
                        return Err(());
                    }
                };
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

    pub(super) fn value_block(&mut self, stmts: &[syn::Stmt], end: Span, env: &Env, hint: Option<Scalar>) -> Lowered {
        let work: Vec<Work> = stmts.iter().map(Work::Stmt).collect();
        let floor = std::mem::replace(&mut self.value_floor, env.0.len());
        let v = self.seq(&work, env.clone(), end, true, hint).map(|v| v[0]);
        self.value_floor = floor;
        v
    }

    pub(super) fn match_expr(&mut self, m: &syn::ExprMatch, env: &Env, hint: Option<Scalar>) -> Lowered {
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

    pub(super) fn binary_typed(&mut self, op: BinaryOp, l: Handle<Expr>, r: Handle<Expr>, span: Span) -> Lowered {
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

    pub(super) fn path(&mut self, p: &syn::ExprPath, env: &Env) -> Lowered {
        let span = p.span();
        if p.qself.is_none() && p.path.segments.len() == 2 {
            let (ty, c) = (p.path.segments[0].ident.to_string(), p.path.segments[1].ident.to_string());
            let lit = match (ty.as_str(), c.as_str()) {
                ("f32", "INFINITY") => Some(Literal::Float(f64::INFINITY, Scalar::F32)),
                ("f32", "NEG_INFINITY") => Some(Literal::Float(f64::NEG_INFINITY, Scalar::F32)),
                ("f32", "MAX") => Some(Literal::Float(f32::MAX as f64, Scalar::F32)),
                ("f32", "MIN") => Some(Literal::Float(f32::MIN as f64, Scalar::F32)),
                ("f64", "INFINITY") => Some(Literal::Float(f64::INFINITY, Scalar::F64)),
                ("f64", "NEG_INFINITY") => Some(Literal::Float(f64::NEG_INFINITY, Scalar::F64)),
                ("f64", "MAX") => Some(Literal::Float(f64::MAX, Scalar::F64)),
                ("f64", "MIN") => Some(Literal::Float(f64::MIN, Scalar::F64)),
                ("u32", "MAX") => Some(Literal::Int(u32::MAX as i64, Scalar::U32)),
                ("i32", "MAX") => Some(Literal::Int(i32::MAX as i64, Scalar::I32)),
                ("i32", "MIN") => Some(Literal::Int(i32::MIN as i64, Scalar::I32)),
                _ => None,
            };
            if let Some(l) = lit {
                let t = match l {
                    Literal::Float(_, t) | Literal::Int(_, t) => t,
                    Literal::Bool(_) => Scalar::Bool,
                };
                return self.push(Expr::Literal(l), t, span);
            }
        }
        let Some(ident) = p.path.get_ident() else {
            self.err_help(
                span,
                "paths are not part of the walk language",
                "refer to locals, hyperparameters, `NO_NODE`, or constants such as `f64::INFINITY`, `f32::MAX`, `u32::MAX`",
            );
            return Err(());
        };
        let name = ident.to_string();
        if let Some(i) = env.find(&name) {
            return Ok(env.0[i].value);
        }
        if name == "self" {
            self.err_help(span, "`self` is not a value", "read a hyperparameter with `self.name`");
            return Err(());
        }
        if self.impl_form && self.params.iter().any(|q| q.name == name) {
            self.err_help(span, format!("cannot find `{name}` in this walk"), format!("hyperparameters are fields: write `self.{name}`"));
            return Err(());
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

    /// `state.field` as the key of its binding; reports an error and returns `None` otherwise.
    pub(super) fn state_key(&mut self, fe: &syn::ExprField) -> Option<String> {
        let member = member_name(&fe.member);
        if is_self(&fe.base) {
            self.err_help(
                fe.span(),
                format!("cannot assign to hyperparameter `self.{member}`"),
                "hyperparameters are read-only; copy into a `let mut` local",
            );
            return None;
        }
        let on_state = !self.state_arg.is_empty() && matches!(&*fe.base, syn::Expr::Path(p) if p.path.is_ident(&self.state_arg));
        if !on_state {
            self.err_help(
                fe.span(),
                "only state fields can be assigned this way",
                "state fields are `st.name`, with `st` the state argument",
            );
            return None;
        }
        if !self.state.iter().any(|f| f.name == member) {
            self.err_help(fe.member.span(), format!("the state has no field `{member}`"), self.state_help());
            return None;
        }
        Some(format!("{STATE}{member}"))
    }

    pub(super) fn state_help(&self) -> String {
        if self.state.is_empty() {
            "declare state fields in the attribute: `#[walk(state(name: f64))]`".into()
        } else {
            let names: Vec<String> = self.state.iter().map(|f| format!("`{}: {}`", f.name, f.ty.name())).collect();
            format!("the state fields are {}", names.join(", "))
        }
    }

    /// `self.param` or `state.field` as a value.
    pub(super) fn field(&mut self, fe: &syn::ExprField, env: &Env) -> Lowered {
        let span = fe.span();
        let member = member_name(&fe.member);
        if is_self(&fe.base) && !self.impl_form {
            let help = if self.params.iter().any(|q| q.name == member) {
                format!("in a `fn` walk, hyperparameters are the function's parameters: write `{member}`")
            } else {
                "in a `fn` walk, hyperparameters are the function's parameters after `s: &Step`".to_string()
            };
            self.err_help(fe.base.span(), "`self` exists only in walks written as an `impl`", help);
            return Err(());
        }
        if is_self(&fe.base) {
            let found = self.params.iter().enumerate().find(|(_, q)| q.name == member).map(|(i, q)| (i, q.ty));
            return match found {
                Some((i, ParamType::Scalar(t))) => self.push(Expr::Param(i), t, span),
                Some((_, ParamType::Array(..))) => {
                    self.err_help(span, format!("`self.{member}` is an array"), format!("index it: `self.{member}[i]`"));
                    Err(())
                }
                None => {
                    let help = if self.params.is_empty() {
                        "declare hyperparameters in the attribute: `#[walk(params(alpha: f32))]`".to_string()
                    } else {
                        let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                        format!("the hyperparameters are {}", names.join(", "))
                    };
                    self.err_help(fe.member.span(), format!("no hyperparameter `{member}`"), help);
                    Err(())
                }
            };
        }
        let on_state = !self.state_arg.is_empty() && matches!(&*fe.base, syn::Expr::Path(p) if p.path.is_ident(&self.state_arg));
        if on_state {
            return match env.find(&format!("{STATE}{member}")) {
                Some(i) => Ok(env.0[i].value),
                None => {
                    let help = self.state_help();
                    self.err_help(fe.member.span(), format!("the state has no field `{member}`"), help);
                    Err(())
                }
            };
        }
        self.err_help(
            span,
            "field access is not part of the walk language here",
            "fields are hyperparameters (`self.name`, impl form) and state fields (`st.name`)",
        );
        Err(())
    }
}
