use wayfarer::prelude::*;

#[walk]
fn w(s: &Step) -> f32 {
    if s.has_edge(s.cur(), s.weight()) { 1.0 } else { 0.0 }
}

fn main() {}
