use wayfarer::prelude::*;

#[walk]
fn w(s: &Step, name: String) -> f32 {
    s.weight()
}

fn main() {}
