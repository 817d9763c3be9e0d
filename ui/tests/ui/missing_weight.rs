use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    let _x = s.weight();
}

fn main() {}
