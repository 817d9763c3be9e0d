use wayfarer::prelude::*;

/// DeepWalk: move along an edge with probability proportional to its weight.
#[walk]
pub fn deepwalk(s: &Step) -> f32 {
    s.weight()
}
