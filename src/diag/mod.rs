//! Diagnostics: user errors that point at a place in a file, rendered with the line, carets and a hint.

mod render;
mod suggest;
mod warning;
pub mod width;

pub use render::{render, shorten_quoted};
pub use suggest::did_you_mean;
pub use warning::{Warning, Warnings};

use crate::source::Span;

/// One problem found in a user's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where it is.
    pub span: Span,
    /// What is wrong, in one line.
    pub message: String,
    /// What was expected there, shown under the carets.
    pub expected: Option<String>,
    /// A suggestion: "did you mean ...", or how to fix it.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A problem at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Self { span, message: message.into(), expected: None, hint: None }
    }

    /// Adds what was expected.
    pub fn expected(mut self, expected: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds a hint when there is one.
    pub fn maybe_hint(mut self, hint: Option<String>) -> Self {
        if hint.is_some() {
            self.hint = hint;
        }
        self
    }
}

/// Every problem found in one file, in the order of their positions.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    /// The problems.
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Records a problem.
    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Sorts by position and drops exact duplicates.
    pub fn sorted(mut self) -> Self {
        self.items.sort_by(|a, b| a.span.cmp(&b.span).then_with(|| a.message.cmp(&b.message)));
        self.items.dedup();
        self
    }
}
