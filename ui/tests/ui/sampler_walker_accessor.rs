use wayfarer::prelude::*;

// A sampling policy weighs an edge of the node being sampled: it has no walker history.
#[sampler]
fn recency(s: &Step, tau: f32) -> f32 {
    if s.step() == 0 { s.weight() } else { s.weight() / tau }
}

fn main() {}
