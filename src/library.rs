//! The built-in walks by name, with their hyperparameters parsed from `name=value` pairs —
//! what the CLI's `wayfarer walk <name> -p a=2` and the benchmark drivers use.

use crate::reference::{DeepWalk, MetaPath, Node2vec, Ppr2, Weighting};
use crate::{CsrGraph, RunReport, Starts, WalkConfig, WalkError, Walks, engine};
use std::sync::atomic::AtomicU64;
use wayfarer_compiler::eval::{ParamValue, Value};

/// A built-in walk with its parameters.
#[derive(Clone, Debug)]
pub enum LibraryWalk {
    /// `deepwalk` (`walks/deepwalk.rs`).
    DeepWalk(dsl::Deepwalk),
    /// `node2vec`: `a` (return, default 2), `b` (in-out, default 0.5) (`walks/node2vec.rs`).
    Node2vec(dsl::Node2vec),
    /// `metapath`: `schema` (comma list of 1 to 16 labels, default 0,1,2,3,4)
    /// (`walks/metapath.rs`).
    MetaPath(dsl::Metapath),
    /// `ppr2`: `gamma` (default 0.2), unweighted second-order PageRank (`walks/ppr2.rs`).
    Ppr2(dsl::Ppr2),
    /// `ppr`: `alpha` (restart probability, default 0.15) (`walks/ppr.rs`).
    Ppr(dsl::Ppr),
    /// `ppr-stop`: `alpha` (stop probability, default 0.15) (`walks/ppr_stop.rs`).
    PprStop(dsl::PprStop),
    /// `temporal`: strictly increasing edge timestamps (`walks/temporal.rs`).
    Temporal(dsl::Temporal),
    /// `anonymous`: DeepWalk recorded as first-visit indices ([`Walks::to_anonymous`]).
    Anonymous(dsl::Deepwalk),
    /// `deepwalk-ref`: the hand-written reference [`DeepWalk`].
    DeepWalkRef(DeepWalk),
    /// `node2vec-ref`: the hand-written reference [`Node2vec`].
    Node2vecRef(Node2vec),
    /// `metapath-ref`: the hand-written reference [`MetaPath`] (any schema length).
    MetaPathRef(MetaPath),
    /// `ppr2-ref`: the hand-written reference [`Ppr2`].
    Ppr2Ref(Ppr2),
}

/// The built-in walk names with their parameters and defaults.
pub const WALKS: &[(&str, &str)] = &[
    ("deepwalk", "(no parameters)"),
    ("node2vec", "a=2 (return p), b=0.5 (in-out q)"),
    ("metapath", "schema=0,1,2,3,4 (1 to 16 edge labels, cycled; default length = schema length)"),
    ("ppr2", "gamma=0.2 (second-order PageRank, unweighted)"),
    ("ppr", "alpha=0.15 (restart probability after each move)"),
    ("ppr-stop", "alpha=0.15 (stop probability after each move)"),
    ("temporal", "(no parameters; needs edge timestamps: edge lists with --time-col)"),
    ("anonymous", "(no parameters; DeepWalk written as first-visit indices)"),
    ("deepwalk-ref", "hand-written reference of deepwalk"),
    ("node2vec-ref", "a=2, b=0.5; hand-written reference of node2vec"),
    ("metapath-ref", "schema=0,1,2,3,4 (any length); hand-written reference of metapath"),
    ("ppr2-ref", "gamma=0.2; hand-written reference of ppr2"),
];

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

fn take_f32(params: &mut Vec<(String, String)>, name: &str, default: f32) -> Result<f32, WalkError> {
    match params.iter().position(|(k, _)| k == name) {
        None => Ok(default),
        Some(i) => {
            let (_, v) = params.remove(i);
            v.trim().parse::<f32>().map_err(|_| WalkError::Parameter { name: name.into(), message: format!("`{v}` is not a number") })
        }
    }
}

fn take_probability(params: &mut Vec<(String, String)>, name: &str, default: f32) -> Result<f32, WalkError> {
    let p = take_f32(params, name, default)?;
    if !(0.0..=1.0).contains(&p) {
        return Err(WalkError::Parameter { name: name.into(), message: format!("{p} is not a probability in [0, 1]") });
    }
    Ok(p)
}

fn take_schema(params: &mut Vec<(String, String)>) -> Result<Vec<u32>, WalkError> {
    match params.iter().position(|(k, _)| k == "schema") {
        None => Ok(vec![0, 1, 2, 3, 4]),
        Some(i) => {
            let (_, v) = params.remove(i);
            v.split(',').map(|x| x.trim().parse::<u32>()).collect::<Result<Vec<_>, _>>().map_err(|_| WalkError::Parameter {
                name: "schema".into(),
                message: format!("`{v}` is not a comma list of labels, e.g. 0,1,2"),
            })
        }
    }
}

impl LibraryWalk {
    /// Builds a walk from its name and `name=value` parameters. `unweighted` ignores the
    /// graph's edge weights (the `#[walk]`-compiled walks read the weights whenever the graph
    /// they run on has them: run those on a graph without weights, as the CLI does).
    pub fn from_name(name: &str, params: &[(String, String)], graph: &CsrGraph, unweighted: bool) -> Result<Self, WalkError> {
        let weighting = Weighting::for_graph(graph, unweighted);
        let mut p: Vec<(String, String)> = params.to_vec();
        for (i, (k, _)) in p.iter().enumerate() {
            if p[..i].iter().any(|(j, _)| j == k) {
                return Err(WalkError::Parameter { name: k.clone(), message: "given twice".into() });
            }
        }
        let walk = match name {
            "deepwalk" => LibraryWalk::DeepWalk(dsl::Deepwalk),
            "anonymous" => LibraryWalk::Anonymous(dsl::Deepwalk),
            "node2vec" => {
                let a = take_f32(&mut p, "a", 2.0)?;
                let b = take_f32(&mut p, "b", 0.5)?;
                Node2vec::new(a, b, weighting)?; // the same validation as the reference
                LibraryWalk::Node2vec(dsl::Node2vec { a, b })
            }
            "metapath" => {
                let labels = take_schema(&mut p)?;
                MetaPath::new(labels.clone(), weighting)?; // validates the labels against the graph
                LibraryWalk::MetaPath(dsl::Metapath::new(&labels)?)
            }
            "ppr2" => {
                let gamma = take_f32(&mut p, "gamma", 0.2)?;
                Ppr2::new(gamma, Weighting::Unweighted)?;
                LibraryWalk::Ppr2(dsl::Ppr2 { gamma })
            }
            "ppr" => LibraryWalk::Ppr(dsl::Ppr { alpha: take_probability(&mut p, "alpha", 0.15)? }),
            "ppr-stop" => LibraryWalk::PprStop(dsl::PprStop { alpha: take_probability(&mut p, "alpha", 0.15)? }),
            "temporal" => LibraryWalk::Temporal(dsl::Temporal),
            "deepwalk-ref" => LibraryWalk::DeepWalkRef(DeepWalk { weighting }),
            "node2vec-ref" => {
                let a = take_f32(&mut p, "a", 2.0)?;
                let b = take_f32(&mut p, "b", 0.5)?;
                LibraryWalk::Node2vecRef(Node2vec::new(a, b, weighting)?)
            }
            "metapath-ref" => LibraryWalk::MetaPathRef(MetaPath::new(take_schema(&mut p)?, weighting)?),
            "ppr2-ref" => LibraryWalk::Ppr2Ref(Ppr2::new(take_f32(&mut p, "gamma", 0.2)?, weighting)?),
            other => {
                return Err(WalkError::Config(format!(
                    "unknown walk `{other}`; built-in walks: {} (or a program file: see `wayfarer explain`)",
                    WALKS.iter().map(|w| w.0).collect::<Vec<_>>().join(", ")
                )));
            }
        };
        if let Some((k, _)) = p.first() {
            let known = WALKS.iter().find(|w| w.0 == name).map_or("", |w| w.1);
            return Err(WalkError::Parameter {
                name: k.clone(),
                message: format!("walk `{name}` has no such parameter; it takes {known}"),
            });
        }
        walk.check(graph)?;
        Ok(walk)
    }

    /// The walk's `#[walk]` source and its parameter values, for the backends that compile the
    /// IR themselves (CUDA). `None` for the hand-written references, which run on the CPU only.
    pub fn program(&self) -> Option<(&'static str, Vec<ParamValue>)> {
        let f = |x: f32| ParamValue::Scalar(Value::F32(x));
        let (name, params) = match self {
            LibraryWalk::DeepWalk(_) | LibraryWalk::Anonymous(_) => ("deepwalk", vec![]),
            LibraryWalk::Node2vec(w) => ("node2vec", vec![f(w.a), f(w.b)]),
            LibraryWalk::MetaPath(w) => (
                "metapath",
                vec![ParamValue::Array(w.schema.iter().map(|&l| Value::U32(l)).collect()), ParamValue::Scalar(Value::U32(w.len))],
            ),
            LibraryWalk::Ppr2(w) => ("ppr2", vec![f(w.gamma)]),
            LibraryWalk::Ppr(w) => ("ppr", vec![f(w.alpha)]),
            LibraryWalk::PprStop(w) => ("ppr-stop", vec![f(w.alpha)]),
            LibraryWalk::Temporal(_) => ("temporal", vec![]),
            _ => return None,
        };
        Some((dsl::source(name).expect("every library walk has a source"), params))
    }

    /// Whether the output holds first-visit indices instead of node ids.
    pub fn is_anonymous(&self) -> bool {
        matches!(self, LibraryWalk::Anonymous(_))
    }

    /// Checks that the graph has what the walk reads (labels, timestamps).
    fn check(&self, graph: &CsrGraph) -> Result<(), WalkError> {
        use wayfarer_runtime::Walk;
        match self {
            LibraryWalk::Temporal(w) => w.check(graph),
            LibraryWalk::MetaPath(w) => w.check(graph),
            _ => Ok(()),
        }
    }

    /// The length used when the user gives none: the schema length for MetaPath, else 80.
    pub fn default_length(&self) -> u32 {
        match self {
            LibraryWalk::MetaPathRef(m) => m.schema.len() as u32,
            LibraryWalk::MetaPath(m) => m.len,
            _ => 80,
        }
    }

    /// Whether this is a `#[walk]`-compiled walk. Those read the graph's weights whenever it
    /// has them; `--unweighted` runs them on the graph without its weights.
    pub fn is_compiled(&self) -> bool {
        !matches!(self, LibraryWalk::DeepWalkRef(_) | LibraryWalk::Node2vecRef(_) | LibraryWalk::MetaPathRef(_) | LibraryWalk::Ppr2Ref(_))
    }

    /// The walk's name.
    pub fn name(&self) -> &'static str {
        match self {
            LibraryWalk::DeepWalk(_) => "deepwalk",
            LibraryWalk::Node2vec(_) => "node2vec",
            LibraryWalk::MetaPath(_) => "metapath",
            LibraryWalk::Ppr2(_) => "ppr2",
            LibraryWalk::Ppr(_) => "ppr",
            LibraryWalk::PprStop(_) => "ppr-stop",
            LibraryWalk::Temporal(_) => "temporal",
            LibraryWalk::Anonymous(_) => "anonymous",
            LibraryWalk::DeepWalkRef(_) => "deepwalk-ref",
            LibraryWalk::Node2vecRef(_) => "node2vec-ref",
            LibraryWalk::MetaPathRef(_) => "metapath-ref",
            LibraryWalk::Ppr2Ref(_) => "ppr2-ref",
        }
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
        match self {
            LibraryWalk::DeepWalk(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::Node2vec(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::MetaPath(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::Ppr2(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::Ppr(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::PprStop(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::Temporal(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::Anonymous(w) => {
                engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, &mut |b| sink(b.to_anonymous()))
            }
            LibraryWalk::DeepWalkRef(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::Node2vecRef(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::MetaPathRef(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
            LibraryWalk::Ppr2Ref(w) => engine::run_streaming(w, graph, starts, cfg, progress, batch_bytes, sink),
        }
    }
}

/// The library walks, written in the `#[walk]` DSL (sources in `walks/`) and compiled by the
/// macro. `wayfarer explain <name>` shows their IR and analysis. The exactness suite checks
/// them against exact transition probabilities, and against the hand-written references of
/// `wayfarer::walks` (the `*-ref` walks).
pub mod dsl {
    macro_rules! library {
        ($($(#[$doc:meta])* $module:ident $file:literal $name:literal => $ty:ident;)*) => {
            $(
                $(#[$doc])*
                pub mod $module {
                    include!(concat!("../walks/", $file));
                }
                pub use $module::$ty;
            )*
            /// The DSL source of a library walk, by name.
            pub fn source(name: &str) -> Option<&'static str> {
                match name {
                    $($name => Some(include_str!(concat!("../walks/", $file))),)*
                    _ => None,
                }
            }
        };
    }
    library! {
        /// DeepWalk.
        deepwalk "deepwalk.rs" "deepwalk" => Deepwalk;
        /// Node2Vec.
        node2vec "node2vec.rs" "node2vec" => Node2vec;
        /// MetaPath with a schema of up to 16 labels.
        metapath "metapath.rs" "metapath" => Metapath;
        /// Second-order PageRank.
        ppr2 "ppr2.rs" "ppr2" => Ppr2;
        /// Personalized PageRank with restarts.
        ppr "ppr.rs" "ppr" => Ppr;
        /// Personalized PageRank by stopping.
        ppr_stop "ppr_stop.rs" "ppr-stop" => PprStop;
        /// Temporal walks.
        temporal "temporal.rs" "temporal" => Temporal;
    }
    pub use ppr::PprState;
    pub use ppr_stop::PprStopState;
    pub use temporal::TemporalState;
}
