use wayfarer::prelude::*;

#[walk(params(alpha: f32))]
impl Restarting {
    fn get_weight(&self, s: &Step) -> f32 {
        s.weight()
    }
    fn stop(&self, s: &mut Step, rng: &mut StepRng) -> bool {
        if rng.uniform() < self.alpha as f64 {
            s.restart();
        }
        false
    }
}

fn main() {}
