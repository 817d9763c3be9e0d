//! Diagnostics: every error the front end finds, with the span of the offending token, what
//! is allowed instead and, where there is one, how to fix it.

use proc_macro2::Span;

/// One compile error.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// The offending token(s).
    pub span: Span,
    /// What is wrong, naming the construct as written.
    pub message: String,
    /// How to fix it, if there is a known fix.
    pub help: Option<String>,
    /// Where it is, as `(line from 1, column from 0, width)`, when no token span can say it
    /// (text that does not even lex: an unclosed delimiter).
    pub at: Option<(usize, usize, usize)>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic { span, message: message.into(), help: None, at: None }
    }

    /// An error at a place in the source text given by position.
    pub fn at(line: usize, column: usize, width: usize, message: impl Into<String>) -> Self {
        Diagnostic { span: Span::call_site(), message: message.into(), help: None, at: Some((line, column, width)) }
    }

    /// Adds a fix suggestion.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// As a `syn::Error` (for the proc macro: rustc renders it at the span).
    pub fn to_syn_error(&self) -> syn::Error {
        match &self.help {
            None => syn::Error::new(self.span, &self.message),
            Some(h) => syn::Error::new(self.span, format!("{}\n  = help: {h}", self.message)),
        }
    }

    /// Renders the error against source text, rustc style: `path:line:column`, the line, and a
    /// caret under the offending token. Needs spans with locations (source parsed at run time
    /// with `proc-macro2`'s `span-locations`).
    pub fn render(&self, source: &str, path: &str) -> String {
        let (start, end) = (self.span.start(), self.span.end());
        let (line, col, fixed) = match self.at {
            Some((l, c, w)) => (l, c, Some(w)),
            None => (start.line, start.column, None),
        };
        let mut out = format!("error: {}\n --> {path}:{line}:{}\n", self.message, col + 1);
        if let Some(text) = source.lines().nth(line.saturating_sub(1)) {
            let width = match fixed {
                Some(w) => w.max(1),
                None if end.line == line => end.column.saturating_sub(col).max(1),
                None => text.chars().count().saturating_sub(col).max(1),
            };
            let gutter = line.to_string().len();
            out += &format!("{:gutter$} |\n{line} | {text}\n{:gutter$} | {}{}\n", "", "", " ".repeat(col), "^".repeat(width));
        }
        if let Some(h) = &self.help {
            out += &format!("  = help: {h}\n");
        }
        out
    }
}

/// All the errors of one compilation.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Combines all errors into one `syn::Error` (each keeps its own span).
    pub fn to_syn_error(&self) -> syn::Error {
        let mut it = self.0.iter();
        let mut e = it.next().map(Diagnostic::to_syn_error).unwrap_or_else(|| syn::Error::new(Span::call_site(), "unknown error"));
        for d in it {
            e.combine(d.to_syn_error());
        }
        e
    }

    /// Renders every error against the source.
    pub fn render(&self, source: &str, path: &str) -> String {
        self.0.iter().map(|d| d.render(source, path)).collect::<Vec<_>>().join("\n")
    }
}

impl std::fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for d in &self.0 {
            writeln!(f, "error: {}", d.message)?;
            if let Some(h) = &d.help {
                writeln!(f, "  = help: {h}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}
