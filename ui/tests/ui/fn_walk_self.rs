use wayfarer::prelude::*;

#[walk]
fn w(s: &Step, a: f32) -> f32 {
    s.weight() * self.a
}

fn main() {}
