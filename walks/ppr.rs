use wayfarer::prelude::*;

/// Personalized PageRank (random walk with restart): each move follows an edge with
/// probability proportional to its weight, then with probability `alpha` the walker is sent
/// back to its start node instead (the walk records the start node there).
#[walk(params(alpha: f32 = 0.15), check(alpha >= 0.0 && alpha <= 1.0))]
impl Ppr {
    fn get_weight(&self, s: &Step) -> f32 {
        s.weight()
    }

    fn update(&self, s: &mut Step, rng: &mut StepRng) {
        if rng.uniform() < self.alpha as f64 {
            s.restart();
        }
    }
}
