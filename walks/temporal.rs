use wayfarer::prelude::*;

/// Temporal walk: edge timestamps strictly increase along the walk. The first move may take
/// any edge; later moves only edges newer than the last one taken (weighted by `h`). A
/// walker with no newer edge has reached a dead end, and its walk ends there.
#[walk(state(last: f64))]
impl Temporal {
    fn init(&self, st: &mut TemporalState) {
        st.last = f64::NEG_INFINITY;
    }

    fn get_weight(&self, s: &Step, st: &TemporalState) -> f32 {
        if s.time() > st.last { s.weight() } else { 0.0 }
    }

    fn update(&self, s: &mut Step, st: &mut TemporalState) {
        st.last = s.time();
    }
}
