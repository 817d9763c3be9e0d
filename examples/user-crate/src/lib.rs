//! A user's walks, in their own crate.

use wayfarer::prelude::*;

/// A "popularity" walk: prefer neighbours with a higher degree, more so with larger `beta`;
/// the way back is down-weighted by `back`.
#[walk]
pub fn popular(s: &Step, beta: f32, back: f32) -> f32 {
    let d = s.degree(s.dst()) as f32;
    let w = (d.ln() * beta).exp();
    if s.dst() == s.prev() { w * back } else { w }
}

/// A walk that only follows edges heavier than `t`, with their weight.
#[walk]
pub fn heavy(s: &Step, t: f32) -> f32 {
    if s.weight() > t { s.weight() } else { 0.0 }
}
