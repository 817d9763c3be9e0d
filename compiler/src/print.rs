//! Text forms of the IR: an SSA listing (what `wayfarer explain` prints and the golden files
//! pin) and inline formulas (for bounds and estimates).

use crate::ir::*;
use std::fmt::Write as _;

fn literal(l: &Literal) -> String {
    match *l {
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
pub fn live(f: &WeightFunction) -> Vec<Handle<Expr>> {
    let mut seen = vec![false; f.exprs.len()];
    let mut stack = vec![f.result];
    while let Some(h) = stack.pop() {
        if std::mem::replace(&mut seen[h.index()], true) {
            continue;
        }
        match f.exprs.get(h) {
            Expr::Literal(_) | Expr::Param(_) | Expr::Step(_) => {}
            Expr::ParamIndex { index, .. } => stack.push(*index),
            Expr::Unary { arg, .. } => stack.push(*arg),
            Expr::Binary { lhs, rhs, .. } => stack.extend([*lhs, *rhs]),
            Expr::Select { cond, then, other } => stack.extend([*cond, *then, *other]),
            Expr::Call { args, .. } => stack.extend(args.iter().copied()),
            Expr::Cast { expr, .. } => stack.push(*expr),
        }
    }
    f.exprs.iter().map(|(h, _)| h).filter(|h| seen[h.index()]).collect()
}

/// The SSA listing of a weight function: one line per live expression, renumbered densely.
pub fn listing(f: &WeightFunction) -> String {
    let order = live(f);
    let mut number = vec![usize::MAX; f.exprs.len()];
    for (i, h) in order.iter().enumerate() {
        number[h.index()] = i;
    }
    let r = |h: &Handle<Expr>| format!("%{}", number[h.index()]);
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| match p.ty {
            ParamType::Scalar(s) => format!("{}: {}", p.name, s.name()),
            ParamType::Array(s, n) => format!("{}: [{}; {n}]", p.name, s.name()),
        })
        .collect();
    let mut out = format!("walk {}({}) -> f32\n", f.name, params.join(", "));
    for h in &order {
        let rhs = match f.exprs.get(*h) {
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
        };
        let _ = writeln!(out, "  {} = {rhs} : {}", r(h), f.ty(*h).name());
    }
    let _ = writeln!(out, "  return {}", r(&f.result));
    out
}

/// An expression as one inline formula, e.g. `select(step.step() == 0u32, step.weight(), ...)`.
pub fn formula(f: &WeightFunction, h: Handle<Expr>) -> String {
    let go = |x: &Handle<Expr>| formula(f, *x);
    match f.exprs.get(h) {
        Expr::Literal(l) => literal(l),
        Expr::Param(i) => f.params[*i].name.clone(),
        Expr::ParamIndex { param, index } => format!("{}[{}]", f.params[*param].name, go(index)),
        Expr::Step(s) => format!("{}()", s.signature().0),
        Expr::Unary { op: UnaryOp::Neg, arg } => format!("-({})", go(arg)),
        Expr::Unary { op: UnaryOp::Not, arg } => format!("!({})", go(arg)),
        Expr::Binary { op, lhs, rhs } => format!("({} {} {})", go(lhs), op.symbol(), go(rhs)),
        Expr::Select { cond, then, other } => format!("if {} {{ {} }} else {{ {} }}", go(cond), go(then), go(other)),
        Expr::Call { func, args } => format!("{}({})", func.name(), args.iter().map(go).collect::<Vec<_>>().join(", ")),
        Expr::Cast { expr, to } => format!("({} as {})", go(expr), to.name()),
    }
}
