//! Hyperparameter defaults and checks, written in the attribute:
//! `#[walk(params(alpha: f32 = 0.15), check(alpha >= 0.0 && alpha <= 1.0))]` (impl form) or
//! `#[walk(defaults(a = 2.0, b = 0.5), check(a > 0.0, b > 0.0))]` (function form). A default
//! is a literal of the parameter's type, an array of them (the rest of the array is zero), or
//! `name.len()`: the number of values given for array `name`. `length(name)` makes a `u32`
//! parameter the default walk length.

use super::*;
use crate::eval::{ParamValue, Value};
use quote::ToTokens;

/// `name = value` in the function form's `defaults(...)`.
pub(super) struct DefaultDecl {
    pub name: syn::Ident,
    pub value: syn::Expr,
}

impl syn::parse::Parse for DefaultDecl {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let name = input.parse()?;
        input.parse::<syn::Token![=]>()?;
        Ok(DefaultDecl { name, value: input.parse()? })
    }
}

fn literal_value(l: &Literal) -> Value {
    match *l {
        Literal::Float(v, Scalar::F64) => Value::F64(v),
        Literal::Float(v, _) => Value::F32(v as f32),
        Literal::Int(v, Scalar::U32) => Value::U32(v as u32),
        Literal::Int(v, Scalar::F32) => Value::F32(v as f32),
        Literal::Int(v, Scalar::F64) => Value::F64(v as f64),
        Literal::Int(v, _) => Value::I32(v as i32),
        Literal::Bool(b) => Value::Bool(b),
    }
}

impl Lowerer {
    /// The constant `e` as a value of type `t`, through the front end's own literal rules
    /// (an error at `e` if it is not a literal of that type).
    fn constant(&mut self, e: &syn::Expr, t: Scalar, what: &str) -> Option<Value> {
        let mut scratch = Lowerer::new(Mode::Weight, false);
        let lowered = scratch.expr(e, &Env::default(), Some(t));
        self.diags.append(&mut scratch.diags);
        let h = lowered.ok()?;
        match scratch.exprs.get(h) {
            Expr::Literal(l) if scratch.ty(h) == t => Some(literal_value(l)),
            Expr::Literal(_) => {
                self.err(e.span(), format!("{what} must be of type `{}`, found `{}`", t.name(), scratch.ty(h).name()));
                None
            }
            _ => {
                self.err_help(e.span(), format!("{what} is a literal"), format!("write a `{}` constant, e.g. `{}`", t.name(), example(t)));
                None
            }
        }
    }

    /// Records the default of hyperparameter `index`.
    pub(super) fn set_default(&mut self, index: usize, e: &syn::Expr) {
        let p = self.params[index].clone();
        if p.default.is_some() {
            self.err(e.span(), format!("`{}` has two defaults", p.name));
            return;
        }
        let what = format!("the default of `{}`", p.name);
        let default = match (&p.ty, e) {
            (_, syn::Expr::MethodCall(m)) if m.method == "len" && m.args.is_empty() => {
                let target = match &*m.receiver {
                    syn::Expr::Path(x) => x.path.get_ident().map(|i| i.to_string()),
                    _ => None,
                };
                let Some(j) =
                    target.as_ref().and_then(|t| self.params.iter().position(|q| &q.name == t && matches!(q.ty, ParamType::Array(..))))
                else {
                    self.err_help(
                        m.receiver.span(),
                        "`.len()` counts the values of an array hyperparameter",
                        "write e.g. `len = schema.len()`",
                    );
                    return;
                };
                if !matches!(p.ty, ParamType::Scalar(Scalar::U32 | Scalar::I32)) {
                    self.err(e.span(), format!("{what} counts values, so `{}` must be a `u32` or `i32`", p.name));
                    return;
                }
                ParamDefault::LengthOf(j)
            }
            (ParamType::Scalar(t), e) => match self.constant(e, *t, &what) {
                Some(v) => ParamDefault::Value(ParamValue::Scalar(v)),
                None => return,
            },
            (ParamType::Array(t, n), syn::Expr::Array(a)) => {
                if a.elems.is_empty() || a.elems.len() > *n {
                    self.err(e.span(), format!("{what} holds 1 to {n} values, found {}", a.elems.len()));
                    return;
                }
                let xs: Vec<Option<Value>> = a.elems.iter().map(|x| self.constant(x, *t, &what)).collect();
                match xs.into_iter().collect::<Option<Vec<_>>>() {
                    Some(xs) => ParamDefault::Value(ParamValue::Array(xs)),
                    None => return,
                }
            }
            (ParamType::Array(t, _), e) => {
                self.err_help(e.span(), format!("{what} is an array"), format!("write e.g. `[{}, {}]`", example(*t), example(*t)));
                return;
            }
        };
        self.params[index].default = Some(default);
    }

    /// The index of `length(name)`'s parameter: a `u32` hyperparameter.
    pub(super) fn length_param(&mut self, name: &syn::Ident) -> Option<usize> {
        match self.params.iter().position(|p| *name == p.name) {
            Some(i) if self.params[i].ty == ParamType::Scalar(Scalar::U32) => Some(i),
            Some(_) => {
                self.err(name.span(), format!("the walk length `{name}` must be a `u32` hyperparameter"));
                None
            }
            None => {
                self.err_help(
                    name.span(),
                    format!("no hyperparameter `{name}`"),
                    "`length(n)` names the `u32` hyperparameter that sets the default walk length",
                );
                None
            }
        }
    }

    /// Records `defaults(name = value, ..)` of the function form.
    pub(super) fn defaults(&mut self, decls: impl IntoIterator<Item = DefaultDecl>) {
        for d in decls {
            let name = d.name.to_string();
            match self.params.iter().position(|p| p.name == name) {
                Some(i) => self.set_default(i, &d.value),
                None => {
                    let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                    let help = if names.is_empty() {
                        "the walk has no hyperparameters".to_string()
                    } else {
                        format!("its hyperparameters are {}", names.join(", "))
                    };
                    self.err_help(d.name.span(), format!("no hyperparameter `{name}`"), help);
                }
            }
        }
    }

    /// Lowers `check(cond, ..)`: each a `bool` over the hyperparameters, by their names.
    pub(super) fn checks(&mut self, conds: impl IntoIterator<Item = syn::Expr>) -> Vec<ParamCheck> {
        let mut out = Vec::new();
        for c in conds {
            let mut l = Lowerer::new(Mode::Weight, false);
            l.params = self.params.clone();
            let lowered = l.expr(&c, &Env::default(), Some(Scalar::Bool));
            if let Ok(h) = lowered
                && l.diags.is_empty()
            {
                if l.ty(h) == Scalar::Bool {
                    out.push(ParamCheck { text: c.to_token_stream().to_string(), exprs: l.exprs, types: l.types, result: h });
                } else {
                    self.err(c.span(), format!("a check is a `bool` condition on the hyperparameters, found `{}`", l.ty(h).name()));
                }
            } else {
                self.diags.append(&mut l.diags);
                if lowered.is_err() && self.diags.is_empty() {
                    self.err(c.span(), "this check could not be compiled");
                }
            }
        }
        out
    }

    /// Every default must pass every check: an error at the check otherwise.
    pub(super) fn check_defaults(&mut self, checks: &[ParamCheck], spans: &[Span]) {
        let Some(values) = crate::params::default_values(&self.params) else { return };
        for (c, &span) in checks.iter().zip(spans) {
            if !crate::params::passes(c, &values) {
                let (named, vals): (Vec<Param>, Vec<ParamValue>) = self
                    .params
                    .iter()
                    .zip(&values)
                    .filter(|(p, _)| crate::params::mentions(&c.text, &p.name))
                    .map(|(p, v)| (p.clone(), v.clone()))
                    .unzip();
                self.err(span, format!("the defaults fail this check: {}", crate::params::show(&named, &vals)));
            }
        }
    }
}

fn example(t: Scalar) -> &'static str {
    match t {
        Scalar::F32 | Scalar::F64 => "1.0",
        Scalar::I32 | Scalar::U32 => "1",
        Scalar::Bool => "true",
    }
}
