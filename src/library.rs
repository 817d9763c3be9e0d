//! The built-in walks by name, with their hyperparameters parsed from `name=value` pairs —
//! what the CLI's `wayfarer walk <name> -p a=2` and the benchmark drivers use.

use crate::walks::{DeepWalk, MetaPath, Node2vec, Ppr2, Weighting};
use crate::{CsrGraph, RunReport, Starts, WalkConfig, WalkError, Walks, engine};
use std::sync::atomic::AtomicU64;

/// A built-in walk with its parameters.
#[derive(Clone, Debug)]
pub enum LibraryWalk {
    /// `deepwalk`
    DeepWalk(DeepWalk),
    /// `node2vec`: `a` (return, default 2), `b` (in-out, default 0.5).
    Node2vec(Node2vec),
    /// `metapath`: `schema` (comma list of labels, default 0,1,2,3,4).
    MetaPath(MetaPath),
    /// `ppr2`: `gamma` (default 0.2).
    Ppr2(Ppr2),
    /// `deepwalk-dsl`: DeepWalk compiled from `walks/deepwalk.rs` by `#[walk]`.
    DslDeepwalk(dsl::Deepwalk),
    /// `node2vec-dsl`: Node2Vec compiled from `walks/node2vec.rs`.
    DslNode2vec(dsl::Node2vec),
    /// `metapath-dsl`: MetaPath compiled from `walks/metapath.rs` (a five-label schema).
    DslMetapath(dsl::Metapath),
    /// `ppr2-dsl`: unweighted second-order PageRank compiled from `walks/ppr2.rs`.
    DslPpr2(dsl::Ppr2),
}

/// The built-in walk names with their parameters and defaults.
pub const WALKS: &[(&str, &str)] = &[
    ("deepwalk", "(no parameters)"),
    ("node2vec", "a=2 (return p), b=0.5 (in-out q)"),
    ("metapath", "schema=0,1,2,3,4 (edge labels, cycled; default length = schema length)"),
    ("ppr2", "gamma=0.2 (second-order PageRank)"),
    ("deepwalk-dsl", "compiled from walks/deepwalk.rs by #[walk]"),
    ("node2vec-dsl", "a=2, b=0.5; compiled from walks/node2vec.rs"),
    ("metapath-dsl", "schema=0,1,2,3,4 (exactly five labels); compiled from walks/metapath.rs"),
    ("ppr2-dsl", "gamma=0.2, unweighted; compiled from walks/ppr2.rs"),
];

/// Walks that DESIGN.md names but that arrive with the `#[walk]` DSL.
const LATER: &[&str] = &["ppr", "temporal", "anonymous"];

fn take_f32(params: &mut Vec<(String, String)>, name: &str, default: f32) -> Result<f32, WalkError> {
    match params.iter().position(|(k, _)| k == name) {
        None => Ok(default),
        Some(i) => {
            let (_, v) = params.remove(i);
            v.trim().parse::<f32>().map_err(|_| WalkError::Parameter { name: name.into(), message: format!("`{v}` is not a number") })
        }
    }
}

impl LibraryWalk {
    /// Builds a walk from its name and `name=value` parameters. `unweighted` ignores the
    /// graph's edge weights; otherwise walks use them when the graph has them.
    pub fn from_name(name: &str, params: &[(String, String)], graph: &CsrGraph, unweighted: bool) -> Result<Self, WalkError> {
        let weighting = Weighting::for_graph(graph, unweighted);
        let mut p: Vec<(String, String)> = params.to_vec();
        for (i, (k, _)) in p.iter().enumerate() {
            if p[..i].iter().any(|(j, _)| j == k) {
                return Err(WalkError::Parameter { name: k.clone(), message: "given twice".into() });
            }
        }
        let walk = match name {
            "deepwalk" => LibraryWalk::DeepWalk(DeepWalk { weighting }),
            "node2vec" => {
                let a = take_f32(&mut p, "a", 2.0)?;
                let b = take_f32(&mut p, "b", 0.5)?;
                LibraryWalk::Node2vec(Node2vec::new(a, b, weighting)?)
            }
            "metapath" => {
                let schema = match p.iter().position(|(k, _)| k == "schema") {
                    None => vec![0, 1, 2, 3, 4],
                    Some(i) => {
                        let (_, v) = p.remove(i);
                        v.split(',').map(|x| x.trim().parse::<u32>()).collect::<Result<Vec<_>, _>>().map_err(|_| WalkError::Parameter {
                            name: "schema".into(),
                            message: format!("`{v}` is not a comma list of labels, e.g. 0,1,2"),
                        })?
                    }
                };
                LibraryWalk::MetaPath(MetaPath::new(schema, weighting)?)
            }
            "ppr2" => LibraryWalk::Ppr2(Ppr2::new(take_f32(&mut p, "gamma", 0.2)?, weighting)?),
            "deepwalk-dsl" => LibraryWalk::DslDeepwalk(dsl::Deepwalk),
            "node2vec-dsl" => {
                let a = take_f32(&mut p, "a", 2.0)?;
                let b = take_f32(&mut p, "b", 0.5)?;
                Node2vec::new(a, b, weighting)?; // the same validation
                LibraryWalk::DslNode2vec(dsl::Node2vec { a, b })
            }
            "metapath-dsl" => {
                let schema = match p.iter().position(|(k, _)| k == "schema") {
                    None => [0, 1, 2, 3, 4],
                    Some(i) => {
                        let (_, v) = p.remove(i);
                        let labels: Vec<u32> = v.split(',').map(|x| x.trim().parse::<u32>()).collect::<Result<_, _>>().map_err(|_| {
                            WalkError::Parameter { name: "schema".into(), message: format!("`{v}` is not a comma list of labels") }
                        })?;
                        labels.try_into().map_err(|l: Vec<u32>| WalkError::Parameter {
                            name: "schema".into(),
                            message: format!("metapath-dsl takes exactly five labels, got {}; use `metapath` for other lengths", l.len()),
                        })?
                    }
                };
                LibraryWalk::DslMetapath(dsl::Metapath { schema })
            }
            "ppr2-dsl" => {
                let gamma = take_f32(&mut p, "gamma", 0.2)?;
                Ppr2::new(gamma, Weighting::Unweighted)?;
                LibraryWalk::DslPpr2(dsl::Ppr2 { gamma })
            }
            other if LATER.contains(&other) => {
                return Err(WalkError::Config(format!(
                    "walk `{other}` is not available yet: it comes with the #[walk] DSL; built-in walks now: {}",
                    WALKS.iter().map(|w| w.0).collect::<Vec<_>>().join(", ")
                )));
            }
            other => {
                return Err(WalkError::Config(format!(
                    "unknown walk `{other}`; built-in walks: {}",
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
        Ok(walk)
    }

    /// The length used when the user gives none: the schema length for MetaPath, else 80.
    pub fn default_length(&self) -> u32 {
        match self {
            LibraryWalk::MetaPath(m) => m.schema.len() as u32,
            LibraryWalk::DslMetapath(m) => m.schema.len() as u32,
            _ => 80,
        }
    }

    /// Whether this is a `#[walk]`-compiled walk. Those read the graph's weights whenever it
    /// has them; `--unweighted` runs them on the graph without its weights.
    pub fn is_compiled(&self) -> bool {
        matches!(self, LibraryWalk::DslDeepwalk(_) | LibraryWalk::DslNode2vec(_) | LibraryWalk::DslMetapath(_) | LibraryWalk::DslPpr2(_))
    }

    /// The walk's name.
    pub fn name(&self) -> &'static str {
        match self {
            LibraryWalk::DeepWalk(_) => "deepwalk",
            LibraryWalk::Node2vec(_) => "node2vec",
            LibraryWalk::MetaPath(_) => "metapath",
            LibraryWalk::Ppr2(_) => "ppr2",
            LibraryWalk::DslDeepwalk(_) => "deepwalk-dsl",
            LibraryWalk::DslNode2vec(_) => "node2vec-dsl",
            LibraryWalk::DslMetapath(_) => "metapath-dsl",
            LibraryWalk::DslPpr2(_) => "ppr2-dsl",
        }
    }

    /// Runs the walk on the CPU engine.
    pub fn run(
        &self,
        graph: &CsrGraph,
        starts: &Starts,
        cfg: &WalkConfig,
        progress: Option<&AtomicU64>,
    ) -> Result<(Walks, RunReport), WalkError> {
        match self {
            LibraryWalk::DeepWalk(w) => engine::run(w, graph, starts, cfg, progress),
            LibraryWalk::Node2vec(w) => engine::run(w, graph, starts, cfg, progress),
            LibraryWalk::MetaPath(w) => engine::run(w, graph, starts, cfg, progress),
            LibraryWalk::Ppr2(w) => engine::run(w, graph, starts, cfg, progress),
            LibraryWalk::DslDeepwalk(w) => engine::run(w, graph, starts, cfg, progress),
            LibraryWalk::DslNode2vec(w) => engine::run(w, graph, starts, cfg, progress),
            LibraryWalk::DslMetapath(w) => engine::run(w, graph, starts, cfg, progress),
            LibraryWalk::DslPpr2(w) => engine::run(w, graph, starts, cfg, progress),
        }
    }
}

/// The library walks written in the `#[walk]` DSL (sources in `walks/`), compiled by the
/// macro. `wayfarer explain <name>` shows their IR and analysis. They match the hand-written
/// references of `wayfarer::walks` in distribution (tested); the CLI still runs the
/// hand-written ones, which carry extra tuning the compiler does not generate yet.
pub mod dsl {
    /// DeepWalk.
    pub mod deepwalk {
        include!("../walks/deepwalk.rs");
    }
    /// Node2Vec.
    pub mod node2vec {
        include!("../walks/node2vec.rs");
    }
    /// MetaPath with a five-label schema.
    pub mod metapath {
        include!("../walks/metapath.rs");
    }
    /// Second-order PageRank.
    pub mod ppr2 {
        include!("../walks/ppr2.rs");
    }
    pub use deepwalk::Deepwalk;
    pub use metapath::Metapath;
    pub use node2vec::Node2vec;
    pub use ppr2::Ppr2;

    /// The DSL source of a library walk, by name.
    pub fn source(name: &str) -> Option<&'static str> {
        Some(match name {
            "deepwalk" => include_str!("../walks/deepwalk.rs"),
            "node2vec" => include_str!("../walks/node2vec.rs"),
            "metapath" => include_str!("../walks/metapath.rs"),
            "ppr2" => include_str!("../walks/ppr2.rs"),
            _ => return None,
        })
    }
}
