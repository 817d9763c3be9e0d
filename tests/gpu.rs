//! The CUDA backend on a real GPU, through the job API (`wayfarer::job`) like every caller:
//! the one exactness suite (`common::suite`) with every GPU sampler, and the same seed giving
//! the CPU's walks where both use the same sampler. Tests of the backend's own knobs (hub
//! rows, batches, out-of-core budgets) call the `wayfarer_cuda` crate directly.
//!
//! Without a GPU these tests say so and pass; `scripts/gpu-check.sh` sets
//! `WAYFARER_REQUIRE_GPU=1`, where a missing GPU is a failure.

mod common;
// Generated text, pinned byte for byte: rustfmt leaves it alone.
#[rustfmt::skip]
#[path = "programs/random.rs"]
mod random_programs;

use common::suite::{Target, check_library_walks, run_job};
use common::*;
use wayfarer::gpu::{CudaDevice, GpuReport};
use wayfarer::job::triangles::{CudaTriangles, EdgeMask, TriangleJob, TriangleRunner};
use wayfarer::job::{CompiledProgram, CudaRunner, JobWalk, WalkJob};
use wayfarer::library::LibraryWalk;
use wayfarer::{CostRatio, RunReport, SamplerMode, Starts, WalkConfig, Walks};

fn device() -> Option<CudaDevice> {
    match CudaDevice::open(0) {
        Ok(d) => Some(d),
        Err(e) => {
            assert!(std::env::var_os("WAYFARER_REQUIRE_GPU").is_none(), "WAYFARER_REQUIRE_GPU is set but: {e}");
            eprintln!("skipping the GPU tests: {e}");
            None
        }
    }
}

/// `count` GPUs as one walk runner: GPU 0, then the next real ones, then GPU 0 opened again
/// (the work is split the same way over a device opened twice).
fn gpus(count: usize) -> Vec<CudaDevice> {
    (0..count).map(|i| CudaDevice::open(if i < CudaDevice::count() { i } else { 0 }).unwrap()).collect()
}

/// Runs a library walk on `runner`: its walks, the engine's report and the GPU's own.
#[allow(clippy::too_many_arguments)]
fn gpu_walk(
    runner: &CudaRunner,
    walk: &LibraryWalk,
    g: &wayfarer::CsrGraph,
    starts: &Starts,
    length: u32,
    seed: u64,
    mode: SamplerMode,
    cost_ratio: CostRatio,
    memory_budget: Option<usize>,
) -> (Walks, RunReport, GpuReport) {
    let mut job = WalkJob::new(g, JobWalk::library(walk));
    job.starts = starts.clone();
    job.length = length;
    job.seed = seed;
    job.sampler = mode;
    job.cost_ratio = cost_ratio;
    job.gpus.memory_budget = memory_budget;
    let (walks, done) = run_job(runner, &job).unwrap_or_else(|e| panic!("{} on the GPU: {e}", walk.name()));
    let gpu = done.cuda().expect("CUDA ran the job").clone();
    (walks, done.report, gpu)
}

const MODES: [SamplerMode; 4] = [SamplerMode::Adaptive, SamplerMode::Rejection, SamplerMode::Reservoir, SamplerMode::Structured];

fn starts() -> Starts {
    common::suite::suite_starts(60_000)
}

#[test]
fn library_walks_are_exact_on_the_gpu() {
    let Some(dev) = device() else { return };
    let runner = CudaRunner::new(vec![dev]).unwrap();
    let target = Target {
        label: "cuda".into(),
        runner: &runner,
        program: true,
        modes: &MODES,
        cost_ratio: CostRatio::Default,
        per_start: 60_000,
        partial_tables: false,
    };
    check_library_walks(&target);
    // Tables for the longest row alone: its steps structured, the others eRJS or eRVS.
    let partial = Target { modes: &[SamplerMode::Structured, SamplerMode::Adaptive], partial_tables: true, ..target };
    check_library_walks(&partial);
}

/// With eRJS the GPU draws the CPU's random numbers in the CPU's order and computes the same
/// weights and bounds (no fused multiply-add), so the walks are identical, except after a step
/// where eRJS ran out of trials: eRVS finishes it, and the GPU's warp-parallel eRVS draws other
/// numbers (exactly, but differently). So at most one walk may differ per such step.
#[test]
fn gpu_erjs_walks_equal_the_cpu_walks_for_a_seed() {
    let Some(dev) = device() else { return };
    let runner = CudaRunner::new(vec![dev]).unwrap();
    let mut g = wayfarer::graph::generate::rmat(12, 8, 3).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:2".parse().unwrap(), 4))).unwrap();
    g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 5 }, 5).unwrap())).unwrap();
    for name in ["node2vec", "ppr", "metapath", "deepwalk"] {
        let walk = LibraryWalk::from_name(name, &[], &g, false).unwrap();
        let s = Starts::EveryNode { per_node: 2 };
        let cfg = WalkConfig {
            length: 20,
            seed: 99,
            sampler: SamplerMode::Rejection,
            cost_ratio: CostRatio::Fixed(1.0),
            interleave: 8,
            table_budget: None,
            record_edges: false,
        };
        let (cpu, cpu_report) = walk.run(&g, &s, &cfg, None).unwrap();
        let (gpu, rep, _) = gpu_walk(&runner, &walk, &g, &s, 20, 99, SamplerMode::Rejection, CostRatio::Default, None);
        // Walks can only part at a step where both gave up on eRJS (before it, their states and
        // streams are equal), so each differing walk holds at least one fallback of each.
        let differ = (0..cpu.len()).filter(|&i| cpu.walk(i) != gpu.walk(i)).count() as u64;
        assert!(
            differ <= cpu_report.stats.rejection_fallbacks.min(rep.stats.rejection_fallbacks),
            "{name}: {differ} of {} walks differ, with {} (CPU) and {} (GPU) eRVS fallbacks",
            cpu.len(),
            cpu_report.stats.rejection_fallbacks,
            rep.stats.rejection_fallbacks
        );
        assert!(differ * 10 < cpu.len() as u64, "{name}: too few identical walks to mean anything");
        eprintln!("{name}: {} walks, {differ} differ ({} fallbacks)", cpu.len(), cpu_report.stats.rejection_fallbacks);
    }
    // Unweighted DeepWalk: the CPU takes its uniform-row fast path (one draw per step), which
    // must give the GPU's eRJS walks exactly (every trial accepts: no fallbacks to differ by).
    g.set_weights(None).unwrap();
    let walk = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    let s = Starts::EveryNode { per_node: 2 };
    for sampler in [SamplerMode::Rejection, SamplerMode::Adaptive] {
        let cfg = WalkConfig {
            length: 20,
            seed: 99,
            sampler,
            cost_ratio: CostRatio::Default,
            interleave: 8,
            table_budget: None,
            record_edges: false,
        };
        let (cpu, cpu_report) = walk.run(&g, &s, &cfg, None).unwrap();
        assert_eq!(
            cpu_report.fast_path,
            wayfarer::fast_path::FastPathReport::UniformRows,
            "{sampler}: the CPU did not take the uniform fast path"
        );
        let (gpu, _, _) = gpu_walk(&runner, &walk, &g, &s, 20, 99, SamplerMode::Rejection, CostRatio::Default, None);
        assert_eq!(cpu, gpu, "unweighted DeepWalk ({sampler} on the CPU): the fast path's walks differ from the GPU's eRJS walks");
    }
}

/// With structured proposals forced, the GPU builds the CPU's tables from the same factors
/// and draws the CPU's numbers in the CPU's order (term, slot, alias word, acceptance), so the
/// walks equal the CPU's except after a step that ran out of trials (eRVS finishes it with
/// other numbers). Pareto(1) weights, labels and second-order PageRank's mixture with the
/// edges through `prev`'s row.
#[test]
fn gpu_structured_walks_equal_the_cpu_walks_for_a_seed() {
    let Some(dev) = device() else { return };
    let runner = CudaRunner::new(vec![dev]).unwrap();
    let mut g = wayfarer::graph::generate::rmat(12, 8, 3).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 4))).unwrap();
    g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 5 }, 5).unwrap())).unwrap();
    for (name, params) in
        [("node2vec", vec![]), ("metapath", vec![]), ("deepwalk", vec![]), ("ppr2", vec![("gamma".to_string(), "0.2".to_string())])]
    {
        let walk = LibraryWalk::from_name(name, &params, &g, false).unwrap();
        let s = Starts::EveryNode { per_node: 2 };
        let cfg = WalkConfig {
            length: 20,
            seed: 98,
            sampler: SamplerMode::Structured,
            cost_ratio: CostRatio::Fixed(1.0),
            interleave: 8,
            table_budget: None,
            record_edges: false,
        };
        let (cpu, cpu_report) = walk.run(&g, &s, &cfg, None).unwrap();
        let (gpu, rep, _) = gpu_walk(&runner, &walk, &g, &s, 20, 98, SamplerMode::Structured, CostRatio::Default, None);
        assert!(matches!(rep.proposal, wayfarer::engine::ProposalReport::Built { .. }), "{name}: {:?}", rep.proposal);
        assert!(rep.stats.structured_steps * 2 > rep.steps, "{name}: {:?}", rep.stats);
        let fallbacks = |st: &wayfarer::engine::SamplerStats| st.rejection_fallbacks + st.structured_fallbacks;
        let differ = (0..cpu.len()).filter(|&i| cpu.walk(i) != gpu.walk(i)).count() as u64;
        assert!(
            differ <= fallbacks(&cpu_report.stats).min(fallbacks(&rep.stats)),
            "{name}: {differ} of {} walks differ, with {:?} (CPU) and {:?} (GPU)",
            cpu.len(),
            cpu_report.stats,
            rep.stats
        );
        assert!(differ * 10 < cpu.len() as u64, "{name}: too few identical walks to mean anything");
        eprintln!("{name}: {} walks, {differ} differ; GPU {:?}", cpu.len(), rep.stats);
    }
    // MetaPath's plan is exact, and so is second-order PageRank's mixture: adaptive takes the
    // structured proposal on every step there too, on both devices (candidates untested), so
    // their adaptive walks are the same as well.
    for (name, params) in [("metapath", vec![]), ("ppr2", vec![("gamma".to_string(), "0.2".to_string())])] {
        let walk = LibraryWalk::from_name(name, &params, &g, false).unwrap();
        let s = Starts::EveryNode { per_node: 2 };
        let cfg = WalkConfig { length: 20, seed: 97, sampler: SamplerMode::Adaptive, interleave: 8, ..Default::default() };
        let (cpu, cpu_report) = walk.run(&g, &s, &cfg, None).unwrap();
        let (gpu, rep, _) = gpu_walk(&runner, &walk, &g, &s, 20, 97, SamplerMode::Adaptive, CostRatio::Default, None);
        for (who, st) in [("CPU", &cpu_report.stats), ("GPU", &rep.stats)] {
            assert!(st.structured_steps > 0 && st.rejection_steps + st.reservoir_steps == 0, "{name} adaptive, {who}: {st:?}");
        }
        let differ = (0..cpu.len()).filter(|&i| cpu.walk(i) != gpu.walk(i)).count() as u64;
        assert!(
            differ <= cpu_report.stats.structured_fallbacks.min(rep.stats.structured_fallbacks),
            "{name} adaptive: {differ} walks differ"
        );
    }
}

#[test]
fn walks_larger_than_the_memory_budget_come_in_batches() {
    let Some(dev) = device() else { return };
    let g = wayfarer::graph::generate::rmat(10, 8, 1).unwrap();
    let walk = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    let (program, info) = wayfarer_compiler::compile_source(walk.program().unwrap().0).unwrap();
    let compiled = dev.compile(&program, &info).unwrap();
    let s = Starts::EveryNode { per_node: 4 };
    let run = |budget| {
        let cfg = wayfarer_cuda::GpuRun {
            length: 10,
            seed: 5,
            sampler: SamplerMode::Adaptive,
            cost: wayfarer::gpu::GPU_COST_MODEL,
            starts: &s,
            memory_budget: budget,
            verbose: false,
            hub_budget: Some(0),
            hub_min_degree: None,
            profile: false,
            table_budget: None,
            record_edges: false,
        };
        wayfarer_cuda::run(&dev, &compiled, &g, &[], &program, &cfg).unwrap()
    };
    let (whole, r1) = run(None);
    let per_query = 11 * 4 + wayfarer_cuda::PER_QUERY_EXTRA;
    let graph_bytes = r1.estimated_bytes - (g.num_nodes() * 4) * per_query;
    let (batched, r2) = run(Some(graph_bytes + 1000 * per_query));
    assert_eq!(r1.batches, 1);
    assert!(r2.batches > 1, "{} batches", r2.batches);
    assert_eq!(whole, batched, "batching changed the walks");
    // Streaming to the host in batches of at most 300 walks: the same walks, in order.
    let cfg = wayfarer_cuda::GpuRun {
        length: 10,
        seed: 5,
        sampler: SamplerMode::Adaptive,
        cost: wayfarer::gpu::GPU_COST_MODEL,
        starts: &s,
        memory_budget: None,
        verbose: false,
        hub_budget: Some(0),
        hub_min_degree: None,
        profile: false,
        table_budget: None,
        record_edges: false,
    };
    let mut sizes = Vec::new();
    let mut streamed = wayfarer::Walks { stride: 11, nodes: Vec::new(), lengths: Vec::new(), edges: Vec::new() };
    let r3 = wayfarer_cuda::run_streaming(&dev, &compiled, &g, &[], &program, &cfg, 300 * (11 * 4 + 4), &mut |b| {
        sizes.push(b.len());
        streamed.append(b);
        Ok(())
    })
    .unwrap();
    assert_eq!(r3.batches, sizes.len());
    assert!(sizes.iter().all(|&k| k <= 300) && sizes.len() > 1, "{sizes:?}");
    assert_eq!(whole, streamed, "streaming changed the walks");
}

/// `has_edge` on hub rows reads a bitmap: with every row a "hub", Node2Vec and second-order
/// PageRank (whose weights hinge on `has_edge`) must still be exact.
#[test]
fn hub_bitmaps_keep_has_edge_exact() {
    let Some(dev) = device() else { return };
    for (name, model) in
        [("node2vec", Model::Node2vec { a: 2.0, b: 0.5, weighted: true }), ("ppr2", Model::Ppr2 { gamma: 0.5, weighted: false })]
    {
        let edges = shaped_edges(Shape::Uniform);
        let mut g = build(&edges);
        if name == "ppr2" {
            g.set_weights(None).unwrap();
        }
        let params = if name == "ppr2" { vec![("gamma".to_string(), "0.5".to_string())] } else { vec![] };
        let walk = LibraryWalk::from_name(name, &params, &g, false).unwrap();
        let (source, values) = walk.program().unwrap();
        let (program, info) = wayfarer_compiler::compile_source(source).unwrap();
        let compiled = dev.compile(&program, &info).unwrap();
        for mode in MODES {
            let s = starts();
            let cfg = wayfarer_cuda::GpuRun {
                length: 3,
                seed: 77,
                sampler: mode,
                cost: wayfarer::gpu::GPU_COST_MODEL,
                starts: &s,
                memory_budget: None,
                verbose: false,
                hub_budget: None,
                hub_min_degree: Some(1),
                profile: false,
                table_budget: None,
                record_edges: false,
            };
            let (walks, rep) = wayfarer_cuda::run(&dev, &compiled, &g, &values, &program, &cfg).unwrap();
            assert_eq!(rep.hubs, g.num_nodes() - 1, "every node with edges is a hub here");
            check_tally(&tally(&walks, 3), &model, &edges, &format!("gpu hubs {name} {mode}"));
        }
    }
}

/// A user's stateful `#[walk]` (defined here, not in the library), run through the builder:
/// the macro embeds its source, so the GPU compiles it at run time. Under eRJS its walks
/// equal the CPU's (the same bound as `gpu_erjs_walks_equal_the_cpu_walks_for_a_seed`).
#[wayfarer::walk(params(limit: u32, restart: f32), state(moves: u32))]
impl Wander {
    fn get_weight(&self, s: &wayfarer::Step, st: &WanderState) -> f32 {
        if st.moves > 0 && s.dst() == s.prev() { 0.25 * s.weight() } else { s.weight() }
    }
    fn update(&self, s: &mut wayfarer::Step, st: &mut WanderState, rng: &mut wayfarer::StepRng) {
        st.moves += 1;
        if rng.uniform() < self.restart as f64 {
            s.restart();
        }
    }
    fn stop(&self, _s: &wayfarer::Step, st: &WanderState) -> bool {
        st.moves >= self.limit
    }
}

#[test]
fn a_users_stateful_walk_runs_on_the_gpu_like_on_the_cpu() {
    use wayfarer::prelude::*;
    let Some(_dev) = device() else { return };
    let mut g = wayfarer::graph::generate::rmat(12, 8, 3).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse().unwrap(), 4))).unwrap();
    let walk = || Wander { limit: 12, restart: 0.2 };
    let run = |backend| walk().on(&g).length(30).seed(8).sampler(SamplerMode::Rejection).backend(backend).run().unwrap();
    let cpu = run(wayfarer::gpu::Backend::Cpu);
    let gpu = run(wayfarer::gpu::Backend::Cuda);
    assert!(gpu.backend.starts_with("cuda"), "{}", gpu.backend);
    assert!(cpu.walks.lengths.iter().all(|&l| l <= 13), "stop after 12 moves");
    let differ = (0..cpu.walks.len()).filter(|&i| cpu.walks.walk(i) != gpu.walks.walk(i)).count() as u64;
    let fallbacks = cpu.report.stats.rejection_fallbacks.min(gpu.report.stats.rejection_fallbacks);
    assert!(differ <= fallbacks, "{differ} walks differ with {fallbacks} eRVS fallbacks");
    if differ == 0 {
        assert_eq!(gpu.report.stats.stopped, cpu.report.stats.stopped, "the stop rule ran the same");
    }
}

/// The adaptive rule's R is tuned on the device (a pilot under a ladder of R values on the
/// uploaded graph), cached, and reused; the walks stay exact whatever R is.
#[test]
fn the_gpu_cost_ratio_is_tuned_and_cached() {
    let Some(dev) = device() else { return };
    let runner = CudaRunner::new(vec![dev]).unwrap();
    let cache = std::env::temp_dir().join(format!("wayfarer-gpu-cost-{}", std::process::id()));
    // SAFETY: this test sets the variable before any other code here reads it.
    unsafe { std::env::set_var("WAYFARER_CACHE_DIR", &cache) };
    let mut g = wayfarer::graph::generate::rmat(14, 16, 2).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 4))).unwrap();
    let walk = LibraryWalk::from_name("node2vec", &[], &g, false).unwrap();
    let s = Starts::EveryNode { per_node: 1 };
    let (_, first, _) = gpu_walk(&runner, &walk, &g, &s, 10, 1, SamplerMode::Adaptive, CostRatio::Profile, None);
    assert_eq!(first.cost_ratio_source, "tuned", "{first:?}");
    assert!(first.cost.ratio > 0.0 && first.cost.ratio.is_finite());
    let (_, second, _) = gpu_walk(&runner, &walk, &g, &s, 10, 1, SamplerMode::Adaptive, CostRatio::Profile, None);
    assert_eq!(second.cost_ratio_source, "cached");
    assert_eq!(second.cost, first.cost);
    eprintln!("tuned R = {:.3} for node2vec on R-MAT 14, Pareto(1)", first.cost.ratio);
    let _ = std::fs::remove_dir_all(&cache);
}

/// The preprocessing kernels compute the per-node arrays on the device: they must equal the
/// CPU's `NodeStats` bit for bit (sums included: both follow `row_sum`'s order), on graphs
/// with skewed weights, empty rows, hubs and labels, weighted and not.
#[test]
fn device_node_arrays_equal_the_cpus() {
    let Some(dev) = device() else { return };
    // Reads weight, label and neighbor-degree aggregates in its bound and estimate.
    let source =
        "#[walk] fn mix(s: &Step, l: u32) -> f32 { if s.label() == l { s.weight() } else { s.degree(s.dst()) as f32 + s.weight() } }";
    let (program, info) = wayfarer_compiler::compile_source(source).unwrap();
    let req = wayfarer_compiler::analysis::requirements(&info);
    assert!(req.weight_stats && req.label_stats && req.neighbor_degree, "{req:?}");
    let compiled = dev.compile(&program, &info).unwrap();
    for (scale, weights, weighted) in [(8, "pareto:1", true), (11, "uniform:1:5", true), (10, "pareto:2", false)] {
        let mut g = wayfarer::graph::generate::rmat(scale, 16, scale as u64).unwrap();
        g.set_weights(Some(wayfarer::graph::generate::weights(&g, weights.parse().unwrap(), 4))).unwrap();
        g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 5 }, 5).unwrap())).unwrap();
        if !weighted {
            g.set_weights(None).unwrap();
        }
        assert!((0..g.num_nodes() as u32).any(|v| g.degree(v) == 0), "R-MAT leaves some rows empty");
        let cpu = wayfarer::NodeStats::compute(&g, req, weighted);
        let gpu = wayfarer_cuda::node_stats_on_device(&dev, &compiled, &g).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let what = format!("scale {scale} {weights} weighted={weighted}");
        assert_eq!(bits(&gpu.weight_max), bits(&cpu.weight_max), "weight max, {what}");
        assert_eq!(bits(&gpu.weight_min), bits(&cpu.weight_min), "weight min, {what}");
        assert_eq!(bits(&gpu.weight_sum), bits(&cpu.weight_sum), "weight sum, {what}");
        assert_eq!(gpu.label_k, cpu.label_k, "label k, {what}");
        let field =
            |s: &wayfarer::runtime::NodeStats, f: fn(&wayfarer::runtime::LabelStat) -> u32| s.labels.iter().map(f).collect::<Vec<_>>();
        assert_eq!(field(&gpu, |l| l.max.to_bits()), field(&cpu, |l| l.max.to_bits()), "label max, {what}");
        assert_eq!(field(&gpu, |l| l.sum.to_bits()), field(&cpu, |l| l.sum.to_bits()), "label sum, {what}");
        assert_eq!(field(&gpu, |l| l.count), field(&cpu, |l| l.count), "label count, {what}");
        assert_eq!(gpu.neighbor_degree_max, cpu.neighbor_degree_max, "neighbor degree max, {what}");
        assert_eq!(gpu.neighbor_degree_min, cpu.neighbor_degree_min, "neighbor degree min, {what}");
    }
}

/// eRVS with jumps on long rows: a star whose centre has 5,000 edges with Pareto(1) weights
/// (a few dominate, many are zero), where lanes sync and rescale their skips many times. The
/// next-step frequencies from the centre must match w / Σw (chi-square, as everywhere).
#[test]
fn ervs_jumps_are_exact_on_long_skewed_rows() {
    let Some(dev) = device() else { return };
    let runner = CudaRunner::new(vec![dev]).unwrap();
    let d = 5000u32;
    let mut state = 12345u64;
    let mut uni = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    // Star: row 0 holds the long skewed row, rows 1..=d one edge back each.
    let mut parts = wayfarer::graph::CsrParts { offsets: vec![0], weights: Some(Vec::new()), ..Default::default() };
    let mut probs = std::collections::HashMap::<u32, f64>::new();
    for t in 1..=d {
        let u = uni();
        // Pareto(1) weights, every seventh edge zero.
        let w = if t % 7 == 0 { 0.0 } else { (1.0 / (1.0 - u)) as f32 };
        parts.targets.push(t);
        parts.weights.as_mut().unwrap().push(w);
        if w > 0.0 {
            probs.insert(t, w as f64);
        }
    }
    parts.offsets.push(d as u64);
    for _ in 1..=d {
        parts.targets.push(0);
        parts.weights.as_mut().unwrap().push(1.0);
        parts.offsets.push(parts.targets.len() as u64);
    }
    let g = wayfarer::CsrGraph::from_parts(parts, wayfarer::graph::Orientation::Directed).unwrap();
    let total: f64 = probs.values().sum();
    probs.values_mut().for_each(|p| *p /= total);
    let walk = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    for mode in [SamplerMode::Reservoir, SamplerMode::Adaptive] {
        let s = Starts::Nodes(vec![0u32; 400_000]);
        let (walks, _, _) = gpu_walk(&runner, &walk, &g, &s, 1, 31, mode, CostRatio::Default, None);
        let mut counts = std::collections::HashMap::<u32, u64>::new();
        for i in 0..walks.len() {
            *counts.entry(walks.walk(i)[1]).or_default() += 1;
        }
        let p = chi_square_p(&counts, &probs, &format!("ervs jumps {mode}"));
        assert!(p > 1e-4, "{mode}: chi-square p = {p}");
        eprintln!("{mode}: p = {p:.3}");
    }
}

/// The CUDA half of `tests/backends.rs`: the pinned random programs (drawn from the walk
/// grammar) on the GPU. Under eRJS the GPU walks equal the CPU's except after an eRJS->eRVS
/// fallback (the GPU's eRVS draws differ by design), and a program that fails on the CPU
/// (a NaN or infinite weight) fails on the GPU; under eRVS and adaptive, the first step from
/// the busiest node matches the exact w / Σw (chi-square).
struct GpuLikeCpu<'a> {
    runner: &'a CudaRunner,
    g: &'a wayfarer::CsrGraph,
    what: String,
    walked: usize,
    checked_distributions: usize,
}

impl random_programs::Visitor for GpuLikeCpu<'_> {
    fn visit<W: wayfarer::Walk>(&mut self, walk: &W) {
        let g = self.g;
        let src = walk.source().expect("macro walks carry their source");
        let run_gpu = |starts: &Starts, length: u32, sampler: SamplerMode| {
            let mut job = WalkJob::new(g, JobWalk::native(walk));
            job.starts = starts.clone();
            job.length = length;
            job.seed = 21;
            job.sampler = sampler;
            job.cost_ratio = CostRatio::Default;
            run_job(self.runner, &job).map(|(walks, done)| (walks, done.report))
        };
        // eRJS: the CPU's walks.
        let starts = Starts::EveryNode { per_node: 2 };
        let cfg = WalkConfig {
            length: 12,
            seed: 21,
            sampler: SamplerMode::Rejection,
            cost_ratio: CostRatio::Fixed(1.0),
            interleave: 4,
            table_budget: None,
            record_edges: false,
        };
        let cpu = wayfarer::engine::run(walk, g, &starts, &cfg, None);
        let gpu = run_gpu(&starts, 12, SamplerMode::Rejection);
        match (&cpu, &gpu) {
            (Ok((cw, cr)), Ok((gw, gr))) => {
                let differ = (0..cw.len()).filter(|&i| cw.walk(i) != gw.walk(i)).count() as u64;
                assert!(
                    differ <= cr.stats.rejection_fallbacks.min(gr.stats.rejection_fallbacks),
                    "{}: {differ} walks differ with {} / {} fallbacks\n{}",
                    self.what,
                    cr.stats.rejection_fallbacks,
                    gr.stats.rejection_fallbacks,
                    src.source
                );
                self.walked += 1;
            }
            (Err(_), Err(_)) => {}
            _ => panic!(
                "{}: CPU {:?} but GPU {:?}\n{}",
                self.what,
                cpu.as_ref().map(|_| "walked").map_err(|e| e.to_string()),
                gpu.as_ref().map(|_| "walked").map_err(|e| e.to_string()),
                src.source
            ),
        }
        // eRVS and adaptive: the first step's distribution from the busiest node.
        let v0 = (0..g.num_nodes() as u32).max_by_key(|&v| g.degree(v)).unwrap();
        let stats = wayfarer::NodeStats::compute(g, walk.requirements(), walk.weighted());
        let ctx = wayfarer::Ctx::new(g, &stats);
        let w0 = wayfarer::Walker::<W::State>::new(v0);
        let weights: Vec<f32> = g.row(v0).map(|e| walk.weight(&ctx, &w0, e)).collect();
        if weights.iter().any(|w| !w.is_finite()) || weights.iter().all(|&w| w == 0.0) {
            return;
        }
        let total: f64 = weights.iter().map(|&w| w as f64).sum();
        let mut probs = std::collections::HashMap::<u32, f64>::new();
        for (e, &w) in g.row(v0).zip(&weights) {
            if w > 0.0 {
                *probs.entry(g.targets()[e]).or_default() += w as f64 / total;
            }
        }
        for sampler in [SamplerMode::Reservoir, SamplerMode::Adaptive] {
            let s = Starts::Nodes(vec![v0; 100_000]);
            let (walks, _) = run_gpu(&s, 1, sampler).unwrap_or_else(|e| panic!("{}: {e}\n{}", self.what, src.source));
            let mut counts = std::collections::HashMap::<u32, u64>::new();
            for i in 0..walks.len() {
                *counts.entry(walks.walk(i)[1]).or_default() += 1;
            }
            let p = chi_square_p(&counts, &probs, &format!("{} {sampler}", self.what));
            assert!(p > 1e-5, "{} {sampler}: chi-square p = {p}\n{}", self.what, src.source);
        }
        self.checked_distributions += 1;
    }
}

#[test]
fn random_programs_on_the_gpu_behave_like_on_the_cpu() {
    let Some(dev) = device() else { return };
    let mut g = wayfarer::graph::generate::rmat(9, 8, 11).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 12))).unwrap();
    g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 3 }, 13).unwrap())).unwrap();
    let runner = CudaRunner::new(vec![dev]).unwrap();
    let mut v = GpuLikeCpu { runner: &runner, g: &g, what: String::new(), walked: 0, checked_distributions: 0 };
    for i in 0..random_programs::COUNT {
        for (a, b) in [(0.5f32, 2.0f32), (-1.5, 0.25)] {
            v.what = format!("random program {i} (a={a}, b={b})");
            random_programs::visit(i, a, b, &mut v);
        }
    }
    assert!(v.walked * 2 > 2 * random_programs::COUNT, "only {} runs walked", v.walked);
    eprintln!("{} runs walked like the CPU; {} first-step distributions checked", v.walked, v.checked_distributions);
}

/// GNN neighbor sampling on the GPU (super-batch classifier, grouped and one-warp-per-node
/// kernels, the wide kernel for fanouts above 32) gives exactly the CPU's blocks, with and
/// without replacement, for several super-batch sizes; weighted policies are a clear error.
#[test]
fn gpu_neighbor_sampling_equals_the_cpu() {
    use wayfarer::runtime::sample::{Policy, Replacement, SampleConfig, sample};
    use wayfarer_cuda::sample::{GpuSampleOptions, RandomKernel};
    let Some(dev) = device() else { return };
    let mut g = wayfarer::graph::generate::rmat(13, 8, 2).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 5))).unwrap();
    let seeds: Vec<u32> = (0..3000u32).map(|i| (i * 7919) % g.num_nodes() as u32).chain([1, 1, 2]).collect();
    let mut checked = 0;
    for fanouts in [vec![15, 10, 5], vec![25, 10], vec![40, 3], vec![1, 32]] {
        for replacement in [Replacement::Without, Replacement::With] {
            for super_batch in [1, 3, 8] {
                let cfg =
                    SampleConfig { fanouts: fanouts.clone(), batch_size: 256, replacement, policy: Policy::Uniform, seed: 17, super_batch };
                let want = sample(&g, &seeds, &cfg).unwrap();
                for kernel in [RandomKernel::Grouped, RandomKernel::WarpPerNode] {
                    let (got, report) =
                        wayfarer_cuda::sample::sample(&dev, &g, &seeds, &cfg, GpuSampleOptions { kernel, ..Default::default() }).unwrap();
                    assert_eq!(got.len(), want.len());
                    for (b, (x, y)) in got.iter().zip(&want).enumerate() {
                        assert_eq!(x, y, "{fanouts:?} {replacement:?} super-batch {super_batch} {kernel:?}: batch {b} differs");
                    }
                    assert!(report.full_nodes > 0 && report.random_nodes > 0, "both node classes exercised: {report:?}");
                    checked += 1;
                }
                // The device-resident path: the same blocks once copied out.
                let resident = wayfarer_cuda::sample::sample_on_device(&dev, &g, &seeds, &cfg, GpuSampleOptions::default()).unwrap();
                assert_eq!(resident.num_batches(), want.len());
                assert_eq!(resident.num_edges(), want.iter().flat_map(|b| &b.blocks).map(|b| b.edge_ids.len() as u64).sum::<u64>());
                let (got, copy) = resident.to_host().unwrap();
                assert!(copy.bytes > 0);
                for (b, (x, y)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(x, y, "{fanouts:?} {replacement:?} super-batch {super_batch}, device-resident: batch {b} differs");
                }
                checked += 1;
            }
        }
    }
    // The device-resident path's own default super-batch (many mini-batches at once).
    let cfg = SampleConfig {
        fanouts: vec![25, 10],
        batch_size: 64,
        replacement: Replacement::Without,
        policy: Policy::Uniform,
        seed: 3,
        super_batch: 0,
    };
    let want = sample(&g, &seeds, &cfg).unwrap();
    let resident = wayfarer_cuda::sample::sample_on_device(&dev, &g, &seeds, &cfg, GpuSampleOptions::default()).unwrap();
    assert_eq!(resident.super_batches.len(), seeds.len().div_ceil(64 * wayfarer_cuda::sample::RESIDENT_SUPER_BATCH));
    assert_eq!(resident.to_host().unwrap().0, want, "device-resident, default super-batch");
    let weighted = SampleConfig {
        fanouts: vec![5],
        batch_size: 8,
        replacement: Replacement::Without,
        policy: Policy::EdgeWeight,
        seed: 1,
        super_batch: 0,
    };
    let err = wayfarer_cuda::sample::sample(&dev, &g, &seeds, &weighted, GpuSampleOptions::default()).unwrap_err();
    assert!(err.to_string().contains("CPU only"), "{err}");
    let err = wayfarer_cuda::sample::sample_on_device(&dev, &g, &seeds, &weighted, GpuSampleOptions::default()).err().unwrap();
    assert!(err.to_string().contains("CPU only"), "{err}");
    eprintln!("{checked} GPU sampling configurations equal the CPU's");
}

/// A graph larger than the sampler's device graph budget is sampled out of core (its longest
/// rows in device memory, the rest read from mapped host memory): the CPU's blocks, on the
/// streaming and the device-resident paths, with every random kernel, at budgets from no hot
/// rows to most of them; a budget below the offsets and row starts is a clear error.
#[test]
fn gpu_sampling_out_of_core_equals_the_cpu() {
    use wayfarer::runtime::sample::{Policy, Replacement, SampleConfig, sample};
    use wayfarer_cuda::sample::{GpuSampleOptions, GpuSampler, RandomKernel};
    let Some(dev) = device() else { return };
    let g = wayfarer::graph::generate::rmat(13, 8, 4).unwrap();
    let (n, m) = (g.num_nodes(), g.num_edges() as usize);
    let seeds: Vec<u32> = (0..2500u32).map(|i| (i * 7919) % n as u32).collect();
    let node_side = 8 * (n + 1) + 8 * n;
    let mut last_hot = None;
    let mut checked = 0;
    for hot_share in [0usize, 10, 60] {
        let budget = node_side + 4 * m * hot_share / 100;
        for (fanouts, replacement) in [(vec![15, 10, 5], Replacement::Without), (vec![40, 3], Replacement::With)] {
            let cfg =
                SampleConfig { fanouts: fanouts.clone(), batch_size: 128, replacement, policy: Policy::Uniform, seed: 9, super_batch: 3 };
            let want = sample(&g, &seeds, &cfg).unwrap();
            for kernel in [RandomKernel::Grouped, RandomKernel::WarpPerNode] {
                let opts = GpuSampleOptions { kernel, graph_budget: Some(budget), ..Default::default() };
                let (got, report) = wayfarer_cuda::sample::sample(&dev, &g, &seeds, &cfg, opts).unwrap();
                let (hot, all) = report.hot_edges.expect("out of core");
                assert!(hot < all as u64 && (hot_share > 0) == (hot > 0), "{hot} of {all} hot at {hot_share}%");
                assert!(last_hot.is_none_or(|h| h <= hot));
                last_hot = Some(hot);
                assert_eq!(got, want, "{fanouts:?} {kernel:?}, out of core ({hot_share}% of the targets' bytes hot)");
                checked += 1;
            }
            let sampler = GpuSampler::new(&dev, &g, Some(budget)).unwrap();
            let resident = sampler.sample_on_device(&g, &seeds, &cfg, GpuSampleOptions::default()).unwrap();
            assert!(resident.report.hot_edges.is_some());
            assert_eq!(resident.to_host().unwrap().0, want, "{fanouts:?}, device-resident out of core ({hot_share}%)");
            checked += 1;
        }
    }
    // The whole graph fits: no split.
    let cfg = SampleConfig {
        fanouts: vec![5],
        batch_size: 64,
        replacement: Replacement::Without,
        policy: Policy::Uniform,
        seed: 1,
        super_batch: 1,
    };
    let whole = GpuSampleOptions { graph_budget: Some(8 * (n + 1) + 4 * m), ..Default::default() };
    assert!(wayfarer_cuda::sample::sample(&dev, &g, &seeds, &cfg, whole).unwrap().1.hot_edges.is_none());
    let tiny = GpuSampleOptions { graph_budget: Some(node_side - 1), ..Default::default() };
    let err = wayfarer_cuda::sample::sample(&dev, &g, &seeds, &cfg, tiny).unwrap_err().to_string();
    assert!(err.contains("offsets and row starts"), "{err}");
    eprintln!("{checked} out-of-core sampling runs equal the CPU's blocks");
}

/// The counting kernel's four ways of looking an entry up, each forced on these small graphs:
/// lane units for rows of at most 8 entries and warps' tables for the rest where they can (the
/// default, which runs both in one launch on graphs this small; then in two launches, with
/// warp units taken one and four at a time), a thread per oriented edge (the rows merged, no
/// lists), then without lane units: warps' tables for rows
/// of at most 4, blocks' tables for every row longer than 4 (which takes the long tasks, and
/// again with the short ones), blocks' tables at load 1/16, and block rows longer than 16
/// binary-searched (tables of 32 slots).
fn triangle_tunings() -> [(wayfarer_cuda::triangles::CountTuning, &'static str); 9] {
    use wayfarer_cuda::triangles::CountTuning;
    // The forced paths never take a thread per edge, which the default may on a small graph.
    let lists = CountTuning { edge_threads: Some(false), ..Default::default() };
    [
        (CountTuning::default(), "default"),
        (lists, "default"),
        (CountTuning { fuse: false, warp_group: 1, ..lists }, "two launches"),
        (CountTuning { fuse: false, warp_group: 4, ..lists }, "two launches"),
        (CountTuning { edge_threads: Some(true), ..Default::default() }, "edge threads"),
        (CountTuning { lane_rows: 0, warp_rows: 4, ..lists }, "block tables"),
        (CountTuning { lane_rows: 0, warp_rows: 4, long_tasks: Some(false), ..lists }, "block tables, short tasks"),
        (CountTuning { lane_rows: 0, warp_rows: 4, block_spread: 16, ..lists }, "block tables"),
        (CountTuning { lane_rows: 0, warp_rows: 4, block_slots_max: 32, ..lists }, "searched rows"),
    ]
}

/// Checks that a count took the paths its tuning asks for (on a graph with rows longer than 16).
fn assert_paths(report: &wayfarer::gpu::GpuTriangleReport, how: &str) {
    if how == "edge threads" {
        // One GPU: a thread per edge; a count split over several takes the lists.
        assert!(report.edge_threads == 1 || (report.devices > 1 && report.lookups > 0), "{report:?}");
        return;
    }
    if how == "default" && report.edge_threads > 0 {
        return; // a graph small enough and flat enough for a thread per edge
    }
    assert!(report.lookups > 0 && report.warp_units > 0 && report.edge_threads == 0, "{how}: {report:?}");
    match how {
        "default" => assert!(report.lane_units > 0 && !report.searched_rows(), "{report:?}"),
        "two launches" => assert!(report.lane_units > 0 && !report.searched_rows() && report.fused == 0, "{report:?}"),
        "block tables" => assert!(report.block_units > 0 && !report.searched_rows() && report.long_tasks > 0, "{report:?}"),
        "block tables, short tasks" => {
            assert!(report.block_units > 0 && !report.searched_rows() && report.long_tasks == 0, "{report:?}")
        }
        _ => assert!(report.block_units > 0 && report.searched_rows(), "{report:?}"),
    }
}

/// Triangle counting on the GPU (warps' and blocks' hash tables and searched rows, work split
/// over "two GPUs" — the same device opened twice) equals the CPU's count, per-node counts
/// included, with and without a mask, on graphs with hub rows.
#[test]
fn gpu_triangle_counts_equal_the_cpu() {
    use wayfarer::triangles::{Detail, count_oriented, orient};
    let Some(dev) = device() else { return };
    let Ok(second) = CudaDevice::open(0) else { return };
    let devs = [dev, second];
    let (mut checked, mut fused, mut edge_threads) = (0, 0, 0);
    for (scale, ef) in [(10u32, 8u32), (13, 16), (15, 24)] {
        let mut g = wayfarer::graph::generate::rmat(scale, ef, 3).unwrap();
        g.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse().unwrap(), 4))).unwrap();
        let w = g.weights().unwrap().to_vec();
        let heavy = |_: u32, e: usize| w[e] > 2.0;
        for keep in [None, Some(&heavy as wayfarer::triangles::KeepFn)] {
            let o = orient(&g, keep);
            let want = count_oriented(&o, Detail::PerNode);
            assert!(want.total > 0);
            for (tuning, how) in triangle_tunings() {
                for k in [1, 2] {
                    let (got, report) = wayfarer_cuda::triangles::count_with(&devs[..k], &o, Detail::PerNode, tuning).unwrap();
                    assert_eq!(got, want, "R-MAT {scale}, mask {}, {k} GPU(s), {how}", keep.is_some());
                    let (total, _) = wayfarer_cuda::triangles::count_with(&devs[..k], &o, Detail::Total, tuning).unwrap();
                    assert_eq!(total.total, want.total);
                    if scale >= 13 {
                        assert_paths(&report, how);
                    }
                    fused += report.fused;
                    edge_threads += report.edge_threads;
                    checked += 1;
                }
            }
        }
    }
    // Only tiny rows (200 disjoint K6s: oriented rows of at most 5 entries): lane units alone,
    // no warp or block unit, so the table kernel does not run at all.
    let mut parts = wayfarer::graph::CsrParts { offsets: vec![0], ..Default::default() };
    for u in 0..1200u32 {
        let clique = u / 6 * 6;
        parts.targets.extend((clique..clique + 6).filter(|&v| v != u));
        parts.offsets.push(parts.targets.len() as u64);
    }
    let g = wayfarer::CsrGraph::from_parts(parts, wayfarer::graph::Orientation::Undirected).unwrap();
    let o = orient(&g, None);
    let want = count_oriented(&o, Detail::PerNode);
    assert_eq!(want.total, 200 * 20);
    for k in [1, 2] {
        let lists = wayfarer_cuda::triangles::CountTuning { edge_threads: Some(false), ..Default::default() };
        let (got, report) = wayfarer_cuda::triangles::count_with(&devs[..k], &o, Detail::PerNode, lists).unwrap();
        assert_eq!(got, want, "disjoint K6s, {k} GPU(s)");
        assert!(report.lane_units > 0 && report.warp_units == 0 && report.block_units == 0, "{report:?}");
        // By default a graph this small and flat takes a thread per edge (on one GPU).
        let (got, report) = wayfarer_cuda::triangles::count_with(&devs[..k], &o, Detail::PerNode, Default::default()).unwrap();
        assert_eq!(got, want, "disjoint K6s, {k} GPU(s), default");
        assert_eq!(report.edge_threads, usize::from(k == 1), "{report:?}");
        checked += 2;
    }
    // The default runs table and lane units in one launch on graphs this small.
    assert!(fused > 0, "no count ran the fused kernel");
    assert!(edge_threads > 0, "no count took a thread per edge");
    eprintln!("{checked} GPU triangle counts equal the CPU's ({fused} in one launch)");
}

/// Counts `g`'s triangles on `runner` through a triangle job, the mask (a `#[mask]`) compiled
/// for both the CPU and the GPU as the CLI compiles a mask file.
fn gpu_count<W: wayfarer::Walk>(
    runner: &CudaTriangles,
    g: &wayfarer::CsrGraph,
    mask: Option<&W>,
    detail: wayfarer::triangles::Detail,
) -> (wayfarer::triangles::TriangleCounts, wayfarer::gpu::GpuTriangleReport) {
    let compiled = mask.map(|m| {
        let src = m.source().expect("a #[mask] carries its source");
        let program = wayfarer_compiler::lower_mask_source(src.source).unwrap();
        let info = wayfarer_compiler::analyze(&program);
        let values = wayfarer::gpu::program_values(&program, &src.params).unwrap();
        let jit = wayfarer_jit::JitWalk::compile(&program, &info, &values, g.weights().is_some()).unwrap();
        (CompiledProgram { program, info, values }, jit)
    });
    let job = TriangleJob {
        graph: g,
        mask: compiled.as_ref().map(|(program, jit)| EdgeMask { jit, program }),
        detail,
        gpus: Default::default(),
        share: wayfarer::triangles::Share::WHOLE,
    };
    let done = runner.count(&job).unwrap();
    (done.counts, done.gpu.expect("CUDA counted"))
}

#[wayfarer::mask]
fn heavier_than(s: &wayfarer::Step, t: f32) -> bool {
    s.weight() > t
}

#[wayfarer::mask]
fn label_in_closed_pair(s: &wayfarer::Step, l: u32) -> bool {
    s.label() == l || s.has_edge(s.dst(), s.cur())
}

/// Orientation and masks on the device (`count_graph`, the mask compiled by the CUDA backend):
/// the CPU's counts for no mask, a weight threshold, a label test with `has_edge`, on one GPU
/// and on two (device 0 opened twice), per node and total; a directed graph goes through the
/// host's symmetrization; a negative weight is the CPU's error naming the mask.
#[test]
fn gpu_orientation_and_masks_equal_the_cpu() {
    use wayfarer::triangles::{Detail, count_masked, count_with};
    let Some(dev) = device() else { return };
    let Ok(second) = CudaDevice::open(0) else { return };
    let devs = [dev, second];
    let open = |n| (0..n).map(|_| CudaDevice::open(0).unwrap()).collect::<Vec<_>>();
    let counters = [CudaTriangles::new(open(1)).unwrap(), CudaTriangles::new(open(2)).unwrap()];
    let mut checked = 0;
    for (scale, ef) in [(9u32, 4u32), (13, 16), (15, 24)] {
        let mut g = wayfarer::graph::generate::rmat(scale, ef, 5).unwrap();
        g.set_weights(Some(wayfarer::graph::generate::weights(&g, "uniform".parse().unwrap(), 6))).unwrap();
        g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 3 }, 7).unwrap())).unwrap();
        let heavy = HeavierThan { t: 2.0 };
        let labelled = LabelInClosedPair { l: 1 };
        for k in [1, 2] {
            let want = count_masked(&g, None, Detail::PerNode);
            assert!(want.total > 0);
            let none: Option<&HeavierThan> = None;
            let (got, report) = gpu_count(&counters[k - 1], &g, none, Detail::PerNode);
            assert_eq!(got, want, "R-MAT {scale}, no mask, {k} GPU(s)");
            assert!(report.orient_seconds > 0.0);
            // Shares of a count over processes (mpirun), each on these GPUs: they sum to it.
            for parts in [2usize, 3] {
                let (mut total, mut kept, mut per_node) = (0, 0, vec![0u64; g.num_nodes()]);
                for part in 0..parts {
                    let share = wayfarer::triangles::Share::new(part, parts).unwrap();
                    let tuning = Default::default();
                    let (got, _) =
                        wayfarer_cuda::triangles::count_graph_share(&devs[..k], &g, None, Detail::PerNode, tuning, share).unwrap();
                    total += got.total;
                    kept += got.kept_edges;
                    per_node.iter_mut().zip(&got.per_node).for_each(|(a, b)| *a += b);
                    assert_eq!(got.degree.is_empty(), part != 0, "degrees in share 0 only");
                }
                assert_eq!((total, kept, &per_node), (want.total, want.kept_edges, &want.per_node), "{parts} shares, {k} GPU(s)");
            }
            // Each lookup path forced.
            for (tuning, how) in triangle_tunings() {
                let (got, report) = wayfarer_cuda::triangles::count_graph_with(&devs[..k], &g, None, Detail::PerNode, tuning).unwrap();
                assert_eq!(got, want, "R-MAT {scale}, no mask, {k} GPU(s), {how}");
                if scale >= 13 {
                    assert_paths(&report, how);
                }
            }
            let want = count_with(&g, &heavy, Detail::PerNode).unwrap();
            let (got, _) = gpu_count(&counters[k - 1], &g, Some(&heavy), Detail::PerNode);
            assert_eq!(got, want, "R-MAT {scale}, weight mask, {k} GPU(s)");
            let want = count_with(&g, &labelled, Detail::Total).unwrap();
            let (got, _) = gpu_count(&counters[k - 1], &g, Some(&labelled), Detail::Total);
            assert_eq!(got.total, want.total, "R-MAT {scale}, label/has_edge mask, {k} GPU(s)");
            assert_eq!(got.kept_edges, want.kept_edges);
            checked += 3;
        }
    }
    // Directed input (self loops, both directions, parallel copies): symmetrized on the host.
    let directed = wayfarer::graph::CsrGraph::parse_edge_list(
        b"0 1\n1 0\n1 2\n2 0\n2 2\n2 3\n3 1\n3 1\n0 3\n",
        std::path::Path::new("d.txt"),
        &wayfarer::graph::EdgeListOptions::default(),
    )
    .unwrap();
    assert_eq!(directed.orientation(), wayfarer::graph::Orientation::Directed);
    let none: Option<&HeavierThan> = None;
    let (got, _) = gpu_count(&counters[0], &directed, none, Detail::PerNode);
    assert_eq!(got, count_masked(&directed, None, Detail::PerNode));
    assert_eq!(got.total, 4, "K4 once symmetrized");
    // A negative weight in a program used as a mask: the CPU's error, naming it.
    let g = wayfarer::graph::generate::rmat(8, 4, 1).unwrap();
    let program = wayfarer_compiler::compile_source("#[walk]\nfn negative(s: &Step) -> f32 { 0.0 - s.weight() }\n").unwrap().0;
    let info = wayfarer_compiler::analyze(&program);
    let mask = wayfarer_cuda::triangles::GpuMask { program: &program, info: &info, values: &[] };
    let e = wayfarer_cuda::triangles::count_graph(&devs[..1], &g, Some(mask), Detail::Total).unwrap_err().to_string();
    assert!(e.contains("`negative` returned weight -1"), "{e}");
    eprintln!("{checked} device-oriented GPU triangle counts equal the CPU's");
}

/// Length-20 walks, seed 77, the GPU default cost model, on `runner`, within `budget` bytes of
/// device memory if given.
fn walks_with_budget(
    runner: &CudaRunner,
    walk: &LibraryWalk,
    g: &wayfarer::CsrGraph,
    starts: &Starts,
    mode: SamplerMode,
    budget: Option<usize>,
) -> (Walks, GpuReport) {
    // With the edges recorded: out of core they come back from virtual edge indices, and with
    // several GPUs from each GPU's share; both must give the in-memory, one-GPU records.
    let mut job = WalkJob::new(g, JobWalk::library(walk));
    job.starts = starts.clone();
    job.length = 20;
    job.seed = 77;
    job.sampler = mode;
    job.gpus.memory_budget = budget;
    job.record_edges = true;
    let (walks, done) = run_job(runner, &job).unwrap_or_else(|e| panic!("{} on the GPU: {e}", walk.name()));
    assert_eq!(walks.edges.len(), walks.len() * 20, "{}: one recorded edge per move", walk.name());
    (walks, done.cuda().expect("CUDA ran the job").clone())
}

fn walks_on(runner: &CudaRunner, walk: &LibraryWalk, g: &wayfarer::CsrGraph, starts: &Starts, mode: SamplerMode) -> Walks {
    walks_with_budget(runner, walk, g, starts, mode, None).0
}

/// The GPU records the edge behind each move as the CPU does, on a multigraph (parallel edges
/// of different weights) and for a walk that restarts: with eRJS both draw the same numbers,
/// so wherever their walks are equal their edges must be too; with every sampler each edge
/// leads from the walk's node to its next, `NO_EDGE` only for a restart and past the end; and
/// recording does not change the walks.
#[test]
fn gpu_records_the_edges_the_cpu_records() {
    use wayfarer::NO_EDGE;
    use wayfarer::graph::{CsrParts, Orientation};
    let Some(dev) = device() else { return };
    let runner = CudaRunner::new(vec![dev]).unwrap();
    let base = wayfarer::graph::generate::rmat(11, 8, 3).unwrap();
    let (mut offsets, mut targets, mut weights) = (vec![0u64], Vec::new(), Vec::new());
    for v in 0..base.num_nodes() as u32 {
        for (i, &t) in base.neighbors(v).iter().enumerate() {
            targets.push(t);
            weights.push(1.0 + (i % 4) as f32);
            if i == 0 && v % 3 == 0 {
                targets.push(t);
                weights.push(3.0);
            }
        }
        offsets.push(targets.len() as u64);
    }
    let g =
        wayfarer::CsrGraph::from_parts(CsrParts { offsets, targets, weights: Some(weights), ..Default::default() }, Orientation::Directed)
            .unwrap();
    let s = Starts::EveryNode { per_node: 2 };
    let mut equal_walks = 0;
    for name in ["node2vec", "ppr", "deepwalk"] {
        let walk = LibraryWalk::from_name(name, &[], &g, false).unwrap();
        for mode in [SamplerMode::Rejection, SamplerMode::Adaptive, SamplerMode::Reservoir] {
            let mut job = WalkJob::new(&g, JobWalk::library(&walk));
            job.starts = s.clone();
            job.length = 20;
            job.seed = 99;
            job.sampler = mode;
            job.cost_ratio = CostRatio::Default;
            let (plain, _) = run_job(&runner, &job).unwrap();
            job.record_edges = true;
            let (gpu, _) = run_job(&runner, &job).unwrap();
            assert_eq!(plain.nodes, gpu.nodes, "{name} {mode:?}: recording changed the walks");
            assert_eq!(gpu.edges.len(), gpu.len() * 20, "{name} {mode:?}");
            let mut restarts = 0;
            for i in 0..gpu.len() {
                let (nodes, edges) = (gpu.walk(i), gpu.walk_edges(i));
                let padding = &gpu.edges[i * 20 + edges.len()..(i + 1) * 20];
                assert!(padding.iter().all(|&e| e == NO_EDGE), "{name} {mode:?}: walk {i} past its end: {padding:?}");
                for (j, &e) in edges.iter().enumerate() {
                    if e == NO_EDGE {
                        assert!(name == "ppr" && nodes[j + 1] == nodes[0], "{name} {mode:?}: walk {i} move {j} took no edge");
                        restarts += 1;
                    } else {
                        assert!(g.row(nodes[j]).contains(&(e as usize)), "{name} {mode:?}: walk {i} move {j}: edge {e} not in the row");
                        assert_eq!(g.targets()[e as usize], nodes[j + 1], "{name} {mode:?}: walk {i} move {j}: edge {e} leads elsewhere");
                    }
                }
            }
            assert_eq!(restarts > 0, name == "ppr", "{name} {mode:?}: {restarts} restarts");
            if mode == SamplerMode::Rejection {
                let cfg = WalkConfig {
                    length: 20,
                    seed: 99,
                    sampler: mode,
                    cost_ratio: CostRatio::Fixed(1.0),
                    interleave: 8,
                    table_budget: None,
                    record_edges: true,
                };
                let (cpu, _) = walk.run(&g, &s, &cfg, None).unwrap();
                let same: Vec<usize> = (0..cpu.len()).filter(|&i| cpu.walk(i) == gpu.walk(i)).collect();
                assert!(same.len() * 10 > cpu.len() * 9, "{name}: only {} of {} walks equal", same.len(), cpu.len());
                for &i in &same {
                    assert_eq!(cpu.walk_edges(i), gpu.walk_edges(i), "{name}: walk {i}: equal nodes, other edges");
                }
                equal_walks += same.len();
            }
        }
    }
    eprintln!("{equal_walks} walks with the CPU's nodes have its edges");
}

/// A graph larger than the memory budget runs out of core (its longest rows in device memory,
/// every edge readable from mapped host memory): the same walks as in device memory, for walks
/// reading weights, labels, timestamps and `has_edge`, with every sampler, at several budgets
/// (down to no hot rows at all), on one and two GPUs.
#[test]
fn graphs_larger_than_the_budget_give_the_same_walks_out_of_core() {
    let Some(_) = device() else { return };
    let runners = [CudaRunner::new(gpus(1)).unwrap(), CudaRunner::new(gpus(2)).unwrap()];
    let mut g = wayfarer::graph::generate::rmat(13, 16, 21).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 22))).unwrap();
    g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 4 }, 23).unwrap())).unwrap();
    let times: Vec<i64> = (0..g.num_edges() as i64).map(|e| (e * 7919) % 1000).collect();
    g.set_timestamps(Some(times)).unwrap();
    let starts = Starts::Nodes((0..6000u32).map(|i| (i * 13) % 8192).collect());
    let m = g.num_edges() as usize;
    // Per node at most 128 bytes on the device (offsets, row starts, per-node arrays); per edge
    // 20 (target, weight, label, timestamp).
    let node_side = 8192 * 128;
    let walkers = 6000 * (21 * 4 + wayfarer_cuda::PER_QUERY_EXTRA);
    let mut checked = 0;
    for name in ["node2vec", "metapath", "temporal", "ppr-stop"] {
        let walk = LibraryWalk::from_name(name, &[], &g, false).unwrap();
        for mode in MODES {
            let (whole, rep) = walks_with_budget(&runners[0], &walk, &g, &starts, mode, None);
            assert!(rep.hot_edges.is_none());
            let mut last_hot = None;
            for hot_share in [0usize, 10, 60] {
                let budget = node_side + 2 * walkers + m * 20 * hot_share / 100;
                for k in [1, 2] {
                    let (split, rep) = walks_with_budget(&runners[k - 1], &walk, &g, &starts, mode, Some(budget));
                    let (hot, all) = rep.hot_edges.expect("out of core");
                    assert!(hot < all && last_hot.is_none_or(|h| h <= hot), "{name}: {hot} of {all} hot at {hot_share}%");
                    last_hot = Some(hot);
                    assert_eq!(whole, split, "{name} {mode:?}: out of core ({hot_share}% hot, {k} GPUs) changed the walks");
                    checked += 1;
                }
            }
        }
    }
    eprintln!("{checked} out-of-core runs equal the in-memory walks");
}

/// Several GPUs (the second real one when there is one, else device 0 opened again): the same
/// walks as one GPU for library walks with every sampler, explicit and per-node starts, and
/// with a memory budget that makes each GPU run its share in several launches.
#[test]
fn several_gpus_give_the_walks_of_one() {
    let Some(_) = device() else { return };
    let devs = gpus(2);
    let runners = [CudaRunner::new(gpus(1)).unwrap(), CudaRunner::new(gpus(2)).unwrap()];
    let mut g = wayfarer::graph::generate::rmat(12, 8, 3).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:2".parse().unwrap(), 4))).unwrap();
    g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 3 }, 5).unwrap())).unwrap();
    let explicit = Starts::Nodes((0..20_000u32).map(|i| (i * 7919) % 4096).collect());
    let every = Starts::EveryNode { per_node: 3 };
    let mut checked = 0;
    for name in ["node2vec", "metapath", "ppr-stop"] {
        let walk = LibraryWalk::from_name(name, &[], &g, false).unwrap();
        for mode in MODES {
            for starts in [&explicit, &every] {
                let run = |k: usize| walks_on(&runners[k - 1], &walk, &g, starts, mode);
                let one = run(1);
                let two = run(2);
                assert_eq!(one, two, "{name} {mode:?}: two GPUs changed the walks");
                checked += 1;
            }
        }
    }
    // A budget of 250 queries per launch: a host batch holds 500 (two GPUs' worth), so about
    // half the hashed shares outgrow a launch and run in two.
    let walk = LibraryWalk::from_name("node2vec", &[], &g, false).unwrap();
    let (program, info) = wayfarer_compiler::compile_source(walk.program().unwrap().0).unwrap();
    let values = walk.program().unwrap().1;
    let compiled: Vec<_> = devs.iter().map(|d| d.compile(&program, &info).unwrap()).collect();
    // With the edges recorded (8 bytes a move): they follow their walks through the launches,
    // the shares and the host batches.
    let per_query = 21 * 4 + wayfarer_cuda::PER_QUERY_EXTRA + 20 * 8;
    let run = |k: usize, budget: Option<usize>, host: usize| {
        let cfg = wayfarer_cuda::GpuRun {
            length: 20,
            seed: 9,
            sampler: SamplerMode::Adaptive,
            cost: wayfarer::gpu::GPU_COST_MODEL,
            starts: &explicit,
            memory_budget: budget,
            verbose: false,
            hub_budget: Some(0),
            hub_min_degree: None,
            profile: false,
            table_budget: None,
            record_edges: true,
        };
        let gpus: Vec<_> = devs[..k].iter().zip(&compiled).collect();
        let mut walks = wayfarer::Walks { stride: 21, nodes: Vec::new(), lengths: Vec::new(), edges: Vec::new() };
        let rep = wayfarer_cuda::run_multi_streaming(&gpus, &g, &values, &program, &cfg, host, &mut |b| {
            walks.append(b);
            Ok(())
        })
        .unwrap();
        (walks, rep)
    };
    let (whole, r1) = run(1, None, usize::MAX);
    let graph_bytes = r1.estimated_bytes - 20_000 * per_query;
    let (split, r2) = run(2, Some(graph_bytes + 250 * per_query), 1000 * (21 * 4 + 4 + 20 * 8));
    assert_eq!(r2.batches, 40);
    assert_eq!(whole.edges.len(), 20_000 * 20);
    assert_eq!(whole, split, "launch and batch splits changed the walks");
    assert_eq!(r1.steps, r2.steps);
    // A shard of the run (what one MPI rank runs), on one and on two GPUs: the whole run's rows.
    let walk = LibraryWalk::from_name("node2vec", &[], &g, false).unwrap();
    for starts in [&explicit, &every] {
        let collect = |k: usize, s: &Starts| walks_on(&runners[k - 1], &walk, &g, s, SamplerMode::Adaptive);
        let whole = collect(1, starts);
        let shard = starts.clone().shard(1, 3, g.num_nodes());
        let Starts::Shard { first, count, .. } = shard else { unreachable!() };
        let (first, count) = (first as usize, count as usize);
        let want = wayfarer::Walks {
            stride: 21,
            nodes: whole.nodes[first * 21..(first + count) * 21].to_vec(),
            lengths: whole.lengths[first..first + count].to_vec(),
            edges: whole.edges[first * 20..(first + count) * 20].to_vec(),
        };
        for k in [1, 2] {
            assert_eq!(collect(k, &shard), want, "shard 1 of 3 on {k} GPU(s)");
        }
    }
    eprintln!("{checked} multi-GPU runs equal one GPU's");
}

/// The partitioner's density walks on the GPU (eRJS, the CPU's walks for a seed) give the
/// CPU's densities, so `wayfarer partition --backend cuda` partitions like the CPU.
#[test]
fn partition_density_on_the_gpu_equals_the_cpu() {
    let Some(dev) = device() else { return };
    let g = wayfarer::graph::generate::barabasi_albert(20_000, 3, 9).unwrap();
    let cpu = wayfarer::partition::density(&g, 8, 6, 4, None).unwrap();
    let gpu = wayfarer::partition::density(&g, 8, 6, 4, Some(&dev)).unwrap();
    assert_eq!(cpu, gpu);
    assert!(cpu.iter().any(|&x| x > 0.0 && x < 1.0));
}

/// More than 2^32 edge entries end to end (issue 8), run by `scripts/big-graph-check.sh` on the
/// device with `WAYFARER_BIG_GRAPH=g.wfg` (a generated graph of that size; skipped otherwise):
/// walks from nodes whose rows start beyond entry 2^32, on the GPU and on the CPU (eRJS: the
/// same walks for a seed), every step an edge of the graph.
#[test]
fn graphs_beyond_two_to_the_32_edges_walk_on_the_gpu() {
    let Some(path) = std::env::var_os("WAYFARER_BIG_GRAPH") else {
        eprintln!("skipping the >2^32-edge check: WAYFARER_BIG_GRAPH is not set");
        return;
    };
    let Some(dev) = device() else { return };
    let runner = CudaRunner::new(vec![dev]).unwrap();
    let g = wayfarer::CsrGraph::load(&path).unwrap();
    assert!(g.num_edges() > 1u64 << 32, "{} edges: not beyond 2^32", g.num_edges());
    let off = g.offsets();
    // Starts: nodes with edges whose rows begin past 2^32, and a few before.
    let late: Vec<u32> =
        (0..g.num_nodes() as u32).rev().filter(|&v| off[v as usize] > 1u64 << 32 && g.degree(v) > 0).take(20_000).collect();
    let early: Vec<u32> = (0..g.num_nodes() as u32).filter(|&v| g.degree(v) > 0).take(2_000).collect();
    assert!(late.len() == 20_000, "too few nodes beyond 2^32");
    let starts = Starts::Nodes(late.into_iter().chain(early).collect());
    let walk = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    let (gpu, rep, _) = gpu_walk(&runner, &walk, &g, &starts, 10, 5, SamplerMode::Rejection, CostRatio::Default, None);
    let cfg = WalkConfig {
        length: 10,
        seed: 5,
        sampler: SamplerMode::Rejection,
        cost_ratio: CostRatio::Fixed(1.0),
        interleave: 8,
        table_budget: None,
        record_edges: false,
    };
    let (cpu, _) = walk.run(&g, &starts, &cfg, None).unwrap();
    assert_eq!(gpu, cpu, "GPU walks differ from the CPU's beyond 2^32 edges");
    for i in 0..gpu.len() {
        let w = gpu.walk(i);
        for pair in w.windows(2) {
            assert!(g.has_edge(pair[0], pair[1]), "walk {i}: {} -> {} is not an edge", pair[0], pair[1]);
        }
    }
    eprintln!("{} walks, {} steps beyond 2^32 edge entries: GPU = CPU, every step an edge", gpu.len(), rep.steps);
}

/// The feature store: gathered rows equal the matrix's, from the cache or from mapped host
/// memory, for each word size of the kernel; hits count the cached rows; a bad id is an error.
#[test]
fn gpu_feature_store_gathers_exact_rows_from_cache_and_host() {
    use wayfarer_cuda::cudarc::driver::DevicePtr;
    // A fixed scramble (no generator needed): splitmix64's finalizer.
    let splitmix64 = |x: u64| {
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    use wayfarer_cuda::features::FeatureStore;
    let Some(dev) = device() else { return };
    for row_bytes in [128usize, 148, 66] {
        let rows = 5000;
        let data: Vec<u8> = (0..rows * row_bytes).map(|i| splitmix64(i as u64 ^ row_bytes as u64) as u8).collect();
        let mut store = FeatureStore::new(&dev, &data, rows, row_bytes, 700 * row_bytes + 5, 0).unwrap();
        assert_eq!(store.cache_capacity(), 700);
        let hot: Vec<u32> = (0..1000u32).map(|i| (i * 37) % rows as u32).collect();
        assert_eq!(store.set_cache(&hot).unwrap(), 700, "the budget caps the cache");
        let cached: std::collections::HashSet<u32> = hot[..700].iter().copied().collect();
        let ids: Vec<i64> = (0..20_000u64).map(|i| (splitmix64(i) % rows as u64) as i64).chain([0, 0, rows as i64 - 1]).collect();
        let s = dev.stream();
        let ids_dev = s.clone_htod(&ids).unwrap();
        let addr = ids_dev.device_ptr(s).0;
        let out = s.clone_dtoh(&store.gather(addr, ids.len()).unwrap()).unwrap();
        for (i, &id) in ids.iter().enumerate() {
            let want = &data[id as usize * row_bytes..(id as usize + 1) * row_bytes];
            assert_eq!(&out[i * row_bytes..(i + 1) * row_bytes], want, "row {i} (id {id}), rows of {row_bytes} bytes");
        }
        let stats = store.stats();
        let want_hits = ids.iter().filter(|&&id| cached.contains(&(id as u32))).count() as u64;
        assert_eq!((stats.rows, stats.hits), (ids.len() as u64, want_hits), "{stats:?}");
        // An id past the rows: an error naming its position.
        let bad: Vec<i64> = vec![1, 2, rows as i64, 3];
        let bad_dev = s.clone_htod(&bad).unwrap();
        let err = store.gather(bad_dev.device_ptr(s).0, bad.len()).err().unwrap();
        assert!(err.to_string().contains("ids[2]"), "{err}");
        // A cache given a row twice is refused.
        assert!(store.set_cache(&[5, 5]).is_err());

        // With a dynamic ring of 300 slots: a gather's misses are admitted after it, so the
        // same 200 rows hit the second time; rows stay exact through admissions and evictions
        // (ids drawn from a shifting window, so the ring turns over many times).
        let mut store = FeatureStore::new(&dev, &data, rows, row_bytes, 100 * row_bytes, 300 * row_bytes).unwrap();
        assert_eq!((store.cache_capacity(), store.dynamic_capacity()), (100, 300));
        store.set_cache(&(0..100u32).collect::<Vec<_>>()).unwrap();
        let fresh: Vec<i64> = (1000..1200).collect();
        let fresh_dev = s.clone_htod(&fresh).unwrap();
        for round in 0..2 {
            store.reset_stats();
            store.gather(fresh_dev.device_ptr(s).0, fresh.len()).unwrap();
            assert_eq!(store.stats().hits, if round == 0 { 0 } else { 200 }, "round {round}, rows of {row_bytes} bytes");
        }
        for round in 0..40u64 {
            let ids: Vec<i64> =
                (0..500u64).map(|i| ((splitmix64(round * 1000 + i) % 400) + round * 60) as i64 % rows as i64).chain(0..20).collect();
            let ids_dev = s.clone_htod(&ids).unwrap();
            let out = s.clone_dtoh(&store.gather(ids_dev.device_ptr(s).0, ids.len()).unwrap()).unwrap();
            for (i, &id) in ids.iter().enumerate() {
                let want = &data[id as usize * row_bytes..(id as usize + 1) * row_bytes];
                assert_eq!(&out[i * row_bytes..(i + 1) * row_bytes], want, "round {round} row {i} (id {id}), dynamic ring");
            }
        }
        let stats = store.stats();
        assert!(stats.hits > stats.rows / 4, "the ring serves repeated rows: {stats:?}");
    }
}
