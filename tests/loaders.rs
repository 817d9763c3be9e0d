//! Loaders: round trips, id mapping, every bad-input case with the exact place it names, and
//! fuzzing of the three loaders (proptest over random and mutated bytes, seeded from the
//! corpus in `tests/corpus/`): bad input is an error, never a panic.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use wayfarer::graph::{CsrGraph, EdgeListOptions, IdMap};
use wayfarer::output::{IdSpace, write_text};

fn corpus(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wayfarer-loaders-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn weighted_labelled() -> EdgeListOptions {
    EdgeListOptions { weight_col: Some(3), label_col: Some(4), ..Default::default() }
}

#[test]
fn edge_list_round_trip_keeps_ids_attributes_and_sorted_rows() {
    let src = tmp("rt.txt");
    std::fs::write(&src, "# sparse ids, unsorted input\n900 5 1.5 2\n5 900 2.5 1\n5 77 0.5 0\n77 5 3 2\n5 12 4 1\n").unwrap();
    let g = CsrGraph::load_edge_list(&src, &weighted_labelled()).unwrap();
    assert_eq!(g.num_nodes(), 4);
    assert!(matches!(g.id_map(), IdMap::Table(_)));
    let internal = |orig| g.id_map().internal(orig, g.num_nodes()).unwrap();
    let five = internal(5);
    // Row of 5: destinations 12, 77, 900 in internal order (= original order), attributes carried.
    let row: Vec<u64> = g.neighbors(five).iter().map(|&v| g.id_map().original(v)).collect();
    assert_eq!(row, vec![12, 77, 900]);
    let r = g.row(five);
    assert_eq!(&g.weights().unwrap()[r.clone()], &[4.0, 0.5, 2.5]);
    assert_eq!(&g.labels().unwrap()[r], &[1, 0, 1]);
    let out = tmp("rt.wfg");
    g.save_wfg(&out).unwrap();
    let h = CsrGraph::load_wfg(&out).unwrap();
    assert_eq!(g.offsets(), h.offsets());
    assert_eq!(g.targets(), h.targets());
    assert_eq!(g.weights(), h.weights());
    assert_eq!(g.labels(), h.labels());
    assert_eq!(h.id_map().original(five), 5);
    // Text output writes original ids.
    let walks = wayfarer::Walks { stride: 3, nodes: vec![internal(900), five, internal(12)], lengths: vec![3], edges: Vec::new() };
    let mut buf = Vec::new();
    write_text(&walks, &h, IdSpace::Original, &mut buf).unwrap();
    assert_eq!(String::from_utf8(buf).unwrap(), "900 5 12\n");
}

#[test]
fn undirected_symmetrizes_and_dedup_keeps_one() {
    let src = tmp("und.txt");
    std::fs::write(&src, "0 1\n1 0\n1 2\n2 2\n").unwrap();
    let opts = EdgeListOptions { undirected: true, dedup: wayfarer::graph::Dedup::KeepFirst, drop_self_loops: true, ..Default::default() };
    let g = CsrGraph::load_edge_list(&src, &opts).unwrap();
    assert_eq!(g.neighbors(0), &[1]);
    assert_eq!(g.neighbors(1), &[0, 2]);
    assert_eq!(g.neighbors(2), &[1]);
    let keep = CsrGraph::load_edge_list(&src, &EdgeListOptions { undirected: true, ..Default::default() }).unwrap();
    assert_eq!(keep.neighbors(0), &[1, 1], "without dedup the parallel edges stay");
    assert_eq!(keep.neighbors(2), &[1, 2], "a self loop is added once");
}

#[test]
fn large_generated_edge_list_matches_in_memory_build() {
    // Enough lines for many parallel chunks: the parallel parse must equal a direct build.
    let g = wayfarer::graph::generate::rmat(12, 8, 9).unwrap();
    let mut text = String::new();
    for v in 0..g.num_nodes() as u32 {
        for &u in g.neighbors(v) {
            text.push_str(&format!("{} {}\n", v as u64 * 3 + 7, u as u64 * 3 + 7));
        }
    }
    let h = CsrGraph::parse_edge_list(text.as_bytes(), Path::new("big.txt"), &EdgeListOptions::default()).unwrap();
    let present: Vec<u32> = (0..g.num_nodes() as u32).filter(|&v| g.degree(v) > 0).collect();
    assert_eq!(h.num_nodes(), present.len());
    assert_eq!(h.num_edges(), g.num_edges());
    for (i, &v) in present.iter().enumerate() {
        let orig: Vec<u64> = h.neighbors(i as u32).iter().map(|&x| h.id_map().original(x)).collect();
        let want: Vec<u64> = g.neighbors(v).iter().map(|&x| x as u64 * 3 + 7).collect();
        assert_eq!(orig, want);
    }
}

#[test]
fn every_bad_input_names_its_place() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let cases: &[(&str, bool, &str, &str)] = &[
        ("edges/bad-nonnumeric.txt", false, ":2:", "expected a non-negative integer node id, found `x`"),
        ("edges/bad-one-field.txt", false, ":2:", "found 1 field"),
        ("edges/bad-nan-weight.txt", true, ":1:", "NaN"),
        ("edges/bad-negative-weight.txt", true, ":1:", "negative"),
        ("edges/bad-inf-weight.txt", true, ":1:", "infinite"),
        ("edges/bad-weight-overflows-f32.txt", true, ":1:", "infinite or outside the f32 range"),
        ("edges/bad-id-overflow.txt", false, ":1:", "does not fit in 64 bits"),
        ("edges/bad-negative-id.txt", false, ":1:", "non-negative integer node id"),
        ("edges/bad-empty.txt", false, "bad-empty.txt: ", "empty"),
        ("edges/bad-only-comments.txt", false, "bad-only-comments.txt: ", "no edges"),
        ("edges/bad-binary.txt", false, ":1:", "node id"),
        ("mtx/bad-truncated.mtx", false, ":2:", "declares 3 entries but the file holds 1 (truncated?)"),
        ("mtx/bad-index-out-of-range.mtx", false, ":3:", "outside 1..=3"),
        ("mtx/bad-complex.mtx", false, ":1:", "unsupported field `complex`"),
        ("mtx/bad-array.mtx", false, ":1:", "only `matrix coordinate`"),
        ("mtx/bad-not-square.mtx", false, ":2:", "3 x 2"),
        ("mtx/bad-negative.mtx", false, ":3:", "negative"),
        ("mtx/bad-no-header.mtx", false, ":1:", "%%MatrixMarket"),
        ("mtx/bad-no-size-line.mtx", false, ":1:", "size line"),
        ("mtx/bad-empty.mtx", false, "bad-empty.mtx: ", "empty"),
        ("wfg/bad-empty.wfg", false, "bad-empty.wfg: ", "empty"),
        ("wfg/bad-short.wfg", false, "(byte 3)", "truncated"),
        ("wfg/bad-truncated.wfg", false, "(byte 300)", "truncated"),
        ("wfg/bad-bitflip.wfg", false, "(byte 64)", "checksum"),
    ];
    for (file, weighted, place, msg) in cases {
        let path = d.join(file);
        let r = if file.ends_with(".txt") {
            CsrGraph::load_edge_list(&path, &EdgeListOptions { weight_col: weighted.then_some(3), ..Default::default() })
        } else {
            CsrGraph::load(&path)
        };
        let e = r.err().unwrap_or_else(|| panic!("{file} loaded without error")).to_string();
        assert!(e.contains(&*path.display().to_string()), "{file}: error does not name the file: {e}");
        assert!(e.contains(place), "{file}: error does not name `{place}`: {e}");
        assert!(e.contains(msg), "{file}: error lacks `{msg}`: {e}");
    }
}

#[test]
fn every_good_corpus_file_loads() {
    for dir in ["edges", "mtx", "wfg"] {
        for p in corpus(dir) {
            if p.file_name().unwrap().to_str().unwrap().starts_with("ok-") {
                CsrGraph::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            }
        }
    }
    let g = CsrGraph::load("tests/corpus/mtx/ok-pattern-symmetric.mtx").unwrap();
    assert_eq!(g.num_nodes(), 4);
    assert_eq!(g.neighbors(1), &[0, 2], "symmetric entries are mirrored");
    assert_eq!(g.neighbors(3), &[3], "the diagonal is not doubled");
    assert_eq!(g.id_map().original(0), 1, "Matrix Market ids are 1-based");
}

#[test]
fn gzip_compressed_text_loads_like_the_plain_file() {
    use std::io::Write;
    let gz = |name: &str, text: &str| {
        let path = tmp(name);
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(text.as_bytes()).unwrap();
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        path
    };
    let edges = "# comment\n900 5 1.5 2\n5 900 2.5 1\n5 77 0.5 0\n";
    let plain = tmp("plain.txt");
    std::fs::write(&plain, edges).unwrap();
    let a = CsrGraph::load_edge_list(&plain, &weighted_labelled()).unwrap();
    let b = CsrGraph::load_edge_list(gz("edges.txt.gz", edges), &weighted_labelled()).unwrap();
    assert_eq!((a.num_nodes(), a.num_edges()), (b.num_nodes(), b.num_edges()));
    assert_eq!(a.targets(), b.targets());
    assert_eq!(a.weights(), b.weights());
    // `.mtx.gz` is read as Matrix Market by `load`, which looks through the `.gz`.
    let mtx = "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n";
    let m = CsrGraph::load(gz("m.mtx.gz", mtx)).unwrap();
    assert_eq!((m.num_nodes(), m.num_edges()), (3, 2));
    // Bytes that claim to be gzip and are not: an error naming the file, not a parse of noise.
    let bad = tmp("bad.txt.gz");
    std::fs::write(&bad, [0x1f, 0x8b, 0, 1, 2, 3, 4, 5, 6, 7]).unwrap();
    let e = CsrGraph::load(&bad).unwrap_err().to_string();
    assert!(e.contains("bad.txt.gz") && e.contains("does not decompress"), "{e}");
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let e = CsrGraph::load("no/such/graph.wfg").unwrap_err().to_string();
    assert!(e.starts_with("no/such/graph.wfg: "), "{e}");
}

fn load_any(bytes: &[u8], kind: usize) {
    let name = Path::new("fuzz");
    let _ = match kind {
        0 => CsrGraph::parse_edge_list(bytes, name, &EdgeListOptions::default()),
        1 => CsrGraph::parse_edge_list(
            bytes,
            name,
            &EdgeListOptions { weight_col: Some(3), label_col: Some(4), time_col: Some(5), undirected: true, ..Default::default() },
        ),
        2 => CsrGraph::parse_matrix_market(bytes, name),
        _ => CsrGraph::from_wfg_bytes(bytes, name),
    };
}

fn seeds() -> Vec<(Vec<u8>, usize)> {
    let mut v = Vec::new();
    for (dir, kind) in [("edges", 1), ("mtx", 2), ("wfg", 3)] {
        for p in corpus(dir) {
            v.push((std::fs::read(&p).unwrap(), kind));
        }
    }
    v
}

/// Text made of the characters that matter to the parsers, so random inputs reach deep.
fn texty() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(prop::sample::select(b"0123456789 \t,\n\r#%.-e+naifMmtrxcodg".to_vec()), 0..400)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn loaders_never_panic_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300), kind in 0usize..4) {
        load_any(&bytes, kind);
    }

    #[test]
    fn text_loaders_never_panic_on_random_text(bytes in texty(), kind in 0usize..3) {
        load_any(&bytes, kind);
    }

    #[test]
    fn loaders_never_panic_on_mutated_corpus(pick in any::<prop::sample::Index>(), edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6), cut in any::<prop::sample::Index>(), truncate in any::<bool>()) {
        let all = seeds();
        let (mut bytes, kind) = all[pick.index(all.len())].clone();
        if !bytes.is_empty() {
            for (at, b) in edits {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
            if truncate {
                bytes.truncate(cut.index(bytes.len()));
            }
        }
        load_any(&bytes, kind);
    }

    #[test]
    fn random_mtx_headers_with_entries_never_panic(rows in 0u64..6, cols in 0u64..6, nnz in 0u64..8, entries in proptest::collection::vec((0u64..8, 0u64..8, -2.0f64..5.0), 0..8), field in prop::sample::select(vec!["real", "integer", "pattern", "complex"]), sym in prop::sample::select(vec!["general", "symmetric", "hermitian"])) {
        let mut s = format!("%%MatrixMarket matrix coordinate {field} {sym}\n{rows} {cols} {nnz}\n");
        for (i, j, v) in entries {
            s += &format!("{i} {j} {v}\n");
        }
        load_any(s.as_bytes(), 2);
    }
}
