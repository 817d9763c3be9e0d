use wayfarer::prelude::*;

#[walk(defaults(a = 0.0, b = 2.0), check(a > 0.0))]
fn w(s: &Step, a: f32, b: f32) -> f32 {
    s.weight() / a / b
}

fn main() {}
