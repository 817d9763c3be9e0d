//! The `wayfarer` command line, end to end: gen, convert, info, walk and bench.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("wayfarer-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn wayfarer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wayfarer"))
        .args(args)
        .env("WAYFARER_CACHE_DIR", dir().join("cache"))
        .output()
        .expect("the wayfarer binary runs")
}

fn ok(args: &[&str]) -> (String, String) {
    let o = wayfarer(args);
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "wayfarer {args:?} failed:\n{err}");
    (out, err)
}

fn fails(args: &[&str], needle: &str) {
    let o = wayfarer(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "wayfarer {args:?} should fail cleanly; stderr:\n{err}");
    assert!(err.contains(needle), "wayfarer {args:?}: stderr lacks `{needle}`:\n{err}");
    assert!(!err.contains("panicked"), "wayfarer {args:?} panicked:\n{err}");
}

fn npy_shape(path: &Path) -> (String, Vec<u8>) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..6], b"\x93NUMPY");
    let hl = u16::from_le_bytes([b[8], b[9]]) as usize;
    // The header as Python writes it, whichever spacing and trailing commas the writer used.
    let header = String::from_utf8_lossy(&b[10..10 + hl]).replace(", )", ")").replace(",)", ")");
    (header, b[10 + hl..].to_vec())
}

#[test]
fn gen_info_walk_npy_and_reproducible_across_threads() {
    let d = dir();
    let g = d.join("g.wfg");
    ok(&[
        "gen",
        "rmat",
        "--scale",
        "9",
        "--edge-factor",
        "8",
        "--seed",
        "3",
        "--weights",
        "pareto:1",
        "--labels",
        "5",
        "-o",
        g.to_str().unwrap(),
    ]);
    let (info, _) = ok(&["info", g.to_str().unwrap()]);
    assert!(info.contains("nodes:        512"), "{info}");
    assert!(info.contains("labels:       5 distinct"), "{info}");
    let mut outs = Vec::new();
    for threads in ["1", "3"] {
        let o = d.join(format!("w{threads}.npy"));
        let (_, err) = ok(&[
            "--threads",
            threads,
            "walk",
            "node2vec",
            "--graph",
            g.to_str().unwrap(),
            "--length",
            "10",
            "-p",
            "a=2",
            "-p",
            "b=0.5",
            "--seed",
            "7",
            "-o",
            o.to_str().unwrap(),
        ]);
        assert!(err.contains("512 walkers") && err.contains("steps/s") && err.contains("backend cpu") && err.contains("eRJS"), "{err}");
        let (header, body) = npy_shape(&o);
        assert!(header.contains("'descr': '<u4'") && header.contains("(512, 11)"), "{header}");
        outs.push(body);
    }
    assert_eq!(outs[0], outs[1], "1 and 3 threads must give identical walks (R is cached after the first run)");
}

#[test]
fn text_output_uses_original_ids_and_shorter_lines_for_dead_ends() {
    let d = dir();
    let src = d.join("edges.txt");
    std::fs::write(&src, "# ids are sparse\n100 200 0\n200 300 1\n300 100 0\n200 400 0\n").unwrap();
    let g = d.join("e.wfg");
    ok(&["convert", src.to_str().unwrap(), "--label-col", "3", "-o", g.to_str().unwrap()]);
    let out = d.join("w.txt");
    ok(&[
        "walk",
        "metapath",
        "--graph",
        g.to_str().unwrap(),
        "-p",
        "schema=0,1",
        "--length",
        "4",
        "-o",
        out.to_str().unwrap(),
        "--cost-ratio",
        "1",
    ]);
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    // From 100: label 0 to 200, label 1 to 300, label 0 to 100, label 1: 100 has none.
    assert_eq!(lines[0], "100 200 300 100");
    assert_eq!(lines[3], "400", "400 has no edges: the walk is just its start");
    let starts = d.join("starts.txt");
    std::fs::write(&starts, "# two walkers from 300, one from 100\n300\n300\n100\n").unwrap();
    let out2 = d.join("w2.txt");
    ok(&[
        "walk",
        "deepwalk",
        "--graph",
        g.to_str().unwrap(),
        "--starts",
        starts.to_str().unwrap(),
        "--length",
        "2",
        "-o",
        out2.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&out2).unwrap();
    assert_eq!(text.lines().map(|l| l.split(' ').next().unwrap()).collect::<Vec<_>>(), ["300", "300", "100"]);
    std::fs::write(&starts, "300\n999\n").unwrap();
    fails(
        &["walk", "deepwalk", "--graph", g.to_str().unwrap(), "--starts", starts.to_str().unwrap()],
        "starts.txt:2: node 999 is not in the graph",
    );
}

#[test]
fn default_graph_runs_without_arguments() {
    let d = dir();
    let out = d.join("wn.txt");
    let (_, err) = ok(&["walk", "deepwalk", "--length", "5", "-o", out.to_str().unwrap()]);
    assert!(err.contains("WordNet"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 116_650);
    let (preview, _) = ok(&["walk", "node2vec", "--length", "3", "--quiet"]);
    assert!(preview.lines().count() >= 5, "{preview}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let d = dir();
    let bad = d.join("bad.txt");
    std::fs::write(&bad, "0 1\n1 two\n").unwrap();
    fails(&["convert", bad.to_str().unwrap(), "-o", d.join("x.wfg").to_str().unwrap()], "bad.txt:2: column 2");
    fails(&["walk", "nosuchwalk"], "unknown walk `nosuchwalk`");
    fails(&["walk", "ppr", "-p", "alpha=1.5"], "alpha=1.5 does not meet `alpha >= 0.0 && alpha <= 1.0`");
    fails(&["walk", "temporal"], "needs edge timestamps");
    fails(&["walk", "metapath", "-p", "schema=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"], "17 values; `schema` holds at most 16");
    fails(&["walk", "node2vec", "-p", "c=1"], "parameter `c`");
    fails(&["walk", "node2vec", "-p", "a=-1"], "parameter `a`");
    fails(&["walk", "node2vec", "-p", "a"], "expected NAME=VALUE");
    fails(&["walk", "node2vec", "-o", "walks.csv"], "unknown extension");
    // CI has no GPU: asking for one is a clear error, never a panic; `auto` falls back and says so.
    if !wayfarer::gpu::CudaDevice::libraries_present() {
        fails(&["walk", "node2vec", "--backend", "cuda"], "the CUDA backend is unavailable");
        let (_, err) = ok(&["walk", "deepwalk", "--length", "2"]);
        assert!(err.contains("backend auto: running on the CPU") && err.contains("backend cpu"), "{err}");
    }
    fails(&["walk", "node2vec", "--graph", "/no/such.wfg"], "/no/such.wfg");
    // The I/O cause is said once, not once by our error and again by its source.
    let err = String::from_utf8_lossy(&wayfarer(&["info", "/no/such.wfg"]).stderr).into_owned();
    assert_eq!(err.matches("os error").count(), 1, "{err}");
    fails(&["gen", "rmat", "--scale", "4", "-o", "/no/such/dir/g.wfg"], "/no/such/dir/g.wfg");
    let plain = d.join("plain.wfg");
    ok(&["gen", "er", "--nodes", "50", "--p", "0.1", "-o", plain.to_str().unwrap()]);
    fails(&["walk", "metapath", "--graph", plain.to_str().unwrap()], "needs edge labels");
    fails(&["gen", "rmat", "--scale", "40", "-o", d.join("y.wfg").to_str().unwrap()], "scale");
    fails(&["gen", "rmat", "--scale", "4", "--weights", "pareto:x", "-o", d.join("y.wfg").to_str().unwrap()], "pareto");
}

#[test]
fn bench_prints_a_table() {
    let (out, _) =
        ok(&["bench", "--scale", "8", "--weights", "uniform", "--walks", "node2vec,metapath", "--length", "5", "--interleave", "1,4"]);
    assert!(out.contains("| node2vec | uniform | ervs | 1 |"), "{out}");
    assert!(out.contains("| metapath | uniform | adaptive | 4 |"), "{out}");
    assert!(out.contains("hardware:"), "{out}");
}

#[test]
fn bench_counts_instructions_per_step_under_callgrind() {
    let args = [
        "bench",
        "--scale",
        "8",
        "--weights",
        "uniform",
        "--walks",
        "deepwalk,node2vec-ref",
        "--samplers",
        "erjs",
        "--counts",
        "--count-walkers",
        "40",
    ];
    // No walkers to count is refused by the argument parser, naming the option.
    let o = wayfarer(&["bench", "--counts", "--count-walkers", "0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--count-walkers") && !err.contains("panicked"), "{err}");
    let has_valgrind = Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_valgrind {
        fails(&args, "valgrind");
        return;
    }
    let (out, _) = ok(&args);
    let row = out
        .lines()
        .find(|l| l.starts_with("| deepwalk | uniform | erjs | auto | 40 |"))
        .unwrap_or_else(|| panic!("no DeepWalk row:\n{out}"));
    let cols: Vec<&str> = row.split('|').map(str::trim).collect();
    let (steps, per_step): (u64, f64) = (cols[6].parse().unwrap(), cols[7].parse().unwrap());
    // 40 walkers of 80 steps, less dead ends; a step costs tens to thousands of instructions.
    assert!(steps > 0 && steps <= 40 * 80, "{row}");
    assert!(per_step > 10.0 && per_step < 10_000.0, "{row}");
    assert!(out.contains("| node2vec-ref | uniform | - |") && out.contains("callgrind"), "{out}");
}

#[test]
fn explain_shows_ir_and_analysis_and_points_at_errors() {
    let (out, _) = ok(&["explain", "node2vec"]);
    assert!(out.contains("walk node2vec(a: f32 = 2, b: f32 = 0.5) -> f32") && out.contains("bound B:       PerStep"), "{out}");
    assert!(out.contains("h_back(cur, prev)"), "{out}");
    let d = dir();
    let bad = d.join("bad_walk.rs");
    std::fs::write(&bad, "#[walk]\nfn w(s: &Step) -> f32 {\n    s.weight() * 2\n}\n").unwrap();
    let o = wayfarer(&["explain", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("bad_walk.rs:3:18") && err.contains("^") && err.contains("write `2.0`"), "{err}");
    let dump = d.join("dump");
    let o = Command::new(env!("CARGO_BIN_EXE_wayfarer")).args(["explain", "metapath"]).env("WAYFARER_DUMP", &dump).output().unwrap();
    assert!(o.status.success());
    for f in ["metapath.ir.txt", "metapath.analysis.txt", "metapath.generated.rs"] {
        assert!(dump.join(f).exists(), "WAYFARER_DUMP did not write {f}");
    }
}

#[test]
fn compiled_library_walks_run_from_the_cli() {
    let (_, err) = ok(&["walk", "node2vec", "--length", "5", "-p", "a=1", "-p", "b=2", "--cost-ratio", "2"]);
    assert!(err.contains("node2vec: 116650 walkers"), "{err}");
    let (_, err) = ok(&["walk", "metapath", "-p", "schema=1,3", "--cost-ratio", "2"]);
    assert!(err.contains("metapath:") && err.contains("dead ends"), "{err}");
    let (_, err) = ok(&["walk", "ppr", "--length", "10", "-p", "alpha=0.5", "--cost-ratio", "2"]);
    assert!(err.contains("ppr: 116650 walkers"), "{err}");
    let (_, err) = ok(&["walk", "ppr-stop", "--length", "10", "--cost-ratio", "2"]);
    assert!(err.contains("stopped") || err.contains("walkers"), "{err}");
    // Anonymous walks are first-visit indices: every walk starts at 0.
    let (out, _) = ok(&["walk", "anonymous", "--length", "4", "--cost-ratio", "2"]);
    assert!(out.lines().filter(|l| !l.is_empty() && !l.starts_with("first")).all(|l| l.starts_with("0 ") || l == "0"), "{out}");
    let (out, _) = ok(&["explain", "ppr"]);
    assert!(out.contains("update (draws 1)") && out.contains("cur <-"), "{out}");
}

#[test]
fn emit_writes_a_standalone_cuda_file() {
    let out = dir().join("walk.cu");
    let (_, err) = ok(&["emit", "node2vec", "-p", "a=1.5", "-o", out.to_str().unwrap()]);
    assert!(err.contains("nvcc -O3 -arch=sm_90"), "{err}");
    // The file builds no structured-proposal tables: it says which CLI run it reproduces.
    assert!(err.contains("`wayfarer walk --backend cuda --table-budget 0`'s"), "{err}");
    let cu = std::fs::read_to_string(&out).unwrap();
    for needle in
        ["int main(", "__global__ void __launch_bounds__(256, WF_MIN_BLOCKS) wf_walk", "#define WF_PARAMS {1.5f, 0.5f}", "wf_philox"]
    {
        assert!(cu.contains(needle), "the emitted file lacks `{needle}`");
    }
    fails(&["emit", "nosuchwalk", "-o", out.to_str().unwrap()], "is neither a library walk");
    // A program file: compiled at run time (Cranelift on the CPU); a missing -p value is a
    // clear error.
    let prog = dir().join("hop.rs");
    std::fs::write(
        &prog,
        "#[walk(params(alpha: f32))]\nimpl Hop {\n    fn get_weight(&self, s: &Step) -> f32 { s.weight() * self.alpha }\n}\n",
    )
    .unwrap();
    let p = prog.to_str().unwrap();
    fails(&["emit", p, "-o", out.to_str().unwrap()], "needs a value for it");
    ok(&["emit", p, "-p", "alpha=2", "-o", out.to_str().unwrap()]);
    fails(&["walk", p, "--backend", "cpu"], "needs a value for it");
    let (_, err) = ok(&["walk", p, "-p", "alpha=2", "--backend", "cpu", "--length", "3", "--cost-ratio", "2"]);
    assert!(err.contains("backend cpu (cranelift, compiled in"), "{err}");
    // `--program FILE`: the same walk, whatever the file's extension; not with a WALK too.
    let same = dir().join("hop.walk");
    std::fs::copy(&prog, &same).unwrap();
    let (a, b) = (dir().join("hop-positional.txt"), dir().join("hop-program.txt"));
    let run = ["-p", "alpha=2", "--backend", "cpu", "--length", "5", "--seed", "9", "-o"];
    ok(&[&["walk", p][..], &run, &[a.to_str().unwrap()]].concat());
    ok(&[&["walk", "--program", same.to_str().unwrap()][..], &run, &[b.to_str().unwrap()]].concat());
    let walks = std::fs::read_to_string(&a).unwrap();
    assert!(walks.lines().count() > 100, "{walks}");
    assert_eq!(walks, std::fs::read_to_string(&b).unwrap(), "--program FILE and FILE give the same walks");
    let o = wayfarer(&["walk", "deepwalk", "--program", p]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "a usage error: {err}");
    assert!(err.contains("cannot be used with"), "{err}");
    fails(&["walk", "--length", "3"], "no walk given: name a library walk (`wayfarer walk --list`), give a .rs file, or --program FILE");
    // A value of the wrong type, an unknown parameter, and a program that does not compile:
    // clear errors naming the parameter, or the file, line and column with a caret.
    fails(&["walk", p, "-p", "alpha=abc", "--backend", "cpu"], "parameter `alpha`: `abc` is not a f32");
    fails(&["walk", p, "-p", "alpha=2", "-p", "beta=1", "--backend", "cpu"], "beta");
    let broken = dir().join("broken.rs");
    std::fs::write(&broken, "#[walk]\nfn broken(s: &Step) -> f32 {\n    s.weight() * s.frobnicate()\n}\n").unwrap();
    let b = broken.to_str().unwrap();
    for cmd in [
        vec!["walk", b, "--backend", "cpu"],
        vec!["walk", "--program", b, "--backend", "cpu"],
        vec!["explain", b],
        vec!["emit", b, "-o", out.to_str().unwrap()],
    ] {
        let o = wayfarer(&cmd);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {err}");
        assert!(err.contains("broken.rs:3:20") && err.contains("^^^^^^^^^^") && err.contains("no method `frobnicate`"), "{cmd:?}: {err}");
    }
}

/// `wayfarer sample`: DGL-style blocks in a `.npz` that Python's zipfile reads with valid
/// CRCs; every array's `.npy` header matches its data; block l's destination nodes are block
/// l+1's node list and the last block's destinations are the batch's distinct seeds; seeds
/// from a text file; bad input is a clear error.
#[test]
fn sample_writes_blocks_as_npz() {
    let d = dir();
    let g = d.join("sample.wfg");
    ok(&["gen", "rmat", "--scale", "9", "--edge-factor", "8", "--seed", "2", "--weights", "pareto:2", "-o", g.to_str().unwrap()]);
    let out = d.join("blocks.npz");
    let seeds = d.join("seeds.txt");
    std::fs::write(&seeds, "3\n5\n5\n100\n7\n").unwrap();
    let (_, err) = ok(&[
        "sample",
        "--graph",
        g.to_str().unwrap(),
        "--fanouts",
        "4,2",
        "--batch-size",
        "2",
        "--seeds",
        seeds.to_str().unwrap(),
        "--weighted",
        "--seed",
        "7",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(err.contains("sampled 3 mini-batches"), "{err}");
    let check = r#"
import sys, zipfile, struct, ast
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
arrays = {}
for name in z.namelist():
    b = z.read(name)
    assert b[:6] == b'\x93NUMPY', name
    hl = struct.unpack('<H', b[8:10])[0]
    h = ast.literal_eval(b[10:10 + hl].decode())
    size = {'<u4': 4, '<u8': 8}[h['descr']]
    (n,) = h['shape']
    data = b[10 + hl:]
    assert len(data) == n * size, name
    arrays[name[:-4]] = list(struct.unpack('<%d%s' % (n, 'I' if size == 4 else 'Q'), data))
assert arrays['fanouts'] == [4, 2]
assert arrays['b0_seeds'] == [3, 5] and arrays['b1_seeds'] == [5, 100] and arrays['b2_seeds'] == [7]
for b in range(3):
    nd0 = arrays['b%d_l0_num_dst' % b][0]
    assert arrays['b%d_l0_nodes' % b][:nd0] == arrays['b%d_l1_nodes' % b]
    nd1 = arrays['b%d_l1_num_dst' % b][0]
    assert arrays['b%d_l1_nodes' % b][:nd1] == sorted(set(arrays['b%d_seeds' % b]), key=arrays['b%d_seeds' % b].index)
    for l in range(2):
        nodes, src, dst = arrays['b%d_l%d_nodes' % (b, l)], arrays['b%d_l%d_src' % (b, l)], arrays['b%d_l%d_dst' % (b, l)]
        nd = arrays['b%d_l%d_num_dst' % (b, l)][0]
        assert len(src) == len(dst) == len(arrays['b%d_l%d_eid' % (b, l)])
        assert all(s < len(nodes) for s in src) and all(x < nd for x in dst)
print('ok', len(arrays))
"#;
    let o = Command::new("python3").args(["-c", check, out.to_str().unwrap()]).output().expect("python3 runs");
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    fails(&["sample", "--graph", g.to_str().unwrap(), "--fanouts", "4,x"], "`x` is not a count");
    fails(&["sample", "--graph", g.to_str().unwrap(), "--fanouts", "0"], "fanout of 0");
    fails(&["sample", "--graph", g.to_str().unwrap(), "-o", d.join("b.txt").to_str().unwrap()], "is a .npz");
    fails(&["sample", "--graph", g.to_str().unwrap(), "--device-graph-budget", "12X"], "--device-graph-budget 12X");
    let (_, err) = ok(&["sample", "--graph", g.to_str().unwrap(), "--fanouts", "2", "--backend", "cpu", "--device-graph-budget", "1G"]);
    assert!(err.contains("--device-graph-budget is the GPU sampler's"), "{err}");
    // Seeds as a .npy of int64 (numpy's default integer), and a negative id.
    let npy = |ids: &[i64]| {
        let dict = format!("{{'descr': '<i8', 'fortran_order': False, 'shape': ({},), }}", ids.len());
        let mut h = b"\x93NUMPY\x01\x00".to_vec();
        let total = (10 + dict.len() + 1).div_ceil(64) * 64;
        h.extend_from_slice(&((total - 10) as u16).to_le_bytes());
        h.extend_from_slice(dict.as_bytes());
        h.resize(total - 1, b' ');
        h.push(b'\n');
        ids.iter().for_each(|x| h.extend_from_slice(&x.to_le_bytes()));
        h
    };
    let seeds_npy = d.join("seeds.npy");
    std::fs::write(&seeds_npy, npy(&[3, 5, 7])).unwrap();
    let (_, err) =
        ok(&["sample", "--graph", g.to_str().unwrap(), "--fanouts", "2", "--batch-size", "2", "--seeds", seeds_npy.to_str().unwrap()]);
    assert!(err.contains("sampled 2 mini-batches"), "{err}");
    std::fs::write(&seeds_npy, npy(&[3, -1])).unwrap();
    fails(&["sample", "--graph", g.to_str().unwrap(), "--seeds", seeds_npy.to_str().unwrap()], "entry 1: node -1 is not in the graph");
    // A #[sampler] policy compiled at run time: weighing each edge by its weight samples
    // exactly what --weighted samples (the same streams and keys), byte for byte.
    let pol = d.join("by_weight.rs");
    std::fs::write(&pol, "use wayfarer::prelude::*;\n#[sampler]\nfn by_weight(s: &Step, k: f32) -> f32 {\n    s.weight() * k\n}\n")
        .unwrap();
    let (w1, w2) = (d.join("w1.npz"), d.join("w2.npz"));
    let gs = g.to_str().unwrap();
    ok(&["sample", "--graph", gs, "--fanouts", "3,2", "--batch-size", "50", "--weighted", "--seed", "4", "-o", w1.to_str().unwrap()]);
    ok(&[
        "sample",
        "--graph",
        gs,
        "--fanouts",
        "3,2",
        "--batch-size",
        "50",
        "--policy",
        pol.to_str().unwrap(),
        "-p",
        "k=1",
        "--seed",
        "4",
        "-o",
        w2.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read(&w1).unwrap(), std::fs::read(&w2).unwrap(), "policy s.weight() must sample as --weighted");
    fails(&["sample", "--graph", gs, "--policy", pol.to_str().unwrap()], "needs a value for it");
    fails(&["sample", "--graph", gs, "-p", "k=1"], "there is no --policy");
    fails(&["sample", "--graph", gs, "--policy", pol.to_str().unwrap(), "-p", "k=-1"], "weight");
    let bad = d.join("walker_policy.rs");
    std::fs::write(&bad, "#[sampler]\nfn bad(s: &Step) -> f32 {\n    if s.step() == 0 { 1.0 } else { s.weight() }\n}\n").unwrap();
    let o = wayfarer(&["sample", "--graph", gs, "--policy", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("walker_policy.rs:3:8") && err.contains("`s.step()` is a walk's") && err.contains("^^^^^^^^"), "{err}");
    std::fs::write(&seeds, "3\n99999\n").unwrap();
    fails(&["sample", "--graph", g.to_str().unwrap(), "--seeds", seeds.to_str().unwrap()], "seeds.txt:2: node 99999 is not in the graph");
}

/// `wayfarer sample`'s backend options: weighted sampling on the GPU, an unknown kernel and a
/// super-batch of 0 are clear errors; the super-batch size never changes the blocks.
#[test]
fn sample_backend_options() {
    let d = dir();
    let g = d.join("sample-backend.wfg");
    ok(&["gen", "rmat", "--scale", "9", "--edge-factor", "8", "--seed", "2", "-o", g.to_str().unwrap()]);
    let gs = g.to_str().unwrap();
    let base = ["sample", "--graph", gs, "--fanouts", "5,3", "--batch-size", "16", "--seed", "3", "-q"];
    let err = |extra: &[&str]| {
        let o = wayfarer(&[&base[..], extra].concat());
        assert!(!o.status.success(), "{extra:?} should fail");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    assert!(err(&["--backend", "cuda", "--weighted"]).contains("runs on the CPU only"));
    assert!(err(&["--kernel", "fast"]).contains("grouped or warp"));
    assert!(err(&["--super-batch", "0"]).contains("--super-batch 0"));
    let a = d.join("sb1.npz");
    let b = d.join("sb5.npz");
    ok(&[&base[..], &["--backend", "cpu", "--super-batch", "1", "-o", a.to_str().unwrap()]].concat());
    ok(&[&base[..], &["--backend", "cpu", "--super-batch", "5", "-o", b.to_str().unwrap()]].concat());
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), "the same blocks for any super-batch size");
}

/// `wayfarer triangles`: the count on stdout, a mask file with a parameter, per-node counts as
/// .npy, and clear errors for a mask that reads a walker's history and for -p without --mask.
#[test]
fn triangles_counts_with_and_without_a_mask() {
    let d = dir();
    let g = d.join("tri.wfg");
    ok(&["gen", "rmat", "--scale", "9", "--edge-factor", "8", "--seed", "2", "--weights", "uniform", "-o", g.to_str().unwrap()]);
    let gs = g.to_str().unwrap();
    let want = wayfarer::triangles::count(&wayfarer::graph::CsrGraph::load(&g).unwrap());
    let pn = d.join("tri-per-node.npy");
    let (out, err) = ok(&["triangles", "--graph", gs, "--backend", "cpu", "--per-node", pn.to_str().unwrap()]);
    assert_eq!(out.trim(), want.total.to_string(), "{err}");
    let npy = std::fs::read(&pn).unwrap();
    assert!(npy.starts_with(b"\x93NUMPY") && npy.len() >= 8 * want.per_node.len());
    let mask = d.join("heavy.rs");
    std::fs::write(&mask, "#[mask]\nfn heavy(s: &Step, t: f32) -> bool {\n    s.weight() > t\n}\n").unwrap();
    let (masked, _) = ok(&["triangles", "--graph", gs, "--backend", "cpu", "--mask", mask.to_str().unwrap(), "-p", "t=3"]);
    let masked: u64 = masked.trim().parse().unwrap();
    assert!(masked < want.total, "the mask keeps fewer triangles ({masked} of {})", want.total);
    let bad = d.join("bad-mask.rs");
    std::fs::write(&bad, "#[mask]\nfn bad(s: &Step) -> bool {\n    s.prev() > 0\n}\n").unwrap();
    fails(&["triangles", "--graph", gs, "--mask", bad.to_str().unwrap()], "an edge mask has no walker");
    fails(&["triangles", "--graph", gs, "-p", "t=3"], "there is no --mask");
    fails(&["triangles", "--graph", gs, "--per-node", "counts.txt"], "per-node outputs are .npz (ids and values) or .npy");
    // Trials: one line per trial, then the average, median and fastest; the same total.
    let (out, err) = ok(&["triangles", "--graph", gs, "--backend", "cpu", "--trials", "3"]);
    assert_eq!(out.trim(), want.total.to_string(), "{err}");
    for line in ["trial 1: ", "trial 2: ", "trial 3: ", "trials: 3; average "] {
        assert!(err.contains(line), "no {line:?} in:\n{err}");
    }
    assert!(!err.contains("trial 4"), "{err}");
    let o = wayfarer(&["triangles", "--graph", gs, "--trials", "0"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "a usage error: {err}");
    assert!(err.contains("'--trials <TRIALS>': 0 is not in 1..=10000"), "{err}");
}

#[test]
fn partition_writes_blocks_classes_and_a_report() {
    let d = dir().join("partition");
    std::fs::create_dir_all(&d).unwrap();
    let g = d.join("ba.wfg");
    ok(&["gen", "ba", "--nodes", "3000", "--m", "3", "--seed", "4", "-o", g.to_str().unwrap()]);
    let parts = d.join("parts.npy");
    let classes = d.join("classes.npy");
    let (_, err) = ok(&[
        "partition",
        "--graph",
        g.to_str().unwrap(),
        "--blocks",
        "16",
        "-k",
        "4",
        "-d",
        "5",
        "--backend",
        "cpu",
        "-o",
        parts.to_str().unwrap(),
        "--classes",
        classes.to_str().unwrap(),
    ]);
    for row in ["naive", "degree-only", "hybrid", "dense and"] {
        assert!(err.contains(row), "report lacks {row}:\n{err}");
    }
    let (header, data) = npy_shape(&parts);
    assert!(header.contains("'<u4'") && header.contains("(3000)"), "{header}");
    let blocks: Vec<u32> = data.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert!(blocks.iter().all(|&b| b < 16) && (0..16).all(|b| blocks.contains(&b)), "every block used once at least");
    let (header, data) = npy_shape(&classes);
    assert!(header.contains("'|u1'") && header.contains("(16)"), "{header}");
    assert!(data.iter().all(|&c| c <= 1) && data.contains(&1) && data.contains(&0));
    fails(&["partition", "--graph", g.to_str().unwrap(), "--blocks", "0"], "--blocks must be at least 1");
    fails(
        &["partition", "--graph", g.to_str().unwrap(), "--blocks", "4", "-o", "p.txt"],
        "per-node outputs are .npz (ids and values) or .npy",
    );
    fails(&["partition", "--graph", g.to_str().unwrap(), "--blocks", "4", "--alpha", "2"], "alpha");
    fails(&["partition", "--graph", g.to_str().unwrap(), "--blocks", "4", "--order", "o.npy", "--order-by", "size"], "--order-by size");
    fails(&["partition", "--graph", g.to_str().unwrap(), "--blocks", "5000"], "the graph has 3000 nodes");
    // A bad device budget is an error even where the walk would run on the CPU.
    for bad in ["2X", "0", "lots"] {
        fails(
            &["walk", "deepwalk", "--graph", g.to_str().unwrap(), "--backend", "cpu", "--device-memory-budget", bad],
            "--device-memory-budget",
        );
    }
}

/// `--backend wgpu` and `emit --wgsl`: on an adapter with the `wgpu` feature (CI: lavapipe),
/// a clear error without the feature; other commands refuse the backend by name.
#[test]
fn wgpu_backend_from_the_cli() {
    let d = dir();
    let g = d.join("wg.wfg");
    ok(&["gen", "rmat", "--scale", "8", "--edge-factor", "4", "--weights", "uniform", "--labels", "3", "-o", g.to_str().unwrap()]);
    let gs = g.to_str().unwrap();
    fails(&["sample", "--graph", gs, "--backend", "wgpu"], "`wayfarer sample` runs on cpu or cuda");
    fails(&["triangles", "--graph", gs, "--backend", "wgpu"], "`wayfarer triangles` runs on cpu or cuda");
    let wgsl = d.join("n2v.wgsl");
    let out = d.join("wg.npy");
    if cfg!(feature = "wgpu") {
        let (_, err) = ok(&["walk", "node2vec", "--graph", gs, "--backend", "wgpu", "--length", "6", "-o", out.to_str().unwrap()]);
        assert!(err.contains("backend wgpu ("), "{err}");
        let (dtype, _) = npy_shape(&out);
        assert!(dtype.contains("(256, 7)"), "{dtype}");
        ok(&["emit", "node2vec", "--wgsl", "-o", wgsl.to_str().unwrap()]);
        let text = std::fs::read_to_string(&wgsl).unwrap();
        assert!(text.contains("fn wf_weight(") && text.contains("@compute"), "{text}");
        assert!(text.contains("fn wf_walk(") && !text.contains("fn wf_walk_workgroup("), "the plain kernel by default");
        ok(&["emit", "node2vec", "--wgsl", "--kernel", "workgroup", "-o", wgsl.to_str().unwrap()]);
        assert!(std::fs::read_to_string(&wgsl).unwrap().contains("fn wf_walk_workgroup("));
        fails(
            &["emit", "temporal", "--wgsl", "--kernel", "subgroup", "-o", wgsl.to_str().unwrap()],
            "which the subgroup kernel cannot shuffle",
        );
        fails(&["emit", "node2vec", "--kernel", "subgroup", "-o", wgsl.to_str().unwrap()], "for --wgsl or --spirv");
        // The kernel picked at run time, and a bad name for it.
        let run = |kernel: &str| {
            std::process::Command::new(env!("CARGO_BIN_EXE_wayfarer"))
                .args(["walk", "node2vec", "--graph", gs, "--backend", "wgpu", "--length", "6", "-o", out.to_str().unwrap()])
                .env("WAYFARER_WGPU_KERNEL", kernel)
                .output()
                .unwrap()
        };
        let r = run("workgroup");
        assert!(r.status.success() && String::from_utf8_lossy(&r.stderr).contains("workgroup kernel"), "{r:?}");
        let r = run("warp");
        assert!(!r.status.success() && String::from_utf8_lossy(&r.stderr).contains("WAYFARER_WGPU_KERNEL=warp"), "{r:?}");
        let spv = d.join("n2v.spv");
        ok(&["emit", "node2vec", "--spirv", "-o", spv.to_str().unwrap()]);
        assert_eq!(&std::fs::read(&spv).unwrap()[..4], &0x0723_0203u32.to_le_bytes());
        // A program file, with its parameters.
        let prog = d.join("tilt.rs");
        std::fs::write(&prog, "#[walk] fn tilt(s: &Step, k: f32) -> f32 { s.weight() * k + s.degree(s.dst()) as f32 }").unwrap();
        let (_, err) = ok(&[
            "walk",
            prog.to_str().unwrap(),
            "--graph",
            gs,
            "--backend",
            "wgpu",
            "-p",
            "k=2",
            "--length",
            "4",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(err.contains("tilt"), "{err}");
    } else {
        fails(&["walk", "deepwalk", "--graph", gs, "--backend", "wgpu"], "without the `wgpu` feature");
        fails(&["emit", "node2vec", "--wgsl", "-o", wgsl.to_str().unwrap()], "without the `wgpu` feature");
    }
}
