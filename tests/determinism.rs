//! Reproducibility: the same seed (and cost ratio) gives identical walks on 1, 2 and many
//! threads, with or without interleaving; a different seed gives different walks.

use wayfarer::graph::generate;
use wayfarer::library::LibraryWalk;
use wayfarer::{CostRatio, SamplerMode, Starts, WalkConfig, Walks};

fn graph() -> wayfarer::CsrGraph {
    let mut g = generate::rmat(11, 8, 5).unwrap();
    g.set_weights(Some(generate::weights(&g, "pareto:1".parse().unwrap(), 6))).unwrap();
    g.set_labels(Some(generate::labels(&g, generate::LabelSpec { k: 5 }, 7).unwrap())).unwrap();
    g
}

fn run_on(threads: usize, walk: &LibraryWalk, g: &wayfarer::CsrGraph, cfg: &WalkConfig) -> Walks {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| walk.run(g, &Starts::EveryNode { per_node: 2 }, cfg, None).unwrap().0)
}

#[test]
fn same_seed_same_walks_on_any_thread_count_and_interleave() {
    let g = graph();
    for name in ["deepwalk", "node2vec", "metapath", "ppr2", "ppr", "ppr-stop", "anonymous", "node2vec-ref", "metapath-ref"] {
        let walk = LibraryWalk::from_name(name, &[], &g, false).unwrap();
        for sampler in [SamplerMode::Adaptive, SamplerMode::Rejection, SamplerMode::Reservoir] {
            let cfg = WalkConfig {
                length: 12,
                seed: 42,
                sampler,
                cost_ratio: CostRatio::Fixed(3.0),
                interleave: 1,
                table_budget: None,
                record_edges: false,
            };
            let one = run_on(1, &walk, &g, &cfg);
            assert!(one.steps() > 0);
            for threads in [2, 7] {
                assert_eq!(one, run_on(threads, &walk, &g, &cfg), "{name} {sampler}: {threads} threads differ from 1");
            }
            let wide = WalkConfig { interleave: 16, ..cfg.clone() };
            assert_eq!(one, run_on(3, &walk, &g, &wide), "{name} {sampler}: interleaving changed the walks");
            let other = WalkConfig { seed: 43, ..cfg.clone() };
            assert_ne!(one, run_on(2, &walk, &g, &other), "{name} {sampler}: the seed has no effect");
        }
    }
}

#[test]
fn generators_are_deterministic_across_thread_counts() {
    let make = |threads| {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| {
            let g = generate::rmat(12, 16, 3).unwrap();
            let w = generate::weights(&g, "uniform".parse().unwrap(), 3);
            let e = generate::erdos_renyi(3000, 0.003, 3).unwrap();
            (g.targets().to_vec(), w, e.targets().to_vec())
        })
    };
    assert_eq!(make(1), make(5));
}

#[test]
fn walks_only_follow_edges_and_pad_with_the_sentinel() {
    let g = graph();
    let walk = LibraryWalk::from_name("metapath", &[("schema".into(), "0,1,2,3,4".into())], &g, false).unwrap();
    let cfg = WalkConfig {
        length: 5,
        seed: 1,
        sampler: SamplerMode::Adaptive,
        cost_ratio: CostRatio::Fixed(1.0),
        interleave: 1,
        table_budget: None,
        record_edges: false,
    };
    let (walks, report) = walk.run(&g, &Starts::EveryNode { per_node: 1 }, &cfg, None).unwrap();
    assert!(report.stats.dead_ends > 0, "MetaPath on random labels must hit dead ends");
    for i in 0..walks.len() {
        let w = walks.walk(i);
        assert_eq!(w[0] as usize, i % g.num_nodes());
        for (s, pair) in w.windows(2).enumerate() {
            let e = g.find_edge(pair[0], pair[1]).expect("walks follow edges");
            let _ = e;
            let labels = g.labels().unwrap();
            assert!(
                g.row(pair[0]).any(|e| g.targets()[e] == pair[1] && labels[e] == [0, 1, 2, 3, 4][s % 5]),
                "step {s} used a wrong label"
            );
        }
        let row = &walks.nodes[i * walks.stride..(i + 1) * walks.stride];
        assert!(row[w.len()..].iter().all(|&x| x == wayfarer::NO_NODE));
    }
}

/// A run split into shards (what each MPI rank runs) gives, shard after shard, the whole run's
/// walks: explicit and per-node starts, any number of shards, uneven sizes.
#[test]
fn shards_of_a_run_concatenate_to_the_whole_run() {
    let g = graph();
    let cfg = WalkConfig {
        length: 10,
        seed: 8,
        sampler: SamplerMode::Adaptive,
        cost_ratio: CostRatio::Fixed(2.0),
        interleave: 8,
        table_budget: None,
        record_edges: false,
    };
    let explicit = Starts::Nodes((0..3001u32).map(|i| (i * 37) % 2048).collect());
    for name in ["node2vec", "ppr-stop", "anonymous"] {
        let walk = LibraryWalk::from_name(name, &[], &g, false).unwrap();
        for starts in [explicit.clone(), Starts::EveryNode { per_node: 3 }] {
            let whole = walk.run(&g, &starts, &cfg, None).unwrap().0;
            for ranks in [1usize, 2, 3, 7] {
                let mut joined = Walks { stride: whole.stride, nodes: Vec::new(), lengths: Vec::new(), edges: Vec::new() };
                for r in 0..ranks {
                    let shard = starts.clone().shard(r, ranks, g.num_nodes());
                    joined.append(walk.run(&g, &shard, &cfg, None).unwrap().0);
                }
                assert_eq!(whole, joined, "{name}: {ranks} shards");
            }
        }
    }
    // A shard outside its run is an error, not a panic.
    let bad = Starts::Shard { of: Box::new(Starts::EveryNode { per_node: 1 }), first: 2000, count: 100 };
    let walk = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    assert!(walk.run(&g, &bad, &cfg, None).unwrap_err().to_string().contains("not within the run"));
}
