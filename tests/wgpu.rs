//! The wgpu backend on a real adapter (CI: Mesa's lavapipe; the H200 through its Vulkan
//! driver in `scripts/gpu-check.sh`), through the job API like every caller: the one
//! exactness suite (`common::suite`) on every kernel with every sampler; where no decision
//! depends on float precision, the CPU's walks for a seed.
//!
//! Without an adapter these tests say so and pass; `WAYFARER_REQUIRE_WGPU=1` (set by
//! `.ci/run` and `scripts/gpu-check.sh`) makes a missing adapter a failure.
#![cfg(feature = "wgpu")]

mod common;
#[rustfmt::skip]
#[path = "programs/random.rs"]
mod random_programs;

use common::suite::{Target, check_library_walks, run_job};
use common::*;
use wayfarer::job::{BackendDetail, CompiledProgram, JobWalk, WalkJob, WgpuRunner};
use wayfarer::library::LibraryWalk;
use wayfarer::wgpu::{Kernel, WgpuDevice, WgpuReport};
use wayfarer::{CostRatio, RunReport, SamplerMode, Starts, WalkConfig, WalkError, Walks};

/// The adapter as a runner of walk jobs.
fn runner() -> Option<WgpuRunner> {
    match WgpuDevice::open() {
        Ok(d) => {
            eprintln!("wgpu adapter: {} ({}, {})", d.name, d.backend, d.device_type);
            Some(WgpuRunner::new(d))
        }
        Err(e) => {
            assert!(std::env::var_os("WAYFARER_REQUIRE_WGPU").is_none(), "WAYFARER_REQUIRE_WGPU is set but: {e}");
            eprintln!("skipping the wgpu tests: {e}");
            None
        }
    }
}

/// The kernels this adapter runs: plain, workgroup, and subgroup where it has subgroups.
fn kernels(dev: &WgpuDevice) -> Vec<Kernel> {
    Kernel::ALL.into_iter().filter(|&k| k != Kernel::Subgroup || dev.has_subgroups()).collect()
}

/// Makes `dev` build `kernel`. The workgroup kernel shares every eRVS row of 2 edges or more
/// (the small test graphs' rows are shorter than the default threshold), so both its shared
/// and its per-invocation eRVS run in the same rounds.
fn use_kernel(dev: &WgpuDevice, kernel: Option<Kernel>) {
    dev.set_kernel(kernel);
    dev.set_shared_row(if kernel == Some(Kernel::Workgroup) { 2 } else { wayfarer::wgpu::DEFAULT_SHARED_ROW });
}

/// Runs `walk` on `runner` (with its default cost model): the walks, the engine's report and
/// the backend's own.
fn wgpu_walk(
    runner: &WgpuRunner,
    walk: JobWalk,
    g: &wayfarer::CsrGraph,
    starts: Starts,
    length: u32,
    seed: u64,
    mode: SamplerMode,
) -> Result<(Walks, RunReport, WgpuReport), WalkError> {
    let mut job = WalkJob::new(g, walk);
    job.starts = starts;
    job.length = length;
    job.seed = seed;
    job.sampler = mode;
    let (walks, done) = run_job(runner, &job)?;
    let BackendDetail::Wgpu(rep) = done.detail else { panic!("wgpu did not run the job: {}", done.backend) };
    Ok((walks, done.report, rep))
}

const MODES: [SamplerMode; 3] = [SamplerMode::Adaptive, SamplerMode::Rejection, SamplerMode::Reservoir];

#[test]
fn library_walks_are_exact_on_wgpu() {
    let Some(runner) = runner() else { return };
    let mut checked = 0;
    for kernel in kernels(runner.device()) {
        use_kernel(runner.device(), Some(kernel));
        let target = Target {
            label: format!("wgpu {kernel:?}"),
            runner: &runner,
            program: true,
            modes: &MODES,
            cost_ratio: CostRatio::Default,
            per_start: 40_000,
            partial_tables: false,
        };
        checked += check_library_walks(&target);
    }
    eprintln!("{checked} wgpu cells matched the exact transition probabilities");
}

/// Where every eRJS decision is exact in any precision (unweighted DeepWalk: B = w = 1, so
/// the first proposal is taken; PPR's restarts compare f64 draws, made from the same words
/// as the CPU's), the walks are the CPU's for the seed: the shader's Philox, Lemire draws and
/// stream layout are the CPU's, bit for bit.
#[test]
fn wgpu_walks_equal_the_cpus_where_no_decision_depends_on_precision() {
    let Some(runner) = runner() else { return };
    let mut g = wayfarer::graph::generate::rmat(11, 8, 3).unwrap();
    g.set_weights(None).unwrap();
    for name in ["deepwalk", "ppr", "ppr-stop"] {
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
        let (cpu, _) = walk.run(&g, &s, &cfg, None).unwrap();
        let (gpu, _, _) = wgpu_walk(&runner, JobWalk::library(&walk), &g, s.clone(), 20, 99, SamplerMode::Rejection).unwrap();
        assert_eq!(cpu.len(), gpu.len());
        let differ = (0..cpu.len()).filter(|&i| cpu.walk(i) != gpu.walk(i)).count();
        assert_eq!(differ, 0, "{name}: {differ} of {} walks differ from the CPU's", cpu.len());
    }
}

/// Temporal walks (f64 edge times, read as three f32 words each): every step is an edge
/// newer than the last, and on an unweighted graph (weights 0 or 1) the walks are the CPU's.
#[test]
fn temporal_walks_on_wgpu_follow_time() {
    let Some(runner) = runner() else { return };
    let mut g = wayfarer::graph::generate::rmat(10, 8, 5).unwrap();
    g.set_weights(None).unwrap();
    // Times around 1.7e15 (microseconds since 1970): only an exact f64 keeps their order.
    let times: Vec<i64> = (0..g.num_edges()).map(|e| 1_700_000_000_000_000 + ((e * 7919) % 10_007) as i64).collect();
    g.set_timestamps(Some(times.clone())).unwrap();
    let walk = LibraryWalk::from_name("temporal", &[], &g, false).unwrap();
    let s = Starts::EveryNode { per_node: 1 };
    let (gpu, _, _) = wgpu_walk(&runner, JobWalk::library(&walk), &g, s.clone(), 8, 5, SamplerMode::Adaptive).unwrap();
    let mut moves = 0;
    for i in 0..gpu.len() {
        let w = gpu.walk(i);
        let mut last = i64::MIN;
        for p in w.windows(2) {
            // The newest edge p0 -> p1 newer than `last` must exist.
            let t = g.row(p[0]).filter(|&e| g.targets()[e] == p[1]).map(|e| times[e]).filter(|&t| t > last).min();
            let t = t.unwrap_or_else(|| panic!("walk {i}: {} -> {} has no edge newer than {last}", p[0], p[1]));
            last = t;
            moves += 1;
        }
    }
    assert!(moves > 1000, "only {moves} moves");
    let cfg = WalkConfig {
        length: 8,
        seed: 5,
        sampler: SamplerMode::Rejection,
        cost_ratio: CostRatio::Fixed(1.0),
        interleave: 8,
        table_budget: None,
        record_edges: false,
    };
    let (cpu, rep) = walk.run(&g, &s, &cfg, None).unwrap();
    let (gpu, _, grep) = wgpu_walk(&runner, JobWalk::library(&walk), &g, s.clone(), 8, 5, SamplerMode::Rejection).unwrap();
    let differ = (0..cpu.len()).filter(|&i| cpu.walk(i) != gpu.walk(i)).count() as u64;
    assert!(
        differ <= rep.stats.rejection_fallbacks.min(grep.stats.rejection_fallbacks),
        "temporal: {differ} walks differ from the CPU's with {} / {} eRJS fallbacks",
        rep.stats.rejection_fallbacks,
        grep.stats.rejection_fallbacks
    );
}

/// eRVS with jumps on a long skewed row (5,000 Pareto(1) weights, every seventh zero): one
/// invocation's pass must give w / Σw (chi-square).
#[test]
fn ervs_jumps_are_exact_on_long_skewed_rows_on_wgpu() {
    let Some(runner) = runner() else { return };
    let dev = runner.device();
    let d = 5000u32;
    let mut state = 12345u64;
    let mut uni = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut parts = wayfarer::graph::CsrParts { offsets: vec![0], weights: Some(Vec::new()), ..Default::default() };
    let mut probs = std::collections::HashMap::<u32, f64>::new();
    for t in 1..=d {
        let w = if t % 7 == 0 { 0.0 } else { (1.0 / (1.0 - uni())) as f32 };
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
    for (kernel, mode) in kernels(dev).into_iter().flat_map(|k| [(k, SamplerMode::Reservoir), (k, SamplerMode::Adaptive)]) {
        use_kernel(dev, Some(kernel));
        let (walks, _, rep) = wgpu_walk(&runner, JobWalk::library(&walk), &g, Starts::Nodes(vec![0u32; 100_000]), 1, 31, mode).unwrap();
        assert_eq!(rep.kernel, Some(kernel));
        let mut counts = std::collections::HashMap::<u32, u64>::new();
        for i in 0..walks.len() {
            *counts.entry(walks.walk(i)[1]).or_default() += 1;
        }
        let p = chi_square_p(&counts, &probs, &format!("wgpu ervs jumps {kernel:?} {mode}"));
        assert!(p > ALPHA, "{kernel:?} {mode}: chi-square p = {p}");
    }
}

/// A weight the walk makes negative is the CPU's error, naming the walk and the edge, under
/// every sampler: not NaN walks, not a silent dead end.
#[test]
fn negative_weights_are_a_clear_error_on_wgpu() {
    let Some(runner) = runner() else { return };
    let dev = runner.device();
    let g = build(&shaped_edges(Shape::Uniform));
    let src = "#[walk] fn sinks(s: &Step) -> f32 { if s.dst() == 3 { s.weight() - 1000.0 } else { s.weight() } }";
    let program = CompiledProgram::from_source(src, "sinks.rs", &[]).unwrap();
    for (kernel, mode) in kernels(dev).into_iter().flat_map(|k| MODES.map(|m| (k, m))) {
        use_kernel(dev, Some(kernel));
        let r = wgpu_walk(&runner, JobWalk::program(&program), &g, Starts::EveryNode { per_node: 50 }, 5, 1, mode);
        let msg = r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("sinks") && msg.contains("-99"), "{mode}: expected a bad-weight error ({kernel:?}), got `{msg}`");
    }
}

/// The pinned random programs (drawn from the walk grammar) on wgpu: the first step from the
/// busiest node matches the exact w / Σw under every sampler (chi-square), and with eRJS the
/// walks are the CPU's except after an eRJS->eRVS fallback or a decision within f32 rounding.
struct WgpuLikeCpu<'a> {
    runner: &'a WgpuRunner,
    g: &'a wayfarer::CsrGraph,
    what: String,
    checked: usize,
}

impl random_programs::Visitor for WgpuLikeCpu<'_> {
    fn visit<W: wayfarer::Walk>(&mut self, walk: &W) {
        let g = self.g;
        let src = walk.source().expect("macro walks carry their source");
        let run = |starts: &Starts, length: u32, sampler: SamplerMode| {
            wgpu_walk(self.runner, JobWalk::native(walk), g, starts.clone(), length, 21, sampler).map(|(w, r, _)| (w, r))
        };
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
        if let (Ok((cw, cr)), Ok((gw, gr))) =
            (wayfarer::engine::run(walk, g, &starts, &cfg, None), run(&starts, 12, SamplerMode::Rejection))
        {
            let differ = (0..cw.len()).filter(|&i| cw.walk(i) != gw.walk(i)).count() as u64;
            let allowed = cr.stats.rejection_fallbacks.max(gr.stats.rejection_fallbacks) + cw.len() as u64 / 100;
            assert!(differ <= allowed, "{}: {differ} of {} walks differ\n{}", self.what, cw.len(), src.source);
        }
        let v0 = (0..g.num_nodes() as u32).max_by_key(|&v| g.degree(v)).unwrap();
        let stats = wayfarer::NodeStats::compute(g, walk.requirements(), walk.weighted());
        let ctx = wayfarer::Ctx::new(g, &stats);
        let w0 = wayfarer::Walker::<W::State>::new(v0);
        let weights: Vec<f32> = g.row(v0).map(|e| walk.weight(&ctx, &w0, e)).collect();
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) || weights.iter().all(|&w| w == 0.0) {
            return;
        }
        let total: f64 = weights.iter().map(|&w| w as f64).sum();
        let mut probs = std::collections::HashMap::<u32, f64>::new();
        for (e, &w) in g.row(v0).zip(&weights) {
            if w > 0.0 {
                *probs.entry(g.targets()[e]).or_default() += w as f64 / total;
            }
        }
        // Each program on one kernel, in turn (every kernel on every program was a minute
        // more of CI on lavapipe; each kernel still meets a third of the grammar's programs).
        let dev = self.runner.device();
        let all = kernels(dev);
        let kernel = all[self.checked % all.len()];
        use_kernel(dev, Some(kernel));
        for sampler in MODES {
            let (walks, _) =
                run(&Starts::Nodes(vec![v0; 40_000]), 1, sampler).unwrap_or_else(|e| panic!("{}: {e}\n{}", self.what, src.source));
            let mut counts = std::collections::HashMap::<u32, u64>::new();
            for i in 0..walks.len() {
                *counts.entry(walks.walk(i)[1]).or_default() += 1;
            }
            let p = chi_square_p(&counts, &probs, &format!("{} {kernel:?} {sampler}", self.what));
            assert!(p > ALPHA, "{} {kernel:?} {sampler}: chi-square p = {p}\n{}", self.what, src.source);
        }
        use_kernel(dev, None);
        self.checked += 1;
    }
}

#[test]
fn random_programs_on_wgpu_behave_like_on_the_cpu() {
    let Some(runner) = runner() else { return };
    let mut g = wayfarer::graph::generate::rmat(9, 8, 11).unwrap();
    g.set_weights(Some(wayfarer::graph::generate::weights(&g, "pareto:1".parse().unwrap(), 12))).unwrap();
    g.set_labels(Some(wayfarer::graph::generate::labels(&g, wayfarer::graph::generate::LabelSpec { k: 3 }, 13).unwrap())).unwrap();
    let mut v = WgpuLikeCpu { runner: &runner, g: &g, what: String::new(), checked: 0 };
    for i in 0..random_programs::COUNT {
        for (a, b) in [(0.5f32, 2.0f32), (-1.5, 0.25)] {
            v.what = format!("random program {i} (a={a}, b={b})");
            random_programs::visit(i, a, b, &mut v);
        }
    }
    assert!(v.checked >= random_programs::COUNT, "only {} first-step distributions checked", v.checked);
    eprintln!("{} first-step distributions checked on wgpu", v.checked);
}

/// A user's stateful `#[walk]` (defined here, not in the library), run through the builder
/// with `Backend::Wgpu`: the macro embeds its source, so the wgpu backend lowers it at run
/// time. On an unweighted graph every eRJS threshold (1 or 1/4 of B) is a multiple of 2^-24,
/// where f32 and f64 decide alike, and the restarts compare f64 draws made from the same words,
/// so the walks are the CPU's (but for eRJS->eRVS fallbacks).
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
fn a_users_stateful_walk_runs_on_wgpu_through_the_builder() {
    use wayfarer::prelude::*;
    let Some(_) = runner() else { return };
    let mut g = wayfarer::graph::generate::rmat(11, 8, 3).unwrap();
    g.set_weights(None).unwrap();
    let run = |backend| {
        Wander { limit: 12, restart: 0.2 }.on(&g).length(30).seed(8).sampler(SamplerMode::Rejection).backend(backend).run().unwrap()
    };
    let cpu = run(wayfarer::gpu::Backend::Cpu);
    let gpu = run(wayfarer::gpu::Backend::Wgpu);
    assert!(gpu.backend.starts_with("wgpu"), "{}", gpu.backend);
    assert!(gpu.walks.lengths.iter().all(|&l| l <= 13), "stop after 12 moves");
    let differ = (0..cpu.walks.len()).filter(|&i| cpu.walks.walk(i) != gpu.walks.walk(i)).count() as u64;
    let fallbacks = cpu.report.stats.rejection_fallbacks.max(gpu.report.stats.rejection_fallbacks);
    assert!(differ <= fallbacks, "{differ} of {} walks differ with {fallbacks} eRVS fallbacks", cpu.walks.len());
    if differ == 0 {
        assert_eq!(gpu.report.stats.stopped, cpu.report.stats.stopped, "the stop rule ran the same");
    }
}

/// What the wgpu backend cannot carry is refused up front with a message naming it: an f64
/// parameter outside the range its three f32 words hold exactly, 2^32 walkers or more, and
/// walks too long for one storage binding.
#[test]
fn wgpu_refuses_what_it_cannot_carry() {
    let Some(runner) = runner() else { return };
    let g = build(&shaped_edges(Shape::Uniform));
    let src = "#[walk] fn scaled(s: &Step, k: f64) -> f32 { (s.weight() as f64 * k) as f32 }";
    let run = |k: f64, starts: Starts, length: u32| {
        let (program, info) = wayfarer_compiler::compile_source(src).unwrap();
        // Set directly: the parameter parser would refuse some of these values itself.
        let values = vec![wayfarer_compiler::eval::ParamValue::Scalar(wayfarer_compiler::eval::Value::F64(k))];
        let program = CompiledProgram { program, info, values };
        let r = wgpu_walk(&runner, JobWalk::program(&program), &g, starts, length, 1, SamplerMode::Adaptive);
        r.err().map(|e| e.to_string()).unwrap_or_default()
    };
    let few = || Starts::EveryNode { per_node: 1 };
    assert_eq!(run(1.0, few(), 3), "", "a representable parameter runs");
    let msg = run(1e300, few(), 3);
    assert!(msg.contains("scaled") && msg.contains("outside what the wgpu backend carries exactly"), "{msg}");
    let msg = run(1.0, Starts::EveryNode { per_node: u32::MAX }, 3);
    assert!(msg.contains("walkers: the wgpu backend runs fewer than 2^32"), "{msg}");
    let msg = run(1.0, few(), u32::MAX);
    assert!(msg.contains("do not fit one storage binding"), "{msg}");
}

/// Long walks either finish, every step an edge, or fail with a clear error: never rows cut
/// short without one (Mesa's llvmpipe, CI's adapter, silently stops a shader's loops after
/// 65,535 iterations in all; the kernels report a walk loop that ended unfinished).
#[test]
fn long_walks_finish_or_fail_clearly_on_wgpu() {
    let Some(runner) = runner() else { return };
    let dev = runner.device();
    let mut g = wayfarer::graph::generate::rmat(8, 8, 3).unwrap();
    g.set_weights(None).unwrap();
    let walk = LibraryWalk::from_name("deepwalk", &[], &g, false).unwrap();
    let length = 5000;
    for kernel in kernels(dev) {
        use_kernel(dev, Some(kernel));
        match wgpu_walk(&runner, JobWalk::library(&walk), &g, Starts::EveryNode { per_node: 1 }, length, 3, SamplerMode::Adaptive) {
            Ok((walks, _, rep)) => {
                for i in 0..walks.len() {
                    let w = walks.walk(i);
                    assert!(w.len() == length as usize + 1 || g.degree(*w.last().unwrap()) == 0, "{kernel:?}: walk {i} cut at {}", w.len());
                    for p in w.windows(2) {
                        assert!(g.row(p[0]).any(|e| g.targets()[e] == p[1]), "{kernel:?}: walk {i}: {} -> {} is no edge", p[0], p[1]);
                    }
                }
                assert_eq!(rep.steps, (0..walks.len()).map(|i| walks.walk(i).len() as u64 - 1).sum::<u64>(), "{kernel:?}");
            }
            Err(e) => assert!(e.to_string().contains("ended walk loops early"), "{kernel:?}: {e}"),
        }
    }
    use_kernel(dev, None);
}
