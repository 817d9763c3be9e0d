//! The params struct's conversions: `FromParams` (values in declaration order, as the
//! registry, the CLI and Python hold them), `Default` when every parameter has a default, and
//! the checks of `check(...)` as Rust, run by `Walk::check` before every run.

use super::{Emitter, zero};
use crate::eval::{ParamValue, Value};
use crate::ir::*;
use crate::params::mentions;
use proc_macro2::{Literal as Lit, TokenStream};
use quote::{format_ident, quote};

fn value_variant(s: Scalar) -> TokenStream {
    match s {
        Scalar::F32 => quote!(F32),
        Scalar::F64 => quote!(F64),
        Scalar::I32 => quote!(I32),
        Scalar::U32 => quote!(U32),
        Scalar::Bool => quote!(Bool),
    }
}

fn literal(v: &Value) -> TokenStream {
    match *v {
        Value::F32(x) => {
            let l = Lit::f32_suffixed(x);
            quote!(#l)
        }
        Value::F64(x) => {
            let l = Lit::f64_suffixed(x);
            quote!(#l)
        }
        Value::I32(x) => {
            let l = Lit::i32_suffixed(x);
            quote!(#l)
        }
        Value::U32(x) => {
            let l = Lit::u32_suffixed(x);
            quote!(#l)
        }
        Value::Bool(b) => quote!(#b),
    }
}

/// `impl FromParams` and, when every parameter has a default, `impl Default`.
pub(super) fn conversions(f: &Program, rt: &TokenStream, name: &proc_macro2::Ident) -> TokenStream {
    let walk = &f.name;
    let n = f.params.len();
    let mut fields = Vec::new();
    let mut back = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        let field = format_ident!("{}", p.name);
        let pname = &p.name;
        match p.ty {
            ParamType::Scalar(s) => {
                let v = value_variant(s);
                fields.push(quote! {
                    #field: match &__v[#i] {
                        #rt::ParamValue::Scalar(#rt::Value::#v(__x)) => *__x,
                        __other => return Err(__bad(#pname, __other)),
                    }
                });
                back.push(quote!(#rt::ParamValue::Scalar(#rt::Value::#v(self.#field))));
            }
            ParamType::Array(s, len) => {
                let (v, z) = (value_variant(s), zero(s));
                fields.push(quote! {
                    #field: {
                        let mut __a = [#z; #len];
                        match &__v[#i] {
                            #rt::ParamValue::Array(__xs) if __xs.len() <= #len => {
                                for (__k, __x) in __xs.iter().enumerate() {
                                    __a[__k] = match __x {
                                        #rt::Value::#v(__y) => *__y,
                                        _ => return Err(__bad(#pname, &__v[#i])),
                                    };
                                }
                            }
                            __other => return Err(__bad(#pname, __other)),
                        }
                        __a
                    }
                });
                back.push(quote!(#rt::ParamValue::Array(self.#field.iter().map(|__x| #rt::Value::#v(*__x)).collect())));
            }
        }
    }
    let build = if n == 0 { quote!(#name) } else { quote!(#name { #(#fields),* }) };
    let from = quote! {
        impl #rt::FromParams for #name {
            fn from_params(__v: &[#rt::ParamValue]) -> Result<Self, #rt::WalkError> {
                #[allow(dead_code)]
                fn __bad(__name: &str, __got: &#rt::ParamValue) -> #rt::WalkError {
                    #rt::WalkError::Parameter { name: __name.into(), message: format!("a value of the wrong type: {:?}", __got) }
                }
                if __v.len() != #n {
                    return Err(#rt::WalkError::Config(format!("`{}` takes {} parameter values, got {}", #walk, #n, __v.len())));
                }
                Ok(#build)
            }
            fn to_params(&self) -> Vec<#rt::ParamValue> {
                vec![#(#back),*]
            }
        }
    };
    let default = match crate::params::default_values(&f.params) {
        Some(values) => {
            let inits: Vec<TokenStream> = f
                .params
                .iter()
                .zip(&values)
                .map(|(p, v)| {
                    let field = format_ident!("{}", p.name);
                    match (p.ty, v) {
                        (ParamType::Array(s, len), ParamValue::Array(xs)) => {
                            let z = zero(s);
                            let lits: Vec<TokenStream> = (0..len).map(|k| xs.get(k).map_or(z.clone(), literal)).collect();
                            quote!(#field: [#(#lits),*])
                        }
                        (_, ParamValue::Scalar(x)) => {
                            let l = literal(x);
                            quote!(#field: #l)
                        }
                        (ParamType::Scalar(s), ParamValue::Array(_)) => {
                            let z = zero(s);
                            quote!(#field: #z)
                        }
                    }
                })
                .collect();
            let body = if n == 0 { quote!(#name) } else { quote!(#name { #(#inits),* }) };
            let doc = format!("The declared defaults of `{walk}`.");
            quote! {
                impl ::core::default::Default for #name {
                    #[doc = #doc]
                    fn default() -> Self { #body }
                }
            }
        }
        None => quote!(),
    };
    quote!(#from #default)
}

/// The body of `Walk::check` for the parameter checks: each failing one is an error naming its
/// first parameter, with the values.
pub(super) fn checks(f: &Program, rt: &TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    for c in &f.checks {
        let em = Emitter { exprs: &c.exprs, types: &c.types, params: &f.params, props: &f.props, state: &f.state, node_only: false };
        let cond = em.e(c.result);
        let named: Vec<&Param> = f.params.iter().filter(|p| matches!(p.ty, ParamType::Scalar(_)) && mentions(&c.text, &p.name)).collect();
        let first = named.first().map_or(String::new(), |p| p.name.clone());
        let fmt = named.iter().map(|p| format!("{}={{}}", p.name)).collect::<Vec<_>>().join(", ")
            + " does not meet `"
            + &c.text.replace('{', "{{").replace('}', "}}")
            + "`";
        let args = named.iter().map(|p| {
            let field = format_ident!("{}", p.name);
            quote!(self.#field)
        });
        out.extend(quote! {
            if !(#cond) {
                return Err(#rt::WalkError::Parameter { name: #first.into(), message: format!(#fmt, #(#args),*) });
            }
        });
    }
    out
}
