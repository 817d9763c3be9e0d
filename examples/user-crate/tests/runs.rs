use wayfarer::prelude::*;
use wayfarer_user_crate_example::{Heavy, Popular};

#[test]
fn user_walks_compile_and_run_from_another_crate() {
    let mut g = wayfarer::graph::generate::barabasi_albert(2000, 3, 1).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse().unwrap(), 2))).unwrap();
    let run = Popular { beta: 1.0, back: 0.5 }.on(&g).length(20).seed(3).cost_ratio(CostRatio::Fixed(2.0)).run().unwrap();
    assert_eq!(run.walks.len(), 2000);
    assert!(run.report.stats.rejection_steps > 0, "the compiled bound lets eRJS run: {:?}", run.report.stats);
    // Walks follow edges.
    for i in 0..run.walks.len() {
        for p in run.walks.walk(i).windows(2) {
            assert!(g.has_edge(p[0], p[1]));
        }
    }
    // Popularity walks visit high-degree nodes more than uniform ones would.
    let mean_deg = |w: &Walks| {
        w.nodes.iter().filter(|&&v| v != NO_NODE).map(|&v| g.degree(v) as f64).sum::<f64>()
            / w.nodes.iter().filter(|&&v| v != NO_NODE).count() as f64
    };
    let uniform = Popular { beta: 0.0, back: 1.0 }.on(&g).length(20).seed(3).cost_ratio(CostRatio::Fixed(2.0)).run().unwrap();
    assert!(mean_deg(&run.walks) > mean_deg(&uniform.walks));
    // Heavy edges only: every step's edge weight exceeds the threshold, dead ends end walks.
    let h = Heavy { t: 4.0 }.on(&g).length(10).seed(1).cost_ratio(CostRatio::Fixed(2.0)).run().unwrap();
    assert!(h.report.stats.dead_ends > 0);
    for i in 0..h.walks.len() {
        for p in h.walks.walk(i).windows(2) {
            assert!(
                g.row(p[0]).filter(|&e| g.targets()[e] == p[1]).any(|e| g.weights().unwrap()[e] > 4.0),
                "{} -> {} is light",
                p[0],
                p[1]
            );
        }
    }
}
