use wayfarer::prelude::*;

/// MetaPath: at step `t`, only edges labelled `schema[t mod 5]` may be taken.
#[walk]
pub fn metapath(s: &Step, schema: [u32; 5]) -> f32 {
    if s.label() == schema[(s.step() % 5) as usize] { s.weight() } else { 0.0 }
}
