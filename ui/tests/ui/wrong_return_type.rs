use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f64 {
    1.0
}

fn main() {}
