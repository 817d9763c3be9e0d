//! Generators for property tests (feature `testing`): small random graphs with awkward
//! weights, for the compiler's soundness tests and the backends' equivalence tests.

use crate::graph::{CsrGraph, CsrParts, Orientation};
use proptest::prelude::*;

/// Edge weights: zero, tiny, huge, ordinary and Pareto-like.
pub fn weight_value() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(0.0f32),
        Just(1e-30),
        Just(0.5),
        Just(1.0),
        Just(3.0),
        Just(1e6),
        0.0f32..5.0,
        (0.001f64..1.0).prop_map(|u| (u.powf(-1.0) - 1.0) as f32)
    ]
}

/// Small directed graphs (1 to 6 nodes, up to 24 edges, labels 0..3), with dead ends.
pub fn graph() -> impl Strategy<Value = CsrGraph> {
    (1usize..7).prop_flat_map(|n| {
        proptest::collection::vec((0..n as u32, 0..n as u32, weight_value(), 0u32..3), 0..24).prop_map(move |edges| {
            let mut rows: Vec<Vec<(u32, f32, u32)>> = vec![Vec::new(); n];
            for (u, v, w, l) in edges {
                rows[u as usize].push((v, w, l));
            }
            let mut p = CsrParts { offsets: vec![0], weights: Some(Vec::new()), labels: Some(Vec::new()), ..Default::default() };
            for r in rows {
                for (v, w, l) in r {
                    p.targets.push(v);
                    p.weights.as_mut().unwrap().push(w);
                    p.labels.as_mut().unwrap().push(l);
                }
                p.offsets.push(p.targets.len() as u64);
            }
            CsrGraph::from_parts(p, Orientation::Directed).unwrap()
        })
    })
}
