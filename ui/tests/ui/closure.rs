use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    let f = |x: f32| x * 2.0;
    f(s.weight())
}

fn main() {}
