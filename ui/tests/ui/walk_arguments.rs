use wayfarer::prelude::*;

#[walk(fast)]
fn w(s: &Step) -> f32 {
    s.weight()
}

fn main() {}
