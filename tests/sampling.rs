//! GNN neighbor sampling (CPU path) is exact: uniform sampling without replacement gives every
//! fanout-subset of a row the same probability; with replacement, independent uniform draws;
//! weighted sampling matches the exact successive-sampling (without replacement) or
//! proportional (with replacement) probabilities; weight 0 is never taken. Chi-square tests as
//! in `exactness.rs` (p > 1e-4 on fixed seeds), plus the block invariants and the same output
//! for any thread count.

mod common;

use common::chi_square_p;
use std::collections::HashMap;
use wayfarer::graph::{CsrGraph, CsrParts, Orientation};
use wayfarer::runtime::sample::{MiniBatch, Policy, Replacement, SampleConfig, sample};

/// Node 0 has edges to 1..=d with `weights`; every leaf has one edge back to 0.
fn star(weights: &[f32]) -> CsrGraph {
    let d = weights.len() as u32;
    let mut p = CsrParts { offsets: vec![0], weights: Some(weights.to_vec()), ..Default::default() };
    p.targets.extend(1..=d);
    p.offsets.push(d as u64);
    for _ in 1..=d {
        p.targets.push(0);
        p.weights.as_mut().unwrap().push(1.0);
        p.offsets.push(p.targets.len() as u64);
    }
    CsrGraph::from_parts(p, Orientation::Directed).unwrap()
}

/// Samples node 0's row `trials` times (one mini-batch each, so independent streams) and
/// tallies the sampled neighbor multisets of the output block.
fn tally(g: &CsrGraph, fanout: u32, replacement: Replacement, policy: Policy, trials: usize) -> HashMap<Vec<u32>, u64> {
    let cfg = SampleConfig { fanouts: vec![fanout], batch_size: 1, replacement, policy, seed: 31, super_batch: 0 };
    let out = sample(g, &vec![0u32; trials], &cfg).unwrap();
    let mut t = HashMap::new();
    for mb in &out {
        let b = &mb.blocks[0];
        let mut picked: Vec<u32> = b.edge_src.iter().map(|&s| b.src_nodes[s as usize]).collect();
        picked.sort_unstable();
        *t.entry(picked).or_insert(0u64) += 1;
    }
    t
}

/// Cells keyed by an index, for `chi_square_p`.
fn test(counts: &HashMap<Vec<u32>, u64>, probs: &HashMap<Vec<u32>, f64>, what: &str) {
    let keys: Vec<&Vec<u32>> = probs.keys().collect();
    for k in counts.keys() {
        assert!(probs.contains_key(k), "{what}: sampled {k:?}, which has probability 0");
    }
    let c: HashMap<u32, u64> = keys.iter().enumerate().map(|(i, k)| (i as u32, counts.get(*k).copied().unwrap_or(0))).collect();
    let p: HashMap<u32, f64> = keys.iter().enumerate().map(|(i, k)| (i as u32, probs[*k])).collect();
    let pv = chi_square_p(&c, &p, what);
    assert!(pv > 1e-4, "{what}: chi-square p = {pv}");
}

#[test]
fn uniform_without_replacement_gives_every_subset_the_same_probability() {
    let g = star(&[1.0; 6]);
    let counts = tally(&g, 2, Replacement::Without, Policy::Uniform, 60_000);
    let mut probs = HashMap::new();
    for i in 1..=6u32 {
        for j in i + 1..=6 {
            probs.insert(vec![i, j], 1.0 / 15.0);
        }
    }
    test(&counts, &probs, "uniform without replacement, 2 of 6");
}

#[test]
fn uniform_with_replacement_draws_independently() {
    let g = star(&[1.0; 4]);
    let counts = tally(&g, 2, Replacement::With, Policy::Uniform, 60_000);
    let mut probs = HashMap::new();
    for i in 1..=4u32 {
        for j in i..=4 {
            probs.insert(vec![i, j], if i == j { 1.0 / 16.0 } else { 2.0 / 16.0 });
        }
    }
    test(&counts, &probs, "uniform with replacement, 2 of 4");
}

#[test]
fn weighted_sampling_matches_successive_sampling_and_skips_zero_weights() {
    let w = [1.0f32, 2.0, 0.0, 3.0, 4.0];
    let g = star(&w);
    let total: f64 = w.iter().map(|&x| x as f64).sum();
    // Without replacement: P({i, j}) = w_i/W · w_j/(W - w_i) + w_j/W · w_i/(W - w_j).
    let counts = tally(&g, 2, Replacement::Without, Policy::EdgeWeight, 60_000);
    let mut probs = HashMap::new();
    for i in 0..w.len() {
        for j in i + 1..w.len() {
            let (a, b) = (w[i] as f64, w[j] as f64);
            let p = a / total * b / (total - a) + b / total * a / (total - b);
            if p > 0.0 {
                probs.insert(vec![i as u32 + 1, j as u32 + 1], p);
            }
        }
    }
    test(&counts, &probs, "weighted without replacement, 2 of 5");
    // With replacement: two independent draws proportional to w.
    let counts = tally(&g, 2, Replacement::With, Policy::EdgeWeight, 60_000);
    let mut probs = HashMap::new();
    for i in 0..w.len() {
        for j in i..w.len() {
            let p = (w[i] as f64 / total) * (w[j] as f64 / total) * if i == j { 1.0 } else { 2.0 };
            if p > 0.0 {
                probs.insert(vec![i as u32 + 1, j as u32 + 1], p);
            }
        }
    }
    test(&counts, &probs, "weighted with replacement, 2 of 5");
}

fn rmat() -> CsrGraph {
    let mut g = wayfarer::graph::generate::rmat(12, 8, 4).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 5))).unwrap();
    g
}

fn check_blocks(g: &CsrGraph, mb: &MiniBatch, cfg: &SampleConfig) {
    let mut seeds = mb.seeds.clone();
    seeds.dedup();
    let last = mb.blocks.last().unwrap();
    let mut firsts = Vec::new();
    for &s in &mb.seeds {
        if !firsts.contains(&s) {
            firsts.push(s);
        }
    }
    assert_eq!(last.dst_nodes(), &firsts[..], "the last block's destinations are the seeds");
    for (l, b) in mb.blocks.iter().enumerate() {
        if l + 1 < mb.blocks.len() {
            assert_eq!(mb.blocks[l + 1].src_nodes, b.dst_nodes(), "block {l}'s destinations are block {}'s sources", l + 1);
        }
        let mut unique = b.src_nodes.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), b.src_nodes.len(), "source nodes are unique");
        let mut per_dst = vec![0u32; b.num_dst];
        for ((&s, &d), &e) in b.edge_src.iter().zip(&b.edge_dst).zip(&b.edge_ids) {
            let (dst, src) = (b.src_nodes[d as usize], b.src_nodes[s as usize]);
            assert!(g.row(dst).contains(&(e as usize)), "edge {e} is not in {dst}'s row");
            assert_eq!(g.targets()[e as usize], src);
            per_dst[d as usize] += 1;
        }
        let fanout = cfg.fanouts[l];
        for (d, &c) in per_dst.iter().enumerate() {
            let deg = g.degree(b.src_nodes[d]) as u32;
            let positive = g.row(b.src_nodes[d]).filter(|&e| g.weights().unwrap()[e] > 0.0).count() as u32;
            let want = match (cfg.replacement, cfg.policy) {
                (Replacement::Without, Policy::Uniform) => deg.min(fanout),
                (Replacement::Without, Policy::EdgeWeight | Policy::Custom) => positive.min(fanout),
                (Replacement::With, Policy::Uniform) => {
                    if deg > 0 {
                        fanout
                    } else {
                        0
                    }
                }
                (Replacement::With, Policy::EdgeWeight | Policy::Custom) => {
                    if positive > 0 {
                        fanout
                    } else {
                        0
                    }
                }
            };
            assert_eq!(c, want, "node {} (degree {deg}) in block {l}", b.src_nodes[d]);
        }
    }
}

#[test]
fn blocks_nest_and_hold_real_edges_for_every_mode() {
    let g = rmat();
    let seeds: Vec<u32> = (0..600u32).map(|i| (i * 37) % g.num_nodes() as u32).chain([5, 5, 7]).collect();
    for replacement in [Replacement::Without, Replacement::With] {
        for policy in [Policy::Uniform, Policy::EdgeWeight] {
            let cfg = SampleConfig { fanouts: vec![15, 10, 5], batch_size: 128, replacement, policy, seed: 7, super_batch: 0 };
            let out = sample(&g, &seeds, &cfg).unwrap();
            assert_eq!(out.len(), seeds.len().div_ceil(128));
            for mb in &out {
                check_blocks(&g, mb, &cfg);
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_blocks_on_any_thread_count() {
    let g = rmat();
    let seeds: Vec<u32> = (0..2000u32).collect();
    let cfg = SampleConfig {
        fanouts: vec![10, 5],
        batch_size: 64,
        replacement: Replacement::Without,
        policy: Policy::Uniform,
        seed: 3,
        super_batch: 0,
    };
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| sample(&g, &seeds, &cfg).unwrap())
    };
    let one = run(1);
    assert_eq!(one, run(3));
    let other = sample(&g, &seeds, &SampleConfig { seed: 4, ..cfg.clone() }).unwrap();
    assert_ne!(one, other, "another seed samples differently");
}

/// A policy written in Rust with `#[sampler]`: compiled by the macro like a walk and sampled
/// through `sample_with`; weight w² gives the successive-sampling probabilities of w².
#[wayfarer::sampler]
fn squared(s: &wayfarer::Step) -> f32 {
    s.weight() * s.weight()
}

#[test]
fn a_sampler_policy_from_rust_is_exact() {
    let w = [1.0f32, 2.0, 0.0, 3.0];
    let g = star(&w);
    let sq: Vec<f64> = w.iter().map(|&x| (x * x) as f64).collect();
    let total: f64 = sq.iter().sum();
    let cfg = SampleConfig {
        fanouts: vec![2],
        batch_size: 1,
        replacement: Replacement::Without,
        policy: Policy::Uniform,
        seed: 5,
        super_batch: 0,
    };
    let out = wayfarer::sample::sample_with(&g, &vec![0u32; 40_000], &cfg, &Squared).unwrap();
    let mut counts = HashMap::new();
    for mb in &out {
        let b = &mb.blocks[0];
        let mut picked: Vec<u32> = b.edge_src.iter().map(|&s| b.src_nodes[s as usize]).collect();
        picked.sort_unstable();
        *counts.entry(picked).or_insert(0u64) += 1;
    }
    let mut probs = HashMap::new();
    for i in 0..w.len() {
        for j in i + 1..w.len() {
            let (a, b) = (sq[i], sq[j]);
            let p = a / total * b / (total - a) + b / total * a / (total - b);
            if p > 0.0 {
                probs.insert(vec![i as u32 + 1, j as u32 + 1], p);
            }
        }
    }
    test(&counts, &probs, "#[sampler] squared");
}

/// Longer rows, where A-ExpJ's jumps do most of the work: 1 of 40 (probability w/Σw) and 2 of
/// 12 (the pair formula), with skewed and zero weights.
#[test]
fn weighted_sampling_with_jumps_on_longer_rows_is_exact() {
    let w40: Vec<f32> = (0..40).map(|i| if i % 9 == 4 { 0.0 } else { 1.0 + ((i * 7919) % 23) as f32 * ((i % 3) as f32 + 0.5) }).collect();
    let g = star(&w40);
    let total: f64 = w40.iter().map(|&x| x as f64).sum();
    let counts = tally(&g, 1, Replacement::Without, Policy::EdgeWeight, 80_000);
    let probs: HashMap<Vec<u32>, f64> =
        w40.iter().enumerate().filter(|(_, x)| **x > 0.0).map(|(i, &x)| (vec![i as u32 + 1], x as f64 / total)).collect();
    test(&counts, &probs, "weighted 1 of 40");
    let w12: Vec<f32> = (0..12).map(|i| [0.5f32, 4.0, 0.0, 1.0, 9.0, 2.0][i % 6] * (1.0 + i as f32 / 12.0)).collect();
    let g = star(&w12);
    let total: f64 = w12.iter().map(|&x| x as f64).sum();
    let counts = tally(&g, 2, Replacement::Without, Policy::EdgeWeight, 80_000);
    let mut probs = HashMap::new();
    for i in 0..12 {
        for j in i + 1..12 {
            let (a, b) = (w12[i] as f64, w12[j] as f64);
            let p = a / total * b / (total - a) + b / total * a / (total - b);
            if p > 0.0 {
                probs.insert(vec![i as u32 + 1, j as u32 + 1], p);
            }
        }
    }
    test(&counts, &probs, "weighted 2 of 12");
}

/// The super-batch pipeline (classifier, full and random nodes apart, hash-table frontiers)
/// gives exactly the blocks of the node-by-node reference, for every mode and any number of
/// merged mini-batches, including seeds repeated within and across mini-batches.
#[test]
fn super_batches_sample_exactly_what_the_reference_samples() {
    use wayfarer::runtime::sample::reference_batch;
    let g = rmat();
    let seeds: Vec<u32> = (0..700u32).map(|i| (i * 53) % g.num_nodes() as u32).chain([5, 5, 7, 5]).collect();
    for replacement in [Replacement::Without, Replacement::With] {
        for policy in [Policy::Uniform, Policy::EdgeWeight] {
            let base = SampleConfig { fanouts: vec![12, 6, 3], batch_size: 100, replacement, policy, seed: 11, super_batch: 1 };
            let want: Vec<MiniBatch> =
                seeds.chunks(100).enumerate().map(|(b, s)| reference_batch(&g, s, &base, None, b).unwrap()).collect();
            for k in [1, 3, 8, 64] {
                let got = sample(&g, &seeds, &SampleConfig { super_batch: k, ..base.clone() }).unwrap();
                assert_eq!(got.len(), want.len());
                for (b, (x, y)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(x, y, "{replacement:?} {policy:?}, {k} per super-batch: batch {b} differs");
                }
            }
        }
    }
}

/// GARDEN's Algorithm 1 on a hand-made super-batch: full nodes first within each sub-batch,
/// boundary pointers where its random nodes start, and the layout a permutation.
#[test]
fn the_classifier_puts_full_nodes_first_in_each_sub_batch() {
    use wayfarer::runtime::sample::{classify, exclusive_sum};
    let g = rmat();
    let deg = |v: u32| g.degree(v);
    // Three sub-batches of nodes with mixed degrees (fanout = the median degree).
    let nodes: Vec<u32> = (0..90u32).map(|i| (i * 97) % g.num_nodes() as u32).collect();
    let mut ds: Vec<u64> = nodes.iter().map(|&v| deg(v)).collect();
    ds.sort_unstable();
    let fanout = ds[ds.len() / 2] as u32;
    let batch_ptr = vec![0u32, 25, 25, 90];
    let plan = classify(&g, nodes.clone(), batch_ptr.clone(), fanout, Replacement::Without);
    assert_eq!(exclusive_sum(&[1u8, 0, 1]), vec![0, 1, 1, 2]);
    let mut seen = plan.classified.clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..90).collect::<Vec<u32>>(), "a permutation of the frontier");
    for b in 0..3 {
        let (lo, hi, bound) = (batch_ptr[b] as usize, batch_ptr[b + 1] as usize, plan.bound_ptr[b] as usize);
        assert!(lo <= bound && bound <= hi);
        let full: Vec<u32> = (lo as u32..hi as u32).filter(|&t| deg(nodes[t as usize]) <= fanout as u64).collect();
        let random: Vec<u32> = (lo as u32..hi as u32).filter(|&t| deg(nodes[t as usize]) > fanout as u64).collect();
        assert_eq!(&plan.classified[lo..bound], &full[..], "sub-batch {b}: its full nodes, in order");
        assert_eq!(&plan.classified[bound..hi], &random[..], "sub-batch {b}: then its random nodes");
        for &t in &full {
            assert_eq!(plan.flags[t as usize], 1);
        }
    }
    // With replacement only rows without edges are full.
    let with = classify(&g, nodes.clone(), batch_ptr, fanout, Replacement::With);
    assert!(with.flags.iter().zip(&nodes).all(|(&f, &v)| (f == 1) == (deg(v) == 0)));
}

/// The streaming sampler hands on exactly the epoch's blocks (the reference's), in order: called
/// from outside the pool (whose threads sample ahead while the caller takes the batches) and
/// from one of a pool's own threads (window by window), for any super-batch size and thread
/// count.
#[test]
fn streamed_mini_batches_are_the_epochs_in_order() {
    use wayfarer::runtime::sample::sample_each;
    let g = rmat();
    // More super-batches than the stream's window holds, so its refilling is exercised.
    let seeds: Vec<u32> = (0..3000u32).map(|i| (i * 31) % g.num_nodes() as u32).collect();
    for replacement in [Replacement::Without, Replacement::With] {
        for policy in [Policy::Uniform, Policy::EdgeWeight] {
            let cfg = SampleConfig { fanouts: vec![7, 4], batch_size: 37, replacement, policy, seed: 9, super_batch: 0 };
            // The epoch, batch by batch from the definition (`sample` itself streams).
            let want: Vec<MiniBatch> = seeds
                .chunks(cfg.batch_size)
                .enumerate()
                .map(|(b, s)| wayfarer::runtime::sample::reference_batch(&g, s, &cfg, None, b).unwrap())
                .collect();
            for k in [0, 5] {
                let cfg = SampleConfig { super_batch: k, ..cfg.clone() };
                let stream = || {
                    let mut got = Vec::new();
                    sample_each(&g, &seeds, &cfg, None, |mb| {
                        got.push(mb);
                        Ok(())
                    })
                    .unwrap();
                    got
                };
                assert_eq!(stream(), want, "{replacement:?} {policy:?}, super-batch {k}: from outside the pool");
                for threads in [1, 3] {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    assert_eq!(pool.install(stream), want, "{replacement:?} {policy:?}, super-batch {k}: on one of {threads} pool threads");
                }
            }
        }
    }
}

/// 300 mini-batches of 10 seeds, one layer of 5: many more than the stream's window.
fn many_small_batches(policy: Policy) -> (CsrGraph, Vec<u32>, SampleConfig) {
    let cfg = SampleConfig { fanouts: vec![5], batch_size: 10, replacement: Replacement::Without, policy, seed: 1, super_batch: 0 };
    (rmat(), (0..3000u32).collect(), cfg)
}

/// The sink's error stops the stream and is what the call returns; no batch comes after it.
#[test]
fn a_sink_error_stops_the_stream() {
    use wayfarer::runtime::sample::sample_each;
    let (g, seeds, cfg) = many_small_batches(Policy::Uniform);
    let mut seen = 0;
    let err = sample_each(&g, &seeds, &cfg, None, |_| {
        seen += 1;
        if seen == 7 { Err(wayfarer::WalkError::Config("disk full".into())) } else { Ok(()) }
    })
    .unwrap_err();
    assert_eq!(seen, 7);
    assert!(err.to_string().contains("disk full"), "{err}");
}

/// A policy that panics (a bug in the caller's code) ends the streamed run with that panic on
/// the caller's thread; it does not leave the caller waiting for the batch that never came.
#[test]
fn a_panicking_policy_ends_the_stream_with_its_panic() {
    use wayfarer::runtime::sample::sample_each;
    let (g, seeds, cfg) = many_small_batches(Policy::Custom);
    let policy = |v: u32, _e: usize| -> f32 {
        assert!(v < 2000, "a policy bug past node 2000");
        1.0
    };
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sample_each(&g, &seeds, &cfg, Some(&policy), |_| Ok(()))));
    let payload = run.expect_err("the policy's panic reaches the caller");
    let message =
        payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_default();
    assert!(message.contains("past node 2000"), "{message}");
}
