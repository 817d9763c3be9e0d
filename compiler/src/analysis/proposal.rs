//! The weight as a sum of structured terms: what the samplers may propose from instead of
//! uniformly (the runtime's `proposal` module runs it).
//!
//! Each guarded path's value is split into a *base* part and, on paths guarded by
//! `has_edge(prev, dst)`, an added walker-level *extra* part (`w += gamma / degree(prev)`).
//! The base part is factored into a static factor `s(e)`, which reads only the candidate
//! edge (its weight, label, timestamp, the target's degree or properties), times a residual
//! bounded per step by the bound analysis' interval arithmetic. Every path's base must share
//! one static factor (or be 0). The result is at most two terms:
//!
//! - base: `R_base · s(e)` over every edge, or only over the label-`X` edges (when every
//!   nonzero path selects `label == X`), or only over the edges back to `prev`;
//! - extra: `R_extra · [has_edge(prev, dst)]`, proposed through `prev`'s row.
//!
//! `R_base` is the largest residual bound among the paths whose walker guards hold this step,
//! `R_extra` likewise, so `w(e) ≤ R_base · s(e) · [c(e)] + R_extra · [has_edge(prev, dst)]` on
//! every edge: the envelope the runtime's structured eRJS accepts against.

use super::{Analyzer, Path, Range, Selector};
use crate::ir::*;

/// Which edges a term concerns (the runtime's `TermCond`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProposalCond {
    /// Every edge of `cur`'s row.
    All,
    /// The edges labelled [`Proposal::label`].
    Label,
    /// The edges back to `prev`.
    Back,
    /// The edges to neighbours of `prev` (`has_edge(prev, dst)`), proposed through `prev`'s row.
    PrevNeighbor,
}

/// One term: `bound · factor(e)` over the edges `cond` selects.
#[derive(Clone, Debug, PartialEq)]
pub struct ProposalTerm {
    /// The static factor: an index into [`Proposal::factors`], or `None` for 1 (a uniform
    /// proposal).
    pub factor: Option<usize>,
    /// The edges it concerns.
    pub cond: ProposalCond,
    /// `R`: the bound on the term's residual this step (in [`super::WalkInfo::derived`]).
    pub bound: Handle<Expr>,
}

/// A walk's proposal plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    /// The terms.
    pub terms: Vec<ProposalTerm>,
    /// The static factors, as expressions of the weight's program (they read only the edge).
    pub factors: Vec<Handle<Expr>>,
    /// The label of the [`ProposalCond::Label`] terms this step (in `derived`).
    pub label: Option<Handle<Expr>>,
    /// The weight is exactly the envelope `Σ_k R_k · s_k(e) · [c_k(e)]` on every edge: one
    /// term that is the whole weight (MetaPath: `if label == x { h } else { 0 }`), or a
    /// `has_edge(prev, dst)` mixture whose parts are exactly its terms (second-order
    /// PageRank). Its candidates are taken without an acceptance test
    /// ([`wayfarer_core::plan::accepts_untested`]).
    pub exact: bool,
}

impl Proposal {
    /// The plan as the backends run it (the runtime's tables, the GPU kernels).
    pub fn plan(&self) -> Vec<wayfarer_core::plan::TermPlan> {
        use wayfarer_core::plan::{StaticFactor, TermCond, TermPlan};
        let cond = |c: ProposalCond| match c {
            ProposalCond::All => TermCond::All,
            ProposalCond::Label => TermCond::Label,
            ProposalCond::Back => TermCond::Back,
            ProposalCond::PrevNeighbor => TermCond::PrevNeighbor,
        };
        self.terms
            .iter()
            .map(|t| TermPlan {
                factor: t.factor.map_or(StaticFactor::One, |i| StaticFactor::Table(i as u8)),
                cond: cond(t.cond),
                exact: self.exact,
            })
            .collect()
    }

    /// Whether the adaptive rule always proposes from this plan where the row has tables
    /// ([`wayfarer_core::plan::always_structured`]).
    pub fn always_structured(&self) -> bool {
        wayfarer_core::plan::always_structured(&self.plan())
    }

    /// The derived expressions the plan reads, in a fixed order ([`Proposal::set_roots`]).
    pub(super) fn roots(&self) -> Vec<Handle<Expr>> {
        self.terms.iter().map(|t| t.bound).chain(self.label).collect()
    }

    /// Replaces the derived expressions by their simplified handles, in [`Proposal::roots`]'s
    /// order.
    pub(super) fn set_roots(&mut self, roots: &[Handle<Expr>]) {
        for (t, r) in self.terms.iter_mut().zip(roots) {
            t.bound = *r;
        }
        if let Some(l) = &mut self.label {
            *l = roots[self.terms.len()];
        }
    }
}

/// Whether each expression of the program reads only the candidate edge (and constants).
fn static_flags(f: &Program) -> Vec<bool> {
    let mut flags = vec![false; f.exprs.len()];
    for (h, e) in f.exprs.iter() {
        let own = match e {
            Expr::Step(s) => s.is_per_edge(),
            Expr::Literal(_) | Expr::Param(_) | Expr::ParamIndex { .. } => true,
            Expr::State(_) | Expr::Draw(_) | Expr::Node(_) => false,
            _ => true,
        };
        flags[h.index()] = own && e.operands().iter().all(|o| flags[o.index()]);
    }
    flags
}

/// Structural equality of two expressions of one program.
fn same(f: &Program, a: Handle<Expr>, b: Handle<Expr>) -> bool {
    if a == b {
        return true;
    }
    let (x, y) = (f.exprs.get(a), f.exprs.get(b));
    if std::mem::discriminant(x) != std::mem::discriminant(y) || f.ty(a) != f.ty(b) {
        return false;
    }
    let (ox, oy) = (x.operands(), y.operands());
    // Same variant: compare the node without its operands, then the operands.
    let strip = |e: &Expr| match e {
        Expr::Unary { op, .. } => format!("u{op:?}"),
        Expr::Binary { op, .. } => format!("b{op:?}"),
        Expr::Call { func, .. } => format!("c{func:?}"),
        Expr::Cast { to, .. } => format!("t{to:?}"),
        Expr::ParamIndex { param, .. } => format!("p{param}"),
        Expr::Select { .. } => "s".into(),
        other => format!("{other:?}"),
    };
    strip(x) == strip(y) && ox.len() == oy.len() && ox.iter().zip(&oy).all(|(p, q)| same(f, *p, *q))
}

/// A path's base part, factored: its static factor (`None`: 1) and its residual's range,
/// and whether the part is exactly `residual · factor` with a residual that is one constant
/// (the static factor itself, or a positive literal).
struct Factored {
    factor: Option<Handle<Expr>>,
    residual: Range,
    exact: bool,
}

struct Planner<'p, 'a, 'f> {
    a: &'p mut Analyzer<'a>,
    f: &'f Program,
    is_static: Vec<bool>,
}

impl Planner<'_, '_, '_> {
    fn edge_static(&self, h: Handle<Expr>) -> bool {
        self.a.is_edge(h) && self.is_static[h.index()] && self.f.ty(h) == Scalar::F32
    }

    /// `h = factor · residual`, the residual bounded on the edges `sel` allows. Products and
    /// quotients are descended into so that walker-level and constant operands (`h / a`) go
    /// to the residual and the factor is the edge's own part (`h`).
    fn factor(&mut self, h: Handle<Expr>, sel: Selector) -> Result<Factored, String> {
        let one = self.a.f32(1.0);
        if !self.a.is_edge(h) {
            let r = self.a.range(h, sel)?;
            let exact = matches!(self.f.exprs.get(h), Expr::Literal(Literal::Float(v, _)) if *v > 0.0 && v.is_finite());
            return Ok(Factored { factor: None, residual: r, exact });
        }
        let whole = |p: &mut Self| -> Result<Factored, String> {
            if p.edge_static(h) {
                Ok(Factored { factor: Some(h), residual: (one, one), exact: true })
            } else {
                Ok(Factored { factor: None, residual: p.a.range(h, sel)?, exact: false })
            }
        };
        match self.f.exprs.get(h).clone() {
            Expr::Binary { op: BinaryOp::Mul, lhs, rhs } => {
                let (el, er) = (self.a.is_edge(lhs), self.a.is_edge(rhs));
                if el && er {
                    return whole(self);
                }
                let (edge, other) = if el { (lhs, rhs) } else { (rhs, lhs) };
                let inner = self.factor(edge, sel)?;
                let (a, b) = inner.residual;
                let (c, d) = self.a.range(other, sel)?;
                Ok(Factored { factor: inner.factor, residual: self.a.corners(BinaryOp::Mul, a, b, c, d), exact: false })
            }
            Expr::Binary { op: BinaryOp::Div, lhs, rhs } if !self.a.is_edge(rhs) => {
                let l = self.factor(lhs, sel)?;
                let divisor = self.a.range(rhs, sel)?;
                Ok(Factored { factor: l.factor, residual: self.a.quotient(l.residual, divisor), exact: false })
            }
            Expr::Select { cond, then, other } if !self.a.is_edge(cond) => {
                let t = self.factor(then, sel)?;
                let o = self.factor(other, sel)?;
                let factor = match (t.factor, o.factor) {
                    (Some(x), Some(y)) if same(self.f, x, y) => Some(x),
                    (None, None) => None,
                    _ => return whole(self),
                };
                let k = self.a.copy(cond);
                let lo = self.a.select(Some(k), t.residual.0, o.residual.0);
                let hi = self.a.select(Some(k), t.residual.1, o.residual.1);
                Ok(Factored { factor, residual: (lo, hi), exact: false })
            }
            _ => whole(self),
        }
    }

    fn is_zero(&self, h: Handle<Expr>) -> bool {
        matches!(self.f.exprs.get(h), Expr::Literal(Literal::Float(v, _)) if *v == 0.0)
    }

    fn is_prev_neighbor(&self, g: Handle<Expr>) -> bool {
        match self.f.exprs.get(g) {
            Expr::Call { func: Builtin::HasEdge, args } => {
                matches!(self.f.exprs.get(args[0]), Expr::Step(StepField::Prev))
                    && matches!(self.f.exprs.get(args[1]), Expr::Step(StepField::Dst))
            }
            _ => false,
        }
    }

    /// A path's value as `(base, extra)`: on paths guarded by `has_edge(prev, dst)`, the
    /// walker-level summand (`w += gamma / degree(prev)`) is the extra part.
    fn split(&self, path: &Path) -> (Handle<Expr>, Option<Handle<Expr>>) {
        let prev_neighbor = path.edge_guards.iter().any(|&(g, pol)| pol && self.is_prev_neighbor(g));
        match self.f.exprs.get(path.value) {
            Expr::Binary { op: BinaryOp::Add, lhs, rhs } if prev_neighbor => {
                if !self.a.is_edge(*rhs) {
                    (*lhs, Some(*rhs))
                } else if !self.a.is_edge(*lhs) {
                    (*rhs, Some(*lhs))
                } else {
                    (path.value, None)
                }
            }
            _ => (path.value, None),
        }
    }

    /// The exact bounds `(R_base, R_extra)` of a `has_edge(prev, dst)` mixture whose weight is
    /// exactly `R_base · s(e) + R_extra · [has_edge(prev, dst)]` on every edge of every step,
    /// or `None`. The paths are grouped by their walker guards. Each group must cover every
    /// edge: one path without an edge guard, or the two sides of one `has_edge(prev, dst)`
    /// guard. Within a group the bases must agree, and each must be walker-level, 0, the
    /// static factor itself or a positive literal; the extra sits on the `has_edge` side only.
    /// Groups that each cover every edge of the steps their guards allow cannot hold together
    /// (the paths partition the (step, edge) pairs), so each bound is a chain of selects over
    /// the groups: the group's own value, not clamped at 0. A negative one leaves the step to
    /// the samplers that read the weight, and they report it.
    fn exact_mixture(&mut self, paths: &[Path]) -> Option<(Handle<Expr>, Handle<Expr>)> {
        // A path of a group: its side of the `has_edge(prev, dst)` guard (none: no edge
        // guard), its base and its extra part.
        type Member = (Option<bool>, Handle<Expr>, Option<Handle<Expr>>);
        type Guards = [(Handle<Expr>, bool)];
        let f = self.f;
        let mut groups: Vec<(&Guards, Vec<Member>)> = Vec::new();
        for path in paths {
            if path.selectors != 0 {
                return None;
            }
            let side = match path.edge_guards.as_slice() {
                [] => None,
                [(g, pol)] if self.is_prev_neighbor(*g) => Some(*pol),
                _ => return None,
            };
            let (base, extra) = self.split(path);
            let guards = path.walker_guards.as_slice();
            let same_guards =
                |g: &[(Handle<Expr>, bool)]| g.len() == guards.len() && g.iter().zip(guards).all(|(x, y)| x.1 == y.1 && same(f, x.0, y.0));
            match groups.iter_mut().find(|(g, _)| same_guards(g)) {
                Some((_, members)) => members.push((side, base, extra)),
                None => groups.push((guards, vec![(side, base, extra)])),
            }
        }
        let zero = self.a.f32(0.0);
        let (mut base_r, mut extra_r) = (zero, zero);
        for (guards, members) in groups.iter().rev() {
            let sides: Vec<Option<bool>> = members.iter().map(|m| m.0).collect();
            if !matches!(sides.as_slice(), [None] | [Some(true), Some(false)] | [Some(false), Some(true)]) {
                return None;
            }
            let base = members[0].1;
            if !members.iter().all(|m| same(f, m.1, base)) || members.iter().any(|m| m.0 != Some(true) && m.2.is_some()) {
                return None;
            }
            let r = if self.is_zero(base) {
                zero
            } else if !self.a.is_edge(base) {
                self.a.copy(base)
            } else {
                let fac = self.factor(base, Selector::All).ok()?;
                if !fac.exact {
                    return None;
                }
                fac.residual.1
            };
            let x = match members.iter().find_map(|m| m.2) {
                Some(x) => self.a.copy(x),
                None => zero,
            };
            let guard = self.a.guard(guards);
            base_r = self.a.select(guard, r, base_r);
            extra_r = self.a.select(guard, x, extra_r);
        }
        Some((base_r, extra_r))
    }
}

/// The plan for the analysed paths, or why there is none.
pub(super) fn plan(a: &mut Analyzer, paths: &[Path]) -> Result<Proposal, String> {
    let f = a.f;
    let mut p = Planner { is_static: static_flags(f), a, f };
    let zero = p.a.f32(0.0);
    let (mut base_bound, mut extra_bound) = (zero, zero);
    let mut factor: Option<Option<Handle<Expr>>> = None;
    let mut conds: Vec<Selector> = Vec::new();
    let mut any_extra = false;
    // Paths with a nonzero value, and whether the one there is (if one) is exactly its term.
    let (mut nonzero, mut exact) = (0, false);
    for path in paths {
        if p.is_zero(path.value) {
            continue;
        }
        nonzero += 1;
        let guard = p.a.guard(&path.walker_guards);
        let (base, extra) = p.split(path);
        if let Some(x) = extra {
            let (_, hi) = p.a.range(x, path.selector)?;
            let hi = p.a.select(guard, hi, zero);
            extra_bound = p.a.call(Builtin::Max, vec![extra_bound, hi], Scalar::F32);
            any_extra = true;
        }
        if p.is_zero(base) {
            continue;
        }
        let fac = p.factor(base, path.selector)?;
        // Exact: no walker guard, and the only edge guard is the selector's own (`label == x`
        // or `dst == prev`) or none, so the path is precisely the term's edge set.
        exact = fac.exact
            && extra.is_none()
            && path.walker_guards.is_empty()
            && path.unknown == 0
            && path.selectors <= 1
            && matches!(path.selector, Selector::All | Selector::Label(_) | Selector::Back);
        match factor {
            None => factor = Some(fac.factor),
            Some(prev) => {
                let agree = match (prev, fac.factor) {
                    (None, None) => true,
                    (Some(x), Some(y)) => same(f, x, y),
                    _ => false,
                };
                if !agree {
                    return Err("the weight's paths have different static factors (e.g. `h` on one path, 1 on another)".into());
                }
            }
        }
        let hi = p.a.select(guard, fac.residual.1, zero);
        base_bound = p.a.call(Builtin::Max, vec![base_bound, hi], Scalar::F32);
        conds.push(path.selector);
    }
    let mut terms = Vec::new();
    let mut factors = Vec::new();
    let mut label = None;
    if let Some(fac) = factor {
        let cond = match conds.first() {
            Some(Selector::Label(x)) if conds.iter().all(|c| matches!(c, Selector::Label(y) if y == x)) => {
                label = Some(*x);
                ProposalCond::Label
            }
            Some(Selector::Back) if conds.iter().all(|c| *c == Selector::Back) => ProposalCond::Back,
            _ => ProposalCond::All,
        };
        let factor = fac.map(|h| {
            factors.push(h);
            0
        });
        terms.push(ProposalTerm { factor, cond, bound: base_bound });
    }
    if any_extra {
        terms.push(ProposalTerm { factor: None, cond: ProposalCond::PrevNeighbor, bound: extra_bound });
    }
    match terms.as_slice() {
        [] => Err("every weight is 0".into()),
        [ProposalTerm { factor: None, cond: ProposalCond::All, .. }] => {
            Err("the weight has no static factor, label, back-edge or `has_edge(prev, dst)` term: uniform eRJS is its proposal".into())
        }
        _ => {
            let mut exact = exact && nonzero == 1 && !any_extra && terms.len() == 1;
            if any_extra && let Some((base_r, extra_r)) = p.exact_mixture(paths) {
                for t in &mut terms {
                    t.bound = if t.cond == ProposalCond::PrevNeighbor { extra_r } else { base_r };
                }
                exact = true;
            }
            Ok(Proposal { exact, terms, factors, label })
        }
    }
}
