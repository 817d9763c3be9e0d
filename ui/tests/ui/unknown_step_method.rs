use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    s.neighbours() as f32
}

fn main() {}
