//! `#[walk]`: tokens in, one call into `wayfarer-compiler`, tokens or spanned errors out.
//!
//! On a function `fn name(s: &Step, hyperparameters...) -> f32`, the macro keeps the function
//! (it is ordinary Rust against `wayfarer::Step`, so it can be called and tested) and adds a
//! params struct `Name { hyperparameters }` implementing `wayfarer::Walk` with native code
//! for the weight, the bound `B` and the sum estimate `Ŝ` derived by the compiler.
//! `#[walk(defaults(a = 2.0), check(a > 0.0))]` gives defaults (the struct then implements
//! `Default`) and conditions every run checks.
//!
//! On an `impl Name { fn get_weight .. fn init .. fn update .. fn stop .. }` with
//! `#[walk(params(..), state(..))]`, it generates the params struct `Name`, the per-walker
//! state struct `NameState`, and the `Walk` impl; the user's methods are kept as written.
//!
//! On errors it reports every one at its token and still emits the user's item, so the IDE
//! keeps working.

use proc_macro::TokenStream;
use quote::quote;

/// Compiles a walk. See the crate docs and `wayfarer::walk`.
#[proc_macro_attribute]
pub fn walk(attr: TokenStream, item: TokenStream) -> TokenStream {
    let original: proc_macro2::TokenStream = item.clone().into();
    let attr: proc_macro2::TokenStream = attr.into();
    let parsed = match syn::parse::<syn::Item>(item) {
        Ok(syn::Item::Fn(f)) => {
            let vis = f.vis.clone();
            let docs: Vec<syn::Attribute> = f.attrs.iter().filter(|a| a.path().is_ident("doc")).cloned().collect();
            let at = f.sig.ident.span();
            let source = if attr.is_empty() { quote!(#[walk] #f).to_string() } else { quote!(#[walk(#attr)] #f).to_string() };
            (
                wayfarer_compiler::lower_walk_fn(attr, &f),
                quote!(#[allow(dead_code)] #f),
                proc_macro2::TokenStream::new(),
                quote!(#vis),
                docs,
                at,
                source,
            )
        }
        Ok(syn::Item::Impl(m)) => {
            let docs: Vec<syn::Attribute> = m.attrs.iter().filter(|a| a.path().is_ident("doc")).cloned().collect();
            let mut kept = m.clone();
            kept.attrs.retain(|a| !a.path().is_ident("doc"));
            let at = syn::spanned::Spanned::span(&m.self_ty);
            let source = if attr.is_empty() { quote!(#[walk] #m).to_string() } else { quote!(#[walk(#attr)] #m).to_string() };
            (
                wayfarer_compiler::lower_walk_impl(attr, &m),
                quote!(#[allow(dead_code, clippy::all)] #kept),
                quote!(),
                quote!(pub),
                docs,
                at,
                source,
            )
        }
        _ => {
            let e = syn::Error::new_spanned(
                &original,
                "#[walk] goes on a function `fn name(s: &Step, params...) -> f32` or on an `impl Name { fn get_weight .. }`",
            );
            let mut out = e.to_compile_error();
            out.extend(original);
            return out.into();
        }
    };
    let (ir, user, mut errors, vis, docs, at, source) = parsed;
    let ir = match ir {
        Ok(ir) => ir,
        Err(diags) => {
            errors.extend(diags.to_syn_error().to_compile_error());
            return quote!(#errors #user).into();
        }
    };
    let info = wayfarer_compiler::analyze(&ir);
    if let Some(dir) = std::env::var_os("WAYFARER_DUMP") {
        let _ = wayfarer_compiler::dump_stages(&ir, &info, std::path::Path::new(&dir));
    }
    let generated = wayfarer_compiler::rust_backend::emit(&ir, &info, &quote!(::wayfarer::runtime), &vis, &docs, Some(&source));
    let warning = match (&info.bound, &info.fallback) {
        (None, Some(why)) => fallback_warning(&ir.name, why, at),
        _ => quote!(),
    };
    quote!(#errors #user #generated #warning).into()
}

/// Compiles a GNN sampling policy: `#[sampler] fn name(s: &Step, params...) -> f32` weighs an
/// edge of the node being sampled. It is checked like a walk (and must not read the walker's
/// history: `s.prev()`, `s.start()`, `s.step()`), then compiled as a function-form walk, so
/// `Name { params }` implements `wayfarer::Walk` and goes to `wayfarer::sample_with`.
#[proc_macro_attribute]
pub fn sampler(attr: TokenStream, item: TokenStream) -> TokenStream {
    let original: proc_macro2::TokenStream = item.clone().into();
    let attr: proc_macro2::TokenStream = attr.into();
    let f = match syn::parse::<syn::ItemFn>(item) {
        Ok(f) => f,
        Err(_) => {
            let mut out = syn::Error::new_spanned(&original, "#[sampler] goes on a function `fn name(s: &Step, params...) -> f32`")
                .to_compile_error();
            out.extend(original);
            return out.into();
        }
    };
    if !attr.is_empty() {
        let mut out = syn::Error::new_spanned(attr, "a `#[sampler]` function takes no arguments: its parameters are its arguments")
            .to_compile_error();
        out.extend(original);
        return out.into();
    }
    match wayfarer_compiler::lower_sampler_fn(&f) {
        // A policy is a function-form walk: the walk macro generates its type and code.
        Ok(_) => walk(TokenStream::new(), original.into()),
        Err(diags) => {
            let mut out = diags.to_syn_error().to_compile_error();
            out.extend(quote!(#[allow(dead_code)] #f));
            out.into()
        }
    }
}

/// Compiles a triangle-counting edge mask: `#[mask] fn name(s: &Step, params...) -> bool`
/// keeps an edge (`s.cur()` → `s.dst()`, its weight, label, time; graph queries) or not. It is
/// checked like a sampling policy, and `Name { params }` implements `wayfarer::Walk` with the
/// weight 1 for a kept edge and 0 otherwise, for `wayfarer::triangles::count_with`.
#[proc_macro_attribute]
pub fn mask(attr: TokenStream, item: TokenStream) -> TokenStream {
    let original: proc_macro2::TokenStream = item.clone().into();
    let attr: proc_macro2::TokenStream = attr.into();
    let f = match syn::parse::<syn::ItemFn>(item) {
        Ok(f) if attr.is_empty() => f,
        Ok(_) => {
            let mut out = syn::Error::new_spanned(attr, "a `#[mask]` function takes no arguments: its parameters are its arguments")
                .to_compile_error();
            out.extend(original);
            return out.into();
        }
        Err(_) => {
            let mut out =
                syn::Error::new_spanned(&original, "#[mask] goes on a function `fn name(s: &Step, params...) -> bool`").to_compile_error();
            out.extend(original);
            return out.into();
        }
    };
    match wayfarer_compiler::lower_mask_fn(&f) {
        Ok(ir) => {
            let info = wayfarer_compiler::analyze(&ir);
            let vis = f.vis.clone();
            let docs: Vec<syn::Attribute> = f.attrs.iter().filter(|a| a.path().is_ident("doc")).cloned().collect();
            let source = quote!(#[mask] #f).to_string();
            let generated =
                wayfarer_compiler::rust_backend::emit(&ir, &info, &quote!(::wayfarer::runtime), &quote!(#vis), &docs, Some(&source));
            quote!(#[allow(dead_code)] #f #generated).into()
        }
        Err(diags) => {
            let mut out = diags.to_syn_error().to_compile_error();
            out.extend(quote!(#[allow(dead_code)] #f));
            out.into()
        }
    }
}

/// A compile-time warning at the walk's name. Stable Rust gives proc macros no warning API,
/// so this uses a deprecated item: rustc reports its note where it is used.
fn fallback_warning(name: &str, why: &str, at: proc_macro2::Span) -> proc_macro2::TokenStream {
    let note = format!(
        "walk `{name}` has no weight bound, so it runs with reservoir sampling (eRVS) only: {why}. \
         `wayfarer explain` shows the analysis; bounding the weight enables the faster rejection sampler"
    );
    let marker = quote::format_ident!("WAYFARER_ERVS_ONLY", span = at);
    quote::quote_spanned! {at=>
        const _: () = {
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals)]
            const #marker: () = ();
            #marker
        };
    }
}
