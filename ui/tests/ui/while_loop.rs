use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    let mut x = s.weight();
    while x < 2.0 {
        x += 1.0;
    }
    x
}

fn main() {}
