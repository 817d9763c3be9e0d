//! The promises a new user relies on (issue 22): a seed fixes the walks whatever the cache,
//! caches are keyed by what they depend on, sizes are checked before allocating, outputs are
//! created before the work and never look complete unless they are, ids never collide with
//! padding, and per-node outputs speak the user's ids.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch directory, removed with everything in it when the test ends (the outputs here
/// reach hundreds of MB).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("wayfarer-promises-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// Runs the CLI with its caches in `cache`.
fn run(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wayfarer")).args(args).env("WAYFARER_CACHE_DIR", cache).output().expect("the wayfarer binary runs")
}

/// Runs `script` with `sh` (for resource limits set before the CLI starts), caches in `cache`.
fn shell(script: &str, cache: &Path) -> Output {
    Command::new("sh").arg("-c").arg(script).env("WAYFARER_CACHE_DIR", cache).output().expect("sh runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn succeeds(args: &[&str], cache: &Path) -> String {
    let o = run(args, cache);
    assert!(o.status.success(), "wayfarer {args:?} failed:\n{}", stderr(&o));
    stderr(&o)
}

fn fails_with(args: &[&str], cache: &Path, needles: &[&str]) -> String {
    let o = run(args, cache);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "wayfarer {args:?} should fail cleanly:\n{err}");
    assert!(!err.contains("panicked") && !err.contains("memory allocation"), "{err}");
    for n in needles {
        assert!(err.contains(n), "wayfarer {args:?}: stderr lacks `{n}`:\n{err}");
    }
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Node2Vec written as a program file (compiled at run time by Cranelift on the CPU).
const PROGRAM: &str = r#"
#[walk]
fn n2v(s: &Step, a: f32, b: f32) -> f32 {
    let h = s.weight();
    if s.step() == 0 { h } else if s.dst() == s.prev() { h / a } else if s.has_edge(s.prev(), s.dst()) { h } else { h / b }
}
"#;

#[test]
fn a_seed_fixes_the_walks_with_fresh_caches() {
    let d = scratch("seed");
    let g = d.join("g.wfg");
    succeeds(&["gen", "rmat", "--scale", "12", "--weights", "pareto:1", "-o", s(&g)], &d.join("c"));
    let prog = d.join("n2v.rs");
    std::fs::write(&prog, PROGRAM).unwrap();
    for (what, walk) in [("library walk", vec!["node2vec"]), ("program file", vec!["--program", s(&prog), "-p", "a=2", "-p", "b=0.5"])] {
        let mut outputs = Vec::new();
        for i in 0..3 {
            let out = d.join(format!("w{i}.npy"));
            let mut args = vec!["walk"];
            args.extend(&walk);
            args.extend(["--graph", s(&g), "--seed", "7", "--length", "30", "--backend", "cpu", "-o", s(&out)]);
            let err = succeeds(&args, &d.join(format!("fresh-cache-{what}-{i}")));
            assert!(err.contains("(default)"), "{what}: the default cost model is fixed:\n{err}");
            outputs.push(std::fs::read(&out).unwrap());
        }
        assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{what}: three fresh-cache runs differ");
    }
    // A measured model is opt-in and says what it costs.
    let err = succeeds(
        &["walk", "node2vec", "--graph", s(&g), "--length", "5", "--backend", "cpu", "--cost-ratio", "profile", "-q"],
        &d.join("c"),
    );
    assert!(err.is_empty(), "-q prints nothing on success: {err}");
    let err =
        succeeds(&["walk", "node2vec", "--graph", s(&g), "--length", "5", "--backend", "cpu", "--cost-ratio", "profile"], &d.join("c"));
    assert!(err.contains("on this machine: the walks depend on it"), "{err}");
}

#[test]
fn the_cost_cache_is_keyed_by_program_and_graph() {
    let d = scratch("cache");
    let cache = d.join("cache");
    let g = d.join("g.wfg");
    succeeds(&["gen", "rmat", "--scale", "9", "--weights", "pareto:1", "-o", s(&g)], &cache);
    let prog = d.join("walk.rs");
    let profile = |graph: &Path| {
        let err = succeeds(
            &[
                "walk",
                s(&prog),
                "--graph",
                s(graph),
                "-p",
                "a=2",
                "-p",
                "b=0.5",
                "--length",
                "5",
                "--backend",
                "cpu",
                "--cost-ratio",
                "profile",
            ],
            &cache,
        );
        if err.contains("(cached on this machine") {
            "cached"
        } else {
            assert!(err.contains("(profiled on this machine"), "{err}");
            "profiled"
        }
    };
    std::fs::write(&prog, PROGRAM).unwrap();
    assert_eq!(profile(&g), "profiled");
    assert_eq!(profile(&g), "cached");
    // The same file edited in place (same walk name, same parameters) is measured anew.
    std::fs::write(&prog, PROGRAM.replace("h / b }", "h / b + 0.0 * h }")).unwrap();
    assert_eq!(profile(&g), "profiled");
    // So is another graph of the same size (other weights).
    let g2 = d.join("g2.wfg");
    succeeds(&["gen", "rmat", "--scale", "9", "--weights", "pareto:1", "--attr-seed", "9", "-o", s(&g2)], &cache);
    assert_eq!(profile(&g2), "profiled");
    assert_eq!(profile(&g), "cached");
}

#[test]
fn sizes_are_checked_before_anything_is_allocated() {
    let d = scratch("sizes");
    fails_with(&["walk", "deepwalk", "--length", "4000000000", "--backend", "cpu"], &d, &["need", "available"]);
    fails_with(&["walk", "deepwalk", "--length", "4000000000", "--backend", "cpu", "-o", s(&d.join("w.npy"))], &d, &["take", "free"]);
    fails_with(&["walk", "deepwalk", "--length", "4000000000", "--backend", "cpu", "-o", s(&d.join("w.txt"))], &d, &["need", "available"]);
    fails_with(
        &["walk", "deepwalk", "--walks-per-node", "4000000000", "--backend", "cpu", "-o", s(&d.join("w.npy"))],
        &d,
        &["w.npy", "free"],
    );
    assert!(std::fs::read_dir(&d).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains("w.npy")), "nothing left behind");
    // Sampling: fanouts multiply into the blocks.
    fails_with(
        &["sample", "--fanouts", "1000000,1000000", "--replace", "--backend", "cpu", "-o", s(&d.join("b.npz"))],
        &d,
        &["sampled blocks", "need", "available", "fewer seeds"],
    );
    assert!(!d.join("b.npz").exists());
}

#[test]
fn cpu_walks_stream_to_the_file_under_a_memory_cap() {
    let d = scratch("cap");
    let out = d.join("w.npy");
    // 116,650 nodes x 25 walks x 41 slots x 4 bytes = 478 MB of walks under a 200 MB address
    // space: only a run that streams its batches to the file can finish.
    let cmd = format!(
        "ulimit -v 200000 && exec {} walk deepwalk --walks-per-node 25 --length 40 --backend cpu -q -o {}",
        env!("CARGO_BIN_EXE_wayfarer"),
        s(&out)
    );
    let o = shell(&cmd, &d.join("c"));
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = 116_650u64 * 25;
    let len = std::fs::metadata(&out).unwrap().len();
    assert!(len > rows * 41 * 4 && len <= rows * 41 * 4 + 128, "{len}");
}

#[test]
fn an_interrupted_run_leaves_no_file_that_looks_complete() {
    let d = scratch("interrupt");
    let out = d.join("w.npy");
    let child = Command::new(env!("CARGO_BIN_EXE_wayfarer"))
        .args(["walk", "deepwalk", "--walks-per-node", "2000", "--backend", "cpu", "-q", "-o", s(&out)])
        .env("WAYFARER_CACHE_DIR", d.join("c"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the temporary file: the run is under way.
    let started = std::time::Instant::now();
    while !std::fs::read_dir(&d).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().contains(".partial-")) {
        assert!(started.elapsed().as_secs() < 60, "no temporary output appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!out.exists(), "the final name appears only when the walks are complete");
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("interrupted") && stderr(&o).contains("w.npy not written"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).filter(|n| n != "c").collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn outputs_are_created_before_the_work() {
    let d = scratch("outputs");
    // The graph does not exist either: an error about the output proves it came first.
    let missing = "/nonexistent-wayfarer-dir/out";
    let g = "/nonexistent-wayfarer-graph.wfg";
    for args in [
        vec!["walk", "deepwalk", "--graph", g, "-o"],
        vec!["sample", "--graph", g, "-o"],
        vec!["triangles", "--graph", g, "--per-node"],
        vec!["gen", "rmat", "--scale", "20", "-o"],
    ] {
        let ext = match args[0] {
            "sample" => "npz",
            "gen" => "wfg",
            _ => "npy",
        };
        let path = format!("{missing}.{ext}");
        let mut a = args.clone();
        a.push(&path);
        if args[0] == "triangles" {
            // Per-node outputs need the graph's ids first; the graph comes before them.
            fails_with(&a, &d, &[g]);
        } else {
            fails_with(&a, &d, &["nonexistent-wayfarer-dir", "does not exist"]);
        }
    }
    fails_with(&["gen", "er", "--nodes", "10", "--p", "0.5", "-o", s(&d.join("x.bin"))], &d, &["unknown output extension"]);
    let dir_out = d.join("walks.npy");
    std::fs::create_dir_all(&dir_out).unwrap();
    fails_with(&["walk", "deepwalk", "-o", s(&dir_out)], &d, &["is a directory"]);
}

#[test]
fn no_id_collides_with_padding_and_per_node_outputs_name_ids() {
    let d = scratch("ids");
    let edges = d.join("e.txt");
    std::fs::write(&edges, "1 18446744073709551615\n").unwrap();
    fails_with(&["walk", "deepwalk", "--graph", s(&edges)], &d, &["e.txt:1", "reserved"]);
    // A triangle among ids 10, 20, 30 and a pendant 40: positions are not ids.
    std::fs::write(&edges, "10 20\n20 30\n30 10\n30 40\n").unwrap();
    let g = d.join("g.wfg");
    succeeds(&["convert", s(&edges), "--undirected", "-o", s(&g)], &d);
    fails_with(&["triangles", "--graph", s(&g), "--per-node", s(&d.join("t.npy"))], &d, &["not 0..4", ".npz"]);
    let npz = d.join("t.npz");
    succeeds(&["triangles", "--graph", s(&g), "--per-node", s(&npz), "--backend", "cpu"], &d);
    let bytes = std::fs::read(&npz).unwrap();
    let find = |name: &str| bytes.windows(name.len()).position(|w| w == name.as_bytes()).is_some();
    assert!(find("ids.npy") && find("values.npy"), "the .npz holds ids and values");
    // ids 10 20 30 40 as uint64, then counts 1 1 1 0.
    let ids: Vec<u8> = [10u64, 20, 30, 40].iter().flat_map(|x| x.to_le_bytes()).collect();
    let counts: Vec<u8> = [1u64, 1, 1, 0].iter().flat_map(|x| x.to_le_bytes()).collect();
    assert!(bytes.windows(32).any(|w| w == ids.as_slice()) && bytes.windows(32).any(|w| w == counts.as_slice()));
    fails_with(&["partition", "--graph", s(&g), "--blocks", "2", "-o", s(&d.join("p.npy"))], &d, &[".npz"]);
    succeeds(&["partition", "--graph", s(&g), "--blocks", "2", "-q", "-o", s(&d.join("p.npz"))], &d);
}

#[test]
fn the_builder_threads_and_walks_per_node_and_in_memory_graphs() {
    use wayfarer::graph::{BuildOptions, EdgeRecord};
    use wayfarer::prelude::*;
    let e = |src, dst, weight| EdgeRecord { src, dst, weight, label: 0, time: 0 };
    let edges = [e(0, 1, 1.0), e(1, 2, 3.0), e(2, 0, 0.5), e(2, 3, 8.0), e(3, 0, 1.0)];
    let opts = BuildOptions { symmetrize: true, weights: true, ..Default::default() };
    let g = CsrGraph::from_edges(4, &edges, &opts).unwrap();
    assert_eq!(g.num_edges(), 10);
    assert!(CsrGraph::from_edges(3, &edges, &opts).unwrap_err().to_string().contains("outside 0..3"));
    let run = |threads| {
        Node2vec { a: 2.0, b: 0.5 }
            .on(&g)
            .length(12)
            .seed(3)
            .walks_per_node(5)
            .threads(threads)
            .backend(wayfarer::gpu::Backend::Cpu)
            .run()
            .unwrap()
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(one.report.threads, 1);
    assert_eq!(two.report.threads, 2);
    assert_eq!(one.report.cost_ratio_source, "default");
    assert_eq!(one.walks.nodes, two.walks.nodes, "the same walks on 1 and 2 threads");
    assert_eq!(one.walks.iter().count(), 20);
    assert!(one.walks.iter().enumerate().all(|(i, w)| w[0] == (i % 4) as u32 && w.len() == 13));
}

#[test]
fn an_edge_list_round_trip_is_lossless() {
    let d = scratch("roundtrip");
    // Undirected, weights and labels, nodes without edges (R-MAT has them).
    let g = d.join("g.wfg");
    succeeds(&["gen", "rmat", "--scale", "8", "--weights", "pareto:1", "--labels", "4", "-o", s(&g)], &d);
    let info = run(&["info", s(&g)], &d);
    let info = String::from_utf8_lossy(&info.stdout).into_owned();
    assert!(info.contains(" undirected (") && info.contains("directed entries)"), "info says what it counts:\n{info}");
    // Directed, gapped ids, weights and timestamps.
    let edges = d.join("in.txt");
    std::fs::write(&edges, "10 20 1.5 7\n20 30 2.25 9\n40 10 0.5 -3\n30 10 1e-3 4\n").unwrap();
    let h = d.join("h.wfg");
    succeeds(&["convert", s(&edges), "--weight-col", "3", "--time-col", "4", "-o", s(&h)], &d);
    for original in [g, h] {
        let text = d.join("edges.txt");
        let back = d.join("back.wfg");
        succeeds(&["convert", s(&original), "-o", s(&text)], &d);
        // No options: the header says what the columns are and whether the graph is undirected.
        succeeds(&["convert", s(&text), "-o", s(&back)], &d);
        assert_eq!(
            std::fs::read(&original).unwrap(),
            std::fs::read(&back).unwrap(),
            "{}: .wfg -> .txt -> .wfg changed it",
            original.display()
        );
    }
}

#[test]
fn walk_errors_name_original_ids() {
    let d = scratch("errids");
    let edges = d.join("e.txt");
    std::fs::write(&edges, "10 20\n20 30\n30 10\n").unwrap();
    let prog = d.join("bad.rs");
    std::fs::write(&prog, "#[walk]\nfn bad(s: &Step) -> f32 {\n    s.weight() - 2.0\n}\n").unwrap();
    let err = fails_with(&["walk", s(&prog), "--graph", s(&edges), "--backend", "cpu", "--length", "3"], &d, &["returned weight -1"]);
    assert!(["edge 10 -> 20", "edge 20 -> 30", "edge 30 -> 10"].iter().any(|e| err.contains(e)), "internal ids in:\n{err}");
}

#[test]
fn a_programs_fingerprint_is_stable_across_parses_and_changes_with_edits() {
    let fp = |src: &str| wayfarer_compiler::print::fingerprint(&wayfarer_compiler::compile_source(src).unwrap().0);
    // Parsed twice in one process (source positions differ), the same key.
    assert_eq!(fp(PROGRAM), fp(PROGRAM));
    assert_eq!(fp(PROGRAM), fp(&format!("\n\n{PROGRAM}")));
    assert_ne!(fp(PROGRAM), fp(&PROGRAM.replace("h / b }", "h / b + 0.5 }")));
}

#[test]
fn a_full_disk_is_an_error_and_leaves_nothing() {
    let d = scratch("full");
    let out = d.join("w.npy");
    // A file-size limit stands in for a full disk: with SIGXFSZ ignored, writes past it fail.
    let cmd = format!(
        "trap '' XFSZ; ulimit -f 64 && exec {} walk deepwalk --walks-per-node 2 --backend cpu -q -o {}",
        env!("CARGO_BIN_EXE_wayfarer"),
        s(&out)
    );
    let o = shell(&cmd, &d.join("c"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("w.npy") && err.contains("too large"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).filter(|n| n != "c").collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn edge_list_headers_and_directories_get_clear_errors() {
    let d = scratch("headers");
    let edges = d.join("h.txt");
    std::fs::write(&edges, "src dst w\n1 2 0.5\n2 3 1.5\n").unwrap();
    fails_with(&["info", s(&edges)], &d, &["h.txt:1", "--skip-header 1"]);
    let g = d.join("g.wfg");
    succeeds(&["convert", s(&edges), "--skip-header", "1", "--weight-col", "3", "-o", s(&g)], &d);
    // Lines keep their numbers after a skipped header.
    std::fs::write(&edges, "src dst\n1 2\nx 3\n").unwrap();
    fails_with(&["convert", s(&edges), "--skip-header", "1", "-o", s(&g)], &d, &["h.txt:3"]);
    fails_with(&["walk", "deepwalk", "--graph", s(&d)], &d, &["is a directory"]);
}

#[test]
fn decimal_timestamps_are_read_exactly_with_a_time_scale() {
    let d = scratch("times");
    let edges = d.join("t.txt");
    std::fs::write(&edges, "1 2 1.7e9\n2 3 1700000001.0\n3 1 12\n").unwrap();
    let g = d.join("g.wfg");
    succeeds(&["convert", s(&edges), "--time-col", "3", "-o", s(&g)], &d);
    std::fs::write(&edges, "1 2 1.5\n2 3 1699999999.123\n").unwrap();
    fails_with(&["convert", s(&edges), "--time-col", "3", "-o", s(&g)], &d, &["t.txt:1", "has a fraction", "--time-scale 1000"]);
    fails_with(&["convert", s(&edges), "--time-col", "3", "--time-scale", "1500", "-o", s(&g)], &d, &["not a power of ten"]);
    succeeds(&["convert", s(&edges), "--time-col", "3", "--time-scale", "1000", "-o", s(&g)], &d);
    // The stored values are the scaled ones, exactly.
    let back = d.join("back.txt");
    succeeds(&["convert", s(&g), "-o", s(&back)], &d);
    let text = std::fs::read_to_string(&back).unwrap();
    assert!(text.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["1", "2", "1500"]), "{text}");
    assert!(text.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["2", "3", "1699999999123"]), "{text}");
}

#[test]
fn one_behaviour_for_library_walks_and_program_files() {
    let d = scratch("paths");
    // An unboundable program warns on the CLI as the macro does, and runs.
    let prog = d.join("mod.rs");
    std::fs::write(&prog, "#[walk]\nfn modw(s: &Step) -> f32 {\n    (s.dst() % 3) as f32 * s.weight()\n}\n").unwrap();
    let o = run(&["walk", s(&prog), "--length", "3", "--backend", "cpu"], &d);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("warning: walk `modw` has no weight bound") && err.contains("eRVS"), "{err}");
    // Without -o both print the preview.
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.starts_with("first walks"), "{out}");
    let lib = run(&["walk", "deepwalk", "--length", "3", "--backend", "cpu"], &d);
    assert!(String::from_utf8_lossy(&lib.stdout).starts_with("first walks"));
    // `walk --list` names every library walk with its parameters.
    let list = String::from_utf8_lossy(&run(&["walk", "--list"], &d).stdout).into_owned();
    assert!(list.contains("node2vec") && list.contains("a=2") && list.contains("ppr-stop"), "{list}");
    // `gen -o x.txt` writes a text edge list.
    let txt = d.join("g.txt");
    succeeds(&["gen", "er", "--nodes", "20", "--p", "0.3", "-q", "-o", s(&txt)], &d);
    assert!(std::fs::read_to_string(&txt).unwrap().starts_with("# wayfarer edge list:"));
    // -q: nothing on stderr for a successful run, whatever the subcommand.
    for args in [
        vec!["walk", "deepwalk", "--length", "2", "--backend", "cpu", "-q", "-o"],
        vec!["sample", "--graph", s(&txt), "--fanouts", "2", "--backend", "cpu", "-q", "-o"],
    ] {
        let ext = if args[0] == "sample" { "npz" } else { "npy" };
        let out = d.join(format!("q.{ext}"));
        let mut a = args.clone();
        a.push(s(&out));
        let err = succeeds(&a, &d);
        assert!(err.is_empty(), "{args:?} -q printed:\n{err}");
    }
    let err = succeeds(&["triangles", "--graph", s(&txt), "--backend", "cpu", "-q"], &d);
    assert!(err.is_empty(), "triangles -q printed:\n{err}");
}
