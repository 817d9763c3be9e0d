use wayfarer::prelude::*;

#[walk]
fn w(a: f32) -> f32 {
    a
}

fn main() {}
