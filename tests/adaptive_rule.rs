//! The adaptive rule (eRVS iff `R·d·B > Ŝ·(d + F)`, and eRJS's trial cap) exists in four
//! languages: the engine's Rust, the Cranelift turn, the CUDA walk kernel and the WGSL shader.
//! One table of cases with their answers written out (`wayfarer_runtime::cost::ADAPTIVE_RULE_CASES`)
//! pins every copy: each backend runs its own copy of the rule alone (cut out of its kernel
//! template as it is, or built by the same code generator helpers) on the same inputs.
//!
//! The CUDA copy runs where a GPU is (`scripts/gpu-check.sh` sets `WAYFARER_REQUIRE_GPU=1`);
//! the WGSL copy on any adapter (CI's lavapipe), for the cases where deciding in `f32` must
//! agree.

use wayfarer::runtime::cost::{ADAPTIVE_RULE_CASES, RuleCase};

/// Checks `answers` (one per case, in order) against the table.
fn check(backend: &str, cases: &[&RuleCase], answers: &[(bool, u32)]) {
    assert_eq!(answers.len(), cases.len(), "{backend}: one answer per case");
    for (c, &got) in cases.iter().zip(answers) {
        assert_eq!(got, (c.reservoir, c.cap), "{backend}: {c:?}");
    }
    eprintln!("{backend}: {} cases agree", cases.len());
}

/// Runs `probe` per cost model of the table (each probe takes one model and many cases).
fn answers(
    cases: &[&RuleCase],
    mut probe: impl FnMut(wayfarer::engine::CostModel, &[(u32, f32, f32)]) -> Vec<(bool, u32)>,
) -> Vec<(bool, u32)> {
    cases.iter().flat_map(|c| probe(c.model, &[(c.d, c.bound, c.estimate)])).collect()
}

fn all() -> Vec<&'static RuleCase> {
    ADAPTIVE_RULE_CASES.iter().collect()
}

#[test]
fn the_engine_decides_every_case_as_the_table_says() {
    let cases = all();
    let got = answers(&cases, |m: wayfarer::engine::CostModel, c| {
        c.iter().map(|&(d, b, s)| (m.prefers_reservoir(d as usize, b, s), m.trial_cap(d as usize))).collect()
    });
    check("engine", &cases, &got);
}

#[test]
fn the_cranelift_turn_decides_every_case_as_the_table_says() {
    let cases = all();
    let got = answers(&cases, |m, c| wayfarer_jit::adaptive_rule_probe(m, c).unwrap());
    check("cranelift", &cases, &got);
}

#[test]
fn the_cuda_kernel_decides_every_case_as_the_table_says() {
    let dev = match wayfarer::gpu::CudaDevice::open(0) {
        Ok(d) => d,
        Err(e) => {
            assert!(std::env::var_os("WAYFARER_REQUIRE_GPU").is_none(), "WAYFARER_REQUIRE_GPU is set but: {e}");
            eprintln!("skipping the CUDA copy of the rule: {e}");
            return;
        }
    };
    let cases = all();
    let got = answers(&cases, |m, c| dev.adaptive_rule_probe(m, c).unwrap());
    check("cuda", &cases, &got);
}

#[cfg(feature = "wgpu")]
#[test]
fn the_wgsl_shader_decides_every_case_as_the_table_says() {
    let dev = match wayfarer::wgpu::WgpuDevice::open() {
        Ok(d) => d,
        Err(e) => {
            assert!(std::env::var_os("WAYFARER_REQUIRE_WGPU").is_none(), "WAYFARER_REQUIRE_WGPU is set but: {e}");
            eprintln!("skipping the WGSL copy of the rule: {e}");
            return;
        }
    };
    // Decided in f32: the cases where f32 must agree.
    let cases: Vec<_> = ADAPTIVE_RULE_CASES.iter().filter(|c| c.f32_agrees).collect();
    assert!(cases.len() * 4 >= ADAPTIVE_RULE_CASES.len() * 3, "most cases hold in f32 too");
    let got = answers(&cases, |m, c| dev.adaptive_rule_probe(m, c).unwrap());
    check("wgsl", &cases, &got);
}
