//! A walk's structured proposal plan as the backends run it: which edges each term of the
//! weight concerns and what its static factor is. The compiler's analysis writes it
//! (`Proposal::plan`); the runtime's tables and the GPU kernels read it.

/// The static factor of a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StaticFactor {
    /// 1: the proposal is uniform over the term's edges.
    One,
    /// The walk's static factor number `i`: an alias table.
    Table(u8),
}

/// Which edges of `cur`'s row a term concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TermCond {
    /// Every edge.
    All,
    /// The edges with the step's label (a per-(node, label) segment).
    Label,
    /// The edges back to `prev`.
    Back,
    /// The edges whose destination is a neighbour of `prev` (`has_edge(prev, dst)`): proposed
    /// through `prev`'s row. Its static factor is always [`StaticFactor::One`].
    PrevNeighbor,
}

/// One term of a walk's proposal plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TermPlan {
    /// The term's static factor.
    pub factor: StaticFactor,
    /// The edges it concerns.
    pub cond: TermCond,
    /// The plan is exact (set on each of its terms or on none): the walk's weight is exactly
    /// the envelope `Σ_k R_k · s_k(e) · [c_k(e)]` on every edge, so a candidate the terms
    /// propose is accepted without a test ([`accepts_untested`]).
    pub exact: bool,
}

/// Whether a structured candidate is taken without an acceptance test (and without its
/// uniform): the plan is exact, and a `has_edge(prev, dst)` term's proposal through `prev`'s
/// row is exact only on a graph without parallel edges (`multiplicity` 1), where each
/// neighbour of `prev` is proposed once.
pub fn accepts_untested(terms: &[TermPlan], multiplicity: u32) -> bool {
    !terms.is_empty() && terms.iter().all(|t| t.exact) && (multiplicity == 1 || terms.iter().all(|t| t.cond != TermCond::PrevNeighbor))
}

/// Whether the adaptive rule always proposes from the plan where the row has tables:
///
/// - one exact term over a part of the row (a label's segment, the edges back), which plain
///   eRJS would find only by rejecting the rest;
/// - an exact `has_edge(prev, dst)` mixture: its trials need no test, where plain eRJS must
///   search `prev`'s row for the candidates its squeeze leaves undecided. A trial of the
///   mixture's other terms is taken as drawn, and one through `prev`'s row (just walked, so
///   near) costs one search of `cur`'s.
///
/// An exact term alone over the whole row is left to the cost model: where the row's weights
/// are even, plain eRJS's first trial reads less than an alias entry and its edge.
pub fn always_structured(terms: &[TermPlan]) -> bool {
    match terms {
        [t] => t.exact && t.cond != TermCond::All,
        _ => terms.iter().all(|t| t.exact) && terms.iter().any(|t| t.cond == TermCond::PrevNeighbor),
    }
}
