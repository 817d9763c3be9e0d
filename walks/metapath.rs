use wayfarer::prelude::*;

/// MetaPath: at step `t`, only edges labelled `schema[t mod len]` may be taken (weighted by
/// `h`). Schemas hold 1 to 16 labels; entries past `len` are unused.
#[walk]
pub fn metapath(s: &Step, schema: [u32; 16], len: u32) -> f32 {
    if s.label() == schema[(s.step() % len) as usize] { s.weight() } else { 0.0 }
}
