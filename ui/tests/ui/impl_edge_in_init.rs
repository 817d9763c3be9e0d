use wayfarer::prelude::*;

#[walk(state(first: f32))]
impl FirstWeight {
    fn init(&self, s: &Step, st: &mut FirstWeightState) {
        st.first = s.weight();
    }
    fn get_weight(&self, s: &Step, st: &FirstWeightState) -> f32 {
        s.weight().min(st.first)
    }
}

fn main() {}
