//! A walk's hyperparameter values from `name=value` text (the CLI's `-p`, Python keywords):
//! parsed to the declared types, completed with the declared defaults, and checked against
//! the declared checks. One parser for library walks and program files alike.

use crate::eval::{Evaluator, ParamValue, State, Value, zero_of};
use crate::ir::{Param, ParamCheck, ParamDefault, ParamType, Program, Scalar};

/// A hyperparameter value that is wrong, by parameter name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter.
    pub name: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "parameter `{}`: {}", self.name, self.message)
    }
}

impl std::error::Error for ParamError {}

fn error(name: &str, message: impl Into<String>) -> ParamError {
    ParamError { name: name.into(), message: message.into() }
}

/// Parses one scalar; floats must be finite (an infinite or NaN hyperparameter only ever makes
/// weights that cannot be sampled).
pub fn parse_scalar(t: Scalar, text: &str, name: &str) -> Result<Value, ParamError> {
    let text = text.trim();
    let bad = || error(name, format!("`{text}` is not a {}", t.name()));
    let v = match t {
        Scalar::F32 => Value::F32(text.parse().map_err(|_| bad())?),
        Scalar::F64 => Value::F64(text.parse().map_err(|_| bad())?),
        Scalar::I32 => Value::I32(text.parse().map_err(|_| bad())?),
        Scalar::U32 => Value::U32(text.parse().map_err(|_| bad())?),
        Scalar::Bool => Value::Bool(text.parse().map_err(|_| bad())?),
    };
    if t.is_float() && !v.as_f64().is_finite() {
        return Err(error(name, format!("`{text}` is not a finite number")));
    }
    Ok(v)
}

/// The values of `program`'s hyperparameters: each given `(name, text)` parsed (arrays as comma
/// lists), the rest from their defaults (`len = schema.len()`: the number of values given for
/// `schema`), then every check applied. An unknown name, a name given twice, a missing value
/// without a default, a bad value or a failed check is an error naming the parameter.
pub fn values(program: &Program, given: &[(String, String)]) -> Result<Vec<ParamValue>, ParamError> {
    for (i, (k, _)) in given.iter().enumerate() {
        if given[..i].iter().any(|(j, _)| j == k) {
            return Err(error(k, "given twice"));
        }
        if !program.params.iter().any(|p| &p.name == k) {
            return Err(error(k, format!("`{}` has no such parameter; it takes {}", program.name, describe(&program.params))));
        }
    }
    let mut out: Vec<Option<ParamValue>> = Vec::with_capacity(program.params.len());
    for p in &program.params {
        let text = given.iter().find(|(k, _)| *k == p.name).map(|(_, v)| v.as_str());
        out.push(match (text, &p.ty) {
            (Some(text), ParamType::Scalar(t)) => Some(ParamValue::Scalar(parse_scalar(*t, text, &p.name)?)),
            (Some(text), ParamType::Array(t, n)) => {
                let xs: Vec<Value> = text.split(',').map(|x| parse_scalar(*t, x, &p.name)).collect::<Result<_, _>>()?;
                if xs.len() > *n {
                    return Err(error(&p.name, format!("{} values; `{}` holds at most {n}", xs.len(), p.name)));
                }
                Some(ParamValue::Array(xs))
            }
            (None, _) => match &p.default {
                Some(ParamDefault::Value(v)) => Some(v.clone()),
                // Once the array is known. Given, such a parameter is taken as given (a params
                // struct hands back its full array and its own length).
                Some(ParamDefault::LengthOf(_)) => None,
                None => return Err(error(&p.name, format!("`{}` needs a value for it (-p {}=...)", program.name, p.name))),
            },
        });
    }
    let values = complete(&program.params, out);
    for c in &program.checks {
        if !passes(c, &values) {
            let name = program.params.iter().find(|p| mentions(&c.text, &p.name)).map_or("", |p| &p.name);
            let (named, vals): (Vec<Param>, Vec<ParamValue>) =
                program.params.iter().zip(&values).filter(|(p, _)| mentions(&c.text, &p.name)).map(|(p, v)| (p.clone(), v.clone())).unzip();
            return Err(error(name, format!("{} does not meet `{}`", show(&named, &vals), c.text)));
        }
    }
    Ok(values)
}

/// The walk length the program declares for when none is given (`length(len)`: that
/// parameter's value), if it declares one.
pub fn default_length(program: &Program, values: &[ParamValue]) -> Option<u32> {
    match values.get(program.length?)? {
        ParamValue::Scalar(v) => Some(v.as_u32()),
        ParamValue::Array(_) => None,
    }
}

/// Whether `text` names `name` as a whole word.
pub(crate) fn mentions(text: &str, name: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == name)
}

/// Fills the `len = array.len()` parameters.
fn complete(params: &[Param], values: Vec<Option<ParamValue>>) -> Vec<ParamValue> {
    let count = |j: usize| match &values[j] {
        Some(ParamValue::Array(xs)) => xs.len(),
        _ => 0,
    };
    params
        .iter()
        .zip(&values)
        .map(|(p, v)| match (v, &p.default, &p.ty) {
            (Some(v), _, _) => v.clone(),
            (None, Some(ParamDefault::LengthOf(j)), ParamType::Scalar(Scalar::I32)) => ParamValue::Scalar(Value::I32(count(*j) as i32)),
            (None, Some(ParamDefault::LengthOf(j)), _) => ParamValue::Scalar(Value::U32(count(*j) as u32)),
            (None, _, ParamType::Scalar(t)) => ParamValue::Scalar(zero_of(*t)),
            (None, _, ParamType::Array(..)) => ParamValue::Array(Vec::new()),
        })
        .collect()
}

/// Every parameter's default, if every parameter has one.
pub fn default_values(params: &[Param]) -> Option<Vec<ParamValue>> {
    let values = params
        .iter()
        .map(|p| match &p.default {
            Some(ParamDefault::Value(v)) => Some(Some(v.clone())),
            Some(ParamDefault::LengthOf(_)) => Some(None),
            None => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(complete(params, values))
}

/// A graph without nodes: checks read only the hyperparameters.
struct NoGraph;

impl wayfarer_core::GraphView for NoGraph {
    fn num_nodes(&self) -> usize {
        0
    }
    fn row(&self, _: u32) -> std::ops::Range<usize> {
        0..0
    }
    fn targets(&self) -> &[u32] {
        &[]
    }
    fn weights(&self) -> Option<&[f32]> {
        None
    }
    fn labels(&self) -> Option<&[u32]> {
        None
    }
    fn timestamps(&self) -> Option<&[i64]> {
        None
    }
    fn node_property(&self, _: &str) -> Option<&[f32]> {
        None
    }
    fn has_edge(&self, _: u32, _: u32) -> bool {
        false
    }
}

/// Whether `values` meet `check`.
pub fn passes(check: &ParamCheck, values: &[ParamValue]) -> bool {
    let state = State { cur: 0, prev: wayfarer_core::NO_NODE, start: 0, step: 0 };
    let ev = Evaluator { graph: &NoGraph, params: values, state, edge: None, props: &[], fields: &[], draws: &[] };
    ev.eval(&check.exprs, &check.types, check.result).as_bool()
}

/// A value as the CLI takes it (arrays as comma lists).
pub fn show_value(v: &ParamValue) -> String {
    let one = |x: &Value| match *x {
        Value::F32(x) => format!("{x}"),
        Value::F64(x) => format!("{x}"),
        Value::I32(x) => format!("{x}"),
        Value::U32(x) => format!("{x}"),
        Value::Bool(x) => format!("{x}"),
    };
    match v {
        ParamValue::Scalar(x) => one(x),
        ParamValue::Array(xs) => xs.iter().map(one).collect::<Vec<_>>().join(","),
    }
}

/// `a=2, b=0.5`: values as the CLI takes them.
pub fn show(params: &[Param], values: &[ParamValue]) -> String {
    params.iter().zip(values).map(|(p, v)| format!("{}={}", p.name, show_value(v))).collect::<Vec<_>>().join(", ")
}

/// The parameters with their types and defaults, for help texts and errors:
/// `a: f32 = 2, b: f32 = 0.5`, `schema: [u32; 16] = 0,1,2,3,4, len = schema.len()`, or `none`.
pub fn describe(params: &[Param]) -> String {
    if params.is_empty() {
        return "no parameters".into();
    }
    params
        .iter()
        .map(|p| {
            let ty = match p.ty {
                ParamType::Scalar(s) => s.name().to_string(),
                ParamType::Array(s, n) => format!("up to {n} {}s", s.name()),
            };
            match &p.default {
                Some(ParamDefault::Value(v)) => format!("{}={} ({ty})", p.name, show_value(v)),
                Some(ParamDefault::LengthOf(j)) => format!("{} (default: the number of {} values)", p.name, params[*j].name),
                None => format!("{} ({ty}, required)", p.name),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
