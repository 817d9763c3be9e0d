use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    if s.weight() { 1.0 } else { 2.0 }
}

fn main() {}
