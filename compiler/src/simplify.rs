//! Simplification of derived expressions (bounds `B` and estimates `Ŝ`) before they are
//! printed or lowered: constant folding, dead branches, selects on one condition merged,
//! `max`/`+` with a zero dropped where the other side is known non-negative, and common
//! subexpressions shared.
//!
//! Every rewrite keeps the value, up to the sign of a zero (`max(0, x)` for `x = -0.0`): `B`
//! and `Ŝ` are only compared with and multiplied by non-negative numbers, where `+0` and `-0`
//! behave alike, so the walks do not change. The analysis builds `B` as a running `max` over
//! guarded paths and `Ŝ` as a running sum (`max(max(0, if c { x } else { 0 }), …)`); what is
//! left after this pass is the formula a person would write.

use crate::ir::*;
use std::collections::HashMap;

/// Rebuilds `roots` of `d` simplified, in a new arena; returns it with the new roots.
pub fn simplify(d: &Derived, roots: &[Handle<Expr>]) -> (Derived, Vec<Handle<Expr>>) {
    let mut s = Simplifier::new(d, Vec::new());
    let roots = roots.iter().map(|&r| s.copy(r)).collect();
    (s.out, roots)
}

/// `root` simplified under `facts` (conditions of `d` taken as true or false): one branch of a
/// bound, for printing.
pub fn specialize(d: &Derived, root: Handle<Expr>, facts: &[(Handle<Expr>, bool)]) -> (Derived, Handle<Expr>) {
    let mut s = Simplifier::new(d, facts.to_vec());
    let r = s.copy(root);
    (s.out, r)
}

/// The conditions of selects in `root` that depend on walker values only (no per-node query):
/// the branches a bound is printed by, most used first.
pub fn walker_conditions(d: &Derived, root: Handle<Expr>) -> Vec<Handle<Expr>> {
    let mut per_node = vec![false; d.exprs.len()];
    let mut walker = vec![false; d.exprs.len()];
    for (h, e) in d.exprs.iter() {
        per_node[h.index()] = matches!(e, Expr::Node(_)) || e.operands().iter().any(|o| per_node[o.index()]);
        walker[h.index()] = matches!(e, Expr::Step(_) | Expr::State(_)) || e.operands().iter().any(|o| walker[o.index()]);
    }
    let mut uses: Vec<(Handle<Expr>, usize)> = Vec::new();
    for h in crate::print::live_in(&d.exprs, &[root]) {
        if let Expr::Select { cond, .. } = d.exprs.get(h) {
            let cond = strip_not(d, *cond);
            // Conditions on hyperparameters alone are the same for the whole run: left inline.
            if per_node[cond.index()] || !walker[cond.index()] {
                continue;
            }
            match uses.iter_mut().find(|(c, _)| same(d, *c, cond)) {
                Some(u) => u.1 += 1,
                None => uses.push((cond, 1)),
            }
        }
    }
    uses.sort_by_key(|u| std::cmp::Reverse(u.1));
    uses.into_iter().map(|u| u.0).collect()
}

fn strip_not(d: &Derived, mut h: Handle<Expr>) -> Handle<Expr> {
    while let Expr::Unary { op: UnaryOp::Not, arg } = d.exprs.get(h) {
        h = *arg;
    }
    h
}

/// Structural equality (the analysis may build one condition more than once).
fn same(d: &Derived, a: Handle<Expr>, b: Handle<Expr>) -> bool {
    a == b || canon(d, a) == canon(d, b)
}

/// An expression as text with its operands spelled out (handles print as `%N`).
fn canon(d: &Derived, h: Handle<Expr>) -> String {
    let text = format!("{:?}", d.exprs.get(h));
    let ops = d.exprs.get(h).operands();
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut n = String::new();
        while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            n.push(*d);
            chars.next();
        }
        match ops.iter().find(|o| o.index().to_string() == n) {
            Some(&o) => {
                out.push('(');
                out += &canon(d, o);
                out.push(')');
            }
            None => {
                out.push('%');
                out += &n;
            }
        }
    }
    out
}

/// The two folds the analysis builds `B` and `Ŝ` with.
#[derive(Clone, Copy)]
enum Combine {
    Add,
    Max,
}

struct Simplifier<'a> {
    src: &'a Derived,
    out: Derived,
    /// Source handle → output handle.
    map: Vec<Option<Handle<Expr>>>,
    /// Output expressions by their text, for sharing.
    shared: HashMap<String, Handle<Expr>>,
    /// Output expressions known to be non-negative (and not NaN).
    non_negative: Vec<bool>,
    facts: Vec<(Handle<Expr>, bool)>,
}

impl<'a> Simplifier<'a> {
    fn new(src: &'a Derived, facts: Vec<(Handle<Expr>, bool)>) -> Self {
        Simplifier {
            src,
            out: Derived::default(),
            map: vec![None; src.exprs.len()],
            shared: HashMap::new(),
            non_negative: Vec::new(),
            facts,
        }
    }

    fn fact(&self, h: Handle<Expr>) -> Option<bool> {
        let (h, negated) = {
            let mut h = h;
            let mut n = false;
            while let Expr::Unary { op: UnaryOp::Not, arg } = self.src.exprs.get(h) {
                h = *arg;
                n = !n;
            }
            (h, n)
        };
        self.facts.iter().find(|(c, _)| same(self.src, *c, h)).map(|&(_, v)| v != negated)
    }

    fn copy(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        if let Some(done) = self.map[h.index()] {
            return done;
        }
        let ty = self.src.types[h.index()];
        let r = match self.fact(h) {
            Some(v) if ty == Scalar::Bool => self.emit(Expr::Literal(Literal::Bool(v)), ty),
            _ => {
                let e = self.src.exprs.get(h).clone();
                let e = match e {
                    Expr::ParamIndex { param, index } => Expr::ParamIndex { param, index: self.copy(index) },
                    Expr::Unary { op, arg } => Expr::Unary { op, arg: self.copy(arg) },
                    Expr::Binary { op, lhs, rhs } => Expr::Binary { op, lhs: self.copy(lhs), rhs: self.copy(rhs) },
                    Expr::Select { cond, then, other } => {
                        // Only the branch a known condition takes is copied.
                        let c = self.copy(cond);
                        match self.literal_bool(c) {
                            Some(true) => {
                                let r = self.copy(then);
                                self.map[h.index()] = Some(r);
                                return r;
                            }
                            Some(false) => {
                                let r = self.copy(other);
                                self.map[h.index()] = Some(r);
                                return r;
                            }
                            None => Expr::Select { cond: c, then: self.copy(then), other: self.copy(other) },
                        }
                    }
                    Expr::Call { func, args } => Expr::Call { func, args: args.iter().map(|&a| self.copy(a)).collect() },
                    Expr::Cast { expr, to } => Expr::Cast { expr: self.copy(expr), to },
                    Expr::Node(q) => Expr::Node(match q {
                        NodeQuery::LabelMax(l) => NodeQuery::LabelMax(self.copy(l)),
                        NodeQuery::LabelSum(l) => NodeQuery::LabelSum(self.copy(l)),
                        NodeQuery::LabelCount(l) => NodeQuery::LabelCount(self.copy(l)),
                        other => other,
                    }),
                    leaf => leaf,
                };
                self.rewrite(e, ty)
            }
        };
        self.map[h.index()] = Some(r);
        r
    }

    fn get(&self, h: Handle<Expr>) -> &Expr {
        self.out.exprs.get(h)
    }

    fn literal_bool(&self, h: Handle<Expr>) -> Option<bool> {
        match self.get(h) {
            Expr::Literal(Literal::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    fn is_zero(&self, h: Handle<Expr>) -> bool {
        matches!(self.get(h), Expr::Literal(Literal::Float(v, _)) if *v == 0.0)
    }

    /// One simplification step on an expression whose operands are already simplified.
    fn rewrite(&mut self, e: Expr, ty: Scalar) -> Handle<Expr> {
        match &e {
            Expr::Unary { op: UnaryOp::Not, arg } => {
                if let Some(b) = self.literal_bool(*arg) {
                    return self.emit(Expr::Literal(Literal::Bool(!b)), ty);
                }
                if let Expr::Unary { op: UnaryOp::Not, arg: inner } = self.get(*arg) {
                    return *inner;
                }
            }
            Expr::Binary { op: op @ (BinaryOp::And | BinaryOp::Or), lhs, rhs } => {
                let (l, r) = (self.literal_bool(*lhs), self.literal_bool(*rhs));
                let and = *op == BinaryOp::And;
                match (l, r) {
                    (Some(x), _) if x == and => return *rhs,
                    (_, Some(x)) if x == and => return *lhs,
                    (Some(_), _) | (_, Some(_)) => return self.emit(Expr::Literal(Literal::Bool(!and)), ty),
                    _ if lhs == rhs => return *lhs,
                    _ => {}
                }
            }
            Expr::Binary { op: BinaryOp::Eq, lhs, rhs } if lhs == rhs && ty == Scalar::Bool && !self.may_be_nan(*lhs) => {
                return self.emit(Expr::Literal(Literal::Bool(true)), ty);
            }
            Expr::Binary { op: BinaryOp::Add, lhs, rhs } if ty.is_float() => {
                // x + 0 is x but for the sign of a zero result (see the module docs).
                if self.is_zero(*rhs) {
                    return *lhs;
                }
                if self.is_zero(*lhs) {
                    return *rhs;
                }
                if let Some(h) = self.merge_selects(Combine::Add, *lhs, *rhs, ty) {
                    return h;
                }
            }
            Expr::Binary { op: BinaryOp::Mul, lhs, rhs } if ty.is_float() => {
                let one = |s: &Self, h| matches!(s.get(h), Expr::Literal(Literal::Float(v, _)) if *v == 1.0);
                if one(self, *rhs) {
                    return *lhs;
                }
                if one(self, *lhs) {
                    return *rhs;
                }
            }
            Expr::Select { cond, then, other } => {
                if then == other {
                    return *then;
                }
                if let Expr::Unary { op: UnaryOp::Not, arg } = self.get(*cond) {
                    let arg = *arg;
                    return self.rewrite(Expr::Select { cond: arg, then: *other, other: *then }, ty);
                }
                // if c { if c { a } else { _ } } else { b } = if c { a } else { b }, and alike.
                let (c, t, o) = (*cond, *then, *other);
                let t = match self.get(t) {
                    Expr::Select { cond, then, .. } if *cond == c => *then,
                    _ => t,
                };
                let o = match self.get(o) {
                    Expr::Select { cond, other, .. } if *cond == c => *other,
                    _ => o,
                };
                if t != *then || o != *other {
                    return self.rewrite(Expr::Select { cond: c, then: t, other: o }, ty);
                }
            }
            Expr::Call { func: Builtin::Max, args } if args.len() == 2 => {
                let (a, b) = (args[0], args[1]);
                if a == b {
                    return a;
                }
                if self.is_zero(a) && self.non_negative(b) {
                    return b;
                }
                if self.is_zero(b) && self.non_negative(a) {
                    return a;
                }
                // max(x, max(x, y)) = max(x, y)
                for (x, y) in [(a, b), (b, a)] {
                    if let Expr::Call { func: Builtin::Max, args: inner } = self.get(y)
                        && inner.contains(&x)
                    {
                        return y;
                    }
                }
                if let Some(h) = self.merge_selects(Combine::Max, a, b, ty) {
                    return h;
                }
            }
            _ => {}
        }
        self.emit(e, ty)
    }

    /// `op(if c { a } else { b }, if c { x } else { y })` as `if c { op(a, x) } else { op(b, y) }`,
    /// applied when it lets a branch fold (one of its operands is a zero).
    fn merge_selects(&mut self, op: Combine, a: Handle<Expr>, b: Handle<Expr>, ty: Scalar) -> Option<Handle<Expr>> {
        let split = |s: &Self, h: Handle<Expr>| match s.get(h) {
            Expr::Select { cond, then, other } => Some((*cond, *then, *other)),
            _ => None,
        };
        let (c, a1, a2, b1, b2) = match (split(self, a), split(self, b)) {
            (Some((c, a1, a2)), Some((d, b1, b2))) if c == d => (c, a1, a2, b1, b2),
            _ => return None,
        };
        if ![a1, a2, b1, b2].iter().any(|&h| self.is_zero(h)) {
            return None;
        }
        let combine = |s: &mut Self, x, y| match op {
            Combine::Add => s.rewrite(Expr::Binary { op: BinaryOp::Add, lhs: x, rhs: y }, ty),
            Combine::Max => s.rewrite(Expr::Call { func: Builtin::Max, args: vec![x, y] }, ty),
        };
        let t = combine(self, a1, b1);
        let o = combine(self, a2, b2);
        Some(self.rewrite(Expr::Select { cond: c, then: t, other: o }, ty))
    }

    fn non_negative(&self, h: Handle<Expr>) -> bool {
        self.non_negative[h.index()]
    }

    fn may_be_nan(&self, h: Handle<Expr>) -> bool {
        self.out.types[h.index()].is_float()
    }

    /// Appends `e` (or returns the identical expression already there).
    fn emit(&mut self, e: Expr, ty: Scalar) -> Handle<Expr> {
        let key = format!("{e:?}:{ty:?}");
        if let Some(&h) = self.shared.get(&key) {
            return h;
        }
        let nn = match &e {
            Expr::Literal(Literal::Float(v, _)) => *v >= 0.0,
            Expr::Node(_) => true,
            Expr::Cast { expr, to } => to.is_float() && matches!(self.out.types[expr.index()], Scalar::U32),
            Expr::Select { then, other, .. } => self.non_negative(*then) && self.non_negative(*other),
            Expr::Call { func: Builtin::Max, args } => args.iter().any(|&a| self.non_negative(a)),
            Expr::Call { func: Builtin::Min, args } => args.iter().all(|&a| self.non_negative(a)),
            Expr::Binary { op: BinaryOp::Add, lhs, rhs } => self.non_negative(*lhs) && self.non_negative(*rhs),
            // A non-negative value scaled by a positive constant (h / 2, 0.5 · Ŝ).
            Expr::Binary { op: BinaryOp::Mul | BinaryOp::Div, lhs, rhs } => {
                let positive = |h: Handle<Expr>| matches!(self.get(h), Expr::Literal(Literal::Float(v, _)) if *v > 0.0);
                (self.non_negative(*lhs) && positive(*rhs))
                    || (positive(*lhs) && self.non_negative(*rhs) && matches!(&e, Expr::Binary { op: BinaryOp::Mul, .. }))
            }
            _ => false,
        };
        let h = self.out.push(e, ty);
        self.non_negative.push(nn);
        self.shared.insert(key, h);
        h
    }
}

/// `root` as one short formula per branch of its walker-only conditions (at most two, so at
/// most four branches), each simplified under its branch's facts: what `wayfarer explain`
/// prints for `B` and `Ŝ`.
pub fn branch_formulas(d: &Derived, params: &[Param], state: &[StateField], root: Handle<Expr>) -> Vec<(String, String)> {
    let conds: Vec<Handle<Expr>> = walker_conditions(d, root).into_iter().take(2).collect();
    if conds.is_empty() {
        let (s, r) = simplify(d, &[root]);
        let (lets, last) = crate::print::formula_lets(&s.exprs, params, state, r[0]);
        let text = lets.iter().map(|(n, f)| format!("{n} = {f}; ")).collect::<String>() + &last;
        return vec![(String::new(), text)];
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for mask in 0..1u32 << conds.len() {
        let facts: Vec<(Handle<Expr>, bool)> = conds.iter().enumerate().map(|(i, &c)| (c, mask & (1 << i) == 0)).collect();
        let (s, r) = specialize(d, root, &facts);
        let when: Vec<String> = facts.iter().map(|&(c, v)| condition_text(d, params, state, c, v)).collect();
        let (lets, last) = crate::print::formula_lets(&s.exprs, params, state, r);
        let formula = lets.iter().map(|(n, f)| format!("{n} = {f}\n        ")).collect::<String>() + &last;
        // Branches with the same formula are printed once.
        match out.iter_mut().find(|(_, f)| *f == formula) {
            Some((w, _)) => *w = format!("{w} or {}", when.join(" && ")),
            None => out.push((when.join(" && "), formula)),
        }
    }
    out
}

/// A condition (or its negation) as text: `step() == 0u32`, `step() != 0u32`, `!(…)`.
fn condition_text(d: &Derived, params: &[Param], state: &[StateField], c: Handle<Expr>, holds: bool) -> String {
    let show = |h| crate::print::formula_in(&d.exprs, params, state, h);
    match d.exprs.get(c) {
        Expr::Binary { op: op @ (BinaryOp::Eq | BinaryOp::Ne), lhs, rhs } => {
            let eq = (*op == BinaryOp::Eq) == holds;
            format!("{} {} {}", show(*lhs), if eq { "==" } else { "!=" }, show(*rhs))
        }
        _ if holds => show(c),
        _ => format!("!{}", show(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(d: &mut Derived, v: f64) -> Handle<Expr> {
        d.push(Expr::Literal(Literal::Float(v, Scalar::F32)), Scalar::F32)
    }

    #[test]
    fn running_max_of_guarded_paths_folds_per_branch() {
        // max(max(0, if c { hmax } else { 0 }), if c { 0 } else { hmax / 2 })
        let mut d = Derived::default();
        let step = d.push(Expr::Step(StepField::Step), Scalar::U32);
        let zero_u = d.push(Expr::Literal(Literal::Int(0, Scalar::U32)), Scalar::U32);
        let c = d.push(Expr::Binary { op: BinaryOp::Eq, lhs: step, rhs: zero_u }, Scalar::Bool);
        let zero = lit(&mut d, 0.0);
        let two = lit(&mut d, 2.0);
        let hmax = d.push(Expr::Node(NodeQuery::WeightMax), Scalar::F32);
        let half = d.push(Expr::Binary { op: BinaryOp::Div, lhs: hmax, rhs: two }, Scalar::F32);
        let s1 = d.push(Expr::Select { cond: c, then: hmax, other: zero }, Scalar::F32);
        let m1 = d.push(Expr::Call { func: Builtin::Max, args: vec![zero, s1] }, Scalar::F32);
        let s2 = d.push(Expr::Select { cond: c, then: zero, other: half }, Scalar::F32);
        let root = d.push(Expr::Call { func: Builtin::Max, args: vec![m1, s2] }, Scalar::F32);
        let (s, r) = simplify(&d, &[root]);
        let text = crate::print::formula_in(&s.exprs, &[], &[], r[0]);
        assert_eq!(text, "if (step() == 0u32) { h_max(cur) } else { (h_max(cur) / 2.0f32) }");
        let b = branch_formulas(&d, &[], &[], root);
        assert_eq!(
            b,
            vec![
                ("step() == 0u32".to_string(), "h_max(cur)".to_string()),
                ("step() != 0u32".to_string(), "(h_max(cur) / 2.0f32)".to_string())
            ]
        );
    }

    #[test]
    fn a_zero_that_may_be_negative_stays() {
        // max(0, p) with a parameter p of unknown sign is not p.
        let mut d = Derived::default();
        let zero = lit(&mut d, 0.0);
        let p = d.push(Expr::Param(0), Scalar::F32);
        let root = d.push(Expr::Call { func: Builtin::Max, args: vec![zero, p] }, Scalar::F32);
        let (s, r) = simplify(&d, &[root]);
        assert!(matches!(s.exprs.get(r[0]), Expr::Call { func: Builtin::Max, .. }));
    }
}
