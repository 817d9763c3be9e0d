//! Byte images of the C structs the kernel reads (`WfGraph`, `WfParams`, `WfRunArgs`), laid
//! out by the C rules: each field at a multiple of its alignment, the struct padded to its
//! largest alignment.

use wayfarer_compiler::eval::{ParamValue, Value};
use wayfarer_compiler::ir::{ParamType, Program, Scalar};

#[derive(Default)]
pub(crate) struct CStruct {
    pub bytes: Vec<u8>,
    align: usize,
}

impl CStruct {
    fn pad_to(&mut self, a: usize) {
        while self.bytes.len() % a != 0 {
            self.bytes.push(0);
        }
        self.align = self.align.max(a);
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.pad_to(4);
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.pad_to(8);
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.u64(v.to_bits())
    }
    fn value(&mut self, v: Value, ty: Scalar) {
        match (ty, v) {
            (Scalar::F32, v) => {
                self.u32((v.as_f64() as f32).to_bits());
            }
            (Scalar::F64, v) => {
                self.f64(v.as_f64());
            }
            (Scalar::I32, Value::I32(x)) => {
                self.u32(x as u32);
            }
            (Scalar::U32, Value::U32(x)) => {
                self.u32(x);
            }
            (Scalar::Bool, Value::Bool(b)) => {
                self.pad_to(1);
                self.bytes.push(b as u8);
            }
            (t, v) => unreachable!("parameter value {v:?} does not have type {t:?}"),
        }
    }
    pub fn finish(mut self) -> Vec<u8> {
        let a = self.align.max(1);
        self.pad_to(a);
        self.bytes
    }
}

/// `WfParams` for `program` with `values` (in declaration order, already type-checked).
pub(crate) fn params(program: &Program, values: &[ParamValue]) -> Vec<u8> {
    let mut s = CStruct::default();
    if program.params.is_empty() {
        s.u32(0);
    }
    for (p, v) in program.params.iter().zip(values) {
        match (p.ty, v) {
            (ParamType::Scalar(t), ParamValue::Scalar(x)) => s.value(*x, t),
            (ParamType::Array(t, n), ParamValue::Array(xs)) => {
                for i in 0..n {
                    s.value(xs.get(i).copied().unwrap_or_else(|| wayfarer_compiler::eval::zero_of(t)), t);
                }
            }
            _ => unreachable!("parameter shape checked by the caller"),
        }
    }
    s.finish()
}
