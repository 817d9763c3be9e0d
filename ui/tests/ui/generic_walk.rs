use wayfarer::prelude::*;

#[walk]
fn w<T>(s: &Step) -> f32 {
    s.weight()
}

fn main() {}
