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
    /// The walk's weight is exactly `R · s(e)` on this term's edges and 0 on every other edge
    /// (set only on a plan's single term): its trials are accepted but for the envelope's
    /// 2^-16 widening, so the adaptive rule always proposes from it.
    pub exact: bool,
}
