//! The built-in walks by name, with their hyperparameters parsed from `name=value` pairs —
//! what the CLI's `wayfarer walk <name> -p a=2`, the benchmark drivers and the Python package
//! use. The walks of `walks/` are listed by the build script; their parameters, defaults,
//! checks and help text are read from their files by the compiler (one declaration, no table
//! to keep in step). The hand-written references (`*-ref`) and `anonymous` are added here.

use crate::reference::{DeepWalk, MetaPath, Node2vec, Ppr2, Weighting};
use crate::{CsrGraph, ParamValue, RunReport, Starts, Walk, WalkConfig, WalkError, Walks, engine};
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;
use wayfarer_compiler::ir::Program;

/// Code generic over the walk type, run on a library walk's params struct or reference walk
/// (see [`LibraryWalk::visit`]): the engine stays monomorphized behind one match.
pub trait WalkVisitor {
    /// What the visit returns.
    type Output;
    /// Runs on one walk.
    fn visit<W: Walk>(self, walk: &W) -> Self::Output;
}

/// The hand-written references, CPU only: the compiled library's oracles.
#[derive(Clone, Debug)]
enum Reference {
    DeepWalk(DeepWalk),
    Node2vec(Node2vec),
    MetaPath(MetaPath),
    Ppr2(Ppr2),
}

/// The references: name, the library walk whose parameters they take, help.
const REFERENCES: &[(&str, &str, &str)] = &[
    ("deepwalk-ref", "deepwalk", "hand-written reference of deepwalk"),
    ("node2vec-ref", "node2vec", "a=2, b=0.5; hand-written reference of node2vec"),
    ("metapath-ref", "metapath", "schema=0,1,2,3,4 (any length); hand-written reference of metapath"),
    ("ppr2-ref", "ppr2", "gamma=0.2; hand-written reference of ppr2"),
];

#[derive(Clone, Debug)]
enum Kind {
    /// A walk of `walks/`, with its parameter values; `anonymous` writes first-visit indices.
    Dsl {
        native: dsl::Native,
        values: Vec<ParamValue>,
        anonymous: bool,
    },
    Reference(Reference),
}

/// A built-in walk with its parameters.
#[derive(Clone, Debug)]
pub struct LibraryWalk {
    name: &'static str,
    kind: Kind,
}

/// The most labels a `metapath` schema holds (the DSL walk's array length).
pub const MAX_SCHEMA: usize = 16;

impl dsl::Metapath {
    /// MetaPath with `schema` (1 to [`MAX_SCHEMA`] labels, cycled).
    pub fn new(schema: &[u32]) -> Result<Self, WalkError> {
        if schema.is_empty() || schema.len() > MAX_SCHEMA {
            return Err(WalkError::Parameter {
                name: "schema".into(),
                message: format!("{} labels; metapath takes 1 to {MAX_SCHEMA} (metapath-ref takes any number)", schema.len()),
            });
        }
        let mut s = [0u32; MAX_SCHEMA];
        s[..schema.len()].copy_from_slice(schema);
        Ok(dsl::Metapath { schema: s, len: schema.len() as u32 })
    }
}

/// A library walk's declaration: its program as the compiler reads it from its file (each
/// file lowered once, when first asked for).
fn declared(name: &str) -> Option<&'static Program> {
    static PROGRAMS: [OnceLock<Program>; dsl::NAMES.len()] = [const { OnceLock::new() }; dsl::NAMES.len()];
    let i = dsl::NAMES.iter().position(|n| *n == name)?;
    Some(PROGRAMS[i].get_or_init(|| {
        let src = dsl::source(name).expect("every library walk has a source");
        // The macro compiled the same text, so it lowers.
        wayfarer_compiler::lower_source(src).unwrap_or_else(|d| panic!("walks/{name}: {d}"))
    }))
}

/// Every built-in walk with a one-line help: its parameters with their defaults, and the first
/// sentence of its documentation.
pub fn catalog() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = dsl::NAMES
        .iter()
        .map(|&n| {
            let p = declared(n).expect("listed");
            let first = p.doc.split(". ").next().unwrap_or("").replace('\n', " ");
            (n, format!("{}; {}", wayfarer_compiler::params::describe(&p.params), first.trim_end_matches('.')))
        })
        .collect();
    out.push(("anonymous", "no parameters; DeepWalk written as first-visit indices".into()));
    out.extend(REFERENCES.iter().map(|&(n, _, h)| (n, h.to_string())));
    out
}

/// The names of every built-in walk.
pub fn names() -> Vec<&'static str> {
    catalog().into_iter().map(|(n, _)| n).collect()
}

struct Check<'g>(&'g CsrGraph);

impl WalkVisitor for Check<'_> {
    type Output = Result<(), WalkError>;
    fn visit<W: Walk>(self, walk: &W) -> Self::Output {
        walk.check(self.0)
    }
}

/// `metapath-ref`'s schema: a comma list of any length.
fn ref_schema(params: &[(String, String)]) -> Result<Vec<u32>, WalkError> {
    match params.iter().find(|(k, _)| k == "schema") {
        None => Ok(vec![0, 1, 2, 3, 4]),
        Some((_, v)) => v.split(',').map(|x| x.trim().parse::<u32>()).collect::<Result<Vec<_>, _>>().map_err(|_| WalkError::Parameter {
            name: "schema".into(),
            message: format!("`{v}` is not a comma list of labels, e.g. 0,1,2"),
        }),
    }
}

impl LibraryWalk {
    /// Builds a walk from its name and `name=value` parameters (defaults and checks as the
    /// walk's file declares them). `unweighted` ignores the graph's edge weights (the
    /// `#[walk]`-compiled walks read the weights whenever the graph they run on has them: run
    /// those on a graph without weights, as the CLI does).
    pub fn from_name(name: &str, params: &[(String, String)], graph: &CsrGraph, unweighted: bool) -> Result<Self, WalkError> {
        let unknown = || {
            WalkError::Config(format!(
                "unknown walk `{name}`; built-in walks: {} (or a program file: see `wayfarer explain`)",
                names().join(", ")
            ))
        };
        if let Some(&(ref_name, of, _)) = REFERENCES.iter().find(|r| r.0 == name) {
            let weighting = Weighting::for_graph(graph, unweighted);
            let values =
                |given: &[(String, String)]| crate::gpu::program_values(declared(of).expect("references follow library walks"), given);
            let f = |v: &ParamValue| match v {
                ParamValue::Scalar(x) => x.as_f64() as f32,
                ParamValue::Array(_) => 0.0,
            };
            let reference = match ref_name {
                "deepwalk-ref" => {
                    values(params)?;
                    Reference::DeepWalk(DeepWalk { weighting })
                }
                "node2vec-ref" => {
                    let v = values(params)?;
                    Reference::Node2vec(Node2vec::new(f(&v[0]), f(&v[1]), weighting)?)
                }
                "ppr2-ref" => Reference::Ppr2(Ppr2::new(f(&values(params)?[0]), weighting)?),
                _ => {
                    if let Some((k, _)) = params.iter().find(|(k, _)| k != "schema") {
                        return Err(WalkError::Parameter {
                            name: k.clone(),
                            message: format!("walk `{name}` has no such parameter; it takes schema"),
                        });
                    }
                    Reference::MetaPath(MetaPath::new(ref_schema(params)?, weighting)?)
                }
            };
            return Ok(LibraryWalk { name: ref_name, kind: Kind::Reference(reference) });
        }
        let (program_name, anonymous) = if name == "anonymous" { ("deepwalk", true) } else { (name, false) };
        let program = declared(program_name).ok_or_else(unknown)?;
        let values = crate::gpu::program_values(program, params)?;
        let native = dsl::Native::from_params(program_name, &values).ok_or_else(unknown)??;
        let name = if anonymous { "anonymous" } else { native.name() };
        let walk = LibraryWalk { name, kind: Kind::Dsl { native, values, anonymous } };
        walk.visit(Check(graph))?;
        Ok(walk)
    }

    /// A library walk from its params struct, e.g. `LibraryWalk::native(dsl::Node2vec { a: 2.0, b: 0.5 })`.
    pub fn native(walk: impl Into<dsl::Native>) -> Self {
        let native = walk.into();
        let values = native.values();
        LibraryWalk { name: native.name(), kind: Kind::Dsl { native, values, anonymous: false } }
    }

    /// Runs `v` on the walk's native code.
    pub fn visit<V: WalkVisitor>(&self, v: V) -> V::Output {
        match &self.kind {
            Kind::Dsl { native, .. } => native.visit(v),
            Kind::Reference(Reference::DeepWalk(w)) => v.visit(w),
            Kind::Reference(Reference::Node2vec(w)) => v.visit(w),
            Kind::Reference(Reference::MetaPath(w)) => v.visit(w),
            Kind::Reference(Reference::Ppr2(w)) => v.visit(w),
        }
    }

    /// The walk's `#[walk]` source and its parameter values, for the backends that compile the
    /// IR themselves (CUDA, wgpu). `None` for the hand-written references, which run on the CPU only.
    pub fn program(&self) -> Option<(&'static str, Vec<ParamValue>)> {
        match &self.kind {
            Kind::Dsl { native, values, .. } => {
                Some((dsl::source(native.name()).expect("every library walk has a source"), values.clone()))
            }
            Kind::Reference(_) => None,
        }
    }

    /// Whether the output holds first-visit indices instead of node ids.
    pub fn is_anonymous(&self) -> bool {
        matches!(self.kind, Kind::Dsl { anonymous: true, .. })
    }

    /// The length used when the user gives none: what the walk's file declares
    /// (`length(len)`: MetaPath's schema length), the schema length for `metapath-ref`, else 80.
    pub fn default_length(&self) -> u32 {
        match &self.kind {
            Kind::Reference(Reference::MetaPath(m)) => m.schema.len() as u32,
            Kind::Dsl { native, values, .. } => {
                declared(native.name()).and_then(|p| wayfarer_compiler::params::default_length(p, values)).unwrap_or(80)
            }
            Kind::Reference(_) => 80,
        }
    }

    /// Whether this is a `#[walk]`-compiled walk. Those read the graph's weights whenever it
    /// has them; `--unweighted` runs them on the graph without its weights.
    pub fn is_compiled(&self) -> bool {
        matches!(self.kind, Kind::Dsl { .. })
    }

    /// The walk's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Runs the walk on the CPU with every walk in memory (see [`engine::run`]).
    pub fn run(
        &self,
        graph: &CsrGraph,
        starts: &Starts,
        cfg: &WalkConfig,
        progress: Option<&AtomicU64>,
    ) -> Result<(Walks, RunReport), WalkError> {
        engine::collect(starts.count(graph.num_nodes()), cfg.length, |sink| {
            self.run_streaming(graph, starts, cfg, progress, u64::MAX, sink)
        })
    }

    /// Runs the walk on the CPU in batches of about `batch_bytes` of walks (see
    /// [`engine::run_streaming`]); anonymous walks are handed over as first-visit indices.
    pub fn run_streaming(
        &self,
        graph: &CsrGraph,
        starts: &Starts,
        cfg: &WalkConfig,
        progress: Option<&AtomicU64>,
        batch_bytes: u64,
        sink: &mut dyn FnMut(Walks) -> Result<(), WalkError>,
    ) -> Result<RunReport, WalkError> {
        let anonymous = self.is_anonymous();
        let mut convert = |b: Walks| sink(if anonymous { b.to_anonymous() } else { b });
        self.visit(Stream { graph, starts, cfg, progress, batch_bytes, sink: &mut convert })
    }
}

struct Stream<'a> {
    graph: &'a CsrGraph,
    starts: &'a Starts,
    cfg: &'a WalkConfig,
    progress: Option<&'a AtomicU64>,
    batch_bytes: u64,
    sink: &'a mut dyn FnMut(Walks) -> Result<(), WalkError>,
}

impl WalkVisitor for Stream<'_> {
    type Output = Result<RunReport, WalkError>;
    fn visit<W: Walk>(self, walk: &W) -> Self::Output {
        engine::run_streaming(walk, self.graph, self.starts, self.cfg, self.progress, self.batch_bytes, self.sink)
    }
}

/// The library walks, written in the `#[walk]` DSL (sources in `walks/`) and compiled by the
/// macro; the build script lists `walks/`, so adding a walk is adding a file there.
/// `wayfarer explain <name>` shows their IR and analysis. The exactness suite checks them
/// against exact transition probabilities, and against the hand-written references of
/// `wayfarer::walks` (the `*-ref` walks).
pub mod dsl {
    use super::WalkVisitor;
    use crate::{ParamValue, WalkError};
    use wayfarer_runtime::FromParams;

    macro_rules! library {
        ($(#[doc = $doc:literal] $module:ident $file:literal $name:literal => $ty:ident $(, $state:ident)?;)*) => {
            $(
                #[doc = $doc]
                pub mod $module {
                    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/walks/", $file));
                }
                pub use $module::$ty;
                $(pub use $module::$state;)?
            )*

            /// The library walks' names (their files' names, `_` read as `-`), in file order.
            pub const NAMES: &[&str] = &[$($name),*];

            /// The DSL source of a library walk, by name.
            pub fn source(name: &str) -> Option<&'static str> {
                match name {
                    $($name => Some(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/walks/", $file))),)*
                    _ => None,
                }
            }

            /// A library walk's native code: its params struct, as `#[walk]` generated it.
            #[derive(Clone, Debug, PartialEq)]
            pub enum Native {
                $(#[doc = $doc] $ty($ty),)*
            }

            $(impl From<$ty> for Native {
                fn from(w: $ty) -> Self {
                    Native::$ty(w)
                }
            })*

            impl Native {
                /// The walk's name.
                pub fn name(&self) -> &'static str {
                    match self {
                        $(Native::$ty(_) => $name,)*
                    }
                }

                /// The walk `name` with these parameter values (declaration order), or `None`
                /// for a name outside the library.
                pub fn from_params(name: &str, values: &[ParamValue]) -> Option<Result<Native, WalkError>> {
                    match name {
                        $($name => Some(<$ty as FromParams>::from_params(values).map(Native::$ty)),)*
                        _ => None,
                    }
                }

                /// The parameter values, in declaration order.
                pub fn values(&self) -> Vec<ParamValue> {
                    match self {
                        $(Native::$ty(w) => w.to_params(),)*
                    }
                }

                /// Runs `v` on the params struct (one monomorphized call per walk type).
                pub fn visit<V: WalkVisitor>(&self, v: V) -> V::Output {
                    match self {
                        $(Native::$ty(w) => v.visit(w),)*
                    }
                }
            }

            /// The params structs, for the prelude.
            pub mod types {
                pub use super::{$($ty),*};
            }
        };
    }

    include!(concat!(env!("OUT_DIR"), "/library.rs"));
}
