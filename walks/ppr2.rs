use wayfarer::prelude::*;

/// Second-order PageRank (unweighted): with probability 1 - gamma a uniform step from the
/// current node, with probability gamma a step towards a neighbour of the previous node.
#[walk(defaults(gamma = 0.2), check(gamma >= 0.0 && gamma <= 1.0))]
pub fn ppr2(s: &Step, gamma: f32) -> f32 {
    if s.prev() == NO_NODE {
        return 1.0;
    }
    let mut w = (1.0 - gamma) / s.degree(s.cur()) as f32;
    if s.has_edge(s.prev(), s.dst()) {
        w += gamma / s.degree(s.prev()) as f32;
    }
    w
}
