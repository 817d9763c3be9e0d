//! Every library walk lowers to a module naga validates, writes out as WGSL and SPIR-V, and
//! the walk's part of its WGSL (state and hook functions) is pinned in
//! `wgpu/tests/golden/`. After an intended change, regenerate with
//! `WAYFARER_BLESS=1 cargo test -p wayfarer-wgpu --test lower` and review the diff.

use wayfarer_compiler::testing::{Golden, library_walks};

/// The walk's own part of naga's WGSL: its state variables and the hook functions (from
/// `wf_flags` to the end of `wf_stop`); the rest is kernels/walk.wgsl, pinned as a source file.
fn generated_part(wgsl: &str) -> String {
    let mut out: String = wgsl.lines().filter(|l| l.starts_with("var<private> wf_state_")).map(|l| format!("{l}\n")).collect();
    let from = wgsl.find("fn wf_flags(").expect("no wf_flags in the module");
    let stop = wgsl.find("fn wf_stop(").expect("no wf_stop in the module");
    let end = stop + wgsl[stop..].find("\n}\n").expect("wf_stop does not end") + 3;
    out.push_str(&wgsl[from..end]);
    out
}

#[test]
fn library_walks_lower_validate_and_match_their_golden_wgsl() {
    let mut golden = Golden::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden"), "cargo test -p wayfarer-wgpu --test lower");
    for (name, src) in library_walks() {
        let (program, info) = wayfarer_compiler::compile_source(&src).unwrap_or_else(|d| panic!("{name}: {}", d.render(&src, &name)));
        let lowered = wayfarer_wgpu::lower::lower(&program, &info).unwrap_or_else(|e| panic!("{name}: {e}"));
        let spv = lowered.spirv().unwrap();
        assert_eq!(spv[0], 0x0723_0203, "{name}: not SPIR-V");
        // The subgroup kernel validates too, for every walk it can run.
        if wayfarer_wgpu::Kernel::Subgroup.supports(&program) {
            let sg = wayfarer_wgpu::lower::lower_for(&program, &info, wayfarer_wgpu::Kernel::Subgroup)
                .unwrap_or_else(|e| panic!("{name} (subgroup): {e}"));
            assert!(sg.wgsl().unwrap().contains("fn wf_walk_subgroup("), "{name}");
            assert_eq!(sg.spirv().unwrap()[0], 0x0723_0203, "{name} (subgroup): not SPIR-V");
        }
        // The workgroup kernel validates for every walk (naga checks its barriers are in
        // uniform control flow).
        let wg = wayfarer_wgpu::lower::lower_for(&program, &info, wayfarer_wgpu::Kernel::Workgroup)
            .unwrap_or_else(|e| panic!("{name} (workgroup): {e}"));
        assert!(wg.wgsl().unwrap().contains("fn wf_walk_workgroup("), "{name}");
        assert_eq!(wg.spirv().unwrap()[0], 0x0723_0203, "{name} (workgroup): not SPIR-V");
        let wgsl = lowered.wgsl().unwrap();
        // The walk's own functions replaced the template's placeholders.
        assert!(!wgsl.contains("HOOK"), "{name}: naga's writer does not keep comments");
        golden.check(&format!("{}.wgsl", program.name), &generated_part(&wgsl));
    }
    golden.finish();
}

/// The f64 parameter and time encoding: three f32 whose f64 sum is the value, exactly, for
/// every i64 time and ordinary values; refused (never rounded) beyond.
#[test]
fn f64_values_split_into_three_f32_exactly() {
    for x in [0.0, 1.0, -2.5, 0.1, 1.0 / 3.0, 1.7e15 + 12345.0, -9.2e18, i64::MAX as f64, 123456789.123456789, 3.0e38, 1e-20] {
        let [a, b, c] = wayfarer_wgpu::lower::split_f64(x).unwrap_or_else(|| panic!("{x} refused"));
        assert_eq!((a as f64 + b as f64) + c as f64, x, "{x}");
    }
    for x in [1e300, f64::MAX / 3.0, 1e-300, f64::INFINITY, f64::NAN] {
        assert!(wayfarer_wgpu::lower::split_f64(x).is_none(), "{x} accepted");
    }
}
