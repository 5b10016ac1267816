//! Warnings: input that is not wrong enough to stop for, but is probably not what was meant. Every command
//! that loads a plan (validate, dry-run, run) prints them the same way, on stderr, and goes on.

use std::fmt;

/// One warning, in one line, with an optional hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// What looks wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl Warning {
    /// A warning with no hint.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), hint: None }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// The warnings found while loading a plan, in the order found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Warnings {
    /// The warnings.
    pub items: Vec<Warning>,
}

impl Warnings {
    /// Records a warning.
    pub fn push(&mut self, w: Warning) {
        self.items.push(w);
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// `warning: ...` and `  = help: ...` lines, as diagnostics render their hints.
impl fmt::Display for Warnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for w in &self.items {
            writeln!(f, "warning: {}", w.message)?;
            if let Some(h) = &w.hint {
                writeln!(f, "  = help: {h}")?;
            }
        }
        Ok(())
    }
}
