use wayfarer::prelude::*;

#[walk(params(alpha: f32), state(last: f64))]
impl Recent {
    fn get_weight(&self, s: &Step, st: &RecentState) -> f32 {
        if s.time() > st.lst { s.weight() * self.alpah } else { 0.0 }
    }
}

fn main() {}
