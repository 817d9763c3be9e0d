use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    let x = if s.step() == 0 { 1.0 };
    x
}

fn main() {}
