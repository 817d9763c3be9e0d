//! `mpirun -np N wayfarer walk ...` (feature `mpi`): each rank writes its shard of the queries
//! and rank 0 a manifest; the shards in rank order are the single-process output byte for byte,
//! for a library walk and a walk program compiled at run time, on 2 and 3 ranks, with the
//! adaptive rule's cost model taken from rank 0 (the other ranks have empty caches and would
//! profile their own). `mpirun -np N wayfarer triangles` counts the same totals and per-node
//! counts as one process, with and without a mask. Without `mpirun` on the machine
//! the test says so and passes, unless `WAYFARER_REQUIRE_MPI=1` (set by scripts/test.sh).
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("wayfarer-mpi-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mpirun_present() -> bool {
    let ok = Command::new("mpirun").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("WAYFARER_REQUIRE_MPI").is_none(), "WAYFARER_REQUIRE_MPI is set but mpirun is missing");
        eprintln!("skipping the MPI test: no mpirun");
    }
    ok
}

/// Runs the CLI, under `mpirun -np ranks` when `ranks > 0`. Rank 0 (or the single process)
/// uses the cost-model cache `cache`; the other ranks each get an empty one of their own, so
/// they would profile a different cost model (and sample differently) unless they take rank
/// 0's.
fn run(ranks: usize, args: &[&str], cache: &Path) -> String {
    let bin = env!("CARGO_BIN_EXE_wayfarer");
    let mut cmd = if ranks == 0 {
        Command::new(bin)
    } else {
        let mut c = Command::new("mpirun");
        c.args(["--allow-run-as-root", "--oversubscribe", "-np", &ranks.to_string(), "sh", "-c"]);
        c.arg(
            "if [ \"$OMPI_COMM_WORLD_RANK\" != 0 ]; then WAYFARER_CACHE_DIR=\"$WAYFARER_CACHE_DIR.rank$OMPI_COMM_WORLD_RANK\"; fi; \
             export WAYFARER_CACHE_DIR; exec \"$0\" \"$@\"",
        );
        c.arg(bin);
        c
    };
    let o = cmd.args(args).env("WAYFARER_CACHE_DIR", cache).env("RAYON_NUM_THREADS", "1").output().expect("runs");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{ranks} ranks, {args:?} failed:\n{err}");
    err
}

/// The data of a .npy (after its header) and its row count.
fn npy_rows(path: &Path) -> (Vec<u8>, usize) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[..6], b"\x93NUMPY");
    let hl = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = String::from_utf8_lossy(&b[10..10 + hl]).into_owned();
    let rows: usize = header.split("'shape': (").nth(1).unwrap().split(',').next().unwrap().trim().parse().unwrap();
    (b[10 + hl..].to_vec(), rows)
}

#[test]
fn ranks_write_shards_whose_union_is_one_process_output() {
    if !mpirun_present() {
        return;
    }
    let d = dir();
    let g = d.join("g.wfg");
    let gs = g.to_str().unwrap();
    run(0, &["gen", "rmat", "--scale", "10", "--edge-factor", "8", "--seed", "2", "--weights", "pareto:2", "-o", gs], &d.join("c0"));
    let program = d.join("biased.rs");
    std::fs::write(
        &program,
        "#[walk]\nfn biased(s: &Step, p: f32) -> f32 {\n    if s.has_edge(s.prev(), s.dst()) { s.weight() } else { p * s.weight() }\n}\n",
    )
    .unwrap();
    let walks: [(&str, Vec<&str>); 2] =
        [("node2vec", vec!["walk", "node2vec"]), ("program", vec!["walk", program.to_str().unwrap(), "-p", "p=0.5"])];
    for (name, head) in walks {
        let single = d.join(format!("{name}-single.npy"));
        let mut args = head.clone();
        let tail = ["--graph", gs, "--length", "12", "--seed", "5", "--walks-per-node", "2", "--backend", "cpu", "-q", "-o"];
        args.extend(tail);
        let mut one = args.clone();
        one.push(single.to_str().unwrap());
        run(0, &one, &d.join(format!("c-{name}-1")));
        let (want, want_rows) = npy_rows(&single);
        for ranks in [2usize, 3] {
            let out = d.join(format!("{name}-{ranks}.npy"));
            let mut many = args.clone();
            many.push(out.to_str().unwrap());
            run(ranks, &many, &d.join(format!("c-{name}-1")));
            let manifest = std::fs::read_to_string(d.join(format!("{name}-{ranks}.manifest.json"))).expect("rank 0 wrote the manifest");
            assert!(
                manifest.contains(&format!("\"ranks\": {ranks}")) && manifest.contains(&format!("\"queries\": {want_rows}")),
                "{manifest}"
            );
            let mut got = Vec::new();
            let mut rows = 0;
            for r in 0..ranks {
                let shard = d.join(format!("{name}-{ranks}.rank{r}.npy"));
                assert!(manifest.contains(&format!("\"file\": \"{}\"", shard.file_name().unwrap().to_string_lossy())));
                let (data, n) = npy_rows(&shard);
                got.extend(data);
                rows += n;
            }
            assert_eq!(rows, want_rows, "{name}, {ranks} ranks: rows");
            assert!(got == want, "{name}, {ranks} ranks: the shards differ from one process's walks");
        }
    }
    // Other commands refuse to run N times over; -o is required.
    let o = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "2", env!("CARGO_BIN_EXE_wayfarer"), "info", gs])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("run across MPI processes"));
    let o = Command::new("mpirun")
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            "2",
            env!("CARGO_BIN_EXE_wayfarer"),
            "walk",
            "deepwalk",
            "--graph",
            gs,
            "-q",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("-o is needed"));
    std::fs::remove_dir_all(d).unwrap();
}

/// `wayfarer triangles` under `mpirun -np 2` and `3`: each rank counts its share of the rows
/// and rank 0 prints the sum and writes the per-node counts, the same as one process's, with
/// and without a mask, on the CPU.
#[test]
fn ranks_count_the_triangles_of_one_process() {
    if !mpirun_present() {
        return;
    }
    let d = dir().join("triangles");
    std::fs::create_dir_all(&d).unwrap();
    let g = d.join("g.wfg");
    let gs = g.to_str().unwrap();
    run(0, &["gen", "rmat", "--scale", "11", "--edge-factor", "12", "--seed", "4", "--weights", "uniform", "-o", gs], &d.join("c"));
    let mask = d.join("heavy.rs");
    std::fs::write(&mask, "#[mask]\nfn heavy(s: &Step, t: f32) -> bool {\n    s.weight() > t\n}\n").unwrap();
    let count = |ranks: usize, extra: &[&str], out: &Path| -> String {
        let bin = env!("CARGO_BIN_EXE_wayfarer");
        let mut cmd = if ranks == 0 {
            Command::new(bin)
        } else {
            let mut c = Command::new("mpirun");
            c.args(["--allow-run-as-root", "--oversubscribe", "-np", &ranks.to_string(), bin]);
            c
        };
        cmd.args(["triangles", "--graph", gs, "--backend", "cpu", "--per-node", out.to_str().unwrap()]).args(extra);
        let o = cmd.env("RAYON_NUM_THREADS", "1").output().expect("runs");
        assert!(o.status.success(), "{ranks} ranks, {extra:?}: {}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(stdout.lines().count(), 1, "one total, from rank 0 only: {stdout}");
        stdout
    };
    let with_mask = ["--mask", mask.to_str().unwrap(), "-p", "t=2.5"];
    for extra in [&[][..], &with_mask[..]] {
        let one = d.join("one.npz");
        let want = count(0, extra, &one);
        assert!(want.trim().parse::<u64>().unwrap() > 0);
        let want_counts = std::fs::read(&one).unwrap();
        for ranks in [2usize, 3] {
            let many = d.join(format!("many{ranks}.npz"));
            assert_eq!(count(ranks, extra, &many), want, "{ranks} ranks, {extra:?}: the total");
            assert!(std::fs::read(&many).unwrap() == want_counts, "{ranks} ranks, {extra:?}: the per-node counts differ");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}
