//! Triangle counting against an independent brute-force count (every node triple) on random
//! graphs, directed and undirected, with self loops and parallel edges, for every mask shape:
//! none, edge weight above a threshold, one label, a Rust `#[mask]` function, and a `#[mask]`
//! file compiled at run time by Cranelift; plus known counts of classic graphs and per-node
//! counts summing to 3 × the total.

use std::collections::{BTreeSet, HashMap};
use wayfarer::graph::generate::{LabelSpec, barabasi_albert, erdos_renyi, labels, rmat, weights};
use wayfarer::graph::{CsrGraph, CsrParts, Orientation};
use wayfarer::triangles::{Detail, KeepFn, TriangleCounts, count, count_masked, count_with};

/// The brute force: the undirected simple graph of kept edges, where edge {u, v} is decided by
/// the copy the counter's mask sees (lowest-ranked end's row; first stored direction in CSR
/// order for directed input), then every triple tested.
fn brute(g: &CsrGraph, keep: Option<KeepFn>) -> (u64, Vec<u64>) {
    let n = g.num_nodes();
    let directed = g.orientation() == Orientation::Directed;
    let mut degree: Vec<u64> = (0..n as u32).map(|v| g.degree(v)).collect();
    if directed {
        for &t in g.targets() {
            degree[t as usize] += 1;
        }
    }
    let rank = |v: u32| (degree[v as usize], v);
    // (low, high) -> the deciding stored edge.
    let mut decide: HashMap<(u32, u32), (u32, usize)> = HashMap::new();
    for u in 0..n as u32 {
        for e in g.row(u) {
            let v = g.targets()[e];
            if u == v {
                continue;
            }
            let key = if rank(u) < rank(v) { (u, v) } else { (v, u) };
            let from_low = u == key.0;
            match decide.get(&key) {
                None => {
                    decide.insert(key, (u, e));
                }
                Some(&(_, old)) => {
                    // Undirected: the low end's first copy; directed: the smallest edge index.
                    let better = if directed { e < old } else { from_low && g.row(key.1).contains(&old) };
                    if better {
                        decide.insert(key, (u, e));
                    }
                }
            }
        }
    }
    let kept: BTreeSet<(u32, u32)> =
        decide.into_iter().filter(|(_, (u, e))| keep.is_none_or(|k| k(*u, *e))).map(|((a, b), _)| (a.min(b), a.max(b))).collect();
    let adj = |a: u32, b: u32| kept.contains(&(a.min(b), a.max(b)));
    let mut per = vec![0u64; n];
    let mut total = 0;
    for u in 0..n as u32 {
        for v in u + 1..n as u32 {
            if !adj(u, v) {
                continue;
            }
            for w in v + 1..n as u32 {
                if adj(u, w) && adj(v, w) {
                    total += 1;
                    per[u as usize] += 1;
                    per[v as usize] += 1;
                    per[w as usize] += 1;
                }
            }
        }
    }
    (total, per)
}

fn check(g: &CsrGraph, keep: Option<KeepFn>, what: &str) -> TriangleCounts {
    let got = count_masked(g, keep, Detail::PerNode);
    let (total, per) = brute(g, keep);
    assert_eq!(count_masked(g, keep, Detail::Total).total, total, "{what}: total only");
    assert_eq!(got.total, total, "{what}: total");
    assert_eq!(got.per_node, per, "{what}: per-node counts");
    assert_eq!(got.per_node.iter().sum::<u64>(), 3 * got.total, "{what}: per-node counts sum to 3 × total");
    got
}

/// A directed multigraph with self loops: random edges, some repeated, some reversed.
fn messy(n: u32, m: usize, seed: u64) -> CsrGraph {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 33) as u32
    };
    let mut rows = vec![Vec::new(); n as usize];
    for _ in 0..m {
        let (u, v) = (next() % n, next() % n);
        rows[u as usize].push(v);
        if next() % 4 == 0 {
            rows[u as usize].push(v);
        }
    }
    let mut p = CsrParts { offsets: vec![0], ..Default::default() };
    for r in &mut rows {
        r.sort_unstable();
        p.targets.extend(r.iter());
        p.offsets.push(p.targets.len() as u64);
    }
    let m = p.targets.len();
    p.weights = Some((0..m).map(|i| ((i * 37) % 11) as f32).collect());
    p.labels = Some((0..m).map(|i| ((i * 13) % 3) as u32).collect());
    CsrGraph::from_parts(p, Orientation::Directed).unwrap()
}

fn graphs() -> Vec<(String, CsrGraph)> {
    let mut out = Vec::new();
    for seed in 0..3 {
        let mut g = rmat(7, 6, seed).unwrap();
        g.set_weights(Some(weights(&g, "pareto:1".parse().unwrap(), seed + 10))).unwrap();
        g.set_labels(Some(labels(&g, LabelSpec { k: 3 }, seed + 20).unwrap())).unwrap();
        out.push((format!("rmat 7 seed {seed}"), g));
    }
    let mut er = erdos_renyi(90, 0.12, 4).unwrap();
    er.set_weights(Some(weights(&er, "uniform".parse().unwrap(), 5))).unwrap();
    er.set_labels(Some(labels(&er, LabelSpec { k: 2 }, 6).unwrap())).unwrap();
    out.push(("er 90".into(), er));
    let mut ba = barabasi_albert(120, 4, 7).unwrap();
    ba.set_weights(Some(weights(&ba, "uniform".parse().unwrap(), 8))).unwrap();
    ba.set_labels(Some(labels(&ba, LabelSpec { k: 2 }, 9).unwrap())).unwrap();
    out.push(("ba 120".into(), ba));
    out.push(("directed multigraph with self loops".into(), messy(60, 700, 3)));
    out
}

#[test]
fn counts_equal_brute_force_for_every_mask_shape() {
    for (name, g) in graphs() {
        let w = g.weights().unwrap().to_vec();
        let l = g.labels().unwrap().to_vec();
        let all = check(&g, None, &name);
        assert!(all.total > 0, "{name}: a test graph with triangles");
        let heavy = |_: u32, e: usize| w[e] > 2.5;
        let some = check(&g, Some(&heavy), &format!("{name}, weight > 2.5"));
        assert!(some.total < all.total, "{name}: the weight mask removes triangles");
        let one_label = |_: u32, e: usize| l[e] == 1;
        check(&g, Some(&one_label), &format!("{name}, label 1"));
        let nothing = |_: u32, _: usize| false;
        assert_eq!(count_masked(&g, Some(&nothing), Detail::Total).total, 0);
        assert_eq!(count(&g), all, "{name}: count() is the unmasked count");
    }
}

/// A mask written in Rust with `#[mask]`: compiled by the macro, run through `count_with`,
/// equal to the same predicate as a closure.
#[wayfarer::mask]
fn heavier(s: &wayfarer::Step, t: f32) -> bool {
    s.weight() > t
}

#[test]
fn a_rust_mask_and_a_runtime_mask_file_count_like_the_closure() {
    let source = "#[mask]\nfn heavier(s: &Step, t: f32) -> bool {\n    s.weight() > t\n}\n";
    let program = wayfarer_compiler::lower_mask_source(source).unwrap();
    let info = wayfarer_compiler::analyze(&program);
    let values = wayfarer::gpu::program_values(&program, &[("t".into(), "2.5".into())]).unwrap();
    let jit = wayfarer_jit::JitWalk::compile(&program, &info, &values, true).unwrap();
    for (name, g) in graphs() {
        let w = g.weights().unwrap().to_vec();
        let closure = count_masked(&g, Some(&|_: u32, e: usize| w[e] > 2.5), Detail::PerNode);
        assert_eq!(count_with(&g, &Heavier { t: 2.5 }, Detail::PerNode).unwrap(), closure, "{name}: #[mask] in Rust");
        assert_eq!(count_with(&g, &jit, Detail::PerNode).unwrap(), closure, "{name}: #[mask] file through Cranelift");
    }
}

#[test]
fn mask_files_get_the_compilers_diagnostics() {
    let e = wayfarer_compiler::lower_mask_source("#[mask]\nfn m(s: &Step) -> f32 { s.weight() }\n").unwrap_err();
    assert!(e.0[0].message.contains("a mask returns"), "{:?}", e.0[0].message);
    let e = wayfarer_compiler::lower_mask_source("#[mask]\nfn m(s: &Step) -> bool { s.prev() == 0 }\n").unwrap_err();
    assert!(e.0[0].message.contains("an edge mask has no walker"), "{:?}", e.0[0].message);
    assert!(wayfarer_compiler::lower_mask_source("fn m() {}").is_err());
}

#[test]
fn classic_graphs_have_their_known_counts() {
    let complete = |n: u32| {
        let mut p = CsrParts { offsets: vec![0], ..Default::default() };
        for u in 0..n {
            p.targets.extend((0..n).filter(|&v| v != u));
            p.offsets.push(p.targets.len() as u64);
        }
        CsrGraph::from_parts(p, Orientation::Undirected).unwrap()
    };
    // K100 and K150 have oriented rows longer than the bitmap threshold (the hub path).
    for n in [3u32, 4, 7, 12, 100, 150] {
        let c = count(&complete(n));
        let n64 = n as u64;
        assert_eq!(c.total, n64 * (n64 - 1) * (n64 - 2) / 6, "K{n}");
        assert!(c.clustering().iter().all(|&x| x == 1.0), "K{n} is fully clustered");
    }
    // The Petersen graph is triangle-free; a wheel with k rim nodes has k triangles.
    let undirected = |n: u32, edges: &[(u32, u32)]| {
        let mut rows = vec![Vec::new(); n as usize];
        for &(u, v) in edges {
            rows[u as usize].push(v);
            rows[v as usize].push(u);
        }
        let mut p = CsrParts { offsets: vec![0], ..Default::default() };
        for r in &mut rows {
            r.sort_unstable();
            p.targets.extend(r.iter());
            p.offsets.push(p.targets.len() as u64);
        }
        CsrGraph::from_parts(p, Orientation::Undirected).unwrap()
    };
    let mut petersen: Vec<(u32, u32)> = (0..5).map(|i| (i, (i + 1) % 5)).collect();
    petersen.extend((0..5).map(|i| (i, i + 5)));
    petersen.extend((0..5).map(|i| (5 + i, 5 + (i + 2) % 5)));
    assert_eq!(count(&undirected(10, &petersen)).total, 0, "Petersen");
    let k = 9u32;
    let mut wheel: Vec<(u32, u32)> = (1..=k).map(|i| (0, i)).collect();
    wheel.extend((1..=k).map(|i| (i, i % k + 1)));
    let c = count(&undirected(k + 1, &wheel));
    assert_eq!(c.total, k as u64, "wheel");
    assert_eq!(c.per_node[0], k as u64, "the hub is in every triangle");
}

/// Larger graphs, where hub rows take the bitmap path: per-node counts equal an independent
/// count from plain neighbor sets (each edge's common neighbors), totals equal their sum / 3.
#[test]
fn hub_rows_count_like_plain_neighbor_sets() {
    use std::collections::HashSet;
    for (scale, ef) in [(11u32, 24u32), (12, 16)] {
        let g = rmat(scale, ef, 5).unwrap();
        let n = g.num_nodes();
        let sets: Vec<HashSet<u32>> = (0..n as u32).map(|u| g.neighbors(u).iter().copied().filter(|&v| v != u).collect()).collect();
        let mut per = vec![0u64; n];
        for u in 0..n {
            for &v in &sets[u] {
                // Each triangle at u is seen from both of its other corners' edges: halve later.
                per[u] += sets[u].intersection(&sets[v as usize]).count() as u64;
            }
        }
        let per: Vec<u64> = per.into_iter().map(|x| x / 2).collect();
        let got = count(&g);
        assert_eq!(got.per_node, per, "R-MAT {scale}: per-node counts");
        assert_eq!(got.total, per.iter().sum::<u64>() / 3);
        assert_eq!(count_masked(&g, None, Detail::Total).total, got.total);
    }
}

/// A mask whose weight is negative or NaN (any walk can be a mask through `count_with`) is an
/// error naming the edge, never a silent count.
#[wayfarer::walk]
fn negative_mask(s: &wayfarer::Step) -> f32 {
    -s.weight()
}

#[test]
fn a_mask_with_a_negative_weight_is_an_error() {
    let (_, g) = graphs().remove(0);
    let e = count_with(&g, &NegativeMask, Detail::Total).unwrap_err().to_string();
    assert!(e.contains("negative_mask"), "{e}");
}

/// Shares of a count (the rows' parts that `mpirun -np N wayfarer triangles` gives each
/// process) sum to the whole count, totals, per-node counts and kept edges, for both CPU
/// orientations (id order in place, and the oriented copy), and cover every row once.
#[test]
fn shares_sum_to_the_whole_count() {
    use wayfarer::triangles::{Plan, Share, orient, plan};
    let g = rmat(11, 12, 9).unwrap();
    let flat = erdos_renyi(3000, 0.01, 9).unwrap();
    let plans = [plan(&flat, None), plan(&g, None), Plan::Built(orient(&g, None))];
    assert!(matches!(plans[0], Plan::InPlace(_)), "a flat graph is counted in place");
    for p in &plans {
        for detail in [Detail::Total, Detail::PerNode] {
            let whole = p.count(detail);
            assert!(whole.total > 0);
            for parts in [1usize, 2, 3, 5] {
                let (mut total, mut kept, mut per_node) = (0, 0, vec![0u64; whole.per_node.len()]);
                for part in 0..parts {
                    let c = p.count_share(detail, Share::new(part, parts).unwrap());
                    total += c.total;
                    kept += c.kept_edges;
                    per_node.iter_mut().zip(&c.per_node).for_each(|(a, b)| *a += b);
                    assert_eq!(c.degree, whole.degree);
                }
                assert_eq!((total, kept, &per_node), (whole.total, whole.kept_edges, &whole.per_node), "{}, {parts} parts", p.describe());
            }
        }
    }
    // The rows of the parts tile the nodes.
    let o = orient(&g, None);
    let mut next = 0;
    for part in 0..4 {
        let rows = Share::new(part, 4).unwrap().rows(&o);
        assert_eq!(rows.start, next);
        next = rows.end;
    }
    assert_eq!(next, g.num_nodes());
    assert!(Share::new(3, 3).is_err());
}
