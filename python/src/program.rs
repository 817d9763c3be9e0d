//! `wayfarer.compile(source)`: a `#[walk]`, `#[sampler]` or `#[mask]` program given as text,
//! compiled by wayfarer's compiler at run time. Walks run on every backend (Cranelift on the
//! CPU, CUDA, wgpu); samplers and masks are JIT-compiled when a run uses them.

use crate::errors;
use pyo3::prelude::*;
use wayfarer_compiler::ir::Program;
use wayfarer_compiler::{Diagnostics, WalkInfo};

/// What a program is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramKind {
    /// `#[walk]`: a random walk's weight (and state).
    Walk,
    /// `#[sampler]`: an edge weight for neighbour sampling.
    Sampler,
    /// `#[mask]`: which edges triangle counting keeps.
    Mask,
}

impl ProgramKind {
    fn name(self) -> &'static str {
        match self {
            ProgramKind::Walk => "walk",
            ProgramKind::Sampler => "sampler",
            ProgramKind::Mask => "mask",
        }
    }

    /// The kind the source's attribute names (`#[walk]`, `#[walk(...)]`, `#[sampler]`,
    /// `#[mask]`), the first one found.
    fn detect(source: &str) -> Option<Self> {
        let mut rest = source;
        while let Some(i) = rest.find("#[") {
            rest = &rest[i + 2..];
            let word: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            match word.as_str() {
                "walk" => return Some(ProgramKind::Walk),
                "sampler" => return Some(ProgramKind::Sampler),
                "mask" => return Some(ProgramKind::Mask),
                _ => {}
            }
        }
        None
    }
}

/// A compiled program: its source is kept and lowered again for each run (lowering takes
/// microseconds; the IR is not shared between threads).
#[pyclass(module = "wayfarer._native", name = "Program", frozen)]
pub struct PyProgram {
    pub(crate) source: String,
    pub(crate) kind: ProgramKind,
    name: String,
    params: Vec<String>,
}

impl PyProgram {
    /// The program's IR and analysis (it compiled once, so it compiles again).
    pub(crate) fn lower(&self) -> Result<(Program, WalkInfo), Diagnostics> {
        let program = match self.kind {
            ProgramKind::Walk => return wayfarer_compiler::compile_source(&self.source),
            ProgramKind::Sampler => wayfarer_compiler::lower_sampler_source(&self.source)?,
            ProgramKind::Mask => wayfarer_compiler::lower_mask_source(&self.source)?,
        };
        let info = wayfarer_compiler::analyze(&program);
        Ok((program, info))
    }

    /// The IR, analysis and parameter values for a run.
    pub(crate) fn with_values(&self, params: &[(String, String)]) -> PyResult<wayfarer::job::CompiledProgram> {
        let (program, info) =
            self.lower().map_err(|d| errors::value(d.0.iter().map(|x| x.render(&self.source, "<program>")).collect::<String>()))?;
        let values = wayfarer::gpu::program_values(&program, params).map_err(errors::walk)?;
        Ok(wayfarer::job::CompiledProgram { program, info, values })
    }

    /// A `want` program (else an error naming `role`) with `params`, JIT-compiled for the
    /// CPU, with its IR and values for the GPU.
    pub(crate) fn jit(
        &self,
        want: ProgramKind,
        role: &str,
        params: &[(String, String)],
        weighted: bool,
    ) -> PyResult<(wayfarer::job::CompiledProgram, wayfarer_jit::JitWalk)> {
        self.expect(want, role)?;
        let c = self.with_values(params)?;
        let jit = wayfarer_jit::JitWalk::compile(&c.program, &c.info, &c.values, weighted).map_err(|e| errors::value(e.to_string()))?;
        Ok((c, jit))
    }

    /// An error unless this program is a `want`.
    pub(crate) fn expect(&self, want: ProgramKind, role: &str) -> PyResult<()> {
        if self.kind != want {
            return Err(errors::value(format!(
                "{role}: `{}` is a #[{}] program; this takes a #[{}]",
                self.name,
                self.kind.name(),
                want.name()
            )));
        }
        Ok(())
    }
}

/// Compiles `source`; `kind` is `walk`, `sampler` or `mask` (default: the source's attribute).
#[pyfunction]
#[pyo3(signature = (source, kind = None, path = "<string>"))]
pub fn compile(py: Python<'_>, source: String, kind: Option<&str>, path: &str) -> PyResult<PyProgram> {
    let kind = match kind {
        Some("walk") => ProgramKind::Walk,
        Some("sampler") => ProgramKind::Sampler,
        Some("mask") => ProgramKind::Mask,
        Some(other) => return Err(errors::value(format!("kind = {other:?}: use \"walk\", \"sampler\" or \"mask\""))),
        None => ProgramKind::detect(&source)
            .ok_or_else(|| errors::value("the source has no #[walk], #[sampler] or #[mask] item; write one (or pass kind=...)"))?,
    };
    let mut p = PyProgram { source, kind, name: String::new(), params: Vec::new() };
    let (program, _) = p.lower().map_err(|d| errors::compile(py, &d, &p.source, path))?;
    p.name = program.name.clone();
    p.params = program.params.iter().map(|x| x.name.clone()).collect();
    Ok(p)
}

#[pymethods]
impl PyProgram {
    /// The program's name (its function's, or its impl type's in snake case).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// `walk`, `sampler` or `mask`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind.name()
    }

    /// The parameter names, in order.
    #[getter]
    fn params(&self) -> Vec<String> {
        self.params.clone()
    }

    /// The source text.
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    /// What `wayfarer explain` prints: the IR and the analysis (bounds, the weight's terms and
    /// the proposals chosen for them).
    fn explain(&self) -> PyResult<String> {
        let (program, info) =
            self.lower().map_err(|d| errors::value(d.0.iter().map(|x| x.render(&self.source, "<program>")).collect::<String>()))?;
        Ok(format!("{}\n{}", wayfarer_compiler::print::listing(&program), wayfarer_compiler::print::analysis(&program, &info)))
    }

    fn __repr__(&self) -> String {
        format!("<wayfarer.Program #[{}] {}({})>", self.kind.name(), self.name, self.params().join(", "))
    }
}
