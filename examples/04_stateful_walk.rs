//! A walk with its own per-walker state: `#[walk]` on an `impl`. This one never revisits the
//! node it came from two steps ago, counts how often it had to settle for a revisit, and
//! restarts from its start node with probability `restart` after each move.
//!
//! `cargo run --release --example 04_stateful_walk`

use wayfarer::prelude::*;

#[walk(params(restart: f32), state(two_back: u32, moves: u32))]
impl Wander {
    fn init(&self, st: &mut WanderState) {
        st.two_back = NO_NODE;
    }

    /// Avoid the node of two steps ago (a tenth of the weight), otherwise follow `h`.
    fn get_weight(&self, s: &Step, st: &WanderState) -> f32 {
        if s.dst() == st.two_back { 0.1 * s.weight() } else { s.weight() }
    }

    fn update(&self, s: &mut Step, st: &mut WanderState, rng: &mut StepRng) {
        st.two_back = s.prev();
        st.moves += 1;
        if rng.uniform() < self.restart as f64 {
            s.restart();
            st.two_back = NO_NODE;
        }
    }

    /// Stop early on a hub (more than 200 out-edges) once the walk has made 10 moves.
    fn stop(&self, s: &Step, st: &WanderState) -> bool {
        st.moves >= 10 && s.degree(s.cur()) > 200
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let g = wayfarer::default_graph()?;
    let run = Wander { restart: 0.1 }.on(&g).length(40).seed(7).run()?;
    println!("first walk: {:?}", run.walks.walk(0));
    println!("{}", run.report.summary("cpu"));
    Ok(())
}
