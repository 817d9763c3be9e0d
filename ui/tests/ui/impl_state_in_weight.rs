use wayfarer::prelude::*;

#[walk(state(seen: u32))]
impl Counter {
    fn get_weight(&self, s: &Step, st: &CounterState) -> f32 {
        st.seen += 1;
        s.weight()
    }
}

fn main() {}
