// The fallback to reservoir sampling is a warning (made an error here to pin its text).
#![deny(deprecated)]
use wayfarer::prelude::*;

#[walk]
fn scored(s: &Step, bias: f32) -> f32 {
    s.node_prop("score", s.dst()) + bias
}

fn main() {}
