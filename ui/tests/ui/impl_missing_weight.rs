use wayfarer::prelude::*;

#[walk(params(alpha: f32))]
impl NoWeight {
    fn update(&self, s: &mut Step) {
        s.restart();
    }
}

fn main() {}
