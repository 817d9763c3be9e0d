//! # wayfarer-compiler
//!
//! The compiler behind `#[walk]`: one front end for the proc macro (compile time) and for
//! source files (`wayfarer explain my_walk.rs`, run time), a typed IR, and — as the DSL
//! milestone proceeds — the analyses (bounds, sum estimates, per-node arrays) and the
//! backends (native Rust through the macro, Cranelift, CUDA C, WGSL).
//!
//! Status: the front end, the IR and the bound analysis for the function form of `#[walk]`
//! (`get_weight` with hyperparameters) exist and are tested; the macro, the `impl` form with
//! per-walker state and the backends do not yet.
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
pub mod diag;
pub mod eval;
pub mod front;
pub mod ir;
pub mod print;
pub mod rust_backend;

pub use analysis::{Scope, WalkInfo, analyze};
pub use diag::{Diagnostic, Diagnostics};
pub use front::{lower_source, lower_weight_fn};
pub use ir::WeightFunction;
