use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    match s.label() {
        0 => 1.0,
        1 => 2.0,
    }
}

fn main() {}
