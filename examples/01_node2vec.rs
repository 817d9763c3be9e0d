//! Node2Vec on a generated graph, written to `.npy` — the README's example.
//!
//! `cargo run --release --example 01_node2vec [graph.wfg]`

use wayfarer::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let g = match std::env::args().nth(1) {
        Some(path) => CsrGraph::load(path)?,
        None => {
            let mut g = wayfarer::graph::generate::rmat(14, 16, 1)?;
            g.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse()?, 1)))?;
            g
        }
    };
    let run = Node2vec { a: 2.0, b: 0.5 } // a = p (return), b = q (in-out); reads the graph's weights
        .on(&g)
        .length(80)
        .seed(7)
        .run()?;
    let out = std::env::temp_dir().join("node2vec-walks.npy");
    run.write(&out)?;
    println!("{}", run.report.summary("cpu"));
    println!("wrote {}", out.display());
    Ok(())
}
