use wayfarer::prelude::*;

/// MetaPath: at step `t`, only edges labelled `schema[t mod len]` may be taken (weighted by
/// `h`). Schemas hold 1 to 16 labels, given as a comma list (`schema=0,1,2`); `len` is their
/// number, and the default walk length.
#[walk(defaults(schema = [0, 1, 2, 3, 4], len = schema.len()), check(len >= 1), length(len))]
pub fn metapath(s: &Step, schema: [u32; 16], len: u32) -> f32 {
    if s.label() == schema[(s.step() % len) as usize] { s.weight() } else { 0.0 }
}
