use wayfarer::prelude::*;

#[walk(params(alpha: f32))]
impl Scaled {
    fn get_weight(&self, s: &Step) -> f32 {
        s.weight() * alpha
    }
}

fn main() {}
