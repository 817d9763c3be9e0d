//! A reference interpreter for the IR: the semantics every backend must reproduce, and the
//! oracle of the bound-soundness tests.
//!
//! Per-node queries are answered by scanning the current row, which defines what the
//! runtime's precomputed arrays must hold: for an empty selection, max, min, sum and count are
//! all 0.

use crate::ir::*;
use wayfarer_core::{GraphView, NO_NODE};
pub use wayfarer_core::{ParamValue, Value};

/// The walker state an expression is evaluated in.
#[derive(Clone, Copy, Debug)]
pub struct State {
    /// Current node.
    pub cur: u32,
    /// Previous node or `NO_NODE`.
    pub prev: u32,
    /// Start node.
    pub start: u32,
    /// Moves made.
    pub step: u32,
}

/// Evaluates expressions of one arena in one state (and, for weights, one candidate edge).
pub struct Evaluator<'a> {
    /// The graph.
    pub graph: &'a dyn GraphView,
    /// Hyperparameter values, in declaration order.
    pub params: &'a [ParamValue],
    /// The walker.
    pub state: State,
    /// The candidate edge (an index into the graph's edge arrays), for weight expressions.
    pub edge: Option<usize>,
    /// The walk's node-property names ([`Program::props`]).
    pub props: &'a [String],
    /// The program state's fields ([`Program::state`] order; empty for the function form).
    pub fields: &'a [Value],
    /// The uniform draws of this call ([`Expr::Draw`]), for `init`, `update` and `stop`.
    pub draws: &'a [f64],
}

/// The zero of a type (what out-of-range reads and absent data give).
pub fn zero_of(t: Scalar) -> Value {
    match t {
        Scalar::F32 => Value::F32(0.0),
        Scalar::F64 => Value::F64(0.0),
        Scalar::I32 => Value::I32(0),
        Scalar::U32 => Value::U32(0),
        Scalar::Bool => Value::Bool(false),
    }
}

fn cast(v: Value, to: Scalar) -> Value {
    // Rust `as` semantics: float -> int saturates and maps NaN to 0.
    match (v, to) {
        (Value::F32(x), Scalar::F64) => Value::F64(x as f64),
        (Value::F64(x), Scalar::F32) => Value::F32(x as f32),
        (Value::F32(x), Scalar::I32) => Value::I32(x as i32),
        (Value::F64(x), Scalar::I32) => Value::I32(x as i32),
        (Value::F32(x), Scalar::U32) => Value::U32(x as u32),
        (Value::F64(x), Scalar::U32) => Value::U32(x as u32),
        (Value::I32(x), Scalar::F32) => Value::F32(x as f32),
        (Value::I32(x), Scalar::F64) => Value::F64(x as f64),
        (Value::U32(x), Scalar::F32) => Value::F32(x as f32),
        (Value::U32(x), Scalar::F64) => Value::F64(x as f64),
        (Value::I32(x), Scalar::U32) => Value::U32(x as u32),
        (Value::U32(x), Scalar::I32) => Value::I32(x as i32),
        (Value::Bool(b), Scalar::I32) => Value::I32(b as i32),
        (Value::Bool(b), Scalar::U32) => Value::U32(b as u32),
        (v, _) => v,
    }
}

macro_rules! arith {
    ($a:expr, $b:expr, $f:expr, $i:expr, $u:expr) => {
        match ($a, $b) {
            (Value::F32(x), Value::F32(y)) => Value::F32($f(x as f64, y as f64, true) as f32),
            (Value::F64(x), Value::F64(y)) => Value::F64($f(x, y, false)),
            (Value::I32(x), Value::I32(y)) => Value::I32($i(x, y)),
            (Value::U32(x), Value::U32(y)) => Value::U32($u(x, y)),
            (a, _) => a,
        }
    };
}

impl Evaluator<'_> {
    fn row(&self) -> std::ops::Range<usize> {
        self.graph.row(self.state.cur)
    }

    fn h(&self, e: usize) -> f32 {
        self.graph.weights().map_or(1.0, |w| w[e])
    }

    fn label(&self, e: usize) -> u32 {
        self.graph.labels().map_or(0, |l| l[e])
    }

    /// Evaluates `h` in `arena` (types from `types`).
    pub fn eval(&self, arena: &Arena<Expr>, types: &[Scalar], h: Handle<Expr>) -> Value {
        let mut memo: Vec<Option<Value>> = vec![None; arena.len()];
        self.go(arena, types, h, &mut memo)
    }

    fn go(&self, arena: &Arena<Expr>, types: &[Scalar], h: Handle<Expr>, memo: &mut Vec<Option<Value>>) -> Value {
        if let Some(v) = memo[h.index()] {
            return v;
        }
        let ty = types[h.index()];
        let mut ev = |x: Handle<Expr>| self.go(arena, types, x, memo);
        let v = match arena.get(h).clone() {
            Expr::Literal(Literal::Float(v, Scalar::F64)) => Value::F64(v),
            Expr::Literal(Literal::Float(v, _)) => Value::F32(v as f32),
            Expr::Literal(Literal::Int(v, Scalar::U32)) => Value::U32(v as u32),
            Expr::Literal(Literal::Int(v, _)) => Value::I32(v as i32),
            Expr::Literal(Literal::Bool(b)) => Value::Bool(b),
            Expr::Param(i) => match &self.params[i] {
                ParamValue::Scalar(v) => *v,
                ParamValue::Array(_) => zero_of(ty),
            },
            Expr::ParamIndex { param, index } => {
                let i = ev(index).as_f64();
                match &self.params[param] {
                    // Out-of-range indices read 0 (no backend may trap).
                    ParamValue::Array(a) if i >= 0.0 && (i as usize) < a.len() => a[i as usize],
                    _ => zero_of(ty),
                }
            }
            Expr::State(i) => self.fields.get(i).copied().unwrap_or(zero_of(ty)),
            Expr::Draw(k) => Value::F64(self.draws.get(k as usize).copied().unwrap_or(0.5)),
            Expr::Step(f) => {
                let s = self.state;
                let e = self.edge.unwrap_or(0);
                match f {
                    StepField::Cur => Value::U32(s.cur),
                    StepField::Prev => Value::U32(s.prev),
                    StepField::Start => Value::U32(s.start),
                    StepField::Step => Value::U32(s.step),
                    StepField::Dst => Value::U32(self.graph.targets()[e]),
                    StepField::Weight => Value::F32(self.h(e)),
                    StepField::Label => Value::U32(self.label(e)),
                    StepField::Edge => Value::U32(e as u32),
                    StepField::Time => Value::F64(self.graph.timestamps().map_or(0.0, |t| t[e] as f64)),
                }
            }
            Expr::Unary { op: UnaryOp::Not, arg } => Value::Bool(!ev(arg).as_bool()),
            Expr::Unary { op: UnaryOp::Neg, arg } => match ev(arg) {
                Value::F32(x) => Value::F32(-x),
                Value::F64(x) => Value::F64(-x),
                Value::I32(x) => Value::I32(x.wrapping_neg()),
                v => v,
            },
            Expr::Binary { op, lhs, rhs } => {
                let (a, b) = (ev(lhs), ev(rhs));
                match op {
                    BinaryOp::And => Value::Bool(a.as_bool() && b.as_bool()),
                    BinaryOp::Or => Value::Bool(a.as_bool() || b.as_bool()),
                    BinaryOp::Eq => Value::Bool(a == b),
                    BinaryOp::Ne => Value::Bool(a != b),
                    BinaryOp::Lt => Value::Bool(cmp(a, b).is_some_and(|o| o.is_lt())),
                    BinaryOp::Le => Value::Bool(cmp(a, b).is_some_and(|o| o.is_le())),
                    BinaryOp::Gt => Value::Bool(cmp(a, b).is_some_and(|o| o.is_gt())),
                    BinaryOp::Ge => Value::Bool(cmp(a, b).is_some_and(|o| o.is_ge())),
                    // f32 arithmetic is done in f32 (the closures get f64 copies of f32
                    // values; each f32 op is recomputed in f32 below).
                    BinaryOp::Add => arith!(
                        a,
                        b,
                        |x: f64, y: f64, s: bool| if s { (x as f32 + y as f32) as f64 } else { x + y },
                        i32::wrapping_add,
                        u32::wrapping_add
                    ),
                    BinaryOp::Sub => arith!(
                        a,
                        b,
                        |x: f64, y: f64, s: bool| if s { (x as f32 - y as f32) as f64 } else { x - y },
                        i32::wrapping_sub,
                        u32::wrapping_sub
                    ),
                    BinaryOp::Mul => arith!(
                        a,
                        b,
                        |x: f64, y: f64, s: bool| if s { (x as f32 * y as f32) as f64 } else { x * y },
                        i32::wrapping_mul,
                        u32::wrapping_mul
                    ),
                    BinaryOp::Div => arith!(
                        a,
                        b,
                        |x: f64, y: f64, s: bool| if s { (x as f32 / y as f32) as f64 } else { x / y },
                        |x: i32, y: i32| if y == 0 { 0 } else { x.wrapping_div(y) },
                        |x: u32, y: u32| x.checked_div(y).unwrap_or(0)
                    ),
                    BinaryOp::Rem => arith!(
                        a,
                        b,
                        |x: f64, y: f64, s: bool| if s { (x as f32 % y as f32) as f64 } else { x % y },
                        |x: i32, y: i32| if y == 0 { 0 } else { x.wrapping_rem(y) },
                        |x: u32, y: u32| x.checked_rem(y).unwrap_or(0)
                    ),
                }
            }
            Expr::Select { cond, then, other } => {
                if ev(cond).as_bool() {
                    ev(then)
                } else {
                    ev(other)
                }
            }
            Expr::Cast { expr, to } => cast(ev(expr), to),
            Expr::Call { func, args } => {
                let vals: Vec<Value> = args.iter().map(|a| ev(*a)).collect();
                self.call(func, &vals)
            }
            Expr::Node(q) => self.node(q, arena, types, memo),
        };
        memo[h.index()] = Some(v);
        v
    }

    fn call(&self, func: Builtin, v: &[Value]) -> Value {
        let f1 = |g: fn(f32) -> f32, h: fn(f64) -> f64| match v[0] {
            Value::F32(x) => Value::F32(g(x)),
            Value::F64(x) => Value::F64(h(x)),
            o => o,
        };
        match func {
            Builtin::Exp => f1(f32::exp, f64::exp),
            Builtin::Ln => f1(f32::ln, f64::ln),
            Builtin::Sqrt => f1(f32::sqrt, f64::sqrt),
            Builtin::Abs => match v[0] {
                Value::I32(x) => Value::I32(x.wrapping_abs()),
                _ => f1(f32::abs, f64::abs),
            },
            Builtin::Powf => match (v[0], v[1]) {
                (Value::F32(x), Value::F32(y)) => Value::F32(x.powf(y)),
                (Value::F64(x), Value::F64(y)) => Value::F64(x.powf(y)),
                (o, _) => o,
            },
            Builtin::Min | Builtin::Max => {
                let (a, b) = (v[0], v[1]);
                let pick_a = match (a, b) {
                    // f32::min/max semantics: a NaN operand yields the other.
                    (Value::F32(x), Value::F32(y)) => return Value::F32(if func == Builtin::Min { x.min(y) } else { x.max(y) }),
                    (Value::F64(x), Value::F64(y)) => return Value::F64(if func == Builtin::Min { x.min(y) } else { x.max(y) }),
                    _ => cmp(a, b).is_some_and(|o| if func == Builtin::Min { o.is_le() } else { o.is_ge() }),
                };
                if pick_a { a } else { b }
            }
            Builtin::Degree => {
                // A non-node (NO_NODE, say) has degree 0, as on every backend.
                let u = v[0].as_u32();
                Value::U32(if (u as usize) < self.graph.num_nodes() { self.graph.degree(u).min(u32::MAX as u64) as u32 } else { 0 })
            }
            Builtin::NodeProp(i) => {
                let node = v[0].as_u32() as usize;
                Value::F32(self.graph.node_property(&self.props[i as usize]).and_then(|p| p.get(node).copied()).unwrap_or(0.0))
            }
            Builtin::HasEdge => {
                let (u, w) = (v[0].as_u32(), v[1].as_u32());
                let n = self.graph.num_nodes() as u32;
                Value::Bool(u < n && w < n && self.graph.has_edge(u, w))
            }
        }
    }

    fn node(&self, q: NodeQuery, arena: &Arena<Expr>, types: &[Scalar], memo: &mut Vec<Option<Value>>) -> Value {
        let row = self.row();
        let (mut mx, mut mn, mut sum, mut count) = (0f32, f32::INFINITY, 0f64, 0u32);
        let mut take = |e: usize, x: f32| {
            mx = mx.max(x);
            mn = mn.min(x);
            sum += x as f64;
            count += 1;
            let _ = e;
        };
        let label_of = |l: Handle<Expr>, memo: &mut Vec<Option<Value>>| self.go(arena, types, l, memo).as_u32();
        match q {
            NodeQuery::WeightMax | NodeQuery::WeightMin | NodeQuery::WeightSum | NodeQuery::Degree => {
                row.clone().for_each(|e| take(e, self.h(e)))
            }
            NodeQuery::BackWeight | NodeQuery::BackCount => {
                if self.state.prev != NO_NODE {
                    row.clone().filter(|&e| self.graph.targets()[e] == self.state.prev).for_each(|e| take(e, self.h(e)))
                }
            }
            NodeQuery::LabelMax(l) | NodeQuery::LabelSum(l) | NodeQuery::LabelCount(l) => {
                let l = label_of(l, memo);
                row.clone().filter(|&e| self.label(e) == l).for_each(|e| take(e, self.h(e)))
            }
            NodeQuery::NeighborDegreeMax | NodeQuery::NeighborDegreeMin => {
                row.clone().for_each(|e| take(e, self.graph.degree(self.graph.targets()[e]) as f32))
            }
        }
        if count == 0 {
            mn = 0.0;
        }
        match q {
            NodeQuery::WeightMax | NodeQuery::BackWeight | NodeQuery::LabelMax(_) => Value::F32(mx),
            NodeQuery::WeightMin => Value::F32(mn),
            NodeQuery::WeightSum | NodeQuery::LabelSum(_) => Value::F32(sum as f32),
            NodeQuery::Degree | NodeQuery::BackCount | NodeQuery::LabelCount(_) => Value::U32(count),
            NodeQuery::NeighborDegreeMax => Value::U32(mx as u32),
            NodeQuery::NeighborDegreeMin => Value::U32(mn as u32),
        }
    }
}

fn cmp(a: Value, b: Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::I32(x), Value::I32(y)) => Some(x.cmp(&y)),
        (Value::U32(x), Value::U32(y)) => Some(x.cmp(&y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(&y)),
        _ => a.as_f64().partial_cmp(&b.as_f64()),
    }
}
