//! The CUDA backend's output compiles: every library walk's complete kernel source (prelude,
//! generated device functions, the walk kernel template) and its device functions alone with
//! a kernel that calls each of them go through NVRTC to PTX for sm_90; so do the 32 random
//! programs pinned in `tests/programs/random.rs` (drawn from the walk grammar).
//!
//! No GPU is needed, only libnvrtc (CI installs the pinned `nvidia-cuda-nvrtc==13.0.88` wheel
//! and points `LD_LIBRARY_PATH` at it). Without the library the test says so and passes,
//! unless `WAYFARER_REQUIRE_NVRTC=1` (set by CI), where a missing library is a failure.

use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};
use std::path::Path;

/// Calls every generated function, so NVRTC compiles all of them.
const CHECK_KERNEL: &str = include_str!("../kernels/tests/check_kernel.cu");

fn nvrtc_present() -> bool {
    // SAFETY: only checks whether the shared library can be loaded.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        assert!(std::env::var_os("WAYFARER_REQUIRE_NVRTC").is_none(), "WAYFARER_REQUIRE_NVRTC is set but libnvrtc cannot be loaded");
        eprintln!("skipping: libnvrtc is not available (see scripts/test.sh for the pinned wheel)");
        return false;
    }
    true
}

/// NVRTC's options for every test here: sm_90, as the backend compiles.
fn sm90() -> CompileOptions {
    CompileOptions { arch: Some("sm_90"), options: vec!["-std=c++17".into(), "--fmad=false".into()], ..Default::default() }
}

/// Compiles `cu` to PTX and checks it defines every entry point in `entries`; `what` names the
/// source in the failures.
fn assert_entries(cu: &str, entries: &[&str], what: &str) {
    match compile_ptx_with_opts(cu, sm90()) {
        Ok(ptx) => {
            let text = ptx.to_src();
            for entry in entries {
                assert!(text.contains(&format!(".entry {entry}(")), "{what}: no {entry} in the PTX");
            }
        }
        Err(e) => panic!("NVRTC failed on {what}:\n{e:?}"),
    }
}

/// Compiles `src`'s walk to PTX for sm_90 in both forms (all device functions called; the
/// full kernel), panicking with the dumped source and NVRTC's log on failure.
fn compile_to_ptx(src: &str) {
    let f = wayfarer_compiler::lower_source(src).unwrap();
    let info = wayfarer_compiler::analyze(&f);
    let check =
        format!("{}\n{}\n{CHECK_KERNEL}", wayfarer_cuda::codegen::PRELUDE, wayfarer_cuda::codegen::emit_device_functions(&f, &info));
    let walk = wayfarer_cuda::walk_source(&f, &info);
    // The out-of-core build (graphs larger than device memory) and the builds that run a share
    // of a batch split over several GPUs too.
    let out_of_core = format!("#define WF_OUT_OF_CORE 1\n{walk}");
    let shares = format!("#define WF_QUERY_IDS 1\n{walk}");
    let both = format!("#define WF_QUERY_IDS 1\n{out_of_core}");
    // The structured-proposal build (runs with tables), out of core too, and its deliberately
    // broken variant (tests only).
    let structured = format!("#define WF_STRUCTURED 1\n{walk}");
    let structured_ooc = format!("#define WF_STRUCTURED 1\n{out_of_core}");
    let broken = format!("#define WF_BROKEN_EQUAL_TERMS 1\n{structured}");
    for (cu, entry) in [
        (check, "wf_check"),
        (walk, "wf_walk"),
        (out_of_core, "wf_walk"),
        (shares, "wf_walk"),
        (both, "wf_walk"),
        (structured, "wf_walk"),
        (structured_ooc, "wf_walk"),
        (broken, "wf_walk"),
    ] {
        match compile_ptx_with_opts(&cu, sm90()) {
            Ok(ptx) => {
                let text = ptx.to_src();
                assert!(text.contains(".target sm_90") && text.contains(entry), "{}: unexpected PTX", f.name);
            }
            Err(e) => {
                let dump = std::env::temp_dir().join(format!("wayfarer-{}-{entry}.cu", f.name));
                std::fs::write(&dump, &cu).unwrap();
                panic!("{}: NVRTC failed on {} (options -arch=sm_90 -std=c++17 --fmad=false):\n{e:?}\n{src}", f.name, dump.display());
            }
        }
    }
}

#[test]
fn every_library_walk_compiles_to_ptx_for_sm_90() {
    if !nvrtc_present() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut walks: Vec<_> = std::fs::read_dir(root.join("../walks")).unwrap().map(|e| e.unwrap().path()).collect();
    walks.sort();
    for path in walks {
        compile_to_ptx(&std::fs::read_to_string(&path).unwrap());
    }
}

#[test]
fn random_programs_compile_to_ptx_for_sm_90() {
    if !nvrtc_present() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("../tests/programs/random.rs")).unwrap();
    let programs: Vec<&str> = text.lines().filter(|l| l.starts_with("#[walk")).collect();
    assert!(programs.len() >= 32, "{} programs", programs.len());
    for src in programs {
        compile_to_ptx(src);
    }
}

/// The feature store's gather kernels (kernels/features.cu after the prelude) compile to PTX,
/// one per word size.
#[test]
fn feature_kernels_compile() {
    if !nvrtc_present() {
        return;
    }
    let cu = format!("{}\n{}", wayfarer_cuda::codegen::PRELUDE, wayfarer_cuda::features::FEATURE_KERNELS);
    assert_entries(&cu, &["wf_f_gather16", "wf_f_gather4", "wf_f_gather2"], "the feature kernels");
}

/// The aggregation kernels and their plan's (kernels/aggregate.cu and aggregate_plan.cu, after
/// the prelude and the scan kernels, as the host loads them) compile to PTX with every entry
/// point the host loads.
#[test]
fn aggregation_kernels_compile() {
    if !nvrtc_present() {
        return;
    }
    let cu = format!(
        "{}\n{}\n{}\n{}",
        wayfarer_cuda::codegen::PRELUDE,
        wayfarer_cuda::aggregate::AGGREGATE_KERNELS,
        include_str!("../kernels/scan.cu"),
        wayfarer_cuda::aggregate_plan::PLAN_KERNELS
    );
    let entries = [
        "wf_a_sparse4",
        "wf_a_sparse1",
        "wf_a_dense4",
        "wf_a_dense1",
        "wf_ap_count",
        "wf_ap_place",
        "wf_ap_settle",
        "wf_ap_widen_u64",
        "wf_ap_widen_u32",
        "wf_ap_inv_degree",
        "wf_ap_density",
        "wf_ap_sum",
        "wf_ap_hybrid",
        "wf_ap_flags",
        "wf_ap_order",
        "wf_scan_sums",
    ];
    assert_entries(&cu, &entries, "the aggregation kernels");
}

/// The neighbor-sampling kernels (kernels/sample.cu after the prelude) compile to PTX with
/// every entry point the host loads.
#[test]
fn sampling_kernels_compile() {
    if !nvrtc_present() {
        return;
    }
    let entries = [
        "wf_s_classify",
        "wf_s_partition",
        "wf_s_full",
        "wf_s_random",
        "wf_s_random_wide",
        "wf_s_assign",
        "wf_scan_apply_u32",
        "wf_s_to_i64_u32",
        "wf_s_to_i64_u64",
    ];
    assert_entries(&wayfarer_cuda::sample::sample_source(), &entries, "the sampling kernels");
}

/// The triangle-counting kernels compile to PTX with every entry point the host loads, alone
/// and with edge masks compiled in (a weight threshold, a label test with `has_edge`).
#[test]
fn triangle_kernels_compile() {
    if !nvrtc_present() {
        return;
    }
    let masks = [
        "#[mask] fn heavy(s: &Step, t: f32) -> bool { s.weight() > t }",
        "#[mask] fn closed(s: &Step, l: u32) -> bool { s.label() == l && s.has_edge(s.dst(), s.cur()) }",
    ];
    let mut sources = vec![("no mask".to_string(), wayfarer_cuda::triangles::triangle_source())];
    // The sweep knobs' other settings still compile.
    for knob in ["WF_T_PAIR_PROBES 0", "WF_T_LANE_PAIRS 0", "WF_T_LANE_GRAB 1", "WF_T_WARP_STATIC 1"] {
        sources.push((knob.to_string(), format!("#define {knob}\n{}", wayfarer_cuda::triangles::triangle_source())));
    }
    for m in masks {
        let program = wayfarer_compiler::lower_mask_source(m).unwrap_or_else(|e| panic!("{m}: {e:?}"));
        let info = wayfarer_compiler::analyze(&program);
        sources.push((m.to_string(), wayfarer_cuda::triangles::masked_triangle_source(&program, &info)));
    }
    let entries = [
        "wf_t_orient_count",
        "wf_t_orient_fill",
        "wf_t_owner_cost",
        "wf_t_cuts",
        "wf_t_owner_count",
        "wf_t_owner_fill",
        "wf_t_unit_count",
        "wf_t_unit_fill",
        "wf_t_degree",
        "wf_t_count",
        "wf_t_count_lanes",
        "wf_t_count_fused",
        "wf_t_count_long",
        "wf_scan_tiles_u32",
        "wf_scan_tiles_u64",
        "wf_scan_sums",
        "wf_scan_apply_u32",
        "wf_scan_apply_u64",
    ];
    for (what, cu) in sources {
        assert_entries(&cu, &entries, &format!("the triangle kernels ({what})"));
    }
}

/// The adaptive-rule probe (the walk kernel's rule cut out of `walk.cu`, run on the GPU against
/// `ADAPTIVE_RULE_CASES` in `tests/gpu.rs`) compiles: the items it cuts out are still there.
#[test]
fn the_adaptive_rule_probe_compiles() {
    if !nvrtc_present() {
        return;
    }
    let cu = wayfarer_cuda::probe::probe_source().unwrap();
    let ptx = compile_ptx_with_opts(&cu, sm90()).unwrap_or_else(|e| panic!("NVRTC failed on the probe:\n{e:?}\n{cu}"));
    assert!(ptx.to_src().contains("wf_adaptive_probe"));
}
