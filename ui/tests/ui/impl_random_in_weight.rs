use wayfarer::prelude::*;

#[walk(params(alpha: f32))]
impl Jumpy {
    fn get_weight(&self, s: &Step, rng: &mut StepRng) -> f32 {
        s.weight() * rng.uniform() as f32
    }
}

fn main() {}
