use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    println!("{}", s.weight());
    s.weight()
}

fn main() {}
