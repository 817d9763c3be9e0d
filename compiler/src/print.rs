//! Text forms of the IR: an SSA listing (what `wayfarer explain` prints and the golden files
//! pin) and inline formulas (for bounds and estimates).

use crate::ir::*;
use std::fmt::Write as _;

fn literal(l: &Literal) -> String {
    match *l {
        Literal::Float(v, t) if v.is_infinite() => format!("{}inf_{}", if v < 0.0 { "-" } else { "" }, t.name()),
        Literal::Float(v, t) => {
            let s = if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.1}") } else { format!("{v}") };
            format!("{s}{}", t.name())
        }
        Literal::Int(v, t) if t == Scalar::U32 && v == u32::MAX as i64 => "NO_NODE".to_string(),
        Literal::Int(v, t) => format!("{v}{}", t.name()),
        Literal::Bool(b) => b.to_string(),
    }
}

/// The handles reachable from the result, in arena order (operands first).
pub fn live(f: &Program) -> Vec<Handle<Expr>> {
    live_in(&f.exprs, &[f.result])
}

/// The handles of `exprs` reachable from `roots`, in arena order (operands first).
pub fn live_in(exprs: &Arena<Expr>, roots: &[Handle<Expr>]) -> Vec<Handle<Expr>> {
    let mut seen = vec![false; exprs.len()];
    let mut stack = roots.to_vec();
    while let Some(h) = stack.pop() {
        if !std::mem::replace(&mut seen[h.index()], true) {
            stack.extend(exprs.get(h).operands());
        }
    }
    exprs.iter().map(|(h, _)| h).filter(|h| seen[h.index()]).collect()
}

/// SSA lines of the live part of one arena, renumbered densely; returns the numbering.
fn ssa(out: &mut String, f: &Program, exprs: &Arena<Expr>, types: &[Scalar], roots: &[Handle<Expr>]) -> Vec<usize> {
    let order = live_in(exprs, roots);
    let mut number = vec![usize::MAX; exprs.len()];
    for (i, h) in order.iter().enumerate() {
        number[h.index()] = i;
    }
    let r = |h: &Handle<Expr>| format!("%{}", number[h.index()]);
    for h in &order {
        let rhs = match exprs.get(*h) {
            Expr::Literal(l) => literal(l),
            Expr::Param(i) => format!("param {}", f.params[*i].name),
            Expr::ParamIndex { param, index } => format!("{}[{}]", f.params[*param].name, r(index)),
            Expr::Step(s) => format!("step.{}()", s.signature().0),
            Expr::Unary { op: UnaryOp::Neg, arg } => format!("-{}", r(arg)),
            Expr::Unary { op: UnaryOp::Not, arg } => format!("!{}", r(arg)),
            Expr::Binary { op, lhs, rhs } => format!("{} {} {}", r(lhs), op.symbol(), r(rhs)),
            Expr::Select { cond, then, other } => format!("select {} ? {} : {}", r(cond), r(then), r(other)),
            Expr::Call { func, args } => format!("{}({})", func.name(), args.iter().map(r).collect::<Vec<_>>().join(", ")),
            Expr::Cast { expr, to } => format!("{} as {}", r(expr), to.name()),
            Expr::Node(q) => node_query(q, &|h| r(&h)),
            Expr::State(i) => format!("state {}", f.state[*i].name),
            Expr::Draw(k) => format!("draw {k}"),
        };
        let _ = writeln!(out, "  {} = {rhs} : {}", r(h), types[h.index()].name());
    }
    number
}

/// The SSA listing of a walk: one line per live expression, renumbered densely; for the impl
/// form, the state and each routine follow `get_weight`.
pub fn listing(f: &Program) -> String {
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| match p.ty {
            ParamType::Scalar(s) => format!("{}: {}", p.name, s.name()),
            ParamType::Array(s, n) => format!("{}: [{}; {n}]", p.name, s.name()),
        })
        .collect();
    let mut out = format!("walk {}({}) -> f32\n", f.name, params.join(", "));
    let number = ssa(&mut out, f, &f.exprs, &f.types, &[f.result]);
    let _ = writeln!(out, "  return %{}", number[f.result.index()]);
    if f.form == Form::Impl {
        let fields: Vec<String> = f.state.iter().map(|s| format!("{}: {}", s.name, s.ty.name())).collect();
        let _ = writeln!(out, "state {{ {} }}", fields.join(", "));
        for (name, r) in [("init", &f.init), ("update", &f.update), ("stop", &f.stop)] {
            let Some(r) = r else { continue };
            let _ = writeln!(out, "{name} (draws {})", r.draws);
            let number = ssa(&mut out, f, &r.exprs, &r.types, &r.outputs);
            let n = |h: &Handle<Expr>| format!("%{}", number[h.index()]);
            if name == "stop" {
                let _ = writeln!(out, "  return {}", n(&r.outputs[0]));
                continue;
            }
            for (s, h) in f.state.iter().zip(&r.outputs) {
                let _ = writeln!(out, "  state.{} <- {}", s.name, n(h));
            }
            if name == "update" {
                let k = f.state.len();
                let _ = writeln!(out, "  cur <- {}", n(&r.outputs[k]));
                let _ = writeln!(out, "  prev <- {}", n(&r.outputs[k + 1]));
            }
        }
    }
    out
}

fn node_query(q: &NodeQuery, sub: &dyn Fn(Handle<Expr>) -> String) -> String {
    match q {
        NodeQuery::WeightMax => "h_max(cur)".into(),
        NodeQuery::WeightMin => "h_min(cur)".into(),
        NodeQuery::WeightSum => "h_sum(cur)".into(),
        NodeQuery::Degree => "degree(cur)".into(),
        NodeQuery::BackWeight => "h_back(cur, prev)".into(),
        NodeQuery::BackCount => "count_back(cur, prev)".into(),
        NodeQuery::LabelMax(l) => format!("h_max_label(cur, {})", sub(*l)),
        NodeQuery::LabelSum(l) => format!("h_sum_label(cur, {})", sub(*l)),
        NodeQuery::LabelCount(l) => format!("count_label(cur, {})", sub(*l)),
        NodeQuery::NeighborDegreeMax => "nbr_degree_max(cur)".into(),
        NodeQuery::NeighborDegreeMin => "nbr_degree_min(cur)".into(),
    }
}

/// An expression as one inline formula, e.g. `select(step.step() == 0u32, step.weight(), ...)`.
pub fn formula(f: &Program, h: Handle<Expr>) -> String {
    formula_in(&f.exprs, &f.params, &f.state, h)
}

/// A formula of an expression in any arena (weight functions and derived expressions).
pub fn formula_in(exprs: &Arena<Expr>, params: &[Param], state: &[StateField], h: Handle<Expr>) -> String {
    let go = |x: &Handle<Expr>| formula_in(exprs, params, state, *x);
    match exprs.get(h) {
        Expr::Literal(l) => literal(l),
        Expr::Param(i) => params[*i].name.clone(),
        Expr::ParamIndex { param, index } => format!("{}[{}]", params[*param].name, go(index)),
        Expr::Step(s) => format!("{}()", s.signature().0),
        Expr::Unary { op: UnaryOp::Neg, arg } => format!("-({})", go(arg)),
        Expr::Unary { op: UnaryOp::Not, arg } => format!("!({})", go(arg)),
        Expr::Binary { op, lhs, rhs } => format!("({} {} {})", go(lhs), op.symbol(), go(rhs)),
        Expr::Select { cond, then, other } => format!("if {} {{ {} }} else {{ {} }}", go(cond), go(then), go(other)),
        Expr::Call { func, args } => format!("{}({})", func.name(), args.iter().map(go).collect::<Vec<_>>().join(", ")),
        Expr::Cast { expr, to } => format!("({} as {})", go(expr), to.name()),
        Expr::Node(q) => node_query(q, &|x| go(&x)),
        Expr::State(i) => format!("state.{}", state[*i].name),
        Expr::Draw(k) => format!("uniform#{k}"),
    }
}

/// The analysis table of a walk: flags, per-node arrays, `B` and `Ŝ` as formulas, and the
/// reason for a fallback.
pub fn analysis(f: &Program, info: &crate::analysis::WalkInfo) -> String {
    let d = &info.derived;
    let mut out = String::new();
    let _ = writeln!(out, "paths:         {}", info.paths);
    let _ = writeln!(out, "possible zero: {}", info.possible_zero);
    let _ = writeln!(out, "exact sum:     {}", info.sum_exact);
    let _ = writeln!(out, "arrays:        {}", if info.arrays.is_empty() { "none".to_string() } else { info.arrays.join("; ") });
    match info.bound {
        Some(b) => {
            let _ = writeln!(out, "bound B:       {:?}  {}", info.bound_scope, formula_in(&d.exprs, &f.params, &f.state, b));
        }
        None => {
            let _ = writeln!(out, "bound B:       none: eRVS only ({})", info.fallback.as_deref().unwrap_or("unknown reason"));
        }
    }
    let _ = writeln!(out, "estimate Ŝ:    {:?}  {}", info.estimate_scope, formula_in(&d.exprs, &f.params, &f.state, info.sum_estimate));
    out
}
