use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    let x = s.weight();
    x = 2.0;
    x
}

fn main() {}
