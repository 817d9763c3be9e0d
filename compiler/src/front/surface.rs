//! The surface forms: the impl form's attribute (`params(...)`, `state(...)`) and methods,
//! and the function form's signature.

use super::params::DefaultDecl;
use super::*;
use crate::diag::Diagnostic;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// One `name: Type` of the attribute's `params(...)` or `state(...)`, with `= default` for a
/// parameter.
struct Decl {
    name: syn::Ident,
    ty: syn::Type,
    default: Option<syn::Expr>,
}

impl syn::parse::Parse for Decl {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let name = input.parse()?;
        input.parse::<syn::Token![:]>()?;
        let ty = input.parse()?;
        let default = if input.peek(syn::Token![=]) {
            input.parse::<syn::Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Decl { name, ty, default })
    }
}

/// What one section of `#[walk(...)]` holds.
enum SectionBody {
    /// `params(name: T [= default], ..)` or `state(name: T, ..)`.
    Decls(syn::punctuated::Punctuated<Decl, syn::Token![,]>),
    /// `defaults(name = value, ..)` (function form).
    Defaults(syn::punctuated::Punctuated<DefaultDecl, syn::Token![,]>),
    /// `check(cond, ..)`.
    Checks(syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>),
    /// `length(param)`: the walk length when none is given is this `u32` parameter's value.
    Length(syn::Ident),
}

/// `params(...)`, `state(...)`, `defaults(...)` or `check(...)` in `#[walk(...)]`.
pub(super) struct Section {
    kind: syn::Ident,
    body: SectionBody,
}

impl syn::parse::Parse for Section {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let kind: syn::Ident = input.parse()?;
        if !input.peek(syn::token::Paren) {
            return Err(syn::Error::new(kind.span(), format!("unknown `#[walk]` argument `{kind}`")));
        }
        let content;
        syn::parenthesized!(content in input);
        let body = match kind.to_string().as_str() {
            "defaults" => SectionBody::Defaults(content.parse_terminated(DefaultDecl::parse, syn::Token![,])?),
            "check" => SectionBody::Checks(content.parse_terminated(syn::Expr::parse, syn::Token![,])?),
            "length" => SectionBody::Length(content.parse()?),
            _ => SectionBody::Decls(content.parse_terminated(Decl::parse, syn::Token![,])?),
        };
        Ok(Section { kind, body })
    }
}

/// The sections of `#[walk(...)]`, or the parse error recorded in `l`.
pub(super) fn sections(l: &mut Lowerer, attr: proc_macro2::TokenStream, example: &str) -> Vec<Section> {
    let parser = syn::punctuated::Punctuated::<Section, syn::Token![,]>::parse_terminated;
    match syn::parse::Parser::parse2(parser, attr) {
        Ok(sections) => {
            let mut seen: Vec<String> = Vec::new();
            let mut out = Vec::new();
            for sec in sections {
                let kind = sec.kind.to_string();
                if seen.contains(&kind) {
                    l.err(sec.kind.span(), format!("`{kind}(...)` is given twice"));
                } else {
                    seen.push(kind);
                    out.push(sec);
                }
            }
            out
        }
        Err(e) => {
            l.err_help(e.span(), e.to_string(), format!("write e.g. `{example}`"));
            Vec::new()
        }
    }
}

/// The function form's attribute: `defaults(..)`, `check(..)` and `length(..)`, applied to the
/// parameters of the signature; the checks and the length parameter are returned.
pub(super) fn fn_attribute(l: &mut Lowerer, attr: proc_macro2::TokenStream) -> (Vec<ParamCheck>, Option<usize>) {
    let mut checks = Vec::new();
    let mut spans = Vec::new();
    let mut length = None;
    for sec in sections(l, attr, "#[walk(defaults(a = 2.0), check(a > 0.0))]") {
        match sec.body {
            SectionBody::Defaults(d) => l.defaults(d),
            SectionBody::Length(name) => length = l.length_param(&name),
            SectionBody::Checks(c) => {
                spans.extend(c.iter().map(|e| e.span()));
                checks = l.checks(c);
            }
            SectionBody::Decls(_) if sec.kind == "params" || sec.kind == "state" => l.err_help(
                sec.kind.span(),
                format!("a `#[walk]` function declares no `{}(...)`", sec.kind),
                "its hyperparameters are its arguments (defaults go in `defaults(a = 2.0)`); state needs the `impl` form",
            ),
            SectionBody::Decls(_) => l.err_help(
                sec.kind.span(),
                format!("unknown `#[walk]` argument `{}`", sec.kind),
                "a `#[walk]` function takes `defaults(name = value, ..)`, `check(condition, ..)` and `length(param)`",
            ),
        }
    }
    if l.diags.is_empty() && checks.len() == spans.len() {
        l.check_defaults(&checks, &spans);
    }
    (checks, length)
}

/// `PprRestart` -> `ppr_restart`.
pub(super) fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Lowers the impl form: `#[walk(params(..), state(..))] impl Name { fn get_weight .. }`,
/// with optional `init`, `update` and `stop`. `attr` is the attribute's argument tokens.
pub fn lower_walk_impl(attr: proc_macro2::TokenStream, item: &syn::ItemImpl) -> Result<Program, Diagnostics> {
    let mut diags = Vec::new();
    let err = |diags: &mut Vec<Diagnostic>, span: Span, msg: &str, help: &str| diags.push(Diagnostic::error(span, msg).help(help));
    let type_name = match &*item.self_ty {
        syn::Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => p.path.get_ident().unwrap().to_string(),
        other => {
            err(
                &mut diags,
                other.span(),
                "a walk's `impl` is for a plain type name",
                "write `impl MyWalk { ... }`; #[walk] generates the struct",
            );
            "Walk".to_string()
        }
    };
    if let Some((_, t, _)) = &item.trait_ {
        err(
            &mut diags,
            t.span(),
            "#[walk] goes on an inherent `impl`, not a trait impl",
            "write `impl MyWalk { ... }`; #[walk] implements `Walk` itself",
        );
    }
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        err(&mut diags, item.generics.span(), "a walk cannot be generic", "give hyperparameters concrete types in `params(...)`");
    }
    if let Some(u) = &item.unsafety {
        diags.push(Diagnostic::error(u.span(), "a walk cannot be `unsafe`"));
    }
    let mut base = Lowerer::new(Mode::Weight, true);
    // The attribute: `params(name: T [= default], ..)`, `state(name: T, ..)` and
    // `check(cond, ..)`, each at most once. Defaults are read once every parameter is known
    // (`len = schema.len()` may name a later one).
    let mut defaults = Vec::new();
    let mut check_exprs = Vec::new();
    let mut length_name = None;
    for sec in sections(&mut base, attr, "#[walk(params(a: f32 = 1.0), state(last: f64))]") {
        let kind = sec.kind.to_string();
        match sec.body {
            SectionBody::Decls(decls) if kind == "params" || kind == "state" => {
                for d in decls {
                    let name = d.name.to_string();
                    let taken = base.params.iter().any(|p| p.name == name) || base.state.iter().any(|f| f.name == name);
                    if taken {
                        base.err(d.name.span(), format!("`{name}` is declared twice"));
                        continue;
                    }
                    if kind == "params" {
                        if let Some(ty) = base.param_type(&d.ty) {
                            base.params.push(Param { name, ty, default: None });
                            if let Some(e) = d.default {
                                defaults.push((base.params.len() - 1, e));
                            }
                        }
                    } else if let Some(e) = d.default {
                        base.err_help(e.span(), "state fields start at zero", "set them in `init`");
                    } else {
                        match scalar_of(&d.ty) {
                            Some(ty) => base.state.push(StateField { name, ty }),
                            None => base.err_help(d.ty.span(), "state fields are scalars", "use f32, f64, i32, u32 or bool"),
                        }
                    }
                }
            }
            SectionBody::Checks(c) => check_exprs = c.into_iter().collect(),
            SectionBody::Length(name) => length_name = Some(name),
            SectionBody::Defaults(_) => {
                base.err_help(sec.kind.span(), "an `impl` walk gives defaults in `params(...)`", "write `params(alpha: f32 = 0.15)`")
            }
            SectionBody::Decls(_) => base.err_help(
                sec.kind.span(),
                format!("unknown `#[walk]` argument `{kind}`"),
                "the arguments are `params(name: Type [= default], ..)`, `state(name: Type, ..)`, `check(condition, ..)` and `length(param)`",
            ),
        }
    }
    for (i, e) in &defaults {
        base.set_default(*i, e);
    }
    let length = length_name.and_then(|n| base.length_param(&n));
    let check_spans: Vec<Span> = check_exprs.iter().map(|e| e.span()).collect();
    let checks = base.checks(check_exprs);
    if base.diags.is_empty() && checks.len() == check_spans.len() {
        base.check_defaults(&checks, &check_spans);
    }
    diags.append(&mut base.diags);

    let mut weight = None;
    let mut routines: [Option<Routine>; 3] = [None, None, None];
    let mut props = Vec::new();
    let mut seen_fns: Vec<String> = Vec::new();
    let mut result = None;
    for it in &item.items {
        let syn::ImplItem::Fn(m) = it else {
            diags.push(
                Diagnostic::error(it.span(), "a walk's `impl` holds only its functions")
                    .help("get_weight, and optionally init, update and stop"),
            );
            continue;
        };
        let fname = m.sig.ident.to_string();
        let mode = match fname.as_str() {
            "get_weight" => Mode::Weight,
            "init" => Mode::Init,
            "update" => Mode::Update,
            "stop" => Mode::Stop,
            _ => {
                diags.push(
                    Diagnostic::error(m.sig.ident.span(), format!("unknown walk function `{fname}`"))
                        .help("a walk's `impl` has get_weight, and optionally init, update and stop"),
                );
                continue;
            }
        };
        if seen_fns.contains(&fname) {
            continue; // rustc reports the duplicate definition itself
        }
        seen_fns.push(fname);
        let mut l = Lowerer::new(mode, true);
        l.state = base.state.clone();
        l.params = base.params.clone();
        l.props = std::mem::take(&mut props);
        l.method_signature(&m.sig, &type_name);
        let env = l.seed_env();
        let outs = l.body_in(&m.block, env);
        props = std::mem::take(&mut l.props);
        match (mode, outs) {
            (Mode::Weight, Ok(v)) => {
                if l.diags.is_empty() && l.ty(v[0]) != Scalar::F32 {
                    let t = l.ty(v[0]).name();
                    l.diags.push(
                        Diagnostic::error(l.token_span(v[0]), format!("the weight must be an `f32`, found `{t}`"))
                            .help("convert it with `as f32`"),
                    );
                }
                result = Some(v[0]);
            }
            (Mode::Stop, Ok(v)) => {
                if l.diags.is_empty() && l.ty(v[0]) != Scalar::Bool {
                    let t = l.ty(v[0]).name();
                    l.diags.push(Diagnostic::error(l.token_span(v[0]), format!("`stop` decides with a `bool`, found `{t}`")));
                }
                routines[2] = Some(l.routine(v));
            }
            (Mode::Init | Mode::Update, Ok(v)) => {
                let slot = if mode == Mode::Init { 0 } else { 1 };
                routines[slot] = Some(l.routine(v));
            }
            (_, Err(())) => {
                if l.diags.is_empty() {
                    l.diags.push(Diagnostic::error(m.sig.ident.span(), format!("`{}` could not be compiled", mode.name())));
                }
            }
        }
        diags.append(&mut l.diags);
        if mode == Mode::Weight {
            weight = Some(l);
        }
    }
    let Some(w) = weight else {
        diags.push(
            Diagnostic::error(item.self_ty.span(), "this walk has no `get_weight`")
                .help("add `fn get_weight(&self, s: &Step) -> f32 { ... }`"),
        );
        return Err(Diagnostics(diags));
    };
    match result {
        Some(result) if diags.is_empty() => {
            let [init, update, stop] = routines;
            Ok(Program {
                name: snake_case(&type_name),
                type_name,
                form: Form::Impl,
                state: base.state,
                init,
                update,
                stop,
                params: base.params,
                exprs: w.exprs,
                types: w.types,
                result,
                props,
                checks,
                length,
                doc: super::doc_of(&item.attrs),
                span: super::ir_span(item.span()),
            })
        }
        _ => Err(Diagnostics(diags)),
    }
}

impl Lowerer {
    /// Checks an impl-form method's signature and records its argument names.
    pub(super) fn method_signature(&mut self, sig: &syn::Signature, type_name: &str) {
        if let Some(c) = &sig.constness {
            self.err(c.span(), "a walk function cannot be `const`");
        }
        if let Some(a) = &sig.asyncness {
            self.err(a.span(), "a walk function cannot be `async`");
        }
        if let Some(u) = &sig.unsafety {
            self.err(u.span(), "a walk function cannot be `unsafe`");
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            self.err(sig.generics.span(), "a walk function cannot be generic");
        }
        let fname = self.mode.name();
        let state_ty = format!("{type_name}State");
        let mut inputs = sig.inputs.iter();
        match inputs.next() {
            Some(syn::FnArg::Receiver(r)) if r.reference.is_some() && r.mutability.is_none() => {}
            Some(syn::FnArg::Receiver(r)) => {
                self.err_help(r.span(), "walk functions take `&self`", "hyperparameters are read-only; write `&self`")
            }
            Some(other) => self.err_help(other.span(), format!("`{fname}` takes `&self` first"), format!("write `fn {fname}(&self, ...)`")),
            None => self.err_help(
                sig.paren_token.span.join(),
                format!("`{fname}` takes `&self` first"),
                format!("write `fn {fname}(&self, ...)`"),
            ),
        }
        for arg in inputs {
            let syn::FnArg::Typed(pt) = arg else { continue };
            let name = match &*pt.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => pi.ident.to_string(),
                other => {
                    self.err(other.span(), "name each argument with a plain identifier");
                    continue;
                }
            };
            let last = match &*pt.ty {
                syn::Type::Reference(r) => match &*r.elem {
                    syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                    _ => None,
                },
                _ => None,
            };
            let mutable = matches!(&*pt.ty, syn::Type::Reference(r) if r.mutability.is_some());
            let slot = match last.as_deref() {
                Some("Step") => &mut self.step,
                Some("StepRng") if self.mode == Mode::Weight => {
                    // Remember the name so its uses are not reported a second time.
                    self.rng_arg = name;
                    self.err_help(
                        type_span(&pt.ty),
                        "`get_weight` cannot draw random numbers",
                        "a weight must be a function of the walker and the edge; draw in `update` or `stop`",
                    );
                    continue;
                }
                Some("StepRng") => &mut self.rng_arg,
                Some(t) if t == state_ty => {
                    if mutable && !self.mode.effects() {
                        self.err_help(type_span(&pt.ty), format!("`{fname}` cannot change the state"), format!("take it as `&{state_ty}`"));
                    }
                    &mut self.state_arg
                }
                _ => {
                    self.err_help(
                        type_span(&pt.ty),
                        format!("unexpected argument type for `{fname}`"),
                        format!("the arguments after `&self` are `s: &Step`, `st: &{state_ty}` (`&mut` in init and update) and `rng: &mut StepRng`"),
                    );
                    continue;
                }
            };
            if !slot.is_empty() {
                self.err(pt.span(), "this argument is given twice");
                continue;
            }
            *slot = name;
        }
        let want = self.result_type();
        match (&sig.output, want) {
            (syn::ReturnType::Default, None) => {}
            (syn::ReturnType::Type(_, t), Some(w)) if scalar_of(t) == Some(w) => {}
            (syn::ReturnType::Type(_, t), None) => self.err_help(t.span(), format!("`{fname}` returns nothing"), "remove the return type"),
            (out, Some(w)) => self.err_help(
                match out {
                    syn::ReturnType::Type(_, t) => t.span(),
                    syn::ReturnType::Default => sig.ident.span(),
                },
                format!("`{fname}` returns `{}`", w.name()),
                format!("write `-> {}`", w.name()),
            ),
        }
    }

    /// The bindings a method starts with: state fields (zero in `init`, read-only outside
    /// `init` and `update`) and, in `update`, the walker's next position.
    pub(super) fn seed_env(&mut self) -> Env {
        let mut env = Env::default();
        let span = Span::call_site();
        for i in 0..self.state.len() {
            let f = self.state[i].clone();
            let v = if self.mode == Mode::Init {
                let lit = if f.ty.is_float() {
                    Literal::Float(0.0, f.ty)
                } else if f.ty == Scalar::Bool {
                    Literal::Bool(false)
                } else {
                    Literal::Int(0, f.ty)
                };
                self.push(Expr::Literal(lit), f.ty, span)
            } else {
                self.push(Expr::State(i), f.ty, span)
            };
            if let Ok(v) = v {
                env.0.push(Binding { name: format!("{STATE}{}", f.name), value: v, mutable: self.mode.effects() });
            }
        }
        if self.mode == Mode::Update {
            for (name, f) in [(NEW_CUR, StepField::Cur), (NEW_PREV, StepField::Prev)] {
                if let Ok(v) = self.push(Expr::Step(f), Scalar::U32, span) {
                    env.0.push(Binding { name: name.into(), value: v, mutable: true });
                }
            }
        }
        env
    }
}

impl Lowerer {
    pub(super) fn signature(&mut self, sig: &syn::Signature, returns: Returns) {
        if let Some(c) = &sig.constness {
            self.err(c.span(), "a walk cannot be `const`");
        }
        if let Some(a) = &sig.asyncness {
            self.err(a.span(), "a walk cannot be `async`");
        }
        if let Some(u) = &sig.unsafety {
            self.err(u.span(), "a walk cannot be `unsafe`");
        }
        if let Some(a) = &sig.abi {
            self.err(a.span(), "a walk cannot have an ABI");
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            self.err_help(
                sig.generics.span(),
                "a walk cannot be generic",
                "give hyperparameters concrete types: f32, f64, i32, u32, bool or [T; N]",
            );
        }
        if let Some(v) = &sig.variadic {
            self.err(v.span(), "a walk cannot be variadic");
        }
        let mut inputs = sig.inputs.iter();
        match inputs.next() {
            Some(syn::FnArg::Typed(pt)) if matches!(&*pt.ty, syn::Type::Reference(r) if matches!(&*r.elem, syn::Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Step"))) => {
                match &*pt.pat {
                    syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => self.step = pi.ident.to_string(),
                    other => self.err(other.span(), "name the step argument with a plain identifier, e.g. `s: &Step`"),
                }
            }
            Some(other) => self.err_help(other.span(), "a walk's first argument is the step", "start the signature with `s: &Step`"),
            None => {
                self.err_help(sig.paren_token.span.join(), "a walk's first argument is the step", "write `fn name(s: &Step, ...) -> f32`")
            }
        }
        for arg in inputs {
            let syn::FnArg::Typed(pt) = arg else {
                self.err(arg.span(), "a walk is a free function: `self` is not allowed");
                continue;
            };
            let name = match &*pt.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => pi.ident.to_string(),
                other => {
                    self.err(other.span(), "name each hyperparameter with a plain identifier");
                    continue;
                }
            };
            let Some(ty) = self.param_type(&pt.ty) else { continue };
            if name == self.step || self.params.iter().any(|p| p.name == name) {
                self.err(pt.pat.span(), format!("`{name}` is declared twice"));
                continue;
            }
            self.params.push(Param { name, ty, default: None });
        }
        let (want, msg) = match returns {
            Returns::Weight => (Scalar::F32, "a walk returns its weight as `f32`"),
            Returns::Keep => (Scalar::Bool, "a mask returns whether to keep the edge, as `bool`"),
        };
        match &sig.output {
            syn::ReturnType::Type(_, t) if scalar_of(t) == Some(want) => {}
            syn::ReturnType::Type(_, t) => self.err_help(t.span(), msg, format!("write `-> {}`", want.name())),
            syn::ReturnType::Default => self.err_help(sig.ident.span(), msg, format!("add `-> {}` to the signature", want.name())),
        }
    }

    /// The type of a hyperparameter, or an error at it.
    pub(super) fn param_type(&mut self, ty: &syn::Type) -> Option<ParamType> {
        match ty {
            syn::Type::Array(a) => {
                let n = match &a.len {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse::<usize>().ok(),
                    _ => None,
                };
                match (scalar_of(&a.elem), n) {
                    (Some(s), Some(n)) if (1..=4096).contains(&n) => Some(ParamType::Array(s, n)),
                    (None, _) => {
                        self.err(a.elem.span(), "array hyperparameters hold f32, f64, i32, u32 or bool");
                        None
                    }
                    _ => {
                        self.err(a.len.span(), "an array hyperparameter needs a literal length from 1 to 4096");
                        None
                    }
                }
            }
            t => match scalar_of(t) {
                Some(s) => Some(ParamType::Scalar(s)),
                None => {
                    self.err_help(t.span(), "unsupported hyperparameter type", "use f32, f64, i32, u32, bool or a fixed-size array [T; N]");
                    None
                }
            },
        }
    }
}
