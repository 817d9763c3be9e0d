//! A walk written with `#[walk]`: the macro compiles it to native code with a bound for
//! rejection sampling derived from its branches. The README's example.
//!
//! `cargo run --release --example 03_dsl_walk`

use wayfarer::prelude::*;

/// Node2Vec: `a` is the return parameter p, `b` the in-out parameter q.
#[walk]
fn node2vec(s: &Step, a: f32, b: f32) -> f32 {
    if s.step() == 0 {
        return s.weight(); // no previous node yet: plain weighted step
    }
    if s.dst() == s.prev() {
        s.weight() / a
    } else if s.has_edge(s.prev(), s.dst()) {
        s.weight()
    } else {
        s.weight() / b
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let g = wayfarer::default_graph()?;
    let run = Node2vec { a: 2.0, b: 0.5 }.on(&g).length(80).seed(7).run()?;
    let out = std::env::temp_dir().join("dsl-walks.npy");
    run.write(&out)?;
    println!("{}", run.report.summary("cpu"));
    Ok(())
}
