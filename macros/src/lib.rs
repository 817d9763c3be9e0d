//! `#[walk]`: tokens in, one call into `wayfarer-compiler`, tokens or spanned errors out.
//!
//! On a function `fn name(s: &Step, hyperparameters...) -> f32`, the macro keeps the function
//! (it is ordinary Rust against `wayfarer::Step`, so it can be called and tested) and adds a
//! params struct `Name { hyperparameters }` implementing `wayfarer::Walk` with native code
//! for the weight, the bound `B` and the sum estimate `Ŝ` derived by the compiler. On errors it
//! reports every one at its token and still emits the function, so the IDE keeps working.

use proc_macro::TokenStream;
use quote::quote;

/// Compiles a walk. See the crate docs and `wayfarer::walk`.
#[proc_macro_attribute]
pub fn walk(attr: TokenStream, item: TokenStream) -> TokenStream {
    let original: proc_macro2::TokenStream = item.clone().into();
    let f = match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new_spanned(
                &original,
                "#[walk] goes on a function `fn name(s: &Step, params...) -> f32` (the `impl` form with per-walker state is not supported yet)",
            );
            let mut out = e.to_compile_error();
            out.extend(original);
            return out.into();
        }
    };
    let mut errors = proc_macro2::TokenStream::new();
    if !attr.is_empty() {
        let attr: proc_macro2::TokenStream = attr.into();
        errors.extend(syn::Error::new_spanned(attr, "#[walk] takes no arguments").to_compile_error());
    }
    let ir = match wayfarer_compiler::lower_weight_fn(&f) {
        Ok(ir) => ir,
        Err(diags) => {
            errors.extend(diags.to_syn_error().to_compile_error());
            return quote!(#errors #[allow(dead_code)] #f).into();
        }
    };
    let info = wayfarer_compiler::analyze(&ir);
    if let Some(dir) = std::env::var_os("WAYFARER_DUMP") {
        let _ = wayfarer_compiler::dump_stages(&ir, &info, std::path::Path::new(&dir));
    }
    let vis = &f.vis;
    let docs: Vec<syn::Attribute> = f.attrs.iter().filter(|a| a.path().is_ident("doc")).cloned().collect();
    let generated = wayfarer_compiler::rust_backend::emit(&ir, &info, &quote!(::wayfarer::runtime), &quote!(#vis), &docs);
    quote!(#errors #[allow(dead_code)] #f #generated).into()
}
