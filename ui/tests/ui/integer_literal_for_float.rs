use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    s.weight() * 2
}

fn main() {}
