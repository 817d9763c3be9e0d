use wayfarer::prelude::*;

/// Personalized PageRank by stopping: each move follows an edge with probability proportional
/// to its weight, and after each move the walk ends with probability `alpha` (so its length
/// is geometric; the visit frequencies of many such walks estimate PPR from the start node).
#[walk(params(alpha: f32 = 0.15), check(alpha >= 0.0 && alpha <= 1.0))]
impl PprStop {
    fn get_weight(&self, s: &Step) -> f32 {
        s.weight()
    }

    fn stop(&self, _s: &Step, rng: &mut StepRng) -> bool {
        rng.uniform() < self.alpha as f64
    }
}
