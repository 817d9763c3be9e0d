//! The one seam for running walks (`wayfarer::job`): the builder, library walks and program
//! files build the same job, `select` picks the backend with one set of rules, and a job's
//! walks stream to any sink, whatever thread pool runs them.

use wayfarer::gpu::Backend;
use wayfarer::job::{CompiledProgram, JobWalk, WalkJob, select};
use wayfarer::prelude::*;

fn graph() -> CsrGraph {
    use wayfarer::graph::generate;
    let mut g = generate::rmat(9, 8, 3).unwrap();
    let w = generate::weights(&g, wayfarer::graph::WeightSpec::Pareto { alpha: 1.0 }, 4);
    g.set_weights(Some(w)).unwrap();
    g
}

fn run(job: &WalkJob, backend: Backend) -> (Walks, wayfarer::job::JobReport) {
    let chosen = select(backend, job).unwrap();
    let mut walks = Walks { stride: job.length as usize + 1, nodes: Vec::new(), lengths: Vec::new(), edges: Vec::new() };
    let report = chosen
        .runner
        .run(job, &mut |b| {
            walks.append(b);
            Ok(())
        })
        .unwrap();
    (walks, report)
}

#[test]
fn the_builder_library_walks_and_program_files_run_the_same_job() {
    let g = graph();
    let built = Node2vec { a: 2.0, b: 0.5 }.on(&g).length(10).seed(5).backend(Backend::Cpu).run().unwrap();
    // The library walk by name.
    let params = [("a".to_string(), "2".to_string()), ("b".to_string(), "0.5".to_string())];
    let lib = wayfarer::library::LibraryWalk::from_name("node2vec", &params, &g, false).unwrap();
    let mut job = WalkJob::new(&g, JobWalk::library(&lib));
    job.length = 10;
    job.seed = 5;
    let (by_name, report) = run(&job, Backend::Cpu);
    assert_eq!(report.backend, "cpu");
    assert_eq!(by_name.nodes, built.walks.nodes, "the builder and the library walk");
    // The same source as a program file: compiled by Cranelift, the same walks.
    let source = wayfarer::library::dsl::source("node2vec").unwrap();
    let program = CompiledProgram::from_source(source, "node2vec.rs", &params).unwrap();
    let mut job = WalkJob::new(&g, JobWalk::program(&program));
    job.length = 10;
    job.seed = 5;
    let (compiled, report) = run(&job, Backend::Cpu);
    assert!(report.backend.starts_with("cpu (cranelift"), "{}", report.backend);
    assert_eq!(compiled.nodes, built.walks.nodes, "the program file");
    // On a pool of its own size, through the channel back to this thread: the same walks.
    job.threads = Some(3);
    assert_eq!(run(&job, Backend::Cpu).0.nodes, built.walks.nodes, "three threads");
}

#[test]
fn one_selection_rule_for_every_backend() {
    let g = graph();
    let hand = wayfarer::reference::DeepWalk { weighting: wayfarer::reference::Weighting::Weighted };
    let job = WalkJob::new(&g, JobWalk::native(&hand));
    assert!(!job.walk.has_program());
    // A hand-written walk: the CPU under auto, an error on a GPU backend.
    assert_eq!(select(Backend::Auto, &job).unwrap().runner.kind(), Backend::Cpu);
    for gpu in [Backend::Cuda, Backend::Wgpu] {
        let e = select(gpu, &job).err().expect("a hand-written walk has no GPU code").to_string();
        assert!(e.contains("written by hand") && e.contains("CPU only"), "{e}");
    }
    // A #[walk] on auto: the GPU if one is usable, else the CPU, and a note that says which.
    let dw = Deepwalk {};
    let job = WalkJob::new(&g, JobWalk::native(&dw));
    assert!(job.walk.has_program());
    let chosen = select(Backend::Auto, &job).unwrap();
    assert!(chosen.notes.iter().any(|n| n.starts_with("backend auto: running on the")), "{:?}", chosen.notes);
}

#[test]
fn a_failing_sink_stops_the_run_with_its_error() {
    let g = graph();
    let dw = Deepwalk {};
    for threads in [None, Some(2)] {
        let mut job = WalkJob::new(&g, JobWalk::native(&dw));
        job.threads = threads;
        job.batch_bytes = 4096;
        let runner = select(Backend::Cpu, &job).unwrap().runner;
        let mut batches = 0;
        let e = runner
            .run(&job, &mut |_| {
                batches += 1;
                if batches == 2 { Err(wayfarer::WalkError::Config("disk full".into())) } else { Ok(()) }
            })
            .err()
            .expect("the sink's error ends the run");
        assert!(e.to_string().contains("disk full"), "{threads:?}: {e}");
        assert_eq!(batches, 2, "{threads:?}: nothing more is handed over after the error");
    }
}

#[test]
fn sampling_and_triangles_take_the_same_device_rule() {
    use wayfarer::job::sample::{SampleJob, select as select_sampler};
    use wayfarer::job::triangles::{TriangleJob, select as select_triangles};
    use wayfarer::sample::{Policy, Replacement, SampleConfig};
    let g = graph();
    let tri = TriangleJob {
        graph: &g,
        mask: None,
        detail: wayfarer::triangles::Detail::Total,
        gpus: Default::default(),
        share: wayfarer::triangles::Share::WHOLE,
    };
    let e = select_triangles(Backend::Wgpu, &tri).err().expect("wgpu counts no triangles").to_string();
    assert!(e.contains("wgpu runs walks only") && e.contains("wayfarer triangles"), "{e}");
    let cpu = select_triangles(Backend::Cpu, &tri).unwrap().runner.count(&tri).unwrap();
    assert_eq!(cpu.counts.total, wayfarer::triangles::count_masked(&g, None, wayfarer::triangles::Detail::Total).total);
    let auto = select_triangles(Backend::Auto, &tri).unwrap();
    assert!(auto.notes.iter().any(|n| n.starts_with("backend auto: running on the")), "{:?}", auto.notes);
    // Weighted sampling is the CPU's: chosen under auto, refused under cuda.
    let seeds: Vec<u32> = (0..64).collect();
    let cfg = SampleConfig {
        fanouts: vec![3, 2],
        batch_size: 16,
        replacement: Replacement::Without,
        policy: Policy::EdgeWeight,
        seed: 1,
        super_batch: 0,
    };
    let job = SampleJob { graph: &g, seeds: &seeds, cfg: cfg.clone(), policy: None, gpu: Default::default() };
    assert_eq!(select_sampler(Backend::Auto, &job).unwrap().runner.kind(), Backend::Cpu);
    let e = select_sampler(Backend::Cuda, &job).err().expect("the GPU samples uniformly only").to_string();
    assert!(e.contains("runs on the CPU only"), "{e}");
    let blocks = select_sampler(Backend::Cpu, &job).unwrap().runner.sample(&job).unwrap().batches;
    assert_eq!(blocks, wayfarer::sample::sample(&g, &seeds, &cfg).unwrap(), "the runner's blocks are the sampler's");
}
