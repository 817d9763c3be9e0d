use wayfarer::prelude::*;

#[walk(params(alpha: f32), memory(last: f64), state(hops: usize))]
impl Odd {
    fn get_weight(&self, s: &Step) -> f32 {
        s.weight()
    }
    fn helper(&self) -> f32 {
        1.0
    }
}

fn main() {}
