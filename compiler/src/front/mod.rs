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

mod builtins;
mod expr;
mod params;
mod stmt;
mod surface;

pub use surface::lower_walk_impl;

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
    lower_walk_fn(proc_macro2::TokenStream::new(), item)
}

/// Lowers a `#[walk(defaults(..), check(..))] fn ...`; `attr` is the attribute's argument
/// tokens (empty for a bare `#[walk]`).
pub fn lower_walk_fn(attr: proc_macro2::TokenStream, item: &syn::ItemFn) -> Result<Program, Diagnostics> {
    lower_fn(attr, item, Returns::Weight).map(|(program, _)| program)
}

/// The `///` documentation of an item, one line per doc attribute, trimmed.
pub(crate) fn doc_of(attrs: &[syn::Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    lines.join("\n").trim().to_string()
}

/// The IR's place for a token span.
pub(crate) fn ir_span(span: Span) -> crate::ir::Span {
    let (start, end) = (span.start(), span.end());
    let n = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
    crate::ir::Span { line: n(start.line), column: n(start.column), end_line: n(end.line), end_column: n(end.column) }
}

/// Lowers a function-form item; with the program comes each expression's token span, by
/// handle index, for diagnostics found after lowering.
fn lower_fn(attr: proc_macro2::TokenStream, item: &syn::ItemFn, returns: Returns) -> Result<(Program, Vec<Span>), Diagnostics> {
    let mut l = Lowerer::new(Mode::Weight, false);
    l.signature(&item.sig, returns);
    let (checks, length) = surface::fn_attribute(&mut l, attr);
    let mut result = l.body(&item.block).map(|v| v[0]);
    if let Ok(r) = result
        && l.diags.is_empty()
    {
        let t = l.types[r.index()];
        match returns {
            Returns::Weight if t != Scalar::F32 => l.diags.push(
                Diagnostic::error(l.token_span(r), format!("the weight must be an `f32`, found `{}`", t.name()))
                    .help("convert it with `as f32`"),
            ),
            Returns::Keep if t != Scalar::Bool => l.diags.push(
                Diagnostic::error(l.token_span(r), format!("a mask returns a `bool` (keep the edge or not), found `{}`", t.name()))
                    .help("compare, e.g. `s.weight() > t`"),
            ),
            Returns::Keep => {
                let span = l.token_span(r);
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
        Ok(result) if l.diags.is_empty() => Ok((
            Program {
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
                checks,
                length,
                doc: doc_of(&item.attrs),
                span: ir_span(item.span()),
            },
            l.tokens,
        )),
        _ => {
            if l.diags.is_empty() {
                l.diags.push(Diagnostic::error(item.sig.ident.span(), "the walk could not be compiled"));
            }
            Err(Diagnostics(l.diags))
        }
    }
}

/// The argument tokens of `#[walk(...)]` (none for a bare `#[walk]`).
fn attr_tokens(attr: &syn::Attribute) -> proc_macro2::TokenStream {
    match &attr.meta {
        syn::Meta::List(l) => l.tokens.clone(),
        _ => proc_macro2::TokenStream::new(),
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
        (Some((syn::Item::Fn(f), attr)), None) => lower_walk_fn(attr_tokens(&attr), f),
        (Some((syn::Item::Impl(m), attr)), None) => lower_walk_impl(attr_tokens(&attr), m),
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
    let (program, tokens) = lower_fn(proc_macro2::TokenStream::new(), f, Returns::Keep)?;
    no_walker_history(program, &tokens, "an edge mask")
}

/// Lowers a `#[sampler]` function (see [`lower_sampler_source`]): a function-form walk whose
/// weight reads no walker history.
pub fn lower_sampler_fn(f: &syn::ItemFn) -> Result<Program, Diagnostics> {
    let (program, tokens) = lower_fn(proc_macro2::TokenStream::new(), f, Returns::Weight)?;
    no_walker_history(program, &tokens, "a sampling policy")
}

/// Errors at every walker-history accessor of a program that weighs single edges.
fn no_walker_history(program: Program, tokens: &[Span], what: &str) -> Result<Program, Diagnostics> {
    let diags: Vec<Diagnostic> = program
        .exprs
        .iter()
        .filter_map(|(h, e)| match e {
            Expr::Step(field @ (StepField::Prev | StepField::Start | StepField::Step)) => Some(
                Diagnostic::error(tokens[h.index()], format!("{what} has no walker: `s.{}()` is a walk's", field.signature().0))
                    .help("it sees one edge, from s.cur() to s.dst(): use s.cur(), s.dst(), s.weight(), s.label(), s.edge(), s.time() and graph queries"),
            ),
            _ => None,
        })
        .collect();
    if diags.is_empty() { Ok(program) } else { Err(Diagnostics(diags)) }
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
    /// Each expression's token span, by handle index (the arena keeps the IR's own spans;
    /// diagnostics point at tokens).
    tokens: Vec<Span>,
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
            tokens: Vec::new(),
            types: Vec::new(),
            params: Vec::new(),
            step: String::new(),
            diags: Vec::new(),
        }
    }

    fn routine(&mut self, outputs: Vec<Handle<Expr>>) -> Routine {
        self.tokens.clear();
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
        let h = self.exprs.append(e, ir_span(span));
        self.tokens.push(span);
        self.types.push(ty);
        Ok(h)
    }

    /// The token span of an expression lowered here.
    fn token_span(&self, h: Handle<Expr>) -> Span {
        self.tokens[h.index()]
    }

    fn ty(&self, h: Handle<Expr>) -> Scalar {
        self.types[h.index()]
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
