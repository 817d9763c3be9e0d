//! Method calls: the step's accessors, graph queries (`has_edge`, `degree`, `node_prop`),
//! math builtins, and the walker's moves (`restart`, `teleport`).

use super::*;
use proc_macro2::Span;
use syn::spanned::Spanned;

impl Lowerer {
    pub(super) fn method(&mut self, m: &syn::ExprMethodCall, env: &Env, hint: Option<Scalar>) -> Lowered {
        let span = m.span();
        let name = m.method.to_string();
        if m.turbofish.is_some() {
            self.err(m.method.span(), "generic method calls are not part of the walk language");
            return Err(());
        }
        if !self.rng_arg.is_empty() && matches!(&*m.receiver, syn::Expr::Path(p) if p.path.is_ident(&self.rng_arg)) {
            if self.mode == Mode::Weight {
                return Err(()); // the signature's error covers it
            }
            if name != "uniform" || !m.args.is_empty() {
                self.err_help(
                    m.method.span(),
                    format!("`{}` has no method `{name}` in the walk language", self.rng_arg),
                    format!("draw a uniform f64 in (0, 1) with `{}.uniform()`", self.rng_arg),
                );
                return Err(());
            }
            let k = env.1.get();
            env.1.set(k + 1);
            self.draws = self.draws.max(k + 1);
            return self.push_new(Expr::Draw(k), Scalar::F64, span);
        }
        let on_step = matches!(&*m.receiver, syn::Expr::Path(p) if p.path.is_ident(&self.step));
        if on_step {
            if let Some(f) = StepField::ALL.iter().copied().find(|f| f.signature().0 == name) {
                if !m.args.is_empty() {
                    self.err(m.args.span(), format!("`{}.{name}()` takes no arguments", self.step));
                    return Err(());
                }
                if self.mode == Mode::Init && f.is_per_edge() {
                    self.err_help(
                        m.method.span(),
                        format!("`init` runs before the first move: there is no edge for `{name}()`"),
                        "read edges in `get_weight`, or the edge just taken in `update`",
                    );
                    return Err(());
                }
                return self.push(Expr::Step(f), f.signature().1, span);
            }
            if name == "restart" || name == "teleport" {
                self.err_help(m.method.span(), format!("`{name}` moves the walker and has no value"), "call it as a statement in `update`");
                return Err(());
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

    pub(super) fn node_prop(&mut self, m: &syn::ExprMethodCall, env: &Env) -> Lowered {
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

    /// Whether a statement is `s.restart()` or `s.teleport(v)`.
    pub(super) fn is_move(&self, m: &syn::ExprMethodCall) -> bool {
        matches!(&*m.receiver, syn::Expr::Path(p) if p.path.is_ident(&self.step)) && (m.method == "restart" || m.method == "teleport")
    }

    /// `s.restart()` (back to the start node) or `s.teleport(v)`: the walker continues from
    /// there, with no previous node.
    pub(super) fn move_walker(&mut self, m: &syn::ExprMethodCall, env: &mut Env) {
        let name = m.method.to_string();
        if self.mode != Mode::Update {
            self.err_help(
                m.method.span(),
                format!("`{}` cannot move the walker", self.mode.name()),
                "restarts and teleports belong in `update`",
            );
            return;
        }
        let target = if name == "restart" {
            if !m.args.is_empty() {
                self.err(m.args.span(), "`restart()` takes no arguments");
                return;
            }
            self.push(Expr::Step(StepField::Start), Scalar::U32, m.span())
        } else {
            if m.args.len() != 1 {
                self.err_help(m.method.span(), "`teleport` takes one node", "write `s.teleport(v)`");
                return;
            }
            let v = self.expr(&m.args[0], env, Some(Scalar::U32));
            if let Ok(v) = v
                && self.ty(v) != Scalar::U32
            {
                let t = self.ty(v).name();
                self.err(m.args[0].span(), format!("`teleport` takes a node id (`u32`), found `{t}`"));
                return;
            }
            v
        };
        let Ok(target) = target else { return };
        let Ok(none) = self.push(Expr::Literal(Literal::Int(u32::MAX as i64, Scalar::U32)), Scalar::U32, m.span()) else { return };
        let i = env.find(NEW_CUR).expect("seeded in update");
        if i < self.value_floor {
            self.err_help(m.span(), "the walker cannot be moved inside a value expression", "use an `if` statement");
            return;
        }
        env.0[i].value = target;
        let j = env.find(NEW_PREV).expect("seeded in update");
        env.0[j].value = none;
    }

    pub(super) fn builtin(&mut self, func: Builtin, args: Vec<Handle<Expr>>, span: Span) -> Lowered {
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
