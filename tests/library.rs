//! The walk library is generated from `walks/`: every file is a walk, by its file's name, with
//! the parameters, defaults, checks and help its file declares.

use wayfarer::library::{LibraryWalk, catalog};

#[test]
fn every_file_in_walks_is_a_library_walk() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("walks");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|f| f.strip_suffix(".rs").map(str::to_string))
        .collect();
    files.sort();
    let files: Vec<String> = files.iter().map(|f| f.replace('_', "-")).collect();
    assert_eq!(wayfarer::walks::NAMES, files.as_slice());
    let listed: Vec<&str> = catalog().into_iter().map(|(n, _)| n).collect();
    for f in &files {
        assert!(listed.contains(&f.as_str()), "{f} is missing from `wayfarer walk --list`");
        assert!(wayfarer::walks::source(f).is_some());
    }
}

#[test]
fn library_walks_take_their_declared_defaults_and_checks() {
    let g = wayfarer::default_graph().unwrap();
    let p = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
    for (name, help) in catalog() {
        if name == "temporal" {
            continue; // needs timestamps, which WordNet has not
        }
        let w = LibraryWalk::from_name(name, &[], &g, false).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(w.name(), name);
        assert!(!help.is_empty());
    }
    // The defaults are the struct's `Default`: the same program values either way.
    let by_name = LibraryWalk::from_name("node2vec", &[], &g, false).unwrap();
    let native = LibraryWalk::native(wayfarer::walks::Node2vec::default());
    assert_eq!(by_name.program(), native.program());
    let m = LibraryWalk::from_name("metapath", &p(&[("schema", "3,1")]), &g, false).unwrap();
    assert_eq!(m.default_length(), 2);
    for (name, pairs, needle) in [
        ("node2vec", p(&[("a", "0")]), "does not meet `a > 0.0`"),
        ("node2vec-ref", p(&[("b", "-1")]), "does not meet `b > 0.0`"),
        ("ppr", p(&[("alpha", "2")]), "alpha >= 0.0 && alpha <= 1.0"),
        ("ppr2", p(&[("gamma", "-0.5")]), "gamma"),
        ("metapath", p(&[("schema", "1"), ("len", "0")]), "len >= 1"),
        ("node2vec", p(&[("q", "2")]), "no such parameter"),
        ("nope", vec![], "unknown walk `nope`"),
    ] {
        let e = LibraryWalk::from_name(name, &pairs, &g, false).unwrap_err().to_string();
        assert!(e.contains(needle), "{name} {pairs:?}: {e}");
    }
}
