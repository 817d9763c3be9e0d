use wayfarer::prelude::*;

/// Node2Vec: `a` is the return parameter p, `b` the in-out parameter q (PyG and DGL call
/// them p and q).
#[walk(defaults(a = 2.0, b = 0.5), check(a > 0.0, b > 0.0))]
pub fn node2vec(s: &Step, a: f32, b: f32) -> f32 {
    if s.step() == 0 {
        return s.weight(); // no previous node yet: a plain weighted step
    }
    if s.dst() == s.prev() {
        s.weight() / a
    } else if s.has_edge(s.prev(), s.dst()) {
        s.weight()
    } else {
        s.weight() / b
    }
}
