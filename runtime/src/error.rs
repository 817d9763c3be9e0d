//! Error types. Every error that comes from user input names where it came from: a file and a
//! line, a byte offset, or a parameter.

use std::path::PathBuf;

/// Where in an input a problem was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A 1-based line of a text file.
    Line(u64),
    /// A byte offset into a binary file.
    Byte(u64),
    /// The file as a whole.
    File,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Line(l) => write!(f, ":{l}"),
            Location::Byte(b) => write!(f, " (byte {b})"),
            Location::File => Ok(()),
        }
    }
}

/// Errors from loading, building, converting or writing graphs.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// An I/O error on a named file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The input's contents are invalid at a known place.
    #[error("{path}{location}: {message}")]
    Parse {
        /// The file (or `<memory>` for in-memory input).
        path: PathBuf,
        /// Where in the file.
        location: Location,
        /// What is wrong and, where possible, how to fix it.
        message: String,
    },
    /// A graph built in memory breaks an invariant (bad arguments to a constructor).
    #[error("invalid graph: {0}")]
    Invalid(String),
    /// A parameter has an unusable value.
    #[error("parameter `{name}`: {message}")]
    Parameter {
        /// The parameter's name as the user wrote it.
        name: String,
        /// What is wrong.
        message: String,
    },
}

impl GraphError {
    pub(crate) fn parse(path: &std::path::Path, location: Location, message: impl Into<String>) -> Self {
        GraphError::Parse { path: path.to_path_buf(), location, message: message.into() }
    }
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        GraphError::Io { path: path.to_path_buf(), source }
    }
    pub(crate) fn param(name: &str, message: impl Into<String>) -> Self {
        GraphError::Parameter { name: name.to_string(), message: message.into() }
    }
}

/// Errors from running walks.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// A walk parameter is missing or invalid.
    #[error("parameter `{name}`: {message}")]
    Parameter {
        /// The parameter's name.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A walk needs graph data the graph does not have.
    #[error("walk `{walk}` needs {what}, which this graph does not have")]
    MissingGraphData {
        /// The walk.
        walk: String,
        /// The missing data (e.g. "edge labels").
        what: String,
    },
    /// The walk's weight function returned a negative, NaN or infinite weight.
    #[error("walk `{walk}` returned weight {weight} for edge {src} -> {dst} at step {step}; weights must be finite and >= 0")]
    BadWeight {
        /// The walk.
        walk: String,
        /// The offending value.
        weight: f32,
        /// Current node (original id, as in the input).
        src: u64,
        /// Candidate node (original id).
        dst: u64,
        /// Step number.
        step: u32,
    },
    /// The walk's declared maximum-weight bound was exceeded: rejection sampling would be
    /// biased, so the run stops instead of returning wrong walks.
    #[error(
        "walk `{walk}`: weight {weight} for edge {src} -> {dst} at step {step} exceeds the declared bound {bound}; the bound is unsound"
    )]
    BoundViolated {
        /// The walk.
        walk: String,
        /// The weight seen.
        weight: f32,
        /// The bound claimed.
        bound: f32,
        /// Current node (original id, as in the input).
        src: u64,
        /// Candidate node (original id).
        dst: u64,
        /// Step number.
        step: u32,
    },
    /// A start node is not a node of the graph.
    #[error("start node {node} is out of range: the graph has {num_nodes} nodes")]
    BadStart {
        /// The start node.
        node: u64,
        /// The graph's node count.
        num_nodes: usize,
    },
    /// The run was configured inconsistently.
    #[error("{0}")]
    Config(String),
}

impl WalkError {
    /// A [`WalkError::Parameter`] error.
    pub fn param(name: &str, message: impl Into<String>) -> Self {
        WalkError::Parameter { name: name.to_string(), message: message.into() }
    }
}
