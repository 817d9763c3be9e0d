use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    s.weight() * scale
}

fn main() {}
