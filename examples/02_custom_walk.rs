//! A walk written by hand against the `Walk` trait: a "popularity" walk that prefers
//! high-degree neighbours, `w(u) = deg(u)^beta`, with a bound the engine can use for
//! rejection sampling. (The `#[walk]` macro will generate this kind of code from a function.)
//!
//! `cargo run --release --example 02_custom_walk`

use wayfarer::prelude::*;
use wayfarer::{Bound, BoundScope, Ctx, Requirements, Walker};

struct Popularity {
    beta: f32,
    /// max over each node's neighbours of deg(u)^beta, precomputed once.
    best: Vec<f32>,
}

impl Popularity {
    fn new(g: &CsrGraph, beta: f32) -> Self {
        let best = (0..g.num_nodes() as u32)
            .map(|v| g.neighbors(v).iter().map(|&u| (g.degree(u) as f32).powf(beta)).fold(0.0, f32::max))
            .collect();
        Popularity { beta, best }
    }
}

impl Walk for Popularity {
    type State = ();
    fn name(&self) -> &str {
        "popularity"
    }
    fn requirements(&self) -> Requirements {
        Requirements::default()
    }
    fn weight(&self, ctx: &Ctx, _w: &Walker<()>, e: usize) -> f32 {
        (ctx.graph.degree(ctx.graph.targets()[e]) as f32).powf(self.beta)
    }
    fn bound(&self, _ctx: &Ctx, w: &Walker<()>) -> Bound {
        Bound::Max(self.best[w.cur as usize])
    }
    fn bound_scope(&self) -> BoundScope {
        BoundScope::PerStep
    }
    fn sum_estimate(&self, ctx: &Ctx, w: &Walker<()>) -> f32 {
        // A guess is enough: it only steers the choice between two exact samplers.
        0.5 * self.best[w.cur as usize] * ctx.graph.degree(w.cur) as f32
    }
    fn possible_zero(&self) -> bool {
        false
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let g = wayfarer::graph::generate::barabasi_albert(50_000, 4, 3)?;
    let run = Popularity::new(&g, 0.5).on(&g).length(40).seed(1).run()?;
    println!("{}", run.report.summary("cpu"));
    let mean_deg: f64 = run.walks.nodes.iter().filter(|&&v| v != wayfarer::NO_NODE).map(|&v| g.degree(v) as f64).sum::<f64>()
        / run.walks.steps().max(1) as f64;
    println!("mean degree of visited nodes: {mean_deg:.1} (graph mean {:.1})", g.num_edges() as f64 / g.num_nodes() as f64);
    Ok(())
}
