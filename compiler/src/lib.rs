//! # wayfarer-compiler
//!
//! The compiler behind `#[walk]`: one front end for the proc macro (compile time) and for
//! source files (`wayfarer explain my_walk.rs`, run time), a typed IR, and — as the DSL
//! milestone proceeds — the analyses (bounds, sum estimates, per-node arrays) and the
//! backends (native Rust through the macro, Cranelift, CUDA C, WGSL).
//!
//! Both forms of `#[walk]` lower to one [`Program`]: the function form (`get_weight` with
//! hyperparameters as arguments) and the impl form (hyperparameters and per-walker state
//! declared in the attribute, with `init`, `update` and `stop` beside `get_weight`). The
//! native Rust backend is what the macro emits; other backends follow the same IR.
//!
//! The front end (syn), its diagnostics and the native Rust backend are feature `front`
//! (default); the backend crates take the IR and build without it.
//!
//! ```
//! let src = r#"
//!     #[walk]
//!     fn node2vec(s: &Step, a: f32, b: f32) -> f32 {
//!         if s.step() == 0 { return s.weight(); }
//!         if s.dst() == s.prev() { s.weight() / a }
//!         else if s.has_edge(s.prev(), s.dst()) { s.weight() }
//!         else { s.weight() / b }
//!     }
//! "#;
//! let f = wayfarer_compiler::lower_source(src).unwrap();
//! assert_eq!(f.params.len(), 2);
//! println!("{}", wayfarer_compiler::print::listing(&f));
//! ```

#![warn(missing_docs)]

pub mod analysis;
#[cfg(feature = "front")]
pub mod diag;
pub mod eval;
#[cfg(feature = "front")]
pub mod front;
pub mod ir;
pub mod params;
pub mod print;
#[cfg(feature = "front")]
pub mod rust_backend;
pub mod simplify;
pub mod template;
#[cfg(feature = "testing")]
pub mod testing;

pub use analysis::{Scope, WalkInfo, analyze};
#[cfg(feature = "front")]
pub use diag::{Diagnostic, Diagnostics};
#[cfg(feature = "front")]
pub use front::{
    lower_mask_fn, lower_mask_source, lower_sampler_fn, lower_sampler_source, lower_source, lower_walk_fn, lower_walk_impl, lower_weight_fn,
};
pub use ir::Program;

#[cfg(feature = "front")]
/// Writes the compiler's stages of a compilation to `dir` (what `WAYFARER_DUMP=dir` does): the
/// IR listing, the analysis report and the generated Rust. Each backend dumps its own code
/// beside them when it compiles the walk (CUDA: `<walk>.device.cu`; Cranelift: `.clif`, `.jit.s`).
pub fn dump_stages(f: &Program, info: &WalkInfo, dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(format!("{}.ir.txt", f.name)), print::listing(f))?;
    std::fs::write(dir.join(format!("{}.analysis.txt", f.name)), print::analysis(f, info))?;
    let rust = rust_backend::emit(f, info, &quote::quote!(::wayfarer::runtime), &quote::quote!(pub), &[], None);
    std::fs::write(dir.join(format!("{}.generated.rs", f.name)), rust.to_string())
}

#[cfg(feature = "front")]
/// Compiles source text to its IR and analysis, honouring `WAYFARER_DUMP`.
pub fn compile_source(source: &str) -> Result<(Program, WalkInfo), Diagnostics> {
    let f = lower_source(source)?;
    let info = analyze(&f);
    if let Some(dir) = std::env::var_os("WAYFARER_DUMP") {
        // A dump that cannot be written must not fail the compilation.
        let _ = dump_stages(&f, &info, std::path::Path::new(&dir));
    }
    Ok((f, info))
}
