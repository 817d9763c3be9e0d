//! Values of a walk's hyperparameters and of its expressions, as the reference interpreter,
//! the parameter parser and every backend's argument images hold them.

/// A run-time value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// `f32`
    F32(f32),
    /// `f64`
    F64(f64),
    /// `i32`
    I32(i32),
    /// `u32`
    U32(u32),
    /// `bool`
    Bool(bool),
}

impl Value {
    /// As f64 (numbers only; bools are 0/1).
    pub fn as_f64(self) -> f64 {
        match self {
            Value::F32(x) => x as f64,
            Value::F64(x) => x,
            Value::I32(x) => x as f64,
            Value::U32(x) => x as f64,
            Value::Bool(b) => b as u8 as f64,
        }
    }
    /// As a condition: only `Bool(true)` is true.
    pub fn as_bool(self) -> bool {
        matches!(self, Value::Bool(true))
    }
    /// As a `u32`, with Rust `as` conversions.
    pub fn as_u32(self) -> u32 {
        match self {
            Value::U32(x) => x,
            Value::I32(x) => x as u32,
            other => other.as_f64() as u32,
        }
    }
}

/// A hyperparameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// A scalar.
    Scalar(Value),
    /// An array.
    Array(Vec<Value>),
}
