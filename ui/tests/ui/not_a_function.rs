use wayfarer::prelude::*;

#[walk]
struct Params {
    a: f32,
}

fn main() {}
