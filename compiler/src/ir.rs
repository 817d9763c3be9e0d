//! The walk IR: typed expressions in an arena, addressed by typed handles, with the source
//! span of every node kept beside it (not inside it), as naga does.
//!
//! `get_weight` lowers to a pure expression DAG: `let` bindings become shared handles, `if` /
//! early `return` become [`Expr::Select`], so analyses can walk one expression tree per walk.
//!
//! Semantics (shared by every backend):
//! - Arithmetic follows Rust's for the operand type: IEEE-754 for `f32`/`f64`; integer `+ - *`
//!   wrap on overflow (the generated native code uses `wrapping_*`, so no backend panics or
//!   traps); integer division by zero yields 0.
//! - Comparisons on floats follow IEEE (NaN compares false).
//! - `prev()` is `NO_NODE` (`u32::MAX`) before the first move.

use std::marker::PhantomData;

/// A typed index into an [`Arena`].
pub struct Handle<T> {
    index: u32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// The handle's position in its arena.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, o: &Self) -> bool {
        self.index == o.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.index.hash(h)
    }
}
impl<T> std::fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "%{}", self.index)
    }
}

/// Where an IR node came from in the walk's source: the first and last character's line (from
/// 1) and column (from 0), as rustc counts them. The IR's own type, so backends and run-time
/// users (threads, Python) never hold a proc-macro span; `Span::default()` (line 0) is a node
/// with no place of its own (derived bounds, desugared code).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Line of the first character, from 1 (0: no place).
    pub line: u32,
    /// Column of the first character, from 0.
    pub column: u32,
    /// Line of the last character.
    pub end_line: u32,
    /// Column just past the last character.
    pub end_column: u32,
}

/// An append-only store of `T` with a span per item.
#[derive(Debug)]
pub struct Arena<T> {
    items: Vec<T>,
    spans: Vec<Span>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new(), spans: Vec::new() }
    }
}

impl<T> Arena<T> {
    /// Appends an item and returns its handle.
    pub fn append(&mut self, item: T, span: Span) -> Handle<T> {
        let index = u32::try_from(self.items.len()).expect("fewer than 2^32 IR nodes");
        self.items.push(item);
        self.spans.push(span);
        Handle { index, marker: PhantomData }
    }
    /// The item behind a handle.
    pub fn get(&self, h: Handle<T>) -> &T {
        &self.items[h.index()]
    }
    /// The source span of an item.
    pub fn span(&self, h: Handle<T>) -> Span {
        self.spans[h.index()]
    }
    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// Whether the arena is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// Every handle with its item, in order of creation (operands before users).
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items.iter().enumerate().map(|(i, t)| (Handle { index: i as u32, marker: PhantomData }, t))
    }
}

/// Scalar types of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// `i32`
    I32,
    /// `u32` (also node ids)
    U32,
    /// `bool`
    Bool,
}

impl Scalar {
    /// The Rust spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::Bool => "bool",
        }
    }
    /// Whether the type is a float.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }
    /// Whether the type is an integer.
    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::U32)
    }
}

/// A hyperparameter type: a scalar or a fixed-size array of scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// A scalar.
    Scalar(Scalar),
    /// `[T; N]`
    Array(Scalar, usize),
}

/// A literal value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    /// A float literal, stored as written in f64, typed by context or suffix.
    Float(f64, Scalar),
    /// An integer literal with its type.
    Int(i64, Scalar),
    /// `true` / `false`.
    Bool(bool),
}

/// The walker's built-in state and the candidate edge, read through `s.<name>()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepField {
    /// `s.cur()`: the current node.
    Cur,
    /// `s.prev()`: the previous node (`NO_NODE` before the first move).
    Prev,
    /// `s.start()`: the start node.
    Start,
    /// `s.step()`: moves made so far.
    Step,
    /// `s.dst()`: the candidate edge's destination.
    Dst,
    /// `s.weight()`: the candidate edge's weight `h` (1 if the graph has none).
    Weight,
    /// `s.label()`: the candidate edge's label.
    Label,
    /// `s.edge()`: the candidate edge's index.
    Edge,
    /// `s.time()`: the candidate edge's timestamp (as f64).
    Time,
}

impl StepField {
    /// The accessor's name and its type.
    pub fn signature(self) -> (&'static str, Scalar) {
        match self {
            StepField::Cur => ("cur", Scalar::U32),
            StepField::Prev => ("prev", Scalar::U32),
            StepField::Start => ("start", Scalar::U32),
            StepField::Step => ("step", Scalar::U32),
            StepField::Dst => ("dst", Scalar::U32),
            StepField::Weight => ("weight", Scalar::F32),
            StepField::Label => ("label", Scalar::U32),
            StepField::Edge => ("edge", Scalar::U32),
            StepField::Time => ("time", Scalar::F64),
        }
    }
    /// Every accessor.
    pub const ALL: [StepField; 9] = [
        StepField::Cur,
        StepField::Prev,
        StepField::Start,
        StepField::Step,
        StepField::Dst,
        StepField::Weight,
        StepField::Label,
        StepField::Edge,
        StepField::Time,
    ];
    /// Whether the value depends on the candidate edge (not only on the walker).
    pub fn is_per_edge(self) -> bool {
        matches!(self, StepField::Dst | StepField::Weight | StepField::Label | StepField::Edge | StepField::Time)
    }
}

/// Built-in functions and graph queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `a.min(b)`
    Min,
    /// `a.max(b)`
    Max,
    /// `a.abs()`
    Abs,
    /// `a.exp()`
    Exp,
    /// `a.ln()`
    Ln,
    /// `a.sqrt()`
    Sqrt,
    /// `a.powf(b)`
    Powf,
    /// `s.degree(v)`: out-degree of `v` (u32).
    Degree,
    /// `s.has_edge(u, v)`: whether the edge `u -> v` exists.
    HasEdge,
    /// `s.node_prop("name", v)`: node property number `i` of the walk's property table
    /// ([`Program::props`]) at node `v` (0 if the graph lacks it).
    NodeProp(u16),
}

impl Builtin {
    /// The name as written.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::Abs => "abs",
            Builtin::Exp => "exp",
            Builtin::Ln => "ln",
            Builtin::Sqrt => "sqrt",
            Builtin::Powf => "powf",
            Builtin::Degree => "degree",
            Builtin::HasEdge => "has_edge",
            Builtin::NodeProp(_) => "node_prop",
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x`
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
    /// Whether the result is a `bool` comparison of its operands.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }
}

/// A pure expression. Operands are handles to earlier expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A constant.
    Literal(Literal),
    /// Hyperparameter `i` (a scalar).
    Param(usize),
    /// Element of array hyperparameter `param` at `index` (an integer expression).
    ParamIndex {
        /// The array parameter.
        param: usize,
        /// The index.
        index: Handle<Expr>,
    },
    /// A step accessor.
    Step(StepField),
    /// A unary operation.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        arg: Handle<Expr>,
    },
    /// A binary operation.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        lhs: Handle<Expr>,
        /// Right operand.
        rhs: Handle<Expr>,
    },
    /// `if cond { then } else { other }` as a value.
    Select {
        /// The condition (bool).
        cond: Handle<Expr>,
        /// Value when true.
        then: Handle<Expr>,
        /// Value when false.
        other: Handle<Expr>,
    },
    /// A built-in call.
    Call {
        /// Which built-in.
        func: Builtin,
        /// Arguments.
        args: Vec<Handle<Expr>>,
    },
    /// `expr as T`.
    Cast {
        /// The value.
        expr: Handle<Expr>,
        /// The target type.
        to: Scalar,
    },
    /// A per-node quantity of the current node's row (bound and estimate expressions only;
    /// never in a weight function).
    Node(NodeQuery),
    /// Field `i` of the walker's program state (the impl form), as it was when the function
    /// started.
    State(usize),
    /// The `k`-th uniform draw in (0, 1) of this call's random stream, as f64 (`init`,
    /// `update` and `stop` only). The `k`-th `uniform()` a path executes is draw `k`, as in
    /// sequential Rust; every call takes [`Routine::draws`] numbers (the most any path uses)
    /// from the stream, so the position of later draws never depends on the path.
    Draw(u32),
}

impl Expr {
    /// The expression's operands (including a node query's label expression).
    pub fn operands(&self) -> Vec<Handle<Expr>> {
        match self {
            Expr::Literal(_) | Expr::Param(_) | Expr::Step(_) | Expr::State(_) | Expr::Draw(_) => Vec::new(),
            Expr::Node(NodeQuery::LabelMax(l) | NodeQuery::LabelSum(l) | NodeQuery::LabelCount(l)) => vec![*l],
            Expr::Node(_) => Vec::new(),
            Expr::ParamIndex { index, .. } => vec![*index],
            Expr::Unary { arg, .. } => vec![*arg],
            Expr::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
            Expr::Select { cond, then, other } => vec![*cond, *then, *other],
            Expr::Call { args, .. } => args.clone(),
            Expr::Cast { expr, .. } => vec![*expr],
        }
    }
}

/// Per-node quantities that bounds and sum estimates read. All concern the current node's
/// row; the runtime precomputes the aggregates or looks them up per step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeQuery {
    /// Largest edge weight of the row.
    WeightMax,
    /// Smallest edge weight of the row.
    WeightMin,
    /// Sum of the row's edge weights.
    WeightSum,
    /// The row's length (out-degree), as f32.
    Degree,
    /// Largest weight among the edges back to `prev` (0 if there is none): one binary search.
    BackWeight,
    /// Number of edges back to `prev`, as f32.
    BackCount,
    /// Largest weight of the row's edges with the given label.
    LabelMax(Handle<Expr>),
    /// Sum of the weights of the row's edges with the given label.
    LabelSum(Handle<Expr>),
    /// Number of the row's edges with the given label, as f32.
    LabelCount(Handle<Expr>),
    /// Largest out-degree among the row's destinations, as f32.
    NeighborDegreeMax,
    /// Smallest out-degree among the row's destinations, as f32.
    NeighborDegreeMin,
}

impl NodeQuery {
    /// The per-node array (or lookup) this query needs, by name, for reports.
    pub fn array_name(self) -> &'static str {
        match self {
            NodeQuery::WeightMax => "max of h over N(v)",
            NodeQuery::WeightMin => "min of h over N(v)",
            NodeQuery::WeightSum => "sum of h over N(v)",
            NodeQuery::Degree => "degree (from the offsets)",
            NodeQuery::BackWeight | NodeQuery::BackCount => "edge back to prev (binary search, no array)",
            NodeQuery::LabelMax(_) => "per-label max of h over N(v)",
            NodeQuery::LabelSum(_) => "per-label sum of h over N(v)",
            NodeQuery::LabelCount(_) => "per-label edge count over N(v)",
            NodeQuery::NeighborDegreeMax => "max neighbor degree over N(v)",
            NodeQuery::NeighborDegreeMin => "min neighbor degree over N(v)",
        }
    }
}

/// A derived expression (a bound or an estimate) over walker-level values and [`NodeQuery`]s.
#[derive(Debug, Default)]
pub struct Derived {
    /// Its expressions; operands precede their users.
    pub exprs: Arena<Expr>,
    /// The type of every expression, by handle index.
    pub types: Vec<Scalar>,
}

impl Derived {
    /// Appends an expression.
    pub fn push(&mut self, e: Expr, ty: Scalar) -> Handle<Expr> {
        self.types.push(ty);
        self.exprs.append(e, Span::default())
    }
}

/// A hyperparameter of a walk.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: ParamType,
    /// The value it takes when none is given (`params(alpha: f32 = 0.15)`, or the function
    /// form's `defaults(a = 2.0)`); without one, a value must be given.
    pub default: Option<ParamDefault>,
}

/// A hyperparameter's default.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamDefault {
    /// This value. An array's default may be shorter than the array: the rest is zero.
    Value(crate::eval::ParamValue),
    /// The number of values given for the array hyperparameter at this index
    /// (`len = schema.len()`).
    LengthOf(usize),
}

/// A condition the hyperparameters must meet (`check(a > 0.0, ...)` in the attribute),
/// checked before a run; a value that fails it is an error naming the check.
#[derive(Debug)]
pub struct ParamCheck {
    /// The condition as written.
    pub text: String,
    /// Its expressions (hyperparameters and literals only); operands precede their users.
    pub exprs: Arena<Expr>,
    /// The type of every expression, by handle index.
    pub types: Vec<Scalar>,
    /// The `bool` result.
    pub result: Handle<Expr>,
}

/// A field of the per-walker program state (the impl form's `state(...)`).
#[derive(Clone, Debug, PartialEq)]
pub struct StateField {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: Scalar,
}

/// Which form of `#[walk]` a program was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `#[walk] fn name(s: &Step, params...) -> f32`: the function is `get_weight`.
    Function,
    /// `#[walk(params(..), state(..))] impl Name { fn get_weight .. fn init .. fn update ..
    /// fn stop .. }`.
    Impl,
}

/// One of `init`, `update`, `stop` (impl form): its own expression DAG and its results.
///
/// `init`'s outputs are the new state fields; `update`'s are the new state fields followed by
/// the walker's new `cur` and `prev` (equal to the `Step` leaves when it does not move the
/// walker); `stop`'s single output is the `bool` decision.
#[derive(Debug)]
pub struct Routine {
    /// Its expressions; operands precede their users.
    pub exprs: Arena<Expr>,
    /// The type of every expression, by handle index.
    pub types: Vec<Scalar>,
    /// The results, in the order above.
    pub outputs: Vec<Handle<Expr>>,
    /// How many uniform numbers it draws per call (see [`Expr::Draw`]).
    pub draws: u32,
}

/// A compiled walk: hyperparameters, the per-walker state, `get_weight` as one pure
/// expression DAG, and the impl form's `init` / `update` / `stop` routines.
#[derive(Debug)]
pub struct Program {
    /// The walk's name (the function's name, or the impl's type converted to snake case).
    pub name: String,
    /// The params struct's name (`Node2vec` for `fn node2vec`, the impl's type).
    pub type_name: String,
    /// The form it was written in.
    pub form: Form,
    /// Per-walker state fields (empty for the function form).
    pub state: Vec<StateField>,
    /// `init`, if the program has one.
    pub init: Option<Routine>,
    /// `update`, if the program has one.
    pub update: Option<Routine>,
    /// `stop`, if the program has one.
    pub stop: Option<Routine>,
    /// Hyperparameters, in order.
    pub params: Vec<Param>,
    /// All expressions; operands precede their users.
    pub exprs: Arena<Expr>,
    /// The type of every expression, by handle index.
    pub types: Vec<Scalar>,
    /// The weight (`get_weight`'s result).
    pub result: Handle<Expr>,
    /// Names of the node properties the walk reads (indexed by [`Builtin::NodeProp`]).
    pub props: Vec<String>,
    /// Conditions on the hyperparameter values.
    pub checks: Vec<ParamCheck>,
    /// The `u32` hyperparameter whose value is the walk length when none is given
    /// (`length(len)` in the attribute); without one, the caller's default.
    pub length: Option<usize>,
    /// The item's documentation (its `///` lines), for help texts.
    pub doc: String,
    /// The span of the whole item.
    pub span: Span,
}

impl Program {
    /// Whether any of the walk's functions reads step accessor `field` (backends check that
    /// the graph carries the data behind it: timestamps, labels).
    pub fn reads(&self, field: StepField) -> bool {
        let mut arenas = vec![&self.exprs];
        arenas.extend([&self.init, &self.update, &self.stop].into_iter().flatten().map(|r| &r.exprs));
        arenas.iter().any(|a| a.iter().any(|(_, e)| matches!(e, Expr::Step(x) if *x == field)))
    }

    /// Whether the weight depends only on the edge and the hyperparameters, never on the walker
    /// or its state (so per-row prefix tables may replace sampling).
    pub fn static_weight(&self) -> bool {
        !any_in(&self.exprs, self.result, &|e| matches!(e, Expr::Step(f) if !f.is_per_edge()) || matches!(e, Expr::State(_)))
    }

    /// The type of an expression.
    pub fn ty(&self, h: Handle<Expr>) -> Scalar {
        self.types[h.index()]
    }
}

/// Whether any node of `h`'s tree in `exprs` satisfies `pred`.
pub fn any_in(exprs: &Arena<Expr>, h: Handle<Expr>, pred: &dyn Fn(&Expr) -> bool) -> bool {
    let e = exprs.get(h);
    pred(e) || e.operands().into_iter().any(|x| any_in(exprs, x, pred))
}

/// Whether `e` reads the walker beyond its current node: its state, its other step fields,
/// a random draw or the edges back to `prev`. A bound or estimate that reads none of them
/// (past [`first_step_test`]s) is a function of the node alone (`Walk::node_start`).
pub fn reads_more_than_cur(e: &Expr) -> bool {
    match e {
        Expr::State(_) | Expr::Draw(_) | Expr::Node(NodeQuery::BackWeight | NodeQuery::BackCount) => true,
        Expr::Step(f) => *f != StepField::Cur,
        _ => false,
    }
}

/// Whether `h` is `step()` compared with 0: `Some(true)` for `==`, `Some(false)` for `!=`
/// (either side). Past the walk's first move the first is false and the second true.
pub fn first_step_test(exprs: &Arena<Expr>, h: Handle<Expr>) -> Option<bool> {
    let Expr::Binary { op: op @ (BinaryOp::Eq | BinaryOp::Ne), lhs, rhs } = exprs.get(h) else { return None };
    let is_step = |x: Handle<Expr>| matches!(exprs.get(x), Expr::Step(StepField::Step));
    let is_zero = |x: Handle<Expr>| matches!(exprs.get(x), Expr::Literal(Literal::Int(0, _)));
    ((is_step(*lhs) && is_zero(*rhs)) || (is_zero(*lhs) && is_step(*rhs))).then_some(*op == BinaryOp::Eq)
}

/// Whether `h` reads the candidate edge.
pub fn reads_edge(exprs: &Arena<Expr>, h: Handle<Expr>) -> bool {
    any_in(exprs, h, &|e| matches!(e, Expr::Step(f) if f.is_per_edge()))
}

/// Whether evaluating `h` needs a graph lookup beyond the candidate edge's own data
/// (`has_edge` searches a row, a node property or the degree of another node is a random
/// read): what a squeeze envelope tries to avoid.
pub fn is_expensive(exprs: &Arena<Expr>, h: Handle<Expr>) -> bool {
    any_in(exprs, h, &|e| match e {
        Expr::Call { func: Builtin::HasEdge | Builtin::NodeProp(_), .. } => true,
        // Derived (bound) expressions: the edges back to prev are a binary search of cur's row.
        Expr::Node(NodeQuery::BackWeight | NodeQuery::BackCount) => true,
        // The degree of a walker-level node (cur, prev) is one cached offsets read.
        Expr::Call { func: Builtin::Degree, args } => reads_edge(exprs, args[0]),
        _ => false,
    })
}
