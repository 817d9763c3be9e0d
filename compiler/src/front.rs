//! The front end: a `#[walk]` function (syn AST) to the IR, with type checking.
//!
//! Statements are lowered in continuation style: an `if` whose branches fall through lowers
//! both branches followed by the rest of the block, and joins them with a `Select`; `return`
//! ends its path. Mutable locals are SSA values rebound per path; `for` over a constant range
//! is unrolled. The result is one pure expression DAG per walk. Every error is collected with
//! the span of the offending token; lowering carries on after an error where it can.

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::*;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// Unrolled `for` iterations allowed per loop.
pub const MAX_UNROLL: u64 = 256;
/// IR nodes allowed per walk (branches duplicate the statements that follow them).
pub const MAX_NODES: usize = 200_000;

const ALLOWED: &str = "the walk language has `let`, `if`/`else`, `match` on integers, `for i in 0..N` with a constant N, \
arithmetic and comparisons on f32/f64/i32/u32/bool, `as` casts, min/max/abs/exp/ln/sqrt/powf, the step's accessors, \
`has_edge`, `degree` and `node_prop`";

/// What a function-form program returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Returns {
    /// A weight (`f32`).
    Weight,
    /// A mask decision (`bool`), lowered to the weight `if keep { 1.0 } else { 0.0 }`.
    Keep,
}

/// Lowers a `#[walk] fn name(s: &Step, params...) -> f32 { ... }` to a [`Program`].
pub fn lower_weight_fn(item: &syn::ItemFn) -> Result<Program, Diagnostics> {
    lower_fn(item, Returns::Weight)
}

fn lower_fn(item: &syn::ItemFn, returns: Returns) -> Result<Program, Diagnostics> {
    let mut l = Lowerer::new(Mode::Weight, false);
    l.signature(&item.sig, returns);
    let mut result = l.body(&item.block).map(|v| v[0]);
    if let Ok(r) = result
        && l.diags.is_empty()
    {
        let t = l.types[r.index()];
        match returns {
            Returns::Weight if t != Scalar::F32 => l.diags.push(
                Diagnostic::error(l.exprs.span(r), format!("the weight must be an `f32`, found `{}`", t.name()))
                    .help("convert it with `as f32`"),
            ),
            Returns::Keep if t != Scalar::Bool => l.diags.push(
                Diagnostic::error(l.exprs.span(r), format!("a mask returns a `bool` (keep the edge or not), found `{}`", t.name()))
                    .help("compare, e.g. `s.weight() > t`"),
            ),
            Returns::Keep => {
                let span = l.exprs.span(r);
                let one = l.push_new(Expr::Literal(Literal::Float(1.0, Scalar::F32)), Scalar::F32, span);
                let zero = l.push_new(Expr::Literal(Literal::Float(0.0, Scalar::F32)), Scalar::F32, span);
                if let (Ok(then), Ok(other)) = (one, zero) {
                    result = l.push_new(Expr::Select { cond: r, then, other }, Scalar::F32, span);
                }
            }
            Returns::Weight => {}
        }
    }
    match result {
        Ok(result) if l.diags.is_empty() => Ok(Program {
            name: item.sig.ident.to_string(),
            type_name: crate::rust_backend::struct_name(&item.sig.ident.to_string()),
            form: Form::Function,
            state: Vec::new(),
            init: None,
            update: None,
            stop: None,
            params: l.params,
            exprs: l.exprs,
            types: l.types,
            result,
            props: l.props,
            span: item.span(),
        }),
        _ => {
            if l.diags.is_empty() {
                l.diags.push(Diagnostic::error(item.sig.ident.span(), "the walk could not be compiled"));
            }
            Err(Diagnostics(l.diags))
        }
    }
}

/// Parses Rust source text holding one `#[walk]` item (a function or an `impl`) and lowers it.
pub fn lower_source(source: &str) -> Result<Program, Diagnostics> {
    let file = parse_file(source)?;
    let walk_attr = |attrs: &[syn::Attribute]| attrs.iter().find(|a| a.path().segments.last().is_some_and(|s| s.ident == "walk")).cloned();
    let mut walks = file.items.iter().filter_map(|i| match i {
        syn::Item::Fn(f) => walk_attr(&f.attrs).map(|a| (i, a)),
        syn::Item::Impl(m) => walk_attr(&m.attrs).map(|a| (i, a)),
        _ => None,
    });
    match (walks.next(), walks.next()) {
        (Some((syn::Item::Fn(f), _)), None) => lower_weight_fn(f),
        (Some((syn::Item::Impl(m), attr)), None) => {
            let tokens = match &attr.meta {
                syn::Meta::List(l) => l.tokens.clone(),
                _ => proc_macro2::TokenStream::new(),
            };
            lower_walk_impl(tokens, m)
        }
        (None, _) => Err(Diagnostics(vec![Diagnostic::error(Span::call_site(), "no `#[walk]` function or impl in this file")])),
        (Some(_), Some((second, _))) => {
            Err(Diagnostics(vec![Diagnostic::error(second.span(), "a file holds one `#[walk]` item; this is a second one")]))
        }
        (Some(_), None) => unreachable!("only functions and impls are collected"),
    }
}

/// Parses a source file; text that does not lex (an unclosed or mismatched delimiter) gets an
/// error at the delimiter, where `syn` can only say "cannot parse string into token stream".
fn parse_file(source: &str) -> Result<syn::File, Diagnostics> {
    syn::parse_file(source).map_err(|e| {
        let d = match source.parse::<proc_macro2::TokenStream>() {
            Err(_) => unbalanced_delimiter(source).unwrap_or_else(|| Diagnostic::error(e.span(), format!("not valid Rust tokens: {e}"))),
            Ok(_) => Diagnostic::error(e.span(), e.to_string()),
        };
        Diagnostics(vec![d])
    })
}

/// The first unclosed, unexpected or mismatched `(`, `[` or `{`, skipping comments, strings and
/// character literals.
fn unbalanced_delimiter(source: &str) -> Option<Diagnostic> {
    let mut open: Vec<(char, usize, usize)> = Vec::new();
    let chars: Vec<char> = source.chars().collect();
    let (mut i, mut line, mut col) = (0usize, 1usize, 0usize);
    let step = |i: &mut usize, line: &mut usize, col: &mut usize| {
        if chars[*i] == '\n' {
            *line += 1;
            *col = 0;
        } else {
            *col += 1;
        }
        *i += 1;
    };
    while i < chars.len() {
        let (c, next) = (chars[i], chars.get(i + 1).copied());
        match c {
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    step(&mut i, &mut line, &mut col);
                }
                continue;
            }
            '/' if next == Some('*') => {
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    step(&mut i, &mut line, &mut col);
                }
            }
            '"' => {
                step(&mut i, &mut line, &mut col);
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        step(&mut i, &mut line, &mut col);
                    }
                    if i < chars.len() {
                        step(&mut i, &mut line, &mut col);
                    }
                }
            }
            '\'' if chars.get(i + 2) == Some(&'\'') || (next == Some('\\') && chars.get(i + 3) == Some(&'\'')) => {
                let len = if next == Some('\\') { 3 } else { 2 };
                for _ in 0..len {
                    step(&mut i, &mut line, &mut col);
                }
            }
            '(' | '[' | '{' => open.push((c, line, col)),
            ')' | ']' | '}' => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                match open.pop() {
                    Some((o, _, _)) if o == want => {}
                    Some((o, l, k)) => {
                        return Some(
                            Diagnostic::at(l, k, 1, format!("this `{o}` is not closed"))
                                .help(format!("it is still open at the `{c}` on {line}:{}", col + 1)),
                        );
                    }
                    None => return Some(Diagnostic::at(line, col, 1, format!("unexpected closing delimiter `{c}`"))),
                }
            }
            _ => {}
        }
        if i < chars.len() {
            step(&mut i, &mut line, &mut col);
        }
    }
    open.pop().map(|(o, l, k)| Diagnostic::at(l, k, 1, format!("this `{o}` is never closed")))
}

/// Parses Rust source text holding one `#[sampler]` function (a GNN sampling policy: the
/// weight of an edge of the node being sampled) and lowers it like a function-form walk. A
/// policy sees the edge and the node whose row is sampled (`s.cur()`, `s.dst()`,
/// `s.weight()`, `s.label()`, `s.edge()`, `s.time()`, graph queries); a walker's history
/// (`s.prev()`, `s.start()`, `s.step()`) means nothing there and is an error at its token.
pub fn lower_sampler_source(source: &str) -> Result<Program, Diagnostics> {
    let file = parse_file(source)?;
    let is_sampler = |attrs: &[syn::Attribute]| attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "sampler"));
    let mut found = file.items.iter().filter_map(|i| match i {
        syn::Item::Fn(f) if is_sampler(&f.attrs) => Some(f),
        _ => None,
    });
    let f = match (found.next(), found.next()) {
        (Some(f), None) => f,
        (None, _) => {
            return Err(Diagnostics(vec![Diagnostic::error(Span::call_site(), "no `#[sampler]` function in this file")]));
        }
        (Some(_), Some(second)) => {
            return Err(Diagnostics(vec![Diagnostic::error(
                second.sig.ident.span(),
                "a file holds one `#[sampler]` function; this is a second one",
            )]));
        }
    };
    lower_sampler_fn(f)
}

/// Parses Rust source text holding one `#[mask]` function (an edge filter for triangle
/// counting: `fn heavy(s: &Step, t: f32) -> bool { s.weight() > t }`) and lowers it to a
/// function-form program whose weight is 1 for a kept edge and 0 otherwise. Like a sampling
/// policy it sees one edge (`s.cur()` → `s.dst()`, its weight, label, time and graph
/// queries) and no walker history.
pub fn lower_mask_source(source: &str) -> Result<Program, Diagnostics> {
    let file = parse_file(source)?;
    let is_mask = |attrs: &[syn::Attribute]| attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "mask"));
    let mut found = file.items.iter().filter_map(|i| match i {
        syn::Item::Fn(f) if is_mask(&f.attrs) => Some(f),
        _ => None,
    });
    match (found.next(), found.next()) {
        (Some(f), None) => lower_mask_fn(f),
        (None, _) => Err(Diagnostics(vec![Diagnostic::error(Span::call_site(), "no `#[mask]` function in this file")])),
        (Some(_), Some(second)) => {
            Err(Diagnostics(vec![Diagnostic::error(second.sig.ident.span(), "a file holds one `#[mask]` function; this is a second one")]))
        }
    }
}

/// Lowers a `#[mask]` function (see [`lower_mask_source`]).
pub fn lower_mask_fn(f: &syn::ItemFn) -> Result<Program, Diagnostics> {
    no_walker_history(lower_fn(f, Returns::Keep)?, "an edge mask")
}

/// Lowers a `#[sampler]` function (see [`lower_sampler_source`]): a function-form walk whose
/// weight reads no walker history.
pub fn lower_sampler_fn(f: &syn::ItemFn) -> Result<Program, Diagnostics> {
    no_walker_history(lower_weight_fn(f)?, "a sampling policy")
}

/// Errors at every walker-history accessor of a program that weighs single edges.
fn no_walker_history(program: Program, what: &str) -> Result<Program, Diagnostics> {
    let diags: Vec<Diagnostic> = program
        .exprs
        .iter()
        .filter_map(|(h, e)| match e {
            Expr::Step(field @ (StepField::Prev | StepField::Start | StepField::Step)) => Some(
                Diagnostic::error(program.exprs.span(h), format!("{what} has no walker: `s.{}()` is a walk's", field.signature().0))
                    .help("it sees one edge, from s.cur() to s.dst(): use s.cur(), s.dst(), s.weight(), s.label(), s.edge(), s.time() and graph queries"),
            ),
            _ => None,
        })
        .collect();
    if diags.is_empty() { Ok(program) } else { Err(Diagnostics(diags)) }
}

/// One `name: Type` of the attribute's `params(...)` or `state(...)`.
struct Decl {
    name: syn::Ident,
    ty: syn::Type,
}

impl syn::parse::Parse for Decl {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let name = input.parse()?;
        input.parse::<syn::Token![:]>()?;
        Ok(Decl { name, ty: input.parse()? })
    }
}

/// `params(...)` or `state(...)` in `#[walk(...)]`.
struct Section {
    kind: syn::Ident,
    decls: syn::punctuated::Punctuated<Decl, syn::Token![,]>,
}

impl syn::parse::Parse for Section {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let kind = input.parse()?;
        let content;
        syn::parenthesized!(content in input);
        Ok(Section { kind, decls: content.parse_terminated(Decl::parse, syn::Token![,])? })
    }
}

/// `PprRestart` -> `ppr_restart`.
fn snake_case(name: &str) -> String {
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
    // The attribute: `params(name: T, ..)` and `state(name: T, ..)`, each at most once.
    let parser = syn::punctuated::Punctuated::<Section, syn::Token![,]>::parse_terminated;
    match syn::parse::Parser::parse2(parser, attr) {
        Ok(sections) => {
            let mut seen: Vec<String> = Vec::new();
            for sec in sections {
                let kind = sec.kind.to_string();
                if seen.contains(&kind) {
                    base.err(sec.kind.span(), format!("`{kind}(...)` is given twice"));
                    continue;
                }
                seen.push(kind.clone());
                for d in sec.decls {
                    let name = d.name.to_string();
                    let taken = base.params.iter().any(|p| p.name == name) || base.state.iter().any(|f| f.name == name);
                    if taken {
                        base.err(d.name.span(), format!("`{name}` is declared twice"));
                        continue;
                    }
                    match kind.as_str() {
                        "params" => {
                            if let Some(ty) = base.param_type(&d.ty) {
                                base.params.push(Param { name, ty });
                            }
                        }
                        "state" => match scalar_of(&d.ty) {
                            Some(ty) => base.state.push(StateField { name, ty }),
                            None => base.err_help(d.ty.span(), "state fields are scalars", "use f32, f64, i32, u32 or bool"),
                        },
                        _ => {}
                    }
                }
                if kind != "params" && kind != "state" {
                    base.err_help(
                        sec.kind.span(),
                        format!("unknown `#[walk]` argument `{kind}`"),
                        "the arguments are `params(name: Type, ..)` and `state(name: Type, ..)`",
                    );
                }
            }
        }
        Err(e) => base.err_help(e.span(), e.to_string(), "write `#[walk(params(a: f32), state(last: f64))]`"),
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
                        Diagnostic::error(l.exprs.span(v[0]), format!("the weight must be an `f32`, found `{t}`"))
                            .help("convert it with `as f32`"),
                    );
                }
                result = Some(v[0]);
            }
            (Mode::Stop, Ok(v)) => {
                if l.diags.is_empty() && l.ty(v[0]) != Scalar::Bool {
                    let t = l.ty(v[0]).name();
                    l.diags.push(Diagnostic::error(l.exprs.span(v[0]), format!("`stop` decides with a `bool`, found `{t}`")));
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
                span: item.span(),
            })
        }
        _ => Err(Diagnostics(diags)),
    }
}

impl Lowerer {
    /// Checks an impl-form method's signature and records its argument names.
    fn method_signature(&mut self, sig: &syn::Signature, type_name: &str) {
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
    fn seed_env(&mut self) -> Env {
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

type Lowered = Result<Handle<Expr>, ()>;

/// Binding-name prefix of state fields (a `.` keeps them apart from user locals).
const STATE: &str = "state.";
/// Bindings of the walker's position after `update` (changed by `restart()` / `teleport(v)`).
const NEW_CUR: &str = "walker.cur";
const NEW_PREV: &str = "walker.prev";

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Leaf {
    Step(StepField),
    Param(usize),
}

#[derive(Clone)]
struct Binding {
    name: String,
    value: Handle<Expr>,
    mutable: bool,
}

/// Local bindings of one control-flow path, innermost last.
#[derive(Clone, Default)]
///
/// The counter numbers the random draws along the path: the `k`-th `uniform()` a path
/// executes is draw `k`, as in sequential Rust. Paths that split at a statement-level `if`
/// continue to the end of the function separately, so each gets its own copy of the count
/// ([`Env::fork`]); inside a value expression the branches share it, so a draw after the
/// expression never reuses a number taken inside it.
struct Env(Vec<Binding>, std::rc::Rc<std::cell::Cell<u32>>);

impl Env {
    /// A separate path: the same bindings and its own draw counter.
    fn fork(&self) -> Env {
        Env(self.0.clone(), std::rc::Rc::new(std::cell::Cell::new(self.1.get())))
    }
    /// A branch of `value_block` (shared counter) or a separate statement-level path.
    fn branch(&self, value_block: bool) -> Env {
        if value_block { self.clone() } else { self.fork() }
    }
    fn find(&self, name: &str) -> Option<usize> {
        self.0.iter().rposition(|b| b.name == name)
    }
}

enum Work<'a> {
    Stmt(&'a syn::Stmt),
    /// An `else if` (or any statement-position expression without a following semicolon).
    Expr(&'a syn::Expr),
    /// Bind a loop variable.
    Bind(String, Handle<Expr>),
    /// Leave a block: drop bindings above this depth.
    Exit(usize),
}

/// Which function of a walk is being lowered.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Weight,
    Init,
    Update,
    Stop,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Weight => "get_weight",
            Mode::Init => "init",
            Mode::Update => "update",
            Mode::Stop => "stop",
        }
    }
    /// Whether the function changes the walker (its results are the state, not a value).
    fn effects(self) -> bool {
        matches!(self, Mode::Init | Mode::Update)
    }
}

/// The results of one control-flow path: the value (`get_weight`, `stop`, value blocks) or
/// the state and walker position at its end (`init`, `update`).
type Outs = Result<Vec<Handle<Expr>>, ()>;

struct Lowerer {
    mode: Mode,
    /// The impl form: hyperparameters are `self.x`, and there may be state.
    impl_form: bool,
    state: Vec<StateField>,
    /// The name of the state argument (`st` in `st: &PprState`), if any.
    state_arg: String,
    /// The name of the random-stream argument, if any.
    rng_arg: String,
    draws: u32,
    /// Bindings below this depth belong outside the value block being lowered: assigning
    /// them there would be lost, so it is an error.
    value_floor: usize,
    props: Vec<String>,
    /// Leaves (step accessors, scalar parameters) are shared: one node each.
    leaves: std::collections::HashMap<Leaf, Handle<Expr>>,
    exprs: Arena<Expr>,
    types: Vec<Scalar>,
    params: Vec<Param>,
    step: String,
    diags: Vec<Diagnostic>,
}

fn scalar_of(ty: &syn::Type) -> Option<Scalar> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => match p.path.segments[0].ident.to_string().as_str() {
            "f32" => Some(Scalar::F32),
            "f64" => Some(Scalar::F64),
            "i32" => Some(Scalar::I32),
            "u32" => Some(Scalar::U32),
            "bool" => Some(Scalar::Bool),
            _ => None,
        },
        syn::Type::Paren(p) => scalar_of(&p.elem),
        _ => None,
    }
}

fn is_usize(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.path.is_ident("usize"))
}

fn is_literal(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(_) => true,
        syn::Expr::Paren(p) => is_literal(&p.expr),
        syn::Expr::Group(g) => is_literal(&g.expr),
        syn::Expr::Unary(u) => matches!(u.op, syn::UnOp::Neg(_)) && is_literal(&u.expr),
        _ => false,
    }
}

fn expr_kind(e: &syn::Expr) -> &'static str {
    match e {
        syn::Expr::Array(_) => "an array expression",
        syn::Expr::Async(_) => "`async`",
        syn::Expr::Await(_) => "`.await`",
        syn::Expr::Break(_) => "`break`",
        syn::Expr::Closure(_) => "a closure",
        syn::Expr::Continue(_) => "`continue`",
        syn::Expr::Field(_) => "a field access",
        syn::Expr::Loop(_) => "`loop`",
        syn::Expr::Macro(_) => "a macro call",
        syn::Expr::Range(_) => "a range outside `for`",
        syn::Expr::Reference(_) => "a reference",
        syn::Expr::Repeat(_) => "an array repeat expression",
        syn::Expr::Struct(_) => "a struct literal",
        syn::Expr::Try(_) => "the `?` operator",
        syn::Expr::Tuple(_) => "a tuple",
        syn::Expr::Unsafe(_) => "`unsafe`",
        syn::Expr::While(_) => "`while`",
        syn::Expr::Let(_) => "`if let` / `let` in a condition",
        syn::Expr::Call(_) => "a function call",
        _ => "this expression",
    }
}

impl Lowerer {
    fn new(mode: Mode, impl_form: bool) -> Self {
        Lowerer {
            mode,
            impl_form,
            state: Vec::new(),
            state_arg: String::new(),
            rng_arg: String::new(),
            draws: 0,
            value_floor: 0,
            props: Vec::new(),
            leaves: Default::default(),
            exprs: Arena::default(),
            types: Vec::new(),
            params: Vec::new(),
            step: String::new(),
            diags: Vec::new(),
        }
    }

    fn routine(&mut self, outputs: Vec<Handle<Expr>>) -> Routine {
        Routine { outputs, draws: self.draws, exprs: std::mem::take(&mut self.exprs), types: std::mem::take(&mut self.types) }
    }

    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }
    fn err_help(&mut self, span: Span, msg: impl Into<String>, help: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg).help(help));
    }

    fn push(&mut self, e: Expr, ty: Scalar, span: Span) -> Lowered {
        let leaf = match e {
            Expr::Step(f) => Some(Leaf::Step(f)),
            Expr::Param(i) => Some(Leaf::Param(i)),
            _ => None,
        };
        if let Some(l) = leaf
            && let Some(&h) = self.leaves.get(&l)
        {
            return Ok(h);
        }
        let h = self.push_new(e, ty, span)?;
        if let Some(l) = leaf {
            self.leaves.insert(l, h);
        }
        Ok(h)
    }

    fn push_new(&mut self, e: Expr, ty: Scalar, span: Span) -> Lowered {
        if self.exprs.len() >= MAX_NODES {
            self.err_help(
                span,
                "this walk is too large once its branches are expanded",
                "move statements that follow an `if` into its branches, or simplify",
            );
            return Err(());
        }
        let h = self.exprs.append(e, span);
        self.types.push(ty);
        Ok(h)
    }

    fn ty(&self, h: Handle<Expr>) -> Scalar {
        self.types[h.index()]
    }

    fn signature(&mut self, sig: &syn::Signature, returns: Returns) {
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
            self.params.push(Param { name, ty });
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
    fn param_type(&mut self, ty: &syn::Type) -> Option<ParamType> {
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

    fn body(&mut self, block: &syn::Block) -> Outs {
        self.body_in(block, Env::default())
    }

    fn body_in(&mut self, block: &syn::Block, env: Env) -> Outs {
        let work: Vec<Work> = block.stmts.iter().map(Work::Stmt).collect();
        let end = block.brace_token.span.close();
        let hint = self.result_type();
        self.seq(&work, env, end, false, hint)
    }

    /// The type of the function's value, if it has one.
    fn result_type(&self) -> Option<Scalar> {
        match self.mode {
            Mode::Weight => Some(Scalar::F32),
            Mode::Stop => Some(Scalar::Bool),
            Mode::Init | Mode::Update => None,
        }
    }

    /// The results of an `init` / `update` path: the state fields, then (update) cur and prev.
    fn effects(&self, env: &Env) -> Vec<Handle<Expr>> {
        let mut out: Vec<Handle<Expr>> =
            self.state.iter().map(|f| env.0[env.find(&format!("{STATE}{}", f.name)).expect("seeded")].value).collect();
        if self.mode == Mode::Update {
            out.push(env.0[env.find(NEW_CUR).expect("seeded")].value);
            out.push(env.0[env.find(NEW_PREV).expect("seeded")].value);
        }
        out
    }

    /// Lowers a sequence of statements to the value it produces. `value_block`: inside a
    /// value-position block, where `return` is not allowed.
    fn seq(&mut self, work: &[Work], mut env: Env, end: Span, value_block: bool, hint: Option<Scalar>) -> Outs {
        let mut i = 0;
        while i < work.len() {
            let rest = &work[i + 1..];
            match &work[i] {
                Work::Exit(depth) => env.0.truncate(*depth),
                Work::Bind(name, h) => env.0.push(Binding { name: name.clone(), value: *h, mutable: false }),
                Work::Stmt(syn::Stmt::Local(local)) => self.local(local, &mut env),
                Work::Stmt(syn::Stmt::Item(item)) => {
                    self.err(item.span(), "items (`fn`, `struct`, `use`, …) cannot be declared inside a walk");
                }
                Work::Stmt(syn::Stmt::Macro(m)) => {
                    self.err_help(
                        m.span(),
                        "macros cannot be used inside a walk",
                        "walk code also runs on GPUs; there is no printing or panicking",
                    );
                }
                Work::Stmt(syn::Stmt::Expr(e, semi)) => {
                    if let Some(v) = self.stmt_expr(e, semi.is_none(), rest, &mut env, end, value_block, hint) {
                        return v;
                    }
                }
                Work::Expr(e) => {
                    if let Some(v) = self.stmt_expr(e, true, rest, &mut env, end, value_block, hint) {
                        return v;
                    }
                }
            }
            i += 1;
        }
        match self.mode {
            _ if value_block => self.err_help(end, "this block has no value", "end it with an expression"),
            Mode::Init | Mode::Update => return Ok(self.effects(&env)),
            Mode::Weight => self.err_help(end, "the weight is missing here", "end the function with an `f32` expression, or `return` one"),
            Mode::Stop => self.err_help(end, "the decision is missing here", "end `stop` with a `bool` expression, or `return` one"),
        }
        Err(())
    }

    /// A statement-position expression. Returns `Some(value)` if it ends the path.
    #[allow(clippy::too_many_arguments)]
    fn stmt_expr(
        &mut self,
        e: &syn::Expr,
        tail: bool,
        rest: &[Work],
        env: &mut Env,
        end: Span,
        value_block: bool,
        hint: Option<Scalar>,
    ) -> Option<Outs> {
        let only_exits = rest.iter().all(|w| matches!(w, Work::Exit(_)));
        match e {
            syn::Expr::Return(r) => {
                if value_block {
                    self.err_help(
                        r.span(),
                        "`return` inside a value expression",
                        "use `if`/`else` at the statement level of the walk to return early",
                    );
                    return Some(Err(()));
                }
                Some(match (&r.expr, self.mode.effects()) {
                    (None, true) => Ok(self.effects(env)),
                    (Some(v), true) => {
                        self.err_help(v.span(), format!("`{}` returns nothing", self.mode.name()), "write `return;`");
                        Err(())
                    }
                    (Some(v), false) => self.expr(v, env, self.result_type()).map(|v| vec![v]),
                    (None, false) if self.mode == Mode::Stop => {
                        self.err(r.span(), "`return` needs the decision, e.g. `return false;`");
                        Err(())
                    }
                    (None, false) => {
                        self.err(r.span(), "`return` needs the weight, e.g. `return 0.0;`");
                        Err(())
                    }
                })
            }
            syn::Expr::If(x) => {
                let cond = self.cond(&x.cond, env);
                let depth = env.0.len();
                let mut then: Vec<Work> = x.then_branch.stmts.iter().map(Work::Stmt).collect();
                then.push(Work::Exit(depth));
                then.extend(rest.iter().map(clone_work));
                let mut other: Vec<Work> = Vec::new();
                match &x.else_branch {
                    Some((_, b)) => match &**b {
                        syn::Expr::Block(bl) => {
                            other.extend(bl.block.stmts.iter().map(Work::Stmt));
                            other.push(Work::Exit(depth));
                        }
                        e => other.push(Work::Expr(e)),
                    },
                    None => {}
                }
                other.extend(rest.iter().map(clone_work));
                let t = self.seq(&then, env.branch(value_block), end, value_block, hint);
                let f = self.seq(&other, env.branch(value_block), end, value_block, hint);
                let (Ok(cond), Ok(t), Ok(f)) = (cond, t, f) else { return Some(Err(())) };
                let mut out = Vec::with_capacity(t.len());
                for (a, b) in t.into_iter().zip(f) {
                    match self.select(cond, a, b, x.span()) {
                        Ok(v) => out.push(v),
                        Err(()) => return Some(Err(())),
                    }
                }
                Some(Ok(out))
            }
            syn::Expr::Block(b) if b.label.is_none() => {
                let mut w: Vec<Work> = b.block.stmts.iter().map(Work::Stmt).collect();
                w.push(Work::Exit(env.0.len()));
                w.extend(rest.iter().map(clone_work));
                Some(self.seq(&w, env.branch(value_block), end, value_block, hint))
            }
            syn::Expr::ForLoop(f) => {
                let (var, range) = match (&*f.pat, &*f.expr) {
                    (syn::Pat::Ident(pi), syn::Expr::Range(r)) => (pi.ident.to_string(), r),
                    _ => {
                        self.err_help(
                            f.for_token.span(),
                            "a `for` loop runs over a constant range",
                            "write `for i in 0..N` with integer literals",
                        );
                        return Some(Err(()));
                    }
                };
                let bound = |e: &Option<Box<syn::Expr>>| match e.as_deref() {
                    Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. })) => i.base10_parse::<i64>().ok(),
                    _ => None,
                };
                let (Some(lo), Some(hi)) = (bound(&range.start), bound(&range.end)) else {
                    self.err_help(
                        range.span(),
                        "a `for` loop runs over a constant range",
                        "write the bounds as integer literals, e.g. `0..4`",
                    );
                    return Some(Err(()));
                };
                let hi = if matches!(range.limits, syn::RangeLimits::Closed(_)) { hi + 1 } else { hi };
                if hi - lo > MAX_UNROLL as i64 {
                    self.err(range.span(), format!("this loop runs {} times; at most {MAX_UNROLL} iterations are allowed", hi - lo));
                    return Some(Err(()));
                }
                let ty = if lo < 0 { Scalar::I32 } else { Scalar::U32 };
                let mut w = Vec::new();
                for k in lo.max(0).min(hi)..hi.max(lo) {
                    let Ok(h) = self.push(Expr::Literal(Literal::Int(k, ty)), ty, f.pat.span()) else { return Some(Err(())) };
                    w.push(Work::Bind(var.clone(), h));
                    w.extend(f.body.stmts.iter().map(Work::Stmt));
                    w.push(Work::Exit(env.0.len()));
                }
                w.extend(rest.iter().map(clone_work));
                Some(self.seq(&w, env.branch(value_block), end, value_block, hint))
            }
            syn::Expr::Assign(a) => {
                self.assign(&a.left, None, &a.right, env, a.span());
                None
            }
            syn::Expr::Binary(b) if compound(&b.op).is_some() => {
                self.assign(&b.left, compound(&b.op), &b.right, env, b.span());
                None
            }
            syn::Expr::MethodCall(m) if self.is_move(m) => {
                self.move_walker(m, env);
                None
            }
            _ if tail && self.mode.effects() && !value_block => {
                self.err_help(
                    e.span(),
                    format!("`{}` returns nothing, but this is a value", self.mode.name()),
                    "assign it to a state field, or end it with `;` if it is not needed",
                );
                None
            }
            _ if tail => {
                let v = self.expr(e, env, hint).map(|v| vec![v]);
                // An expression already reported (`while`, a macro, …) is not also a value
                // that "ends the walk".
                if !only_exits && v.is_ok() {
                    self.err_help(e.span(), "this value ends the walk, but statements follow it", "end it with `;` or move it last");
                }
                Some(v)
            }
            _ => {
                self.err_help(
                    e.span(),
                    "this statement has no effect",
                    "a walk's statements are `let`, assignments to `let mut` locals and state fields, `if`, `for` and `return`",
                );
                None
            }
        }
    }

    fn local(&mut self, local: &syn::Local, env: &mut Env) {
        let (name, mutable, ty) = match &local.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => (pi.ident.to_string(), pi.mutability.is_some(), None),
            syn::Pat::Type(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => match scalar_of(&pt.ty) {
                    Some(s) => (pi.ident.to_string(), pi.mutability.is_some(), Some(s)),
                    None => {
                        self.err(pt.ty.span(), "locals are f32, f64, i32, u32 or bool");
                        return;
                    }
                },
                other => {
                    self.err(other.span(), "bind one local per `let`, e.g. `let x = ...;`");
                    return;
                }
            },
            other => {
                self.err(other.span(), "bind one local per `let`, e.g. `let x = ...;`");
                return;
            }
        };
        let Some(init) = &local.init else {
            self.err_help(local.span(), format!("`{name}` needs a value"), format!("write `let {name} = <value>;`"));
            return;
        };
        if let Some((_, d)) = &init.diverge {
            self.err(d.span(), "`let ... else` is not part of the walk language");
        }
        if name == self.step || self.params.iter().any(|p| p.name == name) {
            self.err(local.pat.span(), format!("`{name}` shadows the step or a hyperparameter; choose another name"));
            return;
        }
        match self.expr(&init.expr, env, ty) {
            Ok(v) => {
                if let Some(t) = ty
                    && self.ty(v) != t
                {
                    let found = self.ty(v).name();
                    self.err_help(
                        init.expr.span(),
                        format!("expected `{}`, found `{found}`", t.name()),
                        format!("convert with `as {}`", t.name()),
                    );
                }
                env.0.push(Binding { name, value: v, mutable });
            }
            Err(()) => {
                // Bind a placeholder so later uses do not report a second, confusing error.
                if let Ok(p) = self.push(Expr::Literal(Literal::Float(0.0, Scalar::F32)), ty.unwrap_or(Scalar::F32), local.span()) {
                    env.0.push(Binding { name, value: p, mutable });
                }
            }
        }
    }

    fn assign(&mut self, left: &syn::Expr, op: Option<BinaryOp>, right: &syn::Expr, env: &mut Env, span: Span) {
        if let syn::Expr::Field(fe) = left {
            let Some(key) = self.state_key(fe) else { return };
            if !self.mode.effects() {
                self.err_help(
                    left.span(),
                    format!("`{}` cannot change the walker's state", self.mode.name()),
                    "state changes belong in `update` (or `init`)",
                );
                return;
            }
            return self.assign_binding(&key, left, op, right, env, span);
        }
        let syn::Expr::Path(p) = left else {
            self.err(left.span(), "only `let mut` locals and state fields can be assigned");
            return;
        };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            self.err(left.span(), "only `let mut` locals and state fields can be assigned");
            return;
        };
        let Some(idx) = env.find(&name) else {
            if self.params.iter().any(|q| q.name == name) || name == self.step {
                self.err_help(
                    left.span(),
                    format!("cannot assign to `{name}`"),
                    "hyperparameters and the step are read-only; copy into a `let mut` local",
                );
            } else {
                self.err(left.span(), format!("cannot find `{name}` in this walk"));
            }
            return;
        };
        if !env.0[idx].mutable {
            self.err_help(left.span(), format!("cannot assign twice to immutable local `{name}`"), format!("declare it `let mut {name}`"));
            return;
        }
        self.assign_binding(&name, left, op, right, env, span)
    }

    /// Assigns binding `key` (a `let mut` local or a state field).
    fn assign_binding(&mut self, key: &str, left: &syn::Expr, op: Option<BinaryOp>, right: &syn::Expr, env: &mut Env, span: Span) {
        let idx = env.find(key).expect("the caller checked");
        let name = key.strip_prefix(STATE).unwrap_or(key);
        if idx < self.value_floor {
            self.err_help(
                left.span(),
                format!("`{name}` cannot be assigned inside a value expression"),
                "the assignment would be lost; use an `if` statement instead of an `if` value",
            );
            return;
        }
        let old = env.0[idx].value;
        let t = self.ty(old);
        let Ok(r) = self.expr(right, env, Some(t)) else { return };
        let value = match op {
            None => r,
            Some(op) => match self.binary_typed(op, old, r, span) {
                Ok(v) => v,
                Err(()) => return,
            },
        };
        if self.ty(value) != t {
            let found = self.ty(value).name();
            self.err(right.span(), format!("`{name}` is `{}`, but this is `{found}`", t.name()));
            return;
        }
        env.0[idx].value = value;
    }

    fn cond(&mut self, e: &syn::Expr, env: &Env) -> Lowered {
        let c = self.expr(e, env, Some(Scalar::Bool))?;
        if self.ty(c) != Scalar::Bool {
            let t = self.ty(c).name();
            self.err(e.span(), format!("a condition must be `bool`, found `{t}`"));
            return Err(());
        }
        Ok(c)
    }

    fn select(&mut self, cond: Handle<Expr>, then: Handle<Expr>, other: Handle<Expr>, span: Span) -> Lowered {
        let (a, b) = (self.ty(then), self.ty(other));
        if a != b {
            self.err_help(span, format!("the branches have different types: `{}` and `{}`", a.name(), b.name()), "convert one with `as`");
            return Err(());
        }
        if then == other {
            return Ok(then);
        }
        self.push(Expr::Select { cond, then, other }, a, span)
    }

    fn literal(&mut self, lit: &syn::Lit, hint: Option<Scalar>, span: Span, negate: bool) -> Lowered {
        match lit {
            syn::Lit::Float(f) => {
                let ty = match f.suffix() {
                    "f32" => Scalar::F32,
                    "f64" => Scalar::F64,
                    "" => match hint {
                        Some(h) if h.is_float() => h,
                        Some(h) if h.is_int() => {
                            self.err(span, format!("expected `{}`, found a float literal", h.name()));
                            return Err(());
                        }
                        _ => Scalar::F32,
                    },
                    s => {
                        self.err(span, format!("unknown literal suffix `{s}`"));
                        return Err(());
                    }
                };
                let v: f64 = f.base10_parse().map_err(|_| self.err(span, "invalid float literal"))?;
                let v = if negate { -v } else { v };
                if ty == Scalar::F32 && v.is_finite() && (v as f32).is_infinite() {
                    self.err(span, "this literal overflows `f32`");
                    return Err(());
                }
                self.push(Expr::Literal(Literal::Float(v, ty)), ty, span)
            }
            syn::Lit::Int(i) => {
                let ty = match i.suffix() {
                    "u32" => Scalar::U32,
                    "i32" => Scalar::I32,
                    "f32" => Scalar::F32,
                    "f64" => Scalar::F64,
                    "" => match hint {
                        Some(h) if h.is_int() => h,
                        Some(h) if h.is_float() => {
                            self.err_help(
                                span,
                                format!("expected `{}`, found an integer literal", h.name()),
                                format!("write `{}.0`", i.base10_digits()),
                            );
                            return Err(());
                        }
                        _ => Scalar::I32,
                    },
                    s => {
                        self.err_help(span, format!("unsupported integer type `{s}`"), "walk integers are i32 or u32");
                        return Err(());
                    }
                };
                let v: i64 = i.base10_parse().map_err(|_| self.err(span, "integer literal out of range"))?;
                let v = if negate { -v } else { v };
                if ty.is_float() {
                    return self.push(Expr::Literal(Literal::Float(v as f64, ty)), ty, span);
                }
                let ok = match ty {
                    Scalar::U32 => (0..=u32::MAX as i64).contains(&v),
                    _ => (i32::MIN as i64..=i32::MAX as i64).contains(&v),
                };
                if !ok {
                    self.err(span, format!("literal {v} does not fit in `{}`", ty.name()));
                    return Err(());
                }
                self.push(Expr::Literal(Literal::Int(v, ty)), ty, span)
            }
            syn::Lit::Bool(b) => self.push(Expr::Literal(Literal::Bool(b.value)), Scalar::Bool, span),
            _ => {
                self.err(span, "only number and bool literals are part of the walk language");
                Err(())
            }
        }
    }

    fn expr(&mut self, e: &syn::Expr, env: &Env, hint: Option<Scalar>) -> Lowered {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.literal(&l.lit, hint, span, false),
            syn::Expr::Paren(p) => self.expr(&p.expr, env, hint),
            syn::Expr::Group(g) => self.expr(&g.expr, env, hint),
            syn::Expr::Path(p) => self.path(p, env),
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => {
                    if let syn::Expr::Lit(l) = &*u.expr {
                        if hint == Some(Scalar::U32) || (hint.is_none() && matches!(l.lit, syn::Lit::Int(ref i) if i.suffix() == "u32")) {
                            self.err(span, "a `u32` cannot be negative");
                            return Err(());
                        }
                        return self.literal(&l.lit, hint, span, true);
                    }
                    let a = self.expr(&u.expr, env, hint)?;
                    let t = self.ty(a);
                    if !(t.is_float() || t == Scalar::I32) {
                        self.err(span, format!("cannot negate a `{}`", t.name()));
                        return Err(());
                    }
                    self.push(Expr::Unary { op: UnaryOp::Neg, arg: a }, t, span)
                }
                syn::UnOp::Not(_) => {
                    let a = self.expr(&u.expr, env, Some(Scalar::Bool))?;
                    if self.ty(a) != Scalar::Bool {
                        let t = self.ty(a).name();
                        self.err_help(
                            span,
                            format!("`!` applies to `bool`, found `{t}`"),
                            "bitwise operators are not part of the walk language",
                        );
                        return Err(());
                    }
                    self.push(Expr::Unary { op: UnaryOp::Not, arg: a }, Scalar::Bool, span)
                }
                _ => {
                    self.err_help(span, "dereferencing is not part of the walk language", "values in a walk are plain numbers");
                    Err(())
                }
            },
            syn::Expr::Binary(b) => {
                let Some(op) = binop(&b.op) else {
                    if compound(&b.op).is_some() {
                        self.err_help(b.op.span(), "an assignment cannot be used as a value", "write it as its own statement");
                    } else {
                        self.err_help(b.op.span(), "bitwise and shift operators are not part of the walk language", ALLOWED);
                    }
                    return Err(());
                };
                if matches!(op, BinaryOp::And | BinaryOp::Or) {
                    let l = self.cond(&b.left, env);
                    let r = self.cond(&b.right, env);
                    let (l, r) = (l?, r?);
                    return self.push(Expr::Binary { op, lhs: l, rhs: r }, Scalar::Bool, span);
                }
                let arith_hint = if op.is_comparison() { None } else { hint };
                let (l, r) = if is_literal(&b.left) && !is_literal(&b.right) {
                    let r = self.expr(&b.right, env, arith_hint);
                    let rt = r.map(|r| self.ty(r)).ok();
                    (self.expr(&b.left, env, rt.or(arith_hint)), r)
                } else {
                    let l = self.expr(&b.left, env, arith_hint);
                    let lt = l.map(|l| self.ty(l)).ok();
                    (l, self.expr(&b.right, env, lt.or(arith_hint)))
                };
                self.binary_typed(op, l?, r?, span)
            }
            syn::Expr::MethodCall(m) => self.method(m, env, hint),
            syn::Expr::Field(fe) => self.field(fe, env),
            syn::Expr::Cast(c) => {
                let to = match scalar_of(&c.ty) {
                    Some(Scalar::Bool) => {
                        self.err(c.ty.span(), "casting to `bool` is not allowed; compare instead, e.g. `x != 0`");
                        return Err(());
                    }
                    Some(t) => t,
                    // `as usize` is how Rust indexes arrays; in the IR an index is a u32.
                    None if is_usize(&c.ty) => Scalar::U32,
                    None => {
                        self.err(c.ty.span(), "casts go to f32, f64, i32 or u32");
                        return Err(());
                    }
                };
                let v = self.expr(&c.expr, env, None)?;
                if self.ty(v) == to {
                    return Ok(v);
                }
                self.push(Expr::Cast { expr: v, to }, to, span)
            }
            syn::Expr::Index(ix) => {
                let name = match &*ix.expr {
                    syn::Expr::Path(p) if !self.impl_form => p.path.get_ident().map(|i| i.to_string()).unwrap_or_default(),
                    syn::Expr::Field(fe) if self.impl_form && is_self(&fe.base) => member_name(&fe.member),
                    _ => {
                        let how = if self.impl_form { "`self.name[i]`" } else { "`name[i]`" };
                        self.err_help(ix.expr.span(), "only array hyperparameters can be indexed", format!("write {how}"));
                        return Err(());
                    }
                };
                let Some((param, ParamType::Array(elem, _))) =
                    self.params.iter().enumerate().find(|(_, q)| q.name == name).map(|(i, q)| (i, q.ty))
                else {
                    self.err(ix.expr.span(), format!("`{name}` is not an array hyperparameter"));
                    return Err(());
                };
                let index = self.expr(&ix.index, env, Some(Scalar::U32))?;
                if !self.ty(index).is_int() {
                    let t = self.ty(index).name();
                    self.err(ix.index.span(), format!("an index must be an integer, found `{t}`"));
                    return Err(());
                }
                self.push(Expr::ParamIndex { param, index }, elem, span)
            }
            syn::Expr::If(x) => {
                let Some((_, other)) = &x.else_branch else {
                    self.err_help(span, "an `if` used as a value needs an `else`", "add `else { ... }`");
                    return Err(());
                };
                let cond = self.cond(&x.cond, env);
                let t = self.value_block(&x.then_branch.stmts, x.then_branch.brace_token.span.close(), env, hint);
                let t_hint = t.map(|t| self.ty(t)).ok().or(hint);
                let f = self.expr(other, env, t_hint);
                self.select(cond?, t?, f?, span)
            }
            syn::Expr::Block(b) if b.label.is_none() => self.value_block(&b.block.stmts, b.block.brace_token.span.close(), env, hint),
            syn::Expr::Match(m) => self.match_expr(m, env, hint),
            syn::Expr::Return(_) => {
                self.err_help(
                    span,
                    "`return` inside a value expression",
                    "use `if`/`else` at the statement level of the walk to return early",
                );
                Err(())
            }
            syn::Expr::Call(c) => {
                let name = match &*c.func {
                    syn::Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
                    _ => String::new(),
                };
                self.err_help(
                    span,
                    format!("function calls are not part of the walk language (`{name}`)"),
                    format!("use methods: `x.min(y)`, `x.exp()`, `{}.has_edge(u, v)`, …", self.step),
                );
                Err(())
            }
            other => {
                let kind = expr_kind(other);
                self.err_help(span, format!("{kind} is not part of the walk language"), ALLOWED);
                Err(())
            }
        }
    }

    fn value_block(&mut self, stmts: &[syn::Stmt], end: Span, env: &Env, hint: Option<Scalar>) -> Lowered {
        let work: Vec<Work> = stmts.iter().map(Work::Stmt).collect();
        let floor = std::mem::replace(&mut self.value_floor, env.0.len());
        let v = self.seq(&work, env.clone(), end, true, hint).map(|v| v[0]);
        self.value_floor = floor;
        v
    }

    fn match_expr(&mut self, m: &syn::ExprMatch, env: &Env, hint: Option<Scalar>) -> Lowered {
        let scrut = self.expr(&m.expr, env, Some(Scalar::U32))?;
        let st = self.ty(scrut);
        if !st.is_int() {
            self.err(m.expr.span(), format!("`match` works on integers, found `{}`", st.name()));
            return Err(());
        }
        let mut arms = Vec::new();
        let mut default = None;
        for (k, arm) in m.arms.iter().enumerate() {
            if let Some((i, _)) = &arm.guard {
                self.err_help(i.span(), "match guards are not part of the walk language", "use `if` inside the arm");
                return Err(());
            }
            let mut values = Vec::new();
            let pats: Vec<&syn::Pat> = match &arm.pat {
                syn::Pat::Or(o) => o.cases.iter().collect(),
                p => vec![p],
            };
            let mut wild = false;
            for p in pats {
                match p {
                    syn::Pat::Wild(_) => wild = true,
                    syn::Pat::Lit(l) => match self.literal(&l.lit, Some(st), l.span(), false) {
                        Ok(h) => values.push(h),
                        Err(()) => return Err(()),
                    },
                    other => {
                        self.err_help(
                            other.span(),
                            "match arms are integer literals, `a | b`, or `_`",
                            "ranges and bindings are not supported",
                        );
                        return Err(());
                    }
                }
            }
            let body = self.expr(&arm.body, env, hint)?;
            if wild {
                if k + 1 != m.arms.len() {
                    self.err(arm.pat.span(), "`_` must be the last arm");
                    return Err(());
                }
                default = Some(body);
            } else {
                arms.push((values, body, arm.span()));
            }
        }
        let Some(mut acc) = default else {
            self.err_help(m.span(), "this `match` does not cover every value", "add a last arm `_ => ...`");
            return Err(());
        };
        for (values, body, span) in arms.into_iter().rev() {
            let mut cond: Option<Handle<Expr>> = None;
            for v in values {
                let eq = self.push(Expr::Binary { op: BinaryOp::Eq, lhs: scrut, rhs: v }, Scalar::Bool, span)?;
                cond = Some(match cond {
                    None => eq,
                    Some(c) => self.push(Expr::Binary { op: BinaryOp::Or, lhs: c, rhs: eq }, Scalar::Bool, span)?,
                });
            }
            acc = self.select(cond.expect("an arm has a pattern"), body, acc, span)?;
        }
        Ok(acc)
    }

    fn binary_typed(&mut self, op: BinaryOp, l: Handle<Expr>, r: Handle<Expr>, span: Span) -> Lowered {
        let (a, b) = (self.ty(l), self.ty(r));
        if a != b {
            self.err_help(
                span,
                format!("mismatched types: `{}` {} `{}`", a.name(), op.symbol(), b.name()),
                "convert one side with `as`, e.g. `x as f32`",
            );
            return Err(());
        }
        if op.is_comparison() {
            if a == Scalar::Bool && !matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
                self.err(span, "`bool` values can only be compared with == and !=");
                return Err(());
            }
            return self.push(Expr::Binary { op, lhs: l, rhs: r }, Scalar::Bool, span);
        }
        if a == Scalar::Bool {
            self.err_help(span, format!("`{}` does not apply to `bool`", op.symbol()), "use && and || for conditions");
            return Err(());
        }
        self.push(Expr::Binary { op, lhs: l, rhs: r }, a, span)
    }

    fn path(&mut self, p: &syn::ExprPath, env: &Env) -> Lowered {
        let span = p.span();
        if p.qself.is_none() && p.path.segments.len() == 2 {
            let (ty, c) = (p.path.segments[0].ident.to_string(), p.path.segments[1].ident.to_string());
            let lit = match (ty.as_str(), c.as_str()) {
                ("f32", "INFINITY") => Some(Literal::Float(f64::INFINITY, Scalar::F32)),
                ("f32", "NEG_INFINITY") => Some(Literal::Float(f64::NEG_INFINITY, Scalar::F32)),
                ("f32", "MAX") => Some(Literal::Float(f32::MAX as f64, Scalar::F32)),
                ("f32", "MIN") => Some(Literal::Float(f32::MIN as f64, Scalar::F32)),
                ("f64", "INFINITY") => Some(Literal::Float(f64::INFINITY, Scalar::F64)),
                ("f64", "NEG_INFINITY") => Some(Literal::Float(f64::NEG_INFINITY, Scalar::F64)),
                ("f64", "MAX") => Some(Literal::Float(f64::MAX, Scalar::F64)),
                ("f64", "MIN") => Some(Literal::Float(f64::MIN, Scalar::F64)),
                ("u32", "MAX") => Some(Literal::Int(u32::MAX as i64, Scalar::U32)),
                ("i32", "MAX") => Some(Literal::Int(i32::MAX as i64, Scalar::I32)),
                ("i32", "MIN") => Some(Literal::Int(i32::MIN as i64, Scalar::I32)),
                _ => None,
            };
            if let Some(l) = lit {
                let t = match l {
                    Literal::Float(_, t) | Literal::Int(_, t) => t,
                    Literal::Bool(_) => Scalar::Bool,
                };
                return self.push(Expr::Literal(l), t, span);
            }
        }
        let Some(ident) = p.path.get_ident() else {
            self.err_help(
                span,
                "paths are not part of the walk language",
                "refer to locals, hyperparameters, `NO_NODE`, or constants such as `f64::INFINITY`, `f32::MAX`, `u32::MAX`",
            );
            return Err(());
        };
        let name = ident.to_string();
        if let Some(i) = env.find(&name) {
            return Ok(env.0[i].value);
        }
        if name == "self" {
            self.err_help(span, "`self` is not a value", "read a hyperparameter with `self.name`");
            return Err(());
        }
        if self.impl_form && self.params.iter().any(|q| q.name == name) {
            self.err_help(span, format!("cannot find `{name}` in this walk"), format!("hyperparameters are fields: write `self.{name}`"));
            return Err(());
        }
        if let Some((i, q)) = self.params.iter().enumerate().find(|(_, q)| q.name == name) {
            return match q.ty {
                ParamType::Scalar(t) => self.push(Expr::Param(i), t, span),
                ParamType::Array(..) => {
                    self.err_help(span, format!("`{name}` is an array"), format!("index it: `{name}[i]`"));
                    Err(())
                }
            };
        }
        if name == "NO_NODE" {
            return self.push(Expr::Literal(Literal::Int(u32::MAX as i64, Scalar::U32)), Scalar::U32, span);
        }
        if name == self.step {
            self.err_help(
                span,
                format!("`{name}` is the step, not a value"),
                format!("read it with an accessor: `{name}.weight()`, `{name}.dst()`, `{name}.prev()`, …"),
            );
            return Err(());
        }
        self.err(span, format!("cannot find `{name}` in this walk"));
        Err(())
    }

    fn method(&mut self, m: &syn::ExprMethodCall, env: &Env, hint: Option<Scalar>) -> Lowered {
        let span = m.span();
        let name = m.method.to_string();
        if m.turbofish.is_some() {
            self.err(m.method.span(), "generic method calls are not part of the walk language");
            return Err(());
        }
        if !self.rng_arg.is_empty() && matches!(&*m.receiver, syn::Expr::Path(p) if p.path.is_ident(&self.rng_arg)) {
            if self.mode == Mode::Weight {
                return Err(()); // the signature's error covers it
            }
            if name != "uniform" || !m.args.is_empty() {
                self.err_help(
                    m.method.span(),
                    format!("`{}` has no method `{name}` in the walk language", self.rng_arg),
                    format!("draw a uniform f64 in (0, 1) with `{}.uniform()`", self.rng_arg),
                );
                return Err(());
            }
            let k = env.1.get();
            env.1.set(k + 1);
            self.draws = self.draws.max(k + 1);
            return self.push_new(Expr::Draw(k), Scalar::F64, span);
        }
        let on_step = matches!(&*m.receiver, syn::Expr::Path(p) if p.path.is_ident(&self.step));
        if on_step {
            if let Some(f) = StepField::ALL.iter().copied().find(|f| f.signature().0 == name) {
                if !m.args.is_empty() {
                    self.err(m.args.span(), format!("`{}.{name}()` takes no arguments", self.step));
                    return Err(());
                }
                if self.mode == Mode::Init && f.is_per_edge() {
                    self.err_help(
                        m.method.span(),
                        format!("`init` runs before the first move: there is no edge for `{name}()`"),
                        "read edges in `get_weight`, or the edge just taken in `update`",
                    );
                    return Err(());
                }
                return self.push(Expr::Step(f), f.signature().1, span);
            }
            if name == "restart" || name == "teleport" {
                self.err_help(m.method.span(), format!("`{name}` moves the walker and has no value"), "call it as a statement in `update`");
                return Err(());
            }
            if name == "node_prop" {
                return self.node_prop(m, env);
            }
            let (func, arity) = match name.as_str() {
                "has_edge" => (Builtin::HasEdge, 2),
                "degree" => (Builtin::Degree, 1),
                _ => {
                    let accessors: Vec<&str> = StepField::ALL.iter().map(|f| f.signature().0).collect();
                    self.err_help(
                        m.method.span(),
                        format!("`{}` has no method `{name}`", self.step),
                        format!("the step has {}(), has_edge(u, v), degree(v) and node_prop(\"name\", v)", accessors.join("(), ")),
                    );
                    return Err(());
                }
            };
            if m.args.len() != arity {
                self.err(m.method.span(), format!("`{name}` takes {arity} argument{}", if arity == 1 { "" } else { "s" }));
                return Err(());
            }
            let mut args = Vec::new();
            for a in &m.args {
                let h = self.expr(a, env, Some(Scalar::U32))?;
                if self.ty(h) != Scalar::U32 {
                    let t = self.ty(h).name();
                    self.err_help(
                        a.span(),
                        format!("`{name}` takes node ids (`u32`), found `{t}`"),
                        "node ids come from cur(), prev(), start() or dst()",
                    );
                    return Err(());
                }
                args.push(h);
            }
            let ty = if func == Builtin::HasEdge { Scalar::Bool } else { Scalar::U32 };
            return self.push(Expr::Call { func, args }, ty, span);
        }
        let (func, arity) = match name.as_str() {
            "min" => (Builtin::Min, 1),
            "max" => (Builtin::Max, 1),
            "abs" => (Builtin::Abs, 0),
            "exp" => (Builtin::Exp, 0),
            "ln" => (Builtin::Ln, 0),
            "sqrt" => (Builtin::Sqrt, 0),
            "powf" => (Builtin::Powf, 1),
            _ => {
                self.err_help(m.method.span(), format!("unknown method `{name}`"), "numbers have min, max, abs, exp, ln, sqrt and powf");
                return Err(());
            }
        };
        if m.args.len() != arity {
            self.err(m.method.span(), format!("`{name}` takes {arity} argument{}", if arity == 1 { "" } else { "s" }));
            return Err(());
        }
        let recv = if is_literal(&m.receiver) && arity == 1 {
            let a = self.expr(&m.args[0], env, hint)?;
            let t = self.ty(a);
            let r = self.expr(&m.receiver, env, Some(t))?;
            return self.builtin(func, vec![r, a], span);
        } else {
            self.expr(&m.receiver, env, hint)?
        };
        let t = self.ty(recv);
        let mut args = vec![recv];
        for a in &m.args {
            args.push(self.expr(a, env, Some(t))?);
        }
        self.builtin(func, args, span)
    }

    fn node_prop(&mut self, m: &syn::ExprMethodCall, env: &Env) -> Lowered {
        let span = m.span();
        let name = match m.args.first() {
            Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })) if m.args.len() == 2 => s.value(),
            _ => {
                self.err_help(m.method.span(), "`node_prop` takes a property name and a node", "write `s.node_prop(\"score\", s.dst())`");
                return Err(());
            }
        };
        let node = self.expr(&m.args[1], env, Some(Scalar::U32))?;
        if self.ty(node) != Scalar::U32 {
            let t = self.ty(node).name();
            self.err(m.args[1].span(), format!("`node_prop` takes a node id (`u32`), found `{t}`"));
            return Err(());
        }
        let i = match self.props.iter().position(|p| *p == name) {
            Some(i) => i,
            None => {
                self.props.push(name);
                self.props.len() - 1
            }
        };
        self.push(Expr::Call { func: Builtin::NodeProp(i as u16), args: vec![node] }, Scalar::F32, span)
    }

    /// `state.field` as the key of its binding; reports an error and returns `None` otherwise.
    fn state_key(&mut self, fe: &syn::ExprField) -> Option<String> {
        let member = member_name(&fe.member);
        if is_self(&fe.base) {
            self.err_help(
                fe.span(),
                format!("cannot assign to hyperparameter `self.{member}`"),
                "hyperparameters are read-only; copy into a `let mut` local",
            );
            return None;
        }
        let on_state = !self.state_arg.is_empty() && matches!(&*fe.base, syn::Expr::Path(p) if p.path.is_ident(&self.state_arg));
        if !on_state {
            self.err_help(
                fe.span(),
                "only state fields can be assigned this way",
                "state fields are `st.name`, with `st` the state argument",
            );
            return None;
        }
        if !self.state.iter().any(|f| f.name == member) {
            self.err_help(fe.member.span(), format!("the state has no field `{member}`"), self.state_help());
            return None;
        }
        Some(format!("{STATE}{member}"))
    }

    fn state_help(&self) -> String {
        if self.state.is_empty() {
            "declare state fields in the attribute: `#[walk(state(name: f64))]`".into()
        } else {
            let names: Vec<String> = self.state.iter().map(|f| format!("`{}: {}`", f.name, f.ty.name())).collect();
            format!("the state fields are {}", names.join(", "))
        }
    }

    /// `self.param` or `state.field` as a value.
    fn field(&mut self, fe: &syn::ExprField, env: &Env) -> Lowered {
        let span = fe.span();
        let member = member_name(&fe.member);
        if is_self(&fe.base) && !self.impl_form {
            let help = if self.params.iter().any(|q| q.name == member) {
                format!("in a `fn` walk, hyperparameters are the function's parameters: write `{member}`")
            } else {
                "in a `fn` walk, hyperparameters are the function's parameters after `s: &Step`".to_string()
            };
            self.err_help(fe.base.span(), "`self` exists only in walks written as an `impl`", help);
            return Err(());
        }
        if is_self(&fe.base) {
            let found = self.params.iter().enumerate().find(|(_, q)| q.name == member).map(|(i, q)| (i, q.ty));
            return match found {
                Some((i, ParamType::Scalar(t))) => self.push(Expr::Param(i), t, span),
                Some((_, ParamType::Array(..))) => {
                    self.err_help(span, format!("`self.{member}` is an array"), format!("index it: `self.{member}[i]`"));
                    Err(())
                }
                None => {
                    let help = if self.params.is_empty() {
                        "declare hyperparameters in the attribute: `#[walk(params(alpha: f32))]`".to_string()
                    } else {
                        let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                        format!("the hyperparameters are {}", names.join(", "))
                    };
                    self.err_help(fe.member.span(), format!("no hyperparameter `{member}`"), help);
                    Err(())
                }
            };
        }
        let on_state = !self.state_arg.is_empty() && matches!(&*fe.base, syn::Expr::Path(p) if p.path.is_ident(&self.state_arg));
        if on_state {
            return match env.find(&format!("{STATE}{member}")) {
                Some(i) => Ok(env.0[i].value),
                None => {
                    let help = self.state_help();
                    self.err_help(fe.member.span(), format!("the state has no field `{member}`"), help);
                    Err(())
                }
            };
        }
        self.err_help(
            span,
            "field access is not part of the walk language here",
            "fields are hyperparameters (`self.name`, impl form) and state fields (`st.name`)",
        );
        Err(())
    }

    /// Whether a statement is `s.restart()` or `s.teleport(v)`.
    fn is_move(&self, m: &syn::ExprMethodCall) -> bool {
        matches!(&*m.receiver, syn::Expr::Path(p) if p.path.is_ident(&self.step)) && (m.method == "restart" || m.method == "teleport")
    }

    /// `s.restart()` (back to the start node) or `s.teleport(v)`: the walker continues from
    /// there, with no previous node.
    fn move_walker(&mut self, m: &syn::ExprMethodCall, env: &mut Env) {
        let name = m.method.to_string();
        if self.mode != Mode::Update {
            self.err_help(
                m.method.span(),
                format!("`{}` cannot move the walker", self.mode.name()),
                "restarts and teleports belong in `update`",
            );
            return;
        }
        let target = if name == "restart" {
            if !m.args.is_empty() {
                self.err(m.args.span(), "`restart()` takes no arguments");
                return;
            }
            self.push(Expr::Step(StepField::Start), Scalar::U32, m.span())
        } else {
            if m.args.len() != 1 {
                self.err_help(m.method.span(), "`teleport` takes one node", "write `s.teleport(v)`");
                return;
            }
            let v = self.expr(&m.args[0], env, Some(Scalar::U32));
            if let Ok(v) = v
                && self.ty(v) != Scalar::U32
            {
                let t = self.ty(v).name();
                self.err(m.args[0].span(), format!("`teleport` takes a node id (`u32`), found `{t}`"));
                return;
            }
            v
        };
        let Ok(target) = target else { return };
        let Ok(none) = self.push(Expr::Literal(Literal::Int(u32::MAX as i64, Scalar::U32)), Scalar::U32, m.span()) else { return };
        let i = env.find(NEW_CUR).expect("seeded in update");
        if i < self.value_floor {
            self.err_help(m.span(), "the walker cannot be moved inside a value expression", "use an `if` statement");
            return;
        }
        env.0[i].value = target;
        let j = env.find(NEW_PREV).expect("seeded in update");
        env.0[j].value = none;
    }

    fn builtin(&mut self, func: Builtin, args: Vec<Handle<Expr>>, span: Span) -> Lowered {
        let t = self.ty(args[0]);
        if let Some(&b) = args.get(1)
            && self.ty(b) != t
        {
            let bt = self.ty(b).name();
            self.err_help(
                span,
                format!("`{}` needs two values of one type, found `{}` and `{bt}`", func.name(), t.name()),
                "convert one with `as`",
            );
            return Err(());
        }
        let ok = match func {
            Builtin::Min | Builtin::Max => t != Scalar::Bool,
            Builtin::Abs => t.is_float() || t == Scalar::I32,
            _ => t.is_float(),
        };
        if !ok {
            self.err(span, format!("`{}` does not apply to `{}`", func.name(), t.name()));
            return Err(());
        }
        self.push(Expr::Call { func, args }, t, span)
    }
}

/// The span of a type's name (`StepRng` in `&mut StepRng`): on stable Rust a span covers one
/// token, and the name is the one to point at.
fn type_span(t: &syn::Type) -> Span {
    match t {
        syn::Type::Reference(r) => type_span(&r.elem),
        syn::Type::Path(p) => p.path.segments.last().map_or(p.span(), |s| s.ident.span()),
        other => other.span(),
    }
}

fn is_self(e: &syn::Expr) -> bool {
    matches!(e, syn::Expr::Path(p) if p.path.is_ident("self"))
}

fn member_name(m: &syn::Member) -> String {
    match m {
        syn::Member::Named(i) => i.to_string(),
        syn::Member::Unnamed(i) => i.index.to_string(),
    }
}

fn clone_work<'a>(w: &Work<'a>) -> Work<'a> {
    match w {
        Work::Stmt(s) => Work::Stmt(s),
        Work::Expr(e) => Work::Expr(e),
        Work::Bind(n, h) => Work::Bind(n.clone(), *h),
        Work::Exit(d) => Work::Exit(*d),
    }
}

fn binop(op: &syn::BinOp) -> Option<BinaryOp> {
    Some(match op {
        syn::BinOp::Add(_) => BinaryOp::Add,
        syn::BinOp::Sub(_) => BinaryOp::Sub,
        syn::BinOp::Mul(_) => BinaryOp::Mul,
        syn::BinOp::Div(_) => BinaryOp::Div,
        syn::BinOp::Rem(_) => BinaryOp::Rem,
        syn::BinOp::Eq(_) => BinaryOp::Eq,
        syn::BinOp::Ne(_) => BinaryOp::Ne,
        syn::BinOp::Lt(_) => BinaryOp::Lt,
        syn::BinOp::Le(_) => BinaryOp::Le,
        syn::BinOp::Gt(_) => BinaryOp::Gt,
        syn::BinOp::Ge(_) => BinaryOp::Ge,
        syn::BinOp::And(_) => BinaryOp::And,
        syn::BinOp::Or(_) => BinaryOp::Or,
        _ => return None,
    })
}

fn compound(op: &syn::BinOp) -> Option<BinaryOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinaryOp::Add,
        syn::BinOp::SubAssign(_) => BinaryOp::Sub,
        syn::BinOp::MulAssign(_) => BinaryOp::Mul,
        syn::BinOp::DivAssign(_) => BinaryOp::Div,
        syn::BinOp::RemAssign(_) => BinaryOp::Rem,
        _ => return None,
    })
}
