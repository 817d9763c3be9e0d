use wayfarer::prelude::*;

#[walk]
fn w(s: &Step, a: f32) -> f32 {
    let x = s.nope();
    let y = a + 1u32;
    let z = unknown;
    x + y + z
}

fn main() {}
