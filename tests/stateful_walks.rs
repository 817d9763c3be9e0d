//! The impl form of `#[walk]`: per-walker state, `init` / `update` / `stop`, random draws and
//! restarts. The library's stateful walks (personalized PageRank with restarts or stops,
//! temporal walks) and anonymous walks are checked against exact transition probabilities,
//! computed here from the raw edge list, with the chi-square test of `exactness.rs`.

mod common;

use common::*;
use std::collections::HashMap;
use wayfarer::graph::{CsrGraph, CsrParts, Orientation};
use wayfarer::library::LibraryWalk;
use wayfarer::prelude::*;
use wayfarer::walks::{Ppr, PprStop, Temporal};
use wayfarer::{WalkConfig, Walks};

const MODES: [SamplerMode; 3] = [SamplerMode::Adaptive, SamplerMode::Rejection, SamplerMode::Reservoir];

fn run<W: Walk>(walk: &W, g: &CsrGraph, starts: Vec<u32>, length: u32, seed: u64, mode: SamplerMode) -> Walks {
    let cfg = WalkConfig {
        length,
        seed,
        sampler: mode,
        cost_ratio: CostRatio::Fixed(1.0),
        interleave: 8,
        table_budget: None,
        record_edges: false,
    };
    wayfarer::engine::run(walk, g, &Starts::Nodes(starts), &cfg, None).unwrap().0
}

fn starts() -> Vec<u32> {
    let mut v = vec![0u32; 40_000];
    v.extend(std::iter::repeat_n(5u32, 40_000));
    v
}

/// `w(cur -> v) / W(cur)` over the raw edges (empty if every weight is 0).
fn first_order(edges: &[RawEdge], cur: u32, keep: impl Fn(&RawEdge) -> bool) -> HashMap<u32, f64> {
    let mut p: HashMap<u32, f64> = HashMap::new();
    for e in edges.iter().filter(|e| e.0 == cur && keep(e)) {
        *p.entry(e.1).or_default() += e.2 as f64;
    }
    let total: f64 = p.values().sum();
    if total <= 0.0 {
        return HashMap::new();
    }
    p.into_iter().filter(|(_, x)| *x > 0.0).map(|(k, x)| (k, x / total)).collect()
}

fn assert_fits(counts: &HashMap<u32, u64>, p: &HashMap<u32, f64>, what: &str) -> bool {
    let total: u64 = counts.values().sum();
    let pv = chi_square_p(counts, p, what);
    if total >= 1000 {
        assert!(pv > ALPHA, "{what}: chi-square p = {pv:.3e} < {ALPHA:e}; counts {counts:?}, exact {p:?}");
        return true;
    }
    false
}

#[test]
fn ppr_restarts_to_the_start_with_probability_alpha() {
    let alpha = 0.3f32;
    for shape in SHAPES {
        let edges = shaped_edges(shape);
        let g = build(&edges);
        for (k, mode) in MODES.into_iter().enumerate() {
            let walks = run(&Ppr { alpha }, &g, starts(), 4, 11 + k as u64, mode);
            // Transitions keyed by (start, cur): a restart makes the walk first-order plus a
            // jump home, whatever the previous node.
            let mut moves: HashMap<(u32, u32), HashMap<u32, u64>> = HashMap::new();
            let mut restarts = 0u64;
            for i in 0..walks.len() {
                let w = walks.walk(i);
                for s in 0..w.len() - 1 {
                    *moves.entry((w[0], w[s])).or_default().entry(w[s + 1]).or_default() += 1;
                    restarts += (w[s + 1] == w[0]) as u64;
                }
                if w.len() < 5 {
                    let last = *w.last().unwrap();
                    assert!(first_order(&edges, last, |_| true).is_empty(), "{shape:?} {mode}: a walk ended at {last}, which has moves");
                }
            }
            assert!(restarts > 0);
            let mut tested = 0;
            for (&(start, cur), counts) in &moves {
                let step = first_order(&edges, cur, |_| true);
                assert!(!step.is_empty(), "{shape:?} {mode}: moved from dead end {cur}");
                let mut p: HashMap<u32, f64> = step.iter().map(|(&v, &x)| (v, (1.0 - alpha as f64) * x)).collect();
                *p.entry(start).or_default() += alpha as f64;
                tested += assert_fits(counts, &p, &format!("ppr {shape:?} {mode} start {start} cur {cur}")) as usize;
            }
            assert!(tested >= 4, "{shape:?} {mode}: only {tested} states had enough samples");
        }
    }
}

#[test]
fn ppr_stop_ends_walks_with_probability_alpha_and_moves_like_deepwalk() {
    let alpha = 0.25f32;
    let edges = shaped_edges(Shape::Uniform);
    let g = build(&edges);
    for (k, mode) in MODES.into_iter().enumerate() {
        let walks = run(&PprStop { alpha }, &g, starts(), 6, 21 + k as u64, mode);
        let mut moves: HashMap<u32, HashMap<u32, u64>> = HashMap::new();
        // At each position after a move: did the walk stop there (not at a dead end)?
        let (mut stopped, mut went_on) = (0u64, 0u64);
        for i in 0..walks.len() {
            let w = walks.walk(i);
            for s in 0..w.len() - 1 {
                *moves.entry(w[s]).or_default().entry(w[s + 1]).or_default() += 1;
            }
            for s in 1..w.len() {
                if s == 6 || first_order(&edges, w[s], |_| true).is_empty() {
                    continue; // the length or a dead end ended it
                }
                if s + 1 == w.len() {
                    stopped += 1;
                } else {
                    went_on += 1;
                }
            }
        }
        for (cur, counts) in &moves {
            assert_fits(counts, &first_order(&edges, *cur, |_| true), &format!("ppr-stop {mode} cur {cur}"));
        }
        let obs: HashMap<u32, u64> = [(0, stopped), (1, went_on)].into();
        let p: HashMap<u32, f64> = [(0, alpha as f64), (1, 1.0 - alpha as f64)].into();
        assert!(assert_fits(&obs, &p, &format!("ppr-stop {mode} stop rate")), "too few positions");
    }
}

/// The test topology with timestamps: `t = (7 i) mod 11` for edge `i`, and a few ties.
fn temporal_graph(shape: Shape) -> (CsrGraph, Vec<RawEdge>, HashMap<(u32, u32), i64>) {
    let edges = shaped_edges(shape);
    let times: Vec<i64> = (0..edges.len() as i64).map(|i| (7 * i) % 11 / 2).collect();
    let mut order: Vec<usize> = (0..edges.len()).collect();
    order.sort_by_key(|&i| (edges[i].0, edges[i].1));
    let mut parts = CsrParts { offsets: vec![0], weights: Some(Vec::new()), timestamps: Some(Vec::new()), ..Default::default() };
    let mut at = HashMap::new();
    for v in 0..7u32 {
        for &i in order.iter().filter(|&&i| edges[i].0 == v) {
            parts.targets.push(edges[i].1);
            parts.weights.as_mut().unwrap().push(edges[i].2);
            parts.timestamps.as_mut().unwrap().push(times[i]);
            at.insert((edges[i].0, edges[i].1), times[i]);
        }
        parts.offsets.push(parts.targets.len() as u64);
    }
    (CsrGraph::from_parts(parts, Orientation::Directed).unwrap(), edges, at)
}

#[test]
fn temporal_walks_take_strictly_newer_edges_with_exact_probabilities() {
    for shape in SHAPES {
        let (g, edges, at) = temporal_graph(shape);
        for (k, mode) in MODES.into_iter().enumerate() {
            let walks = run(&Temporal, &g, starts(), 5, 31 + k as u64, mode);
            let mut moves: HashMap<(Option<i64>, u32), HashMap<u32, u64>> = HashMap::new();
            let mut tested = 0;
            for i in 0..walks.len() {
                let w = walks.walk(i);
                let mut last = None;
                for s in 0..w.len() {
                    let time_of = |e: &RawEdge| at[&(e.0, e.1)];
                    let newer = |e: &RawEdge| last.is_none_or(|t| time_of(e) > t);
                    if s + 1 < w.len() {
                        *moves.entry((last, w[s])).or_default().entry(w[s + 1]).or_default() += 1;
                        last = Some(at[&(w[s], w[s + 1])]);
                    } else if s < 5 {
                        assert!(first_order(&edges, w[s], newer).is_empty(), "{shape:?} {mode}: ended at {} with newer edges", w[s]);
                    }
                }
            }
            for (&(last, cur), counts) in &moves {
                let p = first_order(&edges, cur, |e| last.is_none_or(|t| at[&(e.0, e.1)] > t));
                assert!(!p.is_empty(), "{shape:?} {mode}: moved from ({last:?}, {cur}), which has no newer edge");
                tested += assert_fits(counts, &p, &format!("temporal {shape:?} {mode} last {last:?} cur {cur}")) as usize;
            }
            assert!(tested >= 3, "{shape:?} {mode}: only {tested} states tested");
        }
    }
}

#[test]
fn temporal_needs_timestamps() {
    let g = build(&shaped_edges(Shape::Uniform));
    let e = LibraryWalk::from_name("temporal", &[], &g, false).unwrap_err();
    assert!(e.to_string().contains("edge timestamps"), "{e}");
}

#[test]
fn stateful_walks_are_reproducible_across_threads() {
    let (g, _, _) = temporal_graph(Shape::Pareto1);
    let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    for mode in MODES {
        let a = pool(1).install(|| (run(&Temporal, &g, starts(), 5, 3, mode), run(&Ppr { alpha: 0.2 }, &g, starts(), 8, 3, mode)));
        let b = pool(3).install(|| (run(&Temporal, &g, starts(), 5, 3, mode), run(&Ppr { alpha: 0.2 }, &g, starts(), 8, 3, mode)));
        assert_eq!(a, b, "{mode}");
    }
}

#[test]
fn anonymous_walks_are_first_visit_indices() {
    let walks = Walks { stride: 5, nodes: vec![7, 3, 7, 9, 3, 4, 4, 4, u32::MAX, u32::MAX], lengths: vec![5, 3], edges: Vec::new() };
    let anon = walks.to_anonymous();
    assert_eq!(anon.walk(0), &[0, 1, 0, 2, 1]);
    assert_eq!(anon.walk(1), &[0, 0, 0]);
    assert_eq!(&anon.nodes[8..], &[u32::MAX, u32::MAX], "padding is kept");
    // The library's `anonymous` walk is DeepWalk, recorded that way.
    let g = build(&shaped_edges(Shape::Uniform));
    let cfg = WalkConfig {
        length: 6,
        seed: 9,
        sampler: SamplerMode::Adaptive,
        cost_ratio: CostRatio::Fixed(1.0),
        interleave: 8,
        table_budget: None,
        record_edges: false,
    };
    let s = Starts::EveryNode { per_node: 3 };
    let (anon, _) = LibraryWalk::from_name("anonymous", &[], &g, false).unwrap().run(&g, &s, &cfg, None).unwrap();
    let (plain, _) = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap().run(&g, &s, &cfg, None).unwrap();
    assert_eq!(anon, plain.to_anonymous());
}

/// A user's stateful walk: counts its own moves in state and stops after `limit` of them,
/// and never returns to the node it just left.
#[walk(params(limit: u32), state(moves: u32, restarts: u32))]
impl NoBacktrack {
    fn init(&self, st: &mut NoBacktrackState) {
        st.moves = 0;
    }
    fn get_weight(&self, s: &Step, st: &NoBacktrackState) -> f32 {
        if st.moves > 0 && s.dst() == s.prev() { 0.0 } else { s.weight() }
    }
    fn update(&self, _s: &mut Step, st: &mut NoBacktrackState) {
        st.moves += 1;
    }
    fn stop(&self, _s: &Step, st: &NoBacktrackState) -> bool {
        st.moves >= self.limit
    }
}

#[test]
fn user_state_and_stop_rules_run_as_written() {
    let edges = shaped_edges(Shape::Uniform);
    let g = build(&edges);
    let walks = run(&NoBacktrack { limit: 3 }, &g, starts(), 10, 5, SamplerMode::Adaptive);
    let mut moves: HashMap<(u32, u32), HashMap<u32, u64>> = HashMap::new();
    for i in 0..walks.len() {
        let w = walks.walk(i);
        assert!(w.len() <= 4, "stop after 3 moves: {w:?}");
        for s in 1..w.len() - 1 {
            assert_ne!(w[s + 1], w[s - 1], "went straight back: {w:?}");
            *moves.entry((w[s - 1], w[s])).or_default().entry(w[s + 1]).or_default() += 1;
        }
    }
    for (&(prev, cur), counts) in &moves {
        assert_fits(counts, &first_order(&edges, cur, |e| e.1 != prev), &format!("no-backtrack prev {prev} cur {cur}"));
    }
    assert_eq!(NoBacktrackState::default(), NoBacktrackState { moves: 0, restarts: 0 });
}
