use wayfarer::prelude::*;

#[walk]
fn w(s: &Step, n: u32) -> f32 {
    let mut acc = 0.0;
    for _i in 0..n {
        acc += s.weight();
    }
    acc
}

fn main() {}
