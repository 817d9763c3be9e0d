//! The one exactness suite, instantiated per backend: `exactness.rs` runs it on the CPU (native
//! code and Cranelift), `gpu.rs` on CUDA, `wgpu.rs` on every wgpu kernel. Each instance runs
//! the same library walks on the same awkward graphs through the job API (`wayfarer::job`),
//! with the samplers its backend has, and checks every next-step distribution against the
//! exact model of `common` (chi-square at `ALPHA`), the dead ends, and that the sampler it
//! asked for is the one that ran.

use super::*;
use wayfarer::fast_path::FastPathReport;
use wayfarer::job::{JobReport, JobWalk, Runner, WalkJob};
use wayfarer::library::LibraryWalk;
use wayfarer::{CostRatio, RunReport, SamplerMode, Starts, Walks};

/// One library walk with its parameters, the exact model it must follow, and whether it runs
/// on the weighted graph or on the same graph without weights.
pub struct Case {
    /// The library name.
    pub name: &'static str,
    /// Its parameters, as the CLI takes them.
    pub params: Vec<(String, String)>,
    /// What it must sample.
    pub model: Model,
    /// Weighted graph, or the graph without weights.
    pub weighted: bool,
}

fn case(name: &'static str, params: &[(&str, &str)], model: Model, weighted: bool) -> Case {
    let params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Case { name, params, model, weighted }
}

/// Every library walk whose transitions the exact model knows, with the parameter settings
/// that reach each of its branches (a return-heavy Node2Vec reaches the bound's `u == prev`
/// branch; schemas that start on every label; second-order PageRank with a rare and a
/// frequent return).
pub fn library_cases() -> Vec<Case> {
    let n2v = |a: f32, b: f32, weighted| Model::Node2vec { a, b, weighted };
    let meta = |schema: &[u32], weighted| Model::MetaPath { schema: schema.to_vec(), weighted };
    vec![
        case("deepwalk", &[], Model::DeepWalk { weighted: true }, true),
        case("deepwalk", &[], Model::DeepWalk { weighted: false }, false),
        case("node2vec", &[], n2v(2.0, 0.5, true), true),
        case("node2vec", &[], n2v(2.0, 0.5, false), false),
        case("node2vec", &[("a", "0.25"), ("b", "4")], n2v(0.25, 4.0, true), true),
        case("metapath", &[("schema", "0,1,2")], meta(&[0, 1, 2], true), true),
        case("metapath", &[("schema", "0,1,2")], meta(&[0, 1, 2], false), false),
        case("metapath", &[("schema", "2,1,0")], meta(&[2, 1, 0], true), true),
        case("metapath", &[("schema", "1")], meta(&[1], true), true),
        case("ppr2", &[], Model::Ppr2 { gamma: 0.2, weighted: false }, false),
        case("ppr2", &[("gamma", "0.9")], Model::Ppr2 { gamma: 0.9, weighted: false }, false),
    ]
}

/// Where the suite runs.
pub struct Target<'a> {
    /// In messages: `cpu`, `cranelift`, `cuda`, `wgpu Workgroup`.
    pub label: String,
    /// The runner (from `wayfarer::job`).
    pub runner: &'a dyn Runner,
    /// Run the walks' programs (Cranelift on the CPU) rather than their native code.
    pub program: bool,
    /// The samplers to check.
    pub modes: &'a [SamplerMode],
    /// The cost model the adaptive rule uses.
    pub cost_ratio: CostRatio,
    /// Walkers per start node (three start nodes, the third with a quarter of them).
    pub per_start: usize,
    /// Run only the walks with a proposal plan, with tables for the longest row alone (node
    /// 0's; the other rows' steps take the plain samplers), instead of the default budget.
    pub partial_tables: bool,
}

/// The rows of at least this many edges get tables when [`Target::partial_tables`] is set:
/// node 0's row alone (5 edges; the others have 3 or 4).
pub const PARTIAL_MIN_DEGREE: u32 = 5;

/// The starts of every cell: nodes 0 and 5 (busy, with triangles) and 2.
pub fn suite_starts(per_start: usize) -> Starts {
    let mut v = vec![0u32; per_start];
    v.extend(std::iter::repeat_n(5u32, per_start));
    v.extend(std::iter::repeat_n(2u32, per_start / 4));
    Starts::Nodes(v)
}

/// Runs `job` on `runner`, collecting its walks.
pub fn run_job(runner: &dyn Runner, job: &WalkJob) -> Result<(Walks, JobReport), wayfarer::WalkError> {
    let mut walks = Walks { stride: job.length as usize + 1, nodes: Vec::new(), lengths: Vec::new(), edges: Vec::new() };
    let report = runner.run(job, &mut |b| {
        walks.append(b);
        Ok(())
    })?;
    Ok((walks, report))
}

/// What a walk's program says about it: whether its weight reads only the edge, and the
/// structured proposal the compiler planned for it (empty: none).
fn planned(walk: &LibraryWalk) -> (bool, Vec<wayfarer::proposal::TermPlan>) {
    let (source, _) = walk.program().expect("a library walk with a #[walk] program");
    let (program, info) = wayfarer_compiler::compile_source(source).unwrap();
    let plan = info.proposal.as_ref().map_or_else(|_| Vec::new(), |p| p.plan());
    (program.static_weight(), plan)
}

/// Checks one walk of `length` steps on the graph of `edges` under every mode of `target`:
/// frequencies against `model`, enough states tested, and the sampler asked for ran. Returns
/// each mode's report.
pub fn check_walk<'a>(
    target: &Target,
    make: &dyn Fn() -> JobWalk<'a>,
    model: &Model,
    edges: &[RawEdge],
    g: &'a CsrGraph,
    what: &str,
    length: u32,
    seed: u64,
    table_budget: Option<u64>,
) -> Vec<(SamplerMode, RunReport)> {
    let mut reports = Vec::new();
    for (k, &mode) in target.modes.iter().enumerate() {
        let mut job = WalkJob::new(g, make());
        job.table_budget = table_budget;
        job.length = length;
        job.starts = suite_starts(target.per_start);
        job.seed = seed + k as u64;
        job.sampler = mode;
        job.cost_ratio = target.cost_ratio;
        job.interleave = 1 + 7 * (k % 2);
        let what = format!("{} {what} {mode}", target.label);
        let (walks, done) = run_job(target.runner, &job).unwrap_or_else(|e| panic!("{what}: {e}"));
        let report = done.report;
        let t = tally(&walks, length);
        let (tested, biggest, dead_ends) = check_tally(&t, model, edges, &what);
        assert!(
            tested + dead_ends >= 3 && (biggest >= target.per_start as u64 / 2 || dead_ends > 0),
            "{what}: too few states checked ({tested} sampled, max {biggest} samples, {dead_ends} dead ends)"
        );
        let moved = !t.moves.is_empty();
        if mode == SamplerMode::Rejection && moved {
            assert!(report.stats.rejection_steps > 0, "{what}: eRJS never ran: {:?}", report.stats);
        }
        if mode == SamplerMode::Reservoir && moved {
            assert!(report.stats.reservoir_steps > 0, "{what}: eRVS never ran: {:?}", report.stats);
        }
        let tables = matches!(report.proposal, wayfarer::engine::ProposalReport::Built { .. });
        match report.fast_path {
            FastPathReport::None => {}
            FastPathReport::UniformRows => {
                assert!(matches!(mode, SamplerMode::Adaptive | SamplerMode::Rejection), "{what}: the uniform fast path under {mode}")
            }
            FastPathReport::LockStepRejection { .. } => {
                assert!(matches!(mode, SamplerMode::Adaptive | SamplerMode::Rejection), "{what}: lock-step eRJS under {mode}");
                assert!(!tables, "{what}: lock-step eRJS with structured-proposal tables");
            }
            FastPathReport::LockStepStructured => {
                assert!(matches!(mode, SamplerMode::Adaptive | SamplerMode::Structured), "{what}: lock-step structured under {mode}");
                assert!(tables, "{what}: lock-step structured without structured-proposal tables");
            }
            FastPathReport::AliasRows { .. } => {
                assert_eq!(mode, SamplerMode::Adaptive, "{what}: the alias fast path under {mode}");
                assert!(!moved || report.stats.alias_steps > 0, "{what}: the alias fast path took no step: {:?}", report.stats);
            }
        }
        if mode == SamplerMode::Structured && tables && moved {
            assert!(report.stats.structured_steps > 0, "{what}: the proposal plan never ran: {:?}", report.stats);
        }
        if let (Some(_), wayfarer::engine::ProposalReport::Built { coverage, .. }) = (table_budget, &report.proposal)
            && mode == SamplerMode::Structured
            && moved
        {
            assert!(coverage.is_partial(), "{what}: every row got tables: {coverage:?}");
            let plain = report.stats.rejection_steps + report.stats.reservoir_steps + report.stats.rejection_fallbacks;
            assert!(plain > 0, "{what}: the rows without tables never took the plain samplers: {:?}", report.stats);
        }
        if target.program && target.runner.kind() == wayfarer::gpu::Backend::Cpu {
            // Cranelift: the compiled turns run eRJS and adaptive steps, except that with
            // structured-proposal tables the engine's own turns run every step, and on
            // uniform rows the engine's one-draw fast path does.
            let turns =
                (mode == SamplerMode::Rejection || (mode == SamplerMode::Adaptive && !tables)) && report.fast_path == FastPathReport::None;
            assert_eq!(report.compiled_turns, turns, "{what}: compiled turns used");
        }
        reports.push((mode, report));
    }
    reports
}

/// The suite: every case of [`library_cases`] on every weight shape of `common::SHAPES`, under
/// every mode of `target`. On the CPU it also checks that the proposals the compiler planned
/// are the ones used (alias or prefix tables on skewed static weights; the plan's tables built
/// when structured proposals are forced). Returns the cells checked.
pub fn check_library_walks(target: &Target) -> usize {
    let mut cells = 0;
    for shape in SHAPES {
        let edges = shaped_edges(shape);
        let weighted_graph = build(&edges);
        let mut unweighted_graph = build(&edges);
        unweighted_graph.set_weights(None).unwrap();
        for c in library_cases() {
            let g = if c.weighted { &weighted_graph } else { &unweighted_graph };
            let walk = LibraryWalk::from_name(c.name, &c.params, g, false).unwrap();
            let table_budget = if target.partial_tables {
                let (_, plan) = planned(&walk);
                if plan.is_empty() {
                    continue;
                }
                use wayfarer::runtime::proposal::ProposalTables;
                // Only plans with per-edge tables (alias entries, label segments) can have some rows without.
                match ProposalTables::budget_for_min_degree(g, &plan, PARTIAL_MIN_DEGREE) {
                    Ok(b) if ProposalTables::coverage(g, &plan, b).is_ok_and(|c| c.is_partial()) => Some(b),
                    _ => continue,
                }
            } else {
                None
            };
            let what = format!("{} {:?} {shape:?} weighted={}", c.name, c.params, c.weighted);
            let make = || {
                let mut w = JobWalk::library(&walk);
                if target.program {
                    w.native = None;
                }
                w
            };
            let reports = check_walk(target, &make, &c.model, &edges, g, &what, 3, 1000, table_budget);
            if target.partial_tables && c.weighted && !matches!(shape, Shape::Outlier) {
                let built = reports
                    .iter()
                    .any(|(m, r)| *m == SamplerMode::Structured && matches!(r.proposal, wayfarer::engine::ProposalReport::Built { .. }));
                assert!(built, "{} {what}: no tables under a budget for the longest row", target.label);
            }
            // (Partial tables leave most rows to the plain samplers: checked in `check_walk`.)
            if target.runner.kind() != wayfarer::gpu::Backend::Wgpu && !target.partial_tables {
                let cpu = target.runner.kind() == wayfarer::gpu::Backend::Cpu;
                check_planned_proposals(&walk, &reports, c.weighted, shape, cpu, &format!("{} {what}", target.label));
            }
            cells += reports.len();
        }
    }
    eprintln!("{}: {cells} cells matched the exact transition probabilities", target.label);
    cells
}

/// The proposals the compiler planned are the ones that ran: the plan's tables are built when
/// structured proposals are forced (CPU and CUDA), and on the CPU a table serves skewed static
/// weights.
fn check_planned_proposals(walk: &LibraryWalk, reports: &[(SamplerMode, RunReport)], weighted: bool, shape: Shape, cpu: bool, what: &str) {
    let (static_weight, plan) = planned(walk);
    let has_plan = !plan.is_empty();
    let skewed = matches!(shape, Shape::Pareto1 | Shape::Outlier);
    for (mode, r) in reports {
        if cpu && static_weight && weighted && skewed && *mode == SamplerMode::Adaptive {
            let tables = r.stats.table_steps + r.stats.structured_steps + r.stats.alias_steps;
            assert!(tables > 0, "{what} {mode}: neither the prefix table nor an alias table ran: {:?}", r.stats);
        }
        if has_plan && weighted && !matches!(shape, Shape::Outlier) && *mode == SamplerMode::Structured {
            let built = matches!(r.proposal, wayfarer::engine::ProposalReport::Built { .. });
            assert!(built, "{what} {mode}: the proposal plan's tables were not built: {:?}", r.proposal);
        }
    }
}
