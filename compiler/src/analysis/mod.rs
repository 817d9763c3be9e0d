//! Bound analysis: what the samplers need to know about a walk's weight.
//!
//! eRJS needs a bound `B >= every weight of the step`, and the cost model an estimate `Ŝ` of
//! the weights' sum. Both must be cheap per step, so they are expressions over walker-level
//! values (hyperparameters, `cur`, `prev`, `step`, …) and per-node aggregates of the current
//! row ([`NodeQuery`]), never over the candidate edge.
//!
//! The weight's select tree is flattened into guarded paths. A guard that reads only the
//! walker stays a run-time condition in `B` and `Ŝ` (so `if s.step() == 0 { return h }` costs
//! nothing in the other paths). A guard on the candidate edge narrows the edges a path
//! concerns: `dst == prev` is the way back (one known edge: its own weight, not the row max),
//! `label == X` is the row's `X`-labelled edges (per-label max and sum), anything else (e.g.
//! `has_edge(prev, dst)`) is unknown: both outcomes stay possible in `B`, and `Ŝ` gives each
//! half. FlexiWalker's compiler ignores branch conditions; using them makes `B` tighter and
//! `Ŝ` exact where the path structure allows.
//!
//! Each path's value is bounded by interval arithmetic over those leaves (corner products for
//! `*`, a run-time check that a divisor's interval excludes 0, monotone functions applied to
//! both ends). Every operation is the one the weight uses on larger or smaller inputs, so with
//! correctly rounded floats the bound holds for the computed weights, not just in exact
//! arithmetic. What cannot be bounded makes the walk eRVS-only, with the reason.

use crate::ir::*;
use std::collections::HashMap;
pub use wayfarer_core::Requirements;

mod proposal;
pub use proposal::{Proposal, ProposalCond, ProposalTerm};

/// When a derived expression must be recomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Once per run: it reads only hyperparameters and literals.
    PerKernel,
    /// Every step: it reads the walker or per-node arrays.
    PerStep,
}

/// What the analysis found, kept outside the IR.
#[derive(Debug)]
pub struct WalkInfo {
    /// The bound and estimate expressions.
    pub derived: Derived,
    /// `B`, if the weight could be bounded.
    pub bound: Option<Handle<Expr>>,
    /// When `B` changes.
    pub bound_scope: Scope,
    /// `Ŝ`.
    pub sum_estimate: Handle<Expr>,
    /// When `Ŝ` changes.
    pub estimate_scope: Scope,
    /// Whether `Ŝ` is the exact sum of the step's weights (every path is `h` or 0 over edges
    /// it selects exactly), so `Ŝ <= 0` is an exact dead-end test.
    pub sum_exact: bool,
    /// Per-node quantities `B` and `Ŝ` read (what the runtime must precompute).
    pub arrays: Vec<&'static str>,
    /// Whether a weight can be 0 (so a step can be a dead end even with edges).
    pub possible_zero: bool,
    /// Why there is no bound (the walk then runs eRVS only).
    pub fallback: Option<String>,
    /// Guarded paths of the weight.
    pub paths: usize,
    /// The weight as a sum of structured terms for the samplers to propose from, or why it
    /// has none (see [`Proposal`]).
    pub proposal: Result<Proposal, String>,
    /// Whether the walk calls `has_edge` anywhere (the runtimes then build edge filters).
    pub program_calls_has_edge: bool,
}

/// Paths beyond which guards are ignored (selects are then bounded as plain intervals).
const MAX_PATHS: usize = 256;

fn rank(s: Selector) -> u8 {
    match s {
        Selector::All => 0,
        Selector::NotLabel(_) => 1,
        Selector::NotBack => 2,
        Selector::Label(_) => 3,
        Selector::Back => 4,
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Selector {
    All,
    Back,
    NotBack,
    Label(Handle<Expr>),
    NotLabel(Handle<Expr>),
}

struct Path {
    walker_guards: Vec<(Handle<Expr>, bool)>,
    selector: Selector,
    unknown: u32,
    /// How many guards named an edge set the selector knows (`label == x`, `dst == prev`, …):
    /// more than one, and the selector is only the most specific of them.
    selectors: u32,
    /// The edge guards other than the selector's (`has_edge(prev, dst)`, …).
    edge_guards: Vec<(Handle<Expr>, bool)>,
    value: Handle<Expr>,
}

struct Analyzer<'a> {
    f: &'a Program,
    /// Bound the way back by the row max instead of searching for its edge.
    cheap_back: bool,
    edge_dep: Vec<bool>,
    d: Derived,
    memo: HashMap<Handle<Expr>, Handle<Expr>>,
}

type Range = (Handle<Expr>, Handle<Expr>);

/// Analyzes a weight function.
pub fn analyze(f: &Program) -> WalkInfo {
    let mut edge_dep = vec![false; f.exprs.len()];
    for (h, e) in f.exprs.iter() {
        // Operands precede their users, so one forward pass suffices.
        edge_dep[h.index()] = matches!(e, Expr::Step(s) if s.is_per_edge()) || e.operands().iter().any(|o| edge_dep[o.index()]);
    }
    let mut a = Analyzer { f, cheap_back: false, edge_dep, d: Derived::default(), memo: HashMap::new() };
    let mut paths = Vec::new();
    let mut guards = Vec::new();
    if !a.flatten(f.result, &mut guards, &mut paths) {
        paths = vec![(Vec::new(), f.result)];
    }
    let paths: Vec<Path> = paths.into_iter().map(|(g, v)| a.classify(g, v)).collect();

    // Exact iff each path's value is `h` or the literal 0 and its edge set is known exactly.
    let sum_exact = paths.iter().all(|p| {
        p.unknown == 0
            && match f.exprs.get(p.value) {
                Expr::Step(StepField::Weight) => true,
                Expr::Literal(Literal::Float(v, _)) => *v == 0.0,
                _ => false,
            }
    });
    let zero = a.f32(0.0);
    let mut fallback = None;
    let mut bound = Some(zero);
    let mut possible_zero = false;
    let mut estimate = zero;
    // Paths on the way back need a binary search for that edge's weight. They are folded in
    // last and lazily: with the row max in its place (a wider input, so a larger result) the
    // path's bound is checked against the rest first, and the search runs only if it could
    // raise B.
    let mut deferred = Vec::new();
    for p in &paths {
        let cond = a.guard(&p.walker_guards);
        match a.range(p.value, p.selector) {
            Ok((lo, hi)) => {
                if !matches!(a.d.exprs.get(lo), Expr::Literal(Literal::Float(v, _)) if *v > 0.0) {
                    possible_zero = true;
                }
                if p.selector == Selector::Back {
                    deferred.push((p, cond, hi));
                } else if let Some(b) = bound {
                    let hi = a.select(cond, hi, zero);
                    bound = Some(a.call(Builtin::Max, vec![b, hi], Scalar::F32));
                }
            }
            Err(why) => {
                possible_zero = true;
                bound = None;
                fallback.get_or_insert(why);
            }
        }
        let s = a.path_sum(p);
        let s = a.select(cond, s, zero);
        estimate = a.add(estimate, s);
    }
    for (p, cond, exact) in deferred {
        let Some(rest) = bound else { break };
        a.cheap_back = true;
        let cheap = a.range(p.value, p.selector).map(|r| r.1);
        a.cheap_back = false;
        let exact = a.select(cond, exact, zero);
        let with_exact = a.call(Builtin::Max, vec![rest, exact], Scalar::F32);
        bound = Some(match cheap {
            Ok(cheap) => {
                let cheap = a.select(cond, cheap, zero);
                let enough = a.binary(BinaryOp::Le, cheap, rest);
                a.select(Some(enough), rest, with_exact)
            }
            Err(_) => with_exact,
        });
    }
    let mut plan = proposal::plan(&mut a, &paths);
    // Before anything reads them (the arrays, the backends, `explain`): the running max and
    // sum above leave dead branches and zero terms behind.
    let mut roots: Vec<Handle<Expr>> = bound.into_iter().chain([estimate]).collect();
    let fixed = roots.len();
    if let Ok(p) = &plan {
        roots.extend(p.roots());
    }
    let (derived, roots) = crate::simplify::simplify(&a.d, &roots);
    a.d = derived;
    let (bound, estimate) = match (bound, &roots[..fixed]) {
        (Some(_), [b, e]) => (Some(*b), *e),
        (_, [e]) => (None, *e),
        _ => unreachable!("one root per expression"),
    };
    if let Ok(p) = &mut plan {
        p.set_roots(&roots[fixed..]);
    }
    let mut queries = Vec::new();
    for h in reachable(&a.d, &roots) {
        if let Expr::Node(q) = a.d.exprs.get(h)
            && !queries.contains(&q.array_name())
        {
            queries.push(q.array_name());
        }
    }
    let scope_of = |d: &Derived, h: Handle<Expr>| {
        if reachable(d, &[h]).iter().any(|x| matches!(d.exprs.get(*x), Expr::Step(_) | Expr::Node(_) | Expr::State(_))) {
            Scope::PerStep
        } else {
            Scope::PerKernel
        }
    };
    let bound_scope = bound.map_or(Scope::PerKernel, |b| scope_of(&a.d, b));
    let estimate_scope = scope_of(&a.d, estimate);
    WalkInfo {
        bound,
        bound_scope,
        sum_estimate: estimate,
        estimate_scope,
        sum_exact,
        arrays: queries,
        possible_zero,
        fallback,
        paths: paths.len(),
        derived: a.d,
        proposal: plan,
        program_calls_has_edge: f.exprs.iter().any(|(_, x)| matches!(x, Expr::Call { func: Builtin::HasEdge, .. })),
    }
}

/// The derived expressions reachable from `roots`.
pub(crate) fn reachable(d: &Derived, roots: &[Handle<Expr>]) -> Vec<Handle<Expr>> {
    let mut seen = std::collections::HashSet::new();
    let mut stack = roots.to_vec();
    while let Some(x) = stack.pop() {
        if seen.insert(x) {
            stack.extend(d.exprs.get(x).operands());
        }
    }
    let mut v: Vec<_> = seen.into_iter().collect();
    v.sort_by_key(|h| h.index());
    v
}

impl Analyzer<'_> {
    fn is_edge(&self, h: Handle<Expr>) -> bool {
        self.edge_dep[h.index()]
    }

    fn flatten(
        &self,
        h: Handle<Expr>,
        guards: &mut Vec<(Handle<Expr>, bool)>,
        out: &mut Vec<(Vec<(Handle<Expr>, bool)>, Handle<Expr>)>,
    ) -> bool {
        if out.len() > MAX_PATHS {
            return false;
        }
        if let Expr::Select { cond, then, other } = self.f.exprs.get(h) {
            guards.push((*cond, true));
            let ok = self.flatten(*then, guards, out);
            guards.pop();
            guards.push((*cond, false));
            let ok = ok && self.flatten(*other, guards, out);
            guards.pop();
            return ok;
        }
        out.push((guards.clone(), h));
        true
    }

    fn classify(&mut self, guards: Vec<(Handle<Expr>, bool)>, value: Handle<Expr>) -> Path {
        let mut p = Path { walker_guards: Vec::new(), selector: Selector::All, unknown: 0, selectors: 0, edge_guards: Vec::new(), value };
        for (g, pol) in guards {
            if !self.is_edge(g) {
                p.walker_guards.push((g, pol));
                continue;
            }
            let found = match self.f.exprs.get(g) {
                Expr::Binary { op: op @ (BinaryOp::Eq | BinaryOp::Ne), lhs, rhs } => {
                    let positive = (*op == BinaryOp::Eq) == pol;
                    let (l, r) = (self.f.exprs.get(*lhs), self.f.exprs.get(*rhs));
                    let is = |e: &Expr, s: StepField| matches!(e, Expr::Step(x) if *x == s);
                    if (is(l, StepField::Dst) && is(r, StepField::Prev)) || (is(l, StepField::Prev) && is(r, StepField::Dst)) {
                        Some(if positive { Selector::Back } else { Selector::NotBack })
                    } else if is(l, StepField::Label) && !self.is_edge(*rhs) || is(r, StepField::Label) && !self.is_edge(*lhs) {
                        let x = if is(l, StepField::Label) { *rhs } else { *lhs };
                        let x = self.copy(x);
                        Some(if positive { Selector::Label(x) } else { Selector::NotLabel(x) })
                    } else {
                        None
                    }
                }
                _ => None,
            };
            match found {
                // A path's edges satisfy all its guards, so any one guard's edge set contains
                // them: keep the most specific for B (sound), which also serves Ŝ best.
                Some(s) => {
                    p.selectors += 1;
                    if rank(s) > rank(p.selector) {
                        p.selector = s;
                    }
                }
                None => {
                    p.unknown += 1;
                    p.edge_guards.push((g, pol));
                }
            }
        }
        p
    }

    fn push(&mut self, e: Expr, ty: Scalar) -> Handle<Expr> {
        self.d.push(e, ty)
    }

    fn f32(&mut self, v: f64) -> Handle<Expr> {
        self.push(Expr::Literal(Literal::Float(v, Scalar::F32)), Scalar::F32)
    }

    fn lit_value(&self, h: Handle<Expr>) -> Option<f64> {
        match self.d.exprs.get(h) {
            Expr::Literal(Literal::Float(v, _)) => Some(*v),
            _ => None,
        }
    }

    fn ty(&self, h: Handle<Expr>) -> Scalar {
        self.d.types[h.index()]
    }

    fn binary(&mut self, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Handle<Expr> {
        let ty = if op.is_comparison() || matches!(op, BinaryOp::And | BinaryOp::Or) { Scalar::Bool } else { self.ty(lhs) };
        self.push(Expr::Binary { op, lhs, rhs }, ty)
    }

    fn add(&mut self, a: Handle<Expr>, b: Handle<Expr>) -> Handle<Expr> {
        if self.lit_value(a) == Some(0.0) {
            return b;
        }
        if self.lit_value(b) == Some(0.0) {
            return a;
        }
        self.binary(BinaryOp::Add, a, b)
    }

    /// Multiplication for estimates (operands finite, so `0 * x = 0`).
    fn mul(&mut self, a: Handle<Expr>, b: Handle<Expr>) -> Handle<Expr> {
        if self.lit_value(a) == Some(0.0) || self.lit_value(b) == Some(0.0) {
            return self.f32(0.0);
        }
        if self.lit_value(a) == Some(1.0) {
            return b;
        }
        if self.lit_value(b) == Some(1.0) {
            return a;
        }
        self.binary(BinaryOp::Mul, a, b)
    }

    /// Division for estimates: `0 / x = 0`.
    fn div(&mut self, a: Handle<Expr>, b: Handle<Expr>) -> Handle<Expr> {
        if self.lit_value(a) == Some(0.0) {
            return a;
        }
        self.binary(BinaryOp::Div, a, b)
    }

    fn call(&mut self, func: Builtin, args: Vec<Handle<Expr>>, ty: Scalar) -> Handle<Expr> {
        if matches!(func, Builtin::Max | Builtin::Min) && args[0] == args[1] {
            return args[0];
        }
        if func == Builtin::Max && self.lit_value(args[0]) == Some(0.0) && self.lit_value(args[1]).is_some_and(|v| v >= 0.0) {
            return args[1];
        }
        // Row maxima and sums are never below +0 (maxima start from 0, sums from +0), so
        // max(0, x) is x: one call less in every step's bound.
        if func == Builtin::Max
            && self.lit_value(args[0]) == Some(0.0)
            && matches!(
                self.d.exprs.get(args[1]),
                Expr::Node(NodeQuery::WeightMax | NodeQuery::WeightSum | NodeQuery::LabelMax(_) | NodeQuery::LabelSum(_))
            )
        {
            return args[1];
        }
        self.push(Expr::Call { func, args }, ty)
    }

    fn select(&mut self, cond: Option<Handle<Expr>>, then: Handle<Expr>, other: Handle<Expr>) -> Handle<Expr> {
        match cond {
            None => then,
            Some(_) if then == other => then,
            Some(c) => {
                let ty = self.ty(then);
                self.push(Expr::Select { cond: c, then, other }, ty)
            }
        }
    }

    fn node(&mut self, q: NodeQuery) -> Handle<Expr> {
        let ty = match q {
            NodeQuery::WeightMax
            | NodeQuery::WeightMin
            | NodeQuery::WeightSum
            | NodeQuery::BackWeight
            | NodeQuery::LabelMax(_)
            | NodeQuery::LabelSum(_) => Scalar::F32,
            _ => Scalar::U32,
        };
        self.push(Expr::Node(q), ty)
    }

    fn to_f32(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        if self.ty(h) == Scalar::F32 {
            return h;
        }
        self.push(Expr::Cast { expr: h, to: Scalar::F32 }, Scalar::F32)
    }

    /// The conjunction of walker-level guards, as a derived condition (`None` = always).
    fn guard(&mut self, guards: &[(Handle<Expr>, bool)]) -> Option<Handle<Expr>> {
        let mut acc: Option<Handle<Expr>> = None;
        for &(g, pol) in guards {
            let c = self.copy(g);
            let c = if pol { c } else { self.push(Expr::Unary { op: UnaryOp::Not, arg: c }, Scalar::Bool) };
            acc = Some(match acc {
                None => c,
                Some(a) => self.binary(BinaryOp::And, a, c),
            });
        }
        acc
    }

    /// Copies a walker-level weight expression into the derived arena.
    fn copy(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        if let Some(&c) = self.memo.get(&h) {
            return c;
        }
        let ty = self.f.ty(h);
        let e = match self.f.exprs.get(h).clone() {
            Expr::ParamIndex { param, index } => Expr::ParamIndex { param, index: self.copy(index) },
            Expr::Unary { op, arg } => Expr::Unary { op, arg: self.copy(arg) },
            Expr::Binary { op, lhs, rhs } => Expr::Binary { op, lhs: self.copy(lhs), rhs: self.copy(rhs) },
            Expr::Select { cond, then, other } => Expr::Select { cond: self.copy(cond), then: self.copy(then), other: self.copy(other) },
            Expr::Call { func, args } => Expr::Call { func, args: args.into_iter().map(|a| self.copy(a)).collect() },
            Expr::Cast { expr, to } => Expr::Cast { expr: self.copy(expr), to },
            leaf => leaf,
        };
        let c = self.push(e, ty);
        self.memo.insert(h, c);
        c
    }

    /// An interval `(lo, hi)` containing the value of `h` on every edge the selector allows.
    fn range(&mut self, h: Handle<Expr>, sel: Selector) -> Result<Range, String> {
        if !self.is_edge(h) {
            let c = self.copy(h);
            return Ok((c, c));
        }
        let name = |f: StepField| f.signature().0;
        match self.f.exprs.get(h).clone() {
            Expr::Step(StepField::Weight) => {
                let lo = self.node(NodeQuery::WeightMin);
                let hi = match sel {
                    Selector::Back if self.cheap_back => self.node(NodeQuery::WeightMax),
                    Selector::Back => self.node(NodeQuery::BackWeight),
                    Selector::Label(x) => self.node(NodeQuery::LabelMax(x)),
                    _ => self.node(NodeQuery::WeightMax),
                };
                Ok((lo, hi))
            }
            Expr::Step(StepField::Dst) if sel == Selector::Back => {
                let p = self.push(Expr::Step(StepField::Prev), Scalar::U32);
                Ok((p, p))
            }
            Expr::Step(StepField::Label) => match sel {
                Selector::Label(x) => Ok((x, x)),
                _ => Err("the edge label is used as a number; only `label() == X` tests can be bounded".into()),
            },
            Expr::Step(f) => Err(format!("`{}()` is used as a number, which cannot be bounded per node", name(f))),
            Expr::Call { func: Builtin::Degree, args } if self.is_edge(args[0]) => {
                if matches!(self.f.exprs.get(args[0]), Expr::Step(StepField::Dst)) {
                    Ok((self.node(NodeQuery::NeighborDegreeMin), self.node(NodeQuery::NeighborDegreeMax)))
                } else {
                    Err("`degree()` of a computed node cannot be bounded; use `degree(dst())`".into())
                }
            }
            Expr::Cast { expr, to } => {
                let from = self.f.ty(expr);
                if !(to.is_float() && (from.is_float() || from.is_int())) {
                    return Err(format!("a cast from `{}` to `{}` of a per-edge value cannot be bounded", from.name(), to.name()));
                }
                let (lo, hi) = self.range(expr, sel)?;
                let lo = self.push(Expr::Cast { expr: lo, to }, to);
                let hi = self.push(Expr::Cast { expr: hi, to }, to);
                Ok((lo, hi))
            }
            Expr::Unary { op: UnaryOp::Neg, arg } => {
                let (lo, hi) = self.range(arg, sel)?;
                let t = self.ty(lo);
                Ok((self.push(Expr::Unary { op: UnaryOp::Neg, arg: hi }, t), self.push(Expr::Unary { op: UnaryOp::Neg, arg: lo }, t)))
            }
            Expr::Binary { op, lhs, rhs } => {
                if !self.f.ty(h).is_float() {
                    return Err(format!("integer `{}` on a per-edge value cannot be bounded; compute in f32 instead", op.symbol()));
                }
                let (a, b) = self.range(lhs, sel)?;
                let (c, d) = self.range(rhs, sel)?;
                match op {
                    BinaryOp::Add => Ok((self.add(a, c), self.add(b, d))),
                    BinaryOp::Sub => Ok((self.binary(BinaryOp::Sub, a, d), self.binary(BinaryOp::Sub, b, c))),
                    BinaryOp::Mul => Ok(self.corners(BinaryOp::Mul, a, b, c, d)),
                    BinaryOp::Div => Ok(self.quotient((a, b), (c, d))),
                    _ => Err(format!("`{}` on per-edge values cannot be bounded", op.symbol())),
                }
            }
            Expr::Select { cond, then, other } => {
                let (a, b) = self.range(then, sel)?;
                let (c, d) = self.range(other, sel)?;
                if self.is_edge(cond) {
                    Ok((self.call(Builtin::Min, vec![a, c], Scalar::F32), self.call(Builtin::Max, vec![b, d], Scalar::F32)))
                } else {
                    let k = self.copy(cond);
                    Ok((self.select(Some(k), a, c), self.select(Some(k), b, d)))
                }
            }
            Expr::Call { func, args } => {
                let t = self.f.ty(h);
                match func {
                    Builtin::Min | Builtin::Max => {
                        let (a, b) = self.range(args[0], sel)?;
                        let (c, d) = self.range(args[1], sel)?;
                        // Rust's min/max return the other operand when one is NaN (sqrt or ln
                        // of a negative, 0/0, inf - inf), so an operand that may be NaN gets the
                        // hull of both ranges, not the tighter min/max of the bounds.
                        let nan = |x: Handle<Expr>| {
                            crate::ir::any_in(&self.f.exprs, x, &|e| {
                                matches!(
                                    e,
                                    Expr::Call { func: Builtin::Sqrt | Builtin::Ln | Builtin::Powf | Builtin::Exp, .. }
                                        | Expr::Binary { op: BinaryOp::Div | BinaryOp::Rem | BinaryOp::Sub, .. }
                                )
                            })
                        };
                        if nan(args[0]) || nan(args[1]) {
                            Ok((self.call(Builtin::Min, vec![a, c], t), self.call(Builtin::Max, vec![b, d], t)))
                        } else {
                            Ok((self.call(func, vec![a, c], t), self.call(func, vec![b, d], t)))
                        }
                    }
                    // Monotone increasing on their domains.
                    Builtin::Exp | Builtin::Sqrt | Builtin::Ln => {
                        let (a, b) = self.range(args[0], sel)?;
                        Ok((self.call(func, vec![a], t), self.call(func, vec![b], t)))
                    }
                    Builtin::Abs => {
                        let (a, b) = self.range(args[0], sel)?;
                        let (na, nb) = (self.call(Builtin::Abs, vec![a], t), self.call(Builtin::Abs, vec![b], t));
                        let hi = self.call(Builtin::Max, vec![na, nb], t);
                        Ok((self.f32(0.0), hi))
                    }
                    Builtin::Powf => Err("`powf` of a per-edge value is not bounded yet; use exp(ln(x) * y) on a positive x".into()),
                    Builtin::Degree | Builtin::HasEdge => Err(format!("`{}` cannot be bounded here", func.name())),
                    Builtin::NodeProp(_) => {
                        Err("a node property of the candidate's node cannot be bounded yet (no per-node arrays for properties)".into())
                    }
                }
            }
            Expr::ParamIndex { .. } => Err("an array indexed by a per-edge value cannot be bounded".into()),
            Expr::Unary { op: UnaryOp::Not, .. } => Err("a per-edge `bool` is used as a number".into()),
            Expr::Literal(_) | Expr::Param(_) | Expr::Node(_) | Expr::State(_) | Expr::Draw(_) => unreachable!("not per-edge"),
        }
    }

    /// The range of `[a, b] / [c, d]`: the corners when the divisor's interval excludes 0;
    /// otherwise `(-inf, inf)` this step (so the step runs eRVS).
    fn quotient(&mut self, (a, b): Range, (c, d): Range) -> Range {
        let zero = self.f32(0.0);
        let pos = self.binary(BinaryOp::Gt, c, zero);
        let neg = self.binary(BinaryOp::Lt, d, zero);
        let ok = self.binary(BinaryOp::Or, pos, neg);
        let (lo, hi) = self.corners(BinaryOp::Div, a, b, c, d);
        let inf = self.f32(f64::INFINITY);
        let ninf = self.f32(f64::NEG_INFINITY);
        (self.select(Some(ok), lo, ninf), self.select(Some(ok), hi, inf))
    }

    /// The min and max of the four corner results of `[a, b] op [c, d]`.
    fn corners(&mut self, op: BinaryOp, a: Handle<Expr>, b: Handle<Expr>, c: Handle<Expr>, d: Handle<Expr>) -> Range {
        if c == d {
            // A walker-level operand: two candidates, and a point interval stays a point.
            let (x, y) = (self.binary(op, a, c), if a == b { None } else { Some(self.binary(op, b, c)) });
            return match y {
                None => (x, x),
                Some(y) => (self.call(Builtin::Min, vec![x, y], Scalar::F32), self.call(Builtin::Max, vec![x, y], Scalar::F32)),
            };
        }
        let xs = [self.binary(op, a, c), self.binary(op, a, d), self.binary(op, b, c), self.binary(op, b, d)];
        let lo1 = self.call(Builtin::Min, vec![xs[0], xs[1]], Scalar::F32);
        let lo2 = self.call(Builtin::Min, vec![xs[2], xs[3]], Scalar::F32);
        let hi1 = self.call(Builtin::Max, vec![xs[0], xs[1]], Scalar::F32);
        let hi2 = self.call(Builtin::Max, vec![xs[2], xs[3]], Scalar::F32);
        (self.call(Builtin::Min, vec![lo1, lo2], Scalar::F32), self.call(Builtin::Max, vec![hi1, hi2], Scalar::F32))
    }

    /// `value = alpha * h + beta` with walker-level alpha, beta, if the value has that form.
    fn linear(&mut self, h: Handle<Expr>) -> Option<(Handle<Expr>, Handle<Expr>)> {
        if !self.is_edge(h) {
            let z = self.f32(0.0);
            return (self.f.ty(h) == Scalar::F32).then(|| (z, self.copy(h)));
        }
        match self.f.exprs.get(h).clone() {
            Expr::Step(StepField::Weight) => Some((self.f32(1.0), self.f32(0.0))),
            Expr::Binary { op: BinaryOp::Add, lhs, rhs } => {
                let (a, b) = self.linear(lhs)?;
                let (c, d) = self.linear(rhs)?;
                Some((self.add(a, c), self.add(b, d)))
            }
            Expr::Binary { op: BinaryOp::Mul, lhs, rhs } if !self.is_edge(lhs) || !self.is_edge(rhs) => {
                let (edge, k) = if self.is_edge(lhs) { (lhs, rhs) } else { (rhs, lhs) };
                let (a, b) = self.linear(edge)?;
                let k = self.copy(k);
                Some((self.mul(a, k), self.mul(b, k)))
            }
            Expr::Binary { op: BinaryOp::Div, lhs, rhs } if !self.is_edge(rhs) => {
                let (a, b) = self.linear(lhs)?;
                let k = self.copy(rhs);
                Some((self.div(a, k), self.div(b, k)))
            }
            _ => None,
        }
    }

    /// The estimated sum of a path's value over the edges it concerns.
    fn path_sum(&mut self, p: &Path) -> Handle<Expr> {
        let (sum_h, count) = match p.selector {
            Selector::All => (self.node(NodeQuery::WeightSum), self.node(NodeQuery::Degree)),
            // The estimate ignores the single edge back to `prev`: finding it costs a binary
            // search per step, more than an estimate is worth.
            Selector::Back => (self.f32(0.0), self.push(Expr::Literal(Literal::Int(0, Scalar::U32)), Scalar::U32)),
            Selector::NotBack => (self.node(NodeQuery::WeightSum), self.node(NodeQuery::Degree)),
            Selector::Label(x) => (self.node(NodeQuery::LabelSum(x)), self.node(NodeQuery::LabelCount(x))),
            Selector::NotLabel(x) => {
                let s = self.node(NodeQuery::WeightSum);
                let ls = self.node(NodeQuery::LabelSum(x));
                let d = self.node(NodeQuery::Degree);
                let lc = self.node(NodeQuery::LabelCount(x));
                (self.binary(BinaryOp::Sub, s, ls), self.binary(BinaryOp::Sub, d, lc))
            }
        };
        let count = self.to_f32(count);
        let total = match self.linear(p.value) {
            Some((alpha, beta)) => {
                let a = self.mul(alpha, sum_h);
                let b = self.mul(beta, count);
                self.add(a, b)
            }
            None => match self.range(p.value, p.selector) {
                Ok((lo, hi)) => {
                    let mid = self.add(lo, hi);
                    let half = self.f32(0.5);
                    let mid = self.mul(mid, half);
                    self.mul(mid, count)
                }
                Err(_) => count,
            },
        };
        if p.unknown == 0 {
            total
        } else {
            let share = self.f32(0.5f64.powi(p.unknown as i32));
            self.mul(total, share)
        }
    }
}

/// The per-node arrays the runtime must precompute for `B` and `Ŝ` (what every backend
/// uploads or computes before the walk).
pub fn requirements(info: &WalkInfo) -> Requirements {
    let mut roots: Vec<Handle<Expr>> = info.bound.into_iter().chain([info.sum_estimate]).collect();
    if let Ok(p) = &info.proposal {
        roots.extend(p.roots());
    }
    let queries: Vec<NodeQuery> = reachable(&info.derived, &roots)
        .into_iter()
        .filter_map(|h| match info.derived.exprs.get(h) {
            Expr::Node(q) => Some(*q),
            _ => None,
        })
        .collect();
    let label_stats = queries.iter().any(|q| matches!(q, NodeQuery::LabelMax(_) | NodeQuery::LabelSum(_) | NodeQuery::LabelCount(_)));
    Requirements {
        // Label queries fall back to whole-row aggregates when there are too many labels.
        weight_stats: label_stats
            || queries.iter().any(|q| matches!(q, NodeQuery::WeightMax | NodeQuery::WeightMin | NodeQuery::WeightSum)),
        label_stats,
        neighbor_degree: queries.iter().any(|q| matches!(q, NodeQuery::NeighborDegreeMax | NodeQuery::NeighborDegreeMin)),
        edge_queries: info.program_calls_has_edge,
    }
}
